package render_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
)

// TestQueryAtTheTopOfTime is TestQueryEqualsReference at the last times
// of uint64: the inputs' updates at 2^64−6 … 2^64−1, the last time among
// them, and as_of at the first, at 2^64−3 or at the largest time itself.
// Each input is advanced past its last time to {}, the joins (a delta
// join's lookups compacted a time back), the reduce's min and the
// imports read the largest time as any other, and the output equals the
// reference's at every time from as_of on: no time wraps to 0.
func TestQueryAtTheTopOfTime(t *testing.T) {
	const times = 6
	base := uint64(math.MaxUint64 - (times - 1))
	for _, asOf := range []uint64{base, base + 3, math.MaxUint64} {
		r := testPlan(t, asOf)
		for seed := range uint64(2) {
			in := updates(seed, times)
			for _, us := range in {
				for i := range us {
					us[i].Time += base
				}
			}
			for _, mode := range []render.Mode{render.Imported, render.Direct} {
				for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
					for _, workers := range []int{1, 2} {
						name := fmt.Sprintf("as_of=%d/seed=%d/%v/%v/workers=%d", asOf, seed, mode, join, workers)
						got, _, _, _ := runFrom(t, r, in, base, times, workers, render.Options{Mode: mode, Join: join})
						if len(got) != int(math.MaxUint64-asOf)+1 {
							t.Fatalf("%s: %d times read, want %d", name, len(got), math.MaxUint64-asOf+1)
						}
						matchReference(t, name, r, in, got)
					}
				}
			}
		}
	}
}
