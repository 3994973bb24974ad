package runtime

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/spine"
)

// The kinds of query a recompaction run creates over its index.
const (
	qRead   = iota // the index's rows (readDesc)
	qReduce        // count, sum and max of each key's vals
	qJoin          // the index joined with itself on its key
	qKinds
)

// opDesc imports index id at [asOf, until) and captures, arranged by
// column 0, the rows of a query of kind: a reduce of each key's vals into
// [key, count, sum, max], or the index joined with itself, [key, val,
// val'].
func opDesc(kind int, dfID, id string, asOf uint64, until frontier.Frontier, cp *dataflow.Capture) dataflow.Desc {
	if kind == qRead {
		return readDesc(dfID, id, asOf, until, cp)
	}
	return dataflow.Desc{
		ID: dfID, AsOf: frontier.At(asOf), Until: until,
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex(id)
			if err != nil {
				return err
			}
			var out dataflow.Collection
			if kind == qReduce {
				out, err = reduce.AddReduce(c, a, []reduce.Aggregate{{Fn: reduce.Count}, {Fn: reduce.Sum, Col: 0}, {Fn: reduce.Max, Col: 0}}, reduce.OperatorOptions{})
			} else {
				out, err = join.Join(c, a, a, nil, join.OperatorOptions{})
			}
			if err != nil {
				return err
			}
			arr, err := c.Arrange(out, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, arr.Oks)
			return nil
		},
	}
}

// opModel returns what a query of kind answers over the collection live
// (row [key, val] → count, every count positive), in captured's form.
func opModel(kind int, live map[[2]int64]int64) map[string]int64 {
	out := map[string]int64{}
	switch kind {
	case qRead:
		for r, n := range live {
			out[fmt.Sprint(r[:])] = n
		}
	case qReduce:
		type group struct{ count, sum, max int64 }
		groups := map[int64]*group{}
		for r, n := range live {
			g := groups[r[0]]
			if g == nil {
				g = &group{max: r[1]}
				groups[r[0]] = g
			}
			g.count += n
			g.sum += r[1] * n
			g.max = max(g.max, r[1])
		}
		for k, g := range groups {
			out[fmt.Sprint([]int64{k, g.count, g.sum, g.max})] = 1
		}
	case qJoin:
		for a, n := range live {
			for b, m := range live {
				if a[0] == b[0] {
					out[fmt.Sprint([]int64{a[0], a[1], b[1]})] += n * m
				}
			}
		}
	}
	return out
}

// recompactQuery is a query of a recompaction run: its kind, when it
// reads, the round it was created at and its captures in Solo and the
// pair.
type recompactQuery struct {
	id          string
	kind        int
	asOf        uint64
	until       frontier.Frontier
	created     uint64
	phase       string // before, during or after the lag, or after the catch-up
	solo, paird *dataflow.Capture
}

// recompactRun is what runRecompaction drew and saw.
type recompactRun struct {
	rounds, lagFrom, lagTo uint64 // the Interactive runtime held over [lagFrom, lagTo)
	recompactions          int64  // the pair's index (Maintenance runtime's Stats.Trace)
	updates, soloUpdates   int
	pending, soloPending   int // batches not admitted to merging after the last round
	queries                int
}

// runRecompaction drives Solo and a Maintenance/Interactive pair of w
// workers through rounds of a few updates each (insertions of [key, val]
// and retractions of live rows) with AllowCompaction each round to a
// since a few rounds behind the input's frontier, the pair's Interactive
// runtime held over a long stretch of them [lagFrom, lagTo) (to the last
// round, or released partway when partway); queries of every kind are
// created at random as_of at or after the controller's since, before,
// during and after the lag, and after the catch-up (30 rounds after the
// release and the last rounds). Every query is then checked at every time
// from its as_of against the model, in Solo and the pair, and the pair's
// index must have recompacted: the batches merged at the lagging since are
// merged again once it catches up.
func runRecompaction(t *testing.T, seed uint64, w, rounds int, partway bool) recompactRun {
	ctx, progress := progressCtx(t)
	rng := rand.New(rand.NewPCG(seed, 17))
	solo, pair := newSetup(t, "solo", w), newSetup(t, "pair", w)
	both := []*setup{solo, pair}
	for _, s := range both {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	}
	run := recompactRun{rounds: uint64(rounds)}
	// The lag: from within the first tenth, for at least half the rounds
	// when it runs to the end; partway, it ends at least 60 rounds before
	// the last, so that rounds follow the catch-up.
	run.lagFrom = 1 + uint64(rng.IntN(rounds/10))
	run.lagTo = uint64(rounds) + 1
	if partway {
		lo := run.lagFrom + uint64(rounds)/3
		run.lagTo = lo + uint64(rng.IntN(int(uint64(rounds)-60-lo)))
	}
	const after = 30 // rounds after the release, the catch-up's
	total := max(run.lagTo+after, uint64(rounds))
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	byTime := map[uint64][][3]int64{} // time → [key, val, diff]
	live := map[[2]int64]int64{}
	var queries []*recompactQuery
	since := uint64(0)
	phase := func(tm uint64) string {
		switch {
		case tm < run.lagFrom:
			return "before the lag"
		case tm < run.lagTo:
			return "during the lag"
		case tm < run.lagTo+10:
			return "after the lag"
		}
		return "after the catch-up"
	}
	create := func(tm, upper uint64) {
		q := &recompactQuery{id: fmt.Sprint("q", len(queries)), kind: rng.IntN(qKinds), created: tm, phase: phase(tm), until: frontier.Empty()}
		q.asOf = since + uint64(rng.IntN(int(upper-since)+3))
		// Most queries end within 150 rounds of their as_of, and the
		// rest are open to the end: a join or reduce that ends gives its
		// holds up while the index goes on (TestFinishedQueryHoldsNoMerges),
		// before, during or after the lag. An open join is drawn only in
		// the last 150 rounds (a capture's At reads every update it holds,
		// so the check of a query costs its rounds squared, and a join's
		// updates are many).
		if rng.IntN(4) != 0 {
			q.until = frontier.At(q.asOf + 1 + uint64(rng.IntN(150)))
		}
		if q.kind == qJoin && q.until.IsEmpty() && tm+150 < total {
			q.kind = qRead
		}
		q.solo, q.paird = dataflow.NewCapture(w), dataflow.NewCapture(w)
		solo.must(CreateDataflow{Desc: opDesc(q.kind, q.id, "idx", q.asOf, q.until, q.solo)})
		pair.must(CreateDataflow{Desc: opDesc(q.kind, q.id, "idx", q.asOf, q.until, q.paird)})
		queries = append(queries, q)
	}
	for tm := uint64(1); tm <= total; tm++ {
		progress()
		switch tm {
		case run.lagFrom:
			release = stoppableGate(pair.role(Interactive))
		case run.lagTo:
			release()
			release = nil
		}
		// Queries: about eight over the run, and one at the start of each
		// phase.
		if rng.IntN(int(total)/8+1) == 0 || tm == 1 || tm == run.lagFrom+1 || tm == run.lagTo || tm == run.lagTo+after || tm == total {
			create(tm, tm)
		}
		// The round's updates: one to three insertions, and retractions
		// of live rows, more of them the more rows live.
		var ups [][3]int64
		for range 1 + rng.IntN(3) {
			ups = append(ups, [3]int64{rng.Int64N(6), rng.Int64N(10), 1})
		}
		for range rng.IntN(1 + len(live)/8) {
			keys := slices.SortedFunc(maps.Keys(live), func(a, b [2]int64) int {
				if a[0] != b[0] {
					return int(a[0] - b[0])
				}
				return int(a[1] - b[1])
			})
			r := keys[rng.IntN(len(keys))]
			ups = append(ups, [3]int64{r[0], r[1], -1})
			if live[r]--; live[r] == 0 {
				delete(live, r)
			}
		}
		for _, u := range ups {
			if u[2] > 0 {
				live[[2]int64{u[0], u[1]}]++
			}
		}
		byTime[tm] = ups
		since = max(since, tm+1-min(tm+1, uint64(rng.IntN(5))))
		for _, s := range both {
			c := dataflow.NewChunk(2, len(ups))
			for _, u := range ups {
				c.Push([]int64{u[0], u[1]}, tm, u[2])
			}
			s.must(Input{Name: "in", Chunk: c})
			s.advance("in", 2, frontier.At(tm+1))
			s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(since)})
			if err := s.rts[0].barrier(ctx, func(*worker) {}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if release != nil {
		release()
		release = nil
	}
	// The last round passes every query's as_of; the publisher finishes
	// its merges.
	last := total + 3
	for _, s := range both {
		progress()
		s.advance("in", 2, frontier.At(last+1))
		// The index may then compact to its upper, so that every batch
		// the publisher merged at a lagging since is passed (one that
		// ends past the since waits for it to pass): the pair's
		// Interactive runtime may still be catching up after the rounds
		// (it replays the lag's creates and joins at its own pace, which
		// the rounds, Maintenance's alone, do not wait for), and its
		// holds reach the publisher when they do.
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(last + 1)})
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		quiesceAll(t, s)
	}
	// A Sync returns before the work an operator leaves to its later
	// steps (a join that yields between steps, its queued batches holding
	// the index's batches they read): the index is read once every query
	// has passed its end, and the holds they gave up then have reached
	// the publisher.
	end := func(q *recompactQuery) uint64 {
		if u, ok := q.until.Time(); ok {
			return min(last, u-1)
		}
		return last
	}
	for _, q := range queries {
		for _, cp := range []*dataflow.Capture{q.solo, q.paird} {
			progress()
			if err := cp.WaitPassed(ctx, end(q)); err != nil {
				t.Fatalf("seed %d: query %s: %v", seed, q.id, err)
			}
		}
	}
	for _, s := range both {
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		quiesceAll(t, s)
	}
	for i, s := range both {
		st, err := s.rts[0].Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			run.soloUpdates, run.soloPending = st.Trace.Updates, st.Trace.Pending
		} else {
			run.updates, run.pending, run.recompactions = st.Trace.Updates, st.Trace.Pending, st.Trace.Recompactions
		}
	}
	// The model at every time, from the updates by time.
	state := map[[2]int64]int64{}
	models := make([]map[[2]int64]int64, last+1)
	for tm := uint64(0); tm <= last; tm++ {
		for _, u := range byTime[tm] {
			r := [2]int64{u[0], u[1]}
			if state[r] += u[2]; state[r] == 0 {
				delete(state, r)
			}
		}
		models[tm] = maps.Clone(state)
	}
	for _, q := range queries {
		end := end(q)
		for _, side := range []struct {
			mode string
			cp   *dataflow.Capture
		}{{"solo", q.solo}, {"pair", q.paird}} {
			progress()
			if err := side.cp.WaitPassed(ctx, end); err != nil {
				t.Fatalf("seed %d: %s query %s: %v", seed, side.mode, q.id, err)
			}
			for tm := q.asOf; tm <= end; tm++ {
				if got, want := captured(side.cp, tm), opModel(q.kind, models[tm]); !maps.Equal(got, want) {
					t.Fatalf("seed %d, workers %d: query %s (kind %d, as_of %d, until %v, created at round %d, %s; lag [%d, %d) of %d rounds) in %s at %d:\n%v\nwant\n%v",
						seed, w, q.id, q.kind, q.asOf, q.until, q.created, q.phase, run.lagFrom, run.lagTo, total, side.mode, tm, got, want)
				}
			}
		}
	}
	run.queries = len(queries)
	run.rounds = total
	return run
}

// Answers stay exact around recompaction: a Maintenance/Interactive pair
// whose Interactive runtime is held for a long random stretch of rounds (a
// few updates each, with retractions, the index allowed to compact each
// round to a since a few rounds behind), released at the last round or
// partway, answers every query — reads of the index, reduces and self-joins
// over it, created at random as_of before, during and after the lag and
// after the catch-up — at every time from its as_of as the model does and
// as Solo does, with one and two workers; and the pair's index ends about
// as large as Solo's, recompacting what it merged at the lagging since
// (docs/semantics.md §1.7), with no batch held back from merging by a
// query that has ended or moved on (§2.5).
// 300 to 1,200 rounds (150 to 300 with -short or under -race); replay with
// -seed.
func TestAnswersExactAroundRecompaction(t *testing.T) {
	lo, hi := 300, 1200
	if testing.Short() || raceEnabled {
		lo, hi = 150, 300
	}
	base := testSeed(t)
	for _, w := range []int{1, 2} {
		for _, partway := range []bool{false, true} {
			t.Run(fmt.Sprintf("workers=%d/partway=%v", w, partway), func(t *testing.T) {
				t.Parallel()
				seed := base + uint64(w)*2 + map[bool]uint64{false: 0, true: 1}[partway]
				rounds := lo + rand.New(rand.NewPCG(seed, 19)).IntN(hi-lo+1)
				r := runRecompaction(t, seed, w, rounds, partway)
				// The pair's index ends near Solo's (the bound of
				// TestLaggingReaderLeavesNothingOnceCaughtUp): by a
				// recompaction of what merged at the lagging since, or,
				// released partway, by the level merges of the rounds
				// after, or with no recompaction at all where the
				// released reader's peer hold reached the publisher
				// before the backlog merged (the order varies). With
				// recompaction off, every run of 3 failed this bound
				// (262 to 3,116 updates against Solo's 42 to 85; with
				// the index then compacted to its upper at the end and
				// joins and reduces ending, 234 to 989 against 46 to
				// 84 in every run of 2).
				if limit := r.soloUpdates + w*8*spine.DefaultFanout; r.updates > limit {
					t.Errorf("seed %d: the pair's index holds %d updates after the catch-up, Solo's %d: more than %d", seed, r.updates, r.soloUpdates, limit)
				}
				// Every batch is admitted to merging once the queries
				// that read it have moved on or ended: a query that
				// ended, a join too, holds none back (with a finished
				// join's physical hold kept, Solo had 28 to 2,030
				// batches waiting in every run, where 0 to 5 wait).
				for _, p := range []struct {
					mode    string
					pending int
				}{{"Solo", r.soloPending}, {"the pair", r.pending}} {
					if limit := w * spine.DefaultFanout; p.pending > limit {
						t.Errorf("seed %d: %s's index has %d batches waiting to merge after the last round: more than %d", seed, p.mode, p.pending, limit)
					}
				}
				t.Logf("seed %d: %d rounds, lag [%d, %d), %d queries; pair: %d recompactions, %d updates, %d pending; Solo %d updates, %d pending", seed, r.rounds, r.lagFrom, r.lagTo, r.queries, r.recompactions, r.updates, r.pending, r.soloUpdates, r.soloPending)
			})
		}
	}
}
