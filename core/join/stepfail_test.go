package join_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/share"
)

// mislabelled returns a copy of a whose oks half declares one val column
// more than its batches have: an operator reading it learns the truth
// only at a step, from the batches themselves.
func mislabelled(a *dataflow.Arrangement) *dataflow.Arrangement {
	bad := *a
	bad.Oks.Arity = batch.Arity{Key: a.Oks.Arity.Key, Val: a.Oks.Arity.Val + 1}
	bad.Arity = bad.Oks.Arity.Key + bad.Oks.Arity.Val
	return &bad
}

// TestJoinStepErrorsAreTheDataflows: a join operator whose step fails (an
// arrangement labelled with another arity than its batches': the binary
// join's left input, a delta path's source, a delta path's lookup) gives
// the error to the dataflow's Failer, so the runtime reports it naming
// the dataflow and the operator, and a caller waiting for the dataflow's
// error is answered; the operator kept it in its Stats alone, stopped in
// silence, and the wait lasted until its context ended. On two workers
// the delta join is staged: its source's error is the path's feed's, its
// lookup's the stage's. Solo and the pair, one and two workers.
func TestJoinStepErrorsAreTheDataflows(t *testing.T) {
	type arrs = [2]*dataflow.Arrangement
	for _, c := range []struct {
		what string
		// build adds the operator over the two arrangements.
		build func(c *dataflow.Context, a arrs) (dataflow.Collection, error)
		// op is the operator the error names, on one and on two workers.
		op      [2]string
		want    string
		workers []int
	}{
		{"binary left", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			// The left input's batch reaches the join through its stream
			// or, cut for a right batch, through its trace: either is
			// refused.
			return join.Join(c, mislabelled(a[0]), a[1], nil, join.OperatorOptions{Name: "join", Dataflow: "q"})
		}, [2]string{"join", "join"}, "batch arity key=1 val=1, join expects key=1 val=2", []int{1, 2}},
		{"delta source", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			// Path 0 reads its source as rows of 3 columns, then the
			// lookup's val: its final closure keeps 3 columns, as
			// path 1's.
			return join.DeltaJoin(c, []join.DeltaPath{
				{Source: 0, Arranged: mislabelled(a[0]), Stages: []join.DeltaStage{{Lookup: a[1], Relation: 1, StreamKey: []int{0}}},
					Final: &join.Project{Cols: []int{0, 1, 3}}},
				{Source: 1, Arranged: a[1], Stages: []join.DeltaStage{{Lookup: a[0], Relation: 0, StreamKey: []int{0}}},
					Final: &join.Project{Cols: []int{0, 2, 1}}},
			}, join.OperatorOptions{Name: "delta", Dataflow: "q"})
		}, [2]string{"delta", "delta path 0 feed"}, "path 0 source batch arity key=1 val=1, path expects key=1 val=2", []int{1, 2}},
		{"delta lookup", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			return join.DeltaJoin(c, []join.DeltaPath{
				{Source: 0, Arranged: a[0], Stages: []join.DeltaStage{{Lookup: a[1], Relation: 1, StreamKey: []int{0}}}},
				{Source: 1, Arranged: a[1], Stages: []join.DeltaStage{{Lookup: mislabelled(a[0]), Relation: 0, StreamKey: []int{0}}},
					Final: &join.Project{Cols: []int{0, 2, 1}}},
			}, join.OperatorOptions{Name: "delta", Dataflow: "q"})
		}, [2]string{"delta", "delta path 1 lookup 0"}, "lookup relation 0 batch arity key=1 val=1, stage expects key=1 val=2", []int{1, 2}},
	} {
		for _, mode := range []string{"solo", "pair"} {
			for _, w := range c.workers {
				t.Run(fmt.Sprintf("%s/%s/workers=%d", c.what, mode, w), func(t *testing.T) {
					ctl := stepFailRuntime(t, mode, w)
					defer ctl.Shutdown()
					names := []string{"r0", "r1"}
					for _, n := range names {
						if err := ctl.Send(runtime.CreateInput{Name: n, Arity: 2}); err != nil {
							t.Fatal(err)
						}
					}
					arrange := func(dc *dataflow.Context) (arrs, error) {
						var a arrs
						for i, n := range names {
							in, err := dc.Input(n, 2)
							if err != nil {
								return a, err
							}
							if a[i], err = dc.Arrange(in, []int{0}); err != nil {
								return a, err
							}
						}
						return a, nil
					}
					if mode == "pair" {
						if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
							ID: "indexes", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
							Exports: []string{"i0", "i1"},
							Build: func(dc *dataflow.Context) error {
								a, err := arrange(dc)
								if err != nil {
									return err
								}
								for i := range a {
									if err := dc.Export(fmt.Sprintf("i%d", i), a[i]); err != nil {
										return err
									}
								}
								return nil
							}}}); err != nil {
							t.Fatal(err)
						}
					}
					probe := dataflow.NewProbe(w)
					if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
						ID: "q", Maintained: mode == "solo", AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(dc *dataflow.Context) error {
							var a arrs
							if mode == "solo" {
								var err error
								if a, err = arrange(dc); err != nil {
									return err
								}
							} else {
								for i := range a {
									im, err := dc.ImportIndex(fmt.Sprintf("i%d", i))
									if err != nil {
										return err
									}
									// The arity the plan gives (the import
									// takes the index's too).
									im.Oks.Arity = batch.Arity{Key: 1, Val: 1}
									im.Errs.Arity = batch.Arity{Key: 1}
									a[i] = im
								}
							}
							out, err := c.build(dc, a)
							if err != nil {
								return err
							}
							dc.Probe(probe, out.Oks)
							return nil
						}}}); err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					// A round at a time, each applied before the next is
					// sent: the later rounds reach the operators through
					// their streams, not a trace they find at their start.
					for tm := range uint64(3) {
						for _, n := range names {
							ch := dataflow.NewChunk(2, 0)
							for k := range int64(8) {
								ch.Push([]int64{k, 10*k + int64(tm)}, tm, 1)
							}
							if err := ctl.Send(runtime.Input{Name: n, Chunk: ch}); err != nil {
								t.Fatal(err)
							}
							if err := ctl.Send(runtime.AdvanceInput{Name: n, Frontier: frontier.At(tm + 1)}); err != nil {
								t.Fatal(err)
							}
						}
						if err := ctl.Sync(ctx); err != nil {
							t.Fatal(err)
						}
					}
					err := waitErr(ctx, ctl)
					if err == nil {
						t.Fatalf("no error reported (the output's frontier is %v): want ErrArity saying %q", probe.Frontier(), c.want)
					}
					op := c.op[0]
					if w > 1 {
						op = c.op[1]
					}
					for _, want := range []string{"dataflow q: ", fmt.Sprintf("operator %q: ", op), c.want} {
						if !errors.Is(err, join.ErrArity) || !strings.Contains(err.Error(), want) {
							t.Fatalf("runtime errors: %v, want ErrArity saying %q", err, want)
						}
					}
					// Each error names the package once: it read
					// `join: operator "join": join: arity mismatch: ...`.
					for _, line := range strings.Split(err.Error(), "\n") {
						if want := fmt.Sprintf("dataflow q: operator %q: join: arity mismatch: ", op); !strings.HasPrefix(line, want) || strings.Count(line, "join: ") != 1 {
							t.Fatalf("runtime error %q, want it to start %q and say \"join: \" once", line, want)
						}
					}
				})
			}
		}
	}
}

// stepFailRuntime returns the controller of a Solo runtime or of a
// Maintenance and Interactive pair, of w workers each.
func stepFailRuntime(t *testing.T, mode string, w int) *runtime.Controller {
	t.Helper()
	if mode == "solo" {
		r, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		ctl, err := runtime.NewController(r)
		if err != nil {
			t.Fatal(err)
		}
		return ctl
	}
	regs := make([]*share.Registry, w)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	m, err := runtime.New(runtime.Options{Role: runtime.Maintenance, Workers: w, Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	inter, err := runtime.New(runtime.Options{Role: runtime.Interactive, Workers: w, Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := runtime.NewController(m, inter)
	if err != nil {
		t.Fatal(err)
	}
	return ctl
}

// waitErr waits for the runtime to report an error, until ctx ends (nil
// then).
func waitErr(ctx context.Context, ctl *runtime.Controller) error {
	for {
		if err := ctl.Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestJoinRefusesTraceBatchesOfAnotherArity: a binary join reads the
// batches of its inputs' traces as well as those their streams deliver
// (the right trace it preloads at its first step, the other trace it cuts
// for each new batch); one of another arity than its arrangement declares
// is ErrArity there too, the dataflow's error, where the join read it at
// the declared arity and sent malformed rows. The indexes hold a round
// before the query starts; the second round goes to r1 alone, so the join
// meets the left trace's batch only through the trace.
func TestJoinRefusesTraceBatchesOfAnotherArity(t *testing.T) {
	for _, c := range []struct {
		what string
		bad  int // the input whose arrangement is mislabelled
		want string
	}{
		{"right preloaded", 1, "input 1 preloaded batch arity key=1 val=1, join expects key=1 val=2"},
		{"left cut", 0, "input 0 trace batch arity key=1 val=1, join expects key=1 val=2"},
	} {
		for _, mode := range []string{"solo", "pair"} {
			for _, w := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/workers=%d", c.what, mode, w), func(t *testing.T) {
					ctl := stepFailRuntime(t, mode, w)
					defer ctl.Shutdown()
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					names := []string{"r0", "r1"}
					for _, n := range names {
						if err := ctl.Send(runtime.CreateInput{Name: n, Arity: 2}); err != nil {
							t.Fatal(err)
						}
					}
					if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
						ID: "indexes", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
						Exports: []string{"i0", "i1"},
						Build: func(dc *dataflow.Context) error {
							for i, n := range names {
								in, err := dc.Input(n, 2)
								if err != nil {
									return err
								}
								a, err := dc.Arrange(in, []int{0})
								if err != nil {
									return err
								}
								if err := dc.Export(fmt.Sprintf("i%d", i), a); err != nil {
									return err
								}
							}
							return nil
						}}}); err != nil {
						t.Fatal(err)
					}
					send := func(tm uint64, names ...string) {
						for _, n := range names {
							ch := dataflow.NewChunk(2, 0)
							for k := range int64(8) {
								ch.Push([]int64{k, 10*k + int64(tm)}, tm, 1)
							}
							if err := ctl.Send(runtime.Input{Name: n, Chunk: ch}); err != nil {
								t.Fatal(err)
							}
							if err := ctl.Send(runtime.AdvanceInput{Name: n, Frontier: frontier.At(tm + 1)}); err != nil {
								t.Fatal(err)
							}
						}
						if err := ctl.Sync(ctx); err != nil {
							t.Fatal(err)
						}
					}
					send(0, names...)
					if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
						ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(dc *dataflow.Context) error {
							var a [2]*dataflow.Arrangement
							for i := range a {
								im, err := dc.ImportIndex(fmt.Sprintf("i%d", i))
								if err != nil {
									return err
								}
								im.Oks.Arity = batch.Arity{Key: 1, Val: 1}
								im.Errs.Arity = batch.Arity{Key: 1}
								a[i] = im
							}
							a[c.bad] = mislabelled(a[c.bad])
							out, err := join.Join(dc, a[0], a[1], nil, join.OperatorOptions{Name: "join", Dataflow: "q"})
							if err != nil {
								return err
							}
							dc.CaptureChunks(dataflow.NewCapture(w), out.Oks, out.Arity)
							return nil
						}}}); err != nil {
						t.Fatal(err)
					}
					if err := ctl.Sync(ctx); err != nil {
						t.Fatal(err)
					}
					send(1, "r1")
					err := waitErr(ctx, ctl)
					for _, want := range []string{`dataflow q: operator "join": join: `, c.want} {
						if !errors.Is(err, join.ErrArity) || !strings.Contains(err.Error(), want) {
							t.Fatalf("runtime errors: %v, want ErrArity saying %q", err, want)
						}
					}
				})
			}
		}
	}
}

// TestAFailedOperatorHoldsItsOutputWhereItStood: a join operator whose
// step fails holds its output frontier where it stood before that step,
// as a reduce operator does (docs/semantics.md §2.5): the good input runs
// ahead first, then the mislabelled one delivers three rounds at once and
// the step that reads them fails. The join held its output at that step's
// input frontier ({2}), which announced as complete times whose batches
// it never joined. A binary join, a delta join (staged on two workers)
// and a reduce, on one and two workers.
func TestAFailedOperatorHoldsItsOutputWhereItStood(t *testing.T) {
	type arrs = [2]*dataflow.Arrangement
	for _, c := range []struct {
		what  string
		build func(c *dataflow.Context, a arrs) (dataflow.Collection, error)
	}{
		{"binary", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			return join.Join(c, mislabelled(a[0]), a[1], nil, join.OperatorOptions{Name: "join", Dataflow: "q"})
		}},
		{"delta", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			return join.DeltaJoin(c, []join.DeltaPath{
				{Source: 0, Arranged: mislabelled(a[0]), Stages: []join.DeltaStage{{Lookup: a[1], Relation: 1, StreamKey: []int{0}}},
					Final: &join.Project{Cols: []int{0, 1, 3}}},
				{Source: 1, Arranged: a[1], Stages: []join.DeltaStage{{Lookup: a[0], Relation: 0, StreamKey: []int{0}}},
					Final: &join.Project{Cols: []int{0, 2, 1}}},
			}, join.OperatorOptions{Name: "delta", Dataflow: "q"})
		}},
		{"reduce", func(c *dataflow.Context, a arrs) (dataflow.Collection, error) {
			return reduce.AddReduce(c, mislabelled(a[0]), []reduce.Aggregate{{Fn: reduce.Count}}, reduce.OperatorOptions{Name: "reduce", Dataflow: "q"})
		}},
	} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.what, w), func(t *testing.T) {
				ctl := stepFailRuntime(t, "solo", w)
				defer ctl.Shutdown()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				names := []string{"r0", "r1"}
				for _, n := range names {
					if err := ctl.Send(runtime.CreateInput{Name: n, Arity: 2}); err != nil {
						t.Fatal(err)
					}
				}
				probe := dataflow.NewProbe(w)
				if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(dc *dataflow.Context) error {
						var a arrs
						for i, n := range names {
							in, err := dc.Input(n, 2)
							if err != nil {
								return err
							}
							if a[i], err = dc.Arrange(in, []int{0}); err != nil {
								return err
							}
						}
						out, err := c.build(dc, a)
						if err != nil {
							return err
						}
						dc.Probe(probe, out.Oks)
						return nil
					}}}); err != nil {
					t.Fatal(err)
				}
				send := func(n string, tms ...uint64) {
					for _, tm := range tms {
						ch := dataflow.NewChunk(2, 0)
						for k := range int64(8) {
							ch.Push([]int64{k, 10*k + int64(tm)}, tm, 1)
						}
						if err := ctl.Send(runtime.Input{Name: n, Chunk: ch}); err != nil {
							t.Fatal(err)
						}
						if err := ctl.Send(runtime.AdvanceInput{Name: n, Frontier: frontier.At(tm + 1)}); err != nil {
							t.Fatal(err)
						}
					}
					if err := ctl.Sync(ctx); err != nil {
						t.Fatal(err)
					}
				}
				send("r1", 0, 1)
				if err := ctl.Err(); err != nil {
					t.Fatalf("before the mislabelled input moved: %v", err)
				}
				before := probe.Frontier()
				send("r0", 0, 1, 2)
				if err := waitErr(ctx, ctl); !errors.Is(err, join.ErrArity) && !errors.Is(err, reduce.ErrArity) {
					t.Fatalf("runtime errors: %v, want an arity mismatch", err)
				}
				send("r1", 2, 3)
				if got := probe.Frontier(); got != before {
					t.Errorf("output frontier %v after the failed step, want %v, where it stood before it", got, before)
				}
			})
		}
	}
}
