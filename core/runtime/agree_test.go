package runtime

import (
	"errors"
	"slices"
	"strings"
	gosync "sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// A typed nil Operator (a nil *pass, which implements Operator) given to
// OperatorBuilder.Build is refused there, naming the dataflow, the
// operator and the type, and the create fails with that error even when
// the Build drops it: stepped, it panicked in a worker. Solo and the pair,
// on one worker and two, report the same.
func TestATypedNilOperatorFailsTheCreate(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		for _, id := range []string{"returned", "dropped"} {
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("nothing")
					dataflow.AddInput(b, "rows", in.Oks)
					err = b.Build((*pass)(nil))
					if id == "returned" {
						return err
					}
					return nil
				},
			}})
		}
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(1))
		got := s.syncedErrors(t)
		var want []string
		for _, id := range []string{"returned", "dropped"} {
			want = append(want, "dataflow "+id+`: operator "nothing": nil Operator (a nil *runtime.pass)`)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// thief forwards nothing of its own: once its input frontier is past 1 it
// sends its input's chunks on another operator's output, twice.
type thief struct {
	in   *dataflow.Port[*dataflow.Chunk]
	on   *dataflow.Stream[*dataflow.Chunk]
	sent int
}

func (o *thief) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		if o.sent < 2 {
			o.on.Send(c)
			o.sent++
		}
	}
	return frontier.Empty()
}

func (o *thief) Shutdown() {}

// A step that sends on another operator's output stream delivers nothing
// and is the dataflow's error naming both operators
// (dataflow.ErrNotItsOutput), reported once, while the dataflow runs on:
// the other operator's readers see its own chunks only. Solo and the pair,
// on one worker and two, report the same.
func TestASendOnAnotherOperatorsOutputIsRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "steal", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("victim")
				v := &pass{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b)}
				if err := b.Build(v); err != nil {
					return err
				}
				tb := c.NewOperator("thief")
				if err := tb.Build(&thief{in: dataflow.AddInput(tb, "rows", in.Oks), on: v.out}); err != nil {
					return err
				}
				c.CaptureChunks(cp, v.out, 2)
				return nil
			},
		}})
		for tm := range int64(3) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		if err := cp.WaitPassed(testCtx(t), 2); err != nil {
			t.Fatal(err)
		}
		got := s.syncedErrors(t)
		got = slices.Compact(got) // one a worker that met a row
		want := []string{`dataflow steal: operator "thief": Stream.Send on an output of operator "victim": an operator sends on its own outputs only`}
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for tm := range uint64(3) {
			if rows := cp.At(tm); len(rows) != int(tm)+1 {
				t.Errorf("at %d the victim's capture holds %v, want its own %d rows", tm, rows, tm+1)
			}
		}
	})
}

// extra forwards its input and, at the first step whose input frontier is
// past 1, sends one chunk more (when it is set).
type extra struct {
	in    *dataflow.Port[*dataflow.Chunk]
	out   *dataflow.Stream[*dataflow.Chunk]
	chunk *dataflow.Chunk
	sent  bool
}

func (o *extra) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if o.chunk != nil && !o.sent && frontier.At(1).Less(in) {
		o.sent = true
		o.out.Send(o.chunk)
	}
	return frontier.Empty()
}

func (o *extra) Shutdown() {}

// An exchange by a column past the rows fails alike on one worker and
// two, naming the operator and the column: an input's stream, whose
// columns the build knows, fails the create; an operator's chunks are
// refused where the exchange reads them, on one worker too (there no
// update moves, and it was no error), and a capture after it never passes
// the time. On two workers the input's was a step's error blaming the
// input.
func TestAnExchangePastTheRowFailsOnEveryWorkerCount(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		caps := map[string]*dataflow.Capture{}
		for _, id := range []string{"input", "operator"} {
			cp := dataflow.NewCapture(s.workers)
			caps[id] = cp
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					s := in.Oks
					if id == "operator" {
						b := c.NewOperator("fwd")
						op := &extra{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b)}
						if err := b.Build(op); err != nil {
							return err
						}
						s = op.out
					}
					c.CaptureChunks(cp, c.ExchangeNamed(s, []int{0, 3}, "past"), 2)
					return nil
				},
			}})
		}
		for tm := range int64(3) {
			s.send("in", 2, []int64{tm, 1, tm, tm}, []int64{tm + 7, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		got := s.syncedErrors(t)
		slices.Sort(got)
		got = slices.Compact(got) // one a worker that met a row
		want := []string{
			`dataflow input: exchange by column 3 of the 2-column stream of operator "input in"`,
			`dataflow operator: exchange: chunk breaks the operator contract: operator "fwd" sent one of 2 columns, keyed by column 3`,
		}
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if cp := caps["operator"]; cp.Passed(0) {
			t.Errorf("the capture after the refused exchange passed 0 (at %v)", cp.Frontier())
		}
	})
}

// An empty chunk of another arity than its collection's is refused alike
// on one worker and two, with the same error: an exchange forwards it
// (an arrangement's admits its arity as the arrangement does), where on
// two workers it dropped it and one worker's arrangement or capture
// refused it. A chunk is of its collection's arity whatever its length
// (README.md, "Dataflows"), as an input's Send refuses an empty chunk of
// another arity.
func TestAnEmptyChunkOfAnotherArityIsRefusedOnEveryWorkerCount(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		for _, id := range []string{"arrange", "exchange"} {
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("empty")
					op := &extra{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b), chunk: dataflow.NewChunk(1, 0)}
					if err := b.Build(op); err != nil {
						return err
					}
					if id == "arrange" {
						_, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: in.Errs}, []int{0})
						return err
					}
					c.CaptureChunks(dataflow.NewCapture(c.Peers()), c.Exchange(op.out, []int{0}), 2)
					return nil
				},
			}})
		}
		for tm := range int64(3) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		got := s.syncedErrors(t)
		slices.Sort(got)
		got = slices.Compact(got) // one a worker
		want := []string{
			`dataflow arrange: arrange oks: chunk breaks the operator contract: operator "empty" sent one of 1 columns to a collection of 2`,
			`dataflow exchange: capture: chunk breaks the operator contract: operator "empty" sent one of 1 columns to a collection of 2`,
		}
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// Context methods called from a goroutine a Build started, once the Build
// returned and while the worker steps the dataflow, are refused as calls
// from a step are (dataflow.ErrBuildReturned), saying another goroutine
// called, and reported once; they read nothing the worker writes, where
// they read the operator being stepped and the command being applied, a
// data race (-race). The dataflow runs on as built. Solo and the pair, on
// one worker and two, report the same.
func TestContextMethodsFromAnotherGoroutineAreRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		cp := dataflow.NewCapture(s.workers)
		start := make(chan struct{})
		var wg gosync.WaitGroup
		var mu gosync.Mutex
		var returned []error
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "away", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("fwd")
				op := &extra{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b)}
				if err := b.Build(op); err != nil {
					return err
				}
				c.CaptureChunks(cp, op.out, 2)
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, err1 := c.Input("in", 2)
					if c.Exchange(op.out, []int{1}) != op.out {
						t.Error("Exchange from another goroutine returned another stream")
					}
					c.Probe(dataflow.NewProbe(c.Peers()), op.out)
					late := c.NewOperator("late")
					dataflow.AddInput(late, "rows", op.out)
					err2 := late.Build(&extra{})
					_, err3 := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: in.Errs}, []int{0})
					err4 := b.Build(&extra{}) // built already, by the Build
					mu.Lock()
					returned = append(returned, err1, err2, err3, err4)
					mu.Unlock()
				}()
				return nil
			},
		}})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		for tm := range int64(6) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
			if tm == 1 {
				close(start) // while the workers step the rounds
			}
		}
		wg.Wait()
		if err := cp.WaitPassed(testCtx(t), 5); err != nil {
			t.Fatal(err)
		}
		got := s.syncedErrors(t)
		slices.Sort(got)
		got = slices.Compact(got) // one a worker
		var want []string
		for _, m := range []string{"Context.Input", "Context.Exchange", "Context.Probe", `OperatorBuilder.Build of operator "late"`, "Context.Arrange", `OperatorBuilder.Build of operator "fwd"`} {
			want = append(want, "dataflow away: "+m+" called from another goroutine than the worker's after the dataflow's Build returned: a dataflow's operators are added by its Build only")
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(returned) != 4*s.workers {
			t.Fatalf("the calls returned %v", returned)
		}
		for _, err := range returned {
			if !errors.Is(err, dataflow.ErrBuildReturned) {
				t.Errorf("a call returned %v, want dataflow.ErrBuildReturned", err)
			}
		}
		for tm := range uint64(6) {
			if rows := cp.At(tm); len(rows) != int(tm)+1 {
				t.Errorf("at %d the capture holds %v, want %d rows", tm, rows, tm+1)
			}
		}
	})
}
