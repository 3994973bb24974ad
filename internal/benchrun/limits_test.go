package benchrun

import (
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/workloads/spec"
)

// TestArrangeLimitDoesTheWork checks that the dd arrange limit sorts and
// consolidates every update (key, val and time kept apart, opposite diffs
// cancelled), so that no ratio is taken against a limit that skipped
// work, and that DDArrange reports it beside its comparator reference.
func TestArrangeLimitDoesTheWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab := spec.NewTable([]string{"key", "val"}, 0)
	type kvt struct {
		k, v int64
		t    uint64
	}
	want := map[kvt]int64{}
	for range 5000 {
		u := kvt{rng.Int64N(50) - 25, rng.Int64N(8), uint64(rng.IntN(3))}
		d := rng.Int64N(5) - 2
		if d == 0 {
			d = 1
		}
		tab.Append(u.t, d, []int64{u.k, u.v})
		want[u] += d
	}
	kept := 0
	for _, d := range want {
		if d != 0 {
			kept++
		}
	}
	d, got := limitArrange(tab)
	if got != kept || d <= 0 {
		t.Fatalf("limit kept %d updates in %v, want %d", got, d, kept)
	}
	units := map[string]bool{}
	for _, v := range ddLimit(&Benchmark{Base: "DDArrange"}, []*spec.Table{tab}) {
		units[v.Unit] = v.Value > 0
	}
	if !units["limit-ns/row"] || !units["limit-sort-ns/row"] || len(units) != 2 {
		t.Fatalf("DDArrange limits: %v", units)
	}
}
