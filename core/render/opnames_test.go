package render_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads"
)

// readmeOperatorLabels returns the operator= values the README's table
// lists (its first column's backquoted entries, header `operator=`), each
// as written and as a pattern: NAME, FIELD and WHAT stand for any text, N
// for a number.
func readmeOperatorLabels(t *testing.T) (entries []string, patterns []*regexp.Regexp) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n| `operator=` |")
	if !ok {
		t.Fatal("README.md: no table headed | `operator=` |")
	}
	placeholder := regexp.MustCompile(`\b(NAME|FIELD|WHAT|N)\b`)
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			entries = append(entries, m[1])
			re := placeholder.ReplaceAllStringFunc(regexp.QuoteMeta(m[1]), func(p string) string {
				if p == "N" {
					return `[0-9]+`
				}
				return `.+`
			})
			patterns = append(patterns, regexp.MustCompile(`^`+re+`$`))
		}
	}
	if len(entries) == 0 {
		t.Fatal("README.md: the operator= table lists nothing")
	}
	return entries, patterns
}

// operatorLabels returns the operator= labels of the dataflows r builds:
// every index's dataflow (imported) and the query's, in both modes and
// joins, on one worker and of two.
func operatorLabels(t *testing.T, r *plan.Resolved, seen map[string]bool) {
	t.Helper()
	for _, peers := range []int{1, 2} {
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
				e := env(t, 0, peers, dataflow.NewHub(peers))
				for _, c := range r.Inputs {
					if err := e.Inputs.Declare(c.Name, len(c.Columns)); err != nil {
						t.Fatal(err)
					}
				}
				opts := render.Options{Mode: mode, Join: join, Metrics: &render.Metrics{}}
				var dfs []*dataflow.Dataflow
				if mode == render.Imported {
					for i, ix := range render.IndexOrder(r) {
						d, err := dataflow.Build(e, render.IndexDesc(r, ix, opts), uint64(i+1))
						if err != nil {
							t.Fatal(err)
						}
						dfs = append(dfs, d)
					}
				}
				// A join some arrangement of which no index serves runs
				// direct only (render.ErrMissingIndex).
				if desc, err := render.QueryDesc(r, opts, render.NewOutput(peers, true)); err == nil {
					q, err := dataflow.Build(e, desc, 100)
					if err != nil {
						t.Fatal(err)
					}
					dfs = append(dfs, q)
				}
				for _, d := range slices.Backward(dfs) {
					for _, l := range d.OperatorLabels() {
						seen[l] = true
					}
					d.Drop()
				}
			}
		}
	}
}

// TestOperatorLabelsAreInTheREADME checks that every operator= label the
// dataflows of the built-in workloads (and of a plan with what they do
// not use: a threshold, a reduce of expressions, a query view joined)
// carry is one the README's table lists, and that each entry of the table
// is met, but the worker's own and the dd limit's, which no dataflow
// carries.
func TestOperatorLabelsAreInTheREADME(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range workloads.Registry() {
		for i := range w.Benches {
			s, err := w.Benches[i].Spec(nil)
			if err != nil {
				t.Fatal(err)
			}
			operatorLabels(t, s.Plan, seen)
		}
	}
	operatorLabels(t, testPlan(t, 0), seen)
	more, err := plan.Resolve(&plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}, {Name: "b", Columns: []string{"k", "y"}}},
		Views: []plan.View{{Name: "j", Query: &plan.Query{
			From: []plan.From{{As: "p", Collection: "a"}, {As: "q", Collection: "b"}}, On: [][]string{{"p.k", "q.k"}},
			Reduce: &plan.Reduce{GroupBy: []string{"p.k"}, Aggregates: []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.x * q.y"}}},
		}}},
		Indexes: []plan.Index{{Name: "a_by_k", On: "a", Key: []string{"k"}}, {Name: "b_by_k", On: "b", Key: []string{"k"}}, {Name: "j_by_k", On: "j", Key: []string{"p_k"}}},
		Query:   plan.Query{From: []plan.From{{As: "v", Collection: "j"}}, Project: []string{"v.s"}, Threshold: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	operatorLabels(t, more, seen)
	entries, patterns := readmeOperatorLabels(t)
	met := make([]bool, len(entries))
	var labels []string
	for l := range seen {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	for _, l := range labels {
		found := false
		for i, re := range patterns {
			if re.MatchString(l) {
				met[i], found = true, true
			}
		}
		if !found {
			t.Errorf("operator=%q is not in the README's table of operator= values", l)
		}
	}
	for i, e := range entries {
		if !met[i] && !slices.Contains([]string{"(commands)", "(maintain)", "(limit)"}, e) {
			t.Errorf("the README's operator=%q labels no operator of the dataflows built", e)
		}
	}
}
