package join

import (
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Updates is a columnar chunk of a delta path's updates (§5.4): each row
// carries its data time (the time the finished combination is output at,
// the join of its parts' times) and its initial time (the time of the
// source update that started it, the path's logical time, which the half
// joins compare lookup times against and never change).
type Updates struct {
	Arity int
	Rows  []int64
	Data  []uint64
	Init  []uint64
	Diffs []int64
}

// Len returns the number of updates.
func (u *Updates) Len() int { return len(u.Diffs) }

// Row returns row i (aliasing u).
func (u *Updates) Row(i int) []int64 { return u.Rows[i*u.Arity : i*u.Arity+u.Arity] }

// Reset empties u, keeping its capacity.
func (u *Updates) Reset() {
	u.Rows, u.Data, u.Init, u.Diffs = u.Rows[:0], u.Data[:0], u.Init[:0], u.Diffs[:0]
}

// push appends an update; the row is copied.
func (u *Updates) push(row []int64, data, init uint64, d int64) {
	u.Rows = append(u.Rows, row...)
	u.Data = append(u.Data, data)
	u.Init = append(u.Init, init)
	u.Diffs = append(u.Diffs, d)
}

// Stage is one half join of a delta path: the arrangement it looks up and
// which columns of the path's rows form the lookup key.
type Stage struct {
	// Lookup is the lookup arrangement's trace. The half join owns the
	// reader: it releases its physical hold at once (it reads the whole
	// trace) and moves its logical hold (H2).
	Lookup trace.Reader
	// Pres is how the lookup's batches are read.
	Pres batch.Presentation
	// Arity is the lookup arrangement's arity.
	Arity batch.Arity
	// Relation is the lookup's position in the query's `from` order.
	Relation int
	// StreamKey are the columns of the path's row that must equal the
	// lookup key, in key order.
	StreamKey []int
	// Closure, if not nil, is the stage's closure (§5.4 DeltaStagePlan):
	// applied to the stage's matches (the path's row ++ the lookup val)
	// before the next stage, so equivalences and filters cut work early;
	// its output is the path's row from then on. REQUIRES: it cannot err
	// (expr.MFP.CanErr is false): an erring expression sees only part of
	// the row's multiplicity here, so it belongs in the final closure
	// (docs/spec.md, "Expressions": the row's count is that of the joined row).
	Closure *MFP
}

// halfJoin is dogsdogsdogs' half_join (§5.4): proposals (the path's updates)
// are stashed until the lookup arrangement is complete for them, then
// matched with every lookup update whose time compares with the
// proposal's initial time: <= when the path's source comes before the
// lookup relation in `from` order, < otherwise (H1). A match is the
// proposal's row ++ the lookup val, at the join of the data times, with
// the product of the diffs (an overflow is the error `numeric overflow`,
// K3).
//
// A halfJoin is owned by one goroutine.
type halfJoin struct {
	st      Stage
	strict  bool
	arity   int // arity of the proposals' rows
	stash   Updates
	key     []int64
	waitF   frontier.Frontier // the lookup frontier of the last pass
	waiting int               // proposals that pass left waiting (the stash's prefix)
	waitMin uint64            // the least initial time of that prefix (when waiting > 0)
	ready   []keyIdx          // the pass's ready proposals, sorted by key
	pos     int               // the first ready proposal the pass has not matched
	passEnd int               // the stash's length when the pass began
	passing bool              // a pass has begun and not ended
	// stashMin is the least initial time stashed (when the stash holds
	// any): lowered by push, recomputed by end, so that a step reads it
	// without a pass over the stash (outstanding).
	stashMin uint64
	scratch  []keyIdx
	cut      []*batch.Batch
	curs     []batch.Cursor
	sat      []bool // cut[i] was saturated by a merge (batch.Batch.Saturated)
	ended    []bool // curs[i] is past the pass's last key
	live     int    // cursors not ended
}

// newHalf returns the half join of a path whose source is relation source
// and whose rows have the given arity.
func newHalf(st Stage, source, arity int) (*halfJoin, error) {
	// Every step reads the stream key: the caller's slice is the caller's
	// to reuse once the path is made (as Context.Arrange's key is).
	st.StreamKey = slices.Clone(st.StreamKey)
	if len(st.StreamKey) != st.Arity.Key {
		return nil, fmt.Errorf("%w: lookup of relation %d has key arity %d, stream key has %d columns", ErrArity, st.Relation, st.Arity.Key, len(st.StreamKey))
	}
	for _, c := range st.StreamKey {
		if c < 0 || c >= arity {
			return nil, fmt.Errorf("%w: stream key column %d outside rows of arity %d", ErrArity, c, arity)
		}
	}
	h := &halfJoin{
		st:     st,
		strict: source > st.Relation && !(mutants.Enabled && mutants.On(mutants.DeltaJoinLessEqualAllPaths)),
		arity:  arity,
		stash:  Updates{Arity: arity},
		key:    make([]int64, st.Arity.Key),
	}
	st.Lookup.SetPhysicalCompaction(frontier.Empty()) // H2: reads only whole traces
	return h, nil
}

// isReady reports whether the lookup is complete for a proposal with initial
// time t: no time of its frontier compares with t, so every lookup update
// that does is in the trace.
func (h *halfJoin) isReady(f frontier.Frontier, t uint64) bool {
	ft, ok := f.Time()
	if !ok {
		return true
	}
	if h.strict {
		return ft >= t
	}
	return ft > t
}

// push stashes proposals. An empty stash takes in's columns instead of
// copying them, and leaves in empty.
func (h *halfJoin) push(in *Updates) {
	if in.Len() == 0 {
		return
	}
	m := slices.Min(in.Init)
	if h.stash.Len() == 0 {
		h.stash, *in = *in, h.stash
		in.Reset()
		h.stashMin = m
		return
	}
	h.stashMin = min(h.stashMin, m)
	h.stash.Rows = append(h.stash.Rows, in.Rows...)
	h.stash.Data = append(h.stash.Data, in.Data...)
	h.stash.Init = append(h.stash.Init, in.Init...)
	h.stash.Diffs = append(h.stash.Diffs, in.Diffs...)
}

// A stage's pass over its ready proposals: begin finds them, next matches
// them a window at a time, end takes them out of the stash. A path sends
// each window's matches through its later stages before the next window
// (Path.drain), so what a step holds is a window a stage, not every
// match of every proposal: a zipf graph's two-paths, the proposals of a
// triangle query, run to hundreds of millions a round.

// begin starts a pass over the stashed proposals the lookup is complete
// for (isReady at its frontier now), sorted by key, and reports whether
// there are any. The stash's prefix the last pass left waiting at the
// same frontier still waits and is not read again. A pass that begins
// ends (end) once next has matched every proposal; proposals stashed
// meanwhile (push) wait for the next pass.
func (h *halfJoin) begin() (bool, error) {
	f := h.st.Lookup.ReadUpper()
	if f != h.waitF {
		h.waiting = 0
	}
	h.waitF = f
	h.ready, h.pos = h.ready[:0], 0
	h.passEnd = h.stash.Len()
	wm := h.prefixMin()
	for i := h.waiting; i < h.passEnd; i++ {
		if t := h.stash.Init[i]; h.isReady(f, t) {
			h.ready = append(h.ready, keyIdx{i: uint32(i)})
		} else {
			wm = min(wm, t)
		}
	}
	if len(h.ready) == 0 {
		h.waiting, h.waitMin = h.passEnd, wm
		return false, nil
	}
	cut, err := h.st.Lookup.BatchesThrough(frontier.Empty())
	if err != nil {
		h.ready = h.ready[:0]
		return false, fmt.Errorf("join: reading lookup relation %d: %w", h.st.Relation, err)
	}
	h.cut = cut
	h.curs, h.sat, h.ended = h.curs[:0], h.sat[:0], h.ended[:0]
	for _, b := range cut {
		if b.Arity() != h.st.Arity {
			h.ready = h.ready[:0]
			return false, fmt.Errorf("%w: lookup relation %d batch arity %v, stage expects %v", ErrArity, h.st.Relation, b.Arity(), h.st.Arity)
		}
		h.curs = append(h.curs, b.Cursor())
		h.sat = append(h.sat, b.Saturated())
		h.ended = append(h.ended, false)
	}
	h.live = len(h.curs)
	// Sort the ready proposals by key, column by column from the last
	// (radix sorts are stable), so that each cursor only gallops forward.
	for k := len(h.st.StreamKey) - 1; k >= 0; k-- {
		col := h.st.StreamKey[k]
		for x := range h.ready {
			h.ready[x].k = uint64(h.stash.Row(int(h.ready[x].i))[col]) ^ 1<<63 // order-preserving
		}
		h.ready, h.scratch = radixSort(h.ready, h.scratch)
	}
	h.passing = true
	return true, nil
}

// prefixMin returns the least initial time of the waiting prefix, or the
// greatest time when there is none.
func (h *halfJoin) prefixMin() uint64 {
	if h.waiting == 0 {
		return ^uint64(0)
	}
	return h.waitMin
}

// next matches the pass's ready proposals in key order, each with every
// lookup batch (a proposal's key is read once for all of them, and each
// batch's cursor gallops forward), appending matches to out and overflow
// errors to errs, until out holds budget updates or more, or every ready
// proposal is matched. It returns the number of matched pairs and
// whether ready proposals are left for a later call.
func (h *halfJoin) next(out *Updates, errs *Sink, budget int) (int64, bool) {
	var matches int64
	key := h.key
	for h.pos < len(h.ready) {
		if h.live == 0 {
			// Every cursor is past its batch's last key: no proposal
			// left matches.
			h.pos = len(h.ready)
			break
		}
		if out.Len() >= budget {
			return matches, true
		}
		i := int(h.ready[h.pos].i)
		h.pos++
		row := h.stash.Row(i)
		for k, col := range h.st.StreamKey {
			key[k] = row[col]
		}
		data, init, d := h.stash.Data[i], h.stash.Init[i], h.stash.Diffs[i]
		for ci := range h.curs {
			if h.ended[ci] {
				continue
			}
			c := &h.curs[ci]
			c.SeekKey(key)
			if !c.KeyValid() {
				h.ended[ci] = true
				h.live--
				continue
			}
			if cmpRow(c.Key(), key) != 0 {
				continue
			}
			n := h.match(c, row, data, init, d, out, errs)
			if h.sat[ci] && n > 0 {
				// A count a merge saturated was multiplied (K3,
				// docs/semantics.md §1.1): the error at the proposal's
				// data time, at or before every match's, once a sink.
				errs.noteSaturated(data)
			}
			matches += n
		}
	}
	return matches, false
}

// end ends the pass begin started: the proposals it matched leave the
// stash, the rest stay in their order and wait for the lookup to move,
// and those stashed during the pass follow them, for the next pass.
func (h *halfJoin) end() {
	f, s := h.waitF, &h.stash
	a := s.Arity
	w := h.waiting
	// The waiting prefix is not read again (its least time is kept), so a
	// pass costs what it matched and what was stashed after the prefix,
	// however many proposals wait for a lagging lookup.
	wm := h.prefixMin()
	m := wm
	for i := h.waiting; i < s.Len(); i++ {
		t := s.Init[i]
		if i < h.passEnd && h.isReady(f, t) {
			continue
		}
		m = min(m, t)
		if w != i {
			copy(s.Rows[w*a:w*a+a], s.Rows[i*a:i*a+a])
			s.Data[w], s.Init[w], s.Diffs[w] = s.Data[i], t, s.Diffs[i]
		}
		if i < h.passEnd {
			h.waiting, wm = w+1, min(wm, t)
		}
		w++
	}
	s.Rows, s.Data, s.Init, s.Diffs = s.Rows[:w*a], s.Data[:w], s.Init[:w], s.Diffs[:w]
	h.stashMin, h.waitMin = m, wm
	if invariants.Enabled && h.waiting > 0 {
		invariants.Assertf(h.waitMin == slices.Min(s.Init[:h.waiting]), "join: the waiting proposals' least initial time is %d, kept as %d", slices.Min(s.Init[:h.waiting]), h.waitMin)
	}
	// A pass over many proposals (a snapshot) leaves room that nothing
	// reads until a pass as large: a sort's permutations and a stash with
	// room past halfKeep and past four times what this pass used are
	// released (the stash's proposals kept in columns of their size), as
	// a batcher releases a buffer past builderKeep (core/batch). Passes
	// as large as the last keep theirs.
	used := w + len(h.ready)
	if c := cap(h.ready); c > halfKeep && 4*used < c {
		h.ready, h.scratch = nil, nil
	}
	if c := cap(s.Diffs); c > halfKeep && 4*used < c {
		if w == 0 {
			*s = Updates{Arity: a}
		} else {
			*s = Updates{Arity: a, Rows: slices.Clone(s.Rows), Data: slices.Clone(s.Data), Init: slices.Clone(s.Init), Diffs: slices.Clone(s.Diffs)}
		}
	}
	h.ready, h.pos, h.passing = h.ready[:0], 0, false
	clear(h.cut)
	h.cut = h.cut[:0]
	clear(h.curs)
	h.curs = h.curs[:0]
}

// halfKeep is the room, in proposals, a half join's stash and its sort's
// permutations keep after a pass (end): a variable so that the tests can
// make it small.
var halfKeep = 1 << 16

// keyIdx is a ready proposal: one column of its key, made unsigned with
// its order kept, and its index in the stash.
type keyIdx struct {
	k uint64
	i uint32
}

// radixSort sorts xs by k, stably, least significant byte first, skipping
// the bytes every key shares. It returns the sorted slice and the spare
// one.
func radixSort(xs, spare []keyIdx) (sorted, other []keyIdx) {
	if len(xs) < 2 {
		return xs, spare
	}
	if cap(spare) < len(xs) {
		spare = make([]keyIdx, len(xs))
	}
	spare = spare[:len(xs)]
	var diff uint64
	for _, x := range xs[1:] {
		diff |= x.k ^ xs[0].k
	}
	var counts [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		counts = [256]int{}
		for _, x := range xs {
			counts[(x.k>>shift)&0xff]++
		}
		sum := 0
		for b, c := range counts {
			counts[b] = sum
			sum += c
		}
		for _, x := range xs {
			d := (x.k >> shift) & 0xff
			spare[counts[d]] = x
			counts[d]++
		}
		xs, spare = spare, xs
	}
	return xs, spare
}

// match emits the matches of one proposal with the current key of c.
func (h *halfJoin) match(c *batch.Cursor, row []int64, data, init uint64, d1 int64, out *Updates, errs *Sink) int64 {
	var n int64
	// NB: lookup times are not advanced to as_of: every initial and data
	// time is at or after as_of already (Path.Feed advances them), and a
	// strict comparison never meets an initial time at as_of (D1), so an
	// earlier lookup time compares as as_of would.
	pres, strict := h.st.Pres, h.strict
	for ; c.ValValid(); c.StepVal() {
		ts, ds := c.Updates()
		for x, t2 := range ts {
			t2, shown := pres.Present(t2)
			if !shown || t2 > init || (strict && t2 == init) {
				continue
			}
			n++
			dt := max(data, t2)
			d, ok := expr.Mul(d1, ds[x])
			if !ok {
				errs.Error(expr.CodeOverflow, dt, 1)
				continue
			}
			out.Rows = append(append(out.Rows, row...), c.Val()...)
			out.Data = append(out.Data, dt)
			out.Init = append(out.Init, init)
			out.Diffs = append(out.Diffs, d)
		}
	}
	return n
}

// outstanding returns the least initial time stashed, if any.
func (h *halfJoin) outstanding() (uint64, bool) {
	if h.stash.Len() == 0 {
		return 0, false
	}
	if invariants.Enabled {
		invariants.Assertf(h.stashMin == slices.Min(h.stash.Init), "join: the stash's least initial time is %d, kept as %d", slices.Min(h.stash.Init), h.stashMin)
	}
	return h.stashMin, true
}

// compact moves the lookup's logical hold (H3): to one before the least
// initial time still to come, the meet of the stream frontier f (future
// proposals) and the stash. Compacting to that time itself would advance
// an earlier lookup time onto it and break the strict comparison. It
// returns the meet, the frontier of what this stage may still emit.
func (h *halfJoin) compact(f frontier.Frontier) frontier.Frontier {
	if t, ok := h.outstanding(); ok {
		f = f.Meet(frontier.At(t))
	}
	if mutants.Enabled && mutants.On(mutants.DeltaLookupAtOutstanding) {
		h.st.Lookup.SetLogicalCompaction(f)
		return f
	}
	h.st.Lookup.SetLogicalCompaction(f.StepBack())
	return f
}
