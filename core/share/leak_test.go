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

// TestLeakedImportIsReported: an import collected without Close (its replay
// queue and own hold registered for ever) is reported by its point with the
// stack that created it; a closed one never is.
func TestLeakedImportIsReported(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	closeImport(t, pt)
	leakImport(t, pt)
	deadline := time.Now().Add(5 * time.Second)
	for len(pt.Leaks()) == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// A few more collections: the closed import, unreachable since
	// closeImport returned, would be reported by now if Close had not
	// stopped its report.
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	leaks := pt.Leaks()
	if len(leaks) != 1 || !strings.Contains(leaks[0], "leakImport") {
		t.Fatalf("leaks = %q, want one naming leakImport", leaks)
	}
}

//go:noinline
func closeImport(t *testing.T, pt *Point) {
	im, err := pt.Import(frontier.Min(), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	im.Close()
	im.Reader().Release()
}

//go:noinline
func leakImport(t *testing.T, pt *Point) {
	im, err := pt.Import(frontier.Min(), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	im.Reader().Release() // the consumer's reader goes; the import is never closed
}
