package batch

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
)

// ErrUnsorted reports updates pushed into a Sorted builder out of (key,
// val, time) order: a broken contract of its caller.
var ErrUnsorted = errors.New("batch: updates pushed out of (key, val, time) order")

// ErrArity reports a row pushed into a Builder, Sorted or Batcher whose
// key or val has another number of columns than the builder's arity: a
// broken contract of its caller. The push is refused, and the next Build
// (Seal) returns the error. A merge of batches of different arities
// reports it too (NewMerger).
var ErrArity = errors.New("batch: row of the wrong arity")

// arityErr is the error for a push of a klen/vlen row into a builder of
// arity ar.
func arityErr(klen, vlen int, ar Arity) error {
	return fmt.Errorf("%w: a %d/%d row pushed into a %v builder", ErrArity, klen, vlen, ar)
}

// sortedKeep is the most updates whose columns a Sorted builder copies out
// at Build, keeping its buffers for the next build; a larger build hands
// its buffers to the batch instead (no copy) and starts the next one
// afresh, and so does a smaller one whose buffers have room for more (a
// Grow's, or NewSorted's capHint's, larger than what was pushed).
const sortedKeep = 1 << 12

// Sorted builds a batch from updates pushed already in (key, val, time)
// order (§1.5): each push appends to the batch's columns, consolidating an
// update with the one before it when they share (key, val, time), so a
// build costs no sort and, above sortedKeep updates, no copy. It is the
// builder of an operator that emits in key order (a reduce's corrections);
// Builder is the one for updates in any order.
//
// An update whose consolidated diff is zero is dropped, with its val and
// key if it was their only update (B2). Build reports a push out of order
// as ErrUnsorted (asserted at the push in invariant builds), and an update
// at a time outside its [lower, upper) as ErrTimeOutside and an upper
// before lower as ErrUpperBeforeLower, as Builder.Build does, with no
// batch; a run of
// equal (key, val, time) is summed exactly, and a total leaving int64 is
// saturated and reported as by Builder.Build. A Sorted is reused after
// Build.
type Sorted struct {
	ar   Arity
	hint int // updates to allocate room for when the columns are empty

	// The columns being built. keyOffs and valOffs hold the start of each
	// key and val so far (Build appends the ends). Every update but the
	// last has a non-zero diff; the last key owns a val and the last val
	// an update.
	keys, vals       []int64
	keyOffs, valOffs []uint32
	times            []uint64
	diffs            []int64

	overflow []frontier.Time
	unsorted bool
	badArity error // the first push refused for its arity, or nil
	// wide: the last update's diff is a sum out of int64, its low word,
	// with hi the high word (wideAdd), until a push of another (key, val,
	// time) or Build ends its run (settleLast): a partial sum out of int64
	// is no overflow when the run's total fits.
	wide bool
	hi   int64
}

// NewSorted returns a builder of batches of the given arity with room for
// capHint updates in its first build.
func NewSorted(ar Arity, capHint int) *Sorted {
	return &Sorted{ar: ar, hint: capHint}
}

// Arity returns the builder's arity.
func (s *Sorted) Arity() Arity { return s.ar }

// Len returns the number of updates pushed since the last Build or Reset,
// after consolidation.
func (s *Sorted) Len() int { return len(s.times) }

// Reset discards pushed updates, keeping capacity.
func (s *Sorted) Reset() {
	s.keys, s.vals = s.keys[:0], s.vals[:0]
	s.keyOffs, s.valOffs = s.keyOffs[:0], s.valOffs[:0]
	s.times, s.diffs = s.times[:0], s.diffs[:0]
	s.overflow, s.unsorted, s.wide = s.overflow[:0], false, false
	s.badArity = nil
}

// settleLast ends the run of the last update when its sum went wide: the
// exact total if it fits int64, else the bound of its sign, an overflow
// at its time.
func (s *Sorted) settleLast() {
	if !s.wide {
		return
	}
	n := len(s.diffs) - 1
	var o bool
	if s.diffs[n], o = narrow(s.hi, s.diffs[n]); o {
		s.overflow = overflowAt(s.overflow, s.times[n])
	}
	s.wide = false
}

// Push appends one update. The rows are copied. REQUIRES: (key, val, t)
// is at or after the previous push's in (key, val, time) order. A key or
// val of another length than the builder's arity is refused: the update
// is dropped, and the next Build returns no batch and an error wrapping
// ErrArity.
func (s *Sorted) Push(key, val []int64, t frontier.Time, d int64) {
	if len(key) != s.ar.Key || len(val) != s.ar.Val {
		if s.badArity == nil {
			s.badArity = arityErr(len(key), len(val), s.ar)
		}
		return
	}
	n := len(s.times)
	if n == 0 {
		if cap(s.times) == 0 && s.hint > 0 {
			s.alloc(s.hint)
		}
		s.openKey(key)
		s.openVal(val)
		s.times, s.diffs = append(s.times, t), append(s.diffs, d)
		return
	}
	ka, va := s.ar.Key, s.ar.Val
	if ka == 1 && !s.wide && key[0] > s.keys[len(s.keys)-1] && s.diffs[n-1] != 0 {
		// A new one-column key after the last (a reduce's corrections,
		// one group after another): no compare of the vals, nothing to
		// consolidate or drop (and no wide run to settle).
		s.openKey(key)
		s.openVal(val)
		s.times, s.diffs = append(s.times, t), append(s.diffs, d)
		return
	}
	c := cmpRow(s.keys[len(s.keys)-ka:], key)
	sameKey, sameVal := c == 0, false
	if sameKey {
		c = cmpRow(s.vals[len(s.vals)-va:], val)
		if sameVal = c == 0; sameVal {
			c = cmp.Compare(s.times[n-1], t)
		}
	}
	if c > 0 {
		if invariants.Enabled {
			invariants.Assertf(false, "batch: sorted push of (%v, %v, %d) after (%v, %v, %d)", key, val, t, s.keys[len(s.keys)-ka:], s.vals[len(s.vals)-va:], s.times[n-1])
		}
		s.unsorted = true
	}
	if c == 0 {
		if !s.wide {
			sum, o := addDiff(s.diffs[n-1], d)
			if !o {
				s.diffs[n-1] = sum
				return
			}
			s.wide, s.hi = true, s.diffs[n-1]>>63
		}
		s.hi, s.diffs[n-1] = wideAdd(s.hi, s.diffs[n-1], d)
		return
	}
	s.settleLast()
	if s.diffs[n-1] == 0 {
		poppedVal, poppedKey := s.popLast()
		sameKey = sameKey && !poppedKey
		sameVal = sameVal && !poppedVal
	}
	if !sameKey {
		s.openKey(key)
		s.openVal(val)
	} else if !sameVal {
		s.openVal(val)
	}
	s.times, s.diffs = append(s.times, t), append(s.diffs, d)
}

// Push1 appends one update with one-column key and val (or arity 0, where
// the argument is ignored). REQUIRES: both arities are at most 1, and the
// order of Push.
func (s *Sorted) Push1(k, v int64, t frontier.Time, d int64) {
	if s.ar.Key > 1 || s.ar.Val > 1 {
		panic(fmt.Sprintf("batch: Push1 into a sorted %v builder", s.ar))
	}
	kr, vr := [1]int64{k}, [1]int64{v}
	s.Push(kr[:s.ar.Key], vr[:s.ar.Val], t, d)
}

// Grow gives the builder room for n more updates, one key and one val
// each, when it has less: pushing them then copies no column. A builder
// with nothing pushed takes new columns of that room, as its first build
// does from NewSorted's capHint (and a build that hands its columns to its
// batch leaves it with none); one with updates pushed grows its columns
// once, the new room not zeroed (grow).
func (s *Sorted) Grow(n int) {
	if n <= 0 || cap(s.times)-len(s.times) >= n {
		return
	}
	if len(s.times) == 0 {
		s.alloc(n)
		return
	}
	s.keys, s.keyOffs = grow(s.keys, n*s.ar.Key), grow(s.keyOffs, n+1)
	s.vals, s.valOffs = grow(s.vals, n*s.ar.Val), grow(s.valOffs, n+1)
	s.times, s.diffs = grow(s.times, n), grow(s.diffs, n)
}

// alloc gives the empty columns room for h updates, one key and one val
// each (the shape of a reduce's install: one row per group). The room is
// not zeroed (column): pushes append, so every element below a column's
// length is written before it is read.
func (s *Sorted) alloc(h int) {
	s.keys, s.keyOffs = column[int64](h * s.ar.Key)[:0], column[uint32](h + 1)[:0]
	s.vals, s.valOffs = column[int64](h * s.ar.Val)[:0], column[uint32](h + 1)[:0]
	s.times, s.diffs = column[uint64](h)[:0], column[int64](h)[:0]
}

func (s *Sorted) openKey(key []int64) {
	s.keys = append(s.keys, key...)
	s.keyOffs = append(s.keyOffs, uint32(len(s.valOffs)))
}

func (s *Sorted) openVal(val []int64) {
	s.vals = append(s.vals, val...)
	s.valOffs = append(s.valOffs, uint32(len(s.times)))
}

// popLast drops the last update (its diff consolidated to zero), and its
// val and key if they own nothing else; it reports which it dropped.
func (s *Sorted) popLast() (val, key bool) {
	n := len(s.times) - 1
	s.times, s.diffs = s.times[:n], s.diffs[:n]
	nv := len(s.valOffs) - 1
	if int(s.valOffs[nv]) != n {
		return false, false
	}
	s.valOffs, s.vals = s.valOffs[:nv], s.vals[:nv*s.ar.Val]
	nk := len(s.keyOffs) - 1
	if int(s.keyOffs[nk]) != nv {
		return true, false
	}
	s.keyOffs, s.keys = s.keyOffs[:nk], s.keys[:nk*s.ar.Key]
	return true, true
}

// Build returns the pushed updates as a batch describing [lower, upper)
// with since {0}, and resets the builder. Every pushed time must lie in
// [lower, upper): one outside (unless its diffs consolidate to zero) makes
// Build return no batch and an error wrapping ErrTimeOutside, as
// Builder.Build does, and so do a push refused for its arity (ErrArity)
// and an upper before lower (ErrUpperBeforeLower). If the pushes were out
// of order it returns ErrUnsorted and no batch. If a consolidated diff
// leaves int64 it also returns an *OverflowError naming the times that
// overflowed, with the complete batch, the diff saturated (as
// Builder.Build).
func (s *Sorted) Build(lower, upper frontier.Frontier) (*Batch, error) {
	if s.unsorted {
		s.Reset()
		return nil, ErrUnsorted
	}
	if err := s.badArity; err != nil {
		s.Reset()
		return nil, err
	}
	if err := checkBounds(lower, upper); err != nil {
		s.Reset()
		return nil, err
	}
	if n := len(s.times); n > 0 {
		s.settleLast()
		if s.diffs[n-1] == 0 {
			s.popLast()
		}
	}
	if err := timesWithin(s.times, frontier.Description{Lower: lower, Upper: upper}); err != nil {
		s.Reset()
		return nil, err
	}
	s.keyOffs = append(s.keyOffs, uint32(len(s.valOffs)))
	s.valOffs = append(s.valOffs, uint32(len(s.times)))
	out := &Batch{
		desc: frontier.Description{Lower: lower, Upper: upper, Since: frontier.Min()},
		ar:   s.ar,
	}
	var overflow []frontier.Time
	if len(s.overflow) > 0 {
		overflow = append(overflow, s.overflow...)
	}
	if len(s.times) <= sortedKeep {
		out.keys, out.keyOffs = clone(s.keys), clone(s.keyOffs)
		out.vals, out.valOffs = clone(s.vals), clone(s.valOffs)
		out.times, out.diffs = clone(s.times), clone(s.diffs)
		if cap(s.times) > sortedKeep {
			// Room a Grow made for more than it took: kept, it would
			// stay idle at the largest step's size.
			*s = Sorted{ar: s.ar}
		} else {
			s.Reset()
		}
	} else {
		out.keys, out.keyOffs = shrink(s.keys), shrink(s.keyOffs)
		out.vals, out.valOffs = shrink(s.vals), shrink(s.valOffs)
		out.times, out.diffs = shrink(s.times), shrink(s.diffs)
		*s = Sorted{ar: s.ar}
	}
	if invariants.Enabled {
		if cerr := out.Check(); cerr != nil {
			invariants.Assertf(false, "batch: sorted Build produced a bad batch: %v", cerr)
		}
	}
	return out, overflowErr(overflow)
}

// clone returns a copy of s with no spare capacity (an empty slice for an
// empty s, so that columns are never nil).
func clone[T any](s []T) []T { return append(make([]T, 0, len(s)), s...) }
