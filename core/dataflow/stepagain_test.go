package dataflow_test

import (
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// slowSource does one unit of its work a step and sends nothing until the
// last: an operator that yields (a Step does bounded work), holding its
// capability at 0 until it has sent.
type slowSource struct {
	left  int
	again func()
	out   *dataflow.Stream[*dataflow.Chunk]
}

func (o *slowSource) Step(frontier.Frontier) frontier.Frontier {
	if o.left == 0 {
		return frontier.Empty()
	}
	o.left--
	if o.left > 0 {
		o.again()
		return frontier.At(0)
	}
	c := dataflow.NewChunk(1, 1)
	c.Push([]int64{42}, 0, 1)
	o.out.Send(c)
	return frontier.Empty()
}

func (o *slowSource) Shutdown() {}

// TestStepAgainKeepsAYieldingOperatorStepped: an operator that leaves work
// for its next step and sends nothing meanwhile calls the function
// OperatorBuilder.StepAgain returned, so each pass counts as moving: the
// dataflow's Step runs PassesPerActivation passes and reports true until
// the work is done, then false, and the output arrives with the
// operator's frontier passing 0. Without the call the first Step's passes
// stop after one (nothing moved) and report false with the work left.
func TestStepAgainKeepsAYieldingOperatorStepped(t *testing.T) {
	const work = 3*dataflow.PassesPerActivation + 2
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	cp := dataflow.NewCapture(1)
	op := &slowSource{left: work}
	df, err := dataflow.Build(env, dataflow.Desc{
		ID: "slow", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("slow source")
			op.again = b.StepAgain()
			op.out = dataflow.AddOutput[*dataflow.Chunk](b)
			dataflow.AddOutput[*dataflow.Chunk](b) // its errors: none
			if err := b.Build(op); err != nil {
				return err
			}
			c.CaptureChunks(cp, op.out, 1)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	steps := 0
	for df.Step() {
		steps++
		if steps > work {
			t.Fatalf("the dataflow still moves after %d Steps", steps)
		}
	}
	if op.left != 0 {
		t.Fatalf("the dataflow stopped moving with %d units of work left", op.left)
	}
	if steps < 2 {
		t.Errorf("%d Steps reported moving, want at least 2 for %d passes of work", steps, work)
	}
	if !cp.Passed(0) {
		t.Fatalf("the output has not passed 0 (frontier %v)", cp.Frontier())
	}
	if n := cp.At(0); len(n) != 1 {
		t.Fatalf("output at 0: %v, want the one row", n)
	}
}
