package batch

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
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
	ups := genKeyed(n, 7, 0, "full")
	rows, times, diffs := make([]int64, 2*n), make([]uint64, n), make([]int64, n)
	for i, u := range ups {
		rows[2*i], rows[2*i+1], times[i], diffs[i] = u.k, u.v, u.t, u.d
	}
	bt := NewBatcher(Arity{1, 1}, n)
	seal := func() {
		bt.PushChunk(rows, 2, []int{0}, []int{1}, times, diffs)
		if _, err := bt.Seal(frontier.At(0), frontier.At(10)); err != nil {
			t.Fatal(err)
		}
	}
	seal()
	if a := testing.AllocsPerRun(20, seal); a != 3 {
		t.Fatalf("a seal of %d updates: %v allocations, want 3 (the block, the offsets, the batch)", n, a)
	}
}
