package share

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// Tests of incarnations: slots, peer holds and verdicts belong to one
// incarnation (id, as_of, sequence number), and nothing done for one
// reaches another (cases 3, 5 and 6 of the robustness list).

// TestStalePeerBundleNeverTakesANewerIncarnationsHold: the reading runtime,
// a whole drop and create behind, asks for the peer bundle of incarnation 1
// after incarnation 2 (same id, same as_of) was published: it gets a slot
// of its own, and incarnation 2's reserved hold stays for its own peer.
func TestStalePeerBundleNeverTakesANewerIncarnationsHold(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(3)
	inc1 := Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	inc2 := Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 2}
	tok, err := g.PublishIncarnation(inc2, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	stale := g.PeerBundleOf(inc1)
	if st := g.Stats(); st.Reserved != 1 || st.Slots != 2 {
		t.Fatalf("after the stale peer bundle: %+v, want incarnation 2's hold still reserved", st)
	}
	if stale.Oks.(*Reader).Point() == tok.Slot().Oks() {
		t.Fatal("the stale peer bundle reads incarnation 2's point")
	}
	stale.Release()
	if st := g.Stats(); st.Reserved != 1 {
		t.Fatalf("the stale release took incarnation 2's hold: %+v", st)
	}
	b := g.PeerBundleOf(inc2)
	if b.Oks.(*Reader).Point() != tok.Slot().Oks() || g.Stats().Reserved != 0 {
		t.Fatalf("incarnation 2's peer did not take its reserved hold: %+v", g.Stats())
	}
	b.Release()
	tok.Release()
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry not empty: %+v", st)
	}
}

// TestNewIncarnationPublishesWhileTheOldSlotIsHeld: a clone of the old
// incarnation's peer bundle keeps its slot alive; publishing a new
// incarnation at the same as_of succeeds all the same.
func TestNewIncarnationPublishesWhileTheOldSlotIsHeld(t *testing.T) {
	g := NewRegistry()
	a, b := newPub(t), newPub(t)
	inc1 := Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	tok1, err := g.PublishIncarnation(inc1, a.s, b.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundleOf(inc1)
	clone := peer.Clone()
	peer.Release()
	tok1.Release()
	c, d := newPub(t), newPub(t)
	tok2, err := g.PublishIncarnation(Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 2}, c.s, d.s)
	if err != nil {
		t.Fatalf("publishing incarnation 2 while incarnation 1's slot is held: %v", err)
	}
	clone.Release()
	tok2.Release()
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry not empty: %+v", st)
	}
}

// TestStalePeerBundleNeitherEvictsNorUnbindsANewerSlot: a peer bundle of an
// older incarnation at another as_of, taken and released after a newer one
// was published, leaves the newer slot in the registry, bound, with its
// reserved hold.
func TestStalePeerBundleNeitherEvictsNorUnbindsANewerSlot(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(4)
	newer := Incarnation{ID: "idx", AsOf: frontier.At(2), Seq: 2}
	tok, err := g.PublishIncarnation(newer, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	stale := g.PeerBundleOf(Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1})
	stale.Release()
	if s := g.Lookup("idx", frontier.At(2)); s != tok.Slot() {
		t.Fatal("the stale peer bundle evicted the newer slot from the registry")
	}
	if st := g.Stats(); st.Slots != 1 || st.Reserved != 1 {
		t.Fatalf("after the stale bundle: %+v, want the newer slot and its reserved hold", st)
	}
	b := g.PeerBundleOf(newer)
	if got := b.Oks.(*Reader).Point().Stats(); !got.Bound || got.Batches == 0 {
		t.Fatalf("the newer incarnation's peer reads an unbound point: %+v", got)
	}
	b.Release()
	tok.Release()
}

// TestVerdictsSettleWhatTheReadingRuntimeRecords: a published verdict keeps
// the slot, with its reserved hold, until the peer collects it, even after
// the publication ended; an abandoned one gives ErrAbandoned; a stopped
// wait gives ErrStopped.
func TestVerdictsSettleWhatTheReadingRuntimeRecords(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(2)
	pub := Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	tok, err := g.PublishIncarnation(pub, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	g.Settle(pub, true)
	tok.Release() // the publisher dropped it before the peer came
	if st := g.Stats(); st.Slots != 1 || st.Reserved != 1 || st.Settled != 1 {
		t.Fatalf("before the peer collects its verdict: %+v", st)
	}
	b, err := g.AwaitPeerBundle(pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Oks.(*Reader).Point().Stats(); got.Batches == 0 || !got.Closed {
		t.Fatalf("the late peer does not read the ended publication: %+v", got)
	}
	b.Release()
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry not empty: %+v", st)
	}
	gone := Incarnation{ID: "gone", AsOf: frontier.At(0), Seq: 2}
	g.Settle(gone, false)
	if _, err := g.AwaitPeerBundle(gone, nil); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("abandoned incarnation: err = %v, want ErrAbandoned", err)
	}
	stop := make(chan struct{})
	close(stop)
	if _, err := g.AwaitPeerBundle(Incarnation{ID: "never", Seq: 3}, stop); !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped wait: err = %v, want ErrStopped", err)
	}
}
