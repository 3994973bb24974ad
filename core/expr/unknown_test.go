package expr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestAnUnknownColumnsErrorListsWhatIsAvailable: the error names the
// columns in scope, the first 12 of a longer scope then "...", and
// "none" for an empty one; Check and NewMFP word it alike.
func TestAnUnknownColumnsErrorListsWhatIsAvailable(t *testing.T) {
	e, err := Parse("x + 1")
	if err != nil {
		t.Fatal(err)
	}
	var scope []Ref
	var names []string
	for i := range 13 {
		scope = append(scope, Ref{Column: fmt.Sprintf("c%d", i)})
		names = append(names, fmt.Sprintf("c%d", i))
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "unknown column x (available: none)"},
		{2, "unknown column x (available: c0, c1)"},
		{12, "unknown column x (available: " + strings.Join(names[:12], ", ") + ")"},
		{13, "unknown column x (available: " + strings.Join(names[:12], ", ") + ", ...)"},
	} {
		err := Check(e, scope[:tc.n])
		var xe *Error
		if !errors.As(err, &xe) || xe.Msg != tc.want || !errors.Is(err, ErrUnknownColumn) {
			t.Errorf("Check in a scope of %d: %v, want %q", tc.n, err, tc.want)
		}
		_, err = NewMFP(MFPSpec{Input: scope[:tc.n], Maps: []Map{{Name: "m", Expr: e}}})
		if !errors.As(err, &xe) || xe.Msg != tc.want {
			t.Errorf("NewMFP over %d columns: %v, want %q", tc.n, err, tc.want)
		}
	}
}
