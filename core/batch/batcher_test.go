package batch

import (
	"fmt"
	"math"
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

// TestBatcherSealsChunksStraightIntoTheBlock: one-column keys and vals pushed
// as chunks are gathered at Seal straight into the new batch's column block,
// whatever share of them lies before the seal's upper: fewer than radixMin
// of them (the builder's records take them instead), a block three quarters
// full or less (copied to its size), or one nearly full; records pushed one
// by one join them, and updates at or beyond upper stay for the next seal.
func TestBatcherSealsChunksStraightIntoTheBlock(t *testing.T) {
	const n = 100
	for _, before := range []int{0, 1, 2, 40, defaultRadixMin - 1, defaultRadixMin, 70, 80, n} {
		for _, pushed := range []int{0, 3} {
			b := NewBatcher(Arity{1, 1}, 0)
			type upd struct {
				k, v int64
				t    uint64
				d    int64
			}
			var all []upd
			rows := make([]int64, 2*n)
			times, diffs := make([]uint64, n), make([]int64, n)
			for i := range n {
				rows[2*i], rows[2*i+1] = int64((i*37)%50), int64(i%3)
				times[i], diffs[i] = 5, int64(1+i%2)
				if i >= before {
					times[i] = 9 // beyond the first seal's upper
				}
				all = append(all, upd{rows[2*i], rows[2*i+1], times[i], diffs[i]})
			}
			b.PushChunk(rows, 2, []int{0}, []int{1}, times, diffs)
			for i := range pushed {
				u := upd{int64(i), 7, uint64(4 + 4*(i%2)), 1}
				b.Push([]int64{u.k}, []int64{u.v}, u.t, u.d)
				all = append(all, u)
			}
			for _, seal := range []struct{ lower, upper frontier.Frontier }{
				{frontier.Min(), frontier.At(8)}, {frontier.At(8), frontier.Empty()},
			} {
				got, err := b.Seal(seal.lower, seal.upper)
				if err != nil {
					t.Fatal(err)
				}
				if err := got.Check(); err != nil {
					t.Fatalf("before=%d pushed=%d: %v", before, pushed, err)
				}
				sums := map[string]int64{}
				for _, u := range all {
					if seal.lower.LessEqual(frontier.At(u.t)) && !seal.upper.LessEqual(frontier.At(u.t)) {
						sums[fmt.Sprint(u.k, u.v, u.t)] += u.d
					}
				}
				var want, have []string
				for k, d := range sums {
					want = append(want, fmt.Sprint(k, " ", d))
				}
				for _, u := range got.Updates() {
					have = append(have, fmt.Sprint(fmt.Sprint(u.Key[0], u.Val[0], u.Time), " ", u.Diff))
				}
				slices.Sort(want)
				slices.Sort(have)
				if !slices.Equal(have, want) || got.Desc().Lower != seal.lower || got.Desc().Upper != seal.upper {
					t.Fatalf("before=%d pushed=%d: seal %v\n got %v\nwant %v", before, pushed, got.Desc(), have, want)
				}
			}
			if b.Len() != 0 {
				t.Fatalf("before=%d pushed=%d: %d updates left", before, pushed, b.Len())
			}
		}
	}
}

// TestBatcherKeepsAWholeChunkUpdateAtUpper: a wide chunk pushed whole with
// its columns in order is copied into the build only when every time lies
// before the upper; an update at the upper itself stays in the Batcher for
// the next Seal (BT1). The chunks TestBatcherPushChunk draws spread their
// times past the upper, so none has its latest time exactly at it.
func TestBatcherKeepsAWholeChunkUpdateAtUpper(t *testing.T) {
	b := NewBatcher(Arity{2, 1}, 0)
	b.PushChunk([]int64{1, 2, 3, 4, 5, 6}, 3, []int{0, 1}, []int{2}, []uint64{0, 3}, []int64{1, 1})
	got, err := b.Seal(frontier.Min(), frontier.At(3))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "[{0}, {3}) since {0}\n1 2 | 3 @0 +1" {
		t.Fatalf("first seal:\n%v", got)
	}
	got, err = b.Seal(frontier.At(3), frontier.At(4))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "[{3}, {4}) since {0}\n4 5 | 6 @3 +1" {
		t.Fatalf("second seal:\n%v", got)
	}
}

// A capacity hint below 0 is a hint of none: NewBuilder and NewBatcher
// (of one-column rows and of wider ones) make room for nothing and
// Grow grows nothing, where each panicked in make or slices.Grow. The
// builder and batcher then work as any other.
func TestANegativeCapacityHintIsNone(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		t.Run(fmt.Sprint(ar), func(t *testing.T) {
			key, val := make([]int64, ar.Key), make([]int64, ar.Val)
			bld := NewBuilder(ar, -1)
			bld.Push(key, val, 0, 1)
			got, err := bld.Build(frontier.At(0), frontier.At(1))
			if err != nil || got.Len() != 1 {
				t.Fatalf("NewBuilder(%v, -1) built %v, %v: want one update", ar, got, err)
			}
			b := NewBatcher(ar, -1)
			b.Grow(-1)
			b.Grow(math.MinInt)
			b.Push(key, val, 0, 1)
			got, err = b.Seal(frontier.At(0), frontier.At(1))
			if err != nil || got.Len() != 1 {
				t.Fatalf("NewBatcher(%v, -1) sealed %v, %v: want one update", ar, got, err)
			}
		})
	}
}

// TestALargeSealKeepsTheUpdatesItLeaves: a seal past builderKeep
// updates releases its buffers only when no update waits in them for a
// later seal; one at its upper is sealed by the next.
func TestALargeSealKeepsTheUpdatesItLeaves(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		b := NewBatcher(ar, 0)
		row := []int64{1, 2, 3}
		n := builderKeep + 1
		for i := range n {
			row[0] = int64(i)
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 0, 1)
		}
		row[0] = -1
		b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 1, 7) // at the first seal's upper
		out, err := b.Seal(frontier.At(0), frontier.At(1))
		if err != nil || out.Len() != n {
			t.Fatalf("%v: seal %v, %d updates, want %d", ar, err, out.Len(), n)
		}
		if b.Len() != 1 {
			t.Fatalf("%v: %d updates left after the large seal, want 1", ar, b.Len())
		}
		out, err = b.Seal(frontier.At(1), frontier.At(2))
		if err != nil || out.Len() != 1 || out.Updates()[0].Key[0] != -1 || out.Updates()[0].Diff != 7 {
			t.Fatalf("%v: the next seal: %v, %v; want the update at 1 of diff 7", ar, err, out)
		}
	}
}

// TestConsolidateOfFewerThanTwoUpdatesDoesNothing: with nothing or one
// update buffered there is nothing to sum, and Consolidate says so.
func TestConsolidateOfFewerThanTwoUpdatesDoesNothing(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		b := NewBatcher(ar, 0)
		if b.Consolidate() {
			t.Fatalf("%v: an empty batcher consolidated", ar)
		}
		b.Push(make([]int64, ar.Key), []int64{4}, 1, 3)
		if b.Consolidate() || b.Len() != 1 {
			t.Fatalf("%v: a batcher of one update consolidated (%d left)", ar, b.Len())
		}
		b.Push(make([]int64, ar.Key), []int64{4}, 1, 2)
		if !b.Consolidate() || b.Len() != 1 {
			t.Fatalf("%v: two updates of one row and time did not consolidate to one (%d left)", ar, b.Len())
		}
	}
}

// TestAChunkOfNewValColumnsIsReadThroughThem: a wide batcher reuses the
// column list of its last whole-row chunk only when both its key and
// its val columns are the same; a chunk that changes its val columns
// alone is read through its own.
func TestAChunkOfNewValColumnsIsReadThroughThem(t *testing.T) {
	b := NewBatcher(Arity{2, 1}, 2)
	rows := []int64{1, 2, 3}
	b.PushChunk(rows, 3, []int{0, 1}, []int{2}, []uint64{0}, []int64{1})
	b.PushChunk(rows, 3, []int{0, 1}, []int{0}, []uint64{0}, []int64{1})
	out, err := b.Seal(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "[{0}, {1}) since {0}\n1 2 | 1 @0 +1\n1 2 | 3 @0 +1"; got != want {
		t.Fatalf("batch\n%s\nwant\n%s", got, want)
	}
}
