package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// errHalt is what haltOp reports through its Failer.
var errHalt = errors.New("halt")

// haltOp forwards nothing and, at the first step whose input frontier has
// passed 2, reports errHalt through its Failer and holds its capability at
// {3} from then on, as an operator that met a broken contract does. With
// goOn it fails at its first step instead and goes on as if it had not
// (its capability {}), which its dataflow's hold of a failed operator's
// output must stop.
type haltOp struct {
	in     *dataflow.Port[*batch.Batch]
	fail   func(error)
	halted bool
	goOn   bool
}

func (o *haltOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if !o.halted && (o.goOn || frontier.At(3).LessEqual(in)) {
		o.halted = true
		o.fail(errHalt)
	}
	if o.halted && !o.goOn {
		return frontier.At(3)
	}
	return frontier.Empty()
}

func (o *haltOp) Shutdown() {}

// relayOp forwards its input's chunks: an operator between a failed one and
// the probe downstream of it.
type relayOp struct {
	in  *dataflow.Port[*dataflow.Chunk]
	out *dataflow.Stream[*dataflow.Chunk]
}

func (o *relayOp) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	return frontier.Empty()
}

func (o *relayOp) Shutdown() {}

type waiter interface {
	WaitPassed(context.Context, frontier.Time) error
}

// A wait downstream of an operator that failed its step (Context.Failer)
// ends with the failure at once, in progress too, for a time past the
// frontier the operator holds (its output held at {3}): a probe on its
// output, one behind an operator of its own, a chunk capture of its
// output, the capture of an arrangement of it (exchanged first on two
// workers: the freeze follows the exchange from its sender to its
// receiver), and another query reading that arrangement's index (its
// trace told of the limit: share.Spine.Fail). A time before it passes,
// and the tally of the import the operator reads, upstream of it, passes
// what the input reaches. An operator that fails and goes on is held
// where its failing step left it. Solo and the pair, one and two workers.
func TestAWaitDownstreamOfAFailedStepEnds(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		p, p2, raw, cpA, tl := dataflow.NewProbe(s.workers), dataflow.NewProbe(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewTally(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "halting", AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"halted"},
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				c.Tally(tl, a.Oks)
				b := c.NewOperator("halt")
				if err := b.Build(&haltOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), fail: c.Failer()}); err != nil {
					return err
				}
				out := dataflow.AddOutput[*dataflow.Chunk](b)
				errs := dataflow.AddOutput[*dataflow.Chunk](b)
				c.Probe(p, out)
				c.CaptureChunks(raw, out, 2)
				r := c.NewOperator("relay")
				ro := &relayOp{in: dataflow.AddInput(r, "rows", out), out: dataflow.AddOutput[*dataflow.Chunk](r)}
				if err := r.Build(ro); err != nil {
					return err
				}
				c.Probe(p2, ro.out)
				arr, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: out, Errs: errs}, []int{1})
				if err != nil {
					return err
				}
				c.Capture(cpA, arr.Oks)
				return c.Export("halted", arr)
			},
		}})
		// Another query reading the arrangement downstream of the failed
		// operator through its index.
		cpX := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("reading halted", "halted", 0, frontier.Empty(), cpX)})
		// An operator that fails its first step, before any data, and
		// goes on: its output is held where that step left it, {0}.
		pg := dataflow.NewProbe(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "going on", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				b := c.NewOperator("halt")
				if err := b.Build(&haltOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), fail: c.Failer(), goOn: true}); err != nil {
					return err
				}
				c.Probe(pg, dataflow.AddOutput[*dataflow.Chunk](b))
				return nil
			},
		}})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		downstream := map[string]waiter{"probe": p, "probe behind an operator": p2, "chunk capture": raw, "capture of an arrangement": cpA, "query reading the arrangement's index": cpX}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done := make(chan error, len(downstream))
		for _, w := range downstream {
			go func() { done <- w.WaitPassed(ctx, 9) }()
		}
		for tm := range int64(10) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		for range downstream {
			if err := <-done; !errors.Is(err, errHalt) {
				t.Errorf("a wait for 9 in progress downstream of the failed operator: %v, want an error wrapping its failure", err)
			}
		}
		for what, w := range downstream {
			if err := w.WaitPassed(ctx, 3); !errors.Is(err, errHalt) {
				t.Errorf("a wait for 3 on the %s downstream of the operator held at {3}: %v, want an error wrapping its failure", what, err)
			}
			if err := w.WaitPassed(ctx, 2); err != nil {
				t.Errorf("a wait for 2 on the %s downstream of the operator held at {3}: %v", what, err)
			}
		}
		if err := tl.WaitPassed(ctx, 9); err != nil {
			t.Errorf("a wait for 9 on the tally upstream of the failed operator: %v", err)
		}
		if f := pg.Frontier(); f != frontier.At(0) {
			t.Errorf("the probe of the operator that failed its first step and went on is at %v once the input passed 9, want {0}", f)
		}
		if err := pg.WaitPassed(ctx, 0); !errors.Is(err, errHalt) {
			t.Errorf("a wait for 0 on the probe of the operator held at {0}: %v, want an error wrapping its failure", err)
		}
		if n := len(raw.At(2)); n != 0 {
			t.Errorf("the chunk capture reads %d rows, want none", n)
		}
		for _, e := range s.ctl.TakeErrors() {
			if !errors.Is(e, errHalt) {
				t.Errorf("error %v", e)
			}
		}
	})
}

// endedOutcome is waitOutcome telling an index's end (ErrIndexDropped)
// apart.
func endedOutcome(w waiter, t uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := w.WaitPassed(ctx, t); errors.Is(err, ErrIndexDropped) {
		return "index dropped"
	}
	return waitOutcome(w, t)
}

// A wait downstream of an import whose index is dropped ends with the
// drop's ErrIndexDropped at once, in progress too, for a time past the
// frontier the index reached, once the query has read what the index
// published (in the pair, through the publication the drop ends); a time
// before it passes. Solo and the pair agree, whichever runtime of the pair
// lags while the index and its reader are made.
func TestAWaitDownstreamOfADroppedIndexEnds(t *testing.T) {
	want := "[capture at 2: passed in progress: index dropped capture: index dropped tally: index dropped probe behind an operator: index dropped capture at 2 after: passed]"
	wantErrs := []string{`dataflow q: index "idx", which it imports, goes with dataflow maintain idx: runtime: index dropped while a dataflow imports it (the dataflow's frontier stops where the index's did; drop importers first)`}
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			var out []string
			for tm := range int64(3) {
				s.send("in", 2, []int64{tm, 1, tm, tm})
			}
			s.advance("in", 2, frontier.At(3))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			cp, tl, p := dataflow.NewCapture(s.workers), dataflow.NewTally(s.workers), dataflow.NewProbe(s.workers)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Capture(cp, a.Oks)
					c.Tally(tl, a.Oks)
					b := c.NewOperator("rows")
					f := &flatten{in: dataflow.AddInput(b, "batches", a.Oks.Stream), out: dataflow.AddOutput[*dataflow.Chunk](b)}
					if err := b.Build(f); err != nil {
						return err
					}
					r := c.NewOperator("relay")
					ro := &relayOp{in: dataflow.AddInput(r, "rows", f.out), out: dataflow.AddOutput[*dataflow.Chunk](r)}
					if err := r.Build(ro); err != nil {
						return err
					}
					c.Probe(p, ro.out)
					return nil
				},
			}})
			s.resume()
			out = append(out, "capture at 2: "+endedOutcome(cp, 2))
			waited := make(chan string, 1)
			go func() { waited <- endedOutcome(cp, 5) }()
			s.must(DropDataflow{ID: "maintain idx"})
			out = append(out, "in progress: "+<-waited)
			out = append(out, "capture: "+endedOutcome(cp, 3), "tally: "+endedOutcome(tl, 3), "probe behind an operator: "+endedOutcome(p, 4), "capture at 2 after: "+endedOutcome(cp, 2))
			return fmt.Sprint(out)
		})
		for w, o := range outs {
			if o.answer != want || fmt.Sprint(o.errs) != fmt.Sprint(wantErrs) {
				t.Errorf("lag %v, workers %d: %s\nerrors %q\nwant %s\nerrors %q", lag, w, o.answer, o.errs, want, wantErrs)
			}
		}
	}
}

// flatten sends each batch's updates as rows, key then value.
type flatten struct {
	in  *dataflow.Port[*batch.Batch]
	out *dataflow.Stream[*dataflow.Chunk]
}

func (o *flatten) Step(frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		ch := dataflow.NewChunk(2, b.Len())
		for _, u := range b.Updates() {
			ch.Push(append(append([]int64{}, u.Key...), u.Val...), u.Time, u.Diff)
		}
		if ch.Len() > 0 {
			o.out.Send(ch)
		}
	}
	return frontier.Empty()
}

func (o *flatten) Shutdown() {}

// offWorkerHaltOp calls its Failer from a goroutine of its own at its
// first step, and waits for it: a failure reported off the worker, which
// holds nothing.
type offWorkerHaltOp struct {
	in     *dataflow.Port[*batch.Batch]
	fail   func(error)
	halted bool
}

func (o *offWorkerHaltOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if !o.halted {
		o.halted = true
		done := make(chan struct{})
		go func() {
			defer close(done)
			o.fail(errHalt)
		}()
		<-done
	}
	return frontier.Empty()
}

func (o *offWorkerHaltOp) Shutdown() {}

// A Failer called from another goroutine than the worker's reports the
// error, as the dataflow's, and holds nothing: the operator that failed
// at its first step, before any data, is not held at {0}, and the probe
// downstream of it passes what the input reaches. (The call here waits
// for its goroutine, so it races nothing; a concurrent call is
// TestAFailerCalledFromAnotherGoroutineHoldsNothing's.)
func TestAFailerCalledOffTheWorkerHoldsNothing(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		p := dataflow.NewProbe(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "off", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				b := c.NewOperator("halt")
				if err := b.Build(&offWorkerHaltOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), fail: c.Failer()}); err != nil {
					return err
				}
				c.Probe(p, dataflow.AddOutput[*dataflow.Chunk](b))
				return nil
			},
		}})
		// Stepped before any data: held, its output would stay at {0}.
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		for tm := range int64(10) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		if err := p.WaitPassed(testCtx(t), 9); err != nil {
			t.Fatalf("a wait for 9 downstream of an operator whose Failer ran off the worker: %v", err)
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		errs := s.ctl.TakeErrors()
		if len(errs) != 1 || !errors.Is(errs[0], errHalt) {
			t.Fatalf("errors %v, want the one failure", errs)
		}
	})
}

// A Maintained reader of an index freed before (AllowCompaction to {})
// keeps its traces written and reads on; once their writer is dropped the
// traces stop, and the reader is told (runtime.ErrIndexDropped): a wait
// on its capture for a time past where the traces stopped ends with that
// error at once (the writer's drop tells its traces, share.Spine.Fail,
// whose publication goes on for the reader), where it lasted until its
// context; a time before it passes. Solo and the pair agree, whichever
// runtime of the pair lags while the index and its reader are made.
func TestAWaitOfAReaderWhoseWriterIsDroppedEnds(t *testing.T) {
	want := "[at 2: passed after the free, at 4: passed in progress: index dropped at 6: index dropped at 4 after: passed]"
	wantErrs := []string{
		`dataflow mr: index "idx", which it imports, reads traces whose writer, dataflow maintain idx, is dropped: runtime: index dropped while a dataflow imports it (the dataflow's frontier stops where the index's did; drop importers first)`,
	}
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			var out []string
			for tm := range int64(3) {
				s.send("in", 2, []int64{tm, 1, tm, tm})
			}
			s.advance("in", 2, frontier.At(3))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			cp := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "mr", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Capture(cp, a.Oks)
					return nil
				},
			}})
			s.resume()
			out = append(out, "at 2: "+endedOutcome(cp, 2))
			s.must(AllowCompaction{ID: "idx", Frontier: frontier.Empty()})
			s.send("in", 2, []int64{3, 1, 3, 3})
			s.advance("in", 2, frontier.At(5))
			out = append(out, "after the free, at 4: "+endedOutcome(cp, 4))
			waited := make(chan string, 1)
			go func() { waited <- endedOutcome(cp, 6) }()
			s.must(DropDataflow{ID: "maintain idx"})
			out = append(out, "in progress: "+<-waited, "at 6: "+endedOutcome(cp, 6), "at 4 after: "+endedOutcome(cp, 4))
			return fmt.Sprint(out)
		})
		for w, o := range outs {
			if o.answer != want || fmt.Sprint(o.errs) != fmt.Sprint(wantErrs) {
				t.Errorf("lag %v, workers %d: %s\nerrors %q\nwant %s\nerrors %q", lag, w, o.answer, o.errs, want, wantErrs)
			}
		}
	}
}

// A query reading a view (a Maintained dataflow arranging what it reads
// of an index) is not told when the index is dropped: the view is. The
// view's import freezes what is downstream of it once told, its
// arrangement tells its trace, and through it the query's import: the
// query's waits past where the index stopped end with the view's error,
// alike in Solo and the pair.
func TestAWaitOnAViewOfADroppedIndexEnds(t *testing.T) {
	want := "[at 2: passed in progress: index dropped at 4: index dropped at 2 after: passed]"
	wantErrs := []string{`dataflow v: index "idx", which it imports, goes with dataflow maintain idx: runtime: index dropped while a dataflow imports it (the dataflow's frontier stops where the index's did; drop importers first)`}
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			var out []string
			for tm := range int64(3) {
				s.send("in", 2, []int64{tm, 1, tm, tm})
			}
			s.advance("in", 2, frontier.At(3))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "v", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"vidx"},
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					b := c.NewOperator("rows")
					f := &flatten{in: dataflow.AddInput(b, "batches", a.Oks.Stream), out: dataflow.AddOutput[*dataflow.Chunk](b)}
					if err := b.Build(f); err != nil {
						return err
					}
					arr, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: f.out, Errs: dataflow.AddOutput[*dataflow.Chunk](b)}, []int{1})
					if err != nil {
						return err
					}
					return c.Export("vidx", arr)
				},
			}})
			cp := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: readDesc("q", "vidx", 0, frontier.Empty(), cp)})
			s.resume()
			out = append(out, "at 2: "+endedOutcome(cp, 2))
			waited := make(chan string, 1)
			go func() { waited <- endedOutcome(cp, 5) }()
			s.must(DropDataflow{ID: "maintain idx"})
			out = append(out, "in progress: "+<-waited, "at 4: "+endedOutcome(cp, 4), "at 2 after: "+endedOutcome(cp, 2))
			return fmt.Sprint(out)
		})
		for w, o := range outs {
			if o.answer != want || fmt.Sprint(o.errs) != fmt.Sprint(wantErrs) {
				t.Errorf("lag %v, workers %d: %s\nerrors %q\nwant %s\nerrors %q", lag, w, o.answer, o.errs, want, wantErrs)
			}
		}
	}
}
