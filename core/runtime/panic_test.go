package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// errBoom is what boomOp panics with.
var errBoom = errors.New("boom")

// boomOp takes what its input holds and panics at the first step whose
// input frontier has passed 2 (on every worker, once), with errBoom or,
// with value set, with a string; its Shutdown panics too.
type boomOp[T any] struct {
	in    *dataflow.Port[T]
	value bool
}

func (o *boomOp[T]) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if frontier.At(3).LessEqual(in) {
		if o.value {
			panic("boom!")
		}
		panic(errBoom)
	}
	return frontier.Empty()
}

func (o *boomOp[T]) Shutdown() { panic("shut") }

// boomDesc reads input "in" (Maintained) or index "idx" (a query) with a
// boomOp named "boom", whose output p probes.
func boomDesc(id string, maintained, value bool, p *dataflow.Probe) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("boom")
			if maintained {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				if err := b.Build(&boomOp[*dataflow.Chunk]{in: dataflow.AddInput(b, "rows", in.Oks), value: value}); err != nil {
					return err
				}
			} else {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				if err := b.Build(&boomOp[*batch.Batch]{in: dataflow.AddInput(b, "batches", a.Oks.Stream), value: value}); err != nil {
					return err
				}
			}
			c.Probe(p, dataflow.AddOutput[*dataflow.Chunk](b))
			return nil
		},
	}
}

// TestAPanicInAStepFailsItsDataflow: an operator whose Step panics (in a
// Maintained dataflow, or in a query, which the pair runs on its
// Interactive runtime) fails its dataflow with an error naming the
// dataflow, the operator and the panic's value, with the stack where it
// panicked, once however many workers it panicked on (the stacks differ
// per worker, the error is one); the dataflow steps nothing more, its
// frontier held, while another dataflow and the runtime go on. Its
// operator's Shutdown, which panics too, is an error of the drop alike,
// and the drop releases all the same (the runtime shuts down cleanly).
// Before, the panic ended the process.
func TestAPanicInAStepFailsItsDataflow(t *testing.T) {
	for _, maintained := range []bool{true, false} {
		for _, value := range []bool{false, true} {
			t.Run(fmt.Sprintf("maintained=%v/string=%v", maintained, value), func(t *testing.T) {
				forEachSetup(t, func(t *testing.T, s *setup) {
					s.declare("in", 2)
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					boom, ok := dataflow.NewProbe(s.workers), dataflow.NewCapture(s.workers)
					s.must(CreateDataflow{Desc: boomDesc("boom", maintained, value, boom)})
					s.must(CreateDataflow{Desc: readDesc("ok", "idx", 0, frontier.Empty(), ok)})
					round := func(tm int64) {
						for k := range int64(4) {
							s.send("in", 2, []int64{tm, 1, k, tm})
						}
						s.advance("in", 2, frontier.At(uint64(tm+1)))
					}
					for tm := range int64(5) {
						round(tm)
					}
					if err := ok.WaitPassed(testCtx(t), 4); err != nil {
						t.Fatal(err)
					}
					// Synced: the other reader passing 4 does not say the
					// panicking dataflow has stepped that far on every worker.
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
					var first []string
					for _, e := range s.ctl.TakeErrors() {
						if !errors.Is(e, dataflow.ErrOperatorPanicked) || errors.Is(e, errBoom) == value {
							t.Fatalf("error %v: want ErrOperatorPanicked, errBoom %v", e, !value)
						}
						msg := e.Error()
						line, stack, _ := strings.Cut(msg, "\n")
						first = append(first, line)
						if !strings.Contains(stack, "panic_test.go") || len(stack) > 2100 {
							t.Fatalf("error %q: want the panic's stack, bounded, from boomOp.Step", msg)
						}
					}
					want := `dataflow boom: operator "boom": Step: operator panicked: boom`
					if value {
						want += "!"
					}
					if len(first) != 1 || first[0] != want {
						t.Fatalf("errors %q, want %q once (%d workers)", first, want, s.workers)
					}
					if f := boom.Frontier(); !f.LessEqual(frontier.At(3)) {
						t.Fatalf("the panicked dataflow's capture passed %v, want held at or before {3}", f)
					}
					// The runtime goes on: more rounds, the other reader
					// follows, and the panicked dataflow is dropped (its
					// Shutdown panicking) and created again.
					for tm := int64(5); tm < 8; tm++ {
						round(tm)
					}
					s.must(DropDataflow{ID: "boom"})
					got := s.syncedErrors(t)
					wantDrop := `dataflow boom: operator "boom": Shutdown: operator panicked: shut`
					if len(got) != 1 || !strings.HasPrefix(got[0], wantDrop+"\n") {
						t.Fatalf("errors of the drop %q, want %q once", got, wantDrop)
					}
					if err := ok.WaitPassed(testCtx(t), 7); err != nil {
						t.Fatal(err)
					}
					again := dataflow.NewCapture(s.workers)
					s.must(CreateDataflow{Desc: readDesc("again", "idx", 0, frontier.Empty(), again)})
					round(8)
					if err := again.WaitPassed(testCtx(t), 8); err != nil {
						t.Fatal(err)
					}
					if got := s.syncedErrors(t); len(got) > 0 {
						t.Fatalf("errors after the drop: %q", got)
					}
				})
			})
		}
	}
}

// A wait on a probe, capture or tally of a dataflow whose operator
// panicked, for a time the dataflow had not passed on a worker where it
// panicked, ends with the panic (an error wrapping
// dataflow.ErrOperatorPanicked and the panic's value): the dataflow steps
// nothing more there, so the meet over the workers never passes that
// time. Before, such a wait lasted until its context ended. Waits already
// in progress at the panic end too, and after the dataflow's drop the
// error is still the panic's. Solo and the pair alike, one and two
// workers; a reader of the same index goes on.
func TestAWaitOnAPanickedDataflowEnds(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		p, cp, raw, tl := dataflow.NewProbe(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewTally(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "boom", AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"boomed"},
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				c.Capture(cp, a.Oks)
				c.Tally(tl, a.Oks)
				b := c.NewOperator("boom")
				if err := b.Build(&boomOp[*batch.Batch]{in: dataflow.AddInput(b, "batches", a.Oks.Stream)}); err != nil {
					return err
				}
				out := dataflow.AddOutput[*dataflow.Chunk](b)
				c.Probe(p, out)
				c.CaptureChunks(raw, out, 2)
				// An index of the operator's output, which another
				// query reads: its trace stays where the panic left it.
				arr, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: out, Errs: dataflow.AddOutput[*dataflow.Chunk](b)}, []int{0})
				if err != nil {
					return err
				}
				return c.Export("boomed", arr)
			},
		}})
		ok, reader := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("ok", "idx", 0, frontier.Empty(), ok)})
		s.must(CreateDataflow{Desc: readDesc("reader", "boomed", 0, frontier.Empty(), reader)})
		waiters := map[string]interface {
			WaitPassed(context.Context, frontier.Time) error
		}{"probe": p, "capture": cp, "chunk capture": raw, "tally": tl, "query reading its index": reader}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, dataflow.ErrOperatorPanicked) || !errors.Is(err, errBoom) {
				t.Errorf("a wait for 10 on the %s of the panicked dataflow: %v, want an error wrapping dataflow.ErrOperatorPanicked and the panic's value", what, err)
			}
		}
		// Waits for 10, a time no dataflow reaches here (the input
		// goes to {10}), in progress when the operator panics: the
		// capture and the tally of the import hold where the import was
		// at the panic, anywhere from {3} to {10}, the probe and the
		// chunk capture of the operator's output at or before {3}.
		done := make(chan error, len(waiters))
		for _, w := range waiters {
			go func() { done <- w.WaitPassed(ctx, 10) }()
		}
		for tm := range int64(10) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		for range waiters {
			check("waiters", <-done)
		}
		// Waits after it, and after the drop.
		for what, w := range waiters {
			check(what, w.WaitPassed(ctx, 10))
		}
		if err := ok.WaitPassed(ctx, 9); err != nil {
			t.Fatalf("the other reader: %v", err)
		}
		s.must(DropDataflow{ID: "boom"})
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		for what, w := range waiters {
			check(what+" after the drop", w.WaitPassed(ctx, 10))
		}
		// A time the frozen frontier passed is passed.
		if f, ok := cp.Frontier().Time(); ok && f > 0 {
			if err := cp.WaitPassed(ctx, f-1); err != nil {
				t.Errorf("a wait for %d on the capture at {%d}: %v", f-1, f, err)
			}
		}
		for _, e := range s.ctl.TakeErrors() {
			// The panic, and the drop's end of the index the reader
			// imports.
			if !errors.Is(e, dataflow.ErrOperatorPanicked) && !errors.Is(e, ErrIndexDropped) {
				t.Errorf("error %v", e)
			}
		}
	})
}

// TestAPanicInADropHookIsItsDropsError: a hook a Build registers with
// dataflow.Context.OnDrop that panics at the drop is the drop's error,
// naming the dataflow, once however many workers it panics on, as an
// operator's Shutdown that panics is, and the hooks after it run all the
// same: the query's import is released (the index compacts past what it
// read and a query of the same id reads it again), and the runtime goes
// on. Before, the panic left the worker's drop half done.
func TestAPanicInADropHookIsItsDropsError(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(1))
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				c.Capture(cp, a.Oks)
				// Registered last, run first: the import's release comes after it.
				return c.OnDrop(func() { panic("hook") })
			},
		}})
		if err := cp.WaitPassed(testCtx(t), 0); err != nil {
			t.Fatal(err)
		}
		s.must(DropDataflow{ID: "q"})
		got := s.syncedErrors(t)
		want := `dataflow q: operator "drop hook": OnDrop: operator panicked: hook`
		if len(got) != 1 || !strings.HasPrefix(got[0], want+"\n") {
			t.Fatalf("errors of the drop %q, want %q once", got, want)
		}
		// Released: the index compacts past the query's as_of, and a new
		// query of the same id reads it there.
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
		s.send("in", 2, []int64{1, 1, 2, 2})
		s.advance("in", 2, frontier.At(2))
		again := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 1, frontier.Empty(), again)})
		if err := again.WaitPassed(testCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		if rows := again.At(1); len(rows) != 2 {
			t.Fatalf("the query again reads %v at 1, want 2 rows", rows)
		}
		if got := s.syncedErrors(t); len(got) > 0 {
			t.Fatalf("errors after the drop: %q", got)
		}
	})
}
