package runtime

import (
	"fmt"
	goruntime "runtime"

	"testing"
	"weak"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// probeDesc imports index id from asOf on and probes its oks' stream: a
// reader of the stream alone, which keeps no trace of its own.
func probeDesc(dfID, id string, asOf uint64, p *dataflow.Probe) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, AsOf: frontier.At(asOf), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex(id)
			if err != nil {
				return err
			}
			c.Probe(p, a.Oks.Stream)
			return nil
		},
	}
}

// catchUp is what runCatchUp saw once the runs had caught up.
type catchUp struct {
	batches, updates int    // the maintained traces' (Stats.Trace)
	gap              uint64 // Stats.HoldGap
	point            share.PointStats
	// taken are the non-empty batches of the index's oks trace at every
	// 100th round of the first half, final those of its last chain.
	taken []weak.Pointer[batch.Batch]
	final map[weak.Pointer[batch.Batch]]bool
	live  int   // taken batches, not in the last chain, still reachable
	heap  int64 // live heap after the catch-up, less the heap before the run
}

// runCatchUp maintains index idx over rounds rounds of input, each a
// few updates (insertions and the retraction of one made 50 or 13
// rounds before, so the collection holds 63 rows from round 63 on) with
// AllowCompaction to the round's frontier, read by queries queries that
// probe its stream. The maintaining runtime takes each round before the
// next is sent; with lag, the pair's Interactive runtime is held from the
// first round to the last, then released. Once every query has passed
// the last round and the maintaining runtime has applied every hold and
// finished every merge, it reports the state.
func runCatchUp(t *testing.T, mode string, w, rounds, queries int, lag bool) catchUp {
	ctx := testCtx(t)
	goruntime.GC()
	goruntime.GC()
	var m0 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	s := newSetup(t, mode, w)
	s.declare("in", 2)
	s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	var probes []*dataflow.Probe
	for k := range queries {
		p := dataflow.NewProbe(w)
		probes = append(probes, p)
		s.must(CreateDataflow{Desc: probeDesc(fmt.Sprint("q", k), "idx", 0, p)})
	}
	s.advance("in", 2, frontier.At(1))
	for _, p := range probes {
		if err := p.WaitPassed(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	maint := s.rts[0]
	var release func()
	if lag && mode == "pair" {
		release = stoppableGate(s.role(Interactive))
	}
	var out catchUp
	for tm := uint64(1); tm <= uint64(rounds); tm++ {
		c := dataflow.NewChunk(2, 3)
		c.Push([]int64{int64(tm % 50), int64(tm)}, tm, 1)
		c.Push([]int64{int64(tm % 13), -int64(tm)}, tm, 1)
		if tm > 50 {
			c.Push([]int64{int64((tm - 50) % 50), int64(tm - 50)}, tm, -1)
		}
		if tm > 13 {
			c.Push([]int64{int64((tm - 13) % 13), -int64(tm - 13)}, tm, -1)
		}
		s.must(Input{Name: "in", Chunk: c})
		s.advance("in", 2, frontier.At(tm+1))
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(tm + 1)})
		if err := maint.barrier(ctx, func(*worker) {}); err != nil {
			t.Fatal(err)
		}
		if tm%100 == 0 && tm <= uint64(rounds)/2 {
			if err := maint.barrier(ctx, func(wk *worker) {
				b, _ := wk.env.Manager.Get("idx")
				b.Oks.MapBatches(func(b *batch.Batch) {
					if !b.IsEmpty() {
						out.taken = append(out.taken, weak.Make(b))
					}
				})
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if release != nil {
		release()
	}
	for _, p := range probes {
		if err := p.WaitPassed(ctx, uint64(rounds)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := maint.barrier(ctx, func(wk *worker) {
		for wk.env.Manager.Maintain(1 << 20) {
		}
	}); err != nil {
		t.Fatal(err)
	}
	st, err := maint.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.batches, out.updates = st.Trace.Batches, st.Trace.Updates
	out.gap = st.HoldGap
	for _, reg := range maint.opts.Registries {
		if slot := reg.Lookup("idx", frontier.Min()); slot != nil {
			ps := slot.Oks().Stats()
			out.point.QueueDepth += ps.QueueDepth
			out.point.Importers += ps.Importers
			out.point.HoldGap = max(out.point.HoldGap, ps.HoldGap)
		}
	}
	out.final = map[weak.Pointer[batch.Batch]]bool{}
	if err := maint.barrier(ctx, func(wk *worker) {
		b, _ := wk.env.Manager.Get("idx")
		b.Oks.MapBatches(func(b *batch.Batch) { out.final[weak.Make(b)] = true })
	}); err != nil {
		t.Fatal(err)
	}
	goruntime.GC()
	goruntime.GC()
	var m1 goruntime.MemStats
	goruntime.ReadMemStats(&m1)
	out.heap = int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	for _, wp := range out.taken {
		if wp.Value() != nil && !out.final[wp] {
			out.live++
		}
	}
	goruntime.KeepAlive(s)
	goruntime.KeepAlive(probes)
	return out
}

// A reader held behind for 2,000 rounds and then released leaves nothing
// of its lag: once it has caught up and the runtimes are quiet, the hold
// gap is 0 and no import has an event waiting; the maintained traces
// hold no more batches than the spine's shape allows for their updates,
// and about as many updates as the run that never lagged (the spine
// recompacts what it merged at the lagging since once the since passes
// it: before, 660–7,940 updates where Solo keeps 103); every batch the
// publisher held for the lagging reader, taken from the trace during the
// lag, has been collected unless it is in the last
// chain; and the live heap is within twice that of the same run that never
// lagged. Solo (where nothing lags) and the pair, one and two workers.
// Before, an import's replay queue and its operator's event array kept
// the arrays the catch-up's drain had grown to the lag's length, about
// 100 kB and 130 kB an import per 2,000 rounds, for the import's life.
func TestLaggingReaderLeavesNothingOnceCaughtUp(t *testing.T) {
	const rounds, queries = 2000, 4
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			// Not parallel: the heaps are compared.
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				steady := runCatchUp(t, mode, w, rounds, queries, false)
				lagged := runCatchUp(t, mode, w, rounds, queries, true)
				if lagged.gap != 0 || lagged.point.HoldGap != 0 || lagged.point.QueueDepth != 0 {
					t.Errorf("after the catch-up: hold gap %d, the point's %d, %d events queued; want 0", lagged.gap, lagged.point.HoldGap, lagged.point.QueueDepth)
				}
				if mode == "pair" && lagged.point.Importers != queries*w {
					t.Errorf("%d importers of idx's oks, want %d", lagged.point.Importers, queries*w)
				}
				// After a quiescence no merge is in progress, so a level
				// below the top holds fewer than fanout batches (it
				// merges them at fanout), and so does the top; an oks
				// trace of n updates has classOf(n)+1 levels, and an
				// errs trace with no errors, fewer than fanout empty
				// batches.
				perWorker := (lagged.updates + w - 1) / w
				levels := 1
				for n := perWorker; n >= spine.DefaultFanout; n /= spine.DefaultFanout {
					levels++
				}
				if limit := w * (levels + 1) * (spine.DefaultFanout - 1); lagged.batches > limit {
					t.Errorf("after the catch-up: %d batches for %d updates, the spine's shape allows %d (never lagged: %d batches)", lagged.batches, lagged.updates, limit, steady.batches)
				}
				// Compacted, an oks trace holds each live row once and the
				// batches merged since the since last moved: those of the
				// run never held, give or take where the last rounds fell
				// (fewer than fanout batches of a round's four updates a
				// level, a worker, which a level or two may hold: runs
				// read up to 60 over; the bound allows twice as many levels
				// and stays far below the 660 of the spine that does not
				// recompact). Whether the publisher merges the backlog
				// before the since moves varies from run to run, so the
				// pair checks two more lagged runs.
				runs := []catchUp{lagged}
				if mode == "pair" {
					for range 2 {
						runs = append(runs, runCatchUp(t, mode, w, rounds, queries, true))
					}
				}
				for _, r := range runs {
					if limit := steady.updates + w*8*spine.DefaultFanout; r.updates > limit {
						t.Errorf("after the catch-up: %d updates, never lagged %d: more than %d", r.updates, steady.updates, limit)
					}
				}
				if len(lagged.taken) == 0 {
					t.Fatal("no batch taken during the lag")
				}
				if lagged.live != 0 {
					t.Errorf("%d of the %d batches taken during the lag still reachable after the catch-up, not in the trace", lagged.live, len(lagged.taken))
				}
				if lagged.heap > 2*steady.heap {
					t.Errorf("live heap after the catch-up %d B, never lagged %d B: more than twice", lagged.heap, steady.heap)
				}
				t.Logf("lagged: %d batches, %d updates, heap %d B, %d batches taken; never lagged: %d batches, %d updates, heap %d B", lagged.batches, lagged.updates, lagged.heap, len(lagged.taken), steady.batches, steady.updates, steady.heap)
			})
		}
	}
}
