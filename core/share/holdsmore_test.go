package share

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// Case: an import holds its seed boundary physically. The publisher, allowed
// to merge everything it has sealed, must keep a batch boundary at the upper
// the import was seeded with, so that the consumer can still cut the trace
// there: cutting must neither straddle a merged batch nor lose a row.
func TestAnImportHoldsItsSeedBoundaryPhysically(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(4)
	im, err := pt.Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	seed := pt.Stats().Upper
	p.rounds(4)
	p.compact(frontier.At(2)) // physically to the upper {8}, merged to quiescence
	bs, err := im.Reader().BatchesThrough(seed)
	if err != nil {
		t.Fatalf("cutting the import's trace at its seed %v after the publisher merged: %v", seed, err)
	}
	eq(t, "rows at {2} through the seed", accumulate(bs, im.Presentation(), 2), p.want(2))
	im.Close()
	im.Reader().Release()
	if st := pt.Stats(); st.Readers != 0 {
		t.Fatalf("%d readers after the import closed and its trace was released", st.Readers)
	}
}

// Case: a publication's reserved peer hold, and a peer bundle taken before
// the publication, hold at the incarnation's as_of, not at {0}: the owner
// allowing compaction to {7} moves a trace published at as_of {5} to {5}
// exactly, and to {7} once the peer moves its hold there.
func TestAPeerHoldIsTakenAtTheIncarnationsAsOf(t *testing.T) {
	for _, peerFirst := range []bool{false, true} {
		g := NewRegistry()
		oks, errs := newPub(t), newPub(t)
		oks.rounds(3)
		inc := Incarnation{ID: "idx", AsOf: frontier.At(5), Seq: 1}
		var peer *Bundle
		if peerFirst {
			peer = g.PeerBundleOf(inc)
		}
		tok, err := g.PublishIncarnation(inc, oks.s, errs.s)
		if err != nil {
			t.Fatal(err)
		}
		if !peerFirst {
			peer = g.PeerBundleOf(inc)
		}
		oks.rounds(6)
		oks.compact(frontier.At(7))
		if got := tok.Slot().Oks().Stats().Since; got != frontier.At(5) {
			t.Fatalf("peer first %v: since %v with the peer holding, want the as_of {5}", peerFirst, got)
		}
		peer.Oks.SetLogicalCompaction(frontier.At(7))
		oks.s.Refresh()
		if got := tok.Slot().Oks().Stats().Since; got != frontier.At(7) {
			t.Fatalf("peer first %v: since %v after the peer moved to {7}, want {7}", peerFirst, got)
		}
		peer.Release()
		tok.Release()
	}
}
