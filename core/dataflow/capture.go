package dataflow

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Capture records every update of a stream on every worker of a runtime —
// a collection's chunks (Context.CaptureChunks) or an arrangement half's
// batches as presented (Context.Capture) — for reading the collection
// accumulated at a time once the capture's frontier (its Probe: the meet of
// the captured stream's frontier over the workers) has passed that time.
//
// Each worker appends to its own flat columns (rows, times, diffs): no
// per-update map or key, no allocation but the columns' amortized growth,
// and a chunk is appended whole. Updates
// are kept as they arrive, unconsolidated; At consolidates when it is read
// (docs/semantics.md §1.3), so a stream may carry a row several times at
// one time, or a +1 and a -1 that cancel. It keeps every update: it is for
// eval, check and tests, not for a steady state. Safe for concurrent use.
type Capture struct {
	Probe
	cmu     sync.Mutex
	workers []captured
}

// captured is one worker's updates in arrival order: update i is row
// rows[i*arity:(i+1)*arity] at times[i] with diffs[i].
type captured struct {
	arity int // -1 until a capture operator is built on the worker
	rows  []int64
	times []frontier.Time
	diffs []int64
	// sat says the worker captured updates of a batch a merge saturated
	// (batch.Batch.Saturated), the earliest at satT: a count there stands
	// for one out of int64, whose arrangement put its marker at its
	// frontier, which may be after satT (docs/semantics.md §1.1).
	sat  bool
	satT frontier.Time
}

// NewCapture returns a capture for a dataflow running on workers workers;
// as NewProbe, one made for fewer than one worker never passes a time.
func NewCapture(workers int) *Capture {
	c := &Capture{workers: make([]captured, max(workers, 0))}
	for i := range c.workers {
		c.workers[i].arity = -1
	}
	c.Probe.init(workers) // in place: a Probe holds a mutex and is never copied
	return c
}

// RowDiff is one row of an accumulated collection with its count.
type RowDiff struct {
	Row  []int64
	Diff int64
}

// count is an exact sum of int64 diffs (a 128-bit two's complement
// integer), so that consolidation never wraps, whatever the order of the
// terms (docs/semantics.md §1.1: every sum of diffs is checked).
type count struct {
	hi int64
	lo uint64
}

func (c *count) add(d int64) {
	lo, carry := bits.Add64(c.lo, uint64(d), 0)
	c.lo = lo
	c.hi += int64(carry) + d>>63 // d>>63 sign-extends d to 128 bits
}

// int64 returns the sum and whether it fits in an int64.
func (c count) int64() (int64, bool) {
	v := int64(c.lo)
	return v, c.hi == v>>63
}

// sub subtracts d exactly.
func (c *count) sub(d int64) {
	lo, borrow := bits.Sub64(c.lo, uint64(d), 0)
	c.lo = lo
	c.hi -= int64(borrow) + d>>63
}

func (c count) isZero() bool { return c.hi == 0 && c.lo == 0 }

// At returns the collection accumulated at t over every worker: each row
// with the sum of its diffs at times at or before t, sorted numerically
// column by column; rows whose sum is zero are absent. Rows alias the
// capture and must not be modified. A row whose sum leaves int64 is absent
// too (Accumulate reports it). Meaningful once Passed(t).
func (c *Capture) At(t frontier.Time) []RowDiff {
	rows, _ := c.Accumulate(t)
	return rows
}

// Accumulate is At, also returning the number of rows whose accumulated
// count at t leaves int64 (left out of rows): a reader reports each as a
// numeric overflow (docs/semantics.md §1.1). A capture of an arrangement
// half (Context.Capture) that read a batch a merge saturated counts one
// more from the earliest time it captured from such a batch on: a count
// there stands for one out of int64 (the bound of its sign, or the bound
// moved by later diffs), which its rows read as exact, and the
// arrangement's own marker is at its frontier when it merged, which may
// be after t.
func (c *Capture) Accumulate(t frontier.Time) (rows []RowDiff, overflows int) {
	if c.saturatedBy(t) {
		overflows++
	}
	refs := c.updates(t)
	slices.SortFunc(refs, func(a, b captureRef) int { return slices.Compare(a.row, b.row) })
	for i := 0; i < len(refs); {
		var n count
		j := i
		for ; j < len(refs) && slices.Equal(refs[j].row, refs[i].row); j++ {
			n.add(refs[j].diff)
		}
		if d, ok := n.int64(); !ok {
			overflows++
		} else if d != 0 {
			rows = append(rows, RowDiff{Row: refs[i].row, Diff: d})
		}
		i = j
	}
	return rows, overflows
}

// Times returns the times at which the captured collection, as Accumulate
// reads it, changes, ascending: some row's consolidated count at that time
// is not zero, or it is the earliest time the capture read from a batch a
// merge saturated, from which on Accumulate counts that batch's overflow
// (whether or not a row's count changes there: the saturated count's
// updates may cancel with others at that time).
func (c *Capture) Times() []frontier.Time {
	satT, sat := c.saturatedFrom()
	refs := c.updates(math.MaxUint64)
	slices.SortFunc(refs, func(a, b captureRef) int {
		if x := slices.Compare(a.row, b.row); x != 0 {
			return x
		}
		return cmp.Compare(a.t, b.t)
	})
	var out []frontier.Time
	for i := 0; i < len(refs); {
		var n count
		j := i
		for ; j < len(refs) && refs[j].t == refs[i].t && slices.Equal(refs[j].row, refs[i].row); j++ {
			n.add(refs[j].diff)
		}
		if !n.isZero() {
			out = append(out, refs[i].t)
		}
		i = j
	}
	if sat {
		out = append(out, satT)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FirstDifference compares the collections c and o accumulate at every
// time from lo through hi (each holds, at lo, every update at or before
// lo). It returns the least such time at which some row's count differs,
// with one such row (the least) and its count in each, or differs false
// when the two agree at every time. Counts are exact (a change or an
// accumulation outside int64 is compared as it is); cOver and oOver say a
// returned count left int64 (it is then not meaningful). Meaningful once
// both have passed hi.
//
// A capture that read a batch a merge saturated (Context.Capture of an
// arrangement half) holds, from the earliest time it read from one on
// (where Accumulate starts counting its overflow), a count that stands
// for one out of int64 as the bound of its sign, or that bound moved by
// later diffs (docs/semantics.md §1.1): no count there is known to be
// exact, so the two cannot be known to agree. The comparison stops
// there: when no row differs before the earliest such time of either
// capture (at lo for one at or before lo) and that time is at or before
// hi, FirstDifference returns it with differs true and row nil, cOver
// and oOver saying which of the two read a saturated batch by then —
// both, when each did, even where their counts are the same: equal
// clamped counts are no equal exact ones.
func (c *Capture) FirstDifference(o *Capture, lo, hi frontier.Time) (t frontier.Time, row []int64, cCount, oCount int64, cOver, oOver, differs bool) {
	// stop is the earliest time a count of either may not be exact.
	stop, stopped := hi, false
	for _, x := range []*Capture{c, o} {
		if st, ok := x.saturatedFrom(); ok && max(st, lo) <= stop {
			stop, stopped = max(st, lo), true
		}
	}
	type side struct {
		captureRef
		other bool
	}
	var refs []side
	for _, r := range c.updates(hi) {
		r.t = max(r.t, lo)
		refs = append(refs, side{r, false})
	}
	for _, r := range o.updates(hi) {
		r.t = max(r.t, lo)
		refs = append(refs, side{r, true})
	}
	slices.SortFunc(refs, func(a, b side) int {
		if x := cmp.Compare(a.t, b.t); x != 0 {
			return x
		}
		return slices.Compare(a.row, b.row)
	})
	// The first (time, row) whose changes differ is where the
	// accumulations first differ: up to the time before, every row's
	// changes agreed.
	for i := 0; i < len(refs) && (!stopped || refs[i].t < stop); {
		var n count
		j := i
		for ; j < len(refs) && refs[j].t == refs[i].t && slices.Equal(refs[j].row, refs[i].row); j++ {
			if refs[j].other {
				n.sub(refs[j].diff)
			} else {
				n.add(refs[j].diff)
			}
		}
		if !n.isZero() {
			t, row = refs[i].t, refs[i].row
			cCount, cOver = c.countAt(row, t)
			oCount, oOver = o.countAt(row, t)
			return t, row, cCount, oCount, cOver, oOver, true
		}
		i = j
	}
	if stopped {
		return stop, nil, 0, 0, c.saturatedBy(stop), o.saturatedBy(stop), true
	}
	return 0, nil, 0, 0, false, false, false
}

// countAt returns row's count accumulated at t and whether it left int64.
func (c *Capture) countAt(row []int64, t frontier.Time) (int64, bool) {
	var n count
	for _, r := range c.updates(t) {
		if slices.Equal(r.row, row) {
			n.add(r.diff)
		}
	}
	v, ok := n.int64()
	return v, !ok
}

// captureRef is one captured update, its row a view of the capture's
// columns (capped, so an append cannot write into them).
type captureRef struct {
	row  []int64
	t    frontier.Time
	diff int64
}

// saturatedBy reports whether a worker captured from a saturated batch at
// or before t.
func (c *Capture) saturatedBy(t frontier.Time) bool {
	st, ok := c.saturatedFrom()
	return ok && st <= t
}

// saturatedFrom returns the earliest time a worker captured from a
// saturated batch at, and whether one did.
func (c *Capture) saturatedFrom() (frontier.Time, bool) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	var t frontier.Time
	found := false
	for wi := range c.workers {
		if w := &c.workers[wi]; w.sat && (!found || w.satT < t) {
			t, found = w.satT, true
		}
	}
	return t, found
}

// updates returns every captured update at or before t, of every worker.
func (c *Capture) updates(t frontier.Time) []captureRef {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	var refs []captureRef
	for wi := range c.workers {
		w := &c.workers[wi]
		for i, tm := range w.times {
			if tm <= t {
				refs = append(refs, captureRef{w.rows[i*w.arity : (i+1)*w.arity : (i+1)*w.arity], tm, w.diffs[i]})
			}
		}
	}
	return refs
}

// slot returns worker's columns, fixing their arity (-1: fixed by the
// first batch). Each worker's columns take one stream (checkProbe refuses
// a second), so their arity is not fixed yet.
func (c *Capture) slot(worker, arity int) *captured {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	w := &c.workers[worker]
	if arity >= 0 {
		w.arity = arity
	}
	return w
}

// CaptureChunks records the chunks of s, a stream of arity-column rows,
// into cp as they arrive (their times as the chunks carry them). A capture
// made for another number of workers than the runtime's, or already
// attached on the worker (to this stream or another), fails the build,
// and so does a nil s (ErrNilStream), leaving cp unattached.
func (c *Context) CaptureChunks(cp *Capture, s *Stream[*Chunk], arity int) {
	if c.late("Context.Capture") != nil {
		return
	}
	if cp == nil {
		c.fail(fmt.Errorf("dataflow %s: capture is nil: make one with NewCapture(workers)", c.df.id))
		return
	}
	if s == nil {
		// Before the capture is attached: nothing is left attached
		// that no operator would leave (as in Context.Probe).
		c.refuseNil("Context.CaptureChunks", "")
		return
	}
	from := s.from
	if !c.checkProbe("capture", &cp.Probe) {
		return
	}
	w := cp.slot(c.env.Worker, arity)
	df, env := c.df, c.env
	op := &captureChunksOp{c: cp, w: w, worker: c.env.Worker, in: s.subscribe(c.df), fail: func(err error) { env.Fail(df.id, err) }, last: frontier.Min(), stopper: c.env.Stopper}
	c.df.addNode("capture", op, from)
}

// Capture records an arrangement half as presented, each row in the
// collection's column order (a.Key put back in place; the row's width is
// its batches'). A capture made for another number of workers than the
// runtime's, or already attached on the worker, fails the build, and so
// does an Arranged whose Stream is nil (ErrNilStream), leaving cp
// unattached.
func (c *Context) Capture(cp *Capture, a Arranged) {
	if c.late("Context.Capture") != nil {
		return
	}
	if cp == nil {
		c.fail(fmt.Errorf("dataflow %s: capture is nil: make one with NewCapture(workers)", c.df.id))
		return
	}
	if a.Stream == nil {
		c.refuseNil("Context.Capture", "Arranged.Stream") // before the capture is attached, as in CaptureChunks
		return
	}
	from := a.Stream.from
	if !c.checkProbe("capture", &cp.Probe) {
		return
	}
	w := cp.slot(c.env.Worker, -1)
	df, env := c.df, c.env
	op := &captureOp{c: cp, w: w, worker: c.env.Worker, in: a.Stream.subscribe(c.df), pres: a.Pres, key: a.Key, fail: func(err error) { env.Fail(df.id, err) }, stopper: c.env.Stopper}
	c.df.addNode("capture", op, from)
}

// captureChunksOp appends whole chunks to its worker's columns.
type captureChunksOp struct {
	c      *Capture
	w      *captured
	worker int
	in     *Port[*Chunk]
	fail   func(error)
	// last is the frontier the capture last set (no chunk may be before
	// it); stopped, that a chunk broke the operator contract.
	last    frontier.Frontier
	stopped bool
	stopper *Stopper // the runtime's (Env.Stopper), which the capture leaves at Shutdown
}

func (o *captureChunksOp) Step(in frontier.Frontier) frontier.Frontier {
	msgs := o.in.Take()
	if o.stopped {
		return frontier.Empty()
	}
	// Every chunk is admitted before any is kept: one against the
	// operator contract (admit) stops the capture, its frontier held
	// where it was, so that no time it would have changed reads as
	// complete.
	for _, ch := range msgs {
		if err := admit(ch, o.in.from, o.w.arity, nil, o.last); err != nil {
			o.stopped = true
			err = fmt.Errorf("capture: %w", err)
			o.c.freeze(o.worker, err)
			o.fail(err)
			return frontier.Empty()
		}
	}
	if len(msgs) > 0 {
		o.c.cmu.Lock()
		w := o.w
		for _, ch := range msgs {
			w.rows = append(w.rows, ch.Rows...)
			w.times = append(w.times, ch.Times...)
			w.diffs = append(w.diffs, ch.Diffs...)
		}
		o.c.cmu.Unlock()
	}
	o.last = in
	o.c.set(o.worker, in)
	return frontier.Empty()
}

func (o *captureChunksOp) Shutdown() {
	o.c.Probe.leave(o.stopper)
}

func (o *captureChunksOp) probed() (*Probe, int) { return &o.c.Probe, o.worker }

// captureOp appends an arrangement half's updates, as presented, to its
// worker's columns.
type captureOp struct {
	c       *Capture
	w       *captured
	worker  int
	in      *Port[*batch.Batch]
	pres    batch.Presentation
	key     []int
	place   []int // place[i]: the collection column of key ++ val column i
	row     []int64
	fail    func(error)
	stopper *Stopper // the runtime's (Env.Stopper), which the capture leaves at Shutdown
}

// placement maps the columns of key ++ val back to the collection's: key
// columns where key says, values in the remaining columns in order.
func placement(key []int, cols int) []int {
	place := slices.Clone(key)
	for c := range cols {
		if !slices.Contains(key, c) {
			place = append(place, c)
		}
	}
	return place
}

func (o *captureOp) Step(in frontier.Frontier) frontier.Frontier {
	if msgs := o.in.Take(); len(msgs) > 0 {
		o.c.cmu.Lock()
		w := o.w
		for _, b := range msgs {
			ar := b.Arity()
			if n := ar.Key + ar.Val; n != len(o.row) || w.arity < 0 {
				if w.arity >= 0 && w.arity != n {
					o.fail(fmt.Errorf("capture of %d-column rows received a batch of %d columns", w.arity, n))
					continue
				}
				w.arity, o.place, o.row = n, placement(o.key, n), make([]int64, n)
			}
			sat := b.Saturated()
			for cur := b.Cursor(); cur.KeyValid(); cur.StepKey() {
				key := cur.Key()
				for i, x := range key {
					o.row[o.place[i]] = x
				}
				for ; cur.ValValid(); cur.StepVal() {
					for i, x := range cur.Val() {
						o.row[o.place[len(key)+i]] = x
					}
					times, diffs := cur.Updates()
					for i, t := range times {
						if pt, ok := o.pres.Present(t); ok {
							w.rows = append(w.rows, o.row...)
							w.times = append(w.times, pt)
							w.diffs = append(w.diffs, diffs[i])
							if sat && (!w.sat || pt < w.satT) {
								w.sat, w.satT = true, pt
							}
						}
					}
				}
			}
		}
		o.c.cmu.Unlock()
	}
	o.c.set(o.worker, in)
	return frontier.Empty()
}

func (o *captureOp) Shutdown() {
	o.c.Probe.leave(o.stopper)
}

func (o *captureOp) probed() (*Probe, int) { return &o.c.Probe, o.worker }
