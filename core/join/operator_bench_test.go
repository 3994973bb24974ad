package join

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// rowCount counts the rows of a chunk stream (their diffs summed).
type rowCount struct {
	in *dataflow.Port[*dataflow.Chunk]
	n  int64
}

func (o *rowCount) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		for _, d := range c.Diffs {
			o.n += d
		}
	}
	return frontier.Empty()
}

func (o *rowCount) Shutdown() {}

func countRows(c *dataflow.Context, s *dataflow.Stream[*dataflow.Chunk], n *rowCount) error {
	b := c.NewOperator("count")
	n.in = dataflow.AddInput(b, "rows", s)
	return b.Build(n)
}

func benchEnv(tb testing.TB) *dataflow.Env {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { tb.Errorf("dataflow %s: %v", df, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	return env
}

// sendSides sends the benchmark rows as inputs "l" and "r" at time 0 and
// closes time 0.
func sendSides(tb testing.TB, env *dataflow.Env, rows *joinRows) {
	for _, side := range []struct {
		name       string
		keys, vals []int64
	}{{"l", rows.lk, rows.lv}, {"r", rows.rk, rows.rv}} {
		ch := dataflow.NewChunk(2, len(side.keys))
		for i := range side.keys {
			ch.Rows = append(ch.Rows, side.keys[i], side.vals[i])
			ch.Times = append(ch.Times, 0)
			ch.Diffs = append(ch.Diffs, 1)
		}
		if err := env.Inputs.Send(side.name, ch); err != nil {
			tb.Fatal(err)
		}
		if err := env.Inputs.Advance(side.name, frontier.At(1)); err != nil {
			tb.Fatal(err)
		}
	}
}

func arrangeSides(c *dataflow.Context) (l, r *dataflow.Arrangement, err error) {
	arr, err := arrangeInputs(c, "l", "r")
	if err != nil {
		return nil, nil, err
	}
	return arr[0], arr[1], nil
}

// arrangeInputs arranges each named input (two columns) by its first
// column, in order.
func arrangeInputs(c *dataflow.Context, names ...string) ([]*dataflow.Arrangement, error) {
	arr := make([]*dataflow.Arrangement, len(names))
	for i, n := range names {
		in, err := c.Input(n, 2)
		if err != nil {
			return nil, err
		}
		if arr[i], err = c.Arrange(in, []int{0}); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

// BenchmarkJoin is a query that joins two collections of n rows (the
// limit's rows) in a dataflow and counts the output, from the create to
// the query's probe passing time 0: index=direct arranges both inputs
// inside the query; index=imported imports two indexes a maintained
// dataflow already arranged and exports. install-ns is the create
// (dataflow.Build, which also runs its first passes); x-limit is the whole
// over the hash join of the same rows in the same run.
func BenchmarkJoin(b *testing.B) {
	for _, n := range benchSizes {
		for _, f := range []int{1, 4} {
			for _, index := range []string{"imported", "direct"} {
				b.Run(fmt.Sprintf("n=%d/fanout=%d/index=%s", n, f, index), func(b *testing.B) {
					benchShort(b, n)
					rows := makeJoinRows(n, f)
					limit := limitNanos(rows)
					env := benchEnv(b)
					sendSides(b, env, rows)
					if index == "imported" {
						idx, err := dataflow.Build(env, dataflow.Desc{ID: "indexes", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
							Exports: []string{"l", "r"},
							Build: func(c *dataflow.Context) error {
								l, r, err := arrangeSides(c)
								if err != nil {
									return err
								}
								if err := c.Export("l", l); err != nil {
									return err
								}
								return c.Export("r", r)
							}}, 1)
						if err != nil {
							b.Fatal(err)
						}
						defer idx.Drop()
						for idx.Step() {
						}
					}
					var install time.Duration
					var count *rowCount
					b.ReportAllocs()
					for b.Loop() {
						count = &rowCount{}
						probe := dataflow.NewProbe(1)
						start := time.Now()
						q, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: index != "imported", AsOf: frontier.Min(), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								var l, r *dataflow.Arrangement
								var err error
								if index == "imported" {
									if l, err = c.ImportIndex("l"); err != nil {
										return err
									}
									if r, err = c.ImportIndex("r"); err != nil {
										return err
									}
								} else if l, r, err = arrangeSides(c); err != nil {
									return err
								}
								j, err := Join(c, l, r, nil, OperatorOptions{Name: "join", Dataflow: "q"})
								if err != nil {
									return err
								}
								c.Probe(probe, j.Oks)
								return countRows(c, j.Oks, count)
							}}, 1)
						if err != nil {
							b.Fatal(err)
						}
						install += time.Since(start)
						for !probe.Passed(0) && q.Step() {
						}
						if !probe.Passed(0) {
							b.Fatalf("probe at %v, want past 0", probe.Frontier())
						}
						q.Drop()
					}
					if count.n != int64(n) {
						b.Fatalf("joined %d rows, want %d", count.n, n)
					}
					per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(float64(install.Nanoseconds())/float64(b.N), "install-ns")
					b.ReportMetric(per/float64(2*n), "ns/in-row")
					b.ReportMetric(per/float64(n), "ns/out-row")
					b.ReportMetric(per/limit, "x-limit")
				})
			}
		}
	}
}

// BenchmarkJoinSteady: rounds of updates into both sides of a query that
// joins two 1:1 collections of n rows (1e6; 1e5 in -short), each round
// changing the vals of round keys per side (a retraction and an insertion
// each), until the query's probe passes the round. index=imported: a
// maintained dataflow arranges both sides and exports them, the query
// imports them; index=direct: the query arranges them itself. The indexes
// are allowed to compact to each round, and idle merge work runs as a
// worker's maintenance would. ns/update is per input update of both sides.
func BenchmarkJoinSteady(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	for _, round := range []int{1, 1000} {
		for _, index := range []string{"imported", "direct"} {
			b.Run(fmt.Sprintf("round=%d/index=%s", round, index), func(b *testing.B) {
				rows := makeJoinRows(n, 1)
				env := benchEnv(b)
				sendSides(b, env, rows)
				var dfs []*dataflow.Dataflow
				defer func() {
					for i := len(dfs) - 1; i >= 0; i-- {
						dfs[i].Drop()
					}
				}()
				if index == "imported" {
					idx, err := dataflow.Build(env, dataflow.Desc{ID: "indexes", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
						Exports: []string{"l", "r"},
						Build: func(c *dataflow.Context) error {
							l, r, err := arrangeSides(c)
							if err != nil {
								return err
							}
							if err := c.Export("l", l); err != nil {
								return err
							}
							return c.Export("r", r)
						}}, 1)
					if err != nil {
						b.Fatal(err)
					}
					dfs = append(dfs, idx)
				}
				probe, count := dataflow.NewProbe(1), &rowCount{}
				q, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: index != "imported", AsOf: frontier.Min(), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						var l, r *dataflow.Arrangement
						var err error
						if index == "imported" {
							if l, err = c.ImportIndex("l"); err != nil {
								return err
							}
							if r, err = c.ImportIndex("r"); err != nil {
								return err
							}
						} else if l, r, err = arrangeSides(c); err != nil {
							return err
						}
						j, err := Join(c, l, r, nil, OperatorOptions{Name: "join", Dataflow: "q"})
						if err != nil {
							return err
						}
						c.Probe(probe, j.Oks)
						return countRows(c, j.Oks, count)
					}}, 1)
				if err != nil {
					b.Fatal(err)
				}
				dfs = append(dfs, q)
				stepAll := func(tm uint64) {
					for !probe.Passed(tm) {
						moved := false
						for _, df := range dfs {
							for df.Step() {
								moved = true
							}
						}
						if !moved && !probe.Passed(tm) {
							b.Fatalf("stuck: probe at %v, want past %d", probe.Frontier(), tm)
						}
					}
				}
				stepAll(0)
				if count.n != int64(n) {
					b.Fatalf("joined %d rows at start, want %d", count.n, n)
				}
				vals := [2][]int64{slices.Clone(rows.lv), slices.Clone(rows.rv)}
				keys := [2][]int64{rows.lk, rows.rk}
				rng := rand.New(rand.NewPCG(11, uint64(round)))
				chunks := [2]*dataflow.Chunk{dataflow.NewChunk(2, 2*round), dataflow.NewChunk(2, 2*round)}
				tm := uint64(1)
				b.ReportAllocs()
				for b.Loop() {
					for i, name := range []string{"l", "r"} {
						ch := chunks[i]
						ch.Rows, ch.Times, ch.Diffs = ch.Rows[:0], ch.Times[:0], ch.Diffs[:0]
						for range round {
							x := rng.IntN(n)
							ch.Push([]int64{keys[i][x], vals[i][x]}, tm, -1)
							vals[i][x] = rng.Int64()
							ch.Push([]int64{keys[i][x], vals[i][x]}, tm, 1)
						}
						if err := env.Inputs.Send(name, ch); err != nil {
							b.Fatal(err)
						}
						if err := env.Inputs.Advance(name, frontier.At(tm+1)); err != nil {
							b.Fatal(err)
						}
					}
					stepAll(tm)
					if index == "imported" {
						for _, id := range []string{"l", "r"} {
							if err := env.Manager.AllowCompaction(id, frontier.At(tm)); err != nil {
								b.Fatal(err)
							}
						}
					}
					env.Manager.Maintain(int64(4 * round))
					tm++
				}
				if count.n != int64(n) {
					b.Fatalf("%d rows after the rounds, want %d", count.n, n)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(4*round), "ns/update")
			})
		}
	}
}
