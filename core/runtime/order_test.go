package runtime

import (
	"fmt"
	gosync "sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestConcurrentSendsReachEveryWorkerInOneOrder is R1 under concurrent
// callers: the controller's lock makes each Send one step of one stream,
// so every worker of every runtime applies the creates in one order. A
// Send that numbered and queued a command outside that lock would let two
// callers interleave their appends to the workers' queues: one worker
// would build A before B and another B before A (and both wait on the
// other at the create's agreement), or two commands would share a number.
// Every other test sends from one goroutine, where the order is the
// caller's either way.
func TestConcurrentSendsReachEveryWorkerInOneOrder(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			const workers, senders, rounds = 2, 16, 200
			s := newSetup(t, mode, workers)
			var mu gosync.Mutex
			built := make([][]string, workers)
			create := func(id string) Command {
				return CreateDataflow{Desc: dataflow.Desc{ID: id, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
					mu.Lock()
					built[c.Worker()] = append(built[c.Worker()], id)
					mu.Unlock()
					return nil
				}}}
			}
			var wg gosync.WaitGroup
			errs := make(chan error, senders)
			for g := range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range rounds {
						id := fmt.Sprintf("g%d-%d", g, i)
						if err := s.ctl.Send(create(id)); err != nil {
							errs <- err
							return
						}
						if err := s.ctl.Send(DropDataflow{ID: id}); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatalf("Sync: %v (workers waiting on each other at a create?)", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(built[0]) != senders*rounds {
				t.Fatalf("worker 0 built %d dataflows, want %d", len(built[0]), senders*rounds)
			}
			for w := 1; w < workers; w++ {
				if fmt.Sprint(built[w]) != fmt.Sprint(built[0]) {
					t.Fatalf("worker %d built in another order than worker 0:\n%v\n%v", w, built[w], built[0])
				}
			}
		})
	}
}
