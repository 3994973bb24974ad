package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// flatten's column passes give the chunk the cursor's walk gives, update
// for update: for every layout of the row (the key's columns first or
// not, a column left 0), keys with one and with many updates, and
// presentations that advance times (as_of) or hide some (until), where it
// walks instead; and the batch, whose times and diffs the chunk shares, is
// left as it was.
func TestFlattenAgreesWithTheWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	layouts := []struct {
		keyCols, valCols []int
		arity            int
		inOrder          bool // the key's columns then the val's: batch.Rows's rows as they are
	}{
		{[]int{0}, []int{1}, 2, true},
		{[]int{1}, []int{0}, 2, false},
		{[]int{0}, nil, 1, true},
		{[]int{2, 0}, []int{1}, 3, false},
		{[]int{0}, []int{1, 2}, 3, true},
		{[]int{0, 1}, []int{2}, 3, true},
		{[]int{3}, []int{0, 1}, 4, false}, // column 2 left 0
		{[]int{0}, []int{1}, 3, false},    // column 2 left 0
	}
	pres := []batch.Presentation{
		batch.Identity(),
		{Since: frontier.At(3), Until: frontier.Empty()},
		{Since: frontier.At(2), Until: frontier.At(5)},
	}
	for li, l := range layouts {
		for pi, p := range pres {
			for _, n := range []int{0, 1, 50, 3000} {
				t.Run(fmt.Sprintf("layout=%d/pres=%d/n=%d", li, pi, n), func(t *testing.T) {
					ar := batch.Arity{Key: len(l.keyCols), Val: len(l.valCols)}
					bld := batch.NewBuilder(ar, n)
					for range n {
						key := make([]int64, ar.Key)
						val := make([]int64, ar.Val)
						for i := range key {
							key[i] = rng.Int64N(8)
						}
						for i := range val {
							val[i] = rng.Int64N(3)
						}
						bld.Push(key, val, rng.Uint64N(7), rng.Int64N(5)-2)
					}
					b, err := bld.Build(frontier.Min(), frontier.At(7))
					if err != nil {
						t.Fatal(err)
					}
					o := &flattenOp{pres: p, keyCols: l.keyCols, valCols: l.valCols, arity: l.arity, row: make([]int64, l.arity)}
					if o.inOrder() != l.inOrder {
						t.Fatalf("inOrder %v, want %v", o.inOrder(), l.inOrder)
					}
					before := fmt.Sprint(b.Updates())
					got := o.flatten(b)
					if after := fmt.Sprint(b.Updates()); after != before {
						t.Fatalf("flatten wrote the batch: %s, was %s", after, before)
					}
					want := o.walk(b)
					if got.Arity != want.Arity || !slices.Equal(got.Rows, want.Rows) || !slices.Equal(got.Times, want.Times) || !slices.Equal(got.Diffs, want.Diffs) {
						t.Fatalf("flatten %v\nwalk    %v", got, want)
					}
					if err := got.Check(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}
