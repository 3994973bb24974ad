package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tracebench/tracebench/core/frontier"
)

// Probe observes a stream's frontier on every worker of a runtime; its
// frontier is the meet over the workers. Safe for concurrent use.
type Probe struct {
	mu      sync.Mutex
	fronts  []frontier.Frontier
	joined  []bool
	changed chan struct{} // closed and replaced on a change while waiting
	waiting bool          // a WaitPassed holds changed: the next change must close it
	// made is the number of workers the probe was made for (NewProbe's
	// argument, negative too), which attaching it checks: a probe made for
	// none, or the zero Probe, has no worker to report and never passes.
	made int
	// attached records, per worker, that an operator of some dataflow
	// reports to the probe: a second would set the worker's frontier
	// from another stream (and a capture's rows would mix), so
	// attaching one again fails the build (checkProbe).
	attached []bool
	// live counts the operators reporting to the probe that are not yet
	// shut down: when the last goes (its dataflow dropped, or its create
	// failed), nothing can move the probe again (attached stays set), and
	// a wait for a time it has not passed returns ErrProbeDropped.
	live int
	// onWorker is the Env.OnWorker of the runtime whose workers last
	// attached the probe (nil: none), which WaitPassed asks whether its
	// caller is one of the goroutines that must move the probe.
	onWorker func() error
	// stopErr is set once the workers feeding the probe have stopped for
	// good (Stopper.Stop): no worker moves the probe again, and a wait for
	// a time it has not passed returns it instead of waiting for its
	// context to end.
	stopErr error
	// frozen has, per worker, the error that stopped the operator feeding
	// the probe there for good (freeze; nil: none), and limit the
	// frontier that worker's part of the probe never passes from then on:
	// where it stood (a panic, a refused chunk: freeze), or the output
	// frontier of a failed operator upstream of it (freezeAt).
	frozen []error
	limit  []frontier.Frontier
}

// ErrStopped is wrapped by a probe's wait (Probe.WaitPassed) for a time
// the probe has not passed once the workers feeding it have stopped for
// good, when their Stopper was stopped with no error of its own (a
// runtime's is runtime.ErrShutdown).
var ErrStopped = errors.New("dataflow: the workers feeding the probe have stopped")

// ErrProbeDropped is wrapped by a probe's wait (Probe.WaitPassed) for a
// time the probe has not passed once the dataflow feeding it is dropped on
// every worker that attached it (dropped by its command, or its create
// failed): nothing moves the probe again, as a probe reads one stream of
// one dataflow.
var ErrProbeDropped = errors.New("dataflow: the dataflow feeding the probe was dropped")

// ErrNilContext is wrapped by the error of a wait given a nil context
// (Probe.WaitPassed, and runtime's Sync, SyncRole and Stats, whose
// runtime.ErrNilContext it is): refused at once, whatever the probe or the
// runtime is at, where it panicked when the call had to wait and answered
// when it had not, which depended on timing. A wait with no deadline takes
// context.Background().
var ErrNilContext = errors.New("nil context (context.Background() waits with no deadline)")

// ErrNoWorker is wrapped by the wait (Probe.WaitPassed) of a probe made
// for no worker (NewProbe, NewCapture or NewTally of fewer than one, or
// the zero Probe, Capture or Tally): no runtime can attach it, so it never
// passes a time, and the wait returns at once instead of until its
// context ends.
var ErrNoWorker = errors.New("dataflow: the probe was made for no worker (make it for the runtime's workers): it never passes a time")

// Stopper ends the waits on the probes a runtime's workers attach
// (Env.Stopper) once the runtime stops: nothing moves those probes after
// it. A probe is its Stopper's from its attachment until its operator is
// shut down (its dataflow dropped: its waits then end with
// ErrProbeDropped), so a dropped dataflow's probe is not kept. The stop reaches a wait through the probe's own change channel,
// so a wait selects on nothing more than a change and its context.
type Stopper struct {
	mu     sync.Mutex
	err    error // set by Stop
	probes map[*Probe]int
}

// NewStopper returns a Stopper not yet stopped.
func NewStopper() *Stopper { return &Stopper{probes: map[*Probe]int{}} }

// Stop records err (ErrStopped when nil) as the error of every wait, on a
// probe of the Stopper's, for a time the probe has not passed, and ends
// the waits in progress. Only the first call records its error, and none
// on a nil Stopper; every call returns once each probe is stopped. The
// probes are stopped under the Stopper's lock, so that a second call (a
// runtime's Shutdown from two goroutines at once) does not return while
// the first is still stopping them: its caller then signals the workers,
// which drop their dataflows, and a probe not yet stopped would end its
// waits with ErrProbeDropped instead of the runtime's error. A probe's
// own lock is taken inside the Stopper's, never the other way round.
func (s *Stopper) Stop(err error) {
	if s == nil {
		return
	}
	if err == nil {
		err = ErrStopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	for p := range s.probes {
		p.stop(err)
	}
	s.probes = nil
}

// add makes p the Stopper's (once per attaching worker); a Stopper
// already stopped stops p at once.
func (s *Stopper) add(p *Probe) {
	s.mu.Lock()
	err := s.err
	if err == nil {
		s.probes[p]++
	}
	s.mu.Unlock()
	if err != nil {
		p.stop(err)
	}
}

// remove undoes one add: the last worker's leaves p to its context.
func (s *Stopper) remove(p *Probe) {
	s.mu.Lock()
	if n, ok := s.probes[p]; ok {
		if n <= 1 {
			delete(s.probes, p)
		} else {
			s.probes[p] = n - 1
		}
	}
	s.mu.Unlock()
}

// NewProbe returns a probe for a dataflow running on workers workers. A
// probe made for fewer than one worker (or the zero Probe) never passes a
// time (a wait on it is an error wrapping ErrNoWorker), and attaching it
// fails the build, as for any other count than the runtime's.
func NewProbe(workers int) *Probe {
	p := &Probe{}
	p.init(workers)
	return p
}

func (p *Probe) init(workers int) {
	n := max(workers, 0)
	p.made, p.fronts, p.joined, p.attached, p.changed = workers, make([]frontier.Frontier, n), make([]bool, n), make([]bool, n), make(chan struct{})
	p.frozen, p.limit = make([]error, n), make([]frontier.Frontier, n)
}

func (p *Probe) set(worker int, f frontier.Frontier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fronts[worker] == f && p.joined[worker] {
		return
	}
	p.fronts[worker], p.joined[worker] = f, true
	if p.waiting {
		// Only a waiter holds changed; with none, a change (every round on
		// every worker) costs no channel.
		close(p.changed)
		p.changed, p.waiting = make(chan struct{}), false
	}
}

// Frontier returns the meet of the workers' frontiers ({0} until every
// worker has reported, and for a probe made for no worker: the meet over
// none would be {}, complete, and every wait on it would return at once).
func (p *Probe) Frontier() frontier.Frontier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frontierLocked()
}

func (p *Probe) frontierLocked() frontier.Frontier {
	if len(p.fronts) == 0 {
		return frontier.Min()
	}
	f := frontier.Empty()
	for i, x := range p.fronts {
		if !p.joined[i] {
			return frontier.Min()
		}
		f = f.Meet(x)
	}
	return f
}

// watch records onWorker (Env.OnWorker) as the probe's: the runtime
// attaching it feeds it from now on.
func (p *Probe) watch(onWorker func() error) {
	p.mu.Lock()
	p.onWorker = onWorker
	p.mu.Unlock()
}

// stop records err as the error of a wait for a time the probe has not
// passed (the first error only), and ends the wait in progress.
func (p *Probe) stop(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopErr == nil {
		p.stopErr = err
	}
	if p.waiting {
		close(p.changed)
		p.changed, p.waiting = make(chan struct{}), false
	}
}

// freeze records that the operator feeding the probe on worker sets its
// frontier there no more, stopped by err: its dataflow stepped nothing
// more on that worker after an operator's Step panicked, or a capture
// refused a chunk against the operator contract. The probe's frontier is
// the meet over the workers, so it never passes a time that worker's
// frontier had not: a wait for one returns an error wrapping err, also a
// wait already in progress, where it lasted until its context ended. A
// worker frozen already keeps its freeze unless this one's frontier is
// earlier (freezeLocked).
func (p *Probe) freeze(worker int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if worker < 0 || worker >= len(p.frozen) {
		return
	}
	limit := frontier.Min() // a worker that never reported passed nothing
	if p.joined[worker] {
		limit = p.fronts[worker]
	}
	p.freezeLocked(worker, limit, err)
}

// freezeAt records that the probe's part on worker never passes limit:
// an operator upstream of it there failed (Env.Fail from its Step) and
// its output frontier is held at limit for good, so the frontier the
// probe reads there can come up to limit (what was in flight) but never
// pass it. A wait for a time limit has not passed returns an error
// wrapping err, also a wait in progress; a wait for an earlier time waits
// as before. A worker frozen already keeps its freeze unless limit is
// earlier (freezeLocked).
func (p *Probe) freezeAt(worker int, limit frontier.Frontier, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if worker < 0 || worker >= len(p.frozen) {
		return
	}
	p.freezeLocked(worker, limit, err)
}

// freezeLocked records worker's freeze and ends the wait in progress. A
// worker frozen already keeps its freeze unless the new limit is earlier
// (a tighter bound: a failed index's import that then ended short of the
// failure's limit, say). REQUIRES: p.mu held, worker in range.
func (p *Probe) freezeLocked(worker int, limit frontier.Frontier, err error) {
	if p.frozen[worker] != nil && !limit.Less(p.limit[worker]) {
		return
	}
	p.frozen[worker], p.limit[worker] = err, limit
	if p.waiting {
		close(p.changed)
		p.changed, p.waiting = make(chan struct{}), false
	}
}

// frozenBeforeLocked returns the error of a frozen worker whose limit has
// not passed t (nil: none), which the probe then never passes.
// REQUIRES: p.mu held.
func (p *Probe) frozenBeforeLocked(t frontier.Time) error {
	for w, err := range p.frozen {
		if err != nil && p.limit[w].Beyond(t) {
			return err
		}
	}
	return nil
}

// attach records that an operator on worker reports to the probe, and
// reports false if one already does (or did: a dropped dataflow's).
func (p *Probe) attach(worker int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.attached[worker] {
		return false
	}
	p.attached[worker] = true
	p.live++
	return true
}

// leave is called at the Shutdown of an operator reporting to p (one that
// attach accepted): it leaves the runtime's Stopper (nil: none), and the
// last one ends the waits with ErrProbeDropped, unless the probe was
// stopped before (a runtime's Shutdown drops its dataflows after its
// Stopper has stopped: the wait's error is then the runtime's).
func (p *Probe) leave(s *Stopper) {
	if s != nil {
		s.remove(p)
	}
	p.mu.Lock()
	p.live--
	last := p.live == 0
	p.mu.Unlock()
	if last {
		p.stop(ErrProbeDropped)
	}
}

// Passed reports whether the frontier has passed t: no more changes at t.
func (p *Probe) Passed(t frontier.Time) bool { return !p.Frontier().Beyond(t) }

// WaitPassed blocks until the frontier has passed t or ctx ends, or the
// runtime feeding the probe is shut down: then, unless the frontier had
// passed t, it returns an error wrapping runtime.ErrShutdown (the error
// the runtime's Stopper was stopped with), as nothing moves the frontier
// any more; before, it waited until ctx ended. Once the dataflow feeding
// the probe is dropped on every worker that attached it (or its create
// failed), a wait for a time not passed returns an error wrapping
// ErrProbeDropped, for the same reason; a runtime stopped before the drop
// keeps its own error. Once the operator feeding the probe on some worker
// has stopped for good (its dataflow's operator panicked there, or a
// capture refused a chunk), a wait for a time that worker had not passed
// returns an error wrapping that failure (freeze), before a drop's or a
// stop's; so does a wait for a time at or past the frontier an operator
// upstream of it there is held at for good (freezeAt: the operator failed
// its step, the index an import reads ended or failed). A probe no
// runtime has attached yet (its
// dataflow's create not applied, or discarded by the Shutdown) waits for
// ctx; one made for no worker, which none can attach, returns an error
// wrapping ErrNoWorker at once. Called
// from a Build on a worker of the runtime whose dataflows feed the probe
// (or of the pair's other runtime: the pair counts as one), it returns an
// error wrapping runtime.ErrOnWorker at once, whether or not the frontier
// has passed t: only those workers move it, and the one running the Build
// applies and steps nothing until it returns, so the wait would last until
// ctx ends, and an answer that depended on how far the workers had got
// would differ between Solo and the pair. Called from an operator's Step
// there, it is not told apart (see Desc.Build). A nil ctx is refused at
// once, with an error wrapping ErrNilContext, whether or not the frontier
// has passed t.
func (p *Probe) WaitPassed(ctx context.Context, t frontier.Time) error {
	if ctx == nil {
		return fmt.Errorf("dataflow: probe waiting to pass %d: %w", t, ErrNilContext)
	}
	if p.made < 1 {
		return fmt.Errorf("dataflow: probe made for %d workers waiting to pass %d: %w", p.made, t, ErrNoWorker)
	}
	for {
		// The frontier and the stop are read under one lock: a time the
		// probe passed before its workers stopped is never reported as
		// not passed.
		p.mu.Lock()
		f, ch, onWorker, stopErr := p.frontierLocked(), p.changed, p.onWorker, p.stopErr
		passed := !f.Beyond(t)
		if !passed {
			// A worker stopped short of t is why the probe will not
			// pass it, before a drop or a shutdown that came after.
			if err := p.frozenBeforeLocked(t); err != nil {
				stopErr = err
			}
		}
		if !passed && stopErr == nil {
			p.waiting = true
		}
		p.mu.Unlock()
		if !passed && stopErr != nil {
			return fmt.Errorf("dataflow: probe at %v waiting to pass %d: %w", f, t, stopErr)
		}
		if onWorker != nil {
			if err := onWorker(); err != nil {
				return fmt.Errorf("dataflow: probe waiting to pass %d: %w", t, err)
			}
		}
		if passed {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("dataflow: probe at %v waiting to pass %d: %w", f, t, ctx.Err())
		}
	}
}

type probeOp struct {
	p       *Probe
	worker  int
	stopper *Stopper // the runtime's (Env.Stopper); nil: none
}

func (o *probeOp) Step(in frontier.Frontier) frontier.Frontier {
	o.p.set(o.worker, in)
	return frontier.Empty()
}

func (o *probeOp) Shutdown() { o.p.leave(o.stopper) }

func (o *probeOp) probed() (*Probe, int) { return o.p, o.worker }

// freezer is an operator that reports to a probe (a probe's, a capture's
// or a tally's) on its worker, which its dataflow freezes when it stops
// stepping on that worker for good (Probe.freeze), or when an operator
// upstream of it there fails and holds its output frontier (Probe.freezeAt).
type freezer interface {
	probed() (p *Probe, worker int)
}
