package batch

import "github.com/tracebench/tracebench/core/frontier"

// Batcher buffers unsorted updates and seals batches out of them (§1.5): Seal
// removes every buffered update whose time is before upper and returns them
// as one consolidated batch [lower, upper); later updates stay buffered. It
// is what an arrange operator keeps between frontier advances.
type Batcher struct {
	ar    Arity
	w     int
	rows  []int64 // key then val, w columns per update
	times []uint64
	diffs []int64
	bld   *Builder
}

// NewBatcher returns a batcher for rows of the given arity.
func NewBatcher(ar Arity, capHint int) *Batcher {
	w := ar.Key + ar.Val
	return &Batcher{
		ar:    ar,
		w:     w,
		rows:  make([]int64, 0, capHint*w),
		times: make([]uint64, 0, capHint),
		diffs: make([]int64, 0, capHint),
		bld:   NewBuilder(ar, capHint),
	}
}

// Len returns the number of buffered updates.
func (b *Batcher) Len() int { return len(b.times) }

// Push buffers one update; the rows are copied.
func (b *Batcher) Push(key, val []int64, t frontier.Time, d int64) {
	b.rows = append(b.rows, key...)
	b.rows = append(b.rows, val...)
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// PushRow buffers one update whose key and val are columns of row: keyCols
// then valCols, in order. It copies the columns.
func (b *Batcher) PushRow(row []int64, keyCols, valCols []int, t frontier.Time, d int64) {
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
	w, ka := b.w, b.ar.Key
	small := b.bld.small
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
		if small {
			var k, v int64
			if ka == 1 {
				k = r[0]
			}
			if b.ar.Val == 1 {
				v = r[ka]
			}
			b.bld.Push1(k, v, t, b.diffs[i])
		} else {
			b.bld.Push(r[:ka], r[ka:], t, b.diffs[i])
		}
	}
	b.rows, b.times, b.diffs = b.rows[:keep*w], b.times[:keep], b.diffs[:keep]
	return b.bld.Build(lower, upper)
}
