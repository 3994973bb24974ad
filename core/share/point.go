package share

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
)

// Errors of the share package; match with errors.Is.
var (
	ErrSinceBeyond = errors.New("share: since is beyond the requested time")
	ErrAttached    = errors.New("share: point already has a publisher")
	// ErrReleased refuses a read or an import through a released reader
	// (or handle). It matches trace.ErrReleased too (errors.Is),
	// so that code reading any trace.Reader, local or shared, tells a
	// released one by that one error.
	ErrReleased  error = releasedError{}
	ErrPublished       = errors.New("share: index incarnation already published")
	// ErrTraceReleased refuses the publication of a trace whose last
	// handle is released: that release ends a publication (§4.7), and it
	// is past, so the publication would never end.
	ErrTraceReleased = errors.New("share: the trace's last handle is released")
)

// releasedError is ErrReleased: its own error, which is also
// trace.ErrReleased.
type releasedError struct{}

func (releasedError) Error() string { return "share: reader is released" }

// Is makes errors.Is(ErrReleased, trace.ErrReleased) hold.
func (releasedError) Is(target error) bool { return target == trace.ErrReleased }

// SinceError reports a refused admission: the point's since is beyond the
// requested as_of (§4.7 reader_at).
type SinceError struct {
	Since, AsOf frontier.Frontier
}

func (e *SinceError) Error() string {
	return fmt.Sprintf("share: since %v is beyond as_of %v", e.Since, e.AsOf)
}

// Unwrap makes errors.Is(err, ErrSinceBeyond) hold.
func (e *SinceError) Unwrap() error { return ErrSinceBeyond }

// failure is a trace's end short of completion (Spine.Fail): its upper
// never passes limit, because of err.
type failure struct {
	limit frontier.Frontier
	err   error
}

// event is one replay instruction: a batch, or a frontier when b is nil.
type event struct {
	b *batch.Batch
	f frontier.Frontier
}

// queue is an importer's replay queue, with the import's own hold (§4.9).
// Guarded by its point's mutex.
type queue struct {
	events []event
	// pending is set by every push and cleared by the Drain that takes the
	// events, both under the lock: a Drain that reads it clear has nothing
	// to take and skips the lock (a dataflow steps its imports again after
	// every pass that moved, with nothing new most times). A push it
	// misses is followed by its signal, which steps the import again.
	pending atomic.Bool
	notify  chan struct{} // capacity 1; signalled when events arrive
	wake    func()        // optional; called (under the point's lock) on arrival
	ended   bool          // detached by Import.End: takes no events, holds nothing
	// published, when set, is called in wake's place for a batch the
	// publisher inserts (Spine.Insert), with its number of updates: on the
	// publisher's goroutine, in its step (Import.OnPublished).
	published func(updates int)
	// The import's own hold: logically at what it acknowledged (as_of
	// before), physically at its seed's coverage until it acknowledges
	// beyond. It is a remote hold like a Reader's, but kept here rather
	// than among the point's holders: the import moves it at every frontier
	// it drains, in the critical section that takes its events. It lives
	// exactly as long as the queue is registered (holdsLocked).
	logical, physical frontier.Frontier
}

func (q *queue) push(e event) {
	q.events = append(q.events, e)
	q.pending.Store(true)
}

func (q *queue) signal() {
	q.notifyReader()
	if q.wake != nil {
		q.wake()
	}
}

// signalPublished is signal for a batch of n updates the publisher
// inserted: its published function in place of wake, if set.
func (q *queue) signalPublished(n int) {
	if q.published == nil {
		q.signal()
		return
	}
	q.notifyReader()
	q.published(n)
}

func (q *queue) notifyReader() {
	// Full (its reader has not taken it, or reads the wake function
	// instead), notify is read without its lock: the send could only fail.
	if len(q.notify) == 0 {
		select {
		case q.notify <- struct{}{}:
		default:
		}
	}
}

// Point is a publication point: what a publisher shares of one trace.
type Point struct {
	mu sync.Mutex

	chain   []*batch.Batch // immutable once published; replaced, never edited
	upper   frontier.Frontier
	since   frontier.Frontier // published logical compaction
	request frontier.Frontier // the publisher's local (requested) logical compaction

	// holders are the live readers' holds, each at its own logical and
	// physical frontiers (Reader.hold): a move of a reader's hold is an
	// assignment, where a counted multiset of holds paid a search and
	// often an insert and a delete (several readers holding at one time,
	// one moving past the others), and the publisher meets them all when
	// it applies holds (holdsLocked), as it meets the imports' own holds
	// in queues.
	holders []*holder
	readers int
	queues  []*queue // importers' replay queues (a slice: every insert walks it)

	pub    *Spine // nil until a publisher attaches (late binding), and once closed
	closed bool   // the publication ended
	// fail, once set (Spine.Fail), says the trace's upper never passes
	// fail.limit: its writer failed, or what feeds it did.
	fail *failure

	leaks []string // invariant builds: readers collected without Release
	pause *pauses  // tests only: pause points inside P1's and P3's sections
}

// NewPoint returns a placeholder point: empty chain, every frontier at {0}.
// Reads of it produce nothing until a publisher attaches and fills it in.
func NewPoint() *Point {
	return &Point{}
}

// addr orders points for locking.
func (p *Point) addr() uintptr { return uintptr(unsafe.Pointer(p)) }

// wakePublisherLocked signals the publisher that remote holds moved. The
// notify function is called only by the move that sets the wake: while it
// is set, the move that set it has notified the publisher's worker, which
// has yet to take it (and will read every hold when it does), so readers
// moving their holds one after another wake it once.
func (p *Point) wakePublisherLocked() {
	// A set wake is read without a read-modify-write (a round's readers
	// move several holds one after another; all but the first find it
	// set).
	if p.pub != nil && !p.pub.woken.Load() && p.pub.woken.CompareAndSwap(false, true) {
		if p.pub.notify != nil {
			p.pub.notify()
		}
	}
}

// PointStats are a point's metrics.
type PointStats struct {
	Readers    int               // live readers (imports' holds included)
	Since      frontier.Frontier // published since
	Requested  frontier.Frontier // the publisher's local request
	Upper      frontier.Frontier
	Batches    int
	Bytes      int // column bytes of the chain
	QueueDepth int // replay events waiting across importers
	Importers  int
	Bound      bool // a publisher is attached (and the publication not ended)
	Closed     bool
	// HoldGap is requested minus applied since, in time units: how far
	// reader holds keep the trace behind what its owner allows. Zero when
	// either frontier is {}.
	HoldGap uint64
}

// Stats returns the point's metrics.
func (p *Point) Stats() PointStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PointStats{
		Readers: p.readers, Since: p.since, Requested: p.request, Upper: p.upper,
		Batches: len(p.chain), Importers: len(p.queues), Bound: p.pub != nil, Closed: p.closed,
	}
	for _, b := range p.chain {
		st.Bytes += b.SizeBytes()
	}
	for _, q := range p.queues {
		st.QueueDepth += len(q.events)
	}
	r, rok := p.request.Time()
	s, sok := p.since.Time()
	if rok && sok && r > s {
		st.HoldGap = r - s
	}
	return st
}

// RemoteHolds returns copies of the accumulated remote logical and physical
// holds: every reader's and every live import's own.
func (p *Point) RemoteHolds() (logical, physical frontier.MutableFrontier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.holders {
		mustHold(logical.Update(h.logical, 1))
		mustHold(physical.Update(h.physical, 1))
	}
	for _, q := range p.queues {
		mustHold(logical.Update(q.logical, 1))
		mustHold(physical.Update(q.physical, 1))
	}
	return logical, physical
}

// holdsLocked returns the meets of every remote hold, logical and
// physical: the live readers' and the registered imports' own. A hold at
// {} holds nothing, as the meet says. REQUIRES: p.mu held.
func (p *Point) holdsLocked() (logical, physical frontier.Frontier) {
	logical, physical = frontier.Empty(), frontier.Empty()
	for _, h := range p.holders {
		logical, physical = logical.Meet(h.logical), physical.Meet(h.physical)
	}
	for _, q := range p.queues {
		logical, physical = logical.Meet(q.logical), physical.Meet(q.physical)
	}
	return logical, physical
}

// Chain returns the published chain (immutable; shared).
func (p *Point) Chain() []*batch.Batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chain
}

// Leaks returns the creation stacks of readers of this point that were
// collected without Release (invariant builds only).
func (p *Point) Leaks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.leaks...)
}

// close ends the publication: readers keep the last published chain and
// upper (a dropped writer says nothing about later times). The point lets
// go of its publisher once woken: a reader that outlives the publication
// keeps that chain reachable, never the publishing spine (its merges in
// progress, its worker's wake function), and its later moves wake no one.
func (p *Point) close() {
	p.mu.Lock()
	p.closed = true
	for _, q := range p.queues {
		q.signal()
	}
	p.wakePublisherLocked() // so that it detaches the point soon
	p.pub = nil
	p.mu.Unlock()
}
