package dataflow

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestTallyReadsEachBatchAsPresented: a tally over an arrangement counts the
// keys, the updates and the net diff of every sealed batch, once each, and
// its frontier follows the stream's.
func TestTallyReadsEachBatchAsPresented(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	tl := NewTally(1)
	if err := env.Inputs.Declare("in", 2); err != nil {
		t.Fatal(err)
	}
	df, err := Build(env, Desc{ID: "d", AsOf: frontier.Min(), Until: frontier.Empty(), Maintained: true, Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		arr, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		c.Tally(tl, arr.Oks)
		return nil
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Time 0: keys 1 and 2, three updates, net +1; time 1: key 1 retracted.
	if err := env.Inputs.Send("in", chunk([]int64{0, 1, 1, 10}, []int64{0, 1, 1, 11}, []int64{0, -1, 2, 20})); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	if k, u, s, sat := tl.Counts(); k != 2 || u != 3 || s != 1 || sat || !tl.Passed(0) || tl.Passed(1) {
		t.Fatalf("after time 0: keys %d updates %d sum %d saturated %v passed(0) %v passed(1) %v", k, u, s, sat, tl.Passed(0), tl.Passed(1))
	}
	if err := env.Inputs.Send("in", chunk([]int64{1, -1, 1, 10})); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Advance("in", frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	df.Step() // a step with nothing new reads nothing twice
	if k, u, s, sat := tl.Counts(); k != 3 || u != 4 || s != 0 || sat || !tl.Passed(1) {
		t.Fatalf("after time 1: keys %d updates %d sum %d saturated %v passed(1) %v", k, u, s, sat, tl.Passed(1))
	}
}
