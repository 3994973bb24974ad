package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// capFailOp forwards its input's updates as rows and holds its
// capability at {c} from its first step: its output never passes c.
// Once its input frontier has passed failAt (failAt >= c), it calls its
// Failer, so what is downstream of it is frozen at {c} (its output
// frontier then, whatever the timing of the rounds: a script's outcomes
// are the same on every setup). With failAt 0 it never fails, and holds
// nothing (capability {}).
type capFailOp struct {
	in     *dataflow.Port[*batch.Batch]
	out    *dataflow.Stream[*dataflow.Chunk]
	fail   func(error)
	c      uint64
	failAt uint64
	failed bool
	id     string
}

func (o *capFailOp) Step(in frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		c := dataflow.NewChunk(2, b.Len())
		for _, u := range b.Updates() {
			c.Push([]int64{u.Key[0], u.Val[0]}, u.Time, u.Diff)
		}
		o.out.Send(c)
	}
	if o.failAt == 0 {
		return frontier.Empty()
	}
	if !o.failed && frontier.At(o.failAt).LessEqual(in) {
		o.failed = true
		o.fail(fmt.Errorf("level %s failed", o.id))
	}
	return frontier.At(o.c)
}

func (o *capFailOp) Shutdown() {}

// levelDesc is a dataflow reading index from through a capFailOp (held at
// {c}, failing once its input passes failAt; failAt 0: never), arranging
// its output, capturing it on cp and exporting it as "ix"+id.
func levelDesc(id, from string, maintained bool, c, failAt uint64, cp *dataflow.Capture) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"ix" + id},
		Build: func(cx *dataflow.Context) error {
			a, err := cx.ImportIndex(from)
			if err != nil {
				return err
			}
			b := cx.NewOperator("fail")
			op := &capFailOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), out: dataflow.AddOutput[*dataflow.Chunk](b), fail: cx.Failer(), c: c, failAt: failAt, id: id}
			if err := b.Build(op); err != nil {
				return err
			}
			errs := dataflow.AddOutput[*dataflow.Chunk](b)
			arr, err := cx.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: errs}, []int{0})
			if err != nil {
				return err
			}
			cx.Capture(cp, arr.Oks)
			return cx.Export("ix"+id, arr)
		},
	}
}

// A trace told of a failure upstream of its writer (at {6}) and then of
// its writer's own (at the earlier {4}) carries the earlier limit to its
// readers: a query reading it ends its waits for 4 and 5 with the
// writer's failure, as it does when the failures come the other way
// round. Before, the first limit told was kept (Spine.Fail), so which
// limit the readers saw, and whether a wait for 4 ended or lasted until
// its context, depended on which failure the rounds stepped first. Here
// the input jumps past both failures in one command, so the upstream
// failure comes first. Solo and the pair, one and two workers.
func TestATraceTakesTheEarlierOfTwoFailures(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx0", "in", 2, []int{0}, 0, nil)})
		c0, c1, cq := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: levelDesc("L0", "idx0", true, 6, 7, c0)})
		s.must(CreateDataflow{Desc: levelDesc("L1", "ixL0", true, 4, 5, c1)})
		s.must(CreateDataflow{Desc: levelDesc("Q", "ixL1", false, 0, 0, cq)})
		for tm := range int64(9) {
			s.send("in", 2, []int64{tm, 1, tm % 3, tm})
		}
		s.advance("in", 2, frontier.At(9))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, tm := range []uint64{4, 5} {
			if err := cq.WaitPassed(ctx, tm); err == nil || !strings.Contains(err.Error(), "level L1 failed") {
				t.Errorf("a wait for %d on the query reading the index held at {4}: %v, want its writer's failure", tm, err)
			}
		}
		if err := cq.WaitPassed(ctx, 3); err != nil {
			t.Errorf("a wait for 3 on the query reading the index held at {4}: %v", err)
		}
		s.ctl.TakeErrors()
	})
}
