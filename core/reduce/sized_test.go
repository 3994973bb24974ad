package reduce

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
)

// TestAStepLargerThanTheInstallSizesItsBuilders: a step of 5,000 updates
// after an install of 10 sizes each hierarchical layer's input builder
// and the collation's for its pushes, once; a later step of 10 keeps
// those builders. The rows stay the min and sum of each group.
func TestAStepLargerThanTheInstallSizesItsBuilders(t *testing.T) {
	x := direct(t, ar12)
	defer x.close()
	r, err := New(x.in, Options{Aggregates: []Aggregate{{Fn: Min, Col: 1}, {Fn: Sum, Col: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if r.collate == nil || len(r.parts) != 2 || len(r.parts[1].layers) == 0 {
		t.Fatalf("want a collated reduce with a hierarchical part, got %d parts", len(r.parts))
	}
	mins, sums := map[int64]int64{}, map[int64]int64{}
	round := func(tm uint64, n int) []upd {
		ups := make([]upd, n)
		for i := range ups {
			g, b := int64(i%10), int64(1000*int(tm)+n-i)
			ups[i] = u(g, int64(i), b, tm, 1)
			if m, ok := mins[g]; !ok || b < m {
				mins[g] = b
			}
			sums[g] += b
		}
		return ups
	}
	want := func() map[string]int64 {
		rows := map[string]int64{}
		for g := range mins {
			rows[rowString([]int64{g}, []int64{mins[g], sums[g]})] = 1
		}
		return rows
	}
	h := r.parts[1]
	var got collected
	step := func(tm uint64, n int) {
		t.Helper()
		o := steps(t, x, r, [][]upd{round(tm, n)})
		got.oks, got.errs = append(got.oks, o.oks...), append(got.errs, o.errs...)
		checkAt(t, &got, tm, want(), nil)
	}
	step(0, 10)
	if h.room[0] != 10 {
		t.Errorf("layer 0 sized for %d updates at the install, want 10", h.room[0])
	}
	step(1, 5000)
	if h.room[0] != 5000 {
		t.Errorf("layer 0 sized for %d updates after a step of 5,000, want 5000", h.room[0])
	}
	if r.colRoom < 10 {
		t.Errorf("collation sized for %d updates, want at least the groups' 10", r.colRoom)
	}
	blds := append([]*batch.Builder{r.colBld}, h.bld...)
	step(2, 10)
	for i, b := range append([]*batch.Builder{r.colBld}, h.bld...) {
		if b != blds[i] {
			t.Errorf("builder %d (0: the collation's, then the layers') replaced by a step of 10", i)
		}
	}
}
