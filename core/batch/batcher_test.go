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
