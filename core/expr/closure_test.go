package expr_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
)

// genExpr returns a random expression over refs.
func genExpr(rng *rand.Rand, refs []string, depth int) string {
	if depth == 0 || rng.IntN(4) == 0 {
		switch rng.IntN(3) {
		case 0:
			return []string{"0", "1", "2", "3", "9223372036854775807", "(-9223372036854775807 - 1)"}[rng.IntN(6)]
		default:
			return refs[rng.IntN(len(refs))]
		}
	}
	if rng.IntN(5) == 0 {
		return []string{"-", "!"}[rng.IntN(2)] + "(" + genExpr(rng, refs, depth-1) + ")"
	}
	ops := []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
	return "(" + genExpr(rng, refs, depth-1) + " " + ops[rng.IntN(len(ops))] + " " + genExpr(rng, refs, depth-1) + ")"
}

// TestClosureAgainstReference runs random maps and filters through the
// plan's MFPSpec and the chunked evaluator, and through the reference
// evaluator, and compares rows and errors with counts: the order of maps,
// filters and errors (E1, E2) is the spec's in both.
func TestClosureAgainstReference(t *testing.T) {
	seed := uint64(1)
	rng := rand.New(rand.NewPCG(seed, 99))
	vals := []int64{0, 1, -1, 2, 5, 7, math.MaxInt64, math.MinInt64, 1 << 40}
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		refs := []string{"x.a", "x.b"}
		q := plan.Query{From: []plan.From{{As: "x", Collection: "x"}}}
		for i := range rng.IntN(3) {
			name := fmt.Sprintf("m%d", i)
			q.Maps = append(q.Maps, plan.Map{Name: name, Expr: genExpr(rng, refs, 3)})
			refs = append(refs, name)
		}
		for range rng.IntN(3) {
			q.Filters = append(q.Filters, genExpr(rng, refs, 2))
		}
		p := &plan.Plan{Inputs: []plan.Input{{Name: "x", Columns: []string{"a", "b"}}}, Query: q}
		r, err := plan.Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		var ups []reference.Update
		var rows []int64
		for range 2 * expr.Chunk {
			a, b := vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
			if rng.IntN(3) == 0 {
				b = rng.Int64N(21) - 10
			}
			ups = append(ups, reference.Update{Diff: 1, Row: []int64{a, b}})
			rows = append(rows, a, b)
		}
		want, err := reference.Eval(r, reference.Inputs{"x": ups}, 0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := expr.NewMFP(r.Query.MFP)
		if err != nil {
			t.Fatal(err)
		}
		var out expr.Output
		m.NewEvaluator().Eval(rows, &out)
		got := &reference.Result{Columns: r.Query.Output}
		counts := map[string]int64{}
		arity := m.OutputArity()
		for k := range out.Kept {
			row := out.Rows[k*arity : (k+1)*arity]
			key := fmt.Sprint(row)
			if _, ok := counts[key]; !ok {
				got.Rows = append(got.Rows, reference.Row{Values: slices.Clone(row)})
			}
			counts[key]++
		}
		for i := range got.Rows {
			got.Rows[i].Diff = counts[fmt.Sprint(got.Rows[i].Values)]
		}
		errs := map[string]int64{}
		for _, c := range out.Codes {
			errs[c.Err().Error()]++
		}
		for msg, n := range errs {
			got.Errors = append(got.Errors, reference.Error{Message: msg, Diff: n})
		}
		if d := reference.Compare(want, got); d != nil {
			t.Fatalf("seed %d round %d: maps %v filters %v:\n%s", seed, round, q.Maps, q.Filters, strings.Join(d, "\n"))
		}
	}
}
