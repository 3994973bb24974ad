package dataflow

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestANewArrangementStartsCompactedAtItsAsOf is D5: an index maintained
// from as_of {5} says so in its own compaction frontier, so a Maintained
// importer at {3}, whose since is the bundle's alone (no query's as_of of
// the index joined in), is refused as a query would be, and one at {5} is
// not. Only the compaction the arrangement starts with guards the
// Maintained importer: queries had the entry's as_of joined in besides.
func TestANewArrangementStartsCompactedAtItsAsOf(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	idx, err := Build(env, Desc{ID: "idx5", Maintained: true, AsOf: frontier.At(5), Until: frontier.Empty(), Exports: []string{"idx"}, Build: func(c *Context) error {
		in, err := c.Input("in", 1)
		if err != nil {
			return err
		}
		a, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		if got := a.Oks.Reader.LogicalCompaction(); got != frontier.At(5) {
			t.Errorf("oks half compacted to %v, want {5}", got)
		}
		if got := a.Errs.Reader.LogicalCompaction(); got != frontier.At(5) {
			t.Errorf("errs half compacted to %v, want {5}", got)
		}
		return c.Export("idx", a)
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := func(id string, asOf frontier.Frontier, maintained bool) error {
		df, err := Build(env, Desc{ID: id, Maintained: maintained, AsOf: asOf, Until: frontier.Empty(), Build: func(c *Context) error {
			a, err := c.ImportIndex("idx")
			if err != nil {
				return err
			}
			c.Hold(a.Oks)
			return nil
		}}, 0)
		if err == nil {
			df.Drop()
		}
		return err
	}
	for _, maintained := range []bool{true, false} {
		if err := read("early", frontier.At(3), maintained); !errors.Is(err, ErrCompactedBeyondAsOf) {
			t.Errorf("maintained=%v importer at {3} of an index from {5}: err = %v, want ErrCompactedBeyondAsOf", maintained, err)
		}
		if err := read("at", frontier.At(5), maintained); err != nil {
			t.Errorf("maintained=%v importer at {5} of an index from {5}: %v", maintained, err)
		}
	}
	idx.Drop()
	if env.Manager.Len() != 0 {
		t.Fatal("dropping the dataflow kept its index")
	}
}
