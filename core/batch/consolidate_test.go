package batch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
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

// TestConsolidateSumsSmallRowsInPlace: 200,000 one-column updates pushed
// whole (a quarter of them repeats of the same rows, some pairs summing to
// zero, two rows whose sums leave int64) are sorted by the radix sort and
// summed where the batcher buffers them: the consolidation allocates the
// buffer's growth for the chunks and the sort's scratch, no batch and no
// rows besides (about 4 times the buffer before), and the seal after it
// returns what a batcher that never consolidated seals.
func TestConsolidateSumsSmallRowsInPlace(t *testing.T) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(7, 11))
	rows, times, diffs := make([]int64, 2*n), make([]uint64, n), make([]int64, n)
	for i := range n {
		k := rng.Int64N(n)
		if i%4 == 0 {
			k = rng.Int64N(100)
		}
		rows[2*i], rows[2*i+1] = k, k%7
		times[i], diffs[i] = uint64(rng.IntN(3)), rng.Int64N(5)-2
	}
	for i := range 4 {
		// (1, 1) at 0 and (2, 2) at 1 sum out of int64; (2, 2) comes back.
		rows[2*i], rows[2*i+1], times[i], diffs[i] = 1, 1, 0, math.MaxInt64
		rows[2*i+8], rows[2*i+9], times[i+4], diffs[i+4] = 2, 2, 1, math.MaxInt64
	}
	diffs[7] = math.MinInt64
	diffs[6] = math.MinInt64
	plain, cons := NewBatcher(Arity{1, 1}, 0), NewBatcher(Arity{1, 1}, 0)
	cols := []int{0, 1}
	for lo := 0; lo < n; lo += n / 4 {
		hi := lo + n/4
		plain.PushChunk(rows[2*lo:2*hi], 2, cols[:1], cols[1:], times[lo:hi], diffs[lo:hi])
		cons.PushChunk(rows[2*lo:2*hi], 2, cols[:1], cols[1:], times[lo:hi], diffs[lo:hi])
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if !cons.Consolidate() {
		t.Fatal("not consolidated")
	}
	runtime.ReadMemStats(&after)
	if got, most := after.TotalAlloc-before.TotalAlloc, uint64(2*n*32+1<<20); !invariants.Enabled && got > most {
		t.Errorf("the consolidation of %d updates allocated %d bytes, want at most %d", n, got, most)
	}
	if cons.Len() >= n {
		t.Fatalf("%d updates consolidated to %d", n, cons.Len())
	}
	a, errA := plain.Seal(frontier.Min(), frontier.Empty())
	b, errB := cons.Seal(frontier.Min(), frontier.Empty())
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		t.Fatalf("seal: %v, consolidated %v", errA, errB)
	}
	var oe *OverflowError
	if !errors.As(errA, &oe) || !slices.Equal(oe.Times, []frontier.Time{0}) {
		t.Fatalf("seal: %v, want an overflow at 0 alone", errA)
	}
	if ua, ub := fmt.Sprint(a.Updates()), fmt.Sprint(b.Updates()); ua != ub {
		t.Fatal("the consolidated batcher seals other updates")
	}
}
