package trace

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// setterReader is a Reader that moves both holds at once, recording how it
// was asked to.
type setterReader struct {
	Reader
	both, one int
	at        frontier.Frontier
}

func (r *setterReader) SetCompaction(f frontier.Frontier)         { r.both++; r.at = f }
func (r *setterReader) SetLogicalCompaction(f frontier.Frontier)  { r.one++ }
func (r *setterReader) SetPhysicalCompaction(f frontier.Frontier) { r.one++ }

// TestSetCompactionMovesBothHolds: SetCompaction moves a local handle's
// logical and physical holds, and asks a CompactionSetter (a shared
// reader) once, not hold by hold.
func TestSetCompactionMovesBothHolds(t *testing.T) {
	h, _ := NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	defer h.Release()
	SetCompaction(h, frontier.At(3))
	if h.LogicalCompaction() != frontier.At(3) || h.PhysicalCompaction() != frontier.At(3) {
		t.Fatalf("handle holds %v / %v, want {3} / {3}", h.LogicalCompaction(), h.PhysicalCompaction())
	}
	r := &setterReader{}
	SetCompaction(r, frontier.At(5))
	if r.both != 1 || r.one != 0 || r.at != frontier.At(5) {
		t.Fatalf("setter asked %d times at once (at %v) and %d hold by hold, want once at {5}", r.both, r.at, r.one)
	}
}

// plainReader is a Reader that is neither a *Handle nor a
// CompactionSetter: it moves its holds one at a time.
type plainReader struct {
	Reader
	logical, physical frontier.Frontier
}

func (r *plainReader) SetLogicalCompaction(f frontier.Frontier)  { r.logical = f }
func (r *plainReader) SetPhysicalCompaction(f frontier.Frontier) { r.physical = f }

// TestSetCompactionMovesAPlainReadersHoldsOneByOne: a reader that only
// has the two setters has each of its holds moved, and a nil one is
// left alone.
func TestSetCompactionMovesAPlainReadersHoldsOneByOne(t *testing.T) {
	r := &plainReader{}
	SetCompaction(r, frontier.At(4))
	if r.logical != frontier.At(4) || r.physical != frontier.At(4) {
		t.Fatalf("reader holds %v / %v, want {4} / {4}", r.logical, r.physical)
	}
	SetCompaction((*plainReader)(nil), frontier.At(5))
}
