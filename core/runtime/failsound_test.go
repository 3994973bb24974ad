package runtime

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// busyOp takes its input and activates itself again at every step, so that
// its worker steps it at every round.
type busyOp struct {
	in  *dataflow.Port[*batch.Batch]
	act func()
}

func (o *busyOp) Step(frontier.Frontier) frontier.Frontier {
	o.in.Take()
	o.act()
	return frontier.Empty()
}

func (o *busyOp) Shutdown() {}

// A Failer called from a goroutine the Build started, while the worker
// steps the dataflow's operators, reports its error as the dataflow's and
// holds no operator: the one the worker steps at that moment is not the
// caller, so the probe downstream of it passes what the input reaches
// (before, the failure was recorded against whichever operator the worker
// was stepping, which was then held and froze the waits downstream of it,
// and the call read the worker's state unsynchronized). Solo and the
// pair, one and two workers; run with -race.
func TestAFailerCalledFromAnotherGoroutineHoldsNothing(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		p := dataflow.NewProbe(s.workers)
		var stop atomic.Bool
		var calls atomic.Int64
		done := make(chan struct{})
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				b := c.NewOperator("busy")
				op := &busyOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), act: b.Activator()}
				if err := b.Build(op); err != nil {
					return err
				}
				c.Probe(p, dataflow.AddOutput[*dataflow.Chunk](b))
				if c.Worker() == 0 {
					fail := c.Failer()
					go func() {
						defer close(done)
						for !stop.Load() {
							fail(errors.New("met away"))
							calls.Add(1)
							time.Sleep(200 * time.Microsecond)
						}
					}()
				}
				return nil
			},
		}})
		for tm := range int64(10) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
			time.Sleep(2 * time.Millisecond)
		}
		for calls.Load() < 20 {
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := p.WaitPassed(ctx, 9)
		stop.Store(true)
		<-done
		if err != nil {
			t.Fatalf("a wait for 9 on the probe behind the busy operator: %v", err)
		}
		got := slices.Compact(s.syncedErrors(t))
		if want := []string{"dataflow q: met away"}; !slices.Equal(got, want) {
			t.Errorf("errors %q, want %q", got, want)
		}
	})
}

// backFailOp forwards nothing. Once its input frontier has passed back (and
// back > 0), it returns the capability {1}, behind the output frontier it
// had announced (its frontier is then held where it was); once it has
// passed failAt it calls its Failer (twice, the second with another
// error) and returns capability {capAfter}.
type backFailOp struct {
	in       *dataflow.Port[*batch.Batch]
	fail     func(error)
	back     uint64
	failAt   uint64
	capAfter uint64
	wentBack bool
	failed   bool
}

var errBack = errors.New("failed after going back")

func (o *backFailOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if o.failed || (o.failAt > 0 && frontier.At(o.failAt).LessEqual(in)) {
		if !o.failed {
			o.failed = true
			o.fail(errBack)
			o.fail(errors.New("a second failure"))
		}
		return frontier.At(o.capAfter)
	}
	if o.wentBack || (o.back > 0 && frontier.At(o.back).LessEqual(in)) {
		o.wentBack = true
		return frontier.At(1)
	}
	return frontier.Empty()
}

func (o *backFailOp) Shutdown() {}

// An operator whose output frontier went back (at the step whose input
// frontier was {3}: held where it was, {2}) and that then fails its step
// ends the waits downstream of it for a time that frontier has not passed
// with its failure (before, the hold of the going back kept its failure
// from being taken: the waits lasted until their context). One that fails
// with a capability behind its output frontier ({1}, at the step whose
// input frontier was {4}) is held at its output frontier, {3}, and a
// second call of its Failer changes nothing: a wait for 2 passes, one for
// 3 ends with the first failure. Solo and the pair, one and two workers.
func TestAFailureAfterGoingBackEndsTheWaits(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		probes := map[string]*dataflow.Probe{}
		for _, c := range []struct {
			id                     string
			back, failAt, capAfter uint64
		}{{"back then fail", 3, 6, 1}, {"fail behind", 0, 4, 1}} {
			p := dataflow.NewProbe(s.workers)
			probes[c.id] = p
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: c.id, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(cx *dataflow.Context) error {
					a, err := cx.ImportIndex("idx")
					if err != nil {
						return err
					}
					b := cx.NewOperator("back")
					op := &backFailOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), fail: cx.Failer(), back: c.back, failAt: c.failAt, capAfter: c.capAfter}
					if err := b.Build(op); err != nil {
						return err
					}
					r := cx.NewOperator("relay")
					ro := &relayOp{in: dataflow.AddInput(r, "rows", dataflow.AddOutput[*dataflow.Chunk](b)), out: dataflow.AddOutput[*dataflow.Chunk](r)}
					if err := r.Build(ro); err != nil {
						return err
					}
					cx.Probe(p, ro.out)
					return nil
				},
			}})
		}
		// One step at a time, so that each operator sees every frontier.
		for tm := range int64(10) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := probes["back then fail"].WaitPassed(ctx, 9); !errors.Is(err, errBack) {
			t.Errorf("a wait for 9 behind the operator that went back and failed: %v, want its failure", err)
		}
		if err := probes["back then fail"].WaitPassed(ctx, 1); err != nil {
			t.Errorf("a wait for 1 behind the operator held at {2}: %v", err)
		}
		if err := probes["back then fail"].WaitPassed(ctx, 2); !errors.Is(err, errBack) {
			t.Errorf("a wait for 2 behind the operator held at {2}: %v, want its failure", err)
		}
		if err := probes["fail behind"].WaitPassed(ctx, 2); err != nil {
			t.Errorf("a wait for 2 behind the operator held at {3}: %v", err)
		}
		if err := probes["fail behind"].WaitPassed(ctx, 3); !errors.Is(err, errBack) {
			t.Errorf("a wait for 3 behind the operator held at {3}: %v, want its first failure", err)
		}
		s.ctl.TakeErrors()
	})
}
