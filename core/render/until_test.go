package render_test

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
)

// TestOutputCountsLeaveOutTimesAtOrAfterUntil is N6's last clause: a query
// with until {2}, fed at times 0 to 3, counts in Rows and Errors only what
// its operators emit before 2, which is the reference's answer at time 1,
// although its inputs (and the imports' presented times) go on past it.
// Every other test's query has no until, so counts that summed every
// time passed them all.
func TestOutputCountsLeaveOutTimesAtOrAfterUntil(t *testing.T) {
	u := func(tm uint64, d int64, row ...int64) reference.Update {
		return reference.Update{Time: tm, Diff: d, Row: row}
	}
	in := reference.Inputs{
		"a": {u(0, 1, 1, 5), u(0, 1, 2, 0), u(1, 1, 3, 7), u(2, 1, 4, 0), u(2, 1, 5, 1), u(3, -1, 1, 5), u(3, 1, 6, 0)},
		"b": {u(0, 1, 1, 1), u(0, 1, 2, 1), u(0, 1, 3, 1), u(0, 1, 4, 1), u(0, 1, 5, 1), u(1, 1, 6, 1), u(2, 1, 1, 2)},
	}
	r := cancelPlan(t, 0)
	r.Plan.HasUntil, r.Plan.Until = true, 2
	last, err := reference.Eval(r, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows, errs := diffSums(last)
	if rows == 0 || errs == 0 {
		t.Fatalf("time 1 should have rows and errors: %s", last)
	}
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("%v/%v/workers=%d", mode, join, workers)
				_, _, out, _ := run(t, r, in, 4, workers, render.Options{Mode: mode, Join: join})
				if out.Rows() != rows || out.Errors() != errs {
					t.Errorf("%s: Rows %d, Errors %d; the output before until has %d rows, %d errors", name, out.Rows(), out.Errors(), rows, errs)
				}
			}
		}
	}
}
