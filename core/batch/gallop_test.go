package batch

import "testing"

// TestGallopsFindTheFirstNotLess: gallop1 and gallop, from every start of
// every length of sorted keys up to 40 (so that the doubling steps end at,
// short of and past the end), return the first index at or after the
// start whose key is not less than the probe, for every probe below,
// between, on and above the keys. A seek that lands one short of or one
// past that index reads the wrong key.
func TestGallopsFindTheFirstNotLess(t *testing.T) {
	for n := 0; n <= 40; n++ {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = int64(2 * i)
		}
		for lo := 0; lo <= n; lo++ {
			for x := int64(-1); x <= int64(2*n+1); x++ {
				want := lo
				for want < n && xs[want] < x {
					want++
				}
				if got := gallop1(xs, lo, n, x); got != want {
					t.Fatalf("gallop1 of %d keys from %d for %d: %d, want %d", n, lo, x, got, want)
				}
				if got := gallop(lo, n, func(i int) bool { return xs[i] < x }); got != want {
					t.Fatalf("gallop of %d keys from %d for %d: %d, want %d", n, lo, x, got, want)
				}
			}
		}
	}
}
