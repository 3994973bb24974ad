package expr

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestChainsReadAsGoParser checks that parseChains accepts what go/parser
// and the subset's rules accept (parseGo), with the same tree and refs,
// and refuses the rest, Parse then giving go/parser's message: on
// fixed expressions and on random sequences of the subset's tokens and of
// others.
func TestChainsReadAsGoParser(t *testing.T) {
	srcs := []string{
		"a", "p.x", "1", "a + b * c - d / e % f", "a == b == c", "a < b && c >= d || !e",
		"-a - -b", "!!a", "(a + b) * (c - (d))", "a -\n b", "a\n- b", "a +", "(a", "a)", "a b",
		"2.5", "0x10", "07", "1_000", "9223372036854775808", "-9223372036854775807 - 1",
		"a.b.c", "(a).b", "f(a)", "a[1]", "a{}", "*a", "&a", "^a", "+a", "a << 1", "a | b", "a &^ b",
		"a = b", "a; b", "a /* c */ + b", "a // c", "a // c\n", "a\n", "'c'", `"s"`, "a #", "a.1",
		"a .\nb", "a . b", "(a\n+ b)", "func() {}", "[]int{}", "a.(int)", "<-a", "a <- b", "~a",
		"_", "a.p_x", "map", "a + map", "x.y.z + 1", "((((a))))", "- ( - a )", "a + b; ", "a\n\n",
	}
	frags := []string{"a", "p.x", "1", "0", "07", "2.5", "9223372036854775808", "(", ")", "+", "-", "*", "/", "%",
		"==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "<<", "|", "^", "&", "f(", "[", "]", ".", "\n", " ",
		`"s"`, "'c'", "#", "x.y.z", "=", ";", "/*c*/", "//c\n", "{", "}", "_", "map"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50000 {
		var b strings.Builder
		for range 1 + rng.IntN(10) {
			b.WriteString(frags[rng.IntN(len(frags))])
			if rng.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		srcs = append(srcs, b.String())
	}
	// Well-formed expressions, to compare trees.
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(4) == 0 {
			return []string{"a", "p.x", "1", "12", "q.y"}[rng.IntN(5)]
		}
		switch rng.IntN(4) {
		case 0:
			return []string{"-", "!"}[rng.IntN(2)] + gen(depth-1)
		case 1:
			return "(" + gen(depth-1) + ")"
		}
		ops := []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
		s := gen(depth - 1)
		for range 1 + rng.IntN(4) {
			s += " " + ops[rng.IntN(len(ops))] + " " + gen(depth-1)
		}
		return s
	}
	for range 20000 {
		srcs = append(srcs, gen(4))
	}
	for _, src := range srcs {
		if strings.TrimSpace(src) == "" {
			continue
		}
		want, werr := parseGo(src)
		got, gerr := parseChains(src)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: parseChains: %v; go/parser: %v", src, gerr, werr)
		}
		if werr == nil {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: parseChains and go/parser read different trees", src)
			}
			continue
		}
		if _, err := Parse(src); err == nil || err.Error() != werr.Error() || !errors.Is(err, ErrSyntax) {
			t.Fatalf("%q: Parse: %v, want go/parser's %v", src, err, werr)
		}
	}
}

// chain returns n terms joined by op, each term's text term(i).
func chain(n int, op string, term func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" " + op + " ")
		}
		b.WriteString(term(i))
	}
	return b.String()
}

// TestLongChainIsNoNesting checks that binary operators at one level are
// read, checked and evaluated however many there are: go/parser refused
// a sum of 100,000 terms as nested too deeply.
func TestLongChainIsNoNesting(t *testing.T) {
	const n = 200000
	scope := []Ref{{Column: "a"}, {Alias: "p", Column: "x"}}
	row := []int64{1, 3}
	for _, tc := range []struct {
		src  string
		want int64
	}{
		{chain(n, "+", func(int) string { return "a" }), n},
		{chain(n, "-", func(int) string { return "a" }), 2 - n},
		{chain(n, "&&", func(int) string { return "p.x" }), 1},
		// Two precedences: n/2 products of a and p.x, summed.
		{chain(n/2, "+", func(int) string { return "a * p.x" }), 3 * n / 2},
		// Chains inside parentheses, and a unary operator in each term.
		{chain(n/4, "-", func(i int) string { return "(" + chain(3, "+", func(int) string { return "-a" }) + ")" }), 3*n/4 - 6},
	} {
		e, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%.40q... (%d bytes): %v", tc.src, len(tc.src), err)
		}
		if v, err := Eval(e, scope, row); err != nil || v != tc.want {
			t.Errorf("%.40q... (%d bytes) = %d, %v; want %d", tc.src, len(tc.src), v, err, tc.want)
		}
	}
	// An unknown column at the end of a long chain is named at its column.
	src := chain(n, "+", func(int) string { return "a" }) + " + p.y"
	e, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var ee *Error
	if err := Check(e, scope); !errors.As(err, &ee) || ee.Offset != len(src)-3 || !strings.Contains(ee.Msg, "unknown column p.y") {
		t.Errorf("p.y after %d terms: %v, want unknown column p.y at column %d", n, err, len(src)-2)
	}
	// A mistake at the end of a long chain is named there.
	for _, tc := range []struct{ tail, want string }{
		{" + 2.5", "float literal 2.5 not allowed (only decimal integers)"},
		{" +", "expected operand, found 'EOF'"},
		{" + f(a)", "function calls not allowed"},
		{" a", "expected 'EOF', found a"},
	} {
		src := chain(n, "+", func(int) string { return "a" }) + tc.tail
		_, err := Parse(src)
		if !errors.As(err, &ee) || ee.Msg != tc.want || !errors.Is(err, ErrSyntax) {
			t.Errorf("%d terms then %q: %v, want %s", n, tc.tail, err, tc.want)
		}
	}
}

// TestNestingLimit checks that parentheses and unary operators nest at
// most MaxNesting deep, the error naming the column of the first too
// many.
func TestNestingLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nested func(n int) string
	}{
		{"parentheses", func(n int) string { return strings.Repeat("(", n) + "a" + strings.Repeat(")", n) }},
		{"minus", func(n int) string { return strings.Repeat("- ", n) + "a" }},
		{"right operands", func(n int) string { return strings.Repeat("a - (", n) + "a" + strings.Repeat(")", n) }},
	} {
		if _, err := Parse(tc.nested(MaxNesting)); err != nil {
			t.Errorf("%s %d deep: %v", tc.name, MaxNesting, err)
		}
		src := tc.nested(MaxNesting + 1)
		_, err := Parse(src)
		var ee *Error
		want := "parentheses and unary operators nest more than " + strconv.Itoa(MaxNesting) + " deep"
		if !errors.As(err, &ee) || ee.Msg != want || !errors.Is(err, ErrSyntax) || ee.Offset != strings.LastIndexAny(src, "(-") {
			t.Errorf("%s %d deep: %v, want %s at the last level", tc.name, MaxNesting+1, err, want)
		}
	}
}
