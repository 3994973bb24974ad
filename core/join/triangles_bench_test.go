package join

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// triangles adds the triangle query e1(a,b), e2(b,c), e3(a,c) over the
// edge input to a dataflow, as a delta join or a linear one, and returns
// its output (rows (a, b, c)).
//
// Arrangements of the edges: by src (val dst), by dst (val src), by both
// (no val). delta: path 1 from e1 (a,b) looks up e2 by b, then e3 by
// (a,c); path 2 from e2 (b,c) looks up e1 by dst b, then e3 by (a,c);
// path 3 from e3 (a,c) looks up e1 by src a, then e2 by (b,c). linear:
// e1 by dst ⋈ e2 by src on b gives (b, a, c), arranged by (a, c) and
// joined with e3 by both.
func triangles(c *dataflow.Context, strategy string) (dataflow.Collection, error) {
	in, err := c.Input("edges", 2)
	if err != nil {
		return dataflow.Collection{}, err
	}
	bySrc, err := c.Arrange(in, []int{0})
	if err != nil {
		return dataflow.Collection{}, err
	}
	byDst, err := c.Arrange(in, []int{1})
	if err != nil {
		return dataflow.Collection{}, err
	}
	byBoth, err := c.Arrange(in, []int{0, 1})
	if err != nil {
		return dataflow.Collection{}, err
	}
	if strategy == "linear" {
		bac, err := Join(c, byDst, bySrc, nil, OperatorOptions{Name: "e1 e2"})
		if err != nil {
			return dataflow.Collection{}, err
		}
		acb, err := c.Arrange(bac, []int{1, 2})
		if err != nil {
			return dataflow.Collection{}, err
		}
		// (a, c, b) ⋈ e3 by (a, c): rows (a, c, b) -> (a, b, c).
		return Join(c, acb, byBoth, &Project{Cols: []int{0, 2, 1}}, OperatorOptions{Name: "e3"})
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
	return DeltaJoin(c, paths, OperatorOptions{Name: "triangles"})
}

// zipf draws node ids with Zipf-distributed degrees: s = 1.2, v = 100
// (about 4.9 million wedges over 100,000 edges and nodes, the largest
// in-degree near 270).
func zipf(rng *rand.Rand, nodes int) *rand.Zipf { return rand.NewZipf(rng, 1.2, 100, uint64(nodes-1)) }

// zipfEdges draws m distinct edges without loops over nodes nodes.
func zipfEdges(rng *rand.Rand, nodes, m int) [][2]int64 {
	z := zipf(rng, nodes)
	seen := map[[2]int64]bool{}
	var out [][2]int64
	for len(out) < m {
		e := [2]int64{int64(z.Uint64()), int64(z.Uint64())}
		if e[0] == e[1] || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}

// BenchmarkTriangles: triangle listing over a graph of 100,000 edges with
// Zipf degrees, by a delta join and by a linear join of the same edges,
// then rounds of 100 edge changes (one edge removed, another added) until
// the query's probe passes the round. ns/update is per changed edge;
// trace-B is the bytes every arrangement of the query holds at the end —
// delta: the three edge arrangements only; linear: those plus its
// intermediate arrangement.
func BenchmarkTriangles(b *testing.B) {
	const edges, round = 100_000, 100
	for _, strategy := range []string{"delta", "linear"} {
		b.Run(fmt.Sprintf("edges=%d/join=%s", edges, strategy), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			nodes := edges
			es := zipfEdges(rng, nodes, edges)
			env := benchEnv(b)
			ch := dataflow.NewChunk(2, len(es))
			for _, e := range es {
				ch.Push(e[:], 0, 1)
			}
			if err := env.Inputs.Send("edges", ch); err != nil {
				b.Fatal(err)
			}
			if err := env.Inputs.Advance("edges", frontier.At(1)); err != nil {
				b.Fatal(err)
			}
			probe, count := dataflow.NewProbe(1), &rowCount{}
			q, err := dataflow.Build(env, dataflow.Desc{ID: "triangles", AsOf: frontier.Min(), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					out, err := triangles(c, strategy)
					if err != nil {
						return err
					}
					c.ProbeChunks(probe, out.Oks)
					return countRows(c, out.Oks, count)
				}}, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer q.Drop()
			for !probe.Passed(0) && q.Step() {
			}
			initial := count.n
			present := map[[2]int64]int{}
			for i, e := range es {
				present[e] = i
			}
			z := zipf(rng, nodes)
			upd := dataflow.NewChunk(2, 2*round)
			tm := uint64(1)
			b.ReportAllocs()
			for b.Loop() {
				upd.Rows, upd.Times, upd.Diffs = upd.Rows[:0], upd.Times[:0], upd.Diffs[:0]
				for range round {
					i := rng.IntN(len(es))
					upd.Push(es[i][:], tm, -1)
					delete(present, es[i])
					for {
						e := [2]int64{int64(z.Uint64()), int64(z.Uint64())}
						if _, ok := present[e]; ok || e[0] == e[1] {
							continue
						}
						es[i] = e
						present[e] = i
						upd.Push(e[:], tm, 1)
						break
					}
				}
				if err := env.Inputs.Send("edges", upd); err != nil {
					b.Fatal(err)
				}
				if err := env.Inputs.Advance("edges", frontier.At(tm+1)); err != nil {
					b.Fatal(err)
				}
				for !probe.Passed(tm) && q.Step() {
				}
				if !probe.Passed(tm) {
					b.Fatalf("probe at %v, want past %d", probe.Frontier(), tm)
				}
				env.Manager.Maintenance(4 * round)
				tm++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*round), "ns/update")
			b.ReportMetric(float64(env.Manager.TraceStats().Bytes), "trace-B")
			b.ReportMetric(float64(initial), "triangles")
		})
	}
}
