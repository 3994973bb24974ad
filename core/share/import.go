package share

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Event is one step of an import's replay: a batch to present (Batch non-nil,
// at capability time Time = its lower advanced by as_of), or the import's
// frontier advancing to Frontier. A frontier of {} means the import is done.
type Event struct {
	Batch    *batch.Batch
	Time     frontier.Time
	Frontier frontier.Frontier
}

// Import is a live import of a point (§4.7 import_frontier_core): seeded with
// the chain under the same lock that registers its replay queue, then
// following the publisher. Its batches are read through Presentation: times
// advanced to as_of, nothing at or beyond until.
//
// It holds twice (§4.9): Trace, the consumer-facing Reader registered at
// as_of, which the consumer downgrades as it advances and releases when
// done; and its own hold, which follows the frontiers it acknowledges,
// holds physically at its seed and goes when the import finishes or is
// closed. The own hold lives in the import's replay queue (queue.logical
// and queue.physical), which the point counts with its readers' holds. No
// frozen token pins the publisher.
type Import struct {
	p *Point
	// use detects a second goroutine in a method of the import while one
	// is in another (invariant builds; no room and no code without the
	// tag).
	use   invariants.Exclusive
	trace *Reader
	q     *queue
	pres  batch.Presentation

	seed     frontier.Frontier // the upper the seed covered
	acked    frontier.Frontier
	seedLeft int // events of the seed still to drain
	// done is set by finish and read by End under p.mu, so that the two
	// agree on the point's lock as they do on q.ended; the import's
	// goroutine, the only one that sets it, reads it without (Done, Drain,
	// Close).
	done    bool
	fail    *failure // the point's (Spine.Fail), taken by Drain or at the import
	buf     []event
	cleanup runtime.Cleanup // invariant builds: reports an import collected unclosed
}

// Import imports p at asOf bounded by until, refusing with a *SinceError if
// the since is beyond asOf (checked atomically with the registration).
// REQUIRES: asOf < until.
func (p *Point) Import(asOf, until frontier.Frontier) (*Import, error) {
	return p.ImportWith(asOf, until, nil)
}

// ImportWith is Import with a wake function called whenever events arrive,
// so that a worker can park on one channel for all its imports. wake runs
// under the point's lock on the publisher's goroutine: it must only signal.
func (p *Point) ImportWith(asOf, until frontier.Frontier, wake func()) (*Import, error) {
	if !asOf.Less(until) {
		return nil, fmt.Errorf("share: import as_of %v is not before until %v", asOf, until)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.admitLocked(asOf); err != nil {
		return nil, err
	}
	return p.importLocked(asOf, until, wake), nil
}

// emptyImport returns an import of an empty collection known up to upper
// (a padding, §4.5), at asOf bounded by until, which REQUIRES
// asOf < until <= upper: its seed is no batch and upper, so its first Drain
// completes it. It reads a point of its own, which no publisher fills and no
// registry lists: its readers and its own hold hold nothing of any trace.
func emptyImport(asOf, until, upper frontier.Frontier, wake func()) *Import {
	p := &Point{since: asOf, request: asOf, upper: upper}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.importLocked(asOf, until, wake)
}

// Import imports the point r reads at asOf bounded by until. It never
// imports through r itself (a peer hold holds nothing physically): it mints
// fresh readers, which r's hold guarantees are admitted. REQUIRES: r's
// logical hold is at or before asOf.
func (r *Reader) Import(asOf, until frontier.Frontier) (*Import, error) {
	return r.ImportWith(asOf, until, nil)
}

// ImportWith is Import with a wake function (see Point.ImportWith).
func (r *Reader) ImportWith(asOf, until frontier.Frontier, wake func()) (*Import, error) {
	if invariants.Enabled {
		r.use.Enter("share: Reader.ImportWith")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return nil, ErrReleased
	}
	if !r.logical.LessEqual(asOf) {
		return nil, &SinceError{Since: r.logical, AsOf: asOf}
	}
	return r.p.ImportWith(asOf, until, wake)
}

// importLocked registers an import's consumer reader, seeds its queue with
// the chain and registers the queue with the import's own hold, all in the
// caller's critical section (P3). REQUIRES: p.mu held, asOf admitted.
func (p *Point) importLocked(asOf, until frontier.Frontier, wake func()) *Import {
	ownLogical, seedHold := asOf, p.upper
	if mutants.Enabled && mutants.On(mutants.ImportKeepsNoHold) {
		ownLogical, seedHold = frontier.Empty(), frontier.Empty()
	}
	im := &Import{
		p:     p,
		trace: p.registerLocked(asOf, p.upper),
		q:     &queue{notify: make(chan struct{}, 1), wake: wake, logical: ownLogical, physical: seedHold},
		pres:  batch.Presentation{Since: asOf, Until: until},
		seed:  p.upper,
		acked: frontier.Min(),
		fail:  p.fail,
	}
	p.readers++ // the own hold, a reader in the point's statistics
	if invariants.Enabled {
		im.cleanup = reportLeak(p, im)
	}
	im.q.events = make([]event, 0, len(p.chain)+1) // the seed: the chain, then the upper
	for _, b := range p.chain {
		im.q.push(event{b: b})
	}
	im.q.push(event{f: p.upper})
	im.seedLeft = len(im.q.events)
	im.q.signal()
	// Seeded, queue not yet registered: an insert now waits for the lock,
	// so it lands in the queue (P3).
	if mutants.Enabled && mutants.On(mutants.SeedQueueSeparateLocks) {
		p.mu.Unlock()
		p.pauseSeeded()
		p.mu.Lock()
	} else {
		p.pauseSeeded()
	}
	p.queues = append(p.queues, im.q)
	return im
}

// Reader returns the consumer-facing reader, held at as_of until the consumer
// downgrades or releases it.
func (im *Import) Reader() *Reader { return im.trace }

// Presentation returns how the import's batches are to be read.
func (im *Import) Presentation() batch.Presentation { return im.pres }

// OnPublished sets the function called in the wake function's place when
// the publisher inserts a batch (Spine.Insert), with the batch's number of
// updates: on the publisher's goroutine, under the point's lock, so it
// must only signal, as the wake function. Every other arrival (a seed, a
// failure, the publication's end) still calls the wake function. A runtime
// tells by it that its reader's work was readied by the publisher's own
// step, and how much of it there is.
func (im *Import) OnPublished(f func(updates int)) {
	im.p.mu.Lock()
	im.q.published = f
	im.p.mu.Unlock()
}

// Ready is signalled when events may be waiting.
func (im *Import) Ready() <-chan struct{} { return im.q.notify }

// Done reports whether the import has finished (its frontier reached until or
// {}).
func (im *Import) Done() bool {
	if invariants.Enabled {
		im.use.Enter("share: Import.Done")
		defer im.use.Exit()
	}
	return im.done
}

// Frontier returns the frontier acknowledged so far.
func (im *Import) Frontier() frontier.Frontier {
	if invariants.Enabled {
		im.use.Enter("share: Import.Frontier")
		defer im.use.Exit()
	}
	return im.acked
}

// Closed reports whether the publication ended (the publisher dropped it).
func (im *Import) Closed() bool {
	im.p.mu.Lock()
	defer im.p.mu.Unlock()
	return im.p.closed
}

// Ended reports whether the import, not done, will take no event any more
// and has none waiting: its publication ended (the publisher dropped it)
// or the import was detached (End), and a Drain took every event that
// arrived before. Its frontier (Frontier) is then final, short of until.
func (im *Import) Ended() bool {
	if invariants.Enabled {
		im.use.Enter("share: Import.Ended")
		defer im.use.Exit()
	}
	if im.done {
		return false
	}
	im.p.mu.Lock()
	defer im.p.mu.Unlock()
	return (im.q.ended || im.p.closed) && len(im.q.events) == 0
}

// Failure reports, once a Drain took it (or the import was made after
// it), that the trace the import reads never passes limit, because of
// err (Spine.Fail): its writer, or what feeds it, failed; err is nil
// while no failure is known. The import's frontier then never passes
// limit either, and an import whose until is at or before limit still
// completes.
func (im *Import) Failure() (limit frontier.Frontier, err error) {
	if im.fail == nil {
		return frontier.Frontier{}, nil
	}
	return im.fail.limit, im.fail.err
}

// Drain appends the events that arrived since the last call to out.
// Empty batches are progress only and yield no batch event; a batch already
// covered by the seed is skipped (P3's duplicate guard); frontiers that do
// not advance are dropped.
func (im *Import) Drain(out []Event) []Event {
	if invariants.Enabled {
		im.use.Enter("share: Import.Drain")
		defer im.use.Exit()
	}
	if im.done || !im.q.pending.Load() {
		return out
	}
	im.p.mu.Lock()
	im.q.pending.Store(false)
	im.fail = im.p.fail
	evs := im.q.events
	im.q.events = im.buf[:0]
	acked, finished := im.acked, false
	for _, e := range evs {
		live := im.seedLeft == 0
		if !live {
			im.seedLeft--
		}
		if e.b != nil {
			if (live && e.b.Upper().LessEqual(im.seed)) || e.b.IsEmpty() {
				continue
			}
			lower, _ := e.b.Lower().Time()
			out = append(out, Event{Batch: e.b, Time: im.pres.Since.AdvanceBy(lower)})
			continue
		}
		if !acked.Less(e.f) {
			continue
		}
		acked = e.f
		if e.f.IsEmpty() || im.pres.Until.LessEqual(e.f) {
			out = append(out, Event{Frontier: frontier.Empty()})
			finished = true
			break
		}
		out = append(out, Event{Frontier: e.f})
	}
	// The import's own hold follows what it acknowledged: moved once, to
	// the last frontier, in the critical section that took the events (a
	// finished import releases it instead).
	if acked != im.acked && !finished && !im.q.ended {
		im.p.moveOwnHoldLocked(im.q, acked)
	}
	im.p.mu.Unlock()
	im.acked = acked
	// Cleared (nothing taken stays reachable) element by element: a
	// replay takes a few events, and clear's bulk path costs more.
	for i := len(evs) - 1; i >= 0; i-- {
		evs[i] = event{}
	}
	if finished {
		im.finish()
		return out
	}
	// The array takes the next arrivals, unless a burst grew it past
	// drainKeep events (a reader that lagged many rounds behind its
	// publisher drains them at once): then it goes, so that a lag is not
	// kept for the import's life.
	if cap(evs) > drainKeep {
		evs = nil
	}
	im.buf = evs[:0]
	return out
}

// drainKeep is the most events' room an import keeps for its next
// arrivals: a steady round brings a few, and an array grown past it (a
// lagging reader's backlog) is let go once drained, not kept.
const drainKeep = 1024

// moveOwnHoldLocked joins the own hold of q's import with f, logically and
// physically, and wakes the publisher, as a Reader's SetCompaction does.
// REQUIRES: p.mu held, q registered.
func (p *Point) moveOwnHoldLocked(q *queue, f frontier.Frontier) {
	logical, physical := q.logical.Join(f), q.physical.Join(f)
	if logical == q.logical && physical == q.physical {
		return
	}
	if invariants.Enabled {
		invariants.Assertf(slices.Contains(p.queues, q), "share: own hold moved after its import finished")
	}
	q.logical, q.physical = logical, physical
	p.wakePublisherLocked()
}

// finish marks the import done, unregisters the queue, and with it the
// import's own hold, and wakes the publisher, which may compact further;
// an ended import's were unregistered by End. done is set under the
// point's lock, under which End reads it.
func (im *Import) finish() {
	if invariants.Enabled {
		im.cleanup.Stop()
	}
	im.p.mu.Lock()
	im.done = true
	if !im.q.ended {
		im.p.dropOwnHoldLocked(im.q)
	}
	im.q.events = nil
	im.p.mu.Unlock()
}

// dropOwnHoldLocked unregisters q, and with it its import's own hold, which
// the point then counts among its readers no more, and wakes the publisher:
// the trace may compact further. REQUIRES: p.mu held, q registered.
func (p *Point) dropOwnHoldLocked(q *queue) {
	if i := slices.Index(p.queues, q); i >= 0 {
		p.queues = slices.Delete(p.queues, i, i+1)
	}
	p.readers--
	p.wakePublisherLocked()
}

// End detaches the import from its point: it takes no event after this
// call — what arrived before stays, to be drained — and its own hold goes,
// so the point's readers (PointStats.Readers) count it no more; its
// consumer's Reader stays, for the consumer to release, and Close after End
// releases nothing more.
// Its frontier then stays at the last it acknowledges, as that of an
// import of a publication that ended: End gives the end a publication's
// close gives to readers to an import of a trace that goes on (a local
// re-export dropped or freed while its source lives). A no-op on an import
// ended or done.
func (im *Import) End() {
	if invariants.Enabled {
		im.use.Enter("share: Import.End")
		defer im.use.Exit()
	}
	im.p.mu.Lock()
	defer im.p.mu.Unlock()
	if im.q.ended || im.done {
		return
	}
	im.q.ended = true
	im.p.dropOwnHoldLocked(im.q)
}

// Close stops the import (if not done) and releases its own hold. The
// consumer-facing Trace is the consumer's to release.
func (im *Import) Close() {
	if invariants.Enabled {
		im.use.Enter("share: Import.Close")
		defer im.use.Exit()
	}
	if !im.done {
		im.finish()
	}
}
