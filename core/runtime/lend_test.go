package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/labelstest"
)

// TestMain runs this package's tests with a reader budget no wake exceeds:
// every Interactive wake the rule allows then runs on its Maintenance
// worker (worker.lend), so the pair's tests go through that path wherever
// it applies, on a loaded machine and under the race detector too (where a
// wake takes far longer than DefaultReaderBudget). The other packages' tests
// run the default, which takes either path by the time a wake takes, and
// so do this package's benchmarks (benchReaderBudget).
func TestMain(m *testing.M) {
	defaultReaderBudget = time.Hour
	os.Exit(m.Run())
}

// lendOp reads an imported index's oks: at each step that takes a batch
// with updates it records the goroutine it runs on and its pprof labels,
// then sleeps for sleep (at the batches of the times sleepAt lists; at
// every batch when it is empty) or, at a batch of time exitAt, ends its
// goroutine.
type lendOp struct {
	in      *dataflow.Port[*batch.Batch]
	sleep   time.Duration
	sleepAt []uint64
	exitAt  uint64 // 0: never
	mu      gosync.Mutex
	goids   []uint64
	labels  []string
	t       *testing.T
}

func (o *lendOp) Step(in frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		if b.Len() == 0 {
			continue
		}
		o.mu.Lock()
		o.goids = append(o.goids, goid())
		o.labels = append(o.labels, labelstest.Own(o.t))
		o.mu.Unlock()
		t, ok := b.Lower().Time()
		if ok && o.exitAt > 0 && t == o.exitAt {
			runtime.Goexit()
		}
		if len(o.sleepAt) == 0 || ok && slices.Contains(o.sleepAt, t) {
			time.Sleep(o.sleep)
		}
	}
	return frontier.Empty()
}

func (o *lendOp) Shutdown() {}

// lendSetup starts a Pair of one worker each whose Maintenance runtime has
// the reader budget budget (0: this package's default, which lends every
// wake it may; a Solo runtime instead when solo is set), an index idx over
// input in (two columns, keyed by the first) and a query q that reads it
// with a tally and, unless attach is nil, the operator attach builds on the
// index's oks.
func lendSetup(t *testing.T, solo bool, budget time.Duration, attach func(*dataflow.OperatorBuilder, *dataflow.Stream[*batch.Batch]) dataflow.Operator) (rts []*Runtime, ctl *Controller, tl *dataflow.Tally) {
	t.Helper()
	var err error
	if solo {
		r, err := New(Options{Role: Solo, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		rts = []*Runtime{r}
	} else {
		regs := newRegs(1)
		m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs, ReaderBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		rts = []*Runtime{m, i}
	}
	if ctl, err = NewController(rts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Shutdown)
	tl = dataflow.NewTally(1)
	mustSendT(t, ctl, CreateInput{Name: "in", Arity: 2})
	mustSendT(t, ctl, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	mustSendT(t, ctl, CreateDataflow{Desc: dataflow.Desc{ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex("idx")
			if err != nil {
				return err
			}
			if attach != nil {
				b := c.NewOperator("lend probe")
				if err := b.Build(attach(b, a.Oks.Stream)); err != nil {
					return err
				}
			}
			c.Tally(tl, a.Oks)
			return nil
		}}})
	return rts, ctl, tl
}

// attachLendOp is lendSetup's attach for op.
func attachLendOp(op *lendOp) func(*dataflow.OperatorBuilder, *dataflow.Stream[*batch.Batch]) dataflow.Operator {
	return func(b *dataflow.OperatorBuilder, oks *dataflow.Stream[*batch.Batch]) dataflow.Operator {
		op.in = dataflow.AddInput(b, "oks", oks)
		return op
	}
}

// awaitLendable waits until every worker of rts has parked (awaitIdle)
// and has let go of its cycleMu. A worker's goroutine marks itself parked
// under the lock and lets it go just after (worker.loop): a round sent in
// between finds the reader parked but its lock held, and the Maintenance
// worker rightly sends the wake instead of lending it (the reader's
// goroutine is running anyway). A test that counts the lent wakes of its
// rounds waits for the lock too, or a descheduled reader (under the race
// detector, on a loaded host) costs it a lend.
func awaitLendable(t *testing.T, ctx context.Context, rts []*Runtime) {
	t.Helper()
	for {
		if !awaitIdle(ctx.Done(), rts...) {
			t.Fatal("the workers did not park")
		}
		free := true
		for _, r := range rts {
			for _, w := range r.workers {
				if !w.cycleMu.TryLock() {
					free = false
					continue
				}
				w.cycleMu.Unlock()
			}
		}
		if free {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("a parked worker kept its cycle lock")
		}
		runtime.Gosched()
	}
}

// lendRounds sends rounds 1..n of one update each (key t, time t), each
// after every worker has parked, and waits for the query to pass each.
func lendRounds(t *testing.T, rts []*Runtime, ctl *Controller, tl *dataflow.Tally, n int) {
	t.Helper()
	lendRoundsOf(t, rts, ctl, tl, n, 1)
}

// lendRoundsOf is lendRounds with size updates a round (keys r*size+i).
func lendRoundsOf(t *testing.T, rts []*Runtime, ctl *Controller, tl *dataflow.Tally, n, size int) {
	t.Helper()
	ctx := testCtx(t)
	_, u0, s0, _ := tl.Counts()
	for r := 1; r <= n; r++ {
		awaitLendable(t, ctx, rts)
		c := dataflow.NewChunk(2, size)
		for i := range size {
			c.Push([]int64{int64(r*size + i), 1}, uint64(r), 1)
		}
		if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(uint64(r) + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(uint64(r))}); err != nil {
			t.Fatal(err)
		}
		if err := tl.WaitPassed(ctx, uint64(r)); err != nil {
			t.Fatal(err)
		}
	}
	if _, updates, sum, sat := tl.Counts(); updates-u0 != int64(n*size) || sum-s0 != int64(n*size) || sat {
		t.Fatalf("the query read %d updates summing to %d (a batch a merge saturated among them: %v), want %d and %d", updates-u0, sum-s0, sat, n*size, n*size)
	}
}

// TestAReadersWakeRunsOnItsPublisher: a round that publishes one update to
// a query whose Interactive worker is parked runs that worker's wake on the
// Maintenance worker (Options.ReaderBudget), under the Interactive
// worker's labels, and the query reads every round; with a negative budget
// every wake runs on the Interactive worker's own goroutine.
func TestAReadersWakeRunsOnItsPublisher(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget time.Duration
		lent   bool
	}{{"budget", time.Hour, true}, {"never", -1, false}} {
		t.Run(c.name, func(t *testing.T) {
			op := &lendOp{t: t}
			rts, ctl, tl := lendSetup(t, false, c.budget, attachLendOp(op))
			const rounds = 20
			lendRounds(t, rts, ctl, tl, rounds)
			m, i := rts[0].workers[0], rts[1].workers[0]
			onM := 0
			op.mu.Lock()
			defer op.mu.Unlock()
			for k, g := range op.goids {
				if g == m.goid.Load() {
					onM++
				}
				if want := `{"runtime":"interactive", "worker":"0"}`; op.labels[k] != want {
					t.Errorf("step %d ran under %s, want %s", k, op.labels[k], want)
				}
			}
			lends := m.lends.Load()
			if c.lent && (lends < rounds || onM < rounds) {
				t.Errorf("the Maintenance worker ran %d of the reader's wakes (%d of its steps with updates), want all %d rounds", lends, onM, rounds)
			}
			if !c.lent && (lends > 0 || onM > 0) {
				t.Errorf("with a negative budget the Maintenance worker ran %d of the reader's wakes (%d steps)", lends, onM)
			}
			if n := len(op.goids); n != rounds {
				t.Errorf("the operator read %d batches with updates, want %d", n, rounds)
			}
			if g := i.goid.Load(); !c.lent && op.goids[0] != g {
				t.Errorf("a step ran on goroutine %d, want the Interactive worker's %d", op.goids[0], g)
			}
		})
	}
}

// TestALargeRoundWakesItsReader: a step that publishes more than
// lendMaxUpdates updates to its reader wakes the reader's goroutine, where
// one of lendMaxUpdates runs the reader's wake on the Maintenance worker.
func TestALargeRoundWakesItsReader(t *testing.T) {
	for _, c := range []struct {
		size  int
		lends uint64
	}{{lendMaxUpdates, 5}, {lendMaxUpdates + 1, 0}} {
		t.Run(fmt.Sprint("updates=", c.size), func(t *testing.T) {
			op := &lendOp{t: t}
			rts, ctl, tl := lendSetup(t, false, time.Hour, attachLendOp(op))
			lendRoundsOf(t, rts, ctl, tl, 5, c.size)
			if n := rts[0].workers[0].lends.Load(); n != c.lends {
				t.Errorf("rounds of %d updates: the Maintenance worker ran %d of the reader's 5 wakes, want %d", c.size, n, c.lends)
			}
		})
	}
}

// TestASlowReadersWakeIsLentRarely: a query whose wake takes far longer than
// the budget is run on the Maintenance worker twice (the first wake, timed,
// and the next, timed because the first ran over), then passed over for 64
// chances, then 128: six of 250 rounds, where every round would be. Every
// round is a chance (lendRounds waits until the reader can be lent to) and
// every wake sleeps past the budget, so the count is exact: the rule of one
// wake over before a pause lent three, and no pause 250.
func TestASlowReadersWakeIsLentRarely(t *testing.T) {
	op := &lendOp{t: t, sleep: 2 * time.Millisecond}
	rts, ctl, tl := lendSetup(t, false, 200*time.Microsecond, attachLendOp(op))
	lendRounds(t, rts, ctl, tl, 250)
	if n := rts[0].workers[0].lends.Load(); n != 6 {
		t.Errorf("the Maintenance worker ran %d of 250 slow wakes, want 6 (at chances 1–2, 67–68 and 197–198)", n)
	}
}

// TestAOneSlowWakeDoesNotPauseTheLending: one lent wake that runs over the
// budget (its query slowed once, as a collection or a descheduled thread
// slows one) has the next wake timed, and only a second over the budget in
// a row pauses the lending. Wake 9 is timed (the first and every eighth
// after it are); round r's batch starts at time r from the second round on.
func TestAOneSlowWakeDoesNotPauseTheLending(t *testing.T) {
	for _, c := range []struct {
		slow  []uint64
		lends uint64
	}{{[]uint64{9}, 20}, {[]uint64{9, 17}, 20}, {[]uint64{9, 10}, 10}} {
		t.Run(fmt.Sprint("slow=", c.slow), func(t *testing.T) {
			// A wide budget: a wake not slowed must stay under it on a
			// loaded host under the race detector, or it pauses the
			// lending as the test's slow ones must not.
			op := &lendOp{t: t, sleep: 250 * time.Millisecond, sleepAt: c.slow}
			rts, ctl, tl := lendSetup(t, false, 100*time.Millisecond, attachLendOp(op))
			lendRounds(t, rts, ctl, tl, 20)
			if n := rts[0].workers[0].lends.Load(); n != c.lends {
				t.Errorf("wakes %v slow: the Maintenance worker ran %d of 20 wakes, want %d", c.slow, n, c.lends)
			}
		})
	}
}

// sendParkedRounds sends rounds 1..n of one update each to lendSetup's
// input, each once every worker of rts has parked, so that each round's
// wake finds its reader parked and may be lent.
func sendParkedRounds(t *testing.T, ctx context.Context, ctl *Controller, rts []*Runtime, n int) {
	t.Helper()
	for r := 1; r <= n; r++ {
		awaitLendable(t, ctx, rts)
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{int64(r), 1}, uint64(r), 1)
		if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(uint64(r) + 1)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAGoexitInALentStepIsTheReadersError: a step that ends its goroutine
// while the Maintenance worker runs its Interactive worker's wake is
// reported as the query's step, as in Solo, and stops both runtimes.
func TestAGoexitInALentStepIsTheReadersError(t *testing.T) {
	var errs []string
	for _, solo := range []bool{true, false} {
		op := &lendOp{t: t, exitAt: 3}
		rts, ctl, tl := lendSetup(t, solo, time.Hour, attachLendOp(op))
		ctx := testCtx(t)
		sendParkedRounds(t, ctx, ctl, rts, 3)
		if err := tl.WaitPassed(ctx, 3); !errors.Is(err, ErrShutdown) {
			t.Fatalf("solo %v: the wait for 3: %v, want ErrShutdown", solo, err)
		}
		if !solo && rts[0].workers[0].exitVia != rts[1].workers[0] {
			t.Fatal("the step did not end the Maintenance worker's goroutine: nothing lent")
		}
		errs = append(errs, fmt.Sprint(ctl.Errors()))
	}
	want := fmt.Sprintf("[dataflow q: a step ended a worker's goroutine: %v]", ErrWorkerExited)
	for k, got := range errs {
		if got != want {
			t.Errorf("%s: errors %s, want %s", []string{"solo", "pair"}[k], got, want)
		}
	}
}

// TestBenchmarksRunTheDefaultBudget: a benchmark's runtimes have the reader
// budget a user's have, not the one this package's tests run with, unless
// TRACEBENCH_READER_BUDGET names another; the tests' budget is back after,
// also after a value that is no duration stopped the benchmark.
func TestBenchmarksRunTheDefaultBudget(t *testing.T) {
	t.Setenv("TRACEBENCH_READER_BUDGET", "soon")
	started := false
	if res := testing.Benchmark(func(b *testing.B) {
		startBenchSetup(b, "imported", 1, true)
		started = true
	}); res.N != 0 || started {
		t.Errorf("TRACEBENCH_READER_BUDGET=soon: the benchmark ran (N %d, runtimes started %v), want it stopped", res.N, started)
	}
	if defaultReaderBudget != time.Hour {
		t.Errorf("TRACEBENCH_READER_BUDGET=soon: the tests' budget after the benchmark is %v, want %v", defaultReaderBudget, time.Hour)
	}

	for _, c := range []struct {
		env  string
		want time.Duration
	}{{"", DefaultReaderBudget}, {"1h", time.Hour}, {"-1ns", -time.Nanosecond}} {
		t.Setenv("TRACEBENCH_READER_BUDGET", c.env)
		var got time.Duration
		var budgets []time.Duration
		testing.Benchmark(func(b *testing.B) {
			s := startBenchSetup(b, "imported", 1, true)
			budgets = append(budgets, s.rts[0].opts.ReaderBudget)
			got = defaultReaderBudget
			b.StopTimer()
		})
		if got != c.want || len(budgets) == 0 || budgets[0] != c.want {
			t.Errorf("TRACEBENCH_READER_BUDGET=%q: the benchmark's default budget %v and its Maintenance runtime's %v, want %v", c.env, got, budgets, c.want)
		}
		if defaultReaderBudget != time.Hour {
			t.Errorf("TRACEBENCH_READER_BUDGET=%q: the tests' budget after the benchmark is %v, want %v", c.env, defaultReaderBudget, time.Hour)
		}
	}
}
