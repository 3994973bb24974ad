package batch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestConsolidateInterleavedWithEveryPush runs random interleavings of
// Push, PushRow, PushChunk (kept whole or copied), refused pushes, Grow,
// Consolidate and Seal (some of them refused: an upper before the lower,
// a refused push before it) on a batcher, and the same pushes on one that
// never consolidates, for arities (0,0) to (3,3); some runs sort by radix
// from two updates up, some push chunks of hundreds of updates, some push
// diffs near the int64 bounds. Every seal returns what the other's does.
// The chunks pushed whole are overwritten once the Seal after their push
// has returned (BT1), and every batch sealed is read again at the end: a
// consolidation that read a loaned chunk past its Seal, kept a sum the
// seal would find otherwise, lost an update at or beyond a seal's upper or
// wrote into memory a batch or the buffer still holds fails here.
func TestConsolidateInterleavedWithEveryPush(t *testing.T) {
	type shape struct {
		ar        Arity
		width     int
		key, vals []int
	}
	shapes := []shape{
		{Arity{0, 0}, 1, nil, nil},
		{Arity{1, 0}, 1, []int{0}, nil},
		{Arity{0, 1}, 2, nil, []int{1}},
		{Arity{1, 1}, 2, []int{0}, []int{1}},
		{Arity{1, 1}, 2, []int{1}, []int{0}},
		{Arity{1, 1}, 4, []int{3}, []int{1}},
		{Arity{2, 1}, 3, []int{0, 1}, []int{2}},
		{Arity{2, 1}, 3, []int{2, 0}, []int{1}},
		{Arity{1, 2}, 5, []int{4}, []int{0, 2}},
		{Arity{3, 3}, 6, []int{0, 1, 2}, []int{3, 4, 5}},
		{Arity{3, 3}, 6, []int{5, 4, 3}, []int{2, 1, 0}},
	}
	seeds := uint64(60)
	if testing.Short() {
		seeds = 15
	}
	for seed := range seeds {
		for si, sh := range shapes {
			rng := rand.New(rand.NewPCG(seed, uint64(si)))
			label := fmt.Sprintf("seed %d shape %v", seed, sh)
			plain, cons := NewBatcher(sh.ar, rng.IntN(3)*8), NewBatcher(sh.ar, 0)
			if seed%3 == 1 {
				cons.bld.radixMin = 2
			}
			big, huge := seed%4 == 0, seed%5 == 2
			lower := frontier.Min()
			var loaned [][]int64 // chunks cons holds until its next Seal
			type sealed struct {
				b    *Batch
				want string
			}
			var batches []sealed
			refused := false // a refused push since the last seal
			for step := range 8 {
				lo, _ := lower.Time()
				for range 1 + rng.IntN(6) {
					n := rng.IntN(12)
					if huge && rng.IntN(3) == 0 {
						n = 64 + rng.IntN(300)
					}
					rows := make([]int64, n*sh.width)
					times, diffs := make([]uint64, n), make([]int64, n)
					for i := range n {
						for c := range sh.width {
							rows[i*sh.width+c] = rng.Int64N(3) - 1
						}
						times[i], diffs[i] = lo+rng.Uint64N(5), rng.Int64N(5)-2
						if big && rng.IntN(3) == 0 {
							diffs[i] = math.MaxInt64 - rng.Int64N(2)
							if rng.IntN(2) == 0 {
								diffs[i] = -diffs[i]
							}
						}
					}
					switch rng.IntN(6) {
					case 0, 1:
						plain.PushChunk(slices.Clone(rows), sh.width, sh.key, sh.vals, slices.Clone(times), slices.Clone(diffs))
						cons.PushChunk(rows, sh.width, sh.key, sh.vals, times, diffs)
						loaned = append(loaned, rows)
					case 2:
						for i := range n {
							row := rows[i*sh.width : i*sh.width+sh.width]
							plain.PushRow(row, sh.key, sh.vals, times[i], diffs[i])
							cons.PushRow(row, sh.key, sh.vals, times[i], diffs[i])
						}
					case 3:
						for i := range n {
							row := rows[i*sh.width : i*sh.width+sh.width]
							key, val := make([]int64, 0, 3), make([]int64, 0, 3)
							for _, c := range sh.key {
								key = append(key, row[c])
							}
							for _, c := range sh.vals {
								val = append(val, row[c])
							}
							plain.Push(key, val, times[i], diffs[i])
							cons.Push(key, val, times[i], diffs[i])
						}
					case 4:
						cons.Grow(rng.IntN(50))
					default:
						if rng.IntN(4) == 0 {
							// Refused for its arity: dropped, and the next
							// Seal refuses and keeps the buffer.
							refused = true
							bad := make([]int64, sh.ar.Key+1)
							plain.Push(bad, make([]int64, sh.ar.Val), lo, 1)
							cons.Push(bad, make([]int64, sh.ar.Val), lo, 1)
						}
					}
					if rng.IntN(2) == 0 {
						before := cons.Len()
						ok := cons.Consolidate()
						if cons.Len() > before || (!ok && cons.Len() != before) {
							t.Fatalf("%s: consolidation (%v) took %d updates to %d", label, ok, before, cons.Len())
						}
						if refused && ok {
							t.Fatalf("%s: a batcher holding a refused push consolidated", label)
						}
					}
				}
				upper := frontier.At(lo + 1 + rng.Uint64N(3))
				switch {
				case step == 7:
					upper = frontier.Empty()
				case lo > 0 && rng.IntN(8) == 0:
					upper = frontier.At(lo - 1) // refused: before lower
				}
				a, errA := plain.Seal(lower, upper)
				b, errB := cons.Seal(lower, upper)
				// The loan of every chunk ends with the Seal, refused or not.
				for _, rows := range loaned {
					for i := range rows {
						rows[i] = math.MinInt64 + 12345
					}
				}
				loaned = loaned[:0]
				refused = false
				var oa, ob *OverflowError
				if errors.As(errA, &oa) != errors.As(errB, &ob) || (oa != nil && !slices.Equal(oa.Times, ob.Times)) {
					t.Fatalf("%s: seal [%v, %v): %v, consolidated %v", label, lower, upper, errA, errB)
				}
				if oa == nil && fmt.Sprint(errA) != fmt.Sprint(errB) {
					t.Fatalf("%s: seal [%v, %v): %v, consolidated %v", label, lower, upper, errA, errB)
				}
				if (a == nil) != (b == nil) {
					t.Fatalf("%s: seal [%v, %v): batch %v, consolidated %v", label, lower, upper, a != nil, b != nil)
				}
				if a != nil {
					ua, ub := fmt.Sprint(a.Updates()), fmt.Sprint(b.Updates())
					if ua != ub {
						t.Fatalf("%s: seal [%v, %v)\n consolidated %v\n          want %v", label, lower, upper, ub, ua)
					}
					batches = append(batches, sealed{b, ua})
				}
				if cons.Len() > plain.Len() {
					t.Fatalf("%s: the consolidated batcher holds %d updates, the other %d", label, cons.Len(), plain.Len())
				}
				if a != nil || oa != nil {
					lower = upper
				}
			}
			for i, s := range batches {
				if got := fmt.Sprint(s.b.Updates()); got != s.want {
					t.Fatalf("%s: batch %d changed after it was sealed:\n got %v\nwant %v", label, i, got, s.want)
				}
			}
		}
	}
}
