package dataflow

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// historyAt accumulates chunks at time t: each row's diffs of times at or
// before t, rows of sum 0 left out. The test's diffs are small, so no sum
// leaves int64.
func historyAt(chunks []*Chunk, t frontier.Time) map[string]int64 {
	out := map[string]int64{}
	for _, c := range chunks {
		for i := range c.Len() {
			if c.Times[i] <= t {
				out[fmt.Sprint(c.Row(i))] += c.Diffs[i]
			}
		}
	}
	for k, d := range out {
		if d == 0 {
			delete(out, k)
		}
	}
	return out
}

// TestInputCompactionKeepsTheCollectionFromSince: random updates of few
// rows over many times, compacted as the since follows the input's
// frontier: the history accumulates to what every update sent does at
// every time from the since on, holds no time before it, and stays within
// about twice what a compaction leaves while the updates sent grow.
func TestInputCompactionKeepsTheCollectionFromSince(t *testing.T) {
	for _, peers := range []int{1, 2} {
		t.Run(fmt.Sprintf("peers=%d", peers), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(peers), 11))
			ins := make([]*Inputs, peers)
			for w := range ins {
				ins[w] = NewInputs(w, peers, func(*Dataflow) {})
				if err := ins[w].Declare("in", 2); err != nil {
					t.Fatal(err)
				}
			}
			var sent []*Chunk
			most := 0
			for tm := range uint64(200) {
				c := NewChunk(2, 100)
				for range 100 {
					c.Push([]int64{rng.Int64N(40), rng.Int64N(3)}, tm+uint64(rng.IntN(3)), rng.Int64N(7)-3)
				}
				sent = append(sent, c)
				for w, in := range ins {
					if err := in.Send("in", c); err != nil {
						t.Fatal(err)
					}
					if err := in.Advance("in", frontier.At(tm+1)); err != nil {
						t.Fatal(err)
					}
					if err := in.AllowCompaction("in", frontier.At(tm)); err != nil {
						t.Fatalf("worker %d: %v", w, err)
					}
					most = max(most, in.HistoryLen())
				}
				if tm%37 != 0 && tm != 199 {
					continue
				}
				var hist []*Chunk
				for _, in := range ins {
					l := in.logs["in"]
					hist = append(hist, l.history...)
					n := 0
					for _, c := range l.history {
						n += c.Len()
					}
					if n != l.rows {
						t.Fatalf("time %d: the history holds %d updates, counted %d", tm, n, l.rows)
					}
				}
				for at := tm; at < tm+3; at++ {
					if got, want := historyAt(hist, at), historyAt(sent, at); !maps.Equal(got, want) {
						t.Fatalf("time %d: the history at %d is %v, the updates sent make %v", tm, at, got, want)
					}
				}
			}
			// 20,000 updates sent over 120 possible rows and 3 times ahead:
			// a compaction leaves at most 360 a worker, so a worker holds
			// at most inputCompactMin + 360 + a round's 100 before the next.
			if bound := inputCompactMin + 360 + 100; most > bound {
				t.Fatalf("the history held up to %d updates, want at most %d", most, bound)
			}
		})
	}
}

// TestCompactChunksSumsExactly: a compaction sums one row's diffs at one
// time exactly: a partial sum out of int64 whose total fits is one update,
// a total out of int64 is kept as the fewest updates that add up to it
// (each at the since), a zero total is dropped, and the result is sorted
// by row and time.
func TestCompactChunksSumsExactly(t *testing.T) {
	const M = math.MaxInt64
	in := []*Chunk{
		chunk([]int64{1, M, 5}, []int64{2, 1, 7}, []int64{4, 2, 6}),
		chunk([]int64{3, 1, 5}, []int64{0, -1, 7}, []int64{5, 3, 6}),
		chunk([]int64{2, M, 9}, []int64{0, -1, 5}, []int64{0, 1, 4}),
		chunk([]int64{3, M, 9}, []int64{9, -3, 6}),
		chunk([]int64{1, M, 10}, []int64{2, M, 10}, []int64{3, -5, 10}),
		chunk([]int64{0, -M - 1, 11}, []int64{1, -M - 1, 11}, []int64{3, 3, 11}, []int64{2, -M - 1, 11}),
	}
	got := compactChunks(in, 1, 18, 3)
	type upd struct {
		row  int64
		t    uint64
		diff int64
	}
	var rows []upd
	for i := range got.Len() {
		rows = append(rows, upd{got.Row(i)[0], got.Times[i], got.Diffs[i]})
	}
	want := []upd{
		{4, 3, 1},  // time 0 advanced to 3
		{5, 3, M},  // M + 1 - 1 at time 3 (times 1, 3, 0): the total fits
		{6, 4, 2},  // time 4 stays
		{6, 5, 3},  // so does 5
		{6, 9, -3}, // and 9; row 7's 1 at time 2 and -1 at 0 are gone
		{9, 3, M},  // M at 2 and M at 3 leave int64: kept as two updates
		{9, 3, M},
		{10, 3, M}, // 2M - 5: the fewest updates that add up to it
		{10, 3, M - 5},
		{11, 3, -M - 1}, // 3·MinInt64 + 3
		{11, 3, -M - 1},
		{11, 3, -M + 2},
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("compacted to 3:\n got %v\nwant %v", rows, want)
	}
}

// TestCompactChunksAgreesWithTheExactSum: the builder's compaction
// (compactChunks) gives what the comparator sort with 128-bit sums
// (compactExact) gives, update for update, on random histories of arities
// 0 to 4: rows over few values and over the whole of int64, times before and
// after the since, diffs that cancel, and some histories whose sums leave
// int64 (which the builder saturates, so compactChunks must take the exact
// path for them).
func TestCompactChunksAgreesWithTheExactSum(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 40))
	val := func(wide bool) int64 {
		if wide && r.IntN(4) == 0 {
			return int64(r.Uint64()) // the whole of int64, signs mixed
		}
		return int64(r.IntN(5)) - 2
	}
	overflowed := 0
	for iter := range 600 {
		ar := iter % 5
		wide := iter%3 == 0
		big := iter%7 == 0 // diffs near the bounds: sums may leave int64
		var chunks []*Chunk
		n := 0
		for range 1 + r.IntN(4) {
			c := NewChunk(ar, 0)
			for range r.IntN(200) {
				row := make([]int64, ar)
				for j := range row {
					row[j] = val(wide)
				}
				d := int64(r.IntN(5)) - 2
				if big {
					d = math.MaxInt64 - int64(r.IntN(3))
					if r.IntN(2) == 0 {
						d = math.MinInt64 + int64(r.IntN(3))
					}
				}
				c.Push(row, uint64(r.IntN(12)), d)
			}
			n += c.Len()
			chunks = append(chunks, c)
		}
		since := uint64(r.IntN(14))
		got := compactChunks(chunks, ar, n, since)
		want := compactExact(chunks, ar, n, since)
		if err := got.Check(); err != nil {
			t.Fatalf("iteration %d (arity %d): %v", iter, ar, err)
		}
		if got.Arity != ar || !slices.Equal(got.Rows, want.Rows) || !slices.Equal(got.Times, want.Times) || !slices.Equal(got.Diffs, want.Diffs) {
			t.Fatalf("iteration %d (arity %d, since %d, %d updates):\n got rows %v times %v diffs %v\nwant rows %v times %v diffs %v",
				iter, ar, since, n, got.Rows, got.Times, got.Diffs, want.Rows, want.Times, want.Diffs)
		}
		for _, d := range want.Diffs {
			if d == math.MaxInt64 || d == math.MinInt64 {
				overflowed++
				break
			}
		}
	}
	if overflowed == 0 {
		t.Fatal("no history's sum left int64: the exact path was never compared")
	}
}

// TestInputCompactionRefusesReadsBeforeItsSince: a dataflow whose as_of is
// before the input's since is refused (ErrInputCompacted), one at it reads
// the history; a since never moves back; {} drops the history and refuses
// every later reader.
func TestInputCompactionRefusesReadsBeforeItsSince(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	read := func(id string, asOf uint64) error {
		_, err := Build(env, Desc{ID: id, AsOf: frontier.At(asOf), Until: frontier.Empty(), Maintained: true, Build: func(c *Context) error {
			_, err := c.Input("in", 2)
			return err
		}}, 1)
		return err
	}
	if err := env.Inputs.Declare("in", 2); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Send("in", chunk([]int64{1, 1, 1, 10}, []int64{4, 1, 2, 20})); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.AllowCompaction("in", frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	if err := read("early", 2); !errors.Is(err, ErrInputCompacted) {
		t.Fatalf("a reader at as_of 2 after compaction to 3: err %v, want ErrInputCompacted", err)
	}
	if err := read("at", 3); err != nil {
		t.Fatalf("a reader at the since: %v", err)
	}
	if err := env.Inputs.AllowCompaction("in", frontier.At(2)); err == nil {
		t.Fatal("compaction from 3 back to 2 accepted")
	}
	if err := env.Inputs.AllowCompaction("nope", frontier.At(2)); err == nil {
		t.Fatal("compaction of an unknown input accepted")
	}
	if err := env.Inputs.AllowCompaction("in", frontier.Empty()); err != nil {
		t.Fatal(err)
	}
	if n := env.Inputs.HistoryLen(); n != 0 {
		t.Fatalf("%d updates kept after compaction to {}", n)
	}
	if err := env.Inputs.Send("in", chunk([]int64{9, 1, 3, 30})); err != nil {
		t.Fatal(err)
	}
	if n := env.Inputs.HistoryLen(); n != 0 {
		t.Fatalf("%d updates kept of a send after compaction to {}", n)
	}
	if err := read("late", math.MaxUint64-1); !errors.Is(err, ErrInputCompacted) {
		t.Fatalf("a reader after compaction to {}: err %v, want ErrInputCompacted", err)
	}
}

// TestInputCompactionAheadOfTheFrontier: a since allowed once, ahead of
// the input's frontier, and updates sent at earlier times after it, with
// no AllowCompaction since: the history compacts as it grows, not only
// when the since moves, so it stays within about twice what a compaction
// leaves and accumulates at the since to what every update sent does.
func TestInputCompactionAheadOfTheFrontier(t *testing.T) {
	for _, peers := range []int{1, 2} {
		t.Run(fmt.Sprintf("peers=%d", peers), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(peers), 12))
			const since = 1000
			ins := make([]*Inputs, peers)
			for w := range ins {
				ins[w] = NewInputs(w, peers, func(*Dataflow) {})
				if err := ins[w].Declare("in", 2); err != nil {
					t.Fatal(err)
				}
				if err := ins[w].AllowCompaction("in", frontier.At(since)); err != nil {
					t.Fatal(err)
				}
			}
			var sent []*Chunk
			for tm := range uint64(200) {
				c := NewChunk(2, 100)
				for range 100 {
					c.Push([]int64{rng.Int64N(40), rng.Int64N(3)}, tm, rng.Int64N(7)-3)
				}
				sent = append(sent, c)
				for w, in := range ins {
					if err := in.Send("in", c); err != nil {
						t.Fatal(err)
					}
					if err := in.Advance("in", frontier.At(tm+1)); err != nil {
						t.Fatal(err)
					}
					// All 120 rows at the since a compaction leaves, the
					// next after inputCompactMin more and one round's 100.
					if n, bound := in.HistoryLen(), inputCompactMin+120+100; n > bound {
						t.Fatalf("time %d, worker %d: the history holds %d updates, want at most %d", tm, w, n, bound)
					}
				}
			}
			var hist []*Chunk
			for _, in := range ins {
				hist = append(hist, in.logs["in"].history...)
			}
			if got, want := historyAt(hist, since), historyAt(sent, since); !maps.Equal(got, want) {
				t.Fatalf("the history at the since is %v, the updates sent make %v", got, want)
			}
		})
	}
}

// TestInputCompactionBoundsARowOutOfInt64: a row whose count is out of
// int64 (2·MaxInt64, or below 2·MinInt64) gets a +1 and a -1 every round
// while the since follows the frontier: its total at the since is kept
// exactly, as the fewest updates that add up to it, not as every update
// it ever had, so the history stays bounded however many rounds run.
func TestInputCompactionBoundsARowOutOfInt64(t *testing.T) {
	for _, d := range []int64{math.MaxInt64, math.MinInt64} {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			in := NewInputs(0, 1, func(*Dataflow) {})
			if err := in.Declare("in", 1); err != nil {
				t.Fatal(err)
			}
			if err := in.Send("in", chunk([]int64{0, d, 7}, []int64{0, d, 7}, []int64{0, d / 3, 7})); err != nil {
				t.Fatal(err)
			}
			var want count // the row's exact total
			for range 2 {
				want.add(d)
			}
			want.add(d / 3)
			for tm := uint64(1); tm < 4000; tm++ {
				c := NewChunk(1, 3)
				c.Push([]int64{7}, tm, 1)
				c.Push([]int64{7}, tm, -1)
				c.Push([]int64{int64(tm % 5)}, tm, 1) // other rows
				if err := in.Send("in", c); err != nil {
					t.Fatal(err)
				}
				if err := in.Advance("in", frontier.At(tm+1)); err != nil {
					t.Fatal(err)
				}
				if err := in.AllowCompaction("in", frontier.At(tm)); err != nil {
					t.Fatal(err)
				}
				// A compaction leaves the row's 3 updates, the other 5
				// rows, and one update after the since (a compaction at
				// the Send); the next comes inputCompactMin later.
				if l := in.logs["in"]; l.compacted > 3+5+1 {
					t.Fatalf("time %d: a compaction left %d updates, want at most %d", tm, l.compacted, 3+5+1)
				}
			}
			if n, bound := in.HistoryLen(), 3+5+1+inputCompactMin; n > bound {
				t.Fatalf("the history holds %d updates, want at most %d", n, bound)
			}
			var got count
			for _, c := range in.logs["in"].history {
				for i := range c.Len() {
					if c.Row(i)[0] == 7 {
						got.add(c.Diffs[i])
					}
				}
			}
			if got != want {
				t.Fatalf("the row's total in the history is %+v, want %+v", got, want)
			}
		})
	}
}
