package join

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// OperatorOptions configure a join operator in a dataflow.
type OperatorOptions struct {
	// Name names the operator in errors, profiles and metrics.
	Name string
	// Metrics, if not nil, receives the operator's Stats (one per path of
	// a delta join), readable per dataflow and operator.
	Metrics *Metrics
	// Dataflow is the dataflow's id, for the metrics and the labels.
	Dataflow string
	// Labels, if not nil, is the worker's pprof label context (runtime=,
	// worker=): the operator's work runs under it plus dataflow=,
	// operator= and path=. Nil runs without labels.
	Labels context.Context
	// Errs are the error arrangements of the `from` entries whose errors
	// this operator propagates, once each (K4); the caller lists each entry
	// once over all the operators of a query. Each must be an errs half
	// (Arrangement.Errs, keyed by the error code): a zero Arranged or an
	// oks half fails the create (ErrArity).
	Errs []dataflow.Arranged
}

func (o OperatorOptions) stats(c *dataflow.Context, path string) *Stats {
	if o.Metrics != nil {
		return o.Metrics.stage(c, o.Name, path, o.Dataflow)
	}
	return NewStats(o.Dataflow, o.Name, path)
}

// entryStats returns the counters of a delta join's forwarding of its
// entries' errors (Errs), which is the operator's and no path's (path ""):
// the one error it can produce itself is the numeric overflow it adds
// where it forwards a batch a merge saturated (Errors). Registered with
// Metrics only when there are entries to forward, so that
// ErrorCounts and Stats count it with the paths'; a delta join forwarding
// none has only its paths'.
func (o OperatorOptions) entryStats(c *dataflow.Context) *Stats {
	if len(o.Errs) == 0 {
		return NewStats(o.Dataflow, o.Name, "")
	}
	return o.stats(c, "")
}

// errPorts forwards the error batches of the entries an operator
// propagates, presented at as_of.
type errPorts struct {
	ports []*dataflow.Port[*batch.Batch]
	pres  []batch.Presentation
}

func newErrPorts(b *dataflow.OperatorBuilder, errs []dataflow.Arranged, asOf frontier.Frontier) errPorts {
	var e errPorts
	for i, a := range errs {
		e.ports = append(e.ports, dataflow.AddInput(b, fmt.Sprintf("errs %d", i), a.Stream))
		p := a.Pres
		p.Since = p.Since.Join(asOf)
		e.pres = append(e.pres, p)
	}
	return e
}

// forward appends the entries' new errors to out and returns the errors
// among them that are the operator's own (Sink.forwarded): the numeric
// overflow it adds where it forwards a batch a merge saturated.
func (e errPorts) forward(out *Sink) int64 {
	return out.forwarded(func() {
		for i, p := range e.ports {
			Errors(p.Take(), e.pres[i], out)
		}
	})
}

// forwardEntries is forward for the entries of a delta join of paths
// paths: each entry's errors go out once, however many paths read it
// (entryErrors).
func (e errPorts) forwardEntries(out *Sink, paths int) int64 {
	return out.forwarded(func() {
		for i, p := range e.ports {
			entryErrors(p.Take(), e.pres[i], paths, out)
		}
	})
}

// send moves the sink's chunks to the operator's outputs.
func send(s *Sink, oks, errs *dataflow.Stream[*dataflow.Chunk]) {
	o, e := s.Take()
	for _, c := range o {
		if c.Len() > 0 {
			oks.Send(c)
		}
	}
	for _, c := range e {
		if c.Len() > 0 {
			errs.Send(c)
		}
	}
}

// stepLabels is the label context an operator built by b runs its work
// under, with its own labels added (run), and returns to: its step's when
// the dataflow labels every step, so the rest of the step stays the
// operator's in a profile; otherwise labels, the worker's (nil: none).
func stepLabels(b *dataflow.OperatorBuilder, labels context.Context) context.Context {
	if labels == nil {
		return nil
	}
	if s := b.StepLabels(); s != nil {
		return s
	}
	return labels
}

// run runs f under the operator's labels when the worker gave its label
// context.
func run(labels context.Context, s *Stats, f func()) {
	if labels == nil {
		f()
		return
	}
	s.Do(labels, func(context.Context) { f() })
}

// joinOp is a Binary in a dataflow.
type joinOp struct {
	l, r      *dataflow.Port[*batch.Batch]
	errs      errPorts
	j         *Binary
	sink      *Sink
	labels    context.Context
	oks, errO *dataflow.Stream[*dataflow.Chunk]
	name      string      // the operator's, for its error
	fail      func(error) // the dataflow's Failer: the runtime reports it
	// again is OperatorBuilder.StepAgain's: a step matches at most
	// stepPairs pairs of updates and leaves the rest of its batches.
	again func()
	err   error
	// held is the output frontier the operator announced at its last step
	// that succeeded (its capability there, met with its inputs'
	// frontier): a failed step holds it there (docs/semantics.md §2.5).
	held frontier.Frontier
}

// stepPairs is the most pairs of updates a binary join's operator matches
// a step (past it by at most one pair of values' updates) before it leaves
// the rest of its batches, a key's values included, to the next
// (Binary.step): a
// step's output is about as many rows, so the operators after it (an
// arrangement that consolidates them) take them a step at a time.
var stepPairs = int64(1) << 16

func (o *joinOp) Step(in frontier.Frontier) frontier.Frontier {
	if o.err != nil {
		return o.held
	}
	l, r := o.l.Take(), o.r.Take()
	run(o.labels, o.j.stats, func() {
		// The numeric overflow of a saturated batch of the entries'
		// errors is the join's own: counted as its products' are.
		o.j.stats.errors.Add(o.errs.forward(o.sink))
		budget := stepPairs
		_, o.err = o.j.step(l, r, o.sink, &budget)
	})
	send(o.sink, o.oks, o.errO)
	if o.err != nil {
		// A broken stream contract: keep the output from completing at
		// times it may have missed (where it stood before this step: the
		// input frontier now covers batches the step did not join), and
		// report it through Stats and as the dataflow's error.
		o.err = operatorError(o.name, o.err)
		o.j.stats.fail(o.err)
		o.fail(o.err)
		return o.held
	}
	o.j.Compact(o.l.Frontier(), o.r.Frontier())
	// A batch left to join emits at or after its lower: the capability
	// holds the output there until it is joined.
	capability, pending := o.j.Pending()
	if pending {
		o.again()
	}
	o.held = in.Meet(capability)
	return capability
}

func (o *joinOp) Shutdown() {}

// checkArity refuses an arrangement whose arity is unknown: no arity for
// key columns it names. Arity 0 with no key columns is a collection of no
// columns (a query view's project []), which a join reads as any other.
func checkArity(op string, a dataflow.Arranged, what string) error {
	if a.Arity == (batch.Arity{}) && len(a.Key) > 0 {
		return fmt.Errorf("%w: operator %q: %s arrangement names %d key columns but has arity 0 (not made by Arrange or ImportIndex?)", ErrArity, op, what, len(a.Key))
	}
	return nil
}

// checkErrs refuses an entry's error arrangement (OperatorOptions.Errs)
// that the operator cannot forward: one with no stream (a zero Arranged,
// whose port panicked in the Build) or not keyed by one error code (an
// oks half given as Errs, whose key columns were forwarded as error codes:
// a wrong error collection and no error of the create), as a reduce's
// ForwardErrs refuses its arrangement's.
func checkErrs(op string, errs []dataflow.Arranged) error {
	for i, a := range errs {
		if !a.ErrsShaped() {
			return fmt.Errorf("%w: operator %q: Errs[%d] has no stream or is not an errs half keyed by one error code (arity %v)", ErrArity, op, i, a.Arity)
		}
	}
	return nil
}

// Join adds a binary join of two arrangements with the same key to the
// dataflow (a linear join's stage, §5.3): its output rows are key ++ left
// val ++ right val, then the closure, at the later of the two times. The
// returned collection's errors are the errors the join produces plus those
// of opts.Errs. With several workers the arrangements are already sharded
// by their key, so the join exchanges nothing.
func Join(c *dataflow.Context, left, right *dataflow.Arrangement, closure Closure, opts OperatorOptions) (dataflow.Collection, error) {
	if opts.Name == "" {
		opts.Name = "join"
	}
	if left == nil || right == nil {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: no left or right arrangement (nil)", ErrArity, opts.Name)
	}
	if err := checkErrs(opts.Name, opts.Errs); err != nil {
		return dataflow.Collection{}, err
	}
	la, ra := left.Oks, right.Oks
	if err := checkArity(opts.Name, la, "left"); err != nil {
		return dataflow.Collection{}, err
	}
	if err := checkArity(opts.Name, ra, "right"); err != nil {
		return dataflow.Collection{}, err
	}
	j, err := NewBinary(
		Side{Reader: c.Keep(la.Reader), Pres: la.Pres, Arity: la.Arity},
		Side{Reader: c.Keep(ra.Reader), Pres: ra.Pres, Arity: ra.Arity},
		BinaryOptions{AsOf: c.AsOf(), Closure: closure, Stats: opts.stats(c, "")})
	if err != nil {
		return dataflow.Collection{}, operatorError(opts.Name, err)
	}
	b := c.NewOperator(opts.Name)
	op := &joinOp{
		l: dataflow.AddInput(b, "left", la.Stream), r: dataflow.AddInput(b, "right", ra.Stream),
		j: j, sink: NewSink(j.Arity()), labels: stepLabels(b, opts.Labels),
		name: opts.Name, fail: c.Failer(), again: b.StepAgain(),
	}
	op.errs = newErrPorts(b, opts.Errs, c.AsOf())
	op.oks, op.errO = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(op); err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: j.Arity(), Oks: op.oks, Errs: op.errO}, nil
}

// DeltaStage is one lookup of a delta path in a dataflow.
type DeltaStage struct {
	// Lookup is the arrangement looked up, by the stage's key.
	Lookup *dataflow.Arrangement
	// Relation is the lookup's `from` entry.
	Relation int
	// StreamKey are the columns of the path's row that form the key.
	StreamKey []int
	// Closure, if not nil, filters the stage's matches (see Stage.Closure;
	// it cannot err).
	Closure *MFP
}

// DeltaPath is one path of a delta join in a dataflow.
type DeltaPath struct {
	// Source is the path's `from` entry and Arranged its arrangement,
	// whose batches feed the path.
	Source   int
	Arranged *dataflow.Arrangement
	Stages   []DeltaStage
	Final    Closure
}

// checkPaths refuses paths that are not one delta join's: one path from
// each of the len(paths) entries, each looking up every other entry once
// (§5.4). Two paths from one entry, or a lookup of an entry outside them,
// would match a pair of updates at one time on two paths (D1 orders the
// paths by their entries), and a path missing a lookup would emit partial
// rows: answers wrong without an error.
func checkPaths(paths []DeltaPath) error {
	n := len(paths)
	from := make([]bool, n)
	for i, dp := range paths {
		switch {
		case dp.Arranged == nil:
			return fmt.Errorf("path %d (entry %d) has no arrangement", i, dp.Source)
		case dp.Source < 0 || dp.Source >= n:
			return fmt.Errorf("path %d is from entry %d, outside the %d entries of %d paths", i, dp.Source, n, n)
		case from[dp.Source]:
			return fmt.Errorf("two paths are from entry %d", dp.Source)
		case len(dp.Stages) != n-1:
			return fmt.Errorf("path from entry %d looks up %d entries, want the %d others", dp.Source, len(dp.Stages), n-1)
		}
		from[dp.Source] = true
		looked := make([]bool, n)
		for _, st := range dp.Stages {
			switch {
			case st.Lookup == nil:
				return fmt.Errorf("path from entry %d: lookup of entry %d has no arrangement", dp.Source, st.Relation)
			case st.Relation < 0 || st.Relation >= n:
				return fmt.Errorf("path from entry %d looks up entry %d, outside the %d entries", dp.Source, st.Relation, n)
			case st.Relation == dp.Source:
				return fmt.Errorf("path from entry %d looks up its own entry", dp.Source)
			case looked[st.Relation]:
				return fmt.Errorf("path from entry %d looks up entry %d twice", dp.Source, st.Relation)
			}
			looked[st.Relation] = true
		}
	}
	return nil
}

// deltaOp is a delta join's paths in a dataflow.
type deltaOp struct {
	src     []*dataflow.Port[*batch.Batch] // per path
	lookups []*dataflow.Port[*batch.Batch] // progress only: batches are read from the traces
	paths   []*Path
	errs    errPorts
	sink    *Sink
	labels  context.Context
	// entryStats label the forwarding of the entries' errors, which is
	// the operator's and no path's: dataflow= and operator=, no path=.
	// They count the numeric overflow it adds where it forwards a
	// saturated batch (OperatorOptions.entryStats).
	entryStats *Stats
	oks, errO  *dataflow.Stream[*dataflow.Chunk]
	name       string      // the operator's, for its error
	fail       func(error) // the dataflow's Failer: the runtime reports it
	// again is OperatorBuilder.StepAgain's: a step matches at most
	// stepWindows windows over its paths and leaves the rest (D3).
	again func()
	err   error
	// held is the output frontier the operator announced at its last step
	// that succeeded (its capability there, met with its inputs'
	// frontier): a failed step holds it there (docs/semantics.md §2.5).
	held frontier.Frontier
}

func (o *deltaOp) Step(in frontier.Frontier) frontier.Frontier {
	if o.err != nil {
		return o.held
	}
	for _, p := range o.lookups {
		p.Take()
	}
	run(o.labels, o.entryStats, func() { o.entryStats.errors.Add(o.errs.forwardEntries(o.sink, len(o.paths))) })
	budget, done := stepWindows, true
	for i, p := range o.paths {
		batches, f := o.src[i].Take(), o.src[i].Frontier()
		run(o.labels, p.stats, func() {
			if o.err = p.Feed(batches, o.sink); o.err == nil {
				var all bool
				all, o.err = p.work(f, o.sink, &budget)
				done = done && all
			}
		})
		if o.err != nil {
			o.err = operatorError(o.name, o.err)
			p.stats.fail(o.err)
			o.fail(o.err)
			break
		}
	}
	send(o.sink, o.oks, o.errO)
	if o.err != nil {
		return o.held
	}
	if !done {
		o.again()
	}
	// NB: a proposal waiting for its lookup needs no capability: it waits
	// only while a lookup's frontier has not passed its initial time, and
	// the lookups are inputs, so the output frontier (the meet of the
	// inputs' frontiers) cannot pass the data times it will be emitted
	// at. A ready one a step left for the next (its budget spent) is held
	// by the capability at the least initial time stashed, as a staged
	// stage's is (X4).
	capability := frontier.Empty()
	for _, p := range o.paths {
		if t, ok := p.Outstanding(); ok {
			capability = capability.Meet(frontier.At(t))
		}
	}
	o.held = in.Meet(capability)
	return capability
}

func (o *deltaOp) Shutdown() {}

// DeltaJoin adds a delta join (§5.4) to the dataflow: one path per entry,
// each fed by its source arrangement's batches and looking up the other
// entries' arrangements, which must already exist (a delta join builds no
// arrangement). The returned collection's errors are the errors the paths
// produce plus those of opts.Errs (each entry's errors, once, K4).
//
// On one worker the paths run fused in one operator. On several, each
// path is staged (X1–X3): a feed operator, then per lookup an exchange of
// the proposals by the stage's stream key and the half join's operator,
// then one operator merging the paths' rows and every error.
func DeltaJoin(c *dataflow.Context, paths []DeltaPath, opts OperatorOptions) (dataflow.Collection, error) {
	if opts.Name == "" {
		opts.Name = "delta join"
	}
	if len(paths) == 0 {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: a delta join needs a path", ErrArity, opts.Name)
	}
	if err := checkPaths(paths); err != nil {
		return dataflow.Collection{}, fmt.Errorf("%w: operator %q: %v", ErrArity, opts.Name, err)
	}
	if err := checkErrs(opts.Name, opts.Errs); err != nil {
		return dataflow.Collection{}, err
	}
	var built []*Path
	arity := -1
	for _, dp := range paths {
		src := dp.Arranged.Oks
		if err := checkArity(opts.Name, src, fmt.Sprintf("path %d source", dp.Source)); err != nil {
			return dataflow.Collection{}, err
		}
		var stages []Stage
		for _, st := range dp.Stages {
			lk := st.Lookup.Oks
			if err := checkArity(opts.Name, lk, fmt.Sprintf("path %d lookup %d", dp.Source, st.Relation)); err != nil {
				return dataflow.Collection{}, err
			}
			stages = append(stages, Stage{Lookup: c.Keep(lk.Reader), Pres: lk.Pres, Arity: lk.Arity, Relation: st.Relation, StreamKey: st.StreamKey, Closure: st.Closure})
		}
		p, err := NewPath(PathOptions{Source: dp.Source, SourcePres: src.Pres, SourceArity: src.Arity, AsOf: c.AsOf(),
			Stages: stages, Final: dp.Final, Stats: opts.stats(c, fmt.Sprint(dp.Source))})
		if err != nil {
			return dataflow.Collection{}, operatorError(opts.Name, err)
		}
		if arity >= 0 && p.Arity() != arity {
			return dataflow.Collection{}, fmt.Errorf("%w: operator %q: path %d emits %d columns, path %d emits %d", ErrArity, opts.Name, dp.Source, p.Arity(), paths[0].Source, arity)
		}
		arity = p.Arity()
		built = append(built, p)
	}
	entry := opts.entryStats(c)
	if c.Peers() > 1 {
		return stagedDelta(c, built, paths, arity, entry, opts)
	}
	b := c.NewOperator(opts.Name)
	op := &deltaOp{labels: stepLabels(b, opts.Labels), paths: built, entryStats: entry,
		name: opts.Name, fail: c.Failer(), again: b.StepAgain()}
	for _, dp := range paths {
		op.src = append(op.src, dataflow.AddInput(b, fmt.Sprintf("path %d", dp.Source), dp.Arranged.Oks.Stream))
	}
	for _, dp := range paths {
		for _, st := range dp.Stages {
			// The lookups' progress decides when stashed proposals are
			// ready: the operator is stepped when they move.
			op.lookups = append(op.lookups, dataflow.AddInput(b, fmt.Sprintf("path %d lookup %d", dp.Source, st.Relation), st.Lookup.Oks.Stream))
		}
	}
	op.errs = newErrPorts(b, opts.Errs, c.AsOf())
	op.sink = NewSink(arity)
	op.oks, op.errO = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(op); err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: arity, Oks: op.oks, Errs: op.errO}, nil
}

// operatorError names operator name in err, one of the package's errors
// met by a step or a build of it: the prefix "join: " once, the error's
// own when it has it (every sentinel of the package starts with it), so
// that it never reads "join: operator \"x\": join: ...".
func operatorError(name string, err error) error {
	if strings.HasPrefix(err.Error(), "join: ") {
		return fmt.Errorf("operator %q: %w", name, err)
	}
	return fmt.Errorf("join: operator %q: %w", name, err)
}
