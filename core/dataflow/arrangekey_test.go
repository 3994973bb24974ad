package dataflow

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestExportRefusesARepeatedKeyColumn: an arrangement keyed by a column
// twice (Arrange allows it: a linear join's stream key may repeat a
// column) has halves wider than its collection, key ++ val; exported, its
// importers took the value arity as the collection's columns minus the
// key's (here 2 - 2 = 0, where the batches carry 1), so an imported
// arrangement misdescribed its rows. Exporting one is a Build error.
func TestExportRefusesARepeatedKeyColumn(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	if err := env.Inputs.Declare("in", 2); err != nil {
		t.Fatal(err)
	}
	_, err := Build(env, Desc{ID: "f", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		a, err := c.Arrange(in, []int{1, 1})
		if err != nil {
			return err
		}
		return c.Export("idx", a)
	}}, 0)
	if want := `dataflow f: export "idx": key column 1 listed twice`; err == nil || err.Error() != want {
		t.Fatalf("Build error %v, want %q", err, want)
	}
	if env.Manager.Len() != 0 {
		t.Fatal("the refused export was recorded")
	}
}

// TestArrangeAndExchangeCopyTheirColumns: Arrange and Exchange read their
// key columns at every step, and kept the caller's slice to do it, so a
// Build reusing one slice for several calls (key[0] = 1 between two
// Arranges) rearranged the first arrangement by the second's key: its
// rows came out keyed and valued by column 1 ([2 2] for [1 2]), and an
// exchange hashed by whatever the slice held when a chunk came.
func TestArrangeAndExchangeCopyTheirColumns(t *testing.T) {
	hub := NewHub(2)
	envs := []*Env{testEnv(t, 0, 2, hub), testEnv(t, 1, 2, hub)}
	cp := NewCapture(2)
	var dfs []*Dataflow
	for _, env := range envs {
		df, err := Build(env, Desc{ID: "f", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			cols := []int{1}
			moved := c.Exchange(in.Oks, cols)
			cols[0] = 5 // no column of a 2-column row
			key := []int{0}
			a, err := c.Arrange(Collection{Oks: moved, Errs: in.Errs, Arity: 2}, key)
			if err != nil {
				return err
			}
			key[0] = 1
			if _, err := c.Arrange(in, key); err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		dfs = append(dfs, df)
	}
	for _, env := range envs {
		if err := env.Inputs.Send("in", chunk([]int64{0, 1, 1, 2}, []int64{0, 1, 3, 4})); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		for _, df := range dfs {
			df.Step()
		}
	}
	if !cp.Passed(0) {
		t.Fatalf("capture at %v, want past 0", cp.Frontier())
	}
	if got, want := formatRows(cp.At(0)), "[1 2]:1 [3 4]:1"; got != want {
		t.Errorf("At(0) = %s, want %s", got, want)
	}
	for _, df := range dfs {
		df.Drop()
	}
}
