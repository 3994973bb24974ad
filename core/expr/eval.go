package expr

import "math"

// exec runs one instruction over the first n rows of the chunk. Each
// operator has its own loop: the switch runs once per chunk, never per row.
// An error code is set only where none is yet (the first error wins).
func (ev *Evaluator) exec(in *instr, rows []int64, n int) {
	dst := ev.regs[in.dst][:n]
	errs := ev.errs[:n]
	switch in.op {
	case OpRef:
		a, c := ev.m.inArity, int(in.x)
		for i := range dst {
			dst[i] = rows[i*a+c]
		}
		return
	case OpNeg:
		x := ev.regs[in.x][:n]
		for i, v := range x {
			if v == math.MinInt64 && errs[i] == OK {
				errs[i] = Overflow
			}
			dst[i] = -v
		}
		return
	case OpConst:
		v := ev.m.pool[in.x]
		for i := range dst {
			dst[i] = v
		}
		return
	case OpNot:
		x := ev.regs[in.x][:n]
		for i, v := range x {
			dst[i] = b2i(v == 0)
		}
		return
	}
	x := ev.regs[in.x][:n]
	y := ev.regs[in.y][:n]
	switch in.op {
	case OpAdd:
		for i := range dst {
			a, b := x[i], y[i]
			s := a + b
			if (a^s)&(b^s) < 0 && errs[i] == OK {
				errs[i] = Overflow
			}
			dst[i] = s
		}
	case OpSub:
		for i := range dst {
			a, b := x[i], y[i]
			d := a - b
			if (a^b)&(a^d) < 0 && errs[i] == OK {
				errs[i] = Overflow
			}
			dst[i] = d
		}
	case OpMul:
		for i := range dst {
			p, ok := Mul(x[i], y[i])
			if !ok && errs[i] == OK {
				errs[i] = Overflow
			}
			dst[i] = p
		}
	case OpDiv:
		for i := range dst {
			q, c := Div(x[i], y[i])
			if c != OK && errs[i] == OK {
				errs[i] = c
			}
			dst[i] = q
		}
	case OpRem:
		for i := range dst {
			r, c := Rem(x[i], y[i])
			if c != OK && errs[i] == OK {
				errs[i] = c
			}
			dst[i] = r
		}
	case OpEq:
		for i := range dst {
			dst[i] = b2i(x[i] == y[i])
		}
	case OpNe:
		for i := range dst {
			dst[i] = b2i(x[i] != y[i])
		}
	case OpLt:
		for i := range dst {
			dst[i] = b2i(x[i] < y[i])
		}
	case OpLe:
		for i := range dst {
			dst[i] = b2i(x[i] <= y[i])
		}
	case OpGt:
		for i := range dst {
			dst[i] = b2i(x[i] > y[i])
		}
	case OpGe:
		for i := range dst {
			dst[i] = b2i(x[i] >= y[i])
		}
	case OpAnd:
		for i := range dst {
			dst[i] = b2i(x[i] != 0 && y[i] != 0)
		}
	case OpOr:
		for i := range dst {
			dst[i] = b2i(x[i] != 0 || y[i] != 0)
		}
	default:
		panic("expr: unknown instruction " + in.op.String())
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Eval evaluates e once over one row whose columns scope names. It is for
// tests and cold paths (it compiles e each call); hot paths compile an MFP
// once and evaluate chunks. The error is ErrDivisionByZero, ErrOverflow,
// or a check error (Check): the unknown column, or no expression.
func Eval(e *Expr, scope []Ref, row []int64) (int64, error) {
	if len(row) != len(scope) {
		panic("expr: Eval: row and scope differ in length")
	}
	if err := Check(e, scope); err != nil {
		return 0, err
	}
	const name = "\x00value"
	m, err := NewMFP(MFPSpec{Input: scope, Maps: []Map{{Name: name, Expr: e}}, Project: []Ref{{Column: name}}})
	if err != nil {
		return 0, err
	}
	var out Output
	m.NewEvaluator().EvalN(row, 1, &out)
	if len(out.Erred) > 0 {
		return 0, out.Codes[0].Err()
	}
	return out.Rows[0], nil
}
