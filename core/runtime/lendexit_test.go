package runtime

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// wakeExitOp, at the batch of time 3, sends a command (which wakes the
// Interactive worker) and then ends its goroutine; seq is that command's
// number.
type wakeExitOp struct {
	in  *dataflow.Port[*batch.Batch]
	ctl *Controller
	seq uint64
}

func (o *wakeExitOp) Step(in frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		if t, ok := b.Lower().Time(); ok && t == 3 && b.Len() > 0 {
			if err := o.ctl.Send(CreateInput{Name: "late", Arity: 1}); err == nil {
				o.seq = o.ctl.seq
			}
			runtime.Goexit()
		}
	}
	return frontier.Empty()
}

func (o *wakeExitOp) Shutdown() {}

// TestAGoexitInALentStepEndsTheReader: a step that wakes its Interactive
// worker (a command sent) and then ends the goroutine while the
// Maintenance worker runs that worker's wake leaves the Interactive worker
// nothing more to run, as in Solo: the command is applied by no worker,
// and the error is the query's step's, not the command's. The lent wake
// let the Interactive worker go before the runtimes were stopped, and its
// own goroutine, woken, ran a cycle beside the ending one (a data race on
// what the error is read from; the command applied).
func TestAGoexitInALentStepEndsTheReader(t *testing.T) {
	for k := range 20 {
		op := &wakeExitOp{}
		rts, ctl, tl := lendSetup(t, false, 0, func(b *dataflow.OperatorBuilder, oks *dataflow.Stream[*batch.Batch]) dataflow.Operator {
			op.in = dataflow.AddInput(b, "oks", oks)
			return op
		})
		op.ctl = ctl
		m, i := rts[0], rts[1]
		ctx := testCtx(t)
		sendParkedRounds(t, ctx, ctl, rts, 3)
		if err := tl.WaitPassed(ctx, 3); !errors.Is(err, ErrShutdown) {
			t.Fatalf("the wait for 3: %v, want ErrShutdown", err)
		}
		ctl.Shutdown()
		if m.workers[0].exitVia != i.workers[0] {
			t.Fatal("the step did not end the Maintenance worker's goroutine: nothing lent")
		}
		if op.seq == 0 {
			t.Fatal("the step's command was not sent")
		}
		if n := i.workers[0].applied.Load(); n >= op.seq {
			t.Errorf("run %d: the Interactive worker applied command %d, sent by the step that ended its goroutine", k, n)
		}
		want := fmt.Sprintf("[dataflow q: a step ended a worker's goroutine: %v]", ErrWorkerExited)
		if errs := ctl.Errors(); fmt.Sprint(errs) != want || errs[0].Seq != 0 {
			t.Fatalf("run %d: errors %v (of command %d), want %s", k, errs, errs[0].Seq, want)
		}
	}
}
