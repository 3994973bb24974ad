package reduce

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// upd is one input update: a group key, a record, a time and a diff.
type upd struct {
	key []int64
	val []int64
	t   uint64
	d   int64
}

// input is one worker's input arrangement: a trace (published when
// imported), the stream of batches not yet delivered, and how the reduce
// reads it.
type input struct {
	ar    batch.Arity
	h     *trace.Handle // the publisher's own handle (imported) or nil
	w     *trace.Writer
	sp    *share.Spine
	im    *share.Import
	queue []*batch.Batch
	front frontier.Frontier // the stream's frontier
	until frontier.Frontier
	upper uint64
	in    Input
	evs   []share.Event
}

// newInput makes an arrangement with the given arity. A direct one hands
// its only handle to the reduce; an imported one publishes the trace,
// inserts pre times of history first, and imports it at asOf through the
// trace's point, so the import is seeded with that history and holds it
// physically at its seed.
func newInput(t testing.TB, ar batch.Arity, imported bool, asOf uint64, pre [][]upd) *input {
	return newInputUntil(t, ar, imported, asOf, 0, pre)
}

// newInputUntil is newInput with an import bounded by until (0 for none):
// the import presents nothing at or beyond it and completes there.
func newInputUntil(t testing.TB, ar batch.Arity, imported bool, asOf, until uint64, pre [][]upd) *input {
	t.Helper()
	x := &input{ar: ar, front: frontier.Min(), until: frontier.Empty()}
	if until > 0 {
		x.until = frontier.At(until)
	}
	if !imported {
		h, w := trace.NewSpine(ar, spine.Options{})
		x.w = w
		x.in = Input{Reader: h, Pres: batch.Identity(), Arity: ar}
		for _, ups := range pre {
			x.seal(t, ups, x.upper+1)
		}
		return x
	}
	h, w, sp := share.NewTrace(ar, spine.Options{})
	x.h, x.w, x.sp = h, w, sp
	for _, ups := range pre {
		x.seal(t, ups, x.upper+1)
	}
	// The publisher compacts as far as it may before the import: to
	// as_of, the import's limit.
	h.SetLogicalCompaction(frontier.At(asOf))
	h.SetPhysicalCompaction(frontier.At(x.upper))
	for range 4 {
		w.Exert(1 << 12)
	}
	im, err := sp.LocalPoint().Import(frontier.At(asOf), x.until)
	if err != nil {
		t.Fatal(err)
	}
	x.im = im
	x.queue = nil
	x.in = Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar}
	return x
}

// seal inserts the updates of [upper, to) and queues the batch on the
// direct stream.
func (x *input) seal(t testing.TB, ups []upd, to uint64) {
	t.Helper()
	b := batch.NewBuilder(x.ar, len(ups))
	for _, u := range ups {
		b.Push(u.key, u.val, u.t, u.d)
	}
	out, err := b.Build(frontier.At(x.upper), frontier.At(to))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.w.Insert(out); err != nil {
		t.Fatal(err)
	}
	x.upper = to
	if x.im == nil {
		x.queue = append(x.queue, out)
	}
}

// deliver returns up to n stream batches and the stream's frontier after
// them.
func (x *input) deliver(n int) ([]*batch.Batch, frontier.Frontier) {
	if x.im != nil {
		// The publisher merges as far as its own handle lets it: to its
		// upper, logically and physically; only the import's holds keep
		// anything back.
		x.h.SetLogicalCompaction(frontier.At(x.upper))
		x.h.SetPhysicalCompaction(frontier.At(x.upper))
		x.sp.Refresh()
		x.w.Exert(1 << 10)
		x.evs = x.im.Drain(x.evs[:0])
		var out []*batch.Batch
		for _, e := range x.evs {
			if e.Batch != nil {
				out = append(out, e.Batch)
			} else {
				x.front = e.Frontier
			}
		}
		return out, x.front
	}
	n = min(n, len(x.queue))
	out := slices.Clone(x.queue[:n])
	x.queue = x.queue[n:]
	if len(x.queue) > 0 {
		x.front = x.queue[0].Lower()
	} else {
		x.front = frontier.At(x.upper)
	}
	return out, x.front
}

func (x *input) close() {
	if x.im != nil {
		x.im.Close()
		x.h.Release()
	}
	x.w.Close()
}

// collected accumulates a reduce's outputs.
type collected struct {
	oks, errs []batch.Update
}

func (c *collected) add(o Output) {
	if !o.Retired {
		return
	}
	c.oks = append(c.oks, o.Oks.Updates()...)
	c.errs = append(c.errs, o.Errs.Updates()...)
}

// at returns the accumulation at time t: rows ("k | v") and errors
// (message) with their counts.
func at(ups []batch.Update, t uint64, errs bool) map[string]int64 {
	m := map[string]int64{}
	for _, u := range ups {
		if u.Time > t {
			continue
		}
		var s string
		if errs {
			s = codeMessage(u.Key[0])
		} else {
			s = rowString(u.Key, u.Val)
		}
		m[s] += u.Diff
		if m[s] == 0 {
			delete(m, s)
		}
	}
	return m
}

func codeMessage(c int64) string {
	m, err := expr.Message(c)
	if err != nil {
		return err.Error()
	}
	return m
}

func rowString(k, v []int64) string {
	return fmt.Sprint(k) + " | " + fmt.Sprint(v)
}

// model is the naive reduce of the accumulated input at t, computed from
// scratch with math/big: per group, the records with non-zero counts; a
// negative one yields one `negative multiplicity`, a count or sum outside
// int64 one `numeric overflow`, else one row (docs/spec.md, "The query").
func model(all []upd, t uint64, asOf uint64, aggs []Aggregate, m mode) (rows, errs map[string]int64) {
	type rec struct{ key, val string }
	counts := map[rec]*big.Int{}
	keys := map[string][]int64{}
	vals := map[string][]int64{}
	for _, u := range all {
		if max(u.t, asOf) > t {
			continue
		}
		r := rec{fmt.Sprint(u.key), fmt.Sprint(u.val)}
		keys[r.key], vals[r.val] = u.key, u.val
		if counts[r] == nil {
			counts[r] = new(big.Int)
		}
		counts[r].Add(counts[r], big.NewInt(u.d))
	}
	rows, errs = map[string]int64{}, map[string]int64{}
	groups := map[string][]rec{}
	for r, c := range counts {
		if c.Sign() != 0 {
			groups[r.key] = append(groups[r.key], r)
		}
	}
	inRange := func(x *big.Int) bool { return x.IsInt64() }
	for g, recs := range groups {
		switch m {
		case modeThreshold, modeDistinct:
			c := counts[recs[0]]
			switch {
			case c.Sign() < 0 && m == modeDistinct:
				errs["negative multiplicity"]++
			case c.Sign() < 0:
			case m == modeDistinct:
				rows[rowString(keys[g], nil)]++
			default:
				rows[rowString(keys[g], nil)] += c.Int64()
			}
			continue
		}
		neg := false
		for _, r := range recs {
			neg = neg || counts[r].Sign() < 0
		}
		if neg {
			errs["negative multiplicity"]++
			continue
		}
		out := make([]int64, len(aggs))
		over := false
		for j, a := range aggs {
			acc := new(big.Int)
			for i, r := range recs {
				v := vals[r.val]
				switch a.Fn {
				case Count:
					acc.Add(acc, counts[r])
				case Sum:
					acc.Add(acc, new(big.Int).Mul(counts[r], big.NewInt(v[a.Col])))
				case Min:
					if i == 0 || v[a.Col] < acc.Int64() {
						acc.SetInt64(v[a.Col])
					}
				case Max:
					if i == 0 || v[a.Col] > acc.Int64() {
						acc.SetInt64(v[a.Col])
					}
				}
			}
			if !inRange(acc) {
				over = true
			}
			out[j] = acc.Int64()
		}
		if over {
			errs["numeric overflow"]++
			continue
		}
		rows[rowString(keys[g], out)]++
	}
	return rows, errs
}

func diffMaps(want, got map[string]int64) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			fmt.Fprintf(&sb, "  %s: want %d, got %d\n", k, want[k], got[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&sb, "  %s: want 0, got %d\n", k, got[k])
		}
	}
	return sb.String()
}

// config is one randomised run.
type config struct {
	aggs       []Aggregate
	plan       Plan
	mode       mode
	workers    int
	imported   bool
	appendOnly bool
	extremes   bool // values at the int64 limits (sum overflow)
}

func (c config) String() string {
	return fmt.Sprintf("mode=%v aggs=%v plan=%v W=%d imported=%v appendOnly=%v extremes=%v", c.mode, c.aggs, c.plan, c.workers, c.imported, c.appendOnly, c.extremes)
}

// randomUpdates returns n updates at time t over nkeys groups with records
// (a, b) from small domains, so that records repeat, cancel and go
// negative; diffs in [-2, 3] without 0 (only positive when appendOnly).
func randomUpdates(rng *rand.Rand, c config, n, nkeys int, t uint64) []upd {
	out := make([]upd, 0, n)
	for range n {
		key := []int64{int64(rng.IntN(nkeys))}
		val := []int64{int64(rng.IntN(4)), int64(rng.IntN(7)) - 3}
		if c.extremes && rng.IntN(3) == 0 {
			val[1] = []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}[rng.IntN(3)]
		}
		if c.mode != modeReduce {
			key = append(key, val...)
			val = nil
		}
		d := int64(rng.IntN(6)) - 2
		if d <= 0 {
			d--
		}
		if c.appendOnly {
			d = 1 + int64(rng.IntN(2))
		}
		out = append(out, upd{key: key, val: val, t: t, d: d})
	}
	return out
}

// run is one randomised run of a reduce against the model at every time
// from as_of on: rounds of updates (with history before an import), the
// streams delivered with lag, W workers each reducing the groups it owns.
func run(t *testing.T, c config, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	rounds := uint64(5 + rng.IntN(8))
	asOf := uint64(rng.IntN(4))
	var until uint64 // an imported input may be bounded: the output is checked before it
	if c.imported && rng.IntN(3) == 0 {
		until = asOf + 1 + uint64(rng.IntN(int(rounds-asOf)))
	}
	nkeys := 1 + rng.IntN(5)
	ar := batch.Arity{Key: 1, Val: 2}
	if c.mode != modeReduce {
		ar = batch.Arity{Key: 3}
	}
	pre := int(asOf) + rng.IntN(2)
	var all []upd
	var history [][]upd
	for tm := range uint64(pre) {
		ups := randomUpdates(rng, c, rng.IntN(8), nkeys, tm)
		history = append(history, ups)
		all = append(all, ups...)
	}
	part := func(ups []upd, w int) []upd {
		var out []upd
		for _, u := range ups {
			if Owner(u.key[:1], c.workers) == w {
				out = append(out, u)
			}
		}
		return out
	}
	ins := make([]*input, c.workers)
	reds := make([]*Reduce, c.workers)
	for w := range c.workers {
		var pw [][]upd
		for _, ups := range history {
			pw = append(pw, part(ups, w))
		}
		ins[w] = newInputUntil(t, ar, c.imported, asOf, until, pw)
		opts := Options{AsOf: frontier.At(asOf), Aggregates: c.aggs, Plan: c.plan, AppendOnly: c.appendOnly}
		var err error
		switch c.mode {
		case modeThreshold:
			reds[w], err = NewThreshold(ins[w].in, opts)
		case modeDistinct:
			reds[w], err = NewDistinct(ins[w].in, opts)
		default:
			reds[w], err = New(ins[w].in, opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer ins[w].close()
		defer reds[w].Release()
	}
	var got collected
	step := func(w, n int) {
		bs, f := ins[w].deliver(n)
		o, err := reds[w].Step(bs, f)
		if err != nil {
			t.Fatalf("%v seed %d: worker %d step to %v: %v", c, seed, w, f, err)
		}
		got.add(o)
	}
	for tm := uint64(pre); tm < rounds; tm++ {
		ups := randomUpdates(rng, c, rng.IntN(10), nkeys, tm)
		all = append(all, ups...)
		for w := range c.workers {
			ins[w].seal(t, part(ups, w), tm+1)
			step(w, rng.IntN(3))
			for range rng.IntN(3) {
				ins[w].w.Exert(int64(1 + rng.IntN(64)))
			}
		}
	}
	for w := range c.workers {
		step(w, 1<<30)
		want := frontier.At(rounds)
		if until > 0 {
			want = frontier.Empty() // the import completed at until
		}
		if reds[w].Lower() != want {
			t.Fatalf("%v seed %d: worker %d retired through %v, want %v", c, seed, w, reds[w].Lower(), want)
		}
	}
	end := rounds
	if until > 0 {
		end = until
	}
	ref, err := plan.Resolve(referencePlan(c))
	if err != nil {
		t.Fatal(err)
	}
	for tm := asOf; tm < end; tm++ {
		wantRows, wantErrs := model(all, tm, asOf, c.aggs, c.mode)
		if d := diffMaps(wantRows, at(got.oks, tm, false)); d != "" {
			t.Fatalf("%v seed %d (as_of %d): rows at %d differ from the model:\n%s", c, seed, asOf, tm, d)
		}
		if d := diffMaps(wantErrs, at(got.errs, tm, true)); d != "" {
			t.Fatalf("%v seed %d (as_of %d): errors at %d differ from the model:\n%s", c, seed, asOf, tm, d)
		}
		checkReference(t, ref, all, tm, &got, fmt.Sprintf("%v seed %d (as_of %d)", c, seed, asOf))
	}
}

var (
	aggCount = Aggregate{Fn: Count}
	aggSum   = Aggregate{Fn: Sum, Col: 1}
	aggMin   = Aggregate{Fn: Min, Col: 1}
	aggMax   = Aggregate{Fn: Max, Col: 0}
)

// matrix runs every seed of c over W = 1, 2 and both index flavors
// (a fifth of the seeds with -short).
func matrix(t *testing.T, c config, seeds uint64) {
	if testing.Short() {
		seeds /= 5
	}
	for _, w := range []int{1, 2} {
		for _, imp := range []bool{false, true} {
			c := c
			c.workers, c.imported = w, imp
			t.Run(fmt.Sprintf("W=%d/imported=%v", w, imp), func(t *testing.T) {
				for seed := range seeds {
					run(t, c, seed)
				}
			})
		}
	}
}

func TestAccumulableMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggCount, aggSum}, plan: Accumulable}, 40)
}

func TestAccumulableSumOverflowMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggSum, aggCount}, plan: Accumulable, extremes: true}, 40)
}

func TestBasicMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMin, aggCount, aggMax, aggSum}, plan: Basic, extremes: true}, 40)
}

func TestHierarchicalMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMin, aggMax}, plan: Hierarchical}, 40)
}

func TestMonotonicMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMax, aggMin}, plan: Monotonic, appendOnly: true}, 40)
}

// TestMonotonicWithRetractionsMatchesModel: the monotonic plan given
// retractions anyway recomputes the groups that see them.
func TestMonotonicWithRetractionsMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMin}, plan: Monotonic}, 40)
}

func TestCollationMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMin, aggSum, aggCount, aggMax}, extremes: true}, 40)
}

// TestAppendOnlyCollationMatchesModel: an append-only reduce with both
// kinds runs an accumulable and a monotonic part, both reading the
// input: neither may move the input's hold past the lower the other still
// cuts at, which failed the second part's step once the first had run.
func TestAppendOnlyCollationMatchesModel(t *testing.T) {
	matrix(t, config{aggs: []Aggregate{aggMax, aggSum, aggMin, aggCount}, appendOnly: true, extremes: true}, 40)
}

func TestThresholdMatchesModel(t *testing.T) {
	matrix(t, config{mode: modeThreshold}, 40)
}

func TestDistinctMatchesModel(t *testing.T) {
	matrix(t, config{mode: modeDistinct}, 40)
}

// referencePlan is the plan whose query is c's reduce, threshold or
// distinct over an input x of columns (g, a, b): the record is (a, b) of
// group g (Col 0 is a, Col 1 is b), or the whole row for threshold and
// distinct.
func referencePlan(c config) *plan.Plan {
	q := plan.Query{From: []plan.From{{As: "x", Collection: "x"}}, Project: []string{"x.g", "x.a", "x.b"}}
	switch c.mode {
	case modeThreshold:
		q.Threshold = true
	case modeDistinct:
		q.Distinct = true
	default:
		red := &plan.Reduce{GroupBy: []string{"x.g"}}
		for j, a := range c.aggs {
			pa := plan.Aggregate{Name: fmt.Sprintf("a%d", j), Expr: []string{"x.a", "x.b"}[a.Col]}
			switch a.Fn {
			case Count:
				pa.Fn, pa.Expr = plan.Count, ""
			case Sum:
				pa.Fn = plan.Sum
			case Min:
				pa.Fn = plan.Min
			case Max:
				pa.Fn = plan.Max
			}
			red.Aggregates = append(red.Aggregates, pa)
		}
		q.Reduce = red
	}
	return &plan.Plan{Inputs: []plan.Input{{Name: "x", Columns: []string{"g", "a", "b"}}}, Query: q}
}

// checkReference compares what the reduce emitted, accumulated at t, with
// core/reference's evaluation of the same query over the same updates.
func checkReference(t *testing.T, r *plan.Resolved, all []upd, tm uint64, got *collected, what string) {
	t.Helper()
	var in []reference.Update
	for _, u := range all {
		row := append(append([]int64(nil), u.key...), u.val...)
		in = append(in, reference.Update{Time: u.t, Diff: u.d, Row: row})
	}
	want, err := reference.Eval(r, reference.Inputs{"x": in}, tm)
	if err != nil {
		t.Fatal(err)
	}
	res := &reference.Result{Time: tm, Columns: want.Columns}
	rows := map[string][]int64{}
	counts := map[string]int64{}
	for _, u := range got.oks {
		if u.Time > tm {
			continue
		}
		v := append(append([]int64(nil), u.Key...), u.Val...)
		k := fmt.Sprint(v)
		rows[k] = v
		counts[k] += u.Diff
	}
	for _, k := range slices.Sorted(maps.Keys(rows)) {
		if counts[k] != 0 {
			res.Rows = append(res.Rows, reference.Row{Values: rows[k], Diff: counts[k]})
		}
	}
	slices.SortFunc(res.Rows, func(a, b reference.Row) int { return slices.Compare(a.Values, b.Values) })
	for msg, n := range at(got.errs, tm, true) {
		res.Errors = append(res.Errors, reference.Error{Message: msg, Diff: n})
	}
	slices.SortFunc(res.Errors, func(a, b reference.Error) int { return strings.Compare(a.Message, b.Message) })
	if d := reference.Compare(want, res); d != nil {
		t.Fatalf("%s: at %d the output differs from core/reference:\n%s", what, tm, strings.Join(d, "\n"))
	}
}
