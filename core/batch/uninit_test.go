package batch

import (
	"math"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/internal/invariants"
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

// TestGrowKeepsWhatWasThereAndMakesRoom: grow returns the slice itself
// while the room suffices (n of 0 or less included), else a copy of its
// elements with room for n more, of the length it had; its capacity grows
// as append's does, at least doubling a small slice. In an invariants
// build the new room is not cleared: it holds the 0xa5 bytes column fills
// memory with, where slices.Grow would have written zeros.
func TestGrowKeepsWhatWasThereAndMakesRoom(t *testing.T) {
	s := make([]int64, 3, 8)
	copy(s, []int64{7, -1, 9})
	for _, n := range []int{-2, 0, 5} {
		if g := grow(s, n); &g[0] != &s[0] || len(g) != 3 || cap(g) != 8 {
			t.Fatalf("grow by %d within the room: len %d cap %d, same array %v", n, len(g), cap(g), &g[0] == &s[0])
		}
	}
	g := grow(s, 6)
	if len(g) != 3 || cap(g) < 9 || cap(g) != 16 || &g[0] == &s[0] {
		t.Fatalf("grow by 6 of len 3 cap 8: len %d cap %d", len(g), cap(g))
	}
	if g[0] != 7 || g[1] != -1 || g[2] != 9 {
		t.Fatalf("grow lost the elements: %v", g)
	}
	if g = grow(g, 100); len(g) != 3 || cap(g) != 103 {
		t.Fatalf("grow past twice the capacity: len %d cap %d, want 3 and 103", len(g), cap(g))
	}
	big := grow(make([]rec, 0, 1024), 1025)
	if cap(big) < 1025 || cap(big) >= 2048 {
		t.Fatalf("grow of a large slice: cap %d, want from 1025 to under 2048", cap(big))
	}
	if invariants.Enabled {
		room := g[len(g):cap(g)]
		for i, x := range room {
			if uint64(x) != 0xa5a5a5a5a5a5a5a5 {
				t.Fatalf("new room element %d is %#x: cleared, not left to its writer", i, x)
			}
		}
	}
}
