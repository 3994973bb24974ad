package spine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

var kv = batch.Arity{Key: 1, Val: 1}

// seal builds the batch [lower, upper) from the updates with times in it.
func seal(t testing.TB, ar batch.Arity, ups []batch.Update, lower, upper uint64) *batch.Batch {
	t.Helper()
	bld := batch.NewBuilder(ar, len(ups))
	for _, u := range ups {
		if u.Time >= lower && u.Time < upper {
			bld.Push(u.Key, u.Val, u.Time, u.Diff)
		}
	}
	b, err := bld.Build(frontier.At(lower), frontier.At(upper))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render lists the updates of batches as "key val: (t,d) (t,d)" lines per
// (key, val), in order, like differential-dataflow's cursor to_vec.
func render(bs []*batch.Batch) string {
	type kvk struct{ k, v int64 }
	m := map[kvk][][2]int64{}
	for _, b := range bs {
		for _, u := range b.Updates() {
			k := kvk{u.Key[0], u.Val[0]}
			m[k] = append(m[k], [2]int64{int64(u.Time), u.Diff})
		}
	}
	// Compared, not subtracted: a difference of int64 keys can overflow,
	// and int is 32 bits on some platforms.
	keys := slices.SortedFunc(maps.Keys(m), func(a, b kvk) int {
		return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.v, b.v))
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "(%d, %d) %v\n", k.k, k.v, m[k])
	}
	return sb.String()
}

// TestTraceRS reproduces differential-dataflow's tests/trace.rs: updates
// ((1,2),0,+1), ((2,3),1,+1), ((2,3),2,-1) sealed at 1, 2, 3; a cut at each
// returns exactly the updates before it, and the whole trace equals the cut
// at 3.
func TestTraceRS(t *testing.T) {
	ups := []batch.Update{
		{Key: []int64{1}, Val: []int64{2}, Time: 0, Diff: 1},
		{Key: []int64{2}, Val: []int64{3}, Time: 1, Diff: 1},
		{Key: []int64{2}, Val: []int64{3}, Time: 2, Diff: -1},
	}
	s := New(kv, Options{})
	for i, up := range []uint64{1, 2, 3} {
		if err := s.Insert(seal(t, kv, ups, uint64(i), up)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cut  frontier.Frontier
		want string
	}{
		{frontier.At(1), "(1, 2) [[0 1]]\n"},
		{frontier.At(2), "(1, 2) [[0 1]]\n(2, 3) [[1 1]]\n"},
		{frontier.At(3), "(1, 2) [[0 1]]\n(2, 3) [[1 1] [2 -1]]\n"},
		{frontier.Empty(), "(1, 2) [[0 1]]\n(2, 3) [[1 1] [2 -1]]\n"},
		{frontier.Min(), ""},
	} {
		bs, err := s.BatchesThrough(c.cut)
		if err != nil {
			t.Fatalf("cut %v: %v", c.cut, err)
		}
		if got := render(bs); got != c.want {
			t.Errorf("cut %v:\n%s\nwant\n%s", c.cut, got, c.want)
		}
	}
}

func TestInsertContiguity(t *testing.T) {
	s := New(kv, Options{})
	if err := s.Insert(batch.Empty(kv, frontier.At(1), frontier.At(2))); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("gap: err = %v", err)
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(0), frontier.At(0))); !errors.Is(err, ErrEmptyInterval) {
		t.Fatalf("empty interval: err = %v", err)
	}
	if err := s.Insert(batch.Empty(batch.Arity{Key: 2}, frontier.At(0), frontier.At(1))); !errors.Is(err, ErrArity) {
		t.Fatalf("arity: err = %v", err)
	}
	if err := s.Insert(nil); !errors.Is(err, ErrNilBatch) {
		t.Fatalf("nil batch: err = %v", err)
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(0), frontier.At(2))); err != nil {
		t.Fatal(err)
	}
	if s.Upper() != frontier.At(2) {
		t.Fatalf("upper %v", s.Upper())
	}
	if err := s.Close(); err != nil || !s.Upper().IsEmpty() {
		t.Fatalf("close: %v, upper %v", err, s.Upper())
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(2), frontier.At(3))); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: err = %v", err)
	}
}

// TestInsertRefusesABackwardInterval inserts batches whose upper is before
// their lower (what Writer.Seal makes of an upper before the trace's): the
// spine refuses them and its upper stays where it was (S1), so the chain's
// coverage never moves back.
func TestInsertRefusesABackwardInterval(t *testing.T) {
	s := New(kv, Options{})
	if err := s.Insert(seal(t, kv, []batch.Update{{Key: []int64{1}, Val: []int64{1}, Time: 2, Diff: 1}}, 0, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(5), frontier.At(3))); !errors.Is(err, ErrEmptyInterval) {
		t.Fatalf("empty [5, 3): err = %v", err)
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(5), frontier.At(0))); !errors.Is(err, ErrEmptyInterval) {
		t.Fatalf("empty [5, 0): err = %v", err)
	}
	if s.Upper() != frontier.At(5) {
		t.Fatalf("upper moved to %v", s.Upper())
	}
	if err := s.Insert(batch.Empty(kv, frontier.At(5), frontier.At(6))); err != nil {
		t.Fatalf("the next contiguous batch: %v", err)
	}
}

func TestCutErrors(t *testing.T) {
	ups := []batch.Update{
		{Key: []int64{1}, Val: []int64{1}, Time: 0, Diff: 1},
		{Key: []int64{1}, Val: []int64{1}, Time: 4, Diff: 1},
	}
	s := New(kv, Options{})
	if err := s.Insert(seal(t, kv, ups, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(seal(t, kv, ups, 2, 6)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BatchesThrough(frontier.At(3)); !errors.Is(err, ErrStraddle) {
		t.Fatalf("straddle: err = %v", err)
	}
	if _, err := s.BatchesThrough(frontier.At(7)); !errors.Is(err, ErrBeyondUpper) {
		t.Fatalf("beyond upper: err = %v", err)
	}
	// Cutting at a batch's lower never straddles it.
	if bs, err := s.BatchesThrough(frontier.At(2)); err != nil || len(bs) != 1 {
		t.Fatalf("cut at boundary: %v %v", bs, err)
	}
	s.SetPhysicalCompaction(frontier.At(6))
	if _, err := s.BatchesThrough(frontier.At(2)); !errors.Is(err, ErrBehindCut) {
		t.Fatalf("behind physical: err = %v", err)
	}
	// An empty batch that a cut splits is no straddle: it holds nothing.
	e := New(kv, Options{})
	if err := e.Insert(batch.Empty(kv, frontier.At(0), frontier.At(10))); err != nil {
		t.Fatal(err)
	}
	if _, err := e.BatchesThrough(frontier.At(5)); err != nil {
		t.Fatalf("empty straddle: %v", err)
	}
}

// TestPhysicalHoldKeepsBoundaries is invariant 5 of §8: while the physical
// frontier is at F, cutting at F succeeds however much work is done.
func TestPhysicalHoldKeepsBoundaries(t *testing.T) {
	var ups []batch.Update
	for i := range 64 {
		ups = append(ups, batch.Update{Key: []int64{int64(i % 7)}, Val: []int64{int64(i)}, Time: uint64(i), Diff: 1})
	}
	s := New(kv, Options{})
	for i := range 64 {
		if err := s.Insert(seal(t, kv, ups, uint64(i), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			s.SetPhysicalCompaction(frontier.At(21))
		}
	}
	for s.Exert(1 << 10) {
	}
	bs, err := s.BatchesThrough(frontier.At(21))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range bs {
		n += b.Len()
	}
	if n != 21 {
		t.Fatalf("cut at 21 holds %d updates, want 21", n)
	}
	// Pending batches past the physical frontier were never merged.
	if st := s.Stats(); st.Pending != 43 {
		t.Fatalf("pending %d, want 43\n%v", st.Pending, s)
	}
}

// TestFuelBound is invariant 6 of §8: with the physical frontier following
// the upper, the number of batches stays logarithmic in the updates, and
// exerting to quiescence leaves one batch.
func TestFuelBound(t *testing.T) {
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, 16)
	const rounds = 4096
	maxBatches := 0
	for i := range rounds {
		for j := range 16 {
			bld.Push1(int64(i*16+j), 0, uint64(i), 1)
		}
		b, err := bld.Build(frontier.At(uint64(i)), frontier.At(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		s.SetPhysicalCompaction(s.Upper())
		maxBatches = max(maxBatches, s.Stats().Batches)
	}
	// 64Ki updates in arrivals of 16: ceil(log_F(4096)) levels above the
	// arrivals' and theirs; allow about F batches a level. In a steady
	// stream like this one a level holds fewer than F waiting and a
	// merge's inputs until it ends; in general a roll-up can move F-1
	// batches from each lower level into one at once, which the state
	// machine's bound allows (spine_machine_test.go).
	levels := 1
	for n := 1; n < rounds; n *= DefaultFanout {
		levels++
	}
	if maxBatches > DefaultFanout*levels {
		t.Fatalf("max batches %d over 4096 arrivals, want at most %d", maxBatches, DefaultFanout*levels)
	}
	calls := 0
	for s.Exert(1 << 12) {
		calls++
		if calls > 10000 {
			t.Fatalf("exert does not converge:\n%v", s)
		}
	}
	st := s.Stats()
	if st.Batches != 1 || st.Updates != rounds*16 {
		t.Fatalf("after quiescence: %+v\n%v", st, s)
	}
	if st.MergeWork == 0 || st.Merges == 0 {
		t.Fatalf("no merge work recorded: %+v", st)
	}
}

// TestLogicalCompactionThroughMerges checks that merges apply the logical
// frontier: cancelling histories vanish.
func TestLogicalCompactionThroughMerges(t *testing.T) {
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, 2)
	for i := range 100 {
		d := int64(1)
		if i%2 == 1 {
			d = -1
		}
		bld.Push1(7, 7, uint64(i), d)
		b, _ := bld.Build(frontier.At(uint64(i)), frontier.At(uint64(i+1)))
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	s.SetLogicalCompaction(frontier.At(100))
	s.SetLogicalCompaction(frontier.At(50)) // ignored: never backwards
	if s.LogicalCompaction() != frontier.At(100) {
		t.Fatalf("logical %v", s.LogicalCompaction())
	}
	s.SetPhysicalCompaction(frontier.At(100))
	for s.Exert(1 << 10) {
	}
	if st := s.Stats(); st.Updates != 0 {
		t.Fatalf("updates after compaction %d, want 0\n%v", st.Updates, s)
	}
}

// TestWorkOnlyFinishesMergesInProgress: Work spends fuel on merges already
// started and never introduces virtual records, so an idle spine with no
// merge in progress is left alone (what maintenance relies on).
func TestWorkOnlyFinishesMergesInProgress(t *testing.T) {
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, 1024)
	// Two equal large batches: the second starts a merge at their level,
	// which arrival fuel has not yet touched.
	for i := range uint64(2) {
		for j := range 1024 {
			bld.Push1(int64(j), int64(i), i, 1)
		}
		b, _ := bld.Build(frontier.At(i), frontier.At(i+1))
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		s.SetPhysicalCompaction(s.Upper())
	}
	if !s.Merging() {
		t.Fatalf("expected a merge in progress after two equal arrivals:\n%v", s)
	}
	for s.Work(16) {
	}
	if s.Merging() {
		t.Fatal("Work returned false with a merge in progress")
	}
	// A small arrival leaves two singles at different levels and no merge:
	// Exert would merge them, Work must not.
	bld.Push1(0, 9, 2, 1)
	b, _ := bld.Build(frontier.At(2), frontier.At(3))
	if err := s.Insert(b); err != nil {
		t.Fatal(err)
	}
	s.SetPhysicalCompaction(s.Upper())
	if s.Merging() || s.Stats().Batches != 2 {
		t.Fatalf("setup: want two singles and no merge:\n%v", s)
	}
	before := s.Stats()
	if s.Work(1 << 20) {
		t.Fatal("Work reported work with nothing merging")
	}
	if after := s.Stats(); after.Merges != before.Merges || after.MergeWork != before.MergeWork {
		t.Fatalf("Work started merges on an idle spine: %+v -> %+v", before, after)
	}
}

// TestExertAndWorkWithoutEffortStillProgress calls Exert and Work with an
// effort of zero or below: each counts as one record's worth of fuel, so a
// loop of repeated calls reduces the spine to one batch and ends, as with
// any positive effort, instead of starting a merge no call ever advances.
func TestExertAndWorkWithoutEffortStillProgress(t *testing.T) {
	for _, effort := range []int64{0, -1, math.MinInt64} {
		s := New(kv, Options{})
		var ups []batch.Update
		for i := range uint64(40) {
			u := batch.Update{Key: []int64{int64(i)}, Val: []int64{1}, Time: i, Diff: 1}
			ups = append(ups, u)
			if err := s.Insert(seal(t, kv, ups[i:], i, i+1)); err != nil {
				t.Fatal(err)
			}
		}
		s.SetPhysicalCompaction(s.Upper())
		// Enough calls for one update of fuel each to merge every update
		// into one batch once per level, and many more.
		const bound = 10_000
		calls := 0
		for ; calls < bound && s.Exert(effort); calls++ {
		}
		if calls == bound || s.Merging() || s.Stats().Batches != 1 {
			t.Fatalf("effort %d: %d calls to Exert left\n%v", effort, calls, s)
		}
		if got, want := render(s.Batches()), render([]*batch.Batch{seal(t, kv, ups, 0, 40)}); got != want {
			t.Fatalf("effort %d: merged\n%swant\n%s", effort, got, want)
		}

		// Work with no effort finishes a merge in progress too.
		for i := uint64(40); i < 80; i++ {
			u := batch.Update{Key: []int64{int64(i)}, Val: []int64{1}, Time: i, Diff: 1}
			if err := s.Insert(seal(t, kv, []batch.Update{u}, i, i+1)); err != nil {
				t.Fatal(err)
			}
		}
		s.SetPhysicalCompaction(s.Upper())
		s.Exert(effort) // starts a merge if arrivals did not
		calls = 0
		for ; calls < bound && s.Work(effort); calls++ {
		}
		if calls == bound || s.Merging() {
			t.Fatalf("effort %d: %d calls to Work left a merge in progress\n%v", effort, calls, s)
		}
	}
}

// TestVersionTracksChainChanges: the version moves on every insert and every
// finished merge, and only then, so a mirror of the chain can be skipped
// while it is unchanged.
func TestVersionTracksChainChanges(t *testing.T) {
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, 1024)
	seen := map[uint64]string{}
	check := func(what string) {
		t.Helper()
		chain := fmt.Sprint(s.Batches())
		if prev, ok := seen[s.Version()]; ok && prev != chain {
			t.Fatalf("%s: version %d unchanged but chain changed", what, s.Version())
		}
		seen[s.Version()] = chain
	}
	for i := range uint64(40) {
		for j := range 1 + int(i%5)*200 {
			bld.Push1(int64(j), int64(i), i, 1)
		}
		b, _ := bld.Build(frontier.At(i), frontier.At(i+1))
		v := s.Version()
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		if s.Version() == v {
			t.Fatal("insert left the version unchanged")
		}
		check("insert")
		s.SetPhysicalCompaction(s.Upper())
		check("physical compaction")
		s.Work(64)
		check("work")
	}
	for s.Exert(1 << 20) {
		check("exert")
	}
	check("quiescent")
	v := s.Version()
	s.Exert(1 << 20)
	if s.Version() != v {
		t.Fatal("an exert with nothing to do moved the version")
	}
}

// TestMergeOverflowKeepsOtherUpdates: a diff that overflows when a merge
// consolidates it (MaxInt64 and +1 at times compacted to one) is reported by
// Err, and every other update of both merged batches stays in the chain;
// the spine keeps accepting inserts.
func TestMergeOverflowKeepsOtherUpdates(t *testing.T) {
	s := New(kv, Options{})
	s.SetLogicalCompaction(frontier.At(2))
	s.SetPhysicalCompaction(frontier.Empty())
	ups := []batch.Update{
		{Key: []int64{1}, Val: []int64{1}, Time: 0, Diff: math.MaxInt64},
		{Key: []int64{2}, Val: []int64{2}, Time: 0, Diff: 1},
		{Key: []int64{1}, Val: []int64{1}, Time: 1, Diff: 1},
		{Key: []int64{3}, Val: []int64{3}, Time: 1, Diff: 1},
	}
	for i := range uint64(2) {
		if err := s.Insert(seal(t, kv, ups, i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for s.Exert(1 << 10) {
	}
	if !errors.Is(s.Err(), batch.ErrOverflow) {
		t.Fatalf("Err() = %v, want ErrOverflow", s.Err())
	}
	if n := s.Overflows(); n != 1 {
		t.Fatalf("Overflows() = %d after one overflowing merge, want 1", n)
	}
	got := render(s.Batches())
	for _, want := range []string{"(2, 2) [[2 1]]", "(3, 3) [[2 1]]"} {
		if !strings.Contains(got, want) {
			t.Fatalf("after the overflowing merge the chain lost %s:\n%s", want, got)
		}
	}
	if err := s.Insert(seal(t, kv, nil, 2, 3)); err != nil {
		t.Fatalf("insert after an overflow: %v", err)
	}
}

// TestEmptyBatchesMoveTheUpperOnly: a batch without updates moves the
// spine's upper and, with no merge in progress, nothing else — no batch
// joins the chain, its version stays, no merge starts — so an errors trace with no errors holds no
// batch however many rounds it takes; the next batch with updates goes in
// after one empty batch over the rounds without, so the chain stays
// contiguous and holds every update; cuts anywhere up to the upper hold
// what they should; a Close moves the upper to {} and leaves the chain.
func TestEmptyBatchesMoveTheUpperOnly(t *testing.T) {
	empty := func(lo, hi uint64) *batch.Batch { return batch.Empty(kv, frontier.At(lo), frontier.At(hi)) }
	contiguous := func(s *Spine, end uint64) {
		t.Helper()
		lo := frontier.At(0)
		for _, b := range s.Batches() {
			if b.Lower() != lo {
				t.Fatalf("chain %v is not contiguous at %v", s.Batches(), lo)
			}
			lo = b.Upper()
		}
		if lo != frontier.At(end) {
			t.Fatalf("chain %v ends at %v, want {%d}", s.Batches(), lo, end)
		}
	}
	errs := New(kv, Options{})
	for i := range uint64(100) {
		if err := errs.Insert(empty(i, i+1)); err != nil {
			t.Fatal(err)
		}
		errs.SetPhysicalCompaction(errs.Upper())
		errs.SetLogicalCompaction(errs.Upper())
		if st := errs.Stats(); st.Batches != 0 || st.Merges != 0 || errs.Version() != 0 || errs.Upper() != frontier.At(i+1) {
			t.Fatalf("%d empty rounds: %d batches after %d merges, version %d, upper %v; want none, none, 0, {%d}", i+1, st.Batches, st.Merges, errs.Version(), errs.Upper(), i+1)
		}
	}
	if bs, err := errs.BatchesThrough(frontier.At(100)); err != nil || len(bs) != 0 {
		t.Fatalf("cut at {100} of a trace without updates: %v, %v", bs, err)
	}
	// An empty batch that is not contiguous is still refused.
	if err := errs.Insert(empty(101, 102)); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("a gap before an empty batch: err %v, want ErrNotContiguous", err)
	}

	var ups []batch.Update
	for k := range int64(300) {
		ups = append(ups, batch.Update{Key: []int64{k}, Val: []int64{1}, Time: 0, Diff: 1})
	}
	s := New(kv, Options{})
	if err := s.Insert(seal(t, kv, ups, 0, 1)); err != nil {
		t.Fatal(err)
	}
	s.SetPhysicalCompaction(s.Upper())
	merges, v := s.Stats().Merges, s.Version()
	chain := s.Batches()
	for i := uint64(1); i < 41; i++ {
		if err := s.Insert(empty(i, i+1)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			s.SetPhysicalCompaction(s.Upper())
			s.SetLogicalCompaction(frontier.At(i / 2))
		}
	}
	if !slices.Equal(s.Batches(), chain) || s.Version() != v || s.Stats().Merges != merges || s.Upper() != frontier.At(41) {
		t.Fatalf("data then 40 empty rounds: chain %v, version %d, %d merges, upper %v; want %v, %d, %d, {41}", s.Batches(), s.Version(), s.Stats().Merges, s.Upper(), chain, v, merges)
	}
	contiguous(s, 1)
	if !strings.Contains(s.String(), "upper {41}") || !strings.Contains(s.String(), "(chain ends at {1})") {
		t.Fatalf("the spine's listing does not say where its chain ends:\n%v", s)
	}
	// The next batch with updates goes in after an empty batch over [1, 41).
	x := batch.Update{Key: []int64{7}, Val: []int64{2}, Time: 41, Diff: 1}
	if err := s.Insert(seal(t, kv, []batch.Update{x}, 41, 42)); err != nil {
		t.Fatal(err)
	}
	s.SetPhysicalCompaction(s.Upper())
	contiguous(s, 42)
	bs := s.Batches()
	if s.Version() != v+2 || len(bs) < 2 || !bs[len(bs)-2].IsEmpty() || bs[len(bs)-2].Lower() != frontier.At(1) || bs[len(bs)-1].Len() != 1 {
		t.Fatalf("one update after 40 empty rounds: chain %v at version %d, want an empty batch from {1} then the update, at version %d", bs, s.Version(), v+2)
	}
	if got, want := render(bs), render([]*batch.Batch{seal(t, kv, append(ups, x), 0, 42)}); got != want {
		t.Fatalf("chain holds\n%s\nwant\n%s", got, want)
	}
	// Cuts anywhere from the physical frontier, the empty batch's rounds
	// among them, with that batch and the update still pending.
	held := New(kv, Options{})
	if err := held.Insert(seal(t, kv, ups, 0, 1)); err != nil {
		t.Fatal(err)
	}
	held.SetPhysicalCompaction(frontier.At(1))
	for i := uint64(1); i < 41; i++ {
		if err := held.Insert(empty(i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := held.Insert(seal(t, kv, []batch.Update{x}, 41, 42)); err != nil {
		t.Fatal(err)
	}
	if st := held.Stats(); st.Pending != 2 {
		t.Fatalf("held at {1}: %d batches pending, want 2 (the empty one and the update)", st.Pending)
	}
	for _, cut := range []uint64{1, 20, 41, 42} {
		got, err := held.BatchesThrough(frontier.At(cut))
		if err != nil {
			t.Fatalf("cut at {%d}: %v", cut, err)
		}
		want := ups
		if cut == 42 {
			want = append(slices.Clone(ups), x)
		}
		if render(got) != render([]*batch.Batch{seal(t, kv, want, 0, cut)}) {
			t.Fatalf("cut at {%d} holds\n%s", cut, render(got))
		}
	}
	// Close: the upper goes to {}, the chain stays.
	if err := s.Insert(empty(42, 43)); err != nil {
		t.Fatal(err)
	}
	v, chain = s.Version(), s.Batches()
	if err := s.Close(); err != nil || s.Upper() != frontier.Empty() || s.Version() != v || !slices.Equal(s.Batches(), chain) {
		t.Fatalf("Close: err %v, upper %v, version %d, chain %v; want nil, {}, %d, %v", err, s.Upper(), s.Version(), s.Batches(), v, chain)
	}
	if err := s.Insert(empty(43, 44)); !errors.Is(err, ErrClosed) {
		t.Fatalf("insert after Close: err %v, want ErrClosed", err)
	}
}

// TestEmptyRoundsFuelTheMergesInProgress: a batch without updates takes
// no place in the chain but is an arrival, so a merge in progress takes
// its fuel and finishes over rounds without updates on a spine nothing
// else works (a reduce's output, a join's intermediate: no maintenance
// pass calls Work on them), and the overflow it finds is counted then,
// not at the next batch with updates, which may never come.
func TestEmptyRoundsFuelTheMergesInProgress(t *testing.T) {
	s := New(kv, Options{})
	for r := range uint64(2) {
		u := []batch.Update{{Key: []int64{1}, Val: []int64{1}, Time: r, Diff: math.MaxInt64}}
		if err := s.Insert(seal(t, kv, u, r, r+1)); err != nil {
			t.Fatal(err)
		}
		s.SetLogicalCompaction(frontier.At(r + 1))
		s.SetPhysicalCompaction(frontier.At(r + 1))
	}
	if !s.Merging() {
		t.Fatalf("no merge in progress after two rounds:\n%v", s)
	}
	chain := s.Batches()
	rounds := 0
	for r := uint64(2); s.Merging() && r < 1002; r++ {
		if err := s.Insert(batch.Empty(kv, frontier.At(r), frontier.At(r+1))); err != nil {
			t.Fatal(err)
		}
		s.SetLogicalCompaction(frontier.At(r + 1))
		s.SetPhysicalCompaction(frontier.At(r + 1))
		rounds++
	}
	if s.Merging() || s.Overflows() != 1 {
		t.Fatalf("after %d empty rounds: merging %v, %d overflows; want the merge done and its overflow counted\n%v", rounds, s.Merging(), s.Overflows(), s)
	}
	bs := s.Batches()
	if len(bs) != 1 || len(chain) != 2 || bs[0].Lower() != chain[0].Lower() || bs[0].Upper() != chain[1].Upper() {
		t.Fatalf("after the merge: chain %v, want one batch over the two of %v", bs, chain)
	}
	if got := bs[0].Updates(); len(got) != 1 || got[0].Diff != math.MaxInt64 {
		t.Fatalf("merged batch holds %v, want the one update saturated at MaxInt64", got)
	}
}

// TestPendingKeepsItsArray: admitting pending batches moves the ones that
// stay to the front of the pending array, when at least as many were
// admitted, and keeps the array, so a batch a round admitted at once
// appends into it without allocating; fewer admitted than stay leave the
// slice past them (no copy); an array grown while the physical frontier
// held many back is dropped once all are admitted.
func TestPendingKeepsItsArray(t *testing.T) {
	// one is a batch of one update over [i, i+1): a batch without updates
	// would move the upper alone.
	one := func(i uint64) *batch.Batch {
		return seal(t, kv, []batch.Update{{Key: []int64{int64(i)}, Val: []int64{0}, Time: i, Diff: 1}}, i, i+1)
	}
	s := New(kv, Options{})
	s.SetPhysicalCompaction(frontier.At(0))
	for i := range uint64(3) {
		if err := s.Insert(one(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.pending) != 3 {
		t.Fatalf("setup: %d pending, want 3", len(s.pending))
	}
	base := &s.pending[:1][0]
	third := s.pending[2]
	s.SetPhysicalCompaction(frontier.At(2))
	if len(s.pending) != 1 || s.pending[0] != third || &s.pending[:1][0] != base {
		t.Fatalf("after admitting two of three: pending %v, want the third at the front of the same array", s.pending)
	}
	if rest := s.pending[1:cap(s.pending)]; rest[0] != nil || rest[1] != nil {
		t.Fatalf("the array keeps the admitted batches: %v", rest)
	}
	s.SetPhysicalCompaction(frontier.At(3))
	if len(s.pending) != 0 || cap(s.pending) == 0 {
		t.Fatalf("all admitted: pending %v (cap %d), want empty with its array", s.pending, cap(s.pending))
	}
	if err := s.Insert(one(3)); err != nil {
		t.Fatal(err)
	}
	if &s.pending[:1][0] != base {
		t.Fatal("the next batch went to a new array")
	}
	for i := uint64(4); i < 104; i++ {
		if err := s.Insert(one(i)); err != nil {
			t.Fatal(err)
		}
	}
	before := s.pending
	s.SetPhysicalCompaction(frontier.At(5))
	if len(s.pending) != 99 || s.pending[0].Lower() != frontier.At(5) || &s.pending[0] != &before[2] || before[0] != nil || before[1] != nil {
		t.Fatalf("two of 101 admitted: %d pending from %v, want 99 from {5}, the slice past the admitted (cleared) ones", len(s.pending), s.pending[0].Lower())
	}
	s.SetPhysicalCompaction(frontier.Empty())
	if len(s.pending) != 0 || cap(s.pending) != 0 {
		t.Fatalf("%d batches admitted at once: pending keeps an array of %d", 100, cap(s.pending))
	}
}
