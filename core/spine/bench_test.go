package spine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Benchmarks of the spine under the load of a maintained index: batches of
// random updates arrive one time apart, the physical compaction frontier
// follows the upper after each insert and the logical frontier follows
// logicalLag times behind, so the merges that arrivals drive also apply
// logical compaction.
//
// One op of BenchmarkSpineInsert is one whole fill of an empty spine to
// fillTarget updates (a spine can be filled only once) followed by exerting
// it to quiescence, so no merge work the fill started is left outside the
// timer. The batches are built once, outside the timed
// loop, from fixed PCG seeds; batches are immutable, so every fill reuses
// them. Building is measured in core/batch (BenchmarkBuild).
//
// Metrics:
//
//	ns/update          timed nanoseconds per inserted update, merge work to
//	                   quiescence included
//	ns/merge-work      the same time per update consumed by merges; compare with
//	                   core/batch BenchmarkMerge and BenchmarkMergeLimit ns/update
//	merge-work/update  Stats().MergeWork per inserted update, quiescence
//	                   included: how many merge passes each update went through
//	max-batches        longest chain seen after any insert
//	end-batches        chain length when the fill ends
//	B/update           Stats().Bytes / Stats().Updates after exerting to
//	                   quiescence (goal <= 48 for one-column keys and vals)
//	live/update        updates left after quiescence per inserted update
//	                   (below 1 when merges consolidate and cancel)
//
// The instrumented numbers (all but ns/*) come from one untimed fill before
// the timed loop; the spine is deterministic, so every timed fill does the
// same merge work.
//
// Under -short the fill target is 100,000 updates so that
// `go test -short -run '^$' -bench . -benchtime 1x ./core/spine` stays fast.

const (
	// logicalLag is how many times the logical compaction frontier trails
	// the upper.
	logicalLag = 2
	// exertEffort is the effort of each Exert call when exerting to
	// quiescence.
	exertEffort = 1 << 16
)

// fillTarget returns the number of updates a fill inserts.
func fillTarget() int {
	if testing.Short() {
		return 100_000
	}
	return 1_000_000
}

// insertCase is one configuration of BenchmarkSpineInsert. keys == 0 means
// keys and vals uniform over [0, 1<<40) with diff +1 (updates rarely
// coincide); otherwise keys are uniform over [0, keys), vals over [0, 100)
// and diffs are ±1, so merges consolidate and cancel.
type insertCase struct {
	batch, keys int
}

func (c insertCase) String() string {
	if c.keys == 0 {
		return fmt.Sprintf("batch=%d", c.batch)
	}
	return fmt.Sprintf("batch=%d/keys=%d", c.batch, c.keys)
}

var insertCases = []insertCase{{1000, 0}, {10_000, 0}, {1000, 10_000}}

// benchBatches builds total/c.batch batches; batch i describes [i, i+1) and
// all its updates are at time i. It returns the batches and the updates
// they hold.
func benchBatches(tb testing.TB, c insertCase, total int) ([]*batch.Batch, int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(uint64(c.batch), uint64(c.keys)+0x737069_6e65))
	bld := batch.NewBuilder(kv, c.batch)
	out := make([]*batch.Batch, total/c.batch)
	n := 0
	for i := range out {
		t := uint64(i)
		for range c.batch {
			if c.keys == 0 {
				bld.Push1(rng.Int64N(1<<40), rng.Int64N(1<<40), t, 1)
				continue
			}
			d := int64(1)
			if rng.IntN(2) == 0 {
				d = -1
			}
			bld.Push1(rng.Int64N(int64(c.keys)), rng.Int64N(100), t, d)
		}
		b, err := bld.Build(frontier.At(t), frontier.At(t+1))
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
		n += b.Len()
	}
	return out, n
}

// step inserts b and moves the compaction frontiers as a maintained index
// does: logical first, so that the merges the physical frontier admits
// compact up to it.
func step(tb testing.TB, s *Spine, b *batch.Batch) {
	if err := s.Insert(b); err != nil {
		tb.Fatal(err)
	}
	up := b.Upper().MustTime()
	s.SetLogicalCompaction(frontier.At(up - min(up, logicalLag)))
	s.SetPhysicalCompaction(s.Upper())
}

// fill inserts every batch into s (the timed path).
func fill(tb testing.TB, s *Spine, bs []*batch.Batch) {
	for _, b := range bs {
		step(tb, s, b)
	}
}

// quiesce exerts s until no work remains and returns the Exert calls made.
func quiesce(tb testing.TB, s *Spine) int {
	calls := 0
	for s.Exert(exertEffort) {
		calls++
		if calls > 1<<20 {
			tb.Fatalf("exert does not converge:\n%v", s)
		}
	}
	if err := s.Err(); err != nil {
		tb.Fatal(err)
	}
	return calls + 1
}

// fillStats are the counters of one instrumented fill.
type fillStats struct {
	maxBatches, endBatches int
	mergeWork              int64
	bytes, live            int // after quiescence
}

// instrumentedFill fills a fresh spine, reading Stats after every insert,
// then exerts it to quiescence.
func instrumentedFill(tb testing.TB, bs []*batch.Batch) fillStats {
	s := New(kv, Options{})
	var fs fillStats
	for _, b := range bs {
		step(tb, s, b)
		fs.maxBatches = max(fs.maxBatches, s.Stats().Batches)
	}
	fs.endBatches = s.Stats().Batches
	quiesce(tb, s)
	st := s.Stats()
	fs.mergeWork, fs.bytes, fs.live = st.MergeWork, st.Bytes, st.Updates
	return fs
}

// reportPer reports the timed nanoseconds per unit of work, where each loop
// iteration did perOp units.
func reportPer(b *testing.B, perOp float64, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/perOp, "ns/"+unit)
}

// BenchmarkSpineInsert times filling an empty spine to fillTarget updates
// with Insert and the frontier moves of a maintained index (step), merge work
// driven by arrivals included, then exerting it to quiescence (one batch).
func BenchmarkSpineInsert(b *testing.B) {
	for _, c := range insertCases {
		b.Run(c.String(), func(b *testing.B) {
			bs, n := benchBatches(b, c, fillTarget())
			fs := instrumentedFill(b, bs)
			b.ReportAllocs()
			for b.Loop() {
				s := New(kv, Options{})
				fill(b, s, bs)
				quiesce(b, s)
			}
			reportPer(b, float64(n), "update")
			reportPer(b, float64(fs.mergeWork), "merge-work")
			b.ReportMetric(float64(fs.mergeWork)/float64(n), "merge-work/update")
			b.ReportMetric(float64(fs.maxBatches), "max-batches")
			b.ReportMetric(float64(fs.endBatches), "end-batches")
			b.ReportMetric(float64(fs.bytes)/float64(max(fs.live, 1)), "B/update")
			b.ReportMetric(float64(fs.live)/float64(n), "live/update")
		})
	}
}

// BenchmarkSpineExert times exerting to quiescence (one batch left) a spine
// holding fillTarget updates as BenchmarkSpineInsert/batch=1000 leaves it:
// a chain of batches, some merges in progress. The fill is untimed and redone
// for every iteration, since exerting consumes the state.
func BenchmarkSpineExert(b *testing.B) {
	bs, n := benchBatches(b, insertCase{batch: 1000}, fillTarget())
	var batches, calls int
	var work int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := New(kv, Options{})
		fill(b, s, bs)
		st := s.Stats()
		batches, work = st.Batches, st.MergeWork
		b.StartTimer()
		calls = quiesce(b, s)
		b.StopTimer()
		work = s.Stats().MergeWork - work
		b.StartTimer()
	}
	reportPer(b, float64(n), "update")
	b.ReportMetric(float64(work)/float64(n), "merge-work/update")
	b.ReportMetric(float64(batches), "batches")
	b.ReportMetric(float64(calls), "exert-calls")
}

// steadyRounds makes the rounds of BenchmarkSpineSteady: the live rows form
// a FIFO, and each round retracts the oldest round/2 and inserts round/2 new
// ones at its own time, so the trace keeps a fixed size.
type steadyRounds struct {
	rng   *rand.Rand
	bld   *batch.Builder
	rows  [][2]int64
	head  int
	round int
	t     uint64
}

// next builds the next round's batch; while the trace is filling it only
// inserts.
func (r *steadyRounds) next(tb testing.TB, live int) *batch.Batch {
	retract := r.round / 2
	if len(r.rows)-r.head < live {
		retract = 0
	}
	for range retract {
		x := r.rows[r.head]
		r.head++
		r.bld.Push1(x[0], x[1], r.t, -1)
	}
	for range r.round - retract {
		x := [2]int64{r.rng.Int64N(1 << 40), r.rng.Int64N(1 << 40)}
		r.rows = append(r.rows, x)
		r.bld.Push1(x[0], x[1], r.t, 1)
	}
	if r.head > live {
		r.rows = append(r.rows[:0], r.rows[r.head:]...)
		r.head = 0
	}
	b, err := r.bld.Build(frontier.At(r.t), frontier.At(r.t+1))
	if err != nil {
		tb.Fatal(err)
	}
	r.t++
	return b
}

// BenchmarkSpineSteady times the spine alone in the steady state Steady
// drives in a runtime (core/runtime): a trace of fillTarget live rows that
// absorbs rounds of 1,000 updates (the oldest 500 rows retracted, 500 new
// inserted), both compaction frontiers following the upper. One op is one
// round's insert with the merge work it drives. The rounds are built before
// the loop, a pool at a time with the timer stopped (the spine does no work
// between inserts, so none escapes), after two untimed turnovers of the
// rows inserted from pools alike; the loop ends by finishing the merges in
// progress inside the timer.
// fanout=2 is the same tiered policy with binary merges, for comparison.
// Reports ns/update and passes/update.
func BenchmarkSpineSteady(b *testing.B) {
	const round = 1000
	live := fillTarget()
	for _, fanout := range []int{2, DefaultFanout} {
		b.Run(fmt.Sprintf("fanout=%d", fanout), func(b *testing.B) {
			s := New(kv, Options{Fanout: fanout})
			r := &steadyRounds{rng: rand.New(rand.NewPCG(7, 11)), bld: batch.NewBuilder(kv, round), round: round}
			insert := func(bt *batch.Batch) {
				if err := s.Insert(bt); err != nil {
					b.Fatal(err)
				}
				s.SetLogicalCompaction(s.Upper())
				s.SetPhysicalCompaction(s.Upper())
			}
			pool := make([]*batch.Batch, 512)
			fill := func(n int) {
				for i := range pool[:n] {
					pool[i] = r.next(b, live)
				}
			}
			// The warm-up inserts from pools as the loop does, so that the
			// loop's heap is one that has carried a pool (core/runtime's
			// BenchmarkSteady says why: made a round at a time, 1.8-4.0
			// page faults a round and 59-63 ns/update here, against
			// 1.2-1.8 and 57-59).
			for w, nw := 0, live/round+4*live/round; w < nw; w++ {
				if w%len(pool) == 0 {
					fill(min(len(pool), nw-w))
				}
				insert(pool[w%len(pool)])
			}
			for s.Work(1 << 30) {
			}
			fill(len(pool))
			st0 := s.Stats()
			n := 0
			for b.Loop() {
				if n > 0 && n%len(pool) == 0 {
					b.StopTimer()
					fill(len(pool))
					b.StartTimer()
				}
				insert(pool[n%len(pool)])
				n++
			}
			start := time.Now()
			for s.Work(1 << 30) {
			}
			elapsed := b.Elapsed() + time.Since(start)
			st := s.Stats()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*round), "ns/update")
			b.ReportMetric(float64(st.MergeWork-st0.MergeWork)/float64(n*round), "passes/update")
			b.ReportMetric(float64(st.Batches), "batches")
		})
	}
}

// lagFigures are the counters of one lagRun.
type lagFigures struct {
	updates       int   // updates the rounds inserted after the preload
	work          int64 // merge work over the rounds (Stats().MergeWork)
	recompactions int64
	held          int // updates in the trace after the last round
	batches       int
}

// lagRun preloads live rows in one batch at time 0, then inserts rounds
// batches of round updates, one time apart, as core/runtime's
// BenchmarkSteady sends them (round/2 retractions of the oldest live rows
// and round/2 new rows, alternating 0 and 1 retraction at round=1), with
// the physical compaction frontier at the upper and the logical one lag
// times behind it, as a reader whose since stays lag rounds behind holds
// it. Arrivals alone fuel the merges. off sets noRecompact.
func lagRun(tb testing.TB, round, live, rounds, lag int, off bool) lagFigures {
	tb.Helper()
	s := New(kv, Options{})
	s.noRecompact = off
	rng := rand.New(rand.NewPCG(3, uint64(round)))
	rows := make([][2]int64, 0, live+rounds*round)
	bld := batch.NewBuilder(kv, max(live, round))
	for range live {
		x := [2]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}
		rows = append(rows, x)
		bld.Push1(x[0], x[1], 0, 1)
	}
	pre, err := bld.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Insert(pre); err != nil {
		tb.Fatal(err)
	}
	s.SetPhysicalCompaction(s.Upper())
	st0 := s.Stats()
	head, n := 0, 0
	for i := range rounds {
		t := uint64(i + 1)
		retract := round*(i+1)/2 - round*i/2
		for range retract {
			x := rows[head]
			head++
			bld.Push1(x[0], x[1], t, -1)
		}
		for range round - retract {
			x := [2]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}
			rows = append(rows, x)
			bld.Push1(x[0], x[1], t, 1)
		}
		b, err := bld.Build(frontier.At(t), frontier.At(t+1))
		if err != nil {
			tb.Fatal(err)
		}
		n += b.Len()
		if err := s.Insert(b); err != nil {
			tb.Fatal(err)
		}
		s.SetPhysicalCompaction(s.Upper())
		s.SetLogicalCompaction(frontier.At(t + 1 - min(t+1, uint64(lag))))
	}
	st := s.Stats()
	return lagFigures{updates: n, work: st.MergeWork - st0.MergeWork, recompactions: st.Recompactions, held: st.Updates, batches: st.Batches}
}

// BenchmarkLaggingSince measures what a since that stays lag rounds behind
// the upper costs the spine (lagRun), with recompaction on and off: merge
// passes per inserted update, recompactions, and the updates the trace
// holds after the rounds. The figures are counts, the same every run; one
// op is a whole run (-benchtime 1x).
func BenchmarkLaggingSince(b *testing.B) {
	const live = 100_000
	for _, c := range []struct{ round, rounds int }{{1, 200_000}, {1000, 2000}} {
		for _, lag := range []int{1, 8, 16, 32, 64} {
			for _, off := range []bool{false, true} {
				mode := "on"
				if off {
					mode = "off"
				}
				b.Run(fmt.Sprintf("round=%d/lag=%d/recompact=%s", c.round, lag, mode), func(b *testing.B) {
					var f lagFigures
					for b.Loop() {
						f = lagRun(b, c.round, live, c.rounds, lag, off)
					}
					b.ReportMetric(float64(f.work)/float64(f.updates), "passes/update")
					b.ReportMetric(float64(f.recompactions), "recompactions")
					b.ReportMetric(float64(f.held), "trace-updates")
					b.ReportMetric(float64(f.batches), "batches")
				})
			}
		}
	}
}
