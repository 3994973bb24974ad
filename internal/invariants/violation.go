package invariants

import "strings"

// violationPrefix begins the message of every panic an invariant build's
// checks raise (Assert, Assertf, Exclusive).
const violationPrefix = "invariant violated: "

// IsViolation reports whether p, a value recovered from a panic, is an
// invariant check's: the engine's own bug, found by an invariant build.
// Code that turns a panic into an error (a dataflow recovering an
// operator's, core/dataflow) panics again with such a value, so that an
// invariant build stops at the first broken invariant instead of
// reporting it as one dataflow's error.
func IsViolation(p any) bool {
	s, ok := p.(string)
	return ok && strings.HasPrefix(s, violationPrefix)
}
