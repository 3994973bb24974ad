package spine

import (
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestSteadyStateMergeWork is the tiered policy's promise at a fixed trace
// size (docs/semantics.md §8 invariant 6, and the package doc): rounds that
// retract the oldest rows and insert as many new ones, with both compaction
// frontiers following the upper, keep the trace within three times its live
// rows (the largest batch, as much again waiting to be merged into it, and
// the levels below), keep the chain within a few levels of fanout batches,
// and cost each update at most 3.75 merge passes: with live/round = 128,
// one pass at each level below the one just under the top, and two for the
// top's merge, which that level folds its batches into — where binary
// merging costs log_2(128) = 7 and more.
func TestSteadyStateMergeWork(t *testing.T) {
	const (
		live  = 1 << 16
		round = 1 << 9
	)
	rng := rand.New(rand.NewPCG(7, 11))
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, round)
	var rows [][2]int64 // FIFO of live rows
	tm := uint64(0)
	step := func(retract int) {
		for range retract {
			r := rows[0]
			rows = rows[1:]
			bld.Push1(r[0], r[1], tm, -1)
		}
		for range round - retract {
			r := [2]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}
			rows = append(rows, r)
			bld.Push1(r[0], r[1], tm, 1)
		}
		b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		tm++
		s.SetLogicalCompaction(frontier.At(tm))
		s.SetPhysicalCompaction(frontier.At(tm))
	}
	for len(rows) < live {
		step(0)
	}
	// Two turnovers to reach the steady state, two measured.
	turnover := 2 * live / round
	for range 2 * turnover {
		step(round / 2)
	}
	st0 := s.Stats()
	maxBatches, maxUpdates := 0, 0
	for range 2 * turnover {
		step(round / 2)
		st := s.Stats()
		maxBatches, maxUpdates = max(maxBatches, st.Batches), max(maxUpdates, st.Updates)
	}
	st := s.Stats()
	passes := float64(st.MergeWork-st0.MergeWork) / float64(2*turnover*round)
	if passes > 3.75 {
		t.Errorf("%.2f merge passes per update in the steady state, want <= 3.75", passes)
	}
	if maxUpdates > 3*live {
		t.Errorf("trace grew to %d updates for %d live rows", maxUpdates, live)
	}
	if maxBatches > 4*DefaultFanout {
		t.Errorf("chain grew to %d batches", maxBatches)
	}
	t.Logf("passes/update %.2f, max batches %d, max updates %d", passes, maxBatches, maxUpdates)
}
