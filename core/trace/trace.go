package trace

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/isnil"
)

// ErrReleased is returned by reads through a released handle. A read
// through any released Reader matches it (errors.Is): core/share's
// ErrReleased, which its readers return, does.
var ErrReleased = errors.New("trace: handle is released")

// Storage is what a trace keeps its batches in: a *spine.Spine, or a wrapper
// around one (core/share's publishing spine mirrors every change into its
// publication points). Calls are per batch or per frontier change, never per
// update.
type Storage interface {
	Arity() batch.Arity
	Insert(*batch.Batch) error
	Close() error
	Upper() frontier.Frontier
	SetLogicalCompaction(frontier.Frontier)
	SetPhysicalCompaction(frontier.Frontier)
	LogicalCompaction() frontier.Frontier
	PhysicalCompaction() frontier.Frontier
	Exert(effort int64) bool
	BatchesThrough(frontier.Frontier) ([]*batch.Batch, error)
	MapBatches(func(*batch.Batch))
	Stats() spine.Stats
}

var _ Storage = (*spine.Spine)(nil)

// Dropper is implemented by storage that must learn when the last handle of
// its trace is released (core/share's publishing spine ends its publications
// then). Drop is called once, after the final compaction frontiers are set.
type Dropper interface {
	Drop()
}

// Claimer is implemented by storage that records that a trace wraps it, so
// that New refuses a second trace over it (a *spine.Spine and core/share's
// publishing spine do). ClaimTrace marks the storage as a trace's and
// reports whether it was free.
type Claimer interface {
	ClaimTrace() bool
}

var _ Claimer = (*spine.Spine)(nil)

// Reader is the read side every consumer of an arrangement uses, whether the
// trace is local (a *Handle) or published by another runtime (core/share's
// SharedReader). One batch and cursor type serve both.
type Reader interface {
	// LogicalCompaction returns the reader's logical hold.
	LogicalCompaction() frontier.Frontier
	// PhysicalCompaction returns the reader's physical hold.
	PhysicalCompaction() frontier.Frontier
	// SetLogicalCompaction joins the hold with f (never moves it back).
	SetLogicalCompaction(f frontier.Frontier)
	// SetPhysicalCompaction joins the hold with f (never moves it back).
	SetPhysicalCompaction(f frontier.Frontier)
	// BatchesThrough returns the non-empty batches holding exactly the
	// updates before f. REQUIRES: the reader holds physically at or before f.
	// Through a released reader it is an error matching ErrReleased.
	BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error)
	// MapBatches visits the chain in time order. A nil visitor visits
	// nothing.
	MapBatches(func(*batch.Batch))
	// ReadUpper returns the chain's coverage; a released reader's is
	// the coverage when it was released.
	ReadUpper() frontier.Frontier
	// CloneReader registers a new, independent reader at the same holds.
	// The clone of a released reader is released too: it registers
	// nothing, and every call on it is an error or a no-op.
	CloneReader() Reader
	// Release removes the reader's holds. Further calls are errors or
	// no-ops, CloneReader included.
	Release()
}

// CompactionSetter is a Reader that moves both of its holds at once: a
// shared reader (share.Reader) does so in one critical section on its
// publication point, with one wake of the publisher.
type CompactionSetter interface {
	SetCompaction(f frontier.Frontier)
}

// SetCompaction joins both of r's holds with f: at once when r is a
// CompactionSetter, else logical then physical. A nil r holds nothing, so
// there is nothing to join: the call does nothing, for a typed nil (a nil
// *Handle behind Reader) as for an untyped one.
//
// A Handle and a CompactionSetter are called without the reflection
// isNil may need (this is a call per operator step), a Handle without the
// interface lookup too: a CompactionSetter's SetCompaction does nothing
// on a nil receiver, as share.Reader's does.
func SetCompaction(r Reader, f frontier.Frontier) {
	switch x := r.(type) {
	case nil:
		return
	case *Handle: // a direct index's reader: no interface lookup
		if x == nil {
			return
		}
		x.SetLogicalCompaction(f)
		x.SetPhysicalCompaction(f)
		return
	case CompactionSetter:
		x.SetCompaction(f)
		return
	}
	if isNil(r) {
		return
	}
	r.SetLogicalCompaction(f)
	r.SetPhysicalCompaction(f)
}

// isNil reports whether x is nil or holds a nil pointer, map, slice, func
// or chan: a typed nil behind an interface is not == nil, and its first
// method call would panic with a nil dereference. The types of this
// package and the spine are told by a type switch; others by reflection
// (internal/isnil), which New and SetCompaction pay once a call, never per
// update.
func isNil(x any) bool {
	switch x := x.(type) {
	case nil:
		return true
	case *Handle:
		return x == nil
	case *spine.Spine:
		return x == nil
	}
	return isnil.Value(x)
}

// box is the state shared by a trace's handles and writer (TraceBox).
type box struct {
	storage  Storage // nil once every handle is released
	logical  frontier.MutableFrontier
	physical frontier.MutableFrontier
	live     int

	leakMu sync.Mutex // the cleanup goroutine reports leaks concurrently
	leaks  []string
}

func (bx *box) apply() {
	if bx.storage == nil {
		return
	}
	bx.storage.SetLogicalCompaction(bx.logical.Frontier())
	bx.storage.SetPhysicalCompaction(bx.physical.Frontier())
}

// Handle is one read hold on a trace (TraceAgent). Handles come from New
// and Clone: the zero Handle reads no trace and holds nothing, and is a
// released handle (its reads are ErrReleased, its moves and its Release
// do nothing, Released reports true and Storage nil).
type Handle struct {
	bx       *box
	logical  frontier.Frontier
	physical frontier.Frontier
	// upper is the trace's upper when the handle was released, which
	// ReadUpper reports from then on (set with released).
	upper    frontier.Frontier
	released bool
	cleanup  runtime.Cleanup
}

// Writer inserts batches into a trace. There is one writer per trace.
type Writer struct {
	bx *box
}

// New wraps storage as a trace and returns its first handle, holding at the
// storage's current compaction frontiers, and its writer. A nil storage is
// a programmer error: New panics at once, naming it, rather than return a
// handle whose every call would fail; a typed nil (a nil *spine.Spine
// behind Storage) is refused alike. So is a storage that backs a trace
// already, live or freed (a Claimer that ClaimTrace reports taken): a
// second trace over it would keep holds of its own, compact the storage
// past the first's handles and drop it under them (see the package doc);
// more handles of a trace come from Clone.
func New(storage Storage) (*Handle, *Writer) {
	if isNil(storage) {
		panic("trace: New of a nil storage")
	}
	if c, ok := storage.(Claimer); ok && !c.ClaimTrace() {
		panic("trace: New of a storage that backs a trace already: a second trace over it would keep holds the first does not know; clone a handle of the first instead")
	}
	bx := &box{storage: storage}
	h := bx.register(storage.LogicalCompaction(), storage.PhysicalCompaction())
	return h, &Writer{bx: bx}
}

// NewSpine is New over a fresh spine of the given arity.
func NewSpine(ar batch.Arity, opts spine.Options) (*Handle, *Writer) {
	return New(spine.New(ar, opts))
}

func (bx *box) register(logical, physical frontier.Frontier) *Handle {
	if err := bx.logical.Update(logical, 1); err != nil {
		panic(err) // adding a hold cannot fail
	}
	if err := bx.physical.Update(physical, 1); err != nil {
		panic(err)
	}
	bx.live++
	h := &Handle{bx: bx, logical: logical, physical: physical}
	if invariants.Enabled {
		buf := make([]byte, 2048)
		stack := string(buf[:runtime.Stack(buf, false)])
		h.cleanup = runtime.AddCleanup(h, func(stack string) { bx.reportLeak(stack) }, stack)
	}
	return h
}

func (bx *box) reportLeak(stack string) {
	bx.leakMu.Lock()
	bx.leaks = append(bx.leaks, stack)
	bx.leakMu.Unlock()
}

// LogicalCompaction returns the handle's logical hold.
func (h *Handle) LogicalCompaction() frontier.Frontier { return h.logical }

// PhysicalCompaction returns the handle's physical hold.
func (h *Handle) PhysicalCompaction() frontier.Frontier { return h.physical }

// SetLogicalCompaction joins the handle's logical hold with f (H2) and lets
// the trace compact to the new meet (H1).
func (h *Handle) SetLogicalCompaction(f frontier.Frontier) {
	if h.holdsNothing() {
		return
	}
	next := h.logical.Join(f)
	if next == h.logical {
		return
	}
	h.must(h.bx.logical.Move(h.logical, next))
	h.logical = next
	h.bx.apply()
}

// SetPhysicalCompaction joins the handle's physical hold with f (H2).
func (h *Handle) SetPhysicalCompaction(f frontier.Frontier) {
	if h.holdsNothing() {
		return
	}
	next := h.physical.Join(f)
	if next == h.physical {
		return
	}
	h.must(h.bx.physical.Move(h.physical, next))
	h.physical = next
	h.bx.apply()
}

func (h *Handle) must(err error) {
	if err != nil {
		panic(fmt.Sprintf("trace: hold accounting broken: %v", err))
	}
}

// Clone registers a new handle at h's holds (H3). The clone of a released
// handle is released too: it holds nothing, its reads are errors
// (ErrReleased) and its Release is a no-op, as are h's.
func (h *Handle) Clone() *Handle {
	if h.holdsNothing() {
		return &Handle{bx: h.bx, logical: h.logical, physical: h.physical, upper: h.upper, released: true}
	}
	return h.bx.register(h.logical, h.physical)
}

// Storage returns the storage h's trace wraps, nil once every handle of
// the trace is released (its maintainer finds the trace a handle reads),
// and for the zero Handle.
func (h *Handle) Storage() Storage {
	if h.bx == nil {
		return nil
	}
	return h.bx.storage
}

// CloneReader is Clone behind the Reader interface.
func (h *Handle) CloneReader() Reader { return h.Clone() }

// Release removes h's holds (H4). Releasing twice is a no-op.
func (h *Handle) Release() {
	if h.holdsNothing() {
		return
	}
	h.upper = h.ReadUpper() // before released is set: the live upper
	h.released = true
	if invariants.Enabled {
		h.cleanup.Stop()
	}
	bx := h.bx
	h.must(bx.logical.Update(h.logical, -1))
	h.must(bx.physical.Update(h.physical, -1))
	bx.live--
	if bx.live > 0 {
		bx.apply()
		return
	}
	if bx.storage != nil {
		// Every hold is gone: the trace may compact everything, and nothing
		// can read it any more. Record {} as its logical compaction and drop
		// the storage so its batches can be collected and later writes are
		// discarded. Physical compaction is not moved: that would merge
		// every pending batch of a trace about to be freed.
		bx.storage.SetLogicalCompaction(frontier.Empty())
		if d, ok := bx.storage.(Dropper); ok {
			d.Drop()
		}
		bx.storage = nil
	}
}

// Released reports whether h has been released.
func (h *Handle) Released() bool { return h.holdsNothing() }

// holdsNothing reports whether h holds nothing on a trace: it was
// released, or it is the zero Handle, which reads none.
func (h *Handle) holdsNothing() bool { return h.released || h.bx == nil }

// BatchesThrough returns the non-empty batches holding exactly the updates
// before f. REQUIRES: h holds physically at or before f (§2.6, the CPU-209
// lesson); a violation is an error, never a silent partial cut.
func (h *Handle) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	if h.holdsNothing() || h.bx.storage == nil {
		return nil, ErrReleased
	}
	if !h.physical.LessEqual(f) {
		return nil, fmt.Errorf("trace: cut %v before this handle's physical hold %v: %w", f, h.physical, spine.ErrBehindCut)
	}
	return h.bx.storage.BatchesThrough(f)
}

// MapBatches visits the chain in time order. A nil f visits nothing, as
// does a released handle.
func (h *Handle) MapBatches(f func(*batch.Batch)) {
	if f == nil || h.holdsNothing() || h.bx.storage == nil {
		return
	}
	h.bx.storage.MapBatches(f)
}

// ReadUpper returns the trace's upper; on a released handle, the upper
// when it was released, as its holds are the ones it had then: the trace
// moving on, or being freed, moves nothing a released handle reports.
func (h *Handle) ReadUpper() frontier.Frontier {
	if h.holdsNothing() {
		return h.upper
	}
	if h.bx.storage == nil {
		return frontier.Empty()
	}
	return h.bx.storage.Upper()
}

// State returns a view of the trace behind h for inspection.
func (h *Handle) State() State { return State{h.bx} }

var _ Reader = (*Handle)(nil)

// State is an inspection view of the state behind a set of handles: their
// accumulated holds, the storage, and leak reports.
type State struct{ bx *box }

// Live returns the number of live handles.
func (t State) Live() int { return t.bx.live }

// LogicalHolds returns a copy of the accumulated logical holds of live
// handles.
func (t State) LogicalHolds() frontier.MutableFrontier { return t.bx.logical.Clone() }

// PhysicalHolds returns a copy of the accumulated physical holds of live
// handles.
func (t State) PhysicalHolds() frontier.MutableFrontier { return t.bx.physical.Clone() }

// Storage returns the storage, or nil once every handle is released.
func (t State) Storage() Storage { return t.bx.storage }

// Leaks returns the creation stacks of handles collected without Release
// (invariant builds only; always empty otherwise).
func (t State) Leaks() []string {
	t.bx.leakMu.Lock()
	defer t.bx.leakMu.Unlock()
	return append([]string(nil), t.bx.leaks...)
}

// Insert appends b to the trace. After every handle is released it discards
// b and returns nil (the trace is gone; the writer holds it only weakly).
func (w *Writer) Insert(b *batch.Batch) error {
	if w.bx.storage == nil {
		return nil
	}
	return w.bx.storage.Insert(b)
}

// Seal inserts an empty batch from the trace's upper to upper: a progress
// record with no updates, of the storage's arity (a spine moves its upper
// and adds no batch to its chain). It is a no-op when upper
// equals the trace upper; an upper before it is refused
// (spine.ErrEmptyInterval), never taken as a step back.
func (w *Writer) Seal(upper frontier.Frontier) error {
	if w.bx.storage == nil {
		return nil
	}
	lower := w.bx.storage.Upper()
	if lower == upper {
		return nil
	}
	return w.bx.storage.Insert(batch.Empty(w.bx.storage.Arity(), lower, upper))
}

// Exert does merge work with the given effort; it reports whether work
// remains.
func (w *Writer) Exert(effort int64) bool {
	if w.bx.storage == nil {
		return false
	}
	return w.bx.storage.Exert(effort)
}

// Close seals the trace to the empty frontier.
func (w *Writer) Close() error {
	if w.bx.storage == nil {
		return nil
	}
	return w.bx.storage.Close()
}

// Upper returns the trace's upper ({} once dropped).
func (w *Writer) Upper() frontier.Frontier {
	if w.bx.storage == nil {
		return frontier.Empty()
	}
	return w.bx.storage.Upper()
}
