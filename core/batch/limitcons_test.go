package batch

import (
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestLimitsConsolidateOnlyEqualTimes: the bench limits sum the updates
// of a (key, val) at one time and keep its other times apart, as a build
// and a merge do; the merge limit advances times to its since first, so
// there the times it merges together are the ones at or before it.
func TestLimitsConsolidateOnlyEqualTimes(t *testing.T) {
	for _, lsd := range []bool{false, true} {
		lim := SortLimit{lsd: lsd}
		lim.Load([]int64{1, 1, 1, 1, 1, 1, 2, 1}, []uint64{4, 3, 4, 5}, []int64{1, 2, 3, 4})
		lim.Run()
		if want := []rec{{1, 1, 3, 2}, {1, 1, 4, 4}, {2, 1, 5, 4}}; !slices.Equal(lim.out, want) {
			t.Fatalf("lsd=%v: %v, want %v", lsd, lim.out, want)
		}
	}
	a := mustParse(t, Arity{1, 1}, "[{0}, {3}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +2\n1 | 1 @2 +4")
	b := mustParse(t, Arity{1, 1}, "[{3}, {6}) since {0}\n1 | 1 @3 +8\n1 | 1 @5 +16")
	// b0's key sorts first: a's updates are the ones left after the other
	// input runs out.
	b0 := mustParse(t, Arity{1, 1}, "[{3}, {6}) since {0}\n0 | 1 @3 +8")
	for _, c := range []struct {
		b     *Batch
		since frontier.Time
		want  []rec
	}{
		{b, 0, []rec{{1, 1, 0, 1}, {1, 1, 1, 2}, {1, 1, 2, 4}, {1, 1, 3, 8}, {1, 1, 5, 16}}},
		{b, 1, []rec{{1, 1, 1, 3}, {1, 1, 2, 4}, {1, 1, 3, 8}, {1, 1, 5, 16}}},
		{b, 2, []rec{{1, 1, 2, 7}, {1, 1, 3, 8}, {1, 1, 5, 16}}},
		{b0, 2, []rec{{0, 1, 3, 8}, {1, 1, 2, 7}}},
	} {
		l, err := NewMergeLimit(a, c.b, c.since)
		if err != nil {
			t.Fatal(err)
		}
		l.Run()
		if !slices.Equal(l.out, c.want) {
			t.Fatalf("since %d: %v, want %v", c.since, l.out, c.want)
		}
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
	}
}
