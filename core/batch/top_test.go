package batch

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestBatchesAtTheLargestTime: a batch's upper past the largest time,
// 2^64−1, is {}, never a wrapped {0} or {2^64−1} itself. A seal up to
// {2^64−1} keeps the updates at it buffered; the seal up to {} takes
// them and those pushed after the first seal, on the batcher's paths
// for narrow and wide arities, by Push and by PushChunk, with the radix
// sort and without. A merge compacted to {2^64−1} advances every time
// to it and consolidates what cancels there, its since {2^64−1}.
func TestBatchesAtTheLargestTime(t *testing.T) {
	const top = frontier.MaxTime
	type upd struct {
		k int64
		t frontier.Time
		d int64
	}
	// Keys 0..n-1 at top-1, the even ones retracted at top, key n at top.
	updates := func(n int) []upd {
		var us []upd
		for k := range int64(n) {
			us = append(us, upd{k, top - 1, 1})
			if k%2 == 0 {
				us = append(us, upd{k, top, -1})
			}
		}
		return append(us, upd{int64(n), top, 3})
	}
	count := func(b *Batch, at frontier.Time) map[int64]int64 {
		m := map[int64]int64{}
		for _, u := range b.Updates() {
			if u.Time <= at {
				m[u.Key[0]] += u.Diff
			}
			if !b.Desc().Contains(u.Time) && u.Time != b.Desc().Since.MustTime() {
				t.Fatalf("batch %v holds an update at %d", b.Desc(), u.Time)
			}
		}
		for k, d := range m {
			if d == 0 {
				delete(m, k)
			}
		}
		return m
	}
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		for _, chunk := range []bool{false, true} {
			for _, n := range []int{3, 300} {
				name := fmt.Sprintf("%v/chunk=%v/n=%d", ar, chunk, n)
				bt := NewBatcher(ar, 0)
				bt.bld.radixMin = 2
				push := func(us []upd) {
					if chunk {
						var rows []int64
						var times []uint64
						var diffs []int64
						for _, u := range us {
							rows = append(rows, append(make([]int64, ar.Key-1), u.k, 7)...)
							times, diffs = append(times, u.t), append(diffs, u.d)
						}
						cols := make([]int, ar.Key)
						for i := range cols {
							cols[i] = i
						}
						bt.PushChunk(rows, ar.Key+1, cols, []int{ar.Key}, times, diffs)
						return
					}
					for _, u := range us {
						bt.Push(append(make([]int64, ar.Key-1), u.k), []int64{7}, u.t, u.d)
					}
				}
				push(updates(n))
				b1, err := bt.Seal(frontier.At(0), frontier.At(top))
				if err != nil {
					t.Fatalf("%s: seal to {top}: %v", name, err)
				}
				if b1.Len() != n {
					t.Fatalf("%s: seal to {top} holds %d updates, want the %d before it", name, b1.Len(), n)
				}
				// More at top, pushed after the first seal: the seal to {}
				// gathers them from what it has not sorted yet.
				var more []upd
				for k := range int64(n) {
					more = append(more, upd{int64(n) + 1 + k, top, 1})
				}
				push(more)
				b2, err := bt.Seal(frontier.At(top), frontier.Empty())
				if err != nil {
					t.Fatalf("%s: seal to {}: %v", name, err)
				}
				if want := n/2 + n%2 + 1 + n; b2.Len() != want {
					t.Fatalf("%s: seal to {} holds %d updates, want the %d at top", name, b2.Len(), want)
				}
				want := count(b1, top)
				for k, d := range count(b2, top) {
					want[k] += d
					if want[k] == 0 {
						delete(want, k)
					}
				}
				m, err := Merge(b1, b2, frontier.At(top))
				if err != nil {
					t.Fatalf("%s: merge: %v", name, err)
				}
				if d := m.Desc(); d.Lower != frontier.At(0) || !d.Upper.IsEmpty() || d.Since != frontier.At(top) {
					t.Fatalf("%s: merged description %v, want [{0}, {}) since {top}", name, d)
				}
				if m.Len() != n/2+1+n {
					t.Fatalf("%s: merged %d updates, want %d: those retracted at top cancel", name, m.Len(), n/2+1+n)
				}
				got := count(m, top)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: merged at top %v, want %v", name, got, want)
				}
			}
		}
	}
}
