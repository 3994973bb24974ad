package render

import (
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/internal/labelstest"
)

// TestRenderedReducesSetTheirStepsLabelsBack: when the dataflow labels
// every step, a rendered reduce's and distinct's work runs on its step's
// labels and sets them back after it (the rest of the step, its output's
// chunks, stays the operator's in a profile), not the worker's.
func TestRenderedReducesSetTheirStepsLabelsBack(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	t.Cleanup(func() { reduceStatsSeen = nil })
	for _, q := range []plan.Query{
		{From: []plan.From{{As: "p", Collection: "a"}}, Reduce: &plan.Reduce{GroupBy: []string{"p.g"}, Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}},
		{From: []plan.From{{As: "p", Collection: "a"}}, Distinct: true},
	} {
		r, err := plan.Resolve(&plan.Plan{Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "g"}}}, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]*reduce.Stats{}
		reduceStatsSeen = func(name string, s *reduce.Stats) { seen[name] = s }
		df := buildLabelledDirect(t, r, "a")
		if len(seen) == 0 {
			t.Fatal("no reduce operator was built")
		}
		for name, s := range seen {
			s.Do(func(context.Context) {})
			want := fmt.Sprintf(`{"dataflow":%q, "operator":%q, "runtime":"solo", "worker":"0"}`, df.ID(), name)
			if got := labelstest.Own(t); got != want {
				t.Errorf("%s: after the reduce's work the step runs under %s, want %s", name, got, want)
			}
		}
		df.Drop()
	}
}

// TestArrangementsAreNamedByWhatTheyArrange: a direct query's several
// arrangements each name, in their operators (their steps' operator=
// labels), the collection and key they arrange, so that a profile tells
// them apart; every "arrange oks" was one operator= before.
func TestArrangementsAreNamedByWhatTheyArrange(t *testing.T) {
	r, err := plan.Resolve(&plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "g"}}, {Name: "b", Columns: []string{"k", "x"}}, {Name: "c", Columns: []string{"x", "y"}}},
		Query: plan.Query{
			From:   []plan.From{{As: "p", Collection: "a"}, {As: "q", Collection: "b"}, {As: "s", Collection: "c"}},
			On:     [][]string{{"p.k", "q.k"}, {"q.x", "s.x"}},
			Reduce: &plan.Reduce{GroupBy: []string{"p.g"}, Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	df := buildLabelledDirect(t, r, "a", "b", "c")
	defer df.Drop()
	var got []string
	for _, op := range df.Operators() {
		if strings.HasPrefix(op, "arrange ") {
			got = append(got, op)
		}
	}
	want := []string{
		"arrange oks a(k)", "arrange overflows a(k)", "arrange errs a(k)",
		"arrange oks b(k)", "arrange overflows b(k)", "arrange errs b(k)",
		"arrange oks linear query stage 1(q.x)", "arrange overflows linear query stage 1(q.x)", "arrange errs linear query stage 1(q.x)",
		"arrange oks c(x)", "arrange overflows c(x)", "arrange errs c(x)",
		"arrange oks reduce query(p.g)", "arrange overflows reduce query(p.g)", "arrange errs reduce query(p.g)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the arrangements' operators are\n%q\nwant\n%q", got, want)
	}
}

// labelledEnv is the Env of a Solo runtime's worker 0 of 1 that labels
// every step (runtime=solo, worker=0), with the two-column inputs named
// declared.
func labelledEnv(t *testing.T, inputs ...string) *dataflow.Env {
	t.Helper()
	e := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail:       func(df string, err error) { t.Errorf("%s: %v", df, err) },
		Labels:     pprof.WithLabels(context.Background(), pprof.Labels("runtime", "solo", "worker", "0")),
		LabelSteps: true,
	}
	e.Inputs = dataflow.NewInputs(0, 1, e.Activate)
	for _, in := range inputs {
		if err := e.Inputs.Declare(in, 2); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// buildLabelledDirect builds r's direct, linear query on labelledEnv's
// worker, with the two-column inputs named.
func buildLabelledDirect(t *testing.T, r *plan.Resolved, inputs ...string) *dataflow.Dataflow {
	t.Helper()
	desc, err := QueryDesc(r, Options{Mode: Direct, Join: plan.Linear, Metrics: &Metrics{}}, NewOutput(1, false))
	if err != nil {
		t.Fatal(err)
	}
	df, err := dataflow.Build(labelledEnv(t, inputs...), desc, 1)
	if err != nil {
		t.Fatal(err)
	}
	return df
}
