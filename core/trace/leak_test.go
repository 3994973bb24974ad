//go:build invariants

package trace

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/spine"
)

// TestLeakedHandleIsReported drops a handle without Release and expects the
// invariants build to report it with the stack that created it; a released
// handle is never reported.
func TestLeakedHandleIsReported(t *testing.T) {
	h, _ := NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	tr := h.State()
	released := h.Clone()
	released.Release()
	leakOne(h)
	deadline := time.Now().Add(5 * time.Second)
	for len(tr.Leaks()) == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	leaks := tr.Leaks()
	if len(leaks) != 1 {
		t.Fatalf("leaks = %d, want exactly 1 (the clone that was released must not count)", len(leaks))
	}
	if !strings.Contains(leaks[0], "leakOne") {
		t.Fatalf("leak report lacks the creating stack:\n%s", leaks[0])
	}
	runtime.KeepAlive(released)
}

//go:noinline
func leakOne(h *Handle) {
	_ = h.Clone() // never released
	h.Release()
}
