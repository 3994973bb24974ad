package batch

import (
	"fmt"
	"math"

	"github.com/tracebench/tracebench/core/frontier"
)

// K-way merging (§1.7 for more than two batches): a spine that merges a
// level's batches at once moves each update once where merging them in
// pairs moves it log2(k) times.
//
// The inputs' heads, one update each, sit in a loser tree (a tournament
// whose inner nodes keep the loser of their match, so replacing the winner
// replays only its path to the root: log2(k) comparisons, no heap
// sift-down). Updates come out of the tree in (key, val, time) order; the
// time is advanced by the since, which keeps the order (advancing maps the
// times at or before the since to the since and leaves the rest), so equal
// (key, val, advanced time) arrive one after another and an accumulator
// consolidates them before they are written. A key or val is written when
// its first surviving update is, so no key owns zero vals and no val zero
// updates (B2) even when everything under it cancels.
//
// The tree holds input indexes; an input's head key is cached (hk, when the
// key arity is 1), so a match compares two int64 in the common case and
// falls back to vals and times only on equal keys or other arities. Keys
// and vals of one column each have a kernel of their own (kway11,
// kmerge11.go), which merges a dominant input beside its tree instead of in
// it (kmergebig.go).

// kway is the state of a k-way merge of any arity.
type kway struct {
	ins []*Batch
	// Per input: key, val and update index of the head; ex is 1 once the
	// input is exhausted.
	k, v, u []int
	ex      []uint8
	hk      []int64 // head key (arity 1; math.MaxInt64 once exhausted)
	tree    []int32 // tree[0] is the winner; tree[1:p] the losers of inner nodes
	p       int     // leaves: the power of two at or above len(ins)

	// The accumulator: the update being consolidated, by its source (input
	// a, key ak, val av of that input), advanced time at and diff ad.
	has    bool
	a      int
	ak, av int
	at     uint64
	ad     int64
	// wide is set while the accumulator's sum is out of int64: ad is then
	// the low word of the exact sum and hi its high word (wideAdd), so a
	// run whose partial sum overflows but whose total fits is written
	// exactly (settle, when the run ends).
	wide bool
	hi   int64
}

// NewMergerN starts merging the adjacent batches bs (in time order, at least
// one) under the compaction frontier: the result describes [bs[0].Lower,
// bs[len-1].Upper) with since the join of theirs and the frontier (B4). Two
// batches merge with NewMerger's two-way kernel, more in one k-way pass.
// Inputs that cannot merge (a nil batch, one whose upper is before its
// lower, bs[i].Upper != bs[i+1].Lower, different arities) make a merger done at once whose Result is no batch
// and the error, as NewMerger's; no batches at all is a programmer error,
// which panics.
func NewMergerN(bs []*Batch, compaction frontier.Frontier) *Merger {
	return newMergerN(bs, compaction, kwDefault, 0)
}

// NewMergerNExpect is NewMergerN told how many updates the merge is expected
// to keep (a spine knows it from the merges before at the same level: the
// top of a steady trace keeps about half of what it reads, the rest
// cancels). More than two batches of one-column keys and vals then get
// output columns for that many, grown if the merge keeps more, where
// NewMergerN allocates them for every input update and Result copies them
// to size when consolidation left over a quarter unused. An expect of 0,
// or at least the inputs' updates, is no hint.
func NewMergerNExpect(bs []*Batch, compaction frontier.Frontier, expect int) *Merger {
	return newMergerN(bs, compaction, kwDefault, expect)
}

// newMergerN is NewMergerNExpect with the parameters of the kernel for
// one-column keys and vals (tests draw small stages, so refills fall inside
// keys and vals, and draw whether the largest input merges beside the tree).
func newMergerN(bs []*Batch, compaction frontier.Frontier, prm kwParams, expect int) *Merger {
	if len(bs) == 2 {
		return NewMerger(bs[0], bs[1], compaction)
	}
	if len(bs) == 0 {
		panic("batch: NewMergerN of no batches")
	}
	for i := range bs {
		var err error
		switch {
		case i > 0:
			err = mergeable(bs[i-1], bs[i])
		case bs[0] == nil:
			err = fmt.Errorf("%w in a merge", ErrNilBatch)
		case !bs[0].desc.Lower.LessEqual(bs[0].desc.Upper):
			err = fmt.Errorf("%w: %v in a merge", ErrUpperBeforeLower, bs[0].desc)
		}
		if err != nil {
			return &Merger{refused: err, done: true}
		}
	}
	since := mergedSince(bs, compaction)
	var nk, nv, nu, lk, lv int
	for _, b := range bs {
		nk, nv, nu = nk+b.Keys(), nv+b.Vals(), nu+b.Len()
		lk, lv = lk+len(b.keys), lv+len(b.vals)
	}
	ar := bs[0].ar
	m := &Merger{b1: bs[0], b2: bs[len(bs)-1], ar: ar, since: since}
	if t, ok := since.Time(); ok && t > 0 {
		m.s, m.adv = t, true
	}
	if nu == 0 {
		m.out, m.done = emptyOut(ar, bs[0].desc.Lower, bs[len(bs)-1].desc.Upper, since), true
		return m
	}
	m.maxOut, m.maxK, m.maxV = nu, nk, nv
	if ar.Key == 1 && ar.Val == 1 && expect > 0 && expect < nu {
		// Columns for expect updates; kway11.work grows them (growOut).
		nk, nv, nu, lk, lv = min(nk, expect), min(nv, expect), expect, min(lk, expect), min(lv, expect)
	}
	m.out = Batch{
		desc: frontier.Description{Lower: bs[0].desc.Lower, Upper: bs[len(bs)-1].desc.Upper, Since: since},
		ar:   ar,
	}
	m.outLen = outLens{keys: lk, keyOffs: nk + 1, vals: lv, valOffs: nv + 1, updates: nu}
	for _, b := range bs {
		m.out.saturated = m.out.saturated || b.saturated
	}
	n := len(bs)
	if ar.Key == 1 && ar.Val == 1 {
		// One leaf per input, the first inputs on the shortest paths; a
		// largest input that holds enough of the merge (at the top of a
		// spine, about half) is merged beside the tree (kmergebig.go).
		m.k11 = newKway11(bs, prm)
		m.done = m.k11.finished()
		return m
	}
	p := 1
	for p < n {
		p *= 2
	}
	kw := &kway{
		ins: append([]*Batch(nil), bs...),
		k:   make([]int, p), v: make([]int, p), u: make([]int, p),
		ex:   make([]uint8, p),
		hk:   make([]int64, p),
		tree: make([]int32, p),
		p:    p,
	}
	for i := range p {
		if i >= n || bs[i].IsEmpty() {
			kw.ex[i], kw.hk[i] = 1, math.MaxInt64
			continue
		}
		if ar.Key == 1 {
			kw.hk[i] = bs[i].keys[0]
		}
	}
	kw.build()
	m.kw = kw
	m.done = kw.ex[kw.tree[0]] != 0
	return m
}

// build plays every match bottom up: winners climb, losers stay.
func (kw *kway) build() {
	p := kw.p
	win := make([]int32, 2*p)
	for i := range p {
		win[p+i] = int32(i)
	}
	for node := p - 1; node >= 1; node-- {
		a, b := win[2*node], win[2*node+1]
		if kw.less(int(b), int(a)) {
			a, b = b, a
		}
		win[node], kw.tree[node] = a, b
	}
	kw.tree[0] = win[1]
	if p == 1 {
		kw.tree[0] = 0
	}
}

// less reports whether input a's head sorts before input b's, by (key, val,
// time); an exhausted input sorts last.
func (kw *kway) less(a, b int) bool {
	if ea, eb := kw.ex[a], kw.ex[b]; ea|eb != 0 {
		return ea < eb
	}
	ba, bb := kw.ins[a], kw.ins[b]
	if ka := ba.ar.Key; ka == 1 {
		if x, y := kw.hk[a], kw.hk[b]; x != y {
			return x < y
		}
	} else if c := cmpRow(ba.key(kw.k[a]), bb.key(kw.k[b])); c != 0 {
		return c < 0
	}
	if c := cmpRow(ba.val(kw.v[a]), bb.val(kw.v[b])); c != 0 {
		return c < 0
	}
	return ba.times[kw.u[a]] < bb.times[kw.u[b]]
}

// work consumes up to f updates (exactly, unlike the two-way kernel's key
// granularity) and returns how many it consumed.
func (kw *kway) work(m *Merger, f int64) int64 {
	var used int64
	ka, va := m.ar.Key, m.ar.Val
	s, adv := m.s, m.adv
	o := &m.out
	nk, nv, nu := m.nk, m.nv, m.nu
	for used < f {
		w := int(kw.tree[0])
		if kw.ex[w] != 0 {
			break
		}
		b := kw.ins[w]
		k, v, u := kw.k[w], kw.v[w], kw.u[w]
		t := b.times[u]
		if adv && t < s {
			t = s
		}
		d := b.diffs[u]
		// Consolidate into the accumulator, or write it and start anew.
		if kw.has && t == kw.at && kw.sameKV(w, k, v) {
			kw.add(d)
		} else {
			if kw.has && kw.settle(m) != 0 {
				nk, nv, nu = kw.emit(o, ka, va, nk, nv, nu)
			}
			kw.has, kw.a, kw.ak, kw.av, kw.at, kw.ad = true, w, k, v, t, d
		}
		used++
		// Advance input w's head and replay its path.
		u++
		if u == int(b.valOffs[v+1]) {
			v++
			if v == int(b.keyOffs[k+1]) {
				k++
				if k == b.Keys() {
					kw.ex[w] = 1
				} else if ka == 1 {
					kw.hk[w] = b.keys[k]
				}
			}
		}
		kw.k[w], kw.v[w], kw.u[w] = k, v, u
		for node := (kw.p + w) >> 1; node >= 1; node >>= 1 {
			if l := int(kw.tree[node]); kw.less(l, w) {
				kw.tree[node] = int32(w)
				w = l
			}
		}
		kw.tree[0] = int32(w)
	}
	if kw.ex[kw.tree[0]] != 0 {
		if kw.has && kw.settle(m) != 0 {
			nk, nv, nu = kw.emit(o, ka, va, nk, nv, nu)
		}
		kw.has = false
		m.done = true
	}
	m.nk, m.nv, m.nu = nk, nv, nu
	return used
}

// add adds d to the accumulator's diff, going on in 128 bits once a
// partial sum leaves int64.
func (kw *kway) add(d int64) {
	if !kw.wide {
		s, o := addDiff(kw.ad, d)
		if !o {
			kw.ad = s
			return
		}
		kw.wide, kw.hi = true, kw.ad>>63
	}
	kw.hi, kw.ad = wideAdd(kw.hi, kw.ad, d)
}

// settle ends the accumulator's run: its diff is the exact sum, or, if
// that leaves int64, the bound of its sign (an overflow). It returns the
// diff.
func (kw *kway) settle(m *Merger) int64 {
	if kw.wide {
		kw.ad, kw.wide = m.settle(kw.hi, kw.ad), false
	}
	return kw.ad
}

// sameKV reports whether key k, val v of input w equal the accumulator's.
func (kw *kway) sameKV(w, k, v int) bool {
	b, a := kw.ins[w], kw.ins[kw.a]
	if b.ar.Key == 1 {
		if b.keys[k] != a.keys[kw.ak] {
			return false
		}
	} else if !rowsEqual(b.key(k), a.key(kw.ak)) {
		return false
	}
	return rowsEqual(b.val(v), a.val(kw.av))
}

// emit writes the accumulator's update, opening a key and a val when they
// differ from the last written ones, and returns the new counts.
func (kw *kway) emit(o *Batch, ka, va, nk, nv, nu int) (int, int, int) {
	src := kw.ins[kw.a]
	key := src.keys[kw.ak*ka : kw.ak*ka+ka]
	val := src.vals[kw.av*va : kw.av*va+va]
	newKey := nk == 0 || !rowsEqual(o.keys[(nk-1)*ka:nk*ka], key)
	if newKey {
		copy(o.keys[nk*ka:], key)
		nk++
	}
	if newKey || !rowsEqual(o.vals[(nv-1)*va:nv*va], val) {
		copy(o.vals[nv*va:], val)
		nv++
	}
	o.times[nu], o.diffs[nu] = kw.at, kw.ad
	nu++
	o.valOffs[nv] = uint32(nu)
	o.keyOffs[nk] = uint32(nv)
	return nk, nv, nu
}

// rowsEqual reports whether two rows of equal length are equal.
func rowsEqual(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
