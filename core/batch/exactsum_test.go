package batch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// runSums are runs of diffs of one (key, val, time) whose partial sums
// leave int64 in some order: the exact total if it fits, else the bound of
// its sign and an overflow.
var runSums = []struct {
	diffs []int64
	want  int64
	over  bool
}{
	{[]int64{mx, 1, -1}, mx, false},
	{[]int64{mn, -1, 2}, mn + 1, false},
	{[]int64{mx, mx, mn, mn, 1}, -1, false},
	{[]int64{mx, 1, mn, mn}, mn, false},
	{[]int64{mx, 1, 1, -5}, mx - 3, false},
	{[]int64{mx, 1, -1, -mx}, 0, false},
	{[]int64{mx, 1}, mx, true},
	{[]int64{mn, -1}, mn, true},
	{[]int64{mn, mn, 1}, mn, true},
	{[]int64{mx, mx, -1}, mx, true},
	{[]int64{mx, 1, 1}, mx, true},
}

const mx, mn = math.MaxInt64, math.MinInt64

// wantRun is the diffs a run of total d leaves: none when it cancels.
func wantRun(d int64) []int64 {
	if d == 0 {
		return nil
	}
	return []int64{d}
}

// TestBuildSumsARunExactly: a build consolidates the diffs of one (key,
// val, time) exactly, so a partial sum that leaves int64 is no overflow
// when the run's total fits (MaxInt64, +1, -1 is MaxInt64), whatever
// order the diffs come in; only a total out of int64 overflows, saturated
// to the bound of its own sign. Every consolidation path: one-column key
// and val, a key alone, and wider rows.
func TestBuildSumsARunExactly(t *testing.T) {
	for _, tc := range runSums {
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
				if want := wantRun(tc.want); !slices.Equal(got, want) {
					t.Errorf("%v %v in order %v: diffs %v, want %v", ar, tc.diffs, perm, got, want)
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

// TestMergeSumsARunExactly: a merge consolidates the diffs of one (key,
// val, advanced time) exactly, as a build does (TestBuildSumsARunExactly):
// a partial sum out of int64 is no overflow when the total fits, whatever
// order the inputs hold the diffs in and however the fuel splits the run;
// only a total out of int64 overflows, saturated to its own sign. Every
// kernel that sums a run of more than two: the k-way merge of one-column
// keys and vals (in Go and in assembly, with and without its largest input
// beside the tree) and of other arities, and a two-way merge's advance of
// the times at or before the since (from both inputs, and from one).
func TestMergeSumsARunExactly(t *testing.T) {
	for _, tc := range runSums {
		n := uint64(len(tc.diffs))
		comp := frontier.At(n)
		for _, perm := range permutations(len(tc.diffs)) {
			ds := make([]int64, n)
			for i, p := range perm {
				ds[i] = tc.diffs[p]
			}
			for _, ar := range []Arity{{Key: 1, Val: 1}, {Key: 1}, {Key: 2, Val: 2}} {
				for _, o := range []int64{6, 8} { // the other key before the run's, and after
					key, val := make([]int64, ar.Key), make([]int64, ar.Val)
					key[0] = 7
					other := []int64{o, o}[:ar.Key]
					// build makes a batch of [lo, hi) with key's updates of
					// diffs ds at times lo, lo+1, ..., and the other key beside
					// them.
					build := func(lo, hi uint64, ds []int64) *Batch {
						b := NewBuilder(ar, 0)
						b.Push(other, []int64{1, 1}[:ar.Val], lo, 5)
						for i, d := range ds {
							b.Push(key, val, lo+uint64(i), d)
						}
						out, err := b.Build(frontier.At(lo), frontier.At(hi))
						if err != nil {
							t.Fatal(err)
						}
						return out
					}
					check := func(kernel string, m *Merger, fuel int64) {
						t.Helper()
						for !m.Done() {
							f := fuel
							m.Work(&f)
						}
						out, err := m.Result()
						if (err != nil) != tc.over || err != nil && err != ErrOverflow {
							t.Errorf("%s %v, diffs %v, fuel %d: error %v, want overflow %v", kernel, ar, ds, fuel, err, tc.over)
							return
						}
						var got []int64
						for _, u := range out.Updates() {
							if u.Key[0] == 7 {
								if u.Time != n {
									t.Errorf("%s %v, diffs %v: time %d, want %d", kernel, ar, ds, u.Time, n)
								}
								got = append(got, u.Diff)
							}
						}
						if want := wantRun(tc.want); !slices.Equal(got, want) {
							t.Errorf("%s %v, diffs %v, fuel %d: diffs %v, want %v", kernel, ar, ds, fuel, got, want)
						}
					}
					// One input a diff.
					var bs []*Batch
					for i, d := range ds {
						bs = append(bs, build(uint64(i), uint64(i)+1, []int64{d}))
					}
					for _, fuel := range []int64{1, 1000} {
						if ar == (Arity{Key: 1, Val: 1}) {
							for _, prm := range []kwParams{{stage: 1, big: 0}, {stage: 1, big: 0, slow: true}, {stage: kwStage, big: 2, bigMin: 3}, {stage: kwStage, big: 2, bigMin: 3, slow: true}} {
								check(fmt.Sprintf("k-way %+v", prm), newMergerN(bs, comp, prm, 0), fuel)
							}
						} else {
							check("k-way", NewMergerN(bs, comp), fuel)
						}
						// Two inputs: all but the last diff, and the last.
						check("two-way, both", NewMerger(build(0, n-1, ds[:n-1]), build(n-1, n, ds[n-1:]), comp), fuel)
						// Every diff in the first input; the other key alone in the second.
						check("two-way, one", NewMerger(build(0, n, ds), build(n, n+1, nil), frontier.At(n)), fuel)
					}
				}
			}
		}
	}
}

// TestSortedSumsARunExactly: a sorted build sums a run of equal (key, val,
// time) exactly too, whether the run ends the build or is followed by a
// push of another time or of a new key.
func TestSortedSumsARunExactly(t *testing.T) {
	for _, tc := range runSums {
		for _, perm := range permutations(len(tc.diffs)) {
			for _, next := range []string{"none", "time", "key"} {
				s := NewSorted(Arity{Key: 1, Val: 1}, 0)
				s.Push1(1, 0, 2, 3)
				for _, p := range perm {
					s.Push1(2, 0, 2, tc.diffs[p])
				}
				switch next {
				case "time":
					s.Push1(2, 0, 3, 4)
				case "key":
					s.Push1(3, 0, 2, 4)
				}
				out, err := s.Build(frontier.Min(), frontier.At(4))
				var oe *OverflowError
				if got := errors.As(err, &oe); got != tc.over || got && (len(oe.Times) != 1 || oe.Times[0] != 2) {
					t.Errorf("%v in order %v: error %v, want overflow %v at 2", tc.diffs, perm, err, tc.over)
					continue
				}
				var got []int64
				for _, u := range out.Updates() {
					if u.Key[0] == 2 && u.Time == 2 {
						got = append(got, u.Diff)
					}
				}
				if want := wantRun(tc.want); !slices.Equal(got, want) {
					t.Errorf("%v in order %v, then %s: diffs %v, want %v", tc.diffs, perm, next, got, want)
				}
			}
		}
	}
}
