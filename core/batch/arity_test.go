package batch

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A row of the wrong arity pushed into a builder is refused and reported
// by the next Build (Seal) as ErrArity. Before, a wide builder took the
// row's columns as the next update's and built a batch of shifted rows, a
// one-column builder kept a longer row's first column or indexed past a
// shorter one, and a Sorted builder sliced out of range.
func TestAPushOfTheWrongArityIsRefused(t *testing.T) {
	lo, up := frontier.At(0), frontier.At(5)
	for _, c := range []struct {
		ar       Arity
		key, val []int64
	}{
		{Arity{2, 1}, []int64{1}, []int64{2}},       // short key, wide
		{Arity{2, 1}, []int64{1, 2, 3}, []int64{2}}, // long key, wide
		{Arity{2, 1}, []int64{1, 2}, nil},           // short val, wide
		{Arity{1, 1}, nil, []int64{2}},              // short key, small
		{Arity{1, 1}, []int64{1, 2}, []int64{2}},    // long key, small
		{Arity{1, 0}, []int64{1}, []int64{2}},       // val for arity 0
	} {
		good := func(push func(k, v []int64, t frontier.Time, d int64)) {
			k, v := make([]int64, c.ar.Key), make([]int64, c.ar.Val)
			for i := range k {
				k[i] = 7
			}
			push(k, v, 1, 1)
		}

		bld := NewBuilder(c.ar, 4)
		good(bld.Push)
		bld.Push(c.key, c.val, 1, 1)
		good(bld.Push)
		if b, err := bld.Build(lo, up); !errors.Is(err, ErrArity) || b != nil {
			t.Fatalf("%v builder, push of %v|%v: Build = %v, %v; want no batch and ErrArity", c.ar, c.key, c.val, b, err)
		}
		// The builder is reusable: the next build has only its own pushes.
		good(bld.Push)
		if b, err := bld.Build(lo, up); err != nil || b.Len() != 1 {
			t.Fatalf("%v builder after a refused push: Build = %v, %v", c.ar, b, err)
		}

		s := NewSorted(c.ar, 4)
		good(s.Push)
		s.Push(c.key, c.val, 1, 1)
		if b, err := s.Build(lo, up); !errors.Is(err, ErrArity) || b != nil {
			t.Fatalf("%v sorted, push of %v|%v: Build = %v, %v; want no batch and ErrArity", c.ar, c.key, c.val, b, err)
		}
		good(s.Push)
		if b, err := s.Build(lo, up); err != nil || b.Len() != 1 {
			t.Fatalf("%v sorted after a refused push: Build = %v, %v", c.ar, b, err)
		}

		// A batcher keeps what it buffered for the seal after the one that
		// reports the refused push.
		bt := NewBatcher(c.ar, 4)
		good(bt.Push)
		bt.Push(c.key, c.val, 1, 1)
		if b, err := bt.Seal(lo, up); !errors.Is(err, ErrArity) || b != nil {
			t.Fatalf("%v batcher, push of %v|%v: Seal = %v, %v; want no batch and ErrArity", c.ar, c.key, c.val, b, err)
		}
		if b, err := bt.Seal(lo, up); err != nil || b.Len() != 1 || b.Updates()[0].Diff != 1 {
			t.Fatalf("%v batcher after a refused push: Seal = %v, %v; want the buffered update", c.ar, b, err)
		}
	}
}

// PushRow and PushChunk name the key and val columns of a row: a number of
// them other than the arity is refused as Push refuses a row. Before, a
// one-column batcher given no key column took 0 as every key, and a wide
// one shifted the rows after.
func TestABatcherRefusesColumnsOfTheWrongArity(t *testing.T) {
	lo, up := frontier.At(0), frontier.At(5)
	row := []int64{7, 8, 9}
	for _, c := range []struct {
		ar               Arity
		keyCols, valCols []int
	}{
		{Arity{1, 1}, nil, []int{1}},
		{Arity{1, 1}, []int{0, 2}, []int{1}},
		{Arity{2, 1}, []int{0}, []int{1}},
		{Arity{2, 1}, []int{0, 1}, []int{2, 2}},
	} {
		kc, vc := []int{0, 1}[:c.ar.Key], []int{2}[:c.ar.Val]
		for _, chunk := range []bool{false, true} {
			bt := NewBatcher(c.ar, 4)
			bt.PushRow(row, kc, vc, 1, 1)
			if chunk {
				bt.PushChunk(row, 3, c.keyCols, c.valCols, []uint64{1}, []int64{1})
			} else {
				bt.PushRow(row, c.keyCols, c.valCols, 1, 1)
			}
			if b, err := bt.Seal(lo, up); !errors.Is(err, ErrArity) || b != nil {
				t.Fatalf("%v batcher, columns %v|%v (chunk %v): Seal = %v, %v; want no batch and ErrArity", c.ar, c.keyCols, c.valCols, chunk, b, err)
			}
			if b, err := bt.Seal(lo, up); err != nil || b.Len() != 1 {
				t.Fatalf("%v batcher after refused columns (chunk %v): Seal = %v, %v; want the buffered update", c.ar, chunk, b, err)
			}
		}
	}
}

// A chunk whose key or val columns lie outside its rows, or whose rows or
// diffs are fewer than its times, is refused with ErrChunkShape, and the
// batcher keeps what it buffered. Before, a wide batcher read a column
// past the row's width from the next row (a wrong key, no error), and a
// short chunk panicked with a slice out of range.
func TestABatcherRefusesAChunkThatDoesNotFitItsRows(t *testing.T) {
	lo, up := frontier.At(0), frontier.At(5)
	rows := []int64{1, 2, 3, 4}
	for _, c := range []struct {
		name             string
		ar               Arity
		width            int
		keyCols, valCols []int
		times            []uint64
		diffs            []int64
	}{
		{"wide column past the width", Arity{1, 2}, 2, []int{0}, []int{1, 2}, []uint64{1}, []int64{1}},
		{"small column past the width", Arity{1, 1}, 2, []int{2}, []int{1}, []uint64{1}, []int64{1}},
		{"negative column", Arity{1, 1}, 2, []int{-1}, []int{1}, []uint64{1}, []int64{1}},
		{"rows short", Arity{1, 1}, 2, []int{0}, []int{1}, []uint64{1, 1, 1}, []int64{1, 1, 1}},
		{"diffs short", Arity{2, 1}, 3, []int{0, 1}, []int{2}, []uint64{1}, nil},
	} {
		bt := NewBatcher(c.ar, 4)
		good := make([]int64, c.ar.Key+c.ar.Val)
		bt.Push(good[:c.ar.Key], good[c.ar.Key:], 1, 1)
		bt.PushChunk(rows, c.width, c.keyCols, c.valCols, c.times, c.diffs)
		if b, err := bt.Seal(lo, up); !errors.Is(err, ErrChunkShape) || b != nil {
			t.Fatalf("%s: Seal = %v, %v; want no batch and ErrChunkShape", c.name, b, err)
		}
		if b, err := bt.Seal(lo, up); err != nil || b.Len() != 1 {
			t.Fatalf("%s: the seal after = %v, %v; want the buffered update", c.name, b, err)
		}
	}
}
