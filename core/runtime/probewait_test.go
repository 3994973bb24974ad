package runtime

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// A probe's, a capture's or a tally's wait called from a Build, on a
// worker's goroutine, is refused at once with an error wrapping
// ErrOnWorker when the probe is fed by dataflows of that runtime or of
// the pair's other one: only their workers move it, and the one running
// the Build steps nothing until it returns (before, the wait lasted until
// its context ended). It is refused whether or not the probe has passed
// the time, so the answer is the same in Solo and the pair, whichever
// runtime builds and however far the other has got: here a Maintained
// index's probe (passed 0, not 5), a query's capture and tally of it, and
// a probe the Build attaches itself. Outside the Build the same waits
// answer, and the create is built.
func TestProbeWaitsFromABuildReturnErrOnWorker(t *testing.T) {
	var want string
	var wantMu gosync.Mutex
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", mode, w, maintained), func(t *testing.T) {
					t.Parallel()
					s := newSetup(t, mode, w)
					idx := dataflow.NewProbe(w)
					s.send("in", 2, []int64{0, 1, 5, 6})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, idx)})
					cp, tl := dataflow.NewCapture(w), dataflow.NewTally(w)
					s.must(CreateDataflow{Desc: dataflow.Desc{
						ID: "read", AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							a, err := c.ImportIndex("idx")
							if err != nil {
								return err
							}
							c.Capture(cp, a.Oks)
							c.Tally(tl, a.Oks)
							return nil
						},
					}})
					for _, p := range []*dataflow.Probe{idx, &cp.Probe, &tl.Probe} {
						if err := p.WaitPassed(testCtx(t), 0); err != nil {
							t.Fatal(err)
						}
					}
					// Ends only if a wait is not refused: it then fails
					// with the context's error, not ErrOnWorker.
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					got := s.callsInBuild(t, "waits", maintained, func(c *dataflow.Context) (map[string]func() error, error) {
						own := dataflow.NewProbe(w)
						if maintained {
							in, err := c.Input("in", 2)
							if err != nil {
								return nil, err
							}
							c.Probe(own, in.Oks)
						} else {
							a, err := c.ImportIndex("idx")
							if err != nil {
								return nil, err
							}
							c.Probe(own, a.Oks.Stream)
						}
						return map[string]func() error{
							"the index's probe, passed":     func() error { return idx.WaitPassed(ctx, 0) },
							"the index's probe, not passed": func() error { return idx.WaitPassed(ctx, 5) },
							"the query's capture":           func() error { return cp.WaitPassed(ctx, 0) },
							"the query's tally":             func() error { return tl.WaitPassed(ctx, 0) },
							"its own probe":                 func() error { return own.WaitPassed(ctx, 0) },
						}, nil
					})
					if len(got) != 5 {
						t.Fatalf("%d waits made, want 5", len(got))
					}
					for name, errs := range got {
						if len(errs) != w {
							t.Fatalf("%s waited for by %d workers, want %d", name, len(errs), w)
						}
						for _, err := range errs {
							if !errors.Is(err, ErrOnWorker) {
								t.Errorf("waiting for %s from a Build: %v, want ErrOnWorker", name, err)
								continue
							}
							wantMu.Lock()
							if want == "" {
								want = errors.Unwrap(err).Error()
							}
							if errors.Unwrap(err).Error() != want {
								t.Errorf("waiting for %s from a Build: %q, want %q as everywhere", name, err, want)
							}
							wantMu.Unlock()
						}
					}
					if err := idx.WaitPassed(testCtx(t), 0); err != nil {
						t.Errorf("the index's probe outside the Build: %v", err)
					}
					// Built: the index, the query and this create (Solo), or
					// the builder's two (the pair).
					builder, built := Solo, 3*w
					if mode == "pair" {
						builder, built = Interactive, 2*w
						if maintained {
							builder = Maintenance
						}
					}
					if st, err := s.role(builder).Stats(testCtx(t)); err != nil || st.Dataflows != built {
						t.Errorf("Stats after the create: %+v, %v; want %d dataflows", st, err, built)
					}
				})
			}
		}
	}
}
