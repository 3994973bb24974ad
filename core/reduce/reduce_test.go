package reduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/pprof"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/labelstest"
)

var ar12 = batch.Arity{Key: 1, Val: 2}

// direct is a local arrangement whose only handle goes to the reduce.
func direct(t *testing.T, ar batch.Arity) *input {
	return newInput(t, ar, false, 0, nil)
}

// steps seals each round at its own time, steps r after each, and
// returns what r emitted.
func steps(t *testing.T, x *input, r *Reduce, rounds [][]upd) *collected {
	t.Helper()
	var got collected
	for _, ups := range rounds {
		x.seal(t, ups, x.upper+1)
		bs, f := x.deliver(1 << 30)
		o, err := r.Step(bs, f)
		if err != nil {
			t.Fatal(err)
		}
		got.add(o)
	}
	return &got
}

func u(key, a, b int64, t uint64, d int64) upd {
	return upd{key: []int64{key}, val: []int64{a, b}, t: t, d: d}
}

func checkAt(t *testing.T, got *collected, tm uint64, rows, errs map[string]int64) {
	t.Helper()
	if d := diffMaps(rows, at(got.oks, tm, false)); d != "" {
		t.Errorf("rows at %d:\n%s", tm, d)
	}
	if d := diffMaps(errs, at(got.errs, tm, true)); d != "" {
		t.Errorf("errors at %d:\n%s", tm, d)
	}
}

// TestSumOverflowInOneGroupLeavesOthersExact: group 1's sum leaves int64
// (one `numeric overflow`, no row); group 2's sum is exactly MaxInt64
// although its products (4 × MaxInt64, 4 × MinInt64) leave 64 bits; group 3 is small.
// Retracting group 1's excess brings its row back. Every plan that
// computes sums agrees.
func TestSumOverflowInOneGroupLeavesOthersExact(t *testing.T) {
	for _, plan := range []Plan{Accumulable, Basic, Auto} {
		t.Run(plan.String(), func(t *testing.T) {
			aggs := []Aggregate{{Fn: Sum, Col: 1}, {Fn: Count}}
			if plan == Auto {
				aggs = append(aggs, Aggregate{Fn: Min, Col: 1}) // collated
			}
			x := direct(t, ar12)
			defer x.close()
			r, err := New(x.in, Options{AsOf: frontier.Min(), Aggregates: aggs, Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			got := steps(t, x, r, [][]upd{
				{u(1, 0, math.MaxInt64, 0, 1), u(1, 1, 1, 0, 1),
					u(2, 0, math.MaxInt64, 0, 4), u(2, 1, math.MinInt64, 0, 4), u(2, 2, 1, 0, 4), u(2, 3, math.MaxInt64, 0, 1),
					u(3, 0, 5, 0, 3)},
				{u(1, 1, 1, 1, -1)},
			})
			row := func(k int64, vals ...int64) string {
				if plan == Auto {
					vals = append(vals, map[int64]int64{1: 1, 2: math.MinInt64, 3: 5}[k])
				}
				return rowString([]int64{k}, vals)
			}
			checkAt(t, got, 0, map[string]int64{row(2, math.MaxInt64, 13): 1, row(3, 15, 3): 1},
				map[string]int64{"numeric overflow": 1})
			if plan == Auto {
				row = func(k int64, vals ...int64) string {
					return rowString([]int64{k}, append(vals, map[int64]int64{1: math.MaxInt64, 2: math.MinInt64, 3: 5}[k]))
				}
			}
			checkAt(t, got, 1, map[string]int64{row(1, math.MaxInt64, 1): 1, row(2, math.MaxInt64, 13): 1, row(3, 15, 3): 1}, nil)
			if e := r.Stats().Errors(); e != 0 {
				t.Errorf("net errors produced: %d, want 0 after the overflow is retracted", e)
			}
		})
	}
}

// TestNegativeRecordYieldsOneErrorPerGroup: a group holding a record at
// count -5 yields exactly one `negative multiplicity` and no row, whatever
// the plan, even when the group's total count is positive (which an
// accumulation alone cannot tell from a proper multiset).
func TestNegativeRecordYieldsOneErrorPerGroup(t *testing.T) {
	for _, c := range []struct {
		plan Plan
		aggs []Aggregate
	}{
		{Accumulable, []Aggregate{{Fn: Count}}},
		{Basic, []Aggregate{{Fn: Count}}},
		{Hierarchical, []Aggregate{{Fn: Min, Col: 1}}},
		{Monotonic, []Aggregate{{Fn: Max, Col: 1}}},
		{Auto, []Aggregate{{Fn: Max, Col: 1}, {Fn: Sum, Col: 0}}},
	} {
		t.Run(c.plan.String(), func(t *testing.T) {
			x := direct(t, ar12)
			defer x.close()
			r, err := New(x.in, Options{Aggregates: c.aggs, Plan: c.plan})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			got := steps(t, x, r, [][]upd{
				{u(1, 0, 10, 0, 9), u(1, 1, 20, 0, 1), u(2, 0, 7, 0, 1)},
				{u(1, 1, 20, 1, -6)}, // record (1, 20) of group 1 goes to -5
				{u(1, 1, 20, 2, 5)},  // and back to 0
			})
			if len(at(got.oks, 1, false)) != 1 {
				t.Errorf("rows at 1: %v, want only group 2's", at(got.oks, 1, false))
			}
			checkAt(t, got, 1, at(got.oks, 1, false), map[string]int64{"negative multiplicity": 1})
			if len(at(got.oks, 2, false)) != 2 || len(at(got.errs, 2, true)) != 0 {
				t.Errorf("at 2: rows %v errors %v, want both groups and no error", at(got.oks, 2, false), at(got.errs, 2, true))
			}
		})
	}
}

// TestEmptyGroupByHasOneGroupAndNoRowWhenEmpty: with a key of arity 0 all
// records form one group, which yields nothing once every record is
// retracted (docs/spec.md: also with an empty group_by).
func TestEmptyGroupByHasOneGroupAndNoRowWhenEmpty(t *testing.T) {
	ar := batch.Arity{Key: 0, Val: 2}
	x := direct(t, ar)
	defer x.close()
	r, err := New(x.in, Options{Aggregates: []Aggregate{{Fn: Count}, {Fn: Max, Col: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	e := func(a, b int64, tm uint64, d int64) upd { return upd{key: []int64{}, val: []int64{a, b}, t: tm, d: d} }
	got := steps(t, x, r, [][]upd{
		{e(1, 4, 0, 1), e(2, 9, 0, 2)},
		{e(1, 4, 1, -1), e(2, 9, 1, -2)},
	})
	checkAt(t, got, 0, map[string]int64{rowString(nil, []int64{3, 9}): 1}, nil)
	checkAt(t, got, 1, nil, nil)
}

// TestReduceOverImportWhosePublisherMergesAcrossStaleAsOf: the publisher
// holds history, has compacted to a stale as_of, and while the reduce
// runs keeps allowing compaction to its upper and merging hard. The
// reduce's reader must keep the chain cut at the interval it retires
// next, from construction on: no step may fail with a straddle, and the
// output must match the model at every time.
func TestReduceOverImportWhosePublisherMergesAcrossStaleAsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	c := config{aggs: []Aggregate{aggCount, aggMin, aggSum}, workers: 1}
	const asOf = 2
	var history [][]upd
	var all []upd
	for tm := range uint64(8) {
		ups := randomUpdates(rng, c, 20, 6, tm)
		history, all = append(history, ups), append(all, ups...)
	}
	x := newInput(t, ar12, true, asOf, history)
	defer x.close()
	r, err := New(x.in, Options{AsOf: frontier.At(asOf), Aggregates: c.aggs})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if got := x.in.Reader.PhysicalCompaction(); got != frontier.At(8) {
		t.Fatalf("import reader holds physically at %v, want its seed {8}", got)
	}
	var got collected
	for tm := uint64(8); tm < 40; tm++ {
		ups := randomUpdates(rng, c, 1+rng.IntN(8), 6, tm)
		all = append(all, ups...)
		x.seal(t, ups, tm+1)
		for range 4 {
			x.w.Exert(1 << 12)
		}
		if rng.IntN(3) == 0 {
			continue // the reduce lags a round
		}
		bs, f := x.deliver(0)
		o, err := r.Step(bs, f)
		if err != nil {
			t.Fatalf("step to %v: %v", f, err)
		}
		got.add(o)
		if l := r.Lower(); o.Retired && x.in.Reader.PhysicalCompaction() != l {
			t.Fatalf("after retiring through %v the reader holds physically at %v", l, x.in.Reader.PhysicalCompaction())
		}
	}
	bs, f := x.deliver(0)
	o, err := r.Step(bs, f)
	if err != nil {
		t.Fatal(err)
	}
	got.add(o)
	if r.Lower() != frontier.At(40) {
		t.Fatalf("retired through %v, want {40}", r.Lower())
	}
	for tm := uint64(asOf); tm < 40; tm++ {
		rows, errs := model(all, tm, asOf, c.aggs, modeReduce)
		checkAt(t, &got, tm, rows, errs)
	}
}

// TestImportedReduceWaitsForItsSeed: an import's reader holds physically
// at the coverage it was seeded with, so the reduce retires nothing
// before the stream reaches it (a cut inside the seed could straddle a
// merged batch).
func TestImportedReduceWaitsForItsSeed(t *testing.T) {
	x := newInput(t, ar12, true, 0, [][]upd{{u(1, 0, 1, 0, 1)}, {u(1, 0, 2, 1, 1)}, {u(2, 0, 3, 2, 1)}})
	defer x.close()
	r, err := New(x.in, Options{Aggregates: []Aggregate{{Fn: Count}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	o, err := r.Step(nil, frontier.At(2))
	if err != nil || o.Retired {
		t.Fatalf("step to {2} inside the seed {3}: retired %v, err %v; want nothing retired", o.Retired, err)
	}
	bs, f := x.deliver(0)
	if o, err = r.Step(bs, f); err != nil || !o.Retired || o.Upper != frontier.At(3) {
		t.Fatalf("step to the seed: %+v, %v", o, err)
	}
	var got collected
	got.add(o)
	checkAt(t, &got, 2, map[string]int64{rowString([]int64{1}, []int64{2}): 1, rowString([]int64{2}, []int64{1}): 1}, nil)
}

// TestReduceRetiresNothingBeforeAsOf: output times are advanced to as_of,
// so nothing is retired until the stream's frontier passes it.
func TestReduceRetiresNothingBeforeAsOf(t *testing.T) {
	x := direct(t, ar12)
	defer x.close()
	r, err := New(x.in, Options{AsOf: frontier.At(3), Aggregates: []Aggregate{{Fn: Count}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var got collected
	for tm := range uint64(5) {
		x.seal(t, []upd{u(int64(tm), 0, 0, tm, 1)}, tm+1)
		bs, f := x.deliver(1)
		o, err := r.Step(bs, f)
		if err != nil {
			t.Fatal(err)
		}
		if o.Retired != (tm >= 3) {
			t.Fatalf("step to %v retired %v", f, o.Retired)
		}
		got.add(o)
		if !o.Retired {
			continue
		}
		for _, u := range o.Oks.Updates() {
			if u.Time < 3 {
				t.Fatalf("output %v before as_of", u)
			}
		}
	}
	checkAt(t, &got, 3, map[string]int64{"[0] | [1]": 1, "[1] | [1]": 1, "[2] | [1]": 1, "[3] | [1]": 1}, nil)
}

// TestBadCallsAreErrors: bad aggregates, arities, batch order and calls
// after Release are errors naming what is wrong, never panics.
func TestBadCallsAreErrors(t *testing.T) {
	h, w := trace.NewSpine(ar12, spine.Options{})
	defer w.Close()
	in := Input{Reader: h, Pres: batch.Identity(), Arity: ar12}
	for _, c := range []struct {
		opts Options
		want error
	}{
		{Options{}, ErrAggregate},
		{Options{Aggregates: []Aggregate{{Fn: Sum, Col: 2}}}, ErrAggregate},
		{Options{Aggregates: []Aggregate{{Fn: 9}}}, ErrAggregate},
		{Options{Aggregates: []Aggregate{{Fn: Min, Col: 0}}, Plan: Accumulable}, ErrAggregate},
		{Options{Aggregates: []Aggregate{{Fn: Count}}, Plan: Hierarchical}, ErrAggregate},
	} {
		if _, err := New(in, c.opts); !errors.Is(err, c.want) {
			t.Errorf("New(%+v): %v, want %v", c.opts, err, c.want)
		}
	}
	if _, err := NewDistinct(in, Options{}); !errors.Is(err, ErrArity) {
		t.Errorf("distinct over a keyed arrangement: %v, want ErrArity", err)
	}
	r, err := New(in, Options{Aggregates: []Aggregate{{Fn: Count}}})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(ar batch.Arity, lo, hi uint64) *batch.Batch {
		b, err := batch.NewBuilder(ar, 0).Build(frontier.At(lo), frontier.At(hi))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A failed step is sticky (TestAFailedStepIsSticky): each bad step
	// gets a reduce of its own.
	fresh := func() *Reduce {
		h2, w2 := trace.NewSpine(ar12, spine.Options{})
		t.Cleanup(func() { w2.Close() })
		r2, err := New(Input{Reader: h2, Pres: batch.Identity(), Arity: ar12}, Options{Aggregates: []Aggregate{{Fn: Count}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r2.Release)
		return r2
	}
	if _, err := fresh().Step([]*batch.Batch{mk(batch.Arity{Key: 1, Val: 1}, 0, 1)}, frontier.At(1)); !errors.Is(err, ErrArity) {
		t.Errorf("batch of another arity: %v, want ErrArity", err)
	}
	r2 := fresh()
	if _, err := r2.Step([]*batch.Batch{mk(ar12, 0, 2)}, frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Step([]*batch.Batch{mk(ar12, 1, 3)}, frontier.At(3)); !errors.Is(err, ErrOrder) {
		t.Errorf("batch before the stream's upper: %v, want ErrOrder", err)
	}
	if _, err := fresh().Step([]*batch.Batch{mk(ar12, 2, 5)}, frontier.At(4)); !errors.Is(err, ErrOrder) {
		t.Errorf("batch beyond the frontier: %v, want ErrOrder", err)
	}
	r.Release()
	r.Release()
	if _, err := r.Step(nil, frontier.At(9)); !errors.Is(err, trace.ErrReleased) {
		t.Errorf("step after release: %v, want trace.ErrReleased", err)
	}
	if !h.Released() {
		t.Error("Release left the input's reader held")
	}
}

// TestAutoChoosesPlansByKind: count and sum are accumulable, min and max
// hierarchical (monotonic for append-only input), and a mixed reduce
// collates one part of each.
func TestAutoChoosesPlansByKind(t *testing.T) {
	for _, c := range []struct {
		aggs       []Aggregate
		appendOnly bool
		want       []Plan
	}{
		{[]Aggregate{aggCount, aggSum}, false, []Plan{Accumulable}},
		{[]Aggregate{aggMin, aggMax}, false, []Plan{Hierarchical}},
		{[]Aggregate{aggMin}, true, []Plan{Monotonic}},
		{[]Aggregate{aggMin, aggCount}, false, []Plan{Accumulable, Hierarchical}},
	} {
		h, w := trace.NewSpine(ar12, spine.Options{})
		r, err := New(Input{Reader: h, Pres: batch.Identity(), Arity: ar12}, Options{Aggregates: c.aggs, AppendOnly: c.appendOnly})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Plans(); len(got) != len(c.want) || got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("aggregates %v append-only %v: plans %v, want %v", c.aggs, c.appendOnly, got, c.want)
		}
		r.Release()
		w.Close()
	}
}

// TestRecordCountBeyondInt64IsAnOverflow: a record whose accumulated count
// leaves int64 (MaxInt64 at time 0, one more at time 1) makes its group's
// output an `numeric overflow` at that time, whatever the aggregate, even a
// sum that stays 0 (docs/spec.md, "Expressions": the output at that time must contain
// the error); retracting it again restores the row.
func TestRecordCountBeyondInt64IsAnOverflow(t *testing.T) {
	for _, c := range []struct {
		plan Plan
		aggs []Aggregate
	}{
		{Accumulable, []Aggregate{{Fn: Sum, Col: 0}}},
		{Basic, []Aggregate{{Fn: Sum, Col: 0}}},
		{Hierarchical, []Aggregate{{Fn: Max, Col: 1}}},
		{Monotonic, []Aggregate{{Fn: Max, Col: 1}}},
		{Auto, []Aggregate{{Fn: Max, Col: 1}, {Fn: Sum, Col: 0}}},
	} {
		t.Run(c.plan.String(), func(t *testing.T) {
			x := direct(t, ar12)
			defer x.close()
			r, err := New(x.in, Options{Aggregates: c.aggs, Plan: c.plan})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			got := steps(t, x, r, [][]upd{
				{u(1, 0, 4, 0, math.MaxInt64), u(2, 0, 4, 0, 1)},
				{u(1, 0, 4, 1, 1)},
				{u(1, 0, 4, 2, -1)},
			})
			if e := at(got.errs, 1, true); e["numeric overflow"] != 1 || len(at(got.oks, 1, false)) != 1 {
				t.Errorf("at 1: rows %v errors %v, want group 2's row and one overflow", at(got.oks, 1, false), e)
			}
			if e := at(got.errs, 2, true); len(e) != 0 || len(at(got.oks, 2, false)) != 2 {
				t.Errorf("at 2: rows %v errors %v, want both rows", at(got.oks, 2, false), e)
			}
		})
	}
	for _, m := range []mode{modeThreshold, modeDistinct} {
		ar := batch.Arity{Key: 3}
		h, w := trace.NewSpine(ar, spine.Options{})
		x := &input{ar: ar, w: w, front: frontier.Min(), in: Input{Reader: h, Pres: batch.Identity(), Arity: ar}}
		r, err := newRecordOp(m, x.in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := func(tm uint64, d int64) upd { return upd{key: []int64{1, 2, 3}, t: tm, d: d} }
		got := steps(t, x, r, [][]upd{{rec(0, math.MaxInt64)}, {rec(1, 1)}})
		if e := at(got.errs, 1, true); e["numeric overflow"] != 1 || len(at(got.oks, 1, false)) != 0 {
			t.Errorf("%v at 1: rows %v errors %v, want one overflow", m, at(got.oks, 1, false), e)
		}
		r.Release()
		w.Close()
	}
}

// TestRecordCountBelowInt64IsAnOverflow: a record at MinInt64 at time 0
// and one less at time 1 has a count, -2^63 - 1, below int64: threshold
// and distinct report one numeric overflow there (an accumulated count
// of the query's records out of int64, docs/spec.md "Expressions"), not
// the negative count's silence or negative multiplicity; at time 2 the
// count is back in range and negative again.
func TestRecordCountBelowInt64IsAnOverflow(t *testing.T) {
	for _, c := range []struct {
		m   mode
		neg map[string]int64 // the errors of a negative count in range
	}{
		{modeThreshold, nil},
		{modeDistinct, map[string]int64{"negative multiplicity": 1}},
	} {
		t.Run(c.m.String(), func(t *testing.T) {
			ar := batch.Arity{Key: 3}
			h, w := trace.NewSpine(ar, spine.Options{})
			defer w.Close()
			x := &input{ar: ar, w: w, front: frontier.Min(), in: Input{Reader: h, Pres: batch.Identity(), Arity: ar}}
			r, err := newRecordOp(c.m, x.in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			rec := func(tm uint64, d int64) upd { return upd{key: []int64{1, 2, 3}, t: tm, d: d} }
			got := steps(t, x, r, [][]upd{{rec(0, math.MinInt64)}, {rec(1, -1)}, {rec(2, 1)}})
			for tm, want := range []map[string]int64{c.neg, {"numeric overflow": 1}, c.neg} {
				checkAt(t, got, uint64(tm), nil, want)
			}
		})
	}
}

// TestRecordCountBeyondInt64WinsOverANegativeRecord: a group holding a
// record at count -1 and another whose count leaves int64 (MaxInt64 at
// time 0, one more at time 1) yields one `numeric overflow` and no
// `negative multiplicity` at time 1 (docs/spec.md, "Expressions": an accumulated
// count of the query's records beyond int64 puts the error in the output
// at that time); before and after, the negative record's one error.
func TestRecordCountBeyondInt64WinsOverANegativeRecord(t *testing.T) {
	for _, c := range []struct {
		plan Plan
		aggs []Aggregate
	}{
		{Accumulable, []Aggregate{{Fn: Count}}},
		{Basic, []Aggregate{{Fn: Sum, Col: 0}}},
		{Hierarchical, []Aggregate{{Fn: Max, Col: 1}}},
		{Monotonic, []Aggregate{{Fn: Min, Col: 1}}},
		{Auto, []Aggregate{{Fn: Max, Col: 1}, {Fn: Count}}},
	} {
		t.Run(c.plan.String(), func(t *testing.T) {
			x := direct(t, ar12)
			defer x.close()
			r, err := New(x.in, Options{Aggregates: c.aggs, Plan: c.plan})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			got := steps(t, x, r, [][]upd{
				{u(1, 0, 4, 0, math.MaxInt64), u(1, 1, 5, 0, -1), u(2, 0, 4, 0, 1)},
				{u(1, 0, 4, 1, 1)},
				{u(1, 0, 4, 2, -1)},
			})
			for tm, want := range []string{"negative multiplicity", "numeric overflow", "negative multiplicity"} {
				if e := at(got.errs, uint64(tm), true); len(e) != 1 || e[want] != 1 || len(at(got.oks, uint64(tm), false)) != 1 {
					t.Errorf("at %d: rows %v errors %v, want group 2's row and one %s", tm, at(got.oks, uint64(tm), false), e, want)
				}
			}
		})
	}
}

// TestCollationKeepsARecordsOverflowOverANegativeRecord: with as_of 1,
// a record's MaxInt64 at time 0 and its 1 at time 1 show together at 1,
// where its count, 2^63, leaves int64, and the group also holds a record
// at -1. The accumulable part counts the record exactly (numeric
// overflow); the hierarchical part's layer 0 consolidates the two diffs
// into one saturated count and sees only the negative record. The
// collated group is one `numeric overflow` (§6.3: a record's count beyond
// int64 wins over a negative record), beside the one the layer's build
// adds (§1.1), and no `negative multiplicity`.
func TestCollationKeepsARecordsOverflowOverANegativeRecord(t *testing.T) {
	x := direct(t, ar12)
	defer x.close()
	r, err := New(x.in, Options{AsOf: frontier.At(1), Aggregates: []Aggregate{{Fn: Max, Col: 1}, {Fn: Count}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if p := r.Plans(); len(p) != 2 {
		t.Fatalf("plans %v, want a collated reduce", p)
	}
	got := steps(t, x, r, [][]upd{
		{u(1, 0, 4, 0, math.MaxInt64), u(1, 1, 5, 0, -1), u(2, 0, 4, 0, 1)},
		{u(1, 0, 4, 1, 1)},
		{},
	})
	for _, tm := range []uint64{1, 2} {
		checkAt(t, got, tm, map[string]int64{"[2] | [4 1]": 1}, map[string]int64{"numeric overflow": 2})
	}
}

// TestHierarchicalLayerMergeKeepsARecordsOverflow: record (0, 4) of
// group 1 is MaxInt64 at time 0 and 1 more at time 1, so its count, 2^63,
// leaves int64 from time 1 on; record (1, 88), in the same layer-0
// bucket, is -2 until time 40 brings it to 0. Group 2's updates at
// every time keep the reduce's layer traces merging, and the input is
// held where it is, so no merge of the input meets the two updates. Once
// layer 0's merge has consolidated them, its batch holds the record
// saturated at MaxInt64; a recomputation of the bucket at 40 finds no
// count out of int64. The merge's own `numeric overflow` must keep the
// output's error from there on (docs/semantics.md §1.1), as every
// arrangement's merge does.
func TestHierarchicalLayerMergeKeepsARecordsOverflow(t *testing.T) {
	if hashRecord([]int64{1, 88})&0xff != hashRecord([]int64{0, 4})&0xff {
		t.Fatal("records (1, 88) and (0, 4) are no longer in one layer-0 bucket")
	}
	x := direct(t, ar12)
	defer x.close()
	hold := x.in.Reader.(*trace.Handle).Clone() // the input never compacts
	defer hold.Release()
	r, err := New(x.in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Hierarchical})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	rounds := [][]upd{
		{u(1, 0, 4, 0, math.MaxInt64), u(1, 1, 88, 0, -2), u(2, 0, 4, 0, 1)},
		{u(1, 0, 4, 1, 1)},
	}
	for i := 2; i < 40; i++ {
		rounds = append(rounds, []upd{u(2, 0, int64(i), uint64(i), 1)})
	}
	rounds = append(rounds, []upd{u(1, 1, 88, 40, 2)})
	got := steps(t, x, r, rounds)
	for tm := uint64(1); tm <= 40; tm++ {
		if e := at(got.errs, tm, true); e["numeric overflow"] < 1 {
			t.Fatalf("at %d: rows %v errors %v, want a numeric overflow (record (0, 4) is at 2^63)", tm, at(got.oks, tm, false), e)
		}
	}
}

// TestOwnerIsTheExchangeOfTheGroupColumns: the worker that owns a group is
// the one dataflow.Context.Exchange sends a row to when exchanging by the
// group's columns, so a reduce behind an arrangement exchanged by its key
// sees every record of its groups.
func TestOwnerIsTheExchangeOfTheGroupColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 1000 {
		row := []int64{rng.Int64(), rng.Int64N(10), rng.Int64(), rng.Int64N(3)}
		cols := []int{1, 3}
		if rng.IntN(2) == 0 {
			cols = []int{2}
		}
		key := make([]int64, len(cols))
		for i, c := range cols {
			key[i] = row[c]
		}
		for _, peers := range []int{2, 3, 4} {
			if got, want := Owner(key, peers), dataflow.Worker(dataflow.HashCols(row, cols), peers); got != want {
				t.Fatalf("Owner(%v, %d) = %d, the exchange sends row %v by %v to %d", key, peers, got, row, cols, want)
			}
		}
	}
	if Owner([]int64{7}, 1) != 0 {
		t.Fatal("one worker owns everything")
	}
}

// TestStatsLabelTheOperatorsWork: a step's work runs under dataflow= and
// operator=, added to the worker's labels.
func TestStatsLabelTheOperatorsWork(t *testing.T) {
	s := NewStats("q", "reduce by k")
	s.SetContext(pprof.WithLabels(context.Background(), pprof.Labels("runtime", "interactive")))
	var got []string
	s.Do(func(ctx context.Context) {
		for _, k := range []string{"runtime", "dataflow", "operator"} {
			v, _ := pprof.Label(ctx, k)
			got = append(got, k+"="+v)
		}
	})
	if want := "[runtime=interactive dataflow=q operator=reduce by k]"; fmt.Sprint(got) != want {
		t.Fatalf("labels %v, want %s", got, want)
	}
}

// TestDiffsCollapsedAtAsOfAreSummedExactly: a record's updates before
// as_of all land at as_of, so one step sees MaxInt64 and 1 for it at one
// time; its count, 2^63, is an overflow at as_of, and the retraction of
// the 1 makes the row exact again.
func TestDiffsCollapsedAtAsOfAreSummedExactly(t *testing.T) {
	for _, plan := range []Plan{Accumulable, Basic} {
		x := direct(t, ar12)
		r, err := New(x.in, Options{AsOf: frontier.At(2), Aggregates: []Aggregate{{Fn: Count}}, Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		got := steps(t, x, r, [][]upd{
			{u(1, 0, 4, 0, math.MaxInt64), u(2, 0, 4, 0, 3)},
			{u(1, 0, 4, 1, 1)},
			{},
			{u(1, 0, 4, 3, -1)},
		})
		if e := at(got.errs, 2, true); e["numeric overflow"] != 1 || len(at(got.oks, 2, false)) != 1 {
			t.Errorf("%v at 2: rows %v errors %v, want group 2's row and one overflow", plan, at(got.oks, 2, false), e)
		}
		checkAt(t, got, 3, map[string]int64{"[1] | [9223372036854775807]": 1, "[2] | [3]": 1}, nil)
		r.Release()
		x.close()
	}
}

// TestImportOfOneMergedBatchKeepsItsTimes: the publisher has merged six
// times of history into one batch (logical compaction still at 0) before
// the import, so the reduce's first step sees one batch whose updates
// show at several times: the output must still change at each of them.
func TestImportOfOneMergedBatchKeepsItsTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c := config{aggs: []Aggregate{aggCount, aggSum}, workers: 1}
	h, w, sp := share.NewTrace(ar12, spine.Options{})
	defer h.Release()
	var all []upd
	for tm := range uint64(6) {
		ups := randomUpdates(rng, c, 12, 3, tm)
		all = append(all, ups...)
		b := batch.NewBuilder(ar12, len(ups))
		for _, u := range ups {
			b.Push(u.key, u.val, u.t, u.d)
		}
		out, err := b.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(out); err != nil {
			t.Fatal(err)
		}
	}
	h.SetPhysicalCompaction(frontier.At(6))
	for range 64 {
		w.Exert(1 << 16)
	}
	if n := len(sp.LocalPoint().Chain()); n != 1 {
		t.Fatalf("the chain has %d batches, want them merged into one", n)
	}
	im, err := sp.LocalPoint().Import(frontier.Min(), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	r, err := New(Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar12}, Options{Aggregates: c.aggs, Plan: Accumulable})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	got := stepDrained(t, r, im)
	for tm := range uint64(6) {
		rows, errs := model(all, tm, 0, c.aggs, modeReduce)
		checkAt(t, &got, tm, rows, errs)
	}
}

// TestFreshGroupsOverflowExactly: a reduce's first step over one merged
// batch whose times all show at as_of: group 1's record sums past int64
// (MaxInt64 then 1), group 2's two records each hold MaxInt64 (their
// count, 2^64 - 2, leaves int64), group 3 is small. Groups 1 and 2 are one
// `numeric overflow` each; group 3 is exact.
func TestFreshGroupsOverflowExactly(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		freshGroups(t, Aggregate{Fn: Count}, map[string]int64{"[3] | [3]": 1}, map[string]int64{"numeric overflow": 2})
	})
	// A sum of column 0 (0 for group 1's record) fits in every group: only
	// group 1's record count itself is out of range.
	t.Run("sum", func(t *testing.T) {
		freshGroups(t, Aggregate{Fn: Sum, Col: 0}, map[string]int64{"[2] | [9223372036854775807]": 1, "[3] | [1]": 1}, map[string]int64{"numeric overflow": 1})
	})
}

func freshGroups(t *testing.T, agg Aggregate, rows, errs map[string]int64) {
	h, w, sp := share.NewTrace(ar12, spine.Options{})
	defer h.Release()
	for tm, ups := range [][]upd{
		{u(1, 0, 4, 0, math.MaxInt64), u(2, 0, 4, 0, math.MaxInt64), u(2, 1, 4, 0, math.MaxInt64), u(3, 0, 4, 0, 2)},
		{u(1, 0, 4, 1, 1), u(3, 1, 4, 1, 1)},
	} {
		b := batch.NewBuilder(ar12, len(ups))
		for _, u := range ups {
			b.Push(u.key, u.val, u.t, u.d)
		}
		out, err := b.Build(frontier.At(uint64(tm)), frontier.At(uint64(tm+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(out); err != nil {
			t.Fatal(err)
		}
	}
	h.SetPhysicalCompaction(frontier.At(2))
	for range 16 {
		w.Exert(1 << 16)
	}
	if n := len(sp.LocalPoint().Chain()); n != 1 {
		t.Fatalf("the chain has %d batches, want one", n)
	}
	im, err := sp.LocalPoint().Import(frontier.At(1), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	r, err := New(Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar12}, Options{AsOf: frontier.At(1), Aggregates: []Aggregate{agg}, Plan: Accumulable})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	got := stepDrained(t, r, im)
	checkAt(t, &got, 1, rows, errs)
}

// TestStatsSetTheirContextBack: after a step's work, the goroutine carries
// the labels of the context SetContext set (the rest of the step is
// counted under them), whichever context that is from one step to the
// next.
func TestStatsSetTheirContextBack(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	s := NewStats("q", "reduce by k")
	for _, w := range []string{"1", "2", "1"} {
		s.SetContext(pprof.WithLabels(context.Background(), pprof.Labels("worker", w, "operator", "step")))
		inside := ""
		s.Do(func(ctx context.Context) { inside, _ = pprof.Label(ctx, "worker") })
		if inside != w {
			t.Errorf("Do's f ran with worker=%q, want %q", inside, w)
		}
		if got, want := labelstest.Own(t), fmt.Sprintf(`{"operator":"step", "worker":%q}`, w); got != want {
			t.Errorf("after Do: %s, want %s", got, want)
		}
	}
}

// TestReduceOperatorsWorkOnTheirStepsLabels: when the dataflow labels
// every step, a reduce operator's work runs on its step's labels (and
// sets them back after it), not on the worker's alone; otherwise on the
// worker's. So too for one added without OperatorOptions.Labels: Stats.Do
// sets its context's labels back after the work, and a context without
// the worker's runtime= and worker= would strip them from the rest of the
// step and, on a worker that labels no step, from everything it runs
// after.
func TestReduceOperatorsWorkOnTheirStepsLabels(t *testing.T) {
	for _, given := range []bool{true, false} {
		for _, steps := range []bool{true, false} {
			env := &dataflow.Env{
				Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
				Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
				Fail:   func(_ string, err error) { t.Error(err) },
				Labels: pprof.WithLabels(context.Background(), pprof.Labels("runtime", "solo", "worker", "0")), LabelSteps: steps,
			}
			env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
			st := NewStats("q", "count")
			df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
				in, err := c.Input("rows", 2)
				if err != nil {
					return err
				}
				a, err := c.Arrange(in, []int{0})
				if err != nil {
					return err
				}
				opts := OperatorOptions{Name: "count", Dataflow: "q", Stats: st}
				if given {
					opts.Labels = c.Labels()
				}
				_, err = AddReduce(c, a, []Aggregate{{Fn: Count}}, opts)
				return err
			}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			df.Drop()
			op, _ := pprof.Label(st.ctx, "operator")
			rt, _ := pprof.Label(st.ctx, "runtime")
			w, _ := pprof.Label(st.ctx, "worker")
			want := ""
			if steps {
				want = "count"
			}
			if op != want || rt != "solo" || w != "0" {
				t.Errorf("Labels given %v, LabelSteps %v: the reduce works on operator=%q runtime=%q worker=%q, want operator=%q runtime=solo worker=0", given, steps, op, rt, w, want)
			}
		}
	}
}

// TestReduceWithoutContextKeepsTheGoroutinesLabels checks that a reduce
// made by New alone, its Stats never given a context (SetContext), works
// on its goroutine's labels and leaves them there: Do, labelling against
// an empty context, set the goroutine's labels to none after the work, so
// the worker's runtime= and worker= were lost from the rest of its step
// and from everything the worker ran after it.
func TestReduceWithoutContextKeepsTheGoroutinesLabels(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	worker := pprof.WithLabels(context.Background(), pprof.Labels("runtime", "solo", "worker", "0"))
	pprof.SetGoroutineLabels(worker)
	x := direct(t, ar12)
	defer x.close()
	r, err := New(x.in, Options{AsOf: frontier.Min(), Aggregates: []Aggregate{{Fn: Count}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	got := steps(t, x, r, [][]upd{{u(1, 0, 1, 0, 1)}})
	if len(got.oks) == 0 {
		t.Fatal("the step retired nothing: Do did not run")
	}
	if own, want := labelstest.Own(t), `{"runtime":"solo", "worker":"0"}`; own != want {
		t.Errorf("after the reduce's step the goroutine carries %s, want the worker's %s", own, want)
	}
}

// TestNewRefusesAnInputItCannotRead: an Input with no reader, a
// negative arity, or a presentation that shows nothing from as_of on (the
// zero Presentation) is ErrArity from New, NewThreshold and NewDistinct,
// where the reduce used to be made and panic at its first step or its
// Release, or output nothing at every time.
func TestNewRefusesAnInputItCannotRead(t *testing.T) {
	x := direct(t, ar12)
	defer x.close()
	count := Options{AsOf: frontier.At(2), Aggregates: []Aggregate{{Fn: Count}}}
	for _, c := range []struct {
		what string
		in   Input
	}{
		{"no reader", Input{Pres: batch.Identity(), Arity: batch.Arity{Key: 3}}},
		{"a negative key arity", Input{Reader: x.in.Reader, Pres: batch.Identity(), Arity: batch.Arity{Key: -1}}},
		{"a negative val arity", Input{Reader: x.in.Reader, Pres: batch.Identity(), Arity: batch.Arity{Key: 1, Val: -1}}},
		{"a zero presentation", Input{Reader: x.in.Reader, Arity: batch.Arity{Key: 3}}},
		{"a presentation that ends at as_of", Input{Reader: x.in.Reader, Pres: batch.Presentation{Until: frontier.At(2)}, Arity: batch.Arity{Key: 3}}},
	} {
		for name, mk := range map[string]func(Input, Options) (*Reduce, error){"reduce": New, "threshold": NewThreshold, "distinct": NewDistinct} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s of an input with %s: panic %v", name, c.what, p)
					}
				}()
				r, err := mk(c.in, count)
				if err == nil {
					// Made: its first step and Release must not panic either.
					_, err = r.Step(nil, frontier.At(1))
					r.Release()
					t.Errorf("%s of an input with %s: made (step: %v), want ErrArity", name, c.what, err)
				} else if !errors.Is(err, ErrArity) {
					t.Errorf("%s of an input with %s: %v, want ErrArity", name, c.what, err)
				}
			}()
		}
	}
}

// TestStagesMoveTheirHoldsToUpper (G2): once a step has retired an
// interval, every stage holds its output trace and its input (a
// hierarchical layer's, the collation's, or the reduce's own, which the
// reduce moves once for its parts, threshold and distinct included)
// logically and physically at the reduce's new lower: what lies before it is only ever
// read accumulated, so a stage that kept its holds where it was built
// would keep the trace from compacting and merging away the history of
// every step it has done (the output is still right, the memory grows).
func TestStagesMoveTheirHoldsToUpper(t *testing.T) {
	ar3 := batch.Arity{Key: 3}
	for _, c := range []struct {
		name string
		ar   batch.Arity
		make func(in Input) (*Reduce, error)
	}{
		{"accumulable", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Count}, {Fn: Sum, Col: 1}}, Plan: Accumulable})
		}},
		{"basic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Basic})
		}},
		{"hierarchical", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Min, Col: 1}}, Plan: Hierarchical})
		}},
		{"monotonic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Monotonic, AppendOnly: true})
		}},
		{"collated", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Count}, {Fn: Max, Col: 1}}, Plan: Auto})
		}},
		{"threshold", ar3, func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) }},
		{"distinct", ar3, func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := direct(t, c.ar)
			defer x.close()
			r, err := c.make(x.in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			var stages []*stage
			for _, p := range r.parts {
				if p.top != nil {
					stages = append(stages, p.top)
				}
				stages = append(stages, p.layers...)
			}
			if r.collate != nil {
				stages = append(stages, r.collate)
			}
			for tm := range uint64(4) {
				ups := []upd{u(1, 0, int64(tm), tm, 1), u(2, 1, 7, tm, 1)}
				if c.ar == ar3 {
					for i := range ups {
						ups[i].key, ups[i].val = append(ups[i].key, ups[i].val...), nil
					}
				}
				steps(t, x, r, [][]upd{ups})
				want := r.Lower()
				if want != frontier.At(tm+1) {
					t.Fatalf("lower %v after sealing %d, want {%d}", want, tm+1, tm+1)
				}
				// Every stage's output and input, the Reduce's own
				// input among them (a top stage's, which Reduce.retire
				// moves once its parts have retired).
				for i, s := range stages {
					for what, h := range map[string]trace.Reader{"output": s.out, "input": s.in} {
						if l, p := h.LogicalCompaction(), h.PhysicalCompaction(); l != want || p != want {
							t.Fatalf("stage %d %s held at logical %v, physical %v; want both at %v", i, what, l, p, want)
						}
					}
				}
			}
		})
	}
}

// TestAFailedStepIsSticky: once a Step has failed (here a batch out of
// order, before the end of what the reduce has seen), every later Step
// returns that same error and retires nothing, also with good batches and
// a frontier far beyond, and Lower stays where it was before the failed
// step (docs/semantics.md §2.5). A reduce, a threshold and a distinct
// alike; they retired the pending batches and went on, their internal
// traces possibly half moved by the failed step.
func TestAFailedStepIsSticky(t *testing.T) {
	ar2 := batch.Arity{Key: 2}
	for _, c := range []struct {
		name string
		ar   batch.Arity
		mk   func(Input) (*Reduce, error)
		up   func(k int64, tm uint64) upd
	}{
		{"reduce", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Count}, {Fn: Min, Col: 0}}})
		}, func(k int64, tm uint64) upd { return u(k, k, 1, tm, 1) }},
		{"threshold", ar2, func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) },
			func(k int64, tm uint64) upd { return upd{key: []int64{k, 1}, t: tm, d: 1} }},
		{"distinct", ar2, func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) },
			func(k int64, tm uint64) upd { return upd{key: []int64{k, 1}, t: tm, d: 1} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := direct(t, c.ar)
			defer x.close()
			r, err := c.mk(x.in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			x.seal(t, []upd{c.up(1, 0)}, 1)
			bs, f := x.deliver(1 << 30)
			if o, err := r.Step(bs, f); err != nil || !o.Retired {
				t.Fatalf("first step: %+v, %v", o, err)
			}
			lower := r.Lower()
			// The same batch again: before the end of what the reduce saw.
			_, failed := r.Step(bs, f)
			if !errors.Is(failed, ErrOrder) {
				t.Fatalf("a batch delivered twice: %v, want ErrOrder", failed)
			}
			for tm := uint64(1); tm < 4; tm++ {
				x.seal(t, []upd{c.up(int64(tm)+1, tm)}, tm+1)
				bs, f := x.deliver(1 << 30)
				o, err := r.Step(bs, f)
				if err != failed {
					t.Errorf("step to %v after the failure: %v, want the failed step's error %v", f, err, failed)
				}
				if o.Retired || o.Oks != nil || o.Errs != nil {
					t.Errorf("step to %v after the failure emitted %+v, want nothing", f, o)
				}
				if r.Lower() != lower {
					t.Errorf("lower %v after the failure, want %v", r.Lower(), lower)
				}
			}
		})
	}
}

// stepDrained steps r once over everything im has delivered, its batches
// up to the frontier it reached, and returns what the step retired; the
// step must retire.
func stepDrained(t *testing.T, r *Reduce, im *share.Import) collected {
	t.Helper()
	var bs []*batch.Batch
	front := frontier.Min()
	for _, e := range im.Drain(nil) {
		if e.Batch != nil {
			bs = append(bs, e.Batch)
		} else {
			front = e.Frontier
		}
	}
	o, err := r.Step(bs, front)
	if err != nil || !o.Retired {
		t.Fatalf("step to %v: retired %v, %v", front, o.Retired, err)
	}
	var got collected
	got.add(o)
	return got
}

// TestMonotonicFallbackReadsTheWholeHistory: group 1 holds record (1, 0)
// at +2 from time 0; one step then brings record (2, 0) at +2^62 at 1 and
// again at 2, where its count, 2^63, leaves int64. The monotonic plan
// checks that every new record's count fits (countsFit), seeking the
// history's cursors to each record; the first that does not fit sends the
// group to the basic logic, which read the history from where those seeks
// had left the cursors, past record (1, 0): at 1 the group's min read 2
// where it is 1, a wrong row with no error. Every time must match the
// basic plan's answer: at 1 min 1 and max 2, at 2 `numeric overflow`.
func TestMonotonicFallbackReadsTheWholeHistory(t *testing.T) {
	aggs := []Aggregate{{Fn: Min, Col: 0}, {Fn: Max, Col: 0}}
	run := func(p Plan) *collected {
		x := direct(t, ar12)
		t.Cleanup(x.close)
		r, err := New(x.in, Options{Aggregates: aggs, Plan: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Release)
		var got collected
		for _, round := range []struct {
			ups []upd
			to  uint64
		}{
			{[]upd{u(1, 1, 0, 0, 2)}, 1},
			{[]upd{u(1, 2, 0, 1, 1<<62), u(1, 2, 0, 2, 1<<62)}, 3}, // two times, one step
		} {
			x.seal(t, round.ups, round.to)
			bs, f := x.deliver(1 << 30)
			o, err := r.Step(bs, f)
			if err != nil {
				t.Fatal(err)
			}
			got.add(o)
		}
		return &got
	}
	basic, mono := run(Basic), run(Monotonic)
	if got := at(basic.oks, 1, false); got["[1] | [1 2]"] != 1 {
		t.Fatalf("basic at 1: %v, want [1] | [1 2]", got)
	}
	for tm := range uint64(3) {
		checkAt(t, mono, tm, at(basic.oks, tm, false), at(basic.errs, tm, true))
	}
}
