package share

import (
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
