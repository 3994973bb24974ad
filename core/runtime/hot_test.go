package runtime

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// TestAnIdleIndexCompactsWhenItsReaderMoves: among twenty indexes over an
// input that gets nothing, beside one that gets rounds, an idle index
// whose last reader holding it back moves its hold compacts in the wake
// that move sends: the worker's maintenance visits the traces with
// something to do only (dataflow.IndexManager.Maintain), and a reader's
// move on another goroutine makes its trace one.
func TestAnIdleIndexCompactsWhenItsReaderMoves(t *testing.T) {
	m, i, ctl, err := Pair(1, spine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx := testCtx(t)
	probe := startIndex(t, ctl)
	sendAll(t, ctl, CreateInput{Name: "quiet", Arity: 2})
	for k := range 20 {
		sendAll(t, ctl, CreateDataflow{Desc: indexDesc(fmt.Sprintf("idle%d", k), "quiet", 2, []int{0}, 0, nil)})
	}
	round := func(r uint64) { indexRound(t, ctl, probe, r) }
	round(0)
	slot := m.opts.Registries[0].Lookup("idle7", frontier.At(0))
	if slot == nil {
		t.Fatal("no published slot")
	}
	pt := slot.Oks()
	rd := pt.Reader()
	defer rd.Release()
	// Both runtimes allow {5}; this reader holds {0}.
	sendAll(t, ctl, AllowCompaction{ID: "idle7", Frontier: frontier.At(5)})
	for r := range uint64(4) {
		round(1 + r)
	}
	if !awaitIdle(ctx.Done(), m, i) {
		t.Fatal("never idle")
	}
	if got := pt.Stats().Since; got != frontier.At(0) {
		t.Fatalf("since %v with a reader holding {0}", got)
	}
	rd.SetLogicalCompaction(frontier.At(5))
	round(5) // the round's wake or the move's own: either takes the move
	if !awaitIdle(ctx.Done(), m, i) {
		t.Fatal("never idle")
	}
	if got := pt.Stats().Since; got != frontier.At(5) {
		t.Fatalf("since %v once the reader moved to {5}: the idle trace was not maintained", got)
	}
	if err := ctl.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAMergeFinishesWithoutArrivals: a merge in progress on an index that
// gets nothing more goes on getting fuel, a little each wake (Effort 1),
// until it is done: a trace that merges stays among those maintenance
// visits (dataflow.IndexManager.Maintain), and the worker comes back while
// one does.
func TestAMergeFinishesWithoutArrivals(t *testing.T) {
	r, err := New(Options{Role: Solo, Workers: 1, Effort: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, _ := NewController(r)
	defer ctl.Shutdown()
	ctx := testCtx(t)
	probe := startIndex(t, ctl)
	sendAll(t, ctl, CreateInput{Name: "quiet", Arity: 2})
	for k := range 8 {
		sendAll(t, ctl, CreateDataflow{Desc: indexDesc(fmt.Sprintf("idle%d", k), "quiet", 2, []int{0}, 0, nil)})
	}
	merged := false
	for x := range uint64(16) {
		c := dataflow.NewChunk(2, 64)
		for j := range int64(64) {
			c.Push([]int64{int64(x)*64 + j, j}, x, 1)
		}
		sendAll(t, ctl, Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(x + 1)})
		if err := probe.WaitPassed(ctx, x); err != nil {
			t.Fatal(err)
		}
		st, err := r.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		merged = merged || st.Trace.Merging > 0
	}
	if !merged {
		t.Fatal("no merge in progress after any round: the test merges nothing")
	}
	if !awaitIdle(ctx.Done(), r) {
		t.Fatal("never idle")
	}
	st, err := r.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Trace.Merging != 0 {
		t.Fatalf("idle with %d merges in progress", st.Trace.Merging)
	}
	if err := ctl.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAWakeStepsItsActiveDataflowsOnly: a worker holding many dataflows of
// which one is active looks at the active ones, not at each it holds, in
// their creation order: stepActive looked every dataflow up in the active
// set, a wake costing O(dataflows held) (about 15 ns each).
func TestAWakeStepsItsActiveDataflowsOnly(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 1)
			s.declare("in", 2)
			s.declare("quiet", 2)
			s.must(CreateDataflow{Desc: indexDesc("x", "in", 2, []int{0}, 0, nil)})
			for k := range 300 {
				s.must(CreateDataflow{Desc: indexDesc(fmt.Sprintf("idle%d", k), "quiet", 2, []int{1}, 0, nil)})
			}
			cp := dataflow.NewCapture(1)
			s.must(CreateDataflow{Desc: readDesc("q", "x", 0, frontier.Empty(), cp)})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			examined := func() (n int) {
				for _, r := range s.rts {
					if err := r.barrier(testCtx(t), func(w *worker) { n += w.examined }); err != nil {
						t.Fatal(err)
					}
				}
				return n
			}
			before := examined()
			const rounds = 20
			for r := range uint64(rounds) {
				s.send("in", 2, []int64{int64(r), 1, int64(r), 2})
				s.advance("in", 2, frontier.At(r+1))
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
			// Each round activates the index and the query (a few passes
			// each); 300 idle dataflows looked at would be thousands.
			if n := examined() - before; n > rounds*20 {
				t.Fatalf("%d dataflows looked at over %d rounds with 2 active of 302", n, rounds)
			}
			if err := cp.WaitPassed(testCtx(t), rounds-1); err != nil {
				t.Fatal(err)
			}
			if got := len(cp.At(rounds - 1)); got != rounds {
				t.Fatalf("the query holds %d rows at the last round, want %d", got, rounds)
			}
		})
	}
}

// TestASparseWakeStepsNoDroppedDataflow: a dataflow activated after its
// drop (by another worker, which had yet to apply the drop) is stepped
// by no wake. The pass over every dataflow never met it (its place in
// the creation order is gone), but the pass over the few active ones,
// taken from the active set, stepped it: a pass that moves nothing.
func TestASparseWakeStepsNoDroppedDataflow(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 1)
			s.declare("quiet", 2)
			for k := range 2 * sparseMin {
				s.must(CreateDataflow{Desc: indexDesc(fmt.Sprintf("idle%d", k), "quiet", 2, []int{1}, 0, nil)})
			}
			s.must(CreateDataflow{Desc: indexDesc("x", "quiet", 2, []int{0}, 0, nil)})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			dropped := map[*worker]*dataflow.Dataflow{}
			for _, r := range s.rts {
				if err := r.barrier(testCtx(t), func(w *worker) {
					if df := w.dataflows["maintain x"]; df != nil {
						dropped[w] = df
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			if len(dropped) != 1 {
				t.Fatalf("setup: %d workers render the dataflow, want 1", len(dropped))
			}
			s.must(DropDataflow{ID: "maintain x"})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			for _, r := range s.rts {
				if err := r.barrier(testCtx(t), func(w *worker) {
					df := dropped[w]
					if df == nil {
						return
					}
					w.activate(df) // as a late activation does
					w.activate(w.order[0])
					before := w.steps
					w.stepActive()
					if n := w.steps - before; n != 1 {
						t.Errorf("a wake with a live dataflow and a dropped one active (of %d places) stepped %d, want the live one", len(w.order), n)
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
