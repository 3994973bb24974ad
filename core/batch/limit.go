package batch

import (
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/frontier"
)

// SortLimit is the least work a build of one-column keys and vals needs,
// the limit a build is measured against: the updates as 32-byte records,
// sorted by (key, val, time) exactly as the builder plans it (one bucket
// pass up to bucketSortMax records, the LSD radix sort on the builder's
// digits beyond, tied runs sorted by comparison) and consolidated in place,
// with no batch columns written. BenchmarkBuild in this package and
// BenchmarkInstall in core/runtime pair their builds with it, so both
// measure against the builder's own sort and not a copy of it. The zero
// value is ready to use; it keeps its buffers between runs.
type SortLimit struct {
	recs, scratch, out []rec
	ids                []uint16
	counts             []uint32
	lsd                bool // the LSD radix sort at any size (tests)
}

// Grow makes room for n records, so that loading and running n allocate
// nothing.
func (l *SortLimit) Grow(n int) {
	l.recs = slices.Grow(l.recs, n)
	if cap(l.scratch) < n {
		l.scratch = make([]rec, n)
	}
}

// Load appends the updates of two-column rows, key then val (rows[2i],
// rows[2i+1] at times[i] with diffs[i]), as records after those loaded
// since the last Run: what pushing them into a builder does.
func (l *SortLimit) Load(rows []int64, times []uint64, diffs []int64) {
	n := len(l.recs)
	l.recs = slices.Grow(l.recs, len(times))[:n+len(times)]
	dst, rows, diffs := l.recs[n:], rows[:2*len(times)], diffs[:len(times)]
	for i, t := range times {
		dst[i] = rec{rows[2*i], rows[2*i+1], t, diffs[i]}
	}
}

// Run sorts and consolidates the records loaded since the last Run and
// returns how many updates remain.
func (l *SortLimit) Run() int {
	if cap(l.scratch) < len(l.recs) {
		l.scratch = make([]rec, len(l.recs))
	}
	l.out = l.sort(l.recs, l.scratch)
	l.recs = l.recs[:0]
	return len(l.out)
}

// Check reports an error unless the last Run's output is sorted by (key,
// val, time), consolidated and free of zero diffs: a limit that skipped
// work would flatter the ratio taken against it. Call it outside the
// timed region.
func (l *SortLimit) Check() error {
	for i, r := range l.out {
		if r.d == 0 || i > 0 && cmpRec(l.out[i-1], r) >= 0 {
			return fmt.Errorf("batch: sort limit: record %d of %d out of order, repeated or zero: %v", i, len(l.out), r)
		}
	}
	return nil
}

// sort sorts recs as the builder plans, using scratch (len(scratch) >=
// len(recs)), consolidates the sorted records in place and returns them.
func (l *SortLimit) sort(recs, scratch []rec) []rec {
	n := len(recs)
	if n <= bucketSortMax && !l.lsd {
		src, ids, counts, done := bucketSort(recs, scratch, l.ids, l.counts, nil)
		l.ids, l.counts = ids, counts
		if done {
			return src // the sort saw them consolidated, as the builder uses
		}
		return consolidateRecs(src)
	}
	src, _, counts := radixSort(recs, scratch, l.counts)
	l.counts = counts
	return consolidateRecs(src)
}

// consolidateRecs sums the diffs of equal (key, val, time) in the sorted
// recs in place, drops the zeros and returns what is left.
func consolidateRecs(src []rec) []rec {
	n, w := len(src), 0
	for i := 0; i < n; i++ {
		r := src[i]
		for i+1 < n && src[i+1].k == r.k && src[i+1].v == r.v && src[i+1].t == r.t {
			i++
			r.d += src[i].d
		}
		src[w] = r
		w += b2i(r.d != 0) // a zero's slot is taken by the next
	}
	return src[:w]
}

// MergeLimit is the least work a merge of two adjacent batches of
// one-column keys and vals needs, the limit a merge is measured against:
// their updates as sorted 32-byte records merged into a preallocated output
// without a data-dependent branch per record (the lesser head is chosen by
// arithmetic on the comparison and both cursors advance by it), times
// advanced to the compaction frontier's time and, when that moves any,
// consolidated in one more pass, as a merger must. Under no compaction two
// adjacent batches share no (key, val, time), so their merge is already
// consolidated. BenchmarkMerge and BenchmarkMergeLimit in this package
// measure merges against it, and BenchmarkSteady in core/runtime its steady
// rounds, beside the same window. It keeps its buffers between runs.
type MergeLimit struct {
	a, b, out []rec
	since     frontier.Time
}

// NewMergeLimit returns the limit of merging a and b (one-column keys and
// vals, a's upper b's lower) with times advanced to since. A nil batch is
// an error wrapping ErrNilBatch, as in a merge.
func NewMergeLimit(a, b *Batch, since frontier.Time) (*MergeLimit, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("batch: merge limit: %w", ErrNilBatch)
	}
	one := Arity{1, 1}
	if a.Arity() != one || b.Arity() != one {
		return nil, fmt.Errorf("batch: merge limit: arities %v and %v, want %v", a.Arity(), b.Arity(), one)
	}
	if a.Upper() != b.Lower() {
		return nil, fmt.Errorf("batch: merge limit: batches not adjacent (upper %v, lower %v)", a.Upper(), b.Lower())
	}
	flat := func(bt *Batch) []rec {
		out := make([]rec, bt.Len())
		for i, u := range bt.Updates() {
			out[i] = rec{u.Key[0], u.Val[0], u.Time, u.Diff}
		}
		return out
	}
	l := &MergeLimit{a: flat(a), b: flat(b), since: since}
	l.out = make([]rec, len(l.a)+len(l.b))
	return l, nil
}

// Len returns the updates a run merges: both inputs'.
func (l *MergeLimit) Len() int { return len(l.a) + len(l.b) }

// Run merges the inputs and returns how many updates the output holds.
func (l *MergeLimit) Run() int {
	l.out = mergeRecs(l.out[:cap(l.out)], l.a, l.b, l.since)
	return len(l.out)
}

// Check reports an error unless the last Run's output is sorted by (key,
// val, time), consolidated and free of zero diffs, with no time before the
// compaction frontier's: a limit that skipped work would flatter the ratio
// taken against it. Call it outside the timed region.
func (l *MergeLimit) Check() error {
	for i, r := range l.out {
		if r.d == 0 || r.t < l.since || i > 0 && cmpRec(l.out[i-1], r) >= 0 {
			return fmt.Errorf("batch: merge limit: record %d of %d out of order, repeated, zero or not advanced: %v", i, len(l.out), r)
		}
	}
	return nil
}

// mergeRecs merges the sorted, consolidated a and b into out (len(out) >=
// len(a)+len(b)), advancing times to at least s, and returns out cut to the
// result (MergeLimit).
func mergeRecs(out, a, b []rec, s frontier.Time) []rec {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := &a[i], &b[j]
		// ta = 1 when a's head sorts first (ties go to a).
		ta := b2i(x.k < y.k) | b2i(x.k == y.k)&(b2i(x.v < y.v)|b2i(x.v == y.v)&b2i(x.t <= y.t))
		r := *y
		if ta != 0 {
			r = *x
		}
		r.t = max(r.t, s)
		out[n] = r
		n++
		i += ta
		j += 1 - ta
	}
	for ; i < len(a); i++ {
		r := a[i]
		r.t = max(r.t, s)
		out[n] = r
		n++
	}
	for ; j < len(b); j++ {
		r := b[j]
		r.t = max(r.t, s)
		out[n] = r
		n++
	}
	if s == 0 {
		return out[:n]
	}
	return consolidateRecs(out[:n])
}
