package batch

import (
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A batch is immutable once built: the builds and seals after it, by the
// same builder or batcher, write into columns of their own, never into an
// earlier batch's (its columns struct, which a build's batch is, or the
// arrays under it). Every route a build takes is run several times over,
// each batch checked against what it held when built after every later one.
func TestLaterBuildsLeaveEarlierBatches(t *testing.T) {
	type update struct {
		k, v int64
		t    uint64
		d    int64
	}
	// ups draws n updates of few keys, vals and times, so that the build
	// consolidates (some cancel), at times in [lo, lo+8).
	ups := func(r *rand.Rand, n int, lo uint64) []update {
		out := make([]update, n)
		for i := range out {
			out[i] = update{r.Int64N(int64(n/4 + 2)), r.Int64N(3), lo + r.Uint64N(8), r.Int64N(5) - 2}
		}
		return out
	}
	// row returns u's key and val as ar has them.
	row := func(ar Arity, u update) (k, v []int64) {
		k, v = []int64{u.k, u.k + 1}[:ar.Key], []int64{u.v, u.v * 3}[:ar.Val]
		return k, v
	}
	// builder builds with radixMin and bucketMax when positive, and
	// warmMax when not negative (0: the pushed array becomes the batch's
	// block whenever the records fill 3/4 of it).
	builder := func(ar Arity, capHint, radixMin, bucketMax, warmMax int) func([]update, uint64) (*Batch, error) {
		b := NewBuilder(ar, capHint)
		if radixMin > 0 {
			b.radixMin = radixMin
		}
		if bucketMax > 0 {
			b.bucketMax = bucketMax
		}
		if warmMax >= 0 {
			b.warmMax = warmMax
		}
		return func(us []update, lo uint64) (*Batch, error) {
			for _, u := range us {
				k, v := row(ar, u)
				b.Push(k, v, u.t, u.d)
			}
			return b.Build(frontier.At(lo), frontier.At(lo+8))
		}
	}
	// batcher seals updates pushed as a chunk (chunks) or one by one; a
	// later share of them (late) is at or beyond the seal's upper and
	// stays for the next.
	batcher := func(ar Arity, capHint int, chunks, late bool) func([]update, uint64) (*Batch, error) {
		b := NewBatcher(ar, capHint)
		w := ar.Key + ar.Val
		keyCols, valCols := []int{0, 1}[:ar.Key], []int{ar.Key, ar.Key + 1}[:ar.Val]
		return func(us []update, lo uint64) (*Batch, error) {
			rows, times, diffs := make([]int64, 0, len(us)*w), make([]uint64, len(us)), make([]int64, len(us))
			for i, u := range us {
				k, v := row(ar, u)
				rows = append(append(rows, k...), v...)
				times[i], diffs[i] = u.t, u.d
				if late && i%3 == 0 {
					times[i] += 8
				}
			}
			if chunks {
				b.PushChunk(rows, w, keyCols, valCols, times, diffs)
			} else {
				for i := range times {
					b.Push(rows[i*w:i*w+ar.Key], rows[i*w+ar.Key:i*w+w], times[i], diffs[i])
				}
			}
			return b.Seal(frontier.At(lo), frontier.At(lo+8))
		}
	}
	const n = 1000
	for _, c := range []struct {
		name  string
		size  int
		build func([]update, uint64) (*Batch, error)
	}{
		{"one-column few", 5, builder(Arity{1, 1}, 5, 0, 0, -1)},
		{"one-column filling their array", n, builder(Arity{1, 1}, n, 0, 0, -1)},
		{"one-column filling their array, taken as the block", n, builder(Arity{1, 1}, n, 0, 0, 0)},
		{"one-column in a roomy array", n, builder(Arity{1, 1}, 8*n, 0, 0, -1)},
		{"one-column radix sorted", n, builder(Arity{1, 1}, n, 0, 16, -1)},
		{"key only few", 10, builder(Arity{1, 0}, 10, 0, 0, -1)},
		{"key only bucket sorted", n, builder(Arity{1, 0}, n, 0, 0, -1)},
		{"key only radix sorted", n, builder(Arity{1, 0}, n, 0, 16, -1)},
		{"val only", n, builder(Arity{0, 1}, n, 0, 0, -1)},
		{"wide", n, builder(Arity{2, 1}, n, 0, 0, -1)},
		{"sealed chunks", n, batcher(Arity{1, 1}, n, true, false)},
		{"sealed chunks, some late", n, batcher(Arity{1, 1}, n, true, true)},
		{"sealed pushes", n, batcher(Arity{1, 1}, n, false, false)},
		{"sealed pushes, some late", n, batcher(Arity{1, 1}, n, false, true)},
		{"sealed wide chunks, some late", n, batcher(Arity{2, 1}, n, true, true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.size), 7))
			var built []*Batch
			var held []string
			for round := range 6 {
				lo := uint64(8 * round)
				b, err := c.build(ups(r, c.size, lo), lo)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if err := b.Check(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				for i, e := range built {
					if e == b {
						t.Fatalf("round %d: the batch of round %d again", round, i)
					}
					if err := e.Check(); err != nil {
						t.Fatalf("after round %d: the batch of round %d: %v", round, i, err)
					}
					if got := fmtUpdates(e); got != held[i] {
						t.Fatalf("after round %d: the batch of round %d holds\n%s\nwant\n%s", round, i, got, held[i])
					}
				}
				built, held = append(built, b), append(held, fmtUpdates(b))
			}
			if len(held[0]) == 0 {
				t.Fatalf("the first batch is empty: the rounds test nothing")
			}
		})
	}
}
