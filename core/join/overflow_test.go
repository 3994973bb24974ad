package join_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/share"
)

// Tests of docs/spec.md, "Expressions" (diff arithmetic is checked) for an index:
// an overflow of an accumulated count is a `numeric overflow` in the
// index's error collection, and so in every query reading it, in Solo and
// in the Maintenance/Interactive pair alike, with 1, 2 and 4 workers; no
// other update is lost and nothing fails (docs/semantics.md §1.1).

// ovKey is the key whose diff overflows; its row's count is unspecified.
const ovKey = 5

// ovRuntime is one runtime configuration of an overflow scenario.
type ovRuntime struct {
	t   *testing.T
	ctl *runtime.Controller
	w   int
	ctx context.Context
}

func newOvRuntime(t *testing.T, mode string, w int) *ovRuntime {
	t.Helper()
	var rts []*runtime.Runtime
	if mode == "solo" {
		r, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		rts = append(rts, r)
	} else {
		regs := make([]*share.Registry, w)
		for i := range regs {
			regs[i] = share.NewRegistry()
		}
		m, err := runtime.New(runtime.Options{Role: runtime.Maintenance, Workers: w, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		i, err := runtime.New(runtime.Options{Role: runtime.Interactive, Workers: w, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		rts = append(rts, m, i)
	}
	ctl, err := runtime.NewController(rts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() {
		cancel()
		ctl.Shutdown()
	})
	return &ovRuntime{t: t, ctl: ctl, w: w, ctx: ctx}
}

func (r *ovRuntime) must(cmd runtime.Command) {
	r.t.Helper()
	if err := r.ctl.Send(cmd); err != nil {
		r.t.Fatal(err)
	}
}

// index creates input name (two columns) and the maintained dataflow that
// arranges it by column 0 and exports it as id.
func (r *ovRuntime) index(id, name string) {
	r.must(runtime.CreateInput{Name: name, Arity: 2})
	r.must(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "maintain " + id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{id},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input(name, 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			return c.Export(id, a)
		},
	}})
}

// send sends rows {key, val, time, diff} to input name.
func (r *ovRuntime) send(name string, rows ...[4]int64) {
	ch := dataflow.NewChunk(2, len(rows))
	for _, x := range rows {
		ch.Push([]int64{x[0], x[1]}, uint64(x[2]), x[3])
	}
	r.must(runtime.Input{Name: name, Chunk: ch})
}

func (r *ovRuntime) advance(name string, t uint64) {
	r.must(runtime.AdvanceInput{Name: name, Frontier: frontier.At(t)})
}

// importIdx imports index id with its arity set again to the one it is
// known to have.
func importIdx(c *dataflow.Context, id string) (*dataflow.Arrangement, error) {
	a, err := c.ImportIndex(id)
	if err != nil {
		return nil, err
	}
	a.Oks.Arity, a.Errs.Arity = batch.Arity{Key: 1, Val: 1}, batch.Arity{Key: 1}
	return a, nil
}

// query creates query dataflow q at asOf reading index idx, or, with
// other, the join of idx and other on the key (errors of both forwarded),
// and returns captures of its oks and its errors.
func (r *ovRuntime) query(asOf uint64, other string) (oks, errs *dataflow.Capture) {
	oks, errs = dataflow.NewCapture(r.w), dataflow.NewCapture(r.w)
	r.must(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "q", AsOf: frontier.At(asOf), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			a, err := importIdx(c, "idx")
			if err != nil {
				return err
			}
			if other != "" {
				b, err := importIdx(c, other)
				if err != nil {
					return err
				}
				coll, err := join.Join(c, a, b, nil, join.OperatorOptions{Name: "join", Dataflow: "q", Errs: []dataflow.Arranged{a.Errs, b.Errs}})
				if err != nil {
					return err
				}
				if a, err = c.Arrange(coll, []int{0}); err != nil {
					return err
				}
			}
			c.Capture(oks, a.Oks)
			c.Capture(errs, a.Errs)
			return nil
		},
	}})
	return oks, errs
}

// at renders the query's output at t once both captures passed t: its
// rows (but those of ovKey, whose count is unspecified) and its errors by
// message.
func (r *ovRuntime) at(oks, errs *dataflow.Capture, t uint64) string {
	r.t.Helper()
	for _, cp := range []*dataflow.Capture{oks, errs} {
		if err := cp.WaitPassed(r.ctx, t); err != nil {
			r.t.Fatalf("workers=%d: the query never passed %d (frontier %v); runtime errors: %v", r.w, t, cp.Frontier(), r.ctl.Errors())
		}
	}
	var rows []string
	for _, rd := range oks.At(t) {
		if rd.Row[0] != ovKey {
			rows = append(rows, fmt.Sprintf("%v:%d", rd.Row, rd.Diff))
		}
	}
	slices.Sort(rows)
	var es []string
	for _, rd := range errs.At(t) {
		m, err := expr.Message(rd.Row[0])
		if err != nil {
			m = err.Error()
		}
		es = append(es, fmt.Sprintf("%s:%d", m, rd.Diff))
	}
	slices.Sort(es)
	return fmt.Sprintf("rows %s errors %s", strings.Join(rows, " "), strings.Join(es, " "))
}

// ovAgree runs scenario in Solo and in the pair with 1, 2 and 4 workers
// and requires the two to give the same answer; it returns the answers by
// worker count.
func ovAgree(t *testing.T, scenario func(r *ovRuntime) string) map[int]string {
	t.Helper()
	out := map[int]string{}
	for _, w := range []int{1, 2, 4} {
		var got [2]string
		for i, mode := range []string{"solo", "pair"} {
			got[i] = scenario(newOvRuntime(t, mode, w))
		}
		if got[0] != got[1] {
			t.Fatalf("workers=%d: Solo and the pair disagree:\nsolo: %s\npair: %s", w, got[0], got[1])
		}
		out[w] = got[0]
	}
	return out
}

// others are rows (k, k) at time tm for the keys 0..9 but ovKey.
func others(tm int64) [][4]int64 {
	var rows [][4]int64
	for k := int64(0); k < 10; k++ {
		if k != ovKey {
			rows = append(rows, [4]int64{k, k, tm, 1})
		}
	}
	return rows
}

// MaxInt64 and +1 for one row at one time: the index's batch of that time
// overflows while it is built. The error is at that time, the other rows
// are all there, and no dataflow fails.
func TestIndexOverflowAtOneTimeIsAnErrorAtThatTime(t *testing.T) {
	var want []string
	for _, r := range others(1) {
		want = append(want, fmt.Sprintf("[%d %d]:1", r[0], r[1]))
	}
	outs := ovAgree(t, func(r *ovRuntime) string {
		r.index("idx", "in")
		r.send("in", append(others(1), [4]int64{ovKey, 50, 1, math.MaxInt64}, [4]int64{ovKey, 50, 1, 1})...)
		r.advance("in", 2)
		oks, errs := r.query(0, "")
		r.advance("in", 3)
		ans := r.at(oks, errs, 0) + " | " + r.at(oks, errs, 1) + " | " + r.at(oks, errs, 2)
		if err := r.ctl.Sync(r.ctx); err != nil {
			t.Fatal(err)
		}
		if es := r.ctl.TakeErrors(); len(es) != 0 {
			t.Fatalf("workers=%d: an overflow at build failed the runtime: %v", r.w, es)
		}
		return ans
	})
	at1 := "rows " + strings.Join(want, " ") + " errors numeric overflow:1"
	wantAns := "rows  errors  | " + at1 + " | " + at1
	for w, got := range outs {
		if got != wantAns {
			t.Errorf("workers=%d:\n got  %s\n want %s", w, got, wantAns)
		}
	}
}

// MaxInt64 at time 0 and +1 for the same row at time 1, compacted together
// by the index's allowed compaction: no batch overflows, a later merge
// does, after both times are sealed. The error is at the index's frontier
// when the merge finds it (docs/semantics.md §1.1), so it is in the
// accumulated errors of every later time; the runtime reports the merge,
// and every other row, later arrivals included, is there.
func TestIndexOverflowAcrossCompactedTimesIsAnErrorAtTheFrontier(t *testing.T) {
	const rounds = 40
	outs := ovAgree(t, func(r *ovRuntime) string {
		r.index("idx", "in")
		r.must(runtime.AllowCompaction{ID: "idx", Frontier: frontier.At(2)})
		r.send("in", append(others(0), [4]int64{ovKey, 50, 0, math.MaxInt64})...)
		r.advance("in", 1)
		if err := r.ctl.Sync(r.ctx); err != nil {
			t.Fatal(err)
		}
		r.send("in", [4]int64{ovKey, 50, 1, 1})
		r.advance("in", 2)
		oks, errs := r.query(2, "")
		// Later arrivals drive the merges.
		for i := int64(2); i < rounds; i++ {
			if err := r.ctl.Sync(r.ctx); err != nil {
				t.Fatal(err)
			}
			var more [][4]int64
			for k := range int64(16) {
				more = append(more, [4]int64{100*i + k, 0, i, 1})
			}
			r.send("in", more...)
			r.advance("in", uint64(i+1))
		}
		// The merge is reported by the runtime; only then is the row's
		// time (the frontier then) known to be before the time read.
		var reported []string
		for len(reported) == 0 && r.ctx.Err() == nil {
			if err := r.ctl.Sync(r.ctx); err != nil {
				t.Fatal(err)
			}
			for _, e := range r.ctl.TakeErrors() {
				reported = append(reported, e.Error())
			}
		}
		if !strings.Contains(strings.Join(reported, "\n"), batch.ErrOverflow.Error()) {
			t.Fatalf("workers=%d: the overflowing merge was not reported: %q", r.w, reported)
		}
		r.advance("in", rounds+1)
		return r.at(oks, errs, rounds)
	})
	var want []string
	for _, r := range others(0) {
		want = append(want, fmt.Sprintf("[%d %d]:1", r[0], r[1]))
	}
	for i := int64(2); i < rounds; i++ {
		for k := range int64(16) {
			want = append(want, fmt.Sprintf("[%d 0]:1", 100*i+k))
		}
	}
	slices.Sort(want)
	wantAns := "rows " + strings.Join(want, " ") + " errors numeric overflow:1"
	for w, got := range outs {
		if got != wantAns {
			t.Errorf("workers=%d:\n got  %s\n want %s", w, got, wantAns)
		}
	}
}

// A query joining the overflowing index with another one: the join's
// error collection carries the index's `numeric overflow` at the time of
// the overflow, once, beside every joined row of the other keys.
func TestIndexOverflowReachesAJoinReadingIt(t *testing.T) {
	outs := ovAgree(t, func(r *ovRuntime) string {
		r.index("idx", "in")
		r.index("other", "in2")
		var rows2 [][4]int64
		for k := int64(0); k < 10; k++ {
			rows2 = append(rows2, [4]int64{k, 100 + k, 1, 1})
		}
		r.send("in2", rows2...)
		r.send("in", append(others(1), [4]int64{ovKey, 50, 1, math.MaxInt64}, [4]int64{ovKey, 50, 1, 1})...)
		r.advance("in", 2)
		r.advance("in2", 2)
		oks, errs := r.query(0, "other")
		r.advance("in", 3)
		r.advance("in2", 3)
		return r.at(oks, errs, 0) + " | " + r.at(oks, errs, 1) + " | " + r.at(oks, errs, 2)
	})
	var want []string
	for _, r := range others(1) {
		want = append(want, fmt.Sprintf("[%d %d %d]:1", r[0], r[1], 100+r[0]))
	}
	at1 := "rows " + strings.Join(want, " ") + " errors numeric overflow:1"
	wantAns := "rows  errors  | " + at1 + " | " + at1
	for w, got := range outs {
		if got != wantAns {
			t.Errorf("workers=%d:\n got  %s\n want %s", w, got, wantAns)
		}
	}
}

// errIndex creates input name (two columns) and the maintained dataflow
// that turns its rows of val 0 into errors (zeroErrs), arranges the rest
// by column 0 and exports the arrangement as id.
func (r *ovRuntime) errIndex(id, name string) {
	r.must(runtime.CreateInput{Name: name, Arity: 2})
	r.must(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "maintain " + id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{id},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input(name, 2)
			if err != nil {
				return err
			}
			b := c.NewOperator("zero errs")
			op := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
			op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
			if err := b.Build(op); err != nil {
				return err
			}
			a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.oks, Errs: op.errs}, []int{0})
			if err != nil {
				return err
			}
			return c.Export(id, a)
		},
	}})
}

// An index's error count that leaves int64 only across two times
// (MinInt64 division-by-zero errors at 0, one more at 1) is exact in each
// batch; once compaction to 1 lets a merge consolidate them, the merged
// batch holds the count saturated and the index's marker goes to its
// frontier, well after 1. A query created then at as_of 1 reads the
// saturated count at 1 through a join that forwards the index's errors
// (join.Errors): the errors it forwards from that batch come with one
// `numeric overflow` at the earliest time it forwards from it, as a
// product of a saturated count of the oks does, so its output at 1 is
// not MinInt64 division-by-zero errors and nothing else, a count off by
// one with no error saying so.
func TestASaturatedErrorCountForwardedByAJoinIsAnOverflow(t *testing.T) {
	outs := ovAgree(t, func(r *ovRuntime) string {
		r.errIndex("idx", "in")
		r.index("other", "in2")
		r.must(runtime.AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
		r.send("in2", [4]int64{1, 7, 0, 1})
		r.send("in", [4]int64{1, 0, 0, math.MinInt64}, [4]int64{1, 1, 0, 1})
		r.advance("in", 1)
		if err := r.ctl.Sync(r.ctx); err != nil {
			t.Fatal(err)
		}
		r.send("in", [4]int64{2, 0, 1, -1})
		r.advance("in", 2)
		// Later errors (+1, then -1) drive the merges of the errors'
		// trace until one consolidates times 0 and 1 and reports it.
		var reported []string
		for i := int64(2); len(reported) == 0 && r.ctx.Err() == nil; i++ {
			d := int64(1)
			if i%2 == 1 {
				d = -1
			}
			r.send("in", [4]int64{3, 0, i, d})
			r.advance("in", uint64(i+1))
			if err := r.ctl.Sync(r.ctx); err != nil {
				t.Fatal(err)
			}
			for _, e := range r.ctl.TakeErrors() {
				reported = append(reported, e.Error())
			}
		}
		if !strings.Contains(strings.Join(reported, "\n"), batch.ErrOverflow.Error()) {
			t.Fatalf("workers=%d: the overflowing merge was not reported: %q", r.w, reported)
		}
		r.advance("in2", 2)
		oks, errs := r.query(1, "other")
		return r.at(oks, errs, 1)
	})
	for w, got := range outs {
		if !strings.Contains(got, "numeric overflow:1") {
			t.Errorf("workers=%d: the errors at 1 are out of int64, but the join's output says nothing of it: %s", w, got)
		}
	}
}

// A capture of an imported index's halves (Context.Capture, what the
// README's "From Go" reads an index with) taken after a merge saturated
// a count of the index at times before its frontier: the row's count
// (MaxInt64 at 0, one more at 1) or the errors' (MinInt64 at 0, one
// fewer at 1) is out of int64 at 1, which the capture's Accumulate
// counts as an overflow there, where it read the bound of the count's
// sign as the exact count with none.
func TestACaptureOfASaturatedIndexCountsTheOverflow(t *testing.T) {
	for _, half := range []string{"oks", "errs"} {
		ovAgree(t, func(r *ovRuntime) string {
			r.errIndex("idx", "in")
			r.must(runtime.AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
			x, first := int64(0), [4]int64{1, 0, 0, math.MinInt64}
			if half == "oks" {
				x, first = 7, [4]int64{1, 7, 0, math.MaxInt64}
			}
			r.send("in", first)
			r.advance("in", 1)
			if err := r.ctl.Sync(r.ctx); err != nil {
				t.Fatal(err)
			}
			if half == "oks" {
				r.send("in", [4]int64{1, 7, 1, 1})
			} else {
				r.send("in", [4]int64{2, 0, 1, -1})
			}
			r.advance("in", 2)
			var reported []string
			for i := int64(2); len(reported) == 0 && r.ctx.Err() == nil; i++ {
				d := int64(1)
				if i%2 == 1 {
					d = -1
				}
				r.send("in", [4]int64{3, x, i, d})
				r.advance("in", uint64(i+1))
				if err := r.ctl.Sync(r.ctx); err != nil {
					t.Fatal(err)
				}
				for _, e := range r.ctl.TakeErrors() {
					reported = append(reported, e.Error())
				}
			}
			if !strings.Contains(strings.Join(reported, "\n"), batch.ErrOverflow.Error()) {
				t.Fatalf("%s, workers=%d: the overflowing merge was not reported: %q", half, r.w, reported)
			}
			oks, errs := r.query(1, "")
			cp := oks
			if half == "errs" {
				cp = errs
			}
			if err := cp.WaitPassed(r.ctx, 1); err != nil {
				t.Fatal(err)
			}
			rows, over := cp.Accumulate(1)
			if over < 1 {
				t.Errorf("%s, workers=%d: %v at 1 and no overflow, where the count is out of int64", half, r.w, rows)
			}
			return ""
		})
	}
}
