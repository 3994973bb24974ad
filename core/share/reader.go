package share

import (
	"fmt"
	"runtime"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Reader is a remote read hold on a point (SharedReader). It implements
// trace.Reader, so consumers treat it exactly like a local handle. A Reader
// is used by one goroutine at a time; Release it when done.
//
// Readers come from a Point (Reader, ReaderAt, ReaderAtLeast) or a Clone:
// the zero Reader reads no point and holds nothing, and is a released
// reader (its reads and imports are ErrReleased, its moves and its Release
// do nothing, and Released reports true).
type Reader struct {
	p *Point
	// use detects a second goroutine in a method of r while one is in
	// another (invariant builds; no room and no code without the tag).
	use      invariants.Exclusive
	logical  frontier.Frontier
	physical frontier.Frontier
	// hold is what the point keeps of r's holds while r is live, a copy
	// of logical and physical written under p.mu: the point refers to it,
	// not to r, so that a reader collected without Release is still
	// found (reportLeak), its holds kept as before.
	hold *holder
	// upper is the published upper when the reader was released, which
	// ReadUpper reports from then on (set with released).
	upper    frontier.Frontier
	released bool
	cleanup  runtime.Cleanup
}

var _ trace.Reader = (*Reader)(nil)

// registerLocked adds a reader holding at logical and physical.
// REQUIRES: p.mu held.
func (p *Point) registerLocked(logical, physical frontier.Frontier) *Reader {
	if mutants.Enabled && mutants.On(mutants.ReaderNoPhysicalSeedHold) {
		physical = frontier.Empty()
	}
	p.readers++
	r := &Reader{p: p, logical: logical, physical: physical, hold: &holder{logical: logical, physical: physical, at: len(p.holders)}}
	p.holders = append(p.holders, r.hold)
	if invariants.Enabled {
		r.cleanup = reportLeak(p, r)
	}
	return r
}

// holder is a live reader's holds as its point keeps them (Point.holders,
// Reader.hold), guarded by the point's mutex.
type holder struct {
	logical, physical frontier.Frontier
	at                int // its place in the point's holders
}

// unregisterLocked removes a live reader's holds: the last holder takes
// its place. REQUIRES: p.mu held.
func (p *Point) unregisterLocked(gone *holder) {
	h := p.holders
	if invariants.Enabled {
		invariants.Assertf(gone.at < len(h) && h[gone.at] == gone, "share: reader released twice or never registered")
	}
	last := h[len(h)-1]
	h[gone.at], last.at = last, gone.at
	h[len(h)-1] = nil
	p.holders = h[:len(h)-1]
	p.readers--
}

// reportLeak arranges for p to record the stack that is creating obj (the
// goroutine's, now) if obj, a reader or an import of p, is collected before
// the returned cleanup is stopped (its Release or Close): invariant builds'
// leak report (Point.Leaks).
func reportLeak[T any](p *Point, obj *T) runtime.Cleanup {
	buf := make([]byte, 2048)
	stack := string(buf[:runtime.Stack(buf, false)])
	return runtime.AddCleanup(obj, func(stack string) {
		p.mu.Lock()
		p.leaks = append(p.leaks, stack)
		p.mu.Unlock()
	}, stack)
}

// Reader registers a reader holding logically at the published since and
// physically at the chain's coverage (§4.7 reader()).
func (p *Point) Reader() *Reader {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.registerLocked(p.since, p.upper)
}

// ReaderAt registers a reader holding logically at asOf and physically at the
// coverage, or refuses with a *SinceError if the since is beyond asOf. The
// check and the registration happen under one lock (P1).
func (p *Point) ReaderAt(asOf frontier.Frontier) (*Reader, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.admitLocked(asOf); err != nil {
		return nil, err
	}
	return p.registerLocked(asOf, p.upper), nil
}

// admitLocked is the first half of an admission at asOf: it refuses with a
// *SinceError if the published since is beyond asOf. The caller registers
// the hold before it unlocks, so that check and registration are one
// critical section and the publisher cannot publish a later since between
// them (P1). REQUIRES: p.mu held; it stays held.
func (p *Point) admitLocked(asOf frontier.Frontier) error {
	if !p.since.LessEqual(asOf) {
		return &SinceError{Since: p.since, AsOf: asOf}
	}
	if mutants.Enabled && mutants.On(mutants.AdmissionTwoSections) {
		p.mu.Unlock()
		p.pauseAdmitted()
		p.mu.Lock()
		return nil
	}
	p.pauseAdmitted()
	return nil
}

// ReaderAtLeast registers a peer hold: logically at asOf joined with the
// since, nothing physical (§4.7 reader_at_least). It never refuses.
func (p *Point) ReaderAtLeast(asOf frontier.Frontier) *Reader {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.registerLocked(asOf.Join(p.since), frontier.Empty())
}

// holdsNothing reports whether r holds nothing on a point: it was
// released, or it is the zero Reader, which reads none.
func (r *Reader) holdsNothing() bool { return r.released || r.p == nil }

// Point returns the point r reads (nil for the zero Reader).
func (r *Reader) Point() *Point { return r.p }

// LogicalCompaction returns r's logical hold.
func (r *Reader) LogicalCompaction() frontier.Frontier {
	if invariants.Enabled {
		r.use.Enter("share: Reader.LogicalCompaction")
		defer r.use.Exit()
	}
	return r.logical
}

// PhysicalCompaction returns r's physical hold.
func (r *Reader) PhysicalCompaction() frontier.Frontier {
	if invariants.Enabled {
		r.use.Enter("share: Reader.PhysicalCompaction")
		defer r.use.Exit()
	}
	return r.physical
}

// SetLogicalCompaction joins r's logical hold with f and wakes the publisher.
func (r *Reader) SetLogicalCompaction(f frontier.Frontier) {
	if invariants.Enabled {
		r.use.Enter("share: Reader.SetLogicalCompaction")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return
	}
	next := r.logical.Join(f)
	if next == r.logical {
		return
	}
	r.p.mu.Lock()
	r.hold.logical = next
	r.wakeAfterLogicalLocked()
	r.p.mu.Unlock()
	r.logical = next
}

// SetPhysicalCompaction joins r's physical hold with f and wakes the
// publisher. It never drops below the coverage the reader was seeded with.
func (r *Reader) SetPhysicalCompaction(f frontier.Frontier) {
	if invariants.Enabled {
		r.use.Enter("share: Reader.SetPhysicalCompaction")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return
	}
	next := r.physical.Join(f)
	if next == r.physical {
		return
	}
	r.p.mu.Lock()
	r.hold.physical = next
	r.p.wakePublisherLocked()
	r.p.mu.Unlock()
	r.physical = next
}

// SetCompaction joins both of r's holds with f under one lock and wakes the
// publisher once: SetLogicalCompaction then SetPhysicalCompaction, with one
// wake instead of two. A nil r holds nothing: the call does nothing, as
// trace.SetCompaction does for a nil reader of another type.
func (r *Reader) SetCompaction(f frontier.Frontier) {
	if r == nil {
		return
	}
	if invariants.Enabled {
		r.use.Enter("share: Reader.SetCompaction")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return
	}
	logical, physical := r.logical.Join(f), r.physical.Join(f)
	if logical == r.logical && physical == r.physical {
		return
	}
	r.p.mu.Lock()
	if physical != r.physical {
		r.p.wakePublisherLocked()
	} else {
		r.wakeAfterLogicalLocked()
	}
	r.hold.logical, r.hold.physical = logical, physical
	r.p.mu.Unlock()
	r.logical, r.physical = logical, physical
}

// wakeAfterLogicalLocked wakes the publisher after a move of r's logical
// hold alone, which may let it compact further. REQUIRES: r.p.mu held.
func (r *Reader) wakeAfterLogicalLocked() {
	if !mutants.Enabled || !mutants.On(mutants.DowngradeNoWake) {
		r.p.wakePublisherLocked()
	}
}

func mustHold(err error) {
	if err != nil {
		panic(fmt.Sprintf("share: hold accounting broken: %v", err))
	}
}

// Clone registers a new reader at r's holds. The clone of a released
// reader is released too: it registers nothing, its reads and imports are
// errors (ErrReleased) and its Release is a no-op, as are r's.
func (r *Reader) Clone() *Reader {
	if invariants.Enabled {
		r.use.Enter("share: Reader.Clone")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return &Reader{p: r.p, logical: r.logical, physical: r.physical, upper: r.upper, released: true}
	}
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	return r.p.registerLocked(r.logical, r.physical)
}

// CloneReader is Clone behind the trace.Reader interface.
func (r *Reader) CloneReader() trace.Reader { return r.Clone() }

// Release removes r's holds and wakes the publisher. Twice is a no-op.
func (r *Reader) Release() {
	if invariants.Enabled {
		r.use.Enter("share: Reader.Release")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return
	}
	r.released = true
	if invariants.Enabled {
		r.cleanup.Stop()
	}
	r.p.mu.Lock()
	r.upper = r.p.upper
	r.p.unregisterLocked(r.hold)
	r.p.wakePublisherLocked()
	r.p.mu.Unlock()
}

// Released reports whether r has been released.
func (r *Reader) Released() bool {
	if invariants.Enabled {
		r.use.Enter("share: Reader.Released")
		defer r.use.Exit()
	}
	return r.holdsNothing()
}

// BatchesThrough walks the published chain and returns the non-empty
// batches before f. The reader may cut below the publisher's physical
// frontier while it drains a seed, so instead of that assertion a non-empty
// batch that f straddles is reported as spine.ErrStraddle (§4.7).
func (r *Reader) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	if invariants.Enabled {
		r.use.Enter("share: Reader.BatchesThrough")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return nil, ErrReleased
	}
	r.p.mu.Lock()
	chain, upper := r.p.chain, r.p.upper
	r.p.mu.Unlock()
	return cut(chain, upper, f)
}

// cut returns the non-empty batches of chain before f.
func cut(chain []*batch.Batch, upper, f frontier.Frontier) ([]*batch.Batch, error) {
	if f == frontier.Min() {
		return nil, nil
	}
	if !f.IsEmpty() && !f.LessEqual(upper) {
		return nil, fmt.Errorf("%w: cut %v, published upper %v", spine.ErrBeyondUpper, f, upper)
	}
	var out []*batch.Batch
	for _, b := range chain {
		if f.LessEqual(b.Lower()) {
			break
		}
		if !b.Upper().LessEqual(f) {
			if !b.IsEmpty() {
				return nil, fmt.Errorf("%w: cut %v, batch %v", spine.ErrStraddle, f, b.Desc())
			}
			break
		}
		if !b.IsEmpty() {
			out = append(out, b)
		}
	}
	return out, nil
}

// MapBatches visits the published chain in time order. A nil f visits
// nothing, as does a released reader.
func (r *Reader) MapBatches(f func(*batch.Batch)) {
	var released bool
	if invariants.Enabled {
		// Only the check is r's: the visitor, which may call r, runs
		// after it.
		r.use.Enter("share: Reader.MapBatches")
		released = r.holdsNothing()
		r.use.Exit()
	} else {
		released = r.holdsNothing()
	}
	if f == nil || released {
		return
	}
	for _, b := range r.p.Chain() {
		f(b)
	}
}

// ReadUpper returns the published upper; on a released reader, the one
// published when it was released, as its holds are the ones it had then:
// the publication moving on moves nothing a released reader reports.
func (r *Reader) ReadUpper() frontier.Frontier {
	if invariants.Enabled {
		r.use.Enter("share: Reader.ReadUpper")
		defer r.use.Exit()
	}
	if r.holdsNothing() {
		return r.upper
	}
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	return r.p.upper
}
