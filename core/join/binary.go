package join

import (
	"fmt"
	"math"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Side is one input of a binary join: the trace its arrangement is kept in
// and how that arrangement's batches are read (identity for a Local
// arrangement, as_of and until for an imported one). The join owns the
// reader: it moves the reader's physical hold to the frontier it has
// acknowledged (B2) and its logical hold with Compact.
type Side struct {
	Reader trace.Reader
	Pres   batch.Presentation
	Arity  batch.Arity
}

// BinaryOptions configure a binary join.
type BinaryOptions struct {
	// AsOf is the dataflow's as_of: every output time is advanced to it.
	AsOf frontier.Frontier
	// Closure, if not nil, is applied to the joined rows (key ++ left val
	// ++ right val); nil emits the joined rows.
	Closure Closure
	// Stats receives the operator's counters; nil keeps private ones.
	Stats *Stats
}

// Binary is differential dataflow's join_core over two arrangements with
// the same key (§5.2): each new batch of one input is joined with the other
// input's trace cut at the frontier that input has acknowledged, so every
// pair of updates is matched exactly once, by whichever of its two batches
// arrived later (B1). Output rows are key ++ left val ++ right val (then
// the closure) at the later of the two times, advanced to as_of, with the
// product of the diffs; a product that leaves int64 is the error
// `numeric overflow` at that time with diff +1 (K3).
//
// A Binary is owned by one goroutine (its worker).
type Binary struct {
	side    [2]Side
	ack     [2]frontier.Frontier // B1: the upper through which each input's batches were joined
	preload [2]frontier.Frontier // B3: stream batches at or below these were joined at start
	started bool
	asOf    frontier.Frontier
	closure Closure
	stats   *Stats
	joined  int   // arity of the joined row
	stage   *Sink // where joined rows go during a step: out, or staged when there is a closure
	staged  *Sink // joined rows before the closure
	matches int64 // matched pairs during the current step
	// pending are the batches a budgeted step (step) has not joined yet,
	// in the order Step would have joined them: the preload's first, then
	// each input's stream batches as they came (left before right in a
	// step). The first may be part joined: its cut and the next batch of
	// it to join.
	pending []pendingBatch
	// failed is the error of the step that failed (nil: none), which
	// every later Step returns (docs/semantics.md §2.5).
	failed error
}

// pendingBatch is a batch of input i still to be joined with the other
// input's trace: a preloaded one (B3) with the left trace cut at its
// preload, a stream batch (accept) with the trace cut at what the other
// input has acknowledged when its turn comes. cut and next are set once
// its joining has begun.
type pendingBatch struct {
	i       int
	b       *batch.Batch
	preload bool
	begun   bool
	cut     []*batch.Batch
	next    int
	// inPair says the join of b with cut[next-1] stopped, at the left
	// and right cursors c0 and c1: between two keys, or inside a common
	// key's cross product (inKey) with c0 and c1 at the next pair of
	// values to join.
	inPair, inKey bool
	c0, c1        batch.Cursor
}

// NewBinary returns a join of left and right. The sides' key arities must
// agree. The join takes over both readers (B2); Release gives them back.
func NewBinary(left, right Side, opts BinaryOptions) (*Binary, error) {
	if left.Arity.Key != right.Arity.Key {
		return nil, fmt.Errorf("%w: left key arity %d, right key arity %d", ErrArity, left.Arity.Key, right.Arity.Key)
	}
	j := &Binary{
		side:    [2]Side{left, right},
		asOf:    opts.AsOf,
		closure: opts.Closure,
		stats:   opts.Stats,
		joined:  left.Arity.Key + left.Arity.Val + right.Arity.Val,
	}
	if opts.Closure != nil {
		if err := checkClosure(opts.Closure, j.joined); err != nil {
			return nil, err
		}
	}
	if j.stats == nil {
		j.stats = NewStats("", "join", "")
	}
	return j, nil
}

// Arity returns the arity of the rows the join emits.
func (j *Binary) Arity() int {
	if j.closure != nil {
		return j.closure.Arity()
	}
	return j.joined
}

// Stats returns the join's counters.
func (j *Binary) Stats() *Stats { return j.stats }

// Acknowledged returns the frontier through which input i's batches have
// been joined.
func (j *Binary) Acknowledged(i int) frontier.Frontier { return j.ack[i] }

// start preloads the traces as they are when the join first runs (B3):
// the left trace's batches are acknowledged unjoined, and the right
// trace's batches are joined with the left trace cut there. Stream batches
// at or below these uppers are then skipped.
func (j *Binary) start() error {
	j.started = true
	for i := range j.side {
		r := j.side[i].Reader
		up := r.ReadUpper()
		if !r.PhysicalCompaction().LessEqual(up) {
			return fmt.Errorf("join: input %d: physical compaction %v beyond the trace's coverage %v: %w",
				i, r.PhysicalCompaction(), up, ErrStraddle)
		}
		j.preload[i] = up
	}
	if j.preload[1] != frontier.Min() {
		own, err := j.side[1].Reader.BatchesThrough(j.preload[1])
		if err != nil {
			return fmt.Errorf("join: preloading the right trace through %v: %w", j.preload[1], err)
		}
		for _, b := range own {
			if a := b.Arity(); a != j.side[1].Arity {
				return fmt.Errorf("%w: input 1 preloaded batch arity %v, join expects %v", ErrArity, a, j.side[1].Arity)
			}
			if !b.IsEmpty() && j.preload[0] != frontier.Min() {
				j.pending = append(j.pending, pendingBatch{i: 1, b: b, preload: true})
			}
		}
	}
	for i := range j.side {
		j.ack[i] = j.preload[i]
		j.side[i].Reader.SetPhysicalCompaction(j.ack[i])
	}
	return nil
}

// Step joins the newly arrived batches of each input (in the order each
// input's stream delivered them; empty batches may be left out) and appends
// the output to out. Left batches are processed first, so a right batch
// arriving in the same step meets them in the left trace.
//
// REQUIRES: every batch is already in its input's trace (an arrangement
// inserts a batch before sending it, D2), and each input's batches come in
// time order.
//
// A step that fails appends what it joined before the failure and returns
// the error; the error is sticky: every later Step returns the same error
// and appends nothing (docs/semantics.md §2.5), since the acknowledged
// frontiers stand where the failure left them.
func (j *Binary) Step(left, right []*batch.Batch, out *Sink) error {
	budget := int64(math.MaxInt64)
	_, err := j.step(left, right, out, &budget)
	return err
}

// step is Step joining until *budget pairs of updates have been matched,
// less those it matched: it reports whether every batch given so far is
// joined, and leaves the rest, in order, to the next call (pending). A
// batch's joining stops between two keys of its join with a batch of the
// other trace, or between two pairs of one key's values (a pair with a
// batch a merge saturated is joined whole).
// Until it is joined, Compact keeps the traces from compacting past what it
// still meets, and Pending says the least time it can emit at.
func (j *Binary) step(left, right []*batch.Batch, out *Sink, budget *int64) (bool, error) {
	if j.failed != nil {
		return false, j.failed
	}
	before := out.ErrorCount()
	j.stage = out
	if j.closure != nil {
		if j.staged == nil {
			j.staged = NewSink(j.joined)
		}
		j.stage = j.staged
	}
	var err error
	if !j.started {
		err = j.start()
	}
	for i, batches := range [2][]*batch.Batch{left, right} {
		for _, b := range batches {
			j.pending = append(j.pending, pendingBatch{i: i, b: b})
		}
	}
	for err == nil && len(j.pending) > 0 && j.matches < *budget {
		var done bool
		if done, err = j.work(&j.pending[0], *budget); done {
			j.pending[0] = pendingBatch{}
			j.pending = j.pending[1:]
		}
	}
	if len(j.pending) == 0 {
		j.pending = nil
	}
	*budget -= j.matches
	matches := j.matches
	j.matches = 0
	finish(j.closure, j.stage, out)
	j.stats.record(before, out, matches)
	j.failed = err
	return err == nil && len(j.pending) == 0, err
}

// work joins the pending batch p (its checks and cut at its first turn,
// as accept and start do) until every batch of its cut is joined, when it
// reports true and acknowledges a stream batch, or until the step has
// matched budget pairs.
func (j *Binary) work(p *pendingBatch, budget int64) (bool, error) {
	if !p.begun {
		p.begun = true
		var f frontier.Frontier
		if p.preload {
			f = j.preload[0]
		} else {
			skip, err := j.check(p.i, p.b)
			if err != nil || skip {
				return true, err
			}
			f = j.ack[1-p.i]
		}
		if !p.b.IsEmpty() && f != frontier.Min() {
			cut, err := j.cutAt(p.i, f)
			if err != nil {
				return true, err
			}
			p.cut = cut
		}
	}
	for {
		if p.inPair {
			if !j.mergeKeys(&p.c0, &p.c1, j.stage, budget, &p.inKey) {
				return false, nil
			}
			p.inPair = false
		}
		if p.next == len(p.cut) {
			break
		}
		if j.matches >= budget {
			return false, nil
		}
		c := p.cut[p.next]
		p.next++
		if p.b.Saturated() || c.Saturated() {
			// Joined whole: its overflow's earliest time is read off
			// what it emitted (joinWith).
			j.joinWith(p.i, p.b, c, j.stage)
			continue
		}
		if p.i == 0 {
			p.c0, p.c1 = p.b.Cursor(), c.Cursor()
		} else {
			p.c0, p.c1 = c.Cursor(), p.b.Cursor()
		}
		p.inPair = true
	}
	if !p.preload {
		j.ack[p.i] = p.b.Upper()
		j.side[p.i].Reader.SetPhysicalCompaction(j.ack[p.i])
	}
	return true, nil
}

// Pending returns the least lower bound of the batches a budgeted step
// left to join, the least time they can emit at, and whether there is one.
func (j *Binary) Pending() (frontier.Frontier, bool) {
	if len(j.pending) == 0 {
		return frontier.Empty(), false
	}
	m := frontier.Empty()
	for _, p := range j.pending {
		m = m.Meet(p.b.Lower())
	}
	return m, true
}

// check is accept's checks of a new batch of input i: whether the
// preload joined it already (B3), and the stream contract's errors.
func (j *Binary) check(i int, b *batch.Batch) (skip bool, err error) {
	if b.Upper().LessEqual(j.preload[i]) {
		return true, nil // B3: joined by the preload
	}
	if mutants.Enabled && mutants.On(mutants.JoinSkipsCoveredBatch) && b.Upper().Less(j.side[i].Reader.ReadUpper()) {
		// The trace has moved past b (and may have merged it away): taken,
		// wrongly, for a batch the join has seen.
		j.ack[i] = b.Upper()
		return true, nil
	}
	if b.Lower().Less(j.preload[i]) {
		return false, fmt.Errorf("%w: input %d batch %v, preloaded through %v", ErrStraddle, i, b.Desc(), j.preload[i])
	}
	if b.Lower().Less(j.ack[i]) {
		return false, fmt.Errorf("%w: input %d batch %v, acknowledged through %v", ErrOrder, i, b.Desc(), j.ack[i])
	}
	if a := b.Arity(); a != j.side[i].Arity {
		return false, fmt.Errorf("%w: input %d batch arity %v, join expects %v", ErrArity, i, a, j.side[i].Arity)
	}
	return false, nil
}

// cutAt returns the other input's trace cut at f, for a batch of input i.
func (j *Binary) cutAt(i int, f frontier.Frontier) ([]*batch.Batch, error) {
	o := 1 - i
	cut, err := j.side[o].Reader.BatchesThrough(f)
	if err != nil {
		return nil, fmt.Errorf("join: cutting input %d's trace at %v: %w", o, f, err)
	}
	for _, c := range cut {
		if a := c.Arity(); a != j.side[o].Arity {
			return nil, fmt.Errorf("%w: input %d trace batch arity %v, join expects %v", ErrArity, o, a, j.side[o].Arity)
		}
	}
	return cut, nil
}

// joinWith joins b, a batch of input i, with c, a batch of the other
// input's trace.
func (j *Binary) joinWith(i int, b, c *batch.Batch, out *Sink) {
	// A saturated batch (a merge's overflow) is rare: only then is the
	// output scanned for its earliest time (saturatedError).
	sat := b.Saturated() || c.Saturated()
	var mk sinkMark
	if sat {
		mk = out.mark()
	}
	if i == 0 {
		j.joinPair(b, c, out)
	} else {
		j.joinPair(c, b, out)
	}
	if sat {
		out.saturatedError(mk)
	}
}

// joinPair merges the keys of a left and a right batch, galloping past
// runs of keys the other lacks, and emits the cross product of each
// common key's updates.
func (j *Binary) joinPair(b0, b1 *batch.Batch, out *Sink) {
	c0, c1 := b0.Cursor(), b1.Cursor()
	var inKey bool
	j.mergeKeys(&c0, &c1, out, math.MaxInt64, &inKey)
}

// mergeKeys is joinPair from the cursors' keys on, stopping once the step
// has matched budget pairs: after a common key, or inside one between two
// pairs of values, when it sets *inKey (and a later call, given it, goes
// on from the cursors' values). It reports whether the cursors reached the
// end of either batch.
func (j *Binary) mergeKeys(c0, c1 *batch.Cursor, out *Sink, budget int64, inKey *bool) bool {
	for c0.KeyValid() && c1.KeyValid() {
		if !*inKey {
			// A stopped key's cursors stand at a common key already.
			switch cmpRow(c0.Key(), c1.Key()) {
			case -1:
				c0.SeekKey(c1.Key())
				continue
			case 1:
				c1.SeekKey(c0.Key())
				continue
			}
		}
		if *inKey = !j.cross(c0, c1, out, budget, *inKey); *inKey {
			return false
		}
		c0.StepKey()
		c1.StepKey()
		if j.matches >= budget {
			return !c0.KeyValid() || !c1.KeyValid()
		}
	}
	return true
}

// cross emits the products of the current key's updates of c0 and c1,
// from c0's value on, against c1's values from its first (or from its
// current one, when resume says a budget stopped the key's cross product
// there). Once the step has matched budget pairs it stops after a pair of
// values, with the cursors at the next pair to join, and reports false;
// it reports true at the key's end. A key's product is never cut inside
// one pair of values: their updates' products are matched whole.
func (j *Binary) cross(c0, c1 *batch.Cursor, out *Sink, budget int64, resume bool) bool {
	p0, p1, asOf := j.side[0].Pres, j.side[1].Pres, j.asOf
	key := c0.Key()
	var matches int64
	room := budget - j.matches
	for ; c0.ValValid(); c0.StepVal() {
		v0 := c0.Val()
		ts0, ds0 := c0.Updates()
		if !resume {
			c1.RewindVals()
		}
		resume = false
		for ; c1.ValValid(); c1.StepVal() {
			if matches >= room {
				// Stopped before c1's value: the next call goes on from
				// the same pair (c0's value, c1's value).
				j.matches += matches
				return false
			}
			v1 := c1.Val()
			ts1, ds1 := c1.Updates()
			for x, t0 := range ts0 {
				t0, ok := p0.Present(t0)
				if !ok {
					continue
				}
				for y, t1 := range ts1 {
					t1, ok := p1.Present(t1)
					if !ok {
						continue
					}
					t := asOf.AdvanceBy(max(t0, t1))
					matches++
					d, ok := expr.Mul(ds0[x], ds1[y])
					if !ok {
						out.Error(expr.CodeOverflow, t, 1)
						continue
					}
					c := out.okChunk()
					c.Rows = append(append(append(c.Rows, key...), v0...), v1...)
					c.Times = append(c.Times, t)
					c.Diffs = append(c.Diffs, d)
				}
			}
		}
	}
	j.matches += matches
	return true
}

// Compact moves the logical holds on the traces (§2.5): each trace is
// compacted to the other input's frontier, since every future match of its
// updates is with an update at or beyond that frontier and takes the later
// time. f0 and f1 are the left and right inputs' stream frontiers.
//
// A trace is cut only when a batch of the other input arrives, at what
// its own input has acknowledged (B1): once the other input is complete
// (its frontier empty, as an import's is past the dataflow's until), the
// trace is never read again, and its physical hold goes too, as a reader
// that needs nothing more. Left at the last acknowledged upper, it would
// keep the publisher from admitting any later batch to merging for as
// long as the dataflow lives (docs/semantics.md §2.4).
//
// A batch a budgeted step left to join (Pending) still meets the other
// trace at its own times: that trace is held at its lower too.
func (j *Binary) Compact(f0, f1 frontier.Frontier) {
	for _, p := range j.pending {
		if p.i == 0 {
			f0 = f0.Meet(p.b.Lower())
		} else {
			f1 = f1.Meet(p.b.Lower())
		}
	}
	j.side[0].Reader.SetLogicalCompaction(f1)
	j.side[1].Reader.SetLogicalCompaction(f0)
	if f1.IsEmpty() {
		j.side[0].Reader.SetPhysicalCompaction(f1)
	}
	if f0.IsEmpty() {
		j.side[1].Reader.SetPhysicalCompaction(f0)
	}
}

// Release releases both readers.
func (j *Binary) Release() {
	j.side[0].Reader.Release()
	j.side[1].Reader.Release()
}

// cmpRow compares two rows of equal length lexicographically.
func cmpRow(a, b []int64) int {
	if len(a) == 1 {
		return cmp3(a[0], b[0])
	}
	for i := range a {
		if a[i] != b[i] {
			return cmp3(a[i], b[i])
		}
	}
	return 0
}

func cmp3(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
