package gen

import (
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/workloads/spec"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/golden.txt (only when the generator algorithm changes on purpose)")

// goldenCases are the generators whose first updates are pinned.
var goldenCases = []struct {
	name    string
	g       spec.Generate
	runSeed uint64
}{
	{"seq", spec.Generate{Rows: 10, Batches: 3, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}, 0},
	{"uniform", spec.Generate{Rows: 12, Seed: 7, Batches: 2, Columns: []spec.ColumnGen{
		{Column: "a", Dist: spec.DistUniform, Min: -5, Max: 5},
		{Column: "b", Dist: spec.DistUniform, Min: math.MinInt64, Max: math.MaxInt64}}}, 0},
	{"zipf_s0.99", spec.Generate{Rows: 12, Seed: 1, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistZipf, N: 50, S: 0.99}}}, 0},
	{"zipf_s0.5", spec.Generate{Rows: 12, Seed: 1, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistZipf, N: 1000, S: 0.5}}}, 0},
	{"zipf_s2", spec.Generate{Rows: 12, Seed: 1, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistZipf, N: 10, S: 2}}}, 0},
	{"retract", spec.Generate{Rows: 20, Seed: 3, Batches: 4, Retract: 0.4, Columns: []spec.ColumnGen{
		{Column: "a", Dist: spec.DistSeq}, {Column: "b", Dist: spec.DistUniform, Min: 0, Max: 99}}}, 0},
	{"retract_runseed", spec.Generate{Rows: 20, Seed: 3, Batches: 4, Retract: 0.4, Columns: []spec.ColumnGen{
		{Column: "a", Dist: spec.DistSeq}, {Column: "b", Dist: spec.DistUniform, Min: 0, Max: 99}}}, 42},
}

func columnsOf(g *spec.Generate) []string {
	var c []string
	for _, cg := range g.Columns {
		c = append(c, cg.Column)
	}
	return c
}

// TestGolden pins the updates of each distribution (G1): the same spec and
// seed must give the same updates in every version.
func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range goldenCases {
		tab := Table(&tc.g, columnsOf(&tc.g), tc.runSeed)
		fmt.Fprintf(&b, "# %s run_seed=%d\n", tc.name, tc.runSeed)
		if err := spec.WriteCSV(&b, tab); err != nil {
			t.Fatal(err)
		}
	}
	const path = "testdata/golden.txt"
	if *rewrite {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("generated updates changed; a generator change breaks every user's results.\ngot:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestTimesRemainder checks G2: rows over batches, the first rows mod
// batches times one more.
func TestTimesRemainder(t *testing.T) {
	g := spec.Generate{Rows: 11, Batches: 4, Retract: 0.5, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}
	tab := Table(&g, []string{"a"}, 0)
	per := map[uint64]int{}
	for _, tm := range tab.Times {
		per[tm]++
	}
	if !reflect.DeepEqual(per, map[uint64]int{0: 3, 1: 3, 2: 3, 3: 2}) {
		t.Errorf("updates per time = %v", per)
	}
	g = spec.Generate{Rows: 2, Batches: 5, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}
	if tab := Table(&g, []string{"a"}, 0); !reflect.DeepEqual(tab.Times, []uint64{0, 1}) {
		t.Errorf("rows < batches: times %v", tab.Times)
	}
}

// TestRetractions checks G3 on a larger run: the retraction count per
// time, that every retraction removes a row still present from an earlier
// time, and that no row's count goes negative.
func TestRetractions(t *testing.T) {
	g := spec.Generate{Rows: 10000, Seed: 9, Batches: 10, Retract: 0.3, Columns: []spec.ColumnGen{
		{Column: "a", Dist: spec.DistSeq}, {Column: "b", Dist: spec.DistZipf, N: 20, S: 0.8}}}
	tab := Table(&g, []string{"a", "b"}, 5)
	if tab.Len() != 10000 {
		t.Fatalf("%d updates, want 10000", tab.Len())
	}
	insertedAt := map[[2]int64]uint64{} // seq makes every inserted row distinct
	retractsAt := map[uint64]int{}
	for i := range tab.Len() {
		r := tab.Row(i)
		k := [2]int64{r[0], r[1]}
		switch tab.Diffs[i] {
		case 1:
			if _, dup := insertedAt[k]; dup {
				t.Fatalf("row %v inserted twice", k)
			}
			insertedAt[k] = tab.Times[i]
		case -1:
			at, ok := insertedAt[k]
			if !ok {
				t.Fatalf("update %d retracts %v, which is not present", i, k)
			}
			if at >= tab.Times[i] {
				t.Fatalf("update %d at time %d retracts %v inserted at the same or a later time %d", i, tab.Times[i], k, at)
			}
			delete(insertedAt, k)
			retractsAt[tab.Times[i]]++
		default:
			t.Fatalf("diff %d", tab.Diffs[i])
		}
	}
	want := map[uint64]int{}
	for tm := uint64(1); tm < 10; tm++ {
		want[tm] = 300
	}
	if !reflect.DeepEqual(retractsAt, want) {
		t.Errorf("retractions per time = %v, want 300 at each time from 1", retractsAt)
	}
	// The cap: with few rows present, no more can be retracted than exist.
	g = spec.Generate{Rows: 12, Batches: 2, Retract: 0.9, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}
	tab = Table(&g, []string{"a"}, 0)
	neg := 0
	for _, d := range tab.Diffs {
		if d < 0 {
			neg++
		}
	}
	if neg != 5 { // floor(6 × 0.9) = 5 ≤ 6 present
		t.Errorf("%d retractions, want 5", neg)
	}
	g = spec.Generate{Rows: 11, Batches: 2, Retract: 0.99, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}
	tab = Table(&g, []string{"a"}, 0)
	neg = 0
	for _, d := range tab.Diffs {
		if d < 0 {
			neg++
		}
	}
	if neg != 4 { // floor(5 × 0.99) = 4
		t.Errorf("%d retractions, want 4", neg)
	}
}

// TestDistributions checks ranges and shapes: uniform stays in min..max and
// reaches both ends; zipf with s ≤ 1 and s > 1 follows (k+1)^-s.
func TestDistributions(t *testing.T) {
	g := spec.Generate{Rows: 20000, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistUniform, Min: -3, Max: 3}}}
	tab := Table(&g, []string{"a"}, 0)
	seen := map[int64]int{}
	for _, v := range tab.Vals {
		if v < -3 || v > 3 {
			t.Fatalf("uniform value %d outside -3..3", v)
		}
		seen[v]++
	}
	for v := int64(-3); v <= 3; v++ {
		if c := seen[v]; c < 2500 || c > 3200 {
			t.Errorf("uniform value %d drawn %d times of 20000, want about 2857", v, c)
		}
	}
	for _, s := range []float64{0.2, 0.99, 1, 1.5} {
		const n, rows = 8, 200000
		g := spec.Generate{Rows: rows, Seed: 2, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistZipf, N: n, S: s}}}
		tab := Table(&g, []string{"a"}, 0)
		count := make([]float64, n)
		for _, v := range tab.Vals {
			count[v]++
		}
		total := 0.0
		for k := range n {
			total += math.Pow(float64(k+1), -s)
		}
		for k := range n {
			want := rows * math.Pow(float64(k+1), -s) / total
			if math.Abs(count[k]-want) > 5*math.Sqrt(want) {
				t.Errorf("zipf s=%v: value %d drawn %v times, want about %.0f", s, k, count[k], want)
			}
		}
	}
}

// TestSeeds checks that the spec seed and the run seed both change the
// updates and that the same pair repeats them.
func TestSeeds(t *testing.T) {
	mk := func(seed, run uint64) []int64 {
		g := spec.Generate{Rows: 50, Seed: seed, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistUniform, Min: 0, Max: 1 << 40}}}
		return Table(&g, []string{"a"}, run).Vals
	}
	a := mk(1, 0)
	if !reflect.DeepEqual(a, mk(1, 0)) {
		t.Error("same seeds gave different updates")
	}
	for _, other := range [][]int64{mk(2, 0), mk(1, 1), mk(0, 1)} {
		if reflect.DeepEqual(a, other) {
			t.Error("a different seed gave the same updates")
		}
	}
	if Combine(1, 2) == Combine(2, 1) {
		t.Error("Combine is symmetric: swapping spec and run seeds repeats updates")
	}
}

// TestPow checks this package's pow against math.Pow.
func TestPow(t *testing.T) {
	for _, x := range []float64{1, 2, 3, 10, 1000, 12345, 1 << 24} {
		for _, y := range []float64{-0.01, -0.5, -0.99, -1, -1.5, -3, -20} {
			got, want := Pow(x, y), math.Pow(x, y)
			if math.Abs(got-want) > 1e-13*want {
				t.Errorf("Pow(%v, %v) = %v, math.Pow = %v", x, y, got, want)
			}
		}
	}
}

// BenchmarkTable measures generation per update; the limit is a loop that
// only draws the same number of uniform values.
func BenchmarkTable(b *testing.B) {
	g := spec.Generate{Rows: 100000, Batches: 100, Retract: 0.1, Columns: []spec.ColumnGen{
		{Column: "a", Dist: spec.DistUniform, Min: 0, Max: 9999}, {Column: "b", Dist: spec.DistZipf, N: 1000, S: 0.99}}}
	b.Run("impl=gen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Table(&g, []string{"a", "b"}, 0)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Rows), "ns/update")
	})
	b.Run("impl=limit", func(b *testing.B) {
		out := make([]int64, 2*g.Rows)
		r := stream{s: 1}
		for b.Loop() {
			for i := range out {
				out[i] = int64(r.below(10000))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.Rows), "ns/update")
	})
}

// TestMoreBatchesThanRows checks that a generator with far more batches
// than rows gives each of the first rows times one update, without
// visiting the empty times (up to 2^64−1 of them), and the same updates
// as with as many batches as rows.
func TestMoreBatchesThanRows(t *testing.T) {
	g := spec.Generate{Rows: 5, Seed: 2, Batches: math.MaxUint64, Retract: 0.5, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistUniform, Min: 0, Max: 9}}}
	done := make(chan *spec.Table, 1)
	go func() { done <- Table(&g, columnsOf(&g), 0) }()
	var tab *spec.Table
	select {
	case tab = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Table with 2^64-1 batches did not return within 10s")
	}
	g5 := g
	g5.Batches = 5
	if want := Table(&g5, columnsOf(&g5), 0); !reflect.DeepEqual(tab, want) {
		t.Errorf("2^64-1 batches: %+v, want the updates of 5 batches %+v", tab, want)
	}
}

// TestRetractCountIsAFloat64Product pins the retraction count as
// docs/spec.md states it: floor of m × retract computed in float64, with
// retract the float64 nearest the number written. 0.29 is read as
// 0.28999999999999998, so a time of 100 updates holds 28 retractions,
// not 29; 0.2900000000000001 gives 29.
func TestRetractCountIsAFloat64Product(t *testing.T) {
	for _, tc := range []struct {
		retract float64
		want    int
	}{{0.29, 28}, {0.2900000000000001, 29}} {
		g := spec.Generate{Rows: 200, Batches: 2, Retract: tc.retract, Columns: []spec.ColumnGen{{Column: "a", Dist: spec.DistSeq}}}
		tab := Table(&g, []string{"a"}, 0)
		n := 0
		for i := range tab.Len() {
			if tab.Times[i] == 1 && tab.Diffs[i] == -1 {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("retract %v, 100 updates at time 1: %d retractions, want %d", tc.retract, n, tc.want)
		}
	}
}

// TestInputsOfOneSeedShareStreams pins what docs/spec.md says of two
// inputs with the same seed: an input's updates depend on its seed, its
// own fields and the run seed, never on its name, so the i-th column of
// each draws from the same stream and equal distributions give equal
// values; another seed gives other values.
func TestInputsOfOneSeedShareStreams(t *testing.T) {
	mk := func(seed uint64, names []string, second spec.ColumnGen) *spec.Table {
		second.Column = names[1]
		g := spec.Generate{Rows: 50, Seed: seed, Batches: 3, Retract: 0.3, Columns: []spec.ColumnGen{
			{Column: names[0], Dist: spec.DistUniform, Min: 0, Max: 1 << 40}, second}}
		return Table(&g, names, 7)
	}
	a := mk(0, []string{"x", "y"}, spec.ColumnGen{Dist: spec.DistZipf, N: 100, S: 1})
	b := mk(0, []string{"p", "q"}, spec.ColumnGen{Dist: spec.DistSeq})
	for i := range a.Len() {
		if a.Row(i)[0] != b.Row(i)[0] || a.Times[i] != b.Times[i] || a.Diffs[i] != b.Diffs[i] {
			t.Fatalf("update %d: first columns %v and %v of two inputs of seed 0 differ", i, a.Row(i), b.Row(i))
		}
	}
	c := mk(1, []string{"x", "y"}, spec.ColumnGen{Dist: spec.DistZipf, N: 100, S: 1})
	if reflect.DeepEqual(a.Vals, c.Vals) {
		t.Error("seeds 0 and 1 gave the same values")
	}
}
