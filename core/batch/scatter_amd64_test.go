package batch

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/internal/guardtest"
)

// TestScatterInBlocks: scatter's assembly runs scatterBlock records a call
// (so that no call outlasts a preemption's wait); with blocks of 1, 3, 32
// and 100 records, at every length from 0 to 260, each block's look-ahead
// stays within the bucket numbers (which end at a guard page), and every
// record goes where scatterGo puts it.
func TestScatterInBlocks(t *testing.T) {
	was := scatterBlock
	defer func() { scatterBlock = was }()
	rng := rand.New(rand.NewPCG(17, 2))
	for _, block := range []int{1, 3, 32, 100} {
		scatterBlock = block
		for n := range 261 {
			const nb = 7
			recs, ids, counts := guardtest.Slice[rec](t, n), guardtest.Slice[uint16](t, n), make([]uint32, nb+1)
			for i := range recs {
				recs[i] = rec{int64(rng.Uint64()), 0, 0, int64(i)}
				ids[i] = uint16(rng.IntN(nb))
				counts[int(ids[i])+1]++
			}
			for d := 1; d <= nb; d++ {
				counts[d] += counts[d-1]
			}
			wantCounts, want := slices.Clone(counts), make([]rec, n)
			scatterGo(unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(want)), unsafe.Pointer(unsafe.SliceData(ids)), unsafe.Pointer(unsafe.SliceData(wantCounts)), n)
			got := guardtest.Slice[rec](t, n)
			scatter(unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(got)), unsafe.Pointer(unsafe.SliceData(ids)), unsafe.Pointer(unsafe.SliceData(counts)), n)
			if !slices.Equal(got, want) || !slices.Equal(counts, wantCounts) {
				t.Fatalf("blocks of %d, n=%d: scatter differs from scatterGo", block, n)
			}
		}
	}
}
