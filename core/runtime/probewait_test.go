package runtime

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
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

// laterCallOp is an operator that calls call at its first step whose
// input frontier has passed 1 (never at the create's first passes, which
// a Build's refusal covers) and sends what it returned on got.
type laterCallOp[T any] struct {
	in   *dataflow.Port[T]
	call func() error
	got  chan error
}

func (o *laterCallOp[T]) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if o.call != nil && frontier.At(2).LessEqual(in) {
		o.got <- o.call()
		o.call = nil
	}
	return frontier.Empty()
}

func (o *laterCallOp[T]) Shutdown() {}

// A probe's or a capture's wait called from an operator's Step, on a
// worker's goroutine, for a time the probe has not passed, returns an
// error wrapping ErrOnWorker once it has waited about half a millisecond
// (dataflow.StepWaitDelay), as Sync does there: the worker moves the
// probe only once the step returns (before, the wait lasted until its
// context ended, the worker stuck meanwhile). Here, in a step after the
// create (the input advanced past 1), the step's own dataflow's probe
// and capture, and a Maintained index's probe (fed by the pair's other
// runtime, for a query), none of which passes 5; the runtime goes on.
func TestProbeWaitsFromAStepReturnErrOnWorker(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		idx := dataflow.NewProbe(s.workers)
		s.send("in", 2, []int64{0, 1, 5, 6})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, idx)})
		// Ends only if a wait is not refused: it then fails with the
		// context's error, not ErrOnWorker.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		got := make(chan error, 6*s.workers)
		for _, maintained := range []bool{true, false} {
			own, cp := dataflow.NewProbe(s.workers), dataflow.NewCapture(s.workers)
			waits := func() error {
				for _, wait := range []func() error{
					func() error { return own.WaitPassed(ctx, 5) },
					func() error { return cp.WaitPassed(ctx, 5) },
					func() error { return idx.WaitPassed(ctx, 5) },
				} {
					got <- wait()
				}
				return nil
			}
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: fmt.Sprintf("steps maintained=%v", maintained), Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					b := c.NewOperator("waits")
					if maintained {
						in, err := c.Input("in", 2)
						if err != nil {
							return err
						}
						c.Probe(own, in.Oks)
						c.CaptureChunks(cp, in.Oks, 2)
						return b.Build(&laterCallOp[*dataflow.Chunk]{in: dataflow.AddInput(b, "rows", in.Oks), call: waits, got: make(chan error, 1)})
					}
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Probe(own, a.Oks.Stream)
					c.Capture(cp, a.Oks)
					return b.Build(&laterCallOp[*batch.Batch]{in: dataflow.AddInput(b, "batches", a.Oks.Stream), call: waits, got: make(chan error, 1)})
				},
			}})
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		s.advance("in", 2, frontier.At(2))
		for range 6 * s.workers {
			if err := <-got; !errors.Is(err, ErrOnWorker) {
				t.Errorf("a probe's wait from a step: %v, want ErrOnWorker", err)
			}
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
}
