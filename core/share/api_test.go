package share_test

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// Tests through the exported API alone, as a program that uses core/share
// as a library writes them.

var kv = batch.Arity{Key: 1, Val: 1}

// source is a publishing trace: its first handle, its writer and its spine.
type source struct {
	h *trace.Handle
	w *trace.Writer
	s *share.Spine
}

// newSource returns a trace of n rounds, round r adding the row (r%3, r)
// at time r, whose handle allows compaction to since.
func newSource(t *testing.T, n, since uint64) source {
	h, w, s := share.NewTrace(kv, spine.Options{})
	for r := range n {
		bld := batch.NewBuilder(kv, 1)
		bld.Push1(int64(r%3), int64(r), r, 1)
		b, err := bld.Build(frontier.At(r), frontier.At(r+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	h.SetLogicalCompaction(frontier.At(since))
	return source{h, w, s}
}

// count sums the diffs of the updates bs present at or before t.
func count(bs []*batch.Batch, pres batch.Presentation, t frontier.Time) int64 {
	var n int64
	for _, b := range bs {
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				times, diffs := c.Updates()
				for i, tm := range times {
					if pt, ok := pres.Present(tm); ok && pt <= t {
						n += diffs[i]
					}
				}
			}
		}
	}
	return n
}

// A peek into a padded reader's padding — an import whose until is at or
// before the inner since — reads the empty collection the padding presents:
// it is admitted, presents nothing, completes at once and holds nothing of
// the publication. A read that reaches the inner since reads the trace.
func TestAPeekIntoThePaddingIsAnEmptyImport(t *testing.T) {
	g := share.NewRegistry()
	oks, errs := newSource(t, 10, 5), newSource(t, 10, 5)
	tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.At(5))
	padded := peer.IntoPadded()
	half := padded.Oks.(*share.Padded)
	point := tok.Slot().Oks()
	readers := point.Stats().Readers

	for _, peek := range [][2]frontier.Time{{0, 1}, {3, 4}, {4, 5}, {0, 5}} {
		asOf, until := frontier.At(peek[0]), frontier.At(peek[1])
		im, err := half.ImportWith(asOf, until, nil)
		if err != nil {
			t.Fatalf("peek at %v until %v into the padding below {5}: %v", asOf, until, err)
		}
		if n := point.Stats().Readers; n != readers {
			t.Fatalf("peek at %v until %v: the publication has %d readers, want %d: reading the padding holds nothing of it", asOf, until, n, readers)
		}
		evs := im.Drain(nil)
		if len(evs) != 1 || evs[0].Batch != nil || !evs[0].Frontier.IsEmpty() || !im.Done() {
			t.Fatalf("peek at %v until %v: events %+v, done %v; want only the end ({}), done", asOf, until, evs, im.Done())
		}
		if bs, err := im.Reader().BatchesThrough(until); err != nil || len(bs) != 0 {
			t.Fatalf("peek at %v until %v: its reader cuts %d batches at %v (%v), want none", asOf, until, len(bs), until, err)
		}
		im.Close()
		im.Reader().Release()
	}

	// Through the inner since, the read is the trace's: the rows of times
	// 0 to 5, presented at 5.
	im, err := half.ImportWith(frontier.At(4), frontier.At(6), nil)
	if err != nil {
		t.Fatal(err)
	}
	var bs []*batch.Batch
	for _, e := range im.Drain(nil) {
		if e.Batch != nil {
			bs = append(bs, e.Batch)
		}
	}
	if n := count(bs, im.Presentation(), 5); n != 6 || !im.Done() {
		t.Fatalf("read at {4} until {6}: %d rows at 5 (done %v), want 6, done", n, im.Done())
	}
	im.Close()
	im.Reader().Release()

	// Before the padding's since it is refused, as before a reader's hold.
	padded.AllowCompaction(frontier.At(2))
	if _, err := half.ImportWith(frontier.At(1), frontier.At(2), nil); err == nil {
		t.Fatal("a peek at {1} of a reader padded at {2} admitted")
	}

	padded.Release()
	peer.Release()
	tok.Release()
	oks.h.Release()
	errs.h.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry left with %+v", st)
	}
}

// A padded bundle holds on its own, as a clone does: releasing it leaves the
// bundle it was made from, and that bundle's clones, reading and holding, and
// releasing that bundle leaves the padded one so. The slot goes with the
// last of them, once.
func TestAPaddedBundleAndItsSourceAreReleasedEachOnItsOwn(t *testing.T) {
	for _, first := range []string{"source", "padded"} {
		t.Run(first+" released first", func(t *testing.T) {
			g := share.NewRegistry()
			oks, errs := newSource(t, 10, 5), newSource(t, 10, 5)
			tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
			if err != nil {
				t.Fatal(err)
			}
			source := g.PeerBundle("idx", frontier.At(5))
			clone := source.Clone()
			padded := source.IntoPadded()
			tok.Release() // the slot lives on with its bundles

			gone, kept := source, padded
			if first == "padded" {
				gone, kept = padded, source
			}
			gone.Release()
			for _, b := range []*share.Bundle{kept, clone} {
				for _, half := range []trace.Reader{b.Oks, b.Errs} {
					in, err := share.ImporterOf(half)
					if err != nil {
						t.Fatal(err)
					}
					im, err := in.ImportWith(frontier.At(5), frontier.At(6), nil)
					if err != nil {
						t.Fatalf("after the %s's release, an import of a bundle still live: %v", first, err)
					}
					im.Drain(nil)
					im.Close()
					im.Reader().Release()
				}
			}
			if st := g.Stats(); st.Slots != 1 {
				t.Fatalf("after the %s's release: %d slots, want 1: two bundles of it are live", first, st.Slots)
			}
			for _, pt := range []*share.Point{g.Lookup("idx", frontier.At(5)).Oks(), g.Lookup("idx", frontier.At(5)).Errs()} {
				if n := pt.Stats().Readers; n != 2 {
					t.Fatalf("after the %s's release: %d readers of a half, want 2: one per live bundle", first, n)
				}
			}

			kept.Release()
			if st := g.Stats(); st.Slots != 1 {
				t.Fatalf("with a clone live: %d slots, want 1", st.Slots)
			}
			slot := g.Lookup("idx", frontier.At(5))
			clone.Release()
			if st := g.Stats(); st.Slots != 0 {
				t.Fatalf("after every bundle's release: %d slots, want 0", st.Slots)
			}
			for _, pt := range []*share.Point{slot.Oks(), slot.Errs()} {
				if n := pt.Stats().Readers; n != 0 {
					t.Fatalf("after every bundle's release: %d readers of a half, want 0", n)
				}
			}
			oks.h.Release()
			errs.h.Release()
		})
	}
}

// Ended, an import holds nothing, and its point counts it no more: its
// readers are the consumer's alone, none once that is released, and what
// follows End — the drain that completes the import, its Close — counts
// nothing twice.
func TestAnEndedImportIsNoLongerCountedAmongItsPointsReaders(t *testing.T) {
	src := newSource(t, 10, 0)
	pt := src.s.LocalPoint()
	readers := func() int { return pt.Stats().Readers }

	// Following on for ever, ended before it drains: what arrived stays.
	im, err := pt.Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if n := readers(); n != 2 {
		t.Fatalf("a live import: %d readers, want 2 (its consumer's and its own hold)", n)
	}
	im.End()
	if n := readers(); n != 1 {
		t.Fatalf("an ended import: %d readers, want 1 (its consumer's): its own hold is gone", n)
	}
	im.Drain(nil)
	im.End()
	im.Reader().Release()
	if n := readers(); n != 0 {
		t.Fatalf("an ended import with its consumer's reader released: %d readers, want 0", n)
	}
	im.Close()
	if n := readers(); n != 0 {
		t.Fatalf("an ended import closed: %d readers, want 0", n)
	}

	// A peek whose seed already passed its until, ended before the drain
	// that completes it.
	im, err = pt.Import(frontier.At(2), frontier.At(3))
	if err != nil {
		t.Fatal(err)
	}
	im.End()
	if evs := im.Drain(nil); !im.Done() || len(evs) == 0 || !evs[len(evs)-1].Frontier.IsEmpty() {
		t.Fatalf("an ended peek drained %+v (done %v), want it complete", evs, im.Done())
	}
	im.Close()
	if n := readers(); n != 1 {
		t.Fatalf("an ended peek, completed and closed: %d readers, want 1 (its consumer's)", n)
	}
	im.Reader().Release()
	if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		t.Fatalf("everything released: %d readers, %d importers, want none", st.Readers, st.Importers)
	}
	src.h.Release()
}

// A trace whose last handle is released has ended, and with it any
// publication of it: publishing it, by its spine or by a bundle of its
// handles, is refused, with an error naming the half released, instead of a
// publication that would never end and keep its readers waiting. A reader
// that came first sees the publication end.
func TestPublishingATraceWhoseLastHandleIsReleasedIsRefused(t *testing.T) {
	for _, half := range []string{"oks", "errs"} {
		for _, way := range []string{"Publish", "PublishBundle"} {
			t.Run(half+"/"+way, func(t *testing.T) {
				g := share.NewRegistry()
				oks, errs := newSource(t, 4, 0), newSource(t, 4, 0)
				released, live := oks, errs
				if half == "errs" {
					released, live = errs, oks
				}
				kept := live.h.Clone() // the bundle's handle of the live half
				released.h.Release()
				b := share.NewBundle(released.h, kept, nil)
				if half == "errs" {
					b = share.NewBundle(kept, released.h, nil)
				}
				publish := func() (*share.Token, error) {
					if way == "PublishBundle" {
						return g.PublishBundle(share.Incarnation{ID: "idx", AsOf: frontier.At(0)}, b)
					}
					return g.Publish("idx", frontier.At(0), oks.s, errs.s)
				}
				refused := func(what string) {
					tok, err := publish()
					if err == nil {
						tok.Release()
						t.Fatalf("%s: accepted", what)
					}
					if !errors.Is(err, share.ErrTraceReleased) || !strings.Contains(err.Error(), half+" half") {
						t.Fatalf("%s: %v, want an error naming the %s half, wrapping ErrTraceReleased", what, err, half)
					}
				}

				refused("published with no reader")
				if st := g.Stats(); st.Slots != 0 {
					t.Fatalf("registry left with %+v", st)
				}

				peer := g.PeerBundle("idx", frontier.At(0))
				refused("published with a reader waiting")
				readersSeeTheRefusal(t, g, peer)

				// Attached directly, alike; its private point has ended.
				if err := released.s.Attach(share.NewPoint()); !errors.Is(err, share.ErrTraceReleased) {
					t.Fatalf("attaching a released trace: %v, want ErrTraceReleased", err)
				}
				if pt := released.s.LocalPoint(); !pt.Stats().Closed {
					t.Fatal("a released trace's private point is not closed")
				}
				b.Release()
				live.h.Release()
			})
		}
	}
}

// A bundle's handle that is released holds nothing of its trace, and
// publishing through it is refused, with ErrReleased naming the half, as
// an import through it is, though the trace lives on through other
// handles: a publication through it would keep the trace published for a
// holder that let it go. So for a released bundle, and for a bundle of one
// released handle; the registry is left empty, and a reader that came
// first sees the publication end, as for a trace whose last handle is
// released.
func TestPublishingThroughAReleasedHandleIsRefused(t *testing.T) {
	for _, half := range []string{"oks", "errs", "bundle"} {
		t.Run(half, func(t *testing.T) {
			g := share.NewRegistry()
			oks, errs := newSource(t, 4, 0), newSource(t, 4, 0)
			b := share.NewBundle(oks.h.Clone(), errs.h.Clone(), nil)
			want := half
			switch half {
			case "oks":
				b.Oks.Release()
			case "errs":
				b.Errs.Release()
			case "bundle":
				b.Release()
				want = "oks"
			}
			inc := share.Incarnation{ID: "idx", AsOf: frontier.At(0)}
			refused := func(what string) {
				tok, err := g.PublishBundle(inc, b)
				if err == nil {
					tok.Release()
					t.Fatalf("%s: accepted", what)
				}
				if !errors.Is(err, share.ErrReleased) || !strings.Contains(err.Error(), want+" half") {
					t.Fatalf("%s: %v, want an error naming the %s half, wrapping ErrReleased", what, err, want)
				}
			}
			refused("published with no reader")
			if st := g.Stats(); st.Slots != 0 {
				t.Fatalf("registry left with %+v", st)
			}
			peer := g.PeerBundleOf(inc)
			refused("published with a reader waiting")
			readersSeeTheRefusal(t, g, peer)
			b.Release()
			oks.h.Release()
			errs.h.Release()
		})
	}
}

// A released padded reader's holds move no more, its padding included:
// setting its logical compaction, before the inner since or beyond it, is
// a no-op, as on any released reader, so it reports what it did at its
// release, and so does its clone. So over a shared reader and over a local
// handle.
func TestAReleasedPaddedReadersCompactionIsANoOp(t *testing.T) {
	for _, over := range []string{"shared", "local"} {
		t.Run(over, func(t *testing.T) {
			g := share.NewRegistry()
			oks, errs := newSource(t, 10, 5), newSource(t, 10, 5)
			tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
			if err != nil {
				t.Fatal(err)
			}
			b := g.PeerBundle("idx", frontier.At(5))
			if over == "local" {
				b.Release()
				b = share.NewBundle(oks.h.Clone(), errs.h.Clone(), nil)
			}
			padded := b.IntoPadded()
			padded.Release()
			for _, f := range []frontier.Frontier{frontier.At(3), frontier.At(7), frontier.Empty()} {
				padded.AllowCompaction(f)
				for _, half := range []trace.Reader{padded.Oks, padded.Errs, padded.Oks.CloneReader()} {
					p := half.(*share.Padded)
					if got := p.LogicalCompaction(); got != frontier.Min() || !p.IsPadded() {
						t.Fatalf("released, allowed compaction to %v: reports %v (padded %v), want %v, padded", f, got, p.IsPadded(), frontier.Min())
					}
				}
			}
			if got := b.Oks.LogicalCompaction(); got != frontier.At(5) {
				t.Fatalf("the live bundle it was padded from holds at %v, want %v", got, frontier.At(5))
			}
			b.Release()
			tok.Release()
			oks.h.Release()
			errs.h.Release()
		})
	}
}

// The zero Reader (a var r share.Reader, from no point) is a released
// one: its reads and imports are ErrReleased, its moves, Clone and Release
// do nothing, where each dereferenced its nil point.
func TestTheZeroReaderIsReleased(t *testing.T) {
	var r share.Reader
	noPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("%s of the zero Reader panicked: %v", what, p)
			}
		}()
		f()
	}
	if !r.Released() {
		t.Error("the zero Reader is not released")
	}
	noPanic("BatchesThrough", func() {
		if _, err := r.BatchesThrough(frontier.At(1)); !errors.Is(err, share.ErrReleased) {
			t.Errorf("BatchesThrough: %v, want share.ErrReleased", err)
		}
	})
	noPanic("ImportWith", func() {
		if _, err := r.ImportWith(frontier.At(0), frontier.Empty(), nil); !errors.Is(err, share.ErrReleased) {
			t.Errorf("ImportWith: %v, want share.ErrReleased", err)
		}
	})
	noPanic("SetLogicalCompaction", func() { r.SetLogicalCompaction(frontier.At(3)) })
	noPanic("SetPhysicalCompaction", func() { r.SetPhysicalCompaction(frontier.At(3)) })
	noPanic("SetCompaction", func() { r.SetCompaction(frontier.At(3)) })
	noPanic("MapBatches", func() { r.MapBatches(func(*batch.Batch) { t.Error("the zero Reader visited a batch") }) })
	noPanic("ReadUpper", func() {
		if got := r.ReadUpper(); got != frontier.Min() {
			t.Errorf("ReadUpper: %v, want {0}", got)
		}
	})
	noPanic("Clone", func() {
		c := r.Clone()
		if !c.Released() {
			t.Error("the clone of the zero Reader is not released")
		}
		c.Release()
	})
	noPanic("Release", r.Release)
	noPanic("Release", r.Release)
	if r.Point() != nil || r.LogicalCompaction() != frontier.Min() || r.PhysicalCompaction() != frontier.Min() {
		t.Errorf("the zero Reader reads point %p at holds %v, %v", r.Point(), r.LogicalCompaction(), r.PhysicalCompaction())
	}
}

// Every call on a released reader is an error or a no-op, as trace.Reader
// promises, Clone included: the clone of a released reader — shared,
// padded, or a bundle's — is released too. It registers no hold, its reads
// are errors, and a released bundle's clone takes no share of the drop
// token, which has run: releasing the clone runs nothing again.
func TestTheCloneOfAReleasedReaderIsReleased(t *testing.T) {
	noPanic := func(what string, f func()) {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("%s panicked: %v", what, p)
			}
		}()
		f()
	}
	g := share.NewRegistry()
	oks, errs := newSource(t, 4, 0), newSource(t, 4, 0)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	pt := tok.Slot().Oks()
	peer := g.PeerBundle("idx", frontier.At(0))
	padded := peer.IntoPadded()
	other := peer.Clone() // live throughout
	r := pt.Reader()
	readers := pt.Stats().Readers // the peer's, its two clones' and r
	r.Release()
	padded.Release()
	peer.Release()

	var clones []trace.Reader
	noPanic("Clone of a released reader", func() { clones = append(clones, r.Clone()) })
	noPanic("CloneReader of a released reader", func() { clones = append(clones, r.CloneReader()) })
	noPanic("CloneReader of a released padded reader", func() { clones = append(clones, padded.Oks.CloneReader()) })
	var bundles []*share.Bundle
	noPanic("Clone of a released bundle", func() { bundles = append(bundles, peer.Clone()) })
	noPanic("IntoPadded of a released bundle", func() { bundles = append(bundles, peer.IntoPadded()) })
	for _, b := range bundles {
		clones = append(clones, b.Oks, b.Errs)
	}
	for i, c := range clones {
		if _, err := c.BatchesThrough(frontier.At(4)); !errors.Is(err, share.ErrReleased) {
			t.Fatalf("clone %d of a released reader cuts: %v, want share.ErrReleased", i, err)
		}
		in, err := share.ImporterOf(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.ImportWith(frontier.At(0), frontier.Empty(), nil); !errors.Is(err, share.ErrReleased) {
			t.Fatalf("clone %d of a released reader imports: %v, want share.ErrReleased", i, err)
		}
	}
	if n := pt.Stats().Readers; n != readers-3 {
		t.Fatalf("%d readers, want %d (the live clone's): the clones of released readers hold nothing", n, readers-3)
	}
	for _, c := range clones {
		c.Release()
	}
	for _, b := range bundles {
		b.Release()
	}
	if n := pt.Stats().Readers; n != readers-3 {
		t.Fatalf("%d readers after the clones' release, want %d", n, readers-3)
	}
	other.Release() // the slot's reference goes with the last live bundle
	if st := g.Stats(); st.Slots != 1 {
		t.Fatalf("%d slots with the publication live, want 1: a released bundle's clone ran its drop again", st.Slots)
	}
	tok.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry left with %+v: a released bundle's clone keeps the slot", st)
	}

	// A bundle's drop function runs once, when its last live clone is
	// released, whether it had run when a released one was cloned or not.
	for _, liveClone := range []bool{false, true} {
		drops := 0
		b := share.NewBundle(oks.h.Clone(), errs.h.Clone(), func() { drops++ })
		var keep *share.Bundle
		if liveClone {
			keep = b.Clone()
		}
		b.Release()
		c, p := b.Clone(), b.IntoPadded()
		c.Release()
		p.Release()
		if keep != nil {
			if drops != 0 {
				t.Fatalf("drop ran %d times with a clone live", drops)
			}
			keep.Release()
		}
		if drops != 1 {
			t.Fatalf("drop ran %d times (a clone live while a released bundle was cloned: %v), want once", drops, liveClone)
		}
	}
	oks.h.Release()
	errs.h.Release()
}

// A released handle imports nothing, nor does its clone, nor a padded
// bundle of released handles, whether the import peeks into the padding or
// reads the trace: each is ErrReleased, as an import through a released
// shared reader is, and none registers a hold on the trace's private
// point, which would keep the trace from compacting for a reader that
// has let it go.
func TestAnImportThroughAReleasedHandleIsRefused(t *testing.T) {
	src := newSource(t, 6, 3)
	pt := src.s.LocalPoint()
	h := src.h.Clone()
	h.Release()
	b := share.NewBundle(src.h.Clone(), src.h.Clone(), nil)
	padded := b.IntoPadded()
	b.Release()
	padded.Release()
	for _, tc := range []struct {
		what        string
		r           trace.Reader
		asOf, until frontier.Frontier
	}{
		{"a released handle", h, frontier.At(3), frontier.Empty()},
		{"a released handle's clone", h.Clone(), frontier.At(3), frontier.Empty()},
		{"a padded released handle, reading the trace", padded.Oks, frontier.At(0), frontier.Empty()},
		{"a padded released handle, peeking into the padding", padded.Oks, frontier.At(0), frontier.At(2)},
	} {
		var err error
		in, err := share.ImporterOf(tc.r)
		if err == nil {
			var im *share.Import
			if im, err = in.ImportWith(tc.asOf, tc.until, nil); err == nil {
				im.Close()
				im.Reader().Release()
			}
		}
		if !errors.Is(err, share.ErrReleased) {
			t.Errorf("%s imports at %v until %v: %v, want share.ErrReleased", tc.what, tc.asOf, tc.until, err)
		}
		if n := pt.Stats().Readers; n != 0 {
			t.Fatalf("%s: the trace's private point has %d readers, want none", tc.what, n)
		}
	}
	src.h.Release()
}

// readersSeeTheRefusal checks that the peer bundle of a publication
// refused, taken before the refusal, imports closed on both halves (its
// readers do not wait for the publication), and that releasing it leaves
// the registry no slot.
func readersSeeTheRefusal(t *testing.T, g *share.Registry, peer *share.Bundle) {
	t.Helper()
	for _, r := range []trace.Reader{peer.Oks, peer.Errs} {
		im, err := r.(*share.Reader).Import(frontier.At(0), frontier.Empty())
		if err != nil {
			t.Fatal(err)
		}
		if !im.Closed() {
			t.Fatal("the reader that came first waits on a publication refused")
		}
		im.Close()
		im.Reader().Release()
	}
	peer.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry left with %+v", st)
	}
}

// A released reader's upper is the one it read when it was released, as
// its holds are the ones it had: a local handle, a shared reader, a padded
// one and each one's clone. The trace moving on after the release, or
// freed by its last handle's, moves none of them; a live reader reads the
// new upper.
func TestAReleasedReadersUpperStaysWhereItWas(t *testing.T) {
	src, errs := newSource(t, 4, 0), newSource(t, 4, 0)
	g := share.NewRegistry()
	tok, err := g.Publish("idx", frontier.At(0), src.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	live := tok.Slot().Oks().Reader()
	h := src.h.Clone()
	shared := tok.Slot().Oks().Reader()
	b := share.NewBundle(src.h.Clone(), src.h.Clone(), nil)
	padded := b.IntoPadded()
	released := []trace.Reader{h, shared, padded.Oks}
	h.Release()
	shared.Release()
	b.Release()
	padded.Release()
	for _, r := range released {
		released = append(released, r.CloneReader())
	}
	bld := batch.NewBuilder(kv, 1)
	bld.Push1(1, 4, 4, 1)
	next, err := bld.Build(frontier.At(4), frontier.At(5))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.w.Insert(next); err != nil {
		t.Fatal(err)
	}
	if got := live.ReadUpper(); got != frontier.At(5) {
		t.Fatalf("a live reader's upper is %v, want {5}", got)
	}
	check := func(when string) {
		for i, r := range released {
			if got := r.ReadUpper(); got != frontier.At(4) {
				t.Errorf("%s: released reader %d (%T) reads upper %v, want {4}, its upper at release", when, i, r, got)
			}
		}
	}
	check("after an insert")
	live.Release()
	tok.Release()
	src.h.Release() // the trace's last handle: its storage is freed
	errs.h.Release()
	if src.h.State().Storage() != nil {
		t.Fatalf("the trace's storage outlives its last handle: %d live", src.h.State().Live())
	}
	check("after the trace is freed")
}

// An import through a local handle is on the handle's terms, as one
// through a shared reader is on the reader's: an as_of before the handle's
// logical hold is refused with a *SinceError even while another handle
// holds the trace back, and once the handle is released the importer it
// gave imports nothing (ErrReleased).
func TestAnImportThroughAHandleIsRefusedBeforeItsHold(t *testing.T) {
	src := newSource(t, 6, 0)
	other := src.h.Clone() // holds the trace at {0}
	src.h.SetLogicalCompaction(frontier.At(4))
	in, err := share.ImporterOf(src.h)
	if err != nil {
		t.Fatal(err)
	}
	if im, err := in.ImportWith(frontier.At(1), frontier.Empty(), nil); !errors.Is(err, share.ErrSinceBeyond) {
		if err == nil {
			im.Close()
			im.Reader().Release()
		}
		t.Fatalf("import at {1} through a handle holding {4}: %v, want share.ErrSinceBeyond", err)
	}
	im, err := in.ImportWith(frontier.At(4), frontier.Empty(), nil)
	if err != nil {
		t.Fatalf("import at the handle's hold: %v", err)
	}
	im.Close()
	im.Reader().Release()

	h := src.h.Clone()
	in, err = share.ImporterOf(h)
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	if im, err := in.ImportWith(frontier.At(4), frontier.Empty(), nil); !errors.Is(err, share.ErrReleased) {
		if err == nil {
			im.Close()
			im.Reader().Release()
		}
		t.Fatalf("import through the importer of a handle released since: %v, want share.ErrReleased", err)
	}
	if n := src.s.LocalPoint().Stats().Readers; n != 0 {
		t.Fatalf("%d readers of the trace's private point, want none", n)
	}
	other.Release()
	src.h.Release()
}

// A cut through any released trace.Reader — a local handle, a shared
// reader, a padded one of either — is one error to code that reads
// trace.Readers: it matches trace.ErrReleased.
func TestACutThroughAnyReleasedReaderIsTraceErrReleased(t *testing.T) {
	src := newSource(t, 4, 2)
	pt := src.s.LocalPoint()
	b := share.NewBundle(src.h.Clone(), pt.Reader(), nil)
	padded := b.IntoPadded()
	readers := []trace.Reader{b.Oks, b.Errs, padded.Oks, padded.Errs}
	b.Release()
	padded.Release()
	for i, r := range readers {
		if _, err := r.BatchesThrough(frontier.At(4)); !errors.Is(err, trace.ErrReleased) {
			t.Errorf("reader %d (%T) released cuts: %v, want trace.ErrReleased", i, r, err)
		}
	}
	if _, err := readers[1].BatchesThrough(frontier.At(4)); !errors.Is(err, share.ErrReleased) {
		t.Errorf("a released shared reader cuts: %v, want share.ErrReleased too", err)
	}
	src.h.Release()
}

// A verdict is settled once and collected once: settling an incarnation
// again after the reading runtime collected its peer bundle is the no-op
// Settle promises — it keeps no slot alive — and awaiting it again is
// ErrCollected at once, not a wait for a verdict no publisher will give.
func TestAVerdictIsSettledOnceAndCollectedOnce(t *testing.T) {
	g := share.NewRegistry()
	for _, side := range []share.Side{share.PublisherSide, share.ReaderSide} {
		if err := g.Bind(side); err != nil {
			t.Fatal(err)
		}
	}
	oks, errs := newSource(t, 3, 0), newSource(t, 0, 0)
	inc := share.Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 7}
	tok, err := g.PublishIncarnation(inc, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	g.Settle(inc, true)
	peer, err := g.AwaitPeerBundle(inc, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Settle(inc, true)
	g.Settle(inc, false)
	stop := make(chan struct{})
	timer := time.AfterFunc(5*time.Second, func() { close(stop) })
	defer timer.Stop()
	if b, err := g.AwaitPeerBundle(inc, stop); !errors.Is(err, share.ErrCollected) {
		if b != nil {
			b.Release()
		}
		t.Fatalf("awaiting a collected incarnation again: %v, want share.ErrCollected", err)
	}
	peer.Release()
	tok.Release()
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry after the publication and its peer bundle are released: %+v, want empty", st)
	}
	g.Leave(share.ReaderSide)
	g.Leave(share.PublisherSide)
	oks.h.Release()
	errs.h.Release()
}

// A collected verdict keeps no slot: the reading runtime that collected
// a peer bundle, released it and left gives up nothing more, and the
// publication its publisher still holds stays (Lookup finds it) until
// the token's release. A collected verdict that kept its slot would
// release the slot's reference a second time when the reader left,
// ending the slot under a live token.
func TestAReaderLeavingAfterItsCollectKeepsThePublication(t *testing.T) {
	g := share.NewRegistry()
	for _, side := range []share.Side{share.PublisherSide, share.ReaderSide} {
		if err := g.Bind(side); err != nil {
			t.Fatal(err)
		}
	}
	oks, errs := newSource(t, 3, 0), newSource(t, 0, 0)
	inc := share.Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	tok, err := g.PublishIncarnation(inc, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	g.Settle(inc, true)
	peer, err := g.AwaitPeerBundle(inc, nil)
	if err != nil {
		t.Fatal(err)
	}
	peer.Release()
	g.Leave(share.ReaderSide)
	if g.Lookup("idx", frontier.At(0)) == nil {
		t.Fatal("the reader's leave ended a publication its publisher holds")
	}
	tok.Release()
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry after the token's release: %+v, want empty", st)
	}
	g.Leave(share.PublisherSide)
	oks.h.Release()
	errs.h.Release()
}

// A second publication of an incarnation whose first is live is
// ErrPublished, and leaves the registry as it was: the first's token
// releases it (empty after), and a publication of the incarnation after
// that starts afresh.
func TestASecondPublicationOfALiveIncarnationIsRefused(t *testing.T) {
	g := share.NewRegistry()
	src, errs := newSource(t, 2, 0), newSource(t, 0, 0)
	tok, err := g.Publish("idx", frontier.Min(), src.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	if tok2, err := g.Publish("idx", frontier.Min(), src.s, errs.s); !errors.Is(err, share.ErrPublished) {
		if tok2 != nil {
			tok2.Release()
		}
		t.Fatalf("a second publication of a live incarnation: %v, want share.ErrPublished", err)
	}
	released := make(chan struct{})
	go func() {
		tok.Release()
		close(released)
	}()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the first publication's token is not released within 5s of a refused second: the registry stays locked")
	}
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry after the token's release: %+v, want empty", st)
	}
	tok, err = g.Publish("idx", frontier.Min(), src.s, errs.s)
	if err != nil {
		t.Fatalf("a publication after the first ended: %v", err)
	}
	tok.Release()
	src.h.Release()
	errs.h.Release()
}

// A bundle one of whose halves is no publishing spine's handle (a plain
// trace's) is not importable, and its refused publication leaves no slot.
func TestPublishingABundleWithAPlainHalfIsRefused(t *testing.T) {
	g := share.NewRegistry()
	src := newSource(t, 2, 0)
	plain, _ := trace.NewSpine(kv, spine.Options{})
	for _, b := range []*share.Bundle{share.NewBundle(src.h.Clone(), plain.Clone(), nil), share.NewBundle(plain.Clone(), src.h.Clone(), nil)} {
		if tok, err := g.PublishBundle(share.Incarnation{ID: "b", AsOf: frontier.Min()}, b); !errors.Is(err, share.ErrNotImportable) {
			if tok != nil {
				tok.Release()
			}
			t.Errorf("publishing a bundle with a plain half: %v, want share.ErrNotImportable", err)
		}
		b.Release()
	}
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Errorf("registry after the refused publications: %+v, want empty", st)
	}
	plain.Release()
	src.h.Release()
}

// A nil where a publication wants a trace — a nil half, a nil bundle, a
// nil point — is an error, never a panic on the publisher's goroutine,
// and leaves no slot behind.
func TestPublishingANilIsRefused(t *testing.T) {
	g := share.NewRegistry()
	src := newSource(t, 2, 0)
	for _, tc := range []struct {
		what string
		f    func() error
	}{
		{"publishing a nil oks half", func() error { _, err := g.Publish("a", frontier.Min(), nil, src.s); return err }},
		{"publishing a nil errs half", func() error { _, err := g.Publish("b", frontier.Min(), src.s, nil); return err }},
		{"publishing a nil bundle", func() error {
			_, err := g.PublishBundle(share.Incarnation{ID: "c", AsOf: frontier.Min()}, nil)
			return err
		}},
		{"attaching to a nil point", func() error { return src.s.Attach(nil) }},
	} {
		var err error
		noPanic := func() (panicked any) {
			defer func() { panicked = recover() }()
			err = tc.f()
			return nil
		}
		if p := noPanic(); p != nil {
			t.Errorf("%s panicked: %v", tc.what, p)
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", tc.what)
		}
	}
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Errorf("registry after refused publications: %+v, want empty", st)
	}
	if n := src.s.Points(); n != 0 {
		t.Errorf("the trace is attached to %d points, want none", n)
	}
	src.h.Release()
}

// A reader that outlives its publication keeps the last published chain,
// and nothing else of the publisher: once the trace's last handle is
// released, its publishing spine — merges in progress included, whose
// outputs may be as large as the trace — is collected though a reader of
// its point lives on.
func TestAReaderOutlivingItsPublicationKeepsNoPublishingSpine(t *testing.T) {
	var collected atomic.Bool
	r := func() *share.Reader {
		h, w, s := share.NewTrace(kv, spine.Options{Fanout: 2})
		pt := share.NewPoint()
		if err := s.Attach(pt); err != nil {
			t.Fatal(err)
		}
		for i := range uint64(40) {
			bld := batch.NewBuilder(kv, 1)
			bld.Push1(int64(i), 1, i, 1)
			b, err := bld.Build(frontier.At(i), frontier.At(i+1))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Insert(b); err != nil {
				t.Fatal(err)
			}
			trace.SetCompaction(h, frontier.At(i+1))
		}
		if s.Stats().Merging == 0 {
			t.Fatal("no merge in progress: the test would not show the spine's outputs kept")
		}
		runtime.AddCleanup(s.Inner(), func(c *atomic.Bool) { c.Store(true) }, &collected)
		r := pt.Reader()
		h.Release() // the publication ends; r keeps its chain
		return r
	}()
	for range 20 {
		runtime.GC()
		if collected.Load() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !collected.Load() {
		t.Fatal("the publishing spine of a released trace is kept by a reader of its point")
	}
	if bs, err := r.BatchesThrough(r.ReadUpper()); err != nil || len(bs) == 0 {
		t.Fatalf("the reader lost the last published chain: %d batches, %v", len(bs), err)
	}
	r.SetCompaction(frontier.At(50)) // wakes no one, panics nowhere
	r.Release()
}

// A peer that came first (PeerBundle before publication) reads a
// placeholder. If the publishing runtime leaves without publishing, no
// publisher will come while this reader stays bound (Bind refuses one):
// the placeholder's publication ends, so an import of it sees the end
// (Import.Closed) instead of waiting forever, and a publication of it
// afterwards is refused.
func TestAPublisherLeavingEndsThePlaceholdersItNeverPublished(t *testing.T) {
	g := share.NewRegistry()
	if err := g.Bind(share.PublisherSide); err != nil {
		t.Fatal(err)
	}
	if err := g.Bind(share.ReaderSide); err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("x", frontier.At(0))
	im, err := peer.Oks.(*share.Reader).Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	im.Drain(nil)
	select {
	case <-im.Ready(): // the seed's signal, taken
	default:
	}
	if im.Closed() {
		t.Fatal("a placeholder is closed before its publisher left")
	}
	g.Leave(share.PublisherSide)
	select {
	case <-im.Ready():
	default:
		t.Fatal("the end of the placeholder's publication woke no importer")
	}
	if !im.Closed() {
		t.Fatal("the publisher left without publishing, and the placeholder's import waits for it")
	}
	_, _, oks := share.NewTrace(kv, spine.Options{})
	_, _, errs := share.NewTrace(kv, spine.Options{})
	if _, err := g.Publish("x", frontier.At(0), oks, errs); !errors.Is(err, share.ErrAttached) {
		t.Fatalf("publishing an ended placeholder: %v, want share.ErrAttached", err)
	}
	im.Close()
	im.Reader().Release()
	peer.Release()
	g.Leave(share.ReaderSide)
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry left with %+v", st)
	}
}

// A publisher leaving while no reader is bound ends nothing it did not
// publish: a publisher that binds next may still come (Bind lets one),
// and publishes the placeholder a peer that came first reads.
func TestAPublisherLeavingWithNoReaderBoundKeepsItsPlaceholders(t *testing.T) {
	g := share.NewRegistry()
	if err := g.Bind(share.PublisherSide); err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("x", frontier.At(0))
	im, err := peer.Oks.(*share.Reader).Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	g.Leave(share.PublisherSide)
	if im.Closed() {
		t.Fatal("a publisher left with no reader bound, and the placeholder a next publisher may fill is closed")
	}
	if err := g.Bind(share.PublisherSide); err != nil {
		t.Fatal(err)
	}
	_, _, oks := share.NewTrace(kv, spine.Options{})
	_, _, errs := share.NewTrace(kv, spine.Options{})
	tok, err := g.Publish("x", frontier.At(0), oks, errs)
	if err != nil {
		t.Fatalf("the next publisher publishing the placeholder: %v", err)
	}
	if im.Closed() {
		t.Fatal("the placeholder's import is closed though its publication goes on")
	}
	tok.Release()
	im.Close()
	im.Reader().Release()
	peer.Release()
	g.Leave(share.PublisherSide)
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry left with %+v", st)
	}
}

// The zero Registry is an empty one, as NewRegistry's: a publication, its
// verdict and its peer bundle go through it, where the first publication
// panicked assigning to a nil map with the registry's lock held, and every
// later call waited for that lock forever.
func TestTheZeroRegistryIsAnEmptyOne(t *testing.T) {
	g := new(share.Registry)
	for _, side := range []share.Side{share.PublisherSide, share.ReaderSide} {
		if err := g.Bind(side); err != nil {
			t.Fatal(err)
		}
	}
	oks, errs := newSource(t, 3, 0), newSource(t, 0, 0)
	inc := share.Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	tok, err := g.PublishIncarnation(inc, oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	g.Settle(inc, true)
	peer, err := g.AwaitPeerBundle(inc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Lookup("idx", frontier.At(0)) == nil {
		t.Fatal("the published slot is not found")
	}
	peer.Release()
	tok.Release()
	if st := g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry after the publication and its peer bundle are released: %+v, want empty", st)
	}
	g.Leave(share.ReaderSide)
	g.Leave(share.PublisherSide)
	oks.h.Release()
	errs.h.Release()
}
