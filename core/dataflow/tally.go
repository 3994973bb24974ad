package dataflow

import (
	"fmt"
	"sync"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Tally is the lightest query that reads what changed: on every worker it
// walks each batch arriving on an arrangement half key by key, val by val
// and update by update (batch.Batch.Tally), presents every time (§3.3) and
// counts the keys visited, the updates shown and the sum of their diffs. Its probe side says when a time has passed; the counts are
// then final for every time before it. Safe for concurrent use.
//
// A batch a merge saturated (batch.Batch.Saturated: an imported index's
// snapshot, merged after compaction brought a count's times together)
// holds a count clamped to int64's bound, standing for one out of range
// (docs/semantics.md §1.1): summed, it is no checksum of what was sent.
// Counts says so.
type Tally struct {
	Probe
	tmu     sync.Mutex
	keys    int64
	updates int64
	sum     int64
	// saturated says a worker read an update of a Saturated batch.
	saturated bool
}

// NewTally returns a tally for a dataflow running on workers workers.
func NewTally(workers int) *Tally {
	return &Tally{Probe: *NewProbe(workers)}
}

// Counts returns the keys visited, the updates shown and the sum of their
// diffs, over every worker and every batch read so far. The sum is int64's
// wrapping one (batch.Batch.Tally): a checksum of what was read, equal to
// one summed the same way over what was sent, whatever the order — unless
// saturated: then an update shown was one of a batch a merge saturated,
// whose count is clamped to int64's bound where the exact one is out of
// range, and the sum is not what was sent summed (nor is any figure made
// from it exact). The four are read together, so a sum with saturated
// false read no such batch.
func (t *Tally) Counts() (keys, updates, sum int64, saturated bool) {
	t.tmu.Lock()
	defer t.tmu.Unlock()
	return t.keys, t.updates, t.sum, t.saturated
}

// Tally attaches t to an arrangement half: it reads every batch of the
// half's stream as presented and reports the stream's frontier. A tally
// made for another number of workers than the runtime's fails the build,
// and so does an Arranged whose Stream is nil (ErrNilStream), leaving t
// unattached.
func (c *Context) Tally(t *Tally, a Arranged) {
	if c.late("Context.Tally") != nil {
		return
	}
	if t == nil {
		c.fail(fmt.Errorf("dataflow %s: tally is nil: make one with NewTally(workers)", c.df.id))
		return
	}
	// A tally made for another number of workers would be told a worker
	// it has no place for (a panic in the step) or wait for one that
	// never reports: it fails the build, as a probe or capture does.
	if a.Stream == nil {
		c.refuseNil("Context.Tally", "Arranged.Stream") // before the tally is attached, as in Context.Probe
		return
	}
	from := a.Stream.from
	if !c.checkProbe("tally", &t.Probe) {
		return
	}
	op := &tallyOp{t: t, worker: c.env.Worker, in: a.Stream.subscribe(c.df), pres: a.Pres, stopper: c.env.Stopper}
	c.df.addNode("tally", op, from)
}

type tallyOp struct {
	t       *Tally
	worker  int
	in      *Port[*batch.Batch]
	pres    batch.Presentation
	stopper *Stopper // the runtime's (Env.Stopper), which the tally leaves at Shutdown
}

func (o *tallyOp) Step(in frontier.Frontier) frontier.Frontier {
	var keys, updates, sum int64
	sat := false
	for _, b := range o.in.Take() {
		k, u, s := b.Tally(o.pres)
		keys, updates, sum = keys+k, updates+u, sum+s
		// A saturated batch none of whose updates is shown adds
		// nothing to the sum.
		sat = sat || u > 0 && b.Saturated()
	}
	if keys > 0 {
		o.t.tmu.Lock()
		o.t.keys += keys
		o.t.updates += updates
		o.t.sum += sum
		o.t.saturated = o.t.saturated || sat
		o.t.tmu.Unlock()
	}
	o.t.set(o.worker, in)
	return frontier.Empty()
}

func (o *tallyOp) Shutdown() {
	o.t.Probe.leave(o.stopper)
}

func (o *tallyOp) probed() (*Probe, int) { return &o.t.Probe, o.worker }
