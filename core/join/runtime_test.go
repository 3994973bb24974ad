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
	"github.com/tracebench/tracebench/core/spine"
)

// TestJoinsInRuntimes runs the binary and the delta join of three inputs
// in a Solo runtime that arranges them in the query (direct) and in a
// Maintenance + Interactive pair that imports published indexes
// (imported), with 1, 2 and 4 workers: every configuration gives the
// nested-loop answer at every time from as_of.
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
		for tm := range uint64(rounds) {
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
	want2 := func(t uint64) map[string]int64 {
		m := map[string]int64{}
		for a, da := range acc(data[0], t) {
			for b, db := range acc(data[1], t) {
				if a[0] == b[0] && da*db != 0 {
					m[fmt.Sprint([]int64{a[0], a[1], b[1]})] += da * db
				}
			}
		}
		return m
	}
	want3 := func(t uint64) map[string]int64 {
		m := map[string]int64{}
		for a, da := range acc(data[0], t) {
			for b, db := range acc(data[1], t) {
				for c, dc := range acc(data[2], t) {
					if a[0] == b[0] && b[0] == c[0] && da*db*dc != 0 {
						m[fmt.Sprint([]int64{a[0], a[1], b[1], c[1]})] += da * db * dc
					}
				}
			}
		}
		return m
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				var ctl *runtime.Controller
				if mode == "solo" {
					r, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					if ctl, err = runtime.NewController(r); err != nil {
						t.Fatal(err)
					}
				} else {
					var err error
					if _, _, ctl, err = runtime.Pair(w, spine.Options{}); err != nil {
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
						a, err := c.Arrange(in, []int{0})
						if err != nil {
							return nil, err
						}
						arr = append(arr, a)
					}
					return arr, nil
				}
				if mode == "pair" {
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
				if err := ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				metrics := &join.Metrics{}
				bcap, dcap := dataflow.NewCapture(w), dataflow.NewCapture(w)
				if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "q", AsOf: frontier.At(asOf), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						var arr []*dataflow.Arrangement
						if mode == "pair" {
							for i := range 3 {
								a, err := c.ImportIndex(fmt.Sprintf("i%d", i))
								if err != nil {
									return err
								}
								// NB: an import whose chain holds no batch yet
								// (a worker's shard may be empty) does not know
								// its arity; the plan does.
								a.Oks.Arity = batch.Arity{Key: 1, Val: 1}
								arr = append(arr, a)
							}
						} else {
							var err error
							if arr, err = arrange(c); err != nil {
								return err
							}
						}
						j, err := join.Join(c, arr[0], arr[1], nil, join.OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics})
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
						d, err := join.DeltaJoin(c, paths, join.OperatorOptions{Name: "delta", Dataflow: "q", Metrics: metrics})
						if err != nil {
							return err
						}
						for _, x := range []struct {
							coll dataflow.Collection
							cp   *dataflow.Capture
						}{{j, bcap}, {d, dcap}} {
							a, err := c.Arrange(x.coll, []int{0})
							if err != nil {
								return err
							}
							c.Capture(x.cp, a.Oks)
						}
						return nil
					}}}); err != nil {
					t.Fatal(err)
				}
				for tm := uint64(1); tm < rounds; tm++ {
					send(tm)
				}
				for _, cp := range []*dataflow.Capture{bcap, dcap} {
					if err := cp.WaitPassed(ctx, rounds-1); err != nil {
						t.Fatalf("capture at %v: %v", cp.Frontier(), err)
					}
				}
				for tm := uint64(asOf); tm < rounds; tm++ {
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
							t.Fatalf("%s join at %d:\n got  %v\n want %v", c.name, tm, got, c.want)
						}
					}
				}
			})
		}
	}
}
