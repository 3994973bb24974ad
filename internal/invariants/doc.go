// Package invariants holds assertions that cost nothing in normal builds and
// panic in invariant builds.
//
// An invariant build is any build with the invariants tag:
//
//	go test -tags invariants ./...
//
// Enabled is a constant, true exactly in invariant builds. In other builds
// Assert and Assertf have empty bodies; the compiler inlines them and the call
// disappears.
//
// What does not disappear is the evaluation of the arguments. Go evaluates the
// arguments of a call before the call, whatever the callee does with them, so
// an argument with a cost (a function call, a String method, a loop over a
// batch) is paid in every build. Assertf adds nothing to that: its empty body
// is inlined, so escape analysis keeps the variadic slice and the interface
// values on the stack and the call allocates nothing (a test checks this).
// On hot paths (per tuple, per seek, per merge step) guard the assertion with
// the constant anyway, so the whole block, arguments included, is compiled
// out:
//
//	if invariants.Enabled {
//		invariants.Assertf(lo <= hi, "batch: seek bounds [%d, %d)", lo, hi)
//	}
//
// A cheap condition with a constant message can call Assert directly.
//
// Exclusive detects a value used by two goroutines at once where its
// documentation allows one at a time (core/share's Reader, Import, Padded
// and Bundle):
// each of its methods calls Enter and Exit under `if invariants.Enabled`,
// and an Enter while another goroutine is inside panics, naming the
// operation. Without the tag it is an empty struct, which takes no room
// off a struct's last field, and the guarded calls are compiled out.
//
// IsViolation tells a check's panic from any other. A dataflow recovers a
// panic in an operator's Step or Shutdown as that dataflow's error
// (core/dataflow, ErrOperatorPanicked), but raises a violation again: it
// is the engine's own bug, and an invariant build's tests must stop where
// it is found.
//
// NB: a failed assertion is a bug in tracebench, never bad user input. Bad
// input is reported with an error naming what is wrong (the file, line or
// field of a spec, the argument of a call). This package imports no other
// package of the module, so every package may import it.
package invariants
