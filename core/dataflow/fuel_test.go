package dataflow

import (
	"testing"

	"github.com/tracebench/tracebench/core/spine"
)

// TestArrangementsTakeTheWorkedFuel: the IndexManager works every
// arrangement's trace at every wake while it merges (Maintain), so an
// arrangement's spine takes spine.WorkedFuel per arriving update when the
// environment's spine options leave Fuel 0, and the options' fuel when
// they set one; both halves (oks and errs) alike.
func TestArrangementsTakeTheWorkedFuel(t *testing.T) {
	for _, c := range []struct{ set, want int64 }{{0, spine.WorkedFuel}, {-1, spine.WorkedFuel}, {3, 3}, {spine.DefaultFuel, spine.DefaultFuel}} {
		env := testEnv(t, 0, 1, NewHub(1))
		env.Spine = spine.Options{Fuel: c.set}
		if _, err := tallyInput(env, "d", NewTally(1)); err != nil {
			t.Fatal(err)
		}
		if n := len(env.Manager.spines); n != 2 {
			t.Fatalf("fuel %d: %d traces tracked, want the arrangement's two", c.set, n)
		}
		for _, tr := range env.Manager.spines {
			if got := tr.s.Inner().Fuel(); got != c.want {
				t.Errorf("fuel %d: %s takes %d per update, want %d", c.set, tr.name, got, c.want)
			}
		}
	}
}
