package runtime

import (
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// finishedHolds runs an index of [key, val] rows fed for rounds rounds,
// one row a round, allowed each round to compact to the input's frontier,
// with one query of kind (opDesc) over it at as_of 1 and until until,
// dropped at round until when drop; it returns the index's trace counters
// once the publisher has merged what it may.
func finishedHolds(t *testing.T, s *setup, kind int, until uint64, rounds int, drop bool) (pending, batches, updates int) {
	ctx := testCtx(t)
	s.declare("in", 2)
	s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	cp := dataflow.NewCapture(s.workers)
	for tm := uint64(1); tm <= uint64(rounds); tm++ {
		if tm == 1 {
			s.must(CreateDataflow{Desc: opDesc(kind, "q", "idx", 1, frontier.At(until), cp)})
		}
		if drop && tm == until {
			s.must(DropDataflow{ID: "q"})
		}
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{int64(tm % 5), int64(tm % 7)}, tm, 1)
		s.must(Input{Name: "in", Chunk: c})
		s.advance("in", 2, frontier.At(tm+1))
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(tm + 1)})
		if err := s.rts[0].barrier(ctx, func(*worker) {}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	quiesceAll(t, s)
	st, err := s.rts[0].Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Trace.Pending, st.Trace.Batches, st.Trace.Updates
}

// A query that has passed its until holds back no merge of the index it
// reads, dropped or not: an index fed for 300 rounds past the until (20) of
// a read, a reduce or a self-join of it, allowed each round to compact to
// its input's frontier, has as few batches pending admission to merging
// as with the query dropped at its until, in Solo and the pair, with one
// and two workers (docs/semantics.md §2.5). A join used to keep its
// readers' physical holds at the last upper it acknowledged: 301 of 310
// batches pending with one worker, none once dropped.
func TestFinishedQueryHoldsNoMerges(t *testing.T) {
	const until, rounds = 20, 320
	forEachSetup(t, func(t *testing.T, first *setup) {
		for k, kind := range []int{qRead, qReduce, qJoin} {
			var pending [2]int
			for i, drop := range []bool{false, true} {
				s := first
				if k > 0 || i > 0 {
					s = newSetup(t, s.mode, s.workers)
				}
				var batches, updates int
				pending[i], batches, updates = finishedHolds(t, s, kind, until, rounds, drop)
				t.Logf("kind %d, dropped %v: %d batches pending, %d batches, %d updates", kind, drop, pending[i], batches, updates)
			}
			// A batch a worker may be between rounds of admission.
			if pending[0] > pending[1]+first.workers {
				t.Errorf("query of kind %d past its until %d: the index has %d batches pending after %d rounds, %d with the query dropped", kind, until, pending[0], rounds, pending[1])
			}
		}
	})
}
