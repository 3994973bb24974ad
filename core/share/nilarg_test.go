package share_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/trace"
)

// A bundle needs both halves: NewBundle refuses a nil one at once, naming
// it, where the bundle it returned would panic with a nil dereference in
// whichever method a caller reached first.
func TestNewBundleWithANilHalfPanicsNamingIt(t *testing.T) {
	src := newSource(t, 2, 0)
	defer src.h.Release()
	for _, c := range []struct {
		oks, errs trace.Reader
		want      string
	}{
		{nil, src.h, "nil oks half"},
		{src.h, nil, "nil errs half"},
		{nil, nil, "nil oks and errs halves"},
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, c.want) {
					t.Fatalf("NewBundle panicked with %q, want one naming the %s", msg, c.want)
				}
			}()
			share.NewBundle(c.oks, c.errs, nil)
		}()
	}
}

// A nil MapBatches visitor visits nothing through a shared reader, as
// through a local handle.
func TestASharedReadersMapBatchesWithANilVisitorVisitsNothing(t *testing.T) {
	oks, errs := newSource(t, 4, 0), newSource(t, 4, 0)
	g := share.NewRegistry()
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	r := tok.Slot().Oks().Reader()
	defer r.Release()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("MapBatches(nil) panicked: %v", p)
		}
	}()
	r.MapBatches(nil)
	padded := share.NewBundle(r.CloneReader(), r.CloneReader(), nil).IntoPadded()
	defer padded.Release()
	padded.Oks.MapBatches(nil)
	n := 0
	r.MapBatches(func(*batch.Batch) { n++ })
	if n == 0 {
		t.Fatal("a non-nil visitor visited nothing")
	}
}

// A typed nil half (a nil *trace.Handle, *share.Reader or *share.Padded
// behind trace.Reader) is not == nil, and passed the nil checks only to
// panic at its first use. NewBundle refuses it with the panic of an
// untyped nil, and ImporterOf and PublishBundle with the error of one
// (ErrNotImportable).
func TestATypedNilHalfIsRefusedAsANilIs(t *testing.T) {
	src := newSource(t, 2, 0)
	defer src.h.Release()
	for _, typed := range []trace.Reader{(*trace.Handle)(nil), (*share.Reader)(nil), (*share.Padded)(nil)} {
		for _, c := range []struct {
			oks, errs trace.Reader
			want      string
		}{
			{typed, src.h, "nil oks half"},
			{src.h, typed, "nil errs half"},
			{typed, typed, "nil oks and errs halves"},
		} {
			func() {
				defer func() {
					if msg := fmt.Sprint(recover()); !strings.Contains(msg, c.want) {
						t.Fatalf("NewBundle with a %T half panicked with %q, want one naming the %s", typed, msg, c.want)
					}
				}()
				share.NewBundle(c.oks, c.errs, nil)
			}()
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("ImporterOf(%T(nil)) panicked: %v", typed, p)
				}
			}()
			if in, err := share.ImporterOf(typed); !errors.Is(err, share.ErrNotImportable) {
				t.Fatalf("ImporterOf(%T(nil)) = %v, %v, want ErrNotImportable", typed, in, err)
			}
		}()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("PublishBundle of a %T(nil) half panicked: %v", typed, p)
				}
			}()
			g := share.NewRegistry()
			tok, err := g.PublishBundle(share.Incarnation{ID: "idx"}, &share.Bundle{Oks: typed, Errs: src.h})
			if !errors.Is(err, share.ErrNotImportable) {
				t.Fatalf("PublishBundle of a %T(nil) half = %v, %v, want ErrNotImportable", typed, tok, err)
			}
		}()
	}
}

// trace.SetCompaction of a nil *share.Reader does nothing, as of a nil
// reader of any other type: the reader's own SetCompaction checks its
// receiver, so the per-step call needs no reflection to tell a typed nil.
func TestSetCompactionOfANilSharedReaderDoesNothing(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("SetCompaction((*share.Reader)(nil)) panicked: %v", p)
		}
	}()
	trace.SetCompaction((*share.Reader)(nil), frontier.At(3))
	(*share.Reader)(nil).SetCompaction(frontier.At(3))
}
