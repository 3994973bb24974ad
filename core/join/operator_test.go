package join

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// dfEnv is one worker's environment for dataflows built in a test.
func dfEnv(t *testing.T) *dataflow.Env {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { t.Errorf("dataflow %s: %v", df, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	return env
}

// deltaPaths is the three-way delta join of arrangements by column 0, with
// rows (k, v0, v1, v2) from every path.
func deltaPaths(arr []*dataflow.Arrangement) []DeltaPath {
	var paths []DeltaPath
	for i := range arr {
		var stages []DeltaStage
		for j := range arr {
			if j != i {
				stages = append(stages, DeltaStage{Lookup: arr[j], Relation: j, StreamKey: []int{0}})
			}
		}
		paths = append(paths, DeltaPath{Source: i, Arranged: arr[i], Stages: stages, Final: &Project{Cols: pathOrder(len(arr), i)}})
	}
	return paths
}

// queryOps adds the binary join of entries 0 and 1 and the delta join of
// all three, each arranged by its key and captured.
func queryOps(c *dataflow.Context, arr []*dataflow.Arrangement, metrics *Metrics, bcap, dcap *dataflow.Capture) error {
	errs := []dataflow.Arranged{arr[0].Errs, arr[1].Errs}
	j, err := Join(c, arr[0], arr[1], nil, OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics, Errs: errs})
	if err != nil {
		return err
	}
	ja, err := c.Arrange(j, []int{0})
	if err != nil {
		return err
	}
	c.Capture(bcap, ja.Oks)
	d, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Metrics: metrics,
		Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs, arr[2].Errs}})
	if err != nil {
		return err
	}
	da, err := c.Arrange(d, []int{0})
	if err != nil {
		return err
	}
	c.Capture(dcap, da.Oks)
	return nil
}

func capturedAt(cp *dataflow.Capture, t uint64) map[string]int64 {
	m := map[string]int64{}
	for _, rd := range cp.At(t) {
		m[fmt.Sprint(rd.Row)] = rd.Diff
	}
	return m
}

// TestOperatorsImportedEqualDirect runs the join operators in dataflows:
// once over arrangements built in the query (direct), once over indexes a
// maintained dataflow exports and the query imports at as_of (imported),
// both checked against the nested-loop join at every time from as_of.
func TestOperatorsImportedEqualDirect(t *testing.T) {
	for seed := range uint64(12) {
		for _, index := range []string{"direct", "imported"} {
			t.Run(fmt.Sprintf("seed=%d/index=%s", seed, index), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 8))
				asOf := uint64(rng.IntN(3))
				rounds := asOf + 3 + uint64(rng.IntN(4))
				env := dfEnv(t)
				names := []string{"r0", "r1", "r2"}
				var dfs []*dataflow.Dataflow
				defer func() {
					for i := len(dfs) - 1; i >= 0; i-- {
						dfs[i].Drop()
					}
				}()
				all := make([][]upd, 3)
				send := func(tm uint64) {
					for i, n := range names {
						ups := randomUpdates(rng, rng.IntN(6), 4, tm)
						ups = append(ups, retractSome(rng, all[i], rng.IntN(2), tm)...)
						all[i] = append(all[i], ups...)
						ch := dataflow.NewChunk(2, len(ups))
						for _, u := range ups {
							ch.Push([]int64{u.key, u.val}, u.t, u.d)
						}
						if err := env.Inputs.Send(n, ch); err != nil {
							t.Fatal(err)
						}
						if err := env.Inputs.Advance(n, frontier.At(tm+1)); err != nil {
							t.Fatal(err)
						}
					}
					for _, df := range dfs {
						for df.Step() {
						}
					}
				}
				metrics := &Metrics{}
				bcap, dcap := dataflow.NewCapture(1), dataflow.NewCapture(1)
				if index == "imported" {
					df, err := dataflow.Build(env, dataflow.Desc{ID: "indexes", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
						Exports: []string{"i0", "i1", "i2"},
						Build: func(c *dataflow.Context) error {
							arr, err := arrangeInputs(c, names...)
							if err != nil {
								return err
							}
							for i, a := range arr {
								if err := c.Export(fmt.Sprintf("i%d", i), a); err != nil {
									return err
								}
							}
							return nil
						}}, 1)
					if err != nil {
						t.Fatal(err)
					}
					dfs = append(dfs, df)
					// At least one sealed batch before the import.
					for tm := range max(asOf, 1) {
						send(tm)
					}
					for i := range 3 {
						if err := env.Manager.AllowCompaction(fmt.Sprintf("i%d", i), frontier.At(asOf)); err != nil {
							t.Fatal(err)
						}
					}
					env.Manager.Maintain(1 << 20)
				} else {
					for tm := range asOf {
						send(tm)
					}
				}
				first := asOf
				if index == "imported" {
					first = max(asOf, 1)
				}
				q, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: index != "imported", AsOf: frontier.At(asOf), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						var arr []*dataflow.Arrangement
						if index == "imported" {
							for i := range 3 {
								a, err := c.ImportIndex(fmt.Sprintf("i%d", i))
								if err != nil {
									return err
								}
								arr = append(arr, a)
							}
						} else {
							var err error
							if arr, err = arrangeInputs(c, names...); err != nil {
								return err
							}
						}
						return queryOps(c, arr, metrics, bcap, dcap)
					}}, 1)
				if err != nil {
					t.Fatal(err)
				}
				dfs = append(dfs, q)
				for tm := first; tm < rounds; tm++ {
					send(tm)
				}
				if !bcap.Passed(rounds-1) || !dcap.Passed(rounds-1) {
					t.Fatalf("captures at %v and %v, want past %d", bcap.Frontier(), dcap.Frontier(), rounds-1)
				}
				for tm := asOf; tm < rounds; tm++ {
					accs := []map[[2]int64]int64{acc(all[0], tm), acc(all[1], tm), acc(all[2], tm)}
					if d := diffMaps(naiveJoin(accs[0], accs[1]), capturedAt(bcap, tm)); d != "" {
						t.Fatalf("as_of %d: binary join at %d:\n%s", asOf, tm, d)
					}
					if d := diffMaps(naiveN(accs), capturedAt(dcap, tm)); d != "" {
						t.Fatalf("as_of %d: delta join at %d:\n%s", asOf, tm, d)
					}
				}
				for _, ec := range metrics.ErrorCounts() {
					if ec.Errors != 0 {
						t.Fatalf("%v: errors without an erring expression", ec)
					}
				}
			})
		}
	}
}

// zeroErrs passes rows through and turns each row whose column 1 is 0 into
// the error division by zero with the row's diff: a collection that
// carries errors, built with the exported operator API.
type zeroErrs struct {
	in        *dataflow.Port[*dataflow.Chunk]
	oks, errs *dataflow.Stream[*dataflow.Chunk]
}

func (o *zeroErrs) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		ok, bad := dataflow.NewChunk(c.Arity, c.Len()), dataflow.NewChunk(1, 0)
		for i := range c.Len() {
			if c.Row(i)[1] == 0 {
				bad.Push([]int64{codeDivisionByZero}, c.Times[i], c.Diffs[i])
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

// TestOperatorsPropagateEntryErrorsOnce: entries whose rows err carry
// those errors into the joins once per entry — the binary join of R0 and
// R1 carries R0's and R1's, the three-path delta join each entry's once —
// and neither operator counts them as its own.
func TestOperatorsPropagateEntryErrorsOnce(t *testing.T) {
	env := dfEnv(t)
	metrics := &Metrics{}
	bcap, dcap := dataflow.NewCapture(1), dataflow.NewCapture(1)
	becap, decap := dataflow.NewCapture(1), dataflow.NewCapture(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			var arr []*dataflow.Arrangement
			for _, n := range []string{"r0", "r1", "r2"} {
				in, err := c.Input(n, 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("zero errs " + n)
				op := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
				op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
				if err := b.Build(op); err != nil {
					return err
				}
				a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.oks, Errs: op.errs}, []int{0})
				if err != nil {
					return err
				}
				arr = append(arr, a)
			}
			j, err := Join(c, arr[0], arr[1], nil, OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics, Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}})
			if err != nil {
				return err
			}
			d, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Metrics: metrics,
				Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs, arr[2].Errs}})
			if err != nil {
				return err
			}
			for _, x := range []struct {
				coll      dataflow.Collection
				oks, errs *dataflow.Capture
			}{{j, bcap, becap}, {d, dcap, decap}} {
				a, err := c.Arrange(x.coll, []int{0})
				if err != nil {
					return err
				}
				c.Capture(x.oks, a.Oks)
				c.Capture(x.errs, a.Errs)
			}
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	rows := map[string][][3]int64{ // key, val, diff at time 0
		"r0": {{1, 10, 1}, {1, 0, 2}},
		"r1": {{1, 20, 1}, {2, 0, 1}},
		"r2": {{1, 30, 1}, {3, 0, 5}},
	}
	for n, rs := range rows {
		ch := dataflow.NewChunk(2, len(rs))
		for _, r := range rs {
			ch.Push([]int64{r[0], r[1]}, 0, r[2])
		}
		if err := env.Inputs.Send(n, ch); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance(n, frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
	for df.Step() {
	}
	if got := fmt.Sprint(becap.At(0)); got != "[{[1] 3}]" {
		t.Errorf("binary join errors %s, want division by zero x3 (R0's 2 + R1's 1)", got)
	}
	if got := fmt.Sprint(decap.At(0)); got != "[{[1] 8}]" {
		t.Errorf("delta join errors %s, want division by zero x8 (2 + 1 + 5, once per entry)", got)
	}
	if got := fmt.Sprint(bcap.At(0)); got != "[{[1 10 20] 1}]" {
		t.Errorf("binary join rows %s", got)
	}
	if got := fmt.Sprint(dcap.At(0)); got != "[{[1 10 20 30] 1}]" {
		t.Errorf("delta join rows %s", got)
	}
	for _, ec := range metrics.ErrorCounts() {
		if ec.Errors != 0 {
			t.Errorf("%s counts %d errors as its own, want 0", ec.Operator, ec.Errors)
		}
	}
}

// TestOperatorsNestedAndDiamondErrorMultiplicities: a view that is a join
// carries its entries' errors once each; a join of two views that both read
// the failing input (a diamond) carries each view's errors once, so the
// failing row's error (count 3) doubles per level — ×2, ×4, ×8 over three
// levels, as docs/spec.md's rule gives, never ×(1+P) per level — and no
// operator counts them as its own (§8.28).
func TestOperatorsNestedAndDiamondErrorMultiplicities(t *testing.T) {
	env := dfEnv(t)
	metrics := &Metrics{}
	caps := []*dataflow.Capture{dataflow.NewCapture(1), dataflow.NewCapture(1), dataflow.NewCapture(1), dataflow.NewCapture(1)}
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			var arr []*dataflow.Arrangement
			for _, n := range []string{"r0", "r1"} {
				in, err := c.Input(n, 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("zero errs " + n)
				op := &zeroErrs{in: dataflow.AddInput(b, "rows", in.Oks)}
				op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
				if err := b.Build(op); err != nil {
					return err
				}
				a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.oks, Errs: op.errs}, []int{0})
				if err != nil {
					return err
				}
				arr = append(arr, a)
			}
			// Level 0: V = R0 ⋈ R1, twice (two views over the failing R0).
			var level []*dataflow.Arrangement
			for v := range 2 {
				j, err := Join(c, arr[0], arr[1], nil, OperatorOptions{Name: fmt.Sprintf("view %d", v), Dataflow: "q", Metrics: metrics,
					Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}})
				if err != nil {
					return err
				}
				// Arranged by k, the views join with each other.
				a, err := c.Arrange(dataflow.Collection{Arity: 3, Oks: j.Oks, Errs: j.Errs}, []int{0})
				if err != nil {
					return err
				}
				level = append(level, a)
			}
			c.Capture(caps[0], level[0].Errs)
			// Levels 1..3: L = A ⋈ B over the two arrangements of the level
			// before; the next level joins L with itself.
			for l := 1; l <= 3; l++ {
				j, err := Join(c, level[0], level[1], &Project{Cols: []int{0, 1, 2}}, OperatorOptions{Name: fmt.Sprintf("level %d", l), Dataflow: "q", Metrics: metrics,
					Errs: []dataflow.Arranged{level[0].Errs, level[1].Errs}})
				if err != nil {
					return err
				}
				a, err := c.Arrange(j, []int{0})
				if err != nil {
					return err
				}
				c.Capture(caps[l], a.Errs)
				level = []*dataflow.Arrangement{a, a}
			}
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for n, rs := range map[string][][3]int64{"r0": {{1, 10, 1}, {1, 0, 3}}, "r1": {{1, 20, 1}}} {
		ch := dataflow.NewChunk(2, len(rs))
		for _, r := range rs {
			ch.Push([]int64{r[0], r[1]}, 0, r[2])
		}
		if err := env.Inputs.Send(n, ch); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance(n, frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
	for df.Step() {
	}
	for l, want := range []int64{3, 6, 12, 24} {
		if got := fmt.Sprint(caps[l].At(0)); got != fmt.Sprintf("[{[1] %d}]", want) {
			t.Errorf("level %d errors %s, want division by zero x%d", l, got, want)
		}
	}
	for _, ec := range metrics.ErrorCounts() {
		if ec.Errors != 0 {
			t.Errorf("%s counts %d errors as its own, want 0", ec.Operator, ec.Errors)
		}
	}
}

// TestTrianglesDeltaEqualsLinear lists triangles e1(a,b), e2(b,c), e3(a,c)
// of a small random graph changing over rounds, with the delta join (two-
// column lookup keys, paths whose rows are permutations of (a, b, c)) and
// with the linear join, and compares both with a nested loop at every
// time (as differential-dataflow's delta_query example cross-checks).
func TestTrianglesDeltaEqualsLinear(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 12))
		env := dfEnv(t)
		caps := map[string]*dataflow.Capture{"delta": dataflow.NewCapture(1), "linear": dataflow.NewCapture(1)}
		var dfs []*dataflow.Dataflow
		for _, strategy := range []string{"delta", "linear"} {
			df, err := dataflow.Build(env, dataflow.Desc{ID: strategy, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					out, err := triangles(c, strategy)
					if err != nil {
						return err
					}
					a, err := c.Arrange(out, []int{0, 1, 2})
					if err != nil {
						return err
					}
					c.Capture(caps[strategy], a.Oks)
					return nil
				}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer df.Drop()
			dfs = append(dfs, df)
		}
		const nodes, rounds = 7, 6
		edges := map[[2]int64]int64{}
		var history []map[[2]int64]int64
		for tm := range uint64(rounds) {
			ch := dataflow.NewChunk(2, 0)
			for range 2 + rng.IntN(10) {
				e := [2]int64{int64(rng.IntN(nodes)), int64(rng.IntN(nodes))}
				if edges[e] > 0 && rng.IntN(2) == 0 {
					ch.Push(e[:], tm, -1)
					edges[e]--
				} else {
					ch.Push(e[:], tm, 1)
					edges[e]++
				}
			}
			history = append(history, maps.Clone(edges))
			if err := env.Inputs.Send("edges", ch); err != nil {
				t.Fatal(err)
			}
			if err := env.Inputs.Advance("edges", frontier.At(tm+1)); err != nil {
				t.Fatal(err)
			}
			for _, df := range dfs {
				for df.Step() {
				}
			}
		}
		for tm, g := range history {
			want := map[string]int64{}
			for e1, d1 := range g {
				for e2, d2 := range g {
					if e1[1] != e2[0] {
						continue
					}
					if d3 := g[[2]int64{e1[0], e2[1]}]; d1*d2*d3 != 0 {
						want[fmt.Sprint([]int64{e1[0], e1[1], e2[1]})] += d1 * d2 * d3
					}
				}
			}
			for name, cp := range caps {
				if d := diffMaps(want, capturedAt(cp, uint64(tm))); d != "" {
					t.Fatalf("seed %d: %s triangles at %d differ from the nested loop:\n%s", seed, name, tm, d)
				}
			}
		}
	}
}

// replay sends a fixed list of batches, one per step, inserting each into
// its trace first the first time it is sent (as an arrangement does).
type replay struct {
	out     *dataflow.Stream[*batch.Batch]
	w       *trace.Writer
	batches []*batch.Batch
	sent    map[*batch.Batch]bool
}

func (o *replay) Step(frontier.Frontier) frontier.Frontier {
	if len(o.batches) == 0 {
		return frontier.Empty()
	}
	b := o.batches[0]
	o.batches = o.batches[1:]
	if !o.sent[b] {
		o.sent[b] = true
		if err := o.w.Insert(b); err != nil {
			panic(err)
		}
	}
	o.out.Send(b)
	return b.Lower()
}

func (o *replay) Shutdown() {}

// TestJoinOperatorStopsOnABrokenStream: an arrangement whose stream
// delivers a batch twice breaks the join's exactly-once contract; the
// operator stops with the error in its Stats and as the dataflow's error
// (its Failer, naming the operator) and holds its output frontier where it
// stopped, instead of counting the batch twice or panicking.
func TestJoinOperatorStopsOnABrokenStream(t *testing.T) {
	env := dfEnv(t)
	var failed []error
	env.Fail = func(df string, err error) { failed = append(failed, fmt.Errorf("dataflow %s: %w", df, err)) }
	metrics := &Metrics{}
	lh, lw := trace.NewSpine(ar11, spine.Options{})
	rh, rw := trace.NewSpine(ar11, spine.Options{})
	b0 := mustBatch(t, ar11, []upd{{1, 10, 0, 1}}, 0, 1)
	b1 := mustBatch(t, ar11, []upd{{1, 11, 1, 1}}, 1, 2)
	probe := dataflow.NewProbe(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			side := func(h *trace.Handle, w *trace.Writer, bs ...*batch.Batch) (*dataflow.Arrangement, error) {
				b := c.NewOperator("replay")
				op := &replay{w: w, batches: bs, sent: map[*batch.Batch]bool{}}
				op.out = dataflow.AddOutput[*batch.Batch](b)
				if err := b.Build(op); err != nil {
					return nil, err
				}
				return &dataflow.Arrangement{Oks: dataflow.Arranged{Stream: op.out, Reader: h, Pres: batch.Identity(), Arity: ar11}}, nil
			}
			// The left stream delivers b0, b1 and b1 again.
			l, err := side(lh, lw, b0, b1, b1)
			if err != nil {
				return err
			}
			r, err := side(rh, rw)
			if err != nil {
				return err
			}
			j, err := Join(c, l, r, nil, OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics})
			if err != nil {
				return err
			}
			c.Probe(probe, j.Oks)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for range 10 {
		df.Step()
	}
	var stats *Stats
	for _, s := range metrics.Stats() {
		stats = s
	}
	if !errors.Is(stats.Err(), ErrOrder) {
		t.Fatalf("operator error %v, want ErrOrder", stats.Err())
	}
	if len(failed) != 1 || !errors.Is(failed[0], ErrOrder) || !strings.Contains(failed[0].Error(), `dataflow q: operator "join": join: `) {
		t.Fatalf("dataflow errors %v, want one ErrOrder naming dataflow q and operator \"join\"", failed)
	}
	// The package's prefix once: it read `join: operator "join": join:
	// stream batch ...`, the operator's wrapping adding it again.
	if got, want := failed[0].Error(), `dataflow q: operator "join": join: stream batch out of order: input 0 batch [{1}, {2}) since {0}, acknowledged through {2}`; got != want {
		t.Fatalf("dataflow error\n%s\nwant\n%s", got, want)
	}
	if got, want := stats.Err().Error(), `operator "join": join: stream batch out of order: input 0 batch [{1}, {2}) since {0}, acknowledged through {2}`; got != want {
		t.Fatalf("Stats.Err\n%s\nwant\n%s", got, want)
	}
	if probe.Passed(1) {
		t.Fatalf("output frontier %v passed the batch delivered twice", probe.Frontier())
	}
}

// TestDeltaJoinRefusesPathsOfAnotherJoin: paths that are not one delta
// join's — two from one entry, an entry or a lookup outside the paths, a
// path missing or repeating a lookup, no arrangement — are refused when
// the operator is made, with ErrArity naming the path: run, they matched
// a pair of updates on two paths, or emitted partial rows, without an
// error.
func TestDeltaJoinRefusesPathsOfAnotherJoin(t *testing.T) {
	env := dfEnv(t)
	for _, n := range []string{"r0", "r1", "r2"} {
		if err := env.Inputs.Declare(n, 2); err != nil {
			t.Fatal(err)
		}
	}
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
		arr, err := arrangeInputs(c, "r0", "r1", "r2")
		if err != nil {
			return err
		}
		for _, tc := range []struct {
			name string
			bend func(p []DeltaPath) []DeltaPath
			want string
		}{
			{"two paths from one entry", func(p []DeltaPath) []DeltaPath { p[1].Source = 0; return p }, "two paths are from entry 0"},
			{"an entry outside the paths", func(p []DeltaPath) []DeltaPath { p[2].Source = 5; return p }, "path 2 is from entry 5, outside the 3 entries"},
			{"a lookup outside the paths", func(p []DeltaPath) []DeltaPath { p[1].Stages[1].Relation = 7; return p }, "path from entry 1 looks up entry 7, outside the 3 entries"},
			{"a lookup twice", func(p []DeltaPath) []DeltaPath { p[0].Stages[1].Relation = 1; return p }, "path from entry 0 looks up entry 1 twice"},
			{"a lookup of its own entry", func(p []DeltaPath) []DeltaPath { p[0].Stages[0].Relation = 0; return p }, "path from entry 0 looks up its own entry"},
			{"a lookup missing", func(p []DeltaPath) []DeltaPath { p[2].Stages = p[2].Stages[:1]; return p }, "path from entry 2 looks up 1 entries, want the 2 others"},
			{"a path missing", func(p []DeltaPath) []DeltaPath { return p[:2] }, "path from entry 0 looks up 2 entries, want the 1 others"},
			{"no source arrangement", func(p []DeltaPath) []DeltaPath { p[1].Arranged = nil; return p }, "path 1 (entry 1) has no arrangement"},
			{"no lookup arrangement", func(p []DeltaPath) []DeltaPath { p[1].Stages[0].Lookup = nil; return p }, "path from entry 1: lookup of entry 0 has no arrangement"},
		} {
			_, err := DeltaJoin(c, tc.bend(deltaPaths(arr)), OperatorOptions{Name: "delta"})
			if !errors.Is(err, ErrArity) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want ErrArity naming %q", tc.name, err, tc.want)
			}
		}
		// Join's sides, as a path's arrangements: nil is refused.
		if _, err := Join(c, arr[0], nil, nil, OperatorOptions{Name: "join"}); !errors.Is(err, ErrArity) || !strings.Contains(err.Error(), "no left or right arrangement") {
			t.Errorf("join of a nil arrangement: err = %v, want ErrArity naming it", err)
		}
		_, err = DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta"})
		return err
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	df.Drop()
}

// TestADeltaJoinCopiesItsStreamKeys: a stage's half join reads its stream
// key at every step, and kept the caller's slice to do it, so a Build that
// reused the slice once DeltaJoin returned (sk[0] = 1) looked the stage's
// rows up by another column: (1 7) met (7 9) as (1 7 9), (2 1) met (1 8)
// as (2 1 8), and (1 7 8) was lost. DeltaJoin keeps a copy, as
// Context.Arrange does of its key.
func TestADeltaJoinCopiesItsStreamKeys(t *testing.T) {
	env := dfEnv(t)
	cp := dataflow.NewCapture(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			var arr []*dataflow.Arrangement
			for _, n := range []string{"a", "b"} {
				in, err := c.Input(n, 2)
				if err != nil {
					return err
				}
				a, err := c.Arrange(in, []int{0})
				if err != nil {
					return err
				}
				arr = append(arr, a)
			}
			sk := []int{0}
			d, err := DeltaJoin(c, []DeltaPath{
				{Source: 0, Arranged: arr[0], Stages: []DeltaStage{{Lookup: arr[1], Relation: 1, StreamKey: sk}}, Final: &Project{Cols: []int{0, 1, 2}}},
				{Source: 1, Arranged: arr[1], Stages: []DeltaStage{{Lookup: arr[0], Relation: 0, StreamKey: sk}}, Final: &Project{Cols: []int{0, 2, 1}}},
			}, OperatorOptions{Name: "delta", Dataflow: "q"})
			if err != nil {
				return err
			}
			sk[0] = 1
			a, err := c.Arrange(d, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for n, rows := range map[string][][]int64{"a": {{1, 7}, {2, 1}}, "b": {{1, 8}, {7, 9}}} {
		ch := dataflow.NewChunk(2, 0)
		for _, r := range rows {
			ch.Push(r, 0, 1)
		}
		if err := env.Inputs.Send(n, ch); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance(n, frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
	for df.Step() {
	}
	if !cp.Passed(0) {
		t.Fatalf("capture at %v, want past 0", cp.Frontier())
	}
	want := map[string]int64{"[1 7 8]": 1}
	if d := diffMaps(want, capturedAt(cp, 0)); d != "" {
		t.Fatalf("the join at 0:\n%s", d)
	}
}
