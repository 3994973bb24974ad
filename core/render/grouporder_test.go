package render_test

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
)

// TestReduceByTheIndexKeyInAnotherOrderArrangesAgain is N7's "in order":
// a reduce grouping by an index's key columns in another order has the
// same groups, but its output row is the group in its own order, and the
// index lays its keys out in the index's. It must arrange its records by
// the group, not read the index. TestReduceReadsItsIndex groups by a
// one-column key, so a render that read the index for any group with the
// key's column set passed it.
func TestReduceByTheIndexKeyInAnotherOrderArrangesAgain(t *testing.T) {
	u := func(tm uint64, d int64, row ...int64) reference.Update {
		return reference.Update{Time: tm, Diff: d, Row: row}
	}
	in := reference.Inputs{"a": {
		u(0, 1, 1, 10, 5), u(0, 1, 1, 20, 6), u(0, 1, 2, 10, 7), u(0, 2, 3, 30, 1),
		u(1, 1, 2, 20, 3), u(1, -1, 1, 10, 5), u(1, 1, 4, 10, 2),
		u(2, -1, 3, 30, 1), u(2, 1, 1, 20, 6),
	}}
	for _, groupBy := range [][]string{{"p.g", "p.k"}, {"p.k", "p.g"}} {
		r, err := plan.Resolve(&plan.Plan{
			Inputs:  []plan.Input{{Name: "a", Columns: []string{"k", "g", "x"}}},
			Indexes: []plan.Index{{Name: "a_kg", On: "a", Key: []string{"k", "g"}}},
			Query: plan.Query{
				From:   []plan.From{{As: "p", Collection: "a"}},
				Reduce: &plan.Reduce{GroupBy: groupBy, Aggregates: []plan.Aggregate{{Name: "s", Fn: plan.Sum, Expr: "p.x"}}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for _, workers := range []int{1, 2} {
				got, _, _, _ := run(t, r, in, 3, workers, render.Options{Mode: mode, Join: plan.Linear})
				matchReference(t, fmt.Sprintf("group by %v/%v/workers=%d", groupBy, mode, workers), r, in, got)
			}
		}
	}
}
