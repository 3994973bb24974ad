package render_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/core/spine"
)

// tb is what run and matchReference use of a test: a *testing.T or a
// *rapid.T, whose failures rapid shrinks.
type tb interface {
	Fatal(args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// env is worker `worker` of peers without a runtime, its exchanges
// connected through hub: dataflows are stepped by hand.
func env(t tb, worker, peers int, hub *dataflow.Hub) *dataflow.Env {
	var errs []error
	e := &dataflow.Env{
		Worker: worker, Peers: peers, Manager: dataflow.NewIndexManager(), Hub: hub,
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { errs = append(errs, fmt.Errorf("%s: %w", df, err)) },
	}
	e.Inputs = dataflow.NewInputs(worker, peers, e.Activate)
	t.Cleanup(func() {
		for _, err := range errs {
			t.Errorf("operator error: %v", err)
		}
	})
	return e
}

// testPlan: a simple view that divides by a column that can be 0, a
// query view joining it with an input, and a three-way query over the
// view, an input and the query view, with a reduce.
func testPlan(t *testing.T, asOf uint64) *plan.Resolved {
	p := &plan.Plan{
		AsOf: asOf,
		Inputs: []plan.Input{
			{Name: "a", Columns: []string{"k", "x"}},
			{Name: "b", Columns: []string{"k", "y"}},
		},
		Views: []plan.View{
			{Name: "va", Input: "a", Maps: []plan.Map{{Name: "q", Expr: "12 / x"}}},
			{Name: "vb", Query: &plan.Query{
				From: []plan.From{{As: "p", Collection: "va"}, {As: "r", Collection: "b"}},
				On:   [][]string{{"p.k", "r.k"}},
				Maps: []plan.Map{{Name: "s", Expr: "p.q + r.y"}},
				// project p.k and s
				Project: []string{"p.k", "s"},
			}},
		},
		Indexes: []plan.Index{
			{Name: "va_k", On: "va", Key: []string{"k"}},
			{Name: "b_k", On: "b", Key: []string{"k"}},
			{Name: "vb_k", On: "vb", Key: []string{"p_k"}},
		},
		Query: plan.Query{
			From:    []plan.From{{As: "u", Collection: "va"}, {As: "w", Collection: "b"}, {As: "z", Collection: "vb"}},
			On:      [][]string{{"u.k", "w.k", "z.p_k"}},
			Maps:    []plan.Map{{Name: "m", Expr: "z.s / (w.y - 2)"}},
			Project: []string{"u.k", "m"},
			Reduce: &plan.Reduce{GroupBy: []string{"u.k"}, Aggregates: []plan.Aggregate{
				{Name: "n", Fn: plan.Count}, {Name: "t", Fn: plan.Sum, Expr: "m"}, {Name: "lo", Fn: plan.Min, Expr: "m"},
			}},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// updates returns random updates of a and b over times 0..times-1, with
// retractions of earlier rows.
func updates(seed uint64, times int) reference.Inputs {
	rng := rand.New(rand.NewPCG(seed, 7))
	in := reference.Inputs{}
	for _, name := range []string{"a", "b"} {
		var live [][]int64
		for t := range times {
			for range 6 {
				if len(live) > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(len(live))
					in[name] = append(in[name], reference.Update{Time: uint64(t), Diff: -1, Row: live[i]})
					live = append(live[:i], live[i+1:]...)
					continue
				}
				row := []int64{rng.Int64N(4), rng.Int64N(5)}
				live = append(live, row)
				in[name] = append(in[name], reference.Update{Time: uint64(t), Diff: 1, Row: row})
			}
		}
	}
	return in
}

// run renders r on `workers` workers stepped in turn by one goroutine
// (imported: the index dataflows and the query on the same workers, the
// query importing the local indexes), feeds the updates time by time, and
// returns the output at each time and the output itself.
// run renders r (indexes first when imported), feeds it in up to times,
// and returns the query's output read at every time from as_of on, its
// metrics, the output, and how many arrangement traces worker 0 tracked
// once the query was built (its indexes' and the query's own).
func run(t tb, r *plan.Resolved, in reference.Inputs, times, workers int, opts render.Options) ([]*reference.Result, *render.Metrics, *render.Output, int) {
	return runFrom(t, r, in, 0, times, workers, opts)
}

// runFrom is run over the times base..base+times-1: the inputs' times
// and the plan's as_of are base or later, and each input is advanced
// past a time as frontier.StepForward does, to {} past the largest time.
func runFrom(t tb, r *plan.Resolved, in reference.Inputs, base uint64, times, workers int, opts render.Options) ([]*reference.Result, *render.Metrics, *render.Output, int) {
	hub := dataflow.NewHub(workers)
	var envs []*dataflow.Env
	for w := range workers {
		e := env(t, w, workers, hub)
		for _, c := range r.Inputs {
			if err := e.Inputs.Declare(c.Name, len(c.Columns)); err != nil {
				t.Fatal(err)
			}
		}
		envs = append(envs, e)
	}
	opts.Metrics = &render.Metrics{}
	var dfs []*dataflow.Dataflow
	var inc uint64
	build := func(desc dataflow.Desc) {
		inc++
		for _, e := range envs {
			d, err := dataflow.Build(e, desc, inc)
			if err != nil {
				t.Fatal(err)
			}
			dfs = append(dfs, d)
		}
	}
	if opts.Mode == render.Imported {
		for _, ix := range render.IndexOrder(r) {
			build(render.IndexDesc(r, ix, opts))
		}
	}
	// step runs every worker's dataflows until they rest. Dataflow.Step
	// reports only whether its last pass moved, not whether a peer's
	// exchange has since given it more: with several workers the rounds
	// repeat enough times for a message to cross every exchange of the
	// deepest plan here.
	step := func() {
		rounds := 1
		if workers > 1 {
			rounds = 32
		}
		for range rounds {
			for range 100 {
				moved := false
				for _, d := range dfs {
					if d.Step() {
						moved = true
					}
				}
				if !moved {
					break
				}
			}
		}
	}
	send := func(tm int) {
		for _, c := range r.Inputs {
			ch := dataflow.NewChunk(len(c.Columns), 0)
			for _, u := range in[c.Name] {
				if u.Time == base+uint64(tm) {
					ch.Push(u.Row, u.Time, u.Diff)
				}
			}
			for _, e := range envs {
				if ch.Len() > 0 {
					if err := e.Inputs.Send(c.Name, ch); err != nil {
						t.Fatal(err)
					}
				}
				if err := e.Inputs.Advance(c.Name, frontier.At(base+uint64(tm)).StepForward()); err != nil {
					t.Fatal(err)
				}
			}
		}
		step()
	}
	asOf := int(r.Plan.AsOf - base)
	for tm := 0; tm <= asOf; tm++ {
		send(tm)
	}
	out := render.NewOutput(workers, true)
	desc, err := render.QueryDesc(r, opts, out)
	if err != nil {
		t.Fatal(err)
	}
	build(desc)
	step()
	tracked := envs[0].Manager.Tracked()
	for tm := asOf + 1; tm < times; tm++ {
		send(tm)
	}
	for _, e := range envs {
		for _, c := range r.Inputs {
			if err := e.Inputs.Advance(c.Name, frontier.Empty()); err != nil {
				t.Fatal(err)
			}
		}
	}
	step()
	var res []*reference.Result
	for tm := asOf; tm < times; tm++ {
		got := &reference.Result{Time: base + uint64(tm), Columns: r.Query.Output}
		rows, over := out.Oks.Accumulate(base + uint64(tm))
		for _, rd := range rows {
			got.Rows = append(got.Rows, reference.Row{Values: rd.Row, Diff: rd.Diff})
		}
		msgs := map[int64]string{1: reference.MsgDivisionByZero, 2: reference.MsgOverflow, 3: reference.MsgNegativeMultiplicity}
		codes, errOver := out.Errs.Accumulate(base + uint64(tm))
		for _, rd := range codes {
			got.Errors = append(got.Errors, reference.Error{Message: msgs[rd.Row[0]], Diff: rd.Diff})
		}
		// A count that leaves int64 as the capture consolidates is a
		// numeric overflow, one per row, as the workloads package reads
		// the output for eval and check (docs/semantics.md §1.1).
		if n := over + errOver; n > 0 {
			got.Errors = append(got.Errors, reference.Error{Message: reference.MsgOverflow, Diff: int64(n)})
		}
		res = append(res, got)
	}
	for i := len(dfs) - 1; i >= 0; i-- {
		dfs[i].Drop()
	}
	for w, e := range envs {
		if n := e.Manager.Tracked(); n != 0 {
			t.Errorf("worker %d: %d traces still tracked after every dataflow was dropped", w, n)
		}
	}
	if n := hub.Len(); n != 0 {
		t.Errorf("%d exchanges still live after every dataflow was dropped", n)
	}
	return res, opts.Metrics, out, tracked
}

// matchReference reports every time of got whose output differs from the
// reference evaluator's on the same inputs.
func matchReference(t tb, name string, r *plan.Resolved, in reference.Inputs, got []*reference.Result) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper() // a *testing.T's failures name the caller's line; rapid's T cannot
	}
	matchWants(t, name, got, newWants(r, in, 0).at)
}

// matchWants compares got, answer by answer, with what want gives for its
// time (nil: the case was skipped).
func matchWants(t tb, name string, got []*reference.Result, want func(t tb, at uint64) *reference.Result) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	for _, g := range got {
		w := want(t, g.Time)
		if w == nil {
			return
		}
		if d := reference.Compare(w, g); d != nil {
			t.Errorf("%s: time %d: %s", name, g.Time, strings.Join(d, "; "))
		}
	}
}

// wants holds the reference's answers of one plan and inputs, each
// evaluated once, whatever the number of configurations compared with it.
type wants struct {
	r       *plan.Resolved
	in      reference.Inputs
	maxRows int64 // reference.EvalWithin's bound; 0: none
	byTime  map[uint64]*reference.Result
}

func newWants(r *plan.Resolved, in reference.Inputs, maxRows int64) *wants {
	return &wants{r: r, in: in, maxRows: maxRows, byTime: map[uint64]*reference.Result{}}
}

// at returns the reference's answer at time at. One that would form more
// joined rows than the bound skips a drawn case (rapid's t) and returns
// nil; a test written by hand fails.
func (w *wants) at(t tb, at uint64) *reference.Result {
	if res, ok := w.byTime[at]; ok {
		return res
	}
	res, err := reference.EvalWithin(w.r, w.in, at, w.maxRows)
	if rt, ok := t.(*rapid.T); ok && errors.Is(err, reference.ErrTooLarge) {
		rt.Skipf("the reference would take too long: %v", err)
		return nil
	}
	if err != nil {
		t.Fatal(err)
		return nil
	}
	w.byTime[at] = res
	return res
}

// drawnMaxRows bounds the reference's work for plans drawn at random
// (matchEveryConfig): a drawn join of joins can ask the reference's nested
// loops for hundreds of millions of rows (tens of seconds an answer, many
// minutes under the race detector) where a typical case forms a few
// thousand. Such a case is skipped, rarely enough that rapid's count of
// valid cases is not at risk.
const drawnMaxRows = 200_000

// TestQueryEqualsReference renders the test plan in both modes and both
// join strategies on 1, 2 and 4 workers and compares the output with the
// reference at every time from as_of on (N1–N5): delta == linear ==
// reference, answers and error multiplicities, whatever the workers.
func TestQueryEqualsReference(t *testing.T) {
	const times = 6
	for _, asOf := range []uint64{0, 2} {
		r := testPlan(t, asOf)
		for seed := range uint64(4) {
			in := updates(seed, times)
			for _, mode := range []render.Mode{render.Imported, render.Direct} {
				for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
					for _, workers := range []int{1, 2, 4} {
						name := fmt.Sprintf("as_of=%d/seed=%d/%v/%v/workers=%d", asOf, seed, mode, join, workers)
						got, metrics, _, _ := run(t, r, in, times, workers, render.Options{Mode: mode, Join: join})
						matchReference(t, name, r, in, got)
						if mode == render.Direct {
							checkWeights(t, name, r, metrics, got[len(got)-1])
						}
					}
				}
			}
		}
	}
}

// checkWeights is N1 in a direct dataflow: each operator's own error count
// times the number of ways its collection reaches the output sums to the
// output's error multiplicity at the last time.
func checkWeights(t *testing.T, name string, r *plan.Resolved, m *render.Metrics, last *reference.Result) {
	weight := map[string]int64{"": 1, "va": 2, "vb": 1} // va: from u and through vb's p
	var want int64
	for _, st := range m.Errors() {
		w, ok := weight[st.Collection]
		if !ok {
			t.Errorf("%s: operator %s counts for unknown collection %q", name, st.Operator, st.Collection)
		}
		want += st.Errors * w
	}
	var got int64
	for _, e := range last.Errors {
		got += e.Diff
	}
	if want != got {
		t.Errorf("%s: weighted operator error counts %d (%v), output errors %d", name, want, m.Errors(), got)
	}
}

// TestImportedMissingIndex: an imported query whose strategy reads an
// arrangement no index serves is refused, naming it.
func TestImportedMissingIndex(t *testing.T) {
	r := testPlan(t, 0)
	p := *r.Plan
	p.Indexes = p.Indexes[:2] // no index on vb
	r2, err := plan.Resolve(&p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = render.QueryDesc(r2, render.Options{Mode: render.Imported, Join: plan.Delta}, render.NewOutput(1, false))
	if !errors.Is(err, render.ErrMissingIndex) || !strings.Contains(err.Error(), "vb(") {
		t.Fatalf("got %v, want ErrMissingIndex naming vb", err)
	}
	if _, err := render.QueryDesc(r2, render.Options{Mode: render.Direct, Join: plan.Delta}, render.NewOutput(1, false)); err != nil {
		t.Fatalf("direct: %v", err)
	}
}

// TestQueryDescRefusesWhatNoPlanOrOptionMakes: a nil plan or one
// plan.Resolve did not make panicked, no Output panicked in every
// worker's Build, and a Mode or Join of no such value was read as
// Imported or Delta: each is ErrUsage, naming what is wrong, and a good
// call still succeeds.
func TestQueryDescRefusesWhatNoPlanOrOptionMakes(t *testing.T) {
	r := testPlan(t, 0)
	out := render.NewOutput(1, false)
	for _, tc := range []struct {
		name string
		r    *plan.Resolved
		opts render.Options
		out  *render.Output
		want string
	}{
		{"nil plan", nil, render.Options{Mode: render.Direct}, out, "no resolved plan"},
		{"zero plan", &plan.Resolved{}, render.Options{Mode: render.Direct}, out, "no resolved plan"},
		{"no output", r, render.Options{Mode: render.Direct}, nil, "no Output"},
		{"zero output", r, render.Options{Mode: render.Direct}, &render.Output{}, "no Output"},
		{"mode", r, render.Options{Mode: render.Direct + 1}, out, "Options.Mode 2"},
		{"join", r, render.Options{Mode: render.Direct, Join: plan.Delta + 1}, out, "JoinKind(2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			_, err := render.QueryDesc(tc.r, tc.opts, tc.out)
			if !errors.Is(err, render.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("QueryDesc: %v; want ErrUsage naming %q", err, tc.want)
			}
		})
	}
	if _, err := render.QueryDesc(r, render.Options{Mode: render.Direct, Join: plan.Delta}, out); err != nil {
		t.Fatalf("a good call: %v", err)
	}
}

// The zero Output (one built as a literal, with captures or not) never
// passes a time, and a wait on it is ErrUsage at once, where Passed and
// WaitPassed dereferenced its nil probes; its counts read 0.
func TestTheZeroOutputNeverPasses(t *testing.T) {
	for _, o := range []*render.Output{{}, {Oks: dataflow.NewCapture(1), Errs: dataflow.NewCapture(1)}} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			if o.Passed(0) {
				t.Error("the zero Output passed 0")
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the wait answers before it reads ctx
			if err := o.WaitPassed(ctx, 0); !errors.Is(err, render.ErrUsage) || !strings.Contains(err.Error(), "zero Output") {
				t.Errorf("WaitPassed of the zero Output: %v, want ErrUsage naming it", err)
			}
			if o.Rows() != 0 || o.Errors() != 0 {
				t.Errorf("the zero Output counts %d rows and %d errors", o.Rows(), o.Errors())
			}
		}()
	}
}

// diffSums returns the sums of res's row diffs and error diffs: what an
// Output's Rows and Errors count at res's time.
func diffSums(res *reference.Result) (rows, errs int64) {
	for _, x := range res.Rows {
		rows += x.Diff
	}
	for _, x := range res.Errors {
		errs += x.Diff
	}
	return rows, errs
}

// cancelPlan joins a(k, x) with b(k, y) and outputs (0 / x, y): rows of
// several matches coincide (their keys differ, so on several workers they
// come from different workers) and x = 0 is a division by zero.
func cancelPlan(t *testing.T, asOf uint64) *plan.Resolved {
	p := &plan.Plan{
		AsOf: asOf,
		Inputs: []plan.Input{
			{Name: "a", Columns: []string{"k", "x"}},
			{Name: "b", Columns: []string{"k", "y"}},
		},
		Indexes: []plan.Index{
			{Name: "a_k", On: "a", Key: []string{"k"}},
			{Name: "b_k", On: "b", Key: []string{"k"}},
		},
		Query: plan.Query{
			From:    []plan.From{{As: "p", Collection: "a"}, {As: "r", Collection: "b"}},
			On:      [][]string{{"p.k", "r.k"}},
			Maps:    []plan.Map{{Name: "q", Expr: "0 / p.x"}},
			Project: []string{"q", "r.y"},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOutputCancels is N6: the output is captured and counted as the join
// emits it, unconsolidated — the same row from matches of several keys,
// a +1 and a -1 of one row at one time (from two keys, on two workers
// when there are two), rows and errors inserted at one time and retracted
// at a later one — and still reads exactly the reference's answer at every
// time, imported == direct == reference in both joins on one and two
// workers, with Rows and Errors the output's size at the last time.
func TestOutputCancels(t *testing.T) {
	u := func(tm uint64, d int64, row ...int64) reference.Update {
		return reference.Update{Time: tm, Diff: d, Row: row}
	}
	in := reference.Inputs{
		"a": {
			u(0, 1, 1, 5), u(0, 1, 2, 6), u(0, 1, 3, 0), u(0, 1, 4, 7), u(0, 1, 5, 0),
			// (0, 1) from key 6 in, from key 1 out; an error from key 7
			// in, from key 3 out.
			u(1, 1, 6, 8), u(1, -1, 1, 5), u(1, 1, 7, 0), u(1, -1, 3, 0),
			// Across times: every row and error of keys 2, 4 and 5 out.
			u(2, -1, 2, 6), u(2, -1, 4, 7), u(2, -1, 5, 0),
			u(3, 1, 1, 9), u(3, 1, 1, 9), u(3, 1, 8, 2),
		},
		"b": {
			u(0, 1, 1, 1), u(0, 1, 2, 1), u(0, 1, 3, 1), u(0, 1, 4, 1), u(0, 1, 5, 1), u(0, 1, 6, 1), u(0, 1, 7, 1),
			u(0, 1, 4, 2), u(0, 1, 8, 1),
			u(3, -1, 6, 1), u(3, 1, 6, 1),
		},
	}
	const times = 4
	for _, asOf := range []uint64{0, 1} {
		r := cancelPlan(t, asOf)
		last, err := reference.Eval(r, in, times-1)
		if err != nil {
			t.Fatal(err)
		}
		rows, errs := diffSums(last)
		if rows == 0 || errs == 0 {
			t.Fatalf("the last time should have rows and errors: %s", last)
		}
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
				for _, workers := range []int{1, 2} {
					name := fmt.Sprintf("as_of=%d/%v/%v/workers=%d", asOf, mode, join, workers)
					got, _, out, _ := run(t, r, in, times, workers, render.Options{Mode: mode, Join: join})
					matchReference(t, name, r, in, got)
					for tm := asOf; tm < times; tm++ {
						for _, cp := range []*dataflow.Capture{out.Oks, out.Errs} {
							if err := canonical(cp.At(tm)); err != nil {
								t.Errorf("%s: time %d: %v", name, tm, err)
							}
						}
					}
					if out.Rows() != rows || out.Errors() != errs {
						t.Errorf("%s: Rows %d, Errors %d; the output at the last time has %d rows, %d errors", name, out.Rows(), out.Errors(), rows, errs)
					}
				}
			}
		}
	}
}

// canonical reports rows that are not consolidated: each row once, with a
// non-zero count, in ascending order column by column.
func canonical(rows []dataflow.RowDiff) error {
	for i, r := range rows {
		if r.Diff == 0 {
			return fmt.Errorf("row %v with count 0", r.Row)
		}
		if i > 0 && slices.Compare(rows[i-1].Row, r.Row) >= 0 {
			return fmt.Errorf("row %v after %v: not consolidated", r.Row, rows[i-1].Row)
		}
	}
	return nil
}

// TestOutputOverflowsOnRead: two matches emit one output row with counts
// of 2^62 each. Nothing upstream overflows (every product fits); the
// output's consolidated count, 2^63, does not, and the capture reports it
// instead of wrapping (docs/semantics.md §1.1), in every mode, join and
// worker count.
func TestOutputOverflowsOnRead(t *testing.T) {
	const big = 1 << 62
	in := reference.Inputs{
		"a": {{Time: 0, Diff: big, Row: []int64{1, 5}}, {Time: 0, Diff: big, Row: []int64{2, 6}}},
		"b": {{Time: 0, Diff: 1, Row: []int64{1, 1}}, {Time: 0, Diff: 1, Row: []int64{2, 1}}},
	}
	r := cancelPlan(t, 0)
	want, err := reference.Eval(r, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !want.Overflow {
		t.Fatalf("the reference should overflow: %s", want)
	}
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
			for _, workers := range []int{1, 2} {
				_, _, out, _ := run(t, r, in, 1, workers, render.Options{Mode: mode, Join: join})
				rows, over := out.Oks.Accumulate(0)
				if len(rows) != 0 || over != 1 {
					t.Errorf("%v/%v/workers=%d: rows %v, %d overflows; want none and 1", mode, join, workers, rows, over)
				}
			}
		}
	}
}

// reducePlan reads a(k, g, x), indexed by k, and reduces it by groupBy
// with aggs.
func reducePlan(t *testing.T, asOf uint64, groupBy []string, aggs []plan.Aggregate) *plan.Resolved {
	p := &plan.Plan{
		AsOf:    asOf,
		Inputs:  []plan.Input{{Name: "a", Columns: []string{"k", "g", "x"}}},
		Indexes: []plan.Index{{Name: "a_k", On: "a", Key: []string{"k"}}},
		Query: plan.Query{
			From:   []plan.From{{As: "p", Collection: "a"}},
			Reduce: &plan.Reduce{GroupBy: groupBy, Aggregates: aggs},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReduceReadsItsIndex is N7: a reduce by the key of the arrangement
// its records flatten reads that arrangement (imported, the query arranges
// nothing; direct, only the input's arrangement) when its arguments are
// record columns outside the group, read in place; a reduce by any other
// group, or with a computed argument (one that errs, g = 20, included),
// arranges its records again. Every one equals the reference at every
// time, with retractions and a negative count, in both modes on one and
// two workers.
func TestReduceReadsItsIndex(t *testing.T) {
	u := func(tm uint64, d int64, row ...int64) reference.Update {
		return reference.Update{Time: tm, Diff: d, Row: row}
	}
	in := reference.Inputs{"a": {
		u(0, 1, 1, 10, 5), u(0, 1, 1, 20, 6), u(0, 1, 2, 10, 7), u(0, 2, 3, 30, 1),
		u(1, 1, 2, 20, 3), u(1, -1, 1, 10, 5), u(1, 1, 4, 10, 2),
		u(2, -1, 3, 30, 1), u(2, -1, 5, 40, 9), u(2, 1, 1, 20, 6),
		u(3, 1, 5, 40, 9), u(3, -1, 2, 10, 7),
	}}
	count := []plan.Aggregate{{Name: "n", Fn: plan.Count}}
	cases := []struct {
		name    string
		groupBy []string
		aggs    []plan.Aggregate
		// arrangement traces on worker 0, imported and direct: two for
		// the index (the index dataflow's, or the query's own arrangement
		// of its input), two more when the reduce arranges its records
		cost [2]int
	}{
		{"count by k", []string{"p.k"}, count, [2]int{2, 2}},
		{"count by g", []string{"p.g"}, count, [2]int{4, 4}},
		{"count by k, g", []string{"p.k", "p.g"}, count, [2]int{4, 4}},
		{"sum x by k", []string{"p.k"}, []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.x"}}, [2]int{2, 2}},
		{"min x, count by k", []string{"p.k"}, []plan.Aggregate{{Name: "m", Fn: plan.Min, Expr: "p.x"}, {Name: "n", Fn: plan.Count}}, [2]int{2, 2}},
		{"sum x*2 by k", []string{"p.k"}, []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.x * 2"}}, [2]int{4, 4}},
		{"max g, sum x by k", []string{"p.k"}, []plan.Aggregate{{Name: "m", Fn: plan.Max, Expr: "p.g"}, {Name: "s", Fn: plan.Sum, Expr: "p.x / (p.g - 20)"}}, [2]int{4, 4}},
		{"sum k by k", []string{"p.k"}, []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.k"}}, [2]int{4, 4}},
		{"sum x by g", []string{"p.g"}, []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.x"}}, [2]int{4, 4}},
	}
	const times = 4
	for _, c := range cases {
		for _, asOf := range []uint64{0, 1} {
			r := reducePlan(t, asOf, c.groupBy, c.aggs)
			for mi, mode := range []render.Mode{render.Imported, render.Direct} {
				for _, workers := range []int{1, 2} {
					name := fmt.Sprintf("%s/as_of=%d/%v/workers=%d", c.name, asOf, mode, workers)
					got, _, _, tracked := run(t, r, in, times, workers, render.Options{Mode: mode, Join: plan.Linear})
					matchReference(t, name, r, in, got)
					if tracked != c.cost[mi] {
						t.Errorf("%s: %d traces tracked, want %d", name, tracked, c.cost[mi])
					}
				}
			}
		}
	}
}

// TestCompoundedErrorCountOverflowsAtItsTime: a view's error, count 2^62,
// read by both entries of a self-joining query view is 2^63 there, out of
// int64, when that view's errs half is arranged (by its index, or by the
// query's join). The output must hold `numeric overflow` at that time
// (docs/spec.md "Expressions"); the errs half put it at its frontier, so at
// time 0 the output showed a saturated `division by zero` count and no
// overflow, in every mode, join and worker count.
func TestCompoundedErrorCountOverflowsAtItsTime(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}},
		Views: []plan.View{
			{Name: "v0", Input: "a", Maps: []plan.Map{{Name: "q", Expr: "10 / x"}}},
			{Name: "v1", Query: &plan.Query{
				From:    []plan.From{{As: "p", Collection: "v0"}, {As: "q", Collection: "v0"}},
				On:      [][]string{{"p.k", "q.k"}},
				Project: []string{"p.k", "p.x"}}},
		},
		Indexes: []plan.Index{{Name: "v0_k", On: "v0", Key: []string{"k"}}, {Name: "v1_k", On: "v1", Key: []string{"p_k"}},
			{Name: "a_k", On: "a", Key: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "r", Collection: "v1"}, {As: "s", Collection: "a"}},
			On: [][]string{{"r.p_k", "s.k"}}},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	in := reference.Inputs{"a": {
		{Time: 0, Diff: 1 << 62, Row: []int64{1, 0}},
		{Time: 0, Diff: 1, Row: []int64{2, 1}},
		{Time: 1, Diff: -(1 << 62), Row: []int64{1, 0}},
	}}
	if want, err := reference.Eval(r, in, 0); err != nil || !want.Overflow {
		t.Fatalf("reference at 0: %v %v: want an overflow", want, err)
	}
	matchEveryConfig(t, "", r, in, 2, spine.Options{}, 1, 2)
}

// TestRecordCountOutOfInt64ReachesTheOutput: two rows projected to one
// record whose count, -2^63 - 4, leaves int64 when the reduce, distinct or
// threshold arranges its records. The arrangement reports `numeric
// overflow` in its errs half; the operator forwarded the records' errors
// from before the arrangement instead, so the output held only `negative
// multiplicity` (reduce, distinct) or nothing (threshold), in every mode.
func TestRecordCountOutOfInt64ReachesTheOutput(t *testing.T) {
	in := reference.Inputs{"a": {
		{Time: 0, Diff: math.MinInt64, Row: []int64{1, 0}},
		{Time: 0, Diff: -4, Row: []int64{1, 1}},
		{Time: 0, Diff: 1, Row: []int64{2, 0}},
		{Time: 1, Diff: 5, Row: []int64{1, 1}},
	}}
	for _, tail := range []string{"reduce", "distinct", "threshold"} {
		q := plan.Query{From: []plan.From{{As: "p", Collection: "a"}}, Project: []string{"p.k"}}
		switch tail {
		case "reduce":
			q.Reduce = &plan.Reduce{Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}
		case "distinct":
			q.Distinct = true
		default:
			q.Threshold = true
		}
		r, err := plan.Resolve(&plan.Plan{
			Inputs:  []plan.Input{{Name: "a", Columns: []string{"k", "x"}}},
			Indexes: []plan.Index{{Name: "a_k", On: "a", Key: []string{"k"}}},
			Query:   q,
		})
		if err != nil {
			t.Fatal(err)
		}
		if want, err := reference.Eval(r, in, 0); err != nil || !want.Overflow {
			t.Fatalf("%s: reference at 0: %v %v: want an overflow", tail, want, err)
		}
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for _, workers := range []int{1, 2} {
				got, _, _, _ := run(t, r, in, 2, workers, render.Options{Mode: mode})
				matchReference(t, fmt.Sprintf("%s %v workers=%d", tail, mode, workers), r, in, got)
			}
		}
	}
}

// TestErrorCountOverflowsOnRead: a view's error at count MaxInt64, read by
// both entries of a cross product whose filter drops every joined row,
// is in the output twice: its accumulated count leaves int64 only as the
// capture consolidates, which run reads as a numeric overflow, as the
// workloads package does (docs/semantics.md §1.1). Read with At,
// the error was left out and the output showed none.
func TestErrorCountOverflowsOnRead(t *testing.T) {
	p := &plan.Plan{
		Inputs:  []plan.Input{{Name: "c", Columns: []string{"k", "x"}}},
		Views:   []plan.View{{Name: "v", Input: "c", Maps: []plan.Map{{Name: "m", Expr: "0 / x"}}}},
		Indexes: []plan.Index{{Name: "v_all", On: "v", Key: []string{}}},
		Query: plan.Query{
			From:    []plan.From{{As: "q", Collection: "v"}, {As: "r", Collection: "v"}},
			Filters: []string{"0"},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	in := reference.Inputs{"c": {{Time: 1, Diff: math.MaxInt64, Row: []int64{0, 0}}}}
	if want, err := reference.Eval(r, in, 1); err != nil || !want.Overflow {
		t.Fatalf("reference at 1: %v %v: want an overflow", want, err)
	}
	matchEveryConfig(t, "", r, in, 3, spine.Options{}, 1, 2)
}

// matchEveryConfig runs r over in for times times in both modes, both
// joins and on each number of workers given, the spines of operators'
// arrangements under sp, and matches each run's output with the reference
// at every time, each time's evaluated once and within drawnMaxRows (a case
// beyond it is skipped); name prefixes the configuration in failures.
func matchEveryConfig(t tb, name string, r *plan.Resolved, in reference.Inputs, times int, sp spine.Options, workerCounts ...int) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	want := newWants(r, in, drawnMaxRows)
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
			for _, workers := range workerCounts {
				got, _, _, _ := run(t, r, in, times, workers, render.Options{Mode: mode, Join: join, Spine: sp})
				matchWants(t, fmt.Sprintf("%s%v/%v/workers=%d", name, mode, join, workers), got, want.at)
			}
		}
	}
}

// TestJoinOfZeroColumnCollection joins a query view of no columns
// (project []) with an input, with itself and through a reduce view of
// it, under both strategies and index modes: an arrangement of no
// columns is one of arity 0 (docs/semantics.md §1), which every join
// reads as it reads any other, and the output equals the reference's.
func TestJoinOfZeroColumnCollection(t *testing.T) {
	z := plan.View{Name: "z", Query: &plan.Query{From: []plan.From{{As: "p", Collection: "a"}}, Filters: []string{"p.x != 1"}, Project: []string{}}}
	for _, tc := range []struct {
		name  string
		views []plan.View
		query plan.Query
	}{
		{"with an input", []plan.View{z}, plan.Query{From: []plan.From{{As: "p", Collection: "z"}, {As: "q", Collection: "b"}}}},
		{"with itself", []plan.View{z}, plan.Query{From: []plan.From{{As: "p", Collection: "z"}, {As: "q", Collection: "z"}, {As: "r", Collection: "b"}},
			Reduce: &plan.Reduce{GroupBy: []string{"r.k"}, Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}}},
		{"counted", []plan.View{z, {Name: "c", Query: &plan.Query{From: []plan.From{{As: "p", Collection: "z"}}, Reduce: &plan.Reduce{Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}}}},
			plan.Query{From: []plan.From{{As: "p", Collection: "c"}, {As: "q", Collection: "b"}, {As: "r", Collection: "z"}}, On: [][]string{{"p.n", "q.k"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{
				Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}, {Name: "b", Columns: []string{"k", "y"}}},
				Views:  tc.views, Query: tc.query,
			}
			r, err := plan.Resolve(p)
			if err != nil {
				t.Fatal(err)
			}
			// Every arrangement either strategy reads, as an index.
			linear, err := r.Missing(plan.Linear)
			if err != nil {
				t.Fatal(err)
			}
			delta, err := r.Missing(plan.Delta)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range append(linear, delta...) {
				key := a.Key
				if a.Any {
					key = []string{}
				}
				p.Indexes = append(p.Indexes, plan.Index{Name: fmt.Sprintf("i%d", i), On: a.Collection, Key: key})
			}
			if r, err = plan.Resolve(p); err != nil {
				t.Fatal(err)
			}
			matchEveryConfig(t, "", r, updates(3, 5), 5, spine.Options{}, 1, 2)
		})
	}
}

// TestModeOfNoSuchValueIsNamedAsSuch: Mode(7) printed "imported", so an
// error naming a bad mode (QueryDesc's, workloads' options) showed a good
// one; it prints Mode(7) now, as plan.JoinKind(7) does.
func TestModeOfNoSuchValueIsNamedAsSuch(t *testing.T) {
	for m, want := range map[render.Mode]string{render.Imported: "imported", render.Direct: "direct", 7: "Mode(7)", render.Direct + 1: "Mode(2)"} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q, want %q", uint8(m), got, want)
		}
	}
}

// TestIndexDescRefusesWhatNoPlanMakes: IndexDesc of a nil plan, of one
// plan.Resolve did not make, of a nil index or of another plan's index
// panicked (or built another plan's index); each now gives a Desc whose
// Build returns ErrUsage naming what is wrong, as QueryDesc refuses them.
func TestIndexDescRefusesWhatNoPlanMakes(t *testing.T) {
	r, other := testPlan(t, 0), testPlan(t, 0)
	if len(r.Indexes) == 0 {
		t.Fatal("the test plan has no index")
	}
	ix := r.Indexes[0]
	for _, tc := range []struct {
		name string
		r    *plan.Resolved
		ix   *plan.ResolvedIndex
		want string
	}{
		{"nil plan", nil, ix, "no resolved plan"},
		{"zero plan", &plan.Resolved{}, ix, "no resolved plan"},
		{"nil index", r, nil, "no index"},
		{"another plan's index", r, other.Indexes[0], "not one of the plan's indexes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			d := render.IndexDesc(tc.r, tc.ix, render.Options{})
			if d.Build == nil {
				t.Fatal("no Build")
			}
			if err := d.Build(nil); !errors.Is(err, render.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v; want ErrUsage naming %q", err, tc.want)
			}
		})
	}
	if d := render.IndexDesc(r, ix, render.Options{}); d.ID != "maintain "+ix.Name || len(d.Exports) != 1 {
		t.Errorf("a good call: %+v", d)
	}
}
