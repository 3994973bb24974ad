package reference

import (
	"errors"
	"fmt"
	"go/parser"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLongChainsEvaluate checks that the reference takes an expression
// of any number of binary operators at one level, as core/expr does
// (docs/spec.md "Expressions"), though go/parser stops at 100,000, and
// still refuses what go/parser refuses there.
func TestLongChainsEvaluate(t *testing.T) {
	const n = 110000
	vals := map[string]int64{"a": 1, "p.x": 3}
	for _, tc := range []struct {
		src  string
		want int64
	}{
		{"a" + strings.Repeat(" + a", n-1), n},
		{"a" + strings.Repeat(" - a", n-1), 2 - n},
		{"p.x" + strings.Repeat(" && p.x", n-1), 1},
		{"a * p.x" + strings.Repeat(" + a * p.x", n/2-1), 3 * n / 2},
		{"-a * p.x" + strings.Repeat(" - (a + -a + a) * 2 % 7 / 1", n/2-1), -3 - 2*(n/2-1)},
		{"a" + strings.Repeat(" + a", n-1) + " == " + "a" + strings.Repeat(" + a", n-1), 1},
	} {
		got, err := EvalExpr(tc.src, vals)
		if err != nil || got != tc.want {
			t.Errorf("%.40q... (%d bytes) = %d, %v; want %d", tc.src, len(tc.src), got, err, tc.want)
		}
	}
	for _, tail := range []string{" + 2.5", " + f(a)", "\n- a", " + ((a)"} {
		src := "a" + strings.Repeat(" + a", n-1) + tail
		if _, err := EvalExpr(src, vals); !errors.Is(err, ErrNotAccepted) {
			t.Errorf("%d terms then %q: %v, want it not accepted", n, tail, err)
		}
	}
}

// TestDeepNestingEvaluates checks that the reference takes parentheses
// and unary operators nested as deep as docs/spec.md "Expressions" lets
// them, 100,000 levels, as core/expr does, though go/parser stops short
// of it (at 99,999 parentheses, or 50,000 right operands in
// parentheses), and refuses one level more.
func TestDeepNestingEvaluates(t *testing.T) {
	const n = 100000
	vals := map[string]int64{"a": 1, "p.x": 3}
	for _, tc := range []struct {
		name   string
		nested func(n int) string
		want   int64
	}{
		{"parentheses", func(n int) string { return strings.Repeat("(", n) + "a" + strings.Repeat(")", n) }, 1},
		{"minus", func(n int) string { return strings.Repeat("- ", n) + "a" }, 1},
		{"not", func(n int) string { return strings.Repeat("!", n) + "p.x" }, 1},
		{"right operands", func(n int) string { return strings.Repeat("a - (", n) + "a" + strings.Repeat(")", n) }, 1},
		{"left operands", func(n int) string { return strings.Repeat("(", n) + "a" + strings.Repeat(" - a)", n) }, 1 - n},
		{"minus of parentheses", func(n int) string {
			return strings.Repeat("-", n%2) + strings.Repeat("-(", n/2) + "a" + strings.Repeat(")", n/2)
		}, 1},
		{"chain of right operands", func(n int) string {
			return "a * p.x + " + strings.Repeat("a * (a + ", n) + "a" + strings.Repeat(")", n) + " - a"
		}, n + 3},
	} {
		if testing.Short() && tc.name != "right operands" {
			continue // each shape takes a fraction of a second
		}
		src := tc.nested(n)
		if got, err := EvalExpr(src, vals); err != nil || got != tc.want {
			t.Errorf("%s %d deep = %d, %.200v; want %d", tc.name, n, got, err, tc.want)
		}
		if _, err := EvalExpr(tc.nested(n+1), vals); !errors.Is(err, ErrNotAccepted) {
			t.Errorf("%s %d deep: %.200v, want it not accepted", tc.name, n+1, err)
		}
	}
}

// TestLongReaderReadsAsGoParser reads random expressions, well formed
// and with a token inserted, removed or replaced, with the reader
// parseLong takes beyond go/parser's bound, every part of them read so
// however short, and wants what go/parser reads: the same expressions
// accepted, and the same value or error on a row.
func TestLongReaderReadsAsGoParser(t *testing.T) {
	defer func(n int) { shortPart = n }(shortPart)
	shortPart = 0
	rng := rand.New(rand.NewPCG(5, 6))
	ops := []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
	others := []string{"a", "p.x", "0", "07", "2.5", "(", ")", "+", "-", "!", "*", "<<", "&", "--", ".", "x.y.z", "f(", "[", ";", "\n", "/*\n*/", "=", ","}
	var gen func(depth int) []string
	gen = func(depth int) []string {
		if depth == 0 || rng.IntN(4) == 0 {
			return []string{[]string{"a", "p.x", "1", "0", "3", "9223372036854775807"}[rng.IntN(6)]}
		}
		switch rng.IntN(5) {
		case 0:
			return append([]string{[]string{"-", "!"}[rng.IntN(2)]}, gen(depth-1)...)
		case 1:
			return append(append([]string{"("}, gen(depth-1)...), ")")
		}
		toks := gen(depth - 1)
		for range 1 + rng.IntN(4) {
			toks = append(append(toks, ops[rng.IntN(len(ops))]), gen(depth-1)...)
		}
		return toks
	}
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for range n {
		toks := gen(4)
		if rng.IntN(2) == 0 {
			i := rng.IntN(len(toks) + 1)
			switch o := others[rng.IntN(len(others))]; {
			case i == len(toks):
				toks = append(toks, o)
			case rng.IntN(3) == 0:
				toks = append(toks[:i], toks[i+1:]...)
			default:
				toks[i] = o
			}
		}
		src := strings.Join(toks, " ")
		want, werr := parser.ParseExpr(src)
		if werr == nil {
			werr = accepted(want)
		}
		got, gerr := readLong(src, errors.New("not one expression"))
		if gerr == nil {
			gerr = accepted(got)
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: go/parser: %v; longReader: %v", src, werr, gerr)
		}
		if werr != nil {
			continue
		}
		for _, row := range []scope{{"a": 1, "p.x": 0}, {"a": -7, "p.x": 3}, {"a": math.MinInt64, "p.x": -1}} {
			wv, we := evalBig(want, row)
			gv, ge := evalBig(got, row)
			if fmt.Sprint(we) != fmt.Sprint(ge) || we == nil && wv.Cmp(gv) != 0 {
				t.Fatalf("%q on %v: go/parser's tree gives %v, %v; longReader's %v, %v", src, row, wv, we, gv, ge)
			}
		}
	}
}
