package join

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// workerEnvs returns the environments of peers workers connected by one
// hub, stepped by hand from one goroutine.
func workerEnvs(t *testing.T, peers int) ([]*dataflow.Env, *dataflow.Hub) {
	hub := dataflow.NewHub(peers)
	var envs []*dataflow.Env
	for w := range peers {
		env := &dataflow.Env{
			Worker: w, Peers: peers, Manager: dataflow.NewIndexManager(), Hub: hub,
			Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
			Fail: func(df string, err error) { t.Errorf("worker %d: dataflow %s: %v", w, df, err) },
		}
		env.Inputs = dataflow.NewInputs(w, peers, env.Activate)
		envs = append(envs, env)
	}
	return envs, hub
}

// stepAll steps every dataflow until all rest. Dataflow.Step reports only
// whether its last pass moved, not whether a peer has since sent it more,
// so with several workers the rounds repeat until a message has crossed
// every exchange of the dataflow (a triangle query has fewer than 16).
func stepAll(dfs []*dataflow.Dataflow, peers int) {
	rounds := 1
	if peers > 1 {
		rounds = 16
	}
	for range rounds {
		for range 100 {
			moved := false
			for _, df := range dfs {
				if df.Step() {
					moved = true
				}
			}
			if !moved {
				break
			}
		}
	}
}

// errTriangles lists the triangles e1(a,b), e2(b,c), e3(a,c) of the edges
// input, whose edges into node 0 are errors (zeroErrs): with the delta join
// (two-column lookups, every path exchanged before each half join on
// several workers) or the linear join. Each `from` entry's errors are
// carried once: three times each erring edge.
func errTriangles(c *dataflow.Context, strategy string, m *Metrics, imported bool) (dataflow.Collection, error) {
	var bySrc, byDst, byBoth *dataflow.Arrangement
	var err error
	if imported {
		var arr [3]*dataflow.Arrangement
		for i, id := range edgeIndexes {
			if arr[i], err = c.ImportIndex(id); err != nil {
				return dataflow.Collection{}, err
			}
			// NB: an import of a worker's empty shard does not know its
			// arity yet.
			arr[i].Oks.Arity = batch.Arity{Key: len(arr[i].Key), Val: 2 - len(arr[i].Key)}
			arr[i].Errs.Arity = batch.Arity{Key: 1}
		}
		bySrc, byDst, byBoth = arr[0], arr[1], arr[2]
	} else if bySrc, byDst, byBoth, err = arrangeEdges(c); err != nil {
		return dataflow.Collection{}, err
	}
	return trianglesOver(c, strategy, m, bySrc, byDst, byBoth)
}

// edgeIndexes are the ids arrangeEdges' arrangements are exported under.
var edgeIndexes = [3]string{"src", "dst", "both"}

// arrangeEdges arranges the edges input, whose edges into node 0 are
// errors, by source, by destination and by both.
func arrangeEdges(c *dataflow.Context) (bySrc, byDst, byBoth *dataflow.Arrangement, err error) {
	in, err := c.Input("edges", 2)
	if err != nil {
		return nil, nil, nil, err
	}
	b := c.NewOperator("zero errs")
	z := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
	z.oks, z.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(z); err != nil {
		return nil, nil, nil, err
	}
	edges := dataflow.Collection{Arity: 2, Oks: z.oks, Errs: z.errs}
	if bySrc, err = c.Arrange(edges, []int{0}); err != nil {
		return nil, nil, nil, err
	}
	if byDst, err = c.Arrange(edges, []int{1}); err != nil {
		return nil, nil, nil, err
	}
	byBoth, err = c.Arrange(edges, []int{0, 1})
	return bySrc, byDst, byBoth, err
}

// trianglesOver is the triangle query over the three arrangements.
func trianglesOver(c *dataflow.Context, strategy string, m *Metrics, bySrc, byDst, byBoth *dataflow.Arrangement) (dataflow.Collection, error) {
	if strategy == "linear" {
		bac, err := Join(c, byDst, bySrc, nil, OperatorOptions{Name: "e1 e2", Dataflow: "q", Metrics: m,
			Errs: []dataflow.Arranged{byDst.Errs, bySrc.Errs}})
		if err != nil {
			return dataflow.Collection{}, err
		}
		acb, err := c.Arrange(bac, []int{1, 2})
		if err != nil {
			return dataflow.Collection{}, err
		}
		return Join(c, acb, byBoth, &Project{Cols: []int{0, 2, 1}}, OperatorOptions{Name: "e3", Dataflow: "q", Metrics: m,
			Errs: []dataflow.Arranged{acb.Errs, byBoth.Errs}})
	}
	paths := []DeltaPath{
		{Source: 0, Arranged: bySrc, Stages: []DeltaStage{ // (a,b) +c
			{Lookup: bySrc, Relation: 1, StreamKey: []int{1}},
			{Lookup: byBoth, Relation: 2, StreamKey: []int{0, 2}},
		}},
		{Source: 1, Arranged: bySrc, Stages: []DeltaStage{ // (b,c) +a
			{Lookup: byDst, Relation: 0, StreamKey: []int{0}},
			{Lookup: byBoth, Relation: 2, StreamKey: []int{2, 1}},
		}, Final: &Project{Cols: []int{2, 0, 1}}},
		{Source: 2, Arranged: bySrc, Stages: []DeltaStage{ // (a,c) +b
			{Lookup: bySrc, Relation: 0, StreamKey: []int{0}},
			{Lookup: byBoth, Relation: 1, StreamKey: []int{2, 1}},
		}, Final: &Project{Cols: []int{0, 2, 1}}},
	}
	return DeltaJoin(c, paths, OperatorOptions{Name: "triangles", Dataflow: "q", Metrics: m,
		Errs: []dataflow.Arranged{bySrc.Errs, byDst.Errs, byBoth.Errs}})
}

// TestTrianglesOnWorkers is X1–X3 of the package doc: triangle listing
// (lookup keys other than the source's sharding key, one of two columns,
// paths whose rows are permutations of (a, b, c)) with edges into node 0
// as errors, changing over rounds with retractions, duplicates and an
// as_of after the first rounds, on 1, 2 and 4 workers stepped in turn, one
// of them lagging until every round is in: the delta join, the
// linear join and a nested loop agree at every time from as_of, rows and
// error multiplicities (each erring edge three times, once per `from`
// entry), and no operator counts an input's error as its own. Without the
// exchange before each half join, proposals meet the lookup shards of the
// wrong worker and rows go missing at 2 and 4 workers.
func TestTrianglesOnWorkers(t *testing.T) {
	const nodes, rounds, asOf = 6, 12, 2
	for _, peers := range []int{1, 2, 4} {
		for seed := range uint64(8) {
			// With an odd seed the last worker's query lags: it is not
			// stepped until every round is in, so its peers' exchanges wait
			// for its proposals. Seeds 2 and 3 mod 4 import the edge
			// indexes from a dataflow every worker keeps stepping and
			// allows to compact behind each round: there a lagging worker
			// does not hold the lookups' frontiers back, only the
			// exchanges' (X2), and a lookup compacted past the exchange's
			// frontier would advance times the late proposals compare with.
			lag := peers > 1 && seed%2 == 1
			imported := seed%4 >= 2
			t.Run(fmt.Sprintf("workers=%d/seed=%d/lag=%v/imported=%v", peers, seed, lag, imported), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 99))
				envs, hub := workerEnvs(t, peers)
				type caps struct{ oks, errs *dataflow.Capture }
				out := map[string]caps{}
				metrics := map[string]*Metrics{}
				var dfs, ahead []*dataflow.Dataflow // ahead: all but a lagging worker's
				var history []map[[2]int64]int64
				edges := map[[2]int64]int64{}
				send := func(tm uint64) {
					ch := dataflow.NewChunk(2, 0)
					for range 3 + rng.IntN(10) {
						e := [2]int64{int64(rng.IntN(nodes)), int64(rng.IntN(nodes))}
						d := int64(1 + rng.IntN(2)) // duplicates
						if edges[e] > 0 && rng.IntN(3) == 0 {
							d = -edges[e]
						}
						ch.Push(e[:], tm, d)
						edges[e] += d
					}
					history = append(history, maps.Clone(edges))
					for _, env := range envs {
						if err := env.Inputs.Send("edges", ch); err != nil {
							t.Fatal(err)
						}
						if err := env.Inputs.Advance("edges", frontier.At(tm+1)); err != nil {
							t.Fatal(err)
						}
					}
					if imported {
						for _, env := range envs {
							for _, id := range edgeIndexes {
								if err := env.Manager.AllowCompaction(id, frontier.At(tm)); err != nil {
									t.Fatal(err)
								}
							}
						}
					}
					if lag && tm+1 < rounds {
						stepAll(ahead, peers)
					} else {
						stepAll(dfs, peers)
					}
					for _, env := range envs {
						env.Manager.Maintain(1 << 20)
					}
				}
				for _, env := range envs {
					if err := env.Inputs.Declare("edges", 2); err != nil {
						t.Fatal(err)
					}
				}
				if imported {
					for _, env := range envs {
						df, err := dataflow.Build(env, dataflow.Desc{ID: "edges", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
							Exports: edgeIndexes[:],
							Build: func(c *dataflow.Context) error {
								bySrc, byDst, byBoth, err := arrangeEdges(c)
								if err != nil {
									return err
								}
								for i, a := range []*dataflow.Arrangement{bySrc, byDst, byBoth} {
									if err := c.Export(edgeIndexes[i], a); err != nil {
										return err
									}
								}
								return nil
							}}, 1)
						if err != nil {
							t.Fatal(err)
						}
						dfs, ahead = append(dfs, df), append(ahead, df)
					}
				}
				for tm := range uint64(asOf) {
					send(tm)
				}
				for i, strategy := range []string{"delta", "linear"} {
					out[strategy] = caps{dataflow.NewCapture(peers), dataflow.NewCapture(peers)}
					metrics[strategy] = &Metrics{}
					for w, env := range envs {
						df, err := dataflow.Build(env, dataflow.Desc{ID: strategy, Maintained: !imported, AsOf: frontier.At(asOf), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								coll, err := errTriangles(c, strategy, metrics[strategy], imported)
								if err != nil {
									return err
								}
								a, err := c.Arrange(coll, []int{0, 1, 2})
								if err != nil {
									return err
								}
								c.Capture(out[strategy].oks, a.Oks)
								c.Capture(out[strategy].errs, a.Errs)
								return nil
							}}, uint64(i+2))
						if err != nil {
							t.Fatal(err)
						}
						dfs = append(dfs, df)
						if !lag || w+1 < peers {
							ahead = append(ahead, df)
						}
					}
				}
				for tm := uint64(asOf); tm < rounds; tm++ {
					send(tm)
				}
				for tm := uint64(asOf); tm < rounds; tm++ {
					g := history[tm]
					want := map[string]int64{}
					var zeros int64
					for e, d := range g {
						if e[1] == 0 {
							zeros += d
						}
					}
					for e1, d1 := range g {
						for e2, d2 := range g {
							if e1[1] != e2[0] || e1[1] == 0 || e2[1] == 0 {
								continue
							}
							if d3 := g[[2]int64{e1[0], e2[1]}]; d1*d2*d3 != 0 {
								want[fmt.Sprint([]int64{e1[0], e1[1], e2[1]})] += d1 * d2 * d3
							}
						}
					}
					wantErrs := map[string]int64{}
					if zeros != 0 {
						wantErrs[fmt.Sprint([]int64{codeDivisionByZero})] = 3 * zeros
					}
					for name, cp := range out {
						if d := diffMaps(want, capturedAt(cp.oks, tm)); d != "" {
							t.Fatalf("%s triangles at %d differ from the nested loop:\n%s", name, tm, d)
						}
						if d := diffMaps(wantErrs, capturedAt(cp.errs, tm)); d != "" {
							t.Fatalf("%s triangle errors at %d differ (each erring edge once per from entry):\n%s", name, tm, d)
						}
					}
				}
				for name, m := range metrics {
					for _, st := range m.Stats() {
						if st.Errors() != 0 || st.Err() != nil {
							t.Errorf("%s: %s path %q: %d own errors, stopped by %v; want none", name, st.Operator, st.Path, st.Errors(), st.Err())
						}
					}
				}
				for i := len(dfs) - 1; i >= 0; i-- {
					dfs[i].Drop()
				}
				if n := hub.Len(); n != 0 {
					t.Errorf("%d exchanges live after every dataflow was dropped", n)
				}
			})
		}
	}
}

// TestDeltaOverflowOnWorkers: on 1, 2 and 4 workers a two-way delta join
// whose diff product leaves int64 yields `numeric overflow` once, at the
// later time with diff +1, counted as the producing path's own error
// (K3, K4 through a staged path), beside the rows of the other keys.
func TestDeltaOverflowOnWorkers(t *testing.T) {
	for _, peers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", peers), func(t *testing.T) {
			envs, _ := workerEnvs(t, peers)
			oks, errs := dataflow.NewCapture(peers), dataflow.NewCapture(peers)
			m := &Metrics{}
			var dfs []*dataflow.Dataflow
			for _, env := range envs {
				df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						arr, err := arrangeInputs(c, "r0", "r1")
						if err != nil {
							return err
						}
						paths := []DeltaPath{
							{Source: 0, Arranged: arr[0], Stages: []DeltaStage{{Lookup: arr[1], Relation: 1, StreamKey: []int{0}}}},
							{Source: 1, Arranged: arr[1], Stages: []DeltaStage{{Lookup: arr[0], Relation: 0, StreamKey: []int{0}}},
								Final: &Project{Cols: []int{0, 2, 1}}},
						}
						d, err := DeltaJoin(c, paths, OperatorOptions{Name: "delta", Dataflow: "q", Metrics: m,
							Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}})
						if err != nil {
							return err
						}
						a, err := c.Arrange(d, []int{0, 1, 2})
						if err != nil {
							return err
						}
						c.Capture(oks, a.Oks)
						c.Capture(errs, a.Errs)
						return nil
					}}, 1)
				if err != nil {
					t.Fatal(err)
				}
				dfs = append(dfs, df)
			}
			send := func(name string, tm uint64, rows ...[3]int64) {
				ch := dataflow.NewChunk(2, 0)
				for _, r := range rows {
					ch.Push(r[:2], tm, r[2])
				}
				for _, env := range envs {
					if err := env.Inputs.Send(name, ch); err != nil {
						t.Fatal(err)
					}
					if err := env.Inputs.Advance(name, frontier.At(tm+1)); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Rows (k, v) with diff: key 1 overflows at time 1 (2^62 * 4),
			// key 2 joins at time 0.
			send("r0", 0, [3]int64{1, 10, 1 << 62}, [3]int64{2, 20, 3})
			send("r1", 0, [3]int64{2, 30, 5})
			stepAll(dfs, peers)
			send("r0", 1)
			send("r1", 1, [3]int64{1, 40, 4})
			stepAll(dfs, peers)
			for tm := range uint64(2) {
				want := map[string]int64{"[2 20 30]": 15}
				wantErrs := map[string]int64{}
				if tm == 1 {
					wantErrs[fmt.Sprint([]int64{expr.CodeOverflow})] = 1
				}
				if d := diffMaps(want, capturedAt(oks, tm)); d != "" {
					t.Errorf("rows at %d:\n%s", tm, d)
				}
				if d := diffMaps(wantErrs, capturedAt(errs, tm)); d != "" {
					t.Errorf("errors at %d:\n%s", tm, d)
				}
			}
			var own int64
			for _, st := range m.Stats() {
				own += st.Errors()
			}
			if own != 1 {
				t.Errorf("paths count %d errors as their own, want 1", own)
			}
			for i := len(dfs) - 1; i >= 0; i-- {
				dfs[i].Drop()
			}
		})
	}
}
