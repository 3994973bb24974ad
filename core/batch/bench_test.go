package batch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

// Benchmarks of the batch hot paths, each beside a limit that does the least
// work the operation needs on the same records (README.md,
// "Benchmarks"). The number that matters is the ratio to the limit:
//
//	Build/RadixLimit   goal <= 1.3x (x-radix); RadixLimit is an LSD radix
//	                   sort of the same records with the builder's own digit
//	                   plan, then a consolidation pass
//	Build/SortLimit    a second, labelled reference (x-sort): the same
//	                   records sorted by slices.SortFunc
//	Merge/MergeLimit   goal <= 1.5x, allocs/op independent of n; MergeLimit is
//	                   a branch-free two-way merge of the same records
//	Seek gallop/binary sorted probes
//
// Build and its limits run on two key distributions: keys=narrow (uniform
// over n/4 values, so keys repeat and the packed radix key is short) and
// keys=full (uniform over all of int64, so the radix plan must drop bits and
// sort runs by comparison).
//
// All inputs come from fixed PCG seeds and are made outside the timed loop.
// Under -short the n=1000000 cases are skipped so that
// `go test -short -bench . -benchtime 1x` stays fast.

// benchSizes are the input sizes of the Build, SortLimit, Merge and
// MergeLimit benchmarks.
var benchSizes = []int{100_000, 1_000_000}

// keyRanges are the key distributions of the Build benchmarks.
var keyRanges = []string{"narrow", "full"}

// skipLarge skips a benchmark over n updates under -short when n is large.
func skipLarge(b *testing.B, n int) {
	b.Helper()
	if testing.Short() && n >= 1_000_000 {
		b.Skip("n >= 1000000 under -short")
	}
}

// benchUpd is one generated update with one-column key and val: the
// builder's own 32-byte record, which the limits sort and merge.
type benchUpd = rec

var cmpBenchUpd = cmpRec

// genUpdates returns n unsorted updates with narrow keys; see genKeyed.
func genUpdates(n int, seed, tlo uint64) []benchUpd { return genKeyed(n, seed, tlo, "narrow") }

// genKeyed returns n unsorted updates: keys uniform over [0, n/4) (narrow:
// keys repeat) or over all of int64 (full), vals uniform over all of int64
// (negative ones included), times uniform over [tlo, tlo+10), diffs ±1.
func genKeyed(n int, seed, tlo uint64, keys string) []benchUpd {
	rng := rand.New(rand.NewPCG(seed, 0x7261636562656e63))
	nk := max(int64(n/4), 1)
	out := make([]benchUpd, n)
	for i := range out {
		d := int64(1)
		if rng.IntN(2) == 0 {
			d = -1
		}
		k := int64(rng.Uint64())
		if keys == "narrow" {
			k = rng.Int64N(nk)
		}
		out[i] = benchUpd{k: k, v: int64(rng.Uint64()), t: tlo + rng.Uint64N(10), d: d}
	}
	return out
}

// reportPer reports the timed nanoseconds per unit of work, where each loop
// iteration did perOp units.
func reportPer(b *testing.B, perOp int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perOp), "ns/"+unit)
}

// limitRun is one limit of a benchmark: the unit its ratio is reported as
// and a run of it on the benchmark's records.
type limitRun struct {
	unit string
	run  func()
}

// loopPaired runs op under b.Loop, each op paired with one run of lim (timer
// stopped), and reports the median over the pairs of the op's time divided
// by lim's in its pair: the ratio README.md's "Benchmarks" reports for every
// hot path. A pair runs back to back, so it shares the machine's load of
// that moment, and the ratio holds on a busy machine where separate figures
// would not. The order within a pair alternates (op first, then lim first):
// whichever runs second meets what the first left in the caches (an op's
// freshly written output, a limit's buffers), and run always second a limit
// read up to 15% slower than its own figure (BenchmarkMerge's x-limit 0.79
// with the op always first, 0.91 alternating, on one host). Then each of
// refs, a weaker reference, is paired with op as many times as lim was,
// after the timed loop: run inside it, a comparator sort between the pairs
// slowed the next limit's run some 50% and the op's 20% (a build's x-radix
// read 1.36 against 1.65 without it). The separate *Limit benchmarks give
// the limits' own figures.
func loopPaired(b *testing.B, op func(), lim limitRun, refs ...limitRun) {
	ratios := pairs(op, lim.run, func(op func()) int {
		n := 0
		for b.Loop() {
			op()
			n++
		}
		return n
	}, b.StopTimer, b.StartTimer)
	report := func(unit string, r []float64) {
		slices.Sort(r)
		b.ReportMetric(r[len(r)/2], unit)
	}
	report(lim.unit, ratios)
	for _, ref := range refs {
		n := len(ratios)
		report(ref.unit, pairs(op, ref.run, func(op func()) int {
			for range n {
				op()
			}
			return n
		}, func() {}, func() {}))
	}
}

// pairs runs op and limit as pairs, op's timed runs driven by loop (which
// calls the function it is given once per pair and returns how many
// pairs it made), op first in even pairs and limit first in odd ones, with
// stop and start around each limit run, and returns each pair's ratio of
// op's time to limit's.
func pairs(op, limit func(), loop func(func()) int, stop, start func()) []float64 {
	var ratios []float64
	i := 0
	runLimit := func() time.Duration {
		stop()
		ls := time.Now()
		limit()
		d := time.Since(ls)
		start()
		return d
	}
	loop(func() {
		var d, l time.Duration
		if i%2 == 1 {
			l = runLimit()
		}
		s := time.Now()
		op()
		d = time.Since(s)
		if i%2 == 0 {
			l = runLimit()
		}
		i++
		ratios = append(ratios, float64(d)/float64(l))
	})
	return ratios
}

// radixLimit is the limit of a build (SortLimit): it copies ups into recs
// (what pushing does), sorts them as the builder plans, using scratch, and
// consolidates them in place. It returns the consolidated records. recs
// and scratch have len(ups).
func radixLimit(ups, recs, scratch []rec, lim *SortLimit) []rec {
	n := copy(recs, ups)
	return lim.sort(recs[:n], scratch)
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

// buildWarm is how many builds, each with a run of its limit, BenchmarkBuild
// runs untimed before its timed loop. Each build allocates its batch's
// block; a process's first builds grow the heap into memory never touched
// before, which a process that has built for a while has grown already,
// and which the limit, reusing its buffers, pays only once (BenchmarkInstall
// warms up for the same reason). Without them the Figures script's 20
// builds a sample read the heap's growth: at 1e5 on an AMD EPYC host
// (family 26), x-radix 1.23–1.38 narrow and 1.27–1.45 full in samples of
// 20, against 1.14–1.21 and 1.19–1.36 with them and 1.18–1.19 and
// 1.27–1.31 over 200 builds.
const buildWarm = 20

// BenchmarkBuild times pushing n unsorted updates into a reused Builder with
// Push1 and building them into one batch (sort, consolidation and the new
// batch's columns), once per iteration. Two untimed builds first size the
// builder's buffers, as in steady use (a builder's first build makes no
// scratch; its second makes it), and buildWarm more, each beside a run of
// the limit, let the heap grow as it would. x-radix is the time of an op over
// RadixLimit's work on the same records run beside it (median of the
// pairs, loopPaired; goal <= 1.3), x-sort the same over SortLimit's, paired
// after the timed loop so that its sorts slow none of x-radix's pairs.
func BenchmarkBuild(b *testing.B) {
	for _, keys := range keyRanges {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("keys=%s/n=%d", keys, n), func(b *testing.B) {
				skipLarge(b, n)
				ups := genKeyed(n, 1, 0, keys)
				bld := NewBuilder(Arity{1, 1}, n)
				build := func() {
					for _, u := range ups {
						bld.Push1(u.k, u.v, u.t, u.d)
					}
					if _, err := bld.Build(frontier.At(0), frontier.At(10)); err != nil {
						b.Fatal(err)
					}
				}
				build() // warm up: the builder's buffers (the first build
				build() // makes no scratch), so B/op is the batch's
				recs, scratch := make([]rec, n), make([]rec, n)
				var lim SortLimit
				if !testing.Short() {
					for range buildWarm {
						build()
						radixLimit(ups, recs, scratch, &lim)
					}
				}
				b.ReportAllocs()
				loopPaired(b, build,
					limitRun{"x-radix", func() { radixLimit(ups, recs, scratch, &lim) }},
					limitRun{"x-sort", func() {
						copy(recs, ups)
						slices.SortFunc(recs, cmpBenchUpd)
					}})
				reportPer(b, n, "update")
			})
		}
	}
}

// BenchmarkSeal times a steady round's seal: a chunk of 1,000 random
// two-column rows (keys over all of int64) pushed into a Batcher and sealed
// into one batch, gathering, sorting and writing the batch's columns, as an
// arrangement does every round. Its limit (x-radix) loads the same chunk
// into records and sorts and consolidates them as the builder plans it
// (batch.SortLimit), into warm buffers; both run in the cache.
func BenchmarkSeal(b *testing.B) {
	const n = 1000
	rows, times, diffs, seal := sealRound(b, n)
	seal()
	var lim SortLimit
	lim.Grow(n)
	b.ReportAllocs()
	loopPaired(b, seal, limitRun{"x-radix", func() {
		lim.Load(rows, times, diffs)
		lim.Run()
	}})
	reportPer(b, n, "update")
}

// sealRound returns a round of n updates (one-column keys and vals over
// the full key range) as a chunk's columns, and a function that pushes
// them whole into a batcher kept across calls and seals them.
func sealRound(tb testing.TB, n int) (rows []int64, times []uint64, diffs []int64, seal func()) {
	ups := genKeyed(n, 7, 0, "full")
	rows, times, diffs = make([]int64, 2*n), make([]uint64, n), make([]int64, n)
	for i, u := range ups {
		rows[2*i], rows[2*i+1], times[i], diffs[i] = u.k, u.v, u.t, u.d
	}
	bt := NewBatcher(Arity{1, 1}, n)
	keyCols, valCols := []int{0}, []int{1}
	return rows, times, diffs, func() {
		bt.PushChunk(rows, 2, keyCols, valCols, times, diffs)
		if _, err := bt.Seal(frontier.At(0), frontier.At(10)); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRadixLimit is the limit of BenchmarkBuild: radixLimit on the same
// records (copy, sort as the builder plans it, consolidation), once per
// iteration.
func BenchmarkRadixLimit(b *testing.B) {
	for _, keys := range keyRanges {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("keys=%s/n=%d", keys, n), func(b *testing.B) {
				skipLarge(b, n)
				ups := genKeyed(n, 1, 0, keys)
				recs, scratch := make([]rec, n), make([]rec, n)
				var lim SortLimit
				var out []rec
				b.ReportAllocs()
				for b.Loop() {
					out = radixLimit(ups, recs, scratch, &lim)
				}
				if len(out) == 0 {
					b.Fatal("radix limit consolidated everything away")
				}
				reportPer(b, n, "update")
			})
		}
	}
}

// BenchmarkSortLimit is the second, comparator reference of BenchmarkBuild:
// copying the same records into a scratch slice of 32-byte records and
// sorting them by (key, val, time) with slices.SortFunc, once per iteration.
func BenchmarkSortLimit(b *testing.B) {
	for _, keys := range keyRanges {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("keys=%s/n=%d", keys, n), func(b *testing.B) {
				skipLarge(b, n)
				ups := genKeyed(n, 1, 0, keys)
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
// [0, 10) and [10, 20).
func mergeInputs(tb testing.TB, n int) (b1, b2 *Batch) {
	b1 = buildBatch(tb, genUpdates(n/2, 3, 0), 0, 10)
	b2 = buildBatch(tb, genUpdates(n-n/2, 4, 10), 10, 20)
	return b1, b2
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
				b1, b2 := mergeInputs(b, n)
				lim, err := NewMergeLimit(b1, b2, comp.f.MustTime())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				loopPaired(b, func() {
					m := NewMerger(b1, b2, comp.f)
					for !m.Done() {
						fuel := int64(mergeFuel)
						m.Work(&fuel)
					}
					if _, err := m.Result(); err != nil {
						b.Fatal(err)
					}
				}, limitRun{"x-limit", func() { lim.Run() }})
				reportPer(b, n, "update")
			})
		}
	}
}

// BenchmarkMergeLimit is the limit of BenchmarkMerge: MergeLimit, a
// branch-free two-way merge of the same updates as sorted 32-byte records
// into a preallocated output, advancing times by the compaction frontier and
// consolidating as the Merger must.
func BenchmarkMergeLimit(b *testing.B) {
	for _, n := range benchSizes {
		for _, comp := range mergeCompactions {
			b.Run(fmt.Sprintf("n=%d/%s", n, comp.name), func(b *testing.B) {
				skipLarge(b, n)
				b1, b2 := mergeInputs(b, n)
				lim, err := NewMergeLimit(b1, b2, comp.f.MustTime())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					lim.Run()
				}
				if err := lim.Check(); err != nil {
					b.Fatal(err)
				}
				reportPer(b, n, "update")
			})
		}
	}
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

// TestBenchLimitsAgree checks the limits compute what the engine computes on
// the benchmark data, so a ratio to them compares equal work: radixLimit
// returns the built batch's updates, MergeLimit the merged batch's.
func TestBenchLimitsAgree(t *testing.T) {
	// Nothing loaded, then one update: both sort paths take them.
	for _, lsd := range []bool{false, true} {
		lim := SortLimit{lsd: lsd}
		if n := lim.Run(); n != 0 || lim.Check() != nil {
			t.Fatalf("lsd=%v: an empty SortLimit kept %d records", lsd, n)
		}
		lim.Load([]int64{1, 2}, []uint64{3}, []int64{1})
		if n := lim.Run(); n != 1 || lim.out[0] != (rec{1, 2, 3, 1}) {
			t.Fatalf("lsd=%v: one update gave %v", lsd, lim.out)
		}
	}
	flat := func(b *Batch) []rec {
		var out []rec
		for _, u := range b.Updates() {
			out = append(out, rec{u.Key[0], u.Val[0], u.Time, u.Diff})
		}
		return out
	}
	for _, keys := range keyRanges {
		ups := genKeyed(5000, 1, 0, keys)
		// Repeat some updates and cancel others, so that consolidation
		// both sums and drops.
		ups = append(ups, ups[:500]...)
		for _, u := range ups[500:1000] {
			u.d = -u.d
			ups = append(ups, u)
		}
		n := len(ups)
		want := flat(buildBatch(t, ups, 0, 10))
		for _, lsd := range []bool{false, true} {
			got := radixLimit(ups, make([]rec, n), make([]rec, n), &SortLimit{lsd: lsd})
			if !slices.Equal(got, want) {
				t.Fatalf("keys=%s lsd=%v: radixLimit differs from Build (%d vs %d records)", keys, lsd, len(got), len(want))
			}
			// The exported path, as core/runtime drives it: rows loaded
			// in two parts, then run twice (the second run reuses the
			// buffers and must not see the first run's records).
			rows, times, diffs := make([]int64, 0, 2*n), make([]uint64, 0, n), make([]int64, 0, n)
			for _, u := range ups {
				rows, times, diffs = append(rows, u.k, u.v), append(times, u.t), append(diffs, u.d)
			}
			lim := &SortLimit{lsd: lsd}
			for range 2 {
				lim.Load(rows[:2*1000], times[:1000], diffs[:1000])
				lim.Load(rows[2*1000:], times[1000:], diffs[1000:])
				if m := lim.Run(); m != len(want) || !slices.Equal(lim.out, want) {
					t.Fatalf("keys=%s lsd=%v: SortLimit kept %d records, Build %d", keys, lsd, m, len(want))
				}
				if err := lim.Check(); err != nil {
					t.Fatal(err)
				}
			}
			// Check catches output out of order and a zero diff.
			lim.out[0], lim.out[1] = lim.out[1], lim.out[0]
			if lim.Check() == nil {
				t.Fatalf("keys=%s: Check passed records out of order", keys)
			}
			lim.out[0], lim.out[1] = lim.out[1], lim.out[0]
			lim.out[2].d = 0
			if lim.Check() == nil {
				t.Fatalf("keys=%s: Check passed a zero diff", keys)
			}
		}
	}
	b1, b2 := mergeInputs(t, 5000)
	// A second batch that retracts some of the first's updates: under a
	// compaction frontier beyond both, they cancel.
	retract := genUpdates(2500, 3, 0)[:300]
	for i := range retract {
		retract[i].t, retract[i].d = 10+retract[i].t, -retract[i].d
	}
	b3 := buildBatch(t, retract, 10, 20)
	if _, err := Merge(b1, b3, frontier.At(20)); err != nil {
		t.Fatal(err)
	}
	cases := append(slices.Clone(mergeCompactions), struct {
		name string
		f    frontier.Frontier
	}{"compact=20 with retractions", frontier.At(20)})
	for i, comp := range cases {
		if i == len(cases)-1 {
			b2 = b3
		}
		m, err := Merge(b1, b2, comp.f)
		if err != nil {
			t.Fatal(err)
		}
		lim, err := NewMergeLimit(b1, b2, comp.f.MustTime())
		if err != nil {
			t.Fatal(err)
		}
		// Run twice: the second run reuses the output.
		for range 2 {
			if n := lim.Run(); n != m.Len() || !slices.Equal(lim.out, flat(m)) {
				t.Fatalf("%s: MergeLimit differs from Merge (%d vs %d records)", comp.name, n, m.Len())
			}
			if err := lim.Check(); err != nil {
				t.Fatalf("%s: %v", comp.name, err)
			}
		}
		if lim.Len() != b1.Len()+b2.Len() {
			t.Fatalf("%s: MergeLimit.Len %d, want %d", comp.name, lim.Len(), b1.Len()+b2.Len())
		}
		// Check catches output out of order, a zero diff and a time
		// not advanced to the compaction frontier.
		lim.out[0], lim.out[1] = lim.out[1], lim.out[0]
		if lim.Check() == nil {
			t.Fatalf("%s: Check passed records out of order", comp.name)
		}
		lim.out[0], lim.out[1] = lim.out[1], lim.out[0]
		d := lim.out[2].d
		lim.out[2].d = 0
		if lim.Check() == nil {
			t.Fatalf("%s: Check passed a zero diff", comp.name)
		}
		lim.out[2].d = d
		if s := comp.f.MustTime(); s > 0 {
			lim.out[0].t = s - 1
			if lim.Check() == nil {
				t.Fatalf("%s: Check passed a time before the compaction frontier", comp.name)
			}
		}
	}
	// Batches that are not adjacent, or not of one-column keys and vals,
	// have no merge limit.
	if _, err := NewMergeLimit(b2, b1, 0); err == nil {
		t.Fatal("NewMergeLimit took batches that are not adjacent")
	}
	if _, err := NewMergeLimit(Empty(Arity{2, 1}, frontier.At(0), frontier.At(10)), b2, 0); err == nil {
		t.Fatal("NewMergeLimit took a batch of two-column keys")
	}
	// Nor has a nil batch, which is ErrNilBatch, as in a merge, where
	// it panicked with a nil dereference.
	for _, pair := range [][2]*Batch{{nil, b2}, {b1, nil}, {nil, nil}} {
		if _, err := NewMergeLimit(pair[0], pair[1], 0); !errors.Is(err, ErrNilBatch) {
			t.Fatalf("NewMergeLimit(%p, %p): %v, want ErrNilBatch", pair[0], pair[1], err)
		}
	}
}

// BenchmarkMergeN times merging k adjacent batches of n/k random updates
// each (times [10i, 10i+10) for batch i, compaction to 5 in the first) to
// completion in one k-way pass with a Merger from NewMergerN worked in steps
// of mergeFuel, including Result. x-pairwise is its time over merging the
// same batches two at a time with the two-way kernel (a balanced tree of
// log2 k passes): what a spine of binary merges pays for the same result.
func BenchmarkMergeN(b *testing.B) {
	for _, k := range []int{4, 8, 16} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("k=%d/n=%d", k, n), func(b *testing.B) {
				skipLarge(b, n)
				bs := make([]*Batch, k)
				for i := range bs {
					lo := uint64(10 * i)
					bs[i] = buildBatch(b, genKeyed(n/k, uint64(10+i), lo, "full"), lo, lo+10)
				}
				comp := frontier.At(5)
				b.ReportAllocs()
				loopPaired(b, func() {
					m := NewMergerN(bs, comp)
					for !m.Done() {
						fuel := int64(mergeFuel)
						m.Work(&fuel)
					}
					if _, err := m.Result(); err != nil {
						b.Fatal(err)
					}
				}, limitRun{"x-pairwise", func() {
					level := bs
					for len(level) > 1 {
						var next []*Batch
						for i := 0; i < len(level); i += 2 {
							out, err := Merge(level[i], level[i+1], comp)
							if err != nil {
								b.Fatal(err)
							}
							next = append(next, out)
						}
						level = next
					}
				}})
				reportPer(b, n, "update")
			})
		}
	}
}

// BenchmarkMergeTop times the merge at the top of a steady trace: the
// largest batch (half of the n updates) with k-1 smaller ones after it (a
// spine's top merges its batch with four of a quarter its size, or with
// those and up to fifteen of the level below when they fold into it), to
// completion in one k-way pass, including Result; the largest batch is
// merged beside the loser tree (kmergebig.go). Its instruction count
// under callgrind is the repeatable figure the kernel's changes are
// measured by (docs/engine-history.md, "Instructions, not seconds").
func BenchmarkMergeTop(b *testing.B) {
	const n = 100_000
	for _, k := range []int{5, 16, 19} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			bs := make([]*Batch, k)
			for i := range bs {
				lo := uint64(10 * i)
				m := n / 2 / (k - 1)
				if i == 0 {
					m = n / 2
				}
				bs[i] = buildBatch(b, genKeyed(m, uint64(10+i), lo, "full"), lo, lo+10)
			}
			b.ReportAllocs()
			for b.Loop() {
				mergeToEnd(b, NewMergerN(bs, frontier.At(5)))
			}
			reportPer(b, n, "update")
		})
	}
}

// mergeToEnd works m to completion in steps of mergeFuel and takes its
// result.
func mergeToEnd(b *testing.B, m *Merger) {
	for !m.Done() {
		fuel := int64(mergeFuel)
		m.Work(&fuel)
	}
	if _, err := m.Result(); err != nil {
		b.Fatal(err)
	}
}

// tallySink keeps BenchmarkTally's counts live.
var tallySink int64

// BenchmarkTally walks a batch of 1,000 random updates (a steady round's
// batch) and counts what it shows: walk=tally with Batch.Tally, walk=cursor
// with a Cursor, key by key, as dataflow.Tally did before.
func BenchmarkTally(b *testing.B) {
	const n = 1000
	bb := buildBatch(b, genKeyed(n, 9, 0, "full"), 0, 10)
	pres := Presentation{Since: frontier.At(5), Until: frontier.Empty()}
	for _, walk := range []string{"tally", "cursor"} {
		b.Run("walk="+walk, func(b *testing.B) {
			f := bb.Tally
			if walk == "cursor" {
				f = func(p Presentation) (int64, int64, int64) { return cursorTally(bb, p) }
			}
			for b.Loop() {
				k, u, s := f(pres)
				tallySink += k + u + s
			}
			reportPer(b, bb.Len(), "update")
		})
	}
}

// BenchmarkMergeShare times a k-way merge of 100,000 updates whose first
// input holds the given share of them (the others split the rest equally),
// with kernel=tree (every input in the loser tree) and kernel=beside (the
// largest input merged beside the tree, kmergebig.go), to completion
// including Result. It is how the kernel's threshold (kwDefault.big) was
// chosen: where beside starts to beat tree.
func BenchmarkMergeShare(b *testing.B) {
	const n = 100_000
	for _, k := range []int{4, 5, 17} {
		for _, share := range []float64{0.25, 0.33, 0.4, 0.5} {
			bs := make([]*Batch, k)
			for i := range bs {
				lo := uint64(10 * i)
				m := int(float64(n) * (1 - share) / float64(k-1))
				if i == 0 {
					m = int(float64(n) * share)
				}
				bs[i] = buildBatch(b, genKeyed(m, uint64(10+i), lo, "full"), lo, lo+10)
			}
			for _, kern := range []struct {
				name string
				big  float64
			}{{"tree", 2}, {"beside", 0}} {
				b.Run(fmt.Sprintf("k=%d/share=%v/kernel=%s", k, share, kern.name), func(b *testing.B) {
					prm := kwParams{stage: kwStage, big: kern.big, bigMin: 3}
					b.ReportAllocs()
					for b.Loop() {
						mergeToEnd(b, newMergerN(bs, frontier.At(5), prm, 0))
					}
					reportPer(b, n, "update")
				})
			}
		}
	}
}

// TestPairsAlternateAndTimeOnlyTheirOwnSide: pairs runs the op first in
// even pairs and the limit first in odd ones, stops the benchmark timer
// around every limit run and only then, and returns one ratio per pair
// of the op's time over its limit's (not the inverse: the op spins 20 ms,
// the limit does nothing, so every ratio is far above 1 however a loaded
// host stretches either).
func TestPairsAlternateAndTimeOnlyTheirOwnSide(t *testing.T) {
	var seq []string
	timerOn := true
	spin := func(d time.Duration) {
		for s := time.Now(); time.Since(s) < d; {
		}
	}
	op := func() {
		if !timerOn {
			t.Fatal("op ran with the timer stopped")
		}
		seq = append(seq, "op")
		spin(20 * time.Millisecond)
	}
	limit := func() {
		if timerOn {
			t.Fatal("limit ran with the timer on")
		}
		seq = append(seq, "lim")
	}
	stop := func() { timerOn = false; seq = append(seq, "stop") }
	start := func() { timerOn = true; seq = append(seq, "start") }
	ratios := pairs(op, limit, func(pair func()) int {
		for range 4 {
			pair()
		}
		return 4
	}, stop, start)
	want := []string{
		"op", "stop", "lim", "start",
		"stop", "lim", "start", "op",
		"op", "stop", "lim", "start",
		"stop", "lim", "start", "op",
	}
	if !slices.Equal(seq, want) {
		t.Fatalf("pairs ran\n%v\nwant\n%v", seq, want)
	}
	if len(ratios) != 4 {
		t.Fatalf("%d ratios for 4 pairs", len(ratios))
	}
	for i, r := range ratios {
		if !(r > 1) || math.IsInf(r, 0) {
			t.Fatalf("pair %d: ratio %v, want the op's 20 ms over the limit's nothing", i, r)
		}
	}
}
