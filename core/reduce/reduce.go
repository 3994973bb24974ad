package reduce

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// Sentinel errors. Each names a broken precondition of the caller or of
// the input's trace; bad data never produces one (it becomes error rows,
// G3).
var (
	// ErrArity reports batches, aggregates or inputs whose arities do not
	// fit the reduce, and an Input with no reader, a negative arity or a
	// presentation that shows nothing from as_of on (a zero Pres), refused
	// by New, NewThreshold and NewDistinct.
	ErrArity = errors.New("reduce: arity mismatch")
	// ErrOrder reports a stream batch that starts before the end of what
	// the reduce has already seen, or ends beyond the frontier it is
	// stepped to.
	ErrOrder = errors.New("reduce: stream batch out of order")
	// ErrAggregate reports an aggregate the reduce cannot compute (an
	// unknown function, a column outside the record, a plan that does
	// not serve the function).
	ErrAggregate = errors.New("reduce: bad aggregate")
	// ErrStatsAttached reports Options.Stats (or OperatorOptions.Stats)
	// that already count another reduce.
	ErrStatsAttached = errors.New("reduce: stats already attached to another reduce")
	// ErrCorrupt reports an output trace holding more than one row for a
	// group: a broken internal contract, reported instead of a panic.
	ErrCorrupt = errors.New("reduce: output trace holds two rows for one group")
)

// Fn is an aggregate function.
type Fn uint8

// The aggregate functions (docs/spec.md, "The query": count counts records with
// multiplicity, sum adds value × count).
const (
	Count Fn = iota + 1
	Sum
	Min
	Max
)

func (f Fn) String() string {
	switch f {
	case Count:
		return "count"
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return fmt.Sprintf("fn(%d)", uint8(f))
}

// accumulable reports whether f is an abelian-group aggregate (§6.2).
func (f Fn) accumulable() bool { return f == Count || f == Sum }

// Aggregate is one aggregate of a reduce: Fn over column Col of the
// record (the val row of the input arrangement). Count ignores Col.
type Aggregate struct {
	Fn  Fn
	Col int
}

// Plan chooses how a reduce is computed (§6.2).
type Plan uint8

// The plans. Auto picks Accumulable for count and sum, Hierarchical (or
// Monotonic when the input is append-only) for min and max, and collates
// the two when a reduce has both kinds.
const (
	Auto Plan = iota
	// Accumulable keeps count and sum in diff space: an update costs a
	// seek for its record's count, never a pass over its group.
	Accumulable
	// Hierarchical computes min and max through layers of hashed
	// sub-buckets of each group, so an update recomputes O(log) small
	// groups.
	Hierarchical
	// Monotonic keeps the best value per group for append-only input; a
	// group that sees a retraction is recomputed from its history.
	Monotonic
	// Basic recomputes a group's aggregates from its whole history at
	// every time its input changes. It serves every aggregate.
	Basic
)

func (p Plan) String() string {
	switch p {
	case Auto:
		return "auto"
	case Accumulable:
		return "accumulable"
	case Hierarchical:
		return "hierarchical"
	case Monotonic:
		return "monotonic"
	case Basic:
		return "basic"
	}
	return fmt.Sprintf("plan(%d)", uint8(p))
}

// Input is the arrangement a reduce reads: its trace, how its batches are
// presented (identity for a Local arrangement; as_of and until for an
// imported one; the zero Presentation shows nothing and is refused) and
// its arity. For a reduce the key is the group and the
// val is the record; for a threshold or distinct the key is the whole
// record and the val arity is 0.
type Input struct {
	Reader trace.Reader
	Pres   batch.Presentation
	Arity  batch.Arity
}

// Options configure a reduce.
type Options struct {
	// AsOf is the dataflow's as_of: output is correct from it on, and every
	// output time is advanced to it.
	AsOf frontier.Frontier
	// Aggregates are the reduce's aggregates, in output order. Ignored by
	// threshold and distinct.
	Aggregates []Aggregate
	// Plan forces a plan; Auto chooses per aggregate kind.
	Plan Plan
	// AppendOnly promises the input has no retractions; Auto then computes
	// min and max with the Monotonic plan. A retraction is still handled
	// correctly, at the cost of recomputing its group.
	AppendOnly bool
	// Spine configures the reduce's internal traces.
	Spine spine.Options
	// Stats receives the operator's counters; nil keeps private ones.
	// One Stats serves one reduce: given to a second, it is
	// ErrStatsAttached.
	Stats *Stats
}

// mode is what a Reduce computes.
type mode uint8

const (
	modeReduce mode = iota
	modeThreshold
	modeDistinct
)

// Output is what one Step retired: the corrections to the reduce's output
// (Oks: key = group, val = aggregates in order, one row per group with
// count 1; for a threshold or distinct, key = record, val arity 0) and to
// its error collection (Errs: key = the error code, val arity 0), both
// described by [Lower, Upper). Retired is false when the step could not
// retire anything yet (Oks and Errs are nil then).
type Output struct {
	Retired      bool
	Lower, Upper frontier.Frontier
	Oks, Errs    *batch.Batch
}

// Reduce is a reduce, threshold or distinct over one arrangement (§6). It
// is stepped with the batches its input stream delivered and the stream's
// frontier; each step that can retires the interval [lower, frontier) and
// returns the corrections that make its output at every time of that
// interval equal the aggregate of the input accumulated there (G1).
//
// The reduce takes over the input's reader: it holds it physically at the
// lower of the interval it will retire next, from construction on (G2),
// and Release releases it. A Reduce is owned by one goroutine.
type Reduce struct {
	mode    mode
	in      Input
	asOf    frontier.Frontier
	aggs    []Aggregate
	plan    Plan
	stats   *Stats
	spine   spine.Options
	started bool
	lower   frontier.Frontier // G1: everything before lower is retired
	expect  frontier.Frontier // the upper of the last batch accepted
	pending []*batch.Batch    // stream batches not retired yet

	parts   []*part // one per aggregate kind (two when collated)
	collate *stage  // nil unless there are two parts
	colIn   *trace.Writer
	colBld  *batch.Builder
	colRoom int // the updates colBld was last sized for

	okBld  *batch.Sorted // the visible rows, pushed in key order (split)
	okOut  groupOut
	errBld *batch.Builder
	// overflow are the times at which a hierarchical layer's build of
	// this retire overflowed (keepOverflow), and the retire's lower once
	// per merge of a layer's trace that overflowed (mergeOverflows), and
	// the earliest time a stage first emitted at from a group it read in
	// a Saturated batch of the reduce's input (stage.retire): each becomes
	// a numeric overflow error. (A stage's corrections and
	// the collation push diffs of ±1 a group and time, which cannot leave
	// int64.)
	overflow []frontier.Time
	// satMarked says a read of a Saturated batch of the input has added
	// its numeric overflow: one a Reduce, at the earliest time it emitted
	// from such a batch. The error is never retracted, so it stands at
	// every later time; a marker a step grew the error's count with every
	// round that read the batch again, also for groups whose counts are
	// exact (docs/semantics.md §1.1).
	satMarked  bool
	appendOnly bool
	sized      bool // okBld has been sized by a first step
	released   bool
	// failed is the error of the step that failed (nil: none): every
	// later Step returns it and retires nothing, since the failed step may
	// have left a part retired and another not (docs/semantics.md §2.5).
	failed error
}

// New returns a reduce of in by its key with the given aggregates. The
// reduce takes over in.Reader; a refused New (every error it returns)
// leaves it with the caller, holds untouched, for the caller to release
// (AddReduce does), as NewThreshold and NewDistinct do.
func New(in Input, opts Options) (*Reduce, error) {
	if err := checkInput(in, opts); err != nil {
		return nil, err
	}
	if len(opts.Aggregates) == 0 {
		return nil, fmt.Errorf("%w: a reduce needs at least one aggregate", ErrAggregate)
	}
	for i, a := range opts.Aggregates {
		switch {
		case a.Fn < Count || a.Fn > Max:
			return nil, fmt.Errorf("%w: aggregate %d: unknown function %v", ErrAggregate, i, a.Fn)
		case a.Fn != Count && (a.Col < 0 || a.Col >= in.Arity.Val):
			return nil, fmt.Errorf("%w: aggregate %d (%v): column %d of a %d-column record", ErrAggregate, i, a.Fn, a.Col, in.Arity.Val)
		}
	}
	if err := attachStats(opts.Stats); err != nil {
		return nil, err
	}
	r := newReduce(modeReduce, in, opts)
	if err := r.build(); err != nil {
		if opts.Stats != nil {
			opts.Stats.attached.Store(false) // no reduce counts on it
		}
		r.releaseOwn() // the input's reader stays the caller's
		return nil, err
	}
	return r, nil
}

// attachStats claims s, when given, for the reduce being made.
func attachStats(s *Stats) error {
	if s != nil && !s.attach() {
		return fmt.Errorf("%w: the Stats of operator %q of dataflow %q count one reduce on one worker (make one for each, inside the dataflow's Build)", ErrStatsAttached, s.Operator, s.Dataflow)
	}
	return nil
}

// NewThreshold returns a threshold of in (§6.4): each record with positive
// count, at that count. in must be arranged by the whole record. A
// refused NewThreshold leaves in.Reader with the caller, as New does.
func NewThreshold(in Input, opts Options) (*Reduce, error) {
	return newRecordOp(modeThreshold, in, opts)
}

// NewDistinct returns a distinct of in (§6.4): each record with positive
// count once, and one `negative multiplicity` error per record with a
// negative count. in must be arranged by the whole record. A refused
// NewDistinct leaves in.Reader with the caller, as New does.
func NewDistinct(in Input, opts Options) (*Reduce, error) {
	return newRecordOp(modeDistinct, in, opts)
}

func newRecordOp(m mode, in Input, opts Options) (*Reduce, error) {
	if err := checkInput(in, opts); err != nil {
		return nil, err
	}
	if in.Arity.Val != 0 {
		return nil, fmt.Errorf("%w: threshold and distinct read an arrangement by the whole record, got %v", ErrArity, in.Arity)
	}
	if err := attachStats(opts.Stats); err != nil {
		return nil, err
	}
	r := newReduce(m, in, opts)
	k := kindThreshold
	if m == modeDistinct {
		k = kindDistinct
	}
	top := r.newStage(k, nil, in.Reader, in.Pres, in.Arity, 1)
	top.shared = true // the Reduce's input: retire moves its holds, once
	r.parts = []*part{{plan: Basic, top: top}}
	r.okBld = batch.NewSorted(batch.Arity{Key: in.Arity.Key}, 0)
	r.errBld = batch.NewBuilder(batch.Arity{Key: 1}, 0)
	return r, nil
}

// checkInput refuses an input the reduce cannot read: no reader, which
// its first step and Release would call, an arity with a negative part,
// which no trace has, or a presentation that shows nothing from as_of on
// (a zero Pres, whose Until is the minimum), which would make every
// output empty.
func checkInput(in Input, opts Options) error {
	if in.Reader == nil {
		return fmt.Errorf("%w: the input has no reader (nil)", ErrArity)
	}
	if in.Arity.Key < 0 || in.Arity.Val < 0 {
		return fmt.Errorf("%w: the input's arity %v has a negative part", ErrArity, in.Arity)
	}
	if !opts.AsOf.Less(in.Pres.Until) {
		return fmt.Errorf("%w: the input's presentation (%v) shows nothing from as_of %v on (a Local arrangement's is batch.Identity())", ErrArity, in.Pres, opts.AsOf)
	}
	return nil
}

func newReduce(m mode, in Input, opts Options) *Reduce {
	st := opts.Stats
	if st == nil {
		st = NewStats("", m.String())
	}
	return &Reduce{
		mode: m, in: in, asOf: opts.AsOf, aggs: append([]Aggregate(nil), opts.Aggregates...),
		plan: opts.Plan, stats: st, spine: opts.Spine, lower: frontier.Min(), expect: frontier.Min(),
		appendOnly: opts.AppendOnly, okOut: groupOut{va: len(opts.Aggregates)},
	}
}

func (m mode) String() string {
	switch m {
	case modeThreshold:
		return "threshold"
	case modeDistinct:
		return "distinct"
	}
	return "reduce"
}

// Stats returns the operator's counters.
func (r *Reduce) Stats() *Stats { return r.stats }

// Lower returns the frontier through which the reduce has retired its
// input: its output is final at every time before it.
func (r *Reduce) Lower() frontier.Frontier { return r.lower }

// Plans returns the plan of each part of the reduce, in the order the
// parts' aggregates first appear (two parts when the reduce collates).
func (r *Reduce) Plans() []Plan {
	out := make([]Plan, len(r.parts))
	for i, p := range r.parts {
		out[i] = p.plan
	}
	return out
}

// Step accepts the batches the input stream delivered since the last step
// (in stream order; each already in the input's trace, D2) and the
// stream's frontier, and retires [Lower(), upper) when it can: once upper
// is beyond as_of and at or beyond the reader's physical hold (an
// imported reader holds physically at the coverage it was seeded with,
// §6.4). Until then the batches are kept.
//
// An error is sticky: once a Step has failed (a batch of another arity,
// out of order, or beyond upper, or a broken internal trace), every later
// Step returns that same error and retires nothing, and Lower stays where
// it was before the failed step (docs/semantics.md §2.5). A Step after
// Release returns trace.ErrReleased.
func (r *Reduce) Step(batches []*batch.Batch, upper frontier.Frontier) (Output, error) {
	if r.released {
		return Output{}, trace.ErrReleased
	}
	if r.failed != nil {
		return Output{}, r.failed
	}
	out, err := r.step(batches, upper)
	if err != nil {
		r.failed = err
		return Output{}, err
	}
	return out, nil
}

func (r *Reduce) step(batches []*batch.Batch, upper frontier.Frontier) (Output, error) {
	for _, b := range batches {
		if a := b.Arity(); a != r.in.Arity {
			return Output{}, fmt.Errorf("%w: batch arity %v, the input's is %v", ErrArity, a, r.in.Arity)
		}
		if b.Lower().Less(r.expect) {
			return Output{}, fmt.Errorf("%w: batch %v after the stream reached %v", ErrOrder, b.Desc(), r.expect)
		}
		r.expect = b.Upper()
		if !b.IsEmpty() {
			r.pending = append(r.pending, b)
		}
	}
	if !r.expect.LessEqual(upper) {
		return Output{}, fmt.Errorf("%w: batches reach %v beyond the frontier %v", ErrOrder, r.expect, upper)
	}
	if !r.lower.Less(upper) {
		return Output{}, nil
	}
	if !r.started && (!r.asOf.Less(upper) || !r.in.Reader.PhysicalCompaction().LessEqual(upper)) {
		return Output{}, nil
	}
	var out Output
	var err error
	r.stats.Do(func(context.Context) { out, err = r.retire(upper) })
	return out, err
}

// retire computes the corrections for [lower, upper) from the pending
// batches, then moves the input's holds to upper (G2).
func (r *Reduce) retire(upper frontier.Frontier) (Output, error) {
	lower := r.lower
	var n int64
	for _, b := range r.pending {
		n += int64(b.Len())
	}
	if !r.sized {
		// The first step sizes the output builders by its groups (an
		// install emits about one row per group).
		keys := 0
		for _, b := range r.pending {
			keys += b.Keys()
		}
		r.okBld, r.sized = batch.NewSorted(r.okBld.Arity(), keys), true
	}
	var finals [2]*batch.Batch
	for i, p := range r.parts {
		f, err := p.retire(r, r.pending, upper)
		if err != nil {
			return Output{}, err
		}
		finals[i] = f
	}
	final := finals[0]
	if r.collate != nil {
		n := 0
		for _, f := range finals {
			n += f.Len()
		}
		r.colBld = sized(r.colBld, &r.colRoom, n)
		for i, p := range r.parts {
			collateRows(r.colBld, finals[i], i, p.pos, len(r.aggs))
		}
		b, err := r.colBld.Build(lower, upper)
		if err != nil {
			return Output{}, fmt.Errorf("reduce: collating [%v, %v): %w", lower, upper, err)
		}
		if err := r.colIn.Insert(b); err != nil {
			return Output{}, fmt.Errorf("reduce: collating [%v, %v): %w", lower, upper, err)
		}
		if final, err = r.collate.retire(nonEmpty(b), upper); err != nil {
			return Output{}, err
		}
	}
	mapped, errs := r.split(final)
	// A record's count that left int64 in a hierarchical layer: one
	// numeric overflow at each time it did (docs/semantics.md §1.1), the
	// saturated batch kept.
	for _, t := range r.overflow {
		r.errBld.Push([]int64{expr.CodeOverflow}, nil, t, 1)
		errs++
	}
	r.overflow = r.overflow[:0]
	oks := mapped
	if oks != nil {
		oks = oks.WithDesc(frontier.Description{Lower: lower, Upper: upper, Since: frontier.Min()})
	} else {
		var err error
		if oks, err = r.okBld.Build(lower, upper); err != nil {
			return Output{}, fmt.Errorf("reduce: output [%v, %v): %w", lower, upper, err)
		}
	}
	errb, err := r.errBld.Build(lower, upper)
	if err != nil {
		return Output{}, fmt.Errorf("reduce: errors [%v, %v): %w", lower, upper, err)
	}
	r.stats.updates.Add(n)
	r.stats.errors.Add(errs)
	clear(r.pending)
	r.pending = r.pending[:0]
	r.lower, r.started = upper, true
	trace.SetCompaction(r.in.Reader, upper)
	return Output{Retired: true, Lower: lower, Upper: upper, Oks: oks, Errs: errb}, nil
}

// split projects the final internal corrections (key, [tag, aggregates,
// hidden...]) into the visible oks and errors; it returns the net error
// count. When each group of final has one row and none is an error (an
// install: one new row per group), the oks are final's rows projected in
// a copy of their aggregate columns: the batch it returns shares final's
// keys and updates (batch.ProjectVals), and nothing is pushed into okBld.
// Otherwise it returns nil and the oks are in okBld.
func (r *Reduce) split(final *batch.Batch) (*batch.Batch, int64) {
	na := len(r.aggs)
	if final.Vals() == final.Keys() && final.ValColumnZero(0) { // no tag: no error row
		if oks, ok := final.ProjectVals(1, 1+na); ok {
			return oks, 0
		}
	}
	var errs int64
	for c := final.Cursor(); c.KeyValid(); c.StepKey() {
		key := c.Key()
		for ; c.ValValid(); c.StepVal() {
			row := c.Val()
			ts, ds := c.Updates()
			for i, t := range ts {
				if row[0] == 0 {
					r.okOut.add(row[1:1+na], t, ds[i])
				} else {
					r.errBld.Push(row[:1], nil, t, ds[i])
					errs += ds[i]
				}
			}
		}
		r.okOut.flush(r.okBld, key)
	}
	return nil, errs
}

// collateRows appends part i's corrections to the collation input: key =
// group, val = [part, tag, its aggregates at their output positions, 0
// elsewhere].
func collateRows(bld *batch.Builder, b *batch.Batch, i int, pos []int, na int) {
	row := make([]int64, 2+na)
	for c := b.Cursor(); c.KeyValid(); c.StepKey() {
		key := c.Key()
		for ; c.ValValid(); c.StepVal() {
			v := c.Val()
			clear(row)
			row[0], row[1] = int64(i), v[0]
			for j, p := range pos {
				row[2+p] = v[1+j]
			}
			ts, ds := c.Updates()
			for x, t := range ts {
				bld.Push(key, row, t, ds[x])
			}
		}
	}
}

func nonEmpty(b *batch.Batch) []*batch.Batch {
	if b.IsEmpty() {
		return nil
	}
	return []*batch.Batch{b}
}

// Release releases the input's reader and the reduce's internal traces.
// Calling it twice is a no-op.
func (r *Reduce) Release() {
	if r.released {
		return
	}
	r.released = true
	r.in.Reader.Release()
	r.releaseOwn()
}

// releaseOwn releases what the reduce made itself: its parts' and the
// collation's traces, not the input's reader.
func (r *Reduce) releaseOwn() {
	for _, p := range r.parts {
		p.release()
	}
	if r.collate != nil {
		r.collate.release()
		r.colIn.Close()
	}
}

// Owner returns the worker of peers that owns group key: the reduce's
// exchange by group key, the same function as dataflow.Context.Exchange
// on the key columns (§6.1: each worker reduces the keys it owns).
func Owner(key []int64, peers int) int {
	if peers <= 1 {
		return 0
	}
	cols := make([]int, len(key))
	for i := range cols {
		cols[i] = i
	}
	return dataflow.Worker(dataflow.HashCols(key, cols), peers)
}

// keepOverflow passes on a build's batch and error, but for an overflow of
// its diffs: the batch is then complete, every overflowed diff saturated
// (batch.Builder.Build), so the reduce goes on with it, and the times that
// overflowed are appended to *at, where Reduce.retire turns each into a
// numeric overflow error. Any other error is returned.
func keepOverflow(at *[]frontier.Time, b *batch.Batch, err error) (*batch.Batch, error) {
	var oe *batch.OverflowError
	if errors.As(err, &oe) {
		*at = append(*at, oe.Times...)
		return b, nil
	}
	return b, err
}
