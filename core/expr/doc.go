// Package expr parses, checks and evaluates the scalar expressions of a
// workload spec: Go expression syntax over int64 columns (docs/spec.md
// "Expressions"), and the map-filter-project that joins, views and reduces
// apply to every row (Materialize's MapFilterProject and JoinClosure,
// docs/semantics.md §5.1).
//
// The parts:
//
//   - Parse: go/scanner's tokens of the accepted subset (decimal
//     literals, refs, + - * / %, unary - and !, comparisons, && ||,
//     parentheses) are read into a small tree of Nodes, an *Expr,
//     immutable; binary operators by precedence with a stack, so a chain
//     of them at one level is no nesting, however long, while parentheses
//     and unary operators nest at most MaxNesting deep. Anything else is
//     refused as go/parser, reading the whole text, names it.
//   - Check: every ref of an expression names a column of a scope (a list of
//     Refs: "alias.column" for the columns of a join's entries, "name" for
//     map names and a simple view's input columns).
//   - MFPSpec and NewMFP: equivalences, maps, filters and a projection,
//     compiled once into one register program (an *MFP, immutable, shared).
//   - Evaluator: evaluates an MFP over a chunk of rows at a time (Chunk
//     rows, fewer when the program needs thousands of registers, so that
//     its registers stay within a fixed budget; flat []int64 with the input
//     arity), one instruction over the whole chunk at a time. Output: the
//     kept rows projected, their input indexes, and the erred rows with
//     their Code.
//   - Add, Sub, Mul, Neg, Div, Rem: checked int64 arithmetic, for values
//     and for diffs (a join multiplies diffs with Mul).
//
// Errors. Parse and check errors are *Error values naming the expression
// and what is wrong (ErrSyntax, ErrUnknownColumn); a caller adds the spec
// field. Evaluation errors are Codes whose sentinels ErrDivisionByZero and
// ErrOverflow carry exactly the messages of the error collection.
//
// Error codes. Code is the one home of the error collection's codes
// (codes.go): their values (an error row is one int64 column, the code),
// their messages (MsgDivisionByZero, MsgOverflow, MsgNegativeMultiplicity,
// the text of docs/spec.md "Expressions") and Message, from a row's code to its
// message. core/join, core/reduce and core/dataflow use these and no codes
// of their own (E6).
//
// Decisions:
//
//   - A literal is at most 9223372036854775807. "-9223372036854775808" is
//     unary minus on an out-of-range literal and is a parse error; the least
//     int64 is written "-9223372036854775807 - 1". A literal with a leading
//     zero ("07", octal in Go) is refused rather than read either way.
//   - A bare ref names a map (or, in a simple view, an input column); a
//     join's columns are always alias.column. Refs are matched exactly.
//
// Invariants:
//
//	E1  Evaluation order: maps in order, then filters in order; within an
//	    expression operands left to right, depth first; && and || evaluate
//	    both sides. The first error in that order is the row's error.
//	E2  A row dropped by an equivalence or by a filter has no error from
//	    anything evaluated after that point; an error before it wins over
//	    the drop.
//	E3  / and % by 0 are DivisionByZero; MinInt64 / -1 and overflow of + -
//	    * and unary - are Overflow; x % -1 is 0; / and % truncate toward
//	    zero. No operation panics and no wrapped value is ever returned as
//	    a result.
//	E4  Per-row work has no map lookup, interface call, closure call or
//	    allocation: the operator switch runs once per instruction per chunk.
//	E5  An MFP is immutable; an Evaluator belongs to one goroutine.
//	E6  Code values are stable (DivisionByZero 1, Overflow 2,
//	    NegativeMultiplicity 3); Message(c.Row()) is c's SPEC message.
//
// The reference evaluator (core/reference) evaluates the same expressions on
// math/big over the go/ast tree, independently of this package; a fuzz
// target compares the two.
package expr
