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

// TestConsolidateChangesNoSeal pushes the same random updates (Push,
// PushRow and PushChunk, queued and copied; one- and wide-column arities;
// some diffs near the int64 bounds) into two batchers, consolidates one of
// them at random points between the pushes, and seals both at the same
// uppers: every seal returns the same updates, the same overflow times,
// and the consolidated batcher holds no more updates than the other. A
// consolidation that drops an update of a later time, sums across times,
// or keeps a sum a build saturated fails here.
func TestConsolidateChangesNoSeal(t *testing.T) {
	type shape struct {
		ar        Arity
		width     int
		key, vals []int
	}
	shapes := []shape{
		{Arity{1, 1}, 2, []int{0}, []int{1}},
		{Arity{1, 0}, 1, []int{0}, nil},
		{Arity{0, 1}, 1, nil, []int{0}},
		{Arity{0, 0}, 1, nil, nil},
		{Arity{1, 1}, 3, []int{2}, []int{0}},
		{Arity{2, 1}, 3, []int{0, 2}, []int{1}},
		{Arity{2, 1}, 3, []int{0, 1}, []int{2}},
		{Arity{1, 2}, 4, []int{3}, []int{0, 2}},
	}
	consolidated := 0
	for seed := range uint64(40) {
		for _, sh := range shapes {
			rng := rand.New(rand.NewPCG(seed, uint64(sh.width*10+len(sh.key))))
			label := fmt.Sprintf("seed %d shape %v", seed, sh)
			plain, cons := NewBatcher(sh.ar, 0), NewBatcher(sh.ar, 0)
			lower := frontier.Min()
			big := seed%4 == 0
			for step := range 6 {
				lo, _ := lower.Time()
				for range 1 + rng.IntN(4) {
					n := rng.IntN(30)
					rows := make([]int64, n*sh.width)
					times, diffs := make([]uint64, n), make([]int64, n)
					for i := range n {
						for c := range sh.width {
							rows[i*sh.width+c] = rng.Int64N(3) - 1
						}
						times[i], diffs[i] = lo+rng.Uint64N(6), rng.Int64N(5)-2
						if big && rng.IntN(3) == 0 {
							diffs[i] = math.MaxInt64 - rng.Int64N(2)
							if rng.IntN(2) == 0 {
								diffs[i] = -diffs[i]
							}
						}
					}
					switch rng.IntN(3) {
					case 0:
						plain.PushChunk(rows, sh.width, sh.key, sh.vals, times, diffs)
						cons.PushChunk(rows, sh.width, sh.key, sh.vals, times, diffs)
					default:
						for i := range n {
							row := rows[i*sh.width : i*sh.width+sh.width]
							plain.PushRow(row, sh.key, sh.vals, times[i], diffs[i])
							cons.PushRow(row, sh.key, sh.vals, times[i], diffs[i])
						}
					}
					if rng.IntN(2) == 0 {
						before := cons.Len()
						if cons.Consolidate() {
							consolidated++
							if cons.Len() > before {
								t.Fatalf("%s: consolidation grew the buffer from %d to %d", label, before, cons.Len())
							}
						} else if cons.Len() != before {
							t.Fatalf("%s: a refused consolidation changed the buffer from %d to %d", label, before, cons.Len())
						}
					}
				}
				upper := frontier.At(lo + 1 + rng.Uint64N(4))
				if step == 5 {
					upper = frontier.Empty()
				}
				a, errA := plain.Seal(lower, upper)
				b, errB := cons.Seal(lower, upper)
				var oa, ob *OverflowError
				if errors.As(errA, &oa) != errors.As(errB, &ob) || (oa != nil && !slices.Equal(oa.Times, ob.Times)) {
					t.Fatalf("%s: seal [%v, %v): overflow %v, consolidated %v", label, lower, upper, errA, errB)
				}
				if oa == nil && (errA != nil || errB != nil) {
					t.Fatalf("%s: seal [%v, %v): %v, %v", label, lower, upper, errA, errB)
				}
				if ua, ub := fmt.Sprint(a.Updates()), fmt.Sprint(b.Updates()); ua != ub {
					t.Fatalf("%s: seal [%v, %v)\n consolidated %v\n          want %v", label, lower, upper, ub, ua)
				}
				if cons.Len() > plain.Len() {
					t.Fatalf("%s: the consolidated batcher holds %d updates, the other %d", label, cons.Len(), plain.Len())
				}
				lower = upper
			}
		}
	}
	if consolidated == 0 {
		t.Fatal("no consolidation ran")
	}
}
