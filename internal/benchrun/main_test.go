package benchrun

import (
	"os"
	"testing"
	"time"

	"github.com/tracebench/tracebench/internal/benchflame"
)

// interruptFlameEnv makes the flame-graph export subprocess of a test end
// itself with SIGINT, as Ctrl-C in a terminal does to every process of
// the foreground group.
const interruptFlameEnv = "BENCHRUN_TEST_INTERRUPT_FLAME"

// TestMain lets this test binary serve the flame-graph export subprocess
// that --flamegraph starts (internal/benchflame).
func TestMain(m *testing.M) {
	if os.Getenv("TRACEBENCH_BENCHFLAME_CHILD") == "1" && os.Getenv(interruptFlameEnv) == "1" {
		p, err := os.FindProcess(os.Getpid())
		if err == nil {
			err = p.Signal(os.Interrupt)
		}
		if err != nil {
			panic(err)
		}
		time.Sleep(time.Minute)
		panic("SIGINT did not end the process")
	}
	benchflame.RunChildIfRequested()
	os.Exit(m.Run())
}
