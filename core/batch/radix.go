package batch

import (
	"math/bits"
	"slices"
	"unsafe"

	"github.com/tracebench/tracebench/internal/invariants"
)

// Radix sort for the Builder.
//
// Every update gets a packed major key: each field of (key columns, val
// columns, time), taken as an order-preserving uint64 (signed columns with
// the sign bit flipped) minus the field's minimum, is shifted into place,
// major field first, for the longest prefix of fields whose range widths fit
// in 64 bits together. So keys compare as the updates do on those fields,
// and the key is complete when it packs every field.
//
// An LSD radix sort scatters on the top bits of the key only: about
// log2(n)+1 of them (radixPlan), enough to spread n updates into runs of a
// few, in at most ceil(that/radixDigitBits) passes whatever the fields'
// widths. Digits the same in every update are skipped. Then runs of equal
// top bits are sorted by comparison (insertion sort when short, pdqsort when
// not), on the whole key and then the fields left out of it.
//
// Updates of arity at most 1 are sorted as 32-byte records that carry
// everything (the key is recomputed in each pass, which costs less than
// moving it), up to bucketSortMax of them in one bucket pass instead
// (bucketSort: the top log2(n) bits, at most 16, number a record's bucket,
// the records scatter once, and buckets of several are sorted by
// comparison). Wider ones are sorted as 16-byte (key, index) pairs and then
// gathered.
//
// For BenchmarkBuild (keys uniform over 2^18 values, vals over all of int64,
// times over [0, 10)) the key is k alone; at a million updates its top 16
// bits number the buckets and buckets of about 15 records (4 keys) are
// insertion-sorted by (k, v, t).

// radixDigitBits is the widest digit of a scatter pass. 2^11 counters of
// uint32 fill 8 KiB, which stays in L1 with the scatter's write heads.
const radixDigitBits = 11

// defaultRadixMin is the fewest updates the builder radix-sorts; below it
// pdqsort wins on its lower constant cost.
const defaultRadixMin = 64

// insertionMax is the longest run sorted by insertion.
const insertionMax = 24

const signBit = 1 << 63

// radixPlan is which bits of the packed key the scatter passes sort on:
// passes digits of width bits, from bit drop up.
type radixPlan struct {
	passes int
	width  uint
	drop   uint
}

// planRadix plans a radix sort of n updates on keys of the given width.
func planRadix(n, keyBits int) radixPlan {
	rb := min(keyBits, bits.Len(uint(n))+1)
	if rb == 0 {
		return radixPlan{}
	}
	passes := (rb + radixDigitBits - 1) / radixDigitBits
	width := (rb + passes - 1) / passes
	return radixPlan{passes: passes, width: uint(width), drop: uint(keyBits - rb)}
}

// counts returns zeroed histograms for the plan, reusing c.
func (p radixPlan) counts(c []uint32) []uint32 {
	c = slices.Grow(c[:0], p.passes<<p.width)[:p.passes<<p.width]
	clear(c)
	return c
}

// offsets turns the histogram c of a pass into start offsets and reports
// whether the pass moves anything (false when every update has one digit,
// the digit of first).
func offsets(c []uint32, first uint64, n int) bool {
	if c[first] == uint32(n) {
		return false
	}
	sum := uint32(0)
	for i, x := range c {
		c[i] = sum
		sum += x
	}
	return true
}

// radixKey packs the major key of a 32-byte record; see above.
type radixKey struct {
	kmin, vmin, tmin uint64
	sk, sv, st       uint // shifts; 64 drops the field
	bits             int  // significant bits of the packed key
	complete         bool // the key orders records fully by (k, v, t)
}

func (rk *radixKey) of(r *rec) uint64 {
	return (uint64(r.k)^signBit-rk.kmin)<<rk.sk | (uint64(r.v)^signBit-rk.vmin)<<rk.sv | (r.t-rk.tmin)<<rk.st
}

// newRadixKey scans recs for the field ranges and chooses the major key.
// A field left out gets shift 64, which makes its term 0.
func newRadixKey(recs []rec) radixKey {
	kmin, vmin, tmin := ^uint64(0), ^uint64(0), ^uint64(0)
	var kmax, vmax, tmax uint64
	for i := range recs {
		r := &recs[i]
		k, v := uint64(r.k)^signBit, uint64(r.v)^signBit
		kmin, kmax = min(kmin, k), max(kmax, k)
		vmin, vmax = min(vmin, v), max(vmax, v)
		tmin, tmax = min(tmin, r.t), max(tmax, r.t)
	}
	return packRadixKey(kmin, kmax, vmin, vmax, tmin, tmax)
}

// packRadixKey chooses the major key from the fields' ranges (keys and
// vals with the sign bit flipped).
func packRadixKey(kmin, kmax, vmin, vmax, tmin, tmax uint64) radixKey {
	bk, bv, bt := bits.Len64(kmax-kmin), bits.Len64(vmax-vmin), bits.Len64(tmax-tmin)
	rk := radixKey{kmin: kmin, vmin: vmin, tmin: tmin}
	switch {
	case bk+bv+bt <= 64:
		rk.sk, rk.sv, rk.st = uint(bv+bt), uint(bt), 0
		rk.bits, rk.complete = bk+bv+bt, true
	case bk+bv <= 64:
		rk.sk, rk.sv, rk.st = uint(bv), 0, 64
		rk.bits = bk + bv
	default:
		rk.sk, rk.sv, rk.st = 0, 64, 64
		rk.bits = bk
	}
	return rk
}

// bucketKey is newRadixKey for a bucket pass of at most bmax bits. When
// the keys alone span bmax bits or more, the bucket numbers are the top
// bits of the key column whatever else the packed key would hold (the
// key is its major field), so the vals and times are not scanned: a
// third of the scan's work a record, for every seal of keys over a range
// wider than its bucket count; narrower keys take a second pass over the
// vals and times alone. Only a batch whose packed key would be exactly
// its bucket number (keys spanning bmax bits, one val and one time) loses
// the shortcut that skips its insertion pass.
//
// With tr it also takes the least and greatest time into tr, in the keys'
// pass (the times share the keys' cache lines, so they cost the pass
// compares and no memory), which spares the build a pass over its times
// (timeRange).
func bucketKey(recs []rec, bmax int, tr *timeRange) radixKey {
	kmin, kmax := ^uint64(0), uint64(0)
	tmin, tmax := ^uint64(0), uint64(0)
	if tr != nil {
		for i := range recs {
			r := &recs[i]
			k := uint64(r.k) ^ signBit
			kmin, kmax = min(kmin, k), max(kmax, k)
			tmin, tmax = min(tmin, r.t), max(tmax, r.t)
		}
		*tr = timeRange{lo: tmin, hi: tmax, ok: len(recs) > 0}
	} else {
		for i := range recs {
			k := uint64(recs[i].k) ^ signBit
			kmin, kmax = min(kmin, k), max(kmax, k)
		}
	}
	if bk := bits.Len64(kmax - kmin); bk >= bmax {
		return radixKey{kmin: kmin, sk: 0, sv: 64, st: 64, bits: bk}
	}
	// Narrower keys: the vals (and times, unless taken) too, the keys'
	// range known.
	vmin, vmax := ^uint64(0), uint64(0)
	if tr != nil {
		for i := range recs {
			v := uint64(recs[i].v) ^ signBit
			vmin, vmax = min(vmin, v), max(vmax, v)
		}
	} else {
		for i := range recs {
			r := &recs[i]
			v := uint64(r.v) ^ signBit
			vmin, vmax = min(vmin, v), max(vmax, v)
			tmin, tmax = min(tmin, r.t), max(tmax, r.t)
		}
	}
	return packRadixKey(kmin, kmax, vmin, vmax, tmin, tmax)
}

// bucketSortMax is the most records the builder sorts with bucketSort: up
// to it buckets of 16-bit numbers hold about 16 records or fewer, cheap to
// sort by comparison; beyond it the LSD radix sort's passes cost less.
const bucketSortMax = 1 << 20

// scatterBlock is the records each call of the scatter's assembly moves
// (scatter_amd64.go; about 80 µs of a bucket pass that misses the caches);
// a variable so that the tests can make it small. Other architectures
// scatter in Go and do not read it.
var scatterBlock = 1 << 14

// warmScatterMax is the most one-column records a Builder's build sorts
// from the buffer its pushes wrote into the scratch it keeps
// (Builder.warmMax), writing the columns into a new block, rather than
// sorting out of the pushed array into new memory: 16 MiB of records, and
// as much scratch kept. On the Intel Xeon host (BenchmarkBuild's x-radix,
// narrow / full keys) the scratch won from 5e4 records to 4e5 (1e5:
// 1.37–1.38 / 1.47–1.49 to 1.27 / 1.37; 2e5: 1.49 / 1.54 to 1.25 / 1.27;
// 4e5: 1.29 / 1.41 to 1.17–1.25 / 1.33–1.37), gained a little at 1e3,
// read a little higher at 1e4 (full keys 1.60–1.70 to 1.67–1.76, in
// ns/update no higher) and even at 1e6 (1.15 / 1.19), where nothing stays
// in the caches and the scratch would only be memory kept.
const warmScatterMax = 1 << 19

// bucketSort sorts recs by (k, v, t) into scratch (len(scratch) >=
// len(recs)) and returns them there: one pass numbers each record's bucket
// by the top log2(n) bits of its packed key (at most 16: about one record a
// bucket up to 65,536 records, 16 at bucketSortMax), one scatters the
// records to their buckets, and, unless the bucket number is the whole key,
// buckets are sorted by comparison: a long one by pdqsort, then the rest by
// one insertion pass over the whole block (insertionPass; a call per bucket
// of two or three cost 7% more of a 1,000-update seal). So a record is
// moved once, where the LSD radix sort moves it once a pass and then
// compares it again to find its run's ends.
// ids and counts are reused storage; a non-nil tr takes the records' time
// range (bucketKey). consolidated reports what the
// insertion pass saw on its way: no two adjacent records of equal (k, v,
// t) and no zero diff, so the records need no consolidation (false when no
// insertion pass ran, which says nothing).
func bucketSort(recs, scratch []rec, ids []uint16, counts []uint32, tr *timeRange) (sorted []rec, idsOut []uint16, countsOut []uint32, consolidated bool) {
	n := len(recs)
	scratch = scratch[:n]
	bmax := min(bits.Len(uint(n)), 16)
	rk := bucketKey(recs, bmax, tr)
	b := min(rk.bits, bmax)
	drop := uint(rk.bits - b)
	nb := 1 << b
	ids = slices.Grow(ids[:0], n)[:n]
	counts = slices.Grow(counts[:0], nb+1)[:nb+1]
	clear(counts)
	bucketIDs(recs, &rk, drop, ids, counts)
	// The running sum stays in a register (summed through the array, each
	// bucket waited on the store before it: a chain of 65,536 at 50,000
	// records), and the longest bucket is known without another loop.
	// Both loops go through base pointers: every bucket number is below
	// nb (bucketIDs) and the buckets' counts sum to n, so every index is
	// in range, and the bounds checks cost a third of the loops'
	// instructions.
	cp := unsafe.Pointer(unsafe.SliceData(counts))
	sum, long := uint32(0), uint32(0)
	for d := uintptr(1); d <= uintptr(nb); d++ {
		c := (*uint32)(unsafe.Add(cp, d*4))
		sum += *c
		long = max(long, *c)
		*c = sum
	}
	// counts[d] is where bucket d starts; after the scatter, where it ends.
	rp, sp := unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(scratch))
	ip := unsafe.Pointer(unsafe.SliceData(ids))
	scatter(rp, sp, ip, cp, n)
	if rk.complete && drop == 0 {
		return scratch, ids, counts, false
	}
	// Buckets too long for insertion sort are sorted on their own; then
	// one insertion pass over the whole block sorts the rest, since
	// records of different buckets are already in order (a record moves
	// only within its bucket), without a call or a loop per bucket.
	if long > insertionMax {
		start := uint32(0)
		for _, end := range counts[:nb] {
			if end-start > insertionMax {
				slices.SortFunc(scratch[start:end], cmpRec)
			}
			start = end
		}
	}
	return scratch, ids, counts, insertionPass(scratch)
}

// scatterGo moves record i of recs (n 32-byte records) to scratch at
// counts[ids[i]] (counts of uint32, ids of uint16) and increments that
// count, for i below n: bucketSort's scatter in Go, the loop on
// architectures without the assembly (scatter_amd64.s) and the reference
// the tests compare it with. REQUIRES: every bucket number indexes
// counts, and the counts are start offsets whose buckets fit in scratch.
func scatterGo(recs, scratch, ids, counts unsafe.Pointer, n int) {
	for i := range uintptr(n) {
		c := (*uint32)(unsafe.Add(counts, uintptr(*(*uint16)(unsafe.Add(ids, i*2)))*4))
		*(*rec)(unsafe.Add(scratch, uintptr(*c)*32)) = *(*rec)(unsafe.Add(recs, i*32))
		*c++
	}
}

// bucketIDs numbers each record's bucket (its packed key's bits from drop
// up) into ids and counts the buckets in counts[d+1]. When the packed key is
// the key column alone (keys over a range too wide to pack a val beside
// them: the common case), the number is the key's offset shifted, without
// the packing's two other terms and the guards Go puts on every shift by a
// variable count. It writes through base pointers (the bounds checks were
// a third of the loop). REQUIRES: len(ids) == len(recs), every number
// below len(counts)-1 (rk packs every record's key into rk.bits bits, and
// drop leaves at most log2(len(counts)-1) of them), drop < 64.
func bucketIDs(recs []rec, rk *radixKey, drop uint, ids []uint16, counts []uint32) {
	ids = ids[:len(recs)]
	if invariants.Enabled {
		invariants.Assertf(rk.bits <= 64 && 1<<(uint(rk.bits)-drop) <= len(counts)-1, "batch: %d-bit keys less %d dropped into %d buckets", rk.bits, drop, len(counts)-1)
	}
	if rk.sk == 0 && rk.sv == 64 && rk.st == 64 {
		kmin, drop := rk.kmin, drop&63
		rp, ip := unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(ids))
		cp := unsafe.Pointer(unsafe.SliceData(counts))
		for i := range uintptr(len(recs)) {
			d := uint16((uint64(*(*int64)(unsafe.Add(rp, i*32))) ^ signBit - kmin) >> drop)
			*(*uint16)(unsafe.Add(ip, i*2)) = d
			*(*uint32)(unsafe.Add(cp, uintptr(d)*4+4)) += 1
		}
		return
	}
	for i := range recs {
		d := uint16(rk.of(&recs[i]) >> drop)
		ids[i] = d
		counts[int(d)+1]++
	}
}

// insertionPass sorts recs by (k, v, t) by insertion, cheaply when few
// records are out of place: a record greater than the one before it costs
// one compare of keys. bucketSort calls it once every bucket longer than
// insertionMax is sorted, so no record moves insertionMax places or more
// (asserted under invariants: a bucket left long would make it quadratic).
//
// It returns whether the sorted records are consolidated (no two adjacent
// of equal (k, v, t), no zero diff), which the builder then need not check
// in a pass of its own. Every pair adjacent at the end was compared on the
// way: a record is either greater than the one before it (the common
// case, a strict compare), equal to it (seen), or inserted after the first
// record not greater than it (equal or less: seen) and before one it is
// less than; the records it passed keep their order among themselves.
func insertionPass(recs []rec) bool {
	zero := 0
	if len(recs) > 0 {
		zero = b2i(recs[0].d == 0)
	}
	dup := false
	for i := 1; i < len(recs); i++ {
		p, q := &recs[i-1], &recs[i]
		zero |= b2i(q.d == 0)
		// In order: a greater key (the common case, one branch), or an
		// equal key and a greater (val, time).
		if p.k < q.k || p.k == q.k && (p.v < q.v || p.v == q.v && p.t < q.t) {
			continue
		}
		r := *q
		if eqRec(&r, &recs[i-1]) {
			dup = true
			continue
		}
		j := i
		for ; j > 0 && lessRec(&r, &recs[j-1]); j-- {
			recs[j] = recs[j-1]
		}
		if j > 0 && eqRec(&r, &recs[j-1]) {
			dup = true
		}
		if invariants.Enabled {
			invariants.Assertf(i-j < insertionMax, "batch: insertion pass moved record %d of %d by %d places (a long bucket left unsorted)", i, len(recs), i-j)
		}
		recs[j] = r
	}
	return !dup && zero == 0
}

// eqRec reports whether a and b have equal (k, v, t).
func eqRec(a, b *rec) bool { return a.k == b.k && a.v == b.v && a.t == b.t }

// radixSort sorts recs by (k, v, t), using scratch (len(scratch) >=
// len(recs)), and returns the sorted records: recs or scratch[:len(recs)],
// the other left in an unspecified order. counts is reused storage for the
// histograms.
func radixSort(recs, scratch []rec, counts []uint32) (sorted, other []rec, countsOut []uint32) {
	n := len(recs)
	scratch = scratch[:n]
	if n < 2 {
		return recs, scratch, counts
	}
	rk := newRadixKey(recs)
	p := planRadix(n, rk.bits)
	if p.passes > 0 {
		nb := 1 << p.width
		mask := uint64(nb - 1)
		counts = p.counts(counts)
		for i := range recs {
			x := rk.of(&recs[i]) >> p.drop
			for j := range p.passes {
				counts[j*nb+int(x>>(uint(j)*p.width)&mask)]++
			}
		}
		src, dst := recs, scratch
		for j := range p.passes {
			c := counts[j*nb : j*nb+nb]
			shift := p.drop + uint(j)*p.width
			if !offsets(c, rk.of(&src[0])>>shift&mask, n) {
				continue
			}
			for i := range src {
				r := &src[i]
				d := rk.of(r) >> shift & mask
				dst[c[d]] = *r
				c[d]++
			}
			src, dst = dst, src
		}
		recs, scratch = src, dst
	}
	if p.drop > 0 || !rk.complete {
		sortRuns(recs, &rk, p.drop)
	}
	return recs, scratch, counts
}

// sortRuns sorts each run of records with equal key>>drop by (k, v, t).
func sortRuns(recs []rec, rk *radixKey, drop uint) {
	for i := 0; i < len(recs); {
		x := rk.of(&recs[i]) >> drop
		j := i + 1
		for j < len(recs) && rk.of(&recs[j])>>drop == x {
			j++
		}
		if j-i > 1 {
			sortRun(recs[i:j])
		}
		i = j
	}
}

// sortRun sorts a run of records by (k, v, t): insertion sort when short,
// pdqsort when not.
func sortRun(run []rec) {
	if len(run) > insertionMax {
		slices.SortFunc(run, cmpRec)
		return
	}
	for a := 1; a < len(run); a++ {
		r := run[a]
		j := a
		for ; j > 0 && lessRec(&r, &run[j-1]); j-- {
			run[j] = run[j-1]
		}
		run[j] = r
	}
}

func lessRec(a, b *rec) bool {
	if a.k != b.k {
		return a.k < b.k
	}
	if a.v != b.v {
		return a.v < b.v
	}
	return a.t < b.t
}

// keyIdx is the packed major key of wide update idx.
type keyIdx struct {
	key uint64
	idx uint32
}

// wideKey packs the major key of wide rows.
type wideKey struct {
	w     int // columns per row; field w is the time
	nf    int // fields packed: columns [0, min(nf, w)) and, if nf > w, the time
	mins  []uint64
	shift []uint
	bits  int
}

// complete reports whether the key orders updates fully.
func (wk *wideKey) complete() bool { return wk.nf > wk.w }

// newWideKey scans the rows and times for the field ranges and chooses the
// fields of the major key. mins and shift are reused storage.
func newWideKey(rows []int64, times []uint64, w int, mins []uint64, shift []uint) wideKey {
	nf := w + 1
	mins = slices.Grow(mins[:0], 2*nf)[:2*nf]
	mins, maxs := mins[:nf], mins[nf:]
	for f := range nf {
		mins[f], maxs[f] = ^uint64(0), 0
	}
	for i, t := range times {
		r := rows[i*w : i*w+w]
		for f, x := range r {
			u := uint64(x) ^ signBit
			mins[f], maxs[f] = min(mins[f], u), max(maxs[f], u)
		}
		mins[w], maxs[w] = min(mins[w], t), max(maxs[w], t)
	}
	wk := wideKey{w: w, mins: mins}
	// The longest prefix of fields that fits, with maxs reused for widths.
	total := 0
	for f := range nf {
		bf := bits.Len64(maxs[f] - mins[f])
		if total+bf > 64 {
			break
		}
		total += bf
		maxs[f] = uint64(bf)
		wk.nf = f + 1
	}
	shift = slices.Grow(shift[:0], wk.nf)[:wk.nf]
	left := total
	for f := range wk.nf {
		left -= int(maxs[f])
		shift[f] = uint(left)
	}
	wk.shift, wk.bits = shift, total
	return wk
}

// of packs the key of update i.
func (wk *wideKey) of(rows []int64, times []uint64, i int) uint64 {
	var x uint64
	r := rows[i*wk.w : i*wk.w+min(wk.nf, wk.w)]
	for f, c := range r {
		x |= (uint64(c) ^ signBit - wk.mins[f]) << wk.shift[f]
	}
	if wk.nf > wk.w {
		x |= (times[i] - wk.mins[wk.w]) << wk.shift[wk.w]
	}
	return x
}

// cmp compares two updates by key, then by the fields left out of it.
func (wk *wideKey) cmp(rows []int64, times []uint64, a, b keyIdx) int {
	switch {
	case a.key < b.key:
		return -1
	case a.key > b.key:
		return 1
	}
	w := wk.w
	if wk.nf < w {
		i, j := int(a.idx)*w, int(b.idx)*w
		if c := cmpRow(rows[i+wk.nf:i+w], rows[j+wk.nf:j+w]); c != 0 {
			return c
		}
	}
	if wk.nf <= w {
		switch ti, tj := times[a.idx], times[b.idx]; {
		case ti < tj:
			return -1
		case ti > tj:
			return 1
		}
	}
	return 0
}

// radixSortWide sorts ks (the keys of rows and times) by the updates' order,
// using scratch (len(scratch) >= len(ks)), and returns the sorted slice and
// the other one.
func radixSortWide(ks, scratch []keyIdx, wk *wideKey, rows []int64, times []uint64, counts []uint32) (sorted, other []keyIdx, countsOut []uint32) {
	n := len(ks)
	scratch = scratch[:n]
	if n < 2 {
		return ks, scratch, counts
	}
	p := planRadix(n, wk.bits)
	if p.passes > 0 {
		nb := 1 << p.width
		mask := uint64(nb - 1)
		counts = p.counts(counts)
		for i := range ks {
			x := ks[i].key >> p.drop
			for j := range p.passes {
				counts[j*nb+int(x>>(uint(j)*p.width)&mask)]++
			}
		}
		src, dst := ks, scratch
		for j := range p.passes {
			c := counts[j*nb : j*nb+nb]
			shift := p.drop + uint(j)*p.width
			if !offsets(c, src[0].key>>shift&mask, n) {
				continue
			}
			for _, e := range src {
				d := e.key >> shift & mask
				dst[c[d]] = e
				c[d]++
			}
			src, dst = dst, src
		}
		ks, scratch = src, dst
	}
	if p.drop == 0 && wk.complete() {
		return ks, scratch, counts
	}
	for i := 0; i < n; {
		x := ks[i].key >> p.drop
		j := i + 1
		for j < n && ks[j].key>>p.drop == x {
			j++
		}
		if run := ks[i:j]; len(run) > insertionMax {
			slices.SortFunc(run, func(a, b keyIdx) int { return wk.cmp(rows, times, a, b) })
		} else if len(run) > 1 {
			for a := 1; a < len(run); a++ {
				e := run[a]
				b := a
				for ; b > 0 && wk.cmp(rows, times, e, run[b-1]) < 0; b-- {
					run[b] = run[b-1]
				}
				run[b] = e
			}
		}
		i = j
	}
	return ks, scratch, counts
}
