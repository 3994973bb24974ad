package join_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/share"
)

// zeroErrs passes rows through and turns a row whose column 1 is 0 into
// error code 1 (division by zero) with the row's diff.
type zeroErrs struct {
	in        *dataflow.Port[*dataflow.Chunk]
	oks, errs *dataflow.Stream[*dataflow.Chunk]
}

func (o *zeroErrs) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		ok, bad := dataflow.NewChunk(c.Arity, c.Len()), dataflow.NewChunk(1, 0)
		for i := range c.Len() {
			if c.Row(i)[1] == 0 {
				bad.Push([]int64{1}, c.Times[i], c.Diffs[i])
			} else {
				ok.Push(c.Row(i), c.Times[i], c.Diffs[i])
			}
		}
		o.oks.Send(ok)
		o.errs.Send(bad)
	}
	return frontier.Empty()
}

func (o *zeroErrs) Shutdown() {}

// TestJoinsInRuntimes runs the binary and the delta join of three inputs
// in a Solo runtime that arranges them in the query (direct) and in a
// Maintenance + Interactive pair that imports published indexes
// (imported), also with the Interactive runtime held back until every
// round is in (lagging), with 1, 2 and 4 workers: every configuration gives the
// nested-loop answer at every time from as_of, and the same errors: the
// inputs' rows with val 0 are errors, carried once per `from` entry. The
// query is then dropped and re-created under the same id at a later as_of
// (the indexes compacted up to it) and is again correct from there.
func TestJoinsInRuntimes(t *testing.T) {
	const asOf, rounds = 2, 6
	rng := rand.New(rand.NewPCG(1, 10))
	type row struct {
		k, v int64
		t    uint64
		d    int64
	}
	data := make([][]row, 3)
	for r := range data {
		for tm := range uint64(rounds + 1) {
			for range rng.IntN(12) {
				data[r] = append(data[r], row{int64(rng.IntN(5)) - 2, int64(rng.IntN(4)), tm, int64(rng.IntN(3)) - 1 | 1})
			}
		}
	}
	acc := func(rs []row, t uint64) map[[2]int64]int64 {
		m := map[[2]int64]int64{}
		for _, r := range rs {
			if r.t <= t {
				m[[2]int64{r.k, r.v}] += r.d
			}
		}
		return m
	}
	// accOK is acc without the rows that are errors (val 0).
	accOK := func(rs []row, t uint64) map[[2]int64]int64 {
		m := acc(rs, t)
		maps.DeleteFunc(m, func(k [2]int64, _ int64) bool { return k[1] == 0 })
		return m
	}
	want2 := func(t uint64) map[string]int64 {
		m := map[string]int64{}
		for a, da := range accOK(data[0], t) {
			for b, db := range accOK(data[1], t) {
				if a[0] == b[0] && da*db != 0 {
					m[fmt.Sprint([]int64{a[0], a[1], b[1]})] += da * db
				}
			}
		}
		return m
	}
	want3 := func(t uint64) map[string]int64 {
		m := map[string]int64{}
		for a, da := range accOK(data[0], t) {
			for b, db := range accOK(data[1], t) {
				for c, dc := range accOK(data[2], t) {
					if a[0] == b[0] && b[0] == c[0] && da*db*dc != 0 {
						m[fmt.Sprint([]int64{a[0], a[1], b[1], c[1]})] += da * db * dc
					}
				}
			}
		}
		return m
	}
	for _, mode := range []string{"solo", "pair", "pair-lagging"} {
		for _, w := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				var ctl *runtime.Controller
				var inter *runtime.Runtime
				if mode == "solo" {
					r, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					if ctl, err = runtime.NewController(r); err != nil {
						t.Fatal(err)
					}
				} else {
					// pair-lagging: the Interactive runtime holds every command
					// until the Maintenance runtime has absorbed all the rounds.
					regs := make([]*share.Registry, w)
					for i := range regs {
						regs[i] = share.NewRegistry()
					}
					m, err := runtime.New(runtime.Options{Role: runtime.Maintenance, Workers: w, Registries: regs})
					if err != nil {
						t.Fatal(err)
					}
					inter, err = runtime.New(runtime.Options{Role: runtime.Interactive, Workers: w, Registries: regs, Paused: mode == "pair-lagging"})
					if err != nil {
						t.Fatal(err)
					}
					if ctl, err = runtime.NewController(m, inter); err != nil {
						t.Fatal(err)
					}
				}
				defer func() {
					ctl.Shutdown()
					if err := ctl.Err(); err != nil {
						t.Errorf("runtime errors: %v", err)
					}
				}()
				names := []string{"r0", "r1", "r2"}
				for _, n := range names {
					if err := ctl.Send(runtime.CreateInput{Name: n, Arity: 2}); err != nil {
						t.Fatal(err)
					}
				}
				arrange := func(c *dataflow.Context) ([]*dataflow.Arrangement, error) {
					var arr []*dataflow.Arrangement
					for _, n := range names {
						in, err := c.Input(n, 2)
						if err != nil {
							return nil, err
						}
						b := c.NewOperator("zero errs " + n)
						op := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
						op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
						if err := b.Build(op); err != nil {
							return nil, err
						}
						a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.oks, Errs: op.errs}, []int{0})
						if err != nil {
							return nil, err
						}
						arr = append(arr, a)
					}
					return arr, nil
				}
				if mode != "solo" {
					if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
						ID: "indexes", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
						Exports: []string{"i0", "i1", "i2"},
						Build: func(c *dataflow.Context) error {
							arr, err := arrange(c)
							if err != nil {
								return err
							}
							for i, a := range arr {
								if err := c.Export(fmt.Sprintf("i%d", i), a); err != nil {
									return err
								}
							}
							return nil
						}}}); err != nil {
						t.Fatal(err)
					}
				}
				send := func(tm uint64) {
					for r, n := range names {
						ch := dataflow.NewChunk(2, 0)
						for _, x := range data[r] {
							if x.t == tm {
								ch.Push([]int64{x.k, x.v}, x.t, x.d)
							}
						}
						if err := ctl.Send(runtime.Input{Name: n, Chunk: ch}); err != nil {
							t.Fatal(err)
						}
						if err := ctl.Send(runtime.AdvanceInput{Name: n, Frontier: frontier.At(tm + 1)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				send(0)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if mode != "pair-lagging" {
					if err := ctl.Sync(ctx); err != nil {
						t.Fatal(err)
					}
				}
				metrics := &join.Metrics{}
				type captures struct{ b, d, be, de *dataflow.Capture }
				createQuery := func(asOf uint64) captures {
					bcap, dcap := dataflow.NewCapture(w), dataflow.NewCapture(w)
					becap, decap := dataflow.NewCapture(w), dataflow.NewCapture(w)
					if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
						ID: "q", AsOf: frontier.At(asOf), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							var arr []*dataflow.Arrangement
							if mode != "solo" {
								for i := range 3 {
									a, err := c.ImportIndex(fmt.Sprintf("i%d", i))
									if err != nil {
										return err
									}
									// NB: an import whose chain holds no batch yet
									// (a worker's shard may be empty) does not know
									// its arity; the plan does.
									a.Oks.Arity = batch.Arity{Key: 1, Val: 1}
									a.Errs.Arity = batch.Arity{Key: 1}
									arr = append(arr, a)
								}
							} else {
								var err error
								if arr, err = arrange(c); err != nil {
									return err
								}
							}
							j, err := join.Join(c, arr[0], arr[1], nil, join.OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics,
								Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}})
							if err != nil {
								return err
							}
							var paths []join.DeltaPath
							for i := range arr {
								p := join.DeltaPath{Source: i, Arranged: arr[i]}
								cols := []int{0, 1 + i}
								for k := range arr {
									if k != i {
										p.Stages = append(p.Stages, join.DeltaStage{Lookup: arr[k], Relation: k, StreamKey: []int{0}})
										cols = append(cols, 1+k)
									}
								}
								proj := make([]int, len(cols))
								for c, k := range cols {
									proj[k] = c
								}
								p.Final = &join.Project{Cols: proj}
								paths = append(paths, p)
							}
							d, err := join.DeltaJoin(c, paths, join.OperatorOptions{Name: "delta", Dataflow: "q", Metrics: metrics,
								Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs, arr[2].Errs}})
							if err != nil {
								return err
							}
							for _, x := range []struct {
								coll     dataflow.Collection
								oks, err *dataflow.Capture
							}{{j, bcap, becap}, {d, dcap, decap}} {
								a, err := c.Arrange(x.coll, []int{0})
								if err != nil {
									return err
								}
								c.Capture(x.oks, a.Oks)
								c.Capture(x.err, a.Errs)
							}
							return nil
						}}}); err != nil {
						t.Fatal(err)
					}
					return captures{bcap, dcap, becap, decap}
				}
				check := func(cs captures, from, to uint64) {
					bcap, dcap, becap, decap := cs.b, cs.d, cs.be, cs.de
					for _, cp := range []*dataflow.Capture{bcap, dcap, becap, decap} {
						if err := cp.WaitPassed(ctx, to-1); err != nil {
							t.Fatalf("capture at %v: %v", cp.Frontier(), err)
						}
					}
					for tm := from; tm < to; tm++ {
						var zeros [3]int64 // rows with val 0 per entry: the errors it carries
						for r := range data {
							for k, d := range acc(data[r], tm) {
								if k[1] == 0 {
									zeros[r] += d
								}
							}
						}
						for _, c := range []struct {
							name string
							want int64
							cp   *dataflow.Capture
						}{{"binary", zeros[0] + zeros[1], becap}, {"delta", zeros[0] + zeros[1] + zeros[2], decap}} {
							want := "[]"
							if c.want != 0 {
								want = fmt.Sprintf("[{[1] %d}]", c.want)
							}
							if got := fmt.Sprint(c.cp.At(tm)); got != want {
								t.Fatalf("%s join errors at %d: %s, want %s", c.name, tm, got, want)
							}
						}
						for _, c := range []struct {
							name string
							want map[string]int64
							cp   *dataflow.Capture
						}{{"binary", want2(tm), bcap}, {"delta", want3(tm), dcap}} {
							got := map[string]int64{}
							for _, rd := range c.cp.At(tm) {
								got[fmt.Sprint(rd.Row)] = rd.Diff
							}
							maps.DeleteFunc(c.want, func(_ string, d int64) bool { return d == 0 })
							if !maps.Equal(got, c.want) {
								t.Fatalf("as_of %d: %s join at %d:\n got  %v\n want %v", from, c.name, tm, got, c.want)
							}
						}
					}
				}
				first := createQuery(asOf)
				for tm := uint64(1); tm < rounds; tm++ {
					send(tm)
				}
				if mode == "pair-lagging" {
					inter.Resume()
				}
				check(first, asOf, rounds)
				// Re-create the query under the same id, later: with the
				// indexes compacted up to its as_of (pair), it reads
				// nothing of the dropped incarnation and is correct from
				// its own as_of on.
				if err := ctl.Send(runtime.DropDataflow{ID: "q"}); err != nil {
					t.Fatal(err)
				}
				if mode != "solo" {
					for i := range 3 {
						if err := ctl.Send(runtime.AllowCompaction{ID: fmt.Sprintf("i%d", i), Frontier: frontier.At(rounds - 1)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				again := createQuery(rounds - 1)
				send(rounds)
				check(again, rounds-1, rounds+1)
			})
		}
	}
}
