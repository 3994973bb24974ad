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
		// Ten updates arrive at a level far below the top, whose merge
		// has 4,000 updates left: it takes their fuel.
		tm := startTopMerge(t, s)
		w0 := s.Stats().MergeWork
		insertRun(t, s, tm, 10)
		if got := s.Stats().MergeWork - w0; got != 10*c.want {
			t.Errorf("fuel %d effort %d: an arrival of 10 did %d merge work, want %d", c.fuel, c.effort, got, 10*c.want)
		}
	}
}

// startTopMerge inserts two batches of 2,000 updates into s (fanout 2), at
// times 0 and 1, so that their merge at the top level is in progress with
// no work done (the second's fuel came before it joined), and returns the
// next time.
func startTopMerge(t *testing.T, s *Spine) uint64 {
	t.Helper()
	insertRun(t, s, 0, 2000)
	insertRun(t, s, 1, 2000)
	if !s.Merging() {
		t.Fatalf("no merge in progress after two batches of the top's size")
	}
	return 2
}

// insertRun inserts a batch of n distinct updates at time tm, over [tm,
// tm+1), and admits it.
func insertRun(t *testing.T, s *Spine, tm uint64, n int) {
	t.Helper()
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
	s.SetPhysicalCompaction(frontier.At(tm + 1))
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
// 16,384, at every wake), keeps TestSteadyStateMergeWork's bounds.
func TestWorkedFuelKeepsTheSteadyBounds(t *testing.T) {
	const round = 1 << 9
	s := New(kv, Options{Fuel: WorkedFuel})
	f := newFIFO(t, s, round, 7, 11)
	f.after = func() { s.Work(round) }
	checkSteadyBounds(t, s, f, 1<<16)
}

// TestAnEmptyBatchBringsOneUpdatesFuel: a batch without updates is an
// arrival of one update's fuel (Options.Fuel × effort) to the merges in
// progress, whatever the spine's fuel.
func TestAnEmptyBatchBringsOneUpdatesFuel(t *testing.T) {
	for _, fuel := range []int64{1, 3, WorkedFuel, DefaultFuel} {
		s := New(kv, Options{Fuel: fuel, Effort: 5, Fanout: 2})
		tm := startTopMerge(t, s)
		w0 := s.Stats().MergeWork
		if err := s.Insert(batch.Empty(kv, frontier.At(tm), frontier.At(tm+1))); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Stats().MergeWork-w0, fuel*5; got != want {
			t.Errorf("fuel %d effort 5: an empty batch did %d merge work, want %d", fuel, got, want)
		}
	}
}
