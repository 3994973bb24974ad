package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// The tests of this file pin two rules of creates a user relies on: a query
// reads indexes only, in every role, so Solo and the pair refuse the same
// dataflows with the same error; and a create exists on every worker of
// every runtime or on none (R5).

// queryOnInput is a query (not Maintained) that reads input "in" directly
// and captures it arranged by column 0; maintained makes it a Maintained
// dataflow with no exports, as direct mode builds its query.
func queryOnInput(id string, maintained bool, cp *dataflow.Capture) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
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

// zeroState fails t unless every runtime of s holds no dataflow, index,
// trace or exchange and every registry no slot, reserved hold or verdict
// (the inputs' history, Stats.InputHistory, is the inputs', not a
// dataflow's).
func zeroState(t *testing.T, s *setup, after string) {
	t.Helper()
	if err := s.ctl.Sync(testCtx(t)); err != nil { // every runtime has applied the create
		t.Fatal(err)
	}
	for _, r := range s.rts {
		st, err := r.Stats(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.InputHistory = 0; st != (Stats{}) {
			t.Fatalf("%s, %d workers: %v runtime after %s: %+v, want nothing", s.mode, s.workers, r.Role(), after, st)
		}
	}
	for _, r := range s.rts {
		for i, g := range r.opts.Registries {
			if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 || st.Settled != 0 {
				t.Fatalf("%s, %d workers: registry %d after %s: %+v, want nothing", s.mode, s.workers, i, after, st)
			}
		}
	}
}

// A query that reads an input is refused alike by Solo and by the pair
// (whose Interactive runtime receives no input and had answered nothing):
// one error naming the dataflow and the input, and nothing left on any
// worker. Its id stays taken until dropped, like any failed create. The
// same dataflow made Maintained — direct mode's query — answers alike in
// both, with the Interactive runtime lagging or not.
func TestQueryReadingAnInputIsRefusedAlike(t *testing.T) {
	rows := [][]int64{{0, 1, 1, 10}, {0, 1, 2, 20}, {1, 1, 3, 30}, {1, -1, 1, 10}}
	for _, lag := range []Role{Solo, Interactive} {
		outs := agree(t, lag, func(s *setup, sent *[]string) string {
			s.send("in", 2, rows...)
			s.advance("in", 2, frontier.At(2))
			bad := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: queryOnInput("q", false, bad)})
			s.resume()
			zeroState(t, s, "the refused query")
			*sent = append(*sent,
				s.sendErr(CreateDataflow{Desc: queryOnInput("q", true, bad)}), // the id is taken
				s.sendErr(DropDataflow{ID: "q"}))
			direct := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: queryOnInput("direct q", true, direct)})
			return fmt.Sprintf("refused: %v; direct: %s", captured(bad, 1), read(direct, 1))
		})
		wantAnswer := fmt.Sprintf("refused: map[]; direct: %v", model(rows, 1))
		wantErrs := []string{`dataflow q: input "in": dataflow: a query reads no input (only a Maintained dataflow reads inputs)`}
		wantSent := []string{`runtime: create dataflow "q": a dataflow with this id exists`, ""}
		for w, o := range outs {
			if o.answer != wantAnswer || !slices.Equal(o.errs, wantErrs) || !slices.Equal(o.sent, wantSent) {
				t.Fatalf("lag %v, workers=%d: %+v\nwant answer %s, errors %q, sent %q", lag, w, o, wantAnswer, wantErrs, wantSent)
			}
		}
	}
}

// The sentinel a caller tests for: the reported error wraps
// dataflow.ErrQueryReadsInput, in Solo and in the pair.
func TestQueryReadingAnInputWrapsTheSentinel(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 2)
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: queryOnInput("q", false, dataflow.NewCapture(2))})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		errs := s.ctl.TakeErrors()
		if len(errs) != 1 || !errors.Is(errs[0], dataflow.ErrQueryReadsInput) || errs[0].Seq != 2 {
			t.Fatalf("%s: errors %v, want one of command 2 wrapping ErrQueryReadsInput", mode, errs)
		}
	}
}

// rowCounter counts the rows of the chunks it reads, on any worker.
type rowCounter struct {
	in   *dataflow.Port[*dataflow.Chunk]
	rows *atomic.Int64
}

func (o *rowCounter) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.rows.Add(int64(c.Len()))
	}
	return frontier.Empty()
}

func (o *rowCounter) Shutdown() {}

// failOn is an index dataflow whose Build fails on the workers bad only,
// after it has arranged its input, exported its index and joined an
// exchange: the other workers build it whole. seen counts the input rows
// its operators saw, before any exchange.
func failOn(cp *dataflow.Capture, seen *atomic.Int64, bad ...int) dataflow.Desc {
	return dataflow.Desc{
		ID: "maintain idx", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx"},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			b := c.NewOperator("count")
			if err := b.Build(&rowCounter{in: dataflow.AddInput(b, "rows", in.Oks), rows: seen}); err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			if err := c.Export("idx", a); err != nil {
				return err
			}
			if slices.Contains(bad, c.Worker()) {
				return fmt.Errorf("worker %d cannot build", c.Worker())
			}
			return nil
		},
	}
}

// A create whose Build fails on some workers only (worker 1 of 2; workers
// 1 and 3 of 4) leaves nothing on any worker of any runtime: no dataflow, no index, no
// trace, no exchange, no registry slot, no peer, and its capture sees no
// row. One error is reported for the command: the lowest failing
// worker's. A query on the index is
// then refused alike by every worker; the id is dropped and created again
// whole, and answers. The same holds with either runtime of the pair
// lagging behind the command stream.
func TestCreateFailingOnOneWorkerLeavesNothing(t *testing.T) {
	rows := [][]int64{{0, 1, 1, 10}, {0, 1, 2, 20}, {0, 1, 3, 30}, {0, 1, 4, 40}, {0, 1, 5, 50}, {0, 1, 6, 60}}
	type run struct {
		mode string
		lag  Role // the runtime of the pair held behind (Solo: none)
	}
	for _, w := range []int{2, 4} {
		for _, r := range []run{{"solo", Solo}, {"pair", Solo}, {"pair", Maintenance}, {"pair", Interactive}} {
			name := fmt.Sprintf("%s/workers=%d", r.mode, w)
			if r.lag != Solo {
				name += "/lagging=" + r.lag.String()
			}
			t.Run(name, func(t *testing.T) {
				s := newLagSetup(t, r.mode, w, r.lag)
				s.send("in", 2, rows...)
				s.advance("in", 2, frontier.At(1))
				cp := dataflow.NewCapture(w)
				bad := []int{1}
				if w == 4 {
					bad = []int{3, 1}
				}
				var seen atomic.Int64
				s.must(CreateDataflow{Desc: failOn(cp, &seen, bad...)}) // command 4
				s.resume()
				zeroState(t, s, "a create that failed on worker 1")
				if got := captured(cp, 0); len(got) != 0 || seen.Load() != 0 {
					t.Fatalf("the failed create captured %v and its operators saw %d rows, want nothing run", got, seen.Load())
				}
				q := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), q)}) // command 5
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range s.ctl.TakeErrors() {
					got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
				}
				want := []string{
					`4: dataflow maintain idx: worker 1 cannot build`,
					`5: dataflow q: import of index "idx": the create of dataflow "maintain idx", which exports it, failed`,
				}
				if !slices.Equal(got, want) {
					t.Fatalf("errors %q, want %q", got, want)
				}
				s.must(DropDataflow{ID: "q"})
				s.must(DropDataflow{ID: "maintain idx"})
				zeroState(t, s, "dropping the failed create")
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), q)})
				if got, want := read(q, 0), fmt.Sprint(model(rows, 0)); got != want {
					t.Fatalf("the index created again reads %s, want %s", got, want)
				}
			})
		}
	}
}
