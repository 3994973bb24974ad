package runtime

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// captureInput maintains input "in" (two columns) arranged by its first
// column from as_of asOf, and captures it.
func captureInput(id string, asOf uint64, cp *dataflow.Capture) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: true, AsOf: frontier.At(asOf), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		},
	}
}

// accumulated is cp's collection at t, by row.
func accumulated(t *testing.T, cp *dataflow.Capture, at uint64) map[string]int64 {
	t.Helper()
	rows, over := cp.Accumulate(at)
	if over != 0 {
		t.Fatalf("time %d: %d overflows", at, over)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[fmt.Sprint(r.Row)] = r.Diff
	}
	return out
}

// TestInputCompactionBoundsTheHistory: an input whose since follows its
// frontier keeps a history of about what a compaction leaves, not every
// update sent (Stats.InputHistory; the Interactive runtime keeps none); a
// dataflow created later at the since reads the collection a reader from
// the start reads, at every time from there on; one before the since is
// refused with dataflow.ErrInputCompacted; a since never moves back, and
// names a declared input. Solo and the pair alike, on one and two workers.
func TestInputCompactionBoundsTheHistory(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		rng := rand.New(rand.NewPCG(testSeed(t), uint64(s.workers)))
		round := func(tm uint64) {
			rows := make([][]int64, 100)
			for i := range rows {
				rows[i] = []int64{int64(tm), rng.Int64N(5) - 2, rng.Int64N(50), rng.Int64N(2)}
			}
			s.send("in", 2, rows...)
			s.advance("in", 2, frontier.At(tm+1))
		}
		early := dataflow.NewCapture(s.workers)
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: captureInput("early", 0, early)})
		const rounds = 100
		for tm := range uint64(rounds) {
			round(tm)
			s.must(AllowInputCompaction{Name: "in", Frontier: frontier.At(tm)})
		}
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.rts {
			st, err := r.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// A compaction leaves at most the 100 rows at the since, and
			// the next comes once a worker's history has grown by 1,024.
			want := s.workers * (1024 + 100 + 100)
			if r.Role() == Interactive {
				want = 0
			}
			if st.InputHistory > want {
				t.Fatalf("%v runtime: the inputs keep %d updates of the %d sent, want at most %d", r.Role(), st.InputHistory, rounds*100, want)
			}
		}
		late := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: captureInput("late", rounds-1, late)})
		s.must(CreateDataflow{Desc: captureInput("before", rounds-2, dataflow.NewCapture(s.workers))})
		for tm := uint64(rounds); tm < rounds+3; tm++ {
			round(tm)
		}
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		for at := uint64(rounds - 1); at < rounds+3; at++ {
			if got, want := accumulated(t, late, at), accumulated(t, early, at); !maps.Equal(got, want) {
				t.Fatalf("time %d: the reader created at the since has %v, the one from the start %v", at, got, want)
			}
		}
		errs := s.ctl.TakeErrors()
		if len(errs) == 0 || !errors.Is(errs[0].Err, dataflow.ErrInputCompacted) {
			t.Fatalf("a reader at as_of %d after compaction to %d: errors %v, want dataflow.ErrInputCompacted", rounds-2, rounds-1, errs)
		}
		if err := s.ctl.Send(AllowInputCompaction{Name: "in", Frontier: frontier.At(3)}); !errors.Is(err, ErrCompactionBackward) {
			t.Fatalf("compaction back to 3: %v, want ErrCompactionBackward", err)
		}
		if err := s.ctl.Send(AllowInputCompaction{Name: "nope", Frontier: frontier.At(3)}); err == nil {
			t.Fatal("compaction of an undeclared input accepted")
		}
		// {} drops the history; the readers keep reading.
		s.must(AllowInputCompaction{Name: "in", Frontier: frontier.Empty()})
		round(rounds + 3)
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if st, err := s.rts[0].Stats(ctx); err != nil || st.InputHistory != 0 {
			t.Fatalf("after compaction to {}: %d updates kept (%v)", st.InputHistory, err)
		}
		if got, want := accumulated(t, late, rounds+3), accumulated(t, early, rounds+3); !maps.Equal(got, want) || len(want) == 0 {
			t.Fatalf("after compaction to {}: the late reader has %v, the early one %v", got, want)
		}
	})
}

// TestInputCompactionOverflowAtTheSince: a compaction sums a row's updates
// of times before the since into its count at the since, so a reader
// created then meets an overflow of that count, and none of an earlier
// time's that later updates brought back within int64, as a reader of an
// index compacted to the since does (docs/semantics.md §1.1). Input "out"
// has a row at MaxInt64 at time 0 and again at 1 (2·MaxInt64 at the
// since): its reader's arrangement finds the overflow at the since, in
// the batch it builds. Input "back" has one at MaxInt64 twice at time 0,
// then −MaxInt64 at 1 (MaxInt64 at the since): its reader holds the row
// at MaxInt64 and no error. Filler rows on every worker let the history
// reach the compaction's threshold.
func TestInputCompactionOverflowAtTheSince(t *testing.T) {
	const M = math.MaxInt64
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		updates := map[string][][]int64{
			"out":  {{0, M, 1, 0}, {1, M, 1, 0}},
			"back": {{0, M, 1, 0}, {0, M, 1, 0}, {1, -M, 1, 0}},
		}
		for name, rows := range updates {
			for i := range 3000 * s.workers { // inserted, then retracted
				rows = append(rows, []int64{0, int64(1 - 2*(i/500%2)), int64(100 + i%500), 0})
			}
			s.send(name, 2, rows...)
			s.advance(name, 2, frontier.At(3))
			s.must(AllowInputCompaction{Name: name, Frontier: frontier.At(2)})
		}
		oks, errs := map[string]*dataflow.Capture{}, map[string]*dataflow.Capture{}
		for name := range updates {
			// The Build, on the workers, reads its own two captures, not
			// the maps the next round of this loop writes.
			o, e := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
			oks[name], errs[name] = o, e
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "read " + name, Maintained: true, AsOf: frontier.At(2), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input(name, 2)
					if err != nil {
						return err
					}
					a, err := c.Arrange(in, []int{0})
					if err != nil {
						return err
					}
					c.Capture(o, a.Oks)
					c.Capture(e, a.Errs)
					return nil
				},
			}})
			s.advance(name, 2, frontier.Empty())
		}
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := s.rts[0].Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := st.InputHistory; n > 5 {
			t.Fatalf("the inputs keep %d updates: not compacted", n)
		}
		for name := range updates {
			for _, cp := range []*dataflow.Capture{oks[name], errs[name]} {
				if err := cp.WaitPassed(ctx, 2); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.ctl.TakeErrors() // the overflow of "out", reported by its arrangement
		// "out": the overflow found building the batch of the since.
		if got := errs["out"].At(2); len(got) != 1 || got[0].Diff != 1 {
			t.Errorf("input out: errors at the since %v, want one numeric overflow", got)
		}
		// "back": MaxInt64, exactly, and no error.
		if got := errs["back"].At(2); len(got) != 0 {
			t.Errorf("input back: errors at the since %v, want none", got)
		}
		for _, r := range oks["back"].At(2) {
			if r.Row[0] == 1 && r.Diff != M {
				t.Errorf("input back: row %v at the since has count %d, want MaxInt64", r.Row, r.Diff)
			}
		}
	})
}
