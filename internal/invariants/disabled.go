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

// Exclusive detects the concurrent use of a value its documentation gives
// to one goroutine at a time, in invariant builds. Here it is an empty
// struct: a field of it takes no room (off a struct's last field) and its
// methods do nothing.
type Exclusive struct{}

// Enter does nothing in builds without the invariants tag.
func (e *Exclusive) Enter(op string) {}

// Exit does nothing in builds without the invariants tag.
func (e *Exclusive) Exit() {}

// Busy reports false in builds without the invariants tag.
func (e *Exclusive) Busy() bool { return false }
