package dataflow

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// tallyInput builds a dataflow that arranges input "in" and tallies it.
func tallyInput(env *Env, id string, tl *Tally) (*Dataflow, error) {
	return Build(env, Desc{ID: id, AsOf: frontier.Min(), Until: frontier.Empty(), Maintained: true, Build: func(c *Context) error {
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
}

// TestNoHistoryInputKeepsNothing: an input declared NoHistory gives every
// update to the dataflows reading it when it arrives and keeps none; a
// dataflow that starts reading it before its first update (after frontier
// advances without updates) is admitted, one after an update is refused
// with ErrInputHistory; an input with history replays it.
func TestNoHistoryInputKeepsNothing(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	if err := env.Inputs.DeclareWith("in", 2, InputOptions{NoHistory: true}); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	tl1, tl2 := NewTally(1), NewTally(1)
	df1, err := tallyInput(env, "first", tl1)
	if err != nil {
		t.Fatalf("a dataflow before any update: %v", err)
	}
	// A second reader admitted before the first update sees the same.
	df2, err := tallyInput(env, "second", tl2)
	if err != nil {
		t.Fatalf("a second dataflow before any update: %v", err)
	}
	if err := env.Inputs.Send("in", chunk([]int64{1, 1, 1, 10}, []int64{1, 1, 2, 20})); err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Advance("in", frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	df1.Step()
	df2.Step()
	for i, tl := range []*Tally{tl1, tl2} {
		if k, u, s, sat := tl.Counts(); k != 2 || u != 2 || s != 2 || sat || !tl.Passed(1) {
			t.Fatalf("reader %d: keys %d updates %d sum %d saturated %v passed(1) %v", i, k, u, s, sat, tl.Passed(1))
		}
	}
	if h := env.Inputs.logs["in"].history; len(h) != 0 {
		t.Fatalf("a NoHistory input kept %d chunks", len(h))
	}
	if _, err := tallyInput(env, "late", NewTally(1)); !errors.Is(err, ErrInputHistory) {
		t.Fatalf("a dataflow after an update: err %v, want ErrInputHistory", err)
	}
	// The refused dataflow left the readers as they were.
	if n := len(env.Inputs.logs["in"].subs); n != 2 {
		t.Fatalf("%d readers after a refused dataflow, want 2", n)
	}
}

// TestNoHistoryDeclaredAfterARead: NoHistory on an input a dataflow already
// read and was sent to drops the history kept so far, and later dataflows
// are refused; an input keeping its history replays it to a late reader.
func TestNoHistoryDeclaredAfterARead(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	tl := NewTally(1)
	df, err := tallyInput(env, "early", tl) // declares "in" with arity 2
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Send("in", chunk([]int64{0, 1, 1, 10})); err != nil {
		t.Fatal(err)
	}
	late := NewTally(1)
	ldf, err := tallyInput(env, "late", late)
	if err != nil {
		t.Fatalf("an input with history refused a late reader: %v", err)
	}
	if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	ldf.Step()
	if _, u, _, _ := late.Counts(); u != 1 {
		t.Fatalf("the late reader read %d updates of the history, want 1", u)
	}
	if err := env.Inputs.DeclareWith("in", 2, InputOptions{NoHistory: true}); err != nil {
		t.Fatal(err)
	}
	if h := env.Inputs.logs["in"].history; len(h) != 0 {
		t.Fatalf("NoHistory kept %d chunks of an existing history", len(h))
	}
	if _, err := tallyInput(env, "later", NewTally(1)); !errors.Is(err, ErrInputHistory) {
		t.Fatalf("a dataflow after the history was dropped: err %v, want ErrInputHistory", err)
	}
	if err := env.Inputs.DeclareWith("in", 3, InputOptions{NoHistory: true}); err == nil {
		t.Fatal("a second declaration with another arity was accepted")
	}
}
