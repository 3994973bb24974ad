package share

import (
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestEmptyInsertsPublishTheUpperOnly: a batch without updates (an errors
// trace's round with no errors) moves the published upper and nothing
// else: the point's chain stays the array it was, an import takes the new
// frontier and no batch, a reader cuts anywhere up to the upper. The next
// batch with updates goes into the chain after an empty batch over the
// rounds without (spine.Spine.Insert), the point publishes the spine's
// chain, the import takes that batch once, and a new import's seed holds
// every update and ends at the upper.
func TestEmptyInsertsPublishTheUpperOnly(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.round([3]int64{1, 1, 1}, [3]int64{2, 1, 1})
	im, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	defer im.Reader().Release()
	if bs := drained(im); len(bs) != 1 {
		t.Fatalf("seed: %d batches, want 1", len(bs))
	}
	chain := pt.Chain()
	for r := range 20 {
		p.round() // no updates
		if got := pt.Chain(); !slices.Equal(got, chain) || &got[0] != &chain[0] {
			t.Fatalf("empty round %d: chain %v, want the published %v", r, got, chain)
		}
		if got := pt.Stats().Upper; got != frontier.At(p.upper) {
			t.Fatalf("empty round %d: published upper %v, want {%d}", r, got, p.upper)
		}
		evs := im.Drain(nil)
		if len(evs) != 1 || evs[0].Batch != nil || evs[0].Frontier != frontier.At(p.upper) {
			t.Fatalf("empty round %d: import took %+v, want the frontier {%d} alone", r, evs, p.upper)
		}
		if im.Frontier() != frontier.At(p.upper) {
			t.Fatalf("empty round %d: import at %v, want {%d}", r, im.Frontier(), p.upper)
		}
	}
	for _, cut := range []uint64{1, 7, p.upper} {
		bs, err := im.Reader().BatchesThrough(frontier.At(cut))
		if err != nil || len(bs) != 1 {
			t.Fatalf("cut at {%d}: %v, %v; want the one batch", cut, bs, err)
		}
	}

	p.round([3]int64{1, 1, -1}, [3]int64{3, 1, 1})
	got, want := pt.Chain(), p.s.Inner().Batches()
	if !slices.Equal(got, want) || len(got) < 2 || !got[len(got)-2].IsEmpty() || got[len(got)-2].Lower() != frontier.At(1) {
		t.Fatalf("after the rounds without updates: chain %v, the spine's %v; want it to end with an empty batch from {1}, then the new one", got, want)
	}
	evs := im.Drain(nil)
	if len(evs) != 2 || evs[0].Batch != got[len(got)-1] || evs[1].Frontier != frontier.At(p.upper) {
		t.Fatalf("import took %+v, want the new batch, then {%d}", evs, p.upper)
	}
	fresh, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	defer fresh.Reader().Release()
	bs := drained(fresh)
	if fresh.Frontier() != frontier.At(p.upper) {
		t.Fatalf("a new import ends at %v, want {%d}", fresh.Frontier(), p.upper)
	}
	for tm := range p.upper {
		eq(t, "a new import", accumulate(bs, fresh.Presentation(), tm), p.want(tm))
	}
	var nonEmpty []*batch.Batch
	for _, b := range got {
		if !b.IsEmpty() {
			nonEmpty = append(nonEmpty, b)
		}
	}
	if !slices.Equal(bs, nonEmpty) {
		t.Fatalf("a new import's seed: %v, want the chain's batches with updates %v", bs, nonEmpty)
	}
}

// TestEmptyInsertThatFinishesAMergeRepublishes: a batch without updates
// brings the merges in progress an arrival's fuel (spine.Spine.Insert), so
// it may finish one: the chain changes without taking the batch, and the
// points publish the spine's chain, merged, not the one they had with the
// empty batch appended; an import takes the frontier alone, and a new
// import's seed holds every update.
func TestEmptyInsertThatFinishesAMergeRepublishes(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	im, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	defer im.Reader().Release()
	// Two rounds of the same update at MaxInt64, every hold (the
	// publisher's and the import's reader's) moved to the upper after
	// each: the two batches owe and merge, an overflow, which the round's
	// fuel does not finish.
	compact := func() {
		p.h.SetLogicalCompaction(frontier.At(p.upper))
		p.h.SetPhysicalCompaction(frontier.At(p.upper))
		im.Reader().SetCompaction(frontier.At(p.upper))
		p.s.Refresh()
	}
	for range 2 {
		p.round([3]int64{1, 1, math.MaxInt64})
		drained(im)
		compact()
	}
	if !p.s.Inner().Merging() {
		t.Fatalf("no merge in progress after two rounds:\n%v", p.s.Inner())
	}
	finished := false
	for r := 0; r < 1000 && !finished; r++ {
		p.round() // no updates
		finished = !p.s.Inner().Merging()
		if got, want := pt.Chain(), p.s.Inner().Batches(); !slices.Equal(got, want) {
			t.Fatalf("empty round %d (merge finished: %v): published chain %v, the spine's %v", r, finished, got, want)
		}
		evs := im.Drain(nil)
		if len(evs) != 1 || evs[0].Batch != nil || evs[0].Frontier != frontier.At(p.upper) {
			t.Fatalf("empty round %d: import took %+v, want the frontier {%d} alone", r, evs, p.upper)
		}
		compact()
	}
	if !finished {
		t.Fatalf("the merge is still in progress after 1,000 rounds without updates:\n%v", p.s.Inner())
	}
	if got := pt.Chain(); len(got) != 1 {
		t.Fatalf("after the merge: published chain %v, want the one merged batch", got)
	}
	fresh, err := pt.Import(frontier.At(p.upper), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	defer fresh.Reader().Release()
	bs := drained(fresh)
	eq(t, "a new import", accumulate(bs, fresh.Presentation(), p.upper), map[[2]int64]int64{{1, 1}: math.MaxInt64})
}
