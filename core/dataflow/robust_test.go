package dataflow

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// arrangeCaptured is a dataflow arranging input "in" by column 0 into cp.
func arrangeCaptured(id string, cp *Capture) Desc {
	return Desc{ID: id, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		// By the second column: an input arranged by its first needs no
		// exchange (Stream.keyedBy).
		a, err := c.Arrange(in, []int{1})
		if err != nil {
			return err
		}
		c.Capture(cp, a.Oks)
		return nil
	}}
}

// TestRecreatedDataflowNeverJoinsTheOldExchange is case 1 of the robustness
// list, stepped by hand: worker 0 drops dataflow x and builds it again while
// worker 1 still runs the old incarnation. The new incarnation's exchange is
// its own: worker 1 then dropping the old one (which closes its sender) must
// not let worker 0's new receiver pass times worker 1 has not sent.
func TestRecreatedDataflowNeverJoinsTheOldExchange(t *testing.T) {
	hub := NewHub(2)
	envs := []*Env{testEnv(t, 0, 2, hub), testEnv(t, 1, 2, hub)}
	old := NewCapture(2)
	var olds [2]*Dataflow
	for w, env := range envs {
		df, err := Build(env, arrangeCaptured("x", old), 1)
		if err != nil {
			t.Fatal(err)
		}
		olds[w] = df
	}
	olds[0].Drop()
	fresh := NewCapture(2)
	df0, err := Build(envs[0], arrangeCaptured("x", fresh), 2)
	if err != nil {
		t.Fatal(err)
	}
	olds[1].Drop() // closes worker 1's sender of the old incarnation
	df1, err := Build(envs[1], arrangeCaptured("x", fresh), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer df0.Drop()
	defer df1.Drop()
	// Worker 0's input moves to 5; worker 1's has not moved.
	if err := envs[0].Inputs.Advance("in", frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		df0.Step()
	}
	if f := fresh.fronts[0]; f != frontier.Min() {
		t.Fatalf("worker 0's new incarnation passed to %v while worker 1 is at {0}", f)
	}
	if n := hub.Len(); n != 2 {
		t.Fatalf("%d exchanges in the hub, want the new incarnation's two (oks, errs)", n)
	}
}
