package dataflow

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
)

// Flavor says where an arrangement's trace lives (§4.1).
type Flavor int

const (
	// Local: built in this dataflow by Arrange.
	Local Flavor = iota
	// Imported: imported from the trace manager by ImportIndex (a local
	// trace of this runtime or a peer's publication).
	Imported
)

func (f Flavor) String() string {
	if f == Local {
		return "local"
	}
	return "imported"
}

// Arranged is one half (oks or errs) of an arrangement: a stream of
// immutable batches and the trace reader they are also in. Pres is how both
// are read (identity for a Local arrangement; as_of and until for an
// import). The reader is owned by the build context: an operator that reads
// the trace after construction takes its own with Context.Keep.
type Arranged struct {
	Stream *Stream[*batch.Batch]
	Reader trace.Reader
	Pres   batch.Presentation
	Arity  batch.Arity
	// Key are the columns of the collection the half is keyed by (its
	// values are the other columns in order): an oks half's Arrangement.Key,
	// [0] for an errs half (keyed by error code).
	Key []int
}

// ErrsShaped reports whether a has an errs half's shape: a stream, keyed
// by one error code with no vals, which an operator forwarding an
// entry's errors needs. An oks half of a one-column collection keyed by
// that column has the same shape: the shape is all a half carries.
func (a Arranged) ErrsShaped() bool {
	return a.Stream != nil && a.Arity == (batch.Arity{Key: 1})
}

// Arrangement is a collection arranged by key columns: oks by Key (vals are
// the other columns in order), errs by error code.
type Arrangement struct {
	Flavor Flavor
	Index  string // the index id, for Imported
	Key    []int  // key columns of the collection
	Arity  int    // columns of the collection
	Oks    Arranged
	Errs   Arranged
}

// arrangeOp buffers updates, and at every advance of its input frontier seals
// the batch [sealed, frontier), inserts it into its trace and sends it (D2).
// An overflow becomes a `numeric overflow` error row (Context.Arrange):
// sent on over for an oks half; for an errs half, added to the batch whose
// build overflowed (withOverflows), or, found by a merge, pushed into its
// own batcher at its frontier.
type arrangeOp struct {
	in      *Port[*Chunk]
	keyCols []int
	valCols []int
	batcher *batch.Batcher
	w       *trace.Writer
	spine   *share.Spine
	merges  int // overflowing merges of spine already reported as rows
	ar      batch.Arity
	out     *Stream[*batch.Batch]
	over    *Stream[*Chunk] // nil for an errs half
	sealed  frontier.Frontier
	// name is the operator's ("arrange oks", "arrange errs", each with
	// what it arranges after it when named: Context.ArrangeNamed), for its
	// errors; wide is the arity of the chunks it reads (the collection's,
	// or 1 for error codes).
	name  string
	wide  int
	err   error
	onErr func(error)
	// consolidateAt is the number of buffered updates at which the
	// batcher consolidates them before its frontier moves (Step);
	// consolidations counts them.
	consolidateAt, consolidations int
}

// consolidateMin is the fewest buffered updates an arrangement
// consolidates before its frontier moves (batch.Batcher.Consolidate): a
// mebibyte of updates, about 32–40 MB of buffer, well past a steady
// round's and an ordinary install's (which seal in the step that buffers
// them). A buffer that consolidated to at most half of itself is
// consolidated again once it has doubled; one that kept more than half
// (rows that do not sum: a join's distinct rows) once it has grown
// eightfold, so that such a buffer costs about an eighth of a build more
// than its seal, and its peak the consolidation's copy of an eighth of it.
var consolidateMin = 1 << 20

func (o *arrangeOp) Step(in frontier.Frontier) frontier.Frontier {
	// Chunks are immutable once sent, so the batcher may keep them until
	// its next seal instead of copying them now (batch.Batcher.PushChunk).
	// Each is admitted first: one an operator sent against the contract
	// (admit) stops the arrangement before any of it is kept.
	for _, c := range o.in.Take() {
		if o.err != nil {
			break
		}
		if err := admit(c, o.in.from, o.wide, nil, o.sealed); err != nil {
			o.err = fmt.Errorf("%s: %w", o.name, err)
			o.onErr(o.err)
			break
		}
		o.batcher.PushChunk(c.Rows, c.Arity, o.keyCols, o.valCols, c.Times, c.Diffs)
	}
	if o.err != nil {
		// Stopped: its frontier stays where its last batch left it, so
		// that no reader of its stream or its trace takes what it holds
		// for complete beyond it.
		return o.sealed
	}
	// Merges that overflowed since the last step (in maintenance) found
	// times already sealed: their rows go to the frontier, before it moves
	// (an errs half's into the batch it seals next).
	if at := o.mergeOverflows(nil); len(at) > 0 {
		o.emit(at)
	}
	var at []frontier.Time
	sealed := o.sealed.Less(in)
	if sealed {
		b, err := o.batcher.Seal(o.sealed, in)
		if oe := overflowOf(err); oe != nil {
			// The batch is complete, the overflowed diffs saturated.
			err = nil
			if o.over != nil {
				at = append(at, oe.Times...)
			} else {
				// An errs half: its rows go into this batch, at the
				// times that overflowed, so that the error is in the
				// accumulated errors at the time the count left int64
				// (docs/semantics.md §1.1 "while building"), as an oks
				// half's are. Sent to the frontier instead, a count
				// that error multiplicities compounded through nested
				// joins out of int64 read as a saturated count with no
				// error at that time.
				b = withOverflows(b, oe.Times)
			}
		}
		if err == nil {
			err = o.w.Insert(b)
		}
		if err != nil {
			o.err = fmt.Errorf("%s: sealing [%v, %v): %w", o.name, o.sealed, in, err)
			o.onErr(o.err)
			return o.sealed
		}
		o.sealed = in
		if !b.IsEmpty() {
			o.out.Send(b)
		}
		// Merges the insert did.
		at = o.mergeOverflows(at)
	}
	if len(at) > 0 {
		o.emit(at)
	}
	// An operator upstream that holds its frontier while it sends a great
	// many updates (a join's rows of one round, projected to a few
	// columns) would have them all buffered until the frontier moves:
	// buffered past consolidateAt, they are consolidated in place, which
	// changes no batch the seals make.
	if n := o.batcher.Len(); n >= o.consolidateAt {
		o.batcher.Consolidate()
		o.consolidations++
		kept, grow := o.batcher.Len(), 2
		if 2*kept > n {
			grow = 8
		}
		o.consolidateAt = max(consolidateMin, grow*kept)
	} else if sealed {
		o.consolidateAt = max(consolidateMin, 2*n)
	}
	return frontier.Empty()
}

// withOverflows returns b with one `numeric overflow` error row (count 1)
// at each of times, rebuilt over b's interval (a cold path: b is an errs
// half's batch, a few rows per error code). A count the row saturates
// again stays saturated.
func withOverflows(b *batch.Batch, times []frontier.Time) *batch.Batch {
	bld := batch.NewBuilder(b.Arity(), b.Len()+len(times))
	for _, u := range b.Updates() {
		bld.Push(u.Key, u.Val, u.Time, u.Diff)
	}
	row := []int64{expr.CodeOverflow}
	for _, t := range times {
		bld.Push(row, nil, t, 1)
	}
	out, _ := bld.Build(b.Lower(), b.Upper()) // an overflow is saturated, as in b
	return out
}

// mergeOverflows appends the frontier once per overflowing merge of the
// trace not reported yet (none once the frontier is {}).
func (o *arrangeOp) mergeOverflows(at []frontier.Time) []frontier.Time {
	n := o.spine.Overflows()
	if n == o.merges {
		return at
	}
	if t, ok := o.sealed.Time(); ok {
		at = append(at, slices.Repeat([]frontier.Time{t}, n-o.merges)...)
	}
	o.merges = n
	return at
}

// emit reports one `numeric overflow` per time of at: as chunk rows on
// over, or into the errs half's own batcher.
func (o *arrangeOp) emit(at []frontier.Time) {
	row := []int64{expr.CodeOverflow}
	if o.over == nil {
		for _, t := range at {
			o.batcher.Push(row, nil, t, 1)
		}
		return
	}
	ch := NewChunk(1, len(at))
	for _, t := range at {
		ch.Push(row, t, 1)
	}
	o.over.Send(ch)
}

// Shutdown tells the arrangement's trace that it stops where it was
// sealed: the dataflow writing it is dropped (or its create failed), and
// a trace kept alive past it (a re-export's, a Maintained reader's of an
// index freed before) is written no more. Its readers freeze their waits
// there once their runtime tells them of the drop (importOp.Step). An
// ended publication, the usual drop's, is told nothing (share.Spine.Fail).
func (o *arrangeOp) Shutdown() { o.spine.Fail(o.sealed, errWriterDropped) }

// errWriterDropped is the failure a dropped writer leaves on its traces
// (arrangeOp.Shutdown). A reader freezes its waits with it only with the
// error its runtime gives the drop (Dataflow.EndImport: the drop's
// runtime.ErrIndexDropped, naming the reader), so that Solo and the pair,
// whose publications learn of the drop at another moment than their
// readers, end the same waits with the same error.
var errWriterDropped = errors.New("dataflow: the dataflow writing the trace was dropped")

// concatOp forwards the chunks of two streams as one.
type concatOp struct {
	a, b *Port[*Chunk]
	out  *Stream[*Chunk]
}

func (o *concatOp) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.a.Take() {
		o.out.Send(c)
	}
	for _, c := range o.b.Take() {
		o.out.Send(c)
	}
	return frontier.Empty()
}

func (o *concatOp) Shutdown() {}

// importOp replays a share.Import as a stream of batches; its capability is
// the frontier the import has acknowledged, {} once it is done. An import
// closed at build because nothing reads it (Dataflow.closeUnreadImports)
// keeps the frontier it had acknowledged: {} would say its trace is
// complete, which it is not.
type importOp struct {
	im     *share.Import
	out    *Stream[*batch.Batch]
	evs    []share.Event
	unread bool   // closed at build: nothing reads it
	index  string // the index id it imports a half of
	// n is the operator's node; ended is the error its runtime gave the
	// end of the index it imports (Dataflow.EndImport), and frozen says
	// what is downstream was frozen at the import's final frontier.
	n      *node
	ended  error
	frozen bool
	// failFrozen says what is downstream was frozen at the limit of the
	// trace's failure (share.Import.Failure), failLimit; a failure told
	// later at an earlier limit freezes it again there.
	failFrozen bool
	failLimit  frontier.Frontier
}

func (o *importOp) Step(frontier.Frontier) frontier.Frontier {
	if o.unread {
		// Its node is closed (Dataflow.step passes it by); a step here
		// would be one that took it for open.
		if invariants.Enabled {
			invariants.Assertf(false, "dataflow: import %q, closed at build as unread, was stepped", o.index)
		}
		return o.im.Frontier()
	}
	o.evs = o.im.Drain(o.evs[:0])
	for _, e := range o.evs {
		if e.Batch != nil {
			o.out.Send(e.Batch)
		}
	}
	for i := len(o.evs) - 1; i >= 0; i-- { // a few events: clear's bulk path costs more
		o.evs[i] = share.Event{}
	}
	// The array is the next step's, unless a burst grew it past portKeep
	// events (a lagging reader's backlog, drained at once): then it goes,
	// not kept for the dataflow's life, as a port's (Port.Take).
	if cap(o.evs) > portKeep {
		o.evs = nil
	}
	if o.im.Done() {
		return frontier.Empty()
	}
	if limit, err := o.im.Failure(); err != nil && (!o.failFrozen || limit.Less(o.failLimit)) && !o.im.Presentation().Until.LessEqual(limit) {
		// The trace never passes limit, short of until: nor does
		// anything downstream (again at an earlier limit, a later
		// failure's). A dropped writer's, once the runtime has told the
		// dataflow of the drop, with the runtime's error.
		switch {
		case err != errWriterDropped:
			o.failFrozen, o.failLimit = true, limit
			o.n.df.freezeDownstream(o.n, limit, err)
		case o.ended != nil:
			o.failFrozen, o.failLimit = true, limit
			o.n.df.freezeDownstream(o.n, limit, o.ended)
		}
	}
	if o.ended != nil && !o.frozen && o.im.Ended() {
		// The index ended short of until and every batch it published
		// is read: nothing downstream passes the import's frontier.
		o.frozen = true
		o.n.df.freezeDownstream(o.n, o.im.Frontier(), o.ended)
	}
	return o.im.Frontier()
}

func (o *importOp) Shutdown() { o.im.Close() }

// overflowOf returns the batch.OverflowError err wraps, or nil. errors.As
// takes the target's address, which puts it on the heap: it is made only
// for an error, not at every seal.
func overflowOf(err error) *batch.OverflowError {
	if err == nil {
		return nil
	}
	var oe *batch.OverflowError
	if errors.As(err, &oe) {
		return oe
	}
	return nil
}
