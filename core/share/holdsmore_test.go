package share

import (
	"math/rand/v2"
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

// Case: a peer hold is taken at join(as_of, since), the since applied, not
// the compaction the owner requested: published at as_of {2} while the
// owner requests {7} and an earlier reader keeps the since at {2}, the
// reserved peer hold (and a peer bundle taken first) still holds {2} once
// that reader goes.
func TestAPeerHoldJoinsTheAppliedSinceNotTheRequest(t *testing.T) {
	for _, peerFirst := range []bool{false, true} {
		g := NewRegistry()
		oks, errs := newPub(t), newPub(t)
		oks.rounds(6)
		early, err := attached(t, oks).ReaderAt(frontier.At(2))
		if err != nil {
			t.Fatal(err)
		}
		oks.compact(frontier.At(7))
		inc := Incarnation{ID: "idx", AsOf: frontier.At(2), Seq: 1}
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
		if got := peer.Oks.LogicalCompaction(); got != frontier.At(2) {
			t.Fatalf("peer first %v: peer hold at %v, want the as_of {2}", peerFirst, got)
		}
		early.Release()
		oks.compact(frontier.At(7))
		if got := tok.Slot().Oks().Stats().Since; got != frontier.At(2) {
			t.Fatalf("peer first %v: since %v with the peer holding at {2}, want {2}", peerFirst, got)
		}
		peer.Release()
		tok.Release()
	}
}

// Case: a reader's SetCompaction moves both its holds under one lock and
// wakes the publisher once, whether both holds move or only the logical
// one; a call that moves nothing wakes nothing.
func TestSetCompactionWakesThePublisherOnce(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(6)
	notified := 0
	p.s.SetNotify(func() { notified++ })
	r, err := pt.ReaderAt(frontier.At(1)) // logical {1}, physical at the upper {6}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	for _, step := range []struct {
		name              string
		f                 frontier.Frontier
		logical, physical frontier.Frontier
		woke              bool
	}{
		{"logical only", frontier.At(4), frontier.At(4), frontier.At(6), true},
		{"both", frontier.At(8), frontier.At(8), frontier.At(8), true},
		{"nothing", frontier.At(7), frontier.At(8), frontier.At(8), false},
	} {
		p.s.TakeWake()
		notified = 0
		r.SetCompaction(step.f)
		if r.LogicalCompaction() != step.logical || r.PhysicalCompaction() != step.physical {
			t.Fatalf("%s: holds %v / %v, want %v / %v", step.name, r.LogicalCompaction(), r.PhysicalCompaction(), step.logical, step.physical)
		}
		if l, ph := pt.RemoteHolds(); l.Count(step.logical) != 1 || ph.Count(step.physical) != 1 {
			t.Fatalf("%s: the point counts %v / %v", step.name, l.String(), ph.String())
		}
		want := 0
		if step.woke {
			want = 1
		}
		if woke := p.s.TakeWake(); woke != step.woke || notified != want {
			t.Fatalf("%s: woke %v, notified %d; want woke %v, once", step.name, woke, notified, step.woke)
		}
	}
}

// Case: a publication ends while a reader of it lives on. The reader keeps
// the last published chain, not the publisher's trace: from the first hold
// move after the end, the publisher compacts to its own request, as if the
// ended publication's holds were gone (P2: the applied since is the meet of
// the local holds and the holds of the publications still live).
func TestAnEndedPublicationsReaderHoldsBackNoCompaction(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(4)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	r := tok.Slot().Oks().Reader() // holds at {0}, past the end
	defer r.Release()
	tok.Release()
	oks.h.SetLogicalCompaction(frontier.At(3))
	if got := oks.s.LogicalCompaction(); got != frontier.At(3) {
		t.Fatalf("applied logical compaction %v after the publication ended, want the request {3}", got)
	}
	if n := oks.s.Points(); n != 0 {
		t.Fatalf("the publisher still has %d points attached", n)
	}
}

// Case: readers released in any order leave exactly the others' holds. A
// point keeps its live readers' holds in a list it packs on every release
// (the last one takes the released one's place); the publisher compacts to
// the meet of what is left, and RemoteHolds reports it, after every release
// and every move of a reader still live.
func TestReadersReleasedInAnyOrderLeaveTheOthersHolds(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 17))
		p := newPub(t)
		pt := attached(t, p)
		p.rounds(40)
		type held struct {
			r                 *Reader
			logical, physical uint64
		}
		var live []*held
		for i := range 12 {
			r, err := pt.ReaderAt(frontier.At(0))
			if err != nil {
				t.Fatal(err)
			}
			h := &held{r: r, logical: uint64(1 + i), physical: uint64(41 + i)} // physically at the coverage, {40}, first
			r.SetLogicalCompaction(frontier.At(h.logical))
			r.SetPhysicalCompaction(frontier.At(h.physical))
			live = append(live, h)
		}
		check := func(when string) {
			t.Helper()
			var wantL, wantP frontier.MutableFrontier
			since := uint64(30)
			for _, h := range live {
				mustHold(wantL.Update(frontier.At(h.logical), 1))
				mustHold(wantP.Update(frontier.At(h.physical), 1))
				since = min(since, h.logical)
			}
			gotL, gotP := pt.RemoteHolds()
			if gotL.String() != wantL.String() || gotP.String() != wantP.String() {
				t.Fatalf("seed %d, %s: remote holds %v / %v, want %v / %v", seed, when, gotL.String(), gotP.String(), wantL.String(), wantP.String())
			}
			p.compact(frontier.At(30))
			if got := pt.Stats().Since; got != frontier.At(since) {
				t.Fatalf("seed %d, %s: since %v, want {%d}", seed, when, got, since)
			}
			if got := pt.Stats().Readers; got != len(live) {
				t.Fatalf("seed %d, %s: %d readers, want %d", seed, when, got, len(live))
			}
		}
		check("after the readers moved")
		for len(live) > 0 {
			i := rng.IntN(len(live))
			live[i].r.Release()
			live[i].r.Release() // twice is a no-op
			live = append(live[:i], live[i+1:]...)
			check("after a release")
			if len(live) > 0 {
				h := live[rng.IntN(len(live))]
				h.logical, h.physical = h.logical+uint64(rng.IntN(3)), h.physical+uint64(rng.IntN(3))
				h.r.SetCompaction(frontier.At(min(h.logical, h.physical)))
				h.r.SetLogicalCompaction(frontier.At(h.logical))
				h.r.SetPhysicalCompaction(frontier.At(h.physical))
				check("after a move")
			}
		}
	}
}
