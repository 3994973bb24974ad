package join

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/mutants"
)

// PathOptions configure one path of a delta join.
type PathOptions struct {
	// Source is the path's source relation: its position in `from`.
	Source int
	// SourcePres is how the source arrangement's batches are read.
	SourcePres batch.Presentation
	// SourceArity is the source arrangement's arity; the path's rows start
	// as its key ++ val.
	SourceArity batch.Arity
	// AsOf is the dataflow's as_of.
	AsOf frontier.Frontier
	// Stages are the half joins in lookup order.
	Stages []Stage
	// Final, if not nil, is applied to the finished rows (source key ++
	// source val ++ each lookup's val in stage order).
	Final Closure
	// Stats receives the path's counters; nil keeps private ones.
	Stats *Stats
}

// Path is one path of a delta join (§5.4): the source arrangement's new
// batches become updates whose initial and data times are the update's
// time, pass through a half join per other relation, and leave at their
// data time. It builds no arrangement: its memory is the stashed
// proposals and a window of matches a stage (Path.drain).
//
// As-of optimization (D1): a path whose source is not relation 0 drops
// source updates at exactly as_of; the snapshot's combinations are all
// produced by path 0.
//
// A path returns only the errors it produces (K4): diff overflows and its
// final closure's errors. The errors of its inputs are the caller's.
type Path struct {
	source  int
	pres    batch.Presentation
	ar      batch.Arity
	asOf    frontier.Frontier
	stages  []*halfJoin
	final   Closure
	stats   *Stats
	arity   int        // arity of the finished rows
	bufs    [3]Updates // the feed, a stage's matches, a stage closure's output
	row     []int64    // scratch: one source row
	staged  *Sink
	matches int64
	failed  error // the failed Feed's or Work's, which every later one returns
}

// NewPath returns a delta path. It takes over the stages' readers.
func NewPath(opts PathOptions) (*Path, error) {
	p := &Path{
		source: opts.Source,
		pres:   opts.SourcePres,
		ar:     opts.SourceArity,
		asOf:   opts.AsOf,
		final:  opts.Final,
		stats:  opts.Stats,
	}
	if p.stats == nil {
		p.stats = NewStats("", "delta join", fmt.Sprint(opts.Source))
	}
	arity := p.ar.Key + p.ar.Val
	for _, st := range opts.Stages {
		if st.Relation == opts.Source {
			return nil, fmt.Errorf("%w: path %d looks up its own source", ErrArity, opts.Source)
		}
		h, err := newHalf(st, opts.Source, arity)
		if err != nil {
			return nil, fmt.Errorf("join: path %d, stage of relation %d: %w", opts.Source, st.Relation, err)
		}
		p.stages = append(p.stages, h)
		arity += st.Arity.Val
		if st.Closure != nil {
			if st.Closure.m.CanErr() {
				return nil, fmt.Errorf("%w: path %d, stage of relation %d: a stage closure that can err", ErrStageClosure, opts.Source, st.Relation)
			}
			if st.Closure.m.InputArity() != arity {
				return nil, fmt.Errorf("%w: path %d, stage of relation %d: closure takes %d columns, the stage emits %d", ErrArity, opts.Source, st.Relation, st.Closure.m.InputArity(), arity)
			}
			arity = st.Closure.Arity()
		}
	}
	p.arity = arity
	if p.final != nil {
		if err := checkClosure(p.final, arity); err != nil {
			return nil, fmt.Errorf("join: path %d, final closure: %w", opts.Source, err)
		}
	}
	p.row = make([]int64, p.ar.Key+p.ar.Val)
	p.bufs[0].Arity, p.bufs[1].Arity = p.ar.Key+p.ar.Val, p.ar.Key+p.ar.Val
	return p, nil
}

// Arity returns the arity of the rows the path emits.
func (p *Path) Arity() int {
	if p.final != nil {
		return p.final.Arity()
	}
	return p.arity
}

// Stats returns the path's counters.
func (p *Path) Stats() *Stats { return p.stats }

// Feed turns new batches of the source arrangement into the first stage's
// proposals: for every (key, val), its presented times advanced to as_of
// and consolidated (both may advance several times onto one), zero sums dropped,
// times at or beyond until dropped, and (D1) times at as_of dropped when
// the source is not relation 0. A consolidation that leaves int64 is the
// error `numeric overflow` at that time in out.
//
// A failed Feed or Work is sticky: every later Feed and Work returns its
// error and appends nothing (docs/semantics.md §2.5).
func (p *Path) Feed(batches []*batch.Batch, out *Sink) error {
	if p.failed != nil {
		return p.failed
	}
	in, err := p.feed(batches, out)
	if err != nil {
		p.failed = err
		return err
	}
	if len(p.stages) > 0 {
		p.stages[0].push(in)
	} else {
		p.emit(in, out)
	}
	return nil
}

// feed turns new source batches into proposals (see Feed) and returns them
// in a path buffer that stays valid until the path's next feed.
func (p *Path) feed(batches []*batch.Batch, out *Sink) (*Updates, error) {
	defer p.stats.record(out.ErrorCount(), out, 0)
	in := &p.bufs[0]
	in.Reset()
	n := 0
	for _, b := range batches {
		n += b.Len()
	}
	in.Rows = slices.Grow(in.Rows, n*in.Arity)
	in.Data, in.Init, in.Diffs = slices.Grow(in.Data, n), slices.Grow(in.Init, n), slices.Grow(in.Diffs, n)
	asOf, hasAsOf := p.asOf.Time()
	dropAsOf := p.source != 0 && hasAsOf
	for _, b := range batches {
		if b.Arity() != p.ar {
			return nil, fmt.Errorf("%w: path %d source batch arity %v, path expects %v", ErrArity, p.source, b.Arity(), p.ar)
		}
		row := p.row
		start := in.Len()
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			copy(row, c.Key())
			for ; c.ValValid(); c.StepVal() {
				copy(row[p.ar.Key:], c.Val())
				ts, ds := c.Updates()
				// Presented times are monotone in the batch's times, so equal
				// presented times are adjacent.
				for x := 0; x < len(ts); {
					t, shown := p.pres.Present(ts[x])
					t = p.asOf.AdvanceBy(t)
					// The sum is exact: d wraps, and carry counts the
					// wraps (the sum is d + carry·2^64), so a partial sum
					// that leaves int64 neither ends the time's updates
					// early nor errs when the whole sum fits (K3).
					d, carry := ds[x], 0
					for x++; x < len(ts); x++ {
						t2, _ := p.pres.Present(ts[x])
						t2 = p.asOf.AdvanceBy(t2)
						if t2 != t {
							break
						}
						s, fits := expr.Add(d, ds[x])
						if !fits {
							if ds[x] < 0 {
								carry--
							} else {
								carry++
							}
						}
						d = s
					}
					ok := carry == 0
					switch {
					case !ok:
						out.Error(expr.CodeOverflow, t, 1)
					case !shown || d == 0 || (dropAsOf && t == asOf):
					default:
						in.push(row, t, t, d)
					}
				}
			}
		}
		if b.Saturated() && in.Len() > start {
			// A merge saturated a count of b (an import's snapshot):
			// the error at the earliest time it proposes (K3,
			// docs/semantics.md §1.1), once a sink.
			out.noteSaturated(slices.Min(in.Data[start:]))
		}
	}
	p.stats.fed.Add(int64(in.Len()))
	return in, nil
}

// Work runs every stage over its ready proposals, passing matches to the
// next stage and finished rows (at their data times) to out, then moves
// the lookups' logical holds given f, the source stream's frontier (H3).
func (p *Path) Work(f frontier.Frontier, out *Sink) error {
	budget := math.MaxInt
	_, err := p.work(f, out, &budget)
	return err
}

// work is Work matching at most *budget windows (Path.drain), less the
// windows it matched: it reports whether every stage's ready proposals
// are matched, or leaves the rest, in passes left open, to the next call
// (whose Feed may stash more first). Until then Outstanding holds every
// proposal left, ready or not.
func (p *Path) work(f frontier.Frontier, out *Sink, budget *int) (bool, error) {
	if p.failed != nil {
		return false, p.failed
	}
	before := out.ErrorCount()
	stage := out
	if p.final != nil {
		if p.staged == nil {
			p.staged = NewSink(p.arity)
		}
		stage = p.staged
	}
	done := true
	var err error
	for i := range p.stages {
		if done, err = p.drain(i, stage, budget); err != nil || !done {
			break
		}
	}
	for _, h := range p.stages {
		f = h.compact(f)
	}
	finish(p.final, stage, out)
	p.stats.record(before, out, p.matches)
	p.matches = 0
	p.failed = err
	return done, err
}

// windowMatches is the most matches a stage gathers before they go on to
// the next stage (Path.drain): 16,384 rows of a few columns, about a
// mebibyte a buffer. A variable so that the tests can make windows of one.
var windowMatches = 1 << 14

// drain runs stage i over the proposals ready in its stash, a window of
// matches at a time (windowMatches), and sends each window through the
// later stages (depth first) or, from the last stage, to errs' rows,
// before the next window: a step holds a window a stage, not every match
// of the round. Diff overflows go to errs. Each window takes one of
// *budget: with none left it returns false, leaving its pass and the
// later stages' open, which the next call resumes (the later stages'
// first, so that no stage takes more proposals while its pass is open).
func (p *Path) drain(i int, errs *Sink, budget *int) (bool, error) {
	h := p.stages[i]
	last := i+1 == len(p.stages)
	if !last && p.stages[i+1].passing {
		if done, err := p.drain(i+1, errs, budget); !done || err != nil {
			return false, err
		}
	}
	for {
		if !h.passing {
			// Also after a pass ends: proposals stashed while it was
			// open (a Feed between two calls) may be ready.
			if ok, err := h.begin(); !ok {
				return true, err
			}
		}
		if *budget <= 0 {
			return false, nil
		}
		*budget--
		o, more := p.window(i, errs)
		if !more {
			h.end()
		}
		if o.Len() == 0 {
			continue
		}
		if last {
			p.emit(o, errs)
			continue
		}
		p.stages[i+1].push(o)
		if done, err := p.drain(i+1, errs, budget); !done || err != nil {
			return false, err
		}
	}
}

// window matches the next window of stage i's pass (halfJoin.next) and
// returns the matches, after the stage closure, in a path buffer that
// stays valid until the path's next window, and whether the pass has
// more; diff overflows go to errs. It counts the matches.
func (p *Path) window(i int, errs *Sink) (*Updates, bool) {
	h := p.stages[i]
	o := &p.bufs[1]
	o.Arity = h.arity + h.st.Arity.Val
	o.Reset()
	n, more := h.next(o, errs, windowMatches)
	p.matches += n
	if h.st.Closure != nil {
		o = p.applyStage(h.st.Closure, o)
	}
	return o, more
}

// applyStage evaluates a stage closure (which cannot err) over the stage's
// matches u and returns the kept rows, with their data and initial times
// and diffs, in the path's spare buffer.
func (p *Path) applyStage(c *MFP, u *Updates) *Updates {
	res := &p.bufs[2]
	res.Arity = c.Arity()
	res.Reset()
	if u.Len() == 0 {
		return res
	}
	c.out.Reset()
	c.ev.EvalN(u.Rows, u.Len(), &c.out)
	a := res.Arity
	for k, i := range c.out.Kept {
		res.push(c.out.Rows[k*a:k*a+a], u.Data[i], u.Init[i], u.Diffs[i])
	}
	return res
}

// emit restores the data time as the output time: (row, data, d).
func (p *Path) emit(u *Updates, out *Sink) {
	for i := range u.Len() {
		out.Push(u.Row(i), u.Data[i], u.Diffs[i])
	}
}

// Outstanding returns the least initial time a stage still holds
// proposals for, and whether there is one.
func (p *Path) Outstanding() (uint64, bool) {
	var m uint64
	found := false
	for _, h := range p.stages {
		if t, ok := h.outstanding(); ok && (!found || t < m) {
			m, found = t, true
		}
	}
	return m, found
}

// Release releases the stages' lookup readers.
func (p *Path) Release() {
	for _, h := range p.stages {
		h.st.Lookup.Release()
	}
}

// Errors propagates the errors the inputs carry (K4): the error batches
// of each `from` entry, once per entry however many paths or stages read
// it, appended to out as (code, time, diff) presented by pres. A join's
// caller calls it once per entry; paths and stages never do.
//
// A batch a merge saturated (batch.Batch.Saturated: an error count out of
// int64, whose arrangement's marker went to its frontier, which may be
// after the times forwarded here) is forwarded with the sink's one
// `numeric overflow` at the earliest time forwarded from it, as a product
// of a saturated count is (K3, docs/semantics.md §1.1): else the count,
// the bound of its sign, read as the errors' exact count there.
func Errors(batches []*batch.Batch, pres batch.Presentation, out *Sink) {
	for _, b := range batches {
		var first frontier.Time
		shown := false
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			code := c.Key()[0]
			for ; c.ValValid(); c.StepVal() {
				ts, ds := c.Updates()
				for x, t := range ts {
					if t, ok := pres.Present(t); ok {
						out.Error(code, t, ds[x])
						if !shown || t < first {
							first, shown = t, true
						}
					}
				}
			}
		}
		if shown && b.Saturated() {
			out.noteSaturated(first)
		}
	}
}

// Delta is a delta join (§5.4): one path per `from` entry, each fed by
// that entry's arrangement's batches, and the propagation of the entries'
// errors, once per entry (K4).
type Delta struct {
	paths   []*Path
	errPres []batch.Presentation
	asOf    frontier.Frontier
	failed  error // the failed step's, which every later Step returns
}

// NewDelta returns the delta join of the given paths, which share one
// as_of. errPres[i] is how the error batches of `from` entry i are read
// (their times are advanced to as_of as well); there is one entry per
// element. The delta join takes over the paths.
func NewDelta(paths []*Path, errPres []batch.Presentation) (*Delta, error) {
	asOf := frontier.Min()
	for i, p := range paths {
		if p.source < 0 || p.source >= len(errPres) {
			return nil, fmt.Errorf("%w: path source %d outside %d from entries", ErrArity, p.source, len(errPres))
		}
		if i > 0 && p.asOf != asOf {
			return nil, fmt.Errorf("join: delta paths with as_of %v and %v", asOf, p.asOf)
		}
		asOf = p.asOf
	}
	return &Delta{paths: paths, errPres: errPres, asOf: asOf}, nil
}

// Paths returns the paths.
func (d *Delta) Paths() []*Path { return d.paths }

// Step propagates each entry's new error batches once, feeds each path
// its source entry's new batches, and runs every path. oks[i] and errs[i]
// are entry i's new ok and error batches, frontiers[i] its stream
// frontier. The paths must see every lookup's batches in its trace before
// the stream delivers them elsewhere (an arrangement inserts, then sends).
// A failed step's error is sticky: every later Step returns it and
// appends nothing, the entries' errors included (docs/semantics.md §2.5).
func (d *Delta) Step(oks, errs [][]*batch.Batch, frontiers []frontier.Frontier, out *Sink) error {
	if d.failed != nil {
		return d.failed
	}
	d.failed = d.step(oks, errs, frontiers, out)
	return d.failed
}

func (d *Delta) step(oks, errs [][]*batch.Batch, frontiers []frontier.Frontier, out *Sink) error {
	for i, pres := range d.errPres {
		if i < len(errs) {
			// No output before as_of (K1): errors too.
			pres.Since = pres.Since.Join(d.asOf)
			entryErrors(errs[i], pres, len(d.paths), out)
		}
	}
	for _, p := range d.paths {
		if err := p.Feed(oks[p.source], out); err != nil {
			return err
		}
	}
	for _, p := range d.paths {
		if err := p.Work(frontiers[p.source], out); err != nil {
			return err
		}
	}
	return nil
}

// entryErrors sends an entry's new error batches to out under pres, once
// (K4): every path of a delta join reads every entry, and the errors are
// the entry's, none of its paths' (docs/semantics.md §5.6: re-emitted by
// each of P paths besides, an error of count m comes out m × (1 + P)
// times, and nested joins multiply that). Delta, the delta join operator
// of one worker (DeltaJoin) and the union of its staged paths on several
// (stagedDelta) all send their entries' errors through it.
func entryErrors(errs []*batch.Batch, pres batch.Presentation, paths int, out *Sink) {
	Errors(errs, pres, out)
	if mutants.Enabled && mutants.On(mutants.DeltaJoinErrorsPerPath) {
		for range paths - 1 {
			Errors(errs, pres, out)
		}
	}
}

// Release releases every path's readers.
func (d *Delta) Release() {
	for _, p := range d.paths {
		p.Release()
	}
}
