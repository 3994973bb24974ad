package dataflow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
)

// compactionHistory returns an input's history of n two-column updates in
// chunks of 1,000, one a time: rows over n/2 keys and 4 vals, diffs +1 or
// -1, so that about half the rows cancel.
func compactionHistory(n int) []*Chunk {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	var chunks []*Chunk
	for t := 0; t*1000 < n; t++ {
		c := NewChunk(2, 1000)
		for range min(1000, n-t*1000) {
			c.Push([]int64{r.Int64N(int64(n / 2)), r.Int64N(4)}, uint64(t), 1-2*r.Int64N(2))
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// BenchmarkInputCompaction compacts an input's history of n two-column
// updates (compactionHistory: n/1,000 times) to the since of its last
// time, what Inputs.AllowCompaction runs in a worker's wake once the
// history has grown by what the last compaction left. Reports ns/update
// and x-radix, the median ratio over ops of the op's time to its radix
// limit's (batch.SortLimit: the same updates gathered into records, sorted
// as the builder plans and consolidated in place, their times advanced to
// the since before its timed run, which is less work than the op's), run
// untimed beside each op, after it in even pairs and before it in odd
// ones. exact runs compactExact instead, the comparator sort with 128-bit
// sums a history takes when a sum leaves int64: a weaker reference, and
// what every compaction cost before it used the builder.
func BenchmarkInputCompaction(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		chunks := compactionHistory(n)
		since := uint64(len(chunks) - 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if testing.Short() && n > 10000 {
				b.Skip("short")
			}
			// The limit's input: the same updates, times advanced.
			var rows []int64
			var times []uint64
			var diffs []int64
			for _, c := range chunks {
				rows = append(rows, c.Rows...)
				for _, t := range c.Times {
					times = append(times, max(t, since))
				}
				diffs = append(diffs, c.Diffs...)
			}
			var lim batch.SortLimit
			lim.Grow(n)
			limit := func() (time.Duration, int) {
				b.StopTimer()
				defer b.StartTimer()
				start := time.Now()
				lim.Load(rows, times, diffs)
				kept := lim.Run()
				return time.Since(start), kept
			}
			var ratios []float64
			i := 0
			for b.Loop() {
				var lt time.Duration
				kept := -1
				if i%2 == 1 {
					lt, kept = limit()
				}
				start := time.Now()
				out := compactChunks(chunks, 2, n, since)
				took := time.Since(start)
				if i%2 == 0 {
					lt, kept = limit()
				}
				i++
				b.StopTimer()
				if out.Len() != kept {
					b.Fatalf("the compaction kept %d updates, its limit %d", out.Len(), kept)
				}
				if err := lim.Check(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				ratios = append(ratios, float64(took)/float64(lt))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/float64(n), "ns/update")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "x-radix")
		})
		b.Run(fmt.Sprintf("n=%d/exact", n), func(b *testing.B) {
			if testing.Short() && n > 10000 {
				b.Skip("short")
			}
			i := 0
			for b.Loop() {
				compactExact(chunks, 2, n, since)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/float64(n), "ns/update")
		})
	}
}
