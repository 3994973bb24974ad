package batch

import (
	"testing"

	"github.com/tracebench/tracebench/internal/invariants"
)

// A seal of a round's updates (one-column keys and vals, pushed whole)
// allocates what its batch keeps and nothing else: one block for the
// columns, one for the offsets, the batch itself. Copying the columns
// into a second Batch struct, or scratch made afresh, shows here.
func TestSealAllocatesOnlyItsBatch(t *testing.T) {
	if invariants.Enabled {
		t.Skip("invariant builds allocate for their checks")
	}
	const n = 1000
	_, _, _, seal := sealRound(t, n)
	seal()
	if a := testing.AllocsPerRun(20, seal); a != 3 {
		t.Fatalf("a seal of %d updates: %v allocations, want 3 (the block, the offsets, the batch)", n, a)
	}
}
