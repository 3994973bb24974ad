package runtime

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// rowBoomOp panics ("row boom") at the first row it takes, on whichever
// worker that row's key falls to.
type rowBoomOp struct {
	in *dataflow.Port[*dataflow.Chunk]
}

func (o *rowBoomOp) Step(frontier.Frontier) frontier.Frontier {
	for _, ch := range o.in.Take() {
		if ch.Len() > 0 {
			panic("row boom")
		}
	}
	return frontier.Empty()
}

func (o *rowBoomOp) Shutdown() {}

// rowBoomDesc reads input "in" (arity 2) with a rowBoomOp.
func rowBoomDesc(id string) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			b := c.NewOperator("boom")
			return b.Build(&rowBoomOp{in: dataflow.AddInput(b, "rows", in.Oks)})
		},
	}
}

// keyOn returns a key whose rows the input gives worker i of w.
func keyOn(i, w int) int64 {
	for k := int64(0); ; k++ {
		if dataflow.Worker(dataflow.HashCols([]int64{k}, []int{0}), w) == i {
			return k
		}
	}
}

// A step's error is returned once across takes, also when another worker
// meets it after the take: the controller keeps what TakeErrors returned
// of each live dataflow's incarnation until every worker has applied its
// drop, and then forgets them. Here worker 0 panics, the error is taken, and then worker 1
// panics alike: before, the second take returned the error again. The
// dataflow dropped and created again is a new incarnation, whose panic is
// reported again. Solo and the pair, two workers.
func TestAStepErrorIsTakenOnce(t *testing.T) {
	const w = 2
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, w)
			s.declare("in", 2)
			want := `dataflow boom: operator "boom": Step: operator panicked: row boom`
			for round := range 2 {
				s.must(CreateDataflow{Desc: rowBoomDesc("boom")})
				for i := range w {
					s.send("in", 2, []int64{0, 1, keyOn(i, w), int64(round)})
					got := takeLinesOf(t, s)
					if i == 0 && (len(got) != 1 || got[0] != "0: "+want) {
						t.Fatalf("round %d, worker 0's panic: errors %q, want %q once", round, got, "0: "+want)
					}
					if i > 0 && len(got) != 0 {
						t.Fatalf("round %d, worker %d's panic after the take: errors %q, want none (taken already)", round, i, got)
					}
				}
				s.must(DropDataflow{ID: "boom"})
			}
			if got := takeLinesOf(t, s); len(got) != 0 {
				t.Fatalf("errors after the drops: %q", got)
			}
			// Every worker has applied both drops: nothing of them is kept.
			keepsNothing(t, s.ctl)
		})
	}
}

// TestTakingErrorsCostsWhatItForgets: the controller keeps the step errors
// it returned of each failed dataflow until its drop is applied, and a
// take forgets those of commands every worker has applied; it went over
// every key it kept to find them, so a caller taking errors after each
// command, with many failed dataflows not yet dropped, paid for all of
// them on every take. The keys are kept by the command they wait for
// now, and a take looks at what it forgets: here 100 failed dataflows,
// 100 takes, then their drops (whose Shutdowns fail too: 100 command
// errors) and a last take forget 300 keys.
func TestTakingErrorsCostsWhatItForgets(t *testing.T) {
	const n, takes = 100, 100
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			s.declare("in", 2)
			for k := range n {
				s.must(CreateDataflow{Desc: boomDesc(fmt.Sprintf("boom%d", k), true, false, dataflow.NewProbe(s.workers))})
			}
			s.send("in", 2, []int64{0, 1, 1, 10})
			s.advance("in", 2, frontier.At(4))
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.TakeErrors(); len(errs) != n {
				t.Fatalf("setup: %d errors, want %d panics", len(errs), n)
			}
			examined := func() int {
				s.ctl.mu.Lock()
				defer s.ctl.mu.Unlock()
				return s.ctl.forgotExamined
			}
			before := examined()
			for k := range takes {
				s.send("in", 2, []int64{int64(4 + k), 1, 1, 10})
				if errs := s.ctl.TakeErrors(); len(errs) != 0 {
					t.Fatalf("take %d: errors %v", k, errs)
				}
			}
			for k := range n {
				s.must(DropDataflow{ID: fmt.Sprintf("boom%d", k)})
			}
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.TakeErrors(); len(errs) != n {
				t.Fatalf("%d errors of the drops, want %d", len(errs), n)
			}
			got := examined() - before
			t.Logf("%d takes and the drops of %d failed dataflows looked at %d kept keys", takes+1, n, got)
			if want := 4 * n; got > want {
				t.Fatalf("the takes looked at %d kept keys, want at most %d", got, want)
			}
			keepsNothing(t, s.ctl)
		})
	}
}

// keepsNothing fails t unless ctl keeps nothing of what it took: no taken
// error, no dropped incarnation and nothing waiting to be forgotten, as
// once everything is dropped and every worker has applied the drops.
func keepsNothing(t *testing.T, ctl *Controller) {
	t.Helper()
	ctl.mu.Lock()
	kept, drops, forget := len(ctl.taken), len(ctl.takenDrops), len(ctl.forget)
	ctl.mu.Unlock()
	if kept+drops+forget > 0 {
		t.Fatalf("the controller keeps %d taken errors, %d dropped incarnations and %d to forget, want none", kept, drops, forget)
	}
}
