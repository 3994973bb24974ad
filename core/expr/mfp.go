package expr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadMFP: an MFPSpec refers to a column it does not have, or names a map
// twice. The message names the part.
var ErrBadMFP = errors.New("expr: bad map-filter-project")

// Map is a named expression appended to the row.
type Map struct {
	Name string
	Expr *Expr
}

// MFPSpec describes a map-filter-project over rows of a fixed layout
// (docs/spec.md "The query"; Materialize's MapFilterProject and
// JoinClosure):
//
//  1. Equivalences: every column of a class must equal the class's first
//     column, else the row is dropped. Checked first; a dropped row produces
//     nothing, not even errors.
//  2. Maps, in order, each appended to the row as column Ref{Column: Name};
//     a map may use the input columns and earlier maps.
//  3. Filters, in order: the first whose value is 0 drops the row.
//  4. Project: the output row, columns of the input or maps.
//
// The first error in evaluation order (maps in order, then filters in
// order; operands left to right, depth first) replaces the row; a filter
// that dropped the row earlier makes later errors moot.
type MFPSpec struct {
	// Input names the input row's columns, in order. Names are unique.
	Input []Ref
	// Equivalences are classes of input columns that must be equal.
	Equivalences [][]Ref
	// Maps are appended in order. Names are unique and differ from Input.
	Maps []Map
	// Filters keep a row when every value is non-zero.
	Filters []*Expr
	// Project names the output columns, from Input and Maps.
	Project []Ref
}

// MFP is a compiled map-filter-project. It is immutable and may be shared
// by goroutines; each goroutine evaluates through its own Evaluator.
type MFP struct {
	inArity  int
	outArity int
	equiv    [][]int // input column indexes, per class
	prog     []instr
	nregs    int
	consts   []constReg // written once, by NewEvaluator
	pool     []int64    // values of the OpConst instructions (x indexes it)
	filters  []int      // root register of each filter, in order
	filterAt []int      // index in prog of the first instruction after each filter
	project  []int      // register per output column
	canErr   bool
	identity bool // output row == input row, nothing evaluated
}

type instr struct {
	op   Op
	dst  int32
	x, y int32 // registers; for OpRef x is the input column
}

// maxPreloaded is how many distinct literals of an MFP get a register of
// their own, filled once when an evaluator is created; further literals
// are filled by an instruction each chunk, in temps.
const maxPreloaded = 64

type constReg struct {
	reg int
	v   int64
}

// InputArity returns the number of columns of an input row.
func (m *MFP) InputArity() int { return m.inArity }

// OutputArity returns the number of columns of an output row.
func (m *MFP) OutputArity() int { return m.outArity }

// CanErr reports whether some row could err (Materialize's could_error). A
// caller may skip the error path when it is false.
func (m *MFP) CanErr() bool { return m.canErr }

// IsIdentity reports whether the MFP returns every input row unchanged.
func (m *MFP) IsIdentity() bool { return m.identity }

// compiler builds an MFP's program.
type compiler struct {
	m      *MFP
	cols   map[Ref]int // input column index
	maps   map[Ref]int // register of a map
	loaded map[int]int // input column -> register
	consts map[int64]int
	avail  []string
	// temp marks registers holding an operator's result that only its
	// parent reads; free lists the temps whose parent has been emitted.
	temp []bool
	free []int32
}

// reg returns a register for a new value: a freed temp if any.
func (c *compiler) reg() int32 {
	if n := len(c.free); n > 0 {
		r := c.free[n-1]
		c.free = c.free[:n-1]
		return r
	}
	r := c.m.nregs
	c.m.nregs++
	c.temp = append(c.temp, false)
	return int32(r)
}

// release frees r if it is a temp: its one reader has been emitted.
// INVARIANT: exec reads x[i] and y[i] before writing dst[i], so a
// parent may reuse an operand's register as its destination.
func (c *compiler) release(r int32) {
	if r >= 0 && c.temp[r] {
		c.temp[r] = false
		c.free = append(c.free, r)
	}
}

// keep makes r live to the end of the program (a map's or a filter's
// value).
func (c *compiler) keep(r int32) { c.temp[r] = false }

func (c *compiler) load(col int) int32 {
	if r, ok := c.loaded[col]; ok {
		return int32(r)
	}
	r := c.reg()
	c.m.prog = append(c.m.prog, instr{op: OpRef, dst: r, x: int32(col)})
	c.loaded[col] = int(r)
	return r
}

func (c *compiler) lookup(r Ref) (int32, bool) {
	if reg, ok := c.maps[r]; ok {
		return int32(reg), true
	}
	if col, ok := c.cols[r]; ok {
		return c.load(col), true
	}
	return 0, false
}

func (c *compiler) node(e *Expr, n *Node) (int32, error) {
	switch n.Op {
	case OpConst:
		if r, ok := c.consts[n.Value]; ok {
			return int32(r), nil
		}
		if len(c.m.consts) >= maxPreloaded {
			// Past maxPreloaded distinct literals, a literal is an
			// instruction that fills a temp, so that the registers
			// (each Chunk values, per evaluator) stay few however many
			// literals an expression holds.
			r := c.reg()
			c.temp[r] = true
			c.m.prog = append(c.m.prog, instr{op: OpConst, dst: r, x: int32(len(c.m.pool))})
			c.m.pool = append(c.m.pool, n.Value)
			return r, nil
		}
		// A constant is written once, before the program runs: never a
		// freed temp's register, which the program writes again.
		r := int32(c.m.nregs)
		c.m.nregs++
		c.temp = append(c.temp, false)
		c.consts[n.Value] = int(r)
		c.m.consts = append(c.m.consts, constReg{reg: int(r), v: n.Value})
		return r, nil
	case OpRef:
		r, ok := c.lookup(n.Ref)
		if !ok {
			return 0, unknown(e, n, c.avail)
		}
		return r, nil
	}
	// A binary operator's left operands iteratively, each operator then
	// its right operand and itself, as recursion would: a chain (a + b +
	// c ...) nests to the left as deep as it is long, while right
	// operands and unary operators nest only as the text does (MaxNesting).
	var spine []*Node
	for n.Y != nil {
		spine = append(spine, n)
		n = n.X
	}
	var x int32
	switch n.Op {
	case OpConst, OpRef:
		r, err := c.node(e, n)
		if err != nil {
			return 0, err
		}
		x = r
	default: // unary
		r, err := c.node(e, n.X)
		if err != nil {
			return 0, err
		}
		x = c.apply(n.Op, r, -1)
	}
	for i := len(spine) - 1; i >= 0; i-- {
		y, err := c.node(e, spine[i].Y)
		if err != nil {
			return 0, err
		}
		x = c.apply(spine[i].Op, x, y)
	}
	return x, nil
}

// apply appends the instruction of op on the registers x and y (-1 for a
// unary op) and returns the register of its result.
func (c *compiler) apply(op Op, x, y int32) int32 {
	c.release(x)
	c.release(y)
	r := c.reg()
	c.temp[r] = true
	c.m.prog = append(c.m.prog, instr{op: op, dst: r, x: x, y: y})
	if op.CanErr() {
		c.m.canErr = true
	}
	return r
}

func unknown(e *Expr, n *Node, avail []string) error {
	have := strings.Join(avail, ", ")
	if len(avail) > 12 {
		have = strings.Join(avail[:12], ", ") + ", ..."
	}
	if have == "" {
		have = "none"
	}
	return &Error{Expr: e.src, Offset: n.Pos, Msg: fmt.Sprintf("unknown column %s (available: %s)", n.Ref, have), Kind: ErrUnknownColumn}
}

// Check reports whether every ref of e names a column of scope, with an
// *Error wrapping ErrUnknownColumn naming the first that does not. An
// expression not made by Parse (nil, or a zero Expr) is an *Error
// wrapping ErrSyntax.
func Check(e *Expr, scope []Ref) error {
	if e == nil || e.root == nil {
		return noExpr(e)
	}
	for _, r := range e.refs {
		found := false
		for _, s := range scope {
			if s == r {
				found = true
				break
			}
		}
		if !found {
			avail := make([]string, len(scope))
			for i, s := range scope {
				avail[i] = s.String()
			}
			return unknown(e, findRef(e.root, r), avail)
		}
	}
	return nil
}

// noExpr is the error for an expression not made by Parse: a nil *Expr,
// or an Expr{} with no syntax tree.
func noExpr(e *Expr) error {
	src := ""
	if e != nil {
		src = e.src
	}
	return &Error{Expr: src, Offset: -1, Msg: "no expression (nil, or not made by Parse)", Kind: ErrSyntax}
}

// findRef returns the first node of n, depth first and left to right,
// that is the ref r, or nil. Left operands are followed iteratively, as
// a chain nests to the left as deep as it is long.
func findRef(n *Node, r Ref) *Node {
	var spine []*Node
	for ; n != nil; n = n.X {
		if n.Op == OpRef && n.Ref == r {
			return n
		}
		spine = append(spine, n)
	}
	for i := len(spine) - 1; i >= 0; i-- {
		if y := findRef(spine[i].Y, r); y != nil {
			return y
		}
	}
	return nil
}

// NewMFP compiles s. Expression errors are *Error values (wrapping
// ErrUnknownColumn) prefixed with the part ("map[1] unit: ..."); layout
// errors wrap ErrBadMFP.
func NewMFP(s MFPSpec) (*MFP, error) {
	m := &MFP{inArity: len(s.Input), outArity: len(s.Project)}
	c := &compiler{m: m, cols: map[Ref]int{}, maps: map[Ref]int{}, loaded: map[int]int{}, consts: map[int64]int{}}
	for i, r := range s.Input {
		if _, dup := c.cols[r]; dup {
			return nil, fmt.Errorf("%w: input column %s named twice", ErrBadMFP, r)
		}
		c.cols[r] = i
		c.avail = append(c.avail, r.String())
	}
	for k, class := range s.Equivalences {
		idx := make([]int, len(class))
		for j, r := range class {
			col, ok := c.cols[r]
			if !ok {
				return nil, fmt.Errorf("%w: equivalence %d: unknown input column %s", ErrBadMFP, k, r)
			}
			idx[j] = col
		}
		if len(idx) > 1 {
			m.equiv = append(m.equiv, idx)
		}
	}
	for i, mp := range s.Maps {
		r := Ref{Column: mp.Name}
		if _, dup := c.cols[r]; dup {
			return nil, fmt.Errorf("%w: map[%d] %s: name of an input column", ErrBadMFP, i, mp.Name)
		}
		if _, dup := c.maps[r]; dup {
			return nil, fmt.Errorf("%w: map[%d] %s: name of an earlier map", ErrBadMFP, i, mp.Name)
		}
		if mp.Expr == nil || mp.Expr.root == nil {
			return nil, fmt.Errorf("%w: map[%d] %s: no expression (nil, or not made by Parse)", ErrBadMFP, i, mp.Name)
		}
		reg, err := c.node(mp.Expr, mp.Expr.root)
		if err != nil {
			return nil, fmt.Errorf("map[%d] %s: %w", i, mp.Name, err)
		}
		c.keep(reg)
		c.maps[r] = int(reg)
		c.avail = append(c.avail, r.String())
	}
	for i, f := range s.Filters {
		if f == nil || f.root == nil {
			return nil, fmt.Errorf("%w: filter[%d]: no expression (nil, or not made by Parse)", ErrBadMFP, i)
		}
		reg, err := c.node(f, f.root)
		if err != nil {
			return nil, fmt.Errorf("filter[%d]: %w", i, err)
		}
		c.keep(reg)
		m.filters = append(m.filters, int(reg))
		m.filterAt = append(m.filterAt, len(m.prog))
	}
	for j, r := range s.Project {
		reg, ok := c.lookup(r)
		if !ok {
			return nil, fmt.Errorf("%w: project[%d]: unknown column %s", ErrBadMFP, j, r)
		}
		m.project = append(m.project, int(reg))
	}
	m.identity = len(m.equiv) == 0 && len(s.Maps) == 0 && len(s.Filters) == 0 && len(s.Project) == len(s.Input)
	if m.identity {
		for j, r := range s.Project {
			if c.cols[r] != j {
				m.identity = false
			}
		}
	}
	return m, nil
}

// Output receives an Evaluator's results. Eval appends; Reset empties it
// keeping capacity.
type Output struct {
	// Rows holds the kept rows, projected, flat: row k is
	// Rows[k*arity:(k+1)*arity] with arity the MFP's OutputArity.
	Rows []int64
	// Kept holds, for each kept row, its index in the input passed to Eval.
	Kept []int
	// Erred holds the index of each row that erred, and Codes its error.
	Erred []int
	Codes []Code
}

// Reset empties o, keeping its capacity.
func (o *Output) Reset() {
	o.Rows, o.Kept, o.Erred, o.Codes = o.Rows[:0], o.Kept[:0], o.Erred[:0], o.Codes[:0]
}

// Chunk is the number of rows an Evaluator evaluates at a time, unless
// its program needs more than regBudget/Chunk registers: then fewer, so
// that an evaluator holds at most regBudget register values (8 MiB)
// however deeply an expression nests (a right-nested one needs a register
// per level, its left operands waiting for their right ones).
const Chunk = 256

// regBudget bounds an evaluator's registers: nregs × chunk size values.
const regBudget = 1 << 20

// chunkSize returns the rows per chunk of an evaluator of m.
func (m *MFP) chunkSize() int {
	return max(1, min(Chunk, regBudget/max(1, m.nregs)))
}

// Evaluator evaluates an MFP a chunk of rows at a time, one instruction
// over the whole chunk at a time, in registers it owns. It allocates
// nothing per row or per chunk. NB: an Evaluator is not safe for
// concurrent use; create one per goroutine.
type Evaluator struct {
	m       *MFP
	size    int // rows per chunk: Chunk, or fewer for a program of many registers
	regs    [][]int64
	errs    []Code
	dropped []uint8 // 1: dropped by an equivalence or a filter
}

// NewEvaluator returns an evaluator of m.
func (m *MFP) NewEvaluator() *Evaluator {
	size := m.chunkSize()
	ev := &Evaluator{m: m, size: size, regs: make([][]int64, m.nregs), errs: make([]Code, size), dropped: make([]uint8, size)}
	backing := make([]int64, m.nregs*size)
	for i := range ev.regs {
		ev.regs[i] = backing[i*size : (i+1)*size : (i+1)*size]
	}
	for _, c := range m.consts {
		r := ev.regs[c.reg]
		for i := range r {
			r[i] = c.v
		}
	}
	return ev
}

// Eval evaluates the rows in rows (flat, len(rows) a multiple of the
// input arity) and appends the kept projected rows and the erred rows to
// out. Row indexes in out count from the start of rows.
//
// REQUIRES: len(rows) % InputArity() == 0 (an MFP of input arity 0 takes
// no rows; use EvalN).
func (ev *Evaluator) Eval(rows []int64, out *Output) {
	a := ev.m.inArity
	if a == 0 {
		panic("expr: Eval on an MFP of input arity 0; use EvalN")
	}
	if len(rows)%a != 0 {
		panic(fmt.Sprintf("expr: Eval: %d values is not a whole number of rows of arity %d", len(rows), a))
	}
	ev.EvalN(rows, len(rows)/a, out)
}

// EvalN is Eval for n rows; it accepts input arity 0 (n empty rows).
func (ev *Evaluator) EvalN(rows []int64, n int, out *Output) {
	m := ev.m
	if m.identity {
		out.Rows = append(out.Rows, rows[:n*m.inArity]...)
		for i := range n {
			out.Kept = append(out.Kept, i)
		}
		return
	}
	for base := 0; base < n; base += ev.size {
		k := min(ev.size, n-base)
		ev.chunk(rows[base*m.inArity:(base+k)*m.inArity], base, k, out)
	}
}

func (ev *Evaluator) chunk(rows []int64, base, n int, out *Output) {
	m := ev.m
	a := m.inArity
	errs := ev.errs[:n]
	dropped := ev.dropped[:n]
	clear(errs)
	clear(dropped)
	for _, class := range m.equiv {
		c0 := class[0]
		for _, c := range class[1:] {
			for i := range n {
				dropped[i] |= b2u8(rows[i*a+c0] != rows[i*a+c])
			}
		}
	}
	f := 0
	for pc := range m.prog {
		for f < len(m.filters) && m.filterAt[f] == pc {
			ev.filter(m.filters[f], n)
			f++
		}
		ev.exec(&m.prog[pc], rows, n)
	}
	for ; f < len(m.filters); f++ {
		ev.filter(m.filters[f], n)
	}
	first := len(out.Kept)
	for i := range n {
		switch {
		case dropped[i] != 0:
		case errs[i] != OK:
			out.Erred = append(out.Erred, base+i)
			out.Codes = append(out.Codes, errs[i])
		default:
			out.Kept = append(out.Kept, base+i)
		}
	}
	// Project column by column: one register at a time.
	kept := out.Kept[first:]
	arity := len(m.project)
	at := len(out.Rows)
	out.Rows = slices.Grow(out.Rows, len(kept)*arity)[:at+len(kept)*arity]
	dst := out.Rows[at:]
	for j, r := range m.project {
		reg := ev.regs[r][:n]
		for k, i := range kept {
			dst[k*arity+j] = reg[i-base]
		}
	}
}

// filter drops the rows not yet erred whose value in register reg is 0.
func (ev *Evaluator) filter(reg, n int) {
	v := ev.regs[reg][:n]
	errs := ev.errs[:n]
	dropped := ev.dropped[:n]
	for i := range n {
		// Branch-free: a filter's outcome is data, often unpredictable.
		dropped[i] |= b2u8(errs[i] == OK) & b2u8(v[i] == 0)
	}
}

func b2u8(b bool) uint8 {
	var x uint8
	if b {
		x = 1
	}
	return x
}
