package trace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// A nil storage is a programmer error New reports at once, by name, and
// not as a nil dereference of whatever first touches it.
func TestNewOfANilStoragePanicsNamingIt(t *testing.T) {
	defer func() {
		p := recover()
		if msg := fmt.Sprint(p); !strings.Contains(msg, "trace: New of a nil storage") {
			t.Fatalf("New(nil) panicked with %q, want a panic naming the nil storage", msg)
		}
	}()
	trace.New(nil)
}

// A nil MapBatches visitor visits nothing: through a live handle over a
// trace with batches, and through the spine itself.
func TestMapBatchesWithANilVisitorVisitsNothing(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	h, w := trace.NewSpine(ar, spine.Options{})
	defer h.Release()
	bld := batch.NewBuilder(ar, 1)
	bld.Push1(1, 2, 0, 1)
	b, err := bld.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Insert(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal(frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	noPanic(t, "Handle.MapBatches(nil)", func() { h.MapBatches(nil) })
	noPanic(t, "Spine.MapBatches(nil)", func() { h.State().Storage().MapBatches(nil) })
	// The Seal moved the upper alone: the chain is the one batch.
	n := 0
	h.MapBatches(func(*batch.Batch) { n++ })
	if n != 1 || h.ReadUpper() != frontier.At(3) {
		t.Fatalf("visited %d batches up to %v, want 1 up to {3}", n, h.ReadUpper())
	}
}

// SetCompaction of a nil reader does nothing, as its doc comment says:
// before, it panicked with a nil dereference.
func TestSetCompactionOfANilReaderDoesNothing(t *testing.T) {
	noPanic(t, "SetCompaction(nil)", func() { trace.SetCompaction(nil, frontier.At(3)) })
}

// A typed nil — a nil *spine.Spine as a Storage, a nil *Handle as a
// Reader — is not == nil behind an interface, and passed the nil checks
// only to panic at its first use with a nil dereference. New refuses it
// with the panic of an untyped nil, and SetCompaction of one does nothing,
// as of a nil reader.
func TestATypedNilIsRefusedAsANilIs(t *testing.T) {
	for _, c := range []struct {
		what    string
		storage trace.Storage
	}{
		{"(*spine.Spine)(nil)", (*spine.Spine)(nil)},
		{"a nil storage of another type", (*nilStorage)(nil)},
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, "trace: New of a nil storage") {
					t.Fatalf("New(%s) panicked with %q, want a panic naming the nil storage", c.what, msg)
				}
			}()
			trace.New(c.storage)
		}()
	}
	noPanic(t, "SetCompaction((*trace.Handle)(nil))", func() { trace.SetCompaction((*trace.Handle)(nil), frontier.At(3)) })
}

// nilStorage is a Storage of a type the trace package does not know.
type nilStorage struct{ *spine.Spine }
