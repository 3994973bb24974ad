package runtime

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestDropInputFreesItsName: a dropped input's readers see its collection
// complete (their frontier {}), with what they read kept; its history
// goes (Stats.InputHistory); Input, AdvanceInput, AllowInputCompaction and
// DropInput of the name are refused by Send until a CreateInput declares
// it again, of any arity, and a dataflow created reading the dropped name
// fails (dataflow.ErrUndeclaredInput); the re-declared input starts empty.
// A thousand inputs declared, sent to and dropped leave none behind on any
// worker or in the controller. Solo and the pair alike, on one and two
// workers.
func TestDropInputFreesItsName(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		cp := dataflow.NewCapture(s.workers)
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: captureInput("early", 0, cp)})
		s.send("in", 2, []int64{0, 1, 1, 10}, []int64{1, 2, 2, 20})
		s.advance("in", 2, frontier.At(2))
		s.must(DropInput{Name: "in"})
		if err := cp.Probe.WaitPassed(ctx, math.MaxUint64); err != nil {
			t.Fatalf("the dropped input's reader: %v", err)
		}
		if got := accumulated(t, cp, 5); !maps.Equal(got, map[string]int64{"[1 10]": 1, "[2 20]": 2}) {
			t.Fatalf("the dropped input's reader holds %v", got)
		}
		if st, err := s.rts[0].Stats(ctx); err != nil || st.InputHistory != 0 {
			t.Fatalf("after the drop the inputs keep %d updates (%v)", st.InputHistory, err)
		}
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{3, 30}, 5, 1)
		for _, cmd := range []Command{
			Input{Name: "in", Chunk: c},
			AdvanceInput{Name: "in", Frontier: frontier.At(9)},
			AllowInputCompaction{Name: "in", Frontier: frontier.At(9)},
			DropInput{Name: "in"},
		} {
			if err := s.ctl.Send(cmd); err == nil || !strings.Contains(err.Error(), `"in": unknown input`) {
				t.Fatalf("%T of the dropped input: %v, want an unknown input", cmd, err)
			}
		}
		s.must(CreateDataflow{Desc: captureInput("late", 0, dataflow.NewCapture(s.workers))})
		errs := s.ctl.TakeErrors()
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		errs = append(errs, s.ctl.TakeErrors()...)
		if len(errs) != 1 || !errors.Is(errs[0].Err, dataflow.ErrUndeclaredInput) {
			t.Fatalf("a dataflow reading the dropped input: errors %v, want one dataflow.ErrUndeclaredInput", errs)
		}
		// Declared again, of another arity: a new input, empty.
		s.must(CreateInput{Name: "in", Arity: 3})
		again := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "again", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 3)
				if err != nil {
					return err
				}
				a, err := c.Arrange(in, []int{0})
				if err != nil {
					return err
				}
				c.Capture(again, a.Oks)
				return nil
			},
		}})
		c3 := dataflow.NewChunk(3, 1)
		c3.Push([]int64{4, 40, 400}, 3, 1)
		s.must(Input{Name: "in", Chunk: c3})
		s.must(AdvanceInput{Name: "in", Frontier: frontier.At(4)})
		if err := again.Probe.WaitPassed(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if got := accumulated(t, again, 3); !maps.Equal(got, map[string]int64{"[4 40 400]": 1}) {
			t.Fatalf("the input declared again reads %v, want its own update only", got)
		}
		// Many inputs, each declared, sent to and dropped.
		for i := range 1000 {
			name := fmt.Sprintf("tmp%d", i)
			s.must(CreateInput{Name: name, Arity: 1})
			ch := dataflow.NewChunk(1, 1)
			ch.Push([]int64{int64(i)}, 0, 1)
			s.must(Input{Name: name, Chunk: ch})
			s.must(DropInput{Name: name})
		}
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		s.ctl.mu.Lock()
		declared := len(s.ctl.inputs)
		s.ctl.mu.Unlock()
		if declared != 1 {
			t.Fatalf("the controller keeps %d inputs, want 1", declared)
		}
		for _, r := range s.rts {
			for i, w := range r.workers {
				if n := w.env.Inputs.Len(); n != 1 {
					t.Fatalf("%v runtime, worker %d: %d inputs kept", r.Role(), i, n)
				}
			}
		}
	})
}

// TestDropInputAgreesWhicheverRuntimeLags: an input dropped under its
// index, declared again at another arity, fed, allowed to compact and
// read by an index created late at its since, gives Solo and the pair
// (either runtime paused while the commands arrive) the same answers and
// the same errors: the old index keeps what it read, the new one reads the
// new input's collection, and a create reading before the since is
// refused alike.
func TestDropInputAgreesWhicheverRuntimeLags(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
				s.advance("in", 2, frontier.At(1))
				s.must(CreateDataflow{Desc: indexDesc("old", "in", 2, []int{0}, 0, nil)})
				s.must(DropInput{Name: "in"})
				s.must(CreateInput{Name: "in", Arity: 3})
				for tm := range int64(3) {
					c := dataflow.NewChunk(3, 1)
					c.Push([]int64{tm, tm * 10, tm * 100}, uint64(tm), 1)
					s.must(Input{Name: "in", Chunk: c})
				}
				s.must(AdvanceInput{Name: "in", Frontier: frontier.At(3)})
				s.must(AllowInputCompaction{Name: "in", Frontier: frontier.At(2)})
				s.must(CreateDataflow{Desc: indexDesc("new", "in", 3, []int{0}, 2, nil)})
				s.must(CreateDataflow{Desc: indexDesc("early", "in", 3, []int{0}, 1, nil)})
				cpOld, cpNew := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("q old", "old", 0, frontier.Empty(), cpOld)})
				s.must(CreateDataflow{Desc: readDesc("q new", "new", 2, frontier.Empty(), cpNew)})
				s.resume()
				return "old " + read(cpOld, 5) + "; new " + read(cpNew, 2)
			})
			want := "old map[[1 10]:1 [2 20]:1]; new map[[0 0 0]:1 [1 10 100]:1 [2 20 200]:1]"
			for w, o := range outs {
				if o.answer != want {
					t.Errorf("workers=%d: %s\nwant %s", w, o.answer, want)
				}
				if len(o.errs) != 1 || !strings.Contains(o.errs[0], "ErrInputCompacted") && !strings.Contains(o.errs[0], "compact beyond") {
					t.Errorf("workers=%d: errors %q, want the early index's refusal only", w, o.errs)
				}
			}
		})
	}
}
