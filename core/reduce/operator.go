package reduce

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
)

// OperatorOptions configure a reduce, threshold or distinct operator in a
// dataflow.
type OperatorOptions struct {
	// Name names the operator in errors, profiles and Stats.
	Name string
	// Dataflow is the dataflow's id, for Stats and the pprof labels.
	Dataflow string
	// Labels, if not nil, is the worker's pprof label context (runtime=,
	// worker=); the operator's work runs under it plus dataflow= and
	// operator=. Nil means the dataflow's worker's (Context.Labels), so
	// the work, and the rest of the step after it, keeps runtime= and
	// worker=.
	Labels context.Context
	// Plan and AppendOnly are as in Options.
	Plan       Plan
	AppendOnly bool
	// Stats, if not nil, receives the operator's counters. It serves one
	// operator on one worker: given to a second (another operator, or
	// the same one on another worker, as Build runs once per worker), it
	// fails that create with ErrStatsAttached; make it inside Build.
	Stats *Stats
	// ForwardErrs makes the operator pass the input arrangement's errors
	// on, once, presented at as_of (G3); leave it false when another
	// operator of the query already forwards them.
	ForwardErrs bool
}

// AddReduce adds a reduce of a's oks (key = group, val = record) with the
// given aggregates to the dataflow. The returned collection's rows are the
// group's columns then the aggregates in order, one per group with count
// 1; its errors are the reduce's own and, with ForwardErrs, a's. With
// several workers a is already sharded by its key (an arrangement is
// exchanged by its key), so every worker reduces the groups it owns. An
// arrangement whose Oks.Arity does not fit its Key and Arity, or that
// lacks a half the operator reads (an oks stream or reader; with
// ForwardErrs an errs stream keyed by the code), fails the create
// (ErrArity), as do the aggregates New refuses; an error of a
// later step is the dataflow's (Context.Failer).
func AddReduce(c *dataflow.Context, a *dataflow.Arrangement, aggs []Aggregate, opts OperatorOptions) (dataflow.Collection, error) {
	if opts.Name == "" {
		opts.Name = "reduce"
	}
	return addOp(c, a, opts, func(in Input, o Options) (*Reduce, error) {
		o.Aggregates = aggs
		return New(in, o)
	})
}

// AddThreshold adds a threshold of a (arranged by the whole record): each
// record with positive count, at that count; no errors of its own.
func AddThreshold(c *dataflow.Context, a *dataflow.Arrangement, opts OperatorOptions) (dataflow.Collection, error) {
	if opts.Name == "" {
		opts.Name = "threshold"
	}
	return addOp(c, a, opts, NewThreshold)
}

// AddDistinct adds a distinct of a (arranged by the whole record): each
// record with positive count once, one `negative multiplicity` per record
// with a negative count.
func AddDistinct(c *dataflow.Context, a *dataflow.Arrangement, opts OperatorOptions) (dataflow.Collection, error) {
	if opts.Name == "" {
		opts.Name = "distinct"
	}
	return addOp(c, a, opts, NewDistinct)
}

func addOp(c *dataflow.Context, a *dataflow.Arrangement, opts OperatorOptions, mk func(Input, Options) (*Reduce, error)) (dataflow.Collection, error) {
	if a == nil {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: no arrangement (nil)", ErrArity, opts.Name)
	}
	oks := a.Oks
	if oks.Stream == nil || oks.Reader == nil {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: the arrangement has no oks stream or reader (not made by Arrange or ImportIndex?)", ErrArity, opts.Name)
	}
	if opts.ForwardErrs && !a.Errs.ErrsShaped() {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: ForwardErrs, but the arrangement's errs half has no stream or is not keyed by one error code (arity %v)", ErrArity, opts.Name, a.Errs.Arity)
	}
	if oks.Arity == (batch.Arity{}) && len(a.Key) > 0 {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: the arrangement names %d key columns but has arity 0 (not made by Arrange or ImportIndex?)", ErrArity, opts.Name, len(a.Key))
	}
	if len(a.Key) != oks.Arity.Key || a.Arity != oks.Arity.Key+oks.Arity.Val {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: the arrangement's oks arity %v does not fit its %d key columns of %d", ErrArity, opts.Name, oks.Arity, len(a.Key), a.Arity)
	}
	st := opts.Stats
	if st == nil {
		st = NewStats(opts.Dataflow, opts.Name)
	}
	// The reduce owns a reader of its own, holding where the arrangement's
	// does now (G2); it is released when the dataflow is dropped.
	reader := oks.Reader.CloneReader()
	r, err := mk(Input{Reader: reader, Pres: oks.Pres, Arity: oks.Arity},
		Options{AsOf: c.AsOf(), Plan: opts.Plan, AppendOnly: opts.AppendOnly, Stats: st})
	if err != nil {
		reader.Release()
		return dataflow.Collection{}, operatorError(opts.Name, err)
	}
	// Only once the reduce has claimed st: a Stats another reduce counts
	// is not written.
	labels := opts.Labels
	if labels == nil {
		labels = c.Labels()
	}
	if labels != nil {
		st.SetContext(labels)
	}
	b := c.NewOperator(opts.Name)
	if s := b.StepLabels(); s != nil {
		st.SetContext(s) // the rest of the step stays under the step's labels
	}
	op := &reduceOp{in: dataflow.AddInput(b, "arranged", oks.Stream), r: r, fail: c.Failer()}
	if opts.ForwardErrs {
		op.errIn = dataflow.AddInput(b, "errs", a.Errs.Stream)
		op.errPres = a.Errs.Pres
		op.errPres.Since = op.errPres.Since.Join(c.AsOf())
	}
	op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(op); err != nil {
		r.Release()
		st.attached.Store(false) // a failed create leaves the Stats free, as New's do
		return dataflow.Collection{}, err
	}
	arity := oks.Arity.Key + len(r.aggs)
	return dataflow.Collection{Arity: arity, Oks: op.oks, Errs: op.errs}, nil
}

// reduceOp is a Reduce in a dataflow. Its capability is the reduce's
// lower: it may still emit at any time from there on.
type reduceOp struct {
	in      *dataflow.Port[*batch.Batch]
	errIn   *dataflow.Port[*batch.Batch]
	errPres batch.Presentation
	// errSatMarked says forward has added the numeric overflow of a
	// Saturated error batch it passed on: one, however many it reads.
	errSatMarked bool
	r            *Reduce
	oks          *dataflow.Stream[*dataflow.Chunk]
	errs         *dataflow.Stream[*dataflow.Chunk]
	err          error
	fail         func(error) // the dataflow's Failer: the runtime reports it
	released     bool
}

func (o *reduceOp) Step(frontier.Frontier) frontier.Frontier {
	if o.errIn != nil {
		o.forward(o.errIn.Take())
	}
	if o.err != nil {
		return o.r.Lower() // a broken stream contract: never complete past it
	}
	out, err := o.r.Step(o.in.Take(), o.in.Frontier())
	if err != nil {
		o.err = operatorError(o.r.stats.Operator, err)
		o.r.stats.fail(o.err)
		o.fail(o.err)
		return o.r.Lower()
	}
	if out.Retired {
		send(out.Oks, o.oks)
		send(out.Errs, o.errs)
	}
	return o.r.Lower()
}

// send emits a batch of the reduce's output as a chunk of rows: key ++
// val for oks, the code for errors.
func send(b *batch.Batch, s *dataflow.Stream[*dataflow.Chunk]) {
	if b.IsEmpty() {
		return
	}
	ar := b.Arity()
	width := ar.Key + ar.Val
	ch := dataflow.NewChunk(width, b.Len())
	for c := b.Cursor(); c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			ts, ds := c.Updates()
			for i, t := range ts {
				ch.Rows = append(ch.Rows, c.Key()...)
				ch.Rows = append(ch.Rows, c.Val()...)
				ch.Times = append(ch.Times, t)
				ch.Diffs = append(ch.Diffs, ds[i])
			}
		}
	}
	s.Send(ch)
}

// forward passes the input arrangement's error batches on, presented at
// as_of (each error row is its code, the arrangement's key). A batch a
// merge saturated (batch.Batch.Saturated: an error count out of int64,
// whose arrangement's marker went to its frontier, which may be after
// the times forwarded) goes with one `numeric overflow` at the earliest
// time forwarded from it, once an operator (G3: the error is never
// retracted, so it stands at every later time), where the count, the
// bound of its sign, read as the errors' exact count there. That error
// is the reduce's own, and its Stats count it; the errors it passes on
// they do not.
func (o *reduceOp) forward(bs []*batch.Batch) {
	for _, b := range bs {
		ch := dataflow.NewChunk(1, b.Len())
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				ts, ds := c.Updates()
				for i, t := range ts {
					if t, ok := o.errPres.Present(t); ok {
						ch.Push(c.Key()[:1], t, ds[i])
					}
				}
			}
		}
		if ch.Len() > 0 && b.Saturated() && !o.errSatMarked {
			o.errSatMarked = true
			ch.Push([]int64{expr.CodeOverflow}, slices.Min(ch.Times), 1)
			// The reduce's own error, not its input's (G3): counted
			// as the one a saturated batch of its records adds is.
			o.r.stats.errors.Add(1)
		}
		if ch.Len() > 0 {
			o.errs.Send(ch)
		}
	}
}

func (o *reduceOp) Shutdown() {
	if !o.released {
		o.released = true
		o.r.Release()
	}
}

// operatorError names operator name in err, one of the package's errors
// met by a step or a build of it: the prefix "reduce: " once, the error's
// own when it has it (every sentinel of the package starts with it), so
// that it never reads "reduce: operator \"x\": reduce: ...".
func operatorError(name string, err error) error {
	if strings.HasPrefix(err.Error(), "reduce: ") {
		return fmt.Errorf("operator %q: %w", name, err)
	}
	return fmt.Errorf("reduce: operator %q: %w", name, err)
}
