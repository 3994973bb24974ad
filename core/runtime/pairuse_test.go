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

// Shutdown called twice at once, from two goroutines, while callers wait
// on Sync, SyncRole and on a query's capture and an index's probe that
// have not passed the time they wait for (the runtime that would move
// them is held behind): every wait returns, with an error wrapping
// ErrShutdown, whatever the order in which the waits and the Shutdowns
// start, and a probe already past its time still answers nil. Solo and the
// pair alike. Before, a probe's wait took no notice of the Shutdown and
// waited until its context ended: with context.Background, forever.
func TestWaitsReturnErrShutdownWhenShutDownTwiceAtOnce(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, lag := range []Role{Solo, Maintenance, Interactive} {
				if mode == "solo" && lag != Solo {
					continue
				}
				t.Run(fmt.Sprintf("%s/workers=%d/lag=%v", mode, w, lag), func(t *testing.T) {
					t.Parallel()
					s := newSetup(t, mode, w)
					idx := dataflow.NewProbe(w)
					s.send("in", 2, []int64{0, 1, 5, 6})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, idx)})
					cp := dataflow.NewCapture(w)
					s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
					for _, p := range []*dataflow.Probe{idx, &cp.Probe} {
						if err := p.WaitPassed(testCtx(t), 0); err != nil {
							t.Fatal(err)
						}
					}
					// The runtime that moves the waits' probes is held:
					// none can pass 5 before Shutdown.
					held := s.rts[0]
					if lag != Solo {
						held = s.role(lag)
					} else if mode == "pair" {
						held = s.role(Interactive)
					}
					release := stoppableGate(held)
					defer release()
					s.advance("in", 2, frontier.At(10))
					// A deadline only a wait that missed the Shutdown
					// reaches: it then fails with the context's error.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					waits := map[string]func() error{
						"sync":           func() error { return s.ctl.Sync(ctx) },
						"capture":        func() error { return cp.WaitPassed(ctx, 5) },
						"capture passed": func() error { return cp.WaitPassed(ctx, 0) },
						"probe passed":   func() error { return idx.WaitPassed(ctx, 0) },
						"syncrole":       func() error { return s.ctl.SyncRole(ctx, held.Role()) },
					}
					if held.Role() != Interactive {
						// The index's probe moves with the held runtime.
						waits["index"] = func() error { return idx.WaitPassed(ctx, 5) }
					}
					var mu gosync.Mutex
					got := map[string]error{}
					var wg gosync.WaitGroup
					for name, wait := range waits {
						wg.Add(1)
						go func() {
							defer wg.Done()
							err := wait()
							mu.Lock()
							got[name] = err
							mu.Unlock()
						}()
					}
					for range 2 {
						wg.Add(1)
						go func() { defer wg.Done(); s.rts[len(s.rts)-1].Shutdown() }()
					}
					wg.Wait()
					for name, err := range got {
						switch {
						case name == "capture passed" || name == "probe passed":
							if err != nil {
								t.Errorf("%s: %v, want nil", name, err)
							}
						case !errors.Is(err, ErrShutdown):
							t.Errorf("%s: %v, want ErrShutdown", name, err)
						}
					}
					if err := s.ctl.Sync(testCtx(t)); !errors.Is(err, ErrShutdown) {
						t.Errorf("Sync after Shutdown: %v, want ErrShutdown", err)
					}
					if err := cp.WaitPassed(testCtx(t), 5); !errors.Is(err, ErrShutdown) {
						t.Errorf("capture's wait after Shutdown: %v, want ErrShutdown", err)
					}
				})
			}
		}
	}
}

// stoppableGate is gate, but a worker held at it leaves once its runtime
// is shut down (Shutdown waits for the workers, which a gate only its
// release opens would keep), and it returns once every worker of r is held
// there: nothing sent after it moves r's dataflows until the release.
func stoppableGate(r *Runtime) (release func()) {
	ch := make(chan struct{})
	var held gosync.WaitGroup
	held.Add(len(r.workers))
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) {
			held.Done()
			select {
			case <-ch:
			case <-r.stop:
			}
		}}})
	}
	held.Wait()
	var once gosync.Once
	return func() { once.Do(func() { close(ch) }) }
}
