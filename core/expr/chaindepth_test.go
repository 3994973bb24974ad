package expr

import (
	"errors"
	"testing"
)

// TestAChainsUnaryAndParenthesizedTermsNestOnlyAsDeepAsEach: a unary
// operator or a parenthesis is one level of nesting for its own operand
// and ends with it, so a chain of more than MaxNesting terms, each
// negated, notted or parenthesized, nests one level deep. go/parser,
// which counts each operator of a chain as a level, refuses chains this
// long, so their reading is the chain reader's alone.
func TestAChainsUnaryAndParenthesizedTermsNestOnlyAsDeepAsEach(t *testing.T) {
	const n = MaxNesting + 2
	scope := []Ref{{Column: "a"}}
	row := []int64{2}
	for _, tc := range []struct {
		name string
		src  string
		want int64
	}{
		{"negated", chain(n, "+", func(int) string { return "-a" }), -2 * n},
		{"notted", chain(n, "+", func(int) string { return "!a" }), 0},
		{"parenthesized", chain(n, "+", func(int) string { return "(a)" }), 2 * n},
	} {
		e, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v, err := Eval(e, scope, row); err != nil || v != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, v, err, tc.want)
		}
	}
}

// TestALongChainNamesAScannersErrorAsAShortOneDoes: where the scanner
// refuses a token (an unterminated literal, an illegal character) the
// chain reader, which alone reads chains longer than go/parser's bound,
// names the scanner's error, as Parse does for a short expression,
// rather than its own refusal of the token that follows at the same
// column.
func TestALongChainNamesAScannersErrorAsAShortOneDoes(t *testing.T) {
	long := chain(MaxNesting+2, "+", func(int) string { return "a" })
	for _, tail := range []string{" + 'x", " + \"x", " + `x", " + 'xy'", " + @"} {
		_, shortErr := Parse("a" + tail)
		_, longErr := Parse(long + tail)
		var s, l *Error
		if !errors.As(shortErr, &s) || !errors.As(longErr, &l) || s.Msg != l.Msg {
			t.Errorf("%q: short %v, long %v; want one message", tail, shortErr, longErr)
		}
	}
}
