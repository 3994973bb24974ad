package join

import (
	"context"
	"fmt"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// A staged delta path (X1–X3 of the package doc) is one path of a delta
// join on several workers: a feed operator and one operator per half join,
// connected by exchanges on each stage's stream key. Between them a
// path's updates travel as proposal chunks: the row, then the data time
// as one more column; the chunk's time is the update's initial time, so
// an exchange's frontier bounds the initial times still to come.

// encodeProposals returns u as a proposal chunk.
func encodeProposals(u *Updates) *dataflow.Chunk {
	c := dataflow.NewChunk(u.Arity+1, u.Len())
	for i := range u.Len() {
		c.Rows = append(append(c.Rows, u.Row(i)...), int64(u.Data[i]))
	}
	c.Times = append(c.Times, u.Init...)
	c.Diffs = append(c.Diffs, u.Diffs...)
	return c
}

// decodeProposals appends the updates of proposal chunks to u.
func decodeProposals(chunks []*dataflow.Chunk, u *Updates) error {
	a := u.Arity
	for _, c := range chunks {
		if c.Arity != a+1 {
			return fmt.Errorf("%w: proposal chunk of arity %d, stage expects %d", ErrArity, c.Arity, a+1)
		}
		if err := c.Check(); err != nil {
			return err
		}
		for i := range c.Len() {
			row := c.Row(i)
			u.Rows = append(u.Rows, row[:a]...)
			u.Data = append(u.Data, uint64(row[a]))
		}
		u.Init = append(u.Init, c.Times...)
		u.Diffs = append(u.Diffs, c.Diffs...)
	}
	return nil
}

// pathOp is one operator of a staged delta path: the feed (stage -1), which
// turns the source's batches into proposals, or the half join of one
// stage, which takes the proposals its worker owns from the exchange on
// the stage's stream key. The path's last operator emits the finished
// rows at their data times through the path's final closure; the others
// emit proposal chunks for the next exchange.
type pathOp struct {
	p      *Path
	stage  int
	src    *dataflow.Port[*batch.Batch]    // the feed's source batches
	props  *dataflow.Port[*dataflow.Chunk] // a stage's exchanged proposals
	lookup *dataflow.Port[*batch.Batch]    // a stage's lookup, progress only
	recv   Updates
	sink   *Sink
	labels context.Context

	oks, errO *dataflow.Stream[*dataflow.Chunk]
	name      string      // the operator's, for its error
	fail      func(error) // the dataflow's Failer: the runtime reports it
	// again is OperatorBuilder.StepAgain's: a stage's step matches at
	// most stepWindows windows and leaves the rest of its pass to the
	// next (X4).
	again func()
	err   error
	// held is the output frontier the operator announced at its last step
	// that succeeded (its capability there, met with its inputs'
	// frontier): a failed step holds it there (docs/semantics.md §2.5).
	held frontier.Frontier
}

func (o *pathOp) Step(in frontier.Frontier) frontier.Frontier {
	if o.err != nil {
		return o.held
	}
	run(o.labels, o.p.stats, func() { o.err = o.step() })
	send(o.sink, o.oks, o.errO)
	if o.err != nil {
		o.err = operatorError(o.name, o.err)
		o.p.stats.fail(o.err)
		o.fail(o.err)
		return o.held
	}
	// NB: no capability for stashed proposals is needed: a proposal waits
	// only while its stage's lookup frontier has not passed its initial
	// time, and the lookup is an input, so the output frontier cannot
	// pass the initial (and so the data) time the proposal leaves at. A
	// ready proposal a step leaves for the next (an open pass, or one
	// stashed while a pass was open) is not held so: the stash's least
	// initial time is the capability, every time a proposal emits at
	// being at or after its initial time. (A proposal arrives while the
	// exchange's frontier has not passed its initial time, so this never
	// takes the output frontier back.)
	capability := frontier.Empty()
	if o.stage >= 0 {
		if t, ok := o.p.stages[o.stage].outstanding(); ok {
			capability = frontier.At(t)
		}
	}
	o.held = in.Meet(capability)
	return capability
}

func (o *pathOp) step() error {
	p := o.p
	if o.stage < 0 {
		u, err := p.feed(o.src.Take(), o.sink)
		if err != nil {
			return err
		}
		before := o.sink.ErrorCount()
		o.pass(u)
		p.stats.record(before, o.sink, p.matches)
		p.matches = 0
		return nil
	}
	before := o.sink.ErrorCount()
	o.lookup.Take()
	o.recv.Reset()
	if err := decodeProposals(o.props.Take(), &o.recv); err != nil {
		return fmt.Errorf("join: path %d, stage of relation %d: %w", p.source, p.stages[o.stage].st.Relation, err)
	}
	h := p.stages[o.stage]
	h.push(&o.recv)
	// A window at a time (Path.drain), each passed on before the next is
	// matched, at most stepWindows a step: the next stage's operator runs
	// (on this worker, in the same pass) before this one matches more,
	// so a step's proposals do not all wait in the exchange at once.
	for windows := 0; ; {
		if !h.passing {
			ok, err := h.begin()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		if windows == stepWindows {
			o.again()
			break
		}
		u, more := p.window(o.stage, o.sink)
		windows++
		o.pass(u)
		if !more {
			h.end()
		}
	}
	// H3 across workers: the proposals still to come are bounded by the
	// exchange's frontier (the meet over every sender).
	h.compact(o.props.Frontier())
	p.stats.record(before, o.sink, p.matches)
	p.matches = 0
	return nil
}

// stepWindows is the most windows of matches a staged path's stage
// operator matches in one step (pathOp.step).
var stepWindows = 4

// pass passes u, the feed's proposals or a window of the stage's matches,
// on: as a proposal chunk to the next stage's exchange, or, from the last
// stage, as finished rows at their data times through the final closure.
func (o *pathOp) pass(u *Updates) {
	p := o.p
	switch {
	case o.stage+1 < len(p.stages):
		if u.Len() > 0 {
			o.oks.Send(encodeProposals(u))
		}
	case p.final == nil:
		p.emit(u, o.sink)
	default:
		if p.staged == nil {
			p.staged = NewSink(p.arity)
		}
		p.emit(u, p.staged)
		finish(p.final, p.staged, o.sink)
	}
}

func (o *pathOp) Shutdown() {}

// unionOp merges a staged delta join's outputs: every path's finished rows,
// every path operator's errors, and the entries' errors (once each, K4).
type unionOp struct {
	oks, errs []*dataflow.Port[*dataflow.Chunk]
	entry     errPorts
	sink      *Sink
	stats     *Stats
	labels    context.Context
	out, errO *dataflow.Stream[*dataflow.Chunk]
}

func (o *unionOp) Step(frontier.Frontier) frontier.Frontier {
	for _, p := range o.oks {
		for _, c := range p.Take() {
			o.out.Send(c)
		}
	}
	for _, p := range o.errs {
		for _, c := range p.Take() {
			o.errO.Send(c)
		}
	}
	run(o.labels, o.stats, func() { o.stats.errors.Add(o.entry.forwardEntries(o.sink, len(o.oks))) })
	send(o.sink, o.out, o.errO)
	return frontier.Empty()
}

func (o *unionOp) Shutdown() {}

// stagedDelta adds the paths of a delta join as staged paths (X1): per
// path a feed operator, then per stage an exchange of the proposals by the
// stage's stream key (the columns the lookup arrangement is sharded by)
// and the stage's half join, then one operator merging the paths and the
// errors.
func stagedDelta(c *dataflow.Context, paths []*Path, dps []DeltaPath, arity int, entry *Stats, opts OperatorOptions) (dataflow.Collection, error) {
	// The union's work, the entries' errors, is the operator's and no
	// path's: labelled without path=, and counted there (the numeric
	// overflow of a saturated batch it forwards).
	u := &unionOp{stats: entry}
	var oks, errs []*dataflow.Stream[*dataflow.Chunk]
	for i, p := range paths {
		dp := dps[i]
		name := fmt.Sprintf("%s path %d", opts.Name, dp.Source)
		// A path's operators do its work, so their whole steps (the
		// sends after the work too) are labelled as the path's, as the
		// work is (its Stats): operator= the join's, path= the path's.
		path := fmt.Sprint(dp.Source)
		b := c.NewOperator(name + " feed")
		b.LabelAs(opts.Name, "path", path)
		op := &pathOp{p: p, stage: -1, labels: stepLabels(b, opts.Labels), sink: NewSink(arity), name: name + " feed", fail: c.Failer()}
		op.src = dataflow.AddInput(b, "source", dp.Arranged.Oks.Stream)
		op.oks, op.errO = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
		if err := b.Build(op); err != nil {
			return dataflow.Collection{}, err
		}
		errs = append(errs, op.errO)
		last := op.oks
		for s, st := range dp.Stages {
			h := p.stages[s]
			lookup := fmt.Sprintf("%s lookup %d", name, st.Relation)
			b := c.NewOperator(lookup)
			b.LabelAs(opts.Name, "path", path)
			op := &pathOp{p: p, stage: s, labels: stepLabels(b, opts.Labels), sink: NewSink(arity), recv: Updates{Arity: h.arity},
				name: lookup, fail: c.Failer(), again: b.StepAgain()}
			// Named after the lookup it feeds: "exchange send delta
			// query path 0 lookup 1".
			op.props = dataflow.AddInput(b, "proposals", c.ExchangeNamed(last, st.StreamKey, lookup))
			op.lookup = dataflow.AddInput(b, "lookup", st.Lookup.Oks.Stream)
			op.oks, op.errO = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
			if err := b.Build(op); err != nil {
				return dataflow.Collection{}, err
			}
			errs = append(errs, op.errO)
			last = op.oks
		}
		oks = append(oks, last)
	}
	b := c.NewOperator(opts.Name)
	u.labels = stepLabels(b, opts.Labels)
	for i, s := range oks {
		u.oks = append(u.oks, dataflow.AddInput(b, fmt.Sprintf("path %d", dps[i].Source), s))
	}
	for i, s := range errs {
		u.errs = append(u.errs, dataflow.AddInput(b, fmt.Sprintf("errs %d", i), s))
	}
	u.entry = newErrPorts(b, opts.Errs, c.AsOf())
	u.sink = NewSink(arity)
	u.out, u.errO = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(u); err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: arity, Oks: u.out, Errs: u.errO}, nil
}
