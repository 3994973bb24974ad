package expr

import (
	"strconv"
	"strings"
	"testing"
)

// TestAnErrorQuotesUpToItsBoundsWhole: an expression of maxEcho bytes is
// quoted whole and one a byte longer cut; a message of maxMsg bytes is
// kept whole and one a byte longer cut; a line break just before the
// end of the expression, where an error at its end stops, earns the
// hint as one before any other offset does.
func TestAnErrorQuotesUpToItsBoundsWhole(t *testing.T) {
	s := strings.Repeat("a", maxEcho)
	if got := echo(s, 0); got != strconv.Quote(s) {
		t.Errorf("echo of %d bytes: %s, want it whole", maxEcho, got)
	}
	if got := echo(s+"b", 0); !strings.HasSuffix(got, "(81 bytes)") {
		t.Errorf("echo of %d bytes: %s, want it cut", maxEcho+1, got)
	}
	m := strings.Repeat("m", maxMsg)
	if got := clip(m, maxMsg); got != m {
		t.Errorf("clip of %d bytes: %d bytes, want it whole", maxMsg, len(got))
	}
	if got := clip(m+"n", maxMsg); !strings.Contains(got, "bytes cut") {
		t.Errorf("clip of %d bytes: %d bytes, want it cut", maxMsg+1, len(got))
	}
	if !endedByLineBreak("a\n", 2, "expected operand") {
		t.Error("an error at the end, after a line break: no hint")
	}
	if endedByLineBreak("a\n", 3, "expected operand") {
		t.Error("an offset past the end: a hint")
	}
}
