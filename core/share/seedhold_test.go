package share

import (
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
	bs, err := im.Trace().BatchesThrough(seed)
	if err != nil {
		t.Fatalf("cutting the import's trace at its seed %v after the publisher merged: %v", seed, err)
	}
	eq(t, "rows at {2} through the seed", accumulate(bs, im.Presentation(), 2), p.want(2))
	im.Close()
	im.Trace().Release()
	if st := pt.Stats(); st.Readers != 0 {
		t.Fatalf("%d readers after the import closed and its trace was released", st.Readers)
	}
}
