package batch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

func TestBatcherSealsBeforeUpper(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}, {0, 2}} {
		b := NewBatcher(ar, 0)
		row := []int64{1, 2, 3}
		for _, tm := range []uint64{3, 0, 5, 1, 3} {
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2, 1}[:ar.Val], tm, 1)
		}
		first, err := b.Seal(frontier.At(0), frontier.At(3))
		if err != nil {
			t.Fatal(err)
		}
		if first.Len() != 2 || b.Len() != 3 || first.Desc().Upper != frontier.At(3) {
			t.Fatalf("%v: first seal %v, %d left", ar, first, b.Len())
		}
		second, err := b.Seal(frontier.At(3), frontier.Empty())
		if err != nil {
			t.Fatal(err)
		}
		// The two updates at 3 consolidate into one with diff 2.
		if second.Len() != 2 || b.Len() != 0 {
			t.Fatalf("%v: second seal %v, %d left", ar, second, b.Len())
		}
		if u := second.Updates()[0]; u.Time != 3 || u.Diff != 2 {
			t.Fatalf("%v: first update of the second seal %v", ar, u)
		}
	}
}

// TestBatcherReleasesLargeBuffers: after a seal that empties a buffer of more
// than builderKeep updates, neither the batcher nor its builder keeps the
// buffer or the sort's scratch (an arrangement keeps its batch only); a
// small seal keeps its capacity for reuse.
func TestBatcherReleasesLargeBuffers(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		b := NewBatcher(ar, 0)
		row := []int64{1, 2, 3}
		n := builderKeep + 1
		b.Grow(n)
		for i := range n {
			row[0] = int64(i)
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 0, 1)
		}
		out, err := b.Seal(frontier.At(0), frontier.At(1))
		if err != nil || out.Len() != n {
			t.Fatalf("%v: seal %v, %d updates", ar, err, out.Len())
		}
		bld := b.bld
		if c := cap(bld.recs) + cap(bld.scratch) + cap(b.times) + cap(bld.times) + cap(bld.keys) + cap(bld.sRows); c != 0 {
			t.Fatalf("%v: %d slots of buffers kept after a large seal", ar, c)
		}
		for i := range 10 {
			row[0] = int64(i)
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 1, 1)
		}
		if _, err := b.Seal(frontier.At(1), frontier.At(2)); err != nil {
			t.Fatal(err)
		}
		if cap(bld.recs)+cap(b.times) == 0 {
			t.Fatalf("%v: a small seal released its buffer", ar)
		}
	}
}

// TestBatcherPushChunk pushes random columnar chunks (PushChunk, in every
// shape: the two-column fast path, other column orders, arity 0 sides, rows
// wider than the updates, wide arities with rows copied whole, by column
// and at push), with single updates (Push) mixed
// in, and seals at several uppers: every seal must be exactly the
// consolidated updates pushed before it with times in [lower, upper), Len
// must count what is left, and the pushed chunks must be left as they were.
func TestBatcherPushChunk(t *testing.T) {
	type shape struct {
		ar        Arity
		width     int
		key, vals []int
	}
	shapes := []shape{
		{Arity{1, 1}, 2, []int{0}, []int{1}},
		{Arity{1, 1}, 2, []int{1}, []int{0}},
		{Arity{1, 0}, 1, []int{0}, nil},
		{Arity{0, 1}, 1, nil, []int{0}},
		{Arity{1, 1}, 3, []int{2}, []int{0}},
		{Arity{2, 1}, 3, []int{0, 2}, []int{1}},
		{Arity{2, 1}, 3, []int{0, 1}, []int{2}},
		{Arity{1, 2}, 4, []int{3}, []int{0, 2}},
	}
	uppers := []frontier.Frontier{frontier.At(3), frontier.At(3), frontier.At(7), frontier.Empty()}
	for _, sh := range shapes {
		rng := rand.New(rand.NewPCG(uint64(sh.width), uint64(len(sh.key))))
		b := NewBatcher(sh.ar, 0)
		var pending []Update // pushed, not yet sealed
		var chunks, copies [][]int64
		project := func(row []int64, cols []int) []int64 {
			out := []int64{}
			for _, c := range cols {
				out = append(out, row[c])
			}
			return out
		}
		lower := frontier.Min()
		for _, upper := range uppers {
			for range 1 + rng.IntN(4) {
				n := rng.IntN(40)
				rows := make([]int64, n*sh.width)
				times, diffs := make([]uint64, n), make([]int64, n)
				lo, _ := lower.Time()
				for i := range n {
					for c := range sh.width {
						rows[i*sh.width+c] = rng.Int64N(5) - 2
					}
					times[i], diffs[i] = lo+rng.Uint64N(9), rng.Int64N(5)-2
					row := rows[i*sh.width : i*sh.width+sh.width]
					pending = append(pending, Update{Key: project(row, sh.key), Val: project(row, sh.vals), Time: times[i], Diff: diffs[i]})
				}
				b.PushChunk(rows, sh.width, sh.key, sh.vals, times, diffs)
				chunks, copies = append(chunks, rows), append(copies, slices.Clone(rows))
				if rng.IntN(2) == 0 {
					u := Update{Key: project([]int64{1, 2, 3}, []int{0, 1}[:sh.ar.Key]), Val: project([]int64{1, 2, 3}, []int{2, 0}[:sh.ar.Val]), Time: lo + rng.Uint64N(9), Diff: 1}
					b.Push(u.Key, u.Val, u.Time, u.Diff)
					pending = append(pending, u)
				}
			}
			if b.Len() != len(pending) {
				t.Fatalf("%v: Len %d, %d updates pushed and not sealed", sh, b.Len(), len(pending))
			}
			got, err := b.Seal(lower, upper)
			if err != nil {
				t.Fatal(err)
			}
			// The model: consolidate the pending updates before upper.
			sums := map[string]int64{}
			var left []Update
			for _, u := range pending {
				if upper.Beyond(u.Time) {
					left = append(left, u)
					continue
				}
				sums[fmt.Sprint(u.Key, u.Val, u.Time)] += u.Diff
			}
			var want []string
			for k, d := range sums {
				if d != 0 {
					want = append(want, fmt.Sprint(k, d))
				}
			}
			var have []string
			for _, u := range got.Updates() {
				have = append(have, fmt.Sprint(fmt.Sprint(u.Key, u.Val, u.Time), u.Diff))
			}
			slices.Sort(want)
			slices.Sort(have)
			if !slices.Equal(have, want) {
				t.Fatalf("%v: seal [%v, %v)\n got %v\nwant %v", sh, lower, upper, have, want)
			}
			if got.Desc().Lower != lower || got.Desc().Upper != upper {
				t.Fatalf("%v: sealed %v, want [%v, %v)", sh, got.Desc(), lower, upper)
			}
			pending, lower = left, upper
		}
		if b.Len() != 0 {
			t.Fatalf("%v: %d updates left after sealing at {}", sh, b.Len())
		}
		for i := range chunks {
			if !slices.Equal(chunks[i], copies[i]) {
				t.Fatalf("%v: chunk %d modified by the batcher", sh, i)
			}
		}
	}
}
