package batch

import (
	"math"
	"strings"
	"testing"
)

// Uninit of a negative count panics naming it, as make does, where the
// size it asked the allocator for wrapped and the process died out of
// memory, a fatal error no recover catches.
func TestUninitOfANegativeCountPanicsNamingIt(t *testing.T) {
	for _, n := range []int{-1, math.MinInt} {
		func() {
			defer func() {
				p := recover()
				if msg, _ := p.(string); !strings.Contains(msg, "Uninit of -") {
					t.Errorf("Uninit(%d) panicked with %v, want a message naming Uninit and the count", n, p)
				}
			}()
			Uninit[int64](n)
		}()
	}
	if got := Uninit[uint64](0); got == nil || len(got) != 0 {
		t.Errorf("Uninit(0) = %#v, want an empty column", got)
	}
}
