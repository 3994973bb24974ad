package runtime

import (
	"context"
	"errors"
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
