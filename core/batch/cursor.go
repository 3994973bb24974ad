package batch

// Cursor navigates a batch as a two-level trie (§1.6): keys ascending, vals
// ascending within a key, and the (time, diff) updates of each (key, val).
// A Cursor is a value; copying it forks the position. The zero Cursor is
// invalid.
type Cursor struct {
	b         *Batch
	k, kEnd   int // current key index and number of keys
	v, vBegin int // current val index and first val of the current key
	vEnd      int // one past the last val of the current key
	ka, va    int
}

// Cursor returns a cursor at the batch's first key and its first val.
func (b *Batch) Cursor() Cursor {
	c := Cursor{b: b, kEnd: b.Keys(), ka: b.ar.Key, va: b.ar.Val}
	c.loadVals()
	return c
}

func (c *Cursor) loadVals() {
	if c.k < c.kEnd {
		c.vBegin, c.vEnd = int(c.b.keyOffs[c.k]), int(c.b.keyOffs[c.k+1])
	} else {
		c.vBegin, c.vEnd = 0, 0
	}
	c.v = c.vBegin
}

// Batch returns the batch the cursor reads.
func (c *Cursor) Batch() *Batch { return c.b }

// KeyValid reports whether the cursor is at a key.
func (c *Cursor) KeyValid() bool { return c.k < c.kEnd }

// Key returns the current key row. REQUIRES: KeyValid.
func (c *Cursor) Key() []int64 { return c.b.keys[c.k*c.ka : c.k*c.ka+c.ka] }

// KeyIndex returns the index of the current key in the batch.
func (c *Cursor) KeyIndex() int { return c.k }

// StepKey moves to the next key and its first val.
func (c *Cursor) StepKey() {
	if c.k < c.kEnd {
		c.k++
		c.loadVals()
	}
}

// RewindKeys moves to the first key.
func (c *Cursor) RewindKeys() {
	c.k = 0
	c.loadVals()
}

// cmpKeyAt compares key index i with key.
func (c *Cursor) cmpKeyAt(i int, key []int64) int {
	if c.ka == 1 {
		return cmp3(c.b.keys[i], key[0])
	}
	return cmpRow(c.b.keys[i*c.ka:i*c.ka+c.ka], key)
}

// SeekKey moves forward to the first key at or after key, galloping from the
// current position: O(log d) for a distance d, so sorted probes cost little
// more than a merge. It never moves backwards.
//
// A key shorter than the key arity is a prefix: the cursor moves to the
// first key whose leading len(key) columns are at or after it, so the keys
// that start with the prefix come first (an empty key moves nothing).
// Columns of key beyond the arity are not compared.
func (c *Cursor) SeekKey(key []int64) {
	if len(key) < c.ka {
		c.seekKeyPrefix(key)
		return
	}
	if c.ka == 1 {
		c.k = gallop1(c.b.keys, c.k, c.kEnd, key[0])
	} else {
		c.k = gallop(c.k, c.kEnd, func(i int) bool { return c.cmpKeyAt(i, key) < 0 })
	}
	c.loadVals()
}

// seekKeyPrefix is SeekKey for a key shorter than the arity, off the hot
// path: it compares each key's leading len(key) columns.
func (c *Cursor) seekKeyPrefix(key []int64) {
	ka, n := c.ka, len(key)
	c.k = gallop(c.k, c.kEnd, func(i int) bool { return cmpRow(c.b.keys[i*ka:i*ka+n], key) < 0 })
	c.loadVals()
}

// gallop1 is gallop over a one-column sorted slice: the first index in
// [lo, hi) with xs[i] >= x.
func gallop1(xs []int64, lo, hi int, x int64) int {
	if lo >= hi || xs[lo] >= x {
		return lo
	}
	step := 1
	for lo+step < hi && xs[lo+step] < x {
		lo += step
		step <<= 1
	}
	end := min(lo+step, hi)
	lo++
	for lo < end {
		mid := int(uint(lo+end) >> 1)
		if xs[mid] < x {
			lo = mid + 1
		} else {
			end = mid
		}
	}
	return lo
}

// SeekKeyBinary is SeekKey by plain binary search over the rest of the batch,
// kept as a baseline for benchmarks. A key shorter than the arity is a
// prefix, as for SeekKey.
func (c *Cursor) SeekKeyBinary(key []int64) {
	if len(key) < c.ka {
		c.seekKeyPrefix(key)
		return
	}
	lo, hi := c.k, c.kEnd
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.cmpKeyAt(mid, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	c.k = lo
	c.loadVals()
}

// gallop returns the first index in [lo, hi) where less is false, assuming
// less is true on a prefix: exponential search from lo, then binary search.
func gallop(lo, hi int, less func(int) bool) int {
	if lo >= hi || !less(lo) {
		return lo
	}
	// less(lo) holds.
	step := 1
	for lo+step < hi && less(lo+step) {
		lo += step
		step <<= 1
	}
	// less(lo) holds; less is false at lo+step (or lo+step >= hi).
	end := min(lo+step, hi)
	lo++
	for lo < end {
		mid := int(uint(lo+end) >> 1)
		if less(mid) {
			lo = mid + 1
		} else {
			end = mid
		}
	}
	return lo
}

// ValValid reports whether the cursor is at a val of the current key.
func (c *Cursor) ValValid() bool { return c.v < c.vEnd }

// Val returns the current val row. REQUIRES: ValValid.
func (c *Cursor) Val() []int64 { return c.b.vals[c.v*c.va : c.v*c.va+c.va] }

// StepVal moves to the next val of the current key.
func (c *Cursor) StepVal() {
	if c.v < c.vEnd {
		c.v++
	}
}

// RewindVals moves to the first val of the current key.
func (c *Cursor) RewindVals() { c.v = c.vBegin }

// SeekVal moves forward to the first val of the current key at or after val.
// A val shorter than the val arity is a prefix, as a key is for SeekKey:
// the first val whose leading len(val) columns are at or after it. Columns
// beyond the arity are not compared.
func (c *Cursor) SeekVal(val []int64) {
	va := c.va
	if len(val) < va {
		n := len(val)
		c.v = gallop(c.v, c.vEnd, func(i int) bool { return cmpRow(c.b.vals[i*va:i*va+n], val) < 0 })
		return
	}
	c.v = gallop(c.v, c.vEnd, func(i int) bool { return cmpRow(c.b.vals[i*va:i*va+va], val) < 0 })
}

// Updates returns the times and diffs of the current (key, val), sorted by
// time. The slices alias the batch. REQUIRES: ValValid.
func (c *Cursor) Updates() ([]uint64, []int64) {
	lo, hi := c.b.valOffs[c.v], c.b.valOffs[c.v+1]
	return c.b.times[lo:hi:hi], c.b.diffs[lo:hi:hi]
}

// Tally walks the batch as a cursor does, key by key, val by val and
// update by update, presenting each time through p, and returns the keys
// visited, the updates p shows and the sum of their diffs (in int64's
// wrapping arithmetic, a checksum to compare with one summed the same way,
// not a count: it may wrap where the diffs are large): the lightest
// query that reads what changed (dataflow.Tally). The walk keeps its
// position in locals, which the compiler holds in registers; a Cursor's
// nine fields live in memory, and its walk cost about 12 ns an update
// against under 3 for this one (BenchmarkTally). Present's two tests run
// on locals too (a time advances to s and shows below lim, or always when
// p has no until): through p's frontiers the loop had more values than
// registers and moved five of them through the stack every update.
func (b *Batch) Tally(p Presentation) (keys, updates, sum int64) {
	nk := len(b.keyOffs) - 1
	if nk <= 0 {
		return 0, 0, 0
	}
	s, ok := p.Since.Time()
	if !ok {
		s = 0 // advancing by {} leaves a time as it is
	}
	lim, bounded := p.Until.Time()
	all := int64(b2i(!bounded))
	keyOffs, valOffs := b.keyOffs, b.valOffs
	times := b.times
	diffs := b.diffs[:len(times)]
	v := keyOffs[0]
	u := valOffs[v]
	for _, vEnd := range keyOffs[1:] {
		for ; v < vEnd; v++ {
			for uEnd := valOffs[v+1]; u < uEnd; u++ {
				shown := int64(b2i(max(times[u], s) < lim)) | all
				updates += shown
				sum += diffs[u] & -shown
			}
		}
	}
	return int64(nk), updates, sum
}
