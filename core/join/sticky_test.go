package join

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestAFailedJoinStepIsSticky: once a step of a Binary, a Linear, a Path
// (Feed or Work) or a Delta has failed (a batch delivered twice, or of
// another arity than its input's), every later step returns that same
// error and appends nothing to its sink, also given good batches that
// match (docs/semantics.md §2.5). They joined the later batches against
// acknowledged frontiers the failed step had left half moved, and a delta
// join forwarded its entries' errors again.
func TestAFailedJoinStepIsSticky(t *testing.T) {
	id := batch.Identity()
	wide := func(lo, hi uint64) *batch.Batch {
		b := batch.NewBuilder(batch.Arity{Key: 1, Val: 2}, 1)
		b.Push([]int64{1}, []int64{1, 2}, lo, 1)
		wb, err := b.Build(frontier.At(lo), frontier.At(hi))
		if err != nil {
			t.Fatal(err)
		}
		return wb
	}
	// after checks that a step after the failure returns failed and left
	// out empty.
	after := func(t *testing.T, what string, failed, err error, out *Sink) {
		t.Helper()
		if err != failed {
			t.Errorf("%s after the failure: %v, want the failed step's error %v", what, err, failed)
		}
		if oks, errs := out.Len(); oks != 0 || errs != 0 {
			t.Errorf("%s after the failure appended %d rows and %d errors, want none", what, oks, errs)
		}
	}

	t.Run("binary", func(t *testing.T) {
		l, r := newRel(ar11), newRel(ar11)
		j, err := NewBinary(Side{Reader: l.h, Pres: id, Arity: ar11}, Side{Reader: r.h, Pres: id, Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Release()
		out := NewSink(3)
		if err := j.Step(nil, nil, out); err != nil { // the preload: nothing yet
			t.Fatal(err)
		}
		b0 := l.seal(t, []upd{{1, 1, 0, 1}}, 1)
		if err := j.Step([]*batch.Batch{b0}, nil, out); err != nil {
			t.Fatal(err)
		}
		failed := j.Step([]*batch.Batch{b0}, nil, out) // delivered twice
		if !errors.Is(failed, ErrOrder) {
			t.Fatalf("a batch delivered twice: %v, want ErrOrder", failed)
		}
		out.Recycle()
		for tm := uint64(1); tm < 3; tm++ {
			lb := l.seal(t, []upd{{1, 2, tm, 1}}, tm+1)
			rb := r.seal(t, []upd{{1, 3, tm, 1}}, tm+1)
			after(t, "a step with matching batches", failed, j.Step([]*batch.Batch{lb}, []*batch.Batch{rb}, out), out)
		}
	})

	t.Run("linear", func(t *testing.T) {
		rels := []*rel{newRel(ar11), newRel(ar11), newRel(ar11)}
		l := newLinear3(t, rels, 0)
		out := NewSink(4)
		f := func(i int) frontier.Frontier { return frontier.At(rels[i].upper) }
		if err := l.Step(nil, f(0), [][]*batch.Batch{nil, nil}, []frontier.Frontier{f(1), f(2)}, out); err != nil {
			t.Fatal(err) // the preload: nothing yet
		}
		b0 := rels[0].seal(t, []upd{{1, 1, 0, 1}}, 1)
		if err := l.Step([]*batch.Batch{b0}, f(0), [][]*batch.Batch{nil, nil}, []frontier.Frontier{f(1), f(2)}, out); err != nil {
			t.Fatal(err)
		}
		failed := l.Step([]*batch.Batch{b0}, f(0), [][]*batch.Batch{nil, nil}, []frontier.Frontier{f(1), f(2)}, out)
		if !errors.Is(failed, ErrOrder) {
			t.Fatalf("a batch delivered twice: %v, want ErrOrder", failed)
		}
		out.Recycle()
		for tm := uint64(1); tm < 3; tm++ {
			var bs [3]*batch.Batch
			for i, r := range rels {
				bs[i] = r.seal(t, []upd{{1, int64(i), tm, 1}}, tm+1)
			}
			err := l.Step([]*batch.Batch{bs[0]}, f(0), [][]*batch.Batch{{bs[1]}, {bs[2]}}, []frontier.Frontier{f(1), f(2)}, out)
			after(t, "a step with matching batches", failed, err, out)
		}
	})

	t.Run("path", func(t *testing.T) {
		r0, r1 := newRel(ar11), newRel(ar11)
		p, err := NewPath(PathOptions{Source: 0, SourcePres: id, SourceArity: ar11, AsOf: frontier.At(0),
			Stages: []Stage{{Lookup: r1.h, Pres: id, Arity: ar11, Relation: 1, StreamKey: []int{0}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Release()
		out := NewSink(3)
		failed := p.Feed([]*batch.Batch{wide(0, 1)}, out)
		if !errors.Is(failed, ErrArity) {
			t.Fatalf("a batch of another arity: %v, want ErrArity", failed)
		}
		out.Recycle()
		r1.seal(t, []upd{{1, 3, 0, 1}}, 2)
		b := r0.seal(t, []upd{{1, 2, 1, 1}}, 2)
		after(t, "a feed of a matching batch", failed, p.Feed([]*batch.Batch{b}, out), out)
		after(t, "a work", failed, p.Work(frontier.At(2), out), out)
	})

	t.Run("delta", func(t *testing.T) {
		q := newDeltaQuery(t, 2, 0, []batch.Presentation{id, id}, nil)
		fs := []frontier.Frontier{frontier.At(1), frontier.At(0)}
		failed := q.delta.Step([][]*batch.Batch{{wide(0, 1)}, nil}, nil, fs, q.out)
		if !errors.Is(failed, ErrArity) {
			t.Fatalf("a batch of another arity: %v, want ErrArity", failed)
		}
		q.out.Recycle()
		eb := batch.NewBuilder(batch.Arity{Key: 1}, 1)
		eb.Push([]int64{7}, nil, 1, 1)
		errb, err := eb.Build(frontier.At(1), frontier.At(2))
		if err != nil {
			t.Fatal(err)
		}
		b0 := q.rels[0].seal(t, []upd{{1, 2, 1, 1}}, 2)
		b1 := q.rels[1].seal(t, []upd{{1, 3, 1, 1}}, 2)
		err = q.delta.Step([][]*batch.Batch{{b0}, {b1}}, [][]*batch.Batch{{errb}, nil}, []frontier.Frontier{frontier.At(2), frontier.At(2)}, q.out)
		after(t, "a step with matching batches and an entry's error", failed, err, q.out)
	})
}
