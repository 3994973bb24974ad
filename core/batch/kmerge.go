package batch

import (
	"math"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
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
// The tree holds input indexes; an input's head is read from cached
// columns (hk, hv, ht: the key, val and time of the head when the arities
// are 1), so a match compares two int64 in the common case and falls back to
// rows only on equal keys or other arities.

// kway is the state of a k-way merge.
type kway struct {
	ins []*Batch
	// Per input: key, val and update index of the head; ex is 1 once the
	// input is exhausted.
	k, v, u []int
	ex      []uint8
	flat    []bool  // the input has one val per key and one update per val
	hk      []int64 // head key (arity 1; math.MaxInt64 once exhausted)
	tree    []int32 // tree[0] is the winner; tree[1:p] the losers of inner nodes
	p       int     // leaves: the power of two at or above len(ins)
	// Arity 1 only: head val, time and diff.
	hv, hd []int64
	ht     []uint64
	// Arity 1 only: the accumulator's key and val.
	akv, avv int64

	// The accumulator: the update being consolidated, by its source (input
	// a, key ak, val av of that input), advanced time at and diff ad.
	has    bool
	a      int
	ak, av int
	at     uint64
	ad     int64
}

// NewMergerN starts merging the adjacent batches bs (in time order, at least
// one) under the compaction frontier: the result describes [bs[0].Lower,
// bs[len-1].Upper) with since the join of theirs and the frontier (B4). Two
// batches merge with NewMerger's two-way kernel, more in one k-way pass.
// REQUIRES: bs[i].Upper == bs[i+1].Lower and equal arities.
func NewMergerN(bs []*Batch, compaction frontier.Frontier) *Merger {
	if len(bs) == 2 {
		return NewMerger(bs[0], bs[1], compaction)
	}
	if len(bs) == 0 {
		panic("batch: NewMergerN of no batches")
	}
	since := mergedSince(bs, compaction)
	var nk, nv, nu, lk, lv int
	for i, b := range bs {
		if invariants.Enabled && i > 0 {
			invariants.Assertf(bs[i-1].Upper() == b.Lower(), "batch: merge of non-adjacent %v and %v", bs[i-1].desc, b.desc)
			invariants.Assertf(bs[0].ar == b.ar, "batch: merge of arities %v and %v", bs[0].ar, b.ar)
		}
		nk, nv, nu = nk+b.Keys(), nv+b.Vals(), nu+b.Len()
		lk, lv = lk+len(b.keys), lv+len(b.vals)
	}
	ar := bs[0].ar
	m := &Merger{b1: bs[0], b2: bs[len(bs)-1], ar: ar, since: since}
	if t, ok := since.Time(); ok && t > 0 {
		m.s, m.adv = t, true
	}
	m.out = Batch{
		desc:    frontier.Description{Lower: bs[0].desc.Lower, Upper: bs[len(bs)-1].desc.Upper, Since: since},
		ar:      ar,
		keys:    make([]int64, lk),
		keyOffs: make([]uint32, nk+1),
		vals:    make([]int64, lv),
		valOffs: make([]uint32, nv+1),
		times:   make([]uint64, nu),
		diffs:   make([]int64, nu),
	}
	n := len(bs)
	p := 1
	for p < n {
		p *= 2
	}
	kw := &kway{
		ins: append([]*Batch(nil), bs...),
		k:   make([]int, p), v: make([]int, p), u: make([]int, p),
		ex:   make([]uint8, p),
		flat: make([]bool, p),
		hk:   make([]int64, p),
		tree: make([]int32, p),
		p:    p,
	}
	one := ar.Key == 1 && ar.Val == 1
	if one {
		kw.hv, kw.hd, kw.ht = make([]int64, p), make([]int64, p), make([]uint64, p)
	}
	for i := range p {
		if i >= n || bs[i].IsEmpty() {
			kw.ex[i], kw.hk[i] = 1, math.MaxInt64
			continue
		}
		if ar.Key == 1 {
			kw.hk[i] = bs[i].keys[0]
		}
		kw.flat[i] = bs[i].Keys() == bs[i].Len() && bs[i].Vals() == bs[i].Len()
		if one {
			kw.hv[i], kw.ht[i], kw.hd[i] = bs[i].vals[0], bs[i].times[0], bs[i].diffs[0]
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

// work11 is work for key and val arity 1: heads are cached values, the
// accumulator holds values, and a match on unequal keys picks its winner
// and loser with conditional moves (random keys make the comparison a coin
// toss a branch would mispredict half the time).
func (kw *kway) work11(m *Merger, f int64) int64 {
	var used int64
	hk, hv, ht, hd, ex, tree := kw.hk, kw.hv, kw.ht, kw.hd, kw.ex, kw.tree
	p := kw.p
	s := m.s // advancing by s == 0 is the identity
	o := &m.out
	oK, oKo, oV, oVo, oT, oD := o.keys, o.keyOffs, o.vals, o.valOffs, o.times, o.diffs
	nk, nv, nu := m.nk, m.nv, m.nu
	has, ak, av, at, ad := kw.has, kw.akv, kw.avv, kw.at, kw.ad
	w := int(tree[0])
	for used < f && ex[w] == 0 {
		x, y, t, d := hk[w], hv[w], max(ht[w], s), hd[w]
		if has && x == ak && y == av && t == at {
			ad = m.add(ad, d)
		} else {
			if has && ad != 0 {
				newKey := nk == 0 || oK[nk-1] != ak
				if newKey {
					oK[nk] = ak
					nk++
				}
				if newKey || oV[nv-1] != av {
					oV[nv] = av
					nv++
				}
				oT[nu], oD[nu] = at, ad
				nu++
				oVo[nv] = uint32(nu)
				oKo[nk] = uint32(nv)
			}
			has, ak, av, at, ad = true, x, y, t, d
		}
		used++
		// Advance input w's head: in a flat input key, val and update
		// indexes agree, so the offsets need not be read.
		b := kw.ins[w]
		k, v, u := kw.k[w], kw.v[w], kw.u[w]+1
		if kw.flat[w] {
			if u == len(b.times) {
				ex[w], hk[w] = 1, math.MaxInt64
			} else {
				hk[w], hv[w], ht[w], hd[w] = b.keys[u], b.vals[u], b.times[u], b.diffs[u]
			}
			kw.k[w], kw.v[w], kw.u[w] = u, u, u
		} else if u == int(b.valOffs[v+1]) {
			v++
			if v == int(b.keyOffs[k+1]) {
				k++
				if k == len(b.keys) {
					ex[w], hk[w] = 1, math.MaxInt64
				} else {
					hk[w] = b.keys[k]
				}
			}
			if ex[w] == 0 {
				hv[w], ht[w], hd[w] = b.vals[v], b.times[u], b.diffs[u]
			}
			kw.k[w], kw.v[w], kw.u[w] = k, v, u
		} else {
			ht[w], hd[w] = b.times[u], b.diffs[u]
			kw.u[w] = u
		}
		// Replay its path to the root.
		wk := hk[w]
		for node := (p + w) >> 1; node >= 1; node >>= 1 {
			l := int(tree[node])
			lk := hk[l]
			if lk == wk {
				if kw.less11(l, w) {
					tree[node] = int32(w)
					w = l
				}
				continue
			}
			nw, nl := w, l
			if lk < wk {
				nw, nl = l, w
			}
			tree[node] = int32(nl)
			w = nw
			wk = min(wk, lk)
		}
		tree[0] = int32(w)
	}
	if ex[w] != 0 {
		if has && ad != 0 {
			newKey := nk == 0 || oK[nk-1] != ak
			if newKey {
				oK[nk] = ak
				nk++
			}
			if newKey || oV[nv-1] != av {
				oV[nv] = av
				nv++
			}
			oT[nu], oD[nu] = at, ad
			nu++
			oVo[nv] = uint32(nu)
			oKo[nk] = uint32(nv)
		}
		has = false
		m.done = true
	}
	kw.has, kw.akv, kw.avv, kw.at, kw.ad = has, ak, av, at, ad
	m.nk, m.nv, m.nu = nk, nv, nu
	return used
}

// less11 is less for arity 1 on equal head keys: an exhausted input sorts
// last, then by val and time.
func (kw *kway) less11(a, b int) bool {
	if ea, eb := kw.ex[a], kw.ex[b]; ea|eb != 0 {
		return ea < eb
	}
	if x, y := kw.hv[a], kw.hv[b]; x != y {
		return x < y
	}
	return kw.ht[a] < kw.ht[b]
}

// work consumes up to f updates (exactly, unlike the two-way kernel's key
// granularity) and returns how many it consumed.
func (kw *kway) work(m *Merger, f int64) int64 {
	if kw.hv != nil {
		return kw.work11(m, f)
	}
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
			kw.ad = m.add(kw.ad, d)
		} else {
			if kw.has && kw.ad != 0 {
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
		if kw.has && kw.ad != 0 {
			nk, nv, nu = kw.emit(o, ka, va, nk, nv, nu)
		}
		kw.has = false
		m.done = true
	}
	m.nk, m.nv, m.nu = nk, nv, nu
	return used
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
