package workloads

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ReferenceInputs converts loaded tables into the reference evaluator's
// inputs. The tables must be s's as Load returns them: ReferenceInputs
// does not check them, and on others (a nil spec or table, more tables
// than inputs) it panics, or reads too few tables or another input's as
// the wrong data. CheckedReferenceInputs checks them first.
func ReferenceInputs(s *spec.Spec, tables []*spec.Table) reference.Inputs {
	in := reference.Inputs{}
	for i, t := range tables {
		ups := make([]reference.Update, t.Len())
		for j := range ups {
			ups[j] = reference.Update{Time: t.Times[j], Diff: t.Diffs[j], Row: t.Row(j)}
		}
		in[s.Inputs[i].Name] = ups
	}
	return in
}

// CheckedReferenceInputs is ReferenceInputs for tables it checks first:
// a nil or unresolved spec, or tables that are not s's inputs as Load
// returns them, is CheckTables' error (wrapping ErrUsage) and no inputs.
func CheckedReferenceInputs(s *spec.Spec, tables []*spec.Table) (reference.Inputs, error) {
	if err := CheckTables(s, tables); err != nil {
		return nil, err
	}
	return ReferenceInputs(s, tables), nil
}

// CheckTimes returns the times a check compares at: as_of and every input
// time after it (before until), ascending and distinct, so that a row or
// an error that comes and goes between two input times is compared where
// it stood. The reference evaluates the whole input up to each time anew,
// so their number is bounded: with more than k times, where k is
// 1,000,000 divided by the input updates up to the last time, at least 10
// and at most 256, it returns k of them: as_of, the times at a quarter,
// half and three quarters of those after as_of, the last, and the others
// spread evenly over the rest. A nil or unresolved spec has none (Check says why).
func CheckTimes(s *spec.Spec, tables []*spec.Table) []uint64 {
	if checkSpec(s) != nil {
		return nil
	}
	later := inputTimesAfterAsOf(s, tables)
	all := append([]uint64{s.Plan.Plan.AsOf}, later...)
	last, updates := all[len(all)-1], 0
	for _, t := range tables {
		if t == nil {
			continue
		}
		for _, tm := range t.Times {
			if tm <= last {
				updates++
			}
		}
	}
	k := min(maxCheckTimes, max(minCheckTimes, checkTimesWork/max(updates, 1)))
	if len(all) <= k {
		return all
	}
	// as_of, the quartiles and the last, then as many of the other times
	// as make k, spread evenly over them: k in all, never more.
	out := []uint64{s.Plan.Plan.AsOf}
	n := len(later)
	for _, q := range []int{n / 4, n / 2, 3 * n / 4, n - 1} {
		if !slices.Contains(out, later[q]) {
			out = append(out, later[q])
		}
	}
	var rest []uint64
	for _, t := range all {
		if !slices.Contains(out, t) {
			rest = append(rest, t)
		}
	}
	m := k - len(out)
	for i := range m {
		out = append(out, rest[i*len(rest)/m])
	}
	slices.Sort(out)
	return out
}

// The bounds of CheckTimes: the fewest and most times whatever the
// inputs' size.
const (
	minCheckTimes = 10
	maxCheckTimes = 256
)

// checkTimesWork is the input updates the reference may evaluate over all
// its times (about as many seconds as millions, for joins of few
// matches); a variable so that a test can bound a small spec's times.
var checkTimesWork = 1_000_000

// inputTimesAfterAsOf returns the distinct input times after as_of and
// before until, ascending.
func inputTimesAfterAsOf(s *spec.Spec, tables []*spec.Table) []uint64 {
	asOf := s.Plan.Plan.AsOf
	set := map[uint64]bool{}
	for _, t := range tables {
		if t == nil {
			continue
		}
		for _, tm := range t.Times {
			if tm > asOf && (!s.Plan.Plan.HasUntil || tm < s.Plan.Plan.Until) {
				set[tm] = true
			}
		}
	}
	later := make([]uint64, 0, len(set))
	for tm := range set {
		later = append(later, tm)
	}
	slices.Sort(later)
	return later
}

// Evaluate runs the workload once with its output captured and returns
// the output accumulated at each of times, in the order given (any order,
// repeats included), the operators' error counts, and what the runtimes
// still held after the `Session` closed (nil when every hold was released
// and every registry slot is gone). Each time must be at or after as_of
// and before until: one outside is an error wrapping ErrUsage, found
// before anything runs, as are a spec, tables or options `NewSession`
// refuses.
func Evaluate(ctx context.Context, s *spec.Spec, tables []*spec.Table, opts SessionOptions, times []uint64) ([]*reference.Result, []render.StageErrors, error, error) {
	ev, err := evaluate(ctx, s, tables, opts, times)
	if err != nil {
		return nil, nil, nil, err
	}
	return ev.res, ev.stages, ev.leak, nil
}

// evaluated is one run of Evaluate: its results at the times asked, the
// operators' error counts, what was held at its end, and the query's
// captured output, for comparing with another run at every time.
type evaluated struct {
	res    []*reference.Result
	stages []render.StageErrors
	leak   error
	out    *render.Output
}

// evaluate is Evaluate, keeping the query's captured output.
func evaluate(ctx context.Context, s *spec.Spec, tables []*spec.Table, opts SessionOptions, times []uint64) (*evaluated, error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	for _, t := range times {
		if err := checkTime(s.Plan, t); err != nil {
			return nil, err
		}
	}
	opts.Capture = true
	se, err := NewSession(s, tables, opts)
	if err != nil {
		return nil, err
	}
	res, stages, err := func() ([]*reference.Result, []render.StageErrors, error) {
		if err := se.FeedThrough(s.Plan.Plan.AsOf); err != nil {
			return nil, nil, err
		}
		if err := se.WaitIndexes(ctx, s.Plan.Plan.AsOf); err != nil {
			return nil, nil, err
		}
		if _, err := se.InstallQuery(ctx); err != nil {
			return nil, nil, err
		}
		if _, _, err := se.Finish(ctx); err != nil {
			return nil, nil, err
		}
		out := make([]*reference.Result, len(times))
		for i, t := range times {
			r, err := se.Result(t)
			if err != nil {
				return nil, nil, err
			}
			out[i] = r
		}
		return out, se.Metrics().Errors(), nil
	}()
	leak := se.Close(ctx)
	if err != nil {
		return nil, err
	}
	return &evaluated{res: res, stages: stages, leak: leak, out: se.out}, nil
}

// CheckCase is one configuration a check runs.
type CheckCase struct {
	Mode    render.Mode
	Join    plan.JoinKind
	Workers int
}

// options are the `SessionOptions` a check runs c with.
func (c CheckCase) options() SessionOptions {
	return SessionOptions{Mode: c.Mode, Join: c.Join, Workers: c.Workers}
}

func (c CheckCase) String() string {
	return fmt.Sprintf("index=%v join=%v workers=%d", c.Mode, c.Join, c.Workers)
}

// CheckCases returns the configurations a check runs for s: both modes
// (imported only when every arrangement is served), both joins for a
// query that joins, one and two workers. A nil or unresolved spec has
// none (Check says why).
func CheckCases(s *spec.Spec) []CheckCase {
	if checkSpec(s) != nil {
		return nil
	}
	var out []CheckCase
	joins := []plan.JoinKind{plan.Linear, plan.Delta}
	if len(s.Plan.Query.Entries) == 1 {
		joins = []plan.JoinKind{s.Plan.Plan.Query.Join}
	}
	for _, m := range []render.Mode{render.Imported, render.Direct} {
		for _, j := range joins {
			if miss, _ := s.Plan.Missing(j); m == render.Imported && len(miss) > 0 {
				continue
			}
			for _, w := range []int{1, 2} {
				out = append(out, CheckCase{Mode: m, Join: j, Workers: w})
			}
		}
	}
	return out
}

// Check runs s in every configuration of cases and compares the output at
// each of CheckTimes with the reference evaluator, each configuration's
// output with the first's at every input time from as_of (crossDiffs: so
// a difference between configurations at a time the reference is not
// evaluated at is found too), the per-operator error
// counts with the output's errors (stageDiff, stageDiffImported) and, for
// each index, its maintaining dataflow's counts with its errors
// (maintainDiffs), and checks that every hold and registry slot is
// released at the end. It returns one line per difference (nil when all
// agree). A nil spec or tables that are not s's loaded inputs are an
// error wrapping ErrUsage (CheckTables), not a difference; so are no
// cases at all (a check of nothing would pass) and a case whose options
// `NewSession` refuses (its mode, join or workers out of range), found
// before anything runs.
func Check(ctx context.Context, s *spec.Spec, tables []*spec.Table, cases []CheckCase) ([]string, error) {
	rep, err := CheckReported(ctx, s, tables, cases)
	return rep.Diffs, err
}

// CheckReport is what CheckReported found: the differences (Check's),
// the number of times the output was compared with the reference
// (CheckTimes), and the number of input times, as_of and after it, at
// which every configuration's output was compared with the first's
// (none when fewer than two ran, or as_of's reference result may
// overflow; see agreeUpTo).
type CheckReport struct {
	Diffs          []string
	ReferenceTimes int
	CrossTimes     int
}

// CheckReported is Check, also saying at how many times it compared.
func CheckReported(ctx context.Context, s *spec.Spec, tables []*spec.Table, cases []CheckCase) (CheckReport, error) {
	diffs, rep, err := check(ctx, s, tables, cases)
	rep.Diffs = diffs
	return rep, err
}

// check is CheckReported.
func check(ctx context.Context, s *spec.Spec, tables []*spec.Table, cases []CheckCase) ([]string, CheckReport, error) {
	var rep CheckReport
	in, err := CheckedReferenceInputs(s, tables)
	if err != nil {
		return nil, rep, err
	}
	if len(cases) == 0 {
		return nil, rep, usagef("no check cases for spec %s: a check of nothing passes nothing (CheckCases(s) lists every configuration)", spec.Quote(s.Name))
	}
	for i, c := range cases {
		if err := checkOptions(c.options()); err != nil {
			return nil, rep, fmt.Errorf("%w (check case %d of %d)", err, i, len(cases))
		}
	}
	times := CheckTimes(s, tables)
	want := make([]*reference.Result, len(times))
	for i, t := range times {
		w, err := reference.Eval(s.Plan, in, t)
		if err != nil {
			return nil, rep, err
		}
		want[i] = w
	}
	// Every configuration must agree with the first that ran at every
	// time from as_of, those the reference is not evaluated at too, up to
	// the last compared time where no count may overflow (agreeUpTo).
	hi, cross := agreeUpTo(times, want)
	rep.ReferenceTimes = len(times)
	crossTimes := 0
	if cross {
		for _, t := range append([]uint64{s.Plan.Plan.AsOf}, inputTimesAfterAsOf(s, tables)...) {
			if t <= hi {
				crossTimes++
			}
		}
	}
	var first *evaluated
	var firstCase CheckCase
	var diffs []string
	for _, c := range cases {
		ev, err := evaluate(ctx, s, tables, c.options(), times)
		if err != nil {
			if ctx.Err() != nil {
				return diffs, rep, err
			}
			diffs = append(diffs, fmt.Sprintf("%s: %s: %v", s.Name, c, err))
			continue
		}
		got, stages, leak := ev.res, ev.stages, ev.leak
		// The first few times that differ, each with its first few
		// differences: a fault that stands from one time on would
		// otherwise repeat itself at up to 256 times.
		var more []uint64
		shown := 0
		for i, t := range times {
			ds := reference.Compare(want[i], got[i])
			switch {
			case len(ds) == 0:
			case shown == maxTimesShown:
				more = append(more, t)
			default:
				shown++
				for _, d := range firstDiffs(ds, 5) {
					diffs = append(diffs, fmt.Sprintf("%s: %s: time=%d: %s", s.Name, c, t, d))
				}
			}
		}
		if len(more) > 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %s: and at %d later times (%d to %d)", s.Name, c, len(more), more[0], more[len(more)-1]))
		}
		switch {
		case first == nil:
			first, firstCase = ev, c
		case cross:
			rep.CrossTimes = crossTimes // two configurations ran: compared
			for _, d := range crossDiffs(first.out, ev.out, s.Plan.Plan.AsOf, hi, times) {
				diffs = append(diffs, fmt.Sprintf("%s: %s: %s, %s has %s", s.Name, c, d.what, firstCase, d.theirs))
			}
		}
		if leak != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %s: not released at the end: %v", s.Name, c, leak))
		}
		last := want[len(want)-1]
		if !last.MayOverflow && !s.Plan.Plan.HasUntil {
			ds, err := countDiffs(s.Plan, in, c.Mode, last.Time, stages, got[len(got)-1])
			if err != nil {
				return diffs, rep, err
			}
			for _, d := range ds {
				diffs = append(diffs, fmt.Sprintf("%s: %s: %s", s.Name, c, d))
			}
		}
	}
	return diffs, rep, nil
}

// agreeUpTo returns the last of the compared times (as_of first, then
// ascending) before the first whose reference result may overflow, and
// false when as_of's may: up to it no configuration's output may hold a
// numeric overflow error of its own, so all of them must agree at every
// time (past it, where and when each reports an overflow is its own:
// docs/semantics.md §1.1).
func agreeUpTo(times []uint64, want []*reference.Result) (uint64, bool) {
	hi, ok := uint64(0), false
	for i, t := range times {
		if want[i].MayOverflow {
			break
		}
		hi, ok = t, true
	}
	return hi, ok
}

// crossDiff is one difference between two configurations' outputs at a
// time the reference was not evaluated at: what this one holds, and what
// the other has of it.
type crossDiff struct {
	what, theirs string
}

// crossDiffs compares the output rows, and then the errors, of two runs at
// every time from asOf through hi and returns, for each, the first time
// they differ with a row (or error) that differs there, unless that time
// is one of compared: there the reference comparison has reported it
// already (at least one of the two differs from the reference).
//
// A capture that read a batch a merge saturated is compared no further
// from the earliest time it read one (Capture.FirstDifference: a count
// there is not exact, and two such are not equal). That is a difference
// here: a merge saturates only a count out of int64, which through hi
// (agreeUpTo) the reference says none is. The output's captures
// (render.Output) are of the collection's chunks, where a saturated
// batch shows as the `numeric overflow` its reader adds, a row like any
// other, so they read none; a capture of an arrangement half would.
func crossDiffs(a, b *render.Output, asOf, hi uint64, compared []uint64) []crossDiff {
	var out []crossDiff
	count := func(n int64, over bool) string {
		if over {
			return "a count beyond int64"
		}
		return fmt.Sprintf("diff %d", n)
	}
	for _, errs := range []bool{false, true} {
		x, y := b.Oks, a.Oks
		if errs {
			x, y = b.Errs, a.Errs
		}
		t, row, n, m, nOver, mOver, differs := x.FirstDifference(y, asOf, hi)
		if !differs || slices.Contains(compared, t) {
			continue
		}
		if row == nil {
			sat := func(s bool) string {
				if s {
					return "a count a merge saturated"
				}
				return "none"
			}
			what := "rows"
			if errs {
				what = "errors"
			}
			out = append(out, crossDiff{
				what:   fmt.Sprintf("time=%d (not compared with the reference): %s: %s (out of int64, compared no further)", t, what, sat(nOver)),
				theirs: sat(mOver),
			})
			continue
		}
		what := "row " + reference.RowText(row)
		if errs {
			what = "error " + ErrorMessage(row[0])
		}
		out = append(out, crossDiff{
			what:   fmt.Sprintf("time=%d (not compared with the reference): %s: %s", t, what, count(n, nOver)),
			theirs: count(m, mOver),
		})
	}
	return out
}

// countDiffs checks the operators' error counts of one run in mode at
// time t, every input in, against the output got: stageDiff direct,
// stageDiffImported and each index's maintainDiffs imported. The counts
// of the numeric overflow an operator adds where it reads a batch a merge
// saturated (a join's, a reduce's, an imported index's flatten, `flatten
// index NAME`, weighed as the collection it flattens or the query view
// it feeds) are 0 wherever this runs: a merge saturates only a count out
// of int64, and the caller compares no counts where the reference says
// one may leave it (Result.MayOverflow).
func countDiffs(r *plan.Resolved, in reference.Inputs, mode render.Mode, t uint64, stages []render.StageErrors, got *reference.Result) ([]string, error) {
	if mode == render.Direct {
		if d := stageDiff(r, stages, got); d != "" {
			return []string{d}, nil
		}
		return nil, nil
	}
	d, err := stageDiffImported(r, in, t, stages, got)
	if err != nil {
		return nil, err
	}
	ds, err := maintainDiffs(r, in, t, stages)
	if err != nil {
		return nil, err
	}
	if d != "" {
		ds = append([]string{d}, ds...)
	}
	return ds, nil
}

// maxTimesShown is how many differing times a check prints of one
// configuration, each with its first five differences; the later ones
// are counted in one line.
const maxTimesShown = 3

func firstDiffs(ds []string, n int) []string {
	if len(ds) <= n {
		return ds
	}
	return append(ds[:n:n], fmt.Sprintf("... and %d more differences", len(ds)-n))
}

// stageDiff checks the error contract through the operators' counts: in
// a direct query dataflow every view is built once, each operator counts
// the errors it produced, and those errors reach the output once per path
// of from entries that leads there (docs/spec.md "Expressions"), so the output's
// total error multiplicity (at the last time, every input in) equals each
// operator's count times the number of ways its collection is read.
func stageDiff(r *plan.Resolved, stages []render.StageErrors, got *reference.Result) string {
	weight := Weights(r)
	var want int64
	for _, st := range stages {
		want += st.Errors * weight[st.Collection]
	}
	var total int64
	for _, e := range got.Errors {
		total += e.Diff
	}
	if want != total {
		return fmt.Sprintf("per-operator error counts %v, weighted by the reads of their collections, sum to %d; the output has %d errors", stages, want, total)
	}
	return ""
}

// stageDiffImported checks the error contract of an imported query: its
// output's errors are those the query dataflow's own operators produced
// plus, once per from entry, the errors the entry's index carries (the
// entry's collection's errors, from the reference).
func stageDiffImported(r *plan.Resolved, in reference.Inputs, t uint64, stages []render.StageErrors, got *reference.Result) (string, error) {
	var want int64
	var own []render.StageErrors
	for _, st := range stages {
		if st.Dataflow == render.QueryID {
			want += st.Errors
			own = append(own, st)
		}
	}
	for _, e := range r.Query.Entries {
		res, err := reference.EvalCollection(r, in, t, e.Collection.Name)
		if err != nil {
			return "", err
		}
		if res.MayOverflow {
			return "", nil
		}
		for _, x := range res.Errors {
			want += x.Diff
		}
	}
	var total int64
	for _, e := range got.Errors {
		total += e.Diff
	}
	if want != total {
		return fmt.Sprintf("the query's own error counts %v plus its entries' errors sum to %d; the output has %d errors", own, want, total), nil
	}
	return "", nil
}

// maintainDiffs checks the error contract of each index's maintaining
// dataflow (imported mode): the errors its collection carries (from the
// reference) are those the dataflow's own operators produced, each count
// times the number of ways its collection is read inside the dataflow,
// plus, once per read, the errors of each collection it imports through
// another index (plan.Maintain). It returns one line per index whose
// counts do not add up.
func maintainDiffs(r *plan.Resolved, in reference.Inputs, t uint64, stages []render.StageErrors) ([]string, error) {
	errsOf := map[string]int64{}
	collErrors := func(name string) (int64, bool, error) {
		if n, ok := errsOf[name]; ok {
			return n, true, nil
		}
		res, err := reference.EvalCollection(r, in, t, name)
		if err != nil || res.MayOverflow {
			return 0, false, err
		}
		var n int64
		for _, e := range res.Errors {
			n += e.Diff
		}
		errsOf[name] = n
		return n, true, nil
	}
	var diffs []string
	for _, ix := range r.Indexes {
		own, imported := maintainWeights(ix)
		want, ok, err := collErrors(ix.Collection.Name)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // its counts may have left int64: nothing to compare
		}
		var got int64
		var counts []render.StageErrors
		for _, st := range stages {
			if st.Dataflow == render.MaintainID(ix.Name) {
				got += st.Errors * own[st.Collection]
				counts = append(counts, st)
			}
		}
		overflows := false
		var imports []string
		for _, name := range slices.Sorted(maps.Keys(imported)) {
			n, ok, err := collErrors(name)
			if err != nil {
				return nil, err
			}
			overflows = overflows || !ok
			got += n * imported[name]
			imports = append(imports, fmt.Sprintf("%s: %d errors read %d times", name, n, imported[name]))
		}
		if !overflows && got != want {
			diffs = append(diffs, fmt.Sprintf("index %s: its maintaining dataflow's error counts %v, weighted by the reads of their collections, plus its imports' errors %v, sum to %d; the index's collection has %d errors", ix.Name, counts, imports, got, want))
		}
	}
	return diffs, nil
}

// maintainWeights returns, for the dataflow maintaining ix, how many times
// a row of each collection it builds reaches the index (own, by view
// name), and how many times each collection it imports through another
// index is read (imported, by name): plan.Maintain's cut, where a
// collection read inside the dataflow that has an index is imported, an
// input is read raw and a view is built.
func maintainWeights(ix *plan.ResolvedIndex) (own, imported map[string]int64) {
	own, imported = map[string]int64{}, map[string]int64{}
	if ix.Collection.View != nil {
		own[ix.Collection.Name] = 1
		weighReads(ix.Collection, 1, own, imported)
	}
	return own, imported
}

// Weights returns, for the top-level query ("") and every view, how many
// times a row of its error collection reaches the query's output: 1 for
// the query, and for a view the sum, over the collections that read it,
// of their weight times the number of from entries (or the one input of a
// simple view) that name it.
func Weights(r *plan.Resolved) map[string]int64 {
	w := map[string]int64{"": 1}
	for _, e := range r.Query.Entries {
		weigh(e.Collection, 1, w, nil)
	}
	return w
}

// weigh adds weight to w for c, read once by a collection of that weight,
// and for the views it reads, in turn, each time they are read. With cut
// set, a collection that has an index is not followed: its weight goes
// to cut (maintainWeights); an input has none.
func weigh(c *plan.Collection, weight int64, w, cut map[string]int64) {
	switch {
	case cut != nil && len(c.Indexes) > 0:
		cut[c.Name] += weight
	case c.View != nil:
		w[c.Name] += weight
		weighReads(c, weight, w, cut)
	}
}

// weighReads weighs what view c reads: each from entry of a query view,
// or the one collection of a simple view.
func weighReads(c *plan.Collection, weight int64, w, cut map[string]int64) {
	if c.Query == nil {
		weigh(c.Reads[0], weight, w, cut)
		return
	}
	for _, e := range c.Query.Entries {
		weigh(e.Collection, weight, w, cut)
	}
}

// CheckParams returns a workload's parameters at its check size: every
// size parameter divided by 10 (at least 1), the others at their first
// default.
func CheckParams(w Workload) map[string]int64 {
	m := map[string]int64{}
	for _, p := range w.Params {
		v := p.Defaults[0]
		if !p.Runner && v >= 100 {
			v /= 10
		}
		m[p.Name] = v
	}
	return m
}
