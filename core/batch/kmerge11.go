package batch

import (
	"math"
	"unsafe"

	"github.com/tracebench/tracebench/internal/invariants"
)

// The k-way kernel for one-column keys and vals (kway11), in two loops that
// take turns a block at a time: selectBlock fills a block of up to kwBlock
// records (rec, the builder's 32-byte record) in (key, val, time) order
// from the inputs, and emit advances their times, consolidates them and
// writes them to the output's columns. Apart, each loop keeps more of its
// state in registers (together they spilled it to the stack on every
// update), and selectBlock's work per update is the loser tree's replay
// alone.
//
// Each input's next updates are staged (stg, kwStage of them at a time),
// and the tree keeps the losers' head keys beside their inputs (nd), so a
// replay reads the path's nodes by address and compares int64s, choosing
// winner and loser with conditional moves (random keys make each match a
// coin toss a branch would mispredict half the time); only equal keys read
// the staged vals and times. An exhausted input's head is a sentinel of key
// math.MaxInt64 and diff 0 (no real update has diff 0, B2), and it loses
// every tie (ex).

// kwBlock is the records selectBlock passes to emit at a time: 8 KiB, well
// inside the first-level cache beside the tree and the inputs' heads.
const kwBlock = 256

// kwStage is how many updates of each input the kernel stages at a time
// (stg): the replay reads heads from the stage, never from the inputs'
// columns, and a refill copies the next kwStage updates of one input in a
// burst whose loads the core issues together. Read one update at a time
// from its columns, a k-way merge follows 4k streams (keys, vals, times
// and diffs of every input), more than the hardware prefetchers track, and
// the winner's next key missed the cache on the replay's critical path.
// 64 updates of 16 inputs are 32 KiB; 32 ran 11% slower in the steady
// state, 128 about 3% faster (within the host's noise) for twice the stage.
const kwStage = 64

// kway11 is the state of a k-way merge of one-column keys and vals.
type kway11 struct {
	in  []kin   // per input
	ex  []uint8 // 1 once an input is exhausted
	stg []rec   // staged updates: input i's are stg[pos[i]:end[i]]
	pos []int32 // input i's head in stg
	end []int32
	off []int32 // input i's region of stg starts at off[i]
	cp  []int32 // and holds cp[i] updates
	nd  []knode // nd[n]: the loser of inner node n and its head key
	// nx[i] is the key of input i's update after its head (nextKey): its
	// new head's key once it wins, read without waiting for its position.
	nx []int64
	p  int   // leaves: one per input
	wk int64 // the winner's head key and input
	wi int32
	// The accumulator: the last (key, val, advanced time) emit saw and its
	// summed diff, written once a different one arrives.
	has    bool
	ak, av int64
	at     uint64
	ad     int64
	// wide: the accumulator's sum is out of int64, ad its low word and hi
	// its high word (as kway's), until the run ends.
	wide      bool
	hi        int64
	blk       []rec
	exhausted bool // every input in the tree consumed (the winner is exhausted)
	// big is the largest input when it is merged beside the tree, not in
	// it (kwBig); nil when every input is in the tree.
	big *kwBig
	// fast: selectBlock runs its common updates in assembly (selectFast).
	fast bool
	// galloped counts the updates gallop moved (tests: the Go loop and
	// the assembly one gallop alike).
	galloped int
}

// knode is an inner node of the loser tree: the input that lost its match
// there and that input's head key.
type knode struct {
	k int64
	i int32
}

// kin is the cursor of one input: its batch (nil when empty) and the
// key, val and update index of its next update to stage. In a flat input
// (one val per key and one update per val) the three indexes agree and only
// u is kept.
type kin struct {
	b       *Batch
	k, v, u int
	flat    bool
}

// newKway11 starts the kernel over bs, staging up to stage updates of each.
// Its loser tree has one leaf per input, at p..2p-1 (p = len(bs)) below the
// inner nodes 1..p-1, node n's children 2n and 2n+1: complete but for its
// last level, whatever p is, so input i replays a path of floor or ceil
// log2 p matches, the short ones for the first inputs. (Padded to a power of
// two, every path would also play matches against exhausted leaves.)
func newKway11(bs []*Batch, prm kwParams) *kway11 {
	if i := bigInput(bs, prm); i >= 0 {
		rest := append(append(make([]*Batch, 0, len(bs)-1), bs[:i]...), bs[i+1:]...)
		kw := newKway11(rest, kwParams{stage: prm.stage, big: 2, slow: prm.slow})
		kw.big = newKwBig(kw, bs, i, prm.stage)
		return kw
	}
	stage := prm.stage
	p := len(bs)
	total := 0
	for _, b := range bs {
		total += b.Len()
	}
	kw := &kway11{
		in: make([]kin, p), ex: make([]uint8, p),
		nd: make([]knode, p), nx: make([]int64, p),
		p: p,
		// A merge of small batches (rounds of a few updates) needs no
		// more block than it has updates.
		blk:  make([]rec, min(kwBlock, max(total, 1))),
		fast: kwHasFast && !prm.slow,
	}
	idx := make([]int32, 4*p)
	kw.pos, kw.end, kw.off, kw.cp = idx[:p:p], idx[p:2*p:2*p], idx[2*p:3*p:3*p], idx[3*p:]
	// Each input's region holds stage updates at most, its length at
	// most, and one at least (an exhausted input's sentinel).
	n := 0
	for i, b := range bs {
		c := max(1, min(stage, b.Len()))
		kw.off[i], kw.cp[i] = int32(n), int32(c)
		n += c
	}
	kw.stg = make([]rec, n)
	heads := make([]int64, p)
	for i, b := range bs {
		if !b.IsEmpty() {
			kw.in[i] = kin{b: b, flat: b.Keys() == b.Len() && b.Vals() == b.Len()}
		}
		kw.refill(i)
		heads[i] = kw.stg[kw.pos[i]].k
		kw.nx[i] = kw.nextKey(i, kw.pos[i])
	}
	// Play every match bottom up: winners climb, losers stay.
	win := make([]int32, 2*p)
	for i := range p {
		win[p+i] = int32(i)
	}
	for n := p - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if ka, kb := heads[a], heads[b]; kb < ka || kb == ka && kw.lessHead(int(b), int(a)) == 1 {
			a, b = b, a
		}
		win[n] = a
		kw.nd[n] = knode{heads[b], b}
	}
	w := int32(0)
	if p > 1 {
		w = win[1]
	}
	kw.wk, kw.wi = heads[w], w
	kw.exhausted = kw.ex[w] != 0
	return kw
}

// refill stages input w's next updates (its region was consumed); an
// input with none left stages a sentinel of key math.MaxInt64 and is
// marked exhausted.
func (kw *kway11) refill(w int) {
	o := kw.off[w]
	dst := kw.stg[o : o+kw.cp[w]]
	m := stageFrom(&kw.in[w], dst)
	if m == 0 {
		dst[0] = rec{k: math.MaxInt64}
		kw.ex[w] = 1
		m = 1
	}
	kw.pos[w], kw.end[w] = o, o+int32(m)
}

// stageFrom copies c's next updates, up to len(dst), into dst as records
// and returns how many it copied: 0 once c has none left.
func stageFrom(c *kin, dst []rec) int {
	b := c.b
	m := 0
	switch {
	case b == nil || c.u == len(b.times):
	case c.flat:
		m = min(len(dst), len(b.keys)-c.u)
		u := c.u
		ks, vs, ts, ds := b.keys[u:u+m], b.vals[u:u+m], b.times[u:u+m], b.diffs[u:u+m]
		for i := range ks {
			dst[i] = rec{ks[i], vs[i], ts[i], ds[i]}
		}
		c.u = u + m
	default:
		k, v, u := c.k, c.v, c.u
		keys, vals, times, diffs, keyOffs, valOffs := b.keys, b.vals, b.times, b.diffs, b.keyOffs, b.valOffs
		for m < len(dst) && u < len(times) {
			dst[m] = rec{keys[k], vals[v], times[u], diffs[u]}
			m++
			u++
			if u == int(valOffs[v+1]) {
				v++
				if v == int(keyOffs[k+1]) {
					k++
				}
			}
		}
		c.k, c.v, c.u = k, v, u
	}
	return m
}

// nextKey returns the key of input w's update after the staged one at h:
// staged after it, else the first not yet staged, else (none left) the
// sentinel's math.MaxInt64, as a refill stages them.
func (kw *kway11) nextKey(w int, h int32) int64 {
	if h+1 < kw.end[w] {
		return kw.stg[h+1].k
	}
	if c := &kw.in[w]; c.b != nil && c.u < len(c.b.times) {
		if c.flat {
			return c.b.keys[c.u] // a flat cursor keeps only u
		}
		return c.b.keys[c.k]
	}
	return math.MaxInt64
}

// lessHead is 1 if input a's head sorts before input b's when their keys
// are equal (an exhausted input sorts last, then by val and time), else 0.
func (kw *kway11) lessHead(a, b int) int {
	if ea, eb := kw.ex[a], kw.ex[b]; ea|eb != 0 {
		return b2i(ea < eb)
	}
	ra, rb := &kw.stg[kw.pos[a]], &kw.stg[kw.pos[b]]
	return b2i(ra.v < rb.v) | b2i(ra.v == rb.v)&b2i(ra.t < rb.t)
}

// work consumes up to f updates (exactly, unless the merge ends first) and
// returns how many it consumed.
func (kw *kway11) work(m *Merger, f int64) int64 {
	if kw.big != nil {
		return kw.workBig(m, f)
	}
	var used int64
	for used < f && !kw.exhausted {
		n := kw.selectBlock(int(min(f-used, int64(len(kw.blk)))))
		m.growOut(n) // emit writes at most one update per record
		kw.emit(m, kw.blk[:n])
		used += int64(n)
	}
	if kw.exhausted {
		kw.finish(m)
	}
	return used
}

// finish writes the accumulator's last update, if it did not cancel, and
// marks the merge done: every input is consumed.
func (kw *kway11) finish(m *Merger) {
	if kw.wide {
		kw.ad, kw.wide = m.settle(kw.hi, kw.ad), false
	}
	if kw.has && kw.ad != 0 {
		m.growOut(1)
		kw.flush(m)
	}
	kw.has = false
	m.done = true
}

// kwayGallop is how many updates in a row one input must win before
// selectBlock looks for a run of its staged updates below every other head
// and moves the run in bulk (gallop). Equal-sized inputs of random keys
// rarely reach it, so they pay almost nothing for the check; a merge where
// one input dominates (the largest batch of a steady trace) moves most of
// its updates in runs.
const kwayGallop = 4

// selectBlock fills kw.blk with the next lim records at most, in order, and
// returns how many it wrote. Once an input has won kwayGallop updates in a
// row, its staged updates below the least other head move to the block in
// bulk (gallop). The loop reads and writes the block, the stage and the
// inputs' positions, ends and next keys through their base pointers: with
// a bounds check on every access and every slice's length live, it kept
// most of its values on the stack. An invariants build asserts each index.
func (kw *kway11) selectBlock(lim int) int {
	if invariants.Enabled {
		invariants.Assertf(lim <= len(kw.blk) && len(kw.pos) == kw.p && len(kw.end) == kw.p && len(kw.nx) == kw.p && len(kw.nd) == kw.p, "batch: k-way block of %d records for %d, or arrays not of its %d inputs", len(kw.blk), lim, kw.p)
	}
	blkp, stgp := unsafe.Pointer(unsafe.SliceData(kw.blk)), unsafe.Pointer(unsafe.SliceData(kw.stg))
	posp, endp := unsafe.Pointer(unsafe.SliceData(kw.pos)), unsafe.Pointer(unsafe.SliceData(kw.end))
	nxp, ndp := unsafe.Pointer(unsafe.SliceData(kw.nx)), unsafe.SliceData(kw.nd)
	p := uint(kw.p)
	wk, wi := kw.wk, kw.wi
	run := 0 // updates in a row won by wi
	o := 0
	for o < lim && !(wk == math.MaxInt64 && kw.ex[wi] != 0) {
		if kw.fast && run < kwayGallop {
			// The common updates in assembly, up to the next that needs
			// more (kselect_amd64.s); this loop takes that one.
			f := kwFast{blk: blkp, o: o, stg: stgp, pos: posp, end: endp, nx: nxp, nd: unsafe.Pointer(ndp), p: p, wk: wk, wi: int64(wi), run: int64(run),
				bend: uintptr(blkp) + uintptr(lim)*unsafe.Sizeof(rec{})}
			selectFast(&f)
			o, wk, wi, run = f.o, f.wk, int32(f.wi), int(f.run)
			if o >= lim || wk == math.MaxInt64 && kw.ex[wi] != 0 {
				break
			}
		}
		w := uintptr(wi)
		// The new head's key, known before the head's position is: the
		// replay below, on the chain from one winner to the next, waits
		// on one load, not two.
		nk := *(*int64)(unsafe.Add(nxp, w*8))
		hp, ep := (*int32)(unsafe.Add(posp, w*4)), (*int32)(unsafe.Add(endp, w*4))
		h := *hp
		// Asserted only when the check fails: boxing the message's
		// arguments allocates, every update.
		if invariants.Enabled && !(w < uintptr(p) && int(h) < len(kw.stg) && o < len(kw.blk)) {
			invariants.Assertf(false, "batch: k-way input %d of %d, stage index %d of %d, block index %d of %d", w, p, h, len(kw.stg), o, len(kw.blk))
		}
		*(*rec)(unsafe.Add(blkp, uintptr(o)*unsafe.Sizeof(rec{}))) = *(*rec)(unsafe.Add(stgp, uintptr(h)*unsafe.Sizeof(rec{})))
		o++
		h++
		if run >= kwayGallop && o < lim {
			h, o, nk = kw.gallop(int(w), h, o, lim, nk)
			run = 0
		}
		e := *ep
		if h == e {
			kw.refill(int(w))
			h, e = *hp, *ep
		} else {
			*hp = h
		}
		if invariants.Enabled && !(int(h) < len(kw.stg) && nk == kw.stg[h].k) {
			invariants.Assertf(false, "batch: k-way input %d's next key %d, its head's (stage index %d of %d) %d", w, nk, h, len(kw.stg), kw.stg[min(int(h), len(kw.stg)-1)].k)
		}
		// The key after the new head, for w's next win, before the
		// replay: the call clobbers every register, so what is done
		// before it need not be kept across it.
		if h+1 < e {
			// nextKey's common case, inline.
			*(*int64)(unsafe.Add(nxp, w*8)) = (*rec)(unsafe.Add(stgp, uintptr(h+1)*unsafe.Sizeof(rec{}))).k
		} else {
			*(*int64)(unsafe.Add(nxp, w*8)) = kw.nextKey(int(w), h)
		}
		// Replay w's path to the root with its new head.
		ck, ci := replay(ndp, (*rec)(stgp), (*int32)(posp), (p+uint(w))>>1, nk, wi)
		if ci == wi {
			run++
		} else {
			run = 0
		}
		wk, wi = ck, ci
	}
	kw.wk, kw.wi = wk, wi
	kw.exhausted = wk == math.MaxInt64 && kw.ex[wi] != 0
	return o
}

// gallop moves input w's staged updates from h on that sort below every
// other input's head (the least key among the losers on w's path, which
// hold the best of every other subtree) to the block at o, up to lim and
// the end of w's stage, and returns the new h and o and w's next head's
// key: nk, or the key after the run when it moved any.
func (kw *kway11) gallop(w int, h int32, o, lim int, nk int64) (int32, int, int64) {
	sec := int64(math.MaxInt64)
	for n := (kw.p + w) >> 1; n >= 1; n >>= 1 {
		sec = min(sec, kw.nd[n].k)
	}
	stg, blk := kw.stg, kw.blk[:lim]
	e := min(kw.end[w], h+int32(lim-o))
	moved := h
	for h < e && stg[h].k < sec {
		blk[o] = stg[h]
		o++
		h++
	}
	if h != moved {
		nk = kw.nextKey(w, h-1) // the key after the run
		kw.galloped += int(h - moved)
	}
	return h, o, nk
}

// replay plays input ci's new head key ck up the loser tree from inner node
// n to the root and returns the winner's head key and input. nd, stg and pos
// are the tree's nodes, the stage and the inputs' head positions, by their
// first elements: every node index on the path is below p, every input's
// head lies in the stage. It is a function of its own, on pointers, so that
// its loop holds its values in registers: inside selectBlock, beside the
// block, the stage and the run, the compiler kept the path's key and node
// index on the stack, a store and a reload inside every match's chain.
func replay(nd *knode, stg *rec, pos *int32, n uint, ck int64, ci int32) (int64, int32) {
	for ; n >= 1; n >>= 1 {
		np := (*knode)(unsafe.Add(unsafe.Pointer(nd), n*uint(unsafe.Sizeof(knode{}))))
		lk, li := np.k, np.i
		// The lesser key goes on, the greater stays, chosen without a
		// branch: min and max compile to conditional moves (the next
		// match waits on a compare and a move, not on a mask built from
		// it), and the inputs swap through a mask. Equal keys order by
		// val and time.
		sw := b2i(lk < ck)
		if lk == ck {
			// An exhausted input's head is its sentinel, the one staged
			// update of diff 0 (B2), and sorts last.
			ra := (*rec)(unsafe.Add(unsafe.Pointer(stg), uintptr(*(*int32)(unsafe.Add(unsafe.Pointer(pos), uintptr(li)*4)))*unsafe.Sizeof(rec{})))
			rb := (*rec)(unsafe.Add(unsafe.Pointer(stg), uintptr(*(*int32)(unsafe.Add(unsafe.Pointer(pos), uintptr(ci)*4)))*unsafe.Sizeof(rec{})))
			ea, eb := b2i(ra.d == 0), b2i(rb.d == 0)
			sw = b2i(ea < eb) | b2i(ea|eb == 0)&(b2i(ra.v < rb.v)|b2i(ra.v == rb.v)&b2i(ra.t < rb.t))
		}
		x := (ci ^ li) & -int32(sw)
		np.k, np.i = max(lk, ck), li^x
		ck, ci = min(lk, ck), ci^x
	}
	return ck, ci
}

// emit advances the times of rs by the merge's since, consolidates equal
// (key, val, time) through the accumulator and writes the rest to the
// output's columns, opening a key and a val when they differ from the last
// written ones, so no key owns zero vals and no val zero updates (B2) even
// when everything under it cancels. The columns have room for one update
// per record of rs (work's growOut): emit writes them through their base
// pointers, without the bounds checks and the lengths that kept its loop's
// values on the stack.
func (kw *kway11) emit(m *Merger, rs []rec) {
	if len(rs) == 0 {
		return
	}
	s := m.s // advancing by s == 0 is the identity
	o := &m.out
	nk, nv, nu := m.nk, m.nv, m.nu
	if invariants.Enabled {
		// Room for one more update, key and val per record, up to what
		// the merge can hold at most (growOut).
		u, k, v := min(nu+len(rs), m.maxOut), min(nk+len(rs), m.maxK), min(nv+len(rs), m.maxV)
		invariants.Assertf(u <= len(o.times) && u <= len(o.diffs) && k <= len(o.keys) && k < len(o.keyOffs) && v <= len(o.vals) && v < len(o.valOffs),
			"batch: k-way emit of %d records into columns of %d/%d/%d updates holding %d/%d/%d", len(rs), len(o.keys), len(o.vals), len(o.times), nk, nv, nu)
	}
	oK, oKo := unsafe.Pointer(unsafe.SliceData(o.keys)), unsafe.Pointer(unsafe.SliceData(o.keyOffs))
	oV, oVo := unsafe.Pointer(unsafe.SliceData(o.vals)), unsafe.Pointer(unsafe.SliceData(o.valOffs))
	oT, oD := unsafe.Pointer(unsafe.SliceData(o.times)), unsafe.Pointer(unsafe.SliceData(o.diffs))
	if !kw.has {
		// The merge's first record opens the accumulator.
		r := &rs[0]
		kw.has, kw.ak, kw.av, kw.at, kw.ad = true, r.k, r.v, max(r.t, s), r.d
		rs = rs[1:]
	}
	ak, av, at, ad := kw.ak, kw.av, kw.at, kw.ad
	wide, hi := kw.wide, kw.hi
	for i := 0; i < len(rs); i++ {
		// Not while a sum is wide: the assembly adds in int64.
		if kw.fast && !wide {
			// The records in assembly, up to one whose sum overflows
			// (kselect_amd64.s); this loop takes that one.
			f := kwEmit{rs: unsafe.Pointer(unsafe.SliceData(rs)), i: i, n: len(rs), s: s, ak: ak, av: av, at: at, ad: ad, nk: nk, nv: nv, nu: nu, oK: oK, oKo: oKo, oV: oV, oVo: oVo, oT: oT, oD: oD}
			emitFast(&f)
			i, ak, av, at, ad, nk, nv, nu = f.i, f.ak, f.av, f.at, f.ad, f.nk, f.nv, f.nu
			if i == len(rs) {
				break
			}
		}
		r := &rs[i]
		t := max(r.t, s)
		if r.k == ak && r.v == av && t == at {
			// A partial sum out of int64 goes on in 128 bits (as kway.add).
			if !wide {
				sum, o := addDiff(ad, r.d)
				if !o {
					ad = sum
					continue
				}
				wide, hi = true, ad>>63
			}
			hi, ad = wideAdd(hi, ad, r.d)
			continue
		}
		if wide {
			ad, wide = m.settle(hi, ad), false
		}
		if ad != 0 {
			newKey := nk == 0 || *(*int64)(unsafe.Add(oK, (nk-1)*8)) != ak
			if newKey {
				*(*int64)(unsafe.Add(oK, nk*8)) = ak
				nk++
			}
			if newKey || *(*int64)(unsafe.Add(oV, (nv-1)*8)) != av {
				*(*int64)(unsafe.Add(oV, nv*8)) = av
				nv++
			}
			*(*uint64)(unsafe.Add(oT, nu*8)) = at
			*(*int64)(unsafe.Add(oD, nu*8)) = ad
			nu++
			*(*uint32)(unsafe.Add(oVo, nv*4)) = uint32(nu)
			*(*uint32)(unsafe.Add(oKo, nk*4)) = uint32(nv)
		}
		ak, av, at, ad = r.k, r.v, t, r.d
	}
	kw.ak, kw.av, kw.at, kw.ad = ak, av, at, ad
	kw.wide, kw.hi = wide, hi
	m.nk, m.nv, m.nu = nk, nv, nu
}

// flush writes the accumulator's update (its diff is not zero).
func (kw *kway11) flush(m *Merger) {
	o := &m.out
	nk, nv, nu := m.nk, m.nv, m.nu
	newKey := nk == 0 || o.keys[nk-1] != kw.ak
	if newKey {
		o.keys[nk] = kw.ak
		nk++
	}
	if newKey || o.vals[nv-1] != kw.av {
		o.vals[nv] = kw.av
		nv++
	}
	o.times[nu], o.diffs[nu] = kw.at, kw.ad
	nu++
	o.valOffs[nv] = uint32(nu)
	o.keyOffs[nk] = uint32(nv)
	m.nk, m.nv, m.nu = nk, nv, nu
}

// b2i is 1 for true and 0 for false (compiled to a flag move, not a branch).
func b2i(c bool) int {
	if c {
		return 1
	}
	return 0
}
