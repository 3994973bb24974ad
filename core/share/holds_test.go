package share

import (
	"errors"
	"maps"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Tests of holds and checks that each guard one behaviour: every test here
// fails on every run when the behaviour it is named after is removed.

// interleave runs f where a pause point fires inside p's critical section.
// If p's lock is free there, the section was split in two: f runs at once,
// on this goroutine, inside the window — the interleaving the invariant
// excludes happens on every run. If the lock is held (the section is whole),
// f runs on another goroutine and waits for the lock, so it runs after the
// section. The returned function waits for f.
func interleave(p *Point, f func()) (wait func()) {
	if p.mu.TryLock() {
		p.mu.Unlock()
		f()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() { <-done }
}

// sinceError returns err as a *SinceError, failing t if it is not one.
func sinceError(t *testing.T, err error) *SinceError {
	t.Helper()
	var se *SinceError
	if !errors.As(err, &se) || !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("err = %v, want a *SinceError wrapping ErrSinceBeyond", err)
	}
	return se
}

// Case: a placeholder's early reader holds below the since of the trace
// that would attach to it. Attaching would hand that reader coalesced data,
// so it is refused, and the point stays an unbound placeholder.
func TestAttachingACompactedTraceBelowAnEarlyReadersHoldIsRefused(t *testing.T) {
	pt := NewPoint()
	early, err := pt.ReaderAt(frontier.At(2)) // a placeholder is at {0}: admitted
	if err != nil {
		t.Fatal(err)
	}
	p := newPub(t)
	p.rounds(10)
	p.compact(frontier.At(6)) // unattached: nothing holds it back
	if got := p.s.LogicalCompaction(); got != frontier.At(6) {
		t.Fatalf("setup: the trace compacted to %v, want {6}", got)
	}
	if err := p.s.Attach(pt); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("attach over a reader at {2} of a trace at {6}: err = %v, want ErrSinceBeyond", err)
	}
	if st := pt.Stats(); st.Bound || st.Batches != 0 || st.Since != frontier.Min() {
		t.Fatalf("a refused attach changed the placeholder: %+v", st)
	}
	if p.s.Points() != 0 {
		t.Fatalf("a refused attach left the point attached to the publisher")
	}
	// The same through the registry: a peer that came first imports at its
	// as_of {2}; publishing a trace already compacted to {6} is refused.
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(2))
	im, err := b.Oks.(*Reader).Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	errs := newPub(t)
	if _, err := g.Publish("idx", frontier.At(2), p.s, errs.s); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("publish over a peer at {2} of a trace at {6}: err = %v, want ErrSinceBeyond", err)
	}
	if evs := im.Drain(nil); len(evs) != 0 {
		t.Fatalf("the early import received %v from a refused publication", evs)
	}
	im.Close()
	im.Reader().Release()
	b.Release()
	early.Release()
	if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
		t.Fatalf("registry after release: %+v", st)
	}
}

// Case: the point refuses an import below its since by itself (ImportIndex's
// outer check on the bundle would otherwise hide a point that admits it),
// and registers nothing for it.
func TestAnImportBelowThePointsSinceIsRefusedByThePoint(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	p.compact(frontier.At(6))
	im, err := pt.Import(frontier.At(3), frontier.Empty())
	if se := sinceError(t, err); se.Since != frontier.At(6) || se.AsOf != frontier.At(3) || im != nil {
		t.Fatalf("refusal names since %v and as_of %v, want {6} and {3}", se.Since, se.AsOf)
	}
	if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		t.Fatalf("a refused import registered something: %+v", st)
	}
	// At the since it is admitted.
	im, err = pt.Import(frontier.At(6), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	im.Close()
	im.Reader().Release()
}

// Case: importing through a reader at a time before that reader's own hold
// is refused by the reader, even when the point's since (held lower by
// another reader) would admit the time.
func TestAnImportBelowTheReadersOwnHoldIsRefusedByTheReader(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	low, err := pt.ReaderAt(frontier.At(2))
	if err != nil {
		t.Fatal(err)
	}
	r, err := pt.ReaderAt(frontier.At(7))
	if err != nil {
		t.Fatal(err)
	}
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(2) {
		t.Fatalf("setup: since %v, want {2} (held by the low reader)", got)
	}
	im, err := r.Import(frontier.At(4), frontier.Empty())
	if se := sinceError(t, err); se.Since != frontier.At(7) || se.AsOf != frontier.At(4) || im != nil {
		t.Fatalf("refusal names since %v and as_of %v, want the reader's {7} and {4}", se.Since, se.AsOf)
	}
	if st := pt.Stats(); st.Readers != 2 || st.Importers != 0 {
		t.Fatalf("a refused import registered something: %+v", st)
	}
	// The point itself admits {4}: the refusal was the reader's.
	im, err = pt.Import(frontier.At(4), frontier.Empty())
	if err != nil {
		t.Fatalf("the point refused {4} with its since at {2}: %v", err)
	}
	im.Close()
	im.Reader().Release()
	r.Release()
	if _, err := r.Import(frontier.At(7), frontier.Empty()); !errors.Is(err, ErrReleased) {
		t.Fatalf("import through a released reader: err = %v, want ErrReleased", err)
	}
	low.Release()
}

// Case: admission is one critical section. The publisher, allowed to
// compact to {8}, tries to do so exactly between an admission's since check
// at {3} and the registration of its hold; it must find the hold registered
// and stop at {3}, and the admitted reader or import must read the rows at
// {3}.
func TestAdmissionChecksTheSinceAndRegistersTheHoldInOneCriticalSection(t *testing.T) {
	for _, via := range []string{"ReaderAt", "Import"} {
		t.Run(via, func(t *testing.T) {
			p := newPub(t)
			pt := attached(t, p)
			p.rounds(10)
			var wait func()
			pt.pause = &pauses{admitted: func() {
				if wait == nil {
					wait = interleave(pt, func() { p.compact(frontier.At(8)) })
				}
			}}
			var bs []*batch.Batch
			var pres batch.Presentation
			var release func()
			switch via {
			case "ReaderAt":
				r, err := pt.ReaderAt(frontier.At(3))
				if err != nil {
					t.Fatal(err)
				}
				wait()
				if bs, err = r.BatchesThrough(r.ReadUpper()); err != nil {
					t.Fatal(err)
				}
				pres, release = batch.Identity(), r.Release
			case "Import":
				im, err := pt.Import(frontier.At(3), frontier.Empty())
				if err != nil {
					t.Fatal(err)
				}
				wait()
				bs, pres = drained(im), im.Presentation()
				release = func() { im.Close(); im.Reader().Release() }
			}
			if wait == nil {
				t.Fatal("the admission never reached its pause point")
			}
			if got := pt.Stats().Since; got != frontier.At(3) {
				t.Fatalf("since %v after a hold at {3} was admitted, want {3}", got)
			}
			eq(t, "rows at the admitted {3}", accumulate(bs, pres, 3), p.want(3))
			release()
		})
	}
}

// Case: an importer's seed and its replay queue are taken under one lock.
// The publisher inserts exactly between the seed and the queue's
// registration; the batch must reach the import once, through its queue.
func TestAnImportersSeedAndReplayQueueAreTakenUnderOneLock(t *testing.T) {
	gt := &goTB{TB: t}
	p := newPub(gt)
	pt := attached(t, p)
	p.rounds(6)
	var wait func()
	pt.pause = &pauses{seeded: func() {
		if wait == nil {
			wait = interleave(pt, func() { p.rounds(2) })
		}
	}}
	im, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if wait == nil {
		t.Fatal("the import never reached its pause point")
	}
	wait()
	if err := gt.failed(); err != nil {
		t.Fatal(err)
	}
	bs := drained(im)
	if im.Frontier() != frontier.At(8) {
		t.Fatalf("import frontier %v after the publisher reached {8}", im.Frontier())
	}
	got := map[[3]int64]int64{}
	for _, b := range bs {
		for _, u := range b.Updates() {
			got[[3]int64{u.Key[0], u.Val[0], int64(u.Time)}] += u.Diff
		}
	}
	want := maps.Clone(p.model)
	maps.DeleteFunc(want, func(_ [3]int64, d int64) bool { return d == 0 })
	if !maps.Equal(got, want) {
		t.Fatalf("the import delivered %v, want every update exactly once: %v", got, want)
	}
	im.Close()
	im.Reader().Release()
}

// Case: the publisher publishes a since before applying it. A reader that
// asks for {3} after the publisher has published {8} and before it applies
// it is refused; none is admitted at a time the trace is coalescing.
func TestAPublisherPublishesASinceBeforeApplyingIt(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	armed, fired := false, false
	var admitted *Reader
	var refusal error
	p.s.pause = &pauses{published: func() {
		if !armed {
			return
		}
		armed, fired = false, true
		admitted, refusal = pt.ReaderAt(frontier.At(3))
	}}
	armed = true
	p.compact(frontier.At(8))
	if !fired {
		t.Fatal("the publisher never reached its pause point")
	}
	if admitted != nil {
		admitted.Release()
		t.Fatalf("a reader at {3} was admitted while the publisher was applying {8}")
	}
	if se := sinceError(t, refusal); se.Since != frontier.At(8) {
		t.Fatalf("refused with since %v, want the published {8}", se.Since)
	}
	if got := p.s.LogicalCompaction(); got != frontier.At(8) {
		t.Fatalf("applied since %v, want {8}", got)
	}
}

// Case: a publisher makes progress when only a remote hold moves. Every
// change of a reader's hold — logical or physical downgrade, release —
// sets the publisher's wake and calls its notify function, and the
// publisher's loop (Refresh when TakeWake reports it) then moves the since.
func TestAReadersDowngradeWakesThePublisher(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(5)
	notified := 0
	p.s.SetNotify(func() { notified++ })
	r, err := pt.ReaderAt(frontier.At(2)) // physically at the coverage {5}
	if err != nil {
		t.Fatal(err)
	}
	p.rounds(5)
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(2) {
		t.Fatalf("setup: since %v, want the reader's {2}", got)
	}
	// woke reports whether the publisher was signalled, and clears it.
	woke := func() bool {
		n := notified
		notified = 0
		return p.s.TakeWake() && n > 0
	}
	woke()
	for _, step := range []struct {
		name  string
		move  func()
		since frontier.Frontier
	}{
		{"logical downgrade", func() { r.SetLogicalCompaction(frontier.At(5)) }, frontier.At(5)},
		{"physical downgrade", func() { r.SetPhysicalCompaction(frontier.At(10)) }, frontier.At(5)},
		{"release", r.Release, frontier.At(8)},
	} {
		step.move()
		if !woke() {
			t.Fatalf("%s: the publisher was not woken", step.name)
		}
		p.s.Refresh() // what the publisher's loop does on Wake
		if got := pt.Stats().Since; got != step.since {
			t.Fatalf("%s: since %v after the publisher woke, want %v", step.name, got, step.since)
		}
	}
}

// Case: readers moving their holds one after another notify the
// publisher's worker once, with the move that sets the wake; once the
// publisher has taken it (TakeWake), the next move notifies again.
func TestMovesNotifyOncePerWake(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(5)
	notified := 0
	p.s.SetNotify(func() { notified++ })
	var rs []*Reader
	for range 3 {
		r, err := pt.ReaderAt(frontier.At(1))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	p.compact(frontier.At(8))
	p.s.TakeWake()
	notified = 0
	for i, r := range rs {
		r.SetLogicalCompaction(frontier.At(3))
		if notified != 1 {
			t.Fatalf("after %d moves with the wake untaken: notified %d times, want 1", i+1, notified)
		}
	}
	for i, r := range rs {
		if !p.s.TakeWake() {
			t.Fatal("no wake after a move")
		}
		p.s.Refresh()
		r.SetLogicalCompaction(frontier.At(4))
		if notified != 2+i {
			t.Fatalf("a move after the publisher took the wake: notified %d times, want %d", notified, 2+i)
		}
	}
	if !p.s.TakeWake() {
		t.Fatal("no wake after the last move")
	}
	p.s.Refresh()
	if got := pt.Stats().Since; got != frontier.At(4) {
		t.Fatalf("since %v after every reader moved to {4}, want {4}", got)
	}
}

// Case: Exert alone applies a remote hold that moved, so a publisher whose
// wake was consumed without a Refresh still compacts as far as holds allow.
func TestExertAloneAppliesAMovedHold(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	r, err := pt.ReaderAt(frontier.At(2))
	if err != nil {
		t.Fatal(err)
	}
	p.compact(frontier.At(8))
	r.SetLogicalCompaction(frontier.At(6))
	p.s.TakeWake() // the wake is consumed; nobody refreshes
	if got := pt.Stats().Since; got != frontier.At(2) {
		t.Fatalf("setup: since %v moved without the publisher running", got)
	}
	p.w.Exert(1 << 20)
	if got := pt.Stats().Since; got != frontier.At(6) {
		t.Fatalf("since %v after Exert, want the moved hold's {6}", got)
	}
	r.Release()
}

// Case: ending a publication that no peer took releases its reserved peer
// hold: its points keep no remote hold and no reader.
func TestEndingAPublicationNoPeerTookLeavesNoReservedHold(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(4)
	tok, err := g.Publish("idx", frontier.At(2), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	pts := []*Point{tok.Slot().Oks(), tok.Slot().Errs()}
	if st := g.Stats(); st.Reserved != 1 {
		t.Fatalf("setup: %d reserved holds, want 1", st.Reserved)
	}
	for _, pt := range pts {
		if n := pt.Stats().Readers; n != 1 {
			t.Fatalf("setup: %d readers, want the reserved peer hold", n)
		}
	}
	tok.Release()
	for i, pt := range pts {
		l, ph := pt.RemoteHolds()
		if n := pt.Stats().Readers; n != 0 || !l.IsEmpty() || !ph.IsEmpty() {
			t.Fatalf("point %d after the publication ended: %d readers, holds %s/%s", i, n, l.String(), ph.String())
		}
	}
	if st := g.Stats(); st != (RegistryStats{}) {
		t.Fatalf("registry after the publication ended: %+v", st)
	}
	// A peer arriving after the end binds a fresh slot, not the ended one.
	b := g.PeerBundle("idx", frontier.At(2))
	if b.Oks.(*Reader).Point() == pts[0] {
		t.Fatal("a peer bound the ended publication's point")
	}
	b.Release()
}

// Case: a clone of a peer bundle shares its drop token, so the registry slot
// lives until the last clone is released, however many times the others are.
func TestAClonedBundleKeepsItsSlotAliveUntilTheLastCloneIsReleased(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(4)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	b := g.PeerBundle("idx", frontier.At(0))
	c := b.Clone()
	tok.Release()
	b.Release()
	b.Release() // twice is a no-op
	slot := g.Lookup("idx", frontier.At(0))
	if slot == nil || g.Stats().Slots != 1 {
		t.Fatalf("the slot ended with a clone alive: %+v", g.Stats())
	}
	if c.Oks.(*Reader).Point() != slot.Oks() {
		t.Fatal("the clone reads another slot")
	}
	im, err := c.Oks.(*Reader).Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "the clone's import at 3", accumulate(drained(im), im.Presentation(), 3), oks.want(3))
	im.Close()
	im.Reader().Release()
	c.Release()
	if g.Lookup("idx", frontier.At(0)) != nil || g.Stats().Slots != 0 {
		t.Fatalf("the slot outlived its last clone: %+v", g.Stats())
	}
}

// Case: padding disappears exactly when compaction is allowed to the inner
// since: before it only the padding moves, at it the inner hold moves.
func TestPaddingDisappearsWhenCompactionIsAllowedToTheInnerSince(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	oks.compact(frontier.At(5))
	errs.compact(frontier.At(5))
	tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.At(5))
	b := peer.IntoPadded() // a padded clone: the peer bundle goes
	peer.Release()
	b.AllowCompaction(frontier.At(4))
	for _, half := range []*Padded{b.Oks.(*Padded), b.Errs.(*Padded)} {
		if !half.IsPadded() || half.LogicalCompaction() != frontier.At(4) {
			t.Fatalf("below the inner since: padded %v at %v, want padded at {4}", half.IsPadded(), half.LogicalCompaction())
		}
	}
	b.AllowCompaction(frontier.At(5))
	for _, half := range []*Padded{b.Oks.(*Padded), b.Errs.(*Padded)} {
		if half.IsPadded() || half.LogicalCompaction() != frontier.At(5) {
			t.Fatalf("at the inner since: padded %v at %v, want unpadded at {5}", half.IsPadded(), half.LogicalCompaction())
		}
	}
	// Unpadded, the next step moves the peer hold and with it the since.
	b.AllowCompaction(frontier.At(7))
	oks.compact(frontier.At(9))
	if got := tok.Slot().Oks().Stats().Since; got != frontier.At(7) {
		t.Fatalf("since %v after the unpadded bundle moved to {7}", got)
	}
	b.Release()
	tok.Release()
}

// Case: a clone of a shared reader holds physically on its own, at the
// original's boundary: after the original is released and the publisher
// compacts, a cut through the clone at that boundary still reads.
func TestAClonedReaderHoldsPhysicallyOnItsOwn(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(5)
	r := pt.Reader() // holds physically at the coverage {5}
	p.rounds(3)
	c := r.Clone()
	r.Release()
	p.rounds(2)
	p.compact(frontier.At(2)) // the owner lets everything sealed merge
	if got := p.s.PhysicalCompaction(); got != frontier.At(5) {
		t.Fatalf("applied physical %v, want the clone's {5}", got)
	}
	bs, err := c.BatchesThrough(frontier.At(5))
	if err != nil {
		t.Fatalf("cut through the clone at {5}: %v", err)
	}
	want := map[[2]int64]int64{}
	for k, d := range p.model {
		if k[2] < 5 {
			want[[2]int64{k[0], k[1]}] += d
		}
	}
	maps.DeleteFunc(want, func(_ [2]int64, d int64) bool { return d == 0 })
	eq(t, "cut at {5}", accumulate(bs, batch.Identity(), 9), want)
	c.Release()
	p.compact(frontier.At(2))
	if got := p.s.PhysicalCompaction(); got != frontier.At(10) {
		t.Fatalf("applied physical %v after the clone's release, want {10}", got)
	}
}

// Case: a padded reader refuses an import before the since it reports, as a
// shared reader does, instead of importing from its inner since: once the
// padding is gone, the collection before the inner since is not empty, and
// an import at an earlier as_of would present it as empty.
func TestAPaddedReaderRefusesAnImportBeforeItsSince(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	oks.compact(frontier.At(5))
	errs.compact(frontier.At(5))
	tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.At(5))
	b := peer.IntoPadded() // a padded clone: the peer bundle goes
	peer.Release()
	half := b.Oks.(*Padded)

	// Padded at {0}: an import at {0} reads the empty padding, then the
	// inner trace from its since on.
	im, err := half.ImportWith(frontier.Min(), frontier.Empty(), nil)
	if err != nil {
		t.Fatalf("import at {0} of a padded reader: %v", err)
	}
	bs := drained(im)
	eq(t, "padded import at 7", accumulate(bs, im.Presentation(), 7), oks.want(7))
	im.Close()
	im.Reader().Release()

	// The padding moved to {3}: an import at {2} is before it.
	b.AllowCompaction(frontier.At(3))
	if _, err := half.ImportWith(frontier.At(2), frontier.Empty(), nil); sinceError(t, err).Since != frontier.At(3) {
		t.Fatalf("import at {2} of a reader padded at {3}: %v", err)
	}

	// Unpadded at {6}: the collection at {4} is not empty, and an import
	// there cannot be answered.
	b.AllowCompaction(frontier.At(6))
	oks.compact(frontier.At(9))
	if half.IsPadded() {
		t.Fatal("still padded after compaction to {6}")
	}
	if im, err := half.ImportWith(frontier.At(4), frontier.Empty(), nil); err == nil {
		bs := drained(im)
		t.Fatalf("import at {4} of a reader unpadded at {6} admitted: it reads %v, the collection at {4} is %v",
			accumulate(bs, im.Presentation(), 4), oks.want(4))
	} else if se := sinceError(t, err); se.Since != frontier.At(6) || se.AsOf != frontier.At(4) {
		t.Fatalf("refusal %v, want since {6} and as_of {4}", err)
	}
	b.Release()
	tok.Release()
}

// Case: a publication whose errs half is refused after its oks half
// attached fails whole: the oks trace is not left publishing into the
// incarnation's point, where the peer's hold would keep it from compacting
// with no token to end it, and the peer's import learns the publication
// ended.
func TestAPublicationRefusedOnItsSecondHalfReleasesTheFirst(t *testing.T) {
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(2)) // the peer came first: holds at {2}
	im, err := b.Oks.(*Reader).Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	errs.rounds(10)
	errs.compact(frontier.At(6)) // unattached: nothing holds it back
	if _, err := g.Publish("idx", frontier.At(2), oks.s, errs.s); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("publish with errs compacted to {6} over a peer at {2}: err = %v, want ErrSinceBeyond", err)
	}
	if !im.Closed() {
		t.Fatal("the peer's import does not see the failed publication ended")
	}
	oks.compact(frontier.At(8))
	if got := oks.s.LogicalCompaction(); got != frontier.At(8) {
		t.Fatalf("oks trace compacted to %v after a failed publication, want its own request {8}", got)
	}
	if n := oks.s.Points(); n != 0 {
		t.Fatalf("oks trace still attached to %d points", n)
	}
	im.Close()
	im.Reader().Release()
	b.Release()
	if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
		t.Fatalf("registry after release: %+v", st)
	}
	oks.h.Release()
	errs.h.Release()
}

// Case: the owner allows physical compaction beyond the trace's upper. A
// reader admitted afterwards holds physically at the coverage it was given,
// and the publisher honours that hold: the boundary stays cuttable however
// much is inserted and merged after it (§8 invariant 5). Once the reader
// releases, what the owner allowed applies, up to the upper.
func TestAPhysicalCompactionBeyondTheUpperHonoursALaterReadersHold(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	p.h.SetPhysicalCompaction(frontier.At(100))
	p.s.Refresh()
	r, err := pt.ReaderAt(frontier.Min())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.PhysicalCompaction(); got != frontier.At(10) {
		t.Fatalf("reader holds physically at %v, want the coverage {10}", got)
	}
	p.rounds(10)
	for p.w.Exert(1 << 20) {
	}
	bs, err := r.BatchesThrough(frontier.At(10))
	if err != nil {
		t.Fatalf("cut at the reader's physical hold {10}: %v", err)
	}
	eq(t, "cut at {10}", accumulate(bs, batch.Identity(), 20), p.want(9))
	r.Release()
	if p.s.TakeWake() {
		p.s.Refresh()
	}
	p.rounds(1)
	if got := p.s.PhysicalCompaction(); got != frontier.At(21) {
		t.Fatalf("applied physical %v after the reader's release, want the upper {21}", got)
	}
	for p.w.Exert(1 << 20) {
	}
	if st := p.s.Stats(); st.Batches != 1 {
		t.Fatalf("%d batches after exerting with everything admitted, want 1", st.Batches)
	}
}

// Case: a publication whose oks half is refused, before its errs half is
// tried, fails whole too: neither trace is attached, and the peer's imports
// of both halves learn the publication ended instead of waiting for one
// that will not come.
func TestAPublicationRefusedOnItsFirstHalfEndsBoth(t *testing.T) {
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(2)) // the peer came first: holds at {2}
	imO, err := b.Oks.(*Reader).Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	imE, err := b.Errs.(*Reader).Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	errs.rounds(10)
	oks.compact(frontier.At(6)) // unattached: nothing holds it back
	if _, err := g.Publish("idx", frontier.At(2), oks.s, errs.s); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("publish with oks compacted to {6} over a peer at {2}: err = %v, want ErrSinceBeyond", err)
	}
	if !imO.Closed() || !imE.Closed() {
		t.Fatalf("the peer's imports do not see the failed publication ended: oks %v, errs %v", imO.Closed(), imE.Closed())
	}
	if n, m := oks.s.Points(), errs.s.Points(); n != 0 || m != 0 {
		t.Fatalf("traces attached to %d and %d points after a failed publication", n, m)
	}
	errs.compact(frontier.At(8))
	if got := errs.s.LogicalCompaction(); got != frontier.At(8) {
		t.Fatalf("errs trace compacted to %v after a failed publication, want its own request {8}", got)
	}
	for _, im := range []*Import{imO, imE} {
		im.Close()
		im.Reader().Release()
	}
	b.Release()
	if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
		t.Fatalf("registry after release: %+v", st)
	}
	oks.h.Release()
	errs.h.Release()
}

// Case: an unattached publishing spine whose owner allows physical
// compaction beyond its upper applies it up to the upper, and each insert
// moves it on with the upper (no reader can hold it back): new batches are
// admitted to merging as they arrive, not left pending until the next
// change of holds.
func TestAnUnattachedSpineMovesItsPhysicalFrontierWithItsUpper(t *testing.T) {
	p := newPub(t)
	p.rounds(10)
	p.h.SetPhysicalCompaction(frontier.At(100))
	if got := p.s.PhysicalCompaction(); got != frontier.At(10) {
		t.Fatalf("applied physical %v at upper {10}, want {10}", got)
	}
	p.rounds(10)
	if got := p.s.PhysicalCompaction(); got != frontier.At(20) {
		t.Fatalf("applied physical %v after inserts to {20}, want {20}", got)
	}
	for p.w.Exert(1 << 20) {
	}
	if st := p.s.Stats(); st.Batches != 1 {
		t.Fatalf("%d batches after exerting with everything admitted, want 1", st.Batches)
	}
	eq(t, "merged at 19", accumulate(p.s.Inner().Batches(), batch.Identity(), 19), p.want(19))
	p.h.Release()
}

// Case: a publication refused on its first half ends both of its points
// while neither has a publisher. An ended point stays ended: attaching a
// trace to it afterwards is refused (ErrAttached), and its importers,
// told of the end, are seeded with nothing.
func TestAnEndedPlaceholderCannotBeAttached(t *testing.T) {
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(2))
	pt := b.Errs.(*Reader).Point()
	im, err := pt.Import(frontier.At(2), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	oks.compact(frontier.At(6))
	if _, err := g.Publish("idx", frontier.At(2), oks.s, errs.s); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("publish with oks compacted past the peer: err = %v, want ErrSinceBeyond", err)
	}
	im.Drain(nil)
	if !im.Closed() {
		t.Fatal("the import does not see the refused publication ended")
	}
	other := newPub(t)
	other.rounds(4)
	if err := other.s.Attach(pt); !errors.Is(err, ErrAttached) {
		t.Fatalf("attaching a trace to an ended point: %v, want ErrAttached", err)
	}
	if evs := im.Drain(nil); len(evs) != 0 {
		t.Fatalf("the ended point's import received %v after its end", evs)
	}
	if n := other.s.Points(); n != 0 {
		t.Fatalf("the trace is attached to %d points, want none", n)
	}
	im.Close()
	im.Reader().Release()
	b.Release()
	for _, p := range []*pub{oks, errs, other} {
		p.h.Release()
	}
}

// Case: moving a reader's holds to an earlier frontier leaves them where
// they were, and the getters report the join (invariant 8, H2). Without the
// join the move takes the hold back below the published since: nothing in
// this package caught that, only a runtime test that then waited forever.
func TestAnEarlierMoveLeavesAReadersHolds(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	r, err := pt.ReaderAt(frontier.At(4))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(4) {
		t.Fatalf("setup: since %v, want the reader's {4}", got)
	}
	physical := r.PhysicalCompaction()
	r.SetLogicalCompaction(frontier.At(2))
	r.SetPhysicalCompaction(frontier.Min())
	if got := r.LogicalCompaction(); got != frontier.At(4) {
		t.Fatalf("logical hold %v after a move to {2}, want {4}", got)
	}
	if got := r.PhysicalCompaction(); got != physical {
		t.Fatalf("physical hold %v after a move to {0}, want %v", got, physical)
	}
	p.s.Refresh()
	if got := pt.Stats().Since; got != frontier.At(4) {
		t.Fatalf("since %v after an earlier move, want {4}", got)
	}
	r.SetLogicalCompaction(frontier.At(6))
	p.s.Refresh()
	if got := pt.Stats().Since; got != frontier.At(6) {
		t.Fatalf("since %v after a move to {6}, want {6}", got)
	}
}
