package trace_test

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// Tests through the exported API alone, as a program that uses core/trace
// as a library writes them.

// noPanic runs f, failing t if it panics.
func noPanic(t *testing.T, what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s panicked: %v", what, p)
		}
	}()
	f()
}

// Every call on a released handle is an error or a no-op, as trace.Reader
// promises, Clone and CloneReader included: the clone of a released handle
// is released too. It holds nothing — the trace is freed with its last live
// handle — its reads are errors and its Release is a no-op.
func TestTheCloneOfAReleasedHandleIsReleased(t *testing.T) {
	h, w := trace.NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	if err := w.Seal(frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	live := h.Clone()
	h.Release()
	st := h.State()

	var clones []trace.Reader
	noPanic(t, "Clone of a released handle", func() { clones = append(clones, h.Clone()) })
	noPanic(t, "CloneReader of a released handle", func() { clones = append(clones, h.CloneReader()) })
	var r trace.Reader = h
	noPanic(t, "CloneReader of a released trace.Reader", func() { clones = append(clones, r.CloneReader()) })
	noPanic(t, "Clone of a released handle's clone", func() { clones = append(clones, clones[0].CloneReader()) })
	for i, c := range clones {
		if !c.(*trace.Handle).Released() {
			t.Fatalf("clone %d of a released handle is live", i)
		}
		if _, err := c.BatchesThrough(frontier.At(3)); !errors.Is(err, trace.ErrReleased) {
			t.Fatalf("clone %d of a released handle cuts: %v, want trace.ErrReleased", i, err)
		}
		c.SetLogicalCompaction(frontier.At(1))
		c.SetPhysicalCompaction(frontier.At(1))
	}
	if n := st.Live(); n != 1 {
		t.Fatalf("%d live handles, want 1: the clones of a released handle hold nothing", n)
	}
	for _, c := range clones {
		c.Release()
	}
	if n := st.Live(); n != 1 {
		t.Fatalf("%d live handles after the clones' release, want 1", n)
	}
	live.Release()
	if st.Live() != 0 || st.Storage() != nil {
		t.Fatalf("the last live handle released: %d live, storage %v; want the trace freed", st.Live(), st.Storage())
	}
}

// The zero Handle (a var h trace.Handle, of no trace) is a released one:
// its reads are ErrReleased, its moves, Clone and Release do nothing, and
// share.ImporterOf refuses it as released, where each dereferenced its nil
// trace.
func TestTheZeroHandleIsReleased(t *testing.T) {
	var h trace.Handle
	if !h.Released() {
		t.Error("the zero Handle is not released")
	}
	noPanic(t, "BatchesThrough of the zero Handle", func() {
		if _, err := h.BatchesThrough(frontier.At(1)); !errors.Is(err, trace.ErrReleased) {
			t.Errorf("BatchesThrough: %v, want trace.ErrReleased", err)
		}
	})
	noPanic(t, "the compaction setters of the zero Handle", func() {
		h.SetLogicalCompaction(frontier.At(2))
		h.SetPhysicalCompaction(frontier.At(2))
		trace.SetCompaction(&h, frontier.At(3))
	})
	noPanic(t, "MapBatches of the zero Handle", func() { h.MapBatches(func(*batch.Batch) { t.Error("the zero Handle visited a batch") }) })
	noPanic(t, "ReadUpper of the zero Handle", func() {
		if got := h.ReadUpper(); got != frontier.Min() {
			t.Errorf("ReadUpper: %v, want {0}", got)
		}
	})
	noPanic(t, "Storage of the zero Handle", func() {
		if s := h.Storage(); s != nil {
			t.Errorf("Storage: %v, want nil", s)
		}
	})
	noPanic(t, "Clone of the zero Handle", func() {
		c := h.CloneReader()
		if !c.(*trace.Handle).Released() {
			t.Error("the clone of the zero Handle is live")
		}
		c.Release()
	})
	noPanic(t, "ImporterOf the zero Handle", func() {
		if _, err := share.ImporterOf(&h); !errors.Is(err, trace.ErrReleased) {
			t.Errorf("share.ImporterOf: %v, want trace.ErrReleased", err)
		}
	})
	noPanic(t, "Release of the zero Handle", h.Release)
	noPanic(t, "second Release of the zero Handle", h.Release)
}

// A nil batch is a writer's mistake, refused with an error, never a panic,
// whether the trace is a plain spine or a publishing one.
func TestANilBatchIsRefused(t *testing.T) {
	kv := batch.Arity{Key: 1, Val: 1}
	h, w := trace.NewSpine(kv, spine.Options{})
	ph, pw, _ := share.NewTrace(kv, spine.Options{})
	for _, w := range []*trace.Writer{w, pw} {
		var err error
		noPanic(t, "Insert(nil)", func() { err = w.Insert(nil) })
		if !errors.Is(err, spine.ErrNilBatch) {
			t.Errorf("Insert(nil): %v, want spine.ErrNilBatch", err)
		}
		if w.Upper() != frontier.Min() {
			t.Errorf("upper %v after a refused insert, want {0}", w.Upper())
		}
	}
	h.Release()
	ph.Release()
}

// TestACloneHoldsAtItsSourcesFrontiers is H3: a clone registers its own
// hold at the frontiers of the handle it is cloned from, not at the trace's
// meet, and keeps the trace there once the other handles are released.
func TestACloneHoldsAtItsSourcesFrontiers(t *testing.T) {
	h, _ := trace.NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	src := h.Clone()
	src.SetLogicalCompaction(frontier.At(5))
	src.SetPhysicalCompaction(frontier.At(4))
	c := src.Clone()
	defer c.Release()
	if c.LogicalCompaction() != frontier.At(5) || c.PhysicalCompaction() != frontier.At(4) {
		t.Fatalf("clone holds %v / %v, want its source's {5} / {4}", c.LogicalCompaction(), c.PhysicalCompaction())
	}
	h.Release()
	src.Release()
	s := c.State().Storage()
	if s.LogicalCompaction() != frontier.At(5) || s.PhysicalCompaction() != frontier.At(4) {
		t.Fatalf("storage compacted to %v / %v with only the clone left, want {5} / {4}", s.LogicalCompaction(), s.PhysicalCompaction())
	}
}

// A released handle reads the upper its trace had when it was released,
// not what the trace reaches after, and its clones read the same.
func TestAReleasedHandleReadsTheUpperItWasReleasedAt(t *testing.T) {
	h, w := trace.NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	defer h.Release()
	if err := w.Seal(frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	c := h.Clone()
	c.Release()
	if err := w.Seal(frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	if got := c.ReadUpper(); got != frontier.At(3) {
		t.Fatalf("released at {3}, then the trace sealed to {5}: ReadUpper %v, want {3}", got)
	}
	if got := c.Clone().ReadUpper(); got != frontier.At(3) {
		t.Fatalf("the clone of a handle released at {3}: ReadUpper %v, want {3}", got)
	}
	if got := h.ReadUpper(); got != frontier.At(5) {
		t.Fatalf("the live handle: ReadUpper %v, want {5}", got)
	}
}
