package runtime

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// pass is an operator that forwards its input and, at the first step whose
// input frontier is past 1, runs late once.
type pass struct {
	in   *dataflow.Port[*dataflow.Chunk]
	out  *dataflow.Stream[*dataflow.Chunk]
	late func()
}

func (o *pass) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if o.late != nil && frontier.At(1).Less(in) {
		o.late()
		o.late = nil
	}
	return frontier.Empty()
}

func (o *pass) Shutdown() {}

// A Context method that adds to a dataflow, or an OperatorBuilder's
// Build, called from a step (the Context kept past the Build) adds
// nothing: each returns, and the runtime reports, an error naming the
// dataflow, the operator whose step called it and the method
// (dataflow.ErrBuildReturned), and the dataflow runs on as it was built.
func TestContextMethodsAfterBuildAreRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		cp := dataflow.NewCapture(s.workers)
		var returned []error
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "late", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("late")
				op := &pass{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b)}
				unbuilt := c.NewOperator("unbuilt")
				coll := dataflow.Collection{Arity: 2, Oks: op.out, Errs: in.Errs}
				op.late = func() {
					var errs []error
					_, err := c.Input("in", 2)
					errs = append(errs, err)
					_, err = c.Arrange(coll, []int{0})
					errs = append(errs, err)
					if c.Exchange(op.out, []int{1}) != op.out {
						t.Error("Exchange after Build returned another stream")
					}
					c.Probe(dataflow.NewProbe(s.workers), op.out)
					c.CaptureChunks(dataflow.NewCapture(s.workers), op.out, 2)
					errs = append(errs, unbuilt.Build(&pass{}))
					_, err = c.ImportIndex("idx")
					errs = append(errs, err)
					if c.Worker() == 0 {
						returned = errs
					}
				}
				if err := b.Build(op); err != nil {
					return err
				}
				c.CaptureChunks(cp, op.out, 2)
				return nil
			},
		}})
		for tm := range int64(4) {
			s.send("in", 2, []int64{tm, 1, tm, tm})
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		if err := cp.WaitPassed(testCtx(t), 3); err != nil {
			t.Fatal(err)
		}
		got := s.syncedErrors(t)
		slices.Sort(got)
		got = slices.Compact(got)
		const pre = `dataflow late: operator "late": `
		const post = ` called after the dataflow's Build returned: a dataflow's operators are added by its Build only`
		var want []string
		for _, m := range []string{"Context.Input", "Context.Arrange", "Context.Exchange", "Context.Probe", "Context.Capture", `OperatorBuilder.Build of operator "unbuilt"`, "Context.ImportIndex"} {
			want = append(want, pre+m+post)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(returned) != 4 {
			t.Fatalf("the step's calls returned %v", returned)
		}
		for _, err := range returned {
			if !errors.Is(err, dataflow.ErrBuildReturned) {
				t.Errorf("a call returned %v, want dataflow.ErrBuildReturned", err)
			}
		}
		if !cp.Passed(3) || len(cp.At(3)) != 4 {
			t.Fatalf("the dataflow's capture is at %v with %v at 3, want past 3 with 4 rows", cp.Frontier(), cp.At(3))
		}
	})
}

// backOp forwards its input and returns the empty capability but at the
// first step whose input frontier is {3} or later, where it returns back
// ({1}: behind the {2} its output had announced) or, with no
// back, {100}: beyond what its input allows.
type backOp struct {
	in   *dataflow.Port[*dataflow.Chunk]
	out  *dataflow.Stream[*dataflow.Chunk]
	back bool
	done bool
}

func (o *backOp) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if !o.done && frontier.At(3).LessEqual(in) {
		o.done = true
		if o.back {
			return frontier.At(1)
		}
		return frontier.At(100)
	}
	return frontier.Empty()
}

func (o *backOp) Shutdown() {}

// An operator whose output frontier would go back (a capability returned
// behind what its output had announced) is the dataflow's error naming
// the operator, and its frontier stays where it was: nothing downstream
// sees a completed time open again. A capability beyond what the inputs
// allow is no error: the output frontier is the meet, and follows the
// input.
func TestAFrontierGoingBackIsRefused(t *testing.T) {
	for _, back := range []bool{false, true} {
		t.Run(map[bool]string{false: "beyond", true: "back"}[back], func(t *testing.T) {
			forEachSetup(t, func(t *testing.T, s *setup) {
				s.declare("in", 2)
				cp, q := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: dataflow.Desc{
					ID: "back", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx"},
					Build: func(c *dataflow.Context) error {
						in, err := c.Input("in", 2)
						if err != nil {
							return err
						}
						b := c.NewOperator("back")
						op := &backOp{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b), back: back}
						if err := b.Build(op); err != nil {
							return err
						}
						a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: in.Errs}, []int{1})
						if err != nil {
							return err
						}
						c.Capture(cp, a.Oks)
						return c.Export("idx", a)
					},
				}})
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), q)})
				for tm := range int64(5) {
					s.send("in", 2, []int64{tm, 1, tm, tm})
					s.advance("in", 2, frontier.At(uint64(tm+1)))
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
				}
				// Past 1 in both cases; past 4 with no error.
				last := uint64(1)
				if !back {
					last = 4
				}
				for _, c := range []*dataflow.Capture{cp, q} {
					if err := c.WaitPassed(testCtx(t), last); err != nil {
						t.Fatal(err)
					}
				}
				got := s.syncedErrors(t)
				slices.Sort(got)
				got = slices.Compact(got)
				if !back {
					if len(got) > 0 || cp.Frontier() != frontier.At(5) || q.Frontier() != frontier.At(5) {
						t.Fatalf("errors %q, frontiers %v and %v; want none, {5} and {5}", got, cp.Frontier(), q.Frontier())
					}
					return
				}
				want := []string{`dataflow back: operator "back": its output frontier went back from {2} to {1} (its capability {1}, its inputs' frontier {3}): a capability only advances; its output frontier is held at {2}`}
				if !slices.Equal(got, want) {
					t.Fatalf("errors\n%q\nwant\n%q", got, want)
				}
				if cp.Frontier() != frontier.At(2) || q.Frontier() != frontier.At(2) {
					t.Fatalf("frontiers %v and %v after the operator went back, want {2} held", cp.Frontier(), q.Frontier())
				}
				if n := len(cp.At(1)); n != 2 {
					t.Fatalf("the capture reads %d rows at 1, want 2", n)
				}
			})
		})
	}
}

// lateOp forwards its input and, at its second step after its input
// completed (its output frontier then {}), sends one more update at time
// 7.
type lateOp struct {
	in    *dataflow.Port[*dataflow.Chunk]
	out   *dataflow.Stream[*dataflow.Chunk]
	empty int
}

func (o *lateOp) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if in.IsEmpty() {
		if o.empty++; o.empty == 2 {
			c := dataflow.NewChunk(2, 1)
			c.Push([]int64{7, 7}, 7, 1)
			o.out.Send(c)
		}
	}
	return frontier.Empty()
}

func (o *lateOp) Shutdown() {}

// A chunk sent after the operator's output frontier became {} is at a
// time that frontier had passed: the reader refuses it, naming the
// operator (dataflow.ErrBadChunk), and what it read before stays.
func TestAChunkAfterTheEmptyFrontierIsRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "after", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("after")
				op := &lateOp{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b)}
				if err := b.Build(op); err != nil {
					return err
				}
				a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: in.Errs}, []int{1})
				if err != nil {
					return err
				}
				c.Capture(cp, a.Oks)
				return nil
			},
		}})
		s.send("in", 2, []int64{0, 1, 1, 1}, []int64{1, 1, 2, 2})
		s.advance("in", 2, frontier.Empty())
		// The capture completes once both workers' exchanges told it so.
		if err := cp.WaitPassed(testCtx(t), 7); err != nil {
			t.Fatal(err)
		}
		got := s.syncedErrors(t)
		// One worker and two alike: the arrangement's exchange refuses
		// it under the arrangement's name.
		want := []string{`dataflow after: arrange oks: chunk breaks the operator contract: operator "after" sent one with an update at time 7, which its stream's frontier {} had passed`}
		if !slices.Equal(slices.Compact(got), want) {
			t.Fatalf("errors\n%q\nwant\n%q", got, want)
		}
		if !cp.Frontier().IsEmpty() || len(cp.At(7)) != 2 {
			t.Fatalf("the capture is at %v with %v at 7, want {} with the 2 rows sent before", cp.Frontier(), cp.At(7))
		}
	})
}
