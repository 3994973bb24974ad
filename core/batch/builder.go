package batch

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// rec is the 32-byte record the builder sorts when both arities are at most 1.
type rec struct {
	k, v int64
	t    uint64
	d    int64
}

func cmpRec(a, b rec) int {
	switch {
	case a.k < b.k:
		return -1
	case a.k > b.k:
		return 1
	case a.v < b.v:
		return -1
	case a.v > b.v:
		return 1
	case a.t < b.t:
		return -1
	case a.t > b.t:
		return 1
	}
	return 0
}

// builderKeep is the most updates whose buffers and scratch a Batcher keeps
// for reuse after a seal: above it they are released, so a large one-off
// seal leaves only its batch behind, while steady seals of up to this many
// reuse theirs.
const builderKeep = 1 << 16

// Builder turns unsorted updates into a consolidated Batch (§1.5). Updates
// with key and val arity at most 1 are sorted as 32-byte records; wider rows
// are sorted through a permutation and then gathered. From a few dozen
// updates up the sort is a radix sort on packed keys (radix.go), which keeps
// scratch as large as the pushed updates. A Builder is reused after Build,
// keeping its capacity and scratch.
type Builder struct {
	ar    Arity
	small bool
	recs  []rec // small arities
	// km and vm mask a pushed key and val: all ones for a column the
	// arity has, zero for one it lacks (small arities).
	km, vm int64

	// Radix sort (radix.go) from radixMin updates up (tests lower it):
	// scratch takes the sorted records (buildSmall), or trades places
	// with recs when the radix sort's last pass ends there; counts holds
	// the histograms.
	radixMin int
	scratch  []rec
	counts   []uint32
	ids      []uint16 // bucketSort's bucket numbers
	// bucketMax is the most records sorted by bucketSort (radix.go);
	// larger builds take the LSD radix sort (tests set either).
	bucketMax int
	// warmMax is the most one-column records a build sorts into the
	// builder's scratch, which it keeps, from the buffer its pushes have
	// just written, rather than out of the pushed array into memory just
	// allocated (buildSmall; tests set it).
	warmMax int
	// built says a build of records has run: the first one (a builder
	// made for one build, as a reduce's install makes one) copies its
	// records into the batch's block to sort them back into the array
	// its pushes wrote rather than make scratch (buildSmall).
	built bool
	// tr is the time range of the records the build in progress pushed,
	// when its sort took it (bucketSort), which spares Build its check
	// of the batch's times (timeRange).
	tr timeRange

	rows  []int64 // wide arities: key then val, ar.Key+ar.Val columns per update
	times []uint64
	diffs []int64
	perm  []uint32
	// Sort of wide rows by packed major key (radix.go), and the updates
	// gathered in sorted order.
	sRows            []int64
	sTimes           []uint64
	sDiffs           []int64
	keys, keyScratch []keyIdx
	mins             []uint64
	shift            []uint

	// badArity is the error of the first push refused for its arity
	// since the last Build or Reset, which Build returns.
	badArity error
}

// NewBuilder returns a builder for rows of the given arity with room for
// capHint updates (none for a capHint below 0).
func NewBuilder(ar Arity, capHint int) *Builder {
	capHint = max(capHint, 0)
	b := &Builder{ar: ar, small: ar.Key <= 1 && ar.Val <= 1, radixMin: defaultRadixMin, bucketMax: bucketSortMax, warmMax: warmScatterMax}
	if b.small {
		b.recs = column[rec](capHint)[:0]
		b.km, b.vm = -int64(ar.Key), -int64(ar.Val)
	} else {
		b.rows = column[int64](capHint * (ar.Key + ar.Val))[:0]
		b.times = column[uint64](capHint)[:0]
		b.diffs = column[int64](capHint)[:0]
	}
	return b
}

// Arity returns the builder's arity.
func (b *Builder) Arity() Arity { return b.ar }

// Len returns the number of updates pushed since the last Build or Reset.
func (b *Builder) Len() int {
	if b.small {
		return len(b.recs)
	}
	return len(b.times)
}

// Reset discards pushed updates, keeping capacity.
func (b *Builder) Reset() {
	b.badArity = nil
	b.recs = b.recs[:0]
	b.rows, b.times, b.diffs = b.rows[:0], b.times[:0], b.diffs[:0]
}

// release drops every buffer and scratch slice.
func (b *Builder) release() {
	b.recs, b.scratch, b.counts, b.ids = nil, nil, nil, nil
	b.rows, b.times, b.diffs, b.perm = nil, nil, nil, nil
	b.sRows, b.sTimes, b.sDiffs = nil, nil, nil
	b.keys, b.keyScratch = nil, nil
}

// Push adds one update. The rows are copied. A zero diff is accepted and
// consolidates away. A key or val of another length than the builder's
// arity is refused: the update is dropped, and the next Build returns no
// batch and an error wrapping ErrArity.
func (b *Builder) Push(key, val []int64, t frontier.Time, d int64) {
	if len(key) != b.ar.Key || len(val) != b.ar.Val {
		if b.badArity == nil {
			b.badArity = arityErr(len(key), len(val), b.ar)
		}
		return
	}
	if b.small {
		var r rec
		if b.ar.Key == 1 {
			r.k = key[0]
		}
		if b.ar.Val == 1 {
			r.v = val[0]
		}
		r.t, r.d = t, d
		b.recs = append(b.recs, r)
		return
	}
	b.rows = append(b.rows, key...)
	b.rows = append(b.rows, val...)
	b.times = append(b.times, t)
	b.diffs = append(b.diffs, d)
}

// Push1 adds one update with one-column key and val (or arity 0, where the
// argument is ignored). REQUIRES: both arities are at most 1.
//
// Push1 is small enough for Go to inline into its caller's loop: the
// arity's missing columns are masked (km, vm) rather than tested, and a
// push into a builder of wider arity is reported by its Build, which
// panics, not here.
func (b *Builder) Push1(k, v int64, t frontier.Time, d int64) {
	b.recs = append(b.recs, rec{k & b.km, v & b.vm, t, d})
}

// Build sorts and consolidates the pushed updates into a batch describing
// [lower, upper) with since {0}, and resets the builder. Every pushed time
// must lie in [lower, upper): a batch holding one outside would break B3
// and give a wrong answer to every reader, so Build then returns no batch
// and an error wrapping ErrTimeOutside (an update whose diffs consolidate
// to zero is not checked, as it is not in the batch). If a
// consolidated diff leaves int64 it also returns an *OverflowError (which
// wraps ErrOverflow) naming the times that overflowed, with the complete
// batch: every other update is in it and an overflowed diff is saturated to
// the int64 bound of its sign, as a merge does (Merger.Result). If a push
// was refused for its arity, Build discards every pushed update and
// returns no batch and an error wrapping ErrArity, and an upper before
// lower discards them and returns ErrUpperBeforeLower.
func (b *Builder) Build(lower, upper frontier.Frontier) (*Batch, error) {
	if !b.small && len(b.recs) > 0 {
		panic(fmt.Sprintf("batch: Push1 into a %v builder", b.ar))
	}
	if err := b.badArity; err != nil {
		b.Reset()
		return nil, err
	}
	if err := checkBounds(lower, upper); err != nil {
		b.Reset()
		return nil, err
	}
	desc := frontier.Description{Lower: lower, Upper: upper, Since: frontier.Min()}
	var out *Batch
	var err error
	b.tr = timeRange{}
	if b.small {
		out, err = b.buildSmall(desc)
	} else {
		out, err = b.buildWide(desc)
	}
	b.Reset()
	if terr := b.checkTimes(out, desc); terr != nil {
		return nil, terr
	}
	if invariants.Enabled {
		if cerr := out.Check(); cerr != nil {
			invariants.Assertf(false, "batch: Build produced a bad batch: %v", cerr)
		}
	}
	return out, err
}

// ErrUpperBeforeLower reports a build (or seal) asked for a batch whose
// upper is before its lower: a description that covers no time and would
// move a trace's upper back, which merging it with the batch before would
// turn into a batch claiming times it does not hold.
var ErrUpperBeforeLower = errors.New("batch: upper is before lower")

// checkBounds returns an error wrapping ErrUpperBeforeLower when upper is
// before lower.
func checkBounds(lower, upper frontier.Frontier) error {
	if !lower.LessEqual(upper) {
		return fmt.Errorf("%w: [%v, %v)", ErrUpperBeforeLower, lower, upper)
	}
	return nil
}

// ErrTimeOutside reports an update built into a batch whose [lower, upper)
// does not contain its time: a broken contract of the builder's caller.
var ErrTimeOutside = errors.New("batch: update time outside the batch's [lower, upper)")

// timesWithin returns an error wrapping ErrTimeOutside, naming the least
// or greatest time, when a time lies outside d's [Lower, Upper). It takes
// the least and greatest time in four running minima and maxima, one pass
// without a branch a time, against a build's sort and column writes.
func timesWithin(times []uint64, d frontier.Description) error {
	if len(times) == 0 {
		return nil
	}
	l0, l1, l2, l3 := times[0], times[0], times[0], times[0]
	h0, h1, h2, h3 := l0, l0, l0, l0
	n := len(times) &^ 3
	for i := 0; i < n; i += 4 {
		q := times[i : i+4 : i+4]
		l0, l1, l2, l3 = min(l0, q[0]), min(l1, q[1]), min(l2, q[2]), min(l3, q[3])
		h0, h1, h2, h3 = max(h0, q[0]), max(h1, q[1]), max(h2, q[2]), max(h3, q[3])
	}
	for _, t := range times[n:] {
		l0, h0 = min(l0, t), max(h0, t)
	}
	lo, hi := min(l0, l1, l2, l3), max(h0, h1, h2, h3)
	switch {
	case !d.Lower.Beyond(lo):
		return fmt.Errorf("%w: time %d, batch [%v, %v)", ErrTimeOutside, lo, d.Lower, d.Upper)
	case d.Upper.Beyond(hi):
		return fmt.Errorf("%w: time %d, batch [%v, %v)", ErrTimeOutside, hi, d.Lower, d.Upper)
	}
	return nil
}

// timeRange is the least and greatest time of the records a build
// pushed, taken by its sort's scan (bucketKey) when the build asks for it
// (ok says it was). When every pushed time lies in the batch's [lower,
// upper), so does every time the batch keeps, and the build need not read
// the batch's times again to check them (timesWithin); when one does not,
// the build reads them, since the update at that time may have
// consolidated away and the batch be good.
type timeRange struct {
	lo, hi uint64
	ok     bool
}

// within reports whether the range was taken and lies in d's [Lower,
// Upper), which timesWithin would then find of every time in the batch.
func (tr timeRange) within(d frontier.Description) bool {
	return tr.ok && d.Lower.Beyond(tr.lo) && !d.Upper.Beyond(tr.hi)
}

// checkTimes is timesWithin for the batch a build made, which it skips
// when the build's sort found every pushed time within the batch's
// bounds (b.tr).
func (b *Builder) checkTimes(out *Batch, d frontier.Description) error {
	if b.tr.within(d) {
		if invariants.Enabled {
			invariants.Assertf(timesWithin(out.times, d) == nil, "batch: times said within %v are not", d)
		}
		return nil
	}
	return timesWithin(out.times, d)
}

// addDiff returns a+b and whether it overflowed.
func addDiff(a, b int64) (int64, bool) {
	s := a + b
	if mutants.Enabled && mutants.On(mutants.DiffArithmeticWraps) {
		return s, false
	}
	return s, (a^s)&(b^s) < 0
}

// exactSum returns the sum of the n diffs d(0), ..., d(n-1), computed
// exactly, if it fits int64, or else the int64 bound of its sign and true.
// A run's checked running sum calls it when a partial sum overflowed: the
// run's total may still fit (MaxInt64, +1, -1 is MaxInt64), and only a
// total that does not is an overflow. 128-bit: each diff adds its sign
// extension and carry to the high word, which n < 2^62 diffs cannot
// overflow.
func exactSum(n int, d func(int) int64) (int64, bool) {
	var hi, lo int64
	for i := range n {
		hi, lo = wideAdd(hi, lo, d(i))
	}
	return narrow(hi, lo)
}

// wideAdd adds d to the 128-bit sum whose high word is hi and low word lo:
// d's sign extension and the carry go to the high word. A running sum
// that left int64 goes on here from hi = lo>>63, the sign of the sum
// before it.
func wideAdd(hi, lo, d int64) (int64, int64) {
	l, c := bits.Add64(uint64(lo), uint64(d), 0)
	return hi + d>>63 + int64(c), int64(l)
}

// narrow returns the 128-bit sum (hi, lo) if it fits int64, or else the
// int64 bound of its sign and true.
func narrow(hi, lo int64) (int64, bool) {
	switch {
	case hi == lo>>63:
		return lo, false
	case hi < 0:
		return math.MinInt64, true
	}
	return math.MaxInt64, true
}

// overflowAt adds t to the overflow times, kept ascending and distinct
// (updates are consolidated in (key, val, time) order, so times repeat and
// come out of order across keys).
func overflowAt(ts []frontier.Time, t frontier.Time) []frontier.Time {
	i, found := slices.BinarySearch(ts, t)
	if found {
		return ts
	}
	return slices.Insert(ts, i, t)
}

// sortRecs sorts b.recs by (k, v, t): by radix sort (radix.go) from
// radixMin records up, else by pdqsort.
func (b *Builder) sortRecs() {
	n := len(b.recs)
	if n < b.radixMin {
		slices.SortFunc(b.recs, cmpRec)
		return
	}
	if cap(b.scratch) < n {
		b.scratch = column[rec](cap(b.recs))[:n]
	}
	b.recs, b.scratch, b.counts = radixSort(b.recs, b.scratch, b.counts)
}

func (b *Builder) buildSmall(desc frontier.Description) (*Batch, error) {
	// Up to warmMax one-column records (and records of other small
	// arities up to bucketMax) sort out of the builder's buffer, which
	// the pushes have just written, into its scratch, which it keeps,
	// and then consolidate into columns made for them (for one-column
	// keys and vals one block, colsOf, written once). A builder's first
	// build of one-column records (built) makes no scratch: scratch just
	// made is as far from the caches as a new block, so it copies the
	// records into the block (blockOf) and sorts them back into its
	// buffer, and a builder made for one build (a reduce's install)
	// keeps no scratch it will not use again (BenchmarkReduce's direct
	// count at 1e5 rows and 1e3 groups read 70–73 ns/update with the
	// copy, 76–78 scattering into new scratch, three runs of each
	// interleaved).
	// Beyond warmMax a one-column build that fills at least 3/4 of its
	// array takes that array as the batch's block: the records sort out
	// of it into a new buffer (sortBlock makes it), which takes its
	// place for the next pushes, so no copy of them is made; one that
	// fills less copies them into a block of their size first (blockOf),
	// so that the batch does not keep the room. A sort scatters its
	// records in an order no prefetcher follows, so its output is best
	// memory that is in the caches: the builder's own, where a buffer
	// just allocated was last touched by whatever freed it. Up to 16 MiB
	// of records the warm scratch wins (BenchmarkBuild at n=1e5, full
	// keys: 1.61–1.66 of the radix limit sorting into new memory,
	// 1.45–1.50 copying the records into the block to sort them back
	// into the buffer, 1.37 sorting into the scratch); at 1e6 nothing
	// stays in the caches and the scratch would only be memory kept. Up
	// to bucketMax records the sort is one bucket pass (bucketSort),
	// beyond it the LSD radix sort; under radixMin records they sort
	// where they are by comparison. Either way the records then
	// consolidate into columns sized for all of them (consolidateInto,
	// which cuts what consolidation left unused). No records make a
	// batch of no columns. The block is never zeroed.
	var cols *Batch
	clean := false // the sort saw the records consolidated
	sorted := b.recs
	one := b.ar == (Arity{1, 1})
	switch n := len(b.recs); {
	case n == 0:
		// No updates (a collection whose frontier advanced without data):
		// the shared one-element offsets, nothing allocated but the batch.
		return &Batch{desc: desc, ar: b.ar, keyOffs: noOffs[:1:1], valOffs: noOffs[:1:1]}, nil
	case n < max(b.radixMin, 2):
		slices.SortFunc(b.recs, cmpRec)
	case one && n > b.warmMax && n >= cap(b.recs)*3/4:
		block := b.recs
		b.recs = nil
		cols, clean = b.sortBlock(block)
		sorted = b.recs
	case one && (n > b.warmMax || !b.built):
		cols, clean = b.sortBlock(blockOf(b.recs))
		sorted = b.recs
	case n <= b.bucketMax:
		if cap(b.scratch) < n {
			// Grown as append grows, so builds growing by a little
			// at a time do not allocate each.
			b.scratch = column[rec](max(n, min(2*cap(b.scratch), b.bucketMax)))
		}
		sorted, b.ids, b.counts, clean = bucketSort(b.recs, b.scratch, b.ids, b.counts, &b.tr)
	default:
		b.sortRecs()
		sorted = b.recs
	}
	b.built = true
	if cols == nil {
		cols = b.newCols(len(sorted))
	}
	return b.consolidateInto(desc, sorted, cols, clean)
}

// newCols returns columns for n updates of the builder's small arity, not
// zeroed: for one-column keys and vals one block (colsOf) and the offsets,
// two allocations where separate columns would take six.
func (b *Builder) newCols(n int) *Batch {
	if b.ar == (Arity{1, 1}) {
		return colsOf(column[rec](n))
	}
	return &Batch{
		keys: column[int64](n * b.ar.Key), keyOffs: column[uint32](n + 1),
		vals: column[int64](n * b.ar.Val), valOffs: column[uint32](n + 1),
		times: column[uint64](n), diffs: column[int64](n),
	}
}

// consolidateInto consolidates the sorted recs straight into cols (whose
// columns hold at least len(recs) updates and alias nothing of recs) in one
// pass and cuts the columns to what it left, so the records are read once
// and never consolidated in place first. clean says the sort found them
// consolidated already (bucketSort), so they are written without a check.
// cols is made for this build and held by nothing else: it becomes the
// batch, not copied into another.
func (b *Builder) consolidateInto(desc frontier.Description, recs []rec, cols *Batch, clean bool) (*Batch, error) {
	nk, nv, n, overflow := b.writeCols(cols, recs, clean)
	out := cols
	out.desc, out.ar = desc, b.ar
	// shrink copies the columns with much to spare.
	out.keys, out.keyOffs = shrink(out.keys[:nk*b.ar.Key]), shrink(out.keyOffs[:nk+1])
	out.vals, out.valOffs = shrink(out.vals[:nv*b.ar.Val]), shrink(out.valOffs[:nv+1])
	out.times, out.diffs = shrink(out.times[:n]), shrink(out.diffs[:n])
	return out, overflowErr(overflow)
}

// writeCols consolidates the sorted recs into out's columns, long enough
// for what consolidation leaves, and returns the keys, vals and updates
// written and the times whose diffs overflowed (they saturate). The
// columns may alias nothing of recs. clean: recs are known consolidated.
func (b *Builder) writeCols(out *Batch, recs []rec, clean bool) (nk, nv, n int, overflow []frontier.Time) {
	if b.ar == (Arity{1, 1}) {
		return b.writeCols11(out, recs, clean)
	}
	return b.writeColsAny(out, recs)
}

// writeColsAny is writeCols for any columns long enough.
func (b *Builder) writeColsAny(out *Batch, recs []rec) (nk, nv, n int, overflow []frontier.Time) {
	keys, keyOffs, vals, valOffs, times, diffs := out.keys, out.keyOffs, out.vals, out.valOffs, out.times, out.diffs
	kOne, vOne := b.ar.Key == 1, b.ar.Val == 1
	var pk, pv int64
	for i := 0; i < len(recs); {
		r := &recs[i]
		d := r.d
		j := i + 1
		for ; j < len(recs) && recs[j].k == r.k && recs[j].v == r.v && recs[j].t == r.t; j++ {
			var o bool
			if d, o = addDiff(d, recs[j].d); o {
				// A partial sum left int64: the run, to its end, exactly.
				for j++; j < len(recs) && recs[j].k == r.k && recs[j].v == r.v && recs[j].t == r.t; j++ {
				}
				run := recs[i:j]
				if d, o = exactSum(len(run), func(x int) int64 { return run[x].d }); o {
					overflow = overflowAt(overflow, r.t)
				}
				break
			}
		}
		i = j
		if d == 0 {
			continue
		}
		newKey := n == 0 || pk != r.k
		if newKey || pv != r.v {
			if newKey {
				if kOne {
					keys[nk] = r.k
				}
				keyOffs[nk] = uint32(nv)
				nk++
			}
			if vOne {
				vals[nv] = r.v
			}
			valOffs[nv] = uint32(n)
			nv++
		}
		pk, pv = r.k, r.v
		times[n], diffs[n] = r.t, d
		n++
	}
	keyOffs[nk] = uint32(nv)
	valOffs[nv] = uint32(n)
	return nk, nv, n, overflow
}

// writeCols11 is writeCols for one-column keys and vals in columns laid out
// as colsOf lays them (keys, vals, times and diffs at one stride in one
// block, the val offsets after the key offsets), the arity of every seal of
// a two-column arrangement. Other columns go through the general loop.
//
// A chunk of records at a time (emitChunk), one loop checks them for a run
// of equal (key, val, time) or a zero diff (random updates have none) and
// a second writes them to the columns without a branch a record: the key
// and val go to the slot after the last one kept whether or not they start
// a new one, and the counts move by whether they did, so keys repeating at
// random (a few updates a key) cost no mispredicted branch. Records with a
// run or a zero are consolidated in place first and written again from
// the start. The writes go through two base pointers within the lengths
// checked on entry, so the loop keeps its indexes in registers: one loop
// doing everything, over the six slices, spilled them to the stack and cost
// 2 to 3 times as much (docs/engine-history.md, "Columns from two pointers").
//
// Records the sort found consolidated (clean) are written without the
// check: the sort's insertion pass compared every adjacent pair already.
func (b *Builder) writeCols11(out *Batch, recs []rec, clean bool) (nk, nv, n int, overflow []frontier.Time) {
	m, stride := len(recs), len(out.keys)
	words, offs := unsafe.Pointer(unsafe.SliceData(out.keys)), unsafe.Pointer(unsafe.SliceData(out.keyOffs))
	if m == 0 || m > stride || len(out.vals) != stride || len(out.times) != stride || len(out.diffs) != stride ||
		len(out.keyOffs) != stride+1 || len(out.valOffs) != stride+1 ||
		unsafe.Pointer(unsafe.SliceData(out.vals)) != unsafe.Add(words, stride*8) ||
		unsafe.Pointer(unsafe.SliceData(out.times)) != unsafe.Add(words, 2*stride*8) ||
		unsafe.Pointer(unsafe.SliceData(out.diffs)) != unsafe.Add(words, 3*stride*8) ||
		unsafe.Pointer(unsafe.SliceData(out.valOffs)) != unsafe.Add(offs, (stride+1)*4) {
		return b.writeColsAny(out, recs)
	}
	nk, nv, ok := emitCols11(recs, words, offs, stride, clean)
	if !ok {
		recs, overflow = consolidateSat(recs)
		if len(recs) == 0 {
			out.keyOffs[0], out.valOffs[0] = 0, 0
			return 0, 0, 0, overflow
		}
		nk, nv, _ = emitCols11(recs, words, offs, stride, true)
	}
	return nk, nv, len(recs), overflow
}

// consolidateSat consolidates sorted recs in place: equal (key, val, time)
// summed exactly (exactSum), a total out of int64 saturated as a merge
// does (returning the times that overflowed, ascending), zero diffs
// dropped.
func consolidateSat(recs []rec) ([]rec, []frontier.Time) {
	var overflow []frontier.Time
	w := 0
	for i := 0; i < len(recs); i++ {
		r, first := recs[i], i
		for i+1 < len(recs) && recs[i+1].k == r.k && recs[i+1].v == r.v && recs[i+1].t == r.t {
			i++
			var o bool
			if r.d, o = addDiff(r.d, recs[i].d); o {
				// A partial sum left int64: the run, to its end, exactly.
				for i+1 < len(recs) && recs[i+1].k == r.k && recs[i+1].v == r.v && recs[i+1].t == r.t {
					i++
				}
				run := recs[first : i+1]
				if r.d, o = exactSum(len(run), func(x int) int64 { return run[x].d }); o {
					overflow = overflowAt(overflow, r.t)
				}
				break
			}
		}
		recs[w] = r
		w += b2i(r.d != 0) // a zero's slot is taken by the next
	}
	return recs[:w], overflow
}

// emitChunk is how many records emitCols11 checks before it writes them:
// 8 KiB of records, which the check brings into L1 for the writes.
const emitChunk = 256

// emitCols11 writes sorted recs (at least one, at most stride) into the
// columns of a colsOf block: keys, vals, times and diffs at words plus 0,
// 1, 2 and 3 strides of 8 bytes, key offsets at offs and val offsets after
// stride+1 of them. It returns the keys and vals written, and whether the
// records were consolidated already (no two adjacent of equal (key, val,
// time), no zero diff): if not, what it wrote is not a batch, and the
// caller consolidates them and calls it again. Each chunk of records is
// checked and then written, in two loops of few enough live values to stay
// in registers. Records known consolidated (clean: the sort saw them so,
// or consolidateSat made them so) are written without the check.
func emitCols11(recs []rec, words, offs unsafe.Pointer, stride int, clean bool) (nk, nv int, ok bool) {
	if clean && invariants.Enabled {
		invariants.Assertf(consolidated(recs), "batch: %d records said consolidated are not", len(recs))
	}
	pk, pv := ^recs[0].k, int64(0) // pk starts a key and a val
	for lo := 0; lo < len(recs); lo += emitChunk {
		hi := min(lo+emitChunk, len(recs))
		if !clean && !consolidated(recs[lo:min(hi+1, len(recs))]) { // one past: the run check looks ahead
			return 0, 0, false
		}
		nk, nv, pk, pv = emitRange(recs[:hi], lo, words, offs, stride, nk, nv, pk, pv)
	}
	*(*uint32)(unsafe.Add(offs, nk*4)) = uint32(nv)
	*(*uint32)(unsafe.Add(offs, (stride+1+nv)*4)) = uint32(len(recs))
	return nk, nv, true
}

// consolidated reports whether sorted recs have no two adjacent records of
// equal (key, val, time) and no zero diff.
func consolidated(recs []rec) bool {
	bad := 0
	for i := 0; i+1 < len(recs); i++ {
		r, x := &recs[i], &recs[i+1]
		bad |= b2i((x.k^r.k)|(x.v^r.v)|int64(x.t^r.t) == 0) | b2i(r.d == 0)
	}
	return bad == 0 && recs[len(recs)-1].d != 0
}

// emitRange writes consolidated recs[lo:] into emitCols11's columns after
// nk keys and nv vals, the last of them pk and pv, without a branch a
// record: the key and val go to the slot after the last one written whether
// or not they start a new one, and the counts move by whether they did.
// On amd64 the records after the batch's first run in assembly
// (emitRangeFast, emit_amd64.s): 23 instructions a record against 35 for
// the Go loop, which keeps two of its values on the stack for want of
// registers, and, every eighth record, six prefetches of the columns'
// slots 128 records ahead, which Go cannot issue. The Go loop
// (emitRangeGo) is the reference the tests compare it with, and the loop
// on other architectures. REQUIRES: the columns
// alias nothing of recs (the assembly reads each record's predecessor
// after writing the columns), as writeCols requires of its callers.
func emitRange(recs []rec, lo int, words, offs unsafe.Pointer, stride, nk, nv int, pk, pv int64) (int, int, int64, int64) {
	if !emitHasFast || lo >= len(recs) {
		return emitRangeGo(recs, lo, words, offs, stride, nk, nv, pk, pv)
	}
	if lo == 0 {
		// The batch's first record has none before it: pk and pv stand
		// for one, which the assembly does not read.
		nk, nv, pk, pv = emitRangeGo(recs[:1], 0, words, offs, stride, nk, nv, pk, pv)
		if lo = 1; lo == len(recs) {
			return nk, nv, pk, pv
		}
	}
	f := sealEmit{
		rs: unsafe.Pointer(&recs[lo:][0]), n: len(recs) - lo, i: lo,
		keys: words, vals: unsafe.Add(words, stride*8),
		times: unsafe.Add(words, 2*stride*8), diffs: unsafe.Add(words, 3*stride*8),
		keyOffs: offs, valOffs: unsafe.Add(offs, (stride+1)*4),
		nk: nk, nv: nv,
	}
	emitRangeFast(&f)
	last := &recs[len(recs)-1]
	return f.nk, f.nv, last.k, last.v
}

// sealEmit is the state emitRangeFast runs on: the records from the first
// to write (rs, n of them, the first numbered i) and the columns by their
// first elements; it writes back nk and nv.
type sealEmit struct {
	rs               unsafe.Pointer
	n, i             int
	keys, vals       unsafe.Pointer
	times, diffs     unsafe.Pointer
	keyOffs, valOffs unsafe.Pointer
	nk, nv           int
}

// emitRangeGo is emitRange's loop in Go. Every column is addressed from
// the two base pointers, so the loop's values fit in registers but two
// (with a pointer a column, or the state in a struct, Go's register
// allocator kept the counts on the stack: twice the time).
func emitRangeGo(recs []rec, lo int, words, offs unsafe.Pointer, stride, nk, nv int, pk, pv int64) (int, int, int64, int64) {
	vo := uintptr(stride+1) * 4
	for i := lo; i < len(recs); i++ {
		r := &recs[i]
		k, v := r.k, r.v
		newKey := b2i(k != pk)
		newVal := newKey | b2i(v != pv)
		*(*int64)(unsafe.Add(words, nk*8)) = k
		*(*uint32)(unsafe.Add(offs, nk*4)) = uint32(nv)
		*(*int64)(unsafe.Add(words, (stride+nv)*8)) = v
		*(*uint32)(unsafe.Add(offs, vo+uintptr(nv)*4)) = uint32(i)
		*(*uint64)(unsafe.Add(words, (2*stride+i)*8)) = r.t
		*(*int64)(unsafe.Add(words, (3*stride+i)*8)) = r.d
		nk += newKey
		nv += newVal
		pk, pv = k, v
	}
	return nk, nv, pk, pv
}

// overflowErr returns an *OverflowError for the times, or nil for none.
func overflowErr(ts []frontier.Time) error {
	if len(ts) == 0 {
		return nil
	}
	return &OverflowError{Times: ts}
}

func (b *Builder) buildWide(desc frontier.Description) (*Batch, error) {
	ka, va := b.ar.Key, b.ar.Val
	w := ka + va
	rows, times, diffs := b.sortedWide()
	n := len(times)
	row := func(i int) []int64 { return rows[i*w : i*w+w] }
	// Consolidate in place and count distinct keys and (key, val) pairs.
	m, nk, nv := 0, 0, 0
	var overflow []frontier.Time
	for i := 0; i < n; {
		d := diffs[i]
		j := i + 1
		for ; j < n && times[j] == times[i] && slices.Equal(row(j), row(i)); j++ {
			var o bool
			if d, o = addDiff(d, diffs[j]); o {
				// A partial sum left int64: the run, to its end, exactly.
				for j++; j < n && times[j] == times[i] && slices.Equal(row(j), row(i)); j++ {
				}
				run := diffs[i:j]
				if d, o = exactSum(len(run), func(x int) int64 { return run[x] }); o {
					overflow = overflowAt(overflow, times[i])
				}
				break
			}
		}
		if d != 0 {
			r := row(i)
			if m == 0 {
				nk, nv = 1, 1
			} else if prev := row(m - 1); !slices.Equal(prev[:ka], r[:ka]) {
				nk++
				nv++
			} else if !slices.Equal(prev[ka:], r[ka:]) {
				nv++
			}
			for c, x := range r {
				rows[m*w+c] = x
			}
			times[m], diffs[m] = times[i], d
			m++
		}
		i = j
	}
	out := &Batch{
		desc:    desc,
		ar:      b.ar,
		keys:    column[int64](nk * ka)[:0],
		keyOffs: column[uint32](nk + 1)[:0],
		vals:    column[int64](nv * va)[:0],
		valOffs: column[uint32](nv + 1)[:0],
		times:   slices.Clone(times[:m]),
		diffs:   slices.Clone(diffs[:m]),
	}
	for i := range m {
		r := row(i)
		k, v := r[:ka], r[ka:]
		newKey := i == 0 || !slices.Equal(row(i - 1)[:ka], k)
		if newKey || !slices.Equal(row(i - 1)[ka:], v) {
			if newKey {
				out.keys = append(out.keys, k...)
				out.keyOffs = append(out.keyOffs, uint32(len(out.valOffs)))
			}
			out.vals = append(out.vals, v...)
			out.valOffs = append(out.valOffs, uint32(i))
		}
	}
	out.keyOffs = append(out.keyOffs, uint32(len(out.valOffs)))
	out.valOffs = append(out.valOffs, uint32(m))
	return out, overflowErr(overflow)
}

// sortedWide sorts the pushed wide updates (sortWide) and gathers them in
// sorted order into the builder's sorted columns (one pass of random
// reads), so that consolidation and the columns read sequentially.
func (b *Builder) sortedWide() (rows []int64, times []uint64, diffs []int64) {
	w := b.ar.Key + b.ar.Val
	perm := b.sortWide()
	n := len(perm)
	rows = grow(b.sRows[:0], n*w)[:n*w]
	times = grow(b.sTimes[:0], n)[:n]
	diffs = grow(b.sDiffs[:0], n)[:n]
	b.sRows, b.sTimes, b.sDiffs = rows, times, diffs
	for i, p := range perm {
		dst, src := rows[i*w:i*w+w], b.rows[int(p)*w:int(p)*w+w]
		for c := range dst { // NB: rows are short, a loop beats memmove
			dst[c] = src[c]
		}
		times[i], diffs[i] = b.times[p], b.diffs[p]
	}
	return rows, times, diffs
}

// sortWide returns the permutation that sorts the wide rows and times, in
// b.perm: by radix sort (radix.go) from radixMin updates up, else by pdqsort,
// both on packed major keys.
func (b *Builder) sortWide() []uint32 {
	w := b.ar.Key + b.ar.Val
	n := len(b.times)
	rows, times := b.rows, b.times
	wk := newWideKey(rows, times, w, b.mins, b.shift)
	b.mins, b.shift = wk.mins, wk.shift
	ks := grow(b.keys[:0], n)[:n]
	for i := range ks {
		ks[i] = keyIdx{wk.of(rows, times, i), uint32(i)}
	}
	if n < b.radixMin {
		slices.SortFunc(ks, func(x, y keyIdx) int { return wk.cmp(rows, times, x, y) })
	} else {
		if cap(b.keyScratch) < n {
			b.keyScratch = column[keyIdx](n)
		}
		ks, b.keyScratch, b.counts = radixSortWide(ks, b.keyScratch, &wk, rows, times, b.counts)
	}
	b.keys = ks
	perm := grow(b.perm[:0], n)[:n]
	for i, e := range ks {
		perm[i] = e.idx
	}
	b.perm = perm
	return perm
}

// blockOf returns a copy of recs in memory allocated for it and not zeroed
// first (a make followed by a copy of its length): the block a batch's
// columns will take (colsOf).
func blockOf(recs []rec) []rec {
	block := make([]rec, len(recs))
	copy(block, recs)
	return block
}

// sortBlock sorts the records of block, one-column keys and vals, out of
// it into the builder's buffer (len(block) of them) and returns columns
// viewing the block (colsOf), free for the records to be consolidated into
// them, and whether the sort saw the records consolidated (clean: only
// the bucket pass tells). Up to bucketMax records the sort is one bucket
// pass (bucketSort), beyond it the LSD radix sort. REQUIRES: len(block) > 0.
func (b *Builder) sortBlock(block []rec) (cols *Batch, clean bool) {
	n := len(block)
	if cap(b.recs) < n {
		b.recs = column[rec](n)
	}
	b.recs = b.recs[:n]
	var sorted []rec
	if n <= b.bucketMax {
		sorted, b.ids, b.counts, clean = bucketSort(block, b.recs, b.ids, b.counts, &b.tr)
	} else {
		sorted, _, b.counts = radixSort(block, b.recs, b.counts)
	}
	if &sorted[0] != &b.recs[0] {
		copy(b.recs, sorted)
	}
	return colsOf(block), clean
}

// BuildBlock is Build for a batcher that gathered the updates itself into
// block (unsorted one-column keys and vals, not aliasing the builder's
// records, which it leaves empty): the block becomes the new batch's
// columns (colsOf), so no copy of the records is made for them.
// REQUIRES: an arity of {1, 1}, len(block) >= 2 and no records pushed.
func (b *Builder) BuildBlock(lower, upper frontier.Frontier, block []rec) (*Batch, error) {
	desc := frontier.Description{Lower: lower, Upper: upper, Since: frontier.Min()}
	b.tr = timeRange{}
	cols, clean := b.sortBlock(block)
	out, err := b.consolidateInto(desc, b.recs, cols, clean)
	b.Reset()
	if terr := b.checkTimes(out, desc); terr != nil {
		return nil, terr
	}
	if invariants.Enabled {
		if cerr := out.Check(); cerr != nil {
			invariants.Assertf(false, "batch: BuildBlock produced a bad batch: %v", cerr)
		}
	}
	return out, err
}

// colsOf returns columns for a batch of len(block) one-column keys and vals
// whose keys, vals, times and diffs lie in the block's memory: n 32-byte
// records viewed as four columns of n 64-bit integers. The block is free
// for the columns once its records are elsewhere (a sort out of it). Every
// field of rec is a 64-bit integer, as are the columns' elements, so either
// view of the memory holds whatever the other wrote. The offsets are not
// zeroed either: the column writer writes every offset below what the
// batch keeps, as it writes every key, val, time and diff. REQUIRES:
// len(block) > 0.
func colsOf(block []rec) *Batch {
	n := len(block)
	words := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(block))), 4*n)
	offs := column[uint32](2 * (n + 1))
	return &Batch{
		keys:    words[:n:n],
		vals:    words[n : 2*n : 2*n],
		times:   unsafe.Slice((*uint64)(unsafe.Pointer(&words[2*n])), n),
		diffs:   words[3*n : 4*n : 4*n],
		keyOffs: offs[: n+1 : n+1],
		valOffs: offs[n+1:],
	}
}
