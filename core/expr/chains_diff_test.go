package expr

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLongChainMistakeNamedAsInShort checks that a mistake after a chain
// too long for go/parser's nesting bound, which the reader then names
// itself, is named as go/parser names it after a short one: the same
// message (a line break's hint among it) at the same place.
func TestLongChainMistakeNamedAsInShort(t *testing.T) {
	long := chain(100000, "+", func(int) string { return "a" })
	for _, tail := range []string{
		"\n- a", "\n+ a", "\n! a", "\n(a)", "\n[a]", "\n.b", "\n== a", "\n2.5", "\n\n- a", " // c\n- a",
		" + (a\n+ b)", " + (a\n)", " +\n", " + a.p.x", " + a.p.x.y", " + a.b.c(d)", " + - a.p.x",
		" + f(a)", " + a.b(c)", " + (a)(b)", " + (a + b)(c)", " + -f(a)", " + a[1]", " + (a)[1]",
		" + (a).b", " + 1 .b", " + 2.5", " +", " + a b", " + a << 1", " + 0x1F", " + 07",
		" + 9223372036854775808", " + +a", " + *a", " + a; b",
	} {
		if testing.Short() && len(tail)%3 != 0 {
			continue // each long one takes a tenth of a second
		}
		short := "a" + tail
		_, serr := Parse(short)
		_, lerr := Parse(long + tail)
		var s, l *Error
		if !errors.As(serr, &s) || !errors.As(lerr, &l) {
			t.Errorf("%q: short %v, long %v; want both refused", tail, serr, lerr)
			continue
		}
		if l.Msg != s.Msg || l.Offset-len(long) != s.Offset-1 {
			t.Errorf("%q after 100,000 terms: column %d: %s;\nafter one: column %d: %s", tail,
				l.Offset-len(long)+2, l.Msg, s.Offset+1, s.Msg)
		}
	}
	// A line break's hint is kept where the reader meets a scanner's
	// error, and the hint is not given where no line break is near.
	for _, tail := range []string{" + 'c", " + a /* c"} {
		_, err := Parse(long + tail)
		if err == nil || strings.Contains(err.Error(), "line break") {
			t.Errorf("%q after 100,000 terms: %v", tail, err)
		}
	}
}

// FuzzChainsAgreeWithGoParser compares the reader with go/parser
// (parseGo), as Parse did alone before it: the same inputs accepted, the
// same trees and refs, go/parser's message where both refuse; and the
// register program compiled with the left operands walked iteratively
// with the one recursion compiled, which Eval and the MFPs run. Run with
// go test -fuzz FuzzChainsAgreeWithGoParser ./core/expr.
func FuzzChainsAgreeWithGoParser(f *testing.F) {
	for _, s := range trickyExprs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return // long inputs are the deterministic tests' part
		}
		agreeWithGoParser(t, src)
	})
}

// TestChainsAgreeWithGoParserRandom runs FuzzChainsAgreeWithGoParser's
// checks on the tricky inputs, on random well-formed expressions of
// every operator, unary operators, parentheses, line breaks and comments
// between tokens, and on those with a token inserted, removed or
// replaced.
func TestChainsAgreeWithGoParserRandom(t *testing.T) {
	for _, s := range trickyExprs {
		agreeWithGoParser(t, s)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	n := 20000
	if testing.Short() {
		n = 4000
	}
	for range n {
		toks := genTokens(rng, 4)
		agreeWithGoParser(t, joinTokens(rng, toks))
		// One mistake, or a change that keeps the expression well formed.
		i := rng.IntN(len(toks) + 1)
		mutated := slices.Clone(toks)
		switch rng.IntN(3) {
		case 0:
			mutated = slices.Insert(mutated, i, mutations[rng.IntN(len(mutations))])
		case 1:
			if i < len(mutated) {
				mutated = slices.Delete(mutated, i, i+1)
			}
		case 2:
			if i < len(mutated) {
				mutated[i] = mutations[rng.IntN(len(mutations))]
			}
		}
		agreeWithGoParser(t, joinTokens(rng, mutated))
	}
}

var trickyExprs = []string{
	"a", "p.x", "1", "0", "a + b * c - d / e % f", "a - b - c", "a / b / c", "a % b * c", "a - -b", "a - - b", "a--b", "a-- b",
	"--a", "- -a", "a--", "a++", "a ++ b", "a + +b", "+a", "!a", "!!a", "!-a", "-!a", "- !a", "a - !b", "!a == b", "-a * b", "-a.b * -p.x",
	"a == b == c", "a < b < c", "a <= b >= c", "a != b != c", "a == b && c == d || e != f", "a || b && c", "a && b || c && d",
	"a < b == c > d", "!a < b", "a + b < c * d", "a == (b == c)", "a * (b + c)", "(a)", "((a))", "(((a + b)))", "((a) + (b))",
	"(-a)", "-(a)", "!(a)", "-(-(a))", "(a - b) - c", "a - (b - c)", "(a", "a)", "()", "(a))", "((a)", "a ()", "a(b)",
	"a +", "a + ", "+", "-", "!", "*", "a *", "* a", "a * * b", "a && && b", "a & b", "a &^ b", "a | b", "a ^ b", "a << b", "a >> b",
	"a=b", "a = b", "a==b", "a===b", "a=>b", "a=<b", "a<>b", "a !== b", "a:=b", "a+=b", "a ? b : c",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775807 - 1", "99999999999999999999",
	"007", "00", "0", "08", "0x1F", "0X1f", "0b101", "0o17", "1_000", "1__0", "1_", "1e3", "1E3", "2.5", ".5", "5.", "1i", "0x1p3",
	"'c'", `"s"`, "`r`", "a.b", "a .b", "a. b", "a\n.b", "a.\nb", "a . b", "a.b.c", "a.b.c.d", "(a).b", "a.(b)", "a.1", "1.a", "a.if",
	"if", "map", "func", "nil", "true", "_", "__", "_a1", "é", "αβ.γ", "ß + 1", "a\u00a0+ b", "\ufeffa", "a\ufeff", "a\x00", "a\xff",
	"a\n", "a\n\n", "\na", "\n\na\n\n", "a\n+ b", "a +\nb", "a\n- b", "a -\n b", "(a\n+ b)", "(a +\n b)", "a\r\n+ b", "a +\r\n b",
	"a\t+\tb", " a ", "a /* c */ + b", "a /* c\n */ + b", "a + /* c\n */ b", "a // c", "a // c\n", "a + // c\n b", "/* c */ a",
	"a /* c", "a */", "/**/a/**/", "a; b", "a;", ";a", "a,b", "a b", "a 1", "1 a", "a\tb", "[a]", "a[1]", "{a}", "a{}",
	"f(a)", "func() {}", "[]int{}", "a.(int)", "<-a", "a <- b", "~a", "&a", "^a", "a...", "a:b", "#", "$", "@", "a # b",
	"1 + 2 * 3 - 4 / 5 % 6 == 7 != 8 < 9 <= 10 > 11 >= 12 && 13 || 14",
	"- - - - - - - - a", "! ! ! ! a", "((((((((((a))))))))))", "a - (a - (a - (a - a)))", "a && (b || (c && (d || e)))",
}

// mutations are tokens inserted in or replaced into random expressions.
var mutations = []string{"a", "p.x", "1", "0", "07", "2.5", "0x1F", "9223372036854775808", "(", ")", "+", "-", "*", "/", "%",
	"==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "=", "<<", "&", "|", "^", "++", "--", ".", "x.y.z", "[", "]", ";", ",",
	"\n", "/*\n*/", "//c\n", "f(", "'c'", "_", "é"}

var binaryOps = []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}

// genTokens returns the tokens of a random well-formed expression.
func genTokens(rng *rand.Rand, depth int) []string {
	if depth == 0 || rng.IntN(4) == 0 {
		return []string{[]string{"a", "p.x", "1", "0", "12", "9223372036854775807", "q.y", "_"}[rng.IntN(8)]}
	}
	switch rng.IntN(5) {
	case 0:
		return append([]string{[]string{"-", "!"}[rng.IntN(2)]}, genTokens(rng, depth-1)...)
	case 1:
		return append(append([]string{"("}, genTokens(rng, depth-1)...), ")")
	}
	toks := genTokens(rng, depth-1)
	for range 1 + rng.IntN(5) {
		toks = append(toks, binaryOps[rng.IntN(len(binaryOps))])
		toks = append(toks, genTokens(rng, depth-1)...)
	}
	return toks
}

// joinTokens writes toks with random space between them: none (where
// that keeps them apart), blanks, a line break after an operator, or a
// comment.
func joinTokens(rng *rand.Rand, toks []string) string {
	var b strings.Builder
	for i, tok := range toks {
		if i > 0 {
			switch rng.IntN(12) {
			case 0:
				b.WriteString("\n ")
			case 1:
				b.WriteString("/* c */")
			case 2, 3, 4:
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString(tok)
	}
	return b.String()
}

// agreeWithGoParser checks src as FuzzChainsAgreeWithGoParser says.
func agreeWithGoParser(t *testing.T, src string) {
	t.Helper()
	if strings.TrimSpace(src) == "" {
		return
	}
	want, werr := parseGo(src)
	got, gerr := parseChains(src)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: the reader: %v; go/parser: %v", src, gerr, werr)
	}
	if werr != nil {
		if _, err := Parse(src); err == nil || err.Error() != werr.Error() || !errors.Is(err, ErrSyntax) {
			t.Fatalf("%q: Parse: %v, want go/parser's %v", src, err, werr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: the reader and go/parser read different trees", src)
	}
	if got.CanErr() != canErrRecursive(got.root) {
		t.Fatalf("%q: CanErr %v, the recursion %v", src, got.CanErr(), !got.CanErr())
	}
	for _, r := range got.refs {
		if findRef(got.root, r) != findRefRecursive(got.root, r) {
			t.Fatalf("%q: findRef of %s finds another node than the recursion", src, r)
		}
	}
	// Compiled twice, as two maps and a filter, in a scope that may lack
	// some of its refs.
	for _, scope := range [][]Ref{{{Column: "a"}, {Alias: "p", Column: "x"}, {Alias: "q", Column: "y"}, {Column: "_"}, {Column: "b"}}, {{Column: "a"}}} {
		iter, ierr := compileWith(scope, got, (*compiler).node)
		rec, rerr := compileWith(scope, got, (*compiler).nodeRecursive)
		if errString(ierr) != errString(rerr) {
			t.Fatalf("%q: compiled with left operands walked iteratively: %v; recursively: %v", src, ierr, rerr)
		}
		if !reflect.DeepEqual(iter, rec) {
			t.Fatalf("%q: the program compiled with left operands walked iteratively differs from the recursion's:\n%+v\n%+v", src, iter, rec)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// compileWith compiles e as NewMFP does a spec of two maps of e and a
// filter of e, with node as its compiler's node, and returns the MFP
// and the registers of the results.
func compileWith(scope []Ref, e *Expr, node func(*compiler, *Expr, *Node) (int32, error)) (any, error) {
	m := &MFP{}
	c := &compiler{m: m, cols: map[Ref]int{}, maps: map[Ref]int{}, loaded: map[int]int{}, consts: map[int64]int{}}
	for i, r := range scope {
		c.cols[r] = i
		c.avail = append(c.avail, r.String())
	}
	var roots []int32
	for i := range 3 {
		r, err := node(c, e, e.root)
		if err != nil {
			return nil, err
		}
		c.keep(r)
		if i < 2 {
			c.maps[Ref{Column: "m" + string(rune('0'+i))}] = int(r)
		}
		roots = append(roots, r)
	}
	return struct {
		M     *MFP
		Roots []int32
		Free  []int32
	}{m, roots, c.free}, nil
}

// nodeRecursive is compiler.node as it was before left operands were
// walked iteratively: the recursion, operands left to right.
func (c *compiler) nodeRecursive(e *Expr, n *Node) (int32, error) {
	switch n.Op {
	case OpConst, OpRef:
		return c.node(e, n)
	}
	x, err := c.nodeRecursive(e, n.X)
	if err != nil {
		return 0, err
	}
	y := int32(-1)
	if n.Y != nil {
		if y, err = c.nodeRecursive(e, n.Y); err != nil {
			return 0, err
		}
	}
	c.release(x)
	c.release(y)
	r := c.reg()
	c.temp[r] = true
	c.m.prog = append(c.m.prog, instr{op: n.Op, dst: r, x: x, y: y})
	if n.Op.CanErr() {
		c.m.canErr = true
	}
	return r, nil
}

func canErrRecursive(n *Node) bool {
	return n != nil && (n.Op.CanErr() || canErrRecursive(n.X) || canErrRecursive(n.Y))
}

func findRefRecursive(n *Node, r Ref) *Node {
	if n == nil {
		return nil
	}
	if n.Op == OpRef && n.Ref == r {
		return n
	}
	if x := findRefRecursive(n.X, r); x != nil {
		return x
	}
	return findRefRecursive(n.Y, r)
}
