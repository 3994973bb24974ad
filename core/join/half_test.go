package join

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortOrdersSignedKeys: the ready proposals' sort orders keys as
// signed int64 (the order the batches' keys follow), whatever bytes they
// share.
func TestRadixSortOrdersSignedKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		for _, gen := range []func() int64{
			func() int64 { return rng.Int64() - math.MaxInt64/2 },
			func() int64 { return int64(rng.IntN(10)) - 5 },
			func() int64 { return []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}[rng.IntN(5)] },
			func() int64 { return int64(rng.IntN(1 << 20)) },
		} {
			keys := make([]int64, n)
			xs := make([]keyIdx, n)
			for i := range xs {
				keys[i] = gen()
				xs[i] = keyIdx{k: uint64(keys[i]) ^ 1<<63, i: uint32(i)}
			}
			sorted, _ := radixSort(xs, nil)
			got := make([]int64, n)
			for i, x := range sorted {
				got[i] = keys[x.i]
			}
			if !slices.IsSorted(got) {
				t.Fatalf("n=%d: not sorted: %v", n, got[:min(n, 20)])
			}
			seen := make([]bool, n)
			for _, x := range sorted {
				if seen[x.i] {
					t.Fatalf("n=%d: index %d twice", n, x.i)
				}
				seen[x.i] = true
			}
		}
	}
}
