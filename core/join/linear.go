package join

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// LinearStage is one stage of a linear join (§5.3).
type LinearStage struct {
	// Lookup is the arrangement the stage joins with, by the stage's key.
	// The join takes over its reader.
	Lookup Side
	// StreamKey are the columns of the running result that form the
	// stage's key; the running result is arranged by them, with the other
	// columns (in order) as its val. The first stage reads the source
	// arrangement as it is and ignores StreamKey.
	StreamKey []int
	// Closure, if not nil, is applied to the stage's joined rows (key ++
	// stream val ++ lookup val); its output is the running result.
	Closure Closure
	// Stats receives the stage's counters; nil keeps private ones.
	Stats *Stats
}

// LinearOptions configure a linear join.
type LinearOptions struct {
	// Source is the source arrangement, arranged by the first stage's key.
	// The join takes over its reader.
	Source Side
	// AsOf is the dataflow's as_of.
	AsOf frontier.Frontier
	// Stages are the stages in order; there is at least one.
	Stages []LinearStage
	// Spine configures the spines of the running results' arrangements.
	Spine spine.Options
}

// Linear is a linear join (§5.3): stage i joins the running result,
// arranged by the stage's stream key, with the stage's lookup
// arrangement (a Binary), and applies the stage's closure. The running
// result between stages is arranged here, sealed up to the meet of the
// stage's input frontiers, before which no output can still come.
//
// Errors (K4): each stage's closure and overflow errors go to the output;
// the inputs' errors are the caller's. An overflow while arranging a
// running result keeps every other update (the diff saturated) and is a
// `numeric overflow` at the overflowing time; one a merge of the running
// result finds later is one at the running result's sealed frontier, the
// earliest time the join can still emit (docs/semantics.md §1.1).
//
// A Linear is owned by one goroutine.
type Linear struct {
	stages []*Binary
	mids   []*arranged // mids[i] arranges stage i's output for stage i+1
	failed error       // the failed step's, which every later Step returns
}

// arranged is a running result's arrangement, built and owned by the join.
type arranged struct {
	keyCols, valCols []int
	batcher          *batch.Batcher
	w                *trace.Writer
	spine            *spine.Spine
	merges           int // overflowing merges of spine already reported
	sealed           frontier.Frontier
	sink             *Sink // stage output before it is arranged
}

// NewLinear returns a linear join.
func NewLinear(opts LinearOptions) (*Linear, error) {
	if len(opts.Stages) == 0 {
		return nil, fmt.Errorf("%w: a linear join needs a stage", ErrArity)
	}
	l := &Linear{}
	left := opts.Source
	for i, st := range opts.Stages {
		if i > 0 {
			m := l.mids[i-1]
			prev := l.stages[i-1]
			arity := prev.Arity()
			if err := checkCols(st.StreamKey, arity); err != nil {
				return nil, fmt.Errorf("join: linear stage %d: %w", i, err)
			}
			// Every step reads the stream key: the caller's slice is the
			// caller's to reuse once the join is made (as a delta join's).
			m.keyCols = slices.Clone(st.StreamKey)
			for c := range arity {
				if !containsCol(st.StreamKey, c) {
					m.valCols = append(m.valCols, c)
				}
			}
			ar := batch.Arity{Key: len(m.keyCols), Val: len(m.valCols)}
			m.spine = spine.New(ar, opts.Spine)
			h, w := trace.New(m.spine)
			m.batcher, m.w, m.sink = batch.NewBatcher(ar, 0), w, NewSink(arity)
			left = Side{Reader: h, Pres: batch.Identity(), Arity: ar}
		}
		j, err := NewBinary(left, st.Lookup, BinaryOptions{AsOf: opts.AsOf, Closure: st.Closure, Stats: st.Stats})
		if err != nil {
			return nil, fmt.Errorf("join: linear stage %d: %w", i, err)
		}
		l.stages = append(l.stages, j)
		if i+1 < len(opts.Stages) {
			l.mids = append(l.mids, &arranged{sealed: frontier.Min()})
		}
	}
	return l, nil
}

func checkCols(cols []int, arity int) error {
	for _, c := range cols {
		if c < 0 || c >= arity {
			return fmt.Errorf("%w: column %d outside rows of arity %d", ErrArity, c, arity)
		}
	}
	return nil
}

func containsCol(cols []int, c int) bool {
	for _, x := range cols {
		if x == c {
			return true
		}
	}
	return false
}

// Arity returns the arity of the rows the join emits.
func (l *Linear) Arity() int { return l.stages[len(l.stages)-1].Arity() }

// Stage returns stage i's binary join.
func (l *Linear) Stage(i int) *Binary { return l.stages[i] }

// Step runs every stage: source are the source arrangement's new batches
// and sourceF its stream frontier after them; lookups[i] and lookupF[i]
// the same for stage i's lookup. Output rows and every stage's errors go
// to out. A failed step's error is sticky, as Binary's: every later Step
// returns it and appends nothing (docs/semantics.md §2.5).
func (l *Linear) Step(source []*batch.Batch, sourceF frontier.Frontier, lookups [][]*batch.Batch, lookupF []frontier.Frontier, out *Sink) error {
	if l.failed != nil {
		return l.failed
	}
	l.failed = l.step(source, sourceF, lookups, lookupF, out)
	return l.failed
}

func (l *Linear) step(source []*batch.Batch, sourceF frontier.Frontier, lookups [][]*batch.Batch, lookupF []frontier.Frontier, out *Sink) error {
	left, leftF := source, sourceF
	for i, j := range l.stages {
		sink := out
		if i < len(l.mids) {
			sink = l.mids[i].sink
		}
		if err := j.Step(left, lookups[i], sink); err != nil {
			return fmt.Errorf("join: linear stage %d: %w", i, err)
		}
		j.Compact(leftF, lookupF[i])
		if i == len(l.mids) {
			break
		}
		m := l.mids[i]
		for _, c := range m.sink.Oks() {
			for r := range c.Len() {
				m.batcher.PushRow(c.Row(r), m.keyCols, m.valCols, c.Times[r], c.Diffs[r])
			}
		}
		for _, c := range m.sink.Errs() {
			for r := range c.Len() {
				out.Error(c.Rows[r], c.Times[r], c.Diffs[r])
			}
		}
		m.sink.Recycle()
		left = nil
		if f := leftF.Meet(lookupF[i]); m.sealed.Less(f) {
			b, err := m.batcher.Seal(m.sealed, f)
			var oe *batch.OverflowError
			if errors.As(err, &oe) {
				// The batch is complete, the overflowed diffs saturated.
				for _, t := range oe.Times {
					out.Error(expr.CodeOverflow, t, 1)
				}
				err = nil
			}
			if err == nil {
				err = m.w.Insert(b)
			}
			if err != nil {
				return fmt.Errorf("join: linear stage %d: arranging its output through %v: %w", i, f, err)
			}
			m.sealed = f
			if !b.IsEmpty() {
				left = []*batch.Batch{b}
			}
		}
		if n := m.spine.Overflows(); n != m.merges {
			// A merge found the overflow after its time was sealed.
			if t, ok := m.sealed.Time(); ok {
				out.Error(expr.CodeOverflow, t, int64(n-m.merges))
			}
			m.merges = n
		}
		leftF = m.sealed
	}
	return nil
}

// Release releases every stage's readers, the running results' included.
func (l *Linear) Release() {
	for _, j := range l.stages {
		j.Release()
	}
}
