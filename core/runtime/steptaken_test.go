package runtime

import (
	"fmt"
	"strings"
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
			takeLines := func() []string {
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
			for round := range 2 {
				s.must(CreateDataflow{Desc: rowBoomDesc("boom")})
				for i := range w {
					s.send("in", 2, []int64{0, 1, keyOn(i, w), int64(round)})
					got := takeLines()
					if i == 0 && (len(got) != 1 || got[0] != "0: "+want) {
						t.Fatalf("round %d, worker 0's panic: errors %q, want %q once", round, got, "0: "+want)
					}
					if i > 0 && len(got) != 0 {
						t.Fatalf("round %d, worker %d's panic after the take: errors %q, want none (taken already)", round, i, got)
					}
				}
				s.must(DropDataflow{ID: "boom"})
			}
			if got := takeLines(); len(got) != 0 {
				t.Fatalf("errors after the drops: %q", got)
			}
			// Every worker has applied both drops: nothing of them is kept.
			s.ctl.mu.Lock()
			kept, drops := len(s.ctl.taken), len(s.ctl.takenDrops)
			s.ctl.mu.Unlock()
			if kept+drops > 0 {
				t.Fatalf("the controller keeps %d taken errors and %d drops of dropped dataflows, want none", kept, drops)
			}
		})
	}
}
