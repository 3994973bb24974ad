package expr

import (
	"fmt"
	"go/scanner"
	"go/token"
	"strings"
)

// MaxNesting bounds how deep parentheses and unary operators nest in an
// expression (docs/spec.md "Expressions"): reading, checking and
// compiling one recurse once per level. Binary operators at one level,
// such as a sum of 100,000 terms, are no nesting: they are read, checked
// and compiled iteratively, however many. (Go's parser, which Parse used
// alone before, counted each of them as a level and stopped at 100,000.)
const MaxNesting = 100000

// chainReader parses the accepted subset from go/scanner's tokens, binary
// operators by precedence with a stack rather than by recursion. It
// refuses anything outside the subset; Parse then names the mistake as
// go/parser does (parseGo).
type chainReader struct {
	p     *parse // for the refs
	sc    scanner.Scanner
	file  *token.File
	err   *Error // the scanner's first error
	off   int    // the token's byte offset
	tok   token.Token
	lit   string
	depth int // parentheses and unary operators open
	// last is the byte offset of the last operand read, where go/parser
	// names a call, an index or a selector applied to it.
	last int
}

// parseChains parses src as Parse does, returning an *Error for anything
// outside the accepted subset.
func parseChains(src string) (*Expr, error) {
	fset := token.NewFileSet()
	r := &chainReader{p: &parse{src: src, fset: fset}}
	r.file = fset.AddFile("", fset.Base(), len(src))
	r.sc.Init(r.file, []byte(src), func(pos token.Position, msg string) {
		if r.err == nil {
			r.err = &Error{Expr: src, Offset: pos.Offset, Msg: withLineBreakHint(src, pos.Offset, msg), Kind: ErrSyntax}
		}
	}, 0)
	r.next()
	root, err := r.expr()
	if err != nil {
		return nil, err
	}
	if r.tok == token.SEMICOLON && r.lit == "\n" {
		r.next() // a line break or the end after the last operand
		if r.tok != token.EOF {
			// The line break ended the expression: whatever follows
			// is not an operator applied to it.
			return nil, r.expected("'EOF'")
		}
	}
	if r.tok != token.EOF {
		return nil, r.unexpected("'EOF'")
	}
	if r.err != nil {
		return nil, r.err
	}
	return &Expr{src: src, root: root, refs: r.p.refs}, nil
}

func (r *chainReader) next() {
	var pos token.Pos
	pos, r.tok, r.lit = r.sc.Scan()
	r.off = r.file.Offset(pos)
}

func (r *chainReader) fail(off int, format string, args ...any) *Error {
	if r.err != nil && r.err.Offset <= off {
		return r.err
	}
	return &Error{Expr: r.p.src, Offset: off, Msg: fmt.Sprintf(format, args...), Kind: ErrSyntax}
}

// found names the token as go/parser's messages do.
func (r *chainReader) found() string {
	switch {
	case r.tok == token.SEMICOLON && r.lit == "\n":
		return "newline"
	case r.tok.IsLiteral():
		return r.lit
	}
	return "'" + r.tok.String() + "'"
}

// expected refuses the token where want was expected, with go/parser's
// message, and its hint where a line break ended the expression.
func (r *chainReader) expected(want string) *Error {
	e := r.fail(r.off, "expected %s, found %s", want, r.found())
	if e != r.err {
		e.Msg = withLineBreakHint(r.p.src, e.Offset, e.Msg)
	}
	return e
}

// unexpected refuses the token after an operand where want was expected.
// A call, an index or a selector is named at the operand it applies to,
// as go/parser names it.
func (r *chainReader) unexpected(want string) *Error {
	switch r.tok {
	case token.LPAREN:
		return r.fail(r.last, "function calls not allowed")
	case token.LBRACK:
		return r.fail(r.last, "indexing not allowed")
	case token.PERIOD:
		return r.fail(r.last, "a ref is alias.column or column")
	}
	if r.tok.Precedence() > 0 {
		return r.fail(r.off, "operator %s not allowed", r.tok)
	}
	return r.expected(want)
}

// open enters a parenthesis or a unary operator.
func (r *chainReader) open() *Error {
	if r.depth++; r.depth > MaxNesting {
		return r.fail(r.off, "parentheses and unary operators nest more than %d deep", MaxNesting)
	}
	return nil
}

// expr reads operands joined by binary operators, each applied once
// the operators after it bind less tightly (all are left-associative):
// the tree go/parser builds, without a level of recursion per operator.
func (r *chainReader) expr() (*Node, error) {
	type waiting struct {
		x    *Node // the left operand
		op   Op
		prec int
		pos  int
	}
	var stack []waiting
	x, err := r.unary()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := binOp(r.tok)
		if !ok {
			break
		}
		prec := r.tok.Precedence()
		for n := len(stack); n > 0 && stack[n-1].prec >= prec; n-- {
			w := stack[n-1]
			x = &Node{Op: w.op, X: w.x, Y: x, Pos: w.pos}
			stack = stack[:n-1]
		}
		stack = append(stack, waiting{x: x, op: op, prec: prec, pos: r.off})
		r.next()
		if x, err = r.unary(); err != nil {
			return nil, err
		}
	}
	for n := len(stack); n > 0; n-- {
		w := stack[n-1]
		x = &Node{Op: w.op, X: w.x, Y: x, Pos: w.pos}
	}
	return x, nil
}

// unary reads an operand with its unary operators.
func (r *chainReader) unary() (*Node, error) {
	var op Op
	switch r.tok {
	case token.SUB:
		op = OpNeg
	case token.NOT:
		op = OpNot
	default:
		return r.operand()
	}
	pos := r.off
	if err := r.open(); err != nil {
		return nil, err
	}
	r.next()
	x, err := r.unary()
	if err != nil {
		return nil, err
	}
	r.depth--
	return &Node{Op: op, X: x, Pos: pos}, nil
}

// operand reads a literal, a ref or a parenthesized expression.
func (r *chainReader) operand() (*Node, error) {
	start := r.off
	n, err := r.primary()
	r.last = start
	return n, err
}

// primary is operand, without noting where the operand starts.
func (r *chainReader) primary() (*Node, error) {
	switch r.tok {
	case token.INT:
		v, msg := literal(r.lit)
		if msg != "" {
			return nil, r.fail(r.off, "%s", msg)
		}
		n := &Node{Op: OpConst, Value: v, Pos: r.off}
		r.next()
		return n, nil
	case token.FLOAT, token.IMAG, token.CHAR, token.STRING:
		return nil, r.fail(r.off, "%s literal %s not allowed (only decimal integers)", strings.ToLower(r.tok.String()), r.lit)
	case token.IDENT:
		ref, pos := Ref{Column: r.lit}, r.off
		r.next()
		if r.tok == token.PERIOD {
			r.next()
			if r.tok != token.IDENT {
				return nil, r.fail(pos, "a ref is alias.column or column")
			}
			ref = Ref{Alias: ref.Column, Column: r.lit}
			r.next()
			if r.tok == token.PERIOD {
				return nil, r.thirdPart(pos, ref)
			}
		}
		r.p.addRef(ref)
		return &Node{Op: OpRef, Ref: ref, Pos: pos}, nil
	case token.LPAREN:
		if err := r.open(); err != nil {
			return nil, err
		}
		r.next()
		x, err := r.expr()
		if err != nil {
			return nil, err
		}
		if r.tok != token.RPAREN {
			return nil, r.unexpected("')'")
		}
		r.next()
		r.depth--
		return x, nil
	case token.ADD, token.XOR, token.AND, token.TILDE, token.ARROW:
		return nil, r.fail(r.off, "unary operator %s not allowed (only - and !)", r.tok)
	case token.MUL:
		return nil, r.fail(r.off, "pointer dereference not allowed")
	}
	return nil, r.expected("operand")
}

// thirdPart refuses a ref of more than two parts, at the tokens after
// ref's period, naming it at pos as go/parser's tree is named (parseGo):
// alias.view.column likely means a query view's output view.column,
// whose column is view_column.
func (r *chainReader) thirdPart(pos int, ref Ref) *Error {
	r.next()
	if r.tok != token.IDENT {
		return r.fail(pos, "a ref is alias.column or column")
	}
	col := r.lit
	r.next()
	switch r.tok {
	case token.PERIOD:
		return r.fail(pos, "a ref is alias.column or column")
	case token.LPAREN:
		return r.fail(pos, "function calls not allowed")
	}
	return r.fail(pos, "a ref is alias.column or column (a query view's output %s.%s is its column %s_%s: write %s.%s_%s)",
		ref.Column, col, ref.Column, col, ref.Alias, ref.Column, col)
}
