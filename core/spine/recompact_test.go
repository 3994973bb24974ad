package spine

import (
	"maps"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// churn inserts rounds [from, to) of a collection of 63 rows: round tm
// inserts two rows and, from round 51 and 14 on, retracts those inserted
// 50 and 13 rounds before (the rounds of the runtime's catch-up test).
// After each it calls after with the new upper.
func churn(t *testing.T, s *Spine, from, to uint64, after func(upper uint64)) {
	t.Helper()
	bld := batch.NewBuilder(kv, 4)
	for tm := from; tm < to; tm++ {
		bld.Push1(int64(tm%50), int64(tm), tm, 1)
		bld.Push1(int64(tm%13), -int64(tm), tm, 1)
		if tm > 50 {
			bld.Push1(int64((tm-50)%50), int64(tm-50), tm, -1)
		}
		if tm > 13 {
			bld.Push1(int64((tm-13)%13), -int64(tm-13), tm, -1)
		}
		b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(tm + 1)
		}
	}
}

// caughtUp runs 2,000 rounds of churn after 100 with both compaction
// frontiers following the upper; with lag, the frontiers stay where the
// 2,000 began until the last, then the physical one moves to the upper (the
// pending batches are admitted and merged at the old since) and after it
// the logical one, as a publisher applies a lagging reader's release: at
// once with step 0, else step rounds at a time with a little Work between
// the moves (a reader draining its backlog while the publisher applies its
// moves as they come). Then Work drains the merges in progress, with no
// arrival. It returns the spine's counters then, and the recompactions the
// lagged since's moves started.
func caughtUp(t *testing.T, lag bool, step uint64) (Stats, int64) {
	t.Helper()
	s := New(kv, Options{})
	follow := func(upper uint64) {
		s.SetPhysicalCompaction(frontier.At(upper))
		s.SetLogicalCompaction(frontier.At(upper))
	}
	churn(t, s, 0, 100, follow)
	if lag {
		churn(t, s, 100, 2100, nil)
		s.SetPhysicalCompaction(s.Upper())
	} else {
		churn(t, s, 100, 2100, follow)
	}
	before := s.Stats().Recompactions
	if lag && step > 0 {
		from, _ := s.LogicalCompaction().Time()
		to, _ := s.Upper().Time()
		for t := from + step; t < to; t += step {
			s.SetLogicalCompaction(frontier.At(t))
			s.Work(64)
		}
	}
	s.SetLogicalCompaction(s.Upper())
	for s.Work(1 << 20) {
	}
	st := s.Stats()
	if st.Merging != 0 || st.Pending != 0 {
		t.Fatalf("after Work: %d merging, %d pending\n%v", st.Merging, st.Pending, s)
	}
	return st, st.Recompactions - before
}

// TestALaggedSinceCompactsOnceItMoves: a spine whose logical frontier was
// held for 2,000 rounds while their batches merged (a reader's lagging
// hold) compacts them once the frontier passes them, with no new arrival:
// Work on the merges the move started leaves the spine the updates of the
// spine whose frontier followed every round, the 63 live rows and the
// newest batches not merged since. Before, it kept the merges' output at
// the old since until as many updates arrived again.
func TestALaggedSinceCompactsOnceItMoves(t *testing.T) {
	steady, _ := caughtUp(t, false, 0)
	lagged, started := caughtUp(t, true, 0)
	if steady.Recompactions != 0 {
		t.Errorf("the spine whose frontier followed recompacted %d times", steady.Recompactions)
	}
	if started == 0 {
		t.Errorf("the lagged since's move started no recompaction")
	}
	// Compacted, the merge structure holds each live row once and the
	// batches merged since (fewer than fanout a level, each of a round's
	// four updates at most): what the steady spine holds, give or take
	// where the last arrivals fell.
	if lagged.Updates > steady.Updates+4*DefaultFanout {
		t.Errorf("after the catch-up the spine holds %d updates in %d batches, the steady one %d in %d", lagged.Updates, lagged.Batches, steady.Updates, steady.Batches)
	}
	t.Logf("lagged: %d updates, %d batches, %d merges (%d recompactions); steady: %d updates, %d batches, %d merges", lagged.Updates, lagged.Batches, lagged.Merges, lagged.Recompactions, steady.Updates, steady.Batches, steady.Merges)
}

// TestASinceCatchingUpInStepsCompacts: the lagged since of
// TestALaggedSinceCompactsOnceItMoves moving back to the upper a round at
// a time, or seven, as a reader that drains its backlog moves its hold
// while the publisher applies the moves as they come, with merges worked
// between them: the spine still compacts what it merged during the lag,
// as the lag is half what it was when those merges started. Before a batch
// was released only by a move that passed it whole, from at or before its
// lower or its merge's since; here the moves pass most batches from
// inside, and a runtime's catch-up (TestLaggingReaderLeavesNothingOnceCaughtUp
// in core/runtime, in a build with the mutants tag) kept 700 to 7,400
// updates where 103 are live.
func TestASinceCatchingUpInStepsCompacts(t *testing.T) {
	steady, _ := caughtUp(t, false, 0)
	for _, step := range []uint64{1, 7} {
		lagged, started := caughtUp(t, true, step)
		if started == 0 || lagged.Updates > steady.Updates+4*DefaultFanout {
			t.Errorf("step %d: %d recompactions, %d updates in %d batches, the steady spine %d in %d", step, started, lagged.Updates, lagged.Batches, steady.Updates, steady.Batches)
		}
	}
}

// TestASinceOneArrivalBehindNeverRecompacts: with the logical frontier one
// arrival behind the upper (and the physical one at it), every merge
// compacts all but the newest arrival or two, so no batch owes enough to
// be merged again: over 20,000 rounds the spine starts no recompaction, and
// exactly the merges of a spine where recompaction cannot start, at the
// default fanout, at 3, and at 2, where a batch owing two arrivals owes
// as many as the fanout (before, 9,998 recompactions and 559,266 merge
// passes against 399,482).
func TestASinceOneArrivalBehindNeverRecompacts(t *testing.T) {
	for _, fanout := range []int{DefaultFanout, 3, 2} {
		run := func(off bool) Stats {
			s := New(kv, Options{Fanout: fanout})
			s.noRecompact = off
			churn(t, s, 0, 20000, func(upper uint64) {
				s.SetPhysicalCompaction(frontier.At(upper))
				s.SetLogicalCompaction(frontier.At(upper - 1))
			})
			return s.Stats()
		}
		on, off := run(false), run(true)
		if on.Recompactions != 0 {
			t.Errorf("fanout %d: %d recompactions in the steady state", fanout, on.Recompactions)
		}
		if on.Merges != off.Merges || on.MergeWork != off.MergeWork || on.Updates != off.Updates {
			t.Errorf("fanout %d, steady state: %d merges, %d merge work, %d updates; with recompaction off %d, %d, %d", fanout, on.Merges, on.MergeWork, on.Updates, off.Merges, off.MergeWork, off.Updates)
		}
		t.Logf("fanout %d: %d merges, %d merge work, %d updates", fanout, on.Merges, on.MergeWork, on.Updates)
	}
}

// A since that stays a fixed number of rounds behind the upper passes each
// batch one round at a time, from inside it: it releases none, so the
// spine recompacts nothing and merges exactly what it merges with
// recompaction off, holding the same updates. Before a batch had to be
// released, from 16 rounds behind on every batch of 16 rounds that level
// 0 merged was merged again: about one more merge pass an update (0.6 to
// 1.75 in BenchmarkLaggingSince) for the same updates held.
func TestASinceAFixedLagBehindNeverRecompacts(t *testing.T) {
	for _, c := range []struct{ round, live, rounds int }{{1, 10_000, 20_000}, {100, 10_000, 1_000}} {
		for _, lag := range []int{16, 17, 64} {
			on := lagRun(t, c.round, c.live, c.rounds, lag, false)
			off := lagRun(t, c.round, c.live, c.rounds, lag, true)
			if on.recompactions != 0 || on.work != off.work || on.held != off.held {
				t.Errorf("round=%d lag=%d: %d recompactions, merge work %d and %d updates held, against %d and %d with recompaction off",
					c.round, lag, on.recompactions, on.work, on.held, off.work, off.held)
			}
		}
	}
}

// TestAnEmptySinceRecompactsNothing: the logical frontier set to the
// empty one is the last handle's release (trace.Handle.Release), after
// which nothing reads the trace and it is about to be freed. A spine whose
// since was held back for 2,000 rounds owes recompactions, but that move
// starts none, as it admits no pending batch: before, it started three
// merges (one a level), each sized from its inputs, of a trace no one
// would read again.
func TestAnEmptySinceRecompactsNothing(t *testing.T) {
	s := New(kv, Options{})
	churn(t, s, 0, 100, func(upper uint64) {
		s.SetPhysicalCompaction(frontier.At(upper))
		s.SetLogicalCompaction(frontier.At(upper))
	})
	churn(t, s, 100, 2100, nil)
	s.SetPhysicalCompaction(s.Upper())
	if s.owing == 0 {
		t.Fatalf("no batch owes a recompaction after the lag\n%v", s)
	}
	before := s.Stats()
	s.SetLogicalCompaction(frontier.Empty())
	after := s.Stats()
	if after.Recompactions != before.Recompactions || after.Merges != before.Merges || after.Merging != before.Merging {
		t.Errorf("the empty since started %d recompactions (%d merges, %d in progress; before %d)",
			after.Recompactions-before.Recompactions, after.Merges-before.Merges, after.Merging, before.Merging)
	}
	// Nor does a merge's end at it (normalize), nor Work.
	for s.Work(1 << 20) {
	}
	if st := s.Stats(); st.Recompactions != before.Recompactions {
		t.Errorf("Work at the empty since started %d recompactions", st.Recompactions-before.Recompactions)
	}
}

// TestARecompactionLeavesAMergeInProgressAlone: a since that lags the
// arrivals and, every 50 rounds, catches up three rounds at a time to ten
// behind, with no Work between its moves, releases batches that owe on a
// level that is merging others: the recompaction waits for that level's
// merge (S3). After every move the chain is contiguous, and at the end
// the spine holds churn's rows. A recompaction started over the level's
// merge would drop that merge's batches from the chain.
func TestARecompactionLeavesAMergeInProgressAlone(t *testing.T) {
	s := New(kv, Options{Fanout: 4})
	churn(t, s, 0, 100, func(upper uint64) {
		s.SetPhysicalCompaction(frontier.At(upper))
		s.SetLogicalCompaction(frontier.At(upper))
	})
	lagged := uint64(100)
	churn(t, s, 100, 2100, func(upper uint64) {
		s.SetPhysicalCompaction(frontier.At(upper))
		if upper%50 != 0 {
			return
		}
		for lagged+3 < upper-10 {
			lagged += 3
			s.SetLogicalCompaction(frontier.At(lagged))
			checkChain(t, s)
		}
	})
	s.SetLogicalCompaction(s.Upper())
	for s.Work(1 << 20) {
	}
	checkChain(t, s)
	got, want := map[[2]int64]int64{}, map[[2]int64]int64{}
	for _, b := range s.Batches() {
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				_, ds := c.Updates()
				for _, d := range ds {
					got[[2]int64{c.Key()[0], c.Val()[0]}] += d
				}
			}
		}
	}
	for tm := range int64(2100) { // churn's rows
		want[[2]int64{tm % 50, tm}]++
		want[[2]int64{tm % 13, -tm}]++
		if tm > 50 {
			want[[2]int64{(tm - 50) % 50, tm - 50}]--
		}
		if tm > 13 {
			want[[2]int64{(tm - 13) % 13, -(tm - 13)}]--
		}
	}
	for _, m := range []map[[2]int64]int64{got, want} {
		maps.DeleteFunc(m, func(_ [2]int64, d int64) bool { return d == 0 })
	}
	if !maps.Equal(got, want) {
		t.Errorf("the spine holds %d rows, want churn's %d:\n%v\nwant\n%v", len(got), len(want), got, want)
	}
}
