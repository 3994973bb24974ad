package batch

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

func TestBatcherSealsBeforeUpper(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}, {0, 2}} {
		b := NewBatcher(ar, 0)
		row := []int64{1, 2, 3}
		for _, tm := range []uint64{3, 0, 5, 1, 3} {
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2, 1}[:ar.Val], tm, 1)
		}
		first, err := b.Seal(frontier.At(0), frontier.At(3))
		if err != nil {
			t.Fatal(err)
		}
		if first.Len() != 2 || b.Len() != 3 || first.Desc().Upper != frontier.At(3) {
			t.Fatalf("%v: first seal %v, %d left", ar, first, b.Len())
		}
		second, err := b.Seal(frontier.At(3), frontier.Empty())
		if err != nil {
			t.Fatal(err)
		}
		// The two updates at 3 consolidate into one with diff 2.
		if second.Len() != 2 || b.Len() != 0 {
			t.Fatalf("%v: second seal %v, %d left", ar, second, b.Len())
		}
		if u := second.Updates()[0]; u.Time != 3 || u.Diff != 2 {
			t.Fatalf("%v: first update of the second seal %v", ar, u)
		}
	}
}

// TestBatcherReleasesLargeBuffers: after a seal that empties a buffer of more
// than builderKeep updates, neither the batcher nor its builder keeps the
// buffer or the sort's scratch (an arrangement keeps its batch only); a
// small seal keeps its capacity for reuse.
func TestBatcherReleasesLargeBuffers(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		b := NewBatcher(ar, 0)
		row := []int64{1, 2, 3}
		n := builderKeep + 1
		b.Grow(n)
		for i := range n {
			row[0] = int64(i)
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 0, 1)
		}
		out, err := b.Seal(frontier.At(0), frontier.At(1))
		if err != nil || out.Len() != n {
			t.Fatalf("%v: seal %v, %d updates", ar, err, out.Len())
		}
		bld := b.bld
		if c := cap(bld.recs) + cap(bld.scratch) + cap(b.times) + cap(bld.times) + cap(bld.keys) + cap(bld.sRows); c != 0 {
			t.Fatalf("%v: %d slots of buffers kept after a large seal", ar, c)
		}
		for i := range 10 {
			row[0] = int64(i)
			b.PushRow(row, []int{0, 1}[:ar.Key], []int{2}, 1, 1)
		}
		if _, err := b.Seal(frontier.At(1), frontier.At(2)); err != nil {
			t.Fatal(err)
		}
		if cap(bld.recs)+cap(b.times) == 0 {
			t.Fatalf("%v: a small seal released its buffer", ar)
		}
	}
}
