package expr_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/reference"
)

var fuzzScope = []expr.Ref{{Column: "x"}, {Column: "y"}, {Alias: "t", Column: "z"}}

// FuzzEval compares expr's parser, checker and chunked evaluator with the
// reference's independent math/big evaluator over go/ast: the same
// expressions are accepted, and every row gives the same value or the same
// error. Seeds are in testdata/fuzz/FuzzEval; run with
// go test -fuzz FuzzEval ./core/expr.
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"x + y * t.z", "x / y", "x % y", "-x", "!x", "x && y || !t.z", "x < y == (t.z >= 1)",
		"x * y * t.z", "(x - y) / (t.z % 3)", "-9223372036854775807 - 1", "9223372036854775807 + x",
		"(-x * -y) + 3", "(x + 1) * (y + 1) - 1",
	} {
		f.Add(s, int64(7), int64(-3), int64(0))
	}
	// More distinct literals than get a register of their own: the rest
	// are filled by instructions.
	many := "x"
	for i := range 100 {
		many += fmt.Sprintf(" + y / %d * %d", i+1, 1000+i)
	}
	f.Add(many+" - t.z % 1099", int64(7), int64(-3), int64(0))
	f.Add(many+" / t.z", int64(math.MaxInt64), int64(math.MinInt64), int64(0))
	f.Fuzz(func(t *testing.T, src string, a, b, c int64) {
		e, perr := expr.Parse(src)
		_, rerr := reference.EvalExpr(src, map[string]int64{"x": a, "y": b, "t.z": c})
		if perr != nil {
			if !errors.Is(rerr, reference.ErrNotAccepted) {
				t.Fatalf("%q: expr refuses (%v), reference gives %v", src, perr, rerr)
			}
			return
		}
		if cerr := expr.Check(e, fuzzScope); cerr != nil {
			// The reference stops at the first error in evaluation order,
			// so it may report an evaluation error before the unknown ref.
			if rerr == nil {
				t.Fatalf("%q: expr refuses (%v), reference evaluates", src, cerr)
			}
			return
		}
		if errors.Is(rerr, reference.ErrNotAccepted) {
			t.Fatalf("%q: expr accepts, reference refuses: %v", src, rerr)
		}
		// The expression twice, as two maps: the second runs in registers
		// the first has freed.
		m, err := expr.NewMFP(expr.MFPSpec{Input: fuzzScope, Maps: []expr.Map{{Name: "v", Expr: e}, {Name: "w", Expr: e}},
			Project: []expr.Ref{{Column: "v"}, {Column: "w"}}})
		if err != nil {
			t.Fatal(err)
		}
		// Three rows, the operands rotated, evaluated as one chunk.
		rows := []int64{a, b, c, b, c, a, c, a, b}
		var out expr.Output
		m.NewEvaluator().Eval(rows, &out)
		kept, erred := 0, 0
		for i := range 3 {
			want, werr := reference.EvalExpr(src, map[string]int64{"x": rows[3*i], "y": rows[3*i+1], "t.z": rows[3*i+2]})
			if erred < len(out.Erred) && out.Erred[erred] == i {
				if got := out.Codes[erred].Err(); got.Error() != errMsg(werr) {
					t.Fatalf("%q on %v: expr errs %v, reference gives %d, %v", src, rows[3*i:3*i+3], got, want, werr)
				}
				erred++
				continue
			}
			if werr != nil || out.Kept[kept] != i || out.Rows[2*kept] != want || out.Rows[2*kept+1] != want {
				t.Fatalf("%q on %v: expr gives %d, reference %d, %v", src, rows[3*i:3*i+3], out.Rows[2*kept:2*kept+2], want, werr)
			}
			kept++
		}
	})
}

func errMsg(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
