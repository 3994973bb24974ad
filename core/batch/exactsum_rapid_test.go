package batch

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// edgeDiffs are diffs near the int64 bounds (and small ones), so that runs
// of equal (key, val, advanced time) overflow in their partial sums and,
// sometimes, in their totals.
var edgeDiffs = []int64{
	math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1,
	math.MaxInt64/2 + 1, math.MinInt64 / 2, 1, -1, 2, -2, 3,
}

type exactKey struct {
	row string
	t   uint64
}

// exactWant is the reference total of every (key, val, advanced time): the
// exact sum when it fits int64, else the bound of its sign and an overflow.
func exactWant(totals map[exactKey]*big.Int) (map[exactKey]int64, bool) {
	want, over := map[exactKey]int64{}, false
	mx, mn := big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64)
	for k, s := range totals {
		switch {
		case s.Sign() == 0:
		case s.Cmp(mx) > 0:
			want[k], over = math.MaxInt64, true
		case s.Cmp(mn) < 0:
			want[k], over = math.MinInt64, true
		default:
			want[k] = s.Int64()
		}
	}
	return want, over
}

func exactGot(b *Batch) map[exactKey]int64 {
	got := map[exactKey]int64{}
	for _, u := range b.Updates() {
		got[exactKey{fmt.Sprint(u.Key, u.Val), u.Time}] = u.Diff
	}
	return got
}

func sameTotals(got, want map[exactKey]int64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, d := range want {
		if g, ok := got[k]; !ok || g != d {
			return false
		}
	}
	return true
}

// TestMergeSumsExactlyRandom: a merge of 2 to 9 batches whose diffs lie
// near the int64 bounds, under a random compaction frontier, kernel
// parameters and fuel, gives every (key, val, advanced time) its exact
// total when it fits int64, and its sign's bound with ErrOverflow when not.
func TestMergeSumsExactlyRandom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: 1, Val: 1}
		if rapid.Bool().Draw(t, "other arity") {
			ar = Arity{Key: rapid.IntRange(1, 2).Draw(t, "ka"), Val: rapid.IntRange(0, 2).Draw(t, "va")}
		}
		n := rapid.IntRange(2, 9).Draw(t, "batches")
		comp := frontier.At(rapid.Uint64Range(0, uint64(3*n)).Draw(t, "comp"))
		totals := map[exactKey]*big.Int{}
		var bs []*Batch
		var since frontier.Frontier = comp
		for i := range n {
			lo := uint64(3 * i)
			// Distinct (key, val, time) in an input, so its build sums nothing.
			seen := map[exactKey]bool{}
			bld := NewBuilder(ar, 0)
			for range rapid.IntRange(0, 12).Draw(t, "n") {
				key, val := make([]int64, ar.Key), make([]int64, ar.Val)
				for j := range key {
					key[j] = rapid.Int64Range(0, 2).Draw(t, "k")
				}
				for j := range val {
					val[j] = rapid.Int64Range(0, 1).Draw(t, "v")
				}
				tm := rapid.Uint64Range(lo, lo+2).Draw(t, "t")
				ek := exactKey{fmt.Sprint(key, val), tm}
				if seen[ek] {
					continue
				}
				seen[ek] = true
				bld.Push(key, val, tm, rapid.SampledFrom(edgeDiffs).Draw(t, "d"))
			}
			b, err := bld.Build(frontier.At(lo), frontier.At(lo+3))
			if err != nil {
				t.Fatal(err)
			}
			if rapid.IntRange(0, 3).Draw(t, "since") == 0 {
				b = b.WithDesc(frontier.Description{Lower: b.Lower(), Upper: b.Upper(), Since: frontier.At(lo)})
			}
			since = since.Join(b.Desc().Since)
			bs = append(bs, b)
		}
		s, _ := since.Time()
		for _, b := range bs {
			for _, u := range b.Updates() {
				k := exactKey{fmt.Sprint(u.Key, u.Val), max(u.Time, s)}
				if totals[k] == nil {
					totals[k] = new(big.Int)
				}
				totals[k].Add(totals[k], big.NewInt(u.Diff))
			}
		}
		want, over := exactWant(totals)
		var m *Merger
		if n == 2 {
			m = NewMerger(bs[0], bs[1], comp)
		} else {
			m = newMergerN(bs, comp, drawParams(t, []int{1, 2, 3, kwStage}), drawExpect(t, bs))
		}
		maxFuel := rapid.SampledFrom([]int64{1, 2, 3, 7, 300}).Draw(t, "max fuel")
		for !m.Done() {
			f := rapid.Int64Range(1, maxFuel).Draw(t, "fuel")
			m.Work(&f)
		}
		out, err := m.Result()
		if (err != nil) != over || err != nil && err != ErrOverflow {
			t.Fatalf("error %v, want overflow %v", err, over)
		}
		if cerr := out.Check(); cerr != nil {
			t.Fatalf("%v\n%s", cerr, out)
		}
		if got := exactGot(out); !sameTotals(got, want) {
			t.Fatalf("got %v\nwant %v\n%s", got, want, out)
		}
	})
}

// TestSortedSumsExactlyRandom: a Sorted builder fed sorted runs of diffs
// near the int64 bounds, built once or more (reused), gives each (key,
// val, time) its exact total, or its sign's bound and an overflow at its
// time.
func TestSortedSumsExactlyRandom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewSorted(Arity{Key: 1, Val: 1}, rapid.IntRange(0, 4).Draw(t, "hint"))
		for range rapid.IntRange(1, 3).Draw(t, "builds") {
			type up struct {
				k, v int64
				t    uint64
				d    int64
			}
			var ups []up
			for range rapid.IntRange(0, 20).Draw(t, "n") {
				ups = append(ups, up{rapid.Int64Range(0, 2).Draw(t, "k"), rapid.Int64Range(0, 1).Draw(t, "v"), rapid.Uint64Range(0, 1).Draw(t, "t"), rapid.SampledFrom(edgeDiffs).Draw(t, "d")})
			}
			sort.SliceStable(ups, func(i, j int) bool {
				a, b := ups[i], ups[j]
				if a.k != b.k {
					return a.k < b.k
				}
				if a.v != b.v {
					return a.v < b.v
				}
				return a.t < b.t
			})
			totals := map[exactKey]*big.Int{}
			for _, u := range ups {
				s.Push1(u.k, u.v, u.t, u.d)
				k := exactKey{fmt.Sprint([]int64{u.k}, []int64{u.v}), u.t}
				if totals[k] == nil {
					totals[k] = new(big.Int)
				}
				totals[k].Add(totals[k], big.NewInt(u.d))
			}
			want, over := exactWant(totals)
			out, err := s.Build(frontier.Min(), frontier.At(2))
			if (err != nil) != over {
				t.Fatalf("error %v, want overflow %v", err, over)
			}
			if cerr := out.Check(); cerr != nil {
				t.Fatalf("%v\n%s", cerr, out)
			}
			if got := exactGot(out); !sameTotals(got, want) {
				t.Fatalf("got %v\nwant %v\n%s", got, want, out)
			}
		}
	})
}
