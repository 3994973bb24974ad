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
