package dataflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestOnDropRunsOnceAtEveryDrop: what a Build registers with
// Context.OnDrop runs once when the dataflow is dropped, and when its
// create fails after the registration; a registration after the Build
// returned adds nothing and is ErrBuildReturned.
func TestOnDropRunsOnceAtEveryDrop(t *testing.T) {
	var late *Context
	ran := 0
	desc := func(fail error) Desc {
		return Desc{ID: "d", AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *Context) error {
			late = c
			if err := c.OnDrop(func() { ran++ }); err != nil {
				return err
			}
			return fail
		}}
	}
	env := &Env{Worker: 0, Peers: 1, Manager: NewIndexManager(), Hub: NewHub(1), Activate: func(*Dataflow) {}, Wake: func() {}}
	env.Inputs = NewInputs(0, 1, env.Activate)
	df, err := Build(env, desc(nil), 1)
	if err != nil {
		t.Fatal(err)
	}
	if ran != 0 {
		t.Fatalf("ran %d times before the drop", ran)
	}
	if err := late.OnDrop(func() { ran += 100 }); !errors.Is(err, ErrBuildReturned) {
		t.Fatalf("OnDrop after the Build returned: %v, want ErrBuildReturned", err)
	}
	df.Drop()
	df.Drop()
	if ran != 1 {
		t.Fatalf("ran %d times after two drops, want 1", ran)
	}
	boom := errors.New("boom")
	if _, err := Build(env, desc(boom), 2); !errors.Is(err, boom) {
		t.Fatalf("Build: %v, want boom", err)
	}
	if ran != 2 {
		t.Fatalf("ran %d times after a failed create, want 2", ran)
	}
}

// TestADropHookThatPanicsLetsTheOthersRun: a drop hook that panics does
// not keep the hooks registered before it (run after it) from running; a
// dataflow with nowhere to report the panic (no Env.Fail) panics with it
// once every hook has run, as it does for an operator's Shutdown.
func TestADropHookThatPanicsLetsTheOthersRun(t *testing.T) {
	ran := 0
	env := &Env{Worker: 0, Peers: 1, Manager: NewIndexManager(), Hub: NewHub(1), Activate: func(*Dataflow) {}, Wake: func() {}}
	env.Inputs = NewInputs(0, 1, env.Activate)
	df, err := Build(env, Desc{ID: "d", AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *Context) error {
		if err := c.OnDrop(func() { ran++ }); err != nil {
			return err
		}
		return c.OnDrop(func() { panic("hook") })
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			p := recover()
			err, _ := p.(error)
			if !errors.Is(err, ErrOperatorPanicked) || !strings.HasPrefix(err.Error(), `dataflow d: operator "drop hook": OnDrop: operator panicked: hook`) {
				t.Errorf("drop panicked with %v, want the hook's ErrOperatorPanicked", p)
			}
		}()
		df.Drop()
	}()
	if ran != 1 {
		t.Errorf("the hook before the panicking one ran %d times, want 1", ran)
	}
}
