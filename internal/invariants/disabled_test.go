//go:build !invariants

package invariants_test

import (
	"testing"

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
