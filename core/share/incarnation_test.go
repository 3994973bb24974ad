package share

import (
	"errors"
	"testing"
	"time"

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

// TestCollectedVerdictsAreForgotten: a reading runtime that collects the
// verdicts of create after create (two exports each, the publisher first
// or the reader first) leaves the registry no more than the last create's,
// where it kept every verdict it ever collected until it left: a pair
// that creates and drops indexes for its whole life grew its registries
// by a verdict per export and create. What the kept verdicts were for
// stays: a verdict of a create before the last collected one, forgotten,
// is settled again as a no-op (it keeps no slot) and collected again with
// ErrCollected at once.
func TestCollectedVerdictsAreForgotten(t *testing.T) {
	g := NewRegistry()
	for _, side := range []Side{PublisherSide, ReaderSide} {
		if err := g.Bind(side); err != nil {
			t.Fatal(err)
		}
	}
	const creates = 200
	first := Incarnation{ID: "x", AsOf: frontier.At(0), Seq: 1}
	for seq := uint64(1); seq <= creates; seq++ {
		incs := []Incarnation{{ID: "x", AsOf: frontier.At(0), Seq: seq}, {ID: "y", AsOf: frontier.At(1), Seq: seq}}
		var pubs []*pub
		var toks []*Token
		for _, inc := range incs {
			oks, errs := newPub(t), newPub(t)
			pubs = append(pubs, oks, errs)
			tok, err := g.PublishIncarnation(inc, oks.s, errs.s)
			if err != nil {
				t.Fatal(err)
			}
			toks = append(toks, tok)
		}
		bundles := make([]*Bundle, len(incs))
		errc := make(chan error, len(incs))
		collect := func() {
			for i, inc := range incs {
				b, err := g.AwaitPeerBundle(inc, nil)
				bundles[i] = b
				errc <- err
			}
		}
		if seq%2 == 0 {
			go collect() // the reader first: it waits for the verdicts
		}
		for _, inc := range incs {
			g.Settle(inc, seq%3 != 0) // every third create abandoned
		}
		if seq%2 != 0 {
			collect()
		}
		for range incs {
			if err := <-errc; err != nil && !errors.Is(err, ErrAbandoned) {
				t.Fatalf("create %d: %v", seq, err)
			}
		}
		for i := range incs {
			if bundles[i] != nil {
				bundles[i].Release()
			}
			toks[i].Release()
		}
		for _, p := range pubs {
			p.h.Release()
		}
	}
	g.mu.Lock()
	kept := len(g.verdicts)
	g.mu.Unlock()
	if kept > 2 {
		t.Fatalf("%d verdicts kept after %d creates of two exports, all collected: want the last create's at most", kept, creates)
	}
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry after every publication and peer bundle is released: %+v, want empty", st)
	}
	g.Settle(first, true)
	g.Settle(first, false)
	stop := make(chan struct{})
	timer := time.AfterFunc(5*time.Second, func() { close(stop) })
	defer timer.Stop()
	if b, err := g.AwaitPeerBundle(first, stop); !errors.Is(err, ErrCollected) {
		if b != nil {
			b.Release()
		}
		t.Fatalf("awaiting a forgotten collected incarnation again: %v, want ErrCollected", err)
	}
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry after a forgotten verdict is settled and awaited again: %+v, want empty", st)
	}
	g.Leave(ReaderSide)
	g.Leave(PublisherSide)
}
