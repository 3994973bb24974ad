package spine

import (
	"math"
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
	s := New(kv, Options{})
	checkSteadyBounds(t, s, newFIFO(t, s, 1<<9, 7, 11), 1<<16)
}

// checkSteadyBounds warms f's spine up to live rows and two turnovers,
// then checks over two more that the trace stays within three times its
// live rows, the chain within four levels of fanout batches, and the
// merge work at most 3.75 passes an update.
func checkSteadyBounds(t *testing.T, s *Spine, f *fifo, live int) {
	t.Helper()
	turnover := f.warm(live)
	st0 := s.Stats()
	maxBatches, maxUpdates := 0, 0
	for range 2 * turnover {
		f.step(f.round / 2)
		st := s.Stats()
		maxBatches, maxUpdates = max(maxBatches, st.Batches), max(maxUpdates, st.Updates)
	}
	st := s.Stats()
	passes := float64(st.MergeWork-st0.MergeWork) / float64(2*turnover*f.round)
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
		s := New(kv, Options{})
		s.noHint = noHint
		f := newFIFO(t, s, round, 3, 5)
		step := f.step
		turnover := f.warm(live)
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

// fifo drives a spine with the rounds of a steady trace: each round
// retracts the oldest rows and inserts new ones at its own time, and both
// compaction frontiers follow the upper.
type fifo struct {
	t     testing.TB
	s     *Spine
	bld   *batch.Builder
	rng   *rand.Rand
	rows  [][2]int64 // the live rows, oldest first
	tm    uint64
	round int
	after func() // run after every round, when set (work between arrivals)
}

func newFIFO(t testing.TB, s *Spine, round int, seed1, seed2 uint64) *fifo {
	return &fifo{t: t, s: s, bld: batch.NewBuilder(kv, round), rng: rand.New(rand.NewPCG(seed1, seed2)), round: round}
}

// warm inserts rounds until live rows are live, then two turnovers of
// steady rounds (half retractions, half inserts), and returns the rounds a
// turnover takes.
func (f *fifo) warm(live int) int {
	for len(f.rows) < live {
		f.step(0)
	}
	turnover := 2 * live / f.round
	for range 2 * turnover {
		f.step(f.round / 2)
	}
	return turnover
}

// step inserts one round: retract of the oldest rows out, round-retract
// new ones in.
func (f *fifo) step(retract int) {
	for range retract {
		r := f.rows[0]
		f.rows = f.rows[1:]
		f.bld.Push1(r[0], r[1], f.tm, -1)
	}
	for range f.round - retract {
		r := [2]int64{f.rng.Int64N(1 << 40), f.rng.Int64N(1 << 40)}
		f.rows = append(f.rows, r)
		f.bld.Push1(r[0], r[1], f.tm, 1)
	}
	b, err := f.bld.Build(frontier.At(f.tm), frontier.At(f.tm+1))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.s.Insert(b); err != nil {
		f.t.Fatal(err)
	}
	f.tm++
	f.s.SetLogicalCompaction(frontier.At(f.tm))
	f.s.SetPhysicalCompaction(frontier.At(f.tm))
	if f.after != nil {
		f.after()
	}
}

// TestHugeEffortSaturates: an arrival's fuel is Options.Fuel × updates ×
// effort; with an effort near MaxInt64 the product must saturate, not wrap
// negative, or the spine does no merge work on arrivals and its chain, as a
// level folds its waiting batches past the merge it still has in progress,
// falls out of time order.
func TestHugeEffortSaturates(t *testing.T) {
	for _, e := range []int64{math.MaxInt64, math.MaxInt64 / 3, 1 << 61} {
		s := New(kv, Options{Effort: e, Fanout: 2})
		for i := range uint64(64) {
			bld := batch.NewBuilder(kv, 5)
			for j := range int64(5) {
				bld.Push1(int64(i)*10+j, 0, i, 1)
			}
			b, err := bld.Build(frontier.At(i), frontier.At(i+1))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Insert(b); err != nil {
				t.Fatal(err)
			}
			s.SetPhysicalCompaction(frontier.At(i + 1))
			prev := frontier.Min()
			s.MapBatches(func(b *batch.Batch) {
				if b.Lower() != prev {
					t.Fatalf("effort %d, insert %d: chain out of order at %v\n%v", e, i, b.Desc(), s)
				}
				prev = b.Upper()
			})
			// A merge started by an arrival gets its fuel from the next
			// one, which with this effort finishes it: only merges this
			// arrival started (at most one a level, two here) remain.
			if st := s.Stats(); st.Merging > 2 {
				t.Fatalf("effort %d, insert %d: %d merges in progress\n%v", e, i, st.Merging, s)
			}
		}
	}
}
