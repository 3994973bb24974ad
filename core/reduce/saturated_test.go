package reduce

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// TestReduceOfACountAMergeSaturatedIsAnOverflow: record (0, 4) of group 1
// is +2 at time 0 and +MaxInt64 at time 1, exact in each batch, so the
// reduce finds its count out of int64 at 1 and says so. Group 2's updates
// at every later time keep the input trace compacting behind the reduce's
// hold and merging, until a merge brings 0 and 1 together and saturates
// the record at MaxInt64 (batch.Batch.Saturated). At 40 the record
// changes again and the reduce recomputes its group from that saturated
// count: by -1 the exact count, 2^63, is still out of int64 and the
// output must hold `numeric overflow` (docs/spec.md "Expressions"); by
// -MaxInt64 the exact count is 2, while the saturated one is 0, so
// without the error the group would lose its row with nothing to show
// for it. The input's own marker goes to its frontier, not to 40, so the
// reduce adds the error itself where it read a saturated batch
// (docs/semantics.md §1.1).
func TestReduceOfACountAMergeSaturatedIsAnOverflow(t *testing.T) {
	type op struct {
		name string
		mk   func(Input) (*Reduce, error)
		ar   batch.Arity
	}
	plan := func(p Plan, aggs ...Aggregate) op {
		return op{p.String(), func(in Input) (*Reduce, error) { return New(in, Options{Aggregates: aggs, Plan: p}) }, ar12}
	}
	rec := batch.Arity{Key: 3}
	ops := []op{
		plan(Accumulable, Aggregate{Fn: Sum, Col: 0}),
		plan(Basic, Aggregate{Fn: Sum, Col: 0}),
		plan(Monotonic, Aggregate{Fn: Max, Col: 1}),
		plan(Hierarchical, Aggregate{Fn: Max, Col: 1}),
		plan(Auto, Aggregate{Fn: Max, Col: 1}, Aggregate{Fn: Count}),
		{"threshold", func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) }, rec},
		{"distinct", func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) }, rec},
	}
	for _, o := range ops {
		for _, last := range []int64{-1, -math.MaxInt64} {
			t.Run(fmt.Sprintf("%s/%d", o.name, last), func(t *testing.T) {
				x := direct(t, o.ar)
				defer x.close()
				r, err := o.mk(x.in)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Release()
				mk := func(key, a, b int64, tm uint64, d int64) upd {
					if o.ar == rec {
						return upd{key: []int64{key, a, b}, t: tm, d: d}
					}
					return u(key, a, b, tm, d)
				}
				rounds := [][]upd{
					{mk(1, 0, 4, 0, 2), mk(2, 0, 4, 0, 1)},
					{mk(1, 0, 4, 1, math.MaxInt64)},
				}
				for i := 2; i < 40; i++ {
					rounds = append(rounds, []upd{mk(2, 0, int64(i), uint64(i), 1)})
				}
				var got collected
				step := func(ups []upd) {
					x.seal(t, ups, x.upper+1)
					bs, f := x.deliver(1 << 30)
					out, err := r.Step(bs, f)
					if err != nil {
						t.Fatal(err)
					}
					got.add(out)
					for range 4 {
						x.w.Exert(1 << 10)
					}
				}
				for _, ups := range rounds {
					step(ups)
				}
				cut, err := x.in.Reader.(*trace.Handle).BatchesThrough(frontier.At(x.upper))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(cut, (*batch.Batch).Saturated) {
					t.Fatalf("no merge of the input saturated record (0, 4): %v", cut)
				}
				if e := at(got.errs, 1, true); e["numeric overflow"] < 1 {
					t.Fatalf("at 1: errors %v, want a numeric overflow (the record's count is 2 + MaxInt64)", e)
				}
				step([]upd{mk(1, 0, 4, 40, last)})
				if e := at(got.errs, 40, true); e["numeric overflow"] < 1 {
					t.Fatalf("at 40: rows %v errors %v, want a numeric overflow (the group was recomputed from a saturated count)", at(got.oks, 40, false), e)
				}
			})
		}
	}
}

// TestReduceOverASaturatedSnapshotIsAnOverflow: the publisher has
// compacted record (0, 4)'s +2 at 0 and +MaxInt64 at 1 to time 1 and
// merged them, saturating the record at MaxInt64, before a reduce imports
// the index at 1. Its first step reads that batch as new updates; the
// record's exact count is out of int64, so the output at 1 holds
// `numeric overflow` (docs/spec.md "Expressions"), which the index's own
// marker, at its frontier when it merged, need not be at.
func TestReduceOverASaturatedSnapshotIsAnOverflow(t *testing.T) {
	rec := batch.Arity{Key: 3}
	for _, c := range []struct {
		name string
		ar   batch.Arity
		mk   func(Input) (*Reduce, error)
	}{
		{"accumulable", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Sum, Col: 0}}, Plan: Accumulable})
		}},
		{"basic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Sum, Col: 0}}, Plan: Basic})
		}},
		{"monotonic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Monotonic})
		}},
		{"hierarchical", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Hierarchical})
		}},
		{"threshold", rec, func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) }},
		{"distinct", rec, func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			mk := func(tm uint64, d int64) upd {
				if c.ar == rec {
					return upd{key: []int64{1, 0, 4}, t: tm, d: d}
				}
				return u(1, 0, 4, tm, d)
			}
			h, w, sp := share.NewTrace(c.ar, spine.Options{})
			defer h.Release()
			defer w.Close()
			for tm, d := range []int64{2, math.MaxInt64} {
				b := batch.NewBuilder(c.ar, 1)
				x := mk(uint64(tm), d)
				b.Push(x.key, x.val, x.t, x.d)
				out, err := b.Build(frontier.At(uint64(tm)), frontier.At(uint64(tm)+1))
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Insert(out); err != nil {
					t.Fatal(err)
				}
			}
			h.SetLogicalCompaction(frontier.At(1))
			h.SetPhysicalCompaction(frontier.At(2))
			for range 64 {
				w.Exert(1 << 16)
			}
			if ch := sp.LocalPoint().Chain(); len(ch) != 1 || !ch[0].Saturated() {
				t.Fatalf("the chain %v is not one saturated batch", ch)
			}
			im, err := sp.LocalPoint().Import(frontier.At(1), frontier.Empty())
			if err != nil {
				t.Fatal(err)
			}
			defer im.Close()
			r, err := c.mk(Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: c.ar})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			got := stepDrained(t, r, im)
			if e := at(got.errs, 1, true); e["numeric overflow"] < 1 {
				t.Fatalf("at 1: rows %v errors %v, want a numeric overflow (the record's count is 2 + MaxInt64)", at(got.oks, 1, false), e)
			}
		})
	}
}

// TestASaturatedBatchMarksAReduceOnce: after a merge has saturated record
// (0, 4) of group 1 (as in TestReduceOfACountAMergeSaturatedIsAnOverflow),
// group 2 changes at every time for 200 rounds and group 1 never again
// (threshold's and distinct's group, the record (2, 0, 4), goes and comes
// back). Every step reads group 2 from the saturated batch, and a marker
// a step grew the output's numeric overflow with the rounds (to about one
// a round), where one group's count left int64 once; the hierarchical
// plan, whose layers read only new batches, never did, and its subtest
// holds it to the same bound. The reduce's errors
// now hold the exact one at 1, where the reduce saw the count leave int64
// in the two exact batches, the saturation's marker once, and, where a
// hierarchical layer merges the record, that merge's: no more however
// many rounds follow (docs/semantics.md §6.3: bad data cannot grow the
// error count).
func TestASaturatedBatchMarksAReduceOnce(t *testing.T) {
	rec := batch.Arity{Key: 3}
	for _, c := range []struct {
		name string
		ar   batch.Arity
		mk   func(Input) (*Reduce, error)
	}{
		{"accumulable", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Sum, Col: 0}}, Plan: Accumulable})
		}},
		{"basic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Sum, Col: 1}}, Plan: Basic})
		}},
		{"monotonic", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Monotonic})
		}},
		{"hierarchical", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}}, Plan: Hierarchical})
		}},
		{"auto", ar12, func(in Input) (*Reduce, error) {
			return New(in, Options{Aggregates: []Aggregate{{Fn: Max, Col: 1}, {Fn: Count}}})
		}},
		{"threshold", rec, func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) }},
		{"distinct", rec, func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := direct(t, c.ar)
			defer x.close()
			r, err := c.mk(x.in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			mk := func(key, a, b int64, tm uint64, d int64) upd {
				if c.ar == rec {
					return upd{key: []int64{key, a, b}, t: tm, d: d}
				}
				return u(key, a, b, tm, d)
			}
			var got collected
			step := func(ups []upd) {
				x.seal(t, ups, x.upper+1)
				bs, f := x.deliver(1 << 30)
				out, err := r.Step(bs, f)
				if err != nil {
					t.Fatal(err)
				}
				got.add(out)
				for range 4 {
					x.w.Exert(1 << 10)
				}
			}
			step([]upd{mk(1, 0, 4, 0, 2), mk(2, 0, 4, 0, 1)})
			step([]upd{mk(1, 0, 4, 1, math.MaxInt64)})
			const rounds = 200
			for i := 2; i < rounds; i++ {
				if c.ar == rec {
					// Threshold's and distinct's group is the record:
					// (2, 0, 4), in the saturated batch, goes and comes
					// back.
					step([]upd{mk(2, 0, 4, uint64(i), int64(2*(i%2)-1))})
					continue
				}
				step([]upd{mk(2, 0, int64(i), uint64(i), 1)})
			}
			cut, err := x.in.Reader.(*trace.Handle).BatchesThrough(frontier.At(x.upper))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(cut, (*batch.Batch).Saturated) {
				t.Fatalf("no merge of the input saturated record (0, 4): %v", cut)
			}
			if e := at(got.errs, 1, true); e["numeric overflow"] < 1 {
				t.Fatalf("at 1: errors %v, want a numeric overflow (the record's count is 2 + MaxInt64)", e)
			}
			// Once per way the reduce meets the one overflow: in the exact
			// batches, in a saturated batch it reads, in a merge of a
			// hierarchical layer's trace (the auto plan's max); none more
			// over the last hundred rounds.
			mid, end := at(got.errs, rounds/2, true)["numeric overflow"], at(got.errs, rounds, true)["numeric overflow"]
			if end != mid || end > 3 {
				t.Fatalf("numeric overflow %d at %d and %d at %d, want at most 3 and none added (one group's count left int64, once)", mid, rounds/2, end, rounds)
			}
		})
	}
}
