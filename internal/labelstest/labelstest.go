// Package labelstest reads, in tests, the pprof labels the calling
// goroutine carries: the runtime has no getter for them, so it finds the
// goroutine in the goroutine profile, which prints each goroutine's labels
// above its stack.
package labelstest

import (
	"runtime/pprof"
	"strings"
	"testing"
)

// Own returns the calling goroutine's labels as the goroutine profile
// prints them (`{"k1":"v1", "k2":"v2"}`, keys sorted), "" if it carries
// none.
func Own(t testing.TB) string {
	t.Helper()
	var sb strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&sb, 1); err != nil {
		t.Fatal(err)
	}
	last := ""
	for line := range strings.Lines(sb.String()) {
		switch {
		case strings.HasPrefix(line, "# labels: "):
			last = strings.TrimSpace(strings.TrimPrefix(line, "# labels: "))
		case strings.TrimSpace(line) == "":
			last = ""
		case strings.Contains(line, "labelstest.Own"):
			return last
		}
	}
	return ""
}
