// Command benchcmp compares Go benchmark result files with benchstat's
// statistics, gates CI on regressions, merges sharded runs, fits scaling
// exponents and draws differential flame graphs. The logic is in
// internal/benchcmp; this package is its command line.
package main

import (
	"os"

	"github.com/tracebench/tracebench/internal/benchflame"
)

func main() {
	benchflame.RunChildIfRequested()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
