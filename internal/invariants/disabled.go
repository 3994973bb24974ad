//go:build !invariants

package invariants

// Enabled reports whether this is an invariant build (build tag invariants).
const Enabled = false

// Assert panics with msg if cond is false. It does nothing in builds without
// the invariants tag.
func Assert(cond bool, msg string) {}

// Assertf panics with the formatted message if cond is false. It does nothing
// in builds without the invariants tag, but its arguments are still evaluated
// there: guard hot-path calls with `if invariants.Enabled` (see the package
// documentation).
func Assertf(cond bool, format string, args ...any) {}
