package workloads

import (
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/workloads/spec"
)

// referenceInputs converts loaded tables to the reference evaluator's
// inputs and returns the last time any update is at.
func referenceInputs(s *spec.Spec, tables []*spec.Table) (reference.Inputs, uint64) {
	in := reference.Inputs{}
	var last uint64
	for i, t := range tables {
		ups := make([]reference.Update, t.Len())
		for j := range ups {
			ups[j] = reference.Update{Time: t.Times[j], Diff: t.Diffs[j], Row: slices.Clone(t.Row(j))}
			last = max(last, t.Times[j])
		}
		in[s.Inputs[i].Name] = ups
	}
	return in, last
}

// TestExamplesShape evaluates every built-in benchmark at its default size
// with the reference evaluator at its last input time and checks that it
// shows what its workload is for: joins that produce rows, a group per
// key, errors exactly where the errors workload puts them, a one-to-one
// join of dd's size.
func TestExamplesShape(t *testing.T) {
	for _, w := range Registry() {
		for _, b := range w.Benches {
			t.Run(b.Base, func(t *testing.T) {
				var params map[string]int64
				if w.Name == "dd" {
					params = map[string]int64{"rows": 2000} // the naive evaluator is slow at 1e5
				}
				s, err := b.Spec(params)
				if err != nil {
					t.Fatal(err)
				}
				tables, err := Load(s, 0)
				if err != nil {
					t.Fatal(err)
				}
				in, last := referenceInputs(s, tables)
				at := max(last, s.AsOf)
				if s.HasUntil {
					at = s.Until - 1
				}
				if b.Base == "DDRounds" {
					at = s.AsOf // the trace before the rounds; the rounds add 100 × 1000
				}
				res, err := reference.Eval(s.Plan, in, at)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) == 0 || res.Overflow {
					t.Fatalf("%s at %d: %d rows, overflow %v", b.File, at, len(res.Rows), res.Overflow)
				}
				if w.Name == "errors" {
					if len(res.Errors) == 0 || res.Errors[0].Message != "division by zero" || res.Errors[0].Diff <= 0 {
						t.Errorf("errors workload: errors %v, want division by zero", res.Errors)
					}
				} else if len(res.Errors) != 0 {
					t.Errorf("%s: unexpected errors %v", b.File, res.Errors)
				}
				switch b.Base {
				case "Groupby":
					if len(res.Rows) != 100 {
						t.Errorf("groupby: %d groups, want 100", len(res.Rows))
					}
				case "DDJoin":
					if len(res.Rows) != 2000 {
						t.Errorf("dd join: %d rows, want 2000 (one to one)", len(res.Rows))
					}
				case "Distinct":
					for _, r := range res.Rows {
						if r.Diff != 1 {
							t.Fatalf("distinct row %v with count %d", r.Values, r.Diff)
						}
					}
				}
				t.Logf("%s at time %d: %d rows, errors %v", b.File, at, len(res.Rows), res.Errors)
			})
		}
	}
}
