package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/trace"
)

// lateCalls are the goroutines a dataflow's Build starts, one a worker
// (lateCalls.wrap): each calls Context.Input, after the Build returned,
// each time the test sends on its gate, and tells call after it.
type lateCalls struct {
	gates, calls []chan struct{}
	// started says the Build ran on that worker (its goroutine waits on
	// the gate): a worker the Build never ran on is not called.
	started []atomic.Bool
}

func newLateCalls(workers int) *lateCalls {
	g := &lateCalls{gates: make([]chan struct{}, workers), calls: make([]chan struct{}, workers), started: make([]atomic.Bool, workers)}
	for i := range workers {
		g.gates[i], g.calls[i] = make(chan struct{}), make(chan struct{}, 1)
	}
	return g
}

// wrap returns d whose Build starts the worker's goroutine first, then
// builds as d's does.
func (g *lateCalls) wrap(d dataflow.Desc) dataflow.Desc {
	build := d.Build
	d.Build = func(c *dataflow.Context) error {
		i := c.Worker()
		gate, call := g.gates[i], g.calls[i]
		if !g.started[i].CompareAndSwap(false, true) {
			return fmt.Errorf("dataflow %s built twice on worker %d", d.ID, i)
		}
		go func() {
			for range gate {
				c.Input("in", 2) // refused: the Build returned
				call <- struct{}{}
			}
		}()
		return build(c)
	}
	return d
}

// call has worker i's goroutine make its call, and waits until it did:
// whatever the call reports is recorded by then. False if the Build never
// ran on worker i.
func (g *lateCalls) call(i int) bool {
	if !g.started[i].Load() {
		return false
	}
	g.gates[i] <- struct{}{}
	<-g.calls[i]
	return true
}

// close ends the goroutines.
func (g *lateCalls) close() {
	for _, gate := range g.gates {
		close(gate)
	}
}

// overflowIndexDesc maintains input (arity 2) arranged by its first
// column, exported as index export.
func overflowIndexDesc(id, input, export string) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{export},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input(input, 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			return c.Export(export, a)
		},
	}
}

// mergeIndexes, a barrier's function, merges every local index trace of
// w into one batch (share.Spine.Exert, at the trace's since), after the
// wake's Maintain would have applied the holds the readers moved: a pair
// of updates of one key, at times before the since, in two batches, is
// consolidated then, whatever merges the levels' rules started or did
// not. Exert lists the trace as hot: the wake's Overflows looks at it.
func mergeIndexes(w *worker) {
	for w.env.Manager.Maintain(1 << 20) {
	}
	for _, id := range w.env.Manager.IDs() {
		b, ok := w.env.Manager.Get(id)
		if !ok || b.IsPeer() {
			continue
		}
		sp := b.Oks.(*trace.Handle).State().Storage().(*share.Spine)
		for sp.Exert(1 << 20) {
		}
	}
}

// queueGate queues on every worker of r a barrier that blocks it until
// the returned function is called (at the test's end at the latest), and
// returns at once: the commands queued before it are applied in the wake
// the gate holds.
func queueGate(t *testing.T, r *Runtime) (open func()) {
	gate := make(chan struct{})
	var once gosync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the Shutdown of newSetup's cleanup
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) { <-gate }}})
	}
	return open
}

// emptyDesc is a dataflow of no operator, Maintained or a query (built on
// the pair's Interactive runtime).
func emptyDesc(id string, maintained bool) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(*dataflow.Context) error { return nil },
	}
}

// TestOverflowsAndOffWorkerErrorsAreTakenOnceRandomly is
// TestErrorsAreTakenOnceRandomly with the errors of an incarnation that no
// step of its operators meets: a merge's overflow and a Context call from
// another goroutine after the Build returned. It draws, from a fixed seed,
// creates of three ids used again once dropped, each a dataflow whose
// operator panics at a row (a Build that fails, a Shutdown that panics, as
// there), an index of an input of its own, or a dataflow of no operator
// (Maintained, or a query on the pair's Interactive runtime), every one of
// whose Builds starts a goroutine that calls a Context method when the
// test lets it; an index's pairs of updates of one fresh key on a worker,
// math.MaxInt64 and 1 at two times, the index's compaction allowed past
// both first, so that a merge that takes both consolidates them and
// overflows; barriers that merge every index trace into one batch
// (mergeIndexes); drops plain, after a Sync, after such a merge, and in
// the wake whose merge overflows (the workers held while a pair to a
// worker whose trace has none, the merging barrier, the drop, a Sync and
// a gate are queued, and a take made while the gate holds that wake
// open); off-worker calls on live dataflows, on dropped ones whose drop
// some worker may not have applied, and on ones every worker has dropped;
// Syncs, TakeErrors and Errors. The model is takenModel's: every error is
// returned by one take only, Errors' errors by the next take, a taken
// error is kept while a worker may meet it again, and the controller keeps
// nothing once all is dropped and taken. Required, by the end and by any
// take after a Sync that no command followed: a call's error made while
// its dataflow lived (after a Sync, so its Build had returned on every
// worker), and an index's overflow once a pair was sent as two batches (a
// Sync between) and a merging barrier ran before its drop. An overflow
// whose merge may not have run by the drop (docs/semantics.md §1.1: when a
// merge runs is the scheduler's) and a call made while some worker may not
// yet have applied the drop may come, once. A call after every worker
// applied the drop, or on a dataflow whose Build failed, must report
// nothing. Solo and the pair, one worker and two.
func TestOverflowsAndOffWorkerErrorsAreTakenOnceRandomly(t *testing.T) {
	seeds, ops := 8, 600
	if testing.Short() {
		seeds, ops = 2, 200
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for seed := range seeds {
				t.Run(fmt.Sprintf("%s/workers=%d/seed=%d", mode, w, seed), func(t *testing.T) {
					runOverflowTakenRandom(t, mode, w, uint64(seed), ops)
				})
			}
		}
	}
}

const (
	kindBoom = iota
	kindIndex
	kindEmpty
)

func runOverflowTakenRandom(t *testing.T, mode string, workers int, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 0x0f10))
	s := newSetup(t, mode, workers)
	pub := s.rts[0] // Solo's, or the pair's Maintenance runtime: it maintains the indexes
	ids := []string{"d0", "d1", "d2"}
	type live struct {
		kind          int
		id, input     string
		seq           uint64
		refused, shut bool
		v             []int64 // the panic's value per worker
		unsynced      []errKey
		at            int64  // an index's next time
		armed         bool   // an index's pair sent as two batches, compaction allowed past it
		paired        []bool // an index's pair sent to that worker: its trace may have overflowed
		calls         *lateCalls
	}
	// ghost is a dropped incarnation, whose goroutines still call.
	type ghost struct {
		id      string
		seq     uint64
		calls   *lateCalls
		applied bool // a Sync after its drop: every worker applied it
	}
	lives := map[string]*live{}
	var ghosts []*ghost
	t.Cleanup(func() {
		for _, l := range lives {
			l.calls.close()
		}
		for _, g := range ghosts {
			g.calls.close()
		}
	})
	m := &takenModel{required: map[errKey]bool{}, possible: map[errKey]bool{}, taken: map[errKey]int{}, dropped: map[uint64]uint64{}}
	seq := func() uint64 {
		s.ctl.mu.Lock()
		defer s.ctl.mu.Unlock()
		return s.ctl.seq
	}
	inputs := 0
	nextKey := int64(0)
	keyOnWorker := func(i int) int64 { // a key of worker i not used before
		k := nextKey
		for dataflow.Worker(dataflow.HashCols([]int64{k}, []int{0}), workers) != i {
			k++
		}
		nextKey = k + 1
		return k
	}
	stepText := func(id string, v int64) string {
		return fmt.Sprintf(`dataflow %s: operator "boom": Step: operator panicked: boom %d`, id, v)
	}
	overflowKey := func(l *live) errKey {
		return errKey{inc: l.seq, err: fmt.Sprintf("dataflow %s: arrange oks: batch: numeric overflow in diff", l.id)}
	}
	lateKey := func(id string, inc uint64) errKey {
		return errKey{inc: inc, err: fmt.Sprintf("dataflow %s: Context.Input called from another goroutine than the worker's after the dataflow's Build returned: a dataflow's operators are added by its Build only", id)}
	}
	maybe := func(k errKey) {
		if !m.required[k] {
			m.possible[k] = true
		}
	}
	must := func(k errKey) {
		delete(m.possible, k)
		m.required[k] = true
	}
	// syncedThrough is the last command a Sync covered: a create at or
	// before it has had its Build return on every worker (a call from
	// its goroutine before that is the caller's race, which nothing
	// checks), and a take with nothing sent since must have returned
	// every required error.
	syncedThrough := uint64(0)
	synced := func() { // a Sync covered every command sent so far
		for _, l := range lives {
			for _, k := range l.unsynced {
				must(k)
			}
			l.unsynced = nil
		}
		for _, g := range ghosts {
			g.applied = true
		}
		syncedThrough = seq()
	}
	syncAll := func() {
		t.Helper()
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		synced()
	}
	// mergeAll merges each index's trace into one batch on every
	// worker, after a Sync: an armed index's merge overflows, reported at
	// the end of the wake.
	mergeAll := func() {
		t.Helper()
		syncAll()
		if err := pub.barrier(testCtx(t), mergeIndexes); err != nil {
			t.Fatal(err)
		}
		for _, l := range lives {
			if l.armed {
				must(overflowKey(l))
			}
		}
	}
	drop := func(l *live) {
		t.Helper()
		s.must(DropDataflow{ID: l.id})
		m.dropped[l.seq] = seq()
		if l.shut && !l.refused {
			must(errKey{seq: seq(), err: fmt.Sprintf(`dataflow %s: operator "boom": Shutdown: operator panicked: shut`, l.id)})
		}
		delete(lives, l.id)
		ghosts = append(ghosts, &ghost{id: l.id, seq: l.seq, calls: l.calls})
	}
	var promised []errKey // what Errors returned, which the next take must return
	take := func(op int) {
		t.Helper()
		m.checkTake(t, op, s.ctl.TakeErrors(), promised)
		promised = nil
		if syncedThrough == seq() {
			for k := range m.required {
				if m.taken[k] == 0 {
					t.Fatalf("op %d: a take after a Sync of every command sent did not return %+v", op, k)
				}
			}
		}
		m.mustKeep(t, op, s.ctl)
	}
	counts := map[string]int{} // what was drawn, for the log
	// pick returns a live dataflow of kind (-1: any), nil if none.
	pick := func(kind int) *live {
		var of []*live
		for _, id := range ids {
			if l := lives[id]; l != nil && (kind < 0 || l.kind == kind) {
				of = append(of, l)
			}
		}
		if len(of) == 0 {
			return nil
		}
		return of[rng.IntN(len(of))]
	}
	for op := range ops {
		r := rng.IntN(100)
		switch {
		case r < 16: // create
			var free []string
			for _, id := range ids {
				if lives[id] == nil {
					free = append(free, id)
				}
			}
			if len(free) == 0 {
				continue
			}
			id := free[rng.IntN(len(free))]
			inputs++
			l := &live{id: id, input: fmt.Sprintf("in%d", inputs), calls: newLateCalls(workers), paired: make([]bool, workers)}
			var d dataflow.Desc
			switch k := rng.IntN(10); {
			case k < 3:
				l.kind, l.refused, l.shut = kindBoom, rng.IntN(4) == 0, rng.IntN(2) == 0
				for range workers {
					l.v = append(l.v, int64(rng.IntN(2)))
				}
				d = valueBoomDesc(id, l.input, l.shut, l.refused)
			case k < 8:
				l.kind = kindIndex
				d = overflowIndexDesc(id, l.input, "x"+id)
			default:
				l.kind = kindEmpty
				d = emptyDesc(id, rng.IntN(2) == 0)
			}
			s.declare(l.input, 2)
			s.must(CreateDataflow{Desc: l.calls.wrap(d)})
			l.seq = seq()
			if l.refused {
				must(errKey{seq: l.seq, err: fmt.Sprintf("dataflow %s: %v", id, errBuildRefused)})
			}
			lives[id] = l
			counts["create"]++
		case r < 24: // a row to a worker of an operator that panics at it
			l := pick(kindBoom)
			if l == nil {
				continue
			}
			i := rng.IntN(workers)
			s.send(l.input, 2, []int64{0, 1, keyOn(i, workers), l.v[i]})
			if !l.refused {
				k := errKey{inc: l.seq, err: stepText(l.id, l.v[i])}
				if !m.required[k] {
					maybe(k)
					l.unsynced = append(l.unsynced, k)
				}
			}
		case r < 38: // an index's pair that overflows once merged at one time
			l := pick(kindIndex)
			if l == nil {
				continue
			}
			i := rng.IntN(workers)
			k := keyOnWorker(i)
			l.paired[i] = true
			// The since ahead of both updates: whichever merge takes
			// them consolidates them at one time.
			s.must(AllowCompaction{ID: "x" + l.id, Frontier: frontier.At(uint64(l.at + 2))})
			s.send(l.input, 2, []int64{l.at, math.MaxInt64, k, 0})
			s.advance(l.input, 2, frontier.At(uint64(l.at+1)))
			split := rng.IntN(3) > 0
			if split {
				syncAll() // the first update in a batch of its own
			}
			s.send(l.input, 2, []int64{l.at + 1, 1, k, 0})
			s.advance(l.input, 2, frontier.At(uint64(l.at+2)))
			l.at += 2
			l.armed = l.armed || split
			counts["pair"]++
			maybe(overflowKey(l))
		case r < 50: // an off-worker call
			i := rng.IntN(workers)
			if rng.IntN(3) > 0 || len(ghosts) == 0 {
				l := pick(-1)
				if l == nil {
					continue
				}
				if syncedThrough < l.seq {
					syncAll() // its Build has returned on every worker
				}
				if l.calls.call(i) && !l.refused {
					must(lateKey(l.id, l.seq))
					counts["call"]++
				}
				continue
			}
			g := ghosts[rng.IntN(len(ghosts))]
			if !g.applied && syncedThrough < g.seq {
				continue // its Build may not have returned
			}
			if g.calls.call(i) {
				if g.applied {
					counts["call after the drop"]++
				} else {
					maybe(lateKey(g.id, g.seq))
					counts["call as it drops"]++
				}
			}
		case r < 66: // a drop
			l := pick(-1)
			if l == nil {
				continue
			}
			switch v := rng.IntN(5); {
			case v == 0 || v == 4 && l.kind != kindIndex:
			case v == 1:
				syncAll() // its rows stepped to before the drop
			case v == 2:
				mergeAll() // its overflow found before the drop
			case v == 3 && l.kind != kindIndex:
				mergeAll()
				syncAll() // and reported in an earlier wake
			default:
				// The merge that overflows and the drop in one wake: the
				// index's compaction applied everywhere, the workers of
				// its runtime held while a pair (to a worker whose trace
				// has none, if any: its overflow is found in that wake
				// only), a barrier that runs every merge, the drop, a
				// Sync and a gate are queued, and the take made while
				// the gate holds them, before that wake's end.
				var fresh []int
				for i, p := range l.paired {
					if !p {
						fresh = append(fresh, i)
					}
				}
				if len(fresh) > 0 {
					s.must(AllowCompaction{ID: "x" + l.id, Frontier: frontier.At(uint64(l.at + 2))})
				}
				syncAll()
				release := holdWorkers(t, []*Runtime{pub})
				var waits []<-chan error
				if len(fresh) > 0 {
					i := fresh[rng.IntN(len(fresh))]
					k := keyOnWorker(i)
					s.send(l.input, 2, []int64{l.at, math.MaxInt64, k, 0})
					s.advance(l.input, 2, frontier.At(uint64(l.at+1)))
					waits = append(waits, queueBarrier(pub, func() error { return s.ctl.Sync(testCtx(t)) }))
					s.send(l.input, 2, []int64{l.at + 1, 1, k, 0})
					s.advance(l.input, 2, frontier.At(uint64(l.at+2)))
					l.at += 2
					l.paired[i], l.armed = true, true
					counts["pair in the drop's wake"]++
				}
				waits = append(waits, queueBarrier(pub, func() error { return pub.barrier(testCtx(t), mergeIndexes) }))
				armed := l.armed
				drop(l)
				waits = append(waits, queueBarrier(pub, func() error { return s.ctl.Sync(testCtx(t)) }))
				open := queueGate(t, pub)
				release()
				for _, wait := range waits {
					if err := <-wait; err != nil {
						t.Fatal(err)
					}
				}
				if armed {
					must(overflowKey(l))
					counts["overflow's wake drop"]++
				}
				synced()
				take(op)
				open()
				continue
			}
			drop(l)
			if rng.IntN(2) == 0 && l.seq <= syncedThrough {
				// A call while some worker may not have applied the drop.
				if l.calls.call(rng.IntN(workers)) && !l.refused {
					maybe(lateKey(l.id, l.seq))
					counts["call as it drops"]++
				}
			}
		case r < 71:
			mergeAll()
			syncAll()
		case r < 76:
			syncAll()
		case r < 92:
			take(op)
		default:
			promised = append(promised, m.checkErrors(t, op, s.ctl)...)
		}
	}
	for _, id := range ids {
		if l := lives[id]; l != nil {
			syncAll()
			drop(l)
		}
	}
	syncAll()
	// Every worker has applied every drop: no call reports anything.
	for _, g := range ghosts {
		for i := range workers {
			g.calls.call(i)
		}
	}
	syncAll()
	take(ops)
	m.checkAllTaken(t)
	keepsNothing(t, s.ctl)
	overflows, lates := 0, 0
	for k := range m.taken {
		switch {
		case strings.HasSuffix(k.err, "numeric overflow in diff"):
			overflows++
		case strings.Contains(k.err, "called from another goroutine"):
			lates++
		}
	}
	t.Logf("%d errors taken (%d overflows, %d off-worker calls), %d required; drawn %v", len(m.taken), overflows, lates, len(m.required), counts)
}
