package workloads

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/core/spine"
)

// sendBatches sends its batches at its first step, then holds nothing.
type sendBatches struct {
	out *dataflow.Stream[*batch.Batch]
	bs  []*batch.Batch
}

func (o *sendBatches) Step(frontier.Frontier) frontier.Frontier {
	for _, b := range o.bs {
		o.out.Send(b)
	}
	o.bs = nil
	return frontier.Empty()
}

func (o *sendBatches) Shutdown() {}

// capturedHalf returns a capture of an arrangement half (Context.Capture)
// of arity {1, 1} whose stream sends bs.
func capturedHalf(t *testing.T, bs ...*batch.Batch) *dataflow.Capture {
	t.Helper()
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { t.Errorf("dataflow %s: %v", df, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	cp := dataflow.NewCapture(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "c", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			ob := c.NewOperator("send")
			op := &sendBatches{out: dataflow.AddOutput[*batch.Batch](ob), bs: bs}
			if err := ob.Build(op); err != nil {
				return err
			}
			c.Capture(cp, dataflow.Arranged{Stream: op.out, Pres: batch.Identity(), Arity: batch.Arity{Key: 1, Val: 1}, Key: []int{0}})
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	df.Step()
	df.Drop()
	return cp
}

// TestCrossDiffsReportASaturatedCount: a configuration whose capture
// read a batch a merge saturated (row (1, 10) held at MaxInt64, its exact
// count MaxInt64 + 1) against one whose exact count is MaxInt64:
// Capture.FirstDifference now stops at the saturated count's time with
// no row, and check's cross comparison reports it as a difference of
// that configuration's rows, or errors, saying which read the saturated
// count, where it had found the two equal (and would have read the error
// code of no row). The output's own captures are of chunks, which never
// read a batch: the check meets this only through such a capture.
func TestCrossDiffsReportASaturatedCount(t *testing.T) {
	build := func(lower, upper uint64, ups ...[4]int64) *batch.Batch {
		bld := batch.NewBuilder(batch.Arity{Key: 1, Val: 1}, len(ups))
		for _, u := range ups {
			bld.Push1(u[0], u[1], uint64(u[2]), u[3])
		}
		b, err := bld.Build(frontier.At(lower), frontier.At(upper))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sat, err := batch.Merge(build(0, 1, [4]int64{1, 10, 0, math.MaxInt64}), build(1, 2, [4]int64{1, 10, 1, 1}), frontier.At(1))
	if !errors.Is(err, batch.ErrOverflow) || !sat.Saturated() {
		t.Fatalf("merge: err %v, saturated %v; want ErrOverflow and a saturated batch", err, sat.Saturated())
	}
	exact := build(1, 2, [4]int64{1, 10, 1, math.MaxInt64})
	for _, errs := range []bool{false, true} {
		out := func(bs ...*batch.Batch) *render.Output {
			if errs {
				return &render.Output{Oks: dataflow.NewCapture(1), Errs: capturedHalf(t, bs...)}
			}
			return &render.Output{Oks: capturedHalf(t, bs...), Errs: dataflow.NewCapture(1)}
		}
		first, other := out(exact), out(sat)
		what := "rows"
		if errs {
			what = "errors"
		}
		want := []crossDiff{{what: "time=1 (not compared with the reference): " + what + ": a count a merge saturated (out of int64, compared no further)", theirs: "none"}}
		if got := crossDiffs(first, other, 0, 2, []uint64{0}); !slices.Equal(got, want) {
			t.Errorf("%s: crossDiffs = %q, want %q", what, got, want)
		}
		if got := crossDiffs(first, out(exact), 0, 2, []uint64{0}); len(got) != 0 {
			t.Errorf("%s: two exact captures of the same counts: crossDiffs = %q, want none", what, got)
		}
	}
}
