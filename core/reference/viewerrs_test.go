package reference

import (
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
)

// TestASimpleViewOverAViewKeepsItsErrors: a simple view's output holds
// the errors of the view it reads as well as its own, as a query's holds
// its entries': here one division by zero below (a) and one above (b).
func TestASimpleViewOverAViewKeepsItsErrors(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"k", "v"}}},
		Views: []plan.View{
			{Name: "a", Input: "x", Maps: []plan.Map{{Name: "q", Expr: "10 / v"}}},
			{Name: "b", Input: "a", Maps: []plan.Map{{Name: "r", Expr: "10 / (q - 2)"}}},
		},
		Query: plan.Query{From: []plan.From{{As: "b", Collection: "b"}}, Project: []string{"b.k", "b.r"}},
	}
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 1, 1, 0), up(0, 1, 2, 5), up(0, 1, 3, 1)}}
	// a: (2, 5, 2), (3, 1, 10); division by zero x1 (v = 0).
	// b: (3, 1, 10, 1); division by zero x1 more (q = 2).
	expect(t, "nested simple views", eval(t, r, in, 0), "b.k,b.r,diff\n3,1,1\nerror,diff\ndivision by zero,2\n")
	res, err := EvalCollection(r, in, 0, "b")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "the view b", res, "k,v,q,r,diff\n3,1,10,1,1\nerror,diff\ndivision by zero,2\n")
}

// TestASimpleViewsErrorsCountTowardsMayOverflow: two input rows whose
// errors cancel, each of diff 2^62, make error counts that an engine
// may sum, in some order of their updates, past int64 (mass 2^63): the
// result says it may overflow, though each row's own mass fits.
func TestASimpleViewsErrorsCountTowardsMayOverflow(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"k", "v"}}},
		Views:  []plan.View{{Name: "a", Input: "x", Maps: []plan.Map{{Name: "q", Expr: "10 / v"}}}},
		Query:  plan.Query{From: []plan.From{{As: "a", Collection: "a"}}, Project: []string{"a.k"}},
	}
	r := resolve(t, p)
	in := Inputs{"x": {up(0, 1<<62, 1, 0), up(0, -1<<62, 2, 0)}}
	res := eval(t, r, in, 0)
	if !res.MayOverflow || res.Overflow || len(res.Errors) != 0 {
		t.Fatalf("may overflow %v, overflow %v, errors %v; want true, false, none", res.MayOverflow, res.Overflow, res.Errors)
	}
	in = Inputs{"x": {up(0, 1<<61, 1, 0), up(0, -1<<61, 2, 0)}}
	if res := eval(t, r, in, 0); res.MayOverflow {
		t.Fatal("a mass of 2^62 may overflow")
	}
}

// TestAnExpressionOverflowCountBeyondInt64KeepsItsSign: the count of a
// query's expression overflows, when it leaves int64 itself, is given
// as the int64 bound of its sign.
func TestAnExpressionOverflowCountBeyondInt64KeepsItsSign(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "x", Columns: []string{"k", "v"}}},
		Query: plan.Query{From: []plan.From{{As: "x", Collection: "x"}},
			Maps: []plan.Map{{Name: "big", Expr: "x.v * 9223372036854775807"}}, Project: []string{"x.k", "big"}},
	}
	r := resolve(t, p)
	for _, c := range []struct {
		d    int64
		want int64
	}{{-1 << 62, math.MinInt64}, {1 << 62, math.MaxInt64}} {
		in := Inputs{"x": {up(0, c.d, 1, 2), up(0, c.d, 2, 2), up(0, c.d, 3, 2)}}
		if res := eval(t, r, in, 0); res.ExprOverflow != c.want || !res.Overflow {
			t.Errorf("three overflows of diff %d: expression overflows %d, overflow %v; want %d, true", c.d, res.ExprOverflow, res.Overflow, c.want)
		}
	}
}

// TestAReducedViewsChangesCountTheEvaluatedTime: a reduced view's row
// may change once each way at each input time up to and including the
// one evaluated, so a join of it with a row of diff M may sum 2·times·M:
// with updates at 0 and 1, evaluated at 1, that is 4M, past int64 for
// M = MaxInt64/3 (it was 2M, counting the times before the one
// evaluated).
func TestAReducedViewsChangesCountTheEvaluatedTime(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Views: []plan.View{{Name: "v", Query: &plan.Query{From: []plan.From{{As: "b", Collection: "b"}}, Project: []string{"b.k"},
			Reduce: &plan.Reduce{GroupBy: []string{"b.k"}, Aggregates: []plan.Aggregate{{Name: "n", Fn: plan.Count}}}}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "v", Collection: "v"}}, On: [][]string{{"a.k", "v.b_k"}},
			Project: []string{"a.k", "v.n"}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, math.MaxInt64/3, 1)}, "b": {up(0, 1, 1), up(1, 1, 1)}}
	if res := eval(t, r, in, 1); !res.MayOverflow || res.Overflow {
		t.Fatalf("at 1: may overflow %v, overflow %v; want true, false\n%s", res.MayOverflow, res.Overflow, res)
	}
	if res := eval(t, r, in, 0); res.MayOverflow {
		t.Fatalf("at 0 (one time, 2M): may overflow\n%s", res)
	}
}

// TestARowAFilterDropsDoesNotOverflow: a joined row whose count leaves
// int64 (2^32 · 2^32) is no overflow when the query's filter drops it.
func TestARowAFilterDropsDoesNotOverflow(t *testing.T) {
	p := &plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Query: plan.Query{From: []plan.From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}}, On: [][]string{{"a.k", "b.k"}},
			Filters: []string{"a.k > 5"}, Project: []string{"a.k"}},
	}
	r := resolve(t, p)
	in := Inputs{"a": {up(0, 1<<32, 1)}, "b": {up(0, 1<<32, 1)}}
	if res := eval(t, r, in, 0); res.Overflow || len(res.Rows) != 0 {
		t.Fatalf("the dropped row: overflow %v\n%s", res.Overflow, res)
	}
	in = Inputs{"a": {up(0, 1<<32, 6)}, "b": {up(0, 1<<32, 6)}}
	if res := eval(t, r, in, 0); !res.Overflow {
		t.Fatalf("the kept row: no overflow\n%s", res)
	}
}
