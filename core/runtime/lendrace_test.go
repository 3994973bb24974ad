package runtime

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestACommandSentDuringALendRunsOnTheReader: creates, drops and barriers
// sent from another goroutine while the rounds' wakes of the Interactive
// worker run on the Maintenance worker (worker.lend) are applied on the
// Interactive worker's own goroutine: a query's Build never runs on the
// Maintenance worker, and a Maintained create, whose verdict the
// Interactive worker waits for from that very worker, does not hang both.
// A command queued between the lend's look at the queue and its take
// went into the lent wake.
func TestACommandSentDuringALendRunsOnTheReader(t *testing.T) {
	rts, ctl, tl := lendSetup(t, false, 0, nil)
	m, i := rts[0], rts[1]
	mw, iw := m.workers[0], i.workers[0]
	ctx := testCtx(t)
	var onM, lends atomic.Int64
	const creates = 100
	done := make(chan error, 1)
	go func() {
		for n := range creates {
			id := fmt.Sprintf("c%d", n)
			// Sent as a wake of the Interactive worker starts on the
			// Maintenance worker (lent set, lends counted), where the
			// window between the look at the queue and its take was,
			// or just after.
			for seen := mw.lends.Load(); mw.lends.Load() == seen && !iw.lent.Load() && ctx.Err() == nil; {
			}
			var err error
			if n%2 == 0 {
				err = ctl.Send(CreateDataflow{Desc: dataflow.Desc{ID: id, AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						if goid() == mw.goid.Load() {
							onM.Add(1)
						}
						_, err := c.ImportIndex("idx")
						return err
					}}})
			} else {
				err = ctl.Send(CreateDataflow{Desc: indexDesc("x"+id, "in", 2, []int{1}, 0, nil)})
				id = "maintain x" + id
			}
			if err == nil {
				err = ctl.Send(DropDataflow{ID: id})
			}
			if err == nil {
				err = ctl.Sync(ctx)
			}
			if err != nil {
				done <- err
				return
			}
			lends.Store(int64(mw.lends.Load()))
		}
		done <- nil
	}()
	for r := uint64(1); ; r++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if n := onM.Load(); n > 0 {
				t.Errorf("%d of %d query Builds ran on the Maintenance worker", n, creates/2)
			}
			if lends.Load() == 0 {
				t.Error("no wake of the Interactive worker ran on the Maintenance worker")
			}
			return
		default:
		}
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{int64(r), 1}, r, 1)
		if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(r + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(r)}); err != nil {
			t.Fatal(err)
		}
		if err := tl.WaitPassed(ctx, r); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
}
