package invariants

import (
	"errors"
	"testing"
)

// IsViolation tells an invariant check's panic value from any other: the
// checks' message prefix, on a string.
func TestIsViolation(t *testing.T) {
	for _, c := range []struct {
		p    any
		want bool
	}{
		{violationPrefix + "a check", true},
		{"invariant violated", false},
		{"boom", false},
		{errors.New(violationPrefix + "an error"), false},
		{nil, false},
	} {
		if got := IsViolation(c.p); got != c.want {
			t.Errorf("IsViolation(%#v) = %v, want %v", c.p, got, c.want)
		}
	}
}
