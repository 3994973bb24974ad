package batch

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// Batches that cannot merge — a gap or an overlap between them, different
// arities, a nil one — make a merger that is done at once and whose Result
// is no batch and the error. Before, outside invariant builds, a merge
// across a gap returned a batch claiming the gap's times, one of mixed
// arities read rows at the wrong width, and a nil batch panicked.
func TestBatchesThatCannotMergeAreRefused(t *testing.T) {
	a11, a21 := Arity{1, 1}, Arity{2, 1}
	one := func(ar Arity, lo, up, tm frontier.Time) *Batch {
		b := NewBuilder(ar, 1)
		b.Push(make([]int64, ar.Key), make([]int64, ar.Val), tm, 1)
		out, err := b.Build(frontier.At(lo), frontier.At(up))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		name string
		bs   []*Batch
		want error
	}{
		{"gap", []*Batch{Empty(a11, frontier.At(0), frontier.At(3)), one(a11, 5, 8, 6)}, ErrNotAdjacent},
		{"overlap", []*Batch{one(a11, 0, 4, 1), one(a11, 3, 8, 6)}, ErrNotAdjacent},
		{"reversed", []*Batch{one(a11, 3, 8, 6), one(a11, 0, 3, 1)}, ErrNotAdjacent},
		{"arities", []*Batch{one(a11, 0, 3, 1), one(a21, 3, 8, 6)}, ErrArity},
		{"nil second", []*Batch{one(a11, 0, 3, 1), nil}, ErrNilBatch},
		{"nil first", []*Batch{nil, one(a11, 0, 3, 1)}, ErrNilBatch},
		{"gap among three", []*Batch{one(a11, 0, 3, 1), one(a11, 3, 5, 4), one(a11, 6, 8, 7)}, ErrNotAdjacent},
		{"arities among three", []*Batch{one(a21, 0, 3, 1), one(a21, 3, 5, 4), one(a11, 5, 8, 7)}, ErrArity},
		{"nil among three", []*Batch{one(a11, 0, 3, 1), nil, one(a11, 5, 8, 7)}, ErrNilBatch},
		{"nil alone", []*Batch{nil}, ErrNilBatch},
		// Adjacent, but the second runs backwards (Empty does not check):
		// merged, [0, 2) would hold the first batch's update at 1 and
		// claim nothing of [2, 5).
		{"backwards second", []*Batch{one(a11, 0, 5, 1), Empty(a11, frontier.At(5), frontier.At(2))}, ErrUpperBeforeLower},
		{"backwards first", []*Batch{Empty(a11, frontier.At(5), frontier.At(0)), one(a11, 0, 3, 1)}, ErrUpperBeforeLower},
		{"backwards alone", []*Batch{Empty(a11, frontier.At(5), frontier.At(0))}, ErrUpperBeforeLower},
		{"backwards among three", []*Batch{one(a11, 0, 3, 1), Empty(a11, frontier.At(3), frontier.At(2)), Empty(a11, frontier.At(2), frontier.At(3))}, ErrUpperBeforeLower},
	} {
		m := NewMergerN(c.bs, frontier.Min())
		if !m.Done() {
			t.Fatalf("%s: a refused merge is not done", c.name)
		}
		fuel := int64(100)
		m.Work(&fuel)
		if b, err := m.Result(); !errors.Is(err, c.want) || b != nil {
			t.Fatalf("%s: Result = %v, %v; want no batch and %v", c.name, b, err, c.want)
		}
		if len(c.bs) == 2 {
			if b, err := Merge(c.bs[0], c.bs[1], frontier.Min()); !errors.Is(err, c.want) || b != nil {
				t.Fatalf("%s: Merge = %v, %v; want no batch and %v", c.name, b, err, c.want)
			}
		}
	}
}
