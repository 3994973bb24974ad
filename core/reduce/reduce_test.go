package reduce

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
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
// retracted (SPEC.md: also with an empty group_by).
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
	if got := x.in.Trace.PhysicalCompaction(); got != frontier.At(8) {
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
		if l := r.Lower(); o.Retired && x.in.Trace.PhysicalCompaction() != l {
			t.Fatalf("after retiring through %v the reader holds physically at %v", l, x.in.Trace.PhysicalCompaction())
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
	in := Input{Trace: h, Pres: batch.Identity(), Arity: ar12}
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
	if _, err := r.Step([]*batch.Batch{mk(batch.Arity{Key: 1, Val: 1}, 0, 1)}, frontier.At(1)); !errors.Is(err, ErrArity) {
		t.Errorf("batch of another arity: %v, want ErrArity", err)
	}
	if _, err := r.Step([]*batch.Batch{mk(ar12, 0, 2)}, frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Step([]*batch.Batch{mk(ar12, 1, 3)}, frontier.At(3)); !errors.Is(err, ErrOrder) {
		t.Errorf("batch before the stream's upper: %v, want ErrOrder", err)
	}
	if _, err := r.Step([]*batch.Batch{mk(ar12, 2, 5)}, frontier.At(4)); !errors.Is(err, ErrOrder) {
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
		r, err := New(Input{Trace: h, Pres: batch.Identity(), Arity: ar12}, Options{Aggregates: c.aggs, AppendOnly: c.appendOnly})
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
