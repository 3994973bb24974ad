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
