//go:build invariants

package share

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// inside starts op on its own goroutine while the test holds mu, and waits
// (bounded) until op is inside the value's operation (busy reports it),
// blocked on mu. The returned function lets it finish and waits for it.
func inside(t *testing.T, lock, unlock func(), busy func() bool, op func()) (finish func()) {
	t.Helper()
	lock()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		op()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !busy() {
		if time.Now().After(deadline) {
			unlock()
			t.Fatalf("the first goroutine never entered its operation (it ended with %v)", <-done)
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		unlock()
		if v := <-done; v != nil {
			t.Fatalf("the first goroutine panicked: %v", v)
		}
	}
}

// misuse runs call, which must panic naming op and the misuse.
func misuse(t *testing.T, op string, call func()) {
	t.Helper()
	var v any
	func() {
		defer func() { v = recover() }()
		call()
	}()
	msg := fmt.Sprint(v)
	if v == nil || !strings.Contains(msg, op) || !strings.Contains(msg, "two goroutines") {
		t.Errorf("%s while another goroutine uses the value: panic %v, want one naming %q and the misuse", op, v, op)
	}
}

// Two goroutines on one Reader, which is used by one goroutine at a time
// (the package doc): in an invariant build the second panics, naming the
// misuse, whichever method it calls, instead of racing the first on the
// reader's holds (which only -race saw).
func TestTwoGoroutinesOnOneReaderPanic(t *testing.T) {
	p := newPub(t)
	p.rounds(3)
	pt := NewPoint()
	if err := p.s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	r := pt.Reader()
	finish := inside(t, pt.mu.Lock, pt.mu.Unlock, r.use.Busy, func() { r.SetLogicalCompaction(frontier.At(1)) })
	misuse(t, "Reader.LogicalCompaction", func() { r.LogicalCompaction() })
	misuse(t, "Reader.PhysicalCompaction", func() { r.PhysicalCompaction() })
	misuse(t, "Reader.SetLogicalCompaction", func() { r.SetLogicalCompaction(frontier.At(2)) })
	misuse(t, "Reader.SetPhysicalCompaction", func() { r.SetPhysicalCompaction(frontier.At(2)) })
	misuse(t, "Reader.SetCompaction", func() { r.SetCompaction(frontier.At(2)) })
	misuse(t, "Reader.Clone", func() { r.Clone() })
	misuse(t, "Reader.Clone", func() { r.CloneReader() })
	misuse(t, "Reader.Release", func() { r.Release() })
	misuse(t, "Reader.Released", func() { r.Released() })
	misuse(t, "Reader.BatchesThrough", func() { _, _ = r.BatchesThrough(frontier.At(1)) })
	misuse(t, "Reader.MapBatches", func() { r.MapBatches(func(*batch.Batch) {}) })
	misuse(t, "Reader.ReadUpper", func() { r.ReadUpper() })
	misuse(t, "Reader.ImportWith", func() { _, _ = r.Import(frontier.At(1), frontier.Empty()) })
	finish()
	// Passed on between calls, the reader is anybody's.
	done := make(chan struct{})
	go func() { defer close(done); r.SetCompaction(frontier.At(2)) }()
	<-done
	if r.LogicalCompaction() != frontier.At(2) {
		t.Fatalf("reader at %v after the second goroutine's SetCompaction, want {2}", r.LogicalCompaction())
	}
	r.Release()
	p.h.Release()
}

// Two goroutines on one Import likewise: the second panics, naming the
// misuse, instead of racing the first on the import's replay state.
func TestTwoGoroutinesOnOneImportPanic(t *testing.T) {
	p := newPub(t)
	p.rounds(3)
	pt := NewPoint()
	if err := p.s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	im, err := pt.Import(frontier.Min(), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	finish := inside(t, pt.mu.Lock, pt.mu.Unlock, im.use.Busy, func() { im.Drain(nil) })
	misuse(t, "Import.Drain", func() { im.Drain(nil) })
	misuse(t, "Import.Done", func() { im.Done() })
	misuse(t, "Import.Frontier", func() { im.Frontier() })
	misuse(t, "Import.End", func() { im.End() })
	misuse(t, "Import.Close", func() { im.Close() })
	finish()
	if im.Frontier() != frontier.At(3) {
		t.Fatalf("import at %v after the first goroutine's Drain, want {3}", im.Frontier())
	}
	im.Close()
	im.Reader().Release()
	p.h.Release()
}

// Two goroutines on one Padded, which is used by one goroutine at a time
// as the reader it wraps is: in an invariant build the second panics,
// naming the Padded's method, in each method that reads or writes the
// padding, instead of racing the first on it (IsPadded and a padded
// LogicalCompaction reach no inner method whose check would see it).
func TestTwoGoroutinesOnOnePaddedPanic(t *testing.T) {
	p := newPub(t)
	p.rounds(3)
	pt := NewPoint()
	if err := p.s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	r := pt.Reader()
	r.SetLogicalCompaction(frontier.At(1))
	pd := pad(r)
	if !pd.IsPadded() {
		t.Fatal("a reader held at {1} is not padded")
	}
	// The first goroutine moves past the inner since: the padding goes and
	// the inner reader's SetLogicalCompaction waits for the point's lock.
	finish := inside(t, pt.mu.Lock, pt.mu.Unlock, pd.use.Busy, func() { pd.SetLogicalCompaction(frontier.At(2)) })
	misuse(t, "Padded.IsPadded", func() { pd.IsPadded() })
	misuse(t, "Padded.LogicalCompaction", func() { pd.LogicalCompaction() })
	misuse(t, "Padded.SetLogicalCompaction", func() { pd.SetLogicalCompaction(frontier.At(3)) })
	misuse(t, "Padded.CloneReader", func() { pd.CloneReader() })
	finish()
	// Passed on between calls, the padded reader is anybody's.
	done := make(chan struct{})
	go func() { defer close(done); pd.SetLogicalCompaction(frontier.At(3)) }()
	<-done
	if pd.IsPadded() || pd.LogicalCompaction() != frontier.At(3) {
		t.Fatalf("padded %v at %v after the second goroutine's move, want unpadded at {3}", pd.IsPadded(), pd.LogicalCompaction())
	}
	pd.Release()
	if st := pt.Stats(); st.Readers != 0 {
		t.Fatalf("%d readers left after the padded reader's release, want 0", st.Readers)
	}
	p.h.Release()
}

// Two goroutines on one Bundle likewise: the second panics, naming the
// Bundle's method, in each method that reads or writes the bundle's own
// state, instead of racing the first on it (a Release racing a Clone
// would give the drop token a share too many or too few).
func TestTwoGoroutinesOnOneBundlePanic(t *testing.T) {
	p := newPub(t)
	p.rounds(3)
	pt := NewPoint()
	if err := p.s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	drops := 0
	b := NewBundle(pt.Reader(), pt.Reader(), func() { drops++ })
	// The first goroutine clones: the oks half's Clone waits for the
	// point's lock.
	var c *Bundle
	finish := inside(t, pt.mu.Lock, pt.mu.Unlock, b.use.Busy, func() { c = b.Clone() })
	misuse(t, "Bundle.Clone", func() { b.Clone() })
	misuse(t, "Bundle.Clone", func() { b.IntoPadded() })
	misuse(t, "Bundle.Release", func() { b.Release() })
	misuse(t, "Bundle.Describe", func() { b.Describe() })
	finish()
	// Passed on between calls, the bundle is anybody's.
	done := make(chan struct{})
	go func() { defer close(done); b.Release() }()
	<-done
	if drops != 0 {
		t.Fatalf("drop ran %d times with the clone live, want 0", drops)
	}
	c.Release()
	if st := pt.Stats(); drops != 1 || st.Readers != 0 {
		t.Fatalf("drop ran %d times and %d readers are left after both releases, want 1 and 0", drops, st.Readers)
	}
	p.h.Release()
}
