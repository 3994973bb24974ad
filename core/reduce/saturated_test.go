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
	for _, c := range saturationCases(0) {
		for _, last := range []int64{-1, -math.MaxInt64} {
			t.Run(fmt.Sprintf("%s/%d", c.name, last), func(t *testing.T) {
				x := startSaturated(t, c, 40, func(i int) upd { return x0(c, 2, 0, int64(i), uint64(i), 1) })
				x.step([]upd{x0(c, 1, 0, 4, 40, last)})
				if e := at(x.got.errs, 40, true); e["numeric overflow"] < 1 {
					t.Fatalf("at 40: rows %v errors %v, want a numeric overflow (the group was recomputed from a saturated count)", at(x.got.oks, 40, false), e)
				}
			})
		}
	}
}

// x0 is the update (key, a, b) at tm with diff d in case c's arity: a
// key and columns 0 and 1, or a record of three key columns.
func x0(c saturationCase, key, a, b int64, tm uint64, d int64) upd {
	if c.ar == (batch.Arity{Key: 3}) {
		return upd{key: []int64{key, a, b}, t: tm, d: d}
	}
	return u(key, a, b, tm, d)
}

// saturatedRun is case c's reduce over a direct input, stepped a round
// at a time (step: seal the round, step the reduce into got, exert the
// input's merges).
type saturatedRun struct {
	t   *testing.T
	x   *input
	r   *Reduce
	got collected
}

func (s *saturatedRun) step(ups []upd) {
	s.x.seal(s.t, ups, s.x.upper+1)
	bs, f := s.x.deliver(1 << 30)
	out, err := s.r.Step(bs, f)
	if err != nil {
		s.t.Fatal(err)
	}
	s.got.add(out)
	for range 4 {
		s.x.w.Exert(1 << 10)
	}
}

// startSaturated runs case c's reduce through record (0, 4) of group 1 at
// +2 at 0 (beside group 2's at +1) and +MaxInt64 at 1, then round(i) for
// every i from 2 below rounds, and checks that a merge of the input
// saturated the record and that the reduce reported its count out of
// int64 at 1 (the two exact batches). Both are released when the test
// ends.
func startSaturated(t *testing.T, c saturationCase, rounds int, round func(i int) upd) *saturatedRun {
	t.Helper()
	x := direct(t, c.ar)
	t.Cleanup(x.close)
	r, err := c.mk(x.in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	s := &saturatedRun{t: t, x: x, r: r}
	s.step([]upd{x0(c, 1, 0, 4, 0, 2), x0(c, 2, 0, 4, 0, 1)})
	s.step([]upd{x0(c, 1, 0, 4, 1, math.MaxInt64)})
	for i := 2; i < rounds; i++ {
		s.step([]upd{round(i)})
	}
	cut, err := x.in.Reader.(*trace.Handle).BatchesThrough(frontier.At(x.upper))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cut, (*batch.Batch).Saturated) {
		t.Fatalf("no merge of the input saturated record (0, 4): %v", cut)
	}
	if e := at(s.got.errs, 1, true); e["numeric overflow"] < 1 {
		t.Fatalf("at 1: errors %v, want a numeric overflow (the record's count is 2 + MaxInt64)", e)
	}
	return s
}

// saturationCase is a reduce the saturation tests run over records of
// arity ar (ar12: key, then columns 0 and 1; a record of three key
// columns for threshold and distinct).
type saturationCase struct {
	name string
	ar   batch.Arity
	mk   func(Input) (*Reduce, error)
}

// saturationCases returns every plan, the auto plan of two aggregates,
// threshold and distinct; the accumulable plan sums column 0, the basic
// one column basicCol.
func saturationCases(basicCol int) []saturationCase {
	rec := batch.Arity{Key: 3}
	plan := func(name string, p Plan, aggs ...Aggregate) saturationCase {
		return saturationCase{name, ar12, func(in Input) (*Reduce, error) { return New(in, Options{Aggregates: aggs, Plan: p}) }}
	}
	return []saturationCase{
		plan("accumulable", Accumulable, Aggregate{Fn: Sum, Col: 0}),
		plan("basic", Basic, Aggregate{Fn: Sum, Col: basicCol}),
		plan("monotonic", Monotonic, Aggregate{Fn: Max, Col: 1}),
		plan("hierarchical", Hierarchical, Aggregate{Fn: Max, Col: 1}),
		plan("auto", Auto, Aggregate{Fn: Max, Col: 1}, Aggregate{Fn: Count}),
		{"threshold", rec, func(in Input) (*Reduce, error) { return NewThreshold(in, Options{}) }},
		{"distinct", rec, func(in Input) (*Reduce, error) { return NewDistinct(in, Options{}) }},
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
	reduceOverASaturatedSnapshot(t, 2, math.MaxInt64)
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
	// The basic plan sums column 1: column 0 is 0 in every update, and a
	// sum that never changes emits nothing to mark.
	for _, c := range saturationCases(1) {
		t.Run(c.name, func(t *testing.T) {
			const rounds = 200
			x := startSaturated(t, c, rounds, func(i int) upd {
				if c.ar == (batch.Arity{Key: 3}) {
					// Threshold's and distinct's group is the record:
					// (2, 0, 4), in the saturated batch, goes and comes
					// back.
					return x0(c, 2, 0, 4, uint64(i), int64(2*(i%2)-1))
				}
				return x0(c, 2, 0, int64(i), uint64(i), 1)
			})
			// Once per way the reduce meets the one overflow: in the exact
			// batches, in a saturated batch it reads, in a merge of a
			// hierarchical layer's trace (the auto plan's max); none more
			// over the last hundred rounds.
			mid, end := at(x.got.errs, rounds/2, true)["numeric overflow"], at(x.got.errs, rounds, true)["numeric overflow"]
			if end != mid || end > 3 {
				t.Fatalf("numeric overflow %d at %d and %d at %d, want at most 3 and none added (one group's count left int64, once)", mid, rounds/2, end, rounds)
			}
		})
	}
}

// TestReduceOverANegativelySaturatedSnapshotIsAnOverflow is
// TestReduceOverASaturatedSnapshotIsAnOverflow below int64: record
// (0, 4) is -2 at 0 and MinInt64 at 1, merged at 1 into one batch that
// holds it saturated at MinInt64. Its exact count is out of int64, so
// every output at 1 holds `numeric overflow` — threshold's too, which
// reads the saturated count as a negative one and drops the record
// silently, emitting nothing from the group: a reduce marks a group it
// reads from a saturated batch at the group's earliest new time, whether
// or not its output changes there.
func TestReduceOverANegativelySaturatedSnapshotIsAnOverflow(t *testing.T) {
	reduceOverASaturatedSnapshot(t, -2, math.MinInt64)
}

// reduceOverASaturatedSnapshot is the body of
// TestReduceOverASaturatedSnapshotIsAnOverflow and
// TestReduceOverANegativelySaturatedSnapshotIsAnOverflow: record
// (0, 4) at d0 at time 0 and d1 at 1, compacted to 1 and merged into one
// saturated batch before each case's reduce imports the index at 1; the
// output at 1 must hold `numeric overflow`.
func reduceOverASaturatedSnapshot(t *testing.T, d0, d1 int64) {
	t.Helper()
	rec := batch.Arity{Key: 3}
	for _, c := range saturationCases(0) {
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
			for tm, d := range []int64{d0, d1} {
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
				t.Fatalf("at 1: rows %v errors %v, want a numeric overflow (the record's count is %d + %d)", at(got.oks, 1, false), e, d0, d1)
			}
		})
	}
}
