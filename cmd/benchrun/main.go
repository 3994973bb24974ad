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
// A broken pipe on standard output or error is a failed write, not the
// end of the process.
// eng measures samples (benchrun.RuntimeEngine in the command).
func mainExit(args []string, eng benchrun.Engine) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A reader of standard output or error that goes away (run ... |
	// head) makes a write fail with EPIPE instead of killing the
	// process with SIGPIPE: killed, a run left its profiles' and flame
	// graph's temporary files beside them and said nothing of the
	// results --out lacks; failed, it ends as on a full disk (exit 1,
	// what it wrote kept, nothing temporary left).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		<-ctx.Done()
		stop() // the signals' default action again
	}()
	return runWith(ctx, os.Stdout, os.Stderr, args, eng)
}
