package benchrun

import (
	"os"
	"testing"

	"github.com/tracebench/tracebench/internal/benchflame"
)

// TestMain lets this test binary serve the flame-graph export subprocess
// that --flamegraph starts (internal/benchflame).
func TestMain(m *testing.M) {
	benchflame.RunChildIfRequested()
	os.Exit(m.Run())
}
