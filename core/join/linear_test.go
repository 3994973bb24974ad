package join

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
)

// newLinear3 is the linear join R0 ⋈ R1 ⋈ R2 on the key: R0 with R1, the
// result arranged by the key (key | v0 v1), then with R2.
func newLinear3(t *testing.T, rels []*rel, asOf uint64) *Linear {
	t.Helper()
	id := batch.Identity()
	l, err := NewLinear(LinearOptions{
		Source: Side{rels[0].h.Clone(), id, ar11},
		AsOf:   frontier.At(asOf),
		Stages: []LinearStage{
			{Lookup: Side{rels[1].h.Clone(), id, ar11}},
			{Lookup: Side{rels[2].h.Clone(), id, ar11}, StreamKey: []int{0}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release)
	return l
}

// TestDeltaEqualsLinearEqualsNestedLoop runs a three-way delta join and
// the linear join of the same relations on the same deliveries, and
// compares both with the nested-loop join at every time.
func TestDeltaEqualsLinearEqualsNestedLoop(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 3))
		rounds := uint64(3 + rng.IntN(7))
		asOf := uint64(rng.IntN(3))
		nkeys := 1 + rng.IntN(4)
		pres := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
		q := newDeltaQuery(t, 3, asOf, pres, nil)
		lin := newLinear3(t, q.rels, asOf)
		lout := NewSink(4)
		run := func(lag func() int) {
			oks := make([][]*batch.Batch, 3)
			fs := make([]frontier.Frontier, 3)
			for i, r := range q.rels {
				oks[i] = r.deliver(lag())
				fs[i] = r.frontier()
			}
			if err := q.delta.Step(oks, nil, fs, q.out); err != nil {
				t.Fatal(err)
			}
			if err := lin.Step(oks[0], fs[0], oks[1:], fs[1:], lout); err != nil {
				t.Fatal(err)
			}
			for _, r := range q.rels {
				r.h.SetLogicalCompaction(frontier.At(r.upper))
				r.h.SetPhysicalCompaction(frontier.At(r.upper))
				for range rng.IntN(3) {
					r.w.Exert(int64(1 + rng.IntN(64)))
				}
			}
		}
		for tm := range rounds {
			for _, r := range q.rels {
				if rng.IntN(4) != 0 {
					ups := randomUpdates(rng, rng.IntN(6), nkeys, tm)
					r.seal(t, append(ups, retractSome(rng, r.all, rng.IntN(2), tm)...), tm+1)
				}
			}
			run(func() int { return rng.IntN(3) })
		}
		for _, r := range q.rels {
			r.seal(t, nil, rounds+1)
		}
		run(func() int { return 1 << 30 })
		run(func() int { return 1 << 30 })
		label := fmt.Sprintf("seed %d as_of %d", seed, asOf)
		q.check(t, label+" delta", asOf, rounds)
		for tm := asOf; tm < rounds; tm++ {
			if d := diffMaps(rowDiffs(q.out, tm), rowDiffs(lout, tm)); d != "" {
				t.Fatalf("%s: linear differs from delta at %d (want = delta):\n%s", label, tm, d)
			}
		}
	}
}

// projectingLinear returns three relations of arity (1, 1) and a linear
// join of them from time 0 whose first stage projects (k, v0, v1) onto
// (k, v1), so that R0's rows of one key meet in the running result (the
// arrangement whose merges consolidate them), released at the test's end.
func projectingLinear(t *testing.T) ([]*rel, *Linear) {
	t.Helper()
	rels := []*rel{newRel(ar11), newRel(ar11), newRel(ar11)}
	id := batch.Identity()
	l, err := NewLinear(LinearOptions{
		Source: Side{rels[0].h.Clone(), id, ar11},
		AsOf:   frontier.At(0),
		Stages: []LinearStage{
			{Lookup: Side{rels[1].h.Clone(), id, ar11}, Closure: &Project{Cols: []int{0, 2}}},
			{Lookup: Side{rels[2].h.Clone(), id, ar11}, StreamKey: []int{0}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release)
	return rels, l
}

// A linear join's running result whose consolidated diff leaves int64 while
// it is arranged (two stage-0 rows projected onto one) is a numeric
// overflow error at that time; the join keeps stepping and every other
// row comes through (docs/spec.md, "Expressions", docs/semantics.md §1.1).
func TestLinearRunningResultOverflowIsAnError(t *testing.T) {
	rels, l := projectingLinear(t)
	rels[0].seal(t, []upd{{1, 10, 1, 1 << 62}, {1, 11, 1, 1 << 62}, {2, 3, 1, 1}}, 2)
	rels[1].seal(t, []upd{{1, 5, 1, 1}, {2, 4, 1, 1}}, 2)
	rels[2].seal(t, []upd{{1, 7, 1, 1}, {2, 6, 1, 1}}, 2)
	out := NewSink(3)
	for range 2 {
		oks := make([][]*batch.Batch, 3)
		fs := make([]frontier.Frontier, 3)
		for i, r := range rels {
			oks[i], fs[i] = r.deliver(1<<30), r.frontier()
		}
		if err := l.Step(oks[0], fs[0], oks[1:], fs[1:], out); err != nil {
			t.Fatalf("the overflow stopped the join: %v", err)
		}
	}
	if got := errDiffs(out, 0); len(got) != 0 {
		t.Errorf("errors at 0: %v, want none", got)
	}
	if got := errDiffs(out, 1); got[expr.CodeOverflow] != 1 || len(got) != 1 {
		t.Errorf("errors at 1: %v, want one numeric overflow (code %d)", got, expr.CodeOverflow)
	}
	if got := rowDiffs(out, 1); got["[2 4 6]"] != 1 {
		t.Errorf("rows at 1: %v, want [2 4 6] once beside the overflow", got)
	}
}

// A linear join's running result whose diffs fit at each time but whose
// sum leaves int64 once a merge under the join's compaction consolidates
// them is one numeric overflow per overflowing merge, at the running
// result's sealed frontier then, never a count of every merge so far
// (docs/semantics.md §1.1, §8.29): two keys overflowing in two merges, one
// after the other, are two errors in all, not three.
func TestLinearRunningResultMergeOverflowsAreCountedOnce(t *testing.T) {
	rels, l := projectingLinear(t)
	rels[1].seal(t, []upd{{1, 5, 0, 1}, {2, 4, 0, 1}}, 1)
	rels[2].seal(t, []upd{{1, 7, 0, 1}, {2, 6, 0, 1}}, 1)
	out := NewSink(3)
	step := func() {
		t.Helper()
		oks := make([][]*batch.Batch, 3)
		fs := make([]frontier.Frontier, 3)
		for i, r := range rels {
			oks[i], fs[i] = r.deliver(1<<30), r.frontier()
		}
		if err := l.Step(oks[0], fs[0], oks[1:], fs[1:], out); err != nil {
			t.Fatalf("the overflow stopped the join: %v", err)
		}
	}
	// Key 1 at 1 and 2, key 2 at 5 and 6: each time alone fits.
	rows := map[uint64][]upd{1: {{1, 10, 1, 1 << 62}}, 2: {{1, 11, 2, 1 << 62}}, 5: {{2, 12, 5, 1 << 62}}, 6: {{2, 13, 6, 1 << 62}}}
	for tm := uint64(1); tm < 12; tm++ {
		rels[0].seal(t, rows[tm], tm+1)
		rels[1].seal(t, nil, tm+1)
		rels[2].seal(t, nil, tm+1)
		step()
		for l.mids[0].w.Exert(1 << 20) { // merge what the join's compaction allows
		}
		step()
	}
	var total int64
	for _, c := range out.Errs() {
		for i := range c.Len() {
			t.Logf("error %v at %d diff %d", c.Row(i), c.Times[i], c.Diffs[i])
			total += c.Diffs[i]
		}
	}
	if total != 2 {
		t.Errorf("%d numeric overflows in all, want 2: one per overflowing merge", total)
	}
}

// TestALinearJoinCopiesItsStreamKeys: a later stage's stream key is read
// at every step; a caller that reuses the slice once NewLinear returned
// (sk[0] = 1) must not move the join onto another column of the running
// result. The join agrees with one whose key was never touched.
func TestALinearJoinCopiesItsStreamKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 3))
	rels := []*rel{newRel(ar11), newRel(ar11), newRel(ar11)}
	want := newLinear3(t, rels, 0)
	id := batch.Identity()
	sk := []int{0}
	got, err := NewLinear(LinearOptions{
		Source: Side{rels[0].h.Clone(), id, ar11},
		AsOf:   frontier.At(0),
		Stages: []LinearStage{
			{Lookup: Side{rels[1].h.Clone(), id, ar11}},
			{Lookup: Side{rels[2].h.Clone(), id, ar11}, StreamKey: sk},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(got.Release)
	sk[0] = 1
	wout, gout := NewSink(4), NewSink(4)
	const rounds = 6
	for tm := range uint64(rounds) {
		var oks [3][]*batch.Batch
		var fs [3]frontier.Frontier
		for i, r := range rels {
			r.seal(t, randomUpdates(rng, 6, 3, tm), tm+1)
			oks[i], fs[i] = r.deliver(1<<30), r.frontier()
		}
		if err := want.Step(oks[0], fs[0], oks[1:], fs[1:], wout); err != nil {
			t.Fatal(err)
		}
		if err := got.Step(oks[0], fs[0], oks[1:], fs[1:], gout); err != nil {
			t.Fatal(err)
		}
	}
	joined := 0
	for tm := range uint64(rounds) {
		w := rowDiffs(wout, tm)
		joined += len(w)
		if d := diffMaps(w, rowDiffs(gout, tm)); d != "" {
			t.Fatalf("at %d, the join whose key slice was reused (got) against one whose was not (want):\n%s", tm, d)
		}
	}
	if joined == 0 {
		t.Fatal("the joins produced nothing: the test compares nothing")
	}
}
