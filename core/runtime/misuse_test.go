package runtime

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// A pointer to a command is a Command too (its methods are the value's),
// and so is a type embedding one; no worker applies either. The controller
// refuses them at Send, naming the type, and records nothing of them: the
// same CreateInput sent by value afterwards is accepted.
func TestACommandNotSentByValueIsRefused(t *testing.T) {
	type wrapped struct{ CreateInput }
	var nilInput *Input
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			for _, cmd := range []Command{&CreateInput{Name: "in", Arity: 1}, nilInput, wrapped{CreateInput{Name: "in", Arity: 1}}, &DropDataflow{ID: "x"}} {
				err := s.ctl.Send(cmd)
				if err == nil || !strings.Contains(err.Error(), "command of type") {
					t.Fatalf("Send(%T) = %v, want a refusal naming the type", cmd, err)
				}
				if err := s.ctl.SendAll(cmd); err == nil {
					t.Fatalf("SendAll(%T) accepted it", cmd)
				}
			}
			if err := s.ctl.Send(CreateInput{Name: "in", Arity: 1}); err != nil {
				t.Fatalf("CreateInput by value after the refusals: %v", err)
			}
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.Errors(); len(errs) != 0 {
				t.Fatalf("errors %v", errs)
			}
		})
	}
}

// A Build that exports an id twice, or an id Desc.Exports does not list
// that a query's index already has, fails alike in Solo and in the pair:
// the export makes nothing, and the create's error names both lists. Made,
// the second export of an id was the registry's error in the pair (an
// incarnation published twice) and the manager's in Solo, and a query's
// index, which the Maintenance runtime does not hold, collided in Solo
// only.
func TestAnExportBuildRepeatsOrTakesIsOneErrorEverywhere(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			s.send("in", 2, []int64{0, 1, 1, 10})
			s.advance("in", 2, frontier.At(1))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "copy", AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx copy"},
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					return c.Export("idx copy", a)
				},
			}})
			s.must(CreateDataflow{Desc: exportsDesc("twice", []string{"a"}, []string{"a", "a"})})
			s.must(CreateDataflow{Desc: exportsDesc("takes", []string{"b"}, []string{"b", "idx copy"})})
			return ""
		})
		want := []string{
			`dataflow takes: Desc.Exports ["b"], Build exported ["b" "idx copy"]: dataflow: exports differ from Desc.Exports`,
			`dataflow twice: Desc.Exports ["a"], Build exported ["a" "a"]: dataflow: exports differ from Desc.Exports`,
		}
		for w, o := range outs {
			if !slices.Equal(o.errs, want) {
				t.Fatalf("lag %v, workers=%d: errors\n%s\nwant\n%s", lag, w, strings.Join(o.errs, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// The zero Controller has no runtimes: Send and SendAll panicked on its
// nil maps, and Sync returned nil, as if everything sent had been applied.
// They return ErrNoRuntimes; the calls that read or end nothing return
// nothing.
func TestTheZeroControllerRefusesCommands(t *testing.T) {
	var c Controller
	if err := c.Send(CreateInput{Name: "in", Arity: 1}); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("Send: %v, want ErrNoRuntimes", err)
	}
	if err := c.SendAll(CreateInput{Name: "in", Arity: 1}, AdvanceInput{Name: "in", Frontier: frontier.At(1)}); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("SendAll: %v, want ErrNoRuntimes", err)
	}
	if err := c.Sync(testCtx(t)); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("Sync: %v, want ErrNoRuntimes", err)
	}
	if err := c.SyncRole(testCtx(t), Solo); err == nil {
		t.Error("SyncRole: nil, want an error")
	}
	if errs, err := c.Errors(), c.Err(); len(errs) != 0 || err != nil {
		t.Errorf("Errors %v, Err %v: want none", errs, err)
	}
	c.Shutdown()
	c.Shutdown()
}
