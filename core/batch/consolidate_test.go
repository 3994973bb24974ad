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
	"github.com/tracebench/tracebench/internal/mutants"
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

// TestConsolidateSumsInPlace: 200,000 updates pushed whole (a quarter of
// them repeats of the same rows, some pairs summing to zero, two rows
// whose sums leave int64 on the way and one of them at the end), of
// one-column keys and vals and of a key and two vals, are sorted by the
// radix sort and summed where the batcher buffers them: the consolidation
// allocates the buffer's growth for the chunks and the sort's scratch (for
// wide rows a sorted copy and the sort's keys), no batch and no rows
// besides (about 1.6 to 1.8 times as much before), and the seal after it
// returns what a batcher that never consolidated seals.
func TestConsolidateSumsInPlace(t *testing.T) {
	const n = 200_000
	for _, sh := range []struct {
		ar          Arity
		width, most int // bytes per update the consolidation may allocate
	}{{Arity{1, 1}, 2, 2 * 32}, {Arity{1, 2}, 3, 2*(3+2)*8 + 2*16 + 4}} {
		w := sh.width
		rng := rand.New(rand.NewPCG(7, 11))
		rows, times, diffs := make([]int64, w*n), make([]uint64, n), make([]int64, n)
		for i := range n {
			k := rng.Int64N(n)
			if i%4 == 0 {
				k = rng.Int64N(100)
			}
			for c := range w {
				rows[w*i+c] = k % int64(7+c)
			}
			rows[w*i] = k
			times[i], diffs[i] = uint64(rng.IntN(3)), rng.Int64N(5)-2
		}
		for i := range 8 {
			// Rows 0-3 sum out of int64 at time 0; rows 4-7 leave it on
			// the way and come back (2 MaxInt64 and 2 MinInt64) at 1.
			for c := range w {
				rows[w*i+c] = -1 - int64(i/4)
			}
			times[i], diffs[i] = uint64(i/4), math.MaxInt64
		}
		diffs[6], diffs[7] = math.MinInt64, math.MinInt64
		plain, cons := NewBatcher(sh.ar, 0), NewBatcher(sh.ar, 0)
		cols := []int{0, 1, 2}[:w]
		for lo := 0; lo < n; lo += n / 4 {
			hi := lo + n/4
			plain.PushChunk(rows[w*lo:w*hi], w, cols[:1], cols[1:], times[lo:hi], diffs[lo:hi])
			cons.PushChunk(rows[w*lo:w*hi], w, cols[:1], cols[1:], times[lo:hi], diffs[lo:hi])
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if !cons.Consolidate() {
			t.Fatalf("%v: not consolidated", sh.ar)
		}
		runtime.ReadMemStats(&after)
		// Invariant builds allocate for their checks, and mutant builds
		// check a site on every diff they add.
		if got, most := after.TotalAlloc-before.TotalAlloc, uint64(sh.most*n+1<<20); !invariants.Enabled && !mutants.Enabled && got > most {
			t.Errorf("%v: the consolidation of %d updates allocated %d bytes, want at most %d", sh.ar, n, got, most)
		}
		if cons.Len() >= n {
			t.Fatalf("%v: %d updates consolidated to %d", sh.ar, n, cons.Len())
		}
		a, errA := plain.Seal(frontier.Min(), frontier.Empty())
		b, errB := cons.Seal(frontier.Min(), frontier.Empty())
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%v: seal: %v, consolidated %v", sh.ar, errA, errB)
		}
		var oe *OverflowError
		if !errors.As(errA, &oe) || !slices.Equal(oe.Times, []frontier.Time{0}) {
			t.Fatalf("%v: seal: %v, want an overflow at 0 alone", sh.ar, errA)
		}
		if ua, ub := fmt.Sprint(a.Updates()), fmt.Sprint(b.Updates()); ua != ub {
			t.Fatalf("%v: the consolidated batcher seals other updates", sh.ar)
		}
	}
}
