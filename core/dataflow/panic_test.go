package dataflow_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// panicky is an operator of no inputs whose Step panics with value once
// it is armed, and whose Shutdown panics with shut (when not nil).
type panicky struct {
	armed bool
	value any
	shut  any
}

func (o *panicky) Step(frontier.Frontier) frontier.Frontier {
	if o.armed {
		panic(o.value)
	}
	return frontier.Empty()
}

func (o *panicky) Shutdown() {
	if o.shut != nil {
		panic(o.shut)
	}
}

// A panic in an operator's Step or Shutdown is the dataflow's error
// (ErrOperatorPanicked), but one an invariant build's check raised
// (invariants.IsViolation) is the engine's own bug and panics on, out of
// the dataflow's Step or Drop, so that an invariant build's tests stop
// where it is found rather than read it as one dataflow's failure.
func TestAnInvariantViolationIsNoOperatorsError(t *testing.T) {
	for _, c := range []struct {
		value     string
		violation bool
	}{{"boom", false}, {"invariant violated: a check", true}} {
		for _, where := range []string{"Step", "Shutdown"} {
			t.Run(fmt.Sprintf("%s/%s", c.value, where), func(t *testing.T) {
				var failed []error
				env := &dataflow.Env{
					Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
					Activate: func(*dataflow.Dataflow) {}, Wake: func() {},
					Fail: func(_ string, err error) { failed = append(failed, err) },
				}
				env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
				op := &panicky{value: c.value}
				df, err := dataflow.Build(env, dataflow.Desc{
					ID: "p", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						b := c.NewOperator("panicky")
						dataflow.AddOutput[*dataflow.Chunk](b)
						return b.Build(op)
					},
				}, 1)
				if err != nil {
					t.Fatal(err)
				}
				var recovered any
				func() {
					defer func() { recovered = recover() }()
					if where == "Step" {
						op.armed = true
						df.Step()
					} else {
						op.shut = c.value
						df.Drop()
					}
				}()
				if c.violation {
					if recovered != c.value || len(failed) != 0 {
						t.Fatalf("%s panicked with %v and reported %v: want the violation to panic on, unreported", where, recovered, failed)
					}
					return
				}
				if recovered != nil || len(failed) != 1 || !errors.Is(failed[0], dataflow.ErrOperatorPanicked) {
					t.Fatalf("%s panicked with %v and reported %v: want one ErrOperatorPanicked", where, recovered, failed)
				}
				if where == "Step" {
					df.Drop()
				}
			})
		}
	}
}

// The stack of an operator's panic starts at the frame that panicked
// (the operator's Step), not at the runtime's panic or the recover above
// it.
func TestAPanicsStackStartsWhereItPanicked(t *testing.T) {
	var failed []error
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {},
		Fail: func(_ string, err error) { failed = append(failed, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	op := &panicky{value: "boom"}
	df, err := dataflow.Build(env, dataflow.Desc{
		ID: "p", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("panicky")
			dataflow.AddOutput[*dataflow.Chunk](b)
			return b.Build(op)
		},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	op.armed = true
	df.Step()
	defer df.Drop()
	var ps interface{ PanicStack() string }
	if len(failed) != 1 || !errors.As(failed[0], &ps) {
		t.Fatalf("Step reported %v: want one error with a PanicStack", failed)
	}
	first, _, _ := strings.Cut(ps.PanicStack(), "\n")
	if !strings.Contains(first, "(*panicky).Step(") {
		t.Errorf("the stack starts with %q, want the frame of panicky.Step:\n%s", first, ps.PanicStack())
	}
}
