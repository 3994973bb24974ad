package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/internal/mutants"
)

// spareMax is the most commands a worker's kept queue array holds: a
// burst of more (a million creates sent before a Sync) is applied from an
// array that goes with it.
const spareMax = 4096

// worker is one worker goroutine of a runtime.
type worker struct {
	rt    *Runtime
	index int
	env   *dataflow.Env
	wake  chan struct{} // capacity 1
	// goid is the id of the worker's goroutine (0 until it runs): a
	// Shutdown called on it (from a Build or a Step) waits for no worker.
	goid atomic.Uint64
	// parks counts the worker's passes into and out of its wait for a
	// wake: odd while it waits (or is about to), even while it runs. A
	// count, not a flag, so that idle can tell a worker that stayed parked
	// from one that ran and parked again in between.
	parks atomic.Uint64
	// cycleMu is held by whoever runs the worker's cycle: the worker from
	// its wake until it parks again, or the Maintenance worker that runs
	// it in its place (lend).
	cycleMu gosync.Mutex
	// reader, on a Maintenance worker under a controller, is the
	// Interactive worker of the same index, and leader on that worker is
	// this one; nil otherwise (Solo, or runtimes of different sizes). Set
	// by NewController, which may race a Shutdown that reads them.
	reader, leader atomic.Pointer[worker]
	// lending is set on a Maintenance worker while it steps (on its own
	// goroutine): a batch it publishes to its reader then sets held
	// rather than waking the reader's worker (activatePublished), and
	// after the step it runs the reader's cycle itself or wakes it.
	lending, held atomic.Bool
	// heldUpdates counts the updates of the batches published to the
	// reader in the step (activatePublished; lendMaxUpdates).
	heldUpdates atomic.Int64
	// lendSkip is how many more chances to lend are passed over, after two
	// timed lent cycles in a row ran past Options.ReaderBudget; lendBackoff
	// the last such count (0 after a cycle within the budget).
	lendSkip, lendBackoff int
	// lendOver is set after a timed lent cycle ran past the budget: the
	// next lent cycle is timed too, and the lending pauses only if it also
	// runs past, so that one cycle slowed by something else (a collection,
	// a page fault, its thread descheduled) pauses nothing.
	lendOver bool
	// lendN counts lends since the last pause (lendTimedEvery).
	lendN int
	// lends counts the reader cycles this worker ran (tests read it).
	lends atomic.Uint64
	// lent is set on an Interactive worker while its leader runs its
	// cycle; exitVia on the leader names that worker if a step of it
	// ended the leader's goroutine (goexited).
	lent    atomic.Bool
	exitVia *worker
	// applied is the number of the last controller command the worker
	// applied: no error of it or of an earlier one can come after
	// (Controller.errors forgets what it took of them).
	applied atomic.Uint64
	// parkWait, when set, is closed by the worker as it next parks, and
	// cleared: awaitPark blocks on it instead of polling.
	parkWait atomic.Pointer[chan struct{}]
	// due is set by the signal that sends a wake and cleared by the
	// worker after it has taken its wake and applied its commands, before
	// it takes its active dataflows: signals in between (their work
	// recorded before them, so taken with the rest; a command queued
	// meanwhile is looked for) send no second wake, which would run a
	// whole cycle for nothing. While it is set the worker has work it has
	// not taken (idle reads it).
	due atomic.Bool
	// beforeMaintain is set from the moment the worker takes a wake until
	// its Maintain reads the publication wakes of its traces: a reader's
	// hold move in between (an Interactive worker's, while this one
	// yields after its step) set its trace's wake before it notified, so
	// that Maintain takes it (share.Spine.TakeWake), and the notification sends no wake of its
	// own (holdsMoved), which would run a second cycle for nothing.
	beforeMaintain atomic.Bool
	// inStep is the dataflow stepActive is stepping (nil otherwise), which
	// goexited names.
	inStep *dataflow.Dataflow
	// current is the command being applied (zero while stepping), which
	// the errors the worker meets are reported against.
	current queued
	// firstPasses is set while a create runs its dataflow's first passes:
	// what they meet is a step's error (Seq 0), not the create's. They
	// read what other workers' dataflows sent, which those may have sent
	// after applying later commands, so whether an error falls in them
	// or in a later step is timing, in Solo as in the pair.
	firstPasses bool
	// labels are the worker's pprof labels (runtime=, worker=, on top of
	// Options.Labels), which its dataflows' operators add theirs to;
	// with Options.Labels set, cmdLabels and maintainLabels add
	// operator=(commands) and operator=(maintain) for the work of applying
	// commands and of Maintain, so every sample of a worker names what it
	// was doing (nil otherwise).
	labels, cmdLabels, maintainLabels context.Context

	qmu   gosync.Mutex
	queue []queued
	// spare is the queue array the worker applied last, emptied: the next
	// wake swaps it in, so a round's commands cost no allocation. One
	// grown past spareMax commands is not kept.
	spare []queued

	amu    gosync.Mutex
	active map[*dataflow.Dataflow]bool
	// stepping is the set stepActive took last, emptied: swapped back in
	// as the next active set, so an activation costs no allocation.
	stepping map[*dataflow.Dataflow]bool
	// sparse is stepActive's scratch list of the active dataflows;
	// examined counts the dataflows it has looked at and steps those it
	// has stepped (tests).
	sparse   []*dataflow.Dataflow
	examined int
	steps    int

	// dataflows has every live dataflow the controller created, rendered
	// here (non-nil) or not (nil: the other runtime renders it, or its
	// build failed); rendered counts the non-nil ones.
	dataflows map[string]*dataflow.Dataflow
	rendered  int
	// order has the dataflows this worker renders in creation order (the
	// create's sequence number), which stepActive steps them in, with a
	// nil where one was dropped; orderAt has each one's place and holes
	// counts the nils. A drop leaves a nil, and the list is packed once
	// half of it is nils, so a drop costs O(1) amortised.
	order   []*dataflow.Dataflow
	orderAt map[*dataflow.Dataflow]int
	holes   int
	// nudge is the sequence number of the last AllowCompaction the worker
	// applied in this wake (0: none): after the wake, the follower's
	// worker of the same index is woken if it has a command queued that
	// is no newer (Runtime.follower). A newer one, queued while this wake
	// ran (a driver sending the next round), waits for the wake that
	// applies this runtime's copy of it, whose nudge wakes the follower
	// then if nothing else (a publication it imports) has.
	nudge uint64
	// foreign are the indexes exported by dataflows this runtime neither
	// renders nor records as peers (queries, on a Maintenance runtime):
	// their AllowCompaction is for the other runtime.
	foreign map[string]string // index id → its dataflow
	// queryExports are the index ids that queries' creates export, on
	// every role alike (rendered or not, built or not), until dropped,
	// freed by AllowCompaction to {} or exported again: a maintained
	// dataflow may not import one (dataflow.ErrMaintainedReadsQuery), and
	// all runtimes decide that from the same commands.
	queryExports map[string]string // index id → its query
	// exporters are the live index ids every create exports, on every
	// role alike, with the dataflow exporting each, until freed by
	// AllowCompaction to {} or dropped with it: an AllowCompaction or an
	// import (Env.Exporter) of one whose create failed names that create.
	// endedImports has, for each dataflow this worker renders, the keys
	// of its imports whose index ended while it lived (importsEnded's dk
	// and rk), each reported once (ErrIndexDropped); it goes with the
	// dataflow. Both are kept from the commands alone, so Solo and the
	// pair report alike.
	exporters    map[string]string          // index id → its dataflow
	endedImports map[string]map[string]bool // dataflow id → import keys told
	// exportsOf has every live create's Desc.Exports, on every role
	// alike: the only ids foreign, queryExports and exporters can name
	// the dataflow for, so its drop looks at these and nothing else.
	exportsOf map[string][]string
	// readers, rootReaders and writerReaders file the imports of the
	// dataflows this worker renders by the index imported, by the
	// Maintained index read through it when that is another
	// (Dataflow.ImportRoot) and by the dataflow writing its traces
	// (Dataflow.ImportWriter), from the create until the drop: what
	// importsEnded and writerDropped tell are those filed under what
	// ends.
	readers, rootReaders, writerReaders importsBy
	// dropExamined counts the entries the drops and frees look at
	// (tests): exports, imports filed, the ended ids set and looked up
	// (importsEnded) and dataflows in order.
	dropExamined int
}

// importRef is an import of a dataflow a worker renders:
// df.Imports()[at], which is fixed once its Build has returned.
type importRef struct {
	df *dataflow.Dataflow
	at int
}

func (r importRef) id() string { return r.df.Imports()[r.at] }

// importsBy files imports by a key (an index id, a dataflow id): adding
// and removing one cost what it does, whatever else is filed.
type importsBy map[string]map[importRef]struct{}

func (m importsBy) add(key string, r importRef) {
	set := m[key]
	if set == nil {
		set = map[importRef]struct{}{}
		m[key] = set
	}
	set[r] = struct{}{}
}

func (m importsBy) remove(key string, r importRef) {
	set := m[key]
	delete(set, r)
	if len(set) == 0 {
		delete(m, key)
	}
}

// collect appends the imports filed under key to refs.
func (m importsBy) collect(refs []importRef, key string) []importRef {
	for r := range m[key] {
		refs = append(refs, r)
	}
	return refs
}

// inOrder sorts refs as the dataflows were created (the create's sequence
// number, which is w.order's order) and each dataflow's imports as
// Dataflow.Imports lists them, and removes the repeats.
func inOrder(refs []importRef) []importRef {
	slices.SortFunc(refs, func(a, b importRef) int {
		return cmp.Or(cmp.Compare(a.df.Incarnation(), b.df.Incarnation()), cmp.Compare(a.at, b.at))
	})
	return slices.Compact(refs)
}

// fileImports files (add) or unfiles (remove) the imports of df.
func (w *worker) fileImports(df *dataflow.Dataflow, file func(importsBy, string, importRef)) {
	for at, id := range df.Imports() {
		r := importRef{df, at}
		file(w.readers, id, r)
		if root := df.ImportRoot(id); root != "" && root != id {
			file(w.rootReaders, root, r)
		}
		if wr := df.ImportWriter(id); wr != "" {
			file(w.writerReaders, wr, r)
		}
	}
}

// told reports whether dataflow df was told of the end of its import key.
func (w *worker) told(df, key string) bool { return w.endedImports[df][key] }

// tell records that dataflow df was told of the end of its import keys.
func (w *worker) tell(df string, keys ...string) {
	m := w.endedImports[df]
	if m == nil {
		m = map[string]bool{}
		w.endedImports[df] = m
	}
	for _, k := range keys {
		m[k] = true
	}
}

func newWorker(r *Runtime, i int) *worker {
	w := &worker{rt: r, index: i, wake: make(chan struct{}, 1), active: map[*dataflow.Dataflow]bool{}, stepping: map[*dataflow.Dataflow]bool{}, dataflows: map[string]*dataflow.Dataflow{}, orderAt: map[*dataflow.Dataflow]int{}, foreign: map[string]string{}, queryExports: map[string]string{}, exporters: map[string]string{}, endedImports: map[string]map[string]bool{}, exportsOf: map[string][]string{}, readers: importsBy{}, rootReaders: importsBy{}, writerReaders: importsBy{}}
	var reg *share.Registry
	if r.opts.Role == Maintenance {
		reg = r.opts.Registries[i]
	}
	w.env = &dataflow.Env{
		Worker:            i,
		Peers:             r.opts.Workers,
		Manager:           dataflow.NewIndexManager(),
		Inputs:            dataflow.NewInputs(i, r.opts.Workers, w.activate),
		Hub:               r.hub,
		Registry:          reg,
		Activate:          w.activate,
		ActivatePublished: w.activatePublished,
		Wake:              w.holdsMoved,
		QueryExport: func(id string) (string, bool) {
			q, ok := w.queryExports[id]
			return q, ok
		},
		Exporter: func(id string) (string, bool) {
			df, ok := w.exporters[id]
			return df, ok
		},
		Spine:       r.opts.Spine,
		OnWorker:    r.buildCaller,
		Stop:        r.stop,
		Stopper:     r.stopper,
		Stopping:    &r.stopped,
		OnItsWorker: func() bool { g := goid(); return g == w.goid.Load() || w.lentTo(g) },
		// Off the worker's goroutine, a step's error of the dataflow's
		// incarnation, which the caller names: the command the worker
		// applies, and its dataflows, are its own to read.
		FailElsewhere: func(df string, inc uint64, err error) {
			r.record(&CommandError{Err: err, df: df, inc: inc})
		},
		Fail: func(df string, err error) {
			if df != "" && !strings.HasPrefix(err.Error(), "dataflow "+df+":") {
				err = fmt.Errorf("dataflow %s: %w", df, err)
			}
			seq, cmd := w.current.seq, w.current.cmd
			if seq == 0 || w.firstPasses {
				// A step's: a barrier (Sync, Stats) steps too, and is
				// no command of the controller's; a create's first
				// passes are steps. It is told by the incarnation of
				// the dataflow that met it, which the controller keeps
				// what it took of (Controller.TakeErrors).
				var inc uint64
				if w.firstPasses {
					inc = seq
				} else if d := w.dataflows[df]; d != nil {
					inc = d.Incarnation()
				}
				r.record(&CommandError{Err: err, df: df, inc: inc})
				return
			}
			r.fail(seq, cmd, err)
		},
	}
	// A dataflow reads only an input the controller declared
	// (CreateInput), on every worker of every role alike.
	w.env.Inputs.RequireDeclared()
	base := r.opts.Labels
	if base == nil {
		base = context.Background()
	}
	w.labels = pprof.WithLabels(base, pprof.Labels("runtime", r.opts.Role.String(), "worker", strconv.Itoa(i)))
	w.env.Labels = w.labels
	if r.opts.Labels != nil {
		w.cmdLabels = pprof.WithLabels(w.labels, pprof.Labels("operator", "(commands)"))
		w.maintainLabels = pprof.WithLabels(w.labels, pprof.Labels("operator", "(maintain)"))
		w.env.LabelSteps = true
	}
	return w
}

func (w *worker) signal() {
	if w.due.Swap(true) {
		return // a wake is on its way and the worker has not taken it
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// holdsMoved is the notification of a reader's hold move on a trace this
// worker publishes (share.Spine.SetNotify), called after the move set the
// trace's wake: a worker that has not yet reached its Maintain's reading
// of the wakes reads it there, so only a worker past it is signalled.
func (w *worker) holdsMoved() {
	if w.beforeMaintain.Load() {
		return
	}
	w.signal()
}

// activate marks df as having work; safe from any goroutine.
func (w *worker) activate(df *dataflow.Dataflow) {
	w.amu.Lock()
	w.active[df] = true
	w.amu.Unlock()
	w.signal()
}

// activatePublished is Env.ActivatePublished: df imports a trace whose
// publisher inserted a batch, on the publisher's goroutine. When that is
// this worker's leader in its step (lending) and this worker is parked
// (its parks count odd: a worker in its cycle may itself publish, as a
// re-export does), the activation is recorded and the wake held for the
// leader, which runs the cycle after its step or sends the wake (lend);
// with a negative Options.ReaderBudget it is never held.
func (w *worker) activatePublished(df *dataflow.Dataflow, updates int) {
	l := w.leader.Load()
	if l == nil || !l.lending.Load() || w.parks.Load()%2 == 0 || l.rt.opts.ReaderBudget < 0 {
		w.activate(df)
		return
	}
	l.heldUpdates.Add(int64(updates))
	w.amu.Lock()
	w.active[df] = true
	w.amu.Unlock()
	if !w.due.Swap(true) {
		l.held.Store(true)
	}
}

// lend runs the reader's cycle on this goroutine, after a step that held
// its wake (activatePublished) and published it updates updates, if they
// are at most lendMaxUpdates, the reader is parked with no command queued
// but compactions and the budget allows (Options.ReaderBudget); otherwise
// it sends the reader the wake it held. It reports whether it ran the
// cycle.
func (w *worker) lend(updates int64) bool {
	r := w.reader.Load()
	if r == nil {
		return false
	}
	if updates > lendMaxUpdates {
		r.wakeHeld()
		return false
	}
	if w.lendSkip > 0 || !r.cycleMu.TryLock() {
		if w.lendSkip > 0 {
			w.lendSkip--
		}
		r.wakeHeld()
		return false
	}
	if r.parks.Load()%2 == 0 || r.rt.stopping() {
		r.cycleMu.Unlock()
		r.wakeHeld()
		return false
	}
	// The commands are taken here, under the same lock as the look at
	// them: one sent from another goroutine between a look and a later
	// take (a Maintained create, whose verdict the reader waits for from
	// this very worker) would run here.
	cmds, ok := r.takeQueue(true)
	if !ok {
		r.cycleMu.Unlock()
		r.wakeHeld()
		return false
	}
	// The first lend and every eighth after it are timed, and the one
	// after a timed lend over the budget: a clock read costs 50-180 ns on
	// a virtual machine, a tenth of a lent cycle of one update.
	w.lendN++
	if w.lendN%lendTimedEvery != 1 && !w.lendOver {
		w.runCycleOf(r, cmds)
		return true
	}
	start := time.Now()
	w.runCycleOf(r, cmds)
	switch d := time.Since(start); {
	case d <= w.rt.opts.ReaderBudget:
		w.lendBackoff, w.lendOver = 0, false
	case !w.lendOver:
		w.lendOver = true
	default:
		w.lendOver = false
		w.lendBackoff = min(max(2*w.lendBackoff, 64), 1<<16)
		w.lendSkip = w.lendBackoff
		w.lendN = 0 // the first after the pause is timed
		if mutants.Enabled && mutants.On(mutants.LentWakeNeverPauses) {
			w.lendSkip = 0
		}
	}
	return true
}

// lendMaxUpdates is the most updates a step may publish to its reader for
// the reader's wake to run on the publisher's worker. The wake saved is a
// fixed cost (the hand-off to the reader's goroutine and, with a core
// idle, the wake of that core's thread); what the lending adds is the
// reader's steps in series with the publisher's Maintain before the caller
// sees the answer. In BenchmarkSteadyRatio on a 2-vCPU host, lending every
// round took the round until parked from 1.61 to 1.41 of the direct one at
// 10 updates, 1.34 to 1.23 at 100 and 1.21 to 1.14 at 300; measured again
// after later changes to the engine, from 1.10–1.11 to 1.06–1.07 at 1,000
// (the answer 1.07–1.08 either way), 1.08 to 1.04 at 2,000 and 1.06 to 1.03
// at 4,000, and even at 10,000. The bound keeps the lent wakes of a query
// that reads every update within DefaultReaderBudget on such a host (9.7
// µs at the median at 1,000 updates, 21 at the 99th percentile; 15 and 35
// at 2,000), so that the budget is left to stop slower queries.
const lendMaxUpdates = 1024

// lendTimedEvery is how often a lent cycle is timed against the budget: the
// first, then one in lendTimedEvery.
const lendTimedEvery = 8

// runCycleOf runs r's cycle of the commands cmds, taken from its queue,
// under r's labels, r's cycleMu held and let go here. If a step ends the
// goroutine, goexited lets it go once it has read what r was running and
// stopped the runtimes: r's own goroutine, woken meanwhile (by a command
// sent in the step), would otherwise run a cycle of its own, writing what
// goexited reads and stepping the dataflow whose step ended, where in Solo
// that worker runs nothing more.
func (w *worker) runCycleOf(r *worker, cmds []queued) {
	done := false
	defer func() {
		r.lent.Store(false)
		if !done {
			w.exitVia = r
		} else {
			r.cycleMu.Unlock()
		}
		pprof.SetGoroutineLabels(w.labels)
	}()
	r.parks.Add(1) // running
	r.lent.Store(true)
	w.lends.Add(1)
	pprof.SetGoroutineLabels(r.labels)
	r.cycle(cmds)
	r.park()
	done = true
}

// wakeHeld sends the wake a leader held for this worker (its due already
// set).
func (w *worker) wakeHeld() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// takeQueue takes the commands queued for the worker, for a cycle to
// apply, and sets beforeMaintain first (see cycle). With compactionsOnly
// (lend) it takes them only if every one is an AllowCompaction (its
// leader's copy of a round's; its application reads no code of the
// user's), so that the cycle may run on the leader's goroutine: a create
// runs a Build (and a Maintained one waits for the leader's verdict), a
// drop operators' Shutdown, a barrier waits for its caller. Otherwise it
// takes nothing and reports false, and the caller wakes the worker, whose
// own cycle then reads what the clearing of beforeMaintain left.
func (w *worker) takeQueue(compactionsOnly bool) ([]queued, bool) {
	w.beforeMaintain.Store(true)
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if compactionsOnly {
		for _, q := range w.queue {
			if _, ok := q.cmd.(AllowCompaction); !ok {
				w.beforeMaintain.Store(false)
				return nil, false
			}
		}
	}
	cmds := w.queue
	w.queue = w.spare[:0]
	w.spare = nil
	return cmds, true
}

// lentTo reports whether the worker's cycle runs on the goroutine of id
// self, its leader's (lend).
func (w *worker) lentTo(self uint64) bool {
	l := w.leader.Load()
	return l != nil && w.lent.Load() && l.goid.Load() == self
}

func (w *worker) enqueue(q queued) {
	w.qmu.Lock()
	w.queue = append(w.queue, q)
	w.qmu.Unlock()
	w.signal()
}

// unqueue takes the barrier of call b out of the worker's queue, if the
// worker has not taken it yet (Runtime.guardedBarrier, once its caller has
// stopped waiting). It looks from the end, where a barrier just abandoned
// mostly is, and costs at most the commands queued: a stuck worker's queue
// then holds none of the barriers its callers gave up on.
func (w *worker) unqueue(b *barrierState) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	for i := len(w.queue) - 1; i >= 0; i-- {
		if c, ok := w.queue[i].cmd.(barrier); ok && c.state == b {
			w.queue = slices.Delete(w.queue, i, i+1)
			return
		}
	}
}

// run is the worker loop: park until woken, apply commands in order, step
// the dataflows that have work, then let local indexes merge. The worker's
// goroutine carries the pprof labels runtime=<role> and worker=<i>, so a CPU
// profile splits by runtime (go tool pprof -tagfocus runtime=maintenance).
func (w *worker) run() {
	w.goid.Store(goid())
	defer w.rt.wg.Done()
	returned := false
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				// A panic no dataflow recovered (an internal fault, an
				// invariant of -tags invariants) ends the process, and
				// nothing of the worker's is touched on the way: it may
				// have left a lock held that the shutdown would take (a
				// registry's, in the middle of a publication), and the
				// process then hung where it was to end with the panic.
				panic(p)
			}
			w.goexited()
		}
		w.exit()
	}()
	w.loop()
	returned = true
}

// goexited is run as the worker's goroutine ends other than by returning
// from its loop or by a panic: a Build or a step called runtime.Goexit
// (testing.T.FailNow off the test's goroutine does). The worker is gone with
// what it was applying half done, and the runtime's other workers would
// wait for it (at a create's agreement, at every barrier): it records the
// error, naming the dataflow whose Build or step it was running (not the
// role or the worker: Solo and the pair report it alike, once), and shuts
// the runtime down (the pair's other runtime with it), so that Sync and
// Send return ErrShutdown instead of waiting forever. A panic in an
// operator's Step or Shutdown never gets here: the dataflow recovers it as
// its error (dataflow.ErrOperatorPanicked). Any other panic goes on to end
// the process, and runs neither this nor the worker's exit (run).
func (w *worker) goexited() {
	if r := w.exitVia; r != nil {
		// A step of the reader's cycle this worker ran (lend): the
		// reader's error, as its own goroutine would have recorded it.
		// Its cycleMu, still held (runCycleOf), is let go once the
		// runtimes are stopped: its goroutine then only exits.
		defer r.cycleMu.Unlock()
		w = r
	}
	var err error
	if df := w.inStep; df != nil {
		// Stepping, in a wake or for a barrier that steps first.
		err = fmt.Errorf("dataflow %s: a step ended a worker's goroutine: %w", df.ID(), ErrWorkerExited)
	} else if c, ok := w.current.cmd.(CreateDataflow); ok {
		err = fmt.Errorf("dataflow %s: its Build or first steps ended a worker's goroutine: %w", c.Desc.ID, ErrWorkerExited)
	} else {
		err = fmt.Errorf("runtime: applying %T ended a worker's goroutine: %w", w.current.cmd, ErrWorkerExited)
	}
	seq, cmd := w.current.seq, w.current.cmd
	if seq == 0 {
		cmd = nil // no command's (a step's, in a wake or a barrier), as an overflow's
	}
	w.rt.fail(seq, cmd, err)
	w.rt.Shutdown() // on this worker: stops the runtimes, waits for none
}

// loop parks until woken, applies commands, steps and maintains, until the
// runtime stops. A wake's work (cycle) runs under cycleMu, which the
// worker holds from its wake until it has parked: a worker of the
// Maintenance runtime may run this worker's cycle in its place while it
// waits (lend), and the lock keeps the two from running it at once.
func (w *worker) loop() {
	// Held whenever the goroutine runs, let go only while it waits for a
	// wake, and kept when it ends (its shutdown runs under it): a leader
	// never runs the cycle of a worker that is paused, running or gone.
	w.cycleMu.Lock()
	pprof.SetGoroutineLabels(w.labels)
	select {
	case <-w.rt.stop:
		return
	case <-w.rt.resume:
	}
	for {
		w.park()
		// One channel, not a select with the runtime's stop (which locks
		// and queues on both at every park and wake): Shutdown closes stop
		// and then sends every worker a token, and the worker looks at
		// stop before it parks and after it wakes.
		if w.rt.stopping() {
			return
		}
		w.cycleMu.Unlock()
		<-w.wake
		w.cycleMu.Lock() // after a cycle its leader runs (lend), if one does
		if w.rt.stopping() {
			return
		}
		w.parks.Add(1)
		cmds, _ := w.takeQueue(false)
		if !w.cycle(cmds) {
			return
		}
	}
}

// park marks the worker parked (its parks count odd) and wakes a waiter
// for that (awaitPark). Called under cycleMu, by the worker as it is about
// to wait for a wake, and by a Maintenance worker that ran its cycle
// (lend): under the lock the count is odd whenever the worker does not run
// a cycle, whoever ran the last.
func (w *worker) park() {
	w.parks.Add(1)
	// A waiter for this parking is woken only if the worker will
	// block: with a wake due (its own, while merges remain) it takes
	// the token at once, and the waiter would find it busy again.
	if p := w.parkWait.Load(); p != nil && !w.due.Load() && w.parkWait.CompareAndSwap(p, nil) {
		close(*p)
	}
}

// cycle is one wake's work: apply the commands taken from the queue
// (takeQueue), step the active dataflows, let the traces merge. It returns
// false once the runtime is stopping (the worker then exits).
func (w *worker) cycle(cmds []queued) bool {
	// Hold changes of this wake (its commands' compactions, its steps'
	// frontiers) are applied once, by the Maintain below.
	w.env.Manager.Defer()
	for i, q := range cmds {
		if w.rt.stopping() {
			return false // a stopping worker applies nothing it would discard
		}
		// Again for each: a create's first passes run under its
		// operators' labels and leave the worker's.
		w.setLabels(w.cmdLabels)
		w.current = q
		w.apply(q)
		w.current = queued{}
		if q.seq > 0 {
			w.applied.Store(q.seq) // its errors are recorded
		}
		cmds[i] = queued{}
	}
	// Every entry is cleared (nothing applied stays reachable); the
	// array is the next wake's queue, unless a burst of commands grew
	// it past spareMax: then it goes, so that one burst does not
	// keep its memory for the runtime's life.
	if cap(cmds) <= spareMax {
		w.spare = cmds[:0]
	}
	if len(cmds) > 0 {
		w.setLabels(w.labels)
	}
	// due is cleared after the commands, before the active set is
	// taken. The commands' own activations (an input's rows, its
	// frontier) signalled while it was set, so they sent no wake that
	// would run a second cycle for nothing; stepActive takes them. A
	// command queued meanwhile (its signal coalesced too) is looked
	// for after the clearing and gets a wake. A signal after the
	// clearing sends a wake of its own; one before it recorded its
	// activation first, so stepActive takes that too.
	w.due.Store(false)
	if w.hasQueued() {
		w.signal()
	}
	lead := w.reader.Load() != nil
	if lead {
		w.lending.Store(true)
	}
	w.stepActive()
	lent := false
	if lead {
		w.lending.Store(false)
		if n := w.heldUpdates.Swap(0); w.held.Swap(false) {
			lent = w.lend(n)
		}
	}
	if w.rt.stopping() {
		return false // Shutdown, called meanwhile (by a step, say): nothing more runs
	}
	// On the Maintenance runtime, what the step readied — the
	// Interactive worker reading the batch it published, when it did
	// not run here (lend) — runs now, on this core, before the merge
	// work below: the reader's work is the query's answer, and it reads
	// the batch while it is in this core's cache, without waiting for an
	// idle core to wake and steal it. With nothing else runnable this
	// returns at once. Elsewhere
	// what a step readies is a caller waiting on a probe, which has
	// nothing to do but wait for the worker: the worker yields to it
	// only when a merge is in progress (the caller's answer does not
	// wait for merge work), and otherwise runs its short Maintain and
	// parks. Yielding every time put the worker on the global run
	// queue, whence the idle core woken for the caller took it: a
	// Solo round of one update, timed until its worker parks, took
	// about 20% longer (BenchmarkSteadyRatio's direct side).
	if !lent && (w.rt.opts.Role == Maintenance && w.env.Manager.Tracked() > 0 || w.env.Manager.Merging()) {
		runtime.Gosched()
	}
	// Cleared before Maintain reads the wakes: a hold move notified
	// after this signals (holdsMoved), one before it set its wake
	// first, which Maintain takes.
	w.beforeMaintain.Store(false)
	w.setLabels(w.maintainLabels)
	more := w.env.Manager.Maintain(w.rt.opts.Effort)
	w.setLabels(w.labels)
	w.recordOverflows(w.env.Manager.Overflows())
	if more {
		w.signal() // merge work remains: come back after other work
	}
	w.nudgeFollower()
	return true
}

// recordOverflows records merge overflow errors (IndexManager.Overflows,
// DroppedOverflows). Each is a step's error of the arranging dataflow's
// incarnation, which every worker's merge of the arrangement may find:
// the controller keeps what it took of it until the drop
// (Controller.TakeErrors), as of an error its steps met.
func (w *worker) recordOverflows(errs []error) {
	for _, err := range errs {
		e := &CommandError{Err: err}
		var mo *dataflow.MergeOverflowError
		if errors.As(err, &mo) {
			e.df, e.inc = mo.Dataflow, mo.Incarnation
		}
		w.rt.record(e)
	}
}

// goid returns the id of the calling goroutine, which runtime.Stack
// names first ("goroutine 18 [running]:"); goroutine ids are never reused.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = b[min(len(b), len("goroutine ")):]
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// setLabels makes ctx's pprof labels the worker goroutine's, when the
// runtime labels its work (Options.Labels; cmdLabels is nil otherwise).
func (w *worker) setLabels(ctx context.Context) {
	if w.cmdLabels != nil {
		pprof.SetGoroutineLabels(ctx)
	}
}

// setDataflowLabel adds dataflow=id to the worker's (commands) labels for
// the command it applies, a create or drop of that dataflow, when the
// runtime labels its work; the next command, or the wake's end, sets the
// worker's labels again.
func (w *worker) setDataflowLabel(id string) {
	if w.cmdLabels != nil {
		pprof.SetGoroutineLabels(pprof.WithLabels(w.cmdLabels, pprof.Labels("dataflow", id)))
	}
}

// idle reports whether the worker waits for a wake with none due and no
// command queued (see idleCount).
func (w *worker) idle() bool {
	_, ok := w.idleCount()
	return ok
}

// idleCount reports whether the worker is idle and, if so, its parks count
// then. Idle means: at one instant between its two reads of parks (equal,
// odd), the worker was parked with no wake due and no command queued; a
// worker that woke, ran and parked again in between reads busy, as does
// one woken but not yet running. It is exact but for a signal in flight:
// a signal records its work (a command, an activation) before it sets due,
// so a worker can read idle between the two; a signalling worker finishes
// its signal before it parks. A later read that finds the worker idle at
// the same count means it stayed idle in between (awaitIdle). A worker
// that parks only when its Maintain reports no merge in progress is then
// quiescent.
func (w *worker) idleCount() (uint64, bool) {
	n := w.parks.Load()
	if n%2 == 0 || w.due.Load() || len(w.wake) > 0 {
		return 0, false
	}
	w.qmu.Lock()
	queued := len(w.queue)
	w.qmu.Unlock()
	return n, queued == 0 && w.parks.Load() == n
}

// awaitPark returns true once the worker is idle (see idle) or has parked
// again since the call, and false if done closes first. The worker closes
// the channel it leaves in parkWait as it parks, so a caller waiting for a
// worker to finish blocks instead of polling. One caller at a time: a
// second call replaces the first's channel, and the first then waits for
// done.
func (w *worker) awaitPark(done <-chan struct{}) bool {
	ch := make(chan struct{})
	w.parkWait.Store(&ch)
	// Stored before idle reads parks, and the worker adds to parks before
	// it loads parkWait: a worker parking now is seen by one or the other.
	if w.idle() {
		w.parkWait.CompareAndSwap(&ch, nil) // no close left for its next park
		return true
	}
	select {
	case <-ch:
		return true
	case <-done:
		return false
	}
}

// hasQueued reports whether the worker has commands it has not taken.
func (w *worker) hasQueued() bool {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return len(w.queue) > 0
}

// nudgeFollower wakes the follower's worker of the same index after a wake
// that applied an AllowCompaction, if that worker has not taken its copy
// (see nudge).
func (w *worker) nudgeFollower() {
	if w.nudge == 0 {
		return
	}
	if f := w.rt.follower; f != nil {
		f.workers[w.index].wakeIfQueuedThrough(w.nudge)
	}
	w.nudge = 0
}

// wakeIfQueuedThrough wakes the worker if it has a command it has not
// taken of sequence number seq or older.
func (w *worker) wakeIfQueuedThrough(seq uint64) {
	w.qmu.Lock()
	due := len(w.queue) > 0 && w.queue[0].seq <= seq
	w.qmu.Unlock()
	if due {
		w.signal()
	}
}

// stepActive steps every active dataflow in creation order until none has
// work left, for at most roundsPerWake rounds (a dataflow still active
// then has signalled the next wake). Once Shutdown is called (by a step,
// say, which returns at once) a dataflow's pass steps no operator
// (dataflow.Env.Stopping), so nothing moves and nothing is activated.
func (w *worker) stepActive() {
	for range roundsPerWake {
		w.amu.Lock()
		if len(w.active) == 0 {
			w.amu.Unlock()
			return
		}
		act := w.active
		w.active = w.stepping
		w.stepping = nil
		w.amu.Unlock()
		if len(w.order) > sparseMin && len(act)*8 < len(w.order) {
			// Few of many active: their own list, in the order of
			// w.order (creation: the create's sequence number), rather
			// than a lookup for every dataflow the worker holds (its
			// length counts the places of dropped ones too, which the
			// pass below goes over). A dataflow activated after its
			// drop (by another worker's exchange or a reader, which
			// has yet to apply the drop) has no place in w.order: it is
			// left out, as the pass below never meets it.
			w.sparse = w.sparse[:0]
			for df := range act {
				if _, live := w.orderAt[df]; live {
					w.sparse = append(w.sparse, df)
				}
			}
			slices.SortFunc(w.sparse, func(a, b *dataflow.Dataflow) int { return cmp.Compare(a.Incarnation(), b.Incarnation()) })
			for _, df := range w.sparse {
				w.examined++
				w.steps++
				w.inStep = df
				if df.Step() {
					w.activate(df)
				}
			}
			clear(w.sparse)
		} else {
			for _, df := range w.order {
				if df == nil {
					continue // dropped
				}
				w.examined++
				if act[df] {
					w.steps++
					w.inStep = df
					if df.Step() {
						w.activate(df)
					}
				}
			}
		}
		w.inStep = nil
		clear(act)
		w.stepping = act
	}
}

// sparseMin is the number of dataflows past which a worker steps the
// active ones from a list of their own when they are under an eighth of
// all (stepActive): a wake then costs what its active dataflows do, not a
// map lookup for each dataflow the worker holds.
const sparseMin = 64

func (w *worker) apply(q queued) {
	role := w.rt.opts.Role
	switch c := q.cmd.(type) {
	case CreateInput:
		if err := w.env.Inputs.DeclareWith(c.Name, c.Arity, dataflow.InputOptions{NoHistory: c.NoHistory}); err != nil {
			w.env.Fail("", err)
		}
	case CreateDataflow:
		// Its Build and what it records run under its dataflow's label,
		// as a drop's work does: one label set a create or drop, when
		// the runtime labels its work. The other commands (an input's
		// rows, a barrier) and a Maintain pass are of no one dataflow.
		w.setDataflowLabel(c.Desc.ID)
		w.create(c.Desc, q.seq)
	case AllowCompaction:
		w.nudge = q.seq
		// The exporter is looked up where it is needed: a free, or an
		// error below (an AllowCompaction is sent every round; the
		// lookup is a string hash).
		exporter := ""
		if c.Frontier.IsEmpty() {
			exporter = w.exporters[c.ID]
			delete(w.queryExports, c.ID) // freed
			if exporter != "" {
				delete(w.exporters, c.ID)
				w.importsEnded(q, []string{c.ID}, "is freed (AllowCompaction to {})", true)
			}
		}
		if w.foreign[c.ID] != "" {
			return
		}
		if err := w.env.Manager.AllowCompaction(c.ID, c.Frontier); err != nil {
			if !c.Frontier.IsEmpty() {
				exporter = w.exporters[c.ID]
			}
			if exporter != "" {
				// The controller accepts only a live export's id, and
				// its exporter is live: the index is unknown here
				// because that create failed (its Build, or for a peer
				// the publisher's, which abandoned it). Named so, alike
				// on every role.
				err = fmt.Errorf("runtime: allow compaction of %q: the create of dataflow %q, which exports it, failed", c.ID, exporter)
			}
			w.env.Fail("", err)
		}
	case DropDataflow:
		w.setDataflowLabel(c.ID)
		df, ok := w.dataflows[c.ID]
		if !ok {
			w.env.Fail("", fmt.Errorf("runtime: drop of unknown dataflow %q", c.ID))
			return
		}
		delete(w.dataflows, c.ID)
		// Every id a map below names the dataflow for is one its create
		// exports (exportsOf).
		exports := w.exportsOf[c.ID]
		delete(w.exportsOf, c.ID)
		delete(w.endedImports, c.ID)
		var ended []string
		for _, id := range exports {
			w.dropExamined++
			if w.foreign[id] == c.ID {
				delete(w.foreign, id)
			}
			if w.queryExports[id] == c.ID {
				delete(w.queryExports, id)
			}
			if w.exporters[id] == c.ID {
				ended = append(ended, id)
				delete(w.exporters, id)
			}
		}
		slices.Sort(ended)
		w.importsEnded(q, ended, fmt.Sprintf("goes with dataflow %s", c.ID), false)
		w.writerDropped(q, c.ID)
		if df == nil {
			w.env.Manager.DropOwned(c.ID) // peers recorded for it
			return
		}
		w.fileImports(df, importsBy.remove)
		w.rendered--
		df.Drop()
		// A merge of its arrangements that overflowed before the drop,
		// in this wake, is reported as its step's errors are, before
		// the drop counts as applied: after it, none of its errors is.
		w.recordOverflows(w.env.Manager.DroppedOverflows())
		w.unorder(df)
		w.amu.Lock()
		delete(w.active, df)
		w.amu.Unlock()
	case Input:
		if role != Interactive { // the controller sends none; a direct send is ignored
			// Each worker keeps its share of the whole chunk, all at once:
			// no one splits it for the others first (Inputs.Send).
			if err := w.env.Inputs.Send(c.Name, c.Chunk); err != nil {
				w.env.Fail("", err)
			}
		}
	case AdvanceInput:
		if role != Interactive {
			if err := w.env.Inputs.Advance(c.Name, c.Frontier); err != nil {
				w.env.Fail("", err)
			}
		}
	case AllowInputCompaction:
		if role != Interactive {
			if err := w.env.Inputs.AllowCompaction(c.Name, c.Frontier); err != nil {
				w.env.Fail("", err)
			}
		}
	case DropInput:
		// Every role, as CreateInput: each declares the input.
		if err := w.env.Inputs.Drop(c.Name); err != nil {
			w.env.Fail("", err)
		}
	case barrier:
		w.stepActive()
		// Each step set the worker's own labels back: what the barrier
		// does next (the hold changes, its function: Stats reading the
		// traces) is the applying of a command again.
		w.setLabels(w.cmdLabels)
		w.env.Manager.Apply() // the hold changes of the commands before it
		c.done(w)
	}
}

// importsEnded reports, as errors of command q, every dataflow this
// worker renders that reads one of the indexes q ends, or a query's
// re-export of one (Dataflow.ImportRoot), and has not been told of it yet
// (ErrIndexDropped); freed says q is an AllowCompaction to {}, which
// leaves the traces written. (A dataflow q drops exports none of the
// indexes it imports: an id is exported only while free.) What the index has
// published or the dataflow read is not consulted: the errors follow from
// the commands alone, alike on every role.
func (w *worker) importsEnded(q queued, ended []string, how string, freed bool) {
	if len(ended) == 0 {
		return
	}
	// Only an import filed under an ended id, as the index imported or
	// the one read through it, can be told; whether an id ended is one
	// lookup (a drop ends every id its dataflow exports, each of which
	// may have many readers).
	var refs []importRef
	for _, id := range ended {
		refs = w.readers.collect(refs, id)
		refs = w.rootReaders.collect(refs, id)
	}
	isEnded := func(id string) bool {
		w.dropExamined++
		return id == ended[0]
	}
	if len(ended) > 1 {
		set := make(map[string]struct{}, len(ended))
		for _, id := range ended {
			w.dropExamined++
			set[id] = struct{}{}
		}
		isEnded = func(id string) bool {
			w.dropExamined++
			_, ok := set[id]
			return ok
		}
	}
	for _, r := range inOrder(refs) {
		w.dropExamined++
		df, id := r.df, r.id()
		// Told once for the index it imported (dk), and once for
		// the Maintained index it reads through that import (rk):
		// a dataflow reading two aliases of one index is told once
		// for each.
		dk, rk := id, "\x00root of "+id
		root := df.ImportRoot(id)
		switch {
		case isEnded(id) && !w.told(df.ID(), dk):
			w.tell(df.ID(), dk)
			// A re-export's traces go on for its source: a query's
			// re-export ends for no reader (they read its root). A
			// Maintained reader reads the traces, in Solo as on the
			// Maintenance runtime, and keeps them written
			// (Context.keepAlive): an index freed, or a Maintained
			// re-export ended, ends nothing for it until their
			// writer goes (writerDropped). A query reading a
			// Maintained index or re-export stops (the pair's
			// publication ends; Solo ends its import,
			// IndexManager.Drop).
			if re, maintained := w.env.Manager.Reexport(id); re && !maintained || df.Maintained() && (re || freed) {
				continue
			}
			w.tell(df.ID(), rk)
			w.importEnded(q, df, id, fmt.Errorf("dataflow %s: index %q, which it imports, %s: %w", df.ID(), id, how, ErrIndexDropped))
		case root != id && isEnded(root) && !w.told(df.ID(), rk):
			// A query's re-export of an index that ends, gone or
			// not: its query readers stop with the index (they read
			// its publication in the pair; Solo ends their imports).
			w.tell(df.ID(), rk, dk)
			w.importEnded(q, df, id, fmt.Errorf("dataflow %s: index %q, which it imports, ends with the index it re-exports, which %s: %w", df.ID(), id, how, ErrIndexDropped))
		}
	}
}

// importEnded reports err, the end of index id that dataflow df imports,
// as an error of command q, and gives it to df's imports of id
// (dataflow.Dataflow.EndImport): once they have read what the index
// published, a wait downstream of them for a time they never pass
// returns err. The import ends on every role alike (its publication in
// the pair, the import itself in Solo), so the waits end alike.
func (w *worker) importEnded(q queued, df *dataflow.Dataflow, id string, err error) {
	w.rt.fail(q.seq, q.cmd, err)
	if df.EndImport(id, err) {
		w.activate(df)
	}
}

// writerDropped reports, as errors of command q, every dataflow this worker
// renders that reads the traces dataflow wr writes (share.Bundle.Writer)
// and has not been told of that import's end: dropping the writer stops
// the traces, and the reader's frontier with them. Readers of wr's live
// exports were told by importsEnded (rk set); this tells those that read
// on past an end that left the traces written — a Maintained reader of an
// index freed before (dataflow.Context.keepAlive), any reader of a
// re-export, Maintained or a query's, whose source's exporter is wr, or
// that read on past the re-export's own end (ErrIndexDropped). From then
// on no dataflow may import an index reading those traces
// (IndexManager.WriterDropped). As importsEnded, it follows from the
// commands alone, alike on every role: the pair's queries read the
// re-export's publication, whose traces are the same.
func (w *worker) writerDropped(q queued, wr string) {
	w.env.Manager.WriterDropped(wr)
	for _, r := range inOrder(w.writerReaders.collect(nil, wr)) {
		w.dropExamined++
		df, id := r.df, r.id()
		dk, rk := id, "\x00root of "+id
		// rk is set once the dataflow is told of the import's end;
		// dk alone marks an end it read past (a re-export's whose
		// traces went on), which the writer's drop now ends.
		if w.told(df.ID(), rk) {
			continue
		}
		w.tell(df.ID(), dk, rk)
		w.importEnded(q, df, id, fmt.Errorf("dataflow %s: index %q, which it imports, reads traces whose writer, dataflow %s, is dropped: %w", df.ID(), id, wr, ErrIndexDropped))
	}
}

// create renders desc as incarnation seq if the role covers it, else
// records its exports as peers (taking over the publisher's reserved hold).
// A publishing runtime settles each export's incarnation, published or not,
// for the reading runtime; the reading runtime waits for that verdict, so a
// build that failed on the publisher leaves no peer here, as in Solo.
func (w *worker) create(desc dataflow.Desc, seq uint64) {
	role := w.rt.opts.Role
	w.dataflows[desc.ID] = nil
	w.exportsOf[desc.ID] = desc.Exports
	for _, id := range desc.Exports {
		// The controller accepted the export, so the id is free: a
		// foreign record of it is of an index freed since.
		delete(w.foreign, id)
		delete(w.queryExports, id)
		w.exporters[id] = desc.ID
		if !desc.Maintained {
			w.queryExports[id] = desc.ID
		}
	}
	if !role.covers(desc) {
		if role == Interactive && desc.Maintained {
			// A Maintained create that exports nothing is not waited
			// for: nothing of it reaches this runtime (a query reads
			// only exports), its errors are the Maintenance runtime's,
			// and the ids it takes are recorded above from the command
			// alone, so no answer or error here depends on its verdict.
			// Waiting would keep this runtime behind a Build it has no
			// part in, and the two runtimes' progress still differs
			// before a Sync either way: the Maintenance runtime waits
			// for no query.
			reg := w.rt.opts.Registries[w.index]
			for _, id := range desc.Exports {
				b, err := reg.AwaitPeerBundle(share.Incarnation{ID: id, AsOf: desc.AsOf, Seq: seq}, w.rt.stop)
				if err != nil {
					continue // abandoned (the publisher reported why), or stopping
				}
				if err := w.env.Manager.SetPeer(id, desc.ID, b); err != nil {
					b.Release()
					w.env.Fail(desc.ID, err)
				}
			}
		} else {
			for _, id := range desc.Exports {
				w.foreign[id] = desc.ID
			}
		}
		return
	}
	// Counted until the create is settled, its first passes included: a
	// call in its Build that must not wait for the workers (a probe's
	// wait, Sync, Stats) is told from this count, and refused at once.
	w.rt.building.Add(1)
	defer w.rt.building.Add(-1)
	df, err := dataflow.Assemble(w.env, desc, seq)
	// A create exists on every worker or on none (R5): a Build that failed
	// on one worker undoes the others' before any has run or its exports
	// are settled for the reading runtime.
	err, report := w.rt.agree(seq, w.index, err)
	if w.rt.stopping() {
		// Shutdown was called during the create (a Build returned on
		// Context.Done, say): it is discarded, as the commands after it
		// are, and reports nothing, whatever the workers' votes and
		// whichever ended first (the votes or the wait on stop). Not
		// started either, whatever its Build returned: its first passes
		// would run its operators, and report what they meet.
		err, report = errCreateStopped, false
	}
	if err != nil && df != nil {
		df.Drop()
	}
	if err == nil {
		w.firstPasses = true
		df.Start()
		w.firstPasses = false
		w.setDataflowLabel(desc.ID) // its first passes left the worker's own labels
	}
	if reg := w.env.Registry; reg != nil {
		for _, id := range desc.Exports {
			reg.Settle(share.Incarnation{ID: id, AsOf: desc.AsOf, Seq: seq}, err == nil)
		}
	}
	if err != nil {
		if report {
			w.env.Fail(desc.ID, err)
		}
		return
	}
	w.dataflows[desc.ID] = df
	w.rendered++
	w.orderAt[df] = len(w.order)
	w.order = append(w.order, df)
	w.fileImports(df, importsBy.add)
	w.activate(df)
}

// unorder takes dropped df out of w.order: its place is left nil, and once
// half the places are the list is packed, keeping the order of the rest.
func (w *worker) unorder(df *dataflow.Dataflow) {
	i, ok := w.orderAt[df]
	if !ok {
		return
	}
	delete(w.orderAt, df)
	w.order[i] = nil
	w.holes++
	w.dropExamined++
	if w.holes*2 <= len(w.order) {
		return
	}
	n := 0
	for _, d := range w.order {
		w.dropExamined++
		if d != nil {
			w.order[n], w.orderAt[d] = d, n
			n++
		}
	}
	clear(w.order[n:])
	w.order, w.holes = w.order[:n], 0
	if cap(w.order) > 4*n+sparseMin {
		w.order = append([]*dataflow.Dataflow(nil), w.order...) // a burst of drops does not keep its array
	}
}

// exit is the end of the worker's goroutine: it drops everything the
// worker holds (shutdown), counted as running meanwhile. The loop leaves
// parked (its parks count odd) when it finds the runtime stopping after a
// park or a wake, but the drops run the Shutdown of every operator, code
// of the user's on this goroutine, which may call Shutdown itself: that
// call must find it on a worker (onWorker, whose mayBeOnWorker looks for
// an even count first) and return, or it waits for this goroutine to end,
// which waits for it, and Shutdown never returns. Under cycleMu, which
// the goroutine keeps as it ends: no leader runs its cycle (lend).
func (w *worker) exit() {
	if w.parks.Load()%2 == 1 {
		w.parks.Add(1) // running
	}
	w.shutdown()
}

// shutdown drops everything the worker holds (R2). An operator's Shutdown
// that ends the goroutine (runtime.Goexit, which testing.T.FailNow calls;
// a panic there is its dataflow's error) as the runtime shuts down
// leaves the rest of it to the deferred call, which records
// ErrWorkerExited naming the dataflow and drops what is left (the
// dataflow that was dropping counts as dropped): otherwise its registry
// side, every other dataflow's holds and the publications would be left
// bound, and the next pair on the registries refused.
func (w *worker) shutdown() {
	var dropping *dataflow.Dataflow
	finished := false
	defer func() {
		if finished || dropping == nil {
			return
		}
		w.rt.fail(0, nil, fmt.Errorf("dataflow %s: an operator's Shutdown, as the runtime shut down, ended a worker's goroutine: %w", dropping.ID(), ErrWorkerExited))
		w.shutdown()
	}()
	for i := len(w.order) - 1; i >= 0; i-- {
		if df := w.order[i]; df != nil {
			dropping = df
			df.Drop()
		}
	}
	dropping = nil
	w.order, w.orderAt, w.holes, w.dataflows = nil, map[*dataflow.Dataflow]int{}, 0, map[string]*dataflow.Dataflow{}
	w.readers, w.rootReaders, w.writerReaders = importsBy{}, importsBy{}, importsBy{}
	for _, id := range w.env.Manager.IDs() {
		w.env.Manager.Drop(id)
	}
	w.amu.Lock()
	w.active = map[*dataflow.Dataflow]bool{}
	w.amu.Unlock()
	// Every hold and peer of this worker is released: its registry side
	// is free, and what was kept for it (a reader's uncollected verdicts
	// and reserved holds) or awaited of it (a publisher's verdicts) goes.
	if side, ok := w.rt.opts.Role.side(); ok {
		w.rt.opts.Registries[w.index].Leave(side)
	}
	finished = true
}
