package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// queuedBarriers counts the barriers (Sync, SyncRole, Stats) in the queues
// of every worker of rts that no worker has taken yet.
func queuedBarriers(rts []*Runtime) int {
	n := 0
	for _, r := range rts {
		for _, w := range r.workers {
			w.qmu.Lock()
			for _, q := range w.queue {
				if _, ok := q.cmd.(barrier); ok {
					n++
				}
			}
			w.qmu.Unlock()
		}
	}
	return n
}

// A nil context given to Sync, SyncRole, Stats, or a wait on a probe, a
// capture or a tally a runtime feeds, is refused at once with an error
// wrapping ErrNilContext, the same text in Solo and the pair, whether or
// not the call would have had to wait, and queues nothing. Sync, SyncRole
// and Stats panicked (ctx.Err of a nil interface), and so did a wait for a
// time the probe had not passed, while one for a time passed returned nil.
func TestANilContextIsRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		var nilCtx context.Context // not the literal: the linter refuses a nil Context as an argument
		pr, cp, tl := dataflow.NewProbe(s.workers), dataflow.NewCapture(s.workers), dataflow.NewTally(s.workers)
		s.send("in", 2, []int64{0, 1, 1, 1}, []int64{0, 1, 2, 2})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, pr)})
		s.must(CreateDataflow{Desc: dataflow.Desc{ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				c.Capture(cp, a.Oks)
				c.Tally(tl, a.Errs)
				return nil
			}}})
		for _, p := range []*dataflow.Probe{pr, &cp.Probe, &tl.Probe} {
			if err := p.WaitPassed(testCtx(t), 0); err != nil {
				t.Fatal(err)
			}
		}
		type call struct {
			name string
			err  error
		}
		var calls []call
		calls = append(calls, call{"runtime: Sync: ", s.ctl.Sync(nilCtx)})
		for _, role := range []Role{Solo, Maintenance, Interactive} {
			calls = append(calls, call{"runtime: SyncRole: ", s.ctl.SyncRole(nilCtx, role)})
		}
		for _, r := range s.rts {
			st, err := r.Stats(nilCtx)
			if st != (Stats{}) {
				t.Errorf("Stats of a nil context: %+v, want zero Stats", st)
			}
			calls = append(calls, call{"runtime: Stats: ", err})
		}
		for _, p := range []*dataflow.Probe{pr, &cp.Probe, &tl.Probe} {
			// 0 passed, 5 never will: each answered differently, or panicked.
			calls = append(calls, call{"dataflow: probe waiting to pass 0: ", p.WaitPassed(nilCtx, 0)})
			calls = append(calls, call{"dataflow: probe waiting to pass 5: ", p.WaitPassed(nilCtx, 5)})
		}
		for _, c := range calls {
			if want := c.name + ErrNilContext.Error(); c.err == nil || c.err.Error() != want || !errors.Is(c.err, ErrNilContext) {
				t.Errorf("%v, want %q wrapping ErrNilContext", c.err, want)
			}
		}
		if n := queuedBarriers(s.rts); n != 0 {
			t.Errorf("%d barriers queued by calls with a nil context", n)
		}
		if got := s.syncedErrors(t); len(got) != 0 {
			t.Fatalf("errors %q", got)
		}
	})
}

// A Sync, SyncRole or Stats whose context ends while a worker is stuck (a
// Build waiting on something outside the runtime) leaves no barrier
// queued: a health check polling with short timeouts left one a worker
// for every call, each applied to no one once the worker got to it, so
// the queues grew without bound for as long as the worker was stuck. A
// call still waiting when the worker is released returns once it has
// applied everything sent before it, and so does a Sync after: both have
// waited for the creates sent while the worker was stuck. In Solo and the
// pair, the stuck Build a Maintained one (the Maintenance runtime's in the
// pair) or a query's (the Interactive runtime's).
func TestEndedBarriersOfAStuckWorkerDoNotPileUp(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		for _, maintained := range []bool{true, false} {
			stuck := s.rts[:1] // Solo, or the pair's Maintenance runtime
			if s.mode == "pair" && !maintained {
				stuck = s.rts[1:]
			}
			role := stuck[0].Role()
			release := make(chan struct{})
			var entered, builtM, builtQ atomic.Int32
			pre := fmt.Sprintf("maintained=%v ", maintained)
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: pre + "stuck", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					entered.Add(1)
					select { // something outside the runtime
					case <-release:
					case <-c.Done():
					}
					return nil
				}}})
			// Sent while the worker is stuck: a Sync after the release
			// waits for them.
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: pre + "after", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(*dataflow.Context) error { builtM.Add(1); return nil }}})
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: pre + "after q", AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(*dataflow.Context) error { builtQ.Add(1); return nil }}})
			deadline := testCtx(t)
			for entered.Load() < int32(s.workers) {
				if deadline.Err() != nil {
					t.Fatalf("%d of %d workers entered the stuck Build", entered.Load(), s.workers)
				}
				goruntime.Gosched()
			}
			// ask starts a call of kind i in its own goroutine and waits
			// until its barrier is queued on the stuck runtime.
			ask := func(i int, ctx context.Context) <-chan error {
				res := make(chan error, 1)
				go func() {
					switch i % 3 {
					case 0:
						res <- s.ctl.Sync(ctx)
					case 1:
						res <- s.ctl.SyncRole(ctx, role)
					default:
						_, err := stuck[0].Stats(ctx)
						res <- err
					}
				}()
				for queuedBarriers(stuck) == 0 {
					select {
					case err := <-res:
						t.Fatalf("call %d returned %v before its barrier was queued", i, err)
					default:
					}
					if deadline.Err() != nil {
						t.Fatalf("call %d queued no barrier", i)
					}
					goruntime.Gosched()
				}
				return res
			}
			const calls = 2000
			for i := range calls {
				ctx, cancel := context.WithCancel(context.Background())
				res := ask(i, ctx)
				cancel() // its barrier is queued: the context ends while it waits
				if err := <-res; !errors.Is(err, context.Canceled) {
					t.Fatalf("call %d with its context ended: %v, want context.Canceled", i, err)
				}
				if n := queuedBarriers(s.rts); n != 0 {
					t.Fatalf("%sstuck: %d barriers queued after %d calls whose contexts ended", pre, n, i+1)
				}
			}
			waiting := ask(0, testCtx(t))
			close(release)
			if err := <-waiting; err != nil {
				t.Fatalf("the Sync waiting at the release: %v", err)
			}
			if m, q := builtM.Load(), builtQ.Load(); m != int32(s.workers) || q != int32(s.workers) {
				t.Fatalf("the Sync waiting at the release returned with %d and %d of %d workers' creates built", m, q, s.workers)
			}
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if n := queuedBarriers(s.rts); n != 0 {
				t.Fatalf("%d barriers queued after the Syncs", n)
			}
			if got := s.syncedErrors(t); len(got) != 0 {
				t.Fatalf("errors %q", got)
			}
		}
	})
}
