package spine

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Errors reported by the spine. They wrap with context; match with errors.Is.
var (
	ErrNotContiguous = errors.New("spine: batch lower is not the trace upper")
	ErrEmptyInterval = errors.New("spine: batch lower equals its upper")
	ErrClosed        = errors.New("spine: trace is closed")
	ErrStraddle      = errors.New("spine: cut straddles a non-empty batch")
	ErrBehindCut     = errors.New("spine: cut is before the physical compaction frontier")
	ErrBeyondUpper   = errors.New("spine: cut is beyond the trace upper")
	ErrArity         = errors.New("spine: batch arity differs from the trace's")
)

type layerKind uint8

const (
	vacant layerKind = iota
	single
	double
)

// layer is one level of the merge structure.
type layer struct {
	kind   layerKind
	b      *batch.Batch // single: the batch (nil: structurally empty); double: the result once complete
	b1, b2 *batch.Batch // double in progress: the inputs, b1 older
	merger *batch.Merger
}

func (l *layer) inProgress() bool { return l.kind == double && l.merger != nil }

// len returns the records the layer accounts for.
func (l *layer) len() int {
	switch {
	case l.kind == vacant:
		return 0
	case l.inProgress():
		return l.b1.Len() + l.b2.Len()
	case l.b != nil:
		return l.b.Len()
	}
	return 0
}

// Stats are counters a benchmark reads.
type Stats struct {
	Batches   int   // batches in the chain (non-nil, empty ones included)
	Updates   int   // updates across the chain
	Bytes     int   // column bytes across the chain (trace-B)
	Merges    int64 // merges started
	MergeWork int64 // updates consumed by merges (fuel spent)
	Pending   int   // batches not yet admitted to merging
}

// Spine is a fueled LSM of batches. The zero value is not usable; call New.
type Spine struct {
	ar       batch.Arity
	logical  frontier.Frontier
	physical frontier.Frontier
	upper    frontier.Frontier
	layers   []layer
	pending  []*batch.Batch
	effort   int64
	err      error // the first merge that overflowed, if any
	merges   int64
	work     int64
	version  uint64 // bumped whenever the chain's batches change
}

// Options configure a spine.
type Options struct {
	// Effort scales the fuel each arrival brings (differential-dataflow's
	// effort multiplier). Zero means 1.
	Effort int64
}

// New returns an empty spine for batches of the given arity, with upper,
// logical and physical compaction at {0}.
func New(ar batch.Arity, opts Options) *Spine {
	e := opts.Effort
	if e <= 0 {
		e = 1
	}
	return &Spine{ar: ar, effort: e}
}

// Arity returns the arity of the spine's batches.
func (s *Spine) Arity() batch.Arity { return s.ar }

// Upper returns the spine's upper: the upper of the last inserted batch.
func (s *Spine) Upper() frontier.Frontier { return s.upper }

// ReadUpper is Upper: the chain's coverage (§1.8).
func (s *Spine) ReadUpper() frontier.Frontier { return s.upper }

// Err returns the error of the first merge that overflowed, if any. The
// merged batch is in the chain with every other update (batch.Merger.Result);
// the spine keeps accepting inserts, and its owner reports the error.
func (s *Spine) Err() error { return s.err }

// LogicalCompaction returns the logical compaction frontier.
func (s *Spine) LogicalCompaction() frontier.Frontier { return s.logical }

// PhysicalCompaction returns the physical compaction frontier.
func (s *Spine) PhysicalCompaction() frontier.Frontier { return s.physical }

// SetLogicalCompaction records f for merges that start from now on (§2.2). A
// frontier before the current one is ignored (S4).
func (s *Spine) SetLogicalCompaction(f frontier.Frontier) {
	s.logical = s.logical.Join(f)
}

// SetPhysicalCompaction records f (ignored if before the current one, S4) and
// admits pending batches whose upper is within it to merging (§2.3).
func (s *Spine) SetPhysicalCompaction(f frontier.Frontier) {
	s.physical = s.physical.Join(f)
	s.considerMerges()
}

// Insert appends b to the chain (S1) and lets arrivals drive merge work.
func (s *Spine) Insert(b *batch.Batch) error {
	switch {
	case s.upper.IsEmpty():
		return ErrClosed
	case b.Arity() != s.ar:
		return fmt.Errorf("%w: %v into %v", ErrArity, b.Arity(), s.ar)
	case b.Lower() != s.upper:
		return fmt.Errorf("%w: batch %v, trace upper %v", ErrNotContiguous, b.Desc(), s.upper)
	case b.Lower() == b.Upper():
		return fmt.Errorf("%w: %v", ErrEmptyInterval, b.Desc())
	}
	s.upper = b.Upper()
	s.pending = append(s.pending, b)
	s.version++
	s.considerMerges()
	return nil
}

// Close seals the spine with an empty batch up to the empty frontier.
func (s *Spine) Close() error {
	if s.upper.IsEmpty() {
		return nil
	}
	return s.Insert(batch.Empty(s.ar, s.upper, frontier.Empty()))
}

// considerMerges moves pending batches whose upper is within the physical
// frontier into the merge structure.
func (s *Spine) considerMerges() {
	for len(s.pending) > 0 && s.pending[0].Upper().LessEqual(s.physical) {
		b := s.pending[0]
		s.pending[0] = nil
		s.pending = s.pending[1:]
		// Fuse an empty batch into an adjacent empty single cheaply.
		if b.IsEmpty() {
			if i := s.firstOccupied(); i >= 0 && s.layers[i].kind == single && s.layers[i].len() == 0 {
				s.insertAt(b, i)
				s.layers[i] = layer{kind: single, b: s.completeAt(i)}
				continue
			}
		}
		s.introduceBatch(b, levelFor(b.Len()))
	}
	if len(s.pending) == 0 {
		s.pending = nil // drop the consumed prefix's backing array
	}
}

func (s *Spine) firstOccupied() int {
	for i := range s.layers {
		if s.layers[i].kind != vacant {
			return i
		}
	}
	return -1
}

// levelFor returns ceil(log2(n)), with 0 for n <= 1.
func levelFor(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// introduceBatch applies fuel for an arrival of 2^level records, rolls up the
// layers below level and inserts b there (b may be nil: virtual records).
func (s *Spine) introduceBatch(b *batch.Batch, level int) {
	fuel := int64(8) << min(level, 56) * s.effort
	s.applyFuel(fuel)
	s.rollUp(level)
	s.insertAt(b, level)
	s.tidyLayers()
}

// applyFuel gives each in-progress merge its own copy of fuel and promotes
// completed merges to the next level.
func (s *Spine) applyFuel(fuel int64) {
	for i := 0; i < len(s.layers); i++ {
		if s.layers[i].inProgress() {
			f := fuel
			before := s.layers[i].merger.WorkDone()
			s.layers[i].merger.Work(&f)
			s.work += s.layers[i].merger.WorkDone() - before
			if s.layers[i].merger.Done() {
				s.finishMerge(&s.layers[i])
			}
		}
		if s.layers[i].kind == double && !s.layers[i].inProgress() {
			s.insertAt(s.completeAt(i), i+1)
		}
	}
}

// rollUp merges every non-vacant layer below level into level.
func (s *Spine) rollUp(level int) {
	s.grow(level)
	occupied := false
	for i := 0; i < level; i++ {
		if s.layers[i].kind != vacant {
			occupied = true
			break
		}
	}
	if !occupied {
		return
	}
	var merged *batch.Batch
	for i := 0; i < level; i++ {
		s.insertAt(merged, i)
		merged = s.completeAt(i)
	}
	s.insertAt(merged, level)
	if s.layers[level].kind == double {
		merged := s.completeAt(level)
		s.insertAt(merged, level+1)
	}
}

func (s *Spine) grow(level int) {
	for len(s.layers) <= level {
		s.layers = append(s.layers, layer{})
	}
}

// insertAt inserts b (possibly nil) at level: Vacant becomes Single, Single
// starts a merge under the current logical frontier (S3).
func (s *Spine) insertAt(b *batch.Batch, level int) {
	s.grow(level)
	l := &s.layers[level]
	switch l.kind {
	case vacant:
		*l = layer{kind: single, b: b}
	case single:
		old := l.b
		switch {
		case old == nil:
			*l = layer{kind: double, b: b}
		case b == nil:
			*l = layer{kind: double, b: old}
		default:
			s.merges++
			*l = layer{kind: double, b1: old, b2: b, merger: batch.NewMerger(old, b, s.logical)}
		}
	case double:
		panic(fmt.Sprintf("spine: S3: insert into an unfinished merge at level %d", level))
	}
}

// completeAt finishes the layer's merge (if any), empties the layer and
// returns its batch.
func (s *Spine) completeAt(level int) *batch.Batch {
	l := &s.layers[level]
	var out *batch.Batch
	switch l.kind {
	case single:
		out = l.b
	case double:
		if l.merger != nil {
			fuel := int64(1) << 62
			before := l.merger.WorkDone()
			l.merger.Work(&fuel)
			s.work += l.merger.WorkDone() - before
			s.finishMerge(l)
		}
		out = l.b
	}
	*l = layer{}
	return out
}

// finishMerge turns a layer whose merge is done into a complete Double
// holding the result. A merge that overflowed records its error (Err) and
// keeps its complete result.
func (s *Spine) finishMerge(l *layer) {
	res, err := l.merger.Result()
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("spine: merging %v and %v: %w", l.b1.Desc(), l.b2.Desc(), err)
	}
	*l = layer{kind: double, b: res}
	s.version++
}

// tidyLayers lets a large top batch that compaction has shrunk move down, so
// that levels stay proportional to the data they hold.
func (s *Spine) tidyLayers() {
	n := len(s.layers)
	if n == 0 || s.layers[n-1].kind != single {
		return
	}
	appropriate := levelFor(s.layers[n-1].len())
	for appropriate < n-1 {
		l := s.layers[n-2]
		switch {
		case l.kind == vacant || (l.kind == single && l.b == nil):
			s.layers = append(s.layers[:n-2], s.layers[n-1])
			n = len(s.layers)
		case l.kind == single:
			smaller := 0
			for i := 0; i < n-2; i++ {
				switch s.layers[i].kind {
				case single:
					smaller += 1 << i
				case double:
					smaller += 2 << i
				}
			}
			if smaller <= (1<<n)/8 {
				s.layers = append(s.layers[:n-2], s.layers[n-1])
				s.insertAt(l.b, n-2)
			}
			return
		default:
			return
		}
	}
}

// reduced reports whether at most one layer is occupied and none is merging.
func (s *Spine) reduced() bool {
	occupied := 0
	for i := range s.layers {
		switch s.layers[i].kind {
		case double:
			return false
		case single:
			if s.layers[i].b != nil {
				occupied++
			}
		}
	}
	return occupied <= 1
}

// Exert does merge work without new input, as if effort records had arrived
// (§1.7 exert). It returns whether work remains. Repeated calls reduce the
// merge structure to one batch.
func (s *Spine) Exert(effort int64) bool {
	s.tidyLayers()
	if s.reduced() {
		return false
	}
	hasDouble := false
	for i := range s.layers {
		if s.layers[i].kind == double {
			hasDouble = true
		}
	}
	if hasDouble {
		s.applyFuel(effort)
	} else {
		// Introduce about effort virtual records: they roll up the levels
		// below theirs and push merges along as real arrivals would.
		s.introduceBatch(nil, levelFor(int(min(effort, 1<<40))))
	}
	s.tidyLayers()
	return !s.reduced()
}

// Work applies effort fuel to the merges in progress, without introducing
// virtual records (what an idle maintenance pass does: arrivals drive the
// rest). It reports whether a merge is still in progress.
func (s *Spine) Work(effort int64) bool {
	if !s.Merging() {
		return false
	}
	s.applyFuel(effort)
	s.tidyLayers()
	for i := range s.layers {
		if s.layers[i].inProgress() {
			return true
		}
	}
	return false
}

// Version changes whenever the chain's batches change (an insert, or a
// merge replacing two batches by one); moving batches between levels leaves
// it alone. A mirror of the chain is current while the version is the same.
func (s *Spine) Version() uint64 { return s.version }

// Merging reports whether a merge is in progress.
func (s *Spine) Merging() bool {
	for i := range s.layers {
		if s.layers[i].inProgress() {
			return true
		}
	}
	return false
}

// MapBatches calls f on every batch of the chain in time order (empty ones
// included).
func (s *Spine) MapBatches(f func(*batch.Batch)) {
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := &s.layers[i]
		switch {
		case l.inProgress():
			f(l.b1)
			f(l.b2)
		case l.kind != vacant && l.b != nil:
			f(l.b)
		}
	}
	for _, b := range s.pending {
		f(b)
	}
}

// Batches returns the chain (cold path: it allocates), with spare capacity
// so that a caller mirroring the chain can append the next inserted batches.
func (s *Spine) Batches() []*batch.Batch {
	out := make([]*batch.Batch, 0, 2*len(s.layers)+len(s.pending)+4)
	s.MapBatches(func(b *batch.Batch) { out = append(out, b) })
	return out
}

// BatchesThrough returns the non-empty batches holding exactly the updates at
// times before f (§1.8, S5). f must be at or beyond the physical compaction
// frontier and at or before the upper; f = {} means everything inserted so
// far. A non-empty pending batch that f splits is reported as ErrStraddle.
// The returned slice is fresh; the batches are shared.
func (s *Spine) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	if f == frontier.Min() {
		return nil, nil
	}
	if !s.physical.LessEqual(f) {
		return nil, fmt.Errorf("%w: cut %v, physical compaction %v", ErrBehindCut, f, s.physical)
	}
	if !f.IsEmpty() && !f.LessEqual(s.upper) {
		return nil, fmt.Errorf("%w: cut %v, upper %v", ErrBeyondUpper, f, s.upper)
	}
	var out []*batch.Batch
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := &s.layers[i]
		switch {
		case l.inProgress():
			out = appendNonEmpty(out, l.b1)
			out = appendNonEmpty(out, l.b2)
		case l.kind != vacant && l.b != nil:
			out = appendNonEmpty(out, l.b)
		}
	}
	for _, b := range s.pending {
		if b.IsEmpty() {
			continue
		}
		inLower, inUpper := b.Lower().LessEqual(f), b.Upper().LessEqual(f)
		if inLower != inUpper && f != b.Lower() {
			return nil, fmt.Errorf("%w: cut %v, batch %v", ErrStraddle, f, b.Desc())
		}
		if inUpper {
			out = append(out, b)
		}
	}
	return out, nil
}

func appendNonEmpty(out []*batch.Batch, b *batch.Batch) []*batch.Batch {
	if b.IsEmpty() {
		return out
	}
	return append(out, b)
}

// Stats returns the spine's counters.
func (s *Spine) Stats() Stats {
	st := Stats{Merges: s.merges, MergeWork: s.work, Pending: len(s.pending)}
	s.MapBatches(func(b *batch.Batch) {
		st.Batches++
		st.Updates += b.Len()
		st.Bytes += b.SizeBytes()
	})
	return st
}

// String describes the layers and pending batches, one a line, for tests.
func (s *Spine) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "upper %v logical %v physical %v", s.upper, s.logical, s.physical)
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := &s.layers[i]
		switch {
		case l.kind == vacant:
			continue
		case l.inProgress():
			fmt.Fprintf(&sb, "\nlevel %d: merging %v (%d) + %v (%d)", i, l.b1.Desc(), l.b1.Len(), l.b2.Desc(), l.b2.Len())
		case l.b == nil:
			fmt.Fprintf(&sb, "\nlevel %d: nothing", i)
		default:
			fmt.Fprintf(&sb, "\nlevel %d: %v (%d)", i, l.b.Desc(), l.b.Len())
		}
	}
	for _, b := range s.pending {
		fmt.Fprintf(&sb, "\npending: %v (%d)", b.Desc(), b.Len())
	}
	return sb.String()
}
