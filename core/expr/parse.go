package expr

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Errors a parse or check returns, wrapped in an *Error that names the
// expression. Match them with errors.Is.
var (
	// ErrSyntax: the text is not a Go expression of the accepted subset.
	ErrSyntax = errors.New("expr: syntax")
	// ErrUnknownColumn: a ref names no column of the scope.
	ErrUnknownColumn = errors.New("expr: unknown column")
)

// Error is a parse or check error. Its message names the expression and
// what is wrong with it, e.g.
//
//	expression "p.unit / l.qtx": unknown column l.qtx
//
// A caller that knows where the expression came from (a spec field) adds
// that in front.
type Error struct {
	// Expr is the expression's source text.
	Expr string
	// Offset is the byte offset in Expr of the offending part, or -1.
	Offset int
	// Msg says what is wrong.
	Msg string
	// Kind is ErrSyntax or ErrUnknownColumn.
	Kind error
}

func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("expression %s: column %d: %s", echo(e.Expr, e.Offset), e.Offset+1, clip(e.Msg, maxMsg))
	}
	return fmt.Sprintf("expression %s: %s", echo(e.Expr, 0), clip(e.Msg, maxMsg))
}

// An error quotes at most maxEcho bytes of its expression and maxMsg of
// its message (which may quote a literal of the expression), so an error
// about an expression of megabytes stays a line.
const (
	maxEcho = 80
	maxMsg  = 400
)

// echo quotes expr, or, if it is longer than maxEcho, the maxEcho bytes
// around offset with "..." where it is cut and its length.
func echo(expr string, offset int) string {
	if len(expr) <= maxEcho {
		return strconv.Quote(expr)
	}
	start := max(0, min(offset-maxEcho/2, len(expr)-maxEcho))
	end := start + maxEcho
	for start > 0 && !utf8.RuneStart(expr[start]) {
		start--
	}
	for end < len(expr) && !utf8.RuneStart(expr[end]) {
		end++
	}
	q := strconv.Quote(expr[start:end])
	if start > 0 {
		q = "..." + q
	}
	if end < len(expr) {
		q += "..."
	}
	return fmt.Sprintf("%s (%d bytes)", q, len(expr))
}

// clip cuts the middle out of s if it is longer than n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s...(%d bytes cut)...%s", s[:head], tail-head, s[tail:])
}

// Unwrap returns e.Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Op is an operator of the accepted subset.
type Op uint8

// The operators. OpRef and OpConst are leaves.
const (
	OpConst Op = iota
	OpRef
	OpNeg // unary -
	OpNot // unary !
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpRem
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd // && (both sides evaluated)
	OpOr  // || (both sides evaluated)
)

// opText is read only.
var opText = [...]string{
	OpConst: "const", OpRef: "ref", OpNeg: "-", OpNot: "!",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpRem: "%",
	OpEq: "==", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpAnd: "&&", OpOr: "||",
}

func (o Op) String() string {
	if int(o) < len(opText) {
		return opText[o]
	}
	return fmt.Sprintf("Op(%d)", o)
}

// CanErr reports whether evaluating o can fail (division by zero or numeric
// overflow).
func (o Op) CanErr() bool {
	switch o {
	case OpNeg, OpAdd, OpSub, OpMul, OpDiv, OpRem:
		return true
	}
	return false
}

// Node is one node of a parsed expression. Leaves are OpConst (Value) and
// OpRef (Ref); OpNeg and OpNot have one operand in X; the binary operators
// have X and Y, evaluated X first.
type Node struct {
	Op    Op
	Value int64
	Ref   Ref
	X, Y  *Node
	Pos   int // byte offset in the source
}

// Ref is a column reference: Alias.Column, or a bare Column (Alias "").
type Ref struct {
	Alias  string
	Column string
}

// String returns the ref as written: "alias.column" or "column".
func (r Ref) String() string {
	if r.Alias == "" {
		return r.Column
	}
	return r.Alias + "." + r.Column
}

// Expr is a parsed expression: the syntax tree of an accepted expression,
// not yet checked against columns. An Expr is immutable.
type Expr struct {
	src  string
	root *Node
	refs []Ref
}

// String returns the source text.
func (e *Expr) String() string { return e.src }

// Root returns the syntax tree. The caller must not modify it.
func (e *Expr) Root() *Node { return e.root }

// Refs returns the distinct refs in the order of their first occurrence.
// The caller must not modify the slice.
func (e *Expr) Refs() []Ref { return e.refs }

// CanErr reports whether evaluating e can fail for some row.
func (e *Expr) CanErr() bool { return canErr(e.root) }

func canErr(n *Node) bool {
	// Down the left operands iteratively: a chain (a + b + c ...) nests
	// to the left as deep as it is long.
	for ; n != nil; n = n.X {
		if n.Op.CanErr() || canErr(n.Y) {
			return true
		}
	}
	return false
}

// Parse parses src as an expression of the accepted subset of Go syntax
// (docs/spec.md "Expressions"): decimal int64 literals, refs alias.column
// or column, binary + - * / % == != < <= > >= && ||, unary - and !,
// parentheses. Anything else is an *Error wrapping ErrSyntax.
//
// NB: a literal is at most 9223372036854775807. "-9223372036854775808" is
// unary minus applied to the out-of-range literal 9223372036854775808 and is
// refused; write "-9223372036854775807 - 1" for the least int64.
func Parse(src string) (*Expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Expr: src, Offset: -1, Msg: "empty expression", Kind: ErrSyntax}
	}
	e, err := parseChains(src)
	if err == nil {
		return e, nil
	}
	// A mistake is named as Go's parser names it, unless that parser
	// stops first at its own bound on nesting, which counts each
	// operator of a chain as a level (a sum of 100,000 terms).
	if e, goErr := parseGo(src); goErr == nil {
		return e, nil // not reached: parseChains accepts what parseGo does
	} else if k, ok := goErr.(*Error); !ok || k.Msg != goNestingMsg {
		return nil, goErr
	}
	return nil, err
}

// goNestingMsg is go/parser's message where it stops at its bound on
// nesting, 100,000 levels, a level for each operator of a chain too.
const goNestingMsg = "exceeded max nesting depth"

// parseGo parses src with go/parser and restricts the tree to the
// accepted subset. Parse reads an expression that parseChains refuses
// through it, for its messages.
func parseGo(src string) (*Expr, error) {
	fset := token.NewFileSet()
	tree, err := parser.ParseExprFrom(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			msg := withLineBreakHint(src, list[0].Pos.Offset, list[0].Msg)
			return nil, &Error{Expr: src, Offset: list[0].Pos.Offset, Msg: msg, Kind: ErrSyntax}
		}
		return nil, &Error{Expr: src, Offset: -1, Msg: err.Error(), Kind: ErrSyntax}
	}
	p := &parse{src: src, fset: fset}
	root, err := p.node(tree)
	if err != nil {
		return nil, err
	}
	return &Expr{src: src, root: root, refs: p.refs}, nil
}

// withLineBreakHint returns the syntax error msg at offset, with a hint
// if Go's automatic semicolon at a line break caused it.
func withLineBreakHint(src string, offset int, msg string) string {
	if endedByLineBreak(src, offset, msg) {
		msg += " (a line break after a column, a literal or ')' ends the expression, as in Go: break the line after an operator)"
	}
	return msg
}

// endedByLineBreak reports whether the syntax error msg at offset comes
// from Go's automatic semicolon at a line break: the parser met the
// newline itself, or stopped at the first token of a line.
func endedByLineBreak(src string, offset int, msg string) bool {
	if strings.HasSuffix(msg, "found newline") {
		return true
	}
	if offset < 0 || offset > len(src) {
		return false
	}
	before := strings.TrimRight(src[:offset], " \t\r")
	return strings.HasSuffix(before, "\n") && strings.TrimSpace(before) != ""
}

// MustParse is Parse for expressions known to be valid (tests, built-in
// workloads); it panics on an error.
func MustParse(src string) *Expr {
	e, err := Parse(src)
	if err != nil {
		panic(err)
	}
	return e
}

type parse struct {
	src  string
	fset *token.FileSet
	refs []Ref
	// seen indexes refs once there are more than a few: a scan of every
	// earlier ref made a parse quadratic in its distinct columns (an
	// expression of 99,000 of them took 17 s).
	seen map[Ref]struct{}
}

func (p *parse) fail(pos token.Pos, format string, args ...any) error {
	off := -1
	if pos.IsValid() {
		off = p.fset.Position(pos).Offset
	}
	return &Error{Expr: p.src, Offset: off, Msg: fmt.Sprintf(format, args...), Kind: ErrSyntax}
}

func (p *parse) offset(pos token.Pos) int { return p.fset.Position(pos).Offset }

func (p *parse) addRef(r Ref) {
	if p.seen == nil {
		for _, q := range p.refs {
			if q == r {
				return
			}
		}
		p.refs = append(p.refs, r)
		if len(p.refs) > 32 {
			p.seen = make(map[Ref]struct{}, 2*len(p.refs))
			for _, q := range p.refs {
				p.seen[q] = struct{}{}
			}
		}
		return
	}
	if _, ok := p.seen[r]; ok {
		return
	}
	p.seen[r] = struct{}{}
	p.refs = append(p.refs, r)
}

// binOp returns the operator of a binary token of the subset.
func binOp(t token.Token) (Op, bool) {
	switch t {
	case token.ADD:
		return OpAdd, true
	case token.SUB:
		return OpSub, true
	case token.MUL:
		return OpMul, true
	case token.QUO:
		return OpDiv, true
	case token.REM:
		return OpRem, true
	case token.EQL:
		return OpEq, true
	case token.NEQ:
		return OpNe, true
	case token.LSS:
		return OpLt, true
	case token.LEQ:
		return OpLe, true
	case token.GTR:
		return OpGt, true
	case token.GEQ:
		return OpGe, true
	case token.LAND:
		return OpAnd, true
	case token.LOR:
		return OpOr, true
	}
	return 0, false
}

func (p *parse) node(e ast.Expr) (*Node, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return p.node(e.X)
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return nil, p.fail(e.Pos(), "%s literal %s not allowed (only decimal integers)", strings.ToLower(e.Kind.String()), e.Value)
		}
		n, msg := literal(e.Value)
		if msg != "" {
			return nil, p.fail(e.Pos(), "%s", msg)
		}
		return &Node{Op: OpConst, Value: n, Pos: p.offset(e.Pos())}, nil
	case *ast.Ident:
		r := Ref{Column: e.Name}
		p.addRef(r)
		return &Node{Op: OpRef, Ref: r, Pos: p.offset(e.Pos())}, nil
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			if in, ok := e.X.(*ast.SelectorExpr); ok {
				if a, ok := in.X.(*ast.Ident); ok {
					// a.p.x: likely a query view's output p.x, whose
					// column is p_x.
					return nil, p.fail(e.Pos(), "a ref is alias.column or column (a query view's output %s.%s is its column %s_%s: write %s.%s_%s)",
						in.Sel.Name, e.Sel.Name, in.Sel.Name, e.Sel.Name, a.Name, in.Sel.Name, e.Sel.Name)
				}
			}
			return nil, p.fail(e.Pos(), "a ref is alias.column or column")
		}
		r := Ref{Alias: x.Name, Column: e.Sel.Name}
		p.addRef(r)
		return &Node{Op: OpRef, Ref: r, Pos: p.offset(e.Pos())}, nil
	case *ast.UnaryExpr:
		var op Op
		switch e.Op {
		case token.SUB:
			op = OpNeg
		case token.NOT:
			op = OpNot
		default:
			return nil, p.fail(e.Pos(), "unary operator %s not allowed (only - and !)", e.Op)
		}
		x, err := p.node(e.X)
		if err != nil {
			return nil, err
		}
		return &Node{Op: op, X: x, Pos: p.offset(e.Pos())}, nil
	case *ast.BinaryExpr:
		op, ok := binOp(e.Op)
		if !ok {
			return nil, p.fail(e.OpPos, "operator %s not allowed", e.Op)
		}
		x, err := p.node(e.X)
		if err != nil {
			return nil, err
		}
		y, err := p.node(e.Y)
		if err != nil {
			return nil, err
		}
		return &Node{Op: op, X: x, Y: y, Pos: p.offset(e.OpPos)}, nil
	case *ast.CallExpr:
		return nil, p.fail(e.Pos(), "function calls not allowed")
	case *ast.BadExpr:
		return nil, p.fail(e.Pos(), "not an expression")
	default:
		return nil, p.fail(e.Pos(), "%s not allowed", describe(e))
	}
}

// literal returns the value of an integer literal as Go's scanner reads
// one, or what is wrong with it: only decimal integers up to the greatest
// int64 are accepted.
func literal(v string) (int64, string) {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Sprintf("literal %s is not a decimal integer", v)
		}
	}
	if len(v) > 1 && v[0] == '0' {
		return 0, fmt.Sprintf("literal %s has a leading zero (Go reads it as octal); write a decimal integer", v)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Sprintf("literal %s is out of range (at most 9223372036854775807; write the least int64 as -9223372036854775807 - 1)", v)
	}
	return n, ""
}

func describe(e ast.Expr) string {
	switch e.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return "indexing"
	case *ast.SliceExpr:
		return "slicing"
	case *ast.StarExpr:
		return "pointer dereference"
	case *ast.TypeAssertExpr:
		return "type assertion"
	case *ast.CompositeLit:
		return "composite literal"
	case *ast.FuncLit:
		return "function literal"
	case *ast.KeyValueExpr:
		return "key: value"
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.StructType, *ast.InterfaceType, *ast.FuncType:
		return "a type"
	}
	return "this construct"
}
