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

// parseLong is parser.ParseExpr for an expression of any number of
// binary operators at one level (docs/spec.md "Expressions"): go/parser
// counts each as a level of nesting and stops at 100,000. Where it stops
// so, the text is cut at its operators of the lowest precedence outside
// parentheses, each part parsed so in turn, and the parts joined from the
// left, as Go's operators associate.
func parseLong(src string) (ast.Expr, error) {
	tree, err := parser.ParseExpr(src)
	if err == nil || !strings.Contains(err.Error(), "exceeded max nesting depth") {
		return tree, err
	}
	type cut struct {
		off, end int
		op       token.Token
	}
	var cuts []cut
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var sc scanner.Scanner
	sc.Init(file, []byte(src), nil, 0)
	depth, operand, lowest := 0, false, token.HighestPrec+1
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF || tok == token.SEMICOLON && lit == "\n" {
			break
		}
		switch {
		case tok == token.LPAREN:
			depth++
			operand = false
			continue
		case tok == token.RPAREN:
			depth--
			operand = true
			continue
		}
		if prec := tok.Precedence(); depth == 0 && operand && prec > 0 {
			off := file.Offset(pos)
			if prec < lowest {
				lowest, cuts = prec, nil
			}
			if prec == lowest {
				cuts = append(cuts, cut{off: off, end: off + len(tok.String()), op: tok})
			}
			operand = false
			continue
		}
		operand = tok == token.IDENT || tok.IsLiteral()
	}
	if len(cuts) == 0 {
		return nil, err
	}
	x, xerr := parseLong(src[:cuts[0].off])
	if xerr != nil {
		return nil, xerr
	}
	for i, c := range cuts {
		end := len(src)
		if i+1 < len(cuts) {
			end = cuts[i+1].off
		}
		y, yerr := parseLong(src[c.end:end])
		if yerr != nil {
			return nil, yerr
		}
		x = &ast.BinaryExpr{X: x, Op: c.op, Y: y}
	}
	return x, nil
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
