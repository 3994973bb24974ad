package benchrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracebench/tracebench/internal/benchflame"
)

// ErrFlamegraph is returned when the flame graph cannot be produced from a
// CPU profile.
var ErrFlamegraph = errors.New("benchrun: flame graph")

// flameLabels are the sample labels drawn as root frames, so the flame graph
// splits by runtime (solo, maintenance, interactive) and by operator.
var flameLabels = []string{"runtime", "operator"}

// writeFlamegraph writes a self-contained HTML flame graph of the CPU
// profile at profile to w, through internal/benchflame: pprof's own flame
// graph view, no server, no network, no graphviz. w gets the page only
// when the export succeeded, titled title (pprof's own title when empty).
//
// REQUIRES: the executable's main (or a test binary's TestMain) calls
// benchflame.RunChildIfRequested first, since the export runs in a
// subprocess of the running binary.
func writeFlamegraph(ctx context.Context, profile, title string, w io.Writer) error {
	opts := benchflame.Options{Profile: profile, Labels: flameLabels, Title: title}
	if err := benchflame.Write(ctx, w, opts); err != nil {
		return &flameError{err: err}
	}
	return nil
}

// flameError is a flame graph's failure as benchrun reports it: "benchrun:
// flame graph: " and what failed, without the name of the package that
// found it ("benchflame: bad profile: " reads "bad profile: "), as
// benchcmp profile reports the same failures. It is ErrFlamegraph and
// still the package's error (errors.Is: benchflame.ErrInterrupted, say).
type flameError struct{ err error }

func (e *flameError) Error() string {
	return ErrFlamegraph.Error() + ": " + strings.TrimPrefix(e.err.Error(), "benchflame: ")
}

func (e *flameError) Unwrap() []error { return []error{ErrFlamegraph, e.err} }

// flameTitle names a run's flame graph by its benchmarks, so that the
// pages of two runs (--index direct and --index imported) are told apart
// in a browser's tabs and details: pprof's own title is the executable's
// name and "cpu", alike for every run. benches are those that ran: an
// interrupted run's page names none it did not reach. A page of none says
// why (none), as pprof's title would name the executable alone: a shard
// that drew no benchmark, or a run stopped before its first sample.
func flameTitle(benches []*Benchmark, none string) string {
	switch len(benches) {
	case 0:
		return "CPU of no benchmark: " + none
	case 1:
		return "CPU of Benchmark" + benches[0].Name
	}
	return fmt.Sprintf("CPU of Benchmark%s and %d more", benches[0].Name, len(benches)-1)
}
