package benchrun

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tracebench/tracebench/internal/benchflame"
)

// ErrFlamegraph is returned when the flame graph cannot be produced from a
// CPU profile.
var ErrFlamegraph = errors.New("benchrun: flame graph")

// flameLabels are the sample labels drawn as root frames, so the flame graph
// splits by runtime (solo, maintenance, interactive) and by operator.
var flameLabels = []string{"runtime", "operator"}

// WriteFlamegraph writes a self-contained HTML flame graph of the CPU
// profile at profile to out (created only when the export succeeds), through
// internal/benchflame: pprof's own flame graph view, no server, no network,
// no graphviz.
//
// REQUIRES: the executable's main (or a test binary's TestMain) calls
// benchflame.RunChildIfRequested first, since the export runs in a
// subprocess of the running binary.
func WriteFlamegraph(ctx context.Context, profile, out string) error {
	opts := benchflame.Options{Profile: profile, Labels: flameLabels}
	if err := benchflame.WriteFile(ctx, out, opts); err != nil {
		return fmt.Errorf("%w: %w", ErrFlamegraph, err)
	}
	return nil
}

// flamegraphProfile returns the CPU profile path a --flamegraph run records
// to: the --cpuprofile file if one is asked for, else a temporary file that
// cleanup removes.
func flamegraphProfile(cpuprofile string) (path string, cleanup func(), err error) {
	if cpuprofile != "" {
		return cpuprofile, func() {}, nil
	}
	f, err := os.CreateTemp("", "benchrun-cpu-*.pprof")
	if err != nil {
		return "", nil, err
	}
	f.Close()
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}
