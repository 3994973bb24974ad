package join_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/spine"
)

// TestJoinErrsMustBeErrorHalves: OperatorOptions.Errs lists the error
// arrangements a join forwards. An oks half given there (an easy slip:
// r.Oks for r.Errs) was accepted, and the join forwarded the key column
// of every ok row as an error code (rows (0 ...), (1 ...), (2 ...) came
// out as errors 0, 1 and 2, code 0 being no error at all) with no error
// of the create; a zero Arranged panicked in the Build (a nil
// dereference, the create's ErrBuildPanicked). Both fail the create with
// ErrArity naming the entry, for Join and DeltaJoin (fused on one worker,
// staged on two), in Solo and the pair alike; the errs halves themselves
// still join.
func TestJoinErrsMustBeErrorHalves(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				var ctl *runtime.Controller
				var err error
				if mode == "solo" {
					r, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					if ctl, err = runtime.NewController(r); err != nil {
						t.Fatal(err)
					}
				} else if _, _, ctl, err = runtime.Pair(w, spine.Options{}); err != nil {
					t.Fatal(err)
				}
				defer ctl.Shutdown()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				must := func(err error) {
					t.Helper()
					if err != nil {
						t.Fatal(err)
					}
				}
				must(ctl.Send(runtime.CreateInput{Name: "r", Arity: 2}))
				ch := dataflow.NewChunk(2, 3)
				for k := range int64(3) {
					ch.Push([]int64{k, 10 + k}, 0, 1)
				}
				must(ctl.Send(runtime.Input{Name: "r", Chunk: ch}))
				must(ctl.Send(runtime.AdvanceInput{Name: "r", Frontier: frontier.At(1)}))
				must(ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "index", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"r"},
					Build: func(c *dataflow.Context) error {
						in, err := c.Input("r", 2)
						if err != nil {
							return err
						}
						a, err := c.Arrange(in, []int{0})
						if err != nil {
							return err
						}
						return c.Export("r", a)
					}}}))
				for _, tc := range []struct {
					name string
					errs func(a *dataflow.Arrangement) []dataflow.Arranged
					bad  bool
				}{
					{"the errs half", func(a *dataflow.Arrangement) []dataflow.Arranged { return []dataflow.Arranged{a.Errs, a.Errs} }, false},
					{"an oks half", func(a *dataflow.Arrangement) []dataflow.Arranged { return []dataflow.Arranged{a.Errs, a.Oks} }, true},
					{"a zero Arranged", func(a *dataflow.Arrangement) []dataflow.Arranged { return []dataflow.Arranged{a.Errs, {}} }, true},
				} {
					for _, op := range []string{"join", "delta"} {
						cp := dataflow.NewCapture(w)
						id := fmt.Sprintf("q %s %s", op, tc.name)
						must(ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
							ID: id, AsOf: frontier.At(0), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								a, err := c.ImportIndex("r")
								if err != nil {
									return err
								}
								opts := join.OperatorOptions{Name: op, Errs: tc.errs(a)}
								var out dataflow.Collection
								if op == "join" {
									out, err = join.Join(c, a, a, nil, opts)
								} else {
									out, err = join.DeltaJoin(c, []join.DeltaPath{
										{Source: 0, Arranged: a, Stages: []join.DeltaStage{{Lookup: a, Relation: 1, StreamKey: []int{0}}}},
										{Source: 1, Arranged: a, Stages: []join.DeltaStage{{Lookup: a, Relation: 0, StreamKey: []int{0}}}, Final: &join.Project{Cols: []int{0, 2, 1}}},
									}, opts)
								}
								if err != nil {
									return err
								}
								c.CaptureChunks(cp, out.Errs, 1)
								return nil
							}}}))
						must(ctl.Sync(ctx))
						var msgs []string
						for _, ce := range ctl.TakeErrors() {
							msgs = append(msgs, ce.Error())
						}
						got := strings.Join(msgs, "; ")
						if !tc.bad {
							if got != "" {
								t.Errorf("%s with %s: %s", op, tc.name, got)
							}
							must(cp.WaitPassed(ctx, 0))
							if errs := cp.At(0); len(errs) != 0 {
								t.Errorf("%s with %s: errors %v at 0, want none", op, tc.name, errs)
							}
						} else if want := fmt.Sprintf("dataflow %s: join: arity mismatch: operator %q: Errs[1] has no stream or is not an errs half", id, op); !strings.Contains(got, want) || len(msgs) != 1 {
							t.Errorf("%s with %s: errors %q, want one naming %q", op, tc.name, got, want)
						}
						must(ctl.Send(runtime.DropDataflow{ID: id}))
					}
				}
			})
		}
	}
}
