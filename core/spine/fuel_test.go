package spine

import (
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestArrivalBringsItsFuel: an arrival of n updates gives each merge in
// progress Options.Fuel × n × effort of merge work (DefaultFuel when the
// option is left 0 or set below 1), no more and no less while the merge
// has that much left.
func TestArrivalBringsItsFuel(t *testing.T) {
	cases := []struct {
		fuel, effort, want int64
	}{
		{0, 1, DefaultFuel},
		{-3, 1, DefaultFuel},
		{1, 1, 1},
		{WorkedFuel, 1, WorkedFuel},
		{3, 2, 6},
	}
	for _, c := range cases {
		s := New(kv, Options{Fuel: c.fuel, Effort: c.effort, Fanout: 2})
		if got := s.Fuel(); c.fuel > 0 && got != c.fuel || c.fuel <= 0 && got != DefaultFuel {
			t.Errorf("fuel %d: Fuel() = %d", c.fuel, got)
		}
		tm := uint64(0)
		insert := func(n int) {
			bld := batch.NewBuilder(kv, n)
			for i := range n {
				bld.Push1(int64(tm)*100000+int64(i), 0, tm, 1)
			}
			b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Insert(b); err != nil {
				t.Fatal(err)
			}
			tm++
			s.SetPhysicalCompaction(frontier.At(tm))
		}
		// Two batches of 2,000 at the top level: their merge starts
		// with no work done (the second's fuel came before it joined).
		insert(2000)
		insert(2000)
		if !s.Merging() {
			t.Fatalf("fuel %d: no merge in progress after two batches of the top's size", c.fuel)
		}
		w0 := s.Stats().MergeWork
		// Ten updates arrive at a level far below: the top's merge, with
		// 4,000 updates left, takes their fuel.
		insert(10)
		if got := s.Stats().MergeWork - w0; got != 10*c.want {
			t.Errorf("fuel %d effort %d: an arrival of 10 did %d merge work, want %d", c.fuel, c.effort, got, 10*c.want)
		}
	}
}

// TestHugeFuelSaturates: a fuel near MaxInt64 saturates the arrival's
// product as a huge effort does, so the spine merges at once instead of
// doing no merge work at all.
func TestHugeFuelSaturates(t *testing.T) {
	// 4 × (2^62 + 1) wraps to 4: a spine asked to merge at once would
	// do almost nothing.
	if got := arrivalFuel(4, 1<<62+1, 1); got != math.MaxInt64 {
		t.Fatalf("arrivalFuel(4, 2^62+1, 1) = %d, want MaxInt64", got)
	}
	if got := arrivalFuel(1000, 1<<62, 1<<40); got != math.MaxInt64 {
		t.Fatalf("arrivalFuel(1000, 2^62, 2^40) = %d, want MaxInt64", got)
	}
	if got := arrivalFuel(0, 2, 3); got != 6 {
		t.Fatalf("arrivalFuel(0, 2, 3) = %d, want one update's: 6", got)
	}
}

// TestWorkedFuelKeepsTheSteadyBounds: a spine given WorkedFuel and worked
// between arrivals, once a round with as much effort as the round has
// updates (a runtime's maintenance pass gives each merging trace Effort,
// 16,384, at every wake), keeps TestSteadyStateMergeWork's bounds: the
// trace within three times its live rows, the chain within four levels
// of fanout batches, at most 3.75 merge passes an update.
func TestWorkedFuelKeepsTheSteadyBounds(t *testing.T) {
	const (
		live  = 1 << 16
		round = 1 << 9
	)
	s := New(kv, Options{Fuel: WorkedFuel})
	f := newFIFO(t, s, round, 7, 11)
	step := func(retract int) {
		f.step(retract)
		s.Work(round)
	}
	for len(f.rows) < live {
		step(0)
	}
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

// TestAnEmptyBatchBringsOneUpdatesFuel: a batch without updates is an
// arrival of one update's fuel (Options.Fuel × effort) to the merges in
// progress, whatever the spine's fuel.
func TestAnEmptyBatchBringsOneUpdatesFuel(t *testing.T) {
	for _, fuel := range []int64{1, 3, WorkedFuel, DefaultFuel} {
		s := New(kv, Options{Fuel: fuel, Effort: 5, Fanout: 2})
		tm := uint64(0)
		for range 2 {
			bld := batch.NewBuilder(kv, 2000)
			for i := range 2000 {
				bld.Push1(int64(tm)*100000+int64(i), 0, tm, 1)
			}
			b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Insert(b); err != nil {
				t.Fatal(err)
			}
			tm++
			s.SetPhysicalCompaction(frontier.At(tm))
		}
		if !s.Merging() {
			t.Fatalf("fuel %d: no merge in progress", fuel)
		}
		w0 := s.Stats().MergeWork
		if err := s.Insert(batch.Empty(kv, frontier.At(tm), frontier.At(tm+1))); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Stats().MergeWork-w0, fuel*5; got != want {
			t.Errorf("fuel %d effort 5: an empty batch did %d merge work, want %d", fuel, got, want)
		}
	}
}
