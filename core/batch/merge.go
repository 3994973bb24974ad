package batch

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Merger merges two adjacent batches in bounded steps of work (§1.7). The
// result describes [b1.Lower, b2.Upper) with since = b1.Since ⊔ b2.Since ⊔
// compaction (B4, differential-dataflow #247), and every time in it is
// advanced by that since, so updates that become equal consolidate and
// cancelling ones vanish (logical compaction).
type Merger struct {
	// refused is why the inputs cannot merge (mergeable), which Result
	// returns; such a merger is done from the start.
	refused error

	b1, b2 *Batch
	ar     Arity
	since  frontier.Frontier
	s      uint64 // since's time; advancing is a no-op when s == 0
	adv    bool

	k1, k2 int // next key of b1, b2
	// out holds full-length columns sized for the sum of the inputs, or
	// (NewMergerNExpect) for the updates the merge is expected to keep and
	// grown when it keeps more (growOut), written by index; nk, nv and nu
	// count the keys, vals and updates written so far, and Result cuts the
	// columns to them. maxOut, maxK and maxV are the inputs' updates, keys
	// and vals: no merge keeps more.
	// INVARIANT: out.keyOffs[:nk+1] and out.valOffs[:nv+1] are the offsets
	// of what has been written (a leading 0, then ends).
	//
	// The columns are allocated by the first Work with fuel (allocOut),
	// to the lengths outLen holds: a merge a spine starts and nothing
	// works (a trace no runtime maintains any more, kept by a reader)
	// holds no output as long as the inputs it would merge.
	out        Batch
	outLen     outLens
	nk, nv, nu int
	maxOut     int
	maxK, maxV int
	done       bool
	err        error
	work       int64
	kw         *kway   // a merge of more than two batches (kmerge.go)
	k11        *kway11 // the same of one-column keys and vals (kmerge11.go)
	// Each val of b1 (b2) holds one update, so its val and update indexes
	// agree (random vals under repeating keys: the common case).
	vflat1, vflat2 bool
}

// mergedSince is the since of a merge of bs under the compaction frontier:
// the join of their sinces and the frontier (B4), never the meet.
func mergedSince(bs []*Batch, compaction frontier.Frontier) frontier.Frontier {
	since := compaction
	for _, b := range bs {
		since = since.Join(b.desc.Since)
	}
	if mutants.Enabled && mutants.On(mutants.MergeSinceMeet) {
		since = compaction
		for _, b := range bs {
			since = since.Meet(b.desc.Since)
		}
	}
	return since
}

// noOffs is the offsets column of a batch without updates, shared by every
// merge of empty batches (batches are immutable; its capacity is its length).
var noOffs = []uint32{0}

// emptyOut is the result of a merge of batches without updates, done at its
// start: a merge of batches whose updates all cancelled, or of the empty
// batch a trace takes over rounds without updates (spine.Spine.Insert).
func emptyOut(ar Arity, lower, upper, since frontier.Frontier) Batch {
	return Batch{
		desc:    frontier.Description{Lower: lower, Upper: upper, Since: since},
		ar:      ar,
		keyOffs: noOffs[:1:1],
		valOffs: noOffs[:1:1],
	}
}

// ErrNotAdjacent reports a merge of batches that are not adjacent in time:
// one's upper is not the next one's lower, so their merge would describe a
// range they do not cover (a gap) or cover twice (an overlap).
var ErrNotAdjacent = errors.New("batch: merge of batches that are not adjacent")

// ErrNilBatch reports a nil batch given to a merge.
var ErrNilBatch = errors.New("batch: nil batch")

// mergeable returns why a, then b, cannot merge: either is nil
// (ErrNilBatch), either's upper is before its lower (ErrUpperBeforeLower,
// as batch.Empty makes one if asked), a's upper is not b's lower
// (ErrNotAdjacent), or their arities differ (ErrArity).
func mergeable(a, b *Batch) error {
	switch {
	case a == nil || b == nil:
		return fmt.Errorf("%w in a merge", ErrNilBatch)
	case !a.desc.Lower.LessEqual(a.desc.Upper):
		return fmt.Errorf("%w: %v in a merge", ErrUpperBeforeLower, a.desc)
	case !b.desc.Lower.LessEqual(b.desc.Upper):
		return fmt.Errorf("%w: %v in a merge", ErrUpperBeforeLower, b.desc)
	case a.desc.Upper != b.desc.Lower:
		return fmt.Errorf("%w: %v then %v", ErrNotAdjacent, a.desc, b.desc)
	case a.ar != b.ar:
		return fmt.Errorf("%w: a merge of arities %v and %v", ErrArity, a.ar, b.ar)
	}
	return nil
}

// NewMerger starts merging b1 and b2 under the compaction frontier. Inputs
// that cannot merge — a nil batch, one whose upper is before its lower,
// b1's upper not b2's lower, different arities — make a merger that is
// done at once, whose Result is no batch and the error (ErrNilBatch,
// ErrUpperBeforeLower, ErrNotAdjacent, ErrArity).
func NewMerger(b1, b2 *Batch, compaction frontier.Frontier) *Merger {
	if err := mergeable(b1, b2); err != nil {
		return &Merger{refused: err, done: true}
	}
	since := mergedSince([]*Batch{b1, b2}, compaction)
	m := &Merger{b1: b1, b2: b2, ar: b1.ar, since: since}
	if t, ok := since.Time(); ok && t > 0 {
		m.s, m.adv = t, true
	}
	n := b1.Len() + b2.Len()
	if n == 0 {
		m.out, m.done = emptyOut(m.ar, b1.desc.Lower, b2.desc.Upper, since), true
		return m
	}
	m.vflat1, m.vflat2 = b1.Vals() == b1.Len(), b2.Vals() == b2.Len()
	m.out = Batch{
		desc:      frontier.Description{Lower: b1.desc.Lower, Upper: b2.desc.Upper, Since: since},
		ar:        m.ar,
		saturated: b1.saturated || b2.saturated,
	}
	m.outLen = outLens{
		keys: len(b1.keys) + len(b2.keys), keyOffs: b1.Keys() + b2.Keys() + 1,
		vals: len(b1.vals) + len(b2.vals), valOffs: b1.Vals() + b2.Vals() + 1,
		updates: n,
	}
	return m
}

// outLens are the lengths of a merge's output columns, allocated by its
// first Work with fuel (Merger.allocOut).
type outLens struct{ keys, keyOffs, vals, valOffs, updates int }

// allocOut allocates the output columns to m.outLen, not zeroed (column):
// every element the merge keeps is written before it is read.
func (m *Merger) allocOut() {
	l, o := m.outLen, &m.out
	o.keys, o.keyOffs = column[int64](l.keys), column[uint32](l.keyOffs)
	o.vals, o.valOffs = column[int64](l.vals), column[uint32](l.valOffs)
	o.times, o.diffs = column[uint64](l.updates), column[int64](l.updates)
	o.keyOffs[0], o.valOffs[0] = 0, 0
}

// Done reports whether the merge is complete.
func (m *Merger) Done() bool { return m.done }

// WorkDone returns the updates consumed so far.
func (m *Merger) WorkDone() int64 { return m.work }

// minGallop is how many keys in a row one side must win before the merge
// stops comparing key by key and copies the rest of that side's run in bulk
// (timsort's MIN_GALLOP). Merges of similar batches of random keys alternate
// sides every key or two, where finding a run's end first costs more than it
// saves.
const minGallop = 7

// Work merges until fuel updates have been consumed (at key granularity, so it
// may overshoot by one key) or the merge completes. It subtracts what it used
// from *fuel.
func (m *Merger) Work(fuel *int64) {
	if m.refused != nil {
		return
	}
	f := *fuel
	if f > 0 && !m.done && m.out.keyOffs == nil {
		m.allocOut()
	}
	var used int64
	switch {
	case m.done:
	case m.k11 != nil:
		used = m.k11.work(m, f)
	case m.kw != nil:
		used = m.kw.work(m, f)
	case m.ar.Key == 1 && m.ar.Val == 1:
		used = m.work11(f)
	default:
		used = m.workN(f)
	}
	*fuel -= used
	m.work += used
	if m.k11 == nil && m.kw == nil && m.k1 >= m.b1.Keys() && m.k2 >= m.b2.Keys() {
		m.done = true
	}
}

// workN is Work for any arity and returns the updates consumed.
func (m *Merger) workN(f int64) int64 {
	b1, b2 := m.b1, m.b2
	n1, n2 := b1.Keys(), b2.Keys()
	ka := m.ar.Key
	var used int64
	w1, w2 := 0, 0 // keys in a row won by b1, b2
	for used < f && (m.k1 < n1 || m.k2 < n2) {
		k1, k2 := m.k1, m.k2
		var c int
		switch {
		case k1 >= n1:
			c, w2 = 1, minGallop
		case k2 >= n2:
			c, w1 = -1, minGallop
		case ka == 1:
			c = cmp3(b1.keys[k1], b2.keys[k2])
		default:
			c = cmpRow(b1.keys[k1*ka:k1*ka+ka], b2.keys[k2*ka:k2*ka+ka])
		}
		switch {
		case c < 0:
			end := k1 + 1
			if w1 >= minGallop {
				end = m.runEnd(b1, k1, b2, k2, f-used)
				w1 = 0
			} else {
				w1++
			}
			w2 = 0
			used += m.copyKeys(b1, k1, end)
			m.k1 = end
		case c > 0:
			end := k2 + 1
			if w2 >= minGallop {
				end = m.runEnd(b2, k2, b1, k1, f-used)
				w2 = 0
			} else {
				w2++
			}
			w1 = 0
			used += m.copyKeys(b2, k2, end)
			m.k2 = end
		default:
			w1, w2 = 0, 0
			if m.ar.Val == 1 {
				used += m.mergeKey1(k1, k2)
			} else {
				used += m.mergeKey(k1, k2)
			}
			m.k1++
			m.k2++
		}
	}
	return used
}

// work11 is Work for key and val arity 1 and returns the updates consumed.
// It merges key by key, writing a key whose one val holds one update (the
// common case) straight into the columns, and copies a side's run in bulk
// once that side has won minGallop keys in a row. Each side's cursor keeps
// its val and update positions too, so the fast path's loads do not wait on
// the offset columns.
func (m *Merger) work11(f int64) int64 {
	b1, b2 := m.b1, m.b2
	keys1, ko1, vals1, vo1, t1, d1 := b1.keys, b1.keyOffs, b1.vals, b1.valOffs, b1.times, b1.diffs
	keys2, ko2, vals2, vo2, t2, d2 := b2.keys, b2.keyOffs, b2.vals, b2.valOffs, b2.times, b2.diffs
	n1, n2 := len(keys1), len(keys2)
	// A flat side has one val per key and one update per val (random keys
	// rarely repeat), so its fast path need not read its offsets.
	flat1, flat2 := len(vals1) == n1 && len(t1) == n1, len(vals2) == n2 && len(t2) == n2
	o := &m.out
	oK, oKo, oV, oVo, oT, oD := o.keys, o.keyOffs, o.vals, o.valOffs, o.times, o.diffs
	s := m.s // advancing by s == 0 is the identity
	k1, k2 := m.k1, m.k2
	v1, v2 := int(ko1[k1]), int(ko2[k2])
	u1, u2 := int(vo1[v1]), int(vo2[v2])
	nk, nv, nu := m.nk, m.nv, m.nu
	var used int64
	w1, w2 := 0, 0 // keys in a row won by b1, b2
	for used < f {
		if flat1 && flat2 {
			// Both sides are flat, so key, val and update indexes agree:
			// take the lesser head without a branch (comparing random keys
			// is a coin toss that a branch would mispredict half the time)
			// until the keys tie, a side runs out or wins minGallop in a
			// row.
			for used < f && k1 < n1 && k2 < n2 && w1 < minGallop && w2 < minGallop {
				x1, x2 := keys1[k1], keys2[k2]
				if x1 == x2 {
					break
				}
				a1, a2 := vals1[k1], vals2[k2]
				tt1, tt2 := t1[k1], t2[k2]
				dd1, dd2 := d1[k1], d2[k2]
				i := 0 // 1 if b1's head is the lesser
				if x1 < x2 {
					i = 1
				}
				x, a, tt, dd := x2, a2, tt2, dd2
				if i != 0 {
					x = x1
				}
				if i != 0 {
					a = a1
				}
				if i != 0 {
					tt = tt1
				}
				if i != 0 {
					dd = dd1
				}
				oT[nu], oD[nu] = max(tt, s), dd
				nu++
				oV[nv] = a
				nv++
				oVo[nv] = uint32(nu)
				oK[nk] = x
				nk++
				oKo[nk] = uint32(nv)
				j := 1 - i
				k1, k2 = k1+i, k2+j
				w1, w2 = (w1+i)*i, (w2+j)*j
				used++
			}
			v1, u1, v2, u2 = k1, k1, k2, k2
			if used >= f {
				break
			}
		}
		var c int
		switch {
		case k1 < n1 && k2 < n2:
			x1, x2 := keys1[k1], keys2[k2]
			switch {
			case x1 < x2:
				if w1 < minGallop && (flat1 || int(ko1[k1+1]) == v1+1 && int(vo1[v1+1]) == u1+1) {
					oT[nu], oD[nu] = max(t1[u1], s), d1[u1]
					nu++
					oV[nv] = vals1[v1]
					nv++
					oVo[nv] = uint32(nu)
					oK[nk] = x1
					nk++
					oKo[nk] = uint32(nv)
					k1, v1, u1 = k1+1, v1+1, u1+1
					used++
					w1++
					w2 = 0
					continue
				}
				c = -1
			case x1 > x2:
				if w2 < minGallop && (flat2 || int(ko2[k2+1]) == v2+1 && int(vo2[v2+1]) == u2+1) {
					oT[nu], oD[nu] = max(t2[u2], s), d2[u2]
					nu++
					oV[nv] = vals2[v2]
					nv++
					oVo[nv] = uint32(nu)
					oK[nk] = x2
					nk++
					oKo[nk] = uint32(nv)
					k2, v2, u2 = k2+1, v2+1, u2+1
					used++
					w2++
					w1 = 0
					continue
				}
				c = 1
			default:
				m.nk, m.nv, m.nu = nk, nv, nu
				used += m.mergeKey1(k1, k2)
				nk, nv, nu = m.nk, m.nv, m.nu
				k1++
				k2++
				v1, v2 = int(ko1[k1]), int(ko2[k2])
				u1, u2 = int(vo1[v1]), int(vo2[v2])
				w1, w2 = 0, 0
				continue
			}
		case k1 < n1:
			c, w1 = -1, minGallop
		case k2 < n2:
			c, w2 = 1, minGallop
		}
		m.nk, m.nv, m.nu = nk, nv, nu
		switch {
		case c < 0:
			// A key with several vals or updates, or a gallop.
			end := k1 + 1
			if w1 >= minGallop {
				end = m.runEnd(b1, k1, b2, k2, f-used)
				w1 = 0
			} else {
				w1++
				w2 = 0
			}
			used += m.copyKeys(b1, k1, end)
			k1 = end
			v1 = int(ko1[k1])
			u1 = int(vo1[v1])
		case c > 0:
			end := k2 + 1
			if w2 >= minGallop {
				end = m.runEnd(b2, k2, b1, k1, f-used)
				w2 = 0
			} else {
				w2++
				w1 = 0
			}
			used += m.copyKeys(b2, k2, end)
			k2 = end
			v2 = int(ko2[k2])
			u2 = int(vo2[v2])
		default:
			m.k1, m.k2 = k1, k2
			return used
		}
		nk, nv, nu = m.nk, m.nv, m.nu
	}
	m.k1, m.k2, m.nk, m.nv, m.nu = k1, k2, nk, nv, nu
	return used
}

// Result returns the merged batch. REQUIRES: Done. If consolidating diffs
// overflowed it also returns ErrOverflow, with the complete batch: every
// other update is in it, and an overflowed diff is saturated to the int64
// bound of its sign (its value is unspecified; the caller reports the
// error). The batch is Saturated when the merge overflowed or an
// input was. A merge never loses updates to an overflow. A merge of inputs
// that cannot merge returns no batch and the error (NewMerger).
func (m *Merger) Result() (*Batch, error) {
	if m.refused != nil {
		return nil, m.refused
	}
	if !m.done {
		panic("batch: Result of an unfinished merge")
	}
	out := m.out
	out.keys = shrink(out.keys[:m.nk*m.ar.Key])
	out.keyOffs = shrink(out.keyOffs[:m.nk+1])
	out.vals = shrink(out.vals[:m.nv*m.ar.Val])
	out.valOffs = shrink(out.valOffs[:m.nv+1])
	out.times = shrink(out.times[:m.nu])
	out.diffs = shrink(out.diffs[:m.nu])
	out.saturated = out.saturated || m.err != nil
	if invariants.Enabled {
		if err := out.Check(); err != nil {
			invariants.Assertf(false, "batch: merge produced a bad batch: %v", err)
		}
	}
	return &out, m.err
}

// growOut makes room in the output of a merge of one-column keys and vals
// for n more updates (and as many keys and vals, as far as the inputs have
// them): columns at least half as long again, at most what the inputs
// hold, keeping what was written.
func (m *Merger) growOut(n int) {
	o := &m.out
	needU, needK, needV := min(m.nu+n, m.maxOut), min(m.nk+n, m.maxK), min(m.nv+n, m.maxV)
	if needU <= len(o.times) && needK <= len(o.keys) && needV <= len(o.vals) {
		return
	}
	c := min(m.maxOut, max(needU, len(o.times)+len(o.times)/2))
	ck, cv := max(needK, min(c, m.maxK)), max(needV, min(c, m.maxV))
	o.keys = grownCol(o.keys, m.nk, ck)
	o.vals = grownCol(o.vals, m.nv, cv)
	o.times = grownCol(o.times, m.nu, c)
	o.diffs = grownCol(o.diffs, m.nu, c)
	o.keyOffs = grownCol(o.keyOffs, m.nk+1, ck+1)
	o.valOffs = grownCol(o.valOffs, m.nv+1, cv+1)
}

// grownCol returns a column of n elements (not zeroed) starting with the
// first w of s, or s when it is long enough.
func grownCol[T int64 | uint64 | uint32](s []T, w, n int) []T {
	if len(s) >= n {
		return s
	}
	t := column[T](n)
	copy(t, s[:w])
	return t
}

// shrink copies s into an exact-size slice when more than a quarter of its
// capacity is unused (merges that cancel or coalesce much). A make followed
// by a copy of its length compiles to one allocation the copy fills, not
// zeroed first (an append to a make zeroes it).
func shrink[T any](s []T) []T {
	if cap(s)-len(s) > cap(s)/4 {
		t := make([]T, len(s))
		copy(t, s)
		return t
	}
	return s
}

// Merge merges b1 and b2 to completion.
func Merge(b1, b2 *Batch, compaction frontier.Frontier) (*Batch, error) {
	m := NewMerger(b1, b2, compaction)
	fuel := int64(1) << 62
	m.Work(&fuel)
	return m.Result()
}

// cmp3 is cmp.Compare for int64 without the NaN handling.
func cmp3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// runEnd returns the end of the run of keys of b from k that sort before key
// ko of o (the rest of b when o is exhausted), cut as soon as the run holds
// budget updates. REQUIRES: key k of b sorts before key ko of o.
func (m *Merger) runEnd(b *Batch, k int, o *Batch, ko int, budget int64) int {
	n := b.Keys()
	koff, voff := b.keyOffs, b.valOffs
	base := voff[koff[k]]
	end := k + 1
	switch ka := m.ar.Key; {
	case ko >= o.Keys():
		for end < n && int64(voff[koff[end]]-base) < budget {
			end++
		}
	case ka == 1:
		x, keys := o.keys[ko], b.keys
		for end < n && keys[end] < x && int64(voff[koff[end]]-base) < budget {
			end++
		}
	default:
		x := o.keys[ko*ka : ko*ka+ka]
		for end < n && cmpRow(b.keys[end*ka:end*ka+ka], x) < 0 && int64(voff[koff[end]]-base) < budget {
			end++
		}
	}
	return end
}

// copyKeys appends keys [klo, khi) of b (with their vals, times advanced) and
// returns the updates consumed.
func (m *Merger) copyKeys(b *Batch, klo, khi int) int64 {
	ka, va := m.ar.Key, m.ar.Val
	o := &m.out
	vlo, vhi := int(b.keyOffs[klo]), int(b.keyOffs[khi])
	ulo, uhi := int(b.valOffs[vlo]), int(b.valOffs[vhi])
	if !m.adv {
		// Fast path: nothing to advance, so copy the columns and rebase the
		// offsets (uint32 arithmetic wraps back into range).
		copy(o.keys[m.nk*ka:], b.keys[klo*ka:khi*ka])
		kbase := uint32(m.nv) - uint32(vlo)
		src := b.keyOffs[klo+1 : khi+1]
		dst := o.keyOffs[m.nk+1:]
		dst = dst[:len(src)]
		for i, x := range src {
			dst[i] = x + kbase
		}
		copy(o.vals[m.nv*va:], b.vals[vlo*va:vhi*va])
		vbase := uint32(m.nu) - uint32(ulo)
		src = b.valOffs[vlo+1 : vhi+1]
		dst = o.valOffs[m.nv+1:]
		dst = dst[:len(src)]
		for i, x := range src {
			dst[i] = x + vbase
		}
		copy(o.times[m.nu:], b.times[ulo:uhi])
		copy(o.diffs[m.nu:], b.diffs[ulo:uhi])
		m.nk += khi - klo
		m.nv += vhi - vlo
		m.nu += uhi - ulo
		return int64(uhi - ulo)
	}
	for k := klo; k < khi; k++ {
		nv := m.nv
		m.copyVals(b, int(b.keyOffs[k]), int(b.keyOffs[k+1]))
		if m.nv > nv {
			m.emitKey(b, k)
		}
	}
	return int64(uhi - ulo)
}

// emitKey appends key k of b, owning the vals written since the last key.
func (m *Merger) emitKey(b *Batch, k int) {
	switch ka := m.ar.Key; ka {
	case 1:
		m.out.keys[m.nk] = b.keys[k]
	default:
		copy(m.out.keys[m.nk*ka:m.nk*ka+ka], b.keys[k*ka:k*ka+ka])
	}
	m.nk++
	m.out.keyOffs[m.nk] = uint32(m.nv)
}

// copyVals appends vals [vlo, vhi) of b with their updates, times advanced by
// the since, and drops vals whose updates cancel.
func (m *Merger) copyVals(b *Batch, vlo, vhi int) {
	va := m.ar.Val
	oVals, oVoff, oT, oD := m.out.vals, m.out.valOffs, m.out.times, m.out.diffs
	voff, times, diffs := b.valOffs, b.times, b.diffs
	nv, nu := m.nv, m.nu
	s, adv := m.s, m.adv
	for v := vlo; v < vhi; v++ {
		i, hi := int(voff[v]), int(voff[v+1])
		start := nu
		if adv && times[i] <= s {
			// Advancing maps the prefix of times <= s to s, summed exactly:
			// a partial sum out of int64 is summed again in 128 bits.
			acc, first, over := diffs[i], i, false
			for i++; i < hi && times[i] <= s; i++ {
				var o bool
				acc, o = addDiff(acc, diffs[i])
				over = over || o
			}
			if over {
				acc = m.sumExact(diffs[first:i], nil)
			}
			if acc != 0 {
				oT[nu], oD[nu] = s, acc
				nu++
			}
		}
		for ; i < hi; i++ {
			oT[nu], oD[nu] = times[i], diffs[i]
			nu++
		}
		if nu > start {
			switch va {
			case 0:
			case 1:
				oVals[nv] = b.vals[v]
			default:
				copy(oVals[nv*va:nv*va+va], b.vals[v*va:v*va+va])
			}
			nv++
			oVoff[nv] = uint32(nu)
		}
	}
	m.nv, m.nu = nv, nu
}

// mergeKey merges key k1 of b1 with the equal key k2 of b2 and returns the
// updates consumed.
func (m *Merger) mergeKey(k1, k2 int) int64 {
	b1, b2 := m.b1, m.b2
	v1, v1e := int(b1.keyOffs[k1]), int(b1.keyOffs[k1+1])
	v2, v2e := int(b2.keyOffs[k2]), int(b2.keyOffs[k2+1])
	used := int64(b1.valOffs[v1e]-b1.valOffs[v1]) + int64(b2.valOffs[v2e]-b2.valOffs[v2])
	nv := m.nv
	va := m.ar.Val
	for v1 < v1e && v2 < v2e {
		var c int
		if va == 1 {
			c = cmp3(b1.vals[v1], b2.vals[v2])
		} else {
			c = cmpRow(b1.vals[v1*va:v1*va+va], b2.vals[v2*va:v2*va+va])
		}
		switch {
		case c < 0:
			e := runEndVals(b1, v1+1, v1e, b2, v2, va)
			m.copyVals(b1, v1, e)
			v1 = e
		case c > 0:
			e := runEndVals(b2, v2+1, v2e, b1, v1, va)
			m.copyVals(b2, v2, e)
			v2 = e
		default:
			m.mergeVal(v1, v2)
			v1++
			v2++
		}
	}
	m.copyVals(b1, v1, v1e)
	m.copyVals(b2, v2, v2e)
	if m.nv > nv {
		m.emitKey(b1, k1)
	}
	return used
}

// mergeKey1 is mergeKey for val arity 1, with the vals that hold one update
// (the common case) copied inline.
func (m *Merger) mergeKey1(k1, k2 int) int64 {
	b1, b2 := m.b1, m.b2
	v1, v1e := int(b1.keyOffs[k1]), int(b1.keyOffs[k1+1])
	v2, v2e := int(b2.keyOffs[k2]), int(b2.keyOffs[k2+1])
	used := int64(b1.valOffs[v1e]-b1.valOffs[v1]) + int64(b2.valOffs[v2e]-b2.valOffs[v2])
	oVals, oVoff, oT, oD := m.out.vals, m.out.valOffs, m.out.times, m.out.diffs
	nv0 := m.nv
	nv, nu := m.nv, m.nu
	// Advancing by since {0} (or by nothing, s == 0) is the identity.
	s := m.s
	vals1, vo1, t1, d1 := b1.vals, b1.valOffs, b1.times, b1.diffs
	vals2, vo2, t2, d2 := b2.vals, b2.valOffs, b2.times, b2.diffs
	for {
		if m.vflat1 && m.vflat2 {
			// Every val holds one update, so val and update indexes
			// agree and the offsets need not be read: take the lesser
			// head without a branch until the vals tie.
			for v1 < v1e && v2 < v2e {
				x1, x2 := vals1[v1], vals2[v2]
				if x1 == x2 {
					break
				}
				tt1, tt2, dd1, dd2 := t1[v1], t2[v2], d1[v1], d2[v2]
				i := 0 // 1 if b1's head is the lesser
				if x1 < x2 {
					i = 1
				}
				x, tt, dd := x2, tt2, dd2
				if i != 0 {
					x = x1
				}
				if i != 0 {
					tt = tt1
				}
				if i != 0 {
					dd = dd1
				}
				oT[nu], oD[nu] = max(tt, s), dd
				nu++
				oVals[nv] = x
				nv++
				oVoff[nv] = uint32(nu)
				v1 += i
				v2 += 1 - i
			}
		}
		// Both heads are vals with one update each and differ (the common
		// case): take the lesser without a branch, as work11 does for keys.
		for v1 < v1e && v2 < v2e {
			x1, x2 := vals1[v1], vals2[v2]
			lo1, lo2 := vo1[v1], vo2[v2]
			if x1 == x2 || vo1[v1+1]-lo1 != 1 || vo2[v2+1]-lo2 != 1 {
				break
			}
			tt1, tt2, dd1, dd2 := t1[lo1], t2[lo2], d1[lo1], d2[lo2]
			i := 0 // 1 if b1's head is the lesser
			if x1 < x2 {
				i = 1
			}
			x, tt, dd := x2, tt2, dd2
			if i != 0 {
				x = x1
			}
			if i != 0 {
				tt = tt1
			}
			if i != 0 {
				dd = dd1
			}
			oT[nu], oD[nu] = max(tt, s), dd
			nu++
			oVals[nv] = x
			nv++
			oVoff[nv] = uint32(nu)
			v1 += i
			v2 += 1 - i
		}
		var b *Batch
		var v int
		switch {
		case v1 < v1e && v2 < v2e:
			switch x1, x2 := b1.vals[v1], b2.vals[v2]; {
			case x1 < x2:
				b, v = b1, v1
				v1++
			case x1 > x2:
				b, v = b2, v2
				v2++
			default:
				m.nv, m.nu = nv, nu
				m.mergeVal(v1, v2)
				nv, nu = m.nv, m.nu
				v1++
				v2++
				continue
			}
		case v1 < v1e:
			b, v = b1, v1
			v1++
		case v2 < v2e:
			b, v = b2, v2
			v2++
		default:
			m.nv, m.nu = nv, nu
			if nv > nv0 {
				m.emitKey(b1, k1)
			}
			return used
		}
		lo, hi := b.valOffs[v], b.valOffs[v+1]
		if hi-lo != 1 {
			m.nv, m.nu = nv, nu
			m.copyVals(b, v, v+1)
			nv, nu = m.nv, m.nu
			continue
		}
		oT[nu], oD[nu] = max(b.times[lo], s), b.diffs[lo]
		nu++
		oVals[nv] = b.vals[v]
		nv++
		oVoff[nv] = uint32(nu)
	}
}

// runEndVals returns the first val index in [v, ve) of b at or after val vo
// of o.
func runEndVals(b *Batch, v, ve int, o *Batch, vo, va int) int {
	if va == 1 {
		x, vals := o.vals[vo], b.vals
		for v < ve && vals[v] < x {
			v++
		}
		return v
	}
	x := o.vals[vo*va : vo*va+va]
	for v < ve && cmpRow(b.vals[v*va:v*va+va], x) < 0 {
		v++
	}
	return v
}

// mergeVal appends the consolidation of the updates of val v1 of b1 and the
// equal val v2 of b2, each time advanced by the since, and the val itself if
// any update survives. Advancing maps the prefix of times <= since to since
// itself and leaves the rest alone, so the lists stay sorted and no sort is
// needed.
func (m *Merger) mergeVal(v1, v2 int) {
	b1, b2 := m.b1, m.b2
	lo1, hi1 := b1.valOffs[v1], b1.valOffs[v1+1]
	lo2, hi2 := b2.valOffs[v2], b2.valOffs[v2+1]
	t1, d1 := b1.times[lo1:hi1], b1.diffs[lo1:hi1]
	t2, d2 := b2.times[lo2:hi2], b2.diffs[lo2:hi2]
	oT, oD := m.out.times, m.out.diffs
	nu := m.nu
	start := nu
	i, j := 0, 0
	if m.adv {
		// The prefixes of times <= since, summed exactly (as copyVals).
		var acc int64
		over := false
		for ; i < len(t1) && t1[i] <= m.s; i++ {
			var o bool
			acc, o = addDiff(acc, d1[i])
			over = over || o
		}
		for ; j < len(t2) && t2[j] <= m.s; j++ {
			var o bool
			acc, o = addDiff(acc, d2[j])
			over = over || o
		}
		if over {
			acc = m.sumExact(d1[:i], d2[:j])
		}
		if acc != 0 {
			oT[nu], oD[nu] = m.s, acc
			nu++
		}
	}
	for i < len(t1) && j < len(t2) {
		switch a, b := t1[i], t2[j]; {
		case a < b:
			oT[nu], oD[nu] = a, d1[i]
			nu++
			i++
		case a > b:
			oT[nu], oD[nu] = b, d2[j]
			nu++
			j++
		default:
			if d := m.add(d1[i], d2[j]); d != 0 {
				oT[nu], oD[nu] = a, d
				nu++
			}
			i++
			j++
		}
	}
	copy(oD[nu:], d1[i:])
	nu += copy(oT[nu:], t1[i:])
	copy(oD[nu:], d2[j:])
	nu += copy(oT[nu:], t2[j:])
	if nu > start {
		va := m.ar.Val
		switch va {
		case 0:
		case 1:
			m.out.vals[m.nv] = b1.vals[v1]
		default:
			copy(m.out.vals[m.nv*va:m.nv*va+va], b1.vals[v1*va:v1*va+va])
		}
		m.nv++
		m.out.valOffs[m.nv] = uint32(nu)
	}
	m.nu = nu
}

// settle returns the 128-bit sum (hi, lo) of a run (wideAdd) if it fits
// int64, and else the int64 bound of its sign, recording ErrOverflow: only
// a total out of int64 overflows, not a partial sum (MaxInt64, +1, -1 is
// MaxInt64).
func (m *Merger) settle(hi, lo int64) int64 {
	d, o := narrow(hi, lo)
	if o {
		m.err = ErrOverflow
	}
	return d
}

// sumExact returns the sum of the diffs of a and b, exactly if it fits
// int64 and else the bound of its sign (recording ErrOverflow): a run's
// checked sum calls it when a partial sum overflowed.
func (m *Merger) sumExact(a, b []int64) int64 {
	var hi, lo int64
	for _, d := range a {
		hi, lo = wideAdd(hi, lo, d)
	}
	for _, d := range b {
		hi, lo = wideAdd(hi, lo, d)
	}
	return m.settle(hi, lo)
}

// add returns a+b, saturated on overflow (recorded as ErrOverflow): the
// sum of two updates, one from each input of a two-way merge, is the
// run's whole sum, so its overflow is the total's.
func (m *Merger) add(a, b int64) int64 {
	s, o := addDiff(a, b)
	if o {
		m.err = ErrOverflow
		if a > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}
