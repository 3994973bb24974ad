package reference

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
)

func resolve(t *testing.T, p *plan.Plan) *plan.Resolved {
	t.Helper()
	r, err := plan.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func eval(t *testing.T, r *plan.Resolved, in Inputs, at uint64) *Result {
	t.Helper()
	res, err := Eval(r, in, at)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// expect compares res with want written like Result.String.
func expect(t *testing.T, what string, res *Result, want string) {
	t.Helper()
	if got := res.String(); got != want {
		t.Errorf("%s:\n got:\n%s\nwant:\n%s", what, got, want)
	}
}

func up(tm uint64, d int64, row ...int64) Update { return Update{Time: tm, Diff: d, Row: row} }

// specExample is a plan with every part a spec may have: two inputs, a
// simple view with a map and a filter, a query view joining two
// collections, three indexes (one on a view), and a reduced query.
func specExample() *plan.Plan {
	return &plan.Plan{
		Inputs: []plan.Input{
			{Name: "lineitem", Columns: []string{"okey", "qty"}},
			{Name: "orders", Columns: []string{"okey", "cust", "price"}},
		},
		Views: []plan.View{
			{Name: "priced", Input: "orders", Maps: []plan.Map{{Name: "unit", Expr: "price / cust"}}, Filters: []string{"price >= 0"}},
			{Name: "sold", Query: &plan.Query{
				From:    []plan.From{{As: "p", Collection: "priced"}, {As: "l", Collection: "lineitem"}},
				On:      [][]string{{"p.okey", "l.okey"}},
				Maps:    []plan.Map{{Name: "ratio", Expr: "p.unit / l.qty"}},
				Project: []string{"p.cust", "ratio"},
			}},
		},
		Query: plan.Query{
			From:    []plan.From{{As: "s", Collection: "sold"}},
			Project: []string{"s.p_cust", "s.ratio"},
			Reduce: &plan.Reduce{GroupBy: []string{"s.p_cust"}, Aggregates: []plan.Aggregate{
				{Name: "total", Fn: plan.Sum, Expr: "s.ratio"}, {Name: "n", Fn: plan.Count}, {Name: "lo", Fn: plan.Min, Expr: "s.ratio"}}},
		},
	}
}

// TestSpecExample evaluates the spec's example on hand-made rows; every
// figure below is computed by hand.
func TestSpecExample(t *testing.T) {
	r := resolve(t, specExample())
	in := Inputs{
		// okey, cust, price: unit = price / cust.
		"orders": {
			up(0, 1, 1, 2, 100), // unit 50
			up(0, 1, 2, 2, 60),  // unit 30
			up(0, 1, 3, 0, 10),  // price / 0: division by zero in priced
			up(0, 1, 4, 5, -5),  // filtered out (price < 0) — but unit = -1 evaluates first, no error
			up(2, 1, 5, 3, 90),  // unit 30, at time 2
		},
		// okey, qty: ratio = unit / qty.
		"lineitem": {
			up(0, 1, 1, 5),  // 50/5 = 10 (cust 2)
			up(0, 2, 1, 10), // 50/10 = 5, twice (cust 2)
			up(0, 1, 2, 0),  // 30/0: division by zero in sold
			up(1, 1, 2, 3),  // 30/3 = 10 (cust 2), from time 1
			up(2, 1, 5, 7),  // 30/7 = 4 (cust 3), at time 2
			up(2, -1, 1, 5), // retracts the first at time 2
		},
	}
	// t=0: cust 2: ratios 10, 5, 5 -> total 20, n 3, lo 5.
	expect(t, "t=0", eval(t, r, in, 0), "s.p_cust,total,n,lo,diff\n2,20,3,5,1\nerror,diff\ndivision by zero,2\n")
	// t=1: plus 10 -> total 30, n 4.
	expect(t, "t=1", eval(t, r, in, 1), "s.p_cust,total,n,lo,diff\n2,30,4,5,1\nerror,diff\ndivision by zero,2\n")
	// t=2: minus the 10 of okey 1; cust 3 gets 4.
	expect(t, "t=2", eval(t, r, in, 2), "s.p_cust,total,n,lo,diff\n2,20,3,5,1\n3,4,1,4,1\nerror,diff\ndivision by zero,2\n")
}

func TestErrorsOncePerEntryAndNested(t *testing.T) {
	// a carries one division by zero (a view over input x); w joins a
	// with itself; the query joins w with itself.
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"k", "v"}}},
		Views: []plan.View{
			{Name: "a", Input: "x", Maps: []plan.Map{{Name: "q", Expr: "10 / v"}}},
			{Name: "w", Query: &plan.Query{
				From: []plan.From{{As: "l", Collection: "a"}, {As: "r", Collection: "a"}},
				On:   [][]string{{"l.k", "r.k"}}, Project: []string{"l.k", "l.q"}}},
		},
		Query: plan.Query{From: []plan.From{{As: "u", Collection: "w"}, {As: "v", Collection: "w"}, {As: "z", Collection: "a"}},
			On: [][]string{{"u.l_k", "v.l_k", "z.k"}}, Project: []string{"u.l_k", "z.q"}},
	}
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 1, 1, 0), up(0, 1, 1, 5), up(0, 1, 1, -5)}}
	// a: rows (1,5,2), (1,-5,-2); error e x1.
	// w: 2x2 = 4 rows with l.k = 1: (1,2) x2, (1,-2) x2; errors e x2.
	// query: w x w x a = 4*4*2 = 32 rows of u.l_k = 1: z.q = 2 x16, -2 x16;
	// errors 2 (u) + 2 (v) + 1 (z) = 5.
	expect(t, "nested", eval(t, r, in, 0), "u.l_k,z.q,diff\n1,-2,16\n1,2,16\nerror,diff\ndivision by zero,5\n")
	// Errors consolidate: a retraction of the erring row at t=1 cancels
	// them all; a negative total is kept.
	in["x"] = append(in["x"], up(1, -1, 1, 0), up(2, -1, 1, 0))
	expect(t, "retracted", eval(t, r, in, 1), "u.l_k,z.q,diff\n1,-2,16\n1,2,16\nerror,diff\n")
	expect(t, "negative", eval(t, r, in, 2), "u.l_k,z.q,diff\n1,-2,16\n1,2,16\nerror,diff\ndivision by zero,-5\n")
}

func TestJoinCountIsTheProduct(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k", "v"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}},
			On: [][]string{{"a.k", "b.k"}}, Maps: []plan.Map{{Name: "d", Expr: "100 / b.v"}}, Project: []string{"b.v", "d"}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, 3, 1), up(0, -2, 2)}, "b": {up(0, 5, 1, 4), up(0, 7, 2, 0), up(0, 1, 3, 1)}}
	// k=1: 3*5 = 15 rows (4, 25); k=2: -2*7 = -14 errors; k=3 no match.
	expect(t, "product", eval(t, r, in, 0), "b.v,d,diff\n4,25,15\nerror,diff\ndivision by zero,-14\n")
	// The delta tie-break case (docs/semantics.md §9.C): a@3 and b@3 give
	// exactly one output at 3.
	in = Inputs{"a": {up(3, 1, 1)}, "b": {up(3, 1, 1, 4)}}
	expect(t, "tie", eval(t, r, in, 3), "b.v,d,diff\n4,25,1\nerror,diff\n")
	expect(t, "before", eval(t, r, in, 2), "b.v,d,diff\nerror,diff\n")
}

func TestJoinProductOverflow(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query:  plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, 1<<32, 1), up(0, 1, 2)}, "b": {up(0, 1<<31, 1), up(0, 1, 2), up(1, -1<<31, 1)}}
	res := eval(t, r, in, 0)
	if !res.Overflow || !strings.Contains(res.String(), "numeric overflow,1") {
		t.Fatalf("t=0: want overflow:\n%s", res)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Errors: []Error{{Message: MsgOverflow, Diff: 3}}}); d != nil {
		t.Fatalf("Compare with an overflow: %v", d)
	}
	if d := Compare(res, &Result{Columns: res.Columns}); d == nil {
		t.Fatal("Compare accepted an output without the overflow error")
	}
	// At t=1 the product is gone, and the exact output is back in int64;
	// an engine that overflowed at t=0 may still hold the error (O4).
	res = eval(t, r, in, 1)
	expect(t, "t=1", res, "a.k,b.k,diff\n2,2,1\nerror,diff\n# may overflow: an incremental sum or product of diffs can leave int64; this output, or one with a numeric overflow error\n")
	exact := &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{2, 2}, Diff: 1}}}
	if d := Compare(res, exact); d != nil {
		t.Fatalf("t=1: Compare with the exact output: %v", d)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Errors: []Error{{Message: MsgOverflow, Diff: 1}}}); d != nil {
		t.Fatalf("t=1: Compare with an overflow error: %v", d)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{2, 2}, Diff: 2}}}); d == nil {
		t.Fatal("t=1: Compare accepted a wrong output without an overflow error")
	}
	// A product outside int64 whose record consolidates back into range
	// still overflows: the engine multiplies before it consolidates.
	p.Inputs[1].Columns = []string{"k", "v"}
	p.Query.Project = []string{"a.k"}
	r = resolve(t, p)
	in = Inputs{"a": {up(0, 1<<32, 1)}, "b": {up(0, 1<<31, 1, 1), up(0, -(1<<31)+1, 1, 2)}}
	if res := eval(t, r, in, 0); !res.Overflow {
		t.Fatalf("consolidated product: want overflow:\n%s", res)
	}
}

// TestCompareAcceptsAnOverflowCancelledByAnExpressionError: a record
// whose count leaves int64 beside a record at count -1 whose aggregate
// expression overflows. The engine's numeric overflow for the first (an
// overflow of counts, count 1) and the expression's error (count -1)
// cancel, so its output may hold no numeric overflow at all
// (docs/semantics.md §1.1, a known gap): Compare accepts that, and only
// where the expressions' overflow count is negative.
func TestCompareAcceptsAnOverflowCancelledByAnExpressionError(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}},
			Reduce: &plan.Reduce{GroupBy: []string{"a.k"}, Aggregates: []plan.Aggregate{{Name: "m", Fn: plan.Min, Expr: "a.x + 1"}}}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, math.MaxInt64, 1, 4), up(1, 1, 1, 4), up(0, -1, 1, math.MaxInt64)}}
	res := eval(t, r, in, 1)
	if !res.Overflow || res.ExprOverflow != -1 {
		t.Fatalf("want Overflow and ExprOverflow -1, got %v and %d:\n%s", res.Overflow, res.ExprOverflow, res)
	}
	engine := &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{1, 5}, Diff: 1}}}
	if d := Compare(res, engine); d != nil {
		t.Fatalf("an output whose overflows cancelled: %v", d)
	}
	// The expression's error at count +1 cannot cancel an overflow's.
	in["a"][2].Diff = 1
	res = eval(t, r, in, 1)
	if !res.Overflow || res.ExprOverflow != 1 {
		t.Fatalf("want Overflow and ExprOverflow 1, got %v and %d:\n%s", res.Overflow, res.ExprOverflow, res)
	}
	if d := Compare(res, engine); d == nil {
		t.Fatal("Compare accepted an output without the overflow error, though nothing can cancel it")
	}
}

// TestExprOverflowIsTheQuerysOwn: a view's expression that overflows on
// a row of count -1 carries its numeric overflow error at -1 into the
// query, beside a record whose count leaves int64. ExprOverflow counts
// the query's own expressions only (docs/spec.md "Expressions": where
// the negative count is a view's, check reports the missing error as a
// difference), so Compare wants the overflow error; with the query's
// own expression overflowing on that row instead, it accepts none.
func TestExprOverflowIsTheQuerysOwn(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}},
		Views:  []plan.View{{Name: "v", Input: "a", Maps: []plan.Map{{Name: "y", Expr: "x + 1"}}}},
		Query:  plan.Query{From: []plan.From{{As: "v", Collection: "v"}}, Project: []string{"v.k"}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, math.MaxInt64, 1, 4), up(1, 1, 1, 5), up(0, -1, 2, math.MaxInt64)}}
	res := eval(t, r, in, 1)
	if !res.Overflow || res.ExprOverflow != 0 {
		t.Fatalf("want Overflow and ExprOverflow 0 (the view's -1 is not the query's), got %v and %d:\n%s", res.Overflow, res.ExprOverflow, res)
	}
	engine := &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{1}, Diff: 1}}}
	if d := Compare(res, engine); d == nil {
		t.Fatal("Compare accepted an output without the overflow error, though the negative count is a view's")
	}
	// The same expression in the query itself: its count is the query's.
	p.Views = nil
	p.Query = plan.Query{From: []plan.From{{As: "a", Collection: "a"}}, Maps: []plan.Map{{Name: "y", Expr: "a.x + 1"}}, Project: []string{"a.k"}}
	r = resolve(t, p)
	res = eval(t, r, in, 1)
	if !res.Overflow || res.ExprOverflow != -1 {
		t.Fatalf("want Overflow and ExprOverflow -1, got %v and %d:\n%s", res.Overflow, res.ExprOverflow, res)
	}
	engine.Columns = res.Columns
	if d := Compare(res, engine); d != nil {
		t.Fatalf("an output whose overflows cancelled: %v", d)
	}
}

// TestMayOverflow: an update's diff times another's can leave int64 while
// every accumulated count stays in range. Here a carries the minimum
// int64 and b's row is retracted at t=1: the accumulated product is
// MIN x 0 = 0, but an incremental join multiplies the retraction, -1 x
// MIN, which is outside int64. The output at t=1 may be the exact one
// (empty) or hold a numeric overflow error; a third answer is wrong. A
// collection whose updates' absolute diffs sum within int64 cannot
// overflow in any order, and stays exact.
func TestMayOverflow(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query:  plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, math.MinInt64, 1)}, "b": {up(0, 1, 1), up(1, -1, 1)}}
	res := eval(t, r, in, 1)
	if res.Overflow || !res.MayOverflow || len(res.Rows) != 0 || len(res.Errors) != 0 {
		t.Fatalf("t=1: want an empty output that may overflow, got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	if d := Compare(res, &Result{Columns: res.Columns}); d != nil {
		t.Fatalf("the exact output: %v", d)
	}
	engine := &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{1, 1}, Diff: math.MinInt64}}, Errors: []Error{{Message: MsgOverflow, Diff: 1}}}
	if d := Compare(res, engine); d != nil {
		t.Fatalf("an output with the overflow error: %v", d)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{1, 1}, Diff: math.MinInt64}}}); d == nil {
		t.Fatal("Compare accepted a stale row without an overflow error")
	}
	// Masses within int64: exact required.
	in = Inputs{"a": {up(0, 1<<31, 1)}, "b": {up(0, 1<<30, 1), up(1, -(1 << 30), 1)}}
	if res := eval(t, r, in, 1); res.MayOverflow {
		t.Fatalf("masses within int64: MayOverflow set:\n%s", res)
	}
	// Through a view, with rows whose count is zero at t: a's two rows
	// map to one view row, whose mass is their sum.
	p = &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "v"}}},
		Views:  []plan.View{{Name: "w", Input: "a", Maps: []plan.Map{{Name: "z", Expr: "k * 0"}}}},
		Query:  plan.Query{From: []plan.From{{As: "w", Collection: "w"}}, Project: []string{"w.z"}},
	}
	r = resolve(t, p)
	big := int64(1) << 62
	in = Inputs{"a": {up(0, big, 1, 1), up(1, -big, 1, 1), up(0, big, 2, 2)}}
	if res := eval(t, r, in, 1); res.Overflow || !res.MayOverflow {
		t.Fatalf("view: want MayOverflow (mass 3 x 2^62), got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	in = Inputs{"a": {up(0, big/2, 1, 1), up(1, -big/2, 1, 1), up(0, big/2, 2, 2)}}
	if res := eval(t, r, in, 1); res.MayOverflow {
		t.Fatalf("view: masses within int64: MayOverflow set:\n%s", res)
	}
	// A query view's rows carry their masses to the query reading it:
	// 2^62 from a, times b's mass 2.
	p = &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Views:  []plan.View{{Name: "q", Query: &plan.Query{From: []plan.From{{As: "a", Collection: "a"}}, Project: []string{"a.k"}}}},
		Query:  plan.Query{From: []plan.From{{As: "q", Collection: "q"}, {As: "b", Collection: "b"}}, On: [][]string{{"q.a_k", "b.k"}}},
	}
	r = resolve(t, p)
	in = Inputs{"a": {up(0, big, 1)}, "b": {up(0, 1, 1), up(1, -1, 1)}}
	if res := eval(t, r, in, 1); res.Overflow || !res.MayOverflow {
		t.Fatalf("query view: want MayOverflow (2^62 x 2), got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
}

func reducePlan(aggs ...plan.Aggregate) *plan.Plan {
	return &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"g", "v"}}},
		Query: plan.Query{From: []plan.From{{As: "x", Collection: "x"}}, Project: []string{"x.g", "x.v"},
			Reduce: &plan.Reduce{GroupBy: []string{"x.g"}, Aggregates: aggs}},
	}
}

// TestMayOverflowOnADeltaPathsPartialRows: from [a, c, b] with c empty,
// no prefix of from has a row, but delta path 2 looks b up in a before c:
// b's update at count 4 times a's at 2^62 leaves int64 on a partial row
// that c never matches. The output is empty, or holds the overflow.
func TestMayOverflowOnADeltaPathsPartialRows(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}, {Name: "c", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "c", Collection: "c"}, {As: "b", Collection: "b"}},
			On: [][]string{{"a.k", "c.k", "b.k"}}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, 1<<62, 1)}, "b": {up(1, 4, 1)}}
	if res := eval(t, r, in, 0); res.MayOverflow {
		t.Fatalf("t=0: b is empty, nothing to multiply: MayOverflow set:\n%s", res)
	}
	res := eval(t, r, in, 1)
	if res.Overflow || !res.MayOverflow || len(res.Rows) != 0 || len(res.Errors) != 0 {
		t.Fatalf("t=1: want an empty output that may overflow, got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Errors: []Error{{Message: MsgOverflow, Diff: 1}}}); d != nil {
		t.Fatalf("t=1: Compare with the path's overflow error: %v", d)
	}
	// With b at count 1 the path's product, 2^62, fits.
	in["b"] = []Update{up(1, 1, 1)}
	if res := eval(t, r, in, 1); res.MayOverflow {
		t.Fatalf("t=1, b at count 1: MayOverflow set:\n%s", res)
	}
}

// TestMayOverflowOnADeltaPathsKeyMatch: from [b, a] on p.x = p.y = q.x.
// Every prefix of from reads a by (x, y), so a's row (0, 1) matches
// nothing; but delta path 1 starts from a and looks b up by p.x alone,
// leaving p.x = p.y to its final closure: a's 2^62 times b's 2 leaves
// int64 on a row the closure then drops. The output is empty, or holds
// the overflow.
func TestMayOverflowOnADeltaPathsKeyMatch(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"x", "y"}}, {Name: "b", Columns: []string{"x"}}},
		Query: plan.Query{From: []plan.From{{As: "q", Collection: "b"}, {As: "p", Collection: "a"}},
			On: [][]string{{"p.x", "p.y", "q.x"}}, Join: plan.Delta},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(1, 1<<62, 0, 1)}, "b": {up(0, 2, 0)}}
	if res := eval(t, r, in, 0); res.MayOverflow {
		t.Fatalf("t=0: a is empty, nothing to multiply: MayOverflow set:\n%s", res)
	}
	res := eval(t, r, in, 1)
	if res.Overflow || !res.MayOverflow || len(res.Rows) != 0 || len(res.Errors) != 0 {
		t.Fatalf("t=1: want an empty output that may overflow, got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	if d := Compare(res, &Result{Columns: res.Columns, Errors: []Error{{Message: MsgOverflow, Diff: 1}}}); d != nil {
		t.Fatalf("t=1: Compare with the path's overflow error: %v", d)
	}
	// With b at count 1 the path's product, 2^62, fits.
	in["b"] = []Update{up(0, 1, 0)}
	if res := eval(t, r, in, 1); res.MayOverflow {
		t.Fatalf("t=1, b at count 1: MayOverflow set:\n%s", res)
	}
}

func TestReduceSteps(t *testing.T) {
	r := resolve(t, reducePlan(
		plan.Aggregate{Name: "s", Fn: plan.Sum, Expr: "x.v"},
		plan.Aggregate{Name: "n", Fn: plan.Count},
		plan.Aggregate{Name: "lo", Fn: plan.Min, Expr: "100 / x.v"},
		plan.Aggregate{Name: "hi", Fn: plan.Max, Expr: "x.v"}))
	const mx = math.MaxInt64
	in := Inputs{"x": {
		// group 1: v=2 x3, v=5 x1, v=0 x2 (100/0 errs: leaves the group with count 2).
		up(0, 3, 1, 2), up(0, 1, 1, 5), up(0, 2, 1, 0),
		// group 2: a record with negative count: one negative multiplicity.
		up(0, 1, 2, 7), up(0, -1, 2, 8),
		// group 3: sum overflows exactly (max + 1): one numeric overflow.
		up(0, 1, 3, mx), up(0, 1, 3, 1),
		// group 4: every record errs: the group yields nothing.
		up(0, 4, 4, 0),
		// group 5: a record whose v erring comes with a negative count.
		up(0, -1, 5, 0), up(0, 1, 5, 50),
	}}
	// group 1: s = 6+5 = 11, n = 4, lo = min(50, 20) = 20, hi = 5.
	// errors: division by zero 2 (g1) + 4 (g4) - 1 (g5) = 5; negative 1; overflow 1.
	// group 5: only v=50 left: s 50, n 1, lo 2, hi 50.
	expect(t, "reduce", eval(t, r, in, 0),
		"x.g,s,n,lo,hi,diff\n1,11,4,20,5,1\n5,50,1,2,50,1\nerror,diff\ndivision by zero,5\nnegative multiplicity,1\nnumeric overflow,1\n")
	// Count overflow alone (sum of counts beyond int64) is caught as well.
	rc := resolve(t, reducePlan(plan.Aggregate{Name: "n", Fn: plan.Count}))
	in = Inputs{"x": {up(0, mx, 1, 1), up(0, 1, 1, 2), up(0, 2, 2, 2)}}
	expect(t, "count", eval(t, rc, in, 0), "x.g,n,diff\n2,2,1\nerror,diff\nnumeric overflow,1\n")
	// A negative record in a group beats an overflow in it (step 2 first).
	in = Inputs{"x": {up(0, mx, 1, 1), up(0, 1, 1, 2), up(0, -1, 1, 3)}}
	expect(t, "order", eval(t, rc, in, 0), "x.g,n,diff\nerror,diff\nnegative multiplicity,1\n")
}

// TestReduceRecordBeyondInt64BeatsANegativeRecord: a group holding a
// record at -1 and a record whose count, MaxInt64 + 1, leaves int64 is
// one numeric overflow, not a negative multiplicity (docs/semantics.md
// §6.3, 3). In a reduce view the group's error is exact: the query
// reading the view holds it once; in the query, the output overflows.
func TestReduceRecordBeyondInt64BeatsANegativeRecord(t *testing.T) {
	in := Inputs{"x": {up(0, math.MaxInt64, 1, 4), up(1, 1, 1, 4), up(0, -1, 1, 5), up(0, 1, 2, 4)}}
	p := reducePlan(plan.Aggregate{Name: "n", Fn: plan.Count}, plan.Aggregate{Name: "hi", Fn: plan.Max, Expr: "x.v"})
	expect(t, "query", eval(t, resolve(t, p), in, 1),
		"x.g,n,hi,diff\n2,1,4,1\nerror,diff\nnumeric overflow,1\n# overflow: the rest of this time's output is unspecified\n")
	view := p.Query
	p.Views = []plan.View{{Name: "r", Query: &view}}
	p.Query = plan.Query{From: []plan.From{{As: "r", Collection: "r"}}}
	res := eval(t, resolve(t, p), in, 1)
	if res.Overflow || !res.MayOverflow {
		t.Fatalf("view: want MayOverflow without Overflow:\n%s", res)
	}
	expect(t, "view", res,
		"r.x_g,r.n,r.hi,diff\n2,1,4,1\nerror,diff\nnumeric overflow,1\n# may overflow: an incremental sum or product of diffs can leave int64; this output, or one with a numeric overflow error\n")
	// At 0 the record's count fits: the negative record's error.
	expect(t, "view at 0", eval(t, resolve(t, p), in, 0), "r.x_g,r.n,r.hi,diff\n2,1,4,1\nerror,diff\nnegative multiplicity,1\n")
}

func TestReduceEmptyGroupBy(t *testing.T) {
	p := reducePlan(plan.Aggregate{Name: "n", Fn: plan.Count}, plan.Aggregate{Name: "s", Fn: plan.Sum, Expr: "x.v"})
	p.Query.Reduce.GroupBy = nil
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 2, 1, 3), up(0, 1, 2, -4), up(1, -2, 1, 3), up(1, -1, 2, -4)}}
	expect(t, "t=0", eval(t, r, in, 0), "n,s,diff\n3,2,1\nerror,diff\n")
	// No records left: nothing, also with an empty group_by.
	expect(t, "t=1", eval(t, r, in, 1), "n,s,diff\nerror,diff\n")
}

func TestDistinctAndThreshold(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"a", "b"}}},
		Query:  plan.Query{From: []plan.From{{As: "x", Collection: "x"}}, Project: []string{"x.a"}, Distinct: true},
	}
	in := Inputs{"x": {up(0, 1, 1, 1), up(0, 2, 1, 2), up(0, -1, 2, 1), up(0, 1, 3, 1), up(0, -1, 3, 2), up(0, -3, 4, 4)}}
	// Records: 1 x3, 2 x-1, 3 x0 (gone), 4 x-3.
	expect(t, "distinct", eval(t, resolve(t, p), in, 0), "x.a,diff\n1,1\nerror,diff\nnegative multiplicity,2\n")
	p.Query.Distinct, p.Query.Threshold = false, true
	expect(t, "threshold", eval(t, resolve(t, p), in, 0), "x.a,diff\n1,3\nerror,diff\n")
	p.Query.Threshold = false
	expect(t, "plain", eval(t, resolve(t, p), in, 0), "x.a,diff\n1,3\n2,-1\n4,-3\nerror,diff\n")
}

// TestDistinctAndThresholdOfACountOutsideInt64: in a view, a record at
// MaxInt64 + 1 and one at MinInt64 - 1 are one numeric overflow each for
// distinct and threshold alike (docs/semantics.md §6.4), not a row, a
// negative multiplicity or nothing; a record at -1 keeps its own
// treatment.
func TestDistinctAndThresholdOfACountOutsideInt64(t *testing.T) {
	in := Inputs{"x": {
		up(0, math.MaxInt64, 1), up(1, 1, 1),
		up(0, math.MinInt64, 2), up(1, -1, 2),
		up(0, -1, 3), up(0, 2, 4),
	}}
	for _, c := range []struct {
		what            string
		distinct, thres bool
		want            string
	}{
		{"distinct", true, false, "v.x_a,diff\n4,1\nerror,diff\nnegative multiplicity,1\nnumeric overflow,2\n"},
		{"threshold", false, true, "v.x_a,diff\n4,2\nerror,diff\nnumeric overflow,2\n"},
	} {
		p := &plan.Plan{
			Inputs: []plan.Input{{Name: "x", Columns: []string{"a"}}},
			Views: []plan.View{{Name: "v", Query: &plan.Query{From: []plan.From{{As: "x", Collection: "x"}},
				Distinct: c.distinct, Threshold: c.thres}}},
			Query: plan.Query{From: []plan.From{{As: "v", Collection: "v"}}},
		}
		res := eval(t, resolve(t, p), in, 1)
		if res.Overflow || !res.MayOverflow {
			t.Errorf("%s: want MayOverflow without Overflow:\n%s", c.what, res)
		}
		res.MayOverflow = false
		expect(t, c.what, res, c.want)
	}
}

func TestSimpleViewOrder(t *testing.T) {
	// Maps err before filters drop; a filter drops before a later map...
	// no: every map runs before every filter (docs/spec.md "The query").
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"a"}}},
		Views: []plan.View{{Name: "v", Input: "x",
			Maps:    []plan.Map{{Name: "q", Expr: "10 / a"}, {Name: "r", Expr: "q * 2"}},
			Filters: []string{"a != 1", "100 / (a - 2)"}}},
		Query: plan.Query{From: []plan.From{{As: "v", Collection: "v"}}},
	}
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 1, 0), up(0, 1, 1), up(0, 1, 2), up(0, 1, 5), up(0, 1, 200)}}
	// a=0: map error; a=1: dropped by the first filter; a=2: second filter
	// errs; a=5: 100/3 = 33 kept; a=200: 100/198 = 0 dropped.
	expect(t, "view", eval(t, r, in, 0), "v.a,v.q,v.r,diff\n5,2,4,1\nerror,diff\ndivision by zero,2\n")
}

func TestEvalRefusesBadInput(t *testing.T) {
	r := resolve(t, specExample())
	for _, in := range []Inputs{
		{"nope": {up(0, 1, 1)}},
		{"priced": {up(0, 1, 1, 2, 3, 4)}},
		{"lineitem": {up(0, 1, 1)}},
		{"lineitem": {up(0, 0, 1, 2)}},
	} {
		if _, err := Eval(r, in, 0); !errors.Is(err, ErrInput) {
			t.Errorf("Eval(%v) = %v, want ErrInput", in, err)
		}
	}
}

func TestEvalExpr(t *testing.T) {
	sc := map[string]int64{"p.a": math.MinInt64, "b": -1, "c": 7}
	for _, tc := range []struct {
		src  string
		want int64
		err  error
	}{
		{"p.a / b", 0, ErrOverflow},
		{"p.a % b", 0, nil},
		{"c % -3", 1, nil},
		{"-c / 2", -3, nil},
		{"c / 0 + (p.a - 1)", 0, ErrDivisionByZero},
		{"(p.a - 1) + c / 0", 0, ErrOverflow},
		{"0 && c / 0", 0, ErrDivisionByZero},
		{"!c || !0", 1, nil},
		{"c < 8 < 1", 0, nil},
		{"-9223372036854775807 - 1", math.MinInt64, nil},
		{"-p.a", 0, ErrOverflow},
		{"p.a * -1", 0, ErrOverflow},
		{"9223372036854775808", 0, ErrNotAccepted},
		{"07", 0, ErrNotAccepted},
		{"1.0", 0, ErrNotAccepted},
		{"c & 1", 0, ErrNotAccepted},
		{"+c", 0, ErrNotAccepted},
		{"d", 0, ErrNotAccepted},
	} {
		got, err := EvalExpr(tc.src, sc)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("%s = %d, %v; want %d, %v", tc.src, got, err, tc.want, tc.err)
		}
	}
}

// TestEvalConcurrent: Eval is a pure function of its arguments; run with
// -race.
func TestEvalConcurrent(t *testing.T) {
	r := resolve(t, specExample())
	in := Inputs{"orders": {up(0, 1, 1, 2, 100)}, "lineitem": {up(0, 1, 1, 5), up(1, 1, 1, 0)}}
	want := eval(t, r, in, 1).String()
	done := make(chan string)
	for range 4 {
		go func() {
			res, err := Eval(r, in, 1)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- res.String()
		}()
	}
	for range 4 {
		if got := <-done; got != want {
			t.Fatalf("concurrent Eval:\n%s\nwant\n%s", got, want)
		}
	}
}

// TestWorkedExampleD is docs/semantics.md §9.D through plans: R0 carries
// error e with count 1; a three-relation join (linear or delta, the
// reference does not care) outputs e once; a diamond of two views over R0
// joined again carries e once per from entry, and no more.
func TestWorkedExampleD(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "raw", Columns: []string{"k", "v"}}, {Name: "r1", Columns: []string{"k"}}, {Name: "r2", Columns: []string{"k"}}},
		Views: []plan.View{
			{Name: "r0", Input: "raw", Maps: []plan.Map{{Name: "e", Expr: "1 / v"}}},
			{Name: "left", Query: &plan.Query{From: []plan.From{{As: "a", Collection: "r0"}}, Project: []string{"a.k"}}},
			{Name: "right", Query: &plan.Query{From: []plan.From{{As: "a", Collection: "r0"}}, Project: []string{"a.k"}}},
		},
		Query: plan.Query{Join: plan.Delta,
			From: []plan.From{{As: "x", Collection: "r0"}, {As: "y", Collection: "r1"}, {As: "z", Collection: "r2"}},
			On:   [][]string{{"x.k", "y.k", "z.k"}}, Project: []string{"x.k"}},
	}
	in := Inputs{"raw": {up(0, 1, 1, 0), up(0, 1, 1, 1)}, "r1": {up(0, 1, 1)}, "r2": {up(0, 1, 1)}}
	expect(t, "three-way", eval(t, resolve(t, p), in, 0), "x.k,diff\n1,1\nerror,diff\ndivision by zero,1\n")
	p.Query = plan.Query{From: []plan.From{{As: "l", Collection: "left"}, {As: "r", Collection: "right"}},
		On: [][]string{{"l.a_k", "r.a_k"}}, Project: []string{"l.a_k"}}
	expect(t, "diamond", eval(t, resolve(t, p), in, 0), "l.a_k,diff\n1,1\nerror,diff\ndivision by zero,2\n")
}

func TestCountOfEmptyRecords(t *testing.T) {
	p := reducePlan(plan.Aggregate{Name: "n", Fn: plan.Count})
	p.Query.Project, p.Query.Reduce.GroupBy = []string{}, nil
	in := Inputs{"x": {up(0, 2, 1, 3), up(0, 5, 2, -4), up(1, -7, 9, 9)}}
	expect(t, "t=0", eval(t, resolve(t, p), in, 0), "n,diff\n7,1\nerror,diff\n")
	// At t=1 the records cancel to a count of 0: no records, no row.
	expect(t, "t=1", eval(t, resolve(t, p), in, 1), "n,diff\nerror,diff\n")
}

func TestEvalCollection(t *testing.T) {
	r := resolve(t, specExample())
	in := Inputs{"orders": {up(0, 1, 1, 2, 100), up(0, 1, 3, 0, 10)}, "lineitem": {up(0, 2, 1, 5), up(0, 1, 1, 0)}}
	res, err := EvalCollection(r, in, 0, "sold")
	if err != nil {
		t.Fatal(err)
	}
	// sold: (cust 2, ratio 10) x2; errors: priced's 1 + sold's own 1.
	expect(t, "sold", res, "p_cust,ratio,diff\n2,10,2\nerror,diff\ndivision by zero,2\n")
	res, err = EvalCollection(r, in, 0, "orders")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "orders", res, "okey,cust,price,diff\n1,2,100,1\n3,0,10,1\nerror,diff\n")
	if _, err := EvalCollection(r, in, 0, "nope"); !errors.Is(err, ErrUnknownCollection) {
		t.Fatalf("EvalCollection(nope) = %v", err)
	}
}

// TestMayOverflowHoldsOnceSet: MayOverflow, once set, stays at later
// times. A reduce view's row of an earlier time — gone since, its
// aggregate changed — passed through the join reading the view, as its
// products did (2^0 x 2^32 x 2^31 at t=0, an exact overflow); at t=1 the
// row is retracted, the exact output is empty, and an engine still holds
// the error.
func TestMayOverflowHoldsOnceSet(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"g"}}, {Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Views: []plan.View{{Name: "v", Query: &plan.Query{
			From: []plan.From{{As: "x", Collection: "x"}}, Project: []string{"x.g"},
			Reduce: &plan.Reduce{GroupBy: []string{"x.g"}, Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}}}},
		Query: plan.Query{From: []plan.From{{As: "v", Collection: "v"}, {As: "a", Collection: "a"}, {As: "b", Collection: "b"}},
			On: [][]string{{"v.n", "a.k", "b.k"}}},
	}
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 1, 1), up(1, 1, 1)}, "a": {up(0, 1<<32, 1)}, "b": {up(0, 1<<31, 1)}}
	if res := eval(t, r, in, 0); !res.Overflow {
		t.Fatalf("t=0: want Overflow:\n%s", res)
	}
	res := eval(t, r, in, 1)
	if res.Overflow || !res.MayOverflow {
		t.Fatalf("t=1: want MayOverflow without Overflow, got %v %v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	// Compare still checks the columns beside an overflow error.
	if d := Compare(res, &Result{Columns: []string{"x"}, Errors: []Error{{Message: MsgOverflow, Diff: 1}}}); d == nil {
		t.Fatal("Compare accepted other columns beside an overflow error")
	}
}

// TestMayOverflowOfRowsNoOneReads: an input's own mass counts though no
// query row comes of it (an index on the input consolidates its updates:
// 2^62 + 2^62 leaves int64 before -2^62 brings it back), and a join's
// product counts though a filter drops the joined row (2^62 times b's
// mass 2, its row inserted and retracted).
func TestMayOverflowOfRowsNoOneReads(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}},
		Views:  []plan.View{{Name: "w", Input: "a", Filters: []string{"k < 0"}}},
		Query:  plan.Query{From: []plan.From{{As: "w", Collection: "w"}}},
	}
	in := Inputs{"a": {up(0, 1<<62, 1), up(0, 1<<62, 1), up(0, -(1 << 62), 1)}}
	if res := eval(t, resolve(t, p), in, 0); res.Overflow || !res.MayOverflow {
		t.Fatalf("filtered input: want MayOverflow without Overflow:\n%s", res)
	}
	p = &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}},
			Filters: []string{"a.k < 0"}},
	}
	in = Inputs{"a": {up(0, 1<<62, 1)}, "b": {up(0, 1, 1), up(1, -1, 1)}}
	if res := eval(t, resolve(t, p), in, 1); res.Overflow || !res.MayOverflow {
		t.Fatalf("filtered join: want MayOverflow without Overflow:\n%s", res)
	}
}

// TestOverflowOnlyWhereTheQueryKeepsTheCount: an input row whose count
// leaves int64 across times (MaxInt64, then +1) that no query reads, or
// that a filter drops, and a join's product of counts (2^32 x 2^32,
// each count of two updates, so no product of updates leaves int64) whose
// row a filter drops, are counts the engine never accumulates: the output
// may hold the overflow error, and need not (an index merging the input's
// batches reports it at its frontier, docs/semantics.md §1.1). They were
// Overflow, so `benchrun check` failed every mode of valid specs. Kept by
// the query, the same counts still overflow.
func TestOverflowOnlyWhereTheQueryKeepsTheCount(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "z", Columns: []string{"k"}}},
		Query:  plan.Query{From: []plan.From{{As: "a", Collection: "a"}}},
	}
	in := Inputs{"a": {up(0, 1, 1)}, "z": {up(0, math.MaxInt64, 1), up(1, 1, 1)}}
	if res := eval(t, resolve(t, p), in, 1); res.Overflow || !res.MayOverflow {
		t.Errorf("unread input: want MayOverflow without Overflow:\n%s", res)
	}
	in = Inputs{"a": {up(0, 1, 5), up(0, math.MaxInt64, -1), up(1, 1, -1)}}
	p.Query.Filters = []string{"a.k >= 0"}
	if res := eval(t, resolve(t, p), in, 1); res.Overflow || !res.MayOverflow {
		t.Errorf("filtered input row: want MayOverflow without Overflow:\n%s", res)
	}
	p.Query.Filters = nil
	if res := eval(t, resolve(t, p), in, 1); !res.Overflow {
		t.Errorf("input row read: want Overflow:\n%s", res)
	}
	p = &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}, {Name: "b", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}},
			Filters: []string{"a.x != 0"}},
	}
	in = Inputs{"a": {up(0, 1<<31, 1, 0), up(1, 1<<31, 1, 0)}, "b": {up(0, 1<<31, 1), up(1, 1<<31, 1)}}
	if res := eval(t, resolve(t, p), in, 1); res.Overflow || !res.MayOverflow {
		t.Errorf("filtered join row: want MayOverflow without Overflow:\n%s", res)
	}
	p.Query.Filters = nil
	if res := eval(t, resolve(t, p), in, 1); !res.Overflow {
		t.Errorf("join row kept: want Overflow:\n%s", res)
	}
}

// TestErringJoinedRowIsCountedByItsMessage: a joined row whose count
// leaves int64 (2^62 x 2, each count of two updates, so no product of
// updates does) but whose closure errs is its error with that count,
// summed with the other rows' errors of the message: here -10, so the
// error's count, 2^63 - 10, fits. The engine keeps only that count: the
// output may hold the overflow, and need not. Kept by the query, the
// same row overflows.
func TestErringJoinedRowIsCountedByItsMessage(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}},
			Maps: []plan.Map{{Name: "m", Expr: "1 / (a.k - b.k)"}}},
	}
	in := Inputs{"a": {up(0, 1<<61, 1), up(1, 1<<61, 1), up(0, -10, 2)}, "b": {up(0, 1, 1), up(1, 1, 1), up(0, 1, 2)}}
	res := eval(t, resolve(t, p), in, 1)
	if res.Overflow || !res.MayOverflow {
		t.Fatalf("erring row: want MayOverflow without Overflow:\n%s", res)
	}
	exact := &Result{Columns: res.Columns, Errors: []Error{{Message: MsgDivisionByZero, Diff: math.MaxInt64 - 9}}}
	if d := Compare(res, exact); d != nil {
		t.Fatalf("erring row: Compare with the exact output: %v", d)
	}
	p.Query.Maps = nil
	if res := eval(t, resolve(t, p), in, 1); !res.Overflow {
		t.Errorf("kept row: want Overflow:\n%s", res)
	}
}

// TestJoinedRowsProjectedToOneRecordAreKeptByItsCount: the joined row
// (a: 1 0, b: 1) has count 2^32 x 2^31 = 2^63 (no update's product leaves
// int64), the joined row (a: 1 1, b: 1) has -2^31, and the projection
// makes both the record 1, whose count, 2^63 - 2^31, fits. The engine
// keeps only the record's count, as it keeps only an erring row's
// message: the output may hold the overflow, and need not, and the exact
// output agrees. Without the projection the joined row is its record and
// overflows.
func TestJoinedRowsProjectedToOneRecordAreKeptByItsCount(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}, {Name: "b", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}},
			Project: []string{"a.k"}},
	}
	in := Inputs{"a": {up(0, 1<<31, 1, 0), up(1, 1<<31, 1, 0), up(0, -1, 1, 1)}, "b": {up(0, 1<<31, 1)}}
	res := eval(t, resolve(t, p), in, 1)
	if res.Overflow || !res.MayOverflow {
		t.Fatalf("projected rows: want MayOverflow without Overflow:\n%s", res)
	}
	exact := &Result{Columns: res.Columns, Rows: []Row{{Values: []int64{1}, Diff: 1<<63 - 1<<31}}}
	if d := Compare(res, exact); d != nil {
		t.Fatalf("projected rows: Compare with the exact output: %v", d)
	}
	p.Query.Project = nil
	if res := eval(t, resolve(t, p), in, 1); !res.Overflow {
		t.Errorf("joined row kept whole: want Overflow:\n%s", res)
	}
}

// TestNilArgumentsAreErrors: a nil plan given to Eval or EvalCollection
// (or one plan.Resolve did not make),
// or a nil Result given to Compare (an engine's output a caller failed to
// read), is an error or a difference, not a nil dereference.
func TestNilArgumentsAreErrors(t *testing.T) {
	if _, err := Eval(nil, nil, 0); err == nil || !strings.Contains(err.Error(), "nil *plan.Resolved") {
		t.Errorf("Eval(nil plan): %v, want an error naming the nil plan", err)
	}
	if _, err := EvalCollection(nil, nil, 0, "orders"); err == nil || !strings.Contains(err.Error(), "nil *plan.Resolved") {
		t.Errorf("EvalCollection(nil plan): %v, want an error naming the nil plan", err)
	}
	// A plan.Resolved{} has no query: plan.Resolve did not make it.
	if _, err := Eval(&plan.Resolved{}, nil, 0); err == nil || !strings.Contains(err.Error(), "not made by plan.Resolve") {
		t.Errorf("Eval(plan.Resolved{}): %v, want an error naming the plan", err)
	}
	if _, err := EvalCollection(&plan.Resolved{}, nil, 0, "orders"); err == nil || !strings.Contains(err.Error(), "not made by plan.Resolve") {
		t.Errorf("EvalCollection(plan.Resolved{}): %v, want an error naming the plan", err)
	}
	want := eval(t, resolve(t, specExample()), nil, 0)
	if d := Compare(want, nil); len(d) != 1 || d[0] != "got no result (nil)" {
		t.Errorf("Compare(want, nil) = %q", d)
	}
	if d := Compare(nil, want); len(d) != 1 {
		t.Errorf("Compare(nil, got) = %q", d)
	}
	if d := Compare(nil, nil); d != nil {
		t.Errorf("Compare(nil, nil) = %q, want nil", d)
	}
	if _, err := plan.Resolve(nil); !errors.Is(err, plan.ErrInvalid) {
		t.Errorf("plan.Resolve(nil): %v, want plan.ErrInvalid", err)
	}
}

// TestOverflowedCountIsNoRow: a row whose exact count leaves int64 is not
// in the output at all, not even wrapped (O1); only the numeric overflow
// error stands for it, beside the rows that fit.
func TestOverflowedCountIsNoRow(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query:  plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}}},
	}
	in := Inputs{"a": {up(0, 1<<32, 1), up(0, 1, 2)}, "b": {up(0, 1<<31, 1), up(0, 1, 2)}}
	res := eval(t, resolve(t, p), in, 0)
	if !res.Overflow || len(res.Rows) != 1 || res.Rows[0].Diff != 1 || !slices.Equal(res.Rows[0].Values, []int64{2, 2}) {
		t.Fatalf("want row 2,2 only and the overflow, got Overflow=%v:\n%s", res.Overflow, res)
	}
}

// TestMayOverflowOfADistinctRowCountsBothWays: a distinct view's row is
// 1 and may change at most once each way a time, so its mass is twice
// the number of input times (O4): with one input time, 2. Times a row of
// mass 2^62 that is 2^63, out of int64, though the count, 2^62, fits.
func TestMayOverflowOfADistinctRowCountsBothWays(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"a"}}, {Name: "y", Columns: []string{"b"}}},
		Views:  []plan.View{{Name: "v", Query: &plan.Query{From: []plan.From{{As: "x", Collection: "x"}}, Distinct: true}}},
		Query:  plan.Query{From: []plan.From{{As: "v", Collection: "v"}, {As: "y", Collection: "y"}}},
	}
	r := resolve(t, p)
	for _, c := range []struct {
		diff int64
		may  bool
	}{{1 << 62, true}, {1 << 61, false}} {
		in := Inputs{"x": {up(0, 1, 1)}, "y": {up(0, c.diff, 1)}}
		res := eval(t, r, in, 0)
		if res.Overflow || res.MayOverflow != c.may {
			t.Errorf("y at %d: Overflow=%v MayOverflow=%v, want false, %v:\n%s", c.diff, res.Overflow, res.MayOverflow, c.may, res)
		}
	}
}

// TestMayOverflowOnAPrefixOfFrom: from [a, b, c] on a.x = c.x, b.z = c.z,
// with c empty. The linear join's first stage is a's rows times b's (a
// cross product), 2^32 times 2^32, out of int64, on partial rows c never
// matches; no delta path forms that prefix, since each looks c up second
// (O4). The output is empty, or holds the overflow.
func TestMayOverflowOnAPrefixOfFrom(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"x"}}, {Name: "b", Columns: []string{"z"}}, {Name: "c", Columns: []string{"x", "z"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}, {As: "c", Collection: "c"}},
			On: [][]string{{"a.x", "c.x"}, {"b.z", "c.z"}}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, 1<<32, 1)}, "b": {up(0, 1<<32, 1)}}
	res := eval(t, r, in, 0)
	if res.Overflow || !res.MayOverflow || len(res.Rows) != 0 || len(res.Errors) != 0 {
		t.Fatalf("want an empty output that may overflow, got Overflow=%v MayOverflow=%v:\n%s", res.Overflow, res.MayOverflow, res)
	}
	// With b at 2^30 the prefix's product, 2^62, fits.
	in["b"] = []Update{up(0, 1<<30, 1)}
	if res := eval(t, r, in, 0); res.MayOverflow {
		t.Fatalf("b at 2^30: MayOverflow set:\n%s", res)
	}
}

// TestEvalRefusesTimesOutsideTheQuery: the query's output answers from
// as_of to before until (docs/spec.md "Fields"), and `benchrun eval`
// refuses any other time; Eval answered at every time, past until too,
// where the engine's output holds nothing. It refuses them now, naming
// the time and the bound, while EvalCollection, whose indexes have no
// until, still answers.
func TestEvalRefusesTimesOutsideTheQuery(t *testing.T) {
	p := specExample()
	p.AsOf, p.HasUntil, p.Until = 2, true, 5
	r := resolve(t, p)
	for _, tc := range []struct {
		at   uint64
		want string
	}{
		{1, "time 1 is before as_of 2"},
		{5, "time 5 is not before until 5"},
		{9, "time 9 is not before until 5"},
	} {
		if _, err := Eval(r, nil, tc.at); !errors.Is(err, ErrTime) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Eval at %d: %v, want ErrTime saying %q", tc.at, err, tc.want)
		}
	}
	for _, at := range []uint64{2, 4} {
		if _, err := Eval(r, nil, at); err != nil {
			t.Errorf("Eval at %d: %v", at, err)
		}
	}
	if _, err := EvalCollection(r, nil, 9, "orders"); err != nil {
		t.Errorf("EvalCollection past until: %v", err)
	}
}
