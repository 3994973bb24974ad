package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// setup is a controller over runtimes in one of two configurations: "solo"
// (one Solo runtime) or "pair" (Maintenance + Interactive).
type setup struct {
	mode     string
	workers  int
	ctl      *Controller
	rts      []*Runtime
	declared map[string]bool
	tb       testing.TB
}

func newSetup(t testing.TB, mode string, workers int) *setup {
	t.Helper()
	s := &setup{mode: mode, workers: workers, tb: t}
	switch mode {
	case "solo":
		r, err := New(Options{Role: Solo, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		s.rts = []*Runtime{r}
		s.ctl, err = NewController(r)
		if err != nil {
			t.Fatal(err)
		}
	case "pair":
		m, i, ctl, err := Pair(workers, spine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.rts, s.ctl = []*Runtime{m, i}, ctl
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	t.Cleanup(func() {
		s.ctl.Shutdown()
		if err := s.ctl.Err(); err != nil {
			t.Errorf("runtime errors: %v", err)
		}
	})
	return s
}

func forEachSetup(t *testing.T, f func(t *testing.T, s *setup)) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				f(t, newSetup(t, mode, w))
			})
		}
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// progressCtx is testCtx for a long run of many waits: its context ends
// when the test does, or once progress has not been called for the 20
// seconds testCtx allows a whole test. A run of a thousand rounds on a
// loaded machine may take longer than that in all (an invariants build
// beside other tests took 20 s for 300 rounds of two setups), while a wait
// that hangs still fails within 21 s of its round's start.
func progressCtx(t testing.TB) (ctx context.Context, progress func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var last atomic.Int64
	progress = func() { last.Store(time.Now().UnixNano()) }
	progress()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if time.Since(time.Unix(0, last.Load())) > 20*time.Second {
					cancel()
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		cancel()
	})
	return ctx, progress
}

// awaitIdle returns true once every worker of rts is idle (worker.idle) at
// one time; false if done closes first. For its first awaitPoll it looks
// again after yielding its thread (runtime.Gosched), and after that it
// blocks on a busy worker's next parking (worker.awaitPark). A round
// timed until its workers park (BenchmarkSteadyRatio) ends when its last
// worker parks, not when a blocked observer has been woken to see it:
// that wake, about 0.9 µs from a worker's park to the observer's next
// look, falls to whichever side's last worker parks after the observer
// looked (the imported round of one update, whose Maintenance worker
// resumes after the query's answer), and not to one whose worker had
// parked by then; and the wake, which readies the observer's goroutine,
// rouses the other core's idle thread too, so that the round after it
// starts with that thread awake (a direct round after an imported one,
// half the rounds of the interleaving). Yielding, the observer runs again
// as soon as the worker has parked and its thread is free, without a
// wake, and leaves the threads as the round left them; a longer wait (a
// merge) blocks rather than burn a core. A pass that finds every
// worker idle is checked by a second one that finds each idle at the same
// parks count: a worker woken, by one looked at later, after the first
// pass looked at it reads busy or at another count. Each worker then
// stayed idle from its first look to its second, and the first pass's
// last look comes before the second pass's first.
func awaitIdle(done <-chan struct{}, rts ...*Runtime) bool {
	var buf [8]uint64
	poll := time.Now()
	for {
		counts := buf[:0]
		var busy *worker
		for _, r := range rts {
			for _, w := range r.workers {
				if busy != nil {
					break
				}
				n, ok := w.idleCount()
				if !ok {
					busy = w
				}
				counts = append(counts, n)
			}
		}
		if busy == nil {
			i := 0
			for _, r := range rts {
				for _, w := range r.workers {
					if busy != nil {
						break
					}
					if n, ok := w.idleCount(); !ok || n != counts[i] {
						busy = w
					}
					i++
				}
			}
			if busy == nil {
				return true
			}
		}
		if time.Since(poll) < awaitPoll {
			goruntime.Gosched()
			continue
		}
		if !busy.awaitPark(done) {
			return false
		}
	}
}

// awaitPoll is how long awaitIdle looks again before it blocks: longer
// than the tail of a round of one update after its answer (about 3 µs),
// short of a merge's.
const awaitPoll = 20 * time.Microsecond

// indexDesc maintains input `name` (arity cols) arranged by key as index id.
func indexDesc(id, name string, cols int, key []int, asOf uint64, probe *dataflow.Probe) dataflow.Desc {
	return dataflow.Desc{
		ID: "maintain " + id, Maintained: true, AsOf: frontier.At(asOf), Until: frontier.Empty(),
		Exports: []string{id},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input(name, cols)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, key)
			if err != nil {
				return err
			}
			if probe != nil {
				c.Probe(probe, a.Oks.Stream)
			}
			return c.Export(id, a)
		},
	}
}

// readDesc imports index id at [asOf, until) and captures its oks.
func readDesc(dfID, id string, asOf uint64, until frontier.Frontier, cp *dataflow.Capture) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, AsOf: frontier.At(asOf), Until: until,
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex(id)
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		},
	}
}

// declare declares input name of cols columns on first use.
func (s *setup) declare(name string, cols int) {
	if s.declared == nil {
		s.declared = map[string]bool{}
	}
	if !s.declared[name] {
		s.declared[name] = true
		s.must(CreateInput{Name: name, Arity: cols})
	}
}

// must sends cmd, which the controller must accept.
func (s *setup) must(cmd Command) {
	if err := s.ctl.Send(cmd); err != nil {
		panic(fmt.Sprintf("%s: %v", s.mode, err))
	}
}

// send sends rows (each [time, diff, cols...]) to input name.
func (s *setup) send(name string, cols int, rows ...[]int64) {
	s.declare(name, cols)
	c := dataflow.NewChunk(cols, len(rows))
	for _, r := range rows {
		c.Push(r[2:], uint64(r[0]), r[1])
	}
	s.must(Input{Name: name, Chunk: c})
}

func (s *setup) advance(name string, cols int, f frontier.Frontier) {
	s.declare(name, cols)
	s.must(AdvanceInput{Name: name, Frontier: f})
}

// syncedErrors syncs the controller and returns the text of every error
// taken then, in order.
func (s *setup) syncedErrors(t *testing.T) []string {
	t.Helper()
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.ctl.TakeErrors() {
		got = append(got, e.Err.Error())
	}
	return got
}

// callsInBuild creates dataflow id (Maintained or a query) whose Build, on
// every worker, makes the calls prepare returns and records what each
// returned, and returns those errors by call name once the create is
// applied: one a worker.
func (s *setup) callsInBuild(t *testing.T, id string, maintained bool, prepare func(*dataflow.Context) (map[string]func() error, error)) map[string][]error {
	t.Helper()
	var mu gosync.Mutex
	got := map[string][]error{}
	s.must(CreateDataflow{Desc: dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			calls, err := prepare(c)
			if err != nil {
				return err
			}
			for name, call := range calls {
				err := call()
				mu.Lock()
				got[name] = append(got[name], err)
				mu.Unlock()
			}
			return nil
		},
	}})
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return got
}
