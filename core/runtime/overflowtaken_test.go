package runtime

import (
	"fmt"
	"github.com/tracebench/tracebench/core/dataflow"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// takeLinesOf syncs and returns the errors TakeErrors returns, each as its
// command number and first line.
func takeLinesOf(t *testing.T, s *setup) []string {
	t.Helper()
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.ctl.TakeErrors() {
		line, _, _ := strings.Cut(e.Error(), "\n")
		got = append(got, fmt.Sprintf("%d: %s", e.Seq, line))
	}
	return got
}

// overflowOn sends worker i's key two updates whose diffs, compacted to
// one time, overflow (math.MaxInt64 and 1, at times at and at+1), then
// rounds of other keys' rows until a merge has consolidated them, taking
// the errors after each round; it returns what the takes returned.
func overflowOn(t *testing.T, s *setup, i int, at int64) []string {
	t.Helper()
	k := keyOn(i, s.workers)
	s.send("in", 2, []int64{at, math.MaxInt64, k, 1})
	s.advance("in", 2, frontier.At(uint64(at+1)))
	s.send("in", 2, []int64{at + 1, 1, k, 1})
	s.advance("in", 2, frontier.At(uint64(at+2)))
	s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(uint64(at + 2))})
	var got []string
	for r := at + 2; r < at+40; r++ {
		var more [][]int64
		for j := range int64(16) {
			more = append(more, []int64{r, 1, 1000*r + j, 0})
		}
		s.send("in", 2, more...)
		s.advance("in", 2, frontier.At(uint64(r+1)))
		got = append(got, takeLinesOf(t, s)...)
	}
	quiesceAll(t, s)
	return append(got, takeLinesOf(t, s)...)
}

// quiesceAll lets every runtime finish every merge it can; the overflows
// those merges find are reported in the workers' next wake.
func quiesceAll(t testing.TB, s *setup) {
	for _, r := range s.rts {
		if err := r.barrier(testCtx(t), func(w *worker) {
			for w.env.Manager.Maintain(1 << 20) {
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// A merge's overflow is an error of the arrangement's dataflow
// (docs/semantics.md §1.1), one per incarnation and text however many
// workers' merges find it, as a step's error of a dataflow is: a caller
// taking errors in a loop gets it once. Here worker 0's merge overflows,
// the error is taken, and then worker 1's merge of the same index
// overflows: before, that second take returned the error again (its key
// named no dataflow, so the controller kept nothing of the first take).
// The index dropped and created again is a new incarnation, whose
// overflow is reported again. Solo and the pair, one worker and two.
func TestAMergeOverflowIsTakenOnce(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		want := "0: dataflow maintain idx: arrange oks: batch: numeric overflow in diff"
		at := int64(0)
		for round := range 2 {
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, uint64(at), nil)})
			for i := range s.workers {
				got := overflowOn(t, s, i, at)
				at += 100
				if i == 0 && (len(got) != 1 || got[0] != want) {
					t.Fatalf("round %d, worker 0's overflow: errors %q, want %q once", round, got, want)
				}
				if i > 0 && len(got) != 0 {
					t.Fatalf("round %d, worker %d's overflow after the take: errors %q, want none (taken already)", round, i, got)
				}
			}
			s.must(DropDataflow{ID: "maintain idx"})
		}
		if got := takeLinesOf(t, s); len(got) != 0 {
			t.Fatalf("errors after the drops: %q", got)
		}
		keepsNothing(t, s.ctl)
	})
}

// lateDesc is a dataflow of no operator whose Build, on worker i, starts
// a goroutine that calls Context.Input after the Build returned (refused,
// dataflow.ErrBuildReturned) each time gates[i] sends, and closes
// calls[i] after each call.
func lateDesc(id string, maintained bool, gates []chan struct{}, calls []chan struct{}) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			gate, call := gates[c.Worker()], calls[c.Worker()]
			go func() {
				for range gate {
					c.Input("in", 2)
					call <- struct{}{}
				}
			}()
			return nil
		},
	}
}

// An error a Context call from another goroutine reports, once the Build
// returned, is an error of the dataflow's incarnation, one however many
// workers' goroutines meet it, as a step's is: a caller taking errors in
// a loop gets it once. Here worker 0's goroutine calls, the error is
// taken, and then worker 1's calls alike: before, the second take
// returned the error again (it was recorded under no dataflow). Once the
// dataflow is dropped a call reports nothing, so the controller forgets
// what it took of it; created again, it is a new incarnation, whose call
// is reported again. Solo and the pair (a Maintained dataflow, and a
// query on the Interactive runtime), one worker and two.
func TestAnOffWorkerErrorIsTakenOnce(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		want := "0: dataflow late: Context.Input called from another goroutine than the worker's after the dataflow's Build returned: a dataflow's operators are added by its Build only"
		for _, maintained := range []bool{true, false} {
			for round := range 2 {
				gates := make([]chan struct{}, s.workers)
				calls := make([]chan struct{}, s.workers)
				for i := range gates {
					gates[i], calls[i] = make(chan struct{}), make(chan struct{})
				}
				s.must(CreateDataflow{Desc: lateDesc("late", maintained, gates, calls)})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				callOn := func(i int) {
					gates[i] <- struct{}{}
					<-calls[i]
				}
				for i := range s.workers {
					callOn(i)
					got := takeLinesOf(t, s)
					if i == 0 && !slices.Equal(got, []string{want}) {
						t.Fatalf("maintained %v, round %d, worker 0's call: errors %q, want %q once", maintained, round, got, want)
					}
					if i > 0 && len(got) != 0 {
						t.Fatalf("maintained %v, round %d, worker %d's call after the take: errors %q, want none (taken already)", maintained, round, i, got)
					}
				}
				s.must(DropDataflow{ID: "late"})
				if got := takeLinesOf(t, s); len(got) != 0 {
					t.Fatalf("errors after the drop: %q", got)
				}
				for i := range s.workers {
					callOn(i) // dropped: reports nothing
					close(gates[i])
				}
				if got := takeLinesOf(t, s); len(got) != 0 {
					t.Fatalf("maintained %v, round %d: calls after the drop reported %q, want nothing", maintained, round, got)
				}
			}
		}
		keepsNothing(t, s.ctl)
	})
}
