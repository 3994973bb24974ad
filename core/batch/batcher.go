package batch

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/tracebench/tracebench/core/frontier"
)

// Batcher buffers unsorted updates and seals batches out of them (§1.5): Seal
// removes every buffered update whose time is before upper and returns them
// as one consolidated batch [lower, upper); later updates stay buffered. It
// is what an arrange operator keeps between frontier advances.
//
// Updates with key and val arity at most 1 are buffered straight into the
// builder's records, so sealing sorts them where they are instead of copying
// them first; the few at or beyond upper are parked during the build and put
// back after it. Wider rows are buffered as columns. Columns pushed whole
// (PushChunk) whose rows hold only the update's key and val columns are not
// copied when pushed: Seal gathers them in one pass, sized once from every
// buffered update and fused with the split at upper, into the block the new
// batch's columns take (one-column keys and vals), or into the builder's
// records or columns. A buffer that held more than builderKeep updates is
// released after the seal that empties it, so an arrangement keeps its
// batch and not the scratch that built it.
// Invariant BT1 (doc.go) says where a buffered update lives.
type Batcher struct {
	ar     Arity
	w      int
	small  bool
	rows   []int64 // wide arities: key then val, w columns per update
	times  []uint64
	diffs  []int64
	keep   []rec        // small arities: updates parked during a build
	queued []queuedCols // chunks pushed whole, not yet copied
	nq     int          // updates in queued
	cols   []int        // wide arities: the key then val columns of the last queued chunk
	bld    *Builder
	// badArity is the error of the first push refused for its arity
	// since the last Seal (wide arities; small ones record it in bld).
	badArity error
}

// queuedCols is a chunk of updates pushed whole and gathered at Seal: row i
// is rows[i*width:(i+1)*width]. Small arities take its key column kc and
// val column vc (-1 for arity 0); wide ones its columns cols, in order
// (ident: cols are 0, 1, ..., width-1, so rows are copied whole).
type queuedCols struct {
	rows   []int64
	times  []uint64
	diffs  []int64
	width  int
	kc, vc int
	cols   []int
	ident  bool
}

// NewBatcher returns a batcher for rows of the given arity with room for
// capHint updates (none for a capHint below 0).
func NewBatcher(ar Arity, capHint int) *Batcher {
	capHint = max(capHint, 0)
	b := &Batcher{ar: ar, w: ar.Key + ar.Val, small: ar.Key <= 1 && ar.Val <= 1, bld: NewBuilder(ar, capHint)}
	if !b.small {
		b.rows = column[int64](capHint * b.w)[:0]
		b.times = column[uint64](capHint)[:0]
		b.diffs = column[int64](capHint)[:0]
	}
	return b
}

// Len returns the number of buffered updates.
func (b *Batcher) Len() int {
	if b.small {
		return len(b.bld.recs) + b.nq
	}
	return len(b.times) + b.nq
}

// Grow makes room for n more updates, so that pushing a known number of
// updates allocates once and exactly. An n of 0 or less grows nothing.
func (b *Batcher) Grow(n int) {
	if n <= 0 {
		return
	}
	if b.small {
		b.bld.recs = grow(b.bld.recs, n)
		return
	}
	b.rows = grow(b.rows, n*b.w)
	b.times = grow(b.times, n)
	b.diffs = grow(b.diffs, n)
}

// Push buffers one update; the rows are copied. A key or val of another
// length than the batcher's arity is refused: the update is dropped, and
// the next Seal reports it (ErrArity).
func (b *Batcher) Push(key, val []int64, t frontier.Time, d int64) {
	if b.small {
		b.bld.Push(key, val, t, d)
		return
	}
	if len(key) != b.ar.Key || len(val) != b.ar.Val {
		if b.badArity == nil {
			b.badArity = arityErr(len(key), len(val), b.ar)
		}
		return
	}
	b.rows = append(b.rows, key...)
	b.rows = append(b.rows, val...)
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// PushRow buffers one update whose key and val are columns of row: keyCols
// then valCols, in order. It copies the columns. Key or val columns of
// another number than the batcher's arity are refused as Push refuses a
// row (ErrArity at the next Seal); a column outside the row is refused as
// PushChunk refuses one (ErrChunkShape at the next Seal). The column
// checks are the bounds checks reading the row makes anyway.
func (b *Batcher) PushRow(row []int64, keyCols, valCols []int, t frontier.Time, d int64) {
	if len(keyCols) != b.ar.Key || len(valCols) != b.ar.Val {
		b.refuseCols(keyCols, valCols)
		return
	}
	if b.small {
		r := rec{t: t, d: d}
		if len(keyCols) == 1 {
			c := keyCols[0]
			if uint(c) >= uint(len(row)) {
				b.refuseRowCol(c, len(row))
				return
			}
			r.k = row[c]
		}
		if len(valCols) == 1 {
			c := valCols[0]
			if uint(c) >= uint(len(row)) {
				b.refuseRowCol(c, len(row))
				return
			}
			r.v = row[c]
		}
		b.bld.recs = append(b.bld.recs, r)
		return
	}
	n0 := len(b.rows)
	for _, c := range keyCols {
		if uint(c) >= uint(len(row)) {
			b.rows = b.rows[:n0]
			b.refuseRowCol(c, len(row))
			return
		}
		b.rows = append(b.rows, row[c])
	}
	for _, c := range valCols {
		if uint(c) >= uint(len(row)) {
			b.rows = b.rows[:n0]
			b.refuseRowCol(c, len(row))
			return
		}
		b.rows = append(b.rows, row[c])
	}
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// PushChunk buffers the updates of columnar rows: update i is the row
// rows[i*width:(i+1)*width] at times[i] with diffs[i], its key the row's
// columns keyCols and its val the columns valCols, in order: rows and
// diffs beyond len(times) updates are not read.
//
// When the rows take no more room than their copy would (at most two
// columns for key and val arity at most 1; exactly the key and val columns
// otherwise) the slices are kept and read by the next Seal, which gathers
// them (BT1): the caller must not modify them until that Seal returns. A
// dataflow chunk, immutable once sent, qualifies. Otherwise the columns are
// copied now, in one pass. Key or val columns of another number than the
// batcher's arity are refused as Push refuses a row: the chunk is dropped
// and the next Seal returns ErrArity. So is a chunk whose columns lie
// outside its rows' width or whose rows or diffs are fewer than its times,
// with ErrChunkShape: its updates would be read from a neighbouring row
// or past the end.
func (b *Batcher) PushChunk(rows []int64, width int, keyCols, valCols []int, times []uint64, diffs []int64) {
	n := len(times)
	if n == 0 {
		return
	}
	if len(keyCols) != b.ar.Key || len(valCols) != b.ar.Val {
		b.refuseCols(keyCols, valCols)
		return
	}
	if err := chunkShape(len(rows), width, keyCols, valCols, n, len(diffs)); err != nil {
		if b.badArity == nil {
			b.badArity = err
		}
		return
	}
	if b.small {
		q := queuedCols{rows: rows[:n*width], times: times, diffs: diffs[:n], width: width, kc: -1, vc: -1}
		if len(keyCols) == 1 {
			q.kc = keyCols[0]
		}
		if len(valCols) == 1 {
			q.vc = valCols[0]
		}
		if width <= 2 {
			b.queued = append(b.queued, q)
			b.nq += n
			return
		}
		b.bld.recs = grow(b.bld.recs, n)
		b.bld.recs, _ = gather(b.bld.recs, nil, &q, 0, false)
		return
	}
	if width == len(keyCols)+len(valCols) {
		if !slices.Equal(b.cols[:min(len(b.cols), len(keyCols))], keyCols) || !slices.Equal(b.cols[min(len(b.cols), len(keyCols)):], valCols) {
			b.cols = append(slices.Clone(keyCols), valCols...)
		}
		ident := true
		for i, c := range b.cols {
			ident = ident && c == i
		}
		b.queued = append(b.queued, queuedCols{rows: rows[:n*width], times: times, diffs: diffs[:n], width: width, cols: b.cols, ident: ident})
		b.nq += n
		return
	}
	b.rows = grow(b.rows, n*b.w)
	rows = rows[:n*width]
	for i := range n {
		row := rows[i*width : i*width+width]
		for _, c := range keyCols {
			b.rows = append(b.rows, row[c])
		}
		for _, c := range valCols {
			b.rows = append(b.rows, row[c])
		}
	}
	b.times = append(b.times, times...)
	b.diffs = append(b.diffs, diffs[:n]...)
}

// gather appends q's updates to recs, except, when bounded, those at or
// beyond u, which it appends to keep. recs has room for all of q's.
func gather(recs, keep []rec, q *queuedCols, u frontier.Time, bounded bool) ([]rec, []rec) {
	times := q.times
	diffs := q.diffs[:len(times)]
	if q.width == 2 && q.kc == 0 && q.vc == 1 {
		// The common case (an arrangement of two columns by the first):
		// a straight copy of the columns into records.
		rows := q.rows[:2*len(times)]
		if n := len(recs); cap(recs)-n >= len(times) {
			// Every update into the room after recs, noting any at or
			// beyond u; only then the loop below sorts them apart again
			// (a round's chunk is all before its upper), so a round pays
			// no branch and no append an update (BenchmarkSeal ÷ its
			// limit 1.45 -> 1.41).
			late := gatherPairs(recs[n:n+len(times)], rows, times, diffs, u)
			if !bounded || late == 0 {
				return recs[:n+len(times)], keep
			}
		}
		for i, t := range times {
			r := rec{rows[2*i], rows[2*i+1], t, diffs[i]}
			if bounded && t >= u {
				keep = append(keep, r)
				continue
			}
			recs = append(recs, r)
		}
		return recs, keep
	}
	w, kc, vc := q.width, q.kc, q.vc
	for i, t := range times {
		r := rec{t: t, d: diffs[i]}
		if kc >= 0 {
			r.k = q.rows[i*w+kc]
		}
		if vc >= 0 {
			r.v = q.rows[i*w+vc]
		}
		if bounded && t >= u {
			keep = append(keep, r)
			continue
		}
		recs = append(recs, r)
	}
	return recs, keep
}

// gatherPairs writes update i of two-column rows, times and diffs to dst[i]
// as a record and returns 1 if any time is at or beyond u, else 0. It reads
// and writes through base pointers: with each slice's bounds checked and
// its length live, the loop kept its index and the late flag on the stack,
// a store and a reload every update. REQUIRES: len(rows) >= 2*len(dst),
// len(times) and len(diffs) >= len(dst).
func gatherPairs(dst []rec, rows []int64, times []uint64, diffs []int64, u frontier.Time) int {
	n := len(dst)
	if n == 0 {
		return 0
	}
	_, _, _ = rows[2*n-1], times[n-1], diffs[n-1] // every update lies in the columns
	op, rp := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(rows))
	tp, dp := unsafe.Pointer(unsafe.SliceData(times)), unsafe.Pointer(unsafe.SliceData(diffs))
	late := 0
	for i := range uintptr(n) {
		t := *(*uint64)(unsafe.Add(tp, i*8))
		*(*rec)(unsafe.Add(op, i*unsafe.Sizeof(rec{}))) = rec{*(*int64)(unsafe.Add(rp, i*16)), *(*int64)(unsafe.Add(rp, i*16+8)), t, *(*int64)(unsafe.Add(dp, i*8))}
		late |= b2i(t >= u)
	}
	return late
}

// Seal returns the buffered updates before upper as a batch [lower, upper)
// and keeps the rest. A buffered update before lower breaks the batch's
// bounds: Seal then returns no batch and an error wrapping ErrTimeOutside,
// and the updates before upper are gone with it. An overflow returns the
// complete batch and an *OverflowError (Builder.Build).
// If a Push since the last Seal was refused for its arity, Seal returns no
// batch and an error wrapping ErrArity, and keeps every buffered update
// for the next Seal; so does an upper before lower, with
// ErrUpperBeforeLower. A refused Seal still ends the loan of the chunks
// pushed whole (BT1): it copies their updates, which its caller may then
// reuse.
func (b *Batcher) Seal(lower, upper frontier.Frontier) (*Batch, error) {
	if err := checkBounds(lower, upper); err != nil {
		b.ownQueued()
		return nil, err
	}
	if err := b.takeBadArity(); err != nil {
		b.ownQueued()
		return nil, err
	}
	if b.small {
		return b.sealSmall(lower, upper)
	}
	return b.sealWide(lower, upper)
}

// ErrChunkShape reports a chunk pushed into a Batcher whose key or val
// columns lie outside its rows' width, or whose rows or diffs are fewer
// than its times, or a row pushed (PushRow) with a column outside it: a
// broken contract of its caller. The chunk or row is refused, and the
// next Seal returns the error.
var ErrChunkShape = errors.New("batch: chunk columns or lengths do not fit its rows")

// chunkShape returns why a chunk of n updates, nrows row values of width
// columns and ndiffs diffs, read at keyCols and valCols, does not fit.
func chunkShape(nrows, width int, keyCols, valCols []int, n, ndiffs int) error {
	if width < 0 || (width > 0 && nrows/width < n) || ndiffs < n {
		return fmt.Errorf("%w: %d updates, %d row values of width %d, %d diffs", ErrChunkShape, n, nrows, width, ndiffs)
	}
	for _, cols := range [2][]int{keyCols, valCols} {
		for _, c := range cols {
			if c < 0 || c >= width {
				return fmt.Errorf("%w: column %d of a row of width %d", ErrChunkShape, c, width)
			}
		}
	}
	return nil
}

// ownQueued copies the updates of the chunks pushed whole and not yet
// gathered into the batcher's own buffers (the builder's records, or the
// wide columns), for a Seal that refuses to build: the next Seal must not
// read a chunk its caller was free to reuse once this one returned (BT1).
func (b *Batcher) ownQueued() {
	if b.nq == 0 {
		return
	}
	if b.small {
		b.bld.recs = grow(b.bld.recs, b.nq)
		for i := range b.queued {
			b.bld.recs, _ = gather(b.bld.recs, nil, &b.queued[i], 0, false)
		}
	} else {
		b.rows = grow(b.rows, b.nq*b.w)
		b.times = grow(b.times, b.nq)
		b.diffs = grow(b.diffs, b.nq)
		for i := range b.queued {
			q := &b.queued[i]
			for j := range q.times {
				row := q.rows[j*q.width : j*q.width+q.width]
				for _, c := range q.cols {
					b.rows = append(b.rows, row[c])
				}
			}
			b.times = append(b.times, q.times...)
			b.diffs = append(b.diffs, q.diffs...)
		}
	}
	clear(b.queued)
	b.queued, b.nq = b.queued[:0], 0
}

// refuseCols records a push refused for its number of key or val columns.
func (b *Batcher) refuseCols(keyCols, valCols []int) {
	if b.badArity == nil {
		b.badArity = fmt.Errorf("%w: %d key and %d val columns pushed into a %v batcher", ErrArity, len(keyCols), len(valCols), b.ar)
	}
}

// refuseRowCol records a PushRow refused for its column c, outside its row
// of width columns.
func (b *Batcher) refuseRowCol(c, width int) {
	if b.badArity == nil {
		b.badArity = fmt.Errorf("%w: column %d of a row of width %d", ErrChunkShape, c, width)
	}
}

// takeBadArity returns and clears the error of a push refused for its
// arity since the last Seal.
func (b *Batcher) takeBadArity() error {
	err := b.badArity
	if b.small && err == nil {
		err = b.bld.badArity
	}
	b.badArity, b.bld.badArity = nil, nil
	return err
}

// sealWide is Seal for wider arities: the buffered columns and the queued
// chunks before upper are appended to the builder's columns (sized once
// for all of them), those at or beyond upper compacted into the buffer.
func (b *Batcher) sealWide(lower, upper frontier.Frontier) (*Batch, error) {
	w := b.w
	u, bounded := upper.Time()
	bld := b.bld
	if n := len(b.times) + b.nq; cap(bld.times)-len(bld.times) < n {
		bld.rows = grow(bld.rows, n*w)
		bld.times = grow(bld.times, n)
		bld.diffs = grow(bld.diffs, n)
	}
	keep := 0
	for i, t := range b.times {
		if bounded && t >= u {
			// Not yet: compact it to the front of the buffer.
			if keep != i {
				copy(b.rows[keep*w:keep*w+w], b.rows[i*w:i*w+w])
				b.times[keep], b.diffs[keep] = t, b.diffs[i]
			}
			keep++
			continue
		}
		bld.rows = append(bld.rows, b.rows[i*w:i*w+w]...)
		bld.times = append(bld.times, t)
		bld.diffs = append(bld.diffs, b.diffs[i])
	}
	b.rows, b.times, b.diffs = b.rows[:keep*w], b.times[:keep], b.diffs[:keep]
	for i := range b.queued {
		q := &b.queued[i]
		if q.ident && (!bounded || allBefore(q.times, u)) {
			bld.rows = append(bld.rows, q.rows...)
			bld.times = append(bld.times, q.times...)
			bld.diffs = append(bld.diffs, q.diffs...)
			continue
		}
		for j, t := range q.times {
			row := q.rows[j*q.width : j*q.width+q.width]
			if bounded && t >= u {
				for _, c := range q.cols {
					b.rows = append(b.rows, row[c])
				}
				b.times = append(b.times, t)
				b.diffs = append(b.diffs, q.diffs[j])
				continue
			}
			for _, c := range q.cols {
				bld.rows = append(bld.rows, row[c])
			}
			bld.times = append(bld.times, t)
			bld.diffs = append(bld.diffs, q.diffs[j])
		}
	}
	clear(b.queued)
	b.queued, b.nq = b.queued[:0], 0
	out, err := bld.Build(lower, upper)
	if len(b.times) == 0 && max(cap(b.times), cap(bld.times)) > builderKeep {
		b.rows, b.times, b.diffs = nil, nil, nil
		bld.release()
	}
	return out, err
}

// allBefore reports whether every time is before u.
func allBefore(times []uint64, u frontier.Time) bool {
	for _, t := range times {
		if t >= u {
			return false
		}
	}
	return true
}

// consolidateWide is Consolidate for wider rows: the queued chunks are
// copied into the batcher's columns (ownQueued), which its builder sorts
// and gathers in sorted order into its sorted columns (Builder.sortedWide)
// to be summed there (sumRunsWide); the two then trade places, so that
// beyond the buffer it takes one sorted copy of it and the sort's keys,
// released past builderKeep updates as a seal's are (kept for the next
// consolidation, the idle scratch raised `errors`' peak heap at 20 times
// its size by about a quarter). Every sum that fits int64 replaces its
// updates; the updates of one that does not stay as they were.
func (b *Batcher) consolidateWide() bool {
	b.ownQueued()
	bld := b.bld
	// The builder sorts the batcher's columns, its own (empty between
	// seals) set aside.
	ownRows, ownTimes, ownDiffs := bld.rows, bld.times, bld.diffs
	bld.rows, bld.times, bld.diffs = b.rows, b.times, b.diffs
	rows, times, diffs := bld.sortedWide()
	m := sumRunsWide(rows, times, diffs, b.w)
	bld.sRows, bld.sTimes, bld.sDiffs = b.rows[:0], b.times[:0], b.diffs[:0]
	b.rows, b.times, b.diffs = rows[:m*b.w], times[:m], diffs[:m]
	bld.rows, bld.times, bld.diffs = ownRows, ownTimes, ownDiffs
	if cap(bld.sTimes) > builderKeep {
		bld.sRows, bld.sTimes, bld.sDiffs = nil, nil, nil
		bld.keys, bld.keyScratch, bld.perm, bld.counts = nil, nil, nil, nil
	}
	return true
}

// sumRunsWide is sumRuns for wide rows of w columns in sorted columns:
// each run of one (row, time) is summed into its first update, runs that
// sum to zero are dropped, the updates of a run whose sum leaves int64
// are kept as they are, and it returns how many updates are left, moved
// to the front.
func sumRunsWide(rows []int64, times []uint64, diffs []int64, w int) int {
	row := func(i int) []int64 { return rows[i*w : i*w+w] }
	n, m := len(times), 0
	put := func(i int, d int64) {
		if m != i {
			copy(row(m), row(i))
			times[m] = times[i]
		}
		diffs[m] = d
		m++
	}
	for i := 0; i < n; {
		j, d, over := i+1, diffs[i], false
		for ; j < n && times[j] == times[i] && slices.Equal(row(j), row(i)); j++ {
			var o bool
			if d, o = addDiff(d, diffs[j]); o {
				over = true
			}
		}
		if over {
			s, sat := exactSum(j-i, func(x int) int64 { return diffs[i+x] })
			if sat {
				for k := i; k < j; k++ {
					put(k, diffs[k])
				}
				i = j
				continue
			}
			d = s
		}
		if d != 0 {
			put(i, d)
		}
		i = j
	}
	return m
}

// consolidateSmall is Consolidate for arities at most 1: the queued chunks
// are gathered after the builder's records, which are sorted where they
// are and summed in place (sumRuns), so that the only memory it takes
// beyond the buffer is the sort's scratch, released past builderKeep
// updates as a seal's is. Every sum that fits int64 replaces its updates;
// the updates of one that does not stay as they were, for the seal to sum
// with any later ones (so it reports true whenever there were two updates
// to sort).
func (b *Batcher) consolidateSmall() bool {
	recs := b.bld.recs
	if b.nq > 0 {
		recs = grow(recs, b.nq)
		for i := range b.queued {
			recs, _ = gather(recs, nil, &b.queued[i], 0, false)
		}
		clear(b.queued)
		b.queued, b.nq = b.queued[:0], 0
	}
	b.bld.recs = recs
	b.bld.sortRecs()
	b.bld.recs = b.bld.recs[:sumRuns(b.bld.recs)]
	if cap(b.bld.scratch) > builderKeep {
		b.bld.scratch, b.bld.counts = nil, nil
	}
	return true
}

// sumRuns sums each run of sorted records of one (key, val, time) into its
// first record, drops the runs that sum to zero, keeps the records of a
// run whose sum leaves int64 as they are, and returns how many records are
// left, moved to the front.
func sumRuns(recs []rec) int {
	m := 0
	for i := 0; i < len(recs); {
		r := recs[i]
		j, d, over := i+1, r.d, false
		for ; j < len(recs) && recs[j].k == r.k && recs[j].v == r.v && recs[j].t == r.t; j++ {
			var o bool
			if d, o = addDiff(d, recs[j].d); o {
				over = true
			}
		}
		if over {
			s, sat := exactSum(j-i, func(x int) int64 { return recs[i+x].d })
			if sat {
				m += copy(recs[m:], recs[i:j])
				i = j
				continue
			}
			d = s
		}
		if d != 0 {
			r.d = d
			recs[m] = r
			m++
		}
		i = j
	}
	return m
}

// sealSmall is Seal for arities at most 1: the updates at or beyond upper
// move aside, the queued chunks are gathered after the records (one
// allocation at most, for all of them), the builder sorts the records in
// place, and the updates moved aside come back.
func (b *Batcher) sealSmall(lower, upper frontier.Frontier) (*Batch, error) {
	u, bounded := upper.Time()
	recs := b.bld.recs
	n := 0
	for _, r := range recs {
		if bounded && r.t >= u {
			b.keep = append(b.keep, r)
			continue
		}
		recs[n] = r
		n++
	}
	recs = recs[:n]
	if b.nq > 0 && b.ar == (Arity{1, 1}) && n+b.nq >= max(b.bld.radixMin, 2) {
		return b.sealBlock(lower, upper, recs)
	}
	if b.nq > 0 {
		if cap(recs)-len(recs) < b.nq {
			// Not slices.Grow, which clears the new room: gather
			// writes all of it.
			recs = grow(recs, b.nq)
		}
		for i := range b.queued {
			recs, b.keep = gather(recs, b.keep, &b.queued[i], u, bounded)
		}
		clear(b.queued)
		b.queued, b.nq = b.queued[:0], 0
	}
	b.bld.recs = recs
	out, err := b.bld.Build(lower, upper)
	b.afterSmallSeal()
	return out, err
}

// afterSmallSeal releases the builder's buffers after a seal that emptied
// a large one and puts the updates parked during the build back.
func (b *Batcher) afterSmallSeal() {
	if len(b.keep) == 0 && cap(b.bld.recs) > builderKeep {
		b.bld.release()
	}
	if len(b.keep) > 0 {
		b.bld.recs = append(b.bld.recs, b.keep...)
		clear(b.keep)
		b.keep = b.keep[:0]
	}
}

// sealBlock is sealSmall for one-column keys and vals with chunks queued:
// the records below upper (recs) and the queued chunks' updates before it
// are gathered straight into the block the new batch's columns will take
// (Builder.BuildBlock), not into the builder's records first, so a seal
// moves each update once fewer. A block left mostly empty by updates at or
// beyond upper is copied to its size first, so the batch does not keep
// the room.
func (b *Batcher) sealBlock(lower, upper frontier.Frontier, recs []rec) (*Batch, error) {
	u, bounded := upper.Time()
	block := append(column[rec](len(recs) + b.nq)[:0], recs...)
	for i := range b.queued {
		block, b.keep = gather(block, b.keep, &b.queued[i], u, bounded)
	}
	clear(b.queued)
	b.queued, b.nq = b.queued[:0], 0
	b.bld.recs = recs[:0]
	var out *Batch
	var err error
	switch m := len(block); {
	case m < max(b.bld.radixMin, 2):
		b.bld.recs = append(b.bld.recs, block...)
		out, err = b.bld.Build(lower, upper)
	case m < cap(block)*3/4:
		out, err = b.bld.BuildBlock(lower, upper, blockOf(block))
	default:
		out, err = b.bld.BuildBlock(lower, upper, block)
	}
	b.afterSmallSeal()
	return out, err
}

// Consolidate sorts and consolidates the buffered updates now, as the next
// Seal would (one row's updates of one time summed, zeros dropped), and
// buffers what they add up to in their place: a batcher fed many updates
// that cancel or sum before its frontier moves (a join's rows projected to
// a few columns) then holds their sums, not every update. Times do not
// change, so what each later Seal returns does not either. It reports
// whether it consolidated: a sum that leaves int64 (which a build would
// saturate, where the Seal of these updates with others may still find it
// in range) keeps its updates as they were, as do fewer than two updates
// and a buffer holding a refused push (the next Seal reports it). Queued
// chunks are read and released. Arities at most 1 are sorted and summed
// where the batcher buffers them (consolidateSmall), one sum out of int64
// keeping only its own updates; wider rows are sorted into a copy of the
// buffer and summed there (consolidateWide).
func (b *Batcher) Consolidate() bool {
	n := b.Len()
	if n < 2 || b.badArity != nil || b.bld.badArity != nil {
		return false
	}
	if b.small {
		return b.consolidateSmall()
	}
	return b.consolidateWide()
}
