package runtime

import (
	"fmt"
	"slices"
	gosync "sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestABurstOfCommandsDoesNotKeepItsQueue: a worker keeps the array its
// commands were queued in for the next wake, so that a round's commands
// cost no allocation; after a burst (here creates and drops sent before one
// Sync, as a service that creates a query a request would) it kept an array
// of that size for the runtime's life. It keeps none larger than spareMax;
// small queues are still kept. Every worker is held in a barrier while the
// burst is sent, so that one wake takes all of it, past spareMax, however
// the worker keeps up with the sender; the burst is then no larger than
// that needs (20,000 commands applied as they came took over 20 s, the
// Sync's bound, with the race detector on a loaded 2-core machine).
func TestABurstOfCommandsDoesNotKeepItsQueue(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			s.declare("in", 2)
			s.must(CreateDataflow{Desc: indexDesc("x", "in", 2, []int{0}, 0, nil)})
			s.send("in", 2, []int64{0, 1, 1, 2})
			s.advance("in", 2, frontier.At(1))
			release := holdWorkers(t, s.rts)
			for i := range spareMax/2 + 1 {
				id := fmt.Sprintf("q%d", i)
				s.must(CreateDataflow{Desc: readDesc(id, "x", 1, frontier.Empty(), dataflow.NewCapture(2))})
				s.must(DropDataflow{ID: id})
			}
			release()
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			// The kept arrays: a wake swaps the kept one in as the
			// queue and keeps the one it applied, so the two take turns
			// and two wakes in a row show both.
			spares := func() (kept []int) {
				for _, r := range s.rts {
					for range 2 {
						if err := r.barrier(testCtx(t), func(w *worker) {
							w.qmu.Lock()
							kept = append(kept, cap(w.queue))
							w.qmu.Unlock()
						}); err != nil {
							t.Fatal(err)
						}
					}
				}
				return kept
			}
			for _, c := range spares() {
				if c > spareMax {
					t.Fatalf("a worker keeps a queue array of %d commands after the burst; want at most %d", c, spareMax)
				}
			}
			// A few commands a wake: the array is kept and reused.
			for i := range 3 {
				s.send("in", 2, []int64{int64(i + 1), 1, 1, 2})
				s.advance("in", 2, frontier.At(uint64(i+2)))
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
			if kept := spares(); slices.Max(kept) == 0 {
				t.Fatalf("no queue array kept after small wakes: %v", kept)
			}
		})
	}
}

// holdWorkers returns once every worker of rts runs a barrier command of
// its own (barrier runs a runtime's workers one at a time) that waits for
// release: commands sent meanwhile queue, and each worker's next wake takes
// all of them.
func holdWorkers(t *testing.T, rts []*Runtime) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	var open gosync.Once
	release = func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	var inside gosync.WaitGroup
	for _, r := range rts {
		for _, w := range r.workers {
			inside.Add(1)
			w.enqueue(queued{cmd: barrier{done: func(*worker) {
				inside.Done()
				<-gate
			}}})
		}
	}
	all := make(chan struct{})
	go func() {
		inside.Wait()
		close(all)
	}()
	select {
	case <-all:
	case <-testCtx(t).Done():
		t.Fatal("a worker never ran its barrier")
	}
	return release
}
