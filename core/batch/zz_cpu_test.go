package batch

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuMin(reps int, f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1 << 62)
	for range reps {
		runtime.GC()
		t0 := threadCPU()
		f()
		best = min(best, threadCPU()-t0)
	}
	return best
}

func TestZZCPU(t *testing.T) {
	n := 1_000_000
	for _, k := range []int{2, 4, 8} {
		bs := make([]*Batch, k)
		for i := range bs {
			lo := uint64(10 * i)
			bs[i] = buildBatch(t, genKeyed(n/k, uint64(10+i), lo, "full"), lo, lo+10)
		}
		comp := frontier.At(5)
		kway := cpuMin(5, func() {
			m := NewMergerN(bs, comp)
			for !m.Done() {
				fuel := int64(1024)
				m.Work(&fuel)
			}
			m.Result()
		})
		pair := cpuMin(5, func() {
			level := bs
			for len(level) > 1 {
				var next []*Batch
				for i := 0; i < len(level); i += 2 {
					out, _ := Merge(level[i], level[i+1], comp)
					next = append(next, out)
				}
				level = next
			}
		})
		fmt.Printf("k=%d kway %.1f ns/upd  pairwise %.1f ns/upd\n", k, float64(kway)/float64(n), float64(pair)/float64(n))
	}
	_, _, r1, r2 := mergeInputs(t, n)
	out := make([]rec, n)
	lim := cpuMin(5, func() { mergeLimit(out, r1, r2, 0) })
	b1, b2, _, _ := mergeInputs(t, n)
	two := cpuMin(5, func() { Merge(b1, b2, frontier.Min()) })
	fmt.Printf("limit %.1f  two-way %.1f\n", float64(lim)/float64(n), float64(two)/float64(n))
}
