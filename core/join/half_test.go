package join

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestRadixSortOrdersSignedKeys: the ready proposals' sort orders keys as
// signed int64 (the order the batches' keys follow), whatever bytes they
// share.
func TestRadixSortOrdersSignedKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		for _, gen := range []func() int64{
			func() int64 { return rng.Int64() - math.MaxInt64/2 },
			func() int64 { return int64(rng.IntN(10)) - 5 },
			func() int64 { return []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}[rng.IntN(5)] },
			func() int64 { return int64(rng.IntN(1 << 20)) },
		} {
			keys := make([]int64, n)
			xs := make([]keyIdx, n)
			for i := range xs {
				keys[i] = gen()
				xs[i] = keyIdx{k: uint64(keys[i]) ^ 1<<63, i: uint32(i)}
			}
			sorted, _ := radixSort(xs, nil)
			got := make([]int64, n)
			for i, x := range sorted {
				got[i] = keys[x.i]
			}
			if !slices.IsSorted(got) {
				t.Fatalf("n=%d: not sorted: %v", n, got[:min(n, 20)])
			}
			seen := make([]bool, n)
			for _, x := range sorted {
				if seen[x.i] {
					t.Fatalf("n=%d: index %d twice", n, x.i)
				}
				seen[x.i] = true
			}
		}
	}
}

// TestPathRejectsBadPlans: a path or delta join whose stage keys, arities
// or relations do not fit is refused at construction with ErrArity and a
// message naming the path and stage, and a batch of the wrong arity is
// refused when fed.
func TestPathRejectsBadPlans(t *testing.T) {
	r0, r1 := newRel(ar11), newRel(ar11)
	id := batch.Identity()
	st := func(key []int, rel int, ar batch.Arity) Stage {
		return Stage{Lookup: r1.h.Clone(), Pres: id, Arity: ar, Relation: rel, StreamKey: key}
	}
	for _, c := range []struct {
		name  string
		stage Stage
		want  string
	}{
		{"key column past the row", st([]int{2}, 1, ar11), "path 0, stage of relation 1"},
		{"key arity differs from the lookup's", st([]int{0, 1}, 1, ar11), "key arity 1, stream key has 2 columns"},
		{"looks up its own source", st([]int{0}, 0, ar11), "path 0 looks up its own source"},
	} {
		_, err := NewPath(PathOptions{Source: 0, SourcePres: id, SourceArity: ar11, AsOf: frontier.At(0), Stages: []Stage{c.stage}})
		if !errors.Is(err, ErrArity) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrArity naming %q", c.name, err, c.want)
		}
		c.stage.Lookup.Release()
	}
	p, err := NewPath(PathOptions{Source: 1, SourcePres: id, SourceArity: ar11, AsOf: frontier.At(0), Stages: []Stage{{Lookup: r0.h.Clone(), Pres: id, Arity: ar11, Relation: 0, StreamKey: []int{0}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if _, err := NewDelta([]*Path{p}, []batch.Presentation{id}); !errors.Is(err, ErrArity) {
		t.Errorf("delta with a path whose source is past its entries: err = %v, want ErrArity", err)
	}
	wide := batch.NewBuilder(batch.Arity{Key: 1, Val: 2}, 1)
	wide.Push([]int64{1}, []int64{1, 2}, 0, 1)
	wb, err := wide.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Feed([]*batch.Batch{wb}, NewSink(3)); !errors.Is(err, ErrArity) {
		t.Errorf("feeding a batch of arity %v: err = %v, want ErrArity", wb.Arity(), err)
	}
}
