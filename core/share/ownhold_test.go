package share

import (
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

// An import's own hold lives in its replay queue, not among the point's
// counted reader holds (queue.logical, queue.physical). These tests pin what
// that hold must still do as a reader's would: count in every meet, show in
// RemoteHolds, wake the publisher when it moves and when it goes.

// TestAnImportsOwnHoldHoldsPhysically: with its consumer reader released, an
// import that has not drained holds the publisher's physical compaction at
// its seed, and lets it go to what it acknowledges once it drains.
func TestAnImportsOwnHoldHoldsPhysically(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im := liveImport(t, pt, 3)
	im.Reader().Release()
	p.rounds(5)
	p.compact(frontier.At(12))
	if got := p.s.PhysicalCompaction(); got != frontier.At(10) {
		t.Fatalf("physical compaction %v with an undrained import seeded at {10}, want {10}", got)
	}
	drained(im)
	p.compact(frontier.At(12))
	if got := p.s.PhysicalCompaction(); got != frontier.At(15) {
		t.Fatalf("physical compaction %v after the import acknowledged {15}, want {15}", got)
	}
	if got := pt.Stats().Since; got != frontier.At(12) {
		t.Fatalf("since %v after the import acknowledged {15}, want the local {12}", got)
	}
}

// TestRemoteHoldsListsAnImportsOwnHold: RemoteHolds counts an import's own
// hold beside its consumer reader, logically and physically, and follows
// it as the import drains and closes.
func TestRemoteHoldsListsAnImportsOwnHold(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im := liveImport(t, pt, 3)
	l, ph := pt.RemoteHolds()
	if l.Count(frontier.At(3)) != 2 || l.Len() != 2 || ph.Count(frontier.At(10)) != 2 || ph.Len() != 2 {
		t.Fatalf("holds after import: logical %v, physical %v; want {3:2} and {10:2}", l.String(), ph.String())
	}
	p.rounds(2)
	drained(im)
	l, ph = pt.RemoteHolds()
	if l.String() != "{3:1, 12:1}" || ph.String() != "{10:1, 12:1}" {
		t.Fatalf("holds after draining to {12}: logical %v, physical %v; want {3:1, 12:1} and {10:1, 12:1}", l.String(), ph.String())
	}
	im.Close()
	l, ph = pt.RemoteHolds()
	if l.String() != "{3:1}" || ph.String() != "{10:1}" {
		t.Fatalf("holds after close: logical %v, physical %v; want the consumer's alone", l.String(), ph.String())
	}
	if got := pt.Stats().Readers; got != 1 {
		t.Fatalf("%d readers after close, want 1", got)
	}
}

// TestAnImportsOwnHoldWakesThePublisher: the own hold moving (a drain that
// acknowledges more) and going (Close) each set the publisher's wake,
// as a reader's downgrade and release do.
func TestAnImportsOwnHoldWakesThePublisher(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(4)
	im := liveImport(t, pt, 1)
	p.s.TakeWake()
	p.rounds(2)
	p.s.TakeWake()
	drained(im)
	if !p.s.TakeWake() {
		t.Fatal("a drain that moved the import's own hold did not wake the publisher")
	}
	im.Close()
	if !p.s.TakeWake() {
		t.Fatal("closing the import did not wake the publisher")
	}
}

// TestDrainWithNothingPendingTakesNoLock: a drain with no event pushed since
// the last one returns without the point's lock (queue.pending), so the
// passes a dataflow runs after every move cost no lock per import.
func TestDrainWithNothingPendingTakesNoLock(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(3)
	im := liveImport(t, pt, 1)
	drained(im)
	pt.mu.Lock()
	done := make(chan []Event)
	go func() { done <- im.Drain(nil) }()
	select {
	case evs := <-done:
		pt.mu.Unlock()
		if len(evs) != 0 {
			t.Fatalf("a drain with nothing pushed returned %d events", len(evs))
		}
	case <-time.After(10 * time.Second):
		pt.mu.Unlock()
		<-done
		t.Fatal("a drain with nothing pending waited for the point's lock")
	}
	// What is pushed next is taken.
	p.rounds(1)
	if evs := im.Drain(nil); len(evs) != 2 {
		t.Fatalf("after one round the drain returned %d events, want its batch and frontier", len(evs))
	}
}
