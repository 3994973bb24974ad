package expr

import (
	"errors"
	"testing"
)

// The codes are stored in traces and compared across runtimes: their values
// and messages are part of the contract (docs/spec.md "Expressions").
func TestCodesAreStableAndNamedBySpec(t *testing.T) {
	for _, c := range []struct {
		code Code
		row  int64
		msg  string
	}{
		{DivisionByZero, 1, "division by zero"},
		{Overflow, 2, "numeric overflow"},
		{NegativeMultiplicity, 3, "negative multiplicity"},
	} {
		if c.code.Row() != c.row {
			t.Errorf("%v: row value %d, want %d", c.code, c.code.Row(), c.row)
		}
		got, err := Message(c.row)
		if err != nil || got != c.msg {
			t.Errorf("Message(%d) = %q, %v; want %q", c.row, got, err, c.msg)
		}
		if c.code.Err() == nil || c.code.Err().Error() != c.msg || c.code.String() != c.msg {
			t.Errorf("%d: sentinel %v, String %q; want %q", c.row, c.code.Err(), c.code.String(), c.msg)
		}
	}
	if OK.Err() != nil {
		t.Errorf("OK.Err() = %v, want nil", OK.Err())
	}
	for _, bad := range []int64{0, 4, -1} {
		if m, err := Message(bad); !errors.Is(err, ErrUnknownCode) {
			t.Errorf("Message(%d) = %q, %v; want ErrUnknownCode", bad, m, err)
		}
	}
}
