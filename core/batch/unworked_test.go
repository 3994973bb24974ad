package batch

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A merger allocates its output columns at its first Work with fuel, not
// when it is made: a merge a spine starts and nothing works holds no output
// (core/spine's TestAStartedMergeHoldsNoOutputUntilWorked). Every kernel:
// two inputs and three, one-column keys and vals and two-column keys.
func TestAMergerAllocatesItsOutputWhenWorked(t *testing.T) {
	const n = 20000
	mk := func(ar Arity, lo uint64) *Batch {
		bld := NewBuilder(ar, n)
		row := make([]int64, ar.Key+ar.Val)
		for i := range int64(n) {
			for c := range row {
				row[c] = i*int64(c+1) + int64(lo)
			}
			bld.Push(row[:ar.Key], row[ar.Key:], lo, 1)
		}
		b, err := bld.Build(frontier.At(lo), frontier.At(lo+1))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bytes := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	for _, ar := range []Arity{{Key: 1, Val: 1}, {Key: 2, Val: 1}} {
		for _, k := range []int{2, 3} {
			t.Run(fmt.Sprintf("arity=%d,%d/inputs=%d", ar.Key, ar.Val, k), func(t *testing.T) {
				var bs []*Batch
				for i := range k {
					bs = append(bs, mk(ar, uint64(i)))
				}
				var m *Merger
				made := bytes(func() { m = NewMergerN(bs, frontier.Min()) })
				worked := bytes(func() {
					fuel := int64(1)
					m.Work(&fuel)
				})
				t.Logf("made: %d bytes; the first Work: %d", made, worked)
				if made*8 > worked {
					t.Errorf("made: %d bytes, the first Work: %d: the output was allocated when the merger was made", made, worked)
				}
				fuel := int64(1) << 62
				m.Work(&fuel)
				out, err := m.Result()
				if err != nil || out.Len() != k*n {
					t.Fatalf("merged %d updates (%v), want %d", out.Len(), err, k*n)
				}
			})
		}
	}
}
