package join

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
)

// deltaQuery is an n-way delta join of relations with a one-column key and
// val, all joined on the key: output (k, v0, v1, ..., v(n-1)).
type deltaQuery struct {
	rels  []*rel
	pres  []batch.Presentation
	delta *Delta
	out   *Sink
	asOf  uint64
	// budget, when not 0, is the windows each path may match a step
	// (Path.work); open says a path left work for the next step.
	budget int
	open   bool
}

// pathOrder returns the canonical column of each column of path i's rows.
func pathOrder(n, i int) []int {
	cols := []int{0, 1 + i} // key, then the source's val
	for j := range n {
		if j != i {
			cols = append(cols, 1+j)
		}
	}
	// cols[c] is the canonical column of path column c; Project wants the
	// inverse: for canonical column k, the path column holding it.
	inv := make([]int, len(cols))
	for c, k := range cols {
		inv[k] = c
	}
	return inv
}

func newDeltaQuery(t *testing.T, n int, asOf uint64, pres []batch.Presentation, metrics *Metrics) *deltaQuery {
	t.Helper()
	q := &deltaQuery{pres: pres, out: NewSink(n + 1), asOf: asOf}
	for range n {
		q.rels = append(q.rels, newRel(ar11))
	}
	var paths []*Path
	for i := range n {
		var stages []Stage
		for j := range n {
			if j != i {
				stages = append(stages, Stage{Lookup: q.rels[j].h.Clone(), Pres: pres[j], Arity: ar11, Relation: j, StreamKey: []int{0}})
			}
		}
		var stats *Stats
		if metrics != nil {
			stats = metrics.Stage("q", "delta join", fmt.Sprint(i))
		}
		p, err := NewPath(PathOptions{Source: i, SourcePres: pres[i], SourceArity: ar11, AsOf: frontier.At(asOf), Stages: stages,
			Final: &Project{Cols: pathOrder(n, i)}, Stats: stats})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	d, err := NewDelta(paths, pres)
	if err != nil {
		t.Fatal(err)
	}
	q.delta = d
	t.Cleanup(d.Release)
	return q
}

// step delivers up to lag[i] queued batches of each relation and runs the
// delta join; the relations' own handles then allow compaction to their
// uppers, as an index's controller may.
func (q *deltaQuery) step(t *testing.T, deliver func(i int) int, errs [][]*batch.Batch) {
	t.Helper()
	oks := make([][]*batch.Batch, len(q.rels))
	fs := make([]frontier.Frontier, len(q.rels))
	for i, r := range q.rels {
		oks[i] = r.deliver(deliver(i))
		fs[i] = r.frontier()
	}
	if q.budget == 0 {
		if err := q.delta.Step(oks, errs, fs, q.out); err != nil {
			t.Fatal(err)
		}
	} else {
		// As the fused operator steps its paths: each path's new batches
		// fed, then at most budget windows of its stages matched, the
		// rest left in passes open for a later step.
		q.open = false
		for _, p := range q.delta.Paths() {
			if err := p.Feed(oks[p.source], q.out); err != nil {
				t.Fatal(err)
			}
			budget := q.budget
			done, err := p.work(fs[p.source], q.out, &budget)
			if err != nil {
				t.Fatal(err)
			}
			q.open = q.open || !done
		}
	}
	for _, r := range q.rels {
		r.h.SetLogicalCompaction(frontier.At(r.upper))
		r.h.SetPhysicalCompaction(frontier.At(r.upper))
	}
}

// naiveN is the nested-loop join of n accumulations on the key.
func naiveN(accs []map[[2]int64]int64) map[string]int64 {
	m := map[string]int64{}
	var rec func(i int, key int64, row []int64, d int64)
	rec = func(i int, key int64, row []int64, d int64) {
		if i == len(accs) {
			k := fmt.Sprint(row)
			m[k] += d
			if m[k] == 0 {
				delete(m, k)
			}
			return
		}
		for kv, c := range accs[i] {
			if i == 0 || kv[0] == key {
				r := append([]int64(nil), row...)
				if i == 0 {
					r = append(r, kv[0])
				}
				rec(i+1, kv[0], append(r, kv[1]), d*c)
			}
		}
	}
	rec(0, 0, nil, 1)
	return m
}

func (q *deltaQuery) check(t *testing.T, label string, from, to uint64) {
	t.Helper()
	for tm := from; tm < to; tm++ {
		accs := make([]map[[2]int64]int64, len(q.rels))
		for i, r := range q.rels {
			accs[i] = acc(r.all, tm)
		}
		if d := diffMaps(naiveN(accs), rowDiffs(q.out, tm)); d != "" {
			t.Fatalf("%s: output at %d differs from the nested-loop join:\n%s", label, tm, d)
		}
	}
	if m := minTime(q.out); m < q.asOf {
		t.Fatalf("%s: output at %d, before as_of %d", label, m, q.asOf)
	}
}

func deltaRun(t *testing.T, seed uint64, n int) { deltaRunBudget(t, seed, n, 0) }

// deltaRunBudget is deltaRun with each path matching at most budget
// windows a step (0: every ready proposal), stepped at the end until no
// path has work left.
func deltaRunBudget(t *testing.T, seed uint64, n, budget int) {
	rng := rand.New(rand.NewPCG(seed, 2))
	rounds := uint64(3 + rng.IntN(7))
	asOf := uint64(rng.IntN(3))
	nkeys := 1 + rng.IntN(4)
	pres := make([]batch.Presentation, n)
	imported := rng.IntN(2) == 0
	for i := range pres {
		pres[i] = batch.Identity()
		if imported {
			pres[i] = batch.Presentation{Since: frontier.At(asOf), Until: frontier.Empty()}
		}
	}
	q := newDeltaQuery(t, n, asOf, pres, nil)
	q.budget = budget
	label := fmt.Sprintf("seed %d n %d as_of %d imported %v (replay: deltaRunBudget(t, %d, %d, %d))", seed, n, asOf, imported, seed, n, budget)
	lag := func(int) int { return rng.IntN(3) }
	for tm := range rounds {
		for _, r := range q.rels {
			if rng.IntN(4) == 0 {
				continue
			}
			// Many updates at the same time across relations; at as_of too.
			ups := randomUpdates(rng, rng.IntN(6), nkeys, tm)
			ups = append(ups, retractSome(rng, r.all, rng.IntN(2), tm)...)
			r.seal(t, ups, tm+1)
		}
		q.step(t, lag, nil)
		for _, r := range q.rels {
			for range rng.IntN(3) {
				r.w.Exert(int64(1 + rng.IntN(64)))
			}
		}
	}
	for _, r := range q.rels {
		r.seal(t, nil, rounds+1)
	}
	all := func(int) int { return 1 << 30 }
	q.step(t, all, nil)
	q.step(t, all, nil)
	for steps := 0; q.open; steps++ {
		if steps > 1<<20 {
			t.Fatalf("%s: paths still have work after %d more steps", label, steps)
		}
		q.step(t, all, nil)
	}
	q.check(t, label, asOf, rounds)
	for i, p := range q.delta.Paths() {
		if tm, ok := p.Outstanding(); ok {
			t.Fatalf("%s: path %d still holds proposals at %d", label, i, tm)
		}
	}
}

func TestDeltaMatchesNestedLoopAtEveryTime(t *testing.T) {
	for seed := range uint64(200) {
		deltaRun(t, seed, 2)
		deltaRun(t, seed, 3)
	}
}

// TestDeltaTieBreakProducesEachCombinationOnce is §9.C: R0 gets a @3 and
// R1 gets b @3. Path 0 (lookup R1 with <=) matches, path 1 (lookup R0
// with <) does not: exactly one output.
func TestDeltaTieBreakProducesEachCombinationOnce(t *testing.T) {
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	q.rels[0].seal(t, nil, 3)
	q.rels[1].seal(t, nil, 3)
	q.rels[0].seal(t, []upd{{7, 1, 3, 1}}, 4)
	q.rels[1].seal(t, []upd{{7, 2, 3, 1}}, 4)
	all := func(int) int { return 9 }
	q.step(t, all, nil)
	got := rowDiffs(q.out, 3)
	if len(got) != 1 || got["[7 1 2]"] != 1 {
		t.Fatalf("output at 3 = %v, want exactly [7 1 2] once", got)
	}
	if m := q.delta.Paths()[0].Stats().Matches(); m != 1 {
		t.Fatalf("path 0 matched %d, want 1", m)
	}
	if m := q.delta.Paths()[1].Stats().Matches(); m != 0 {
		t.Fatalf("path 1 matched %d, want 0", m)
	}
}

// TestDeltaAsOfSnapshotOnlyThroughPathZero: with inputs presented at as_of
// the whole snapshot sits at as_of; paths 1.. drop it (the as_of
// optimization) and path 0 produces it once.
func TestDeltaAsOfSnapshotOnlyThroughPathZero(t *testing.T) {
	const asOf = 5
	p := batch.Presentation{Since: frontier.At(asOf), Until: frontier.Empty()}
	q := newDeltaQuery(t, 3, asOf, []batch.Presentation{p, p, p}, nil)
	q.rels[0].seal(t, []upd{{1, 10, 0, 1}, {1, 11, 2, 2}}, 6)
	q.rels[1].seal(t, []upd{{1, 20, 1, 1}, {1, 21, 5, 1}}, 6)
	q.rels[2].seal(t, []upd{{1, 30, 4, 3}}, 6)
	all := func(int) int { return 9 }
	q.step(t, all, nil)
	q.check(t, "snapshot", asOf, asOf+1)
	if f := q.delta.Paths()[0].Stats().Fed(); f != 2 {
		t.Fatalf("path 0 fed %d snapshot updates, want 2", f)
	}
	for i, p := range q.delta.Paths()[1:] {
		if f := p.Stats().Fed(); f != 0 {
			t.Fatalf("path %d fed %d snapshot updates, want 0", i+1, f)
		}
	}
}

// TestDeltaDropsTimesAtOrBeyondUntil: with inputs presented until {3},
// a source update at 4 proposes nothing on any path, though a lookup
// would match it (R1's row at 1): the output is the join at 1 and
// nothing at or beyond until.
func TestDeltaDropsTimesAtOrBeyondUntil(t *testing.T) {
	p := batch.Presentation{Since: frontier.Min(), Until: frontier.At(3)}
	q := newDeltaQuery(t, 2, 0, []batch.Presentation{p, p}, nil)
	q.rels[0].seal(t, []upd{{1, 10, 1, 1}, {1, 11, 4, 1}}, 6)
	q.rels[1].seal(t, []upd{{1, 20, 1, 1}, {1, 21, 4, 1}}, 6)
	all := func(int) int { return 9 }
	q.step(t, all, nil)
	for _, c := range q.out.Oks() {
		for i, tm := range c.Times {
			if tm >= 3 {
				t.Fatalf("output %v at %d, at or beyond until {3}", c.Row(i), tm)
			}
		}
	}
	if got := rowDiffs(q.out, 5); len(got) != 1 || got["[1 10 20]"] != 1 {
		t.Fatalf("output = %v, want exactly [1 10 20] once", got)
	}
}

// TestDeltaLookupCompactionKeepsStrictMatches (§8.27): path 1's proposal
// at 3 waits for R0 (upper 2), while R0's trace merges its two batches
// under the logical compaction the path allows. Compacting to one before
// 3 keeps R0's updates strictly earlier than 3; compacting to 3 itself
// would advance them onto 3 and lose both matches.
func TestDeltaLookupCompactionKeepsStrictMatches(t *testing.T) {
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	r0, r1 := q.rels[0], q.rels[1]
	r0.h.SetLogicalCompaction(frontier.At(10)) // the index allows compaction far ahead
	all := func(int) int { return 9 }
	r0.seal(t, []upd{{1, 10, 0, 1}}, 1)
	r0.seal(t, []upd{{1, 11, 1, 1}}, 2)
	r1.seal(t, nil, 3)
	r1.seal(t, []upd{{1, 20, 3, 1}}, 4)
	q.step(t, all, nil)
	if tm, ok := q.delta.Paths()[1].Outstanding(); !ok || tm != 3 {
		t.Fatalf("path 1 outstanding = %d, %v; want its proposal at 3 stashed", tm, ok)
	}
	if got := r0.h.State().Storage().LogicalCompaction(); got != frontier.At(2) {
		t.Fatalf("R0 logical compaction = %v, want {2}: one before the outstanding 3", got)
	}
	for range 8 {
		r0.w.Exert(1 << 10)
	}
	q.step(t, all, nil) // the path moves its hold again; merge under it
	for range 8 {
		r0.w.Exert(1 << 10)
	}
	if n := len(r0.h.State().Storage().(interface{ Batches() []*batch.Batch }).Batches()); n != 1 {
		t.Fatalf("R0 holds %d batches, want its two merged into one", n)
	}
	r0.seal(t, nil, 5)
	r1.seal(t, nil, 5)
	q.step(t, all, nil)
	q.check(t, "compaction", 0, 5)
	if got := rowDiffs(q.out, 3); len(got) != 2 {
		t.Fatalf("output at 3 = %v, want both R0 rows joined with R1's", got)
	}
}

// TestDeltaLookupCompactionHoldsBeforeTheLeastOutstanding (§8.27): path 1
// stashes proposals at 3 and at 5 while R0 lags (upper 2). The lookup may
// compact only to one before the least of them, 3: compacting to one
// before 5 would advance R0's updates onto 4, past the proposal at 3,
// and lose its matches while those at 5 stay.
func TestDeltaLookupCompactionHoldsBeforeTheLeastOutstanding(t *testing.T) {
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	r0, r1 := q.rels[0], q.rels[1]
	r0.h.SetLogicalCompaction(frontier.At(10)) // the index allows compaction far ahead
	all := func(int) int { return 9 }
	r0.seal(t, []upd{{1, 10, 0, 1}}, 1)
	r0.seal(t, []upd{{1, 11, 1, 1}}, 2)
	r1.seal(t, nil, 3)
	r1.seal(t, []upd{{1, 20, 3, 1}, {1, 21, 5, 1}}, 6)
	q.step(t, all, nil)
	if tm, ok := q.delta.Paths()[1].Outstanding(); !ok || tm != 3 {
		t.Fatalf("path 1 outstanding = %d, %v; want its least stashed proposal, 3", tm, ok)
	}
	if got := r0.h.State().Storage().LogicalCompaction(); got != frontier.At(2) {
		t.Fatalf("R0 logical compaction = %v, want {2}: one before the least outstanding 3", got)
	}
	for range 8 {
		r0.w.Exert(1 << 10)
	}
	q.step(t, all, nil)
	for range 8 {
		r0.w.Exert(1 << 10)
	}
	r0.seal(t, nil, 6)
	q.step(t, all, nil)
	q.check(t, "compaction", 0, 6)
	// Accumulated: both R0 rows with R1's row at 3, and with both at 5.
	for tm, want := range map[uint64]int{3: 2, 5: 4} {
		if got := rowDiffs(q.out, tm); len(got) != want {
			t.Fatalf("output through %d = %v, want %d rows: both R0 rows joined with R1's", tm, got, want)
		}
	}
}

// TestDeltaShardedByKeyHashEqualsOneWorker: with W workers, each holding
// the rows whose key hashes to it (dataflow.HashCols, as an exchange by
// the lookup key routes them), the union of the workers' outputs equals
// the nested-loop join, for W = 1, 2 and 4.
func TestDeltaShardedByKeyHashEqualsOneWorker(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		for seed := range uint64(30) {
			rng := rand.New(rand.NewPCG(seed, 6))
			rounds := uint64(3 + rng.IntN(5))
			pres := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
			qs := make([]*deltaQuery, w)
			for i := range qs {
				qs[i] = newDeltaQuery(t, 3, 0, pres, nil)
			}
			all := make([][]upd, 3)
			for tm := range rounds {
				for r := range 3 {
					ups := randomUpdates(rng, rng.IntN(8), 5, tm)
					all[r] = append(all[r], ups...)
					shards := make([][]upd, w)
					for _, u := range ups {
						s := dataflow.Worker(dataflow.HashCols([]int64{u.key}, []int{0}), w)
						shards[s] = append(shards[s], u)
					}
					for i, q := range qs {
						q.rels[r].seal(t, shards[i], tm+1)
					}
				}
				for _, q := range qs {
					q.step(t, func(int) int { return rng.IntN(3) }, nil)
				}
			}
			for _, q := range qs {
				for _, r := range q.rels {
					r.seal(t, nil, rounds+1)
				}
				q.step(t, func(int) int { return 1 << 30 }, nil)
				q.step(t, func(int) int { return 1 << 30 }, nil)
			}
			for tm := range rounds {
				got := map[string]int64{}
				for _, q := range qs {
					for k, d := range rowDiffs(q.out, tm) {
						got[k] += d
					}
				}
				want := naiveN([]map[[2]int64]int64{acc(all[0], tm), acc(all[1], tm), acc(all[2], tm)})
				if d := diffMaps(want, got); d != "" {
					t.Fatalf("W=%d seed %d: union at %d differs from the nested-loop join:\n%s", w, seed, tm, d)
				}
			}
		}
	}
}

// stageFilter compiles a closure over a path's row (columns named c0, c1,
// ...) that keeps the rows whose column col is not zero.
func stageFilter(t *testing.T, arity, col int) *MFP {
	t.Helper()
	var cols []expr.Ref
	for i := range arity {
		cols = append(cols, expr.Ref{Alias: "p", Column: fmt.Sprintf("c%d", i)})
	}
	f, err := expr.Parse(fmt.Sprintf("p.c%d != 0", col))
	if err != nil {
		t.Fatal(err)
	}
	m, err := expr.NewMFP(expr.MFPSpec{Input: cols, Filters: []*expr.Expr{f}, Project: cols})
	if err != nil {
		t.Fatal(err)
	}
	return NewMFP(m)
}

// TestDeltaStageClosuresFilterEarly: a filter on R1's val pushed into the
// first stage where each path has that column gives the nested-loop join
// of the rows passing it (the rows of the last stages are permutations,
// so each path filters its own column).
func TestDeltaStageClosuresFilterEarly(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 13))
		id := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
		q := newDeltaQuery(t, 3, 0, id, nil)
		// Path 0 (k, v0) + v1: filter column 2 at stage 0. Path 1 (k, v1):
		// filter column 1 at stage 0. Path 2 (k, v2) + v0 + v1: column 3
		// at stage 1.
		where := [][2]int{{0, 2}, {0, 1}, {1, 3}}
		for i, p := range q.delta.Paths() {
			st, col := where[i][0], where[i][1]
			h := p.stages[st]
			h.st.Closure = stageFilter(t, h.arity+h.st.Arity.Val, col)
		}
		for tm := range uint64(5) {
			for _, r := range q.rels {
				r.seal(t, append(randomUpdates(rng, rng.IntN(6), 3, tm), retractSome(rng, r.all, rng.IntN(2), tm)...), tm+1)
			}
			q.step(t, func(int) int { return rng.IntN(3) }, nil)
		}
		for _, r := range q.rels {
			r.seal(t, nil, 6)
		}
		q.step(t, func(int) int { return 9 }, nil)
		q.step(t, func(int) int { return 9 }, nil)
		for tm := range uint64(5) {
			accs := []map[[2]int64]int64{acc(q.rels[0].all, tm), acc(q.rels[1].all, tm), acc(q.rels[2].all, tm)}
			maps.DeleteFunc(accs[1], func(k [2]int64, _ int64) bool { return k[1] == 0 })
			if d := diffMaps(naiveN(accs), rowDiffs(q.out, tm)); d != "" {
				t.Fatalf("seed %d: output at %d differs from the nested loop over R1's non-zero vals:\n%s", seed, tm, d)
			}
		}
	}
	// A stage closure that can err is refused: its errors would miss the
	// multiplicity of the lookups after it.
	q, err := expr.Parse("100 / p.c1")
	if err != nil {
		t.Fatal(err)
	}
	cols := []expr.Ref{{Alias: "p", Column: "c0"}, {Alias: "p", Column: "c1"}, {Alias: "p", Column: "c2"}}
	m, err := expr.NewMFP(expr.MFPSpec{Input: cols, Maps: []expr.Map{{Name: "q", Expr: q}}, Project: cols})
	if err != nil {
		t.Fatal(err)
	}
	r := newRel(ar11)
	_, err = NewPath(PathOptions{Source: 0, SourceArity: ar11, SourcePres: batch.Identity(), AsOf: frontier.At(0),
		Stages: []Stage{{Lookup: r.h, Pres: batch.Identity(), Arity: ar11, Relation: 1, StreamKey: []int{0}, Closure: NewMFP(m)}}})
	if !errors.Is(err, ErrStageClosure) {
		t.Fatalf("erring stage closure: err = %v, want ErrStageClosure", err)
	}
}

// TestDeltaFeedConsolidationOverflowIsAnError (K3): a path's source updates
// advanced to as_of are consolidated before they become proposals; two
// updates of one record that each fit int64 but whose sum at as_of does
// not are one `numeric overflow` at as_of with diff +1, counted as the
// path's error, and no proposal: neither a wrapped count nor the updates
// left after the partial sum overflowed. A sum that fits is a proposal
// even when a partial sum on the way did not (the consolidation is exact).
func TestDeltaFeedConsolidationOverflowIsAnError(t *testing.T) {
	const asOf = 3
	p := batch.Presentation{Since: frontier.At(asOf), Until: frontier.Empty()}
	q := newDeltaQuery(t, 2, asOf, []batch.Presentation{p, p}, nil)
	// Record (1, 10) sums past MaxInt64 at as_of and (3, 12) below
	// MinInt64; (2, 11) passes through MaxInt64+1 on the way but its sum,
	// MaxInt64, fits.
	q.rels[0].seal(t, []upd{{1, 10, 1, math.MaxInt64}, {1, 10, 2, 1}, {2, 11, 0, math.MaxInt64}, {2, 11, 1, 1}, {2, 11, 2, -1},
		{3, 12, 1, math.MinInt64}, {3, 12, 2, -1}}, 4)
	q.rels[1].seal(t, []upd{{1, 20, 0, 1}, {2, 21, 0, 1}, {3, 22, 0, 1}}, 4)
	q.step(t, func(int) int { return 9 }, nil)
	if got := errDiffs(q.out, asOf); got[expr.CodeOverflow] != 2 || len(got) != 1 {
		t.Fatalf("errors at as_of = %v, want {overflow: 2}", got)
	}
	if got := rowDiffs(q.out, asOf); len(got) != 1 || got["[2 11 21]"] != math.MaxInt64 {
		t.Fatalf("rows at as_of = %v, want only [2 11 21] x%d", got, int64(math.MaxInt64))
	}
	if got := q.delta.Paths()[0].Stats().Errors(); got != 2 {
		t.Fatalf("path 0 error count = %d, want 2", got)
	}
}

// saturatedLookup makes a two-relation delta query whose R0 record (1, 10)
// a merge has saturated in the lookup R1's proposals read: +2 at 0 and
// +MaxInt64 at 1, exact in each batch, with R0's logical compaction far
// ahead (an index that allows it) and R1 at 4 after an update of key 1 at
// 3; two steps, each with R0's merges exerted after it, bring 0 and 1
// together. It returns the query and the step's budget for every path.
func saturatedLookup(t *testing.T) (*deltaQuery, func(int) int) {
	t.Helper()
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	r0, r1 := q.rels[0], q.rels[1]
	r0.h.SetLogicalCompaction(frontier.At(10)) // the index allows compaction far ahead
	all := func(int) int { return 9 }
	r0.seal(t, []upd{{1, 10, 0, 2}}, 1)
	r0.seal(t, []upd{{1, 10, 1, math.MaxInt64}}, 2)
	r1.seal(t, nil, 3)
	r1.seal(t, []upd{{1, 20, 3, 1}}, 4)
	for range 2 {
		q.step(t, all, nil)
		for range 8 {
			r0.w.Exert(1 << 10)
		}
	}
	cut, err := r0.h.BatchesThrough(frontier.At(r0.upper))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cut, (*batch.Batch).Saturated) {
		t.Fatalf("no merge saturated R0's record: %v", cut)
	}
	return q, all
}

// TestDeltaLookupOfASaturatedCountIsAnOverflow: R0's record is +2 at 0
// and +MaxInt64 at 1, exact in each batch. Path 1 stashes R1's update at
// 3 and compacts R0 to {2}; a merge then brings 0 and 1 together and
// saturates the record (batch.Batch.Saturated). When the proposal is
// matched, the exact product is out of int64: the output at 3 holds
// `numeric overflow` (K3, docs/semantics.md §1.1), not a row at MaxInt64
// alone.
func TestDeltaLookupOfASaturatedCountIsAnOverflow(t *testing.T) {
	q, all := saturatedLookup(t)
	r0, r1 := q.rels[0], q.rels[1]
	r0.seal(t, nil, 5)
	r1.seal(t, nil, 5)
	q.step(t, all, nil)
	if got := errDiffs(q.out, 2); len(got) != 0 {
		t.Fatalf("errors at 2 = %v, want none (each batch was exact)", got)
	}
	if got := errDiffs(q.out, 3); got[expr.CodeOverflow] < 1 {
		t.Fatalf("errors at 3 = %v, want a numeric overflow (R1's update met a saturated count); rows %v", got, rowDiffs(q.out, 3))
	}
}

// TestDeltaSourceOfASaturatedCountIsAnOverflow: a path's source batch that
// a merge saturated (an import's snapshot can be one: +2 at 0 and
// +MaxInt64 at 1 compacted to 1) proposes the saturated count; the output
// then holds `numeric overflow` at the earliest time proposed (K3,
// docs/semantics.md §1.1), not a row at MaxInt64 alone.
func TestDeltaSourceOfASaturatedCountIsAnOverflow(t *testing.T) {
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	r0, r1 := q.rels[0], q.rels[1]
	r1.seal(t, []upd{{1, 20, 0, 1}}, 2)
	b0 := r0.seal(t, []upd{{1, 10, 0, 2}}, 1)
	b1 := r0.seal(t, []upd{{1, 10, 1, math.MaxInt64}}, 2)
	sat, err := batch.Merge(b0, b1, frontier.At(1))
	if !errors.Is(err, batch.ErrOverflow) || !sat.Saturated() {
		t.Fatalf("merge: err %v, saturated %v; want ErrOverflow and a saturated batch", err, sat.Saturated())
	}
	r0.queue = []*batch.Batch{sat}
	q.step(t, func(int) int { return 9 }, nil)
	if got := errDiffs(q.out, 0); len(got) != 0 {
		t.Fatalf("errors at 0 = %v, want none", got)
	}
	if got := errDiffs(q.out, 1); got[expr.CodeOverflow] < 1 {
		t.Fatalf("errors at 1 = %v, want a numeric overflow (a saturated count was proposed); rows %v", got, rowDiffs(q.out, 1))
	}
}

// TestASaturatedLookupMarksAPathOnce: after R0's record is saturated as in
// TestDeltaLookupOfASaturatedCountIsAnOverflow, R1 changes key 1 at every
// time for 60 rounds; each round's proposals meet the saturated count in
// R0's lookup. A marker a proposal grew the output's numeric overflow by
// one a round; one stands at every later time, so the path adds it once
// (docs/semantics.md §1.1).
func TestASaturatedLookupMarksAPathOnce(t *testing.T) {
	q, all := saturatedLookup(t)
	r0, r1 := q.rels[0], q.rels[1]
	const rounds = 60
	for i := range rounds {
		tm := uint64(4 + i)
		r1.seal(t, []upd{{1, int64(21 + i), tm, 1}}, tm+1)
		r0.seal(t, nil, tm+1)
		q.step(t, all, nil)
	}
	if got := errDiffs(q.out, 3); got[expr.CodeOverflow] != 1 {
		t.Fatalf("errors at 3 = %v, want one numeric overflow (R1's update met a saturated count)", got)
	}
	if got := errDiffs(q.out, 4+rounds); got[expr.CodeOverflow] != 1 {
		t.Fatalf("errors after %d rounds = %v, want one numeric overflow (one record's count left int64, once)", rounds, got)
	}
}
