package runtime

import (
	"strings"
	"testing"
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
