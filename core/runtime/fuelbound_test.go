package runtime

import (
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestAnArrangementStaysWithinItsBound: an index's trace, whose arrivals
// bring spine.WorkedFuel and whose merges the maintenance pass works at
// every wake (Options.Effort, left to its default), stays within three
// times its live rows over rounds that retract the oldest rows and insert
// as many new ones, each waited for, in Solo and in the pair. A spine that
// only its arrivals drive keeps that bound at spine.DefaultFuel and passes
// it at WorkedFuel (core/spine's TestSteadyStateMergeWork and
// TestWorkedFuelKeepsTheSteadyBounds): the work between arrivals is what
// keeps an arrangement within it.
func TestAnArrangementStaysWithinItsBound(t *testing.T) {
	const live, round = 1 << 16, 1 << 9
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, mode, 1)
			ctx := testCtx(t)
			s.must(CreateInput{Name: "in", Arity: 2, NoHistory: true})
			p := dataflow.NewProbe(1)
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, p)})
			rng := rand.New(rand.NewPCG(7, 11))
			var rows [][2]int64
			tm := uint64(0)
			step := func(retract int) {
				c := dataflow.NewChunk(2, round)
				for range retract {
					c.Push(rows[0][:], tm, -1)
					rows = rows[1:]
				}
				for range round - retract {
					r := [2]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}
					rows = append(rows, r)
					c.Push(r[:], tm, 1)
				}
				if err := s.ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(tm + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(tm + 1)}); err != nil {
					t.Fatal(err)
				}
				if err := p.WaitPassed(ctx, tm); err != nil {
					t.Fatal(err)
				}
				// Every runtime has applied the round's compaction: the
				// pair's Interactive runtime moves its peer hold on the
				// publication in a wake of its own (R6), which a loaded
				// machine delays by rounds, keeping the merges of the
				// rounds between from compacting (3.2-3.6 times the live
				// rows under load, where it reads 2.0).
				if err := s.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				tm++
			}
			for len(rows) < live {
				step(0)
			}
			turnover := 2 * live / round
			for range 2 * turnover {
				step(round / 2)
			}
			most := 0
			for range 2 * turnover {
				step(round / 2)
				st, err := s.rts[0].Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				most = max(most, st.Trace.Updates)
			}
			if most > 3*live {
				t.Errorf("the index's trace held %d updates for %d live rows, want at most three times", most, live)
			}
			t.Logf("at most %d updates for %d live rows", most, live)
		})
	}
}
