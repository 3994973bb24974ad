package join

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
)

// withWindow runs f with windowMatches at w, then puts it back.
func withWindow(t *testing.T, w int, f func()) {
	t.Helper()
	old := windowMatches
	windowMatches = w
	defer func() { windowMatches = old }()
	f()
}

// TestDeltaMatchesNestedLoopInWindowsOfAnySize runs the random delta joins
// of TestDeltaMatchesNestedLoopAtEveryTime, lagging lookups and proposals
// left waiting included, with a stage's pass cut into windows of one, two
// and three matches, each sent through the later stages before the next:
// every output and error is the nested loop's. Ending a window early and
// not resuming there, or taking matched proposals out of the stash with
// the waiting ones, loses or repeats rows here.
func TestDeltaMatchesNestedLoopInWindowsOfAnySize(t *testing.T) {
	for _, w := range []int{1, 2, 3} {
		withWindow(t, w, func() {
			for seed := range uint64(60) {
				deltaRun(t, seed, 2)
				deltaRun(t, seed, 3)
			}
		})
	}
}

// TestTrianglesOnWorkersInWindows is TestTrianglesOnWorkers (staged paths
// on 1, 2 and 4 workers, a lagging worker, imported lookups) with windows
// of one match: each window is its own proposal chunk to the next
// exchange.
func TestTrianglesOnWorkersInWindows(t *testing.T) {
	withWindow(t, 1, func() { TestTrianglesOnWorkers(t) })
}

// TestADeltaPathHoldsAWindowAStage: a three-way delta join of relations
// that share one key (n vals each: n² proposals at the second stage, n³
// rows out) holds no more than a window a stage and one proposal's
// matches beyond it, where matching a stage's every proposal before the
// next stage held all n² of them, twice (the matches and the next stage's
// stash).
func TestADeltaPathHoldsAWindowAStage(t *testing.T) {
	const n, w = 60, 64
	withWindow(t, w, func() {
		pres := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
		q := newDeltaQuery(t, 3, 0, pres, nil)
		for i, r := range q.rels {
			var ups []upd
			for v := range n {
				ups = append(ups, upd{key: 7, val: int64(100*i + v), t: 0, d: 1})
			}
			r.seal(t, ups, 1)
		}
		all := func(int) int { return 1 << 30 }
		q.step(t, all, nil)
		if got, want := len(rowDiffs(q.out, 0)), n*n*n; got != want {
			t.Fatalf("%d rows at 0, want %d", got, want)
		}
		// A window ends once it holds w matches or more, after a
		// proposal's last: at most w-1+n matches, rows of 3 columns.
		bound := w - 1 + n
		for i, p := range q.delta.Paths() {
			for b := range p.bufs {
				if c := cap(p.bufs[b].Diffs); c > 2*bound {
					t.Errorf("path %d buffer %d holds room for %d updates, want at most %d", i, b, c, 2*bound)
				}
			}
			for s, h := range p.stages {
				if c := cap(h.stash.Diffs); c > 2*bound {
					t.Errorf("path %d stage %d's stash holds room for %d updates, want at most %d", i, s, c, 2*bound)
				}
			}
		}
	})
}
