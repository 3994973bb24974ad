package batch

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// drawInt64 draws from a generator chosen per test case: a small range (keys
// repeat and updates consolidate), a medium one, all of int64, or extremes
// (the sign flip and range arithmetic of the radix key).
func drawInt64(t *rapid.T, kind int, label string) int64 {
	switch kind {
	case 0:
		return rapid.Int64Range(-3, 3).Draw(t, label)
	case 1:
		return rapid.Int64Range(-1000, 1000).Draw(t, label)
	case 2:
		return rapid.Int64().Draw(t, label)
	default:
		return rapid.SampledFrom([]int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}).Draw(t, label)
	}
}

func drawTime(t *rapid.T, kind int) uint64 {
	switch kind {
	case 0:
		return rapid.Uint64Range(0, 5).Draw(t, "t")
	case 1:
		return rapid.Uint64Range(1000, 1<<20).Draw(t, "t")
	default:
		return rapid.Uint64().Draw(t, "t")
	}
}

func TestPlanRadix(t *testing.T) {
	for _, c := range []struct {
		n, bits int
		want    radixPlan
	}{
		{1000, 0, radixPlan{}},
		{1000, 5, radixPlan{passes: 1, width: 5}},
		{1000, 64, radixPlan{passes: 1, width: 11, drop: 53}},
		{1 << 20, 18, radixPlan{passes: 2, width: 9}},
		{1 << 20, 64, radixPlan{passes: 2, width: 11, drop: 42}},
	} {
		if got := planRadix(c.n, c.bits); got != c.want {
			t.Errorf("planRadix(%d, %d) = %+v, want %+v", c.n, c.bits, got, c.want)
		}
	}
}

// TestBuildWideRadixMatchesSort is TestBuildRadixMatchesSort for wide rows,
// sorted through packed keys and a permutation.
func TestBuildWideRadixMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: rapid.IntRange(0, 3).Draw(t, "ka"), Val: rapid.IntRange(0, 3).Draw(t, "va")}
		if ar.Key <= 1 && ar.Val <= 1 {
			ar.Key = 2
		}
		radix := NewBuilder(ar, 0)
		radix.radixMin = rapid.IntRange(0, 40).Draw(t, "radixMin")
		pdq := NewBuilder(ar, 0)
		pdq.radixMin = math.MaxInt
		key, val := make([]int64, ar.Key), make([]int64, ar.Val)
		for range rapid.IntRange(1, 3).Draw(t, "builds") {
			kinds := make([]int, ar.Key+ar.Val)
			for i := range kinds {
				kinds[i] = rapid.IntRange(0, 3).Draw(t, "kind")
			}
			tk := rapid.IntRange(0, 2).Draw(t, "tkind")
			for range rapid.IntRange(0, 600).Draw(t, "n") {
				for i := range key {
					key[i] = drawInt64(t, kinds[i], "k")
				}
				for i := range val {
					val[i] = drawInt64(t, kinds[ar.Key+i], "v")
				}
				tm := drawTime(t, tk)
				d := rapid.Int64Range(-2, 2).Draw(t, "d")
				radix.Push(key, val, tm, d)
				pdq.Push(key, val, tm, d)
			}
			requireSameBuild(t, radix, pdq)
		}
	})
}

// requireSameBuild builds what was pushed into radix and pdq and requires a
// valid radix batch equal to the pdqsort one.
func requireSameBuild(t *rapid.T, radix, pdq *Builder) {
	got, err := radix.Build(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	want, err := pdq.Build(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check(); err != nil {
		t.Fatalf("radix build: %v", err)
	}
	if got.String() != want.String() {
		t.Fatalf("radix build\n%s\nwant\n%s", got, want)
	}
}

// TestBuildRadixMatchesSort builds the same updates through the radix sort
// (forced, at any size; the one-pass bucket sort or the LSD radix sort) and
// through pdqsort and requires equal batches, over several builds with one
// builder (the radix sorts swap its buffers).
func TestBuildRadixMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: rapid.IntRange(0, 1).Draw(t, "ka"), Val: rapid.IntRange(0, 1).Draw(t, "va")}
		radix := NewBuilder(ar, 0)
		radix.radixMin = rapid.IntRange(0, 40).Draw(t, "radixMin")
		radix.bucketMax = rapid.SampledFrom([]int{0, 300, bucketSortMax}).Draw(t, "bucketMax")
		radix.warmMax = rapid.SampledFrom([]int{0, 300, warmScatterMax}).Draw(t, "warmMax")
		pdq := NewBuilder(ar, 0)
		pdq.radixMin = math.MaxInt
		for range rapid.IntRange(1, 3).Draw(t, "builds") {
			kk, vk, tk := rapid.IntRange(0, 3).Draw(t, "kkind"), rapid.IntRange(0, 3).Draw(t, "vkind"), rapid.IntRange(0, 2).Draw(t, "tkind")
			for range rapid.IntRange(0, 600).Draw(t, "n") {
				k, v := drawInt64(t, kk, "k"), drawInt64(t, vk, "v")
				tm := drawTime(t, tk)
				d := rapid.Int64Range(-2, 2).Draw(t, "d")
				radix.Push1(k, v, tm, d)
				pdq.Push1(k, v, tm, d)
			}
			requireSameBuild(t, radix, pdq)
		}
	})
}

// TestRadixKeyComposition pins which fields the radix key packs, so that
// TestBuildRadixMatchesSort is known to reach each case.
func TestRadixKeyComposition(t *testing.T) {
	for _, c := range []struct {
		name     string
		recs     []rec
		bits     int
		complete bool
	}{
		{"all equal", []rec{{1, 2, 3, 1}, {1, 2, 3, 1}}, 0, true},
		{"k v t fit", []rec{{0, 0, 0, 1}, {3, 1, 7, 1}}, 2 + 1 + 3, true},
		{"k v fit, t left out", []rec{{5, math.MinInt64, 0, 1}, {5, math.MaxInt64, 1, 1}}, 0 + 64, false},
		{"k only", []rec{{math.MinInt64, 0, 0, 1}, {math.MaxInt64, 1, 0, 1}}, 64, false},
		{"k only, v too wide", []rec{{0, math.MinInt64, 0, 1}, {1, 0, 0, 1}, {2, math.MaxInt64, 0, 1}}, 2, false},
	} {
		rk := newRadixKey(c.recs)
		if rk.bits != c.bits || rk.complete != c.complete {
			t.Errorf("%s: bits %d complete %v, want %d %v", c.name, rk.bits, rk.complete, c.bits, c.complete)
		}
		sorted, _, _ := radixSort(slices.Clone(c.recs), make([]rec, len(c.recs)), nil)
		if !slices.IsSortedFunc(sorted, cmpRec) {
			t.Errorf("%s: radixSort left %v", c.name, sorted)
		}
	}
}

// drawWideBatch builds a batch of up to maxN updates of arity ar with values
// of the given kind and times in [lo, hi).
func drawWideBatch(t *rapid.T, ar Arity, lo, hi uint64, maxN int, label string) *Batch {
	kind := rapid.IntRange(0, 3).Draw(t, label+"-kind")
	bld := NewBuilder(ar, 0)
	key, val := make([]int64, ar.Key), make([]int64, ar.Val)
	for range rapid.IntRange(0, maxN).Draw(t, label+"-n") {
		for i := range key {
			key[i] = drawInt64(t, kind, "k")
		}
		for i := range val {
			val[i] = drawInt64(t, kind, "v")
		}
		bld.Push(key, val, rapid.Uint64Range(lo, hi-1).Draw(t, "t"), rapid.Int64Range(-2, 2).Draw(t, "d"))
	}
	b, err := bld.Build(frontier.At(lo), frontier.At(hi))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeMatchesRebuild checks the merged batch update for update against
// an oracle: building the two batches' updates again from scratch with every
// time advanced by the merged since. Fuel ranges from single updates to whole
// batches, so that runs of keys copied in one step are cut by fuel too.
func TestMergeMatchesRebuild(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := drawArity(t)
		b1 := drawWideBatch(t, ar, 0, 50, 300, "b1")
		b2 := drawWideBatch(t, ar, 50, 100, 300, "b2")
		var comp frontier.Frontier
		switch rapid.IntRange(0, 2).Draw(t, "compkind") {
		case 0:
			comp = frontier.Min()
		case 1:
			comp = frontier.At(rapid.Uint64Range(0, 120).Draw(t, "comp"))
		case 2:
			comp = frontier.Empty()
		}
		m := NewMerger(b1, b2, comp)
		maxFuel := rapid.Int64Range(1, 1000).Draw(t, "maxFuel")
		for !m.Done() {
			fuel := rapid.Int64Range(1, maxFuel).Draw(t, "fuel")
			before := m.WorkDone()
			m.Work(&fuel)
			if m.WorkDone() == before && !m.Done() {
				t.Fatal("Work made no progress")
			}
		}
		out, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Check(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		oracle := NewBuilder(ar, 0)
		s, adv := comp.Time()
		for _, b := range []*Batch{b1, b2} {
			for _, u := range b.Updates() {
				if adv {
					u.Time = max(u.Time, s)
				}
				oracle.Push(u.Key, u.Val, u.Time, u.Diff)
			}
		}
		want, err := oracle.Build(frontier.At(0), frontier.Empty())
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmtUpdates(out), fmtUpdates(want); g != w {
			t.Fatalf("merge of\n%s\nand\n%s\nunder %v:\n%s\nwant\n%s", b1, b2, comp, g, w)
		}
	})
}

func fmtUpdates(b *Batch) string {
	var out []string
	for _, u := range b.Updates() {
		out = append(out, u.String())
	}
	return strings.Join(out, "\n")
}

// TestBuildRadixLongTies: two keys at the ends of the int64 range make the
// key field 64 bits wide, so the packed key holds the key alone and each
// key's updates — half the input, far more than insertion sort takes — must
// be sorted by (val, time) after the scatter.
func TestBuildRadixLongTies(t *testing.T) {
	for _, bucketMax := range []int{0, bucketSortMax} {
		testBuildRadixLongTies(t, bucketMax)
	}
}

func testBuildRadixLongTies(t *testing.T, bucketMax int) {
	ar := Arity{Key: 1, Val: 1}
	radix, pdq := NewBuilder(ar, 0), NewBuilder(ar, 0)
	radix.radixMin, pdq.radixMin = 0, math.MaxInt
	radix.bucketMax = bucketMax
	for i := range 2000 {
		k := int64(math.MinInt64)
		if i%2 == 1 {
			k = math.MaxInt64
		}
		v, tm := int64((i*7919)%1000-500), uint64((i*104729)%13)
		radix.Push1(k, v, tm, 1)
		pdq.Push1(k, v, tm, 1)
	}
	got, err := radix.Build(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	want, err := pdq.Build(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check(); err != nil {
		t.Fatalf("radix build: %v", err)
	}
	if got.String() != want.String() {
		t.Fatalf("radix build (bucketMax %d) differs from pdqsort on long ties", bucketMax)
	}
}

// TestBucketSortLongBuckets: records whose packed keys share their top
// bits fall into one bucket, longer than insertion sorts; bucketSort sorts
// such a bucket on its own before its insertion pass (which, under
// invariants, asserts that no record moves insertionMax places).
func TestBucketSortLongBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{30, 1000, 5000} {
		recs := make([]rec, 0, n+2)
		for i := range n {
			recs = append(recs, rec{k: int64(i % (n/3 + 1)), v: rng.Int64N(3), t: rng.Uint64N(4), d: 1})
		}
		// The extremes of int64 spread the packed key, so every small key
		// lands in one bucket.
		recs = append(recs, rec{k: math.MinInt64, d: 1}, rec{k: math.MaxInt64, d: 1})
		rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		want := slices.Clone(recs)
		slices.SortFunc(want, cmpRec)
		got, _, _, _ := bucketSort(recs, make([]rec, len(recs)), nil, nil, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: bucketSort differs from a sort", n)
		}
	}
}

// recsConsolidated reports what bucketSort's flag claims of sorted recs:
// no two adjacent of equal (k, v, t) and no zero diff.
func recsConsolidated(recs []rec) bool {
	for i, r := range recs {
		if r.d == 0 || i > 0 && eqRec(&recs[i-1], &r) {
			return false
		}
	}
	return true
}

// TestBucketSortSaysConsolidated: bucketSort sorts as a sort does, and its
// flag says the records are consolidated exactly when they are, unless the
// bucket number was the whole key (no insertion pass ran to see them;
// then it says nothing). Keys, vals and times from small ranges repeat
// and collide; zero diffs are drawn too; sizes reach the long buckets
// sorted apart before the insertion pass.
func TestBucketSortSaysConsolidated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kk, vk, tk := rapid.IntRange(0, 3).Draw(t, "key-kind"), rapid.IntRange(0, 3).Draw(t, "val-kind"), rapid.IntRange(0, 2).Draw(t, "time-kind")
		dk := rapid.IntRange(0, 2).Draw(t, "diff-kind")
		n := rapid.IntRange(1, 300).Draw(t, "n")
		recs := make([]rec, n)
		for i := range recs {
			d := int64(1)
			if dk > 0 {
				d = rapid.Int64Range(-int64(dk), int64(dk)).Draw(t, "d")
			}
			recs[i] = rec{drawInt64(t, kk, "k"), drawInt64(t, vk, "v"), drawTime(t, tk), d}
		}
		// Records of equal (k, v, t) may come out in any order of their
		// diffs: compare as multisets, and the order by (k, v, t).
		full := func(a, b rec) int {
			if c := cmpRec(a, b); c != 0 {
				return c
			}
			return cmp.Compare(a.d, b.d)
		}
		want := slices.Clone(recs)
		slices.SortFunc(want, full)
		bmax := min(bits.Len(uint(n)), 16)
		rk := bucketKey(recs, bmax, nil)
		whole := rk.complete && rk.bits <= bmax
		got, _, _, clean := bucketSort(slices.Clone(recs), make([]rec, n), nil, nil, nil)
		if !slices.IsSortedFunc(got, cmpRec) || !slices.Equal(slices.SortedFunc(slices.Values(got), full), want) {
			t.Fatalf("bucketSort differs from a sort")
		}
		is := recsConsolidated(got)
		if clean && !is {
			t.Fatalf("bucketSort says %d records consolidated; they are not", n)
		}
		if !clean && is && !whole {
			t.Fatalf("bucketSort ran its insertion pass over %d consolidated records and did not say so", n)
		}
	})
}

// TestEmitRangeLoopsAgree: the seal's emit in assembly (emitRange, with
// emitRangeFast for every record but a batch's first) writes the same
// columns and returns the same counts as the Go loop, chunk by chunk as
// emitCols11 calls them, over keys and vals that repeat in runs.
func TestEmitRangeLoopsAgree(t *testing.T) {
	if !emitHasFast {
		t.Skip("no assembly loop on this architecture")
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 700).Draw(t, "n")
		kind := rapid.IntRange(0, 3).Draw(t, "kind")
		recs := make([]rec, n)
		for i := range recs {
			recs[i] = rec{drawInt64(t, kind, "k"), drawInt64(t, kind, "v"), drawTime(t, kind%3), drawInt64(t, 2, "d") | 1}
		}
		slices.SortFunc(recs, cmpRec)
		recs = slices.CompactFunc(recs, func(a, b rec) bool { return cmpRec(a, b) == 0 })
		n = len(recs)
		chunk := rapid.IntRange(1, n).Draw(t, "chunk")
		fast, slow := colsOf(make([]rec, n)), colsOf(make([]rec, n))
		emit := func(cols *Batch, f func([]rec, int, unsafe.Pointer, unsafe.Pointer, int, int, int, int64, int64) (int, int, int64, int64)) (int, int, int64, int64) {
			words, offs := unsafe.Pointer(unsafe.SliceData(cols.keys)), unsafe.Pointer(unsafe.SliceData(cols.keyOffs))
			nk, nv, pk, pv := 0, 0, ^recs[0].k, int64(0)
			for lo := 0; lo < n; lo += chunk {
				nk, nv, pk, pv = f(recs[:min(lo+chunk, n)], lo, words, offs, n, nk, nv, pk, pv)
			}
			return nk, nv, pk, pv
		}
		fk, fv, fpk, fpv := emit(fast, emitRange)
		sk, sv, spk, spv := emit(slow, emitRangeGo)
		if fk != sk || fv != sv || fpk != spk || fpv != spv {
			t.Fatalf("assembly returned (%d, %d, %d, %d), Go (%d, %d, %d, %d)", fk, fv, fpk, fpv, sk, sv, spk, spv)
		}
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"keys", fast.keys[:fk], slow.keys[:sk]}, {"vals", fast.vals[:fv], slow.vals[:sv]},
			{"keyOffs", fast.keyOffs[:fk], slow.keyOffs[:sk]}, {"valOffs", fast.valOffs[:fv], slow.valOffs[:sv]},
			{"times", fast.times, slow.times}, {"diffs", fast.diffs, slow.diffs},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("%s: assembly wrote %v, Go %v", c.name, c.got, c.want)
			}
		}
	})
}

// scatter (the assembly loop on amd64, which prefetches 32 records ahead
// and runs the last 32 without) moves every record where scatterGo does
// and leaves the same counts, at lengths on both sides of 32 and with
// buckets from one to many.
func TestScatterMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, n := range []int{0, 1, 2, 31, 32, 33, 64, 65, 1000, 70000} {
		for _, nb := range []int{1, 3, 256, 1 << 16} {
			recs := make([]rec, n)
			ids := make([]uint16, n)
			counts := make([]uint32, nb+1)
			for i := range recs {
				recs[i] = rec{int64(rng.Uint64()), int64(rng.Uint64()), rng.Uint64(), int64(i)}
				ids[i] = uint16(rng.IntN(nb))
				counts[int(ids[i])+1]++
			}
			for d := 1; d <= nb; d++ {
				counts[d] += counts[d-1]
			}
			run := func(f func(recs, scratch, ids, counts unsafe.Pointer, n int)) ([]rec, []uint32) {
				scratch, cs := make([]rec, n+1), slices.Clone(counts)
				f(unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(scratch)), unsafe.Pointer(unsafe.SliceData(ids)), unsafe.Pointer(unsafe.SliceData(cs)), n)
				return scratch, cs
			}
			got, gotCounts := run(scatter)
			want, wantCounts := run(scatterGo)
			if !slices.Equal(got, want) || !slices.Equal(gotCounts, wantCounts) {
				t.Fatalf("n=%d, %d buckets: scatter differs from scatterGo", n, nb)
			}
			for i := range n { // each bucket's records in their order
				if c := counts[ids[i]]; got[c] != recs[i] {
					t.Fatalf("n=%d, %d buckets: record %d not at its bucket's slot %d", n, nb, i, c)
				}
				counts[ids[i]]++
			}
		}
	}
}
