package batch

import (
	"slices"

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
// back after it. Wider rows are buffered as columns and pushed at Seal. A
// buffer that held more than builderKeep updates is released after the seal
// that empties it, so an arrangement keeps its batch and not the scratch
// that built it.
type Batcher struct {
	ar    Arity
	w     int
	small bool
	rows  []int64 // wide arities: key then val, w columns per update
	times []uint64
	diffs []int64
	keep  []rec // small arities: updates parked during a build
	bld   *Builder
}

// NewBatcher returns a batcher for rows of the given arity with room for
// capHint updates.
func NewBatcher(ar Arity, capHint int) *Batcher {
	b := &Batcher{ar: ar, w: ar.Key + ar.Val, small: ar.Key <= 1 && ar.Val <= 1, bld: NewBuilder(ar, capHint)}
	if !b.small {
		b.rows = make([]int64, 0, capHint*b.w)
		b.times = make([]uint64, 0, capHint)
		b.diffs = make([]int64, 0, capHint)
	}
	return b
}

// Len returns the number of buffered updates.
func (b *Batcher) Len() int {
	if b.small {
		return len(b.bld.recs)
	}
	return len(b.times)
}

// Grow makes room for n more updates, so that pushing a known number of
// updates allocates once and exactly.
func (b *Batcher) Grow(n int) {
	if b.small {
		b.bld.recs = slices.Grow(b.bld.recs, n)
		return
	}
	b.rows = slices.Grow(b.rows, n*b.w)
	b.times = slices.Grow(b.times, n)
	b.diffs = slices.Grow(b.diffs, n)
}

// Push buffers one update; the rows are copied.
func (b *Batcher) Push(key, val []int64, t frontier.Time, d int64) {
	if b.small {
		b.bld.Push(key, val, t, d)
		return
	}
	b.rows = append(b.rows, key...)
	b.rows = append(b.rows, val...)
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// PushRow buffers one update whose key and val are columns of row: keyCols
// then valCols, in order. It copies the columns.
func (b *Batcher) PushRow(row []int64, keyCols, valCols []int, t frontier.Time, d int64) {
	if b.small {
		r := rec{t: t, d: d}
		if len(keyCols) == 1 {
			r.k = row[keyCols[0]]
		}
		if len(valCols) == 1 {
			r.v = row[valCols[0]]
		}
		b.bld.recs = append(b.bld.recs, r)
		return
	}
	for _, c := range keyCols {
		b.rows = append(b.rows, row[c])
	}
	for _, c := range valCols {
		b.rows = append(b.rows, row[c])
	}
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// Seal returns the buffered updates before upper as a batch [lower, upper)
// and keeps the rest. REQUIRES: no buffered update is before lower. An
// overflow returns the complete batch and an *OverflowError (Builder.Build).
func (b *Batcher) Seal(lower, upper frontier.Frontier) (*Batch, error) {
	if b.small {
		return b.sealSmall(lower, upper)
	}
	w, ka := b.w, b.ar.Key
	keep := 0
	for i, t := range b.times {
		if upper.Beyond(t) {
			// Not yet: compact it to the front of the buffer.
			if keep != i {
				copy(b.rows[keep*w:keep*w+w], b.rows[i*w:i*w+w])
				b.times[keep], b.diffs[keep] = t, b.diffs[i]
			}
			keep++
			continue
		}
		r := b.rows[i*w : i*w+w]
		b.bld.Push(r[:ka], r[ka:], t, b.diffs[i])
	}
	b.rows, b.times, b.diffs = b.rows[:keep*w], b.times[:keep], b.diffs[:keep]
	out, err := b.bld.Build(lower, upper)
	if keep == 0 && cap(b.times) > builderKeep {
		b.rows, b.times, b.diffs = nil, nil, nil
		b.bld.release()
	}
	return out, err
}

// sealSmall is Seal for arities at most 1: the updates at or beyond upper
// move aside, the builder sorts the rest in place, and they come back.
func (b *Batcher) sealSmall(lower, upper frontier.Frontier) (*Batch, error) {
	recs := b.bld.recs
	n := 0
	for _, r := range recs {
		if upper.Beyond(r.t) {
			b.keep = append(b.keep, r)
			continue
		}
		recs[n] = r
		n++
	}
	b.bld.recs = recs[:n]
	out, err := b.bld.Build(lower, upper)
	if len(b.keep) == 0 && cap(b.bld.recs) > builderKeep {
		b.bld.release()
	}
	if len(b.keep) > 0 {
		b.bld.recs = append(b.bld.recs, b.keep...)
		clear(b.keep)
		b.keep = b.keep[:0]
	}
	return out, err
}
