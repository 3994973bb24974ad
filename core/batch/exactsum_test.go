package batch

import (
	"errors"
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestBuildSumsARunExactly: a build consolidates the diffs of one (key,
// val, time) exactly, so a partial sum that leaves int64 is no overflow
// when the run's total fits (MaxInt64, +1, -1 is MaxInt64), whatever
// order the diffs come in; only a total out of int64 overflows, saturated
// to the bound of its own sign. Every consolidation path: one-column key
// and val, a key alone, and wider rows.
func TestBuildSumsARunExactly(t *testing.T) {
	const mx, mn = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		diffs []int64
		want  int64
		over  bool
	}{
		{[]int64{mx, 1, -1}, mx, false},
		{[]int64{mn, -1, 2}, mn + 1, false},
		{[]int64{mx, mx, mn, mn, 1}, -1, false},
		{[]int64{mx, 1}, mx, true},
		{[]int64{mn, -1}, mn, true},
		{[]int64{mx, 1, 1, -5}, mx - 3, false},
		{[]int64{mn, mn, 1}, mn, true},
		{[]int64{mx, mx, -1}, mx, true},
	} {
		for _, ar := range []Arity{{Key: 1, Val: 1}, {Key: 1}, {Key: 2, Val: 2}} {
			for _, perm := range permutations(len(tc.diffs)) {
				b := NewBuilder(ar, 0)
				key, val := make([]int64, ar.Key), make([]int64, ar.Val)
				key[0] = 7
				b.Push([]int64{8, 8}[:ar.Key], []int64{1, 1}[:ar.Val], 3, 5) // another run beside it
				for _, p := range perm {
					b.Push(key, val, 3, tc.diffs[p])
				}
				out, err := b.Build(frontier.Min(), frontier.At(4))
				var oe *OverflowError
				if got := errors.As(err, &oe); got != tc.over || got && (len(oe.Times) != 1 || oe.Times[0] != 3) {
					t.Errorf("%v %v in order %v: error %v, want overflow %v at 3", ar, tc.diffs, perm, err, tc.over)
					continue
				}
				var got []int64
				for _, u := range out.Updates() {
					if u.Key[0] == 7 {
						got = append(got, u.Diff)
					}
				}
				if len(got) != 1 || got[0] != tc.want {
					t.Errorf("%v %v in order %v: diffs %v, want [%d]", ar, tc.diffs, perm, got, tc.want)
				}
			}
		}
	}
}

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}
