package batch

import (
	"unsafe"

	"github.com/tracebench/tracebench/internal/invariants"
)

// The largest input beside the tree (kwBig). At the top of a steady trace
// the largest batch holds about half of a merge's updates, and in the loser
// tree each of them paid what every other update pays: a replay of its
// path, the winner's copy into the block and its refill checks, about 200
// instructions. Merged beside the tree instead, it pays one step of a
// branch-free two-way merge of the tree's block with its own staged
// updates: the tree selects the other inputs' updates a block at a time,
// as before, and merge2 interleaves them with the largest input's. Every
// update then passes the two-way step once, so the split pays when the
// largest input holds enough of the merge (kwParams.big) to outweigh it.

// kwParams tune the kernel for one-column keys and vals.
type kwParams struct {
	// stage is how many updates of each input the tree stages at a time
	// (kwStage); the input beside the tree stages four times as many.
	stage int
	// big is the least share of a merge's updates its largest input must
	// hold to be merged beside the tree (over 1: never), in a merge of at
	// least bigMin inputs (3 at the least: two merge with the two-way
	// kernel).
	big    float64
	bigMin int
	// slow: selectBlock runs every update in Go, not its common ones in
	// assembly where there is an assembly loop (tests compare the two).
	slow bool
}

// kwDefault are the kernel's parameters outside tests: a split from a
// share of 0.4 in a merge of five inputs or more (BenchmarkMergeShare,
// medians of 5). With 17 inputs and 5, the split ran 6–11% faster than
// the tree alone at shares of 0.4 and a half (the top batch's share in
// every top merge of a steady trace: 1M updates of 2M), and slower at a
// quarter; at a third it ran 3% faster with 17 and 8% slower with 5. With
// 4 inputs it was faster only at a half. The two-way step is not free
// (about 45 instructions and a chain of dependent loads, every record),
// so the equal batches of the lower levels stay in the tree.
var kwDefault = kwParams{stage: kwStage, big: 0.4, bigMin: 5}

// bigInput returns the index of the largest of bs (the first of equal
// ones) when it holds at least prm.big of their updates and there are
// prm.bigMin of them or more (and 3 or more), else -1.
func bigInput(bs []*Batch, prm kwParams) int {
	share := prm.big
	if len(bs) < max(3, prm.bigMin) || share > 1 {
		return -1
	}
	total, big := 0, 0
	for i, b := range bs {
		total += b.Len()
		if b.Len() > bs[big].Len() {
			big = i
		}
	}
	if total == 0 || float64(bs[big].Len()) < share*float64(total) {
		return -1
	}
	return big
}

// kwBig is the input merged beside the tree: its cursor and staged
// updates, the tree's block's records not yet merged, and the block
// merge2 fills for emit.
type kwBig struct {
	in kin
	// buf holds the tree's block (kway11.blk is buf[:nb]) and then this
	// input's stage (stg, buf[nb:]), so that merge2 picks either side's
	// head by an index computed without a branch.
	buf    []rec
	nb     int
	stg    []rec // staged updates: stg[j:e]
	j, e   int
	ia, na int // the tree's block's next records: kway11.blk[ia:na]
	out    []rec
}

// newKwBig starts the input bs[i] beside the tree kw, staging 4*stage of
// its updates at a time, and moves kw's block into its buffer.
func newKwBig(kw *kway11, bs []*Batch, i, stage int) *kwBig {
	b := bs[i]
	total := 0
	for _, x := range bs {
		total += x.Len()
	}
	nb := len(kw.blk)
	buf := make([]rec, nb+max(1, min(4*stage, b.Len())))
	kw.blk = buf[:nb:nb]
	return &kwBig{
		in:  kin{b: b, flat: b.Keys() == b.Len() && b.Vals() == b.Len()},
		buf: buf, nb: nb, stg: buf[nb:],
		out: make([]rec, min(kwBlock, max(total, 1))),
	}
}

// drained reports whether g has nothing left to merge but the tree's.
func (g *kwBig) drained() bool {
	c := &g.in
	return g.j == g.e && (c.b == nil || c.u == len(c.b.times))
}

// finished reports whether every input of the merge is consumed.
func (kw *kway11) finished() bool {
	if !kw.exhausted {
		return false
	}
	return kw.big == nil || kw.big.ia == kw.big.na && kw.big.drained()
}

// workBig is work when an input is merged beside the tree.
func (kw *kway11) workBig(m *Merger, f int64) int64 {
	g := kw.big
	var used int64
	for used < f {
		o := g.fill(kw, int(min(f-used, int64(len(g.out)))))
		if o == 0 {
			break
		}
		m.growOut(o) // emit writes at most one update per record
		kw.emit(m, g.out[:o])
		used += int64(o)
	}
	if kw.finished() {
		kw.finish(m)
	}
	return used
}

// fill writes the next lim records at most, in (key, val, time) order, to
// g.out, and returns how many: fewer only when every input is consumed. The
// tree refills its block (selectBlock) when merge2 has taken all of it, the
// input beside it its stage.
func (g *kwBig) fill(kw *kway11, lim int) int {
	o := 0
	for o < lim {
		if g.ia == g.na && !kw.exhausted {
			g.na, g.ia = kw.selectBlock(len(kw.blk)), 0
		}
		if g.j == g.e {
			g.e, g.j = stageFrom(&g.in, g.stg), 0
		}
		switch a, b := g.na > g.ia, g.e > g.j; {
		case a && b:
			o = g.merge2(o, lim)
		case a:
			n := copy(g.out[o:lim], kw.blk[g.ia:g.na])
			g.ia += n
			o += n
		case b:
			n := copy(g.out[o:lim], g.stg[g.j:g.e])
			g.j += n
			o += n
		default:
			return o
		}
	}
	return o
}

// merge2 merges the tree's records blk[g.ia:g.na] with the staged
// g.stg[g.j:g.e] into g.out from o, until lim records are there or either
// side's run is taken, and returns the new o. The lesser head is chosen
// without a branch (random keys make each comparison a coin toss), as the
// branch-free merge limit does (MergeLimit); equal (key,
// val, time) may come in either order, emit sums them.
func (g *kwBig) merge2(o, lim int) int {
	// Both sides index buf: the tree's from 0, this input's from nb.
	ia, na, j, e := g.ia, g.na, g.nb+g.j, g.nb+g.e
	if invariants.Enabled {
		invariants.Assertf(0 <= ia && ia < na && na <= g.nb && g.nb <= j && j < e && e <= len(g.buf) && o < lim && lim <= len(g.out),
			"batch: two-way step over block [%d, %d) of %d and stage [%d, %d) of %d into [%d, %d) of %d", ia, na, g.nb, j, e, len(g.buf), o, lim, len(g.out))
	}
	// Through base pointers: with bounds checks and the slices' lengths
	// live, the loop kept its indexes on the stack.
	bp, op := unsafe.Pointer(unsafe.SliceData(g.buf)), unsafe.Pointer(unsafe.SliceData(g.out))
	const sz = unsafe.Sizeof(rec{})
	for o < lim && ia < na && j < e {
		// n steps stay inside every bound: each takes one record of
		// one side and writes one.
		n := min(lim-o, na-ia, e-j)
		x, y := merge2Steps(bp, op, uintptr(ia)*sz, uintptr(j)*sz, uintptr(o)*sz, uintptr(o+n)*sz)
		o, ia, j = o+n, int(x/sz), int(y/sz)
	}
	g.ia, g.j = ia, j-g.nb
	return o
}

// merge2Steps is merge2's loop on byte offsets from the base pointers: it
// writes the records from d up to end to out (at op), each the lesser of
// the heads at x and y in buf (at bp), and returns the heads after them.
// Its own function, so that its values keep their registers: inside merge2
// the compiler reloaded the outer loop's bounds from the stack every step.
//
//go:noinline
func merge2Steps(bp, op unsafe.Pointer, x, y, d, end uintptr) (uintptr, uintptr) {
	const sz = unsafe.Sizeof(rec{})
	for ; d < end; d += sz {
		px, py := (*rec)(unsafe.Add(bp, x)), (*rec)(unsafe.Add(bp, y))
		ta := uintptr(b2i(px.k < py.k) | b2i(px.k == py.k)&(b2i(px.v < py.v)|b2i(px.v == py.v)&b2i(px.t < py.t)))
		// Copied as two halves of 16 bytes, the record moves through
		// vector registers; as a struct, through four of the general
		// ones the loop needs.
		src, dst := unsafe.Add(bp, y+(x-y)&-ta), unsafe.Add(op, d)
		*(*[2]uint64)(dst) = *(*[2]uint64)(src)
		*(*[2]uint64)(unsafe.Add(dst, 16)) = *(*[2]uint64)(unsafe.Add(src, 16))
		x += ta * sz
		y += (1 - ta) * sz
	}
	return x, y
}
