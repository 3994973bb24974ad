package reference

import (
	"errors"
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
