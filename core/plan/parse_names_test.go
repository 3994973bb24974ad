package plan

import (
	"errors"
	"testing"
)

// TestAggregateAndJoinNamesRoundTrip: every aggregate function and join
// strategy parses from its name, and nothing else parses.
func TestAggregateAndJoinNamesRoundTrip(t *testing.T) {
	for _, f := range []AggFn{Count, Sum, Min, Max} {
		if got, err := ParseAggFn(f.String()); err != nil || got != f {
			t.Errorf("ParseAggFn(%q) = %v, %v", f.String(), got, err)
		}
	}
	for _, s := range []string{"", "avg", "Max", "AggFn(4)"} {
		if _, err := ParseAggFn(s); !errors.Is(err, ErrAggFn) {
			t.Errorf("ParseAggFn(%q): %v, want ErrAggFn", s, err)
		}
	}
	for _, k := range []JoinKind{Linear, Delta} {
		if got, err := ParseJoinKind(k.String()); err != nil || got != k {
			t.Errorf("ParseJoinKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	for _, s := range []string{"", "nested", "Delta"} {
		if _, err := ParseJoinKind(s); !errors.Is(err, ErrJoinKind) {
			t.Errorf("ParseJoinKind(%q): %v, want ErrJoinKind", s, err)
		}
	}
}
