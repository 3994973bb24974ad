package batch

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestMergeUnderEmptySinceKeepsAdvancedTimes: a batch whose times were
// advanced to a since beyond its upper, merged again once every hold is gone
// (compaction {}), keeps those times and stays valid (B3).
func TestMergeUnderEmptySinceKeepsAdvancedTimes(t *testing.T) {
	ar := Arity{Key: 1, Val: 1}
	b1 := mustParse(t, ar, "[{0}, {2}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +1")
	b2 := mustParse(t, ar, "[{2}, {3}) since {0}\n2 | 2 @2 +1")
	m, err := Merge(b1, b2, frontier.At(3)) // since {3} > upper {3}'s times
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	b3 := mustParse(t, ar, "[{3}, {4}) since {0}\n1 | 1 @3 -2")
	out, err := Merge(m, b3, frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Check(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out.Desc().Since != frontier.Empty() {
		t.Fatalf("since %v, want {}", out.Desc().Since)
	}
	// (1,1) +2 @3 and -2 @3 cancel; (2,2) sits at its advanced time 3.
	if got := out.String(); got != "[{0}, {4}) since {}\n2 | 2 @3 +1" {
		t.Fatalf("got\n%s", got)
	}
}
