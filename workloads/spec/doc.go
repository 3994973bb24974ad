// Package spec decodes workload spec files (docs/spec.md) and reads their
// inputs: strict JSON into a Spec, CSV files and inline rows into Tables.
//
// Decoding runs in three steps. The JSON is read into an ordered tree that
// keeps each value's line and its number text (so 9007199254740993 is not
// rounded through float64) and refuses duplicate fields and strings that
// are not UTF-8 (docs/spec.md, "Decoding is strict"). The tree is
// converted field by field into a Spec, refusing unknown fields, wrong
// types, inexact integers and bad names. The Spec is then resolved into a
// logical plan (core/plan), which checks refs, expressions, the shared
// namespace, view cycles, output names and index keys; its field paths are
// mapped back to lines.
//
// Invariants:
//
//   - C1 (positions): every error that reports user input is an *Error
//     wrapping ErrInvalid, naming the file and, where known, the line and
//     the field path ("inputs.orders.generate.columns.okey.max") or, for a
//     CSV file, the line. Its message quotes at most maxQuote bytes of a
//     field name or value of the spec, and never a control character raw.
//   - C2 (exact numbers): integer fields are decoded from their text with
//     math/big, accepting exponent forms only when they denote an integer
//     exactly, except in inline rows, which follow the CSV rules (plain
//     decimal integers); nothing passes through float64 except retract
//     and s, which are fractions.
//   - C3 (order): inputs, views and indexes keep the file's order, which
//     fixes the order of gen's files and of explain's output.
//   - C4 (all or nothing): ReadCSV returns a table only when every line is
//     valid; Decode returns a Spec only when every check passed, and then
//     Spec.Plan is set.
//   - C5 (bounds): what a file may ask for is bounded before it costs
//     anything: arrays and objects nest at most MaxNesting deep (no field
//     path is built until a message needs it), a generated input has at
//     most MaxRows rows, and an update's time is at most MaxTime, which
//     the engine can advance an input past.
//
// A Spec is immutable after decoding and may be read by several
// goroutines.
package spec
