package benchrun

import (
	"slices"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ddLimit measures, on the sample's own data, the fastest plain Go way to
// do the work of a dd shape (README.md, "Benchmarks"), so the
// engine's figures can be read as ratios to it on any host:
//
//   - DDArrange: the updates as (key, val, time, diff) records radix-sorted
//     exactly as the engine's builder plans its sort, then consolidated
//     (core/batch's SortLimit, the limit BenchmarkInstall pairs with the
//     same work; limit-ns/row); and, a weaker reference labelled as such,
//     the (key, val) pairs packed into uint64s, sorted by comparison
//     (slices.Sort) and summed over equal neighbours (limit-sort-ns/row);
//   - DDCount: count per key in a Go map sized up front (limit-ns/row);
//   - DDJoin: a Go map hash join of the two inputs, building on the left
//     and emitting every matched pair (limit-ns/row, per input row);
//   - DDRounds: the trace as a Go map of (key, val) to count, loaded with
//     the updates through as_of, then every later update applied
//     (limit-ns/update).
//
// DDImport has no limit: an import shares batches by pointer, and the Go
// limit of taking a reference is no measurement.
func ddLimit(b *Benchmark, inputs []*spec.Table) []benchfmt.Value {
	switch b.builtinBase() {
	case "DDArrange":
		if len(inputs[0].Columns) != 2 {
			return nil // the limits sort (key, val) pairs
		}
		d, _ := limitArrange(inputs[0])
		return append(perRow(d, inputs[0].Len(), "limit-ns/row"),
			perRow(limitArrangeSort(inputs[0]), inputs[0].Len(), "limit-sort-ns/row")...)
	case "DDCount":
		return perRow(limitCount(inputs[0]), inputs[0].Len(), "limit-ns/row")
	case "DDJoin":
		return perRow(limitJoin(inputs[0], inputs[1]), inputs[0].Len()+inputs[1].Len(), "limit-ns/row")
	case "DDRounds":
		d, n := limitRounds(inputs[0], b.Spec.Plan.Plan.AsOf)
		return perRow(d, n, "limit-ns/update")
	}
	return nil
}

func perRow(d time.Duration, n int, unit string) []benchfmt.Value {
	if n == 0 {
		return nil
	}
	return []benchfmt.Value{{Value: float64(d.Nanoseconds()) / float64(n), Unit: unit}}
}

// sink keeps a limit's result alive so the compiler cannot drop its work.
type sink struct{ n int64 }

func (s *sink) add(x int64) { s.n += x }

// limitArrange sorts and consolidates t's updates as the builder plans
// (batch.SortLimit) and returns the time and how many updates remain. The
// timed run is the second: the first, untimed, touches the limit's buffers,
// which it keeps (as BenchmarkInstall's limit keeps them between runs), so
// the limit pays no page faults. It panics if the result is not sorted and
// consolidated: a limit that skipped work would flatter every ratio taken
// against it.
func limitArrange(t *spec.Table) (time.Duration, int) {
	var lim batch.SortLimit
	lim.Grow(t.Len())
	lim.Load(t.Vals, t.Times, t.Diffs)
	lim.Run()
	start := time.Now()
	lim.Load(t.Vals, t.Times, t.Diffs)
	kept := lim.Run()
	d := time.Since(start)
	if err := lim.Check(); err != nil {
		panic(err)
	}
	return d, kept
}

// limitArrangeSort is the comparator-sort reference: (key, val) packed into
// a uint64 (32 bits each), slices.Sort, equal neighbours summed. It does
// less than the engine (no times, no diffs carried) by a slower method:
// the sum over a run of equal neighbours adds the diffs of the rows at
// those positions in input order, the same additions as the sorted rows'
// own diffs, whose values only the timing's sink reads.
func limitArrangeSort(t *spec.Table) time.Duration {
	var s sink
	start := time.Now()
	packed := make([]uint64, t.Len())
	for i := range packed {
		r := t.Row(i)
		packed[i] = uint64(r[0])<<32 | uint64(uint32(r[1]))
	}
	slices.Sort(packed)
	var run int64
	for i := range packed {
		run += t.Diffs[i]
		if i+1 == len(packed) || packed[i+1] != packed[i] {
			s.add(run)
			run = 0
		}
	}
	d := time.Since(start)
	_ = s.n
	return d
}

func limitCount(t *spec.Table) time.Duration {
	start := time.Now()
	m := make(map[int64]int64, t.Len())
	for i := range t.Len() {
		m[t.Row(i)[0]] += t.Diffs[i]
	}
	d := time.Since(start)
	_ = len(m)
	return d
}

func limitJoin(l, r *spec.Table) time.Duration {
	start := time.Now()
	m := make(map[int64]int, l.Len())
	for i := range l.Len() {
		m[l.Row(i)[0]] = i
	}
	out := make([]int64, 0, 3*r.Len())
	for i := range r.Len() {
		row := r.Row(i)
		if j, ok := m[row[0]]; ok {
			out = append(out, row[0], l.Row(j)[1], row[1])
		}
	}
	d := time.Since(start)
	_ = len(out)
	return d
}

func limitRounds(t *spec.Table, asOf uint64) (time.Duration, int) {
	m := make(map[[2]int64]int64, t.Len())
	for i := range t.Len() {
		if t.Times[i] <= asOf {
			r := t.Row(i)
			m[[2]int64{r[0], r[1]}] += t.Diffs[i]
		}
	}
	n := 0
	start := time.Now()
	for i := range t.Len() {
		if t.Times[i] > asOf {
			r := t.Row(i)
			m[[2]int64{r[0], r[1]}] += t.Diffs[i]
			n++
		}
	}
	return time.Since(start), n
}
