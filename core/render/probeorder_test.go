package render_test

import (
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
)

// TestOutputProbesStepAfterItsCapturesAndCounters is N4's order: a
// worker steps a dataflow's operators in construction order, and a
// reader on another goroutine that saw the output's probe pass a time
// reads the captures and counts at once. Were a probe stepped before a
// capture or counter of the same stream, the probe would announce a
// time the capture had not yet taken in that pass. No run shows it
// (the reader would have to read between two operators of one pass), so
// it is checked on the operators' order, in both modes and joins.
func TestOutputProbesStepAfterItsCapturesAndCounters(t *testing.T) {
	r := testPlan(t, 0)
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
			e := env(t, 0, 1, dataflow.NewHub(1))
			for _, c := range r.Inputs {
				if err := e.Inputs.Declare(c.Name, len(c.Columns)); err != nil {
					t.Fatal(err)
				}
			}
			opts := render.Options{Mode: mode, Join: join}
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
			desc, err := render.QueryDesc(r, opts, render.NewOutput(1, true))
			if err != nil {
				t.Fatal(err)
			}
			q, err := dataflow.Build(e, desc, 100)
			if err != nil {
				t.Fatal(err)
			}
			ops := q.Operators()
			first := slices.Index(ops, "probe")
			if first < 0 {
				t.Fatalf("%v/%v: no probe among %q", mode, join, ops)
			}
			for i, name := range ops {
				if (name == "capture" || name == "count") && i > first {
					t.Errorf("%v/%v: %s at %d after the probe at %d: %q", mode, join, name, i, first, ops)
				}
			}
			if n := len(ops) - first; n != 2 {
				t.Errorf("%v/%v: %d operators from the first probe on, want the two probes: %q", mode, join, n, ops)
			}
			q.Drop()
			for _, d := range slices.Backward(dfs) {
				d.Drop()
			}
		}
	}
}
