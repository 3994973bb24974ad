package render_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/spine"
)

// TestASaturatedIndexReadByAQueryOfOneEntryIsAnOverflow: view v divides
// by x, so its rows of x = 0 are errors with their counts; its index's
// division-by-zero count (or the count of one of its rows) leaves int64
// only across two times (MinInt64 at 0 and one more at 1, or MaxInt64
// and one more), exact in each batch. Once compaction to 1 lets a merge
// consolidate them, the merged batch holds the count saturated and the
// index's marker goes to its frontier, well after 1. A query of one
// `from` entry created then at as_of 1 reads the index's collection
// through a flatten of each half: its output at 1 must hold `numeric
// overflow` (the exact count is out of int64), as a direct query's does,
// which meets the two updates in one batch at 1.
func TestASaturatedIndexReadByAQueryOfOneEntryIsAnOverflow(t *testing.T) {
	forSaturatedReads(t, func(t *testing.T, half, mode string, w int) {
		out := readSaturatedIndex(t, half, mode, w, nil)
		codes, over := out.Errs.Accumulate(1)
		rows, _ := out.Oks.Accumulate(1)
		overflows := over
		for _, rd := range codes {
			if rd.Row[0] == expr.CodeOverflow {
				overflows += int(rd.Diff)
			}
		}
		if overflows < 1 {
			t.Fatalf("rows %v, error codes %v at 1: a count is out of int64, want a numeric overflow", rows, codes)
		}
	})
}

// TestASaturatedIndexReadByAQueryOfOneEntryIsCounted: the numeric
// overflow the query's flatten of the index adds where it reads the
// saturated batch (TestASaturatedIndexReadByAQueryOfOneEntryIsAnOverflow)
// is an error the query dataflow produced itself, as a join's or a
// reduce's for such a batch is: the render's Metrics count it, as
// operator "flatten index v_k" of dataflow q (benchrun's
// stage-errors:query/flatten_index_v_k), once whatever the number of
// workers, where no count had it and the query's own counts fell one
// short of the errors it added.
func TestASaturatedIndexReadByAQueryOfOneEntryIsCounted(t *testing.T) {
	forSaturatedReads(t, func(t *testing.T, half, mode string, w int) {
		m := &render.Metrics{}
		out := readSaturatedIndex(t, half, mode, w, m)
		codes, _ := out.Errs.Accumulate(1)
		var overflows int64
		for _, rd := range codes {
			if rd.Row[0] == expr.CodeOverflow {
				overflows += rd.Diff
			}
		}
		var own, flatten int64
		for _, st := range m.Errors() {
			if st.Dataflow != "q" {
				continue
			}
			own += st.Errors
			if st.Operator == "flatten index v_k" {
				flatten += st.Errors
			}
		}
		if flatten != 1 || own != overflows {
			t.Errorf("the query's counts %v: flatten index v_k %d, want 1; all %d, want the %d numeric overflow of its output at 1 (its only errors of its own)", m.Errors(), flatten, own, overflows)
		}
	})
}

// forSaturatedReads runs f for either half saturated, in Solo and the
// pair, on one and two workers.
func forSaturatedReads(t *testing.T, f func(t *testing.T, half, mode string, w int)) {
	for _, half := range []string{"errs", "oks"} {
		for _, mode := range []string{"solo", "pair"} {
			for _, w := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/workers=%d", half, mode, w), func(t *testing.T) { f(t, half, mode, w) })
			}
		}
	}
}

// readSaturatedIndex runs the scenario of
// TestASaturatedIndexReadByAQueryOfOneEntryIsAnOverflow with half's count
// saturated and returns the query's output once it passed 1; m, if not
// nil, is the query's Metrics.
func readSaturatedIndex(t *testing.T, half, mode string, w int, m *render.Metrics) *render.Output {
	t.Helper()
	p := &plan.Plan{
		AsOf:    1,
		Inputs:  []plan.Input{{Name: "c", Columns: []string{"k", "x"}}},
		Views:   []plan.View{{Name: "v", Input: "c", Maps: []plan.Map{{Name: "m", Expr: "7 / x"}}}},
		Indexes: []plan.Index{{Name: "v_k", On: "v", Key: []string{"k"}}},
		Query: plan.Query{
			From:    []plan.From{{As: "q", Collection: "v"}},
			Project: []string{"q.k", "q.m"},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	var ctl *runtime.Controller
	if mode == "solo" {
		rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if ctl, err = runtime.NewController(rt); err != nil {
			t.Fatal(err)
		}
	} else if _, _, ctl, err = runtime.Pair(w, spine.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must := func(cmd runtime.Command) {
		t.Helper()
		if err := ctl.Send(cmd); err != nil {
			t.Fatal(err)
		}
	}
	must(runtime.CreateInput{Name: "c", Arity: 2})
	for _, ix := range render.IndexOrder(r) {
		must(runtime.CreateDataflow{Desc: render.IndexDesc(r, ix, render.Options{Mode: render.Imported})})
		must(runtime.AllowCompaction{ID: render.IndexID(ix), Frontier: frontier.At(1)})
	}
	// send sends rows {k, x, diff} at tm and advances past it.
	send := func(tm uint64, rows ...[3]int64) {
		ch := dataflow.NewChunk(2, len(rows))
		for _, x := range rows {
			ch.Push([]int64{x[0], x[1]}, tm, x[2])
		}
		must(runtime.Input{Name: "c", Chunk: ch})
		must(runtime.AdvanceInput{Name: "c", Frontier: frontier.At(tm + 1)})
	}
	x := int64(0)
	first := [3]int64{1, 0, math.MinInt64}
	if half == "oks" {
		x, first = 1, [3]int64{5, 1, math.MaxInt64}
	}
	send(0, [3]int64{1, 1, 1}, first)
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if half == "oks" {
		send(1, [3]int64{5, 1, 1})
	} else {
		send(1, [3]int64{2, 0, -1})
	}
	// Later errors (+1, then -1) drive the merges of the index's errors
	// until one consolidates 0 and 1.
	var reported []string
	for i := uint64(2); len(reported) == 0 && ctx.Err() == nil; i++ {
		d := int64(1)
		if i%2 == 1 {
			d = -1
		}
		send(i, [3]int64{3, x, d})
		if err := ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		for _, e := range ctl.TakeErrors() {
			reported = append(reported, e.Error())
		}
	}
	if !strings.Contains(strings.Join(reported, "\n"), batch.ErrOverflow.Error()) {
		t.Fatalf("the overflowing merge was not reported: %q", reported)
	}
	out := render.NewOutput(w, true)
	desc, err := render.QueryDesc(r, render.Options{Mode: render.Imported, ID: "q", Metrics: m}, out)
	if err != nil {
		t.Fatal(err)
	}
	must(runtime.CreateDataflow{Desc: desc})
	if err := out.WaitPassed(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return out
}
