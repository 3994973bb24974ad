package reduce

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// benchRows returns n rows (group, x): groups uniform in [0, groups), x
// uniform in [0, 1<<30), so records are almost all distinct.
func benchRows(n, groups int) (ks, xs []int64) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(groups)))
	ks, xs = make([]int64, n), make([]int64, n)
	for i := range n {
		ks[i], xs[i] = rng.Int64N(int64(groups)), rng.Int64N(1<<30)
	}
	return ks, xs
}

var benchFns = []Fn{Count, Sum, Min, Max}

// benchSizes are the input sizes; -short keeps the smaller one.
func benchSizes() []int {
	if testing.Short() {
		return []int{100_000}
	}
	return []int{100_000, 1_000_000}
}

// benchGroups are the group counts for n rows: 1e3 and 1e5, and n itself
// (keys uniform over n values, about 0.632 n distinct: the shape of
// differential-dataflow's count over 1M random updates).
func benchGroups(n int) []int {
	gs := []int{1_000, 100_000}
	if !slices.Contains(gs, n) {
		gs = append(gs, n)
	}
	return gs
}

// mapAggregate is the limit: a Go map from group to the aggregate, the
// fastest known Go way to aggregate the same rows once (no retractions,
// no times, no errors).
func mapAggregate(fn Fn, ks, xs []int64, groups int) int {
	m := make(map[int64]int64, groups)
	switch fn {
	case Count:
		for _, k := range ks {
			m[k]++
		}
	case Sum:
		for i, k := range ks {
			m[k] += xs[i]
		}
	case Min:
		for i, k := range ks {
			if v, ok := m[k]; !ok || xs[i] < v {
				m[k] = xs[i]
			}
		}
	case Max:
		for i, k := range ks {
			if v, ok := m[k]; !ok || xs[i] > v {
				m[k] = xs[i]
			}
		}
	}
	return len(m)
}

func benchAggs(fn Fn) []Aggregate { return []Aggregate{{Fn: fn, Col: 0}} }

// BenchmarkAggregateLimit is the limit of BenchmarkReduce on the same rows.
func BenchmarkAggregateLimit(b *testing.B) {
	for _, fn := range benchFns {
		for _, n := range benchSizes() {
			for _, groups := range benchGroups(n) {
				ks, xs := benchRows(n, groups)
				b.Run(fmt.Sprintf("fn=%v/n=%d/groups=%d", fn, n, groups), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						mapAggregate(fn, ks, xs, groups)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "install-ns")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/update")
				})
			}
		}
	}
}

// buildInput arranges the rows by group into one batch at time 0.
func buildInput(bld *batch.Builder, ks, xs []int64) (*batch.Batch, error) {
	bld.Reset()
	for i, k := range ks {
		bld.Push1(k, xs[i], 0, 1)
	}
	return bld.Build(frontier.Min(), frontier.At(1))
}

var ar11 = batch.Arity{Key: 1, Val: 1}

// BenchmarkReduce installs a reduce over n rows: direct arranges the rows
// and reduces them; imported imports an index another runtime already
// maintains (published before the timer) and reduces it. install-ns is
// per install, ns/update per row, x-limit the ratio to mapAggregate on the
// same rows measured in the same run (pairedRatio).
func BenchmarkReduce(b *testing.B) {
	for _, fn := range benchFns {
		for _, n := range benchSizes() {
			for _, groups := range benchGroups(n) {
				ks, xs := benchRows(n, groups)
				for _, index := range []string{"imported", "direct"} {
					b.Run(fmt.Sprintf("fn=%v/n=%d/groups=%d/index=%s", fn, n, groups, index), func(b *testing.B) {
						benchInstall(b, fn, ks, xs, index == "imported", func() { mapAggregate(fn, ks, xs, groups) })
					})
				}
			}
		}
	}
}

func benchInstall(b *testing.B, fn Fn, ks, xs []int64, imported bool, limit func()) {
	n := len(ks)
	bld := batch.NewBuilder(ar11, n)
	var pub *share.Spine
	if imported {
		h, w, sp := share.NewTrace(ar11, spine.Options{})
		in, err := buildInput(bld, ks, xs)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Insert(in); err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		defer h.Release()
		pub = sp
	}
	b.ReportAllocs()
	var ratios []float64
	for b.Loop() {
		start := time.Now()
		var in Input
		var bs []*batch.Batch
		var upper frontier.Frontier
		var im *share.Import
		var w *trace.Writer
		if imported {
			var err error
			if im, err = pub.LocalPoint().Import(frontier.Min(), frontier.Empty()); err != nil {
				b.Fatal(err)
			}
			for _, e := range im.Drain(nil) {
				if e.Batch != nil {
					bs = append(bs, e.Batch)
				} else {
					upper = e.Frontier
				}
			}
			in = Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar11}
		} else {
			batchIn, err := buildInput(bld, ks, xs)
			if err != nil {
				b.Fatal(err)
			}
			var h *trace.Handle
			h, w = trace.NewSpine(ar11, spine.Options{})
			if err := w.Insert(batchIn); err != nil {
				b.Fatal(err)
			}
			in, bs, upper = Input{Reader: h, Pres: batch.Identity(), Arity: ar11}, []*batch.Batch{batchIn}, frontier.At(1)
		}
		r, err := New(in, Options{Aggregates: benchAggs(fn)})
		if err != nil {
			b.Fatal(err)
		}
		o, err := r.Step(bs, upper)
		if err != nil || !o.Retired {
			b.Fatalf("install: retired %v, %v", o.Retired, err)
		}
		r.Release()
		if im != nil {
			im.Close()
		}
		if w != nil {
			w.Close()
		}
		ratios = append(ratios, pairedRatio(b, time.Since(start), limit))
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per, "install-ns")
	b.ReportMetric(per/float64(n), "ns/update")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-limit")
}

// pairedRatio runs limit once with the timer stopped, right after an
// iteration that took d, and returns d over the limit's time. x-limit is
// the median of these ratios: each pairs an install with the limit run
// next to it, so load that comes and goes on a shared machine moves both
// sides of most pairs alike. A collection before and after the limit
// keeps either side from paying for the other's garbage.
func pairedRatio(b *testing.B, d time.Duration, limit func()) float64 {
	b.StopTimer()
	defer b.StartTimer()
	runtime.GC()
	start := time.Now()
	limit()
	l := time.Since(start)
	runtime.GC()
	return float64(d) / float64(l)
}

// BenchmarkReduceSteady feeds rounds of updates into a reduce over a
// 1,000,000-row input held at a fixed size: each round inserts round/2
// rows and retracts round/2 rows present, at a new time; the reduce
// retires it. ns/update is per update of a round, merges included.
func BenchmarkReduceSteady(b *testing.B) {
	n, groups := 1_000_000, 100_000
	if testing.Short() {
		n = 100_000
	}
	for _, fn := range []Fn{Count, Min} {
		for _, round := range []int{1, 1000} {
			for _, index := range []string{"imported", "direct"} {
				b.Run(fmt.Sprintf("fn=%v/round=%d/index=%s", fn, round, index), func(b *testing.B) {
					benchSteady(b, fn, n, groups, round, index == "imported")
				})
			}
		}
	}
}

func benchSteady(b *testing.B, fn Fn, n, groups, round int, imported bool) {
	ks, xs := benchRows(n, groups)
	bld := batch.NewBuilder(ar11, n)
	first, err := buildInput(bld, ks, xs)
	if err != nil {
		b.Fatal(err)
	}
	var in Input
	var h *trace.Handle
	var w *trace.Writer
	var sp *share.Spine
	var im *share.Import
	if imported {
		h, w, sp = share.NewTrace(ar11, spine.Options{})
	} else {
		h, w = trace.NewSpine(ar11, spine.Options{})
	}
	if err := w.Insert(first); err != nil {
		b.Fatal(err)
	}
	var pending []*batch.Batch
	upper := frontier.At(1)
	if imported {
		if im, err = sp.LocalPoint().Import(frontier.Min(), frontier.Empty()); err != nil {
			b.Fatal(err)
		}
		in = Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar11}
	} else {
		in = Input{Reader: h, Pres: batch.Identity(), Arity: ar11}
		pending = []*batch.Batch{first}
	}
	r, err := New(in, Options{Aggregates: benchAggs(fn)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		r.Release()
		if im != nil {
			im.Close()
			h.Release()
		}
		w.Close()
	}()
	var evs []share.Event
	step := func() {
		if imported {
			if t, ok := upper.Time(); ok {
				h.SetLogicalCompaction(frontier.At(t))
				h.SetPhysicalCompaction(frontier.At(t))
			}
			sp.Refresh()
			evs = im.Drain(evs[:0])
			for _, e := range evs {
				if e.Batch != nil {
					pending = append(pending, e.Batch)
				}
			}
		}
		o, err := r.Step(pending, upper)
		if err != nil || !o.Retired {
			b.Fatalf("step to %v: retired %v, %v", upper, o.Retired, err)
		}
		pending = pending[:0]
	}
	step()
	rng := rand.New(rand.NewPCG(1, 2))
	small := batch.NewBuilder(ar11, round)
	tm := uint64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		small.Reset()
		for j := range round {
			i := rng.IntN(n)
			if j%2 == 0 || round == 1 {
				// Replace row i: retract it, insert a fresh one (a round of 1
				// alternates: insert at odd times, retract at even ones).
				if round == 1 && tm%2 == 0 {
					small.Push1(ks[i], xs[i], tm, -1)
					continue
				}
				small.Push1(ks[i], xs[i], tm, -1)
				ks[i], xs[i] = rng.Int64N(int64(groups)), rng.Int64N(1<<30)
				small.Push1(ks[i], xs[i], tm, 1)
			}
		}
		nb, err := small.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Insert(nb); err != nil {
			b.Fatal(err)
		}
		w.Exert(int64(2 * round))
		tm++
		upper = frontier.At(tm)
		if !imported {
			pending = append(pending, nb)
		}
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(round), "ns/update")
}
