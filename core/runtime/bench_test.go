package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// benchRows sends n random two-column rows (key uniform over a large range,
// val random, diff +1) to input "in" spread over times [first, first+spread),
// then advances the input to first+spread.
func benchRows(ctl *Controller, rng *rand.Rand, n int, first, spread uint64) {
	per := (n + int(spread) - 1) / int(spread)
	for t := first; t < first+spread && n > 0; t++ {
		m := min(per, n)
		c := dataflow.NewChunk(2, m)
		for range m {
			c.Push([]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}, t, 1)
		}
		ctl.Send(Input{Name: "in", Chunk: c})
		n -= m
	}
	ctl.Send(AdvanceInput{Name: "in", Frontier: frontier.At(first + spread)})
}

// arrangeDesc arranges input "in" by column 0 in the dataflow itself (the
// direct index), holds its trace as a consumer would, and probes it.
func arrangeDesc(id string, asOf uint64, until frontier.Frontier, p *dataflow.Probe) dataflow.Desc {
	return dataflow.Desc{
		ID: id, AsOf: frontier.At(asOf), Until: until,
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			c.Hold(a.Oks)
			c.Probe(p, a.Oks.Stream)
			return nil
		},
	}
}

// importProbeDesc imports index id, holds its trace as a consumer would, and
// probes it.
func importProbeDesc(dfID, id string, asOf uint64, until frontier.Frontier, p *dataflow.Probe) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, AsOf: frontier.At(asOf), Until: until,
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex(id)
			if err != nil {
				return err
			}
			c.Hold(a.Oks)
			c.Probe(p, a.Oks.Stream)
			return nil
		},
	}
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// benchSetup starts the runtimes of one index mode with an index "idx" over
// input "in" (imported) or only the input (direct), preloaded with n rows
// over times [0, 100).
type benchSetup struct {
	mode string
	ctl  *Controller
	rts  []*Runtime
}

func newBenchSetup(b *testing.B, mode string, n int, seed uint64) *benchSetup {
	b.Helper()
	ctx := benchCtx(b)
	s := &benchSetup{mode: mode}
	switch mode {
	case "imported":
		m, i, ctl, err := Pair(1, spine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.ctl, s.rts = ctl, []*Runtime{m, i}
		p := dataflow.NewProbe(1)
		ctl.Send(CreateInput{Name: "in", Arity: 2})
		ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, p)})
		benchRows(ctl, rand.New(rand.NewPCG(seed, 1)), n, 0, 100)
		if err := p.WaitPassed(ctx, 99); err != nil {
			b.Fatal(err)
		}
	case "direct":
		r, err := New(Options{Role: Solo, Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		s.ctl, _ = NewController(r)
		s.rts = []*Runtime{r}
		s.ctl.Send(CreateInput{Name: "in", Arity: 2})
		benchRows(s.ctl, rand.New(rand.NewPCG(seed, 1)), n, 0, 100)
	}
	if err := s.ctl.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.ctl.Shutdown()
		if err := s.ctl.Err(); err != nil {
			b.Errorf("runtime errors: %v", err)
		}
		// §8 invariant 32: every hold the run took is released by its end.
		for _, reg := range s.rts[0].opts.Registries {
			if st := reg.Stats(); st.Slots != 0 || st.Reserved != 0 {
				b.Errorf("registry left with %d slots and %d reserved holds", st.Slots, st.Reserved)
			}
		}
	})
	return s
}

// BenchmarkInstall measures creating a dataflow that reads an index of n
// rows at as_of: index=imported imports the published index (Interactive
// runtime); index=direct arranges the same rows itself (Solo runtime). The
// install-ns metric is from sending the create to the dataflow's frontier
// passing as_of; the op also drops the dataflow. Goal: imported ≤ 1/100 of
// direct at n=1000000.
func BenchmarkInstall(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		for _, mode := range []string{"imported", "direct"} {
			b.Run(fmt.Sprintf("n=%d/index=%s", n, mode), func(b *testing.B) {
				if testing.Short() && n > 10000 {
					b.Skip("short")
				}
				ctx := benchCtx(b)
				s := newBenchSetup(b, mode, n, 1)
				b.ReportAllocs()
				var install time.Duration
				i := 0
				for b.Loop() {
					p := dataflow.NewProbe(1)
					id := fmt.Sprintf("q%d", i)
					i++
					start := time.Now()
					if mode == "imported" {
						s.ctl.Send(CreateDataflow{Desc: importProbeDesc(id, "idx", 99, frontier.Empty(), p)})
					} else {
						s.ctl.Send(CreateDataflow{Desc: arrangeDesc(id, 99, frontier.Empty(), p)})
					}
					if err := p.WaitPassed(ctx, 99); err != nil {
						b.Fatal(err)
					}
					install += time.Since(start)
					s.ctl.Send(DropDataflow{ID: id})
				}
				b.ReportMetric(float64(install.Nanoseconds())/float64(i), "install-ns")
				b.ReportMetric(float64(install.Nanoseconds())/float64(i)/float64(n), "install-ns/row")
			})
		}
	}
}

// steadyQuery creates the steady-state reader of mode and returns its probe.
func (s *benchSetup) steadyQuery(b *testing.B) *dataflow.Probe {
	p := dataflow.NewProbe(1)
	if s.mode == "imported" {
		s.ctl.Send(CreateDataflow{Desc: importProbeDesc("steady", "idx", 99, frontier.Empty(), p)})
	} else {
		s.ctl.Send(CreateDataflow{Desc: arrangeDesc("steady", 99, frontier.Empty(), p)})
	}
	if err := p.WaitPassed(benchCtx(b), 99); err != nil {
		b.Fatal(err)
	}
	return p
}

// steadyRound sends one round of updates at time t and waits until the
// reader's frontier passes t. With an index (imported), the controller also
// lets the index compact up to t, as a controller advancing the since with
// time does; the direct reader's own hold compacts its trace alike.
func steadyRound(ctx context.Context, ctl *Controller, p *dataflow.Probe, chunk *dataflow.Chunk, t uint64, index bool) error {
	for i := range chunk.Times {
		chunk.Times[i] = t
	}
	ctl.Send(Input{Name: "in", Chunk: chunk})
	ctl.Send(AdvanceInput{Name: "in", Frontier: frontier.At(t + 1)})
	if index {
		ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(t)})
	}
	return p.WaitPassed(ctx, t)
}

func roundChunk(rng *rand.Rand, round int) *dataflow.Chunk {
	c := dataflow.NewChunk(2, round)
	for range round {
		c.Push([]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}, 0, 1)
	}
	return c
}

// BenchmarkSteady measures the steady-state cost per update of rounds of
// that many updates absorbed into an index preloaded with 1,000,000 rows
// (100,000 under -short): index=imported is maintained and published by the
// Maintenance runtime and followed by a query in the Interactive runtime;
// index=direct is arranged by the query itself in a Solo runtime. One op is
// a round: send, advance, wait for the reader's frontier to pass it.
// Goals: imported ≤ 1.25× direct; ns/update at round=100000 ≤ 1/10 of
// round=1.
func BenchmarkSteady(b *testing.B) {
	preload := 1000000
	if testing.Short() {
		preload = 100000
	}
	for _, round := range []int{1, 1000, 100000} {
		for _, mode := range []string{"imported", "direct"} {
			b.Run(fmt.Sprintf("round=%d/index=%s", round, mode), func(b *testing.B) {
				if testing.Short() && round > 1000 {
					b.Skip("short")
				}
				ctx := benchCtx(b)
				s := newBenchSetup(b, mode, preload, 2)
				p := s.steadyQuery(b)
				rng := rand.New(rand.NewPCG(3, uint64(round)))
				// Distinct chunks per op are pre-built, a pool at a time:
				// building them is not the engine's work, and one timer
				// stop per pool (not per round) keeps the benchmark's own
				// stop-the-world memory reads out of small rounds. A sent
				// chunk is never reused.
				poolLen := max(16, min(4096, 1<<18/round))
				pool := make([]*dataflow.Chunk, poolLen)
				fill := func() {
					for i := range pool {
						pool[i] = roundChunk(rng, round)
					}
				}
				fill()
				b.ReportAllocs()
				st0 := s.traceStats(ctx, b)
				t := uint64(100)
				for b.Loop() {
					i := int(t-100) % poolLen
					if i == 0 && t > 100 {
						b.StopTimer()
						fill()
						b.StartTimer()
					}
					if err := steadyRound(ctx, s.ctl, p, pool[i], t, mode == "imported"); err != nil {
						b.Fatal(err)
					}
					t++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int(t-100)*round), "ns/update")
				s.reportTraceMetrics(ctx, b, st0, int(t-100)*round)
			})
		}
	}
}

// traceStats sums the trace counters of every worker of the maintaining
// runtime (the index's traces, or the direct query's own arrangement).
func (s *benchSetup) traceStats(ctx context.Context, b *testing.B) spine.Stats {
	var mu sync.Mutex
	var sum spine.Stats
	if err := s.rts[0].barrier(ctx, func(w *worker) {
		st := w.env.Manager.TraceStats()
		mu.Lock()
		sum.Batches += st.Batches
		sum.Updates += st.Updates
		sum.MergeWork += st.MergeWork
		mu.Unlock()
	}); err != nil {
		b.Fatal(err)
	}
	return sum
}

// reportTraceMetrics reports what §8 invariant 33 asks a run to record:
// batches in the maintained traces at the end, merge work per update during
// the run and, for a published index, the hold gap (requested minus applied
// since) and the import queue depth at the end.
func (s *benchSetup) reportTraceMetrics(ctx context.Context, b *testing.B, st0 spine.Stats, updates int) {
	b.StopTimer()
	st := s.traceStats(ctx, b)
	b.ReportMetric(float64(st.Batches), "batches")
	if updates > 0 {
		b.ReportMetric(float64(st.MergeWork-st0.MergeWork)/float64(updates), "merge-work/update")
	}
	if s.mode != "imported" {
		return
	}
	gap, depth := 0, 0
	for _, reg := range s.rts[0].opts.Registries {
		if slot := reg.Lookup("idx", frontier.Min()); slot != nil {
			ps := slot.Oks().Stats()
			gap, depth = max(gap, int(ps.HoldGap)), depth+ps.QueueDepth
		}
	}
	b.ReportMetric(float64(gap), "hold-gap")
	b.ReportMetric(float64(depth), "queue-depth")
}

// quiesce waits until every maintaining runtime of s has applied everything
// sent and finished every merge in progress (maintenance drained). The
// Interactive runtime maintains nothing in these setups (its query only
// imports), and its probe passing already says it applied the round, so
// it is not waited on: a barrier there would only add a wake-up to one side.
func (s *benchSetup) quiesce(ctx context.Context) error {
	for _, r := range s.rts {
		if r.Role() == Interactive {
			continue
		}
		if err := r.barrier(ctx, func(w *worker) {
			for w.env.Manager.Maintenance(1 << 20) {
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSteadyRatio interleaves rounds of imported and direct (the same
// updates to both, alternating which goes first) and reports the median
// ratio of their per-round times with its interquartile spread: one run
// gives the ratio without the drift between separate benchmarks. A round is
// timed until its maintaining runtime is quiescent (see quiesce), merges in
// progress included, so work one side leaves running in the background
// neither escapes its own measurement nor slows the other side's.
func BenchmarkSteadyRatio(b *testing.B) {
	preload := 1000000
	if testing.Short() {
		preload = 100000
	}
	for _, round := range []int{1, 1000, 100000} {
		b.Run(fmt.Sprintf("round=%d", round), func(b *testing.B) {
			if testing.Short() && round > 1000 {
				b.Skip("short")
			}
			ctx := benchCtx(b)
			imp := newBenchSetup(b, "imported", preload, 2)
			dir := newBenchSetup(b, "direct", preload, 2)
			pi, pd := imp.steadyQuery(b), dir.steadyQuery(b)
			rng := rand.New(rand.NewPCG(4, uint64(round)))
			var ratios []float64
			t := uint64(100)
			for b.Loop() {
				b.StopTimer()
				ci, cd := roundChunk(rng, round), roundChunk(rng, 0)
				cd.Rows, cd.Times, cd.Diffs = slices.Clone(ci.Rows), slices.Clone(ci.Times), slices.Clone(ci.Diffs)
				b.StartTimer()
				var di, dd time.Duration
				run := func(s *benchSetup, p *dataflow.Probe, c *dataflow.Chunk) time.Duration {
					start := time.Now()
					if err := steadyRound(ctx, s.ctl, p, c, t, s.mode == "imported"); err != nil {
						b.Fatal(err)
					}
					if err := s.quiesce(ctx); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				if t%2 == 0 {
					di, dd = run(imp, pi, ci), run(dir, pd, cd)
				} else {
					dd, di = run(dir, pd, cd), run(imp, pi, ci)
				}
				ratios = append(ratios, float64(di)/float64(dd))
				t++
			}
			slices.Sort(ratios)
			q := func(f float64) float64 { return ratios[int(f*float64(len(ratios)-1))] }
			b.ReportMetric(q(0.5), "imported/direct")
			b.ReportMetric(q(0.25), "ratio-p25")
			b.ReportMetric(q(0.75), "ratio-p75")
		})
	}
}
