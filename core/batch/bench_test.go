package batch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

// Benchmarks of the batch hot paths, each beside a limit that does the least
// work the operation needs on the same records (ARCHITECTURE.md, "Performance
// rules"). The number that matters is the ratio to the limit:
//
//	Build/SortLimit    goal <= 1.5x (stretch 1.3x)
//	Merge/MergeLimit   goal <= 2x, allocs/op independent of n
//	Seek gallop/binary sorted probes
//
// All inputs come from fixed PCG seeds and are made outside the timed loop.
// Under -short the n=1000000 cases are skipped so that
// `go test -short -bench . -benchtime 1x` stays fast.

// benchSizes are the input sizes of the Build, SortLimit, Merge and
// MergeLimit benchmarks.
var benchSizes = []int{100_000, 1_000_000}

// skipLarge skips a benchmark over n updates under -short when n is large.
func skipLarge(b *testing.B, n int) {
	b.Helper()
	if testing.Short() && n >= 1_000_000 {
		b.Skip("n >= 1000000 under -short")
	}
}

// benchUpd is one generated update with one-column key and val: the
// builder's own 32-byte record, which the SortLimit and MergeLimit baselines
// sort and merge with the builder's own comparator.
type benchUpd = rec

var cmpBenchUpd = cmpRec

// genUpdates returns n unsorted updates: keys uniform over [0, n/4) (so keys
// repeat), vals uniform over all of int64 (negative ones included), times
// uniform over [tlo, tlo+10), diffs ±1.
func genUpdates(n int, seed, tlo uint64) []benchUpd {
	rng := rand.New(rand.NewPCG(seed, 0x7261636562656e63))
	nk := max(int64(n/4), 1)
	out := make([]benchUpd, n)
	for i := range out {
		d := int64(1)
		if rng.IntN(2) == 0 {
			d = -1
		}
		out[i] = benchUpd{k: rng.Int64N(nk), v: int64(rng.Uint64()), t: tlo + rng.Uint64N(10), d: d}
	}
	return out
}

// reportPer reports the timed nanoseconds per unit of work, where each loop
// iteration did perOp units.
func reportPer(b *testing.B, perOp int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perOp), "ns/"+unit)
}

// reportLimitRatio reports the benchmark's time per op divided by the time
// per op of limit, its baseline on the same records, measured right after
// the timed loop in the same process (median of five untimed runs) — the
// ratio ARCHITECTURE.md asks every hot path to report. The separate
// *Limit benchmarks give the baseline's own figures.
func reportLimitRatio(b *testing.B, limit func()) {
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.StopTimer()
	defer b.StartTimer()
	var runs []float64
	for range 5 {
		start := time.Now()
		limit()
		runs = append(runs, float64(time.Since(start).Nanoseconds()))
	}
	slices.Sort(runs)
	b.ReportMetric(perOp/runs[2], "x-limit")
}

// buildBatch builds the updates into one batch over [lo, hi) (setup only).
func buildBatch(tb testing.TB, ups []benchUpd, lo, hi uint64) *Batch {
	tb.Helper()
	bld := NewBuilder(Arity{1, 1}, len(ups))
	for _, u := range ups {
		bld.Push1(u.k, u.v, u.t, u.d)
	}
	out, err := bld.Build(frontier.At(lo), frontier.At(hi))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkBuild times pushing n unsorted updates into a reused Builder with
// Push1 and building them into one batch (sort, consolidation and the new
// batch's columns), once per iteration. One untimed build first sizes the
// builder's scratch, as in steady use.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			skipLarge(b, n)
			ups := genUpdates(n, 1, 0)
			bld := NewBuilder(Arity{1, 1}, n)
			build := func() {
				for _, u := range ups {
					bld.Push1(u.k, u.v, u.t, u.d)
				}
				if _, err := bld.Build(frontier.At(0), frontier.At(10)); err != nil {
					b.Fatal(err)
				}
			}
			build() // warm up: the builder's scratch, so B/op is the batch's
			b.ReportAllocs()
			for b.Loop() {
				build()
			}
			reportPer(b, n, "update")
			scratch := make([]benchUpd, n)
			reportLimitRatio(b, func() {
				copy(scratch, ups)
				slices.SortFunc(scratch, cmpBenchUpd)
			})
		})
	}
}

// BenchmarkSortLimit is the limit of BenchmarkBuild: copying the same records
// into a scratch slice of 32-byte records and sorting them by (key, val,
// time) with slices.SortFunc, once per iteration.
func BenchmarkSortLimit(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			skipLarge(b, n)
			ups := genUpdates(n, 1, 0)
			scratch := make([]benchUpd, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(scratch, ups)
				slices.SortFunc(scratch, cmpBenchUpd)
			}
			reportPer(b, n, "update")
		})
	}
}

// BenchmarkBuildWide times BenchmarkBuild's work for key and val arity 2,
// which goes through the generic permutation sort, with Push.
func BenchmarkBuildWide(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			skipLarge(b, n)
			ups := genUpdates(n, 2, 0)
			// Split each key over two columns and derive a second val column,
			// so rows tie on their first column and need the second.
			rows := make([][4]int64, n)
			for i, u := range ups {
				rows[i] = [4]int64{u.k / 4, u.k % 4, u.v >> 32, u.v & 0xff}
			}
			bld := NewBuilder(Arity{2, 2}, n)
			build := func() {
				for i := range rows {
					r := &rows[i]
					bld.Push(r[:2], r[2:], ups[i].t, ups[i].d)
				}
				if _, err := bld.Build(frontier.At(0), frontier.At(10)); err != nil {
					b.Fatal(err)
				}
			}
			build() // warm up: the builder's scratch, so B/op is the batch's
			b.ReportAllocs()
			for b.Loop() {
				build()
			}
			reportPer(b, n, "update")
		})
	}
}

// mergeInputs returns two adjacent batches of n/2 random updates each, over
// [0, 10) and [10, 20), and their updates as sorted records.
func mergeInputs(tb testing.TB, n int) (b1, b2 *Batch, r1, r2 []benchUpd) {
	b1 = buildBatch(tb, genUpdates(n/2, 3, 0), 0, 10)
	b2 = buildBatch(tb, genUpdates(n-n/2, 4, 10), 10, 20)
	flat := func(b *Batch) []benchUpd {
		out := make([]benchUpd, 0, b.Len())
		for _, u := range b.Updates() {
			out = append(out, benchUpd{u.Key[0], u.Val[0], u.Time, u.Diff})
		}
		return out
	}
	return b1, b2, flat(b1), flat(b2)
}

// mergeCompactions are the compaction frontiers of the Merge benchmarks:
// compact=0 advances nothing, compact=1 advances the times of the first
// batch below 5 to 5, so updates coalesce and some cancel.
var mergeCompactions = []struct {
	name string
	f    frontier.Frontier
}{{"compact=0", frontier.Min()}, {"compact=1", frontier.At(5)}}

// mergeFuel is the fuel of each Merger.Work call in BenchmarkMerge.
const mergeFuel = 1024

// BenchmarkMerge times merging two batches of n/2 updates each to completion
// with a Merger worked in steps of mergeFuel, including Result.
func BenchmarkMerge(b *testing.B) {
	for _, n := range benchSizes {
		for _, comp := range mergeCompactions {
			b.Run(fmt.Sprintf("n=%d/%s", n, comp.name), func(b *testing.B) {
				skipLarge(b, n)
				b1, b2, r1, r2 := mergeInputs(b, n)
				b.ReportAllocs()
				for b.Loop() {
					m := NewMerger(b1, b2, comp.f)
					for !m.Done() {
						fuel := int64(mergeFuel)
						m.Work(&fuel)
					}
					if _, err := m.Result(); err != nil {
						b.Fatal(err)
					}
				}
				reportPer(b, n, "update")
				out := make([]benchUpd, 0, len(r1)+len(r2))
				s := comp.f.MustTime()
				reportLimitRatio(b, func() { out = mergeRecs(out[:0], r1, r2, s) })
			})
		}
	}
}

// BenchmarkMergeLimit is the limit of BenchmarkMerge: a plain two-way merge
// of the same updates as sorted 32-byte records into a preallocated output,
// advancing times by the compaction frontier and consolidating equal
// (key, val, time) as the Merger must.
func BenchmarkMergeLimit(b *testing.B) {
	for _, n := range benchSizes {
		for _, comp := range mergeCompactions {
			b.Run(fmt.Sprintf("n=%d/%s", n, comp.name), func(b *testing.B) {
				skipLarge(b, n)
				_, _, r1, r2 := mergeInputs(b, n)
				s := comp.f.MustTime()
				out := make([]benchUpd, 0, len(r1)+len(r2))
				b.ReportAllocs()
				for b.Loop() {
					out = mergeRecs(out[:0], r1, r2, s)
				}
				if len(out) == 0 {
					b.Fatal("empty merge")
				}
				reportPer(b, n, "update")
			})
		}
	}
}

// mergeRecs appends the merge of the sorted a and b to out, each time
// advanced to at least s, consolidating equal (key, val, time).
func mergeRecs(out, a, b []benchUpd, s uint64) []benchUpd {
	push := func(out []benchUpd, u benchUpd) []benchUpd {
		u.t = max(u.t, s)
		if n := len(out); n > 0 && out[n-1].k == u.k && out[n-1].v == u.v && out[n-1].t == u.t {
			if out[n-1].d += u.d; out[n-1].d == 0 {
				out = out[:n-1]
			}
			return out
		}
		return append(out, u)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if cmpBenchUpd(a[i], b[j]) <= 0 {
			out = push(out, a[i])
			i++
		} else {
			out = push(out, b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		out = push(out, a[i])
	}
	for ; j < len(b); j++ {
		out = push(out, b[j])
	}
	return out
}

var seekSink int

// BenchmarkSeek times sorted key probes into a batch of n distinct keys with
// Cursor.SeekKey (galloping from the current key) against
// Cursor.SeekKeyBinary (binary search over the rest), one fresh cursor per
// iteration.
func BenchmarkSeek(b *testing.B) {
	for _, n := range benchSizes {
		for _, p := range []int{1000, 100_000} {
			for _, method := range []string{"gallop", "binary"} {
				b.Run(fmt.Sprintf("n=%d/probes=%d/method=%s", n, p, method), func(b *testing.B) {
					skipLarge(b, n)
					bld := NewBuilder(Arity{1, 1}, n)
					for i := range n {
						bld.Push1(int64(2*i), 0, 0, 1)
					}
					bt, err := bld.Build(frontier.At(0), frontier.At(1))
					if err != nil {
						b.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(5, uint64(p)))
					probes := make([]int64, p)
					for i := range probes {
						probes[i] = rng.Int64N(int64(2 * n))
					}
					slices.Sort(probes)
					key := make([]int64, 1)
					b.ReportAllocs()
					for b.Loop() {
						c := bt.Cursor()
						for _, x := range probes {
							key[0] = x
							if method == "gallop" {
								c.SeekKey(key)
							} else {
								c.SeekKeyBinary(key)
							}
							seekSink += c.KeyIndex()
						}
					}
					reportPer(b, p, "probe")
				})
			}
		}
	}
}
