package runtime

import (
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// The Interactive runtime gets AllowCompaction without a wake of its own
// (Controller.Send); the Maintenance worker wakes it once it applied the
// command. With no query and no input after it, nothing else wakes the
// Interactive runtime, so the peer hold on the publication moving to the
// allowed frontier shows that wake happens — without a barrier, which would
// wake it too.
func TestQuietCompactionReachesThePeerHold(t *testing.T) {
	for _, w := range []int{1, 2} {
		m, _, ctl, err := Pair(w, spine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ctl.Shutdown)
		ctx := testCtx(t)
		p := dataflow.NewProbe(w)
		mustSendT(t, ctl, CreateInput{Name: "in", Arity: 2})
		mustSendT(t, ctl, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, p)})
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{1, 2}, 3, 1)
		mustSendT(t, ctl, Input{Name: "in", Chunk: c})
		mustSendT(t, ctl, AdvanceInput{Name: "in", Frontier: frontier.At(10)})
		if err := p.WaitPassed(ctx, 9); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		mustSendT(t, ctl, AllowCompaction{ID: "idx", Frontier: frontier.At(7)})
		for i, reg := range m.opts.Registries {
			slot := reg.Lookup("idx", frontier.Min())
			if slot == nil {
				t.Fatalf("workers=%d: worker %d publishes no idx", w, i)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				logical, _ := slot.Oks().RemoteHolds()
				if logical.Frontier() == frontier.At(7) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("workers=%d: worker %d: remote logical hold %v, want {7}: the Interactive runtime never applied AllowCompaction", w, i, logical.Frontier())
				}
				time.Sleep(time.Millisecond)
			}
		}
		if err := ctl.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// SendAll sends a valid prefix and stops at the first command refused, as
// Send one at a time would: the refused command and the ones after it reach
// no runtime.
func TestSendAllStopsAtTheFirstRefusal(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		s.declare("in", 2)
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{1, 2}, 0, 1)
		err := s.ctl.SendAll(
			AdvanceInput{Name: "in", Frontier: frontier.At(5)},
			AdvanceInput{Name: "in", Frontier: frontier.At(3)}, // back: refused
			CreateInput{Name: "later", Arity: 1},
		)
		if err == nil {
			t.Fatal("SendAll accepted a frontier moving back")
		}
		// The first command was sent: the controller refuses a row before 5.
		if err := s.ctl.Send(Input{Name: "in", Chunk: c}); err == nil {
			t.Fatal("the advance before the refusal was not sent")
		}
		// The command after the refusal was not: "later" is undeclared.
		if err := s.ctl.Send(AdvanceInput{Name: "later", Frontier: frontier.At(1)}); err == nil {
			t.Fatal("a command after the refusal was sent")
		}
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.ctl.Err(); err != nil {
			t.Fatalf("runtime errors: %v", err)
		}
	})
}

func mustSendT(t *testing.T, ctl *Controller, cmd Command) {
	t.Helper()
	if err := ctl.Send(cmd); err != nil {
		t.Fatal(err)
	}
}
