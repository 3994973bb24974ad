package dataflow

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Inputs are a worker's input collections: each keeps this worker's share of
// every update sent to it (rows whose hash falls to this worker) and its
// frontier, so a dataflow created later replays the whole history, or the
// history compacted to the input's since (AllowCompaction). An input
// declared with InputOptions.NoHistory keeps none of it: only the dataflows
// reading it when an update arrives are given the update.
type Inputs struct {
	worker, peers int
	logs          map[string]*inputLog
	activate      func(*Dataflow)
	idx           []int32 // scratch: the rows of a sent chunk this worker keeps
	// declaredOnly: a dataflow reads only an input declared (Declare)
	// since RequireDeclared, which records them in declared.
	declaredOnly bool
	declared     map[string]bool
}

// ErrUndeclaredInput is wrapped by Context.Input, once the inputs require
// declaration (Inputs.RequireDeclared), for an input never declared.
var ErrUndeclaredInput = errors.New("input not declared")

// RequireDeclared makes a dataflow's read of an input never declared an
// error (ErrUndeclaredInput) rather than a declaration with the arity it
// reads. A runtime requires it: its controller checks every Input,
// AdvanceInput and CreateInput against the inputs it declared, so an input
// that only a dataflow named (a misspelt one) would wait for updates
// forever, and a CreateInput of that name with another arity would be
// accepted by the controller and refused by every worker (R3 of
// core/runtime). Call it before any input is declared.
func (in *Inputs) RequireDeclared() {
	in.declaredOnly = true
	if in.declared == nil {
		in.declared = map[string]bool{}
	}
}

type inputLog struct {
	arity    int
	history  []*Chunk
	frontier frontier.Frontier
	subs     []*inputOp
	// since: the history is exact from here on (Inputs.AllowCompaction),
	// and compacts says one was allowed, so the history compacts as it
	// grows; rows: the updates it holds; compacted: how many of them the
	// last compaction left, the first chunk's.
	since           frontier.Frontier
	compacts        bool
	rows, compacted int
	// noHistory: history stays empty; received: an update was sent (to
	// any worker: Send), or history was dropped when the option was set,
	// so a dataflow that starts reading now would miss it.
	noHistory, received bool
}

// InputOptions configure an input when it is declared.
type InputOptions struct {
	// NoHistory keeps none of the input's updates: each goes to the
	// dataflows reading the input when it arrives and is not kept for
	// later ones, so the input's memory does not grow with its rounds. A
	// dataflow may start reading the input only before its first update:
	// Context.Input refuses it after one (ErrInputHistory) instead of
	// giving it a partial collection.
	NoHistory bool
}

// ErrInputHistory is wrapped by Context.Input for an input declared with
// InputOptions.NoHistory that has received updates: they are gone, so the
// dataflow cannot be given the input's collection.
var ErrInputHistory = errors.New("the input keeps no history (InputOptions.NoHistory) and has received updates: a dataflow must read it before its first update")

// NewInputs returns a worker's inputs. activate is called when a dataflow
// reading an input has something new.
func NewInputs(worker, peers int, activate func(*Dataflow)) *Inputs {
	return &Inputs{worker: worker, peers: peers, logs: map[string]*inputLog{}, activate: activate}
}

func (in *Inputs) log(name string, arity int) (*inputLog, error) {
	l, ok := in.logs[name]
	if !ok {
		l = &inputLog{arity: arity}
		in.logs[name] = l
		return l, nil
	}
	if l.arity != arity {
		return nil, fmt.Errorf("input %q has arity %d, not %d", name, l.arity, arity)
	}
	return l, nil
}

// Declare declares input name with its arity; a dataflow that reads it
// before it is declared declares it with the arity it reads, and the arities
// must agree (unless RequireDeclared, when such a read is an error).
func (in *Inputs) Declare(name string, arity int) error {
	return in.DeclareWith(name, arity, InputOptions{})
}

// DeclareWith is Declare with options. NoHistory on an input that has a
// history (it was read, and sent to, before this declaration) drops it.
func (in *Inputs) DeclareWith(name string, arity int, o InputOptions) error {
	l, err := in.log(name, arity)
	if err != nil {
		return fmt.Errorf("dataflow: %w", err)
	}
	if in.declared != nil {
		in.declared[name] = true
	}
	if o.NoHistory && !l.noHistory {
		l.noHistory = true
		l.received = l.received || len(l.history) > 0
		l.history, l.rows, l.compacted = nil, 0, 0
	}
	return nil
}

// Send adds updates to input name: this worker keeps the rows whose hash
// falls to it (Chunk.share; with one worker, the chunk itself), and every
// worker of a runtime is given the whole chunk and keeps its own share at
// once, so no one splits it for the others first. c must not change while
// any worker may still read it. Times must be at or after the input's
// frontier.
func (in *Inputs) Send(name string, c *Chunk) error {
	if err := c.Check(); err != nil {
		return err
	}
	l, err := in.log(name, c.Arity)
	if err != nil {
		return fmt.Errorf("dataflow: %w", err)
	}
	mine := c
	if in.peers > 1 {
		mine = c.share(in.worker, in.peers, &in.idx)
	}
	if err := in.keep(name, l, mine); err != nil {
		return err
	}
	// An update sent is received by every worker, its share of the rows
	// or none: a NoHistory input refuses a later reader on each alike
	// (Context.Input), so the create's error does not hang on which
	// worker the rows fell to.
	l.received = l.received || c.Len() > 0
	return nil
}

// keep records mine, this worker's share of an input's updates, and hands
// it to every dataflow reading the input.
func (in *Inputs) keep(name string, l *inputLog, mine *Chunk) error {
	if i := l.frontier.FirstBefore(mine.Times); i >= 0 {
		return fmt.Errorf("dataflow: input %q: update at %d is before its frontier %v", name, mine.Times[i], l.frontier)
	}
	if mine.Len() == 0 {
		return nil
	}
	l.received = true
	if !l.noHistory && !l.since.IsEmpty() {
		l.history = append(l.history, mine)
		l.rows += mine.Len()
		in.compactDue(l)
	}
	for _, s := range l.subs {
		s.pending = append(s.pending, mine)
		in.activate(s.df)
	}
	return nil
}

// Advance moves input name's frontier to f (never back). The input must be
// declared, or read by a dataflow.
func (in *Inputs) Advance(name string, f frontier.Frontier) error {
	l, ok := in.logs[name]
	if !ok {
		return fmt.Errorf("dataflow: advance of unknown input %q", name)
	}
	if !l.frontier.LessEqual(f) {
		return fmt.Errorf("dataflow: input %q: frontier %v would move back to %v", name, l.frontier, f)
	}
	l.frontier = f
	for _, s := range l.subs {
		in.activate(s.df)
	}
	return nil
}

// Drop forgets input name: its frontier moves to {} (the dataflows reading
// it see its collection complete, as after an Advance to {}), its history
// goes, and the name is free: a later Declare, or a dataflow's read of the
// name, is of a new input (once the inputs require declaration, a read
// before that Declare is refused, ErrUndeclaredInput). The dataflows that
// read the dropped input keep what they read.
func (in *Inputs) Drop(name string) error {
	l, ok := in.logs[name]
	if !ok {
		return fmt.Errorf("dataflow: drop of unknown input %q", name)
	}
	delete(in.logs, name)
	if in.declared != nil {
		delete(in.declared, name)
	}
	l.frontier = frontier.Empty()
	l.history, l.rows, l.compacted = nil, 0, 0
	l.since = frontier.Empty()
	for _, s := range l.subs {
		in.activate(s.df)
	}
	return nil
}

// ErrInputCompacted is wrapped by Context.Input for an input whose history
// has been allowed to compact (Inputs.AllowCompaction) beyond the
// dataflow's as_of, or dropped (allowed to compact to {}): the history no
// longer tells the collection at every time from the as_of on.
var ErrInputCompacted = errors.New("the input's history has been allowed to compact beyond the dataflow's as_of")

// inputCompactMin is the fewest updates an input's history gains before
// it is compacted again.
const inputCompactMin = 1024

// AllowCompaction lets input name's history compact to since: it need
// only tell the collection exactly at times at or after since, so an
// update at an earlier time may be kept at since instead, and updates of
// one row at one time summed into one (zeros dropped). A dataflow created
// later may read the input only if its as_of is at or after since
// (Context.Input refuses it otherwise, ErrInputCompacted); the dataflows
// reading it already keep reading every update as sent. since never moves
// back. Compaction to {} drops the history: the input is then read only by
// the dataflows that read it already.
//
// The history is compacted when it has grown by as many updates as the
// last compaction left (and by inputCompactMin at least) since then,
// here or at the Send that grows it (a since allowed ahead of the
// frontier, then updates of earlier times, compacts with no later call),
// so the work is proportional to the updates sent and the history holds
// at most about twice what a compaction to since leaves. A row whose
// diffs at one time add up beyond int64 keeps the exact sum, as the
// fewest updates that add up to it (MaxInt64 or MinInt64 each, then the
// rest): a reader's arrangement consolidates them at since and finds the
// overflow there, as it consolidates the row's count at a time
// (docs/semantics.md §1.1). Summed across times, the history shows a
// reader what an index compacted to since does: an overflow of the
// count at since, which the updates at their own times would show only
// once a merge consolidated them, and none of an earlier time's sum that
// later updates brought back within int64.
func (in *Inputs) AllowCompaction(name string, since frontier.Frontier) error {
	l, ok := in.logs[name]
	if !ok {
		return fmt.Errorf("dataflow: compaction of unknown input %q", name)
	}
	if !l.since.LessEqual(since) {
		return fmt.Errorf("dataflow: input %q: compaction to %v would move back from %v", name, since, l.since)
	}
	l.since, l.compacts = since, true
	if since.IsEmpty() {
		l.history, l.rows, l.compacted = nil, 0, 0
		return nil
	}
	in.compactDue(l)
	return nil
}

// Len returns the number of inputs declared, or read by a dataflow, and not
// dropped.
func (in *Inputs) Len() int { return len(in.logs) }

// compactDue compacts l's history to its since if it has been allowed to
// compact (AllowCompaction) and has grown by as many updates as the last
// compaction left, and by inputCompactMin at least.
func (in *Inputs) compactDue(l *inputLog) {
	if !l.compacts || l.rows-l.compacted < max(l.compacted, inputCompactMin) {
		return
	}
	c := compactChunks(l.history, l.arity, l.rows, l.since.MustTime())
	if in.peers > 1 && l.arity > 0 {
		c.keyTo(in.worker, in.peers) // the rows of this worker's shares
	}
	// A new slice: the old one's array, grown by every chunk since the
	// last compaction, would stay for the input's life.
	l.history = nil
	if c.Len() > 0 {
		l.history = []*Chunk{c}
	}
	l.rows, l.compacted = c.Len(), c.Len()
}

// HistoryLen returns the number of updates the inputs keep for dataflows
// created later, over every input.
func (in *Inputs) HistoryLen() int {
	n := 0
	for _, l := range in.logs {
		n += l.rows
	}
	return n
}

// compactChunks returns one chunk of the n updates of chunks (rows of
// arity ar): each time advanced to since, updates of equal row and time
// summed into one, zero sums dropped, sorted by row and time. A group whose
// sum leaves int64 is kept as the fewest updates that add up to it.
//
// The rows are sorted and summed by a batch.Builder, whose radix sort a
// compaction of a large history needs (a comparator sort of the rows took
// 250–580 ns an update at 1e4–1e6 updates, in one worker's wake); a sum that
// leaves int64, which the builder saturates, sends the whole compaction to
// compactExact instead.
func compactChunks(chunks []*Chunk, ar, n int, since frontier.Time) *Chunk {
	if n == 0 {
		return NewChunk(ar, 0)
	}
	// Two columns are the builder's one-column key and val (its records'
	// radix sort); other arities are a key of ar columns. Either sorts by
	// the row's columns in order, then by time.
	ba := batch.Arity{Key: ar}
	if ar == 2 {
		ba = batch.Arity{Key: 1, Val: 1}
	}
	b := batch.NewBuilder(ba, n)
	switch {
	case ar == 2:
		for _, c := range chunks {
			rows, diffs := c.Rows[:2*len(c.Times)], c.Diffs[:len(c.Times)]
			for i, t := range c.Times {
				b.Push1(rows[2*i], rows[2*i+1], max(t, since), diffs[i])
			}
		}
	case ar <= 1:
		for _, c := range chunks {
			rows, diffs := c.Rows[:ar*len(c.Times)], c.Diffs[:len(c.Times)]
			for i, t := range c.Times {
				var k int64
				if ar == 1 {
					k = rows[i]
				}
				b.Push1(k, 0, max(t, since), diffs[i])
			}
		}
	default:
		for _, c := range chunks {
			for i, t := range c.Times {
				b.Push(c.Rows[i*ar:i*ar+ar], nil, max(t, since), c.Diffs[i])
			}
		}
	}
	out, err := b.Build(frontier.Min(), frontier.Empty())
	if err != nil {
		// An overflow (*batch.OverflowError): the builder saturated a
		// sum this compaction keeps exactly.
		return compactExact(chunks, ar, n, since)
	}
	rows, times, diffs := out.Rows()
	// The times and diffs are copied out of the batch's columns, which
	// may share one block with its keys and vals: the history would keep
	// all of it.
	return &Chunk{Arity: ar, Rows: rows, Times: slices.Clone(times), Diffs: slices.Clone(diffs)}
}

// compactExact is compactChunks for a history with a row whose sum at one
// time leaves int64: a comparator sort of the rows, each group summed in
// 128 bits and kept as the fewest updates that add up to its sum.
func compactExact(chunks []*Chunk, ar, n int, since frontier.Time) *Chunk {
	rows := make([]int64, 0, n*ar)
	times := make([]uint64, 0, n)
	diffs := make([]int64, 0, n)
	for _, c := range chunks {
		rows = append(rows, c.Rows[:c.Len()*ar]...)
		for _, t := range c.Times {
			times = append(times, max(t, since))
		}
		diffs = append(diffs, c.Diffs...)
	}
	row := func(i int) []int64 { return rows[i*ar : i*ar+ar] }
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		if c := slices.Compare(row(a), row(b)); c != 0 {
			return c
		}
		return cmp.Compare(times[a], times[b])
	})
	out := NewChunk(ar, 0)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && times[perm[hi]] == times[perm[lo]] && slices.Equal(row(perm[hi]), row(perm[lo])) {
			hi++
		}
		var sum count // exact, in 128 bits (capture.go)
		for _, i := range perm[lo:hi] {
			sum.add(diffs[i])
		}
		// Out of int64, the sum is kept as the fewest updates that add
		// up to it: the bound of its sign, as often as it takes, then
		// the rest (no more than the group's updates, each at most
		// that bound), so a row whose count has left int64 keeps a
		// few updates however many it is sent.
		r, t := row(perm[lo]), times[perm[lo]]
		for {
			v, ok := sum.int64()
			if ok {
				if v != 0 {
					out.Push(r, t, v)
				}
				break
			}
			piece := int64(math.MaxInt64)
			if sum.hi < 0 {
				piece = math.MinInt64
			}
			sum.sub(piece)
			out.Push(r, t, piece)
		}
		lo = hi
	}
	return out
}

// inputOp is the source operator of an input in one dataflow.
type inputOp struct {
	df      *Dataflow
	log     *inputLog
	oks     *Stream[*Chunk]
	pending []*Chunk
	done    bool
}

func (o *inputOp) Step(frontier.Frontier) frontier.Frontier {
	if o.done {
		return frontier.Empty()
	}
	for _, c := range o.pending {
		o.oks.Send(c)
	}
	// The array is the next step's, unless a burst grew it (a dataflow
	// hydrated from the input's history of many chunks, a driver's many
	// sends between two steps) past portKeep and four times what this
	// step sent: then it goes, not kept for the dataflow's life, as a
	// port's (Port.Take).
	if c := cap(o.pending); c > portKeep && c > 4*len(o.pending) {
		o.pending = nil
	} else {
		clear(o.pending)
		o.pending = o.pending[:0]
	}
	return o.log.frontier
}

func (o *inputOp) Shutdown() {
	o.done = true
	for i, s := range o.log.subs {
		if s == o {
			// Delete, which zeroes the slot it frees: an append over it
			// left a copy of the last subscriber's pointer in the
			// array's spare capacity, which kept that operator (its
			// dataflow, its pending chunks) reachable after its own
			// drop, for the input's life.
			o.log.subs = slices.Delete(o.log.subs, i, i+1)
			break
		}
	}
	o.pending = nil
}
