//go:build invariants

package share

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestLeakedReaderIsReported: a reader collected without Release is reported
// by its point with the stack that created it; released ones never are.
func TestLeakedReaderIsReported(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	released := pt.Reader()
	released.Release()
	leakReader(pt)
	deadline := time.Now().Add(5 * time.Second)
	for len(pt.Leaks()) == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	leaks := pt.Leaks()
	if len(leaks) != 1 || !strings.Contains(leaks[0], "leakReader") {
		t.Fatalf("leaks = %q, want one naming leakReader", leaks)
	}
	runtime.KeepAlive(released)
}

//go:noinline
func leakReader(pt *Point) {
	_, _ = pt.ReaderAt(frontier.Min()) // never released
}
