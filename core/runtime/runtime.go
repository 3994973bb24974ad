package runtime

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// Role is what a runtime renders and whether it publishes.
type Role int

const (
	// Solo maintains and reads, publishing nothing.
	Solo Role = iota
	// Maintenance maintains every index and publishes it.
	Maintenance
	// Interactive renders queries that read published indexes.
	Interactive
)

func (r Role) String() string {
	switch r {
	case Solo:
		return "solo"
	case Maintenance:
		return "maintenance"
	case Interactive:
		return "interactive"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// covers reports whether the role renders desc.
func (r Role) covers(desc dataflow.Desc) bool {
	switch r {
	case Maintenance:
		return desc.Maintained
	case Interactive:
		return !desc.Maintained
	}
	return true
}

// side returns the side of a sharing registry the role binds: Maintenance
// publishes, Interactive reads, Solo shares nothing (ok false).
func (r Role) side() (share.Side, bool) {
	switch r {
	case Maintenance:
		return share.PublisherSide, true
	case Interactive:
		return share.ReaderSide, true
	}
	return 0, false
}

// Options configure a runtime.
type Options struct {
	Role    Role
	Workers int // 1 ≤ W ≤ MaxWorkers
	// Registries has one sharing registry per worker (worker i of the
	// Interactive runtime reads worker i of the Maintenance runtime through
	// Registries[i]); required for Maintenance and Interactive. New copies
	// the slice, so the caller may reuse it (for the next pair, say).
	Registries []*share.Registry
	// Spine configures the spines of the runtime's arrangements; a Fuel
	// of 0 or less is spine.WorkedFuel there, half a spine's default,
	// since Effort works them at every wake while they merge (below).
	Spine spine.Options
	// Effort is the merge work (in updates merged) each arrangement trace
	// may do per worker wake; 0 means DefaultEffort, and New refuses a
	// negative one. With spine.WorkedFuel an arrangement's arrivals bring
	// half a spine's default fuel and this work the rest: an Effort below
	// about a sixth of a round's updates, with rounds sent back to back,
	// lets its trace pass about three times its live updates by a few
	// percent (3.05 times at Effort 1, against 2.5 with Spine.Fuel at
	// spine.DefaultFuel), its merges finished late but whole.
	Effort int64
	// Paused starts the runtime with its workers holding every command
	// until Resume: a runtime that is behind. Only tests use it, and it
	// stays exported because tests of other packages (core/join's
	// pair-lagging runs) hold one runtime of the pair behind the other; a
	// production controller never pauses a runtime.
	Paused bool
	// Labels, for profiling by operator: a context whose pprof labels
	// every worker's are added to (a caller's benchmark=, say; the
	// workers are goroutines of their own and take no labels from the
	// goroutine that sends them commands), and, when set, each operator's
	// step runs under dataflow= and operator= on top, and the worker's
	// own work under operator=(commands) (with dataflow= while it applies
	// a create or drop of that dataflow) and operator=(maintain). That
	// costs two label switches a step, about a tenth of a round of one
	// update. Nil: the workers carry runtime= and worker= alone, and only
	// joins and reduces label their work.
	Labels context.Context
	// ReaderBudget, on a Maintenance runtime under a controller with an
	// Interactive runtime of as many workers, is how long a wake of an
	// Interactive worker may run on a Maintenance worker's goroutine. When
	// a Maintenance worker's step publishes a batch to a reader whose
	// worker is parked with nothing queued but compactions, the
	// Maintenance worker runs that worker's wake itself after its step
	// (its commands, steps and Maintain, under its labels), instead of
	// waking its goroutine, when the step published it at most 1,024
	// updates (a wake of more would seldom fit the default budget): a
	// round of up to about a thousand updates then pays no hand-off
	// between the two runtimes, and the reader's hold move is applied by
	// the same Maintain. The first wake run so and every eighth after it
	// are timed, and the one after a timed wake that ran longer than the
	// budget: when that one runs longer too (a slow query, not one wake
	// slowed by a collection or a descheduled thread), no wake is run so
	// for the next 64 such chances, then 128, and so on up to 65,536,
	// until one runs within it: the reader's work delays maintenance by
	// two wakes at a time, each time rarer. 0 means DefaultReaderBudget;
	// a negative budget never runs a reader's wake on a Maintenance
	// worker.
	ReaderBudget time.Duration
}

// DefaultReaderBudget is Options.ReaderBudget when left 0. A lent wake of a
// query that reads each update of its round took 1.8 µs at the median at
// one update and 9.7 µs at 1,000 (21 at the 99th percentile) on a 2-vCPU
// host, where the hand-off it saves, with the wake of the idle core's
// thread, took 5–6 µs; the budget admits such a query up to
// lendMaxUpdates updates with room for a slower host.
const DefaultReaderBudget = 25 * time.Microsecond

// defaultReaderBudget is what a zero Options.ReaderBudget becomes; this
// package's tests run with a budget no wake exceeds, so that every wake the
// rule allows runs on the Maintenance worker (TestMain), and its benchmarks
// with DefaultReaderBudget (benchReaderBudget).
var defaultReaderBudget = DefaultReaderBudget

// How long a worker works per wake. A wake applies every queued command,
// steps the activated dataflows for at most roundsPerWake rounds (each
// dataflow runs at most dataflow.PassesPerActivation passes per round), and
// gives each arrangement trace Effort of merge work; what is left (a
// dataflow still active, a merge not finished) signals the next wake, after
// the commands that arrived meanwhile. So a busy dataflow never starves
// commands such as a drop or Shutdown, and idle merge work is done between
// arrivals rather than forced by later ones.
const (
	// DefaultEffort is Options.Effort when left 0: 16,384 updates of merge
	// work per trace per wake, about 0.3 ms at the 18 ns per unit of merge
	// work BenchmarkSpineInsert measures — short enough that a wake with
	// idle merge work answers its next command promptly.
	DefaultEffort = 1 << 14
	roundsPerWake = 64
)

// Runtime is a set of workers in one role. Make one with New (or Pair):
// the zero Runtime has no workers, and NewController refuses it
// (ErrZeroRuntime).
type Runtime struct {
	opts     Options
	hub      *dataflow.Hub
	workers  []*worker
	stop     chan struct{}
	stopped  atomic.Bool // set just before stop closes: stopping reads it
	stopOnce gosync.Once
	// stopper ends the waits on the probes the workers attached, with
	// ErrShutdown, when the runtime is marked stopping (markStopping,
	// before stop closes; Env.Stopper).
	stopper    *dataflow.Stopper
	resume     chan struct{} // closed when not paused
	resumeOnce gosync.Once
	wg         gosync.WaitGroup
	ctlMu      gosync.Mutex
	controlled bool // a controller sends this runtime's commands
	// partner is, on a runtime of a pair that a controller joins, the
	// pair's other runtime (set under ctlMu, never cleared; read without
	// it by Env.OnWorker, on a probe's wait): Shutdown of either shuts
	// down both, as Controller.Shutdown does.
	partner atomic.Pointer[Runtime]
	// building counts this runtime's workers running a create's Build or
	// its first passes (worker.create). While it is zero on both runtimes
	// of a pair no caller runs in a Build, and a call that must not (Sync,
	// SyncRole, Stats, a probe's wait) reads no goroutine's id; a create is
	// not the per-round path, so a round pays nothing for it.
	building atomic.Int32
	// follower is, on a Maintenance runtime under a controller, the
	// Interactive runtime that reads its registries. The controller queues
	// AllowCompaction on the follower without waking it, and a worker of
	// this runtime wakes follower worker i once it has applied that command,
	// if the follower has not taken its copy (worker.nudge): the follower
	// mostly applies it in the wake this runtime's publication causes,
	// instead of in a wake of its own.
	follower *Runtime
	// led is set on a follower: its AllowCompaction commands are queued
	// quietly (Controller.Send).
	led bool
	// pending: the controller queued commands for the workers and has not
	// woken them yet (guarded by the controller's mu).
	pending bool

	errMu gosync.Mutex
	errs  []*CommandError
	// errKeys are errs' keys (command and text): fail records each once
	// with one lookup, not a scan of every error kept, which would make
	// errors nobody takes quadratic in their number.
	errKeys map[errKey]struct{}

	voteMu gosync.Mutex
	votes  map[uint64]*createVote // creates some worker has built, by seq
}

// createVote is the workers' agreement on one create (R5): each worker
// builds, then votes with its Build's error; the last vote closes done.
// err is the error of the lowest-numbered worker whose Build failed.
type createVote struct {
	left      int
	err       error
	errWorker int
	done      chan struct{}
}

// errCreateStopped is agree's verdict when the runtime stops before every
// worker voted, and a create's whatever the votes when Shutdown was called
// before a worker acts on them (worker.create): the create is undone, and
// nothing is reported.
var errCreateStopped = errors.New("runtime: stopped during a create")

// agree records worker's Build error for the create numbered seq and
// waits for every worker's vote (or Shutdown). It returns the verdict —
// nil if every worker built the dataflow, else the first failing worker's
// error — and whether this worker is the one that reports it.
func (r *Runtime) agree(seq uint64, worker int, err error) (verdict error, report bool) {
	if len(r.workers) == 1 {
		return err, true
	}
	r.voteMu.Lock()
	v := r.votes[seq]
	if v == nil {
		v = &createVote{left: len(r.workers), done: make(chan struct{})}
		r.votes[seq] = v
	}
	if err != nil && (v.err == nil || worker < v.errWorker) {
		v.err, v.errWorker = err, worker
	}
	v.left--
	if v.left == 0 {
		delete(r.votes, seq)
		close(v.done)
	}
	r.voteMu.Unlock()
	select {
	case <-v.done:
		return v.err, v.err != nil && v.errWorker == worker
	case <-r.stop:
		return errCreateStopped, false
	}
}

// New starts a runtime's workers.
func New(opts Options) (*Runtime, error) {
	if opts.Role < Solo || opts.Role > Interactive {
		return nil, fmt.Errorf("runtime: role %d: want Solo, Maintenance or Interactive", int(opts.Role))
	}
	if opts.Workers < 1 {
		return nil, fmt.Errorf("runtime: %d workers: need at least one", opts.Workers)
	}
	if opts.Workers > MaxWorkers {
		return nil, fmt.Errorf("runtime: %d workers: at most %d", opts.Workers, MaxWorkers)
	}
	if opts.Role != Solo && len(opts.Registries) != opts.Workers {
		return nil, fmt.Errorf("runtime: %v runtime with %d workers needs %d registries, has %d", opts.Role, opts.Workers, opts.Workers, len(opts.Registries))
	}
	for i, reg := range opts.Registries {
		if reg == nil && opts.Role != Solo {
			return nil, fmt.Errorf("runtime: %v runtime: registry %d is nil", opts.Role, i)
		}
	}
	// The workers look their registry up in opts for the runtime's life:
	// a caller writing the next pair's registries into its slice would
	// move this runtime's publications, collections and Leave to them.
	opts.Registries = slices.Clone(opts.Registries)
	if opts.Effort < 0 {
		// Maintain gives a trace no work for a negative effort: merges
		// would move only with arrivals, never between them.
		return nil, fmt.Errorf("runtime: Effort %d is negative (0 means DefaultEffort)", opts.Effort)
	}
	if opts.Effort == 0 {
		opts.Effort = DefaultEffort
	}
	if opts.ReaderBudget == 0 {
		opts.ReaderBudget = defaultReaderBudget
	}
	// Each registry serves one live runtime of each role (R2, R4): a second
	// Maintenance or Interactive runtime on it would publish or collect
	// incarnations of another command stream under the same numbers.
	if side, ok := opts.Role.side(); ok {
		for i, reg := range opts.Registries {
			if err := reg.Bind(side); err != nil {
				for _, bound := range opts.Registries[:i] {
					bound.Unbind(side)
				}
				return nil, fmt.Errorf("runtime: %v runtime, registry %d: %w", opts.Role, i, err)
			}
		}
	}
	r := &Runtime{opts: opts, hub: dataflow.NewHub(opts.Workers), stop: make(chan struct{}), stopper: dataflow.NewStopper(), resume: make(chan struct{}), votes: map[uint64]*createVote{}}
	if !opts.Paused {
		r.Resume()
	}
	for i := range opts.Workers {
		r.workers = append(r.workers, newWorker(r, i))
	}
	for _, w := range r.workers {
		r.wg.Add(1)
		go w.run()
	}
	return r, nil
}

// Resume lets a runtime started Paused apply its commands (a no-op
// otherwise; see Options.Paused for why it is exported). It may be called
// any number of times, from any goroutine.
func (r *Runtime) Resume() {
	if r.resume == nil {
		return // the zero Runtime: nothing to resume
	}
	r.resumeOnce.Do(func() { close(r.resume) })
}

// Role returns the runtime's role.
func (r *Runtime) Role() Role { return r.opts.Role }

// MaxWorkers bounds Options.Workers and Pair's w. A runtime starts a
// goroutine and a registry's worth of state a worker, and every exchange
// holds a part for each pair of workers, so its memory grows with the
// square of the count (1,024 workers take 1.5 GB on a star join; a
// billion were a hang on the way to running out of memory); no machine
// has cores for more.
const MaxWorkers = 1 << 10

// Workers returns the number of workers.
func (r *Runtime) Workers() int { return r.opts.Workers }

// queue appends cmd, the controller's command seq, to every worker's
// queue without waking them; wake marks the runtime pending, for the
// controller's flushLocked to wake its workers once the commands it is
// sending are all queued. A led runtime's AllowCompaction is queued with
// wake false: the leader's workers wake it (worker.nudge).
// REQUIRES: the controller's mu held.
func (r *Runtime) queue(cmd Command, seq uint64, wake bool) {
	for _, w := range r.workers {
		w.qmu.Lock()
		w.queue = append(w.queue, queued{cmd: cmd, seq: seq})
		w.qmu.Unlock()
	}
	r.pending = r.pending || wake
}

// CommandError is an error met while applying a command the controller
// accepted, reported once however many workers and runtimes met it. Seq
// is the command's number in the controller's stream (1 for the first
// command sent); Seq 0 and a nil Command mark an error no command caused,
// met while stepping dataflows (an overflowing merge, a failed seal, an
// operator's bad chunk), in a wake, at a barrier or in the first passes a
// create runs. A step's error follows from how far the dataflows ran,
// which the commands do not decide: Solo and the pair report the same
// ones of dataflows that ran to rest (a dataflow dropped before it stepped
// to a fault meets none). A step's error of a dataflow is one per
// incarnation and text, and TakeErrors returns it once, also when another
// worker meets it after the take: so are a merge's overflow, an error of
// the arranging dataflow (dataflow.MergeOverflowError, which each
// worker's merge of the arrangement may find), and an error reported off
// a worker's goroutine (a Context call from another goroutine after the
// Build returned), which is reported only until the worker drops the
// dataflow. Only the end of a worker's goroutine (ErrWorkerExited, after
// which the runtimes shut down) is recorded under no incarnation.
type CommandError struct {
	Seq     uint64
	Command Command
	Err     error

	msg string // Err's text, read once when it is recorded
	// df and inc are the id and the create number of the dataflow whose
	// step met a step's error (Seq 0), inc 0 if none or not known: the
	// controller keeps the step errors TakeErrors returned of each
	// incarnation (Controller.taken) until its drop is applied.
	df  string
	inc uint64
	// name is msg without the stack an operator's panic carries
	// (dataflow.ErrOperatorPanicked), which differs on every worker
	// that meets the same panic: the error's name among the others.
	name string
}

// key returns the error's command number (or, for a step's error, its
// dataflow's incarnation) and name (its text, but for a panic's stack),
// which name it among the errors the runtimes met (one per key, the first
// met kept whole).
func (e *CommandError) key() errKey { return errKey{e.Seq, e.inc, e.name} }

// stackless returns err's text msg without the stack of the operator's
// panic it wraps, if any (dataflow.ErrOperatorPanicked): the same panic on
// several workers is one error. Run only where an error is recorded.
func stackless(err error, msg string) string {
	var p interface{ PanicStack() string }
	if !errors.As(err, &p) {
		return msg
	}
	if st := p.PanicStack(); st != "" {
		return strings.Replace(msg, "\n"+st, "", 1)
	}
	return msg
}

// Error returns Err's text. A CommandError made by hand with no Err (the
// zero one) says so, naming its Seq.
func (e *CommandError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("runtime: CommandError of command %d with no Err", e.Seq)
	}
	return e.Err.Error()
}

// Unwrap returns the error met.
func (e *CommandError) Unwrap() error { return e.Err }

// fail records an error a worker met applying command seq (0: none),
// unless the same error of the same command is recorded already: the same
// text, but for an operator panic's stack (stackless).
func (r *Runtime) fail(seq uint64, cmd Command, err error) {
	r.record(&CommandError{Seq: seq, Command: cmd, Err: err})
}

// record records e (its Seq, Command, Err and inc set) as fail does.
func (r *Runtime) record(e *CommandError) {
	e.msg = e.Err.Error()
	e.name = stackless(e.Err, e.msg)
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if _, ok := r.errKeys[e.key()]; ok {
		return
	}
	if r.errKeys == nil {
		r.errKeys = map[errKey]struct{}{}
	}
	r.errKeys[e.key()] = struct{}{}
	r.errs = append(r.errs, e)
}

// Err returns the errors this runtime's workers met so far, one per
// command and message, joined.
func (r *Runtime) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	errs := make([]error, len(r.errs))
	for i, e := range r.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// Shutdown drops every dataflow and index on every worker (releasing every
// hold, R2) and stops the workers, discarding the commands they have not
// applied. It waits for them to exit. It may be called any number of times,
// from any goroutine; every call returns once the workers have exited (but
// for one from a Build, below).
//
// On a runtime of a pair that a controller joins (NewController, Pair) it
// is Controller.Shutdown: it shuts down the pair's other runtime too,
// stopping both before it waits for either, and returns once the workers
// of both have exited. The controller refuses every command once either
// runtime is shut down, and the other alone would only go on applying its
// queued commands against a runtime that has left — every create of the
// publisher's that the reader reaches then abandoned, and every query
// failing on an index that never came: errors a Solo runtime, which
// Shutdown stops whole, never reports. So the pair, like Solo, applies
// nothing after Shutdown is called, reports no error for what it
// discarded, and leaves its registries free for the next pair once
// Shutdown returns.
//
// Shutdown cannot interrupt code of the caller's: a worker inside a Build
// (dataflow.Desc.Build) or an operator's Step finishes it before it sees
// the stop, so Shutdown returns once every Build being run has returned,
// and never if one never does. A Build that waits for something outside
// the runtime should wait for dataflow.Context.Done as well, which
// Shutdown closes, and return: the runtime then discards that create and
// reports no error of it. Returning before such a worker has exited would
// leave its goroutine, and the dataflows, holds and registry side it
// keeps, behind (R2). Sync and Stats, which take a context, return when it
// ends, so a caller can tell a Build that does not return. A wait on a
// probe the runtime feeds returns once Shutdown is called (ErrShutdown),
// without waiting for the workers to exit.
//
// Called from a Build or a Step itself, on a worker's goroutine (of either
// runtime of the pair), or from an operator's Shutdown (which a worker runs
// as it drops the dataflow, at its drop or as the worker exits), Shutdown
// cannot wait for that worker, which is
// running its caller, nor for the others, each of which may be running
// the same Build and waiting in Shutdown too: it stops the runtimes as
// ever and returns. Each worker then discards the create (or leaves the
// step) and leaves, with all it keeps, once its Build or Step returns.
func (r *Runtime) Shutdown() {
	if r.stop == nil {
		return // the zero Runtime: no worker to stop, and no controller
	}
	r.ctlMu.Lock()
	// Marked stopping under ctlMu: a NewController claiming r either
	// sees it (and refuses r) or has set partner by now. The partner is
	// marked with it, reader first (see markStopping).
	rts := []*Runtime{r}
	if p := r.partner.Load(); p != nil {
		rts = append(rts, p)
	}
	markStopping(rts)
	r.ctlMu.Unlock()
	shutdown(rts...)
}

// markStopping marks every runtime of rts stopping, an Interactive one
// before the others. A worker sees the mark before any signal (it looks
// at it before each command, and exits), and a Maintenance worker that
// exits leaves its registry side, abandoning every create it did not
// settle: an Interactive worker waiting for one of them goes on to its
// next command, which it must find marked, or it applies it against the
// side that left and fails (a query on an index that never came), which
// Solo never reports. The other way round, nothing waits on a reader.
//
// Each runtime's Stopper is stopped before any mark: a worker that sees
// the mark drops its dataflows (a create it discards, or all of them as it
// exits) before Shutdown signals it, and the waits on their probes must
// end with ErrShutdown, which came first, not dataflow.ErrProbeDropped.
func markStopping(rts []*Runtime) {
	for _, r := range rts {
		r.stopper.Stop(ErrShutdown)
	}
	for _, r := range rts {
		if r.opts.Role == Interactive {
			r.stopped.Store(true)
		}
	}
	for _, r := range rts {
		r.stopped.Store(true)
	}
}

// shutdown stops every runtime of rts and then waits for their workers to
// exit. Every runtime is marked stopping (markStopping) before any is
// signalled: a worker of one that exits (leaving its registry side) before
// another is told would let that other's worker, waiting on the registry,
// go on to its next command and fail against the side that left.
//
// Called on the goroutine of one of their workers (a Build's or a Step's
// call), it waits for none: not for that worker, which is running its
// caller, nor for the others, which may be in such a call themselves
// (every worker runs a Build), each waiting for the others.
func shutdown(rts ...*Runtime) {
	markStopping(rts)
	for _, r := range rts {
		r.signalStop()
	}
	if onWorker(rts) {
		return
	}
	for _, r := range rts {
		r.wg.Wait()
	}
}

// signalStop closes stop and wakes every worker to see it, once.
func (r *Runtime) signalStop() {
	r.stopOnce.Do(func() {
		r.stopped.Store(true)
		close(r.stop)
		// A worker parks on its wake alone: one that had looked at stop
		// before it closed takes this token and looks again.
		for _, w := range r.workers {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	})
}

// stopping reports whether Shutdown was called: one atomic load, where a
// non-blocking receive on stop cost about 60 instructions, paid by every
// command sent (once per runtime) and twice a wake by every worker.
func (r *Runtime) stopping() bool { return r.stopped.Load() }

// Stats describe a runtime's state, summed over its workers.
type Stats struct {
	Dataflows int
	Indexes   int // trace manager entries (local and peer)
	Traces    int // arrangement traces under maintenance
	Exchanges int
	// Trace sums the counters of the arrangement traces under maintenance
	// (bytes, merges, merge work); a batch shared with another runtime is
	// counted by the runtime that maintains it only.
	Trace spine.Stats
	// HoldGap is the largest gap between requested and applied compaction
	// of a trace under maintenance (dataflow.IndexManager.HoldGap).
	HoldGap uint64
	// InputHistory is the number of updates the inputs keep for dataflows
	// created later (dataflow.Inputs.HistoryLen), over every worker:
	// every update sent, unless the input keeps none (NoHistory) or its
	// history compacts (AllowInputCompaction).
	InputHistory int
}

// Stats returns the runtime's state; it asks every worker through its
// command queue, so it reflects every command sent before it. On error
// (ctx ended, runtime shut down) it returns zero Stats. Called from a
// Build, on a worker's goroutine of the runtime or of its partner in a
// pair (the pair counts as one), it returns ErrOnWorker at once, whether
// or not the runtime would have answered: the worker running its caller
// applies nothing until it returns, and the partner may be waiting for the
// verdict of the create its caller builds, so an answer would depend on
// timing. Called from a Step on a worker of the runtime, it returns
// ErrOnWorker once it has waited about half a millisecond (onWorkerDelay);
// from a Step on a worker of the partner, it answers if the runtime
// answers within that time, and returns ErrOnWorker if not. A nil ctx is
// refused at once (ErrNilContext), before anything else is looked at; one
// that ends while Stats waits leaves nothing queued, as with Sync.
func (r *Runtime) Stats(ctx context.Context) (Stats, error) {
	if ctx == nil {
		return Stats{}, errNilContext("Stats")
	}
	if r.stop == nil {
		return Stats{}, ErrZeroRuntime
	}
	partner := r.partner.Load()
	var st Stats
	err := r.guardedBarrier(ctx, func(w *worker) {
		st.Dataflows += w.rendered
		st.Indexes += w.env.Manager.Len()
		st.Traces += w.env.Manager.Tracked()
		ts := w.env.Manager.TraceStats()
		st.Trace.Batches += ts.Batches
		st.Trace.Updates += ts.Updates
		st.Trace.Bytes += ts.Bytes
		st.Trace.Merges += ts.Merges
		st.Trace.MergeWork += ts.MergeWork
		st.Trace.Pending += ts.Pending
		st.Trace.Merging += ts.Merging
		st.Trace.Recompactions += ts.Recompactions
		st.HoldGap = max(st.HoldGap, w.env.Manager.HoldGap())
		st.InputHistory += w.env.Inputs.HistoryLen()
	}, []*Runtime{r, partner})
	if err != nil {
		return Stats{}, err
	}
	st.Exchanges = r.hub.Len()
	return st, nil
}

// onWorkerDelay is how long a barrier waits before it asks whether its
// caller runs on a worker's goroutine (onWorker): reading a goroutine's
// id costs a stack trace, 5 µs and more, which a Sync or a Stats that
// completes sooner (the figures time a query's build with one) must not
// pay, and a call on a worker never completes, so the later answer is the
// same. That is a call in a Step; one in a Build is told at once, from
// the count of workers in a create (inBuild), which a round never moves.
const onWorkerDelay = 500 * time.Microsecond

// inBuild reports whether some worker of rts (nil ones skipped) runs a
// create's Build or its first passes (Runtime.building): a load per
// runtime. A caller in a Build finds it so; one that finds none is in no
// Build.
func inBuild(rts []*Runtime) bool {
	for _, r := range rts {
		if r != nil && r.building.Load() > 0 {
			return true
		}
	}
	return false
}

// buildCaller is Env.OnWorker: ErrOnWorker if the caller runs on a worker
// of r or of its partner in a pair while one of their workers runs a
// create's Build or first passes (a caller in a Build does), nil
// otherwise. It reads the goroutine's id only in the first case, so a wait
// outside a create (every round's) pays three loads.
func (r *Runtime) buildCaller() error {
	rts := [2]*Runtime{r, r.partner.Load()}
	if inBuild(rts[:]) && onWorker(rts[:]) {
		return ErrOnWorker
	}
	return nil
}

// mayBeOnWorker reports whether some worker of rts (nil ones skipped) is
// running: a worker runs a Build or a Step only while its parks count is
// even (from its wake to its next park), so a caller on a worker's
// goroutine finds it so, and a caller that finds every worker parked is
// on none of them. It costs a load per worker.
func mayBeOnWorker(rts []*Runtime) bool {
	for _, r := range rts {
		if r == nil {
			continue
		}
		for _, w := range r.workers {
			if w.parks.Load()%2 == 0 {
				return true
			}
		}
	}
	return false
}

// onWorker reports whether the caller runs on the goroutine of a worker of
// one of rts (nil ones skipped): in a Build or a Step, where a call that
// waits for those workers (Sync, SyncRole, Stats) would wait for itself,
// or for workers that wait for it (the other workers of its runtime, at
// the create's agreement; the Interactive runtime, for the verdict of a
// Maintained create). It reads the goroutine's id, a stack trace, so only
// a barrier that has waited onWorkerDelay calls it.
func onWorker(rts []*Runtime) bool {
	if !mayBeOnWorker(rts) {
		return false
	}
	self := goid()
	for _, r := range rts {
		if r == nil {
			continue
		}
		for _, w := range r.workers {
			if w.goid.Load() == self || w.lentTo(self) {
				return true
			}
		}
	}
	return false
}

// barrierState is one barrier call: the callbacks run under mu, only while
// the caller still waits, and the last worker closes done. Nothing waits on
// a worker that never runs the barrier, so a barrier abandoned by its
// caller costs no goroutine; and it is taken out of every queue that still
// holds it (worker.unqueue), so it costs no queue entry either: a caller
// polling with short timeouts while a worker is stuck (a Build waiting on
// something outside the runtime, a runtime paused) left one entry per call
// and worker, applied to no one once the worker got to them. What stays is
// a barrier a worker had taken already, with the commands of the wake it
// is stuck in: one per caller that was waiting when that wake began, run
// to no one when the worker reaches it.
type barrierState struct {
	mu        gosync.Mutex
	abandoned bool
	left      int
	done      chan struct{}
	f         func(*worker)
}

func (b *barrierState) run(w *worker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.abandoned {
		return
	}
	if b.f != nil {
		b.f(w)
	}
	b.left--
	if b.left == 0 {
		close(b.done)
	}
}

// barrier runs f on every worker (one at a time) after everything sent
// before it has been applied and stepped, and waits for all of them. If ctx
// ends or the runtime shuts down first, it returns an error, f runs on no
// worker after barrier returns, and no worker's queue holds the barrier
// any more (one a worker took already, with the commands of its wake, it
// applies to no one).
func (r *Runtime) barrier(ctx context.Context, f func(*worker)) error {
	return r.guardedBarrier(ctx, f, nil)
}

// guardedBarrier is barrier for a caller that must not run on a worker of
// the runtimes guard names (Sync, SyncRole, Stats). A caller in a Build on
// one of them is refused at once, with ErrOnWorker, before any barrier is
// sent: whichever of the runtimes it asks, one waits for the create its
// caller builds (the runtime building it, for its Build to return; the
// Interactive runtime, for a Maintained create's verdict), or answers only
// as fast as it happens to, so refusing what does not answer in time made
// the answer depend on timing. Otherwise, when some worker of theirs runs
// as the barrier is sent (a caller in a Step), it asks, once it has waited
// onWorkerDelay, whether the caller is one of them, and if so abandons the
// barrier with ErrOnWorker (f runs on no worker after that).
func (r *Runtime) guardedBarrier(ctx context.Context, f func(*worker), guard []*Runtime) error {
	if inBuild(guard) && onWorker(guard) {
		return ErrOnWorker
	}
	if err := ctx.Err(); err != nil {
		// Nothing is queued for a caller that will not wait: one polling
		// with short timeouts against a lagging runtime queued a barrier
		// per call, each applied (to no one) once the workers got to it.
		// No role is named: which runtime is asked first is the pair's
		// order, and Solo and the pair refuse a context that has ended
		// alike.
		return fmt.Errorf("runtime: barrier: %w", err)
	}
	b := &barrierState{left: len(r.workers), done: make(chan struct{}), f: f}
	var check <-chan time.Time
	if mayBeOnWorker(guard) {
		t := time.NewTimer(onWorkerDelay)
		defer t.Stop()
		check = t.C
	}
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: b.run, state: b}})
	}
	var err error
wait:
	for {
		select {
		case <-b.done:
			return nil
		case <-ctx.Done():
			err = fmt.Errorf("runtime: %v barrier: %w", r.opts.Role, ctx.Err())
			break wait
		case <-r.stop:
			// As a context that ended before: the same in Solo and the
			// pair, whose runtimes shut down together. (A context that
			// ends while the barrier waits names the runtime it waited
			// for, which depends on timing anyway.)
			err = fmt.Errorf("runtime: barrier: %w", ErrShutdown)
			break wait
		case <-check:
			if onWorker(guard) {
				err = ErrOnWorker
				break wait
			}
			check = nil
		}
	}
	b.mu.Lock()
	b.abandoned = true
	select {
	case <-b.done: // every worker ran it after all
		err = nil
	default:
	}
	b.mu.Unlock()
	if err != nil {
		// Abandoned: no worker that has not taken it yet need apply it.
		// It was never a command of the controller's, so no worker's
		// order of commands changes.
		for _, w := range r.workers {
			w.unqueue(b)
		}
	}
	return err
}

// Controller sends every command to every runtime in the same order (R1),
// numbering each: the number of a CreateDataflow names the incarnation of
// the dataflow and of the indexes it exports on every runtime alike.
//
// It validates each command whole before any runtime sees it (R3), against
// the inputs, dataflows and indexes its own commands declared: a rejected
// command is sent nowhere and changes nothing, and Send returns one error
// naming the command and the field at fault.
//
// Make one with NewController or Pair: the zero Controller has no
// runtimes, and Send, SendAll and Sync return ErrNoRuntimes.
type Controller struct {
	mu  gosync.Mutex
	rts []*Runtime
	seq uint64

	inputs    map[string]*inputDecl
	dataflows map[string][]string // live dataflow id → its exports
	// indexes has each live index by id: the dataflow exporting it and
	// its since as the controller knows it, the as_of of that create
	// (asOf set), then the last frontier an AllowCompaction let it
	// compact to. One before it is refused (ErrCompactionBackward). An
	// AllowCompaction, sent every round, moves it in place.
	indexes map[string]*liveIndex
	// lastIndex is the entry of indexes that index found last, under
	// lastID: a driver's rounds name the same index every time, and its
	// AllowCompaction is validated and recorded with two comparisons of
	// the id in place of two hashes and probes. Every change to indexes
	// clears it (setIndex, dropIndex).
	lastIndex *liveIndex
	lastID    string
	// taken are the command errors TakeErrors returned, and the step
	// errors of a dataflow's incarnation: a runtime behind that meets one
	// later (the pair's other runtime, applying the same command), or
	// another worker stepping the same dataflow, does not report it again.
	taken map[errKey]bool
	// incs has the create number of each live dataflow, by id.
	incs map[string]uint64
	// takenDrops has, per incarnation that taken holds step errors of,
	// the number of the command that dropped it (0 while it lives) and
	// those errors' keys: once every worker has applied that command,
	// none meets its errors again.
	takenDrops map[uint64]*takenInc
	// forget has what taken holds, each under the number of the command
	// that every worker must have applied before it is forgotten: a
	// command's error under the command's, a dropped incarnation (its
	// step errors) under its drop's. A take forgets from its least
	// number on, so it costs what it forgets, not what is kept (the step
	// errors of every failed dataflow not yet dropped).
	forget forgetHeap
	// forgotExamined counts the entries forgetting looked at (tests).
	forgotExamined int
}

// takenInc is what the controller keeps of an incarnation's taken step
// errors (Controller.takenDrops).
type takenInc struct {
	drop uint64   // the number of the command that dropped it, 0 while it lives
	keys []errKey // its step errors taken
}

// forgetAt is an entry of Controller.forget: a command error's key
// (inc 0), or a dropped incarnation whose step errors go together.
type forgetAt struct {
	seq uint64
	key errKey
	inc uint64
}

// forgetHeap is a min-heap of forgetAt by seq (container/heap).
type forgetHeap []forgetAt

func (h forgetHeap) Len() int           { return len(h) }
func (h forgetHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h forgetHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *forgetHeap) Push(x any)        { *h = append(*h, x.(forgetAt)) }
func (h *forgetHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// liveIndex is a live index as the controller knows it: the dataflow
// exporting it (by), and its since, its create's as_of (asOf) or the
// last frontier allowed.
type liveIndex struct {
	by    string
	since frontier.Frontier
	asOf  bool
}

// errKey names one command's error: its command's number and its text;
// a step's error (seq 0) by its dataflow's incarnation (inc, 0 if none)
// and its text.
type errKey struct {
	seq, inc uint64
	err      string
}

// inputDecl is the controller's record of a declared input.
type inputDecl struct {
	arity    int
	frontier frontier.Frontier
	since    frontier.Frontier // allowed by AllowInputCompaction
}

// ErrShutdown is returned by Send and SendAll once a runtime of the
// controller is shut down (the command reaches no runtime and the
// controller records nothing of it), and wrapped by Sync, SyncRole and
// Stats on a runtime shut down, by NewController given one, and by a wait
// on a probe or a capture that runtime feeds (dataflow.Probe.WaitPassed)
// for a time the probe has not passed, a wait begun before the Shutdown
// included: nothing moves the probe after it.
var ErrShutdown = errors.New("runtime: shut down")

// ErrWorkerExited is the error of a Build, a step or a command that ended
// a worker's goroutine without returning: runtime.Goexit, which
// testing.T.FailNow calls (off the test's goroutine it ends the caller's
// goroutine, here the worker's). The runtime cannot go on without the
// worker, whose work was left half done, so it shuts down, the pair's other
// runtime with it: Sync and Send then return ErrShutdown, where they would
// have waited for the worker, and Err and Errors report this error, naming
// the dataflow. So is an operator's Shutdown that ends it as the runtime
// shuts down (the worker dropping what it holds on its way out): the
// worker drops the rest all the same (R2).
var ErrWorkerExited = errors.New("runtime.Goexit on a worker (testing.T.FailNow calls it): the runtime is shut down")

// ErrCompactionBackward is wrapped by the error Send returns for an
// AllowCompaction to a frontier before the index's since as the controller
// knows it: one already allowed for the index since its create, or, with
// none allowed yet, the as_of of the create that exports it, where its
// since starts (dataflow D5; docs/semantics.md §3.5). A hold never moves
// back (docs/semantics.md §2.4, H2), so the command would change nothing
// while the caller took it to keep times the index has compacted away (a
// query at one of them is refused, dataflow.ErrCompactedBeyondAsOf). It
// reaches no runtime (Controller, R3). The same frontier again, and the
// as_of itself, are no error. So is an AllowInputCompaction to a frontier
// before one already allowed for the input.
var ErrCompactionBackward = errors.New("compaction never moves back")

// ErrOnWorker is returned by Sync, SyncRole and Stats called from a Build
// (dataflow.Desc.Build) or an operator's Step, on the goroutine of a worker
// of the runtimes they would wait for (a pair's two runtimes count as one:
// the Interactive runtime waits for a Maintained create's verdict, and
// every worker of a runtime for the others at a create). That worker
// applies nothing, its barrier included, until its caller returns, so the
// call would wait for itself; it returns this instead, the same error in
// Solo and the pair. From a Build it is returned at once, whichever
// runtime of the pair is asked; from a Step once the call has waited about
// half a millisecond (a call completing sooner never pays for the check, a
// stack trace, which a round would). A probe's or a capture's wait
// (dataflow.Probe.WaitPassed) called from a Build on a worker of the
// runtimes whose dataflows feed it returns an error wrapping it, at once,
// whether or not the probe has passed its time.
var ErrOnWorker = errors.New("runtime: called from a Build or a Step, on a worker's goroutine: it would wait for that worker")

// ErrIndexDropped is the error of a command that drops an index (the
// DropDataflow of the dataflow exporting it, or an AllowCompaction to {})
// while a live dataflow reads it (dataflow.Dataflow.Imports: imported,
// and read through the import's stream, a kept reader or a re-export):
// the command is applied, and the reading dataflow's frontier stops where
// the index's last one was, so a caller waiting for it to pass a later
// time would wait forever. Queries read a Maintained dataflow's export
// through its publication, and a query's re-export is an alias: when a
// Maintained export ends, its query readers, direct or through queries'
// re-exports of it, stop and are told; Maintained readers read the traces
// and go on while they do (a Maintained reader keeps them written, so an
// index freed under it ends nothing for it); a query's re-export ending
// tells no one. The traces end with the dataflow whose arrangement writes
// them: its drop stops, and tells, every reader still reading them,
// through a re-export too (Maintained or a query's; share.Bundle.Writer),
// and a later import of such a re-export is refused
// (dataflow.ErrSourceEnded). The
// error names the reader and the index, once for each index it imported
// and incarnation; once both runtimes have applied the command, Solo and
// the Maintenance/Interactive pair have reported the same errors, as they
// are decided from the commands alone (whatever either runtime has read
// of the index by then, and whether the reader has reached its until or
// not). Drop an index's readers before it.
var ErrIndexDropped = errors.New("runtime: index dropped while a dataflow imports it (the dataflow's frontier stops where the index's did; drop importers first)")

// ErrNilContext is wrapped by the error Sync, SyncRole and Stats return
// given a nil context, at once and before anything else is looked at
// (the controller's or the runtime's state, the caller's goroutine):
// nothing is queued and no runtime is asked, the same in Solo and the
// pair. A wait with no deadline takes context.Background(). It is
// dataflow.ErrNilContext, which a probe's, a capture's or a tally's wait
// (dataflow.Probe.WaitPassed) given a nil context wraps too.
var ErrNilContext = dataflow.ErrNilContext

// errNilContext is the error of method given a nil context.
func errNilContext(method string) error {
	return fmt.Errorf("runtime: %s: %w", method, ErrNilContext)
}

// ErrNoRuntimes is returned by Send, SendAll and Sync of a Controller not
// made by NewController or Pair (the zero Controller), which has no runtime
// to send to or wait for.
var ErrNoRuntimes = errors.New("runtime: the controller has no runtimes (make it with NewController or Pair)")

// ErrZeroRuntime is returned by NewController and Stats given a Runtime
// not made by New or Pair (the zero Runtime), which has no workers: a
// controller over it would accept every command and apply none. Its
// Shutdown and Resume do nothing.
var ErrZeroRuntime = errors.New("runtime: the zero Runtime has no workers (make one with New or Pair)")

// ErrControlled is returned by NewController for a runtime another
// controller already sends to: two streams would number commands apart.
var ErrControlled = errors.New("runtime: runtime already has a controller")

// NewController returns a controller over runtimes: one Solo runtime, or
// one Maintenance runtime and the Interactive runtime that reads it (any
// other set is refused). The pair must run the same number of workers
// (worker i reads worker i, §4.6) and share their registries, and they all
// shard rows with dataflow.HashCols, one function; NewController checks
// the worker counts and the registries. A runtime takes one controller
// for its life, and none once shut down (ErrShutdown): of calls racing for
// the same runtimes, whatever order each names them in, exactly one takes
// them and the others are refused (ErrControlled). The runtimes of a
// pair it joins are shut down together: Shutdown of either is
// Controller.Shutdown (see Runtime.Shutdown), so the pair, like Solo,
// applies nothing after a Shutdown and reports no error for it.
func NewController(rts ...*Runtime) (*Controller, error) {
	// One Solo runtime, or a Maintenance runtime and the Interactive one
	// that reads it: an Interactive runtime alone would wait for a
	// publisher forever, a Maintenance runtime alone would reserve peer
	// holds for a reader that never comes, and two of a role would publish
	// or collect the same incarnations twice.
	var roles [3]int
	for _, r := range rts {
		if r == nil {
			return nil, errors.New("runtime: NewController: nil runtime")
		}
		if r.stop == nil {
			// A controller over it would accept every command and apply
			// none, and its Sync would wait for no worker forever.
			return nil, fmt.Errorf("runtime: NewController: %w", ErrZeroRuntime)
		}
		// A runtime shut down applies nothing: a controller over it would
		// refuse every command it is sent.
		if r.stopping() {
			return nil, fmt.Errorf("runtime: NewController: %v runtime is shut down: %w", r.opts.Role, ErrShutdown)
		}
		roles[r.opts.Role]++
	}
	solo, maint, inter := roles[Solo], roles[Maintenance], roles[Interactive]
	if !(solo == 1 && maint == 0 && inter == 0) && !(solo == 0 && maint == 1 && inter == 1) {
		return nil, fmt.Errorf("runtime: NewController: %d Solo, %d Maintenance and %d Interactive runtimes: want one Solo runtime, or one Maintenance and one Interactive runtime", solo, maint, inter)
	}
	for _, a := range rts {
		for _, b := range rts {
			if a == b || a.opts.Role == Solo || b.opts.Role == Solo {
				continue
			}
			if a.opts.Workers != b.opts.Workers {
				return nil, fmt.Errorf("runtime: %v runtime has %d workers, %v runtime %d: worker i reads worker i, so they must agree", a.opts.Role, a.opts.Workers, b.opts.Role, b.opts.Workers)
			}
			if !slices.Equal(a.opts.Registries, b.opts.Registries) {
				return nil, fmt.Errorf("runtime: %v and %v runtimes do not share their registries", a.opts.Role, b.opts.Role)
			}
		}
	}
	// The runtimes are claimed at once, all or none: every ctlMu is held
	// while any is looked at, taken in role order (Solo alone, or
	// Maintenance before Interactive), whatever order the caller named
	// them in. Two calls racing on one pair then serialise, and exactly
	// one takes it; claimed one at a time in the caller's order, each
	// could take its first runtime and find the other's taken, and both
	// fail. The shutdown is looked at again under ctlMu, which
	// Runtime.Shutdown marks a runtime stopping under: a runtime shut
	// down from now on finds its partner, and shuts it down too.
	locked := slices.SortedFunc(slices.Values(rts), func(a, b *Runtime) int { return cmp.Compare(a.opts.Role, b.opts.Role) })
	for _, r := range locked {
		r.ctlMu.Lock()
	}
	var err error
	for _, r := range rts {
		switch {
		case r.stopping():
			err = fmt.Errorf("runtime: NewController: %v runtime is shut down: %w", r.opts.Role, ErrShutdown)
		case r.controlled:
			err = fmt.Errorf("runtime: %v runtime: %w", r.opts.Role, ErrControlled)
		default:
			continue
		}
		break
	}
	if err == nil {
		for i, r := range rts {
			r.controlled = true
			if len(rts) == 2 {
				r.partner.Store(rts[1-i])
			}
		}
	}
	for _, r := range locked {
		r.ctlMu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	// A Maintenance runtime leads the Interactive runtime that shares its
	// registries (see Runtime.follower).
	for _, m := range rts {
		for _, i := range rts {
			if m.opts.Role == Maintenance && i.opts.Role == Interactive && m.follower == nil && !i.led {
				m.follower, i.led = i, true
				if len(m.workers) == len(i.workers) {
					// Worker k of the Interactive runtime reads worker k
					// of the Maintenance runtime (Options.Registries):
					// that one may run its wakes (worker.lend).
					for k, iw := range i.workers {
						iw.leader.Store(m.workers[k])
						m.workers[k].reader.Store(iw)
					}
				}
			}
		}
	}
	return &Controller{rts: rts, inputs: map[string]*inputDecl{}, dataflows: map[string][]string{}, indexes: map[string]*liveIndex{}}, nil
}

// Send validates cmd and sends it to every runtime (R1, R3). Input updates
// and frontier advances go only to the runtimes that maintain (Solo,
// Maintenance): only Maintained dataflows read inputs, so an Interactive
// runtime has no use for them, and waking it for each would cost every
// round a context switch on a busy machine. It
// returns an error, and sends nothing, for a command that is invalid as a
// whole; errors met while applying a valid command (a Build that fails, an
// import beyond its since) are reported by Errors, Err and TakeErrors,
// which hold them once Sync returns: a CommandError whose Seq and Command
// are the command's, and whose text names the dataflow ("dataflow ID: ",
// added to a Build's error that lacks it). A dataflow whose Build
// failed keeps its id, as in every runtime, until it is dropped. A command
// is sent by value: a pointer to one (or a type embedding one) is refused.
// A create's Desc.Exports is copied, so the caller may reuse its slice; an
// Input's chunk is not (see Input).
func (c *Controller) Send(cmd Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.sendLocked(cmd)
	c.flushLocked()
	return err
}

// SendAll sends cmds in order as Send would, one at a time, and stops at
// the first command the controller refuses, returning its error: the
// commands before it are sent, it and the ones after are not (R3 holds for
// each). The difference from calling Send in a loop is cost only: a worker
// is woken once for the whole batch rather than once per command, so a
// driver that sends a round's updates, frontier advances and compactions
// together pays one hand-off per worker for the round. Given no command
// it sends nothing and returns what a Send would before looking at its
// command: ErrNoRuntimes on the zero Controller, ErrShutdown once a
// runtime is shut down, nil otherwise.
func (c *Controller) SendAll(cmds ...Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.flushLocked()
	if len(cmds) == 0 {
		// No command to refuse, but a driver's empty round learns what
		// any Send would tell it.
		return c.usableLocked()
	}
	for _, cmd := range cmds {
		if err := c.sendLocked(cmd); err != nil {
			return err
		}
	}
	return nil
}

// sendLocked validates and records cmd and queues it on every runtime that
// takes it, waking no worker: flushLocked does. REQUIRES: c.mu held.
func (c *Controller) sendLocked(cmd Command) error {
	if err := c.usableLocked(); err != nil {
		return err
	}
	if err := c.validate(cmd); err != nil {
		return err
	}
	if cd, ok := cmd.(CreateDataflow); ok {
		// The runtimes read the exports when they apply the create, after
		// Send returns: they get the ids validated here, not whatever the
		// caller writes into its slice meanwhile.
		cd.Desc.Exports = slices.Clone(cd.Desc.Exports)
		cmd = cd
	}
	c.seq++
	c.record(cmd)
	input, quiet := false, false
	switch cmd.(type) {
	case Input, AdvanceInput, AllowInputCompaction:
		input = true
	case AllowCompaction:
		quiet = true
	}
	// An AllowCompaction reaches a led runtime quietly, and before its
	// leader, so that the leader's workers find it queued when they wake
	// the follower's (worker.nudge). There it moves peer holds, which are
	// released no earlier than before (a hold is never weakened, at most
	// kept until the leader's next wake), or the compaction of an index
	// the led runtime exports itself, which then waits for that wake too.
	for _, r := range c.rts {
		if quiet && r.led {
			r.queue(cmd, c.seq, false)
		}
	}
	for _, r := range c.rts {
		if input && r.opts.Role == Interactive || quiet && r.led {
			continue
		}
		r.queue(cmd, c.seq, true)
	}
	return nil
}

// usableLocked returns ErrNoRuntimes for the zero Controller and
// ErrShutdown once a runtime of the controller is shut down, the same in
// Solo and the pair: what every Send and SendAll returns then.
// REQUIRES: c.mu held.
func (c *Controller) usableLocked() error {
	if len(c.rts) == 0 {
		return ErrNoRuntimes
	}
	for _, r := range c.rts {
		if r.stopping() {
			return ErrShutdown // the same in Solo and the pair
		}
	}
	return nil
}

// flushLocked wakes every worker that sendLocked queued a command for.
// REQUIRES: c.mu held.
func (c *Controller) flushLocked() {
	for _, r := range c.rts {
		if r.pending {
			r.pending = false
			for _, w := range r.workers {
				w.signal()
			}
		}
	}
}

// validate checks cmd whole against the controller's state. REQUIRES: c.mu
// held.
func (c *Controller) validate(cmd Command) error {
	switch cmd := cmd.(type) {
	case nil:
		return errors.New("runtime: nil command")
	case CreateInput:
		switch {
		case cmd.Name == "":
			return errors.New("runtime: create input: empty Name")
		case cmd.Arity < 0:
			return fmt.Errorf("runtime: create input %q: Arity %d is negative", cmd.Name, cmd.Arity)
		case c.inputs[cmd.Name] != nil:
			return fmt.Errorf("runtime: create input %q: already declared", cmd.Name)
		}
	case Input:
		in := c.inputs[cmd.Name]
		if in == nil {
			return fmt.Errorf("runtime: input %q: unknown input (declare it with CreateInput)", cmd.Name)
		}
		ch := cmd.Chunk
		switch {
		case ch == nil:
			return fmt.Errorf("runtime: input %q: Chunk is nil", cmd.Name)
		case ch.Arity != in.arity:
			return fmt.Errorf("runtime: input %q: Chunk.Arity %d, the input has arity %d", cmd.Name, ch.Arity, in.arity)
		}
		if err := ch.Check(); err != nil {
			return fmt.Errorf("runtime: input %q: %w", cmd.Name, err)
		}
		if i := in.frontier.FirstBefore(ch.Times); i >= 0 {
			if in.frontier.IsEmpty() && ch.Len() > 0 {
				return fmt.Errorf("runtime: input %q: the input is closed (advanced to {}): it takes no more rows", cmd.Name)
			}
			return fmt.Errorf("runtime: input %q: Chunk row %d: time %d is before the input frontier %v", cmd.Name, i, ch.Times[i], in.frontier)
		}
	case AdvanceInput:
		in := c.inputs[cmd.Name]
		switch {
		case in == nil:
			return fmt.Errorf("runtime: advance input %q: unknown input (declare it with CreateInput)", cmd.Name)
		case !in.frontier.LessEqual(cmd.Frontier) && in.frontier.IsEmpty():
			return fmt.Errorf("runtime: advance input %q: the input is closed (advanced to {}): its frontier moves no more", cmd.Name)
		case !in.frontier.LessEqual(cmd.Frontier):
			return fmt.Errorf("runtime: advance input %q: Frontier %v is before the input frontier %v", cmd.Name, cmd.Frontier, in.frontier)
		}
	case DropInput:
		if c.inputs[cmd.Name] == nil {
			return fmt.Errorf("runtime: drop input %q: unknown input (declare it with CreateInput)", cmd.Name)
		}
	case AllowInputCompaction:
		in := c.inputs[cmd.Name]
		switch {
		case in == nil:
			return fmt.Errorf("runtime: allow compaction of input %q: unknown input (declare it with CreateInput)", cmd.Name)
		case !in.since.LessEqual(cmd.Frontier):
			return fmt.Errorf("runtime: allow compaction of input %q to %v: %v is allowed already: %w", cmd.Name, cmd.Frontier, in.since, ErrCompactionBackward)
		}
	case CreateDataflow:
		d := cmd.Desc
		switch {
		case d.ID == "":
			return errors.New("runtime: create dataflow: empty Desc.ID")
		case d.Build == nil:
			return fmt.Errorf("runtime: create dataflow %q: Desc.Build is nil", d.ID)
		case !d.AsOf.Less(d.Until):
			return fmt.Errorf("runtime: create dataflow %q: Desc.AsOf %v is not before Desc.Until %v", d.ID, d.AsOf, d.Until)
		case c.dataflows[d.ID] != nil:
			return fmt.Errorf("runtime: create dataflow %q: a dataflow with this id exists", d.ID)
		}
		seen := map[string]bool{}
		for _, id := range d.Exports {
			switch {
			case id == "":
				return fmt.Errorf("runtime: create dataflow %q: empty id in Desc.Exports", d.ID)
			case seen[id]:
				return fmt.Errorf("runtime: create dataflow %q: Desc.Exports lists %q twice", d.ID, id)
			case c.indexes[id] != nil:
				return fmt.Errorf("runtime: create dataflow %q: Desc.Exports: index %q is exported by dataflow %q", d.ID, id, c.indexes[id].by)
			}
			seen[id] = true
		}
	case DropDataflow:
		if c.dataflows[cmd.ID] == nil {
			return fmt.Errorf("runtime: drop dataflow %q: unknown dataflow", cmd.ID)
		}
	case AllowCompaction:
		prev := c.index(cmd.ID)
		if prev == nil {
			return fmt.Errorf("runtime: allow compaction of %q: unknown index", cmd.ID)
		}
		if !prev.since.LessEqual(cmd.Frontier) {
			if prev.asOf {
				return fmt.Errorf("runtime: allow compaction of %q to %v: its since is %v already, the as_of of dataflow %q, which exports it: %w", cmd.ID, cmd.Frontier, prev.since, prev.by, ErrCompactionBackward)
			}
			return fmt.Errorf("runtime: allow compaction of %q to %v: %v is allowed already: %w", cmd.ID, cmd.Frontier, prev.since, ErrCompactionBackward)
		}
	default:
		// A pointer to a command (*Input has Input's methods, so it is a
		// Command too), or a type embedding one: no worker applies it, so
		// accepted it would change nothing and be reported nowhere.
		return fmt.Errorf("runtime: command of type %T: send one of the command structs by value", cmd)
	}
	return nil
}

// index returns the live index id, or nil. REQUIRES: c.mu held.
func (c *Controller) index(id string) *liveIndex {
	if c.lastIndex != nil && id == c.lastID {
		return c.lastIndex
	}
	ix := c.indexes[id]
	if ix != nil {
		c.lastIndex, c.lastID = ix, id
	}
	return ix
}

// setIndex records ix as the live index id. REQUIRES: c.mu held.
func (c *Controller) setIndex(id string, ix *liveIndex) {
	c.indexes[id] = ix
	c.lastIndex, c.lastID = nil, ""
}

// dropIndex forgets the live index id. REQUIRES: c.mu held.
func (c *Controller) dropIndex(id string) {
	delete(c.indexes, id)
	c.lastIndex, c.lastID = nil, ""
}

// record applies a validated cmd, numbered c.seq, to the controller's
// state. REQUIRES: c.mu held.
func (c *Controller) record(cmd Command) {
	switch cmd := cmd.(type) {
	case CreateInput:
		c.inputs[cmd.Name] = &inputDecl{arity: cmd.Arity}
	case AdvanceInput:
		c.inputs[cmd.Name].frontier = cmd.Frontier
	case AllowInputCompaction:
		c.inputs[cmd.Name].since = cmd.Frontier
	case DropInput:
		delete(c.inputs, cmd.Name)
	case CreateDataflow:
		c.dataflows[cmd.Desc.ID] = append([]string{}, cmd.Desc.Exports...)
		if c.incs == nil {
			c.incs = map[string]uint64{}
		}
		c.incs[cmd.Desc.ID] = c.seq
		for _, id := range cmd.Desc.Exports {
			// A new incarnation: its since starts at the create's as_of
			// (dataflow D5), nothing allowed of it yet.
			c.setIndex(id, &liveIndex{by: cmd.Desc.ID, since: cmd.Desc.AsOf, asOf: true})
		}
	case DropDataflow:
		for _, id := range c.dataflows[cmd.ID] {
			if ix := c.indexes[id]; ix != nil && ix.by == cmd.ID {
				c.dropIndex(id)
			}
		}
		delete(c.dataflows, cmd.ID)
		if ti := c.takenDrops[c.incs[cmd.ID]]; ti != nil && ti.drop == 0 {
			ti.drop = c.seq
			heap.Push(&c.forget, forgetAt{seq: c.seq, inc: c.incs[cmd.ID]})
		}
		delete(c.incs, cmd.ID)
	case AllowCompaction:
		if cmd.Frontier.IsEmpty() {
			c.dropIndex(cmd.ID)
		} else if ix := c.index(cmd.ID); ix != nil {
			ix.since, ix.asOf = cmd.Frontier, false
		}
	}
}

// Sync waits until every runtime has applied every command sent before it.
// A nil ctx is refused at once (ErrNilContext), before anything else is
// looked at. Called from a Build, on a worker's goroutine of one of the controller's
// runtimes, it returns ErrOnWorker at once, and from a Step there after
// about half a millisecond: it would wait for the worker running its
// caller, in Solo as in the pair.
//
// If ctx ends first (or the runtimes shut down), Sync returns an error
// wrapping ctx's (or ErrShutdown) and leaves nothing queued: its barrier
// is taken out of every worker's queue that still holds it, as SyncRole's
// and Stats' are. A health check polling with short timeouts while a
// worker is stuck (a Build waiting on something outside the runtime)
// leaves at most one barrier a worker behind, one the worker had taken
// with the commands of the wake it is stuck in, however many calls it
// makes; it queued one a call before. A Sync that returns nil has waited
// for everything sent before it, whatever Syncs gave up before it.
//
// The Interactive runtime of a pair is synced first: it applies its copy of
// an AllowCompaction in a wake of its own (R6), often the wake of this very
// barrier, and the peer holds that copy moves reach the Maintenance runtime
// as a wake; synced after the Maintenance runtime, those moves came after
// its barrier, and a Stats read at once could find them unapplied (a
// hold gap above 0 with nothing holding the index back). Synced before it,
// every such move is made before the Maintenance barrier is sent, and the
// Maintenance runtime's wake for it ends with the Maintain that applies
// them. Then the Interactive runtime is synced once more: a barrier steps
// the runtime's active dataflows before it passes, so the queries have
// stepped over everything the Maintenance runtime published for the
// commands before the Sync, as they had when the Maintenance runtime was
// synced first (a caller that syncs after each advance sees its queries
// pass every frontier, not only the last of two advances published in
// quick succession). On a runtime of several workers with exchanges, the
// Maintenance (or Solo) barrier and that last one are sent again until
// a round in which no worker stepped (settle): a reader whose updates
// cross workers has then stepped over what was sent too.
func (c *Controller) Sync(ctx context.Context) error {
	if ctx == nil {
		return errNilContext("Sync")
	}
	if len(c.rts) == 0 {
		return ErrNoRuntimes
	}
	for i, led := range [3]bool{true, false, true} {
		for _, r := range c.rts {
			if r.led != led {
				continue
			}
			if i == 0 {
				if err := r.guardedBarrier(ctx, nil, c.rts); err != nil {
					return err
				}
				continue
			}
			if err := r.settle(ctx, c.rts); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleRounds is the most barriers settle sends after its first.
const settleRounds = 8

// settle is Sync's barrier on r (guarded by guard), sent again while a
// worker stepped a dataflow since its last one, at most settleRounds more
// times. A barrier steps each worker's active dataflows as it passes it,
// one worker after another: on a runtime of several workers, a step of
// one after its peer had passed the barrier sends that peer chunks and a
// frontier through an exchange (the only way one worker activates another
// in a runtime), which the peer steps only in a wake of its own, after
// Sync returned. So a reader of an index by another column than the
// first stayed one time behind what was sent, after nearly every Sync in
// Solo and in the pair. Once a round finds every worker's count of steps
// where the round before left it, no worker stepped between the two, so
// none was activated by a peer's step since it passed the first of them,
// and the dataflows have stepped over every command before the Sync. A
// runtime of one worker, or with no exchange, is settled by its first
// barrier; one still stepping after settleRounds (a driver sending the
// next rounds meanwhile from another goroutine) is left to its wakes.
func (r *Runtime) settle(ctx context.Context, guard []*Runtime) error {
	steps := make([]int, len(r.workers))
	record := func(w *worker) { steps[w.index] = w.steps }
	if err := r.guardedBarrier(ctx, record, guard); err != nil {
		return err
	}
	prev := make([]int, len(steps))
	for range settleRounds {
		if len(r.workers) == 1 || r.hub.Len() == 0 {
			return nil
		}
		copy(prev, steps)
		if err := r.guardedBarrier(ctx, record, guard); err != nil {
			return err
		}
		if slices.Equal(prev, steps) {
			return nil
		}
	}
	return nil
}

// SyncRole is Sync for the controller's runtime of one role: it waits
// until that runtime has applied every command sent before it, and not for
// the other. It sends one barrier and does not settle as Sync does: on
// several workers with an exchange, a reader across it may have stepped
// over what was sent only in a wake after SyncRole returns (a query's
// build, which SyncRole times, needs no such settling). A query's create is the Interactive runtime's alone (the
// Maintenance runtime only records it), so a caller timing a query's build
// waits for the runtime that builds it, not for a wake of the other. It
// returns an error if the controller has no runtime of that role (a Solo
// runtime is of role Solo only: a Solo controller has no Interactive
// runtime), and, as Sync, one wrapping ErrNilContext at once for a nil
// ctx, one wrapping ctx's error or ErrShutdown if ctx
// ends or that runtime is shut down first (the other runtime's shutdown is
// not its concern: Send reports it), and ErrOnWorker called on a worker's
// goroutine of that runtime. Called from a Build on one of the other
// runtime's, it returns ErrOnWorker at once too, as Stats of the pair's
// other runtime does: the Interactive runtime may be waiting for the
// verdict of the create its caller builds, and the Maintenance runtime
// answers as soon as it happens to, so only a refusal is the same every
// time, and the same as Solo's. From a Step on one of the other runtime's
// it answers if that runtime answers within about half a millisecond,
// and returns ErrOnWorker if not.
func (c *Controller) SyncRole(ctx context.Context, role Role) error {
	if ctx == nil {
		return errNilContext("SyncRole")
	}
	for _, r := range c.rts {
		if r.opts.Role == role {
			return r.guardedBarrier(ctx, nil, c.rts)
		}
	}
	return fmt.Errorf("runtime: sync: the controller has no %v runtime", role)
}

// Errors returns the errors the runtimes met applying accepted commands,
// one per command and message however many runtimes and workers met it,
// in command order (a command's by message). An operator's panic
// (dataflow.ErrOperatorPanicked) met on several workers is one error: its
// message is compared without the stack it ends with, which differs per
// worker, and the first worker's is kept whole. Recording an error costs a
// runtime one lookup among those it keeps, and Errors one per error kept,
// so errors left untaken cost time linear in their number.
func (c *Controller) Errors() []*CommandError { return c.errors(false) }

// TakeErrors is Errors, and forgets the errors it returns: a caller that
// handled them consumes them, and a command's error is returned once
// however many runtimes meet it, also when one meets it after the take. So
// is a step's error of a dataflow, however many workers meet it, also
// after the take, a merge's overflow and an error reported off a worker's
// goroutine among them: the controller keeps what it returned of each
// incarnation of a dataflow until every worker has applied its drop, then
// forgets it (a create of the same id again reports its own errors). No
// worker reports an error of an incarnation after it applied its drop.
func (c *Controller) TakeErrors() []*CommandError { return c.errors(true) }

func (c *Controller) errors(take bool) []*CommandError {
	// taken is read and written under the controller's lock; the
	// runtimes' errors under each runtime's.
	c.mu.Lock()
	defer c.mu.Unlock()
	// Commands every worker has applied can meet no error again: what
	// is taken of them need not be remembered. Read before the errors:
	// a worker records a command's errors before it counts the command
	// applied, so every error of a command at or below done is among
	// those read below, and none can come after the taken keys that
	// would filter it are forgotten.
	done := uint64(math.MaxUint64)
	for _, r := range c.rts {
		for _, w := range r.workers {
			done = min(done, w.applied.Load())
		}
	}
	var out []*CommandError
	// Every error is looked up once, by its key (a runtime's errors are
	// one per key already): the first runtime's copy of an error met by
	// several is the one returned.
	var seen map[errKey]struct{}
	if len(c.rts) > 1 {
		seen = map[errKey]struct{}{}
	}
	for _, r := range c.rts {
		r.errMu.Lock()
		for _, e := range r.errs {
			k := e.key()
			if c.taken[k] {
				continue // taken already, met again by a runtime or worker behind
			}
			if seen != nil {
				if _, ok := seen[k]; ok {
					continue
				}
				seen[k] = struct{}{}
			}
			out = append(out, e)
		}
		if take {
			r.errs, r.errKeys = nil, nil
		}
		r.errMu.Unlock()
	}
	if take {
		for _, e := range out {
			if e.Seq == 0 && e.inc == 0 {
				continue // of no command nor incarnation (ErrWorkerExited, the runtimes shut down): not kept
			}
			if c.taken == nil {
				c.taken = map[errKey]bool{}
			}
			k := e.key()
			c.taken[k] = true
			if e.Seq != 0 {
				heap.Push(&c.forget, forgetAt{seq: e.Seq, key: k})
				continue
			}
			ti := c.takenDrops[e.inc]
			if ti == nil {
				if c.takenDrops == nil {
					c.takenDrops = map[uint64]*takenInc{}
				}
				ti = &takenInc{}
				c.takenDrops[e.inc] = ti
				if c.incs[e.df] != e.inc {
					// Dropped already (or another incarnation lives):
					// every command sent so far covers its drop.
					ti.drop = c.seq
					heap.Push(&c.forget, forgetAt{seq: c.seq, inc: e.inc})
				}
			}
			ti.keys = append(ti.keys, k)
		}
		for len(c.forget) > 0 && c.forget[0].seq <= done {
			f := heap.Pop(&c.forget).(forgetAt)
			c.forgotExamined++
			if f.inc == 0 {
				delete(c.taken, f.key)
				continue
			}
			if ti := c.takenDrops[f.inc]; ti != nil {
				for _, k := range ti.keys {
					c.forgotExamined++
					delete(c.taken, k)
				}
				delete(c.takenDrops, f.inc)
			}
		}
	}
	// By command, then by message: a command's errors met by several
	// runtimes (a drop whose importers the Maintenance runtime renders
	// some of and the Interactive runtime others) come in the same order
	// as from one Solo runtime.
	slices.SortStableFunc(out, func(a, b *CommandError) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), strings.Compare(a.name, b.name))
	})
	return out
}

// Err returns Errors joined, or nil.
func (c *Controller) Err() error {
	var errs []error
	for _, e := range c.Errors() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Shutdown shuts every runtime down: it stops them all before it waits for
// any, so the Interactive runtime of a pair does not go on applying its
// queued commands against a Maintenance runtime that has left (every
// create it then met would be abandoned, and its queries would fail on
// indexes that never came: errors Solo never reports). Shutting down
// either runtime of the pair directly (Runtime.Shutdown) does the same.
// As Runtime.Shutdown, it returns once every Build being run has
// returned (dataflow.Context.Done tells a waiting Build to), and, called
// from a Build or a Step, without waiting for the workers.
func (c *Controller) Shutdown() {
	shutdown(c.rts...)
}

// Pair starts a Maintenance and an Interactive runtime of w workers sharing
// one registry per worker pair, and a controller over both. Shutting down
// the controller or either runtime shuts down both runtimes
// (Runtime.Shutdown).
func Pair(w int, sp spine.Options) (maint, inter *Runtime, ctl *Controller, err error) {
	if w < 1 {
		// New's error, before the registries are made for w workers.
		return nil, nil, nil, fmt.Errorf("runtime: %d workers: need at least one", w)
	}
	if w > MaxWorkers {
		return nil, nil, nil, fmt.Errorf("runtime: %d workers: at most %d", w, MaxWorkers)
	}
	regs := make([]*share.Registry, w)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	maint, err = New(Options{Role: Maintenance, Workers: w, Registries: regs, Spine: sp})
	if err != nil {
		return nil, nil, nil, err
	}
	inter, err = New(Options{Role: Interactive, Workers: w, Registries: regs, Spine: sp})
	if err != nil {
		maint.Shutdown()
		return nil, nil, nil, err
	}
	ctl, err = NewController(maint, inter)
	if err != nil {
		maint.Shutdown()
		inter.Shutdown()
		return nil, nil, nil, err
	}
	return maint, inter, ctl, nil
}
