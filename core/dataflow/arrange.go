package dataflow

import (
	"fmt"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/trace"
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
	Trace  trace.Reader
	Pres   batch.Presentation
	Arity  batch.Arity
	// Key are the columns of the collection the half is keyed by (its
	// values are the other columns in order): an oks half's Arrangement.Key,
	// [0] for an errs half (keyed by error code).
	Key []int
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
type arrangeOp struct {
	in      *Port[*Chunk]
	keyCols []int
	valCols []int
	batcher *batch.Batcher
	w       *trace.Writer
	ar      batch.Arity
	out     *Stream[*batch.Batch]
	sealed  frontier.Frontier
	err     error
	onErr   func(error)
}

func (o *arrangeOp) Step(in frontier.Frontier) frontier.Frontier {
	cs := o.in.Take()
	n := 0
	for _, c := range cs {
		n += c.Len()
	}
	o.batcher.Grow(n) // one exact allocation, not doublings from empty
	for _, c := range cs {
		for i := range c.Len() {
			o.batcher.PushRow(c.Row(i), o.keyCols, o.valCols, c.Times[i], c.Diffs[i])
		}
	}
	if o.err == nil && o.sealed.Less(in) {
		b, err := o.batcher.Seal(o.sealed, in)
		if err == nil {
			err = o.w.Insert(b)
		}
		if err != nil {
			o.err = fmt.Errorf("arrange: sealing [%v, %v): %w", o.sealed, in, err)
			o.onErr(o.err)
			return frontier.Empty()
		}
		o.sealed = in
		if !b.IsEmpty() {
			o.out.Send(b)
		}
	}
	return frontier.Empty()
}

func (o *arrangeOp) Shutdown() {}

// importOp replays a share.Import as a stream of batches; its capability is
// the frontier the import has acknowledged, {} once it is done.
type importOp struct {
	im  *share.Import
	out *Stream[*batch.Batch]
	evs []share.Event
}

func (o *importOp) Step(frontier.Frontier) frontier.Frontier {
	o.evs = o.im.Drain(o.evs[:0])
	for _, e := range o.evs {
		if e.Batch != nil {
			o.out.Send(e.Batch)
		}
	}
	clear(o.evs)
	if o.im.Done() {
		return frontier.Empty()
	}
	return o.im.Frontier()
}

func (o *importOp) Shutdown() { o.im.Close() }
