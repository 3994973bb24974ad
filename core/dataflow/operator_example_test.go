package dataflow_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// countPerKey is an operator written outside core/dataflow with its
// exported API only: it reads an arrangement's batches and emits, for every
// update, its key with the update's diff, so that the accumulated output is
// the number of updates per key (their multiplicities summed). It holds no
// capability of its own: it emits only in response to input.
type countPerKey struct {
	in   *dataflow.Port[*batch.Batch]
	pres batch.Presentation
	out  *dataflow.Stream[*dataflow.Chunk]
}

func (o *countPerKey) Step(frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		out := dataflow.NewChunk(b.Arity().Key, b.Len())
		for cur := b.Cursor(); cur.KeyValid(); cur.StepKey() {
			for ; cur.ValValid(); cur.StepVal() {
				times, diffs := cur.Updates()
				for i, t := range times {
					if pt, ok := o.pres.Present(t); ok {
						out.Push(cur.Key(), pt, diffs[i])
					}
				}
			}
		}
		if out.Len() > 0 {
			o.out.Send(out)
		}
	}
	return frontier.Empty()
}

func (o *countPerKey) Shutdown() {}

// CountPerKey adds the operator over a's oks and returns its output as a
// collection of one-column rows (the key) with no errors of its own.
func CountPerKey(c *dataflow.Context, a *dataflow.Arrangement) (dataflow.Collection, error) {
	b := c.NewOperator("count per key")
	op := &countPerKey{in: dataflow.AddInput(b, "arranged", a.Oks.Stream), pres: a.Oks.Pres}
	op.out = dataflow.AddOutput[*dataflow.Chunk](b)
	errs := dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(op); err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: len(a.Key), Oks: op.out, Errs: errs}, nil
}

// TestOperatorOutsideThePackage builds an input, its arrangement, the
// count-per-key operator and an arrangement of its output on one worker,
// and checks the counts at each time.
func TestOperatorOutsideThePackage(t *testing.T) {
	var failed []error
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(_ string, err error) { failed = append(failed, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	cp := dataflow.NewCapture(1)
	chunks := dataflow.NewProbe(1) // on the operator's output, a chunk stream
	df, err := dataflow.Build(env, dataflow.Desc{
		ID: "count", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("edges", 2)
			if err != nil {
				return err
			}
			edges, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			counts, err := CountPerKey(c, edges)
			if err != nil {
				return err
			}
			c.Probe(chunks, counts.Oks)
			arranged, err := c.Arrange(counts, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, arranged.Oks)
			return nil
		},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	ch := dataflow.NewChunk(2, 5)
	for _, r := range [][4]int64{{0, 1, 1, 2}, {0, 1, 1, 3}, {0, 1, 2, 3}, {1, -1, 1, 2}, {1, 1, 4, 4}} {
		ch.Push([]int64{r[2], r[3]}, uint64(r[0]), r[1])
	}
	if err := env.Inputs.Send("edges", ch); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Advance("edges", frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	for df.Step() {
	}
	if !cp.Passed(1) || chunks.Frontier() != frontier.At(2) {
		t.Fatalf("capture at %v, probe of the counts at %v; want past 1 and {2}", cp.Frontier(), chunks.Frontier())
	}
	for tm, want := range []string{"[{[1] 2} {[2] 1}]", "[{[1] 1} {[2] 1} {[4] 1}]"} {
		if got := fmt.Sprint(cp.At(uint64(tm))); got != want {
			t.Errorf("counts at %d: %s, want %s", tm, got, want)
		}
	}
	if len(failed) > 0 {
		t.Fatal(failed)
	}
}

// portWatch records its port's frontier at every step.
type portWatch struct {
	in   *dataflow.Port[*dataflow.Chunk]
	seen []frontier.Frontier
}

func (o *portWatch) Step(frontier.Frontier) frontier.Frontier {
	o.in.Take()
	o.seen = append(o.seen, o.in.Frontier())
	return frontier.Empty()
}

func (o *portWatch) Shutdown() {}

// TestOperatorBuilderContract: a port reports its name and its stream's
// frontier; Build twice is an error; the activator activates the dataflow.
func TestOperatorBuilderContract(t *testing.T) {
	activated := 0
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) { activated++ }, Wake: func() {},
		Fail: func(_ string, err error) { t.Error(err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	w := &portWatch{}
	var activate func()
	df, err := dataflow.Build(env, dataflow.Desc{
		ID: "watch", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 1)
			if err != nil {
				return err
			}
			b := c.NewOperator("watch")
			w.in = dataflow.AddInput(b, "rows", in.Oks)
			activate = b.Activator()
			if err := b.Build(w); err != nil {
				return err
			}
			if err := b.Build(w); !errors.Is(err, dataflow.ErrOperatorBuilt) {
				return fmt.Errorf("second Build: %v, want ErrOperatorBuilt", err)
			}
			return nil
		},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	if w.in.Name() != "rows" {
		t.Fatalf("port name %q", w.in.Name())
	}
	if err := env.Inputs.Advance("in", frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	if got := w.seen[len(w.seen)-1]; got != frontier.At(3) {
		t.Fatalf("port frontier %v after the input moved to {3}", got)
	}
	before := activated
	activate()
	if activated != before+1 {
		t.Fatal("the activator did not activate the dataflow")
	}
}

// TestOperatorBuiltAfterItsReaderIsAnError: construction order must be a
// topological order, so reading an operator's output before building it
// fails the build with an error naming both operators.
func TestOperatorBuiltAfterItsReaderIsAnError(t *testing.T) {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {},
		Fail: func(_ string, err error) { t.Error(err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	_, err := dataflow.Build(env, dataflow.Desc{
		ID: "order", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 1)
			if err != nil {
				return err
			}
			first := c.NewOperator("first")
			dataflow.AddInput(first, "rows", in.Oks)
			out := dataflow.AddOutput[*dataflow.Chunk](first)
			second := c.NewOperator("second")
			w := &portWatch{in: dataflow.AddInput(second, "rows", out)}
			if err := second.Build(w); err != nil {
				return err
			}
			return first.Build(&portWatch{in: w.in})
		},
	}, 1)
	if want := `dataflow order: operator "second" reads operator "first", which is not built before it`; err == nil || err.Error() != want {
		t.Fatalf("Build = %v, want %q", err, want)
	}
}
