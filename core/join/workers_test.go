package join

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
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
			Worker: w, Peers: peers, Manager: dataflow.NewTraceManager(), Hub: hub,
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
func errTriangles(c *dataflow.Context, strategy string, m *Metrics) (dataflow.Collection, error) {
	in, err := c.Input("edges", 2)
	if err != nil {
		return dataflow.Collection{}, err
	}
	b := c.NewOperator("zero errs")
	z := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
	z.oks, z.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	if err := b.Build(z); err != nil {
		return dataflow.Collection{}, err
	}
	edges := dataflow.Collection{Arity: 2, Oks: z.oks, Errs: z.errs}
	bySrc, err := c.Arrange(edges, []int{0})
	if err != nil {
		return dataflow.Collection{}, err
	}
	byDst, err := c.Arrange(edges, []int{1})
	if err != nil {
		return dataflow.Collection{}, err
	}
	byBoth, err := c.Arrange(edges, []int{0, 1})
	if err != nil {
		return dataflow.Collection{}, err
	}
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
// as_of after the first rounds, on 1, 2 and 4 workers stepped in turn (so
// a worker lags its peers by a round of exchanges): the delta join, the
// linear join and a nested loop agree at every time from as_of, rows and
// error multiplicities (each erring edge three times, once per `from`
// entry), and no operator counts an input's error as its own. Without the
// exchange before each half join, proposals meet the lookup shards of the
// wrong worker and rows go missing at 2 and 4 workers.
func TestTrianglesOnWorkers(t *testing.T) {
	const nodes, rounds, asOf = 6, 7, 2
	for _, peers := range []int{1, 2, 4} {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("workers=%d/seed=%d", peers, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 99))
				envs, hub := workerEnvs(t, peers)
				type caps struct{ oks, errs *dataflow.Capture }
				out := map[string]caps{}
				metrics := map[string]*Metrics{}
				var dfs []*dataflow.Dataflow
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
					stepAll(dfs, peers)
				}
				for _, env := range envs {
					if err := env.Inputs.Declare("edges", 2); err != nil {
						t.Fatal(err)
					}
				}
				for tm := range uint64(asOf) {
					send(tm)
				}
				for i, strategy := range []string{"delta", "linear"} {
					out[strategy] = caps{dataflow.NewCapture(peers), dataflow.NewCapture(peers)}
					metrics[strategy] = &Metrics{}
					for _, env := range envs {
						df, err := dataflow.Build(env, dataflow.Desc{ID: strategy, AsOf: frontier.At(asOf), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								coll, err := errTriangles(c, strategy, metrics[strategy])
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
							}}, uint64(i+1))
						if err != nil {
							t.Fatal(err)
						}
						dfs = append(dfs, df)
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
