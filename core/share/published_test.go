package share_test

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
)

// TestAnInsertCallsThePublishedFunction: once an import has a published
// function (Import.OnPublished), a batch its publisher inserts calls that
// function and not the wake function, and the import's channel is
// signalled as before; every other arrival — the seed, a failure, the
// publication's end — still calls the wake function.
func TestAnInsertCallsThePublishedFunction(t *testing.T) {
	g := share.NewRegistry()
	oks, errs := newSource(t, 3, 0), newSource(t, 3, 0)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	var wakes, published, updates int
	im, err := tok.Slot().Oks().ImportWith(frontier.At(0), frontier.Empty(), func() { wakes++ })
	if err != nil {
		t.Fatal(err)
	}
	defer im.Reader().Release()
	defer im.Close()
	if wakes != 1 {
		t.Fatalf("the seed called the wake function %d times, want 1", wakes)
	}
	im.OnPublished(func(n int) {
		published++
		updates += n
	})
	im.Drain(nil)
	<-im.Ready()
	for r := uint64(3); r < 6; r++ {
		bld := batch.NewBuilder(kv, 1)
		bld.Push1(int64(r), int64(r), r, 1)
		b, err := bld.Build(frontier.At(r), frontier.At(r+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := oks.w.Insert(b); err != nil {
			t.Fatal(err)
		}
		select {
		case <-im.Ready():
		default:
			t.Fatalf("insert at %d: the import's channel was not signalled", r)
		}
	}
	if published != 3 || wakes != 1 || updates != 3 {
		t.Fatalf("three inserts of one update called the published function %d times with %d updates, and the wake function %d more, want 3, 3 and 0", published, updates, wakes-1)
	}
	oks.s.Fail(frontier.At(9), errors.New("writer failed"))
	if published != 3 || wakes != 2 {
		t.Fatalf("a failure called the published function %d times and the wake function %d times, want 3 and 2", published, wakes)
	}
}
