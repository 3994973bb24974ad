// Command benchrun validates, explains and generates workload specs and
// runs benchmarks over them; see docs/spec.md and `benchrun --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/internal/benchrun"
)

func main() {
	benchflame.RunChildIfRequested() // --flamegraph exports in a subprocess of this binary
	os.Exit(mainExit(os.Args[1:], benchrun.RuntimeEngine{}))
}

// mainExit runs benchrun on the process's streams with SIGINT or SIGTERM
// cancelling the run (exit 130, finished result lines intact, no
// temporary file left) and returns the exit code. A second signal is not
// caught: it ends the process at once, so a run blocked where the
// cancelled context cannot reach it (opening a named pipe) still stops.
// eng measures samples (benchrun.RuntimeEngine in the command).
func mainExit(args []string, eng benchrun.Engine) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the signals' default action again
	}()
	return runWith(ctx, os.Stdout, os.Stderr, args, eng)
}
