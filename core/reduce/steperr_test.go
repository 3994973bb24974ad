package reduce

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// replayTwice sends its batch, inserted into its trace first, at its
// first step and again at its second: a stream that breaks the
// exactly-once contract.
type replayTwice struct {
	out   *dataflow.Stream[*batch.Batch]
	w     *trace.Writer
	b     *batch.Batch
	steps int
}

func (o *replayTwice) Step(frontier.Frontier) frontier.Frontier {
	o.steps++
	switch o.steps {
	case 1:
		if err := o.w.Insert(o.b); err != nil {
			panic(err)
		}
		o.out.Send(o.b)
		return o.b.Upper()
	case 2:
		o.out.Send(o.b)
	}
	return frontier.Empty()
}

func (o *replayTwice) Shutdown() {}

// TestAReduceStepErrorNamesThePackageOnce: a reduce whose stream delivers
// a batch twice stops with ErrOrder, the dataflow's error naming the
// operator, and its text says "reduce: " once: it read `reduce: operator
// "sum": reduce: stream batch out of order ...`, the operator's wrapping
// adding the package's prefix to an error that had it.
func TestAReduceStepErrorNamesThePackageOnce(t *testing.T) {
	var failed []error
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { failed = append(failed, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	ar := batch.Arity{Key: 1, Val: 1}
	h, w := trace.NewSpine(ar, spine.Options{})
	bld := batch.NewBuilder(ar, 1)
	bld.Push([]int64{1}, []int64{10}, 0, 1)
	b, err := bld.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	stats := NewStats("q", "sum")
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			ob := c.NewOperator("replay")
			op := &replayTwice{w: w, b: b, out: dataflow.AddOutput[*batch.Batch](ob)}
			if err := ob.Build(op); err != nil {
				return err
			}
			a := &dataflow.Arrangement{Key: []int{0}, Arity: 2, Oks: dataflow.Arranged{Stream: op.out, Reader: h, Pres: batch.Identity(), Arity: ar}}
			_, err := AddReduce(c, a, []Aggregate{{Fn: Sum, Col: 0}}, OperatorOptions{Name: "sum", Dataflow: "q", Stats: stats})
			return err
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for range 5 {
		df.Step()
	}
	if len(failed) != 1 || !errors.Is(failed[0], ErrOrder) {
		t.Fatalf("dataflow errors %v, want one ErrOrder", failed)
	}
	if got, want := failed[0].Error(), `operator "sum": reduce: stream batch out of order: batch [{0}, {1}) since {0} after the stream reached {1}`; got != want {
		t.Fatalf("dataflow error\n%s\nwant\n%s", got, want)
	}
}
