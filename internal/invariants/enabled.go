//go:build invariants

package invariants

import (
	"fmt"
	"sync/atomic"
)

// Enabled reports whether this is an invariant build (build tag invariants).
const Enabled = true

// Assert panics with msg if cond is false. It does nothing in builds without
// the invariants tag.
func Assert(cond bool, msg string) {
	if !cond {
		panic(violationPrefix + msg)
	}
}

// Assertf panics with the formatted message if cond is false. It does nothing
// in builds without the invariants tag, but its arguments are still evaluated
// there: guard hot-path calls with `if invariants.Enabled` (see the package
// documentation).
func Assertf(cond bool, format string, args ...any) {
	if !cond {
		panic(violationPrefix + fmt.Sprintf(format, args...))
	}
}

// Exclusive detects the concurrent use of a value its documentation gives
// to one goroutine at a time: a method of it calls Enter on entry and Exit
// on return, and an Enter while another goroutine is between the two
// panics, naming the misuse (the operation that found it busy). It needs
// no -race build and catches only uses that overlap: a value passed from
// one goroutine to another between calls is fine. Without the tag it is
// an empty struct, its methods are empty and a field of it takes no room
// (keep it off a struct's last field, where Go pads a zero-size field).
// Guard its calls with `if invariants.Enabled`, as hot-path assertions.
type Exclusive struct {
	busy atomic.Bool
}

// Enter marks the value in use by the calling goroutine, or panics if
// another goroutine uses it: op names the operation (say "share:
// Reader.Release").
func (e *Exclusive) Enter(op string) {
	if !e.busy.CompareAndSwap(false, true) {
		panic(violationPrefix + op + ": used by two goroutines at once (it is used by one goroutine at a time)")
	}
}

// Exit marks the value free again: the goroutine that called Enter calls
// it when the operation returns.
func (e *Exclusive) Exit() { e.busy.Store(false) }

// Busy reports whether a goroutine is between Enter and Exit (for tests).
func (e *Exclusive) Busy() bool { return e.busy.Load() }
