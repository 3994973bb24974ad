package runtime

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// Hold tests at the runtime level: what the share and dataflow packages
// guarantee, checked through the commands a controller sends.

// lagBehind makes r a runtime behind the command stream: every worker of r
// parks inside a command of its own until catchUp is called, so commands
// sent meanwhile queue behind it. (A barrier would not do: its callbacks
// run one at a time.) catchUp is also run at cleanup, so a failing test
// never leaves workers parked.
func lagBehind(t *testing.T, r *Runtime) (catchUp func()) {
	t.Helper()
	gate := make(chan struct{})
	var entered gosync.WaitGroup
	entered.Add(len(r.workers))
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) {
			entered.Done()
			<-gate
		}}})
	}
	entered.Wait()
	var once gosync.Once
	catchUp = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(catchUp)
	return catchUp
}

// onWorkers runs f on every worker of r after everything sent before.
func onWorkers(ctx context.Context, t *testing.T, r *Runtime, f func(*worker)) {
	t.Helper()
	if err := r.barrier(ctx, f); err != nil {
		t.Fatal(err)
	}
}

// maintained waits until r's workers have run a maintenance pass after
// everything sent before (and every wake signalled before): the first
// barrier's loop iteration ends with a maintenance pass that the second
// barrier waits for.
func maintained(ctx context.Context, t *testing.T, r *Runtime) {
	t.Helper()
	onWorkers(ctx, t, r, nil)
	onWorkers(ctx, t, r, nil)
}

// epochRows returns rows [time, diff, key, val] for times [lo, hi): time r
// adds (r%3, r) and retracts time r-2's row.
func epochRows(lo, hi uint64) [][]int64 {
	var rows [][]int64
	for r := lo; r < hi; r++ {
		rows = append(rows, []int64{int64(r), 1, int64(r % 3), int64(r)})
		if r >= 2 {
			rows = append(rows, []int64{int64(r), -1, int64((r - 2) % 3), int64(r - 2)})
		}
	}
	return rows
}

// TestPeerHoldsAreTakenAtTheIncarnationsAsOf re-creates an index id as
// incarnations at as_of 5 and 9 while the Interactive runtime lags behind
// the command stream. While it lags, the hold reserved at publication keeps
// the since at the incarnation's as_of, not at {0} and not at the compaction
// the controller allowed; when it catches up it takes over exactly that
// hold, in the same slot, and its downgrade lets maintenance move the since.
// Queries on the pair answer as Solo does.
func TestPeerHoldsAreTakenAtTheIncarnationsAsOf(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			pair, solo := newSetup(t, "pair", w), newSetup(t, "solo", w)
			maint, inter := pair.rts[0], pair.rts[1]
			regs := maint.opts.Registries
			both := func(cmd Command) { pair.ctl.Send(cmd); solo.ctl.Send(cmd) }
			var rows [][]int64
			pair.declare("in", 2)
			solo.declare("in", 2)
			lo := uint64(0)
			for _, asOf := range []uint64{5, 9} {
				allowed := frontier.At(asOf + 2)
				catchUp := lagBehind(t, inter)
				// Only the index id is re-created: each incarnation is
				// maintained by a dataflow with an id of its own.
				maintain := indexDesc("idx", "in", 2, []int{0}, asOf, nil)
				maintain.ID = fmt.Sprintf("maintain idx as_of %d", asOf)
				both(CreateDataflow{Desc: maintain})
				epoch := epochRows(lo, asOf+4)
				rows = append(rows, epoch...)
				pair.send("in", 2, epoch...)
				solo.send("in", 2, epoch...)
				lo = asOf + 4
				pair.advance("in", 2, frontier.At(lo))
				solo.advance("in", 2, frontier.At(lo))
				both(AllowCompaction{ID: "idx", Frontier: allowed})
				maintained(ctx, t, maint)
				for i, g := range regs {
					slot := g.Lookup("idx", frontier.At(asOf))
					if slot == nil {
						t.Fatalf("as_of %d: worker %d: no slot for the published incarnation", asOf, i)
					}
					for _, pt := range []*share.Point{slot.Oks(), slot.Errs()} {
						if got := pt.Stats().Since; got != frontier.At(asOf) {
							t.Fatalf("as_of %d: worker %d: since %v while the reader lags, want the reserved peer hold's {%d}", asOf, i, got, asOf)
						}
					}
					if st := g.Stats(); st.Reserved != 1 {
						t.Fatalf("as_of %d: worker %d: %d reserved holds while the reader lags, want 1", asOf, i, st.Reserved)
					}
				}
				catchUp()
				if err := pair.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				maintained(ctx, t, maint)
				onWorkers(ctx, t, inter, func(wk *worker) {
					if b, ok := wk.env.Manager.Get("idx"); !ok || !b.IsPeer() || b.CompactionFrontier() != allowed {
						t.Errorf("as_of %d: interactive worker %d: peer bundle %v, want one at %v", asOf, wk.index, b, allowed)
					}
				})
				for i, g := range regs {
					slot := g.Lookup("idx", frontier.At(asOf))
					if slot == nil {
						t.Fatalf("as_of %d: worker %d: the peer replaced the published incarnation's slot", asOf, i)
					}
					if st := g.Stats(); st.Reserved != 0 || st.Slots != 1 {
						t.Fatalf("as_of %d: worker %d: registry %+v after the peer caught up, want 1 slot, none reserved", asOf, i, st)
					}
					if got := slot.Oks().Stats().Since; got != allowed {
						t.Fatalf("as_of %d: worker %d: since %v after the peer moved its hold, want %v", asOf, i, got, allowed)
					}
				}
				// A query at the allowed compaction answers on both.
				q := fmt.Sprintf("q%d", asOf)
				cps := map[string]*dataflow.Capture{"pair": dataflow.NewCapture(w), "solo": dataflow.NewCapture(w)}
				pair.ctl.Send(CreateDataflow{Desc: readDesc(q, "idx", asOf+2, frontier.Empty(), cps["pair"])})
				solo.ctl.Send(CreateDataflow{Desc: readDesc(q, "idx", asOf+2, frontier.Empty(), cps["solo"])})
				for mode, cp := range cps {
					if err := cp.WaitPassed(ctx, asOf+3); err != nil {
						t.Fatalf("as_of %d: %s query: %v", asOf, mode, err)
					}
					for tm := asOf + 2; tm <= asOf+3; tm++ {
						if got, want := captured(cp, tm), model(rows, tm); !maps.Equal(got, want) {
							t.Fatalf("as_of %d: %s query at %d: got %v, want %v", asOf, mode, tm, got, want)
						}
					}
				}
				both(DropDataflow{ID: q})
				both(DropDataflow{ID: maintain.ID})
				if err := pair.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				for i, g := range regs {
					if st := g.Stats(); st != (share.RegistryStats{}) {
						t.Fatalf("as_of %d: worker %d: registry %+v after the drops", asOf, i, st)
					}
				}
			}
		})
	}
}

// TestDroppedDataflowsLeaveNoLiveHandleAndBuildNoImportReader: a maintained
// dataflow holds and keeps its arrangement, and a query holds and keeps the
// arrangement it imports. After the query's Build, the only readers of the
// imported points are the import's own holds, the query's kept ones and (in
// the pair) the peer hold: the consumer-facing reader of each import died
// with the build. Dropping the query leaves only the peer hold; dropping the
// maintained dataflow leaves no live handle on its traces.
func TestDroppedDataflowsLeaveNoLiveHandleAndBuildNoImportReader(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				s := newSetup(t, mode, w)
				maint := s.rts[0] // Solo, or the pair's Maintenance runtime
				var mu gosync.Mutex
				local := map[int][2]trace.State{}     // worker → the arrangement's oks and errs traces
				imported := map[int][2]*share.Point{} // worker → the points the query imports from
				s.declare("in", 2)
				s.ctl.Send(CreateDataflow{Desc: dataflow.Desc{
					ID: "maintain idx", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
					Exports: []string{"idx"},
					Build: func(c *dataflow.Context) error {
						in, err := c.Input("in", 2)
						if err != nil {
							return err
						}
						a, err := c.Arrange(in, []int{0})
						if err != nil {
							return err
						}
						c.Hold(a.Oks)
						c.Keep(a.Errs.Reader)
						mu.Lock()
						local[c.Worker()] = [2]trace.State{a.Oks.Reader.(*trace.Handle).State(), a.Errs.Reader.(*trace.Handle).State()}
						mu.Unlock()
						return c.Export("idx", a)
					},
				}})
				rows := epochRows(0, 6)
				s.send("in", 2, rows...)
				s.advance("in", 2, frontier.At(6))
				cp := dataflow.NewCapture(w)
				s.ctl.Send(CreateDataflow{Desc: dataflow.Desc{
					ID: "q", AsOf: frontier.At(2), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						a, err := c.ImportIndex("idx")
						if err != nil {
							return err
						}
						c.Hold(a.Oks)
						c.Keep(a.Errs.Reader)
						c.Capture(cp, a.Oks)
						mu.Lock()
						imported[c.Worker()] = [2]*share.Point{a.Oks.Reader.(*share.Reader).Point(), a.Errs.Reader.(*share.Reader).Point()}
						mu.Unlock()
						return nil
					},
				}})
				if err := cp.WaitPassed(ctx, 5); err != nil {
					t.Fatal(err)
				}
				if got, want := captured(cp, 5), model(rows, 5); !maps.Equal(got, want) {
					t.Fatalf("query at 5: got %v, want %v", got, want)
				}
				if err := s.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				peer := 0 // the pair's Interactive runtime holds each publication once
				if mode == "pair" {
					peer = 1
				}
				readers := func(when string, oks, errs int) {
					t.Helper()
					mu.Lock()
					defer mu.Unlock()
					if len(imported) != w {
						t.Fatalf("%s: %d workers built the query, want %d", when, len(imported), w)
					}
					for wk, pts := range imported {
						for half, pt := range pts {
							if n, want := pt.Stats().Readers, []int{oks, errs}[half]; n != want {
								t.Errorf("%s: worker %d half %d: %d readers, want %d", when, wk, half, n, want)
							}
						}
					}
				}
				// Oks: the import's own hold and the held clone. Errs: the
				// kept clone alone; no operator takes the errs stream or
				// frontier, so the build closed that import
				// (dataflow.closeUnreadImports).
				readers("after the query's build", peer+2, peer+1)
				s.ctl.Send(DropDataflow{ID: "q"})
				if err := s.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				readers("after the query's drop", peer, peer)
				s.ctl.Send(DropDataflow{ID: "maintain idx"})
				if err := s.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				readers("after the index's drop", 0, 0)
				onWorkers(ctx, t, maint, func(wk *worker) {
					mu.Lock()
					trs := local[wk.index]
					mu.Unlock()
					for half, tr := range trs {
						if n := tr.Live(); n != 0 {
							t.Errorf("worker %d half %d: %d live handles after the drop", wk.index, half, n)
						}
					}
				})
			})
		}
	}
}

// TestHoldChangesOfAWakeAreApplied: a worker applies the hold changes of a
// wake once, at its end (IndexManager.Defer, Maintain), but a barrier right
// after the command that moved a hold still sees it applied: Runtime.Stats
// reports no hold gap with no reader.
func TestHoldChangesOfAWakeAreApplied(t *testing.T) {
	r, err := New(Options{Role: Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, _ := NewController(r)
	defer ctl.Shutdown()
	c := dataflow.NewChunk(2, 2)
	c.Push([]int64{1, 10}, 0, 1)
	c.Push([]int64{2, 20}, 1, 1)
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(8)},
		CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	for i := range uint64(4) {
		sendAll(t, ctl, AllowCompaction{ID: "idx", Frontier: frontier.At(i + 1)})
		st, err := r.Stats(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.HoldGap != 0 {
			t.Fatalf("Stats after AllowCompaction to %d: hold gap %d with no reader", i+1, st.HoldGap)
		}
	}
	if err := ctl.Err(); err != nil {
		t.Fatal(err)
	}
}

// sendAll sends cmds in order and fails the test on a refusal.
func sendAll(t *testing.T, ctl *Controller, cmds ...Command) {
	t.Helper()
	for _, cmd := range cmds {
		if err := ctl.Send(cmd); err != nil {
			t.Fatal(err)
		}
	}
}

// soloWorker starts a Solo runtime of one worker under a controller (shut
// down at cleanup) and returns its worker.
func soloWorker(t *testing.T) (*Runtime, *Controller, *worker) {
	t.Helper()
	r, err := New(Options{Role: Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, _ := NewController(r)
	t.Cleanup(ctl.Shutdown)
	return r, ctl, r.workers[0]
}

// inBarrier runs a barrier on r whose callback blocks until release is
// called (also at cleanup, so a failing test never leaves the worker
// inside), and returns once the callback runs; done receives the barrier's
// result.
func inBarrier(t *testing.T, r *Runtime) (release func(), done <-chan error) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	var once gosync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	res := make(chan error, 1)
	go func() {
		res <- r.barrier(testCtx(t), func(*worker) {
			close(entered)
			<-gate
		})
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the barrier never ran")
	}
	return release, res
}

// startIndex declares input "in" (two columns) and index "idx" over it,
// keyed by the first column, and returns the probe of its oks.
func startIndex(t *testing.T, ctl *Controller) *dataflow.Probe {
	t.Helper()
	probe := dataflow.NewProbe(1)
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, probe)})
	return probe
}

// indexRound sends round r to startIndex's index — one update at time r,
// the input advanced to r+1, the index allowed to compact to r — and
// waits until its probe passes r.
func indexRound(t *testing.T, ctl *Controller, probe *dataflow.Probe, r uint64) {
	t.Helper()
	c := dataflow.NewChunk(2, 1)
	c.Push([]int64{int64(r), 1}, r, 1)
	sendAll(t, ctl, Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(r + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(r)})
	if err := probe.WaitPassed(testCtx(t), r); err != nil {
		t.Fatal(err)
	}
}

// TestIdleIsParkedWithNothingPending: a worker reads as idle only while it
// waits for a wake with no wake and no command pending — not while it
// runs a command, nor while a command waits in its queue — and reads so
// again once it has parked after them (the benchmarks' settle reads it).
func TestIdleIsParkedWithNothingPending(t *testing.T) {
	r, ctl, w := soloWorker(t)
	waitIdle := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !w.idle() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the worker never reads idle", what)
			}
			goruntime.Gosched()
		}
	}
	if err := ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	waitIdle("after a barrier")
	free, done := inBarrier(t, r)
	if w.idle() {
		t.Fatal("idle while running a barrier")
	}
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2})
	free()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitIdle("after the barrier and the command queued behind it")
	w.qmu.Lock()
	nq := len(w.queue)
	w.qmu.Unlock()
	if nq != 0 {
		t.Fatalf("idle with %d commands queued", nq)
	}
	// A command queued without a wake while the worker is parked: not idle
	// (the queue is checked, not only the flag).
	w.qmu.Lock()
	w.queue = append(w.queue, queued{})
	w.qmu.Unlock()
	idle := w.idle()
	w.qmu.Lock()
	w.queue = w.queue[:0]
	w.qmu.Unlock()
	if idle {
		t.Fatal("idle with a command queued")
	}
}

// TestSignalsCoalesceUntilTheWakeIsTaken: a signal sends a wake only when
// none is due since the worker last took one. A parked worker takes the
// token from the send itself, so the channel's buffer alone would let a
// second signal queue another wake, which would run a whole cycle for
// nothing; once the worker has taken its wake (due cleared), the next
// signal sends again, for work recorded after the worker took its queue.
func TestSignalsCoalesceUntilTheWakeIsTaken(t *testing.T) {
	w := &worker{wake: make(chan struct{}, 1)}
	w.signal()
	if len(w.wake) != 1 || !w.due.Load() {
		t.Fatalf("first signal: %d tokens, due %v; want 1, true", len(w.wake), w.due.Load())
	}
	<-w.wake // taken by the send, as a parked worker's select would
	w.signal()
	w.signal()
	if len(w.wake) != 0 {
		t.Fatal("signals while a wake is due queued another")
	}
	w.due.Store(false) // the worker took its wake (worker.run)
	w.signal()
	if len(w.wake) != 1 {
		t.Fatal("a signal after the worker took its wake sent none")
	}
}

// TestIdleRuntimeIsQuiescent: a worker parks only when its Maintain reports
// no merge in progress (it signals itself while merges remain), so once
// every worker of a runtime is idle nothing is left to merge — what the
// steady benchmarks' settle relies on to end a round without a barrier.
// Effort is small, so the merges of a round take many wakes; Solo and the
// Maintenance/Interactive pair alike.
func TestIdleRuntimeIsQuiescent(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			const effort = 64
			var rts []*Runtime
			if mode == "solo" {
				r, err := New(Options{Role: Solo, Workers: 1, Effort: effort})
				if err != nil {
					t.Fatal(err)
				}
				rts = []*Runtime{r}
			} else {
				regs := []*share.Registry{share.NewRegistry()}
				for _, role := range []Role{Maintenance, Interactive} {
					r, err := New(Options{Role: role, Workers: 1, Registries: regs, Effort: effort})
					if err != nil {
						t.Fatal(err)
					}
					rts = append(rts, r)
				}
			}
			ctl, err := NewController(rts...)
			if err != nil {
				t.Fatal(err)
			}
			defer ctl.Shutdown()
			ctx := testCtx(t)
			probe := startIndex(t, ctl)
			var merges int64
			for r := range uint64(256) {
				c := dataflow.NewChunk(2, 64)
				for i := range int64(64) {
					c.Push([]int64{int64(r)*1000 + i*7919%1000, i}, r, 1)
				}
				sendAll(t, ctl, Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(r + 1)})
				if err := probe.WaitPassed(ctx, r); err != nil {
					t.Fatal(err)
				}
				if !awaitIdle(ctx.Done(), rts...) {
					t.Fatal("the workers never all parked")
				}
				st, err := rts[0].Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Trace.Merging != 0 {
					t.Fatalf("round %d: every worker idle with %d merges in progress", r, st.Trace.Merging)
				}
				merges = st.Trace.Merges
			}
			if merges < 16 {
				t.Fatalf("%d merges over the rounds: the test merged too little to show anything", merges)
			}
		})
	}
}

// TestAwaitParkWaitsForTheWorker: awaitPark returns at once for an idle
// worker (and leaves nothing for its next parking to close), blocks while
// the worker runs, returns once it has parked after, and returns false
// when done closes first.
func TestAwaitParkWaitsForTheWorker(t *testing.T) {
	r, _, w := soloWorker(t)
	never := make(chan struct{})
	if !awaitIdle(testCtx(t).Done(), r) {
		t.Fatal("a new runtime never idle")
	}
	soon := make(chan struct{})
	timer := time.AfterFunc(10*time.Second, func() { close(soon) })
	ok := w.awaitPark(soon)
	timer.Stop()
	if !ok || w.parkWait.Load() != nil {
		t.Fatal("awaitPark on an idle worker: blocked, or left its channel")
	}
	free, done := inBarrier(t, r)
	stop := make(chan struct{})
	close(stop)
	if w.awaitPark(stop) {
		t.Fatal("awaitPark returned true while the worker runs a barrier")
	}
	parked := make(chan bool, 1)
	go func() { parked <- w.awaitPark(never) }()
	select {
	case <-parked:
		t.Fatal("awaitPark returned while the worker runs a barrier")
	case <-time.After(20 * time.Millisecond):
	}
	free()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-parked:
		if !ok {
			t.Fatal("awaitPark false without done")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("awaitPark never returned after the worker parked")
	}
}

// TestIdleIsExact: idle reads false for a worker woken but not yet running
// (a parked worker takes the token from the send itself, so only the due
// flag shows the wake), and for a worker that ran a whole cycle and parked
// again while idle looked (its parks count moved on: the two reads of it
// must agree). The second case holds the queue's lock while idle waits on
// it, and moves the count meanwhile.
func TestIdleIsExact(t *testing.T) {
	w := &worker{wake: make(chan struct{}, 1)}
	w.parks.Store(1) // parked
	if !w.idle() {
		t.Fatal("a parked worker with nothing pending is not idle")
	}
	w.signal()
	<-w.wake // taken by the send, as a parked worker's select would
	if w.idle() {
		t.Fatal("idle: a worker woken (its token taken) but not yet running")
	}
	w.parks.Add(1) // it runs
	w.due.Store(false)
	w.parks.Add(1) // and parks again
	if !w.idle() {
		t.Fatal("not idle after it parked again")
	}

	w.qmu.Lock()
	res := make(chan bool, 1)
	go func() { res <- w.idle() }()
	if !blockedInIdleOf(t, nil) {
		w.qmu.Unlock()
		t.Fatal("idle never reached the queue's lock")
	}
	w.parks.Add(2) // a whole cycle: woke, ran, parked again
	w.qmu.Unlock()
	if <-res {
		t.Fatal("idle: a worker that ran a cycle while idle looked")
	}
}

// blockedInIdleOf waits (up to 10 s) until a goroutine is inside worker
// w's idle check (any worker's if w is nil, told by the receiver the stack
// shows), waiting for the worker's queue lock, which the caller holds: it
// has read the parks count and the due flag.
func blockedInIdleOf(t *testing.T, w *worker) bool {
	t.Helper()
	fn := "(*worker).idleCount("
	if w != nil {
		fn += fmt.Sprintf("%p", w)
	}
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<16)
	for time.Now().Before(deadline) {
		for _, g := range strings.Split(string(buf[:goruntime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, "sync.(*Mutex).Lock") {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// TestAwaitIdleSeesAWorkerWokenByALaterOne: a pass that finds every worker
// idle is not enough. Worker a is looked at first and read idle; before
// the pass reaches worker b, b wakes, runs a cycle that wakes a (an
// exchange, a publication, a hold move) and parks; the pass reads b idle.
// awaitIdle must not report every worker idle then: a has a wake due.
func TestAwaitIdleSeesAWorkerWokenByALaterOne(t *testing.T) {
	// a is woken and never runs here: awaitIdle must still be waiting for
	// it when done closes, and then report false.
	waitsForA := func(what string, done chan struct{}, res chan bool) {
		t.Helper()
		select {
		case ok := <-res:
			t.Fatalf("%s: awaitIdle returned %v before done closed", what, ok)
		case <-time.After(50 * time.Millisecond):
		}
		close(done)
		if <-res {
			t.Fatalf("%s: awaitIdle reported every worker idle", what)
		}
	}
	a := &worker{wake: make(chan struct{}, 1)}
	b := &worker{wake: make(chan struct{}, 1)}
	a.parks.Store(1) // both parked
	b.parks.Store(1)
	done := make(chan struct{})
	res := make(chan bool, 1)
	a.qmu.Lock() // the pass reads a's count and flag, then waits here
	go func() { res <- awaitIdle(done, &Runtime{workers: []*worker{a}}, &Runtime{workers: []*worker{b}}) }()
	if !blockedInIdleOf(t, nil) {
		a.qmu.Unlock()
		t.Fatal("the pass never reached a's queue lock")
	}
	b.parks.Add(1) // b wakes,
	a.signal()     // its cycle wakes a,
	b.parks.Add(1) // and it parks
	a.qmu.Unlock()
	waitsForA("b woke a before the pass reached b", done, res)

	// The second pass must find each worker at the count the first found:
	// here it reads a idle, and before it reaches b, b wakes, runs a cycle
	// that wakes a, and parks again, idle at a later count.
	a, b = &worker{wake: make(chan struct{}, 1)}, &worker{wake: make(chan struct{}, 1)}
	a.parks.Store(1)
	b.parks.Store(1)
	done, res = make(chan struct{}), make(chan bool, 1)
	b.qmu.Lock() // the first pass: past a, waiting at b
	go func() { res <- awaitIdle(done, &Runtime{workers: []*worker{a}}, &Runtime{workers: []*worker{b}}) }()
	if !blockedInIdleOf(t, b) {
		b.qmu.Unlock()
		t.Fatal("the first pass never reached b's queue lock")
	}
	a.qmu.Lock()
	b.qmu.Unlock() // the first pass ends; the second reads a and waits here
	if !blockedInIdleOf(t, a) {
		a.qmu.Unlock()
		t.Fatal("the second pass never reached a's queue lock")
	}
	b.parks.Add(1)
	a.signal()
	b.parks.Add(1)
	a.qmu.Unlock()
	waitsForA("b woke a between the passes", done, res)
}

// TestOneCycleAWake: a wake whose commands activate the worker's dataflows
// (an input's rows, its frontier) runs one cycle, not a second one for the
// signals those commands sent (due is cleared after the commands); a
// command queued while others are applied is not lost to the coalescing
// (the worker looks for it after clearing due).
func TestOneCycleAWake(t *testing.T) {
	r, ctl, w := soloWorker(t)
	ctx := testCtx(t)
	probe := dataflow.NewProbe(1)
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, CreateDataflow{Desc: dataflow.Desc{
		ID: "watch", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			c.Probe(probe, in.Oks)
			return nil
		},
	}})
	for round := range uint64(20) {
		if !awaitIdle(ctx.Done(), r) {
			t.Fatal("never idle")
		}
		before := w.parks.Load()
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{int64(round), 1}, round, 1)
		if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(round + 1)}); err != nil {
			t.Fatal(err)
		}
		if err := probe.WaitPassed(ctx, round); err != nil {
			t.Fatal(err)
		}
		if !awaitIdle(ctx.Done(), r) {
			t.Fatal("never idle")
		}
		if cycles := (w.parks.Load() - before) / 2; cycles != 1 {
			t.Fatalf("round %d: %d cycles for one wake", round, cycles)
		}
	}

	// A command queued while a barrier runs: its signal is coalesced (the
	// wake is due until the commands are applied), and it is applied next.
	late := make(chan error, 1)
	if err := r.barrier(ctx, func(*worker) {
		late <- ctl.Send(CreateInput{Name: "late", Arity: 1})
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if !awaitIdle(short.Done(), r) {
		t.Fatal("a command queued during a wake's commands was never applied")
	}
	if err := ctl.Send(Input{Name: "late", Chunk: dataflow.NewChunk(1, 0)}); err != nil {
		t.Fatalf("the late input: %v", err)
	}
}

// TestHoldMovesBeforeMaintainSendNoWake: a reader's hold move notified
// before the worker's Maintain reads its traces' Wakes (the Interactive
// worker's, while the Maintenance worker yields after its step) sends no
// wake; one after it does.
func TestHoldMovesBeforeMaintainSendNoWake(t *testing.T) {
	w := &worker{wake: make(chan struct{}, 1)}
	w.beforeMaintain.Store(true)
	w.holdsMoved()
	if len(w.wake) != 0 || w.due.Load() {
		t.Fatal("a move before Maintain sent a wake")
	}
	w.beforeMaintain.Store(false)
	w.holdsMoved()
	if len(w.wake) != 1 {
		t.Fatal("a move after Maintain sent no wake")
	}
}

// TestImportedRoundOneMaintenanceCycle: in a Maintenance/Interactive pair
// on one P (the Interactive worker runs while the Maintenance worker yields
// after its step), a round of one update costs the Maintenance worker one
// cycle: the Interactive worker's hold moves (its peer hold, its imports'
// holds) come before the Maintenance worker's Maintain, which reads them,
// and wake it no second time.
func TestImportedRoundOneMaintenanceCycle(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	m, i, ctl, err := Pair(1, spine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx := testCtx(t)
	cp := dataflow.NewCapture(1)
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)},
		CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
	const rounds = 40
	single := 0
	for round := range uint64(rounds) {
		if !awaitIdle(ctx.Done(), m, i) {
			t.Fatal("never idle")
		}
		before := m.workers[0].parks.Load()
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{int64(round), 1}, round, 1)
		if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(round + 1)},
			AllowCompaction{ID: "idx", Frontier: frontier.At(round)}); err != nil {
			t.Fatal(err)
		}
		if err := cp.WaitPassed(ctx, round); err != nil {
			t.Fatal(err)
		}
		if !awaitIdle(ctx.Done(), m, i) {
			t.Fatal("never idle")
		}
		if (m.workers[0].parks.Load()-before)/2 == 1 {
			single++
		}
	}
	if single < rounds*3/4 {
		t.Fatalf("%d of %d rounds took the Maintenance worker one cycle", single, rounds)
	}
}

// TestReleaseWakesAParkedPublisher: a reader that releases its hold while
// the publishing worker is parked wakes it (holdsMoved signals once the
// worker is past its Maintain), and the since moves to what the controller
// allowed without any further command.
func TestReleaseWakesAParkedPublisher(t *testing.T) {
	m, i, ctl, err := Pair(1, spine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx := testCtx(t)
	probe := startIndex(t, ctl)
	round := func(r uint64) { indexRound(t, ctl, probe, r) }
	round(0)
	round(1)
	slot := m.opts.Registries[0].Lookup("idx", frontier.At(0))
	if slot == nil {
		t.Fatal("no published slot")
	}
	pt := slot.Oks()
	r := pt.Reader()
	held := r.LogicalCompaction()
	for x := range uint64(4) {
		round(2 + x)
	}
	if !awaitIdle(ctx.Done(), m, i) {
		t.Fatal("never idle")
	}
	if got := pt.Stats().Since; got != held {
		t.Fatalf("since %v with a reader holding at %v", got, held)
	}
	r.Release() // the workers are parked: only the release's notification wakes the publisher
	deadline := time.Now().Add(5 * time.Second)
	for pt.Stats().Since != frontier.At(5) {
		if time.Now().After(deadline) {
			t.Fatalf("since %v after the release, want {5}: the parked publisher was not woken", pt.Stats().Since)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestNudgeWaitsForTheLeadersCopy: after a wake that applied an
// AllowCompaction, the Maintenance worker wakes its Interactive follower
// only for a queued command no newer than that one (the follower's copy,
// not yet taken). A driver that sends the next round as soon as the answer
// comes queues the next round's AllowCompaction on the follower while the
// Maintenance worker's wake still runs; waking the follower for it ran, on
// two cores, a follower cycle of its own every round besides the one the
// next publication causes.
func TestNudgeWaitsForTheLeadersCopy(t *testing.T) {
	fw := &worker{wake: make(chan struct{}, 1)}
	fol := &Runtime{workers: []*worker{fw}}
	lead := &worker{rt: &Runtime{follower: fol, opts: Options{Role: Maintenance}}, foreign: map[string]string{"idx": "q"}}
	allow := func(seq uint64) {
		lead.apply(queued{cmd: AllowCompaction{ID: "idx", Frontier: frontier.At(seq)}, seq: seq})
		lead.nudgeFollower()
	}
	fw.queue = []queued{{seq: 7}} // the next round's copy, queued meanwhile
	allow(5)
	if len(fw.wake) != 0 {
		t.Fatal("the follower was woken for a command newer than the one applied")
	}
	fw.queue = []queued{{seq: 5}, {seq: 7}} // its copy, not yet taken
	allow(5)
	if len(fw.wake) != 1 {
		t.Fatal("the follower was not woken for its copy of the command applied")
	}
	<-fw.wake
	fw.due.Store(false)
	fw.queue = nil
	allow(9)
	if len(fw.wake) != 0 {
		t.Fatal("the follower was woken with nothing queued")
	}
	lead.nudgeFollower()
	if len(fw.wake) != 0 || lead.nudge != 0 {
		t.Fatal("a wake without an AllowCompaction nudged the follower")
	}
}

// TestBurstsLeaveEverySinceAtTheAllowance: after every burst of rounds
// (one to four, sent back to back, each allowing compaction to its own
// time), once every worker of the pair is idle, both halves' publications
// are compacted exactly to the last allowance, with no further command:
// the Interactive workers' hold moves (the peer hold, the held reader, the
// imports' own holds) set their traces' wakes and reached the Maintenance
// workers, whether those were parked, running, or about to maintain. On
// one, two and four Ps, with one and two workers.
func TestBurstsLeaveEverySinceAtTheAllowance(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("procs=%d/workers=%d", procs, workers), func(t *testing.T) {
				defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(procs))
				m, i, ctl, err := Pair(workers, spine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer ctl.Shutdown()
				ctx := testCtx(t)
				probe := dataflow.NewProbe(workers)
				sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)},
					CreateDataflow{Desc: dataflow.Desc{ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							a, err := c.ImportIndex("idx")
							if err != nil {
								return err
							}
							c.Hold(a.Oks)
							c.Hold(a.Errs)
							c.Probe(probe, a.Oks.Stream)
							return nil
						}}})
				rng := rand.New(rand.NewPCG(1, uint64(procs*10+workers)))
				round := uint64(0)
				for burst := range 60 {
					for range 1 + rng.IntN(4) {
						c := dataflow.NewChunk(2, 1)
						c.Push([]int64{int64(round), 1}, round, 1)
						if err := ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(round + 1)},
							AllowCompaction{ID: "idx", Frontier: frontier.At(round)}); err != nil {
							t.Fatal(err)
						}
						round++
						if rng.IntN(3) == 0 {
							goruntime.Gosched()
						}
					}
					if err := probe.WaitPassed(ctx, round-1); err != nil {
						t.Fatal(err)
					}
					if !awaitIdle(ctx.Done(), m, i) {
						t.Fatal("the pair's workers never all parked")
					}
					for w := range workers {
						slot := m.opts.Registries[w].Lookup("idx", frontier.At(0))
						for half, p := range []*share.Point{slot.Oks(), slot.Errs()} {
							if got := p.Stats().Since; got != frontier.At(round-1) {
								t.Fatalf("burst %d, worker %d, half %d: since %v with every worker idle, want the allowance {%d}", burst, w, half, got, round-1)
							}
						}
					}
				}
			})
		}
	}
}

// TestSyncLeavesTheQueriesPastWhatWasSent: after an advance and a Sync, a
// query reading the index has passed the advance: Sync's last barrier is
// the Interactive runtime's, which steps its queries over what the
// Maintenance runtime published for the commands before it. (Synced
// Interactive-first alone, the query stepped in a wake of its own after
// Sync returned, and a probe read at once was behind in most rounds.)
func TestSyncLeavesTheQueriesPastWhatWasSent(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		p := dataflow.NewProbe(s.workers)
		s.must(CreateDataflow{Desc: importProbeDesc("q", "idx", 0, frontier.Empty(), p)})
		behind := 0
		const rounds = 200
		for tm := range uint64(rounds) {
			s.send("in", 2, []int64{int64(tm), 1, int64(tm), 1})
			s.advance("in", 2, frontier.At(tm+1))
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if f := p.Frontier(); !frontier.At(tm + 1).LessEqual(f) {
				behind++
				if behind == 1 {
					t.Errorf("round %d: the query's frontier after Sync is %v, want {%d} or later", tm, f, tm+1)
				}
			}
		}
		if behind > 0 {
			t.Errorf("behind after Sync in %d of %d rounds", behind, rounds)
		}
	})
}

// TestSyncLeavesAReaderAcrossAnExchangePastWhatWasSent: after an advance
// and a Sync, a reader whose updates cross workers through an exchange
// has passed the advance too: a query of an index by its second column,
// and the Maintained dataflow capturing that index's arrangement, each
// update's key falling to one worker or the other. A barrier passes one
// worker after another, and a worker's step after its peer had passed
// the barrier reached the peer through the exchange, which stepped it only
// in a wake of its own after Sync returned: with two workers both readers
// were behind after nearly every Sync, in Solo and the pair.
func TestSyncLeavesAReaderAcrossAnExchangePastWhatWasSent(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		maintained := dataflow.NewProbe(s.workers)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{1}, 0, maintained)})
		query := dataflow.NewProbe(s.workers)
		s.must(CreateDataflow{Desc: importProbeDesc("q", "idx", 0, frontier.Empty(), query)})
		const rounds = 200
		behind := map[string]int{}
		for tm := range uint64(rounds) {
			s.send("in", 2, []int64{int64(tm), 1, int64(tm % 3), int64(tm)})
			s.advance("in", 2, frontier.At(tm+1))
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string]*dataflow.Probe{"the Maintained dataflow": maintained, "the query": query} {
				if f := p.Frontier(); !frontier.At(tm + 1).LessEqual(f) {
					if behind[name] == 0 {
						t.Errorf("round %d: %s's frontier after Sync is %v, want {%d} or later", tm, name, f, tm+1)
					}
					behind[name]++
				}
			}
		}
		if len(behind) > 0 {
			t.Errorf("behind after Sync (of %d rounds): %v", rounds, behind)
		}
	})
}
