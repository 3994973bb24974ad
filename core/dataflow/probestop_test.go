package dataflow

import (
	"context"
	"errors"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// A wait whose probe passed its time before the workers stopped returns
// nil: the stop only ends a wait that nothing can end any more. The
// frontier and the stop are read under the probe's one lock, so a time
// the last worker moved the probe past just before the stop is never
// reported as not passed.
func TestAWaitForATimePassedBeforeTheStopReturnsNil(t *testing.T) {
	p := NewProbe(1)
	p.attach(0)
	s := NewStopper()
	s.add(p)
	p.set(0, frontier.At(3))
	p.set(0, frontier.At(6))
	s.Stop(nil)
	if err := p.WaitPassed(context.Background(), 5); err != nil {
		t.Fatalf("WaitPassed(5) = %v after the probe passed 5 and then stopped; want nil", err)
	}
	// A time not passed at the stop is its error.
	if err := p.WaitPassed(context.Background(), 6); !errors.Is(err, ErrStopped) {
		t.Fatalf("WaitPassed(6) on a stopped probe at {6} = %v; want ErrStopped", err)
	}
}

// The stop ends a wait already in progress (through the probe's change
// channel: the wait selects on nothing else but its context), with the
// Stopper's error; a probe attached after the stop is stopped at once,
// and one whose operator was shut down (its dataflow dropped) is no
// longer the Stopper's: its waits end with ErrProbeDropped.
func TestAStopperEndsWaitsInProgressAndLetsDroppedProbesGo(t *testing.T) {
	mine := errors.New("the runtime stopped")
	s := NewStopper()
	waiting := NewProbe(1)
	waiting.attach(0)
	s.add(waiting)
	dropped := NewProbe(1)
	dropped.attach(0)
	s.add(dropped)
	(&probeOp{p: dropped, stopper: s}).Shutdown()
	done := make(chan error, 1)
	go func() { done <- waiting.WaitPassed(context.Background(), 1) }()
	// Stop once the wait holds the probe's change channel.
	for {
		waiting.mu.Lock()
		w := waiting.waiting
		waiting.mu.Unlock()
		if w {
			break
		}
		goruntime.Gosched()
	}
	s.Stop(mine)
	s.Stop(errors.New("a second stop"))
	if err := <-done; !errors.Is(err, mine) {
		t.Fatalf("wait in progress ended with %v; want the Stopper's error", err)
	}
	if len(s.probes) != 0 {
		t.Fatalf("a stopped Stopper keeps %d probes", len(s.probes))
	}
	dropped.mu.Lock()
	derr := dropped.stopErr
	dropped.mu.Unlock()
	if !errors.Is(derr, ErrProbeDropped) {
		t.Fatalf("a probe shut down before the stop: %v; want ErrProbeDropped, not the Stopper's error", derr)
	}
	late := NewProbe(1)
	late.attach(0)
	s.add(late)
	if err := late.WaitPassed(context.Background(), 1); !errors.Is(err, mine) {
		t.Fatalf("a probe attached after the stop: %v; want the Stopper's error", err)
	}
	var none *Stopper
	none.Stop(nil) // no runtime, no stopper: nothing to do
}

// Two Stops at once (a runtime's Shutdown from two goroutines): the
// second returns only once the first has stopped every probe. Its caller
// goes on to signal the workers, which drop their dataflows; a probe the
// first had not reached yet would end its waits with ErrProbeDropped, not
// the runtime's error. The test holds one probe's lock, so the first Stop
// cannot finish while it does; the second must not return meanwhile.
func TestASecondStopReturnsOnceEveryProbeIsStopped(t *testing.T) {
	first, second := errors.New("the first stop"), errors.New("the second stop")
	s := NewStopper()
	probes := make([]*Probe, 64)
	for k := range probes {
		probes[k] = NewProbe(1)
		probes[k].attach(0)
		s.add(probes[k])
	}
	held := probes[17]
	held.mu.Lock()
	firstDone := make(chan struct{})
	go func() { defer close(firstDone); s.Stop(first) }()
	// Wait until the first Stop has begun: it holds the Stopper's lock
	// (stopping the probes) or has recorded its error.
	for {
		if !s.mu.TryLock() {
			break
		}
		begun := s.err != nil
		s.mu.Unlock()
		if begun {
			break
		}
		goruntime.Gosched()
	}
	secondDone := make(chan struct{})
	go func() { defer close(secondDone); s.Stop(second) }()
	select {
	case <-secondDone:
		t.Error("a second Stop returned while the first had a probe still to stop")
	case <-time.After(50 * time.Millisecond):
	}
	held.mu.Unlock()
	<-firstDone
	<-secondDone
	for k, p := range probes {
		if err := p.WaitPassed(context.Background(), 1); !errors.Is(err, first) {
			t.Fatalf("probe %d: %v, want the first stop's error", k, err)
		}
	}
	// A probe that leaves after the stop (its dataflow dropped as the
	// runtime's workers exit) keeps the stop's error.
	(&probeOp{p: held, stopper: s}).Shutdown()
	if err := held.WaitPassed(context.Background(), 1); !errors.Is(err, first) {
		t.Fatalf("a probe dropped after the stop: %v, want the stop's error", err)
	}
}

// buildProbed builds dataflow id on env: input "in" of 2 columns arranged
// by its first, with p on its oks stream and cp and tl on its oks half.
func buildProbed(t *testing.T, env *Env, id string, p *Probe, cp *Capture, tl *Tally) *Dataflow {
	t.Helper()
	df, err := Build(env, Desc{ID: id, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		arr, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		c.Probe(p, arr.Oks.Stream)
		c.Capture(cp, arr.Oks)
		c.Tally(tl, arr.Oks)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// A dataflow's probe, capture and tally are the runtime's Stopper's from
// their attachment until the dataflow is dropped: a runtime that creates
// and drops queries keeps no dropped capture (and its rows) alive, and a
// live one is stopped at the runtime's stop.
func TestADroppedDataflowsProbesLeaveTheStopper(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	s := NewStopper()
	env.Stopper = s
	build := func(id string, p *Probe, cp *Capture, tl *Tally) *Dataflow { return buildProbed(t, env, id, p, cp, tl) }
	dropped := build("dropped", NewProbe(1), NewCapture(1), NewTally(1))
	if len(s.probes) != 3 {
		t.Fatalf("the Stopper holds %d probes after a build with a probe, a capture and a tally; want 3", len(s.probes))
	}
	dropped.Drop()
	if len(s.probes) != 0 {
		t.Fatalf("the Stopper keeps %d probes of a dropped dataflow", len(s.probes))
	}
	live := NewCapture(1)
	build("live", NewProbe(1), live, NewTally(1))
	s.Stop(nil)
	if err := live.WaitPassed(context.Background(), 0); !errors.Is(err, ErrStopped) {
		t.Fatalf("a live capture's wait after the stop: %v; want ErrStopped", err)
	}
}

// A wait on the probe, capture or tally of a dataflow dropped on every
// worker that attached it returns ErrProbeDropped, also one already
// waiting at the drop: nothing moves them again (one reads one stream of
// one dataflow). A probe still attached on another worker keeps waiting,
// and one stopped by its runtime before the drop keeps the runtime's
// error. (A time passed before is nil: the first test above.)
func TestADroppedDataflowsProbesEndTheirWaits(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	build := func(env *Env, id string, p *Probe, cp *Capture, tl *Tally) *Dataflow {
		return buildProbed(t, env, id, p, cp, tl)
	}
	// Bounded, so that the test fails, rather than hangs, without the end.
	bounded, cancelBounded := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelBounded()
	p, cp, tl := NewProbe(1), NewCapture(1), NewTally(1)
	df := build(env, "q", p, cp, tl)
	done := make(chan error, 1)
	go func() { done <- cp.WaitPassed(bounded, 1) }()
	for {
		cp.mu.Lock()
		w := cp.waiting
		cp.mu.Unlock()
		if w {
			break
		}
		goruntime.Gosched()
	}
	df.Drop()
	if err := <-done; !errors.Is(err, ErrProbeDropped) {
		t.Fatalf("a capture's wait in progress at the drop ended with %v; want ErrProbeDropped", err)
	}
	for name, q := range map[string]*Probe{"probe": p, "capture": &cp.Probe, "tally": &tl.Probe} {
		if err := q.WaitPassed(bounded, 1); !errors.Is(err, ErrProbeDropped) {
			t.Errorf("a %s's wait after the drop: %v; want ErrProbeDropped", name, err)
		}
	}

	// Two workers: the probe is dropped when both have dropped it.
	two := NewProbe(2)
	two.attach(0)
	two.attach(1)
	(&probeOp{p: two}).Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := two.WaitPassed(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a probe still attached on one worker: %v; want its wait to last until its context ends", err)
	}
	(&probeOp{p: two}).Shutdown()
	if err := two.WaitPassed(bounded, 1); !errors.Is(err, ErrProbeDropped) {
		t.Fatalf("a probe dropped on both workers: %v; want ErrProbeDropped", err)
	}

	// Stopped by its runtime first (a runtime's Shutdown drops its
	// dataflows after its Stopper stops): the runtime's error stays.
	s := NewStopper()
	env2 := testEnv(t, 0, 1, NewHub(1))
	env2.Stopper = s
	sp := NewProbe(1)
	df2 := build(env2, "r", sp, NewCapture(1), NewTally(1))
	mine := errors.New("the runtime stopped")
	s.Stop(mine)
	df2.Drop()
	if err := sp.WaitPassed(bounded, 1); !errors.Is(err, mine) {
		t.Fatalf("a probe stopped by its runtime, then dropped: %v; want the runtime's error", err)
	}
}

// A call that would attach a probe, capture or tally to a nil stream (a
// zero Arranged) fails its create with the probe not attached, as if the
// Build had failed before the call: the runtime's Stopper keeps nothing
// of it, and a later dataflow may attach it. Before, it was attached with
// no operator to leave it: kept by the Stopper until the runtime stopped,
// refused by every later build, and its waits, not ended by the failed
// create, lasted until their context ended. (The call panicked then, and
// the Build with it; it is refused with ErrNilStream now.)
func TestAPanicAttachingAProbeLeavesItUnattached(t *testing.T) {
	p, cc, cp, tl := NewProbe(1), NewCapture(1), NewCapture(1), NewTally(1)
	for name, c := range map[string]struct {
		p      *Probe
		attach func(c *Context)
	}{
		"probe":          {p, func(c *Context) { c.Probe(p, (*Stream[*Chunk])(nil)) }},
		"capture chunks": {&cc.Probe, func(c *Context) { c.CaptureChunks(cc, nil, 1) }},
		"capture":        {&cp.Probe, func(c *Context) { c.Capture(cp, Arranged{}) }},
		"tally":          {&tl.Probe, func(c *Context) { c.Tally(tl, Arranged{}) }},
	} {
		s := NewStopper()
		env := testEnv(t, 0, 1, NewHub(1))
		env.Stopper = s
		_, err := Build(env, Desc{ID: name, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(ctx *Context) error {
			c.attach(ctx)
			return nil
		}}, 0)
		if !errors.Is(err, ErrNilStream) {
			t.Fatalf("%s: the build: %v; want ErrNilStream", name, err)
		}
		s.mu.Lock()
		kept := len(s.probes)
		s.mu.Unlock()
		if kept != 0 {
			t.Errorf("%s: the Stopper keeps %d probes of a failed create", name, kept)
		}
		if !c.p.attach(0) {
			t.Errorf("%s: the probe of a failed create stays attached", name)
		}
	}
}

// A frozen worker (Probe.freeze: its operator sets the probe no more) ends
// only the waits it decides: a time its final frontier has not passed,
// which the meet never passes, with its error, at once or in progress; a
// time it passed still waits for the other workers, and returns nil once
// they pass it. A worker frozen before it reported at all decides every
// time. The freeze's error stays the wait's after the operators leave
// (the dataflow dropped), where the drop's would say less.
func TestAFrozenWorkerEndsTheWaitsItDecides(t *testing.T) {
	boom := errors.New("boom")
	p := NewProbe(2)
	p.attach(0)
	p.attach(1)
	p.set(0, frontier.At(5))
	p.set(1, frontier.At(3))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- p.WaitPassed(ctx, 7) }()
	for !p.isWaiting() {
		goruntime.Gosched()
	}
	p.freeze(0, boom)
	if err := <-done; !errors.Is(err, boom) {
		t.Fatalf("a wait for 7 in progress when worker 0 froze at {5}: %v, want boom", err)
	}
	go func() { done <- p.WaitPassed(ctx, 4) }()
	for !p.isWaiting() && len(done) == 0 {
		goruntime.Gosched()
	}
	if err := p.WaitPassed(ctx, 5); !errors.Is(err, boom) {
		t.Fatalf("a wait for 5 with worker 0 frozen at {5}: %v, want boom", err)
	}
	select {
	case err := <-done:
		t.Fatalf("a wait for 4, which frozen worker 0 passed, ended with %v while worker 1 is at {3}", err)
	default:
	}
	p.set(1, frontier.At(6))
	if err := <-done; err != nil {
		t.Fatalf("a wait for 4 once worker 1 passed it: %v", err)
	}
	p.leave(nil)
	p.leave(nil)
	if err := p.WaitPassed(ctx, 5); !errors.Is(err, boom) || errors.Is(err, ErrProbeDropped) {
		t.Fatalf("a wait for 5 after the drop: %v, want boom", err)
	}
	q := NewProbe(2)
	q.attach(0)
	q.set(1, frontier.At(9))
	q.freeze(0, boom)
	if err := q.WaitPassed(ctx, 0); !errors.Is(err, boom) {
		t.Fatalf("a wait for 0 with worker 0 frozen before it reported: %v, want boom", err)
	}
}

// isWaiting reports whether a WaitPassed holds the probe's change channel.
func (p *Probe) isWaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// A worker frozen at a limit (Probe.freezeAt: an operator upstream of the
// probe failed there, its output held at the limit) ends the waits for a
// time the limit has not passed, at once or in progress, though the
// worker's frontier is still behind the limit: it may come up to it, never
// past. A wait for a time before the limit waits, and passes once the
// worker's frontier (and the others') passes it. The first freeze is kept.
func TestAWorkerFrozenAtALimitEndsTheWaitsPastIt(t *testing.T) {
	halt, later := errors.New("halt"), errors.New("later")
	p := NewProbe(2)
	p.attach(0)
	p.attach(1)
	p.set(0, frontier.At(1))
	p.set(1, frontier.At(8))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- p.WaitPassed(ctx, 6) }()
	for !p.isWaiting() {
		goruntime.Gosched()
	}
	p.freezeAt(0, frontier.At(4), halt)
	if err := <-done; !errors.Is(err, halt) {
		t.Fatalf("a wait for 6 in progress when worker 0 froze at the limit {4}: %v, want halt", err)
	}
	if err := p.WaitPassed(ctx, 4); !errors.Is(err, halt) {
		t.Fatalf("a wait for 4 with worker 0 held at {4}: %v, want halt", err)
	}
	go func() { done <- p.WaitPassed(ctx, 3) }()
	for !p.isWaiting() && len(done) == 0 {
		goruntime.Gosched()
	}
	select {
	case err := <-done:
		t.Fatalf("a wait for 3, before the limit {4}, ended with %v while worker 0 is at {1}", err)
	default:
	}
	p.set(0, frontier.At(4))
	if err := <-done; err != nil {
		t.Fatalf("a wait for 3 once worker 0 came up to its limit {4}: %v", err)
	}
	p.freezeAt(0, frontier.At(6), later)
	if err := p.WaitPassed(ctx, 5); !errors.Is(err, halt) {
		t.Fatalf("a wait for 5 after a second freeze at the later {6}: %v, want the first's halt", err)
	}
	if err := p.WaitPassed(ctx, 3); err != nil {
		t.Fatalf("a wait for 3 after a second freeze at the later {6}: %v, want the first's limit {4} kept", err)
	}
	p.set(0, frontier.At(3))
	p.freezeAt(0, frontier.At(3), later)
	if err := p.WaitPassed(ctx, 3); !errors.Is(err, later) {
		t.Fatalf("a wait for 3 after a freeze at the earlier {3}: %v, want its error", err)
	}
	if err := p.WaitPassed(ctx, 2); err != nil {
		t.Fatalf("a wait for 2 after a freeze at the earlier {3}: %v", err)
	}
}

// failingOp forwards nothing, fails through its Failer at the first step
// whose input frontier has passed 1, and holds its capability at {2}.
type failingOp struct {
	in     *Port[*Chunk]
	fail   func(error)
	failed bool
}

func (o *failingOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if !o.failed && frontier.At(2).LessEqual(in) {
		o.failed = true
		o.fail(errFailing)
	}
	if o.failed {
		return frontier.At(2)
	}
	return frontier.Empty()
}

func (o *failingOp) Shutdown() {}

var errFailing = errors.New("failing")

// A step that fails through its Failer freezes the probe downstream of
// its operator, on a worker stepped by hand, at the frontier it holds
// ({2}): a wait for 2 or later returns the failure at once, one for 1
// passes, and a probe on the input, upstream of it, passes 4.
func TestAFailedStepFreezesTheProbeDownstream(t *testing.T) {
	var errs []error
	env := &Env{
		Worker: 0, Peers: 1, Manager: NewIndexManager(), Hub: NewHub(1),
		Activate: func(*Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { errs = append(errs, err) },
	}
	env.Inputs = NewInputs(0, 1, env.Activate)
	down, up := NewProbe(1), NewProbe(1)
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		c.Probe(up, in.Oks)
		b := c.NewOperator("failing")
		if err := b.Build(&failingOp{in: AddInput(b, "rows", in.Oks), fail: c.Failer()}); err != nil {
			return err
		}
		c.Probe(down, AddOutput[*Chunk](b))
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for f := range uint64(5) {
		if err := env.Inputs.Advance("in", frontier.At(f+1)); err != nil {
			t.Fatal(err)
		}
		df.Step()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := down.WaitPassed(ctx, 2); !errors.Is(err, errFailing) {
		t.Fatalf("a wait for 2 downstream of the operator held at {2}: %v, want its failure", err)
	}
	if err := down.WaitPassed(ctx, 1); err != nil {
		t.Fatalf("a wait for 1 downstream of the operator held at {2}: %v", err)
	}
	if err := up.WaitPassed(ctx, 4); err != nil {
		t.Fatalf("a wait for 4 on the input, upstream of the failed operator: %v", err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], errFailing) {
		t.Fatalf("errors %v, want the failure once", errs)
	}
}

// backOp passes its input's frontier on until that passes 3, then fails
// through its Failer and returns a capability behind what its output
// announced ({1}, the output having passed 2).
type backOp struct {
	in     *Port[*Chunk]
	fail   func(error)
	failed bool
}

func (o *backOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if !o.failed && frontier.At(4).LessEqual(in) {
		o.failed = true
		o.fail(errFailing)
	}
	if o.failed {
		return frontier.At(1)
	}
	return frontier.Empty()
}

func (o *backOp) Shutdown() {}

// A step that fails and takes its capability back behind its output's
// frontier holds the output where it was ({3}), not where the step left
// it: what downstream was told is complete stays so, and the probe
// downstream passes 2 but fails a wait for 3.
func TestAFailedStepThatGoesBackHoldsWhereItWas(t *testing.T) {
	var errs []error
	env := &Env{
		Worker: 0, Peers: 1, Manager: NewIndexManager(), Hub: NewHub(1),
		Activate: func(*Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { errs = append(errs, err) },
	}
	env.Inputs = NewInputs(0, 1, env.Activate)
	down := NewProbe(1)
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		b := c.NewOperator("back")
		if err := b.Build(&backOp{in: AddInput(b, "rows", in.Oks), fail: c.Failer()}); err != nil {
			return err
		}
		c.Probe(down, AddOutput[*Chunk](b))
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for f := range uint64(5) {
		if err := env.Inputs.Advance("in", frontier.At(f+1)); err != nil {
			t.Fatal(err)
		}
		df.Step()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := down.WaitPassed(ctx, 3); !errors.Is(err, errFailing) {
		t.Fatalf("a wait for 3 downstream of the operator held at {3}: %v, want its failure", err)
	}
	if err := down.WaitPassed(ctx, 2); err != nil {
		t.Fatalf("a wait for 2 downstream of the operator held at {3}: %v", err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], errFailing) {
		t.Fatalf("errors %v, want the failure once", errs)
	}
}
