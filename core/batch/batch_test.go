package batch

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// modelKey identifies (key, val, time) in the naive model.
type modelKey struct {
	kv string
	t  uint64
}

func rowKey(k, v []int64) string { return fmt.Sprint(k, v) }

// accumulate returns the model's collection at time t: (key,val) → summed diff
// of updates at times <= t, zeros dropped.
func accumulate(m map[modelKey]int64, t uint64) map[string]int64 {
	out := map[string]int64{}
	for k, d := range m {
		if k.t <= t {
			out[k.kv] += d
			if out[k.kv] == 0 {
				delete(out, k.kv)
			}
		}
	}
	return out
}

// accumulateBatches does the same over batches.
func accumulateBatches(bs []*Batch, t uint64) map[string]int64 {
	m := map[modelKey]int64{}
	for _, b := range bs {
		for _, u := range b.Updates() {
			m[modelKey{rowKey(u.Key, u.Val), u.Time}] += u.Diff
		}
	}
	return accumulate(m, t)
}

// drawCompaction draws a merge's compaction frontier: {0} (advances
// nothing), some {t}, or {} (every hold gone).
func drawCompaction(t *rapid.T) frontier.Frontier {
	switch rapid.IntRange(0, 2).Draw(t, "compkind") {
	case 0:
		return frontier.Min()
	case 1:
		return frontier.At(rapid.Uint64Range(0, 10).Draw(t, "comp"))
	}
	return frontier.Empty()
}

func drawArity(t *rapid.T) Arity {
	return Arity{Key: rapid.IntRange(0, 2).Draw(t, "ka"), Val: rapid.IntRange(0, 2).Draw(t, "va")}
}

func drawRow(t *rapid.T, n int, label string) []int64 {
	r := make([]int64, n)
	for i := range r {
		r[i] = rapid.Int64Range(-2, 3).Draw(t, label)
	}
	return r
}

// drawBatch builds a batch of random updates in [lo, hi) and returns it with
// its model.
func drawBatch(t *rapid.T, ar Arity, lo, hi uint64, label string) (*Batch, map[modelKey]int64) {
	bld := NewBuilder(ar, 0)
	model := map[modelKey]int64{}
	for range rapid.IntRange(0, 40).Draw(t, label+"-n") {
		k, v := drawRow(t, ar.Key, "k"), drawRow(t, ar.Val, "v")
		tm := rapid.Uint64Range(lo, hi-1).Draw(t, "t")
		d := rapid.Int64Range(-2, 2).Draw(t, "d")
		bld.Push(k, v, tm, d)
		model[modelKey{rowKey(k, v), tm}] += d
	}
	b, err := bld.Build(frontier.At(lo), frontier.At(hi))
	if err != nil {
		t.Fatal(err)
	}
	return b, model
}

func TestBuildMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := drawArity(t)
		b, model := drawBatch(t, ar, 0, 6, "b")
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		// Consolidated contents equal the model's non-zero entries exactly.
		got := map[modelKey]int64{}
		for _, u := range b.Updates() {
			got[modelKey{rowKey(u.Key, u.Val), u.Time}] = u.Diff
		}
		maps.DeleteFunc(model, func(_ modelKey, d int64) bool { return d == 0 })
		if !maps.Equal(got, model) {
			t.Fatalf("batch %v\nmodel %v", got, model)
		}
		// Round trip through the text form.
		rt, err := Parse(ar, b.String())
		if err != nil {
			t.Fatalf("Parse(String()): %v\n%s", err, b)
		}
		if rt.String() != b.String() {
			t.Fatalf("round trip:\n%s\nvs\n%s", rt, b)
		}
	})
}

// TestMergeEquivalence is invariant 3 of §8 at batch level: for every t beyond
// the merged since, accumulation before and after the merge agree, under any
// fuel schedule and compaction frontier.
func TestMergeEquivalence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := drawArity(t)
		b1, _ := drawBatch(t, ar, 0, 4, "b1")
		b2, _ := drawBatch(t, ar, 4, 8, "b2")
		comp := drawCompaction(t)
		m := NewMerger(b1, b2, comp)
		for !m.Done() {
			fuel := rapid.Int64Range(1, 20).Draw(t, "fuel")
			m.Work(&fuel)
		}
		out, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Check(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := frontier.Description{Lower: frontier.At(0), Upper: frontier.At(8), Since: comp}
		if out.Desc() != want {
			t.Fatalf("desc %v, want %v", out.Desc(), want)
		}
		for tm := uint64(0); tm < 12; tm++ {
			if !out.Desc().Since.Beyond(tm) {
				continue
			}
			before := accumulateBatches([]*Batch{b1, b2}, tm)
			after := accumulateBatches([]*Batch{out}, tm)
			if !maps.Equal(before, after) {
				t.Fatalf("t=%d since %v: before %v after %v", tm, out.Desc().Since, before, after)
			}
		}
		// Times are advanced by the since (B4).
		if s, ok := out.Desc().Since.Time(); ok {
			for _, u := range out.Updates() {
				if u.Time < s {
					t.Fatalf("time %d not advanced by since %d", u.Time, s)
				}
			}
		}
	})
}

// TestMergedSinceIsJoin pins the differential-dataflow #247 lesson: the merged
// since is the join of both sinces and the frontier, not their minimum.
func TestMergedSinceIsJoin(t *testing.T) {
	ar := Arity{1, 1}
	b1 := Empty(ar, frontier.At(0), frontier.At(3)).WithDesc(frontier.Description{Lower: frontier.At(0), Upper: frontier.At(3), Since: frontier.At(5)})
	b2 := Empty(ar, frontier.At(3), frontier.At(6))
	out, err := Merge(b1, b2, frontier.At(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Desc().Since; got != frontier.At(5) {
		t.Fatalf("since %v, want {5}", got)
	}
}

// TestWorkedExampleA is §9.A: (+1 @0), (-1 @2), (+1 @5) compacted to {3}.
func TestWorkedExampleA(t *testing.T) {
	ar := Arity{1, 0}
	b1 := mustParse(t, ar, `[{0}, {3}) since {0}
		7 | () @0 +1
		7 | () @2 -1`)
	b2 := mustParse(t, ar, `[{3}, {6}) since {0}
		7 | () @5 +1`)
	out, err := Merge(b1, b2, frontier.At(3))
	if err != nil {
		t.Fatal(err)
	}
	want := "[{0}, {6}) since {3}\n7 | () @5 +1"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	for _, c := range []struct {
		t    uint64
		want int64
	}{{3, 0}, {5, 1}} {
		if got := accumulateBatches([]*Batch{out}, c.t)[rowKey([]int64{7}, []int64{})]; got != c.want {
			t.Errorf("acc(%d) = %d, want %d", c.t, got, c.want)
		}
	}
	// acc(1) was 1 before and is 0 now: allowed, 1 is not beyond the since.
	if accumulateBatches([]*Batch{b1, b2}, 1)[rowKey([]int64{7}, []int64{})] != 1 {
		t.Fatal("acc(1) before compaction must be 1")
	}
}

func mustParse(t testing.TB, ar Arity, s string) *Batch {
	t.Helper()
	var lines []string
	for l := range strings.SplitSeq(s, "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	b, err := Parse(ar, strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOverflowIsReported(t *testing.T) {
	a := mustParse(t, Arity{1, 1}, "[{0}, {1}) since {0}\n1 | 1 @0 +9223372036854775807")
	b := mustParse(t, Arity{1, 1}, "[{1}, {2}) since {0}\n1 | 1 @1 +1")
	if _, err := Merge(a, b, frontier.At(1)); err != ErrOverflow {
		t.Fatalf("merge: err = %v, want ErrOverflow", err)
	}
}

// TestMergeMarksSaturated: a merge that saturates an overflowed diff marks
// its batch Saturated, two-way and k-way alike; a merge of a saturated
// batch keeps the mark (the count there stands for one out of range
// however later diffs move it); a projection keeps it; a build that
// overflows and a merge that does not leave it unset (docs/semantics.md
// §1.1).
func TestMergeMarksSaturated(t *testing.T) {
	ar := Arity{1, 1}
	a := mustParse(t, ar, "[{0}, {1}) since {0}\n1 | 1 @0 +9223372036854775807")
	b := mustParse(t, ar, "[{1}, {2}) since {0}\n1 | 1 @1 +2")
	c := mustParse(t, ar, "[{2}, {3}) since {0}\n1 | 1 @2 -3")
	if a.Saturated() || b.Saturated() {
		t.Fatal("a built batch is marked saturated")
	}
	apart, err := Merge(a, b, frontier.At(0))
	if err != nil || apart.Saturated() {
		t.Fatalf("a merge that overflows nothing: err %v, saturated %v", err, apart.Saturated())
	}
	sat, err := Merge(a, b, frontier.At(1))
	if err != ErrOverflow || !sat.Saturated() {
		t.Fatalf("two-way merge: err %v, saturated %v; want ErrOverflow and saturated", err, sat.Saturated())
	}
	m := NewMergerN([]*Batch{a, b, c}, frontier.At(1))
	fuel := int64(100)
	m.Work(&fuel)
	if out, err := m.Result(); err != ErrOverflow || !out.Saturated() {
		t.Fatalf("k-way merge: err %v, saturated %v; want ErrOverflow and saturated", err, out.Saturated())
	}
	// The saturated MaxInt64 plus -3 fits: no new overflow, the mark stays.
	again, err := Merge(sat, c, frontier.At(2))
	if err != nil || !again.Saturated() {
		t.Fatalf("merge of a saturated batch: err %v, saturated %v; want no error and saturated", err, again.Saturated())
	}
	d := mustParse(t, ar, "[{3}, {4}) since {0}\n2 | 1 @3 +1")
	m = NewMergerN([]*Batch{sat, c, d}, frontier.At(2))
	fuel = 100
	m.Work(&fuel)
	if out, err := m.Result(); err != nil || !out.Saturated() {
		t.Fatalf("k-way merge of a saturated batch: err %v, saturated %v", err, out.Saturated())
	}
	if p, ok := again.ProjectVals(0, 0); !ok || !p.Saturated() {
		t.Fatalf("projection of a saturated batch: ok %v, saturated %v", ok, p != nil && p.Saturated())
	}
	bld := NewBuilder(ar, 2)
	bld.Push1(1, 1, 0, math.MaxInt64)
	bld.Push1(1, 1, 0, 2)
	if out, err := bld.Build(frontier.At(0), frontier.At(1)); err == nil || out.Saturated() {
		t.Fatalf("an overflowing build: err %v, saturated %v; want an error, not saturated", err, out.Saturated())
	}
}

// A build that overflows keeps every other update, saturates the overflowed
// diff and names the times that overflowed, for both builder layouts.
func TestBuildOverflowKeepsOtherUpdates(t *testing.T) {
	check := func(name string, got *Batch, err error, want string, times []frontier.Time) {
		t.Helper()
		var oe *OverflowError
		if !errors.As(err, &oe) || !errors.Is(err, ErrOverflow) {
			t.Fatalf("%s: err = %v, want an *OverflowError wrapping ErrOverflow", name, err)
		}
		if !slices.Equal(oe.Times, times) {
			t.Errorf("%s: overflow times %v, want %v", name, oe.Times, times)
		}
		if got == nil || got.String() != want {
			t.Errorf("%s: batch\n%v\nwant\n%v", name, got, want)
		} else if cerr := got.Check(); cerr != nil {
			t.Errorf("%s: %v", name, cerr)
		}
	}
	small := NewBuilder(Arity{1, 1}, 4)
	small.Push1(2, 1, 3, 1<<62)
	small.Push1(1, 5, 1, 7)
	small.Push1(2, 1, 3, 1<<62)
	small.Push1(0, 1, 2, math.MinInt64)
	small.Push1(0, 1, 2, -1)
	small.Push1(2, 1, 2, 4)
	got, err := small.Build(frontier.At(0), frontier.At(4))
	check("small", got, err, "[{0}, {4}) since {0}\n0 | 1 @2 -9223372036854775808\n1 | 5 @1 +7\n2 | 1 @2 +4\n2 | 1 @3 +9223372036854775807", []frontier.Time{2, 3})

	wide := NewBuilder(Arity{2, 1}, 3)
	wide.Push([]int64{1, 2}, []int64{3}, 0, -(1 << 62))
	wide.Push([]int64{0, 0}, []int64{0}, 0, 9)
	wide.Push([]int64{1, 2}, []int64{3}, 0, -(1<<62)-1)
	got, err = wide.Build(frontier.At(0), frontier.At(1))
	check("wide", got, err, "[{0}, {1}) since {0}\n0 0 | 0 @0 +9\n1 2 | 3 @0 -9223372036854775808", []frontier.Time{0})
}

func TestCursorSeek(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: rapid.IntRange(1, 2).Draw(t, "ka"), Val: 1}
		b, _ := drawBatch(t, ar, 0, 3, "b")
		var keys [][]int64
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			keys = append(keys, slices.Clone(c.Key()))
		}
		probes := rapid.SliceOf(rapid.SliceOfN(rapid.Int64Range(-3, 4), ar.Key, ar.Key)).Draw(t, "probes")
		slices.SortFunc(probes, cmpRow)
		g, s := b.Cursor(), b.Cursor()
		for _, p := range probes {
			g.SeekKey(p)
			s.SeekKeyBinary(p)
			want := len(keys)
			for i, k := range keys {
				if cmpRow(k, p) >= 0 {
					want = i
					break
				}
			}
			if g.KeyIndex() != want || s.KeyIndex() != want {
				t.Fatalf("seek %v: gallop %d, binary %d, want %d (keys %v)", p, g.KeyIndex(), s.KeyIndex(), want, keys)
			}
			if g.KeyValid() {
				// SeekVal to the middle val lands on it.
				var vals [][]int64
				for ; g.ValValid(); g.StepVal() {
					vals = append(vals, slices.Clone(g.Val()))
				}
				g.RewindVals()
				mid := vals[len(vals)/2]
				g.SeekVal(mid)
				if !g.ValValid() || cmpRow(g.Val(), mid) != 0 {
					t.Fatalf("SeekVal(%v) missed", mid)
				}
				g.RewindVals()
			}
		}
	})
}

func TestParseErrors(t *testing.T) {
	ar := Arity{1, 1}
	for _, s := range []string{
		"nope",
		"[{0}, {2}) since {0}\n1 | 2 @5 +1",   // outside the description
		"[{0}, {2}) since {0}\n1 2 | 2 @0 +1", // key arity
		"[{0}, {2}) since {0}\n1 | 2 @0 0",    // zero diff
		"[{0}, {2}) since {0}\n1 | 2 0 +1",    // no @
		"[{0}, {2}) since {0}\n1 2 @0 +1",     // no |
	} {
		if _, err := Parse(ar, s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func TestCheckCatchesCorruption(t *testing.T) {
	b := mustParse(t, Arity{1, 1}, "[{0}, {3}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +1\n2 | 1 @2 +1")
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	for name, corrupt := range map[string]func(c *Batch){
		"key order":  func(c *Batch) { c.keys[0], c.keys[1] = c.keys[1], c.keys[0] },
		"time order": func(c *Batch) { c.times[0], c.times[1] = c.times[1], c.times[0] },
		"zero diff":  func(c *Batch) { c.diffs[2] = 0 },
		"outside":    func(c *Batch) { c.times[2] = 3 },
	} {
		c := *b
		c.keys, c.times, c.diffs = slices.Clone(b.keys), slices.Clone(b.times), slices.Clone(b.diffs)
		corrupt(&c)
		if c.Check() == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}

// TestBuildOverflowRadix: a build large enough to radix-sort reports the
// times whose diffs overflow and saturates them, both where it sorts
// through the new batch's columns (arity {1, 1}) and where it sorts
// records through its scratch (arity {1, 0}).
func TestBuildOverflowRadix(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {1, 0}} {
		bld := NewBuilder(ar, 0)
		n := 4 * defaultRadixMin
		for i := range n {
			bld.Push1(int64(i%50), 0, uint64(i%3), 1)
		}
		bld.Push1(7, 0, 2, math.MaxInt64)
		bld.Push1(7, 0, 2, math.MaxInt64)
		out, err := bld.Build(frontier.At(0), frontier.At(3))
		var oe *OverflowError
		if !errors.As(err, &oe) || !slices.Equal(oe.Times, []frontier.Time{2}) {
			t.Fatalf("%v: err %v, want an overflow at time 2", ar, err)
		}
		if cerr := out.Check(); cerr != nil {
			t.Fatalf("%v: %v", ar, cerr)
		}
		sat := 0
		for _, u := range out.Updates() {
			if u.Diff == math.MaxInt64 {
				sat++
			}
		}
		if out.Len() != 150 || sat != 1 {
			t.Fatalf("%v: %d updates with %d saturated, want 150 with 1", ar, out.Len(), sat)
		}
	}
}

// cursorTally is Batch.Tally by a Cursor's walk, as readers walk a batch.
func cursorTally(b *Batch, p Presentation) (keys, updates, sum int64) {
	for cur := b.Cursor(); cur.KeyValid(); cur.StepKey() {
		keys++
		for ; cur.ValValid(); cur.StepVal() {
			times, diffs := cur.Updates()
			for i, t := range times {
				if _, ok := p.Present(t); ok {
					updates++
					sum += diffs[i]
				}
			}
		}
	}
	return keys, updates, sum
}

// TestTallyWalksAsACursor: Batch.Tally visits the keys a Cursor visits and
// counts and sums the updates a presentation shows, on batches with several
// vals a key and several times a val, under presentations that advance
// times and drop some, and on empty batches.
func TestTallyWalksAsACursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pres := []Presentation{
		Identity(),
		{Since: frontier.At(4), Until: frontier.Empty()},
		{Since: frontier.Min(), Until: frontier.At(5)},
		{Since: frontier.At(6), Until: frontier.At(6)}, // shows nothing
		{Since: frontier.At(3), Until: frontier.At(8)},
		{Since: frontier.Empty(), Until: frontier.At(1)}, // advancing by {} moves nothing
	}
	for trial := range 200 {
		n := rng.IntN(300)
		keys := 1 + rng.Int64N(40) // a batch of one key among them
		bld := NewBuilder(Arity{1, 1}, n)
		for range n {
			d := rng.Int64N(7) - 3
			if d == 0 {
				d = 5
			}
			bld.Push1(rng.Int64N(keys), rng.Int64N(4), rng.Uint64N(10), d)
		}
		b, err := bld.Build(frontier.Min(), frontier.At(10))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pres {
			k, u, s := b.Tally(p)
			wk, wu, ws := cursorTally(b, p)
			if k != wk || u != wu || s != ws {
				t.Fatalf("trial %d, %v over %d updates: Tally %d keys %d updates sum %d, cursor %d %d %d", trial, p, b.Len(), k, u, s, wk, wu, ws)
			}
			if p == Identity() && (k != int64(b.Keys()) || u != int64(b.Len())) {
				t.Fatalf("trial %d: identity tally %d keys %d updates of a batch of %d and %d", trial, k, u, b.Keys(), b.Len())
			}
		}
	}
	if k, u, s := Empty(Arity{1, 1}, frontier.Min(), frontier.At(1)).Tally(Identity()); k|u|s != 0 {
		t.Fatalf("empty batch: %d %d %d", k, u, s)
	}
}

// TestBuildConsolidatesAtChunkEdges builds one-column updates whose only
// run of equal (key, val, time), or only zero diff, sits at each place
// around the edges of the chunks the column writer checks before it writes
// (emitChunk records), and requires the model's batch: a run summed or
// cancelled, a zero dropped, wherever it falls.
func TestBuildConsolidatesAtChunkEdges(t *testing.T) {
	n := 2*emitChunk + 3
	var places []int
	for _, edge := range []int{0, emitChunk, 2 * emitChunk, n - 1} {
		for p := edge - 2; p <= edge+1; p++ {
			if p >= 0 && p < n {
				places = append(places, p)
			}
		}
	}
	for _, p := range places {
		for _, kind := range []string{"sum", "cancel", "zero"} {
			bld := NewBuilder(Arity{1, 1}, 0)
			model := map[modelKey]int64{}
			// Update i has key i/3 (three vals a key), so the sorted order
			// is the push order and a run is the pair (p, p+1).
			for i := range n {
				k, v, tm, d := int64(i/3), int64(i%3), uint64(1), int64(1)
				switch {
				case kind == "zero" && i == p:
					d = 0
				case kind != "zero" && i == p+1:
					k, v = int64(p/3), int64(p%3) // the same as update p
					if kind == "cancel" {
						d = -1
					}
				}
				bld.Push1(k, v, tm, d)
				model[modelKey{rowKey([]int64{k}, []int64{v}), tm}] += d
			}
			b, err := bld.Build(frontier.At(0), frontier.At(2))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Check(); err != nil {
				t.Fatalf("%s at %d: %v", kind, p, err)
			}
			got := map[modelKey]int64{}
			for _, u := range b.Updates() {
				got[modelKey{rowKey(u.Key, u.Val), u.Time}] = u.Diff
			}
			maps.DeleteFunc(model, func(_ modelKey, d int64) bool { return d == 0 })
			if !maps.Equal(got, model) {
				t.Fatalf("%s at %d: batch of %d updates, model of %d:\n%s", kind, p, len(got), len(model), b)
			}
		}
	}
}

// TestPush1IntoAWideBuilderPanics: Push1 is only for arities of at most one
// column; a wide builder's Build panics after one, rather than build the
// batch without the update.
func TestPush1IntoAWideBuilderPanics(t *testing.T) {
	b := NewBuilder(Arity{2, 1}, 0)
	b.Push1(1, 2, 0, 1)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Push1 into a") {
			t.Fatalf("Build after Push1 into a wide builder recovered %v, want its panic", r)
		}
	}()
	_, _ = b.Build(frontier.At(0), frontier.At(1))
}

// TestPush1MasksMissingColumns: a builder of arity 0 in key or val ignores
// the pushed key or val, as Push does.
func TestPush1MasksMissingColumns(t *testing.T) {
	for _, ar := range []Arity{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
		p1, p := NewBuilder(ar, 0), NewBuilder(ar, 0)
		for i := range int64(5) {
			p1.Push1(i%3, 7-i, uint64(i%2), 1)
			p.Push([]int64{i % 3}[:ar.Key], []int64{7 - i}[:ar.Val], uint64(i%2), 1)
		}
		a, err := p1.Build(frontier.At(0), frontier.At(2))
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Build(frontier.At(0), frontier.At(2))
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("arity %v: Push1 built\n%s\nPush built\n%s", ar, a, b)
		}
	}
}

// TestBuildBlockIsThePushedArray: a build of one-column keys and vals of
// more than the builder's warmMax records whose records fill at least 3/4
// of its array takes that array as the batch's block, with no copy (its
// keys begin where the records did), and the builder pushes the next
// records into another; one that fills less leaves the array to the
// builder and the batch a block of its own size, so a batch never keeps
// much room it does not use. Up to warmMax records (warmScatterMax unless
// a test lowers it) the batch always gets a block of its own. A builder's
// first build copies the records into it and sorts them back into the
// array the pushes wrote, making no scratch; later ones sort from that
// array into the builder's scratch: both are the builder's to keep, so a
// third build of as many records allocates neither again, and the batch
// aliases neither.
func TestBuildBlockIsThePushedArray(t *testing.T) {
	const capHint = 1000
	for _, c := range []struct {
		n       int
		warmMax int
		take    bool
	}{
		{capHint, 0, true}, {capHint * 3 / 4, 0, true}, {capHint*3/4 - 1, 0, false}, {defaultRadixMin, 0, false},
		{capHint, capHint - 1, true}, {capHint, capHint, false}, {capHint, warmScatterMax, false},
		{defaultRadixMin, warmScatterMax, false},
	} {
		bld := NewBuilder(Arity{1, 1}, capHint)
		if c.warmMax != warmScatterMax {
			bld.warmMax = c.warmMax
		}
		var scratch unsafe.Pointer
		for round := range 3 {
			for i := range c.n {
				bld.Push1(int64(i*7919%c.n), 0, 1, 1) // distinct keys, out of order
			}
			base := unsafe.Pointer(unsafe.SliceData(bld.recs))
			b, err := bld.Build(frontier.Min(), frontier.At(2))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Check(); err != nil {
				t.Fatalf("n=%d: %v", c.n, err)
			}
			if b.Len() != c.n || !slices.IsSorted(b.keys) {
				t.Fatalf("n=%d: built %d updates, keys sorted %v", c.n, b.Len(), slices.IsSorted(b.keys))
			}
			keys := unsafe.Pointer(unsafe.SliceData(b.keys))
			took := keys == base
			kept := unsafe.Pointer(unsafe.SliceData(bld.recs)) == base
			if took != c.take || kept == c.take {
				t.Fatalf("n=%d of %d, warmMax %d: the batch took the pushed array %v (want %v), the builder kept it %v", c.n, capHint, c.warmMax, took, c.take, kept)
			}
			if c.n > c.warmMax {
				continue
			}
			s := unsafe.Pointer(unsafe.SliceData(bld.scratch))
			switch {
			case round == 0 && s != nil:
				t.Fatalf("n=%d, warmMax %d: the builder's first build made scratch", c.n, c.warmMax)
			case round > 0 && (s == nil || s == base || keys == s):
				t.Fatalf("n=%d, warmMax %d, build %d: scratch %p, pushed array %p, batch keys %p: the sort's own buffer is missing or shared", c.n, c.warmMax, round+1, s, base, keys)
			case round == 2 && s != scratch:
				t.Fatalf("n=%d, warmMax %d: the third build of as many records made a new scratch", c.n, c.warmMax)
			}
			scratch = s
		}
	}
}

// TestRowsMatchUpdates: Rows lists the batch's updates in order, key ++
// val per row; its times and diffs are capped at their length (an append
// copies them, so two readers of one batch never append into the same
// spare room).
func TestRowsMatchUpdates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := drawArity(t)
		if rapid.Bool().Draw(t, "11") {
			ar = Arity{1, 1}
		}
		b, _ := drawBatch(t, ar, 0, 6, "b")
		rows, times, diffs := b.Rows()
		if cap(times) != len(times) || cap(diffs) != len(diffs) {
			t.Fatalf("Rows's times and diffs have room past them: %d of %d, %d of %d", len(times), cap(times), len(diffs), cap(diffs))
		}
		us := b.Updates()
		w := ar.Key + ar.Val
		if len(rows) != len(us)*w || len(times) != len(us) || len(diffs) != len(us) {
			t.Fatalf("lengths %d %d %d for %d updates", len(rows), len(times), len(diffs), len(us))
		}
		for i, u := range us {
			got := rows[i*w : i*w+w]
			if !slices.Equal(got[:ar.Key], u.Key) || !slices.Equal(got[ar.Key:], u.Val) || times[i] != u.Time || diffs[i] != u.Diff {
				t.Fatalf("row %d: %v @%d %+d, want %v", i, got, times[i], diffs[i], u)
			}
		}
	})
}

// TestProjectVals: a batch with one val per key projects to the same
// updates with the chosen val columns, sharing everything else; a key with
// two vals is refused. ValColumnZero reads one column of every val.
func TestProjectVals(t *testing.T) {
	ar := Arity{1, 3}
	one := mustParse(t, ar, `[{0}, {3}) since {0}
		1 | 0 5 6 @0 +1
		1 | 0 5 6 @2 -1
		4 | 0 7 8 @1 +3`)
	for _, tc := range []struct {
		lo, hi int
		want   string
	}{
		{2, 3, "[{0}, {3}) since {0}\n1 | 6 @0 +1\n1 | 6 @2 -1\n4 | 8 @1 +3"},
		{1, 3, "[{0}, {3}) since {0}\n1 | 5 6 @0 +1\n1 | 5 6 @2 -1\n4 | 7 8 @1 +3"},
	} {
		got, ok := one.ProjectVals(tc.lo, tc.hi)
		if !ok {
			t.Fatal("ProjectVals refused a batch with one val per key")
		}
		if got.String() != tc.want {
			t.Fatalf("[%d, %d): got\n%s\nwant\n%s", tc.lo, tc.hi, got, tc.want)
		}
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if !one.ValColumnZero(0) || one.ValColumnZero(1) {
		t.Fatal("ValColumnZero misread the columns")
	}
	two := mustParse(t, ar, `[{0}, {3}) since {0}
		1 | 0 5 6 @0 +1
		1 | 0 5 7 @0 -1`)
	if _, ok := two.ProjectVals(1, 2); ok {
		t.Fatal("ProjectVals projected a key with two vals")
	}
}

// TestParseReadsAMergedBatch: a merge's since may run ahead of its upper
// (B3), and its times are advanced onto it; the String form of such a
// batch parses back to the same batch.
func TestParseReadsAMergedBatch(t *testing.T) {
	ar := Arity{Key: 1, Val: 1}
	a := mustParse(t, ar, "[{0}, {3}) since {0}\n1 | 1 @1 +1\n2 | 1 @2 +1")
	b := mustParse(t, ar, "[{3}, {5}) since {0}\n1 | 1 @4 +1")
	for _, comp := range []frontier.Frontier{frontier.At(2), frontier.At(9), frontier.Empty()} {
		m, err := Merge(a, b, comp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(ar, m.String())
		if err != nil {
			t.Fatalf("compaction %v: %v", comp, err)
		}
		if p.String() != m.String() || p.Check() != nil {
			t.Fatalf("compaction %v: parsed\n%v\nwant\n%v", comp, p, m)
		}
	}
	if _, err := Parse(ar, "[{0}, {5}) since {9}\n1 | 1 @7 +1"); err == nil {
		t.Fatal("a time beyond the upper and not at the since was accepted")
	}
}
