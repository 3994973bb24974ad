package dataflow

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// batchSource sends its batches at its first step, then holds nothing: an
// arrangement half's stream (an import's snapshot, say) without the trace.
type batchSource struct {
	out *Stream[*batch.Batch]
	bs  []*batch.Batch
}

func (o *batchSource) Step(frontier.Frontier) frontier.Frontier {
	for _, b := range o.bs {
		o.out.Send(b)
	}
	o.bs = nil
	return frontier.Empty()
}

func (o *batchSource) Shutdown() {}

// sourceHalf adds a batchSource of bs to the dataflow c builds, as an
// arrangement half of arity {1, 1} keyed by column 0, presented by pres.
func sourceHalf(c *Context, pres batch.Presentation, bs ...*batch.Batch) (Arranged, error) {
	ob := c.NewOperator("source")
	op := &batchSource{out: AddOutput[*batch.Batch](ob), bs: bs}
	if err := ob.Build(op); err != nil {
		return Arranged{}, err
	}
	return Arranged{Stream: op.out, Pres: pres, Arity: batch.Arity{Key: 1, Val: 1}, Key: []int{0}}, nil
}

// upd is one update {key, val, time, diff} of a two-column batch.
type upd [4]int64

// mkBatch builds the batch of ups over [lower, upper).
func mkBatch(t *testing.T, lower, upper uint64, ups ...upd) *batch.Batch {
	t.Helper()
	bld := batch.NewBuilder(batch.Arity{Key: 1, Val: 1}, len(ups))
	for _, u := range ups {
		bld.Push1(u[0], u[1], frontier.Time(u[2]), u[3])
	}
	b, err := bld.Build(frontier.At(lower), frontier.At(upper))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// saturatedPair returns two batches, row (1, 10) at MaxInt64 at 0 and one
// more at 1 with row (2, 20) at 1 at 0, and their merge at 1, which holds
// (1, 10) saturated at MaxInt64 (the exact count out of int64).
func saturatedPair(t *testing.T) (a, b, sat *batch.Batch) {
	t.Helper()
	a = mkBatch(t, 0, 1, upd{1, 10, 0, math.MaxInt64}, upd{2, 20, 0, 1})
	b = mkBatch(t, 1, 2, upd{1, 10, 1, 1})
	sat, err := batch.Merge(a, b, frontier.At(1))
	if !errors.Is(err, batch.ErrOverflow) || !sat.Saturated() {
		t.Fatalf("merge: err %v, saturated %v; want ErrOverflow and a saturated batch", err, sat.Saturated())
	}
	return a, b, sat
}

// TestATallyOfASaturatedBatchSaysSo: a tally reads a batch a merge
// saturated (an import's snapshot after compaction brought a count's
// times together): the count there is clamped to MaxInt64 where the
// exact one is MaxInt64 + 1, so the sum is not the checksum of what was
// sent (MaxInt64 + 2, wrapped) but one short of it. Counts says so
// (saturated), where it returned the sum as the checksum with nothing to
// tell it apart; a tally of the same updates in the batches as sent
// says nothing, and neither does one whose presentation shows no update
// of the saturated batch (its sum holds none of it).
func TestATallyOfASaturatedBatchSaysSo(t *testing.T) {
	a, b, sat := saturatedPair(t)
	env := testEnv(t, 0, 1, NewHub(1))
	read, sent, hidden := NewTally(1), NewTally(1), NewTally(1)
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		for _, x := range []struct {
			tl   *Tally
			pres batch.Presentation
			bs   []*batch.Batch
		}{
			{read, batch.Identity(), []*batch.Batch{sat}},
			{sent, batch.Identity(), []*batch.Batch{a, b}},
			{hidden, batch.Presentation{Since: frontier.Min(), Until: frontier.At(1)}, []*batch.Batch{a, sat}},
		} {
			h, err := sourceHalf(c, x.pres, x.bs...)
			if err != nil {
				return err
			}
			c.Tally(x.tl, h)
		}
		return nil
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	df.Step()
	var checksum int64 = math.MaxInt64
	checksum += 2 // wraps, as the tally's sum does
	if k, u, s, saturated := sent.Counts(); k != 3 || u != 3 || s != checksum || saturated {
		t.Errorf("the batches as sent: keys %d updates %d sum %d saturated %v; want 3, 3, %d, false", k, u, s, saturated, checksum)
	}
	if k, u, s, saturated := read.Counts(); k != 2 || u != 2 || s != checksum-1 || !saturated {
		t.Errorf("the saturated batch: keys %d updates %d sum %d saturated %v; want 2, 2, %d (the clamped count), saturated", k, u, s, saturated, checksum-1)
	}
	if _, u, _, saturated := hidden.Counts(); u != 2 || saturated {
		t.Errorf("the saturated batch past until: updates %d saturated %v; want 2 (a's), not saturated", u, saturated)
	}
}

// captureBatches returns a capture of an arrangement half whose stream
// sends bs (Context.Capture, as of an imported index).
func captureBatches(t *testing.T, bs ...*batch.Batch) *Capture {
	t.Helper()
	env := testEnv(t, 0, 1, NewHub(1))
	cp := NewCapture(1)
	df, err := Build(env, Desc{ID: "c", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		h, err := sourceHalf(c, batch.Identity(), bs...)
		if err != nil {
			return err
		}
		c.Capture(cp, h)
		return nil
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	df.Step()
	df.Drop()
	if !cp.Passed(math.MaxUint64) {
		t.Fatalf("capture at %v after its stream ended", cp.Frontier())
	}
	return cp
}

// TestFirstDifferenceStopsAtASaturatedCount: a capture that read a batch
// a merge saturated holds, from the earliest time it read from it on, a
// count that stands for one out of int64 (here (1, 10) at MaxInt64 where
// the exact count is MaxInt64 + 1): FirstDifference compared it as
// exact, and so called it equal to a capture whose exact count is
// MaxInt64, and two captures of saturated batches equal. The comparison
// now stops there: it returns that time (lo, for one before lo) with no
// row and says which capture read a saturated batch by then, unless a
// row differs before it, or it comes after hi.
func TestFirstDifferenceStopsAtASaturatedCount(t *testing.T) {
	_, _, sat := saturatedPair(t)
	early := mkBatch(t, 0, 1, upd{3, 30, 0, 1})
	// The saturated batch's rows and counts, at 1, in a batch no merge
	// made: (1, 10) at MaxInt64 exactly.
	same := mkBatch(t, 1, 2, upd{1, 10, 1, math.MaxInt64}, upd{2, 20, 1, 1})
	if b := mkBatch(t, 1, 2); b.Saturated() {
		t.Fatal("a built batch is saturated")
	}
	c := captureBatches(t, early, sat)
	exact := captureBatches(t, early, same)
	both := captureBatches(t, early, sat)
	other := captureBatches(t, mkBatch(t, 0, 1, upd{3, 30, 0, 2}), same)
	type want struct {
		t            uint64
		row          []int64
		cn, on       int64
		cOver, oOver bool
		differs      bool
	}
	for _, tc := range []struct {
		name   string
		o      *Capture
		lo, hi uint64
		w      want
	}{
		{"one saturated, the same counts", exact, 0, 3, want{t: 1, cOver: true, differs: true}},
		{"both saturated", both, 0, 3, want{t: 1, cOver: true, oOver: true, differs: true}},
		{"saturated before lo", exact, 2, 3, want{t: 2, cOver: true, differs: true}},
		{"saturated after hi", exact, 0, 0, want{}},
		{"a row differs first", other, 0, 3, want{t: 0, row: []int64{3, 30}, cn: 1, on: 2, differs: true}},
	} {
		ct, row, cn, on, cOver, oOver, differs := c.FirstDifference(tc.o, tc.lo, tc.hi)
		got := want{ct, row, cn, on, cOver, oOver, differs}
		if !slices.Equal(got.row, tc.w.row) || got.t != tc.w.t || got.cn != tc.w.cn || got.on != tc.w.on || got.cOver != tc.w.cOver || got.oOver != tc.w.oOver || got.differs != tc.w.differs {
			t.Errorf("%s: FirstDifference(lo %d, hi %d) = %+v, want %+v", tc.name, tc.lo, tc.hi, got, tc.w)
		}
	}
	// The other way round, the flags swap.
	if ct, row, _, _, cOver, oOver, differs := exact.FirstDifference(c, 0, 3); ct != 1 || row != nil || cOver || !oOver || !differs {
		t.Errorf("exact against saturated: time %d row %v cOver %v oOver %v differs %v; want 1, nil, false, true, true", ct, row, cOver, oOver, differs)
	}
	if _, _, _, _, _, _, differs := exact.FirstDifference(captureBatches(t, early, same), 0, 3); differs {
		t.Error("two captures of the same exact counts differ")
	}
}

// TestCaptureTimesHoldTheSaturatedTime: a capture whose saturated batch's
// counts cancel with a later batch's at the same time holds no row
// change there, but Accumulate starts counting that batch's overflow
// there: Times has that time, which it left out.
func TestCaptureTimesHoldTheSaturatedTime(t *testing.T) {
	_, _, sat := saturatedPair(t)
	undo := mkBatch(t, 1, 2, upd{1, 10, 1, math.MinInt64 + 1}, upd{2, 20, 1, -1})
	cp := captureBatches(t, mkBatch(t, 0, 1, upd{3, 30, 0, 1}), sat, undo)
	if _, over := cp.Accumulate(0); over != 0 {
		t.Fatalf("Accumulate(0) counts %d overflows, want 0", over)
	}
	if rows, over := cp.Accumulate(1); over != 1 || formatRows(rows) != "[3 30]:1" {
		t.Fatalf("Accumulate(1) = %s, %d overflows; want [3 30]:1 and the saturated batch's", formatRows(rows), over)
	}
	if got, want := cp.Times(), []frontier.Time{0, 1}; !slices.Equal(got, want) {
		t.Errorf("Times() = %v, want %v (1: where Accumulate's overflow count changes)", got, want)
	}
}
