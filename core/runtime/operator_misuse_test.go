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
