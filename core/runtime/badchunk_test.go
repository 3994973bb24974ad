package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// feed is an operator between an input and its arrangement that forwards
// what it reads and, once its input's frontier reaches {3}, sends one
// chunk that breaks the operator contract (fault): an update at time 1,
// which the frontier {2} it had announced had passed; nil; a chunk of
// one column to a two-column collection.
type feed struct {
	in    *dataflow.Port[*dataflow.Chunk]
	out   *dataflow.Stream[*dataflow.Chunk]
	fault string
	sent  bool
}

func (o *feed) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if !o.sent && frontier.At(3).LessEqual(in) {
		o.sent = true
		switch o.fault {
		case "past":
			c := dataflow.NewChunk(2, 1)
			c.Push([]int64{7, 70}, 1, 1)
			o.out.Send(c)
		case "nil":
			o.out.Send(nil)
		case "arity":
			c := dataflow.NewChunk(1, 1)
			c.Push([]int64{7}, 3, 1)
			o.out.Send(c)
		}
	}
	return frontier.Empty()
}

func (o *feed) Shutdown() {}

// An operator that sends a chunk against the contract — at a time its
// frontier had passed, nil, of another arity — is refused where the chunk
// is first read whole (the arrangement with one worker, the exchange
// before it with two, under the arrangement's name; a capture of the
// operator's chunks), with its dataflow's error naming the operator
// (dataflow.ErrBadChunk) and the same on one worker and two, and no
// worker panics. Each reader stops there: its frontier stays at {2}
// however far the input goes, and so does a query's import of the index
// (in the pair, through the publication), so no capture reads the update
// as part of a complete time, and what was sealed before holds every row
// sent. Solo and the pair report the same.
func TestBadChunkFromAnOperatorIsRefused(t *testing.T) {
	for _, fault := range []string{"past", "nil", "arity"} {
		t.Run(fault, func(t *testing.T) {
			forEachSetup(t, func(t *testing.T, s *setup) {
				cp, raw, q := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.declare("in", 2)
				s.must(CreateDataflow{Desc: dataflow.Desc{
					ID: "maintain idx", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx"},
					Build: func(c *dataflow.Context) error {
						in, err := c.Input("in", 2)
						if err != nil {
							return err
						}
						b := c.NewOperator("feed")
						f := &feed{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b), fault: fault}
						if err := b.Build(f); err != nil {
							return err
						}
						c.CaptureChunks(raw, f.out, 2)
						// Keyed by the second column: with two workers the
						// operator's rows are exchanged first.
						a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: f.out, Errs: in.Errs}, []int{1})
						if err != nil {
							return err
						}
						c.Capture(cp, a.Oks)
						return c.Export("idx", a)
					},
				}})
				// A query reading the index: in the pair, on the other
				// runtime, through the publication.
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), q)})
				// A round at a time, each stepped before the next is sent.
				for tm := range int64(5) {
					s.send("in", 2, []int64{tm, 1, tm, 10 * tm}, []int64{tm, 1, tm + 100, 10*tm + 1})
					s.advance("in", 2, frontier.At(uint64(tm+1)))
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
				}
				// The same error on one worker and two: the arrangement's
				// exchange refuses what the arrangement would, under its
				// name.
				what := ""
				switch fault {
				case "past":
					what = "with an update at time 1, which its stream's frontier {2} had passed"
				case "nil":
					what = "that is nil"
				case "arity":
					what = "of 1 columns to a collection of 2"
				}
				msg := func(where, what string) string {
					return fmt.Sprintf("dataflow maintain idx: %s: chunk breaks the operator contract: operator %q sent one %s", where, "feed", what)
				}
				want := []string{msg("arrange oks", what), msg("capture", what)}
				slices.Sort(want)
				errs := s.ctl.TakeErrors()
				var got []string
				for _, e := range errs {
					got = append(got, e.Error())
					if !errors.Is(e, dataflow.ErrBadChunk) {
						t.Errorf("error %v is not dataflow.ErrBadChunk", e)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("errors\n%q\nwant\n%q", got, want)
				}
				if f := cp.Frontier(); f != frontier.At(2) {
					t.Fatalf("the arrangement's frontier is %v after the refused chunk, want {2}", f)
				}
				if f := q.Frontier(); f != frontier.At(2) {
					t.Fatalf("the query importing the index reads its frontier at %v, want {2}", f)
				}
				if f := raw.Frontier(); f != frontier.At(2) {
					t.Fatalf("the operator's capture's frontier is %v after the refused chunk, want {2}", f)
				}
				// The capture that refused the chunk sets its frontier
				// no more: a wait for a time past it ends with the
				// refusal, not when its context does; one for a time it
				// passed returns nil.
				wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := raw.WaitPassed(wctx, 1); err != nil {
					t.Fatalf("a wait for 1 on the capture at {2}: %v", err)
				}
				if err := raw.WaitPassed(wctx, 3); !errors.Is(err, dataflow.ErrBadChunk) {
					t.Fatalf("a wait for 3 on the capture that refused the chunk: %v, want an error wrapping dataflow.ErrBadChunk", err)
				}
				// The arrangement that refused the chunk holds its trace
				// at {2}: a wait past it ends with the refusal on its
				// capture, and on the query importing the index in
				// another dataflow (in the pair, on the other runtime,
				// through the publication); a time before it passes.
				for what, w := range map[string]*dataflow.Capture{"the arrangement's capture": cp, "the query importing the index": q} {
					if err := w.WaitPassed(wctx, 3); !errors.Is(err, dataflow.ErrBadChunk) {
						t.Fatalf("a wait for 3 on %s: %v, want an error wrapping dataflow.ErrBadChunk", what, err)
					}
					if err := w.WaitPassed(wctx, 1); err != nil {
						t.Fatalf("a wait for 1 on %s at {2}: %v", what, err)
					}
				}
				// A query made after the failure learns it at its import.
				late := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("late", "idx", 0, frontier.Empty(), late)})
				if err := late.WaitPassed(wctx, 3); !errors.Is(err, dataflow.ErrBadChunk) {
					t.Fatalf("a wait for 3 on a query created after the refusal: %v, want an error wrapping dataflow.ErrBadChunk", err)
				}
				if n := len(raw.At(1)); n != 4 {
					t.Fatalf("the operator's capture reads %d rows at 1, want the 4 sent", n)
				}
				for tm, c := range []*dataflow.Capture{cp, q, cp, q} {
					tm := int64(tm / 2)
					var rows [][]int64
					for _, rd := range c.At(uint64(tm)) {
						rows = append(rows, append(slices.Clone(rd.Row), rd.Diff))
					}
					slices.SortFunc(rows, slices.Compare)
					wantRows := [][]int64{}
					for u := range tm + 1 {
						wantRows = append(wantRows, []int64{u, 10 * u, 1}, []int64{u + 100, 10*u + 1, 1})
					}
					slices.SortFunc(wantRows, slices.Compare)
					if !slices.EqualFunc(rows, wantRows, slices.Equal) {
						t.Fatalf("at %d the capture reads %v, want %v", tm, rows, wantRows)
					}
				}
				// The index dropped with its readers and created again
				// under its id, healthy: its new trace carries nothing of
				// the old one's failure, and a new reader passes what the
				// input reached.
				for _, id := range []string{"q", "late", "maintain idx"} {
					s.must(DropDataflow{ID: id})
				}
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				again := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("again", "idx", 0, frontier.Empty(), again)})
				if err := again.WaitPassed(wctx, 4); err != nil {
					t.Fatalf("a wait for 4 on a reader of the index created again: %v", err)
				}
			})
		})
	}
}
