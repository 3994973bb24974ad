package join

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
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

// TestDeltaPathsResumeWhereTheirBudgetEnded runs the random delta joins
// with windows of one and two matches and each path matching at most one,
// two or three windows a step, as the fused operator does (Path.work):
// passes left open across steps, new source batches fed while they are,
// lookups lagging. Every output is the nested loop's once the paths have
// no work left, and none is emitted before as_of. A resumed pass that
// skipped a later stage's open pass, or one that dropped the proposals fed
// while it was open, fails here.
func TestDeltaPathsResumeWhereTheirBudgetEnded(t *testing.T) {
	for _, w := range []int{1, 2} {
		withWindow(t, w, func() {
			for _, budget := range []int{1, 2, 3} {
				for seed := range uint64(30) {
					deltaRunBudget(t, seed, 2, budget)
					deltaRunBudget(t, seed, 3, budget)
				}
			}
		})
	}
}

// TestTrianglesOnWorkersInWindows is TestTrianglesOnWorkers (the fused
// operator on one worker, staged paths on 2 and 4, a lagging worker,
// imported lookups, and the linear join beside them) with windows of one
// match and one window a step, and binary joins of one pair a step: each
// window is its own proposal chunk to the next exchange, and every step
// leaves the rest of its passes, or of its batches, to the next.
func TestTrianglesOnWorkersInWindows(t *testing.T) {
	withWindow(t, 1, func() {
		old, oldPairs := stepWindows, stepPairs
		stepWindows, stepPairs = 1, 1
		defer func() { stepWindows, stepPairs = old, oldPairs }()
		TestTrianglesOnWorkers(t)
	})
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

// TestAStagedStageThatYieldsSilentlyIsSteppedAgain: on two workers a
// staged path's stage matches a window a step and leaves the rest of its
// pass to the next step, holding its capability; a step whose windows'
// rows the final closure all drops sends nothing, and the dataflow must
// still be stepped again (OperatorBuilder.StepAgain) until the pass ends:
// the capture passes every time, with the rows of the one key the
// closure keeps. Without StepAgain the dataflow stops moving with the
// stage's capability held at 0.
func TestAStagedStageThatYieldsSilentlyIsSteppedAgain(t *testing.T) {
	const peers, n = 2, 40
	withWindow(t, 1, func() {
		old := stepWindows
		stepWindows = 1
		defer func() { stepWindows = old }()
		envs, _ := workerEnvs(t, peers)
		oks := dataflow.NewCapture(peers)
		var dfs []*dataflow.Dataflow
		for _, env := range envs {
			df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					arr, err := arrangeInputs(c, "r0", "r1")
					if err != nil {
						return err
					}
					// Rows (k, v0, v1) kept where v0 == v1: only
					// key 1's, whose vals meet; key 2's n² pairs
					// never do.
					keep := &Project{Equiv: [][]int{{1, 2}}, Cols: []int{0, 1, 2}}
					paths := []DeltaPath{
						{Source: 0, Arranged: arr[0], Stages: []DeltaStage{{Lookup: arr[1], Relation: 1, StreamKey: []int{0}}}, Final: keep},
						{Source: 1, Arranged: arr[1], Stages: []DeltaStage{{Lookup: arr[0], Relation: 0, StreamKey: []int{0}}},
							Final: &Project{Equiv: [][]int{{1, 2}}, Cols: []int{0, 2, 1}}},
					}
					d, err := DeltaJoin(c, paths, OperatorOptions{Name: "delta", Dataflow: "q", Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}})
					if err != nil {
						return err
					}
					c.CaptureChunks(oks, d.Oks, 3)
					return nil
				}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			dfs = append(dfs, df)
		}
		for r, name := range []string{"r0", "r1"} {
			ch := dataflow.NewChunk(2, 0)
			for v := range n {
				ch.Push([]int64{2, int64(1000*r + v)}, 0, 1)
			}
			ch.Push([]int64{1, 7}, 0, 1)
			for _, env := range envs {
				if err := env.Inputs.Send(name, ch); err != nil {
					t.Fatal(err)
				}
				if err := env.Inputs.Advance(name, frontier.At(1)); err != nil {
					t.Fatal(err)
				}
			}
		}
		stepAll(dfs, peers)
		if !oks.Passed(0) {
			t.Fatalf("the join's output has not passed 0 (frontier %v): a stage left its pass open and was not stepped again", oks.Frontier())
		}
		if d := diffMaps(map[string]int64{"[1 7 7]": 1}, capturedAt(oks, 0)); d != "" {
			t.Fatalf("rows at 0:\n%s", d)
		}
		for i := len(dfs) - 1; i >= 0; i-- {
			dfs[i].Drop()
		}
	})
}

// TestABinaryJoinThatYieldsSilentlyIsSteppedAgain: a binary join's
// operator matches one batch pair a step (stepPairs of 1) and leaves the
// rest of a batch's cut to its next step, holding its capability at the
// batch's lower; steps whose rows the closure all drops send nothing, and
// the dataflow must still be stepped again (OperatorBuilder.StepAgain)
// until every batch is joined: the capture passes every time, with the one
// row the closure keeps. Without StepAgain the dataflow stops moving with
// the join's capability held.
func TestABinaryJoinThatYieldsSilentlyIsSteppedAgain(t *testing.T) {
	const rounds = 6
	old := stepPairs
	stepPairs = 1
	defer func() { stepPairs = old }()
	envs, _ := workerEnvs(t, 1)
	env := envs[0]
	oks := dataflow.NewCapture(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			arr, err := arrangeInputs(c, "r0", "r1")
			if err != nil {
				return err
			}
			// Rows (k, v0, v1) kept where v0 == v1: key 1's only.
			d, err := Join(c, arr[0], arr[1], &Project{Equiv: [][]int{{1, 2}}, Cols: []int{0, 1, 2}}, OperatorOptions{Name: "join", Dataflow: "q"})
			if err != nil {
				return err
			}
			c.CaptureChunks(oks, d.Oks, 3)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	send := func(name string, tm uint64, rows ...[2]int64) {
		ch := dataflow.NewChunk(2, 0)
		for _, r := range rows {
			ch.Push(r[:], tm, 1)
		}
		if err := env.Inputs.Send(name, ch); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance(name, frontier.At(tm+1)); err != nil {
			t.Fatal(err)
		}
	}
	// r0's rows in one batch a time, while r1 has none: the join's later
	// batch of r1 meets a trace of several batches.
	for tm := range uint64(rounds) {
		send("r0", tm, [2]int64{2, int64(10 + tm)}, [2]int64{2, int64(20 + tm)})
		send("r1", tm)
		stepAll([]*dataflow.Dataflow{df}, 1)
	}
	send("r0", rounds, [2]int64{1, 7})
	send("r1", rounds, [2]int64{2, 99}, [2]int64{1, 7})
	stepAll([]*dataflow.Dataflow{df}, 1)
	if !oks.Passed(rounds) {
		t.Fatalf("the join's output has not passed %d (frontier %v): a join left batches to join and was not stepped again", rounds, oks.Frontier())
	}
	if d := diffMaps(map[string]int64{"[1 7 7]": 1}, capturedAt(oks, rounds)); d != "" {
		t.Fatalf("rows at %d:\n%s", rounds, d)
	}
}

// TestAHalfJoinReleasesWhatALargePassLeft: after a pass over many
// proposals (a snapshot of 3,000 rows under distinct keys, halfKeep made
// 256), a later small pass leaves the stage's stash and its sort's
// permutations with no more room than halfKeep, where they kept the
// snapshot's room for the life of the path; a pass as large as the
// snapshot's keeps its room.
func TestAHalfJoinReleasesWhatALargePassLeft(t *testing.T) {
	old := halfKeep
	halfKeep = 256
	defer func() { halfKeep = old }()
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 0, pres, nil)
	round := func(tm uint64, n int) {
		var ups []upd
		for k := range n {
			ups = append(ups, upd{key: int64(k), val: int64(tm), t: tm, d: 1})
		}
		q.rels[0].seal(t, ups, tm+1)
		q.rels[1].seal(t, nil, tm+1)
		q.step(t, func(int) int { return 1 << 30 }, nil)
	}
	room := func() (stash, ready int) {
		h := q.delta.Paths()[0].stages[0]
		return cap(h.stash.Diffs), max(cap(h.ready), cap(h.scratch))
	}
	round(0, 3000)
	if s, r := room(); s < 3000 && r < 3000 {
		t.Fatalf("after the snapshot's pass: stash room %d, sort room %d; want the snapshot's", s, r)
	}
	round(1, 3000)
	if s, r := room(); s < 3000 && r < 3000 {
		t.Fatalf("after a pass as large: stash room %d, sort room %d; want it kept", s, r)
	}
	round(2, 10)
	if s, r := room(); s > halfKeep || r > halfKeep {
		t.Fatalf("after a pass of 10: stash room %d, sort room %d; want at most %d", s, r, halfKeep)
	}
}
