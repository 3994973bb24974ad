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

// Three to six Shutdowns at once, of each runtime and of the controller,
// while a driver sends rounds with their compactions and creates and drops
// a query, another goroutine reads Stats in a loop, two goroutines wait on
// live queries' captures for a time no round reaches and a third query is
// dropped on the way: every refusal and wait error is ErrShutdown (the
// dropped query's wait may end either way), and nothing is reported as an
// error. Before Stopper.Stop stopped its probes under its lock, a second
// Shutdown could signal the workers while the first was still stopping
// the probes, and a wait ended with ErrProbeDropped: one subtest in 50 to
// 80 here under the race detector, where TestShutdownTwiceDuringRoundsAndWaits
// met it about once in 150.
func TestShutdownsFromEveryHandleDuringRounds(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for k := range 4 {
				t.Run(fmt.Sprintf("%s/workers=%d/shutdowns=%d", mode, w, 3+k), func(t *testing.T) {
					t.Parallel()
					s := newSetup(t, mode, w)
					s.declare("in", 2)
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					cps := make([]*dataflow.Capture, 3)
					for i := range cps {
						cps[i] = dataflow.NewCapture(w)
						s.must(CreateDataflow{Desc: readDesc(fmt.Sprint("q", i), "idx", 0, frontier.Empty(), cps[i])})
					}
					s.advance("in", 2, frontier.At(1))
					for _, cp := range cps {
						if err := cp.WaitPassed(testCtx(t), 0); err != nil {
							t.Fatal(err)
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					errs := make(chan error, 10000)
					started := make(chan struct{})
					var once gosync.Once
					var wg gosync.WaitGroup
					wg.Add(1)
					go func() {
						defer wg.Done()
						for tm := uint64(1); ; tm++ {
							if tm == 10 {
								once.Do(func() { close(started) })
							}
							c := dataflow.NewChunk(2, 1)
							c.Push([]int64{int64(tm % 3), int64(tm)}, tm, 1)
							cmds := []Command{Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(tm + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(tm)}}
							if tm%3 == 0 {
								cmds = append(cmds, CreateDataflow{Desc: readDesc("r", "idx", tm, frontier.Empty(), dataflow.NewCapture(w))}, DropDataflow{ID: "r"})
							}
							if tm == 7 {
								cmds = append(cmds, DropDataflow{ID: "q2"})
							}
							if err := s.ctl.SendAll(cmds...); err != nil {
								errs <- err
								once.Do(func() { close(started) })
								return
							}
						}
					}()
					for _, cp := range cps[:2] {
						wg.Add(1)
						go func() { defer wg.Done(); errs <- cp.WaitPassed(ctx, 1<<40) }()
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							if _, err := s.rts[0].Stats(ctx); err != nil {
								errs <- err
								return
							}
						}
					}()
					<-started
					var stops gosync.WaitGroup
					for j := range 3 + k {
						stops.Add(1)
						go func() {
							defer stops.Done()
							if j%3 == 2 {
								s.ctl.Shutdown()
							} else {
								s.rts[j%len(s.rts)].Shutdown()
							}
						}()
					}
					stops.Wait()
					wg.Wait()
					close(errs)
					for err := range errs {
						if !errors.Is(err, ErrShutdown) {
							t.Errorf("%v, want ErrShutdown", err)
						}
					}
					// q2's drop may come before the Shutdown or be discarded by it.
					if err := cps[2].WaitPassed(ctx, 1<<40); !errors.Is(err, ErrShutdown) && !errors.Is(err, dataflow.ErrProbeDropped) {
						t.Errorf("the wait on dropped q2: %v, want ErrShutdown or ErrProbeDropped", err)
					}
					if got := s.ctl.Errors(); len(got) != 0 {
						t.Errorf("errors after Shutdown: %v", got)
					}
				})
			}
		}
	}
}
