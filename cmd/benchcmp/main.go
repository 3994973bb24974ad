// Command benchcmp compares Go benchmark result files with benchstat's
// statistics, gates CI on regressions, merges sharded runs, fits scaling
// exponents and draws differential flame graphs. The logic is in
// internal/benchcmp; this package is its command line.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tracebench/tracebench/internal/benchflame"
)

func main() {
	benchflame.RunChildIfRequested()
	os.Exit(mainExit(os.Args[1:]))
}

// mainExit runs benchcmp on the process's streams with SIGINT or SIGTERM
// stopping it (exit 130) with nothing half-written: no part of a report
// on standard output, no flame graph and no temporary file beside one,
// and no export subprocess left running. A second signal is not caught:
// it ends the process at once, so a write blocked on a full pipe still
// stops.
func mainExit(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the signals' default action again
	}()
	return runContext(ctx, args, os.Stdout, os.Stderr)
}
