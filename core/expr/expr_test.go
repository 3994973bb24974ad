package expr

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

var scope = []Ref{{Alias: "p", Column: "a"}, {Alias: "p", Column: "b"}, {Column: "c"}}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"", "empty expression"},
		{"1.5", "float literal 1.5 not allowed"},
		{"0x10", "literal 0x10 is not a decimal integer"},
		{"1_000", "literal 1_000 is not a decimal integer"},
		{"07", "leading zero"},
		{"'a'", "char literal"},
		{`"s"`, "string literal"},
		{"9223372036854775808", "out of range"},
		{"-9223372036854775808", "out of range"},
		{"f(1)", "function calls not allowed"},
		{"a[1]", "indexing not allowed"},
		{"a & b", "operator & not allowed"},
		{"a << 1", "operator << not allowed"},
		{"^a", "unary operator ^ not allowed"},
		{"+a", "unary operator + not allowed"},
		{"a.b.c", "a ref is alias.column or column"},
		{"s.p.cust + 1", "a query view's output p.cust is its column p_cust: write s.p_cust"},
		{"(a.b).c", "a ref is alias.column or column"},
		{"a +", "expected operand"},
		{"*a", "pointer dereference not allowed"},
		{"a; b", "expected 'EOF'"},
		{"[]int", "column 1: a type not allowed"},
		{"map[int]int", "column 1: a type not allowed"},
		{"interface{}", "column 1: a type not allowed"},
		{"1\n- 2", "expected 'EOF', found '-' (a line break after a column, a literal or ')' ends the expression"},
		{"(p.a\r\n  + 1)", "found newline (a line break"},
		{"p.a +\n1.5", "float literal 1.5 not allowed (only decimal integers)"},
	} {
		_, err := Parse(tc.src)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want a syntax error containing %q", tc.src, err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), "expression "+`"`) {
			t.Errorf("Parse(%q) = %v: does not name the expression", tc.src, err)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	for _, src := range []string{"0", "9223372036854775807", "-9223372036854775807 - 1", "p.a", "c",
		"(p.a + 1) * -c % 3", "!p.a || p.b && c", "p.a == p.b != c", "p.a < p.b <= c > 1 >= 2"} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%q) = %v", src, err)
		}
	}
}

// Refs lists each distinct column once, in the order of its first
// occurrence, also past the few that a parse compares one by one (beyond
// them it indexes the refs it has seen).
func TestRefsOfManyColumnsInFirstOrder(t *testing.T) {
	var src strings.Builder
	var want []Ref
	for i := range 200 {
		r := Ref{Alias: fmt.Sprintf("p%d", i%7), Column: fmt.Sprintf("c%d", i)}
		want = append(want, r)
		fmt.Fprintf(&src, "%s + ", r)
		if i%3 == 0 {
			fmt.Fprintf(&src, "%s + ", want[i/2]) // an earlier one again
		}
	}
	src.WriteString("p0.c0")
	e, err := Parse(src.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Refs(); !slices.Equal(got, want) {
		t.Fatalf("Refs: %d refs, want %d: %v", len(got), len(want), got)
	}
}

func TestCheckNamesTheColumn(t *testing.T) {
	e := MustParse("p.a + l.qtx")
	err := Check(e, scope)
	if !errors.Is(err, ErrUnknownColumn) || !strings.Contains(err.Error(), "unknown column l.qtx") ||
		!strings.Contains(err.Error(), `"p.a + l.qtx"`) || !strings.Contains(err.Error(), "column 7") {
		t.Fatalf("Check = %v", err)
	}
	// A bare ref does not match an aliased column.
	if err := Check(MustParse("a"), scope); !errors.Is(err, ErrUnknownColumn) {
		t.Fatalf("Check(a) = %v", err)
	}
	if err := Check(MustParse("p.a * c"), scope); err != nil {
		t.Fatal(err)
	}
}

func TestEval(t *testing.T) {
	const mn, mx = math.MinInt64, math.MaxInt64
	for _, tc := range []struct {
		src     string
		row     [3]int64
		want    int64
		wantErr error
	}{
		{"p.a + p.b * c", [3]int64{1, 2, 3}, 7, nil},
		{"(p.a + p.b) * c", [3]int64{1, 2, 3}, 9, nil},
		{"p.a / p.b", [3]int64{-7, 2, 0}, -3, nil},
		{"p.a % p.b", [3]int64{-7, 2, 0}, -1, nil},
		{"p.a % -1", [3]int64{mn, 0, 0}, 0, nil},
		{"p.a % p.b", [3]int64{mn, -1, 0}, 0, nil},
		{"p.a / -1", [3]int64{mn, 0, 0}, 0, ErrOverflow},
		{"p.a / p.b", [3]int64{1, 0, 0}, 0, ErrDivisionByZero},
		{"p.a % p.b", [3]int64{1, 0, 0}, 0, ErrDivisionByZero},
		{"p.a + 1", [3]int64{mx, 0, 0}, 0, ErrOverflow},
		{"p.a - 1", [3]int64{mn, 0, 0}, 0, ErrOverflow},
		{"-p.a", [3]int64{mn, 0, 0}, 0, ErrOverflow},
		{"-p.a", [3]int64{mx, 0, 0}, -mx, nil},
		{"p.a * p.b", [3]int64{1 << 32, 1 << 31, 0}, 0, ErrOverflow},
		{"p.a * p.b", [3]int64{-(1 << 32), 1 << 31, 0}, mn, nil},
		{"p.a * p.b", [3]int64{mn, -1, 0}, 0, ErrOverflow},
		{"-9223372036854775807 - 1", [3]int64{}, mn, nil},
		// First error in evaluation order wins: left operand first.
		{"p.a / p.b + (c + 9223372036854775807)", [3]int64{1, 0, 1}, 0, ErrDivisionByZero},
		{"(c + 9223372036854775807) + p.a / p.b", [3]int64{1, 0, 1}, 0, ErrOverflow},
		// && and || evaluate both sides.
		{"0 && p.a / p.b", [3]int64{1, 0, 0}, 0, ErrDivisionByZero},
		{"1 || p.a / p.b", [3]int64{1, 0, 0}, 0, ErrDivisionByZero},
		{"p.a && c", [3]int64{5, 0, -2}, 1, nil},
		{"p.a || c", [3]int64{0, 0, 0}, 0, nil},
		{"!p.a", [3]int64{0, 0, 0}, 1, nil},
		{"!p.a", [3]int64{-3, 0, 0}, 0, nil},
		{"p.a < p.b < c", [3]int64{3, 2, 1}, 1, nil}, // (3<2)=0 < 1
		{"p.a == p.b", [3]int64{2, 2, 0}, 1, nil},
		{"p.a != p.b", [3]int64{2, 2, 0}, 0, nil},
		{"p.a >= p.b", [3]int64{2, 2, 0}, 1, nil},
		{"p.a > p.b", [3]int64{2, 2, 0}, 0, nil},
		{"p.a <= p.b", [3]int64{3, 2, 0}, 0, nil},
	} {
		got, err := Eval(MustParse(tc.src), scope, tc.row[:])
		if err != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("%s on %v = %d, %v; want %d, %v", tc.src, tc.row, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCheckedHelpers(t *testing.T) {
	const mn, mx = math.MinInt64, math.MaxInt64
	for _, tc := range []struct {
		a, b     int64
		add, mul bool
	}{
		{mx, 1, false, true}, {mx, 0, true, true}, {mn, -1, false, false}, {mn, 1, true, true},
		{1 << 31, 1 << 32, true, false}, {-(1 << 31), 1 << 32, true, true}, {mx, -1, true, true},
		{3037000500, 3037000500, true, false}, {3037000499, 3037000499, true, true}, {-1, -1, true, true},
	} {
		if _, ok := Add(tc.a, tc.b); ok != tc.add {
			t.Errorf("Add(%d, %d) ok = %v", tc.a, tc.b, ok)
		}
		if p, ok := Mul(tc.a, tc.b); ok != tc.mul || (ok && p != tc.a*tc.b) {
			t.Errorf("Mul(%d, %d) = %d, %v", tc.a, tc.b, p, ok)
		}
	}
	if _, ok := Sub(mn, 1); ok {
		t.Error("Sub(min, 1) fits")
	}
	if _, ok := Neg(mn); ok {
		t.Error("Neg(min) fits")
	}
}

// TestErrorOfLongExpression checks that an error about an expression of
// megabytes quotes only a window around the fault, with its column and
// the expression's length, and cuts a literal the message quotes.
func TestErrorOfLongExpression(t *testing.T) {
	long := strings.Repeat("x", 800000) + " + 2.5 + " + strings.Repeat("y", 800000)
	_, err := Parse(long)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if len(msg) > 300 || !strings.Contains(msg, "column 800004: float literal 2.5 not allowed") || !strings.Contains(msg, `xx + 2.5 + yy`) || !strings.Contains(msg, "(1600009 bytes)") {
		t.Errorf("error of %d bytes: %.400s", len(msg), msg)
	}
	lit := "x + " + strings.Repeat("9", 1<<20)
	_, err = Parse(lit)
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "is out of range") {
		t.Errorf("error of a huge literal (%d bytes): %.600v", len(err.Error()), err)
	}
	// A short expression is quoted whole.
	if _, err := Parse("a.x / 2.5"); err == nil || err.Error() != `expression "a.x / 2.5": column 7: float literal 2.5 not allowed (only decimal integers)` {
		t.Errorf("short expression: %v", err)
	}
}
