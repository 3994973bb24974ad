package join

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// binaryRun is one randomised run of Binary against the nested-loop
// oracle: rounds of updates (many at the same time, retractions,
// duplicates, large fan-out, vals at the int64 limits) sealed into both
// traces, the streams delivered with random lag, the spines exerted and
// compacted as the join allows.
func binaryRun(t *testing.T, seed uint64) { binaryRunBudget(t, seed, 0) }

// binaryRunBudget is binaryRun with each step matching at most budget
// pairs (0: no bound), as the join's operator steps (Binary.step): the
// rest of its batches joined at later steps, with the traces exerted and
// compacted in between, and at the end until none is left.
func binaryRunBudget(t *testing.T, seed uint64, budget int64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := uint64(4 + rng.IntN(8))
	asOf := uint64(rng.IntN(3))
	nkeys := 1 + rng.IntN(5)
	l, r := newRel(ar11), newRel(ar11)
	pres := func() batch.Presentation {
		if rng.IntN(2) == 0 {
			return batch.Identity() // a local arrangement
		}
		return batch.Presentation{Since: frontier.At(asOf), Until: frontier.Empty()} // an import
	}
	j, err := NewBinary(Side{Reader: l.h, Pres: pres(), Arity: ar11}, Side{Reader: r.h, Pres: pres(), Arity: ar11},
		BinaryOptions{AsOf: frontier.At(asOf)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	step := func(l, r []*batch.Batch, out *Sink) (bool, error) {
		if budget == 0 {
			return true, j.Step(l, r, out)
		}
		b := budget
		return j.step(l, r, out, &b)
	}
	out := NewSink(3)
	// Some history before the join first runs: exercised by the preload.
	pre := uint64(rng.IntN(3))
	for tm := range pre {
		l.seal(t, randomUpdates(rng, rng.IntN(6), nkeys, tm), tm+1)
		r.seal(t, randomUpdates(rng, rng.IntN(6), nkeys, tm), tm+1)
	}
	for tm := pre; tm < rounds; tm++ {
		for _, x := range []*rel{l, r} {
			if rng.IntN(4) == 0 {
				continue // this input seals later, over several times
			}
			ups := randomUpdates(rng, rng.IntN(8), nkeys, tm)
			ups = append(ups, retractSome(rng, x.all, rng.IntN(3), tm)...)
			x.seal(t, ups, tm+1)
		}
		if _, err := step(l.deliver(rng.IntN(3)), r.deliver(rng.IntN(3)), out); err != nil {
			t.Fatalf("seed %d: step at %d: %v", seed, tm, err)
		}
		j.Compact(l.frontier(), r.frontier())
		for _, x := range []*rel{l, r} {
			for range rng.IntN(3) {
				x.w.Exert(int64(1 + rng.IntN(64)))
			}
		}
	}
	for _, x := range []*rel{l, r} {
		if x.upper < rounds {
			x.seal(t, randomUpdates(rng, rng.IntN(4), nkeys, x.upper), rounds)
		}
	}
	done, err := step(l.deliver(1<<30), r.deliver(1<<30), out)
	for steps := 0; !done && err == nil; steps++ {
		if steps > 1<<20 {
			t.Fatalf("seed %d: batches left to join after %d more steps", seed, steps)
		}
		j.Compact(l.frontier(), r.frontier())
		for _, x := range []*rel{l, r} {
			x.w.Exert(int64(1 + rng.IntN(64)))
		}
		done, err = step(nil, nil, out)
	}
	if err != nil {
		t.Fatalf("seed %d: final step: %v", seed, err)
	}
	for tm := asOf; tm < rounds; tm++ {
		want := naiveJoin(acc(l.all, tm), acc(r.all, tm))
		if d := diffMaps(want, rowDiffs(out, tm)); d != "" {
			t.Fatalf("seed %d (replay: binaryRunBudget(t, %d, %d)): as_of %d, output at %d differs from the nested-loop join:\n%s", seed, seed, budget, asOf, tm, d)
		}
	}
	if _, n := out.Len(); n != 0 {
		t.Fatalf("seed %d: %d error rows without an overflow", seed, n)
	}
	if m := minTime(out); m < asOf {
		t.Fatalf("seed %d: output at %d, before as_of %d", seed, m, asOf)
	}
}

func TestBinaryMatchesNestedLoopAtEveryTime(t *testing.T) {
	for seed := range uint64(300) {
		binaryRun(t, seed)
	}
}

// TestBinaryResumesWhereItsBudgetEnded runs the random joins of
// TestBinaryMatchesNestedLoopAtEveryTime matching at most one to three
// pairs a step (Binary.step): batches left to join across steps, new ones
// queued behind them, the traces exerted and compacted as the join allows
// in between. Every output is the nested loop's; a join that let a trace
// compact past a batch it had still to join (Compact's holds) emits that
// batch's matches at the advanced times and fails here.
func TestBinaryResumesWhereItsBudgetEnded(t *testing.T) {
	for _, budget := range []int64{1, 2, 3} {
		for seed := range uint64(150) {
			binaryRunBudget(t, seed, budget)
		}
	}
}

// TestABinaryJoinYieldsInsideOneKey: one key holds 300 values on each
// side, so its cross product is 90,000 pairs. A budgeted step stops
// between two pairs of values, not at the key's end: no step matches more
// than its budget (each pair of values here has one update a side), every
// step makes progress, and the steps' output together is the join.
func TestABinaryJoinYieldsInsideOneKey(t *testing.T) {
	const vals, budget = 300, 1000
	l, r := newRel(ar11), newRel(ar11)
	j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	var lu, ru []upd
	for v := range int64(vals) {
		lu = append(lu, upd{7, v, 0, 1}, upd{8, v, 0, 1})
		ru = append(ru, upd{7, 1000 + v, 0, 2})
	}
	l.seal(t, lu, 1)
	r.seal(t, ru, 1)
	out := NewSink(3)
	steps := 0
	left, right := l.deliver(1), r.deliver(1)
	for {
		before, _ := out.Len()
		b := int64(budget)
		done, err := j.step(left, right, out, &b)
		if err != nil {
			t.Fatal(err)
		}
		left, right = nil, nil
		after, _ := out.Len()
		if after-before > budget {
			t.Fatalf("step %d matched %d pairs, budget %d", steps, after-before, budget)
		}
		if after == before && !done {
			t.Fatalf("step %d made no progress", steps)
		}
		steps++
		if done {
			break
		}
	}
	if want := vals * vals / budget; steps < want {
		t.Fatalf("%d steps, want at least %d", steps, want)
	}
	want := naiveJoin(acc(l.all, 0), acc(r.all, 0))
	if d := diffMaps(want, rowDiffs(out, 0)); d != "" {
		t.Fatalf("output differs from the nested-loop join:\n%s", d)
	}
}

// TestBinaryJoinsStreamBatchTheTraceAlreadyCovers: the left trace holds a
// batch (and merges it away with the one before) before the left stream
// delivers it, as an import's trace may run ahead of its stream. The batch
// must still be joined, once: its matches are not in the output yet, and
// the merge must neither lose nor repeat the matches of the batch before
// (differential-dataflow #801).
func TestBinaryJoinsStreamBatchTheTraceAlreadyCovers(t *testing.T) {
	l, r := newRel(ar11), newRel(ar11)
	j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	out := NewSink(3)
	l.seal(t, []upd{{1, 10, 0, 1}}, 1)
	if err := j.Step(l.deliver(1), nil, out); err != nil {
		t.Fatal(err)
	}
	r.seal(t, []upd{{1, 20, 0, 1}}, 1)
	if err := j.Step(nil, r.deliver(1), out); err != nil {
		t.Fatal(err)
	}
	// The left trace moves ahead of its stream, and is compacted and
	// merged as far as the join's holds allow.
	l.seal(t, []upd{{1, 10, 1, -1}, {1, 11, 1, 1}}, 2)
	l.seal(t, []upd{{1, 12, 2, 1}}, 3)
	exert := func() {
		j.Compact(l.frontier(), r.frontier())
		for range 8 {
			l.w.Exert(1 << 10)
		}
	}
	exert()
	if err := j.Step(l.deliver(1), nil, out); err != nil {
		t.Fatal(err)
	}
	exert()
	// Each trace compacts to the other input's frontier, and holds
	// physically at what its own input acknowledged.
	if got := l.h.State().Storage().LogicalCompaction(); got != r.frontier() {
		t.Fatalf("left logical compaction %v, want the right frontier %v", got, r.frontier())
	}
	if got := l.h.State().Storage().PhysicalCompaction(); got != j.Acknowledged(0) || got != frontier.At(2) {
		t.Fatalf("left physical compaction %v, want the acknowledged {2}", got)
	}
	// A right batch now meets the left trace cut at what the left stream
	// acknowledged, inside the region the left trace has merged.
	r.seal(t, []upd{{1, 21, 1, 1}}, 2)
	if err := j.Step(nil, r.deliver(1), out); err != nil {
		t.Fatal(err)
	}
	exert()
	if err := j.Step(l.deliver(1), nil, out); err != nil {
		t.Fatal(err)
	}
	for tm := range uint64(3) {
		want := naiveJoin(acc(l.all, tm), acc(r.all, tm))
		if d := diffMaps(want, rowDiffs(out, tm)); d != "" {
			t.Fatalf("output at %d:\n%s", tm, d)
		}
	}
}

// TestBinaryPreloadsExistingHistoryOnce: both traces hold history when the
// join first runs, and the streams replay it (as an import's does): the
// history is matched once, by the preload, and the replay is skipped.
func TestBinaryPreloadsExistingHistoryOnce(t *testing.T) {
	l, r := newRel(ar11), newRel(ar11)
	l.seal(t, []upd{{1, 10, 0, 1}, {2, 10, 0, 2}}, 1)
	r.seal(t, []upd{{1, 20, 0, 3}}, 1)
	r.seal(t, []upd{{2, 21, 1, 1}}, 2)
	j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	out := NewSink(3)
	if err := j.Step(l.deliver(9), r.deliver(9), out); err != nil {
		t.Fatal(err)
	}
	l.seal(t, []upd{{2, 11, 2, 1}}, 3)
	if err := j.Step(l.deliver(9), nil, out); err != nil {
		t.Fatal(err)
	}
	for tm := range uint64(3) {
		want := naiveJoin(acc(l.all, tm), acc(r.all, tm))
		if d := diffMaps(want, rowDiffs(out, tm)); d != "" {
			t.Fatalf("output at %d:\n%s", tm, d)
		}
	}
}

// TestBinaryOverflowIsAnErrorAtThatTime: a diff product that leaves int64
// is `numeric overflow` at the output time, never a wrapped count or a
// panic; the other matches stay exact.
func TestBinaryOverflowIsAnErrorAtThatTime(t *testing.T) {
	for _, c := range []struct {
		name   string
		d0, d1 int64
	}{
		{"2^62*4", 1 << 62, 4},
		{"min*-1", math.MinInt64, -1},
		{"-1*min", -1, math.MinInt64},
		{"max*max", math.MaxInt64, math.MaxInt64},
		{"2^32*2^31", 1 << 32, 1 << 31},
	} {
		for _, closure := range []Closure{nil, &Project{Cols: []int{0, 1, 2}}} {
			t.Run(fmt.Sprintf("%s/closure=%v", c.name, closure != nil), func(t *testing.T) {
				l, r := newRel(ar11), newRel(ar11)
				j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0), Closure: closure})
				if err != nil {
					t.Fatal(err)
				}
				defer j.Release()
				out := NewSink(3)
				l.seal(t, []upd{{1, 10, 1, c.d0}, {2, 10, 0, 3}}, 2)
				r.seal(t, []upd{{1, 20, 2, c.d1}, {2, 20, 2, 5}}, 3)
				if err := j.Step(l.deliver(9), r.deliver(9), out); err != nil {
					t.Fatal(err)
				}
				if got := errDiffs(out, 2); got[expr.CodeOverflow] != 1 || len(got) != 1 {
					t.Fatalf("errors at 2 = %v, want {overflow: 1}", got)
				}
				if got := errDiffs(out, 1); len(got) != 0 {
					t.Fatalf("errors at 1 = %v, want none", got)
				}
				if got := rowDiffs(out, 2); len(got) != 1 || got["[2 10 20]"] != 15 {
					t.Fatalf("rows at 2 = %v, want only [2 10 20] x15", got)
				}
				if got := j.Stats().Errors(); got != 1 {
					t.Fatalf("error count = %d, want 1", got)
				}
			})
		}
	}
}

// TestBinaryRejectsBadStreams: a batch delivered twice, out of order, or of
// the wrong arity is an error naming the input and the batch, not a silent
// double count.
func TestBinaryRejectsBadStreams(t *testing.T) {
	l, r := newRel(ar11), newRel(ar11)
	j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	out := NewSink(3)
	if err := j.Step(nil, nil, out); err != nil { // the preload: nothing yet
		t.Fatal(err)
	}
	b0 := l.seal(t, []upd{{1, 1, 0, 1}}, 1)
	b1 := l.seal(t, []upd{{1, 1, 1, 1}}, 2)
	if err := j.Step([]*batch.Batch{b0, b1}, nil, out); err != nil {
		t.Fatal(err)
	}
	if err := j.Step([]*batch.Batch{b1}, nil, out); !errors.Is(err, ErrOrder) {
		t.Fatalf("repeated batch: err = %v, want ErrOrder", err)
	}
	wide := batch.NewBuilder(batch.Arity{Key: 1, Val: 2}, 1)
	wide.Push([]int64{1}, []int64{1, 2}, 5, 1)
	wb, err := wide.Build(frontier.At(5), frontier.At(6))
	if err != nil {
		t.Fatal(err)
	}
	// A failed step is sticky (TestAFailedJoinStepIsSticky): the wide
	// batch goes to a join of its own.
	j2, err := NewBinary(Side{Reader: l.h.Clone(), Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h.Clone(), Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Release()
	if err := j2.Step(nil, []*batch.Batch{wb}, out); !errors.Is(err, ErrArity) {
		t.Fatalf("wide batch: err = %v, want ErrArity", err)
	}
	if _, err := NewBinary(Side{Reader: l.h, Arity: ar11}, Side{Reader: r.h, Arity: batch.Arity{Key: 2, Val: 1}}, BinaryOptions{}); !errors.Is(err, ErrArity) {
		t.Fatalf("key arity mismatch: err = %v, want ErrArity", err)
	}
}

// TestBinaryWideKeysEmptyVals: two-column keys (compared column by column,
// the first column tied often) and vals of arity 0 on one side, as a
// semi-join-like stage has.
func TestBinaryWideKeysEmptyVals(t *testing.T) {
	arL, arR := batch.Arity{Key: 2, Val: 0}, batch.Arity{Key: 2, Val: 1}
	rng := rand.New(rand.NewPCG(9, 9))
	type row struct {
		k0, k1, v int64
		d         int64
	}
	var ls, rs []row
	lb, rb := batch.NewBuilder(arL, 0), batch.NewBuilder(arR, 0)
	for range 300 {
		l := row{int64(rng.IntN(3)), int64(rng.IntN(20)) - 10, 0, int64(rng.IntN(3)) + 1}
		r := row{int64(rng.IntN(3)), int64(rng.IntN(20)) - 10, int64(rng.IntN(4)), 1 - 2*int64(rng.IntN(2))}
		ls, rs = append(ls, l), append(rs, r)
		lb.Push([]int64{l.k0, l.k1}, nil, 0, l.d)
		rb.Push([]int64{r.k0, r.k1}, []int64{r.v}, 0, r.d)
	}
	lbat, err := lb.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	rbat, err := rb.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	lh, lw := trace.NewSpine(arL, spine.Options{})
	rh, rw := trace.NewSpine(arR, spine.Options{})
	j, err := NewBinary(Side{lh, batch.Identity(), arL}, Side{rh, batch.Identity(), arR}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	out := NewSink(j.Arity())
	if err := j.Step(nil, nil, out); err != nil {
		t.Fatal(err)
	}
	if err := lw.Insert(lbat); err != nil {
		t.Fatal(err)
	}
	if err := rw.Insert(rbat); err != nil {
		t.Fatal(err)
	}
	if err := j.Step([]*batch.Batch{lbat}, []*batch.Batch{rbat}, out); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, l := range ls {
		for _, r := range rs {
			if l.k0 == r.k0 && l.k1 == r.k1 {
				k := fmt.Sprint([]int64{l.k0, l.k1, r.v})
				want[k] += l.d * r.d
				if want[k] == 0 {
					delete(want, k)
				}
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no matches: the test data is too sparse")
	}
	if d := diffMaps(want, rowDiffs(out, 0)); d != "" {
		t.Fatalf("wide-key join differs from the nested loop:\n%s", d)
	}
}

// TestClosureOutsideJoinedRowsIsRefused: a closure that reads columns the
// joined rows do not have — a Project column or class past the row, an
// empty class, an MFP compiled for another arity — is refused when the
// join is made, with ErrArity, rather than indexing past a row in its
// first step (on a worker, where the panic ends the process).
func TestClosureOutsideJoinedRowsIsRefused(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1} // joined rows: key ++ left val ++ right val, 3 columns
	side := Side{Pres: batch.Identity(), Arity: ar}
	cases := []struct {
		name string
		c    Closure
		want string // "" when the closure fits
	}{
		{"project fits", &Project{Equiv: [][]int{{1, 2}}, Cols: []int{0, 2}}, ""},
		{"mfp fits", stageFilter(t, 3, 1), ""},
		{"project column past the row", &Project{Cols: []int{0, 7}}, "Project.Cols: join: arity mismatch: column 7 outside rows of arity 3"},
		{"project negative column", &Project{Cols: []int{-1}}, "Project.Cols"},
		{"project class past the row", &Project{Equiv: [][]int{{0, 3}}, Cols: []int{0}}, "Project.Equiv[0]"},
		{"project empty class", &Project{Equiv: [][]int{{}}, Cols: []int{0}}, "Project.Equiv[0] is empty"},
		{"nil project", (*Project)(nil), "nil *Project"},
		{"mfp of another arity", stageFilter(t, 2, 1), "closure takes rows of 2 columns, the joined rows have 3"},
	}
	for _, c := range cases {
		_, err := NewBinary(side, side, BinaryOptions{Closure: c.c})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("binary, %s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrArity) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("binary, %s: err = %v, want ErrArity naming %q", c.name, err, c.want)
		}
		// A delta path with no lookups finishes the source's rows, 2 columns.
		wide := c.c
		if c.name == "mfp of another arity" {
			wide = stageFilter(t, 3, 1)
		}
		_, err = NewPath(PathOptions{SourcePres: batch.Identity(), SourceArity: ar, Final: wide})
		if c.want != "" && (!errors.Is(err, ErrArity) || !strings.Contains(err.Error(), "final closure")) {
			t.Errorf("path, %s: err = %v, want ErrArity naming the final closure", c.name, err)
		}
	}
}

// saturatedLeft makes a binary join whose left record (1, 10) a merge has
// saturated: +2 at 0 and +MaxInt64 at 1, exact in each batch; once the
// right input has moved on to {2}, the left trace compacts to it, and a
// left update of each of keys at the times after 1, each stepped,
// compacted and its merges exerted, brings 0 and 1 together in a merge
// (batch.Batch.Saturated). The join was stepped through every left batch
// and the right's up to 2; it is released when the test ends.
func saturatedLeft(t *testing.T, closure Closure, keys ...int64) (l, r *rel, j *Binary, out *Sink) {
	t.Helper()
	l, r = newRel(ar11), newRel(ar11)
	j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11}, BinaryOptions{AsOf: frontier.At(0), Closure: closure})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Release)
	out = NewSink(3)
	l.seal(t, []upd{{1, 10, 0, 2}}, 1)
	r.seal(t, []upd{{2, 20, 0, 1}}, 1)
	r.seal(t, nil, 2)
	if err := j.Step(l.deliver(9), r.deliver(9), out); err != nil {
		t.Fatal(err)
	}
	j.Compact(l.frontier(), r.frontier())
	l.seal(t, []upd{{1, 10, 1, math.MaxInt64}}, 2)
	for _, k := range keys {
		l.seal(t, []upd{{k, 10, l.upper, 1}}, l.upper+1)
		if err := j.Step(l.deliver(9), nil, out); err != nil {
			t.Fatal(err)
		}
		j.Compact(l.frontier(), r.frontier())
		for range 8 {
			l.w.Exert(1 << 10)
		}
	}
	cut, err := l.h.BatchesThrough(frontier.At(l.upper))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cut, (*batch.Batch).Saturated) {
		t.Fatalf("no merge saturated the left record: %v", cut)
	}
	return l, r, j, out
}

// TestBinaryJoinOfASaturatedCountIsAnOverflow: a left record's count is
// +2 at 0 and +MaxInt64 at 1, exact in each batch. Once the right input
// has moved on, the left trace compacts the two times together and a
// merge saturates the record to MaxInt64 (batch.Batch.Saturated). A right
// update at 2 then meets the saturated count: the exact product is out of
// int64, so the output at 2 holds `numeric overflow` (K3,
// docs/semantics.md §1.1), not a row at MaxInt64 alone — the trace's own
// marker goes to its frontier, which may be past 2.
func TestBinaryJoinOfASaturatedCountIsAnOverflow(t *testing.T) {
	for _, closure := range []Closure{nil, &Project{Cols: []int{0, 1, 2}}} {
		t.Run(fmt.Sprintf("closure=%v", closure != nil), func(t *testing.T) {
			_, r, j, out := saturatedLeft(t, closure, 9, 9, 9, 9)
			if got := errDiffs(out, 1); len(got) != 0 {
				t.Fatalf("errors at 1 = %v, want none (each batch was exact)", got)
			}
			r.seal(t, []upd{{1, 20, 2, 1}}, 3)
			if err := j.Step(nil, r.deliver(9), out); err != nil {
				t.Fatal(err)
			}
			if got := errDiffs(out, 2); got[expr.CodeOverflow] < 1 {
				t.Fatalf("errors at 2 = %v, want a numeric overflow (the right update met a saturated count); rows %v", got, rowDiffs(out, 2))
			}
		})
	}
}

// TestASaturatedBatchMarksAJoinOnce: after a merge saturated the left
// record (1, 10) (as in TestBinaryJoinOfASaturatedCountIsAnOverflow), the
// right side changes key 1 at every time for 100 rounds. Each step joins
// the right's new batch with the saturated one, and a marker a pair of
// batches grew the output's numeric overflow by one a round where one
// record's count left int64 once. The error is never retracted, so one
// stands at every later time: the join adds it once (docs/semantics.md
// §1.1).
func TestASaturatedBatchMarksAJoinOnce(t *testing.T) {
	for _, closure := range []Closure{nil, &Project{Cols: []int{0, 1, 2}}} {
		t.Run(fmt.Sprintf("closure=%v", closure != nil), func(t *testing.T) {
			_, r, j, out := saturatedLeft(t, closure, 9, 9, 9, 9)
			const rounds = 100
			for i := range rounds {
				r.seal(t, []upd{{1, int64(20 + i), r.upper, 1}}, r.upper+1)
				if err := j.Step(nil, r.deliver(9), out); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					if got := errDiffs(out, 2); got[expr.CodeOverflow] != 1 {
						t.Fatalf("errors at 2 = %v, want one numeric overflow (the right update met a saturated count)", got)
					}
				}
			}
			if got := errDiffs(out, r.upper); got[expr.CodeOverflow] != 1 {
				t.Fatalf("errors after %d rounds = %v, want one numeric overflow (one record's count left int64, once)", rounds, got)
			}
		})
	}
}

// TestASaturatedMarkMovesToAnEarlierProduct: a product's time is the later
// of its two, so the times a join emits at do not rise step by step. The
// left trace is one saturated batch holding record (1, 10) at 2 and key 5
// at 5. A right update of key 5 at 2 meets it at 5, where the join's one
// numeric overflow goes; the next right update, of key 1 at 3, multiplies
// the saturated count itself at 3, before that error: it moves to 3
// (kept at 5, the row at 3 showed MaxInt64 with no error until 5), and
// the sink still holds one.
func TestASaturatedMarkMovesToAnEarlierProduct(t *testing.T) {
	l, r, j, out := saturatedLeft(t, nil, 9, 9, 9, 5)
	if cut, err := l.h.BatchesThrough(frontier.At(l.upper)); err != nil || len(cut) != 1 {
		t.Fatalf("the left trace is %v (%v), want one saturated batch", cut, err)
	}
	r.seal(t, []upd{{5, 20, 2, 1}}, 3)
	if err := j.Step(nil, r.deliver(9), out); err != nil {
		t.Fatal(err)
	}
	if got := errDiffs(out, 5); got[expr.CodeOverflow] != 1 {
		t.Fatalf("errors through 5 = %v, want one numeric overflow (a product with the saturated batch at 5)", got)
	}
	r.seal(t, []upd{{1, 21, 3, 1}}, 4)
	if err := j.Step(nil, r.deliver(9), out); err != nil {
		t.Fatal(err)
	}
	if got := errDiffs(out, 3); got[expr.CodeOverflow] != 1 {
		t.Fatalf("errors through 3 = %v, want one numeric overflow (the saturated count multiplied at 3); rows %v", got, rowDiffs(out, 3))
	}
	if got := errDiffs(out, 10); got[expr.CodeOverflow] != 1 {
		t.Fatalf("errors through 10 = %v, want the one numeric overflow", got)
	}
}
