package render

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/reduce"
)

// mfpOp applies a closure (a compiled map–filter–project) to every chunk of
// a collection's oks: kept rows go to oks, erring rows to errs as their
// error code with the row's time and diff. It holds no capability: its
// output frontier is its input's.
type mfpOp struct {
	in        *dataflow.Port[*dataflow.Chunk]
	clo       join.Closure
	sink      *join.Sink
	oks, errs *dataflow.Stream[*dataflow.Chunk]
	errCount  *atomic.Int64
}

func (o *mfpOp) Step(frontier.Frontier) frontier.Frontier {
	msgs := o.in.Take()
	if len(msgs) == 0 {
		return frontier.Empty()
	}
	before := o.sink.ErrorCount()
	for _, c := range msgs {
		o.clo.Apply(c, o.sink)
	}
	if n := o.sink.ErrorCount() - before; n != 0 {
		o.errCount.Add(n)
	}
	oks, errs := o.sink.Take()
	for _, c := range oks {
		o.oks.Send(c)
	}
	for _, c := range errs {
		o.errs.Send(c)
	}
	return frontier.Empty()
}

func (o *mfpOp) Shutdown() {}

// concatOp forwards the chunks of several streams as one stream.
type concatOp struct {
	ins []*dataflow.Port[*dataflow.Chunk]
	out *dataflow.Stream[*dataflow.Chunk]
}

func (o *concatOp) Step(frontier.Frontier) frontier.Frontier {
	for _, p := range o.ins {
		for _, c := range p.Take() {
			o.out.Send(c)
		}
	}
	return frontier.Empty()
}

func (o *concatOp) Shutdown() {}

// flattenOp turns an arrangement half's batches back into a collection's
// chunks: row column keyCols[i] is key column i, valCols[j] val column j,
// times as the arrangement presents them.
//
// A batch a merge saturated (batch.Batch.Saturated: an imported index's
// chain, merged after compaction brought an overflowing count's times
// together) holds a count that stands for one out of int64, whose index
// put its marker at its frontier, which may be after the times read
// here: the first such batch flattened adds one `numeric overflow` on
// over at the earliest time flattened from it (docs/semantics.md §1.1,
// as a join or a reduce reading it does), where the bound of the count's
// sign read as the row's, or the errors', exact count. That error is
// the flatten's own: marks counts it, for the render's Metrics (a
// flatten of an imported index, builder.flatten).
type flattenOp struct {
	in      *dataflow.Port[*batch.Batch]
	pres    batch.Presentation
	keyCols []int
	valCols []int
	arity   int
	row     []int64
	out     *dataflow.Stream[*dataflow.Chunk]
	over    *dataflow.Stream[*dataflow.Chunk] // error codes: out for an errs half
	// satMarked says the op has added the numeric overflow of a
	// Saturated batch: one, however many it reads (it is never
	// retracted, so it stands at every later time).
	satMarked bool
	// marks is the number of errors the op produced itself: that
	// numeric overflow, once added (read from any goroutine).
	marks atomic.Int64
}

func (o *flattenOp) Step(frontier.Frontier) frontier.Frontier {
	if !o.out.Consumed() {
		// A reduce that reads the arrangement itself (render N7) leaves
		// the flattened rows unread, and marks a saturated batch itself.
		o.in.Take()
		return frontier.Empty()
	}
	for _, b := range o.in.Take() {
		c := o.flatten(b)
		if c.Len() == 0 {
			continue
		}
		o.out.Send(c)
		if b.Saturated() && !o.satMarked {
			o.satMarked = true
			o.marks.Add(1)
			m := dataflow.NewChunk(1, 1)
			m.Push([]int64{expr.CodeOverflow}, slices.Min(c.Times), 1)
			o.over.Send(m)
		}
	}
	return frontier.Empty()
}

// flatten returns b's updates as a chunk of the collection's rows, in the
// batch's order. It works in column passes (batch.Rows, the times
// presented, the columns laid out when the row's order is not the key's
// then the val's) unless an update is not shown (at or beyond the
// presentation's until), when the cursor's walk drops it. The chunk's
// times and diffs are the batch's own unless the presentation moves a
// time: chunks, like batches, are never written once sent. The walk
// pushed every update as a row of its own: on differential-dataflow's
// arrange shape (benchrun run dd), 60 ns an update, a third of the
// install.
func (o *flattenOp) flatten(b *batch.Batch) *dataflow.Chunk {
	if ar := b.Arity(); ar.Key != len(o.keyCols) || ar.Val != len(o.valCols) {
		return o.walk(b)
	}
	// The times and diffs are the batch's own, shared with the chunk (no
	// one writes either), until the presentation moves a time: then the
	// times are copied, once.
	rows, times, diffs := b.Rows()
	shared := true
	for i, t := range times {
		pt, ok := o.pres.Present(t)
		if !ok {
			return o.walk(b)
		}
		if pt != t {
			if shared {
				times, shared = slices.Clone(times), false
			}
			times[i] = pt
		}
	}
	if !o.inOrder() {
		rows = o.layout(rows, len(times))
	}
	return &dataflow.Chunk{Arity: o.arity, Rows: rows, Times: times, Diffs: diffs}
}

// inOrder reports whether the collection's row is the key's columns then
// the val's, as batch.Rows lays them out.
func (o *flattenOp) inOrder() bool {
	if o.arity != len(o.keyCols)+len(o.valCols) {
		return false
	}
	for i, c := range o.keyCols {
		if c != i {
			return false
		}
	}
	for j, c := range o.valCols {
		if c != len(o.keyCols)+j {
			return false
		}
	}
	return true
}

// layout returns the n rows of rows (key columns then val columns) laid
// out as the collection's: key column i at keyCols[i], val column j at
// valCols[j], any other column 0.
func (o *flattenOp) layout(rows []int64, n int) []int64 {
	w := len(o.keyCols) + len(o.valCols)
	out := make([]int64, n*o.arity)
	for i := range n {
		src, dst := rows[i*w:i*w+w], out[i*o.arity:i*o.arity+o.arity]
		for c, p := range o.keyCols {
			dst[p] = src[c]
		}
		for c, p := range o.valCols {
			dst[p] = src[len(o.keyCols)+c]
		}
	}
	return out
}

// walk is flatten through a cursor, update by update, dropping those the
// presentation does not show.
func (o *flattenOp) walk(b *batch.Batch) *dataflow.Chunk {
	c := dataflow.NewChunk(o.arity, b.Len())
	for cur := b.Cursor(); cur.KeyValid(); cur.StepKey() {
		for i, x := range cur.Key() {
			o.row[o.keyCols[i]] = x
		}
		for ; cur.ValValid(); cur.StepVal() {
			for j, x := range cur.Val() {
				o.row[o.valCols[j]] = x
			}
			ts, ds := cur.Updates()
			for i, t := range ts {
				if pt, ok := o.pres.Present(t); ok {
					c.Push(o.row, pt, ds[i])
				}
			}
		}
	}
	return c
}

func (o *flattenOp) Shutdown() {}

// layoutMFP is a join closure that first lays a kernel's output row out as
// the query's joined row (cols[p] is the kernel column of joined column p;
// a join key column appears once in the kernel's row and at every joined
// position of its class) and then applies next. Dispatch is per chunk.
type layoutMFP struct {
	cols    []int
	scratch *dataflow.Chunk
	next    join.Closure
}

func newLayout(cols []int, next join.Closure) *layoutMFP {
	return &layoutMFP{cols: cols, scratch: dataflow.NewChunk(len(cols), 0), next: next}
}

func (l *layoutMFP) Arity() int {
	if l.next == nil {
		return len(l.cols)
	}
	return l.next.Arity()
}

func (l *layoutMFP) Apply(in *dataflow.Chunk, out *join.Sink) {
	s := l.scratch
	s.Rows, s.Times, s.Diffs = s.Rows[:0], s.Times[:0], s.Diffs[:0]
	for i := range in.Len() {
		row := in.Row(i)
		for _, c := range l.cols {
			s.Rows = append(s.Rows, row[c])
		}
	}
	s.Times = append(s.Times, in.Times...)
	s.Diffs = append(s.Diffs, in.Diffs...)
	if l.next == nil {
		for i := range s.Len() {
			out.Push(s.Row(i), s.Times[i], s.Diffs[i])
		}
		return
	}
	l.next.Apply(s, out)
}

// reduceOp steps a reduce, threshold or distinct kernel with its input
// arrangement's batches and frontier, and sends the corrections it retires.
// It holds a capability at the kernel's lower: nothing before it changes;
// a failed step holds it there for good.
type reduceOp struct {
	in        *dataflow.Port[*batch.Batch]
	r         *reduce.Reduce
	oks, errs *dataflow.Stream[*dataflow.Chunk]
	fail      func(error)
	err       error
}

func (o *reduceOp) Step(in frontier.Frontier) frontier.Frontier {
	if o.err != nil {
		// Failed: the output stays where it stood before the failed step,
		// the kernel's lower (docs/semantics.md §2.5), never completing
		// times it did not reduce.
		return o.r.Lower()
	}
	msgs := o.in.Take()
	upper := o.in.Frontier()
	var out reduce.Output
	o.r.Stats().Do(func(context.Context) { out, o.err = o.r.Step(msgs, upper) })
	if o.err != nil {
		o.fail(o.err)
		return o.r.Lower()
	}
	if out.Retired {
		if c := o.chunk(out.Oks); c != nil {
			o.oks.Send(c)
		}
		if c := o.chunk(out.Errs); c != nil {
			o.errs.Send(c)
		}
	}
	if upper.IsEmpty() && o.r.Lower().IsEmpty() {
		return frontier.Empty()
	}
	return o.r.Lower()
}

// chunk turns a correction batch (key ++ val rows) into a chunk.
func (o *reduceOp) chunk(b *batch.Batch) *dataflow.Chunk {
	if b == nil || b.Len() == 0 {
		return nil
	}
	ar := b.Arity()
	c := &dataflow.Chunk{Arity: ar.Key + ar.Val}
	c.Rows, c.Times, c.Diffs = b.Rows()
	return c
}

func (o *reduceOp) Shutdown() { o.r.Release() }

// countOp sums the diffs of a collection's chunks before until: the
// collection's size accumulated so far, for benchmarks that need the
// output's size but not its rows. A sum of diffs needs no consolidation:
// rows that cancel cancel in the sum too.
type countOp struct {
	in    *dataflow.Port[*dataflow.Chunk]
	sum   *atomic.Int64
	until frontier.Frontier // updates at or after until are not counted
}

func (o *countOp) Step(frontier.Frontier) frontier.Frontier {
	var s int64
	for _, c := range o.in.Take() {
		if o.until.IsEmpty() {
			for _, d := range c.Diffs {
				s += d
			}
			continue
		}
		for i, t := range c.Times {
			if !o.until.Beyond(t) {
				s += c.Diffs[i]
			}
		}
	}
	if s != 0 {
		o.sum.Add(s)
	}
	return frontier.Empty()
}

func (o *countOp) Shutdown() {}
