package batch

import (
	"math"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// TestMergeNEqualsPairwise: merging k adjacent batches at once gives, update
// for update and in its description, what merging them two at a time gives
// under the same compaction frontier, under any fuel schedule and whatever
// number of updates it is told to expect (its output columns then start
// that long and grow); every Work call consumes exactly its fuel until the
// merge is done; the result passes Check (B1–B3).
func TestMergeNEqualsPairwise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: 1, Val: 1}
		if rapid.Bool().Draw(t, "wide") {
			ar = drawArity(t)
		}
		n := rapid.IntRange(1, 9).Draw(t, "batches")
		var bs []*Batch
		for i := range n {
			lo := uint64(3 * i)
			b, _ := drawBatch(t, ar, lo, lo+3, "b")
			if rapid.IntRange(0, 4).Draw(t, "since") == 0 {
				b = b.WithDesc(frontier.Description{Lower: b.Lower(), Upper: b.Upper(), Since: frontier.At(lo)})
			}
			bs = append(bs, b)
		}
		comp := drawCompaction(t)
		want := mergePairwise(t, bs, comp)
		m := newMergerN(bs, comp, drawParams(t, []int{1, 2, 3, kwStage}), drawExpect(t, bs))
		got := workDrawnFuel(t, m, n > 2, 30)
		if n > 1 && got.Desc() != want.Desc() {
			t.Fatalf("desc %v, pairwise %v", got.Desc(), want.Desc())
		}
		total := 0
		for _, b := range bs {
			total += b.Len()
		}
		if m.WorkDone() != int64(total) {
			t.Fatalf("work done %d, inputs hold %d updates", m.WorkDone(), total)
		}
		if n > 1 && got.String() != want.String() {
			t.Fatalf("k-way:\n%s\npairwise:\n%s", got, want)
		}
	})
}

// TestMergeNOverflow: a consolidation that leaves int64 is reported.
func TestMergeNOverflow(t *testing.T) {
	ar := Arity{1, 1}
	var bs []*Batch
	for i := range uint64(3) {
		bld := NewBuilder(ar, 1)
		bld.Push1(1, 1, i, math.MaxInt64/2+1)
		b, err := bld.Build(frontier.At(i), frontier.At(i+1))
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	m := NewMergerN(bs, frontier.At(2))
	fuel := int64(100)
	m.Work(&fuel)
	if _, err := m.Result(); err != ErrOverflow {
		t.Fatalf("err %v, want ErrOverflow", err)
	}
	// Without compaction the updates stay apart and nothing overflows.
	m = NewMergerN(bs, frontier.Min())
	fuel = 100
	m.Work(&fuel)
	out, err := m.Result()
	if err != nil || out.Len() != 3 || !slices.Equal(out.times, []uint64{0, 1, 2}) {
		t.Fatalf("err %v, %v", err, out)
	}
}

// TestMergeNRuns: a merge where one flat input of one-column keys and vals
// dominates (as the largest batch of a steady trace does), so kway11 moves
// runs of it in bulk, gives what pairwise merging gives under any fuel
// schedule, with keys shared between inputs at the runs' edges and times
// that compaction coalesces or cancels. The keys sit at the bottom of int64,
// near 0 or at its top, where math.MaxInt64 is a real key that must sort
// before every exhausted input.
func TestMergeNRuns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: 1, Val: 1}
		base := rapid.SampledFrom([]int64{math.MinInt64, 0, math.MaxInt64 - 120}).Draw(t, "base")
		n := rapid.IntRange(3, 6).Draw(t, "batches")
		var bs []*Batch
		for i := range n {
			lo := uint64(3 * i)
			bld := NewBuilder(ar, 0)
			if i == 0 {
				// Flat: distinct keys, one val and one update each.
				for k := range int64(rapid.IntRange(0, 120).Draw(t, "big")) {
					if rapid.IntRange(0, 3).Draw(t, "skip") > 0 {
						bld.Push1(base+k, rapid.Int64Range(0, 1).Draw(t, "v"), lo+rapid.Uint64Range(0, 2).Draw(t, "t"), 1)
					}
				}
			} else {
				for range rapid.IntRange(0, 6).Draw(t, "small") {
					bld.Push1(base+rapid.Int64Range(0, 120).Draw(t, "k"), rapid.Int64Range(0, 1).Draw(t, "v"), lo+rapid.Uint64Range(0, 2).Draw(t, "t"), rapid.Int64Range(-1, 1).Draw(t, "d"))
				}
			}
			b, err := bld.Build(frontier.At(lo), frontier.At(lo+3))
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		comp := drawCompaction(t)
		want := mergePairwise(t, bs, comp)
		prm := drawParams(t, []int{1, 5, kwStage})
		got := workDrawnFuel(t, newMergerN(bs, comp, prm, drawExpect(t, bs)), true, 40)
		if got.String() != want.String() {
			t.Fatalf("k-way:\n%s\npairwise:\n%s", got, want)
		}
		// With every input in the tree, the Go loop alone gallops the same
		// updates as with the assembly loop (their runs agree).
		prm.big = 2
		gallops := [2]int{}
		for i, slow := range []bool{false, true} {
			prm.slow = slow
			m := newMergerN(bs, comp, prm, 0)
			fuel := int64(1 << 20)
			m.Work(&fuel)
			if m.k11 != nil { // nil when there is nothing to merge
				gallops[i] = m.k11.galloped
			}
		}
		if gallops[0] != gallops[1] {
			t.Fatalf("galloped %d updates, the Go loop alone %d", gallops[0], gallops[1])
		}
	})
}

// mergePairwise merges bs two at a time, oldest first: what a k-way merge
// of them must equal.
func mergePairwise(t *rapid.T, bs []*Batch, comp frontier.Frontier) *Batch {
	want := bs[0]
	for _, b := range bs[1:] {
		var err error
		if want, err = Merge(want, b, comp); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// workDrawnFuel works m to completion in steps of drawn fuel (1 to
// maxFuel), requiring, when exact, that every step before the end consumes
// exactly its fuel, and returns the result, which must pass Check.
func workDrawnFuel(t *rapid.T, m *Merger, exact bool, maxFuel int64) *Batch {
	for !m.Done() {
		fuel := rapid.Int64Range(1, maxFuel).Draw(t, "fuel")
		f := fuel
		before := m.WorkDone()
		m.Work(&f)
		if exact && !m.Done() && (f != 0 || m.WorkDone()-before != fuel) {
			t.Fatalf("Work(%d) left %d fuel and did %d work before the end", fuel, f, m.WorkDone()-before)
		}
	}
	got, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check(); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	return got
}

// drawParams draws the kernel's parameters: one of stages, whether the
// largest input merges beside the tree never, by default, or whenever
// there are three inputs or more, and whether selectBlock runs in Go alone
// or its common updates in assembly (where there is an assembly loop).
func drawParams(t *rapid.T, stages []int) kwParams {
	return kwParams{
		stage:  rapid.SampledFrom(stages).Draw(t, "stage"),
		big:    rapid.SampledFrom([]float64{2, kwDefault.big, 0}).Draw(t, "big"),
		bigMin: rapid.SampledFrom([]int{3, kwDefault.bigMin}).Draw(t, "big min"),
		slow:   rapid.Bool().Draw(t, "slow"),
	}
}

// drawExpect draws the updates a merge of bs is told to expect
// (NewMergerNExpect): none, or 1 up to all of their updates, so the output
// columns start short and grow, by one or by many, in any block.
func drawExpect(t *rapid.T, bs []*Batch) int {
	total := 0
	for _, b := range bs {
		total += b.Len()
	}
	if total == 0 || rapid.Bool().Draw(t, "no expect") {
		return 0
	}
	return rapid.IntRange(1, total).Draw(t, "expect")
}

// TestMergeNGallopStopsAtEveryOtherHead: an input that wins kwayGallop
// updates in a row moves its next ones in bulk only while they sort before
// the head of every other input, its sibling's at the lowest match of its
// path included: an input of keys 0..39 runs past the single key 12 of
// another, for every pair of places the two can take in the tree.
func TestMergeNGallopStopsAtEveryOtherHead(t *testing.T) {
	const p = 5
	for pair := range p * p {
		runner, blocker := pair/p, pair%p
		if runner == blocker {
			continue
		}
		for _, stage := range []int{5, kwStage} {
			var bs []*Batch
			for i := range p {
				lo := uint64(3 * i)
				bld := NewBuilder(Arity{1, 1}, 0)
				switch i {
				case runner:
					for k := range int64(40) {
						bld.Push1(k, 0, lo, 1)
					}
				case blocker:
					bld.Push1(12, 1, lo, 1)
				default:
					bld.Push1(int64(100+i), 0, lo, 1)
				}
				b, err := bld.Build(frontier.At(lo), frontier.At(lo+3))
				if err != nil {
					t.Fatal(err)
				}
				bs = append(bs, b)
			}
			m := newMergerN(bs, frontier.Min(), kwParams{stage: stage, big: 2}, 0)
			fuel := int64(1 << 20)
			m.Work(&fuel)
			got, err := m.Result()
			if err != nil {
				t.Fatal(err)
			}
			// The Go loop alone gallops the same updates, and some: the
			// runner wins keys 0 to 11 and 13 to 39 in a row.
			slow := newMergerN(bs, frontier.Min(), kwParams{stage: stage, big: 2, slow: true}, 0)
			fuel = 1 << 20
			slow.Work(&fuel)
			if g, gs := m.k11.galloped, slow.k11.galloped; g != gs || g == 0 {
				t.Fatalf("runner %d, blocker %d, stage %d: galloped %d updates, the Go loop alone %d", runner, blocker, stage, g, gs)
			}
			want := bs[0]
			for _, b := range bs[1:] {
				if want, err = Merge(want, b, frontier.Min()); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != want.String() {
				t.Fatalf("runner %d, blocker %d, stage %d:\n%s\npairwise:\n%s", runner, blocker, stage, got, want)
			}
		}
	}
}

// TestBigInputShare: the input merged beside the tree is the largest, and
// only when it holds at least the share of the merge's updates and the
// merge has the least inputs or more (three at the least); the first of
// equal largest ones.
func TestBigInputShare(t *testing.T) {
	sized := func(ns ...int) []*Batch {
		var bs []*Batch
		for i, n := range ns {
			lo := uint64(10 * i)
			bs = append(bs, buildBatch(t, genKeyed(n, uint64(i+1), lo, "full"), lo, lo+10))
		}
		return bs
	}
	for _, c := range []struct {
		sizes []int
		share float64
		least int
		want  int
	}{
		{[]int{50, 25, 25}, 0.4, 3, 0},
		{[]int{25, 50, 25}, 0.4, 3, 1},
		{[]int{10, 10, 30, 10}, 0.4, 3, 2},
		{[]int{39, 31, 30}, 0.4, 3, -1},     // under the share
		{[]int{40, 30, 30}, 0.4, 3, 0},      // at it
		{[]int{80, 20}, 0.4, 0, -1},         // two inputs merge with the two-way kernel
		{[]int{30, 30, 30}, 0.3, 3, 0},      // equal: the first
		{[]int{0, 0, 0}, 0, 3, -1},          // nothing to merge
		{[]int{100, 1, 1}, 2, 3, -1},        // a share over 1: never
		{[]int{1, 1, 1, 1, 100}, 0, 3, 4},   // 0: the largest, always
		{[]int{100, 1, 1, 1}, 0.4, 5, -1},   // fewer inputs than the least
		{[]int{100, 1, 1, 1, 1}, 0.4, 5, 0}, // as many
	} {
		if got := bigInput(sized(c.sizes...), kwParams{big: c.share, bigMin: c.least}); got != c.want {
			t.Errorf("sizes %v share %v least %d: input %d, want %d", c.sizes, c.share, c.least, got, c.want)
		}
	}
	// The default splits the top merge of a steady trace (its batch about
	// half of the updates) and leaves a level's equal batches in the tree.
	if bigInput(sized(1000, 250, 250, 250, 240), kwDefault) != 0 || bigInput(sized(250, 250, 250, 250, 250), kwDefault) != -1 {
		t.Errorf("default %+v: the top merge not split, or equal batches split", kwDefault)
	}
}

// TestMergeNAdvancesToSinceOne: a k-way merge under a since of {1} advances
// the times at 0 to 1 and consolidates them with those at 1 (B4), for
// one-column rows and wider ones alike. A since of {0} is the only one
// whose advancing is the identity; the property above draws {1} as the
// compaction frontier only about once in 33 cases.
func TestMergeNAdvancesToSinceOne(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}, {0, 0}} {
		var bs []*Batch
		for i := range uint64(3) {
			bld := NewBuilder(ar, 1)
			bld.Push(make([]int64, ar.Key), make([]int64, ar.Val), i, 1)
			b, err := bld.Build(frontier.At(i), frontier.At(i+1))
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		m := NewMergerN(bs, frontier.At(1))
		fuel := int64(100)
		m.Work(&fuel)
		out, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Check(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.times, []uint64{1, 2}) || !slices.Equal(out.diffs, []int64{2, 1}) {
			t.Fatalf("arity %v: merged under since {1}:\n%v", ar, out)
		}
	}
}
