package expr

import (
	"errors"
	"fmt"
)

// The messages of the error collection, exactly as users see them
// (docs/spec.md "Expressions").
const (
	MsgDivisionByZero       = "division by zero"
	MsgOverflow             = "numeric overflow"
	MsgNegativeMultiplicity = "negative multiplicity"
)

// ErrDivisionByZero, ErrOverflow and ErrNegativeMultiplicity are the
// sentinels of the codes. Their messages are exactly the error collection's
// messages, without a package prefix, because they are what users see.
var (
	ErrDivisionByZero       = errors.New(MsgDivisionByZero)
	ErrOverflow             = errors.New(MsgOverflow)
	ErrNegativeMultiplicity = errors.New(MsgNegativeMultiplicity)
)

// ErrUnknownCode: an error row carries a code that is none of the codes.
var ErrUnknownCode = errors.New("expr: unknown error code")

// Code is an error of the error collection, or OK. It is the one home of
// the error codes: an error row (of a Collection's errs, an arrangement's
// errs half keyed by code, a join's or a reduce's errors) is one int64
// column holding Code.Row(), and every operator package names its codes
// here. The values are stable: they are stored in traces and compared
// across runtimes.
type Code uint8

// The codes. Evaluation yields OK, DivisionByZero or Overflow; Overflow is
// also a join's diff product, an arrangement's consolidated diff or a
// reduce's aggregate leaving int64; NegativeMultiplicity is a reduce's or a
// distinct's group with a record of negative count.
const (
	OK                   Code = 0
	DivisionByZero       Code = 1
	Overflow             Code = 2
	NegativeMultiplicity Code = 3
)

// Error-row values of the codes (Code.Row as constants, for per-row code).
const (
	CodeDivisionByZero       = int64(DivisionByZero)
	CodeOverflow             = int64(Overflow)
	CodeNegativeMultiplicity = int64(NegativeMultiplicity)
)

// Row returns the error row's column value of c.
func (c Code) Row() int64 { return int64(c) }

// Err returns the sentinel of c, or nil for OK.
func (c Code) Err() error {
	switch c {
	case DivisionByZero:
		return ErrDivisionByZero
	case Overflow:
		return ErrOverflow
	case NegativeMultiplicity:
		return ErrNegativeMultiplicity
	}
	return nil
}

func (c Code) String() string {
	if e := c.Err(); e != nil {
		return e.Error()
	}
	if c == OK {
		return "ok"
	}
	return fmt.Sprintf("code %d", uint8(c))
}

// Message returns the error collection's message of an error row's code:
// exactly the text of docs/spec.md "Expressions". A code that is none of the
// error codes (OK included) is ErrUnknownCode, naming the value.
func Message(code int64) (string, error) {
	switch code {
	case CodeDivisionByZero:
		return MsgDivisionByZero, nil
	case CodeOverflow:
		return MsgOverflow, nil
	case CodeNegativeMultiplicity:
		return MsgNegativeMultiplicity, nil
	}
	return "", fmt.Errorf("%w %d", ErrUnknownCode, code)
}
