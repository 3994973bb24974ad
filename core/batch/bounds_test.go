package batch

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A time outside the [lower, upper) a batch is built for is reported as
// ErrTimeOutside, with no batch: before, outside invariant builds, Build
// returned a batch breaking B3, whose readers and merges took the update
// as one of a range it is not in. The builders' radix paths are run too
// (radixMin lowered), and times on both sides of the range.
func TestBuildingATimeOutsideTheBatchIsRefused(t *testing.T) {
	lo, up := frontier.At(3), frontier.At(6)
	for _, ar := range []Arity{{1, 1}, {0, 1}, {2, 1}} {
		for _, bad := range []frontier.Time{0, 2, 6, 100} {
			for _, n := range []int{1, 5, 300} {
				push := func(p func(k, v []int64, t frontier.Time, d int64)) {
					for i := range n {
						k, v := make([]int64, ar.Key), make([]int64, ar.Val)
						if ar.Key > 0 {
							k[0] = int64(i)
						}
						p(k, v, 3+frontier.Time(i%3), 1)
					}
					p(make([]int64, ar.Key), []int64{-1, 0}[:ar.Val], bad, 1)
				}
				bld := NewBuilder(ar, 0)
				bld.radixMin = 2
				push(bld.Push)
				if b, err := bld.Build(lo, up); !errors.Is(err, ErrTimeOutside) || b != nil {
					t.Fatalf("%v builder, %d updates and one at %d: Build = %v, %v; want ErrTimeOutside", ar, n, bad, b, err)
				}
				if ar == (Arity{1, 1}) && bad < 3 {
					// The block a batcher builds from (BuildBlock); a time
					// at or beyond upper it keeps for a later seal.
					bt := NewBatcher(ar, 0)
					bt.bld.radixMin = 2
					rows, times, diffs := []int64{}, []uint64{}, []int64{}
					push(func(k, v []int64, t frontier.Time, d int64) {
						rows, times, diffs = append(rows, k[0], v[0]), append(times, t), append(diffs, d)
					})
					bt.PushChunk(rows, 2, []int{0}, []int{1}, times, diffs)
					if b, err := bt.Seal(lo, up); !errors.Is(err, ErrTimeOutside) || b != nil {
						t.Fatalf("batcher, %d updates and one at %d: Seal = %v, %v; want ErrTimeOutside", n, bad, b, err)
					}
				}
			}
			s := NewSorted(ar, 0)
			s.Push(make([]int64, ar.Key), make([]int64, ar.Val), bad, 1)
			if b, err := s.Build(lo, up); !errors.Is(err, ErrTimeOutside) || b != nil {
				t.Fatalf("%v sorted, an update at %d: Build = %v, %v; want ErrTimeOutside", ar, bad, b, err)
			}
		}
		// At the bounds' edges, and consolidated away, nothing is refused.
		bld := NewBuilder(ar, 0)
		bld.Push(make([]int64, ar.Key), make([]int64, ar.Val), 3, 1)
		bld.Push(make([]int64, ar.Key), make([]int64, ar.Val), 5, 1)
		bld.Push(make([]int64, ar.Key), make([]int64, ar.Val), 9, 1)
		bld.Push(make([]int64, ar.Key), make([]int64, ar.Val), 9, -1)
		if b, err := bld.Build(lo, up); err != nil || b.Len() != 2 {
			t.Fatalf("%v builder within bounds: Build = %v, %v", ar, b, err)
		}
	}
}

// A build or seal whose upper is before its lower is refused with
// ErrUpperBeforeLower. Before, it returned an empty batch describing the
// backwards range, which merged with the batch before it made one that
// claimed less than it held. A batcher keeps its updates for a seal with
// the bounds the right way round; an empty range (lower = upper) is not
// backwards.
func TestBuildingAnUpperBeforeItsLowerIsRefused(t *testing.T) {
	lo, up := frontier.At(5), frontier.At(2)
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		if b, err := NewBuilder(ar, 0).Build(lo, up); !errors.Is(err, ErrUpperBeforeLower) || b != nil {
			t.Fatalf("%v builder: Build = %v, %v; want ErrUpperBeforeLower", ar, b, err)
		}
		if b, err := NewSorted(ar, 0).Build(lo, frontier.Min()); !errors.Is(err, ErrUpperBeforeLower) || b != nil {
			t.Fatalf("%v sorted: Build = %v, %v; want ErrUpperBeforeLower", ar, b, err)
		}
		bt := NewBatcher(ar, 0)
		bt.Push(make([]int64, ar.Key), make([]int64, ar.Val), 1, 1)
		if b, err := bt.Seal(lo, up); !errors.Is(err, ErrUpperBeforeLower) || b != nil {
			t.Fatalf("%v batcher: Seal = %v, %v; want ErrUpperBeforeLower", ar, b, err)
		}
		if b, err := bt.Seal(frontier.Min(), up); err != nil || b.Len() != 1 {
			t.Fatalf("%v batcher after a backwards seal: Seal = %v, %v; want its update", ar, b, err)
		}
		if b, err := NewBuilder(ar, 0).Build(up, up); err != nil || !b.IsEmpty() {
			t.Fatalf("%v builder, an empty range: Build = %v, %v", ar, b, err)
		}
	}
}

// A builder reused across builds checks every build's times, whichever
// sort the build takes: the bucket pass takes the pushed times' range and
// spares Build its check of the batch's times when the range lies within
// the bounds (timeRange), so a range an earlier build took must not spare
// a later build that took none (the comparison sort of a few updates, the
// LSD radix sort), and a pushed time outside the bounds whose update
// consolidates away must not refuse a batch that is good. A batcher's
// seals (BuildBlock) the same.
func TestReusedBuilderChecksEveryBuildsTimes(t *testing.T) {
	lo, up := frontier.At(3), frontier.At(6)
	for _, ar := range []Arity{{1, 1}, {0, 1}, {1, 0}} {
		bld := NewBuilder(ar, 0)
		bld.radixMin = 2
		push := func(n int, t frontier.Time, d int64) {
			for i := range n {
				k, v := make([]int64, ar.Key), make([]int64, ar.Val)
				if ar.Key > 0 {
					k[0] = int64(i * 7919 % 1000)
				}
				if ar.Val > 0 {
					v[0] = int64(i)
				}
				bld.Push(k, v, t+frontier.Time(i%3), d)
			}
		}
		build := func(what string, wantLen int) {
			t.Helper()
			b, err := bld.Build(lo, up)
			switch {
			case wantLen < 0 && (!errors.Is(err, ErrTimeOutside) || b != nil):
				t.Fatalf("%v builder, %s: Build = %v, %v; want ErrTimeOutside", ar, what, b, err)
			case wantLen >= 0 && (err != nil || b.Len() != wantLen):
				t.Fatalf("%v builder, %s: Build = %v, %v; want %d updates", ar, what, b, err, wantLen)
			}
		}
		push(300, 3, 1)
		build("300 updates within the bounds (the bucket pass)", 300)
		push(1, 100, 1)
		build("then one update after them", -1)
		push(1, 0, 1)
		build("then one update before them", -1)
		push(300, 3, 1)
		build("300 updates within the bounds again", 300)
		bld.bucketMax = 0
		push(299, 3, 1)
		push(1, 7, 1)
		build("then 300 by the LSD radix sort, one after them", -1)
		bld.bucketMax = bucketSortMax
		push(300, 3, 1)
		push(1, 9, 1)
		push(1, 9, -1)
		push(1, 1, 1)
		push(1, 1, -1)
		build("300 updates and two consolidated away outside the bounds (the bucket pass)", 300)
		push(300, 3, 1)
		push(1, 9, 1)
		build("300 updates and one outside the bounds (the bucket pass)", -1)
	}
	type row struct {
		k, v int64
		t    uint64
		d    int64
	}
	bt := NewBatcher(Arity{1, 1}, 0)
	seal := func(what string, extra []row, wantLen int) {
		t.Helper()
		var rows []int64
		var ts []uint64
		var ds []int64
		for i := range 300 {
			rows, ts, ds = append(rows, int64(i*7919%1000), int64(i)), append(ts, 3+uint64(i%3)), append(ds, 1)
		}
		for _, r := range extra {
			rows, ts, ds = append(rows, r.k, r.v), append(ts, r.t), append(ds, r.d)
		}
		bt.PushChunk(rows, 2, []int{0}, []int{1}, ts, ds)
		b, err := bt.Seal(lo, up)
		switch {
		case wantLen < 0 && (!errors.Is(err, ErrTimeOutside) || b != nil):
			t.Fatalf("batcher, %s: Seal = %v, %v; want ErrTimeOutside", what, b, err)
		case wantLen >= 0 && (err != nil || b.Len() != wantLen):
			t.Fatalf("batcher, %s: Seal = %v, %v; want %d updates", what, b, err, wantLen)
		}
	}
	seal("300 updates within the bounds", nil, 300)
	seal("300 updates and one before the bounds", []row{{5, -1, 1, 1}}, -1)
	seal("300 updates and a pair before the bounds consolidated away", []row{{5, -1, 1, 1}, {5, -1, 1, -1}}, 300)
	seal("300 updates within the bounds again", nil, 300)
	bt.bld.bucketMax = 0
	seal("300 updates and one before the bounds, by the LSD radix sort", []row{{5, -1, 1, 1}}, -1)
}
