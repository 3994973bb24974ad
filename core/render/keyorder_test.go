package render_test

import (
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/spine"
)

// TestIndexInAnotherKeyOrderIsArrangedAgain is N2: an imported query
// joining on two columns reads an index with the same key set in the
// other order. Its batches are sorted, and its keys laid out, by that
// order, so the query flattens it and arranges it by the join's own key;
// imported as it is, the join would match each key against the other
// input's reversed key. Every other test's indexes have one key column,
// or the join's order, so a render that imported any index whose key set
// matched passed them all.
func TestIndexInAnotherKeyOrderIsArrangedAgain(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k1", "k2", "x"}}, {Name: "b", Columns: []string{"k1", "k2", "y"}}},
		Indexes: []plan.Index{
			{Name: "a_k2k1", On: "a", Key: []string{"k2", "k1"}},
			{Name: "b_k1k2", On: "b", Key: []string{"k1", "k2"}},
		},
		Query: plan.Query{
			From: []plan.From{{As: "p", Collection: "a"}, {As: "q", Collection: "b"}},
			On:   [][]string{{"p.k1", "q.k1"}, {"p.k2", "q.k2"}},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	u := func(tm uint64, d int64, row ...int64) reference.Update {
		return reference.Update{Time: tm, Diff: d, Row: row}
	}
	in := reference.Inputs{
		"a": {u(0, 1, 1, 2, 10), u(0, 1, 2, 1, 20), u(1, 1, 3, 4, 30), u(1, 1, 1, 2, 11), u(2, -1, 2, 1, 20)},
		"b": {u(0, 1, 1, 2, 100), u(0, 1, 4, 3, 200), u(1, 1, 2, 1, 300), u(2, 1, 3, 4, 400), u(2, 1, 4, 3, 500)},
	}
	if want, err := reference.Eval(r, in, 2); err != nil || len(want.Rows) == 0 {
		t.Fatalf("reference at 2: %v %v: want rows", want, err)
	}
	matchEveryConfig(t, "", r, in, 3, spine.Options{}, 1, 2)
}
