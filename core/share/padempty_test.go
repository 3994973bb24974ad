package share_test

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
)

// A half whose hold is {} (its holder let every time go: AllowCompaction
// of {} drops an index, docs/semantics.md §4.2) is not padded
// (docs/semantics.md §4.5): there is no inner since for the padding to end
// at, and padded from {0} it presented a trace that goes on as an empty
// collection complete forever. It reports {}, and every import through it
// is refused with a *SinceError, as through the reader it pads.
func TestAHalfHeldAtTheEmptyFrontierIsNotPadded(t *testing.T) {
	g := share.NewRegistry()
	oks, errs := newSource(t, 10, 5), newSource(t, 10, 5)
	tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.At(5))
	peer.AllowCompaction(frontier.Empty())
	padded := peer.IntoPadded()
	for _, p := range []*share.Padded{padded.Oks.(*share.Padded), padded.Errs.(*share.Padded)} {
		if p.IsPadded() {
			t.Fatalf("a reader held at {} is padded, reporting since %v; want it unpadded, at {}", p.LogicalCompaction())
		}
		if got := p.LogicalCompaction(); !got.IsEmpty() {
			t.Fatalf("a padded reader held at {} reports since %v, want {}", got)
		}
		im, err := p.ImportWith(frontier.Min(), frontier.Empty(), nil)
		var se *share.SinceError
		if err == nil {
			evs := im.Drain(nil)
			t.Fatalf("an import at {0} through a padded reader held at {} was admitted (events %+v, trace upper %v)", evs, p.ReadUpper())
		}
		if !errors.As(err, &se) || !se.Since.IsEmpty() {
			t.Fatalf("import at {0} through a padded reader held at {}: %v, want a *SinceError at {}", err)
		}
	}
	padded.Release()
	peer.Release()
	tok.Release()
	oks.h.Release()
	errs.h.Release()
}
