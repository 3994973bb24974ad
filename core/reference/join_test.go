package reference

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
)

// TestJoinAgainstCartesianProduct checks the reference's hashed join
// against the plainest possible one: every combination of rows, kept when
// every class agrees, with the product of the counts. Classes are random,
// including classes within one entry and entries in no class (cross
// products).
func TestJoinAgainstCartesianProduct(t *testing.T) {
	const seed = 3
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 200 {
		p := &plan.Plan{Inputs: []plan.Input{
			{Name: "a", Columns: []string{"x", "y"}},
			{Name: "b", Columns: []string{"x", "y"}},
		}}
		nFrom := 1 + rng.IntN(3)
		var refs []string
		for i := range nFrom {
			as := fmt.Sprintf("e%d", i)
			p.Query.From = append(p.Query.From, plan.From{As: as, Collection: []string{"a", "b"}[rng.IntN(2)]})
			refs = append(refs, as+".x", as+".y")
		}
		for range rng.IntN(3) {
			class := []string{refs[rng.IntN(len(refs))], refs[rng.IntN(len(refs))]}
			p.Query.On = append(p.Query.On, class)
		}
		r, err := plan.Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		in := Inputs{}
		rows := map[string][][]int64{} // consolidated by hand below
		for _, name := range []string{"a", "b"} {
			for range rng.IntN(6) {
				u := up(0, rng.Int64N(5)-2, rng.Int64N(3), rng.Int64N(3))
				if u.Diff == 0 {
					u.Diff = 3
				}
				in[name] = append(in[name], u)
			}
			acc := map[[2]int64]int64{}
			for _, u := range in[name] {
				acc[[2]int64{u.Row[0], u.Row[1]}] += u.Diff
			}
			for k, n := range acc {
				if n != 0 {
					rows[name] = append(rows[name], []int64{k[0], k[1], n})
				}
			}
		}
		// Every combination.
		want := map[string]int64{}
		var walk func(k int, joined []int64, n int64)
		walk = func(k int, joined []int64, n int64) {
			if k == nFrom {
				for _, class := range p.Query.On {
					if joined[slices.Index(refs, class[0])] != joined[slices.Index(refs, class[1])] {
						return
					}
				}
				want[fmt.Sprint(joined)] += n
				return
			}
			for _, row := range rows[p.Query.From[k].Collection] {
				walk(k+1, append(slices.Clone(joined), row[0], row[1]), n*row[2])
			}
		}
		walk(0, nil, 1)
		res, err := Eval(r, in, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, row := range res.Rows {
			got[fmt.Sprint(row.Values)] = row.Diff
		}
		for k, n := range want {
			if n == 0 {
				delete(want, k)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d round %d: from %v on %v\ninputs %v\n got %v\nwant %v", seed, round, p.Query.From, p.Query.On, in, got, want)
		}
		if !slices.IsSortedFunc(res.Rows, func(a, b Row) int { return slices.Compare(a.Values, b.Values) }) {
			t.Fatalf("rows not sorted: %v", res.Rows)
		}
	}
}
