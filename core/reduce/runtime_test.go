package reduce_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/spine"
)

// TestReducesInRuntimes runs a reduce (count, sum, min, max: an
// accumulable and a hierarchical part, collated), a threshold and a
// distinct in a Solo runtime that arranges the input in the query (direct)
// and in a Maintenance + Interactive pair that imports published indexes
// (imported), with 1, 2 and 4 workers exchanging by group key: every
// configuration gives the naive answer, errors included, at every time
// from as_of.
func TestReducesInRuntimes(t *testing.T) {
	const asOf, rounds = 2, 7
	rng := rand.New(rand.NewPCG(4, 10))
	type row struct {
		k, a, b int64
		t       uint64
		d       int64
	}
	var data []row
	for tm := range uint64(rounds) {
		for range rng.IntN(14) {
			d := int64(rng.IntN(5)) - 1
			if d == 0 {
				d = 2
			}
			data = append(data, row{int64(rng.IntN(5)), int64(rng.IntN(3)), int64(rng.IntN(5)) - 2, tm, d})
		}
	}
	aggs := []reduce.Aggregate{{Fn: reduce.Count}, {Fn: reduce.Sum, Col: 1}, {Fn: reduce.Min, Col: 1}, {Fn: reduce.Max, Col: 0}}
	// want computes the three answers at t from scratch.
	want := func(t uint64) (red, redErrs, thr, dis, disErrs map[string]int64) {
		recs := map[[3]int64]int64{}
		for _, r := range data {
			if r.t <= t {
				recs[[3]int64{r.k, r.a, r.b}] += r.d
			}
		}
		red, redErrs, thr, dis, disErrs = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
		groups := map[int64][][3]int64{}
		for r, c := range recs {
			if c != 0 {
				groups[r[0]] = append(groups[r[0]], r)
			}
			switch {
			case c > 0:
				thr[fmt.Sprint(r[:])] = c
				dis[fmt.Sprint(r[:])] = 1
			case c < 0:
				disErrs["negative multiplicity"]++
			}
		}
		for k, rs := range groups {
			neg := false
			var cnt, sum int64
			mn, mx := rs[0][2], rs[0][1]
			for _, r := range rs {
				c := recs[r]
				neg = neg || c < 0
				cnt += c
				sum += c * r[2]
				mn, mx = min(mn, r[2]), max(mx, r[1])
			}
			if neg {
				redErrs["negative multiplicity"]++
				continue
			}
			red[fmt.Sprint([]int64{k, cnt, sum, mn, mx})] = 1
		}
		return
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				ctl := startController(t, mode, w)
				if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 3}); err != nil {
					t.Fatal(err)
				}
				// The group index (by k) and the record index (by every column).
				arrange := func(c *dataflow.Context) (*dataflow.Arrangement, *dataflow.Arrangement, error) {
					in, err := c.Input("r", 3)
					if err != nil {
						return nil, nil, err
					}
					g, err := c.Arrange(in, []int{0})
					if err != nil {
						return nil, nil, err
					}
					r, err := c.Arrange(in, []int{0, 1, 2})
					return g, r, err
				}
				if mode == "pair" {
					exportTwo(t, ctl, arrange, "by_k", "by_all")
				}
				send := func(tm uint64) {
					ch := dataflow.NewChunk(3, 0)
					for _, x := range data {
						if x.t == tm {
							ch.Push([]int64{x.k, x.a, x.b}, x.t, x.d)
						}
					}
					if err := ctl.Send(runtime.Input{Name: "r", Chunk: ch}); err != nil {
						t.Fatal(err)
					}
					if err := ctl.Send(runtime.AdvanceInput{Name: "r", Frontier: frontier.At(tm + 1)}); err != nil {
						t.Fatal(err)
					}
				}
				for tm := range uint64(asOf + 1) {
					send(tm)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				caps := make([]*dataflow.Capture, 5) // reduce, its errors, threshold, distinct, its errors
				for i := range caps {
					caps[i] = dataflow.NewCapture(w)
				}
				if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "q", Maintained: mode == "solo", AsOf: frontier.At(asOf), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						var g, r *dataflow.Arrangement
						var err error
						if mode == "pair" {
							if g, err = c.ImportIndex("by_k"); err != nil {
								return err
							}
							if r, err = c.ImportIndex("by_all"); err != nil {
								return err
							}
						} else if g, r, err = arrange(c); err != nil {
							return err
						}
						red, err := reduce.AddReduce(c, g, aggs, reduce.OperatorOptions{Dataflow: "q"})
						if err != nil {
							return err
						}
						thr, err := reduce.AddThreshold(c, r, reduce.OperatorOptions{Dataflow: "q"})
						if err != nil {
							return err
						}
						dis, err := reduce.AddDistinct(c, r, reduce.OperatorOptions{Dataflow: "q"})
						if err != nil {
							return err
						}
						for i, coll := range []dataflow.Collection{red, thr, dis} {
							a, err := c.Arrange(coll, []int{0})
							if err != nil {
								return err
							}
							switch i {
							case 0:
								c.Capture(caps[0], a.Oks)
								c.Capture(caps[1], a.Errs)
							case 1:
								c.Capture(caps[2], a.Oks)
							case 2:
								c.Capture(caps[3], a.Oks)
								c.Capture(caps[4], a.Errs)
							}
						}
						return nil
					}}}); err != nil {
					t.Fatal(err)
				}
				for tm := uint64(asOf + 1); tm < rounds; tm++ {
					send(tm)
				}
				for _, cp := range caps {
					if err := cp.WaitPassed(ctx, rounds-1); err != nil {
						t.Fatalf("capture at %v: %v", cp.Frontier(), err)
					}
				}
				for tm := uint64(asOf); tm < rounds; tm++ {
					red, redErrs, thr, dis, disErrs := want(tm)
					for i, want := range []map[string]int64{red, redErrs, thr, dis, disErrs} {
						got := map[string]int64{}
						for _, rd := range caps[i].At(tm) {
							k := fmt.Sprint(rd.Row)
							if i == 1 || i == 4 {
								k, _ = expr.Message(rd.Row[0])
							}
							got[k] += rd.Diff
						}
						if !maps.Equal(got, want) {
							t.Fatalf("output %d at %d:\n got  %v\n want %v", i, tm, sorted(got), sorted(want))
						}
					}
				}
			})
		}
	}
}

func sorted(m map[string]int64) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s:%d", k, v))
	}
	slices.Sort(out)
	return out
}

// startController starts Solo (mode "solo") or the Maintenance/Interactive
// pair ("pair") on w workers, shut down at the test's end, where the
// runtime must have reported no error.
func startController(t *testing.T, mode string, w int) *runtime.Controller {
	t.Helper()
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
	t.Cleanup(func() {
		ctl.Shutdown()
		if err := ctl.Err(); err != nil {
			t.Errorf("runtime errors: %v", err)
		}
	})
	return ctl
}

// exportTwo creates, on the pair's Maintenance runtime, the Maintained
// dataflow "indexes" exporting the two arrangements arrange makes as first
// and second, from time 0.
func exportTwo(t *testing.T, ctl *runtime.Controller, arrange func(*dataflow.Context) (*dataflow.Arrangement, *dataflow.Arrangement, error), first, second string) {
	t.Helper()
	if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "indexes", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{first, second},
		Build: func(c *dataflow.Context) error {
			a, b, err := arrange(c)
			if err != nil {
				return err
			}
			if err := c.Export(first, a); err != nil {
				return err
			}
			return c.Export(second, b)
		}}}); err != nil {
		t.Fatal(err)
	}
}
