//go:build !invariants

package invariants_test

import (
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/internal/invariants"
)

func TestDisabled(t *testing.T) {
	if invariants.Enabled {
		t.Fatal("Enabled = true in a build without the invariants tag")
	}
}

func TestFalseAssertionsDoNotPanic(t *testing.T) {
	defer func() {
		if v := recover(); v != nil {
			t.Fatalf("a false assertion panicked without the invariants tag: %v", v)
		}
	}()
	invariants.Assert(false, "must not panic")
	invariants.Assertf(false, "must not panic: %d %s", 1, "x")
}

type record struct{ key, val, time, diff int64 }

//go:noinline
func assertUnguarded(n int64, s string, r record) {
	invariants.Assertf(n < 0, "n = %d, s = %s, r = %v", n, s, r)
}

// TestAssertfDoesNotAllocate checks the claim of the package documentation:
// without the tag an unguarded Assertf with non-constant arguments, which
// need interface conversions, allocates nothing.
func TestAssertfDoesNotAllocate(t *testing.T) {
	n := int64(123456789)
	allocs := testing.AllocsPerRun(100, func() {
		n++
		assertUnguarded(n, "a string", record{n, n + 1, n + 2, n + 3})
	})
	if allocs != 0 {
		t.Fatalf("unguarded Assertf allocated %v times per call, want 0", allocs)
	}
}

type guarded struct {
	use invariants.Exclusive
	n   int64
}

// TestExclusiveCostsNothing checks that without the tag an Exclusive takes
// no room in the struct that holds it and that its calls allocate nothing
// and never panic, overlapping or not.
func TestExclusiveCostsNothing(t *testing.T) {
	if size, bare := unsafe.Sizeof(guarded{}), unsafe.Sizeof(int64(0)); size != bare {
		t.Fatalf("a struct with an Exclusive field takes %d bytes, without it %d", size, bare)
	}
	var g guarded
	allocs := testing.AllocsPerRun(100, func() {
		g.use.Enter("x")
		g.use.Enter("x") // would be busy in an invariant build
		g.n++
		g.use.Exit()
	})
	if allocs != 0 || g.use.Busy() {
		t.Fatalf("Exclusive allocated %v times per run, busy %v; want 0, false", allocs, g.use.Busy())
	}
}
