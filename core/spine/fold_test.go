package spine

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// checkChain fails t unless s's chain is contiguous from {0} to its end,
// at or before its upper, and every level's merge in progress is over the
// oldest of its batches, contiguous with the ones waiting after it (S1,
// S3).
func checkChain(t *testing.T, s *Spine) {
	at := frontier.Min()
	s.MapBatches(func(b *batch.Batch) {
		if b.Lower() != at {
			t.Fatalf("chain not contiguous: batch %v after upper %v\n%v", b.Desc(), at, s)
		}
		at = b.Upper()
	})
	if at != s.end || !at.LessEqual(s.Upper()) {
		t.Fatalf("chain ends at %v, spine end %v, upper %v\n%v", at, s.end, s.Upper(), s)
	}
	for j := range s.levels {
		l := &s.levels[j]
		if (l.merger != nil) != (len(l.merging) > 0) {
			t.Fatalf("level %d: merger %v with %d merging batches\n%v", j, l.merger != nil, len(l.merging), s)
		}
	}
}

// TestFoldIntoTopFinishesTheMergeBelow reaches, by inserts alone, the
// state where the level just below the top has a merge in progress when
// its waiting batches make the top's merge due: the top's first batch
// shrank (retractions met the updates they retract) while the level below
// merged. Folding only the waiting batches would move them above the older
// ones being merged, and the top would merge batches that are not
// contiguous; the merge below is finished first, its result joining the
// top's batches ahead of them.
func TestFoldIntoTopFinishesTheMergeBelow(t *testing.T) {
	// Each round inserts add new keys and retracts the oldest cancel live
	// ones, at time i, with both compaction frontiers at the upper.
	rounds := []struct{ add, cancel int }{
		{103, 0}, {105, 0}, {23, 0}, {37, 0}, {102, 0}, {73, 168}, {125, 129},
		{24, 255}, {29, 0}, {12, 0}, {88, 0}, {22, 11}, {38, 0}, {41, 0},
	}
	s := New(kv, Options{Fanout: 5})
	var live []int64
	key := int64(0)
	want := map[int64]bool{}
	for i, r := range rounds {
		tm := uint64(i)
		bld := batch.NewBuilder(kv, r.add+r.cancel)
		for range r.cancel {
			bld.Push([]int64{live[0]}, []int64{0}, tm, -1)
			delete(want, live[0])
			live = live[1:]
		}
		for range r.add {
			key++
			bld.Push([]int64{key}, []int64{0}, tm, 1)
			live = append(live, key)
			want[key] = true
		}
		b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		s.SetLogicalCompaction(frontier.At(tm + 1))
		s.SetPhysicalCompaction(frontier.At(tm + 1))
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		checkChain(t, s)
	}
	for s.Exert(1 << 20) {
		checkChain(t, s)
	}
	checkChain(t, s)
	bs, err := s.BatchesThrough(frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for _, b := range bs {
		for _, u := range b.Updates() {
			got[u.Key[0]] += u.Diff
		}
	}
	for k, d := range got {
		if d != 0 && (d != 1 || !want[k]) {
			t.Fatalf("key %d accumulates to %d", k, d)
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Fatalf("key %d accumulates to %d, want 1", k, got[k])
		}
	}
}
