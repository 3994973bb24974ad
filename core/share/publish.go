package share

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Spine is the publishing side of a trace (SharedSpine): trace.Storage over
// an inner *spine.Spine that, once attached to points, mirrors every change
// into them and compacts no further than their remote holds allow.
// Unattached it costs one branch per call. Owned by the publisher goroutine.
type Spine struct {
	inner  *spine.Spine
	points []*Point // attached, in address order

	localLogical  frontier.Frontier // the meet of the local handles' holds
	localPhysical frontier.Frontier
	// physWant is the physical meet of every hold as applyHolds last
	// computed it. What is applied is at most the upper: a reader admitted
	// at the coverage holds physically there, and a physical frontier
	// applied beyond it would let the batches inserted next merge across
	// that boundary. Insert moves the applied frontier on towards physWant
	// as the upper passes it.
	physWant frontier.Frontier

	chain    []*batch.Batch // the last chain mirrored, at version
	version  uint64
	mirrored bool

	// What every attached point was last given by mirror or Insert: while
	// the chain's version and the upper are these, mirror has nothing to
	// publish and takes no lock. (The publisher's physical compaction is
	// not published: no reader reads it, and publishing it took a lock at
	// every maintenance pass of a steady round.)
	pubVersion uint64
	pubUpper   frontier.Frontier
	pubValid   bool
	woken      atomic.Bool // set when a reader moves or releases a hold (TakeWake)
	notify     func()      // optional; called when a move sets woken (under a point's lock)
	local      *Point      // private point for imports within the same runtime
	fail       *failure    // Fail's earliest limit: given to every point, attached later too
	dropped    bool        // Drop: the trace's last handle is released
	deferring  bool        // Defer: holds are recorded, applied at Flush
	dirty      bool        // a hold moved while deferring
	pause      *pauses     // tests only: the pause between publishing and applying a since
	// released marks a stand-in for the trace of a released handle
	// (publishingSpine), which Attach refuses with ErrReleased.
	released bool
	// group is the worker-wide deferral the spine is in (Join), noGroup
	// outside one (never nil: Flush and apply read it without a check);
	// flushed is the group's epoch when it last flushed: it defers while
	// the group does and it has not flushed since.
	group   *Group
	flushed uint64
	// hot is set while onHot has listed the spine (MarkHot) and its
	// maintainer has not cleared it (ClearHot).
	hot   bool
	onHot func()
}

var (
	_ trace.Storage = (*Spine)(nil)
	_ trace.Dropper = (*Spine)(nil)
	_ trace.Claimer = (*Spine)(nil)
)

// wrapSpine wraps inner for publication (trace.NewSpine, by contrast, makes a
// new local trace of an arity).
func wrapSpine(inner *spine.Spine) *Spine {
	return &Spine{
		group:         &noGroup,
		inner:         inner,
		localLogical:  inner.LogicalCompaction(),
		localPhysical: inner.PhysicalCompaction(),
	}
}

// NewTrace returns a fresh publishing spine of the given arity with its first
// local handle and writer.
func NewTrace(ar batch.Arity, opts spine.Options) (*trace.Handle, *trace.Writer, *Spine) {
	s := wrapSpine(spine.New(ar, opts))
	h, w := trace.New(s)
	return h, w, s
}

// TakeWake reports whether a reader moved or released a hold since the
// last call, and clears the wake: the publisher's loop calls Refresh when
// it reports true. A flag, not a channel: a round of a shared index moves
// and takes it once per trace, and a channel's send and receive each took
// its lock.
func (s *Spine) TakeWake() bool {
	// Clear, it is read without a read-modify-write (most passes of a
	// loop find nothing). A move setting it just after is seen by the
	// next call: its notify follows the setting.
	return s.woken.Load() && s.woken.Swap(false)
}

// SetNotify installs a function called when a reader moves or releases a
// hold and the wake was clear, besides setting it, so that a worker can
// park on one channel: while the wake is set the worker has been notified
// of it and has yet to take it, so further moves call nothing. The worker
// must call TakeWake (and Refresh) on every wake it is notified for.
// Install it before the spine is attached to a point (nothing sets the
// wake until then). It runs under a point's lock on the reader's
// goroutine: it must only signal. The wake is set before notify runs
// (sequentially consistent atomics), so a worker that reads TakeWake after
// notify would skip it (worker.holdsMoved) sees it set.
func (s *Spine) SetNotify(f func()) { s.notify = f }

// LocalPoint returns the trace's private publication point, attached on first
// use: imports within the publisher's own runtime go through it, so a local
// import and a shared one have one body (§4.4). It is in no registry. Once
// the trace's last handle is released its publication has ended: first
// asked for then, it is closed at once, with the trace's last chain, upper
// and since.
func (s *Spine) LocalPoint() *Point {
	if s.local == nil && s.dropped {
		p := NewPoint()
		p.chain, p.upper = s.published(), s.inner.Upper()
		p.since, p.request = s.inner.LogicalCompaction(), s.localLogical
		p.closed, p.fail = true, s.fail
		s.local = p
	}
	if s.local == nil {
		p := NewPoint()
		if err := s.Attach(p); err != nil {
			panic(err) // a fresh point has no publisher and no holds
		}
		s.local = p
	}
	return s.local
}

// Dropped reports whether the trace's last handle is released (Drop): its
// publication has ended and nothing reads it.
func (s *Spine) Dropped() bool { return s.dropped }

// Inner returns the wrapped spine (read-only use).
func (s *Spine) Inner() *spine.Spine { return s.inner }

// ClaimTrace claims the inner spine for a trace (trace.Claimer): a trace
// over s and one over s.Inner() are two over one spine, and the second is
// refused.
func (s *Spine) ClaimTrace() bool { return s.inner.ClaimTrace() }

// Points returns the number of attached points.
func (s *Spine) Points() int { return len(s.points) }

// Attach publishes the trace into p, which may be a placeholder that readers
// already import from (late binding: they are seeded now). It fails if the
// trace's last handle is released (ErrTraceReleased: the release that would
// end the publication is past, §4.7), if p has a publisher or its
// publication has ended (ErrAttached), or if a reader
// of the placeholder holds a time the trace has already compacted past
// (that reader would read coalesced data).
func (s *Spine) Attach(p *Point) error {
	if p == nil {
		return errors.New("share: attach to a nil point")
	}
	if s.dropped {
		return ErrTraceReleased
	}
	if s.released {
		return ErrReleased
	}
	p.mu.Lock()
	if p.pub != nil {
		p.mu.Unlock()
		return ErrAttached
	}
	if p.closed {
		// A publication refused before this half attached ended it:
		// its readers were told the end, and see nothing after it.
		p.mu.Unlock()
		return fmt.Errorf("share: attach: the point's publication has ended: %w", ErrAttached)
	}
	if hold, _ := p.holdsLocked(); !s.inner.LogicalCompaction().LessEqual(hold) {
		since := s.inner.LogicalCompaction()
		p.mu.Unlock()
		return fmt.Errorf("share: attach: a reader holds %v but the trace is compacted to %v: %w", hold, since, ErrSinceBeyond)
	}
	chain := s.published()
	p.pub = s
	p.chain, p.upper = chain, s.inner.Upper()
	if s.fail != nil && (p.fail == nil || s.fail.limit.Less(p.fail.limit)) {
		p.fail = s.fail
	}
	p.since, p.request = s.inner.LogicalCompaction(), s.localLogical
	for _, q := range p.queues {
		for _, b := range chain {
			q.push(event{b: b})
		}
		q.push(event{f: p.upper})
		q.signal()
	}
	p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.points, p.addr(), func(a *Point, x uintptr) int {
		switch {
		case a.addr() < x:
			return -1
		case a.addr() > x:
			return 1
		}
		return 0
	})
	s.points = slices.Insert(s.points, i, p)
	s.applyHolds()
	return nil
}

// Group is the deferral a worker shares among the spines it maintains
// (Join): Defer makes every one of them defer at once, as Spine.Defer
// would each, until it flushes, so that a wake defers them all in O(1).
// Owned by the worker goroutine.
type Group struct {
	epoch     uint64
	deferring bool
}

// Defer makes every spine in g record its hold changes until its next
// Flush (Spine.Defer).
func (g *Group) Defer() {
	g.epoch++
	g.deferring = true
}

// Done ends g's deferral: a spine not flushed since Defer applies what
// it records from now on (as after Flush; what it recorded stays for
// its Flush).
func (g *Group) Done() { g.deferring = false }

// Join puts s in g's deferral (deferring from g's next Defer on) and
// installs onHot, called once each time s gets something for its
// maintainer to do while not hot (MarkHot): a batch (Insert), a hold
// change recorded while deferring, a physical compaction applied (it
// admits pending batches, which may merge), or an Exert. Join(nil, nil)
// takes s out of both.
func (s *Spine) Join(g *Group, onHot func()) {
	if g == nil {
		g = &noGroup
	}
	s.group, s.onHot, s.hot = g, onHot, false
	s.flushed = g.epoch
}

// noGroup is the group of a spine in none: it never defers (nothing calls
// its Defer).
var noGroup Group

// MarkHot lists s with its maintainer (the onHot of Join) unless it is
// listed already: a flag test when it is.
func (s *Spine) MarkHot() {
	if !s.hot && s.onHot != nil {
		s.hot = true
		s.onHot()
	}
}

// ClearHot records that the maintainer no longer lists s.
func (s *Spine) ClearHot() { s.hot = false }

// Idle reports whether s has nothing recorded for its maintainer: no
// hold change waiting for Flush and no merge in progress. (A reader's
// move is announced through the notify of SetNotify.)
func (s *Spine) Idle() bool { return !s.dirty && !s.inner.Merging() }

// Refresh applies the current remote holds and republishes: the publisher
// calls it when TakeWake reports a wake.
func (s *Spine) Refresh() { s.apply() }

// Defer makes the calls that apply holds (SetLogicalCompaction,
// SetPhysicalCompaction, Refresh) record what changed without applying it,
// until Flush: a worker that moves a trace's holds several times in one
// wake (a command's compaction, its dataflows' frontiers, its readers'
// holds) applies them once, when its step is done. Applying later only
// compacts later: reads in between see the trace less compacted, never
// more.
func (s *Spine) Defer() { s.deferring = true }

// Flush applies what was recorded since Defer (its own or its Group's),
// if anything, and ends it.
func (s *Spine) Flush() {
	s.deferring = false
	s.flushed = s.group.epoch
	if s.dirty {
		s.dirty = false
		s.applyHolds()
	}
}

// apply applies holds now, or records that they changed while deferring
// (by Defer, or by its Group's since it last flushed), and lists the
// spine with its maintainer (MarkHot).
func (s *Spine) apply() {
	if s.deferring || s.group.deferring && s.flushed != s.group.epoch {
		s.record()
		return
	}
	s.applyHolds()
}

// record notes a hold change for the next Flush and lists the spine with
// its maintainer (apply's deferred path).
func (s *Spine) record() {
	s.dirty = true
	s.MarkHot()
}

// applyHolds compacts to the meet of the local and remote holds (P2),
// publishing the since to every point under all their locks before applying
// it (P1), then mirrors the chain.
func (s *Spine) applyHolds() {
	logical, physical := s.localLogical, s.localPhysical
	if len(s.points) > 0 {
		// One pass of locks: a point whose publication ended holds nothing
		// back and is detached once they are released.
		closed := false
		for _, p := range s.points {
			p.mu.Lock()
		}
		for _, p := range s.points {
			if p.closed {
				closed = true
				continue
			}
			l, ph := p.holdsLocked()
			logical, physical = logical.Meet(l), physical.Meet(ph)
		}
		applied := s.inner.LogicalCompaction()
		if invariants.Enabled {
			invariants.Assertf(applied.LessEqual(logical), "share: P4: since would move back from %v to %v", applied, logical)
		}
		logical = logical.Join(applied)
		if mutants.Enabled && mutants.On(mutants.ApplySinceBeforePublish) {
			for i := len(s.points) - 1; i >= 0; i-- {
				s.points[i].mu.Unlock()
			}
			s.inner.SetLogicalCompaction(logical)
			s.pausePublished()
			for _, p := range s.points {
				p.mu.Lock()
			}
		}
		for _, p := range s.points {
			if !p.closed {
				p.since, p.request = logical, s.localLogical
			}
		}
		for i := len(s.points) - 1; i >= 0; i-- {
			s.points[i].mu.Unlock()
		}
		if closed {
			s.detachClosed()
		}
		// Published, not yet applied: a reader registering now is refused
		// at the new since (P1).
		s.pausePublished()
	}
	s.inner.SetLogicalCompaction(logical)
	s.physWant = physical
	admitted := s.inner.PhysicalCompaction()
	s.inner.SetPhysicalCompaction(physical.Meet(s.inner.Upper()))
	if !s.hot && s.onHot != nil && (s.inner.PhysicalCompaction() != admitted || s.inner.Merging()) {
		// Pending batches the physical hold admitted may merge (and
		// overflow), and a since that passed batches earlier merges left
		// uncompacted starts their merge (spine.Spine.SetLogicalCompaction):
		// for the maintainer, whether or not a wake deferred the change.
		s.MarkHot()
	}
	s.mirror()
}

// detachClosed drops points whose publication ended.
func (s *Spine) detachClosed() {
	s.points = slices.DeleteFunc(s.points, func(p *Point) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.closed
	})
}

// currentChain returns the inner chain, listing it again only when its
// version moved since the last call.
func (s *Spine) currentChain() []*batch.Batch {
	if v := s.inner.Version(); !s.mirrored || v != s.version {
		s.chain, s.version, s.mirrored = s.inner.Batches(), v, true
	}
	return s.chain
}

// mirror publishes the chain and upper to every point.
func (s *Spine) mirror() {
	if len(s.points) == 0 {
		return
	}
	chain := s.published()
	upper := s.inner.Upper()
	if s.pubValid && s.pubVersion == s.version && s.pubUpper == upper {
		return // every point has it already
	}
	for _, p := range s.points {
		p.mu.Lock()
		if !p.closed { // an ended publication keeps its last chain
			p.chain, p.upper = chain, upper
		}
		p.mu.Unlock()
	}
	s.pubVersion, s.pubUpper, s.pubValid = s.version, upper, true
}

// published returns the current chain as points hold it: clipped to its
// length, so that a holder that appends gets an array of its own and never
// writes into the spare capacity Insert appends to.
func (s *Spine) published() []*batch.Batch {
	c := s.currentChain()
	return c[:len(c):len(c)]
}

// Insert inserts b and, under each point's lock, republishes the chain and
// enqueues b and its upper to every importer (P3); a b without updates
// takes no place in the chain (spine.Spine.Insert), so the points keep
// their chain unless its fuel finished a merge, and importers take the
// frontier alone. It lists the spine with its maintainer (MarkHot): its
// upper moved, and it may merge.
func (s *Spine) Insert(b *batch.Batch) error {
	v := s.inner.Version()
	current := s.mirrored && s.version == v
	if err := s.inner.Insert(b); err != nil {
		return err
	}
	s.MarkHot()
	// Held back at the last upper, the physical frontier moves on with the
	// new one, no further than the readers registered now hold.
	behind := s.inner.PhysicalCompaction().Less(s.physWant)
	if len(s.points) == 0 {
		if behind {
			s.inner.SetPhysicalCompaction(s.physWant.Meet(s.inner.Upper()))
		}
		return nil
	}
	// A batch without updates takes no place in the chain; if the version
	// moved, its fuel finished a merge, and the chain is listed again
	// (published). Importers take the frontier alone.
	empty := b.IsEmpty()
	if !empty && current && s.inner.Version() == v+1 {
		// Only the insert changed the chain: it is the mirrored chain and
		// b, the newest batch, last. Appending writes past the length every
		// published copy has, so no reader sees it.
		s.chain, s.version = append(s.chain, b), v+1
		if invariants.Enabled {
			invariants.Assertf(slices.Equal(s.chain, s.inner.Batches()), "share: appended chain differs from the spine's")
		}
	}
	chain := s.published()
	upper := s.inner.Upper()
	s.pubVersion, s.pubUpper, s.pubValid = s.version, upper, true
	physical := s.physWant.Meet(upper)
	for _, p := range s.points {
		p.mu.Lock()
		if p.closed { // an ended publication keeps its last chain
			p.mu.Unlock()
			continue
		}
		if behind {
			// A reader registering after this section holds at the
			// new upper, at or beyond physical.
			_, ph := p.holdsLocked()
			physical = physical.Meet(ph)
		}
		p.chain, p.upper = chain, upper
		for _, q := range p.queues {
			if !empty {
				q.push(event{b: b})
			}
			q.push(event{f: upper})
			q.signalPublished(b.Len())
		}
		p.mu.Unlock()
	}
	if behind {
		s.inner.SetPhysicalCompaction(physical)
		s.mirror() // admitted batches may have merged
	}
	return nil
}

// Fail records that the trace's upper never passes limit, because of err:
// its writer failed its step, or an operator feeding it did and holds its
// output at limit, or the dataflow writing it stopped on this worker (a
// panic). Every point, attached now or later, carries it to its imports
// (Import.Failure), which a reading dataflow freezes its waits with
// (dataflow.Probe.freezeAt). A later call is kept only if its limit is
// earlier (a tighter bound: an operator feeding the trace failed after a
// failure further upstream was told, holding the trace further back),
// whichever failure came first; an ended publication is told nothing
// (its readers were told its end).
func (s *Spine) Fail(limit frontier.Frontier, err error) {
	if s.fail != nil && !limit.Less(s.fail.limit) {
		return
	}
	s.fail = &failure{limit: limit, err: err}
	for _, p := range s.points {
		p.mu.Lock()
		if !p.closed && (p.fail == nil || limit.Less(p.fail.limit)) {
			p.fail = s.fail
			for _, q := range p.queues {
				q.pending.Store(true) // the next Drain takes the lock, and the failure
				q.signal()
			}
		}
		p.mu.Unlock()
	}
}

// Close seals the trace to {} (importers complete).
func (s *Spine) Close() error {
	if s.inner.Upper().IsEmpty() {
		return nil
	}
	return s.Insert(batch.Empty(s.inner.Arity(), s.inner.Upper(), frontier.Empty()))
}

// Arity returns the arity of the trace's batches.
func (s *Spine) Arity() batch.Arity { return s.inner.Arity() }

// Upper returns the trace's upper.
func (s *Spine) Upper() frontier.Frontier { return s.inner.Upper() }

// SetLogicalCompaction records the local handles' meet and applies holds.
// Unchanged, it does nothing: the holds were applied when it last changed,
// and remote holds that moved since arrive through TakeWake (Refresh).
func (s *Spine) SetLogicalCompaction(f frontier.Frontier) {
	if f == s.localLogical {
		return
	}
	s.localLogical = f
	s.apply()
}

// SetPhysicalCompaction records the local handles' physical meet and applies
// holds; unchanged, it does nothing (as SetLogicalCompaction).
func (s *Spine) SetPhysicalCompaction(f frontier.Frontier) {
	if f == s.localPhysical {
		return
	}
	s.localPhysical = f
	s.apply()
}

// LogicalCompaction returns the applied logical compaction.
func (s *Spine) LogicalCompaction() frontier.Frontier { return s.inner.LogicalCompaction() }

// PhysicalCompaction returns the applied physical compaction.
func (s *Spine) PhysicalCompaction() frontier.Frontier { return s.inner.PhysicalCompaction() }

// RequestedCompaction returns the local handles' logical meet (what the
// owner allows), as opposed to what remote holds let it apply.
func (s *Spine) RequestedCompaction() frontier.Frontier { return s.localLogical }

// Exert applies holds, does merge work and republishes the chain.
func (s *Spine) Exert(effort int64) bool {
	s.deferring, s.dirty = false, false
	s.flushed = s.group.epoch
	// Holds are applied whether or not a point is attached: a change
	// recorded while deferring is applied here too.
	s.applyHolds()
	more := s.inner.Exert(effort)
	s.MarkHot() // a merge it started, left in progress, or that overflowed
	s.mirror()
	return more
}

// Work applies fuel to merges in progress (spine.Spine.Work) and
// republishes the chain if anything was merging.
func (s *Spine) Work(effort int64) bool {
	if !s.inner.Merging() {
		return false
	}
	more := s.inner.Work(effort)
	s.mirror()
	return more
}

// Merging reports whether a merge is in progress (spine.Spine.Merging).
func (s *Spine) Merging() bool { return s.inner.Merging() }

// BatchesThrough cuts the inner spine (the publisher's own reads).
func (s *Spine) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	return s.inner.BatchesThrough(f)
}

// MapBatches visits the inner chain.
func (s *Spine) MapBatches(f func(*batch.Batch)) { s.inner.MapBatches(f) }

// Err returns the error of the first merge that overflowed (spine.Spine.Err).
func (s *Spine) Err() error { return s.inner.Err() }

// Overflows returns the number of merges that overflowed (spine.Spine.Overflows).
func (s *Spine) Overflows() int { return s.inner.Overflows() }

// Stats returns the inner spine's counters.
func (s *Spine) Stats() spine.Stats { return s.inner.Stats() }

// Drop ends every publication of this trace: its last local handle is gone.
// Readers keep the last published chain. The trace is published no more
// (Attach refuses it).
func (s *Spine) Drop() {
	s.dropped = true
	for _, p := range s.points {
		p.close()
	}
	s.points = nil
}
