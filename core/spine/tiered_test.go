package spine

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/mutants"
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

// TestCancellingMergesSizedFromTheirLevel: at the top of a steady trace
// about half of what a merge reads cancels (the retractions meet the
// updates they retract), and a level sizes its next merge's output from its
// last one (batch.NewMergerNExpect) instead of allocating for every input
// update and copying the result to its size: over two turnovers the spine
// allocates at least a fifth less than with the hint off, and holds the
// same updates.
func TestCancellingMergesSizedFromTheirLevel(t *testing.T) {
	if mutants.Enabled {
		// Mutant builds check a site on every diff they add, which
		// allocates far more than the merges measured here.
		t.Skip("allocation figures of a mutants build")
	}
	const (
		live  = 1 << 15
		round = 1 << 9
	)
	run := func(noHint bool) (string, uint64) {
		rng := rand.New(rand.NewPCG(3, 5))
		s := New(kv, Options{})
		s.noHint = noHint
		bld := batch.NewBuilder(kv, round)
		var rows [][2]int64
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
		turnover := 2 * live / round
		for range 2 * turnover {
			step(round / 2)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range 2 * turnover {
			step(round / 2)
		}
		runtime.ReadMemStats(&m1)
		for s.Exert(1 << 30) {
		}
		return render(s.Batches()), m1.TotalAlloc - m0.TotalAlloc
	}
	want, full := run(true)
	got, sized := run(false)
	if got != want {
		t.Fatal("the sized merges hold other updates than the unsized ones")
	}
	if 5*sized > 4*full {
		t.Errorf("sized merges allocated %d bytes over two turnovers, unsized %d: want at most 4/5", sized, full)
	}
	t.Logf("allocated %d bytes sized, %d unsized", sized, full)
}
