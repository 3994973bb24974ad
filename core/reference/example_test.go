package reference_test

import (
	"fmt"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
)

// Example evaluates a query by brute force at a time and compares an
// engine's output with it, as the README's "Expressions, plans and the
// reference evaluator" shows: orders (okey, qty) with a price per unit,
// 100 / qty, which divides by zero on purpose.
func Example() {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "orders", Columns: []string{"okey", "qty"}}},
		Query: plan.Query{
			From:    []plan.From{{As: "o", Collection: "orders"}},
			Maps:    []plan.Map{{Name: "unit", Expr: "100 / o.qty"}},
			Project: []string{"o.okey", "unit"},
		},
	}
	r, err := plan.Resolve(p)
	if err != nil {
		panic(err)
	}
	updates := []reference.Update{
		{Time: 0, Diff: 1, Row: []int64{1, 4}},
		{Time: 2, Diff: 1, Row: []int64{2, 0}},
		{Time: 7, Diff: 1, Row: []int64{3, 5}}, // after time 5: not in the answer
	}
	res, err := reference.Eval(r, reference.Inputs{"orders": updates}, 5)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Columns)
	for _, row := range res.Rows {
		fmt.Println(row.Values, row.Diff)
	}
	for _, e := range res.Errors {
		fmt.Println(e.Message, e.Diff)
	}

	// An engine's output at 5 that lost the error disagrees.
	engineOutputAt5 := &reference.Result{Time: 5, Columns: res.Columns, Rows: res.Rows}
	fmt.Println(reference.Compare(res, res) == nil, len(reference.Compare(res, engineOutputAt5)) > 0)
	// Output:
	// [o.okey unit]
	// [1 25] 1
	// division by zero 1
	// true true
}
