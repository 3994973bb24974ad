package reference

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"math"
	"math/big"
	"strings"
)

// The messages of the error collection (docs/spec.md "Expressions").
const (
	MsgDivisionByZero       = "division by zero"
	MsgOverflow             = "numeric overflow"
	MsgNegativeMultiplicity = "negative multiplicity"
)

// Evaluation errors of EvalExpr; their messages are the collection's.
var (
	ErrDivisionByZero = errors.New(MsgDivisionByZero)
	ErrOverflow       = errors.New(MsgOverflow)
)

// ErrNotAccepted: an expression outside the accepted subset, or a ref to a
// column the scope does not have.
var ErrNotAccepted = errors.New("reference: expression not accepted")

var (
	minInt64 = big.NewInt(math.MinInt64)
	maxInt64 = big.NewInt(math.MaxInt64)
)

func fits(x *big.Int) bool { return x.Cmp(minInt64) >= 0 && x.Cmp(maxInt64) <= 0 }

// bigExpr is a parsed expression: the go/ast tree, checked to be of the
// accepted subset.
type bigExpr struct {
	src  string
	tree ast.Expr
}

// parseBig parses src with go/parser and checks, independently of
// core/expr, that it is of the accepted subset (docs/spec.md
// "Expressions").
func parseBig(src string) (*bigExpr, error) {
	tree, err := parseLong(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotAccepted, src, err)
	}
	if err := accepted(tree); err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotAccepted, src, err)
	}
	return &bigExpr{src: src, tree: tree}, nil
}

// maxNesting is how deep parentheses and unary operators may nest
// (docs/spec.md "Expressions"), each a level; binary operators at one
// level are no nesting.
const maxNesting = 100000

// parseLong is parser.ParseExpr for the expressions docs/spec.md
// "Expressions" accepts beyond go/parser's nesting bound: go/parser counts
// each binary operator of a chain as a level, and a parenthesized right
// operand as two, and stops at 100,000 levels. Where it stops so, the text
// is read by longReader, an algorithm of its own: the tokens outside
// parentheses are cut at their operators of the lowest precedence, the
// parts joined from the left, as Go's operators associate; a part of no
// such operator is a unary operator applied to the rest or a
// parenthesized expression, read so in turn; a short part is parsed by
// go/parser. Parentheses and unary operators then nest at most maxNesting
// deep, as the spec says.
func parseLong(src string) (ast.Expr, error) {
	tree, err := parser.ParseExpr(src)
	if err == nil || !strings.Contains(err.Error(), "exceeded max nesting depth") {
		return tree, err
	}
	return readLong(src, err)
}

// readLong reads src with longReader; err is go/parser's error, given
// where src is not one expression of matched parentheses.
func readLong(src string, err error) (ast.Expr, error) {
	r := &longReader{src: src}
	if !r.scan() {
		return nil, err
	}
	x, xerr := r.read(0, len(r.toks))
	if xerr != nil {
		return nil, xerr
	}
	if d := nesting(x); d > maxNesting {
		return nil, fmt.Errorf("parentheses and unary operators nest %d deep, more than %d", d, maxNesting)
	}
	return x, nil
}

// longReader reads the tokens of an expression too deep for go/parser.
type longReader struct {
	src   string
	toks  []longTok
	match []int // for a '(' the index of its ')'
}

type longTok struct {
	off, end int
	tok      token.Token
}

// shortPart is the length of a part go/parser reads whole: so short a
// text nests fewer than 100,000 of its levels. (A variable for the
// tests, which read every part with longReader.)
var shortPart = 4096

// scan reads the tokens, reporting false where the text is not one
// expression of matched parentheses.
func (r *longReader) scan() bool {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(r.src))
	var sc scanner.Scanner
	bad := false
	sc.Init(file, []byte(r.src), func(token.Position, string) { bad = true }, 0)
	var open []int
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON {
			// A line break after the last operand ends the text; any
			// other ends the expression before it.
			if _, next, _ := sc.Scan(); lit != "\n" || next != token.EOF {
				return false
			}
			break
		}
		if tok == token.ILLEGAL {
			return false
		}
		off := file.Offset(pos)
		end := off + len(lit)
		if lit == "" {
			end = off + len(tok.String())
		}
		r.match = append(r.match, -1)
		switch tok {
		case token.LPAREN:
			open = append(open, len(r.toks))
		case token.RPAREN:
			if len(open) == 0 {
				return false
			}
			r.match[open[len(open)-1]] = len(r.toks)
			open = open[:len(open)-1]
		}
		r.toks = append(r.toks, longTok{off: off, end: end, tok: tok})
	}
	return !bad && len(open) == 0
}

// read returns the tree of the tokens [i, j).
func (r *longReader) read(i, j int) (ast.Expr, error) {
	if i >= j {
		return nil, errors.New("expected operand")
	}
	if r.toks[j-1].end-r.toks[i].off <= shortPart {
		return parser.ParseExpr(r.src[r.toks[i].off:r.toks[j-1].end])
	}
	// The binary operators outside parentheses: an operator token after
	// an operand.
	var cuts []int
	lowest, operand := token.HighestPrec+1, false
	for k := i; k < j; k++ {
		tok := r.toks[k].tok
		switch {
		case tok == token.LPAREN:
			k, operand = r.match[k], true
		case tok == token.IDENT || tok.IsLiteral():
			operand = true
		case operand && tok.Precedence() > 0:
			if p := tok.Precedence(); p < lowest {
				lowest, cuts = p, cuts[:0]
			}
			if tok.Precedence() == lowest {
				cuts = append(cuts, k)
			}
			operand = false
		default:
			operand = false
		}
	}
	if len(cuts) > 0 {
		x, err := r.read(i, cuts[0])
		if err != nil {
			return nil, err
		}
		for n, k := range cuts {
			end := j
			if n+1 < len(cuts) {
				end = cuts[n+1]
			}
			y, err := r.read(k+1, end)
			if err != nil {
				return nil, err
			}
			x = &ast.BinaryExpr{X: x, Op: r.toks[k].tok, Y: y}
		}
		return x, nil
	}
	// Unary operators, all those in front at once.
	u := i
	for u < j && (r.toks[u].tok == token.SUB || r.toks[u].tok == token.NOT) {
		u++
	}
	if u > i {
		x, err := r.read(u, j)
		if err != nil {
			return nil, err
		}
		for k := u - 1; k >= i; k-- {
			x = &ast.UnaryExpr{Op: r.toks[k].tok, X: x}
		}
		return x, nil
	}
	if r.toks[i].tok == token.LPAREN && r.match[i] == j-1 {
		x, err := r.read(i+1, j-1)
		if err != nil {
			return nil, err
		}
		return &ast.ParenExpr{X: x}, nil
	}
	return parser.ParseExpr(r.src[r.toks[i].off:r.toks[j-1].end])
}

// nesting returns how deep parentheses and unary operators nest in e.
func nesting(e ast.Expr) int {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return 1 + nesting(e.X)
	case *ast.UnaryExpr:
		return 1 + nesting(e.X)
	case *ast.BinaryExpr:
		// Down the left operands iteratively: a chain nests to the
		// left as deep as it is long.
		d := 0
		for {
			d = max(d, nesting(e.Y))
			x, ok := e.X.(*ast.BinaryExpr)
			if !ok {
				return max(d, nesting(e.X))
			}
			e = x
		}
	}
	return 0
}

func accepted(e ast.Expr) error {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return accepted(e.X)
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return fmt.Errorf("literal %s", e.Value)
		}
		if len(e.Value) > 1 && e.Value[0] == '0' {
			return fmt.Errorf("literal %s is not decimal", e.Value)
		}
		v, ok := new(big.Int).SetString(e.Value, 10) // decimal digits only
		if !ok {
			return fmt.Errorf("literal %s is not decimal", e.Value)
		}
		if v.Cmp(maxInt64) > 0 {
			return fmt.Errorf("literal %s out of range", e.Value)
		}
		return nil
	case *ast.Ident:
		return nil
	case *ast.SelectorExpr:
		if _, ok := e.X.(*ast.Ident); !ok {
			return errors.New("ref is not alias.column")
		}
		return nil
	case *ast.UnaryExpr:
		if e.Op != token.SUB && e.Op != token.NOT {
			return fmt.Errorf("unary %s", e.Op)
		}
		return accepted(e.X)
	case *ast.BinaryExpr:
		switch e.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM,
			token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR:
		default:
			return fmt.Errorf("operator %s", e.Op)
		}
		if err := accepted(e.X); err != nil {
			return err
		}
		return accepted(e.Y)
	}
	return fmt.Errorf("%T", e)
}

// scope maps a ref as written ("alias.column" or "name") to its value.
type scope map[string]int64

func refName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.X.(*ast.Ident).Name + "." + e.Sel.Name
	}
	return ""
}

// eval evaluates e on exact integers, checking after every operation that
// the value is an int64, and returns the first error in evaluation order
// (left to right, depth first; && and || evaluate both sides).
func (b *bigExpr) eval(sc scope) (int64, error) {
	v, err := evalBig(b.tree, sc)
	if err != nil {
		return 0, err
	}
	return v.Int64(), nil
}

func evalBig(e ast.Expr, sc scope) (*big.Int, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return evalBig(e.X, sc)
	case *ast.BasicLit:
		v, _ := new(big.Int).SetString(e.Value, 10)
		return v, nil
	case *ast.Ident, *ast.SelectorExpr:
		name := refName(e)
		v, ok := sc[name]
		if !ok {
			return nil, fmt.Errorf("%w: unknown column %s", ErrNotAccepted, name)
		}
		return big.NewInt(v), nil
	case *ast.UnaryExpr:
		x, err := evalBig(e.X, sc)
		if err != nil {
			return nil, err
		}
		if e.Op == token.NOT {
			return bool01(x.Sign() == 0), nil
		}
		return checked(new(big.Int).Neg(x))
	case *ast.BinaryExpr:
		x, err := evalBig(e.X, sc)
		if err != nil {
			return nil, err
		}
		y, err := evalBig(e.Y, sc)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case token.ADD:
			return checked(new(big.Int).Add(x, y))
		case token.SUB:
			return checked(new(big.Int).Sub(x, y))
		case token.MUL:
			return checked(new(big.Int).Mul(x, y))
		case token.QUO:
			if y.Sign() == 0 {
				return nil, ErrDivisionByZero
			}
			return checked(new(big.Int).Quo(x, y)) // truncated toward zero
		case token.REM:
			if y.Sign() == 0 {
				return nil, ErrDivisionByZero
			}
			return checked(new(big.Int).Rem(x, y)) // sign of x; x % -1 == 0
		case token.EQL:
			return bool01(x.Cmp(y) == 0), nil
		case token.NEQ:
			return bool01(x.Cmp(y) != 0), nil
		case token.LSS:
			return bool01(x.Cmp(y) < 0), nil
		case token.LEQ:
			return bool01(x.Cmp(y) <= 0), nil
		case token.GTR:
			return bool01(x.Cmp(y) > 0), nil
		case token.GEQ:
			return bool01(x.Cmp(y) >= 0), nil
		case token.LAND:
			return bool01(x.Sign() != 0 && y.Sign() != 0), nil
		case token.LOR:
			return bool01(x.Sign() != 0 || y.Sign() != 0), nil
		}
	}
	return nil, fmt.Errorf("%w: %T", ErrNotAccepted, e)
}

func checked(v *big.Int) (*big.Int, error) {
	if !fits(v) {
		return nil, ErrOverflow
	}
	return v, nil
}

func bool01(b bool) *big.Int {
	if b {
		return big.NewInt(1)
	}
	return big.NewInt(0)
}

// EvalExpr parses src and evaluates it over the named values (refs as
// written: "alias.column" or "name"), on exact integers. The error is
// ErrDivisionByZero, ErrOverflow, or wraps ErrNotAccepted. It is the
// independent oracle for core/expr.
func EvalExpr(src string, values map[string]int64) (int64, error) {
	b, err := parseBig(src)
	if err != nil {
		return 0, err
	}
	return b.eval(values)
}
