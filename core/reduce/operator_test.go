package reduce

import (
	"errors"
	"fmt"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
)

// divide is an upstream map: row (k, a, b) becomes record (k, a, 60 / b),
// or the error `division by zero` (code 1) with the row's count when b is
// 0 — an aggregate's argument whose expression errs, out of its group
// before the reduce sees it.
type divide struct {
	in        *dataflow.Port[*dataflow.Chunk]
	oks, errs *dataflow.Stream[*dataflow.Chunk]
}

func (o *divide) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		oks, errs := dataflow.NewChunk(3, c.Len()), dataflow.NewChunk(1, 0)
		for i := range c.Len() {
			r := c.Row(i)
			if r[2] == 0 {
				errs.Push([]int64{1}, c.Times[i], c.Diffs[i])
				continue
			}
			oks.Push([]int64{r[0], r[1], 60 / r[2]}, c.Times[i], c.Diffs[i])
		}
		o.oks.Send(oks)
		o.errs.Send(errs)
	}
	return frontier.Empty()
}

func (o *divide) Shutdown() {}

func addDivide(c *dataflow.Context, in dataflow.Collection) (dataflow.Collection, error) {
	b := c.NewOperator("divide")
	op := &divide{in: dataflow.AddInput(b, "rows", in.Oks)}
	op.oks, op.errs = dataflow.AddOutput[*dataflow.Chunk](b), dataflow.AddOutput[*dataflow.Chunk](b)
	return dataflow.Collection{Arity: 3, Oks: op.oks, Errs: op.errs}, b.Build(op)
}

// sink collects a collection's oks and errors.
type sink struct {
	oks, errs *dataflow.Port[*dataflow.Chunk]
	got       collected
	keyArity  int
}

func (o *sink) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.oks.Take() {
		for i := range c.Len() {
			r := c.Row(i)
			o.got.oks = append(o.got.oks, updOf(r[:o.keyArity], r[o.keyArity:], c.Times[i], c.Diffs[i]))
		}
	}
	for _, c := range o.errs.Take() {
		for i := range c.Len() {
			o.got.errs = append(o.got.errs, updOf(c.Row(i), nil, c.Times[i], c.Diffs[i]))
		}
	}
	return frontier.Empty()
}

func (o *sink) Shutdown() {}

func addSink(c *dataflow.Context, coll dataflow.Collection, keyArity int) (*sink, error) {
	b := c.NewOperator("sink")
	s := &sink{oks: dataflow.AddInput(b, "oks", coll.Oks), errs: dataflow.AddInput(b, "errs", coll.Errs), keyArity: keyArity}
	return s, b.Build(s)
}

// TestReduceOperatorImportedEqualsDirect runs a reduce operator in
// dataflows on one worker: direct (the query arranges its input) and
// imported (another dataflow maintains and exports the index, the query
// imports it at as_of). Both equal the model at every time from as_of on,
// the upstream map's `division by zero` errors passed through once.
func TestReduceOperatorImportedEqualsDirect(t *testing.T) {
	const asOf, rounds = 2, 9
	aggs := []Aggregate{{Fn: Count}, {Fn: Sum, Col: 1}, {Fn: Min, Col: 1}}
	rng := rand.New(rand.NewPCG(8, 8))
	type row struct {
		t    uint64
		d    int64
		k, a int64
		b    int64
	}
	var rows []row
	for tm := range uint64(rounds) {
		for range 1 + rng.IntN(8) {
			d := int64(rng.IntN(5)) - 2
			if d == 0 {
				d = 1
			}
			rows = append(rows, row{tm, d, int64(rng.IntN(4)), int64(rng.IntN(3)), int64(rng.IntN(4))})
		}
	}
	for _, imported := range []bool{false, true} {
		t.Run(fmt.Sprintf("imported=%v", imported), func(t *testing.T) {
			var failed []error
			env := &dataflow.Env{
				Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
				Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
				Fail: func(_ string, err error) { failed = append(failed, err) },
			}
			env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
			send := func(tm uint64) {
				ch := dataflow.NewChunk(3, 0)
				for _, r := range rows {
					if r.t == tm {
						ch.Push([]int64{r.k, r.a, r.b}, r.t, r.d)
					}
				}
				if err := env.Inputs.Send("rows", ch); err != nil {
					t.Fatal(err)
				}
				if err := env.Inputs.Advance("rows", frontier.At(tm+1)); err != nil {
					t.Fatal(err)
				}
			}
			source := func(c *dataflow.Context) (*dataflow.Arrangement, error) {
				in, err := c.Input("rows", 3)
				if err != nil {
					return nil, err
				}
				mapped, err := addDivide(c, in)
				if err != nil {
					return nil, err
				}
				return c.Arrange(mapped, []int{0})
			}
			var dfs []*dataflow.Dataflow
			defer func() {
				for i := len(dfs) - 1; i >= 0; i-- {
					dfs[i].Drop()
				}
			}()
			if imported {
				maint, err := dataflow.Build(env, dataflow.Desc{ID: "maint", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Exports: []string{"idx"},
					Build: func(c *dataflow.Context) error {
						a, err := source(c)
						if err != nil {
							return err
						}
						return c.Export("idx", a)
					}}, 1)
				if err != nil {
					t.Fatal(err)
				}
				dfs = append(dfs, maint)
				for tm := range uint64(asOf + 1) {
					send(tm)
					for maint.Step() {
					}
				}
			}
			var out *sink
			st := NewStats("query", "reduce")
			query, err := dataflow.Build(env, dataflow.Desc{ID: "query", Maintained: !imported, AsOf: frontier.At(asOf), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					var a *dataflow.Arrangement
					var err error
					if imported {
						a, err = c.ImportIndex("idx")
					} else {
						a, err = source(c)
					}
					if err != nil {
						return err
					}
					coll, err := AddReduce(c, a, aggs, OperatorOptions{Dataflow: "query", ForwardErrs: true, Stats: st})
					if err != nil {
						return err
					}
					out, err = addSink(c, coll, 1)
					return err
				}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			dfs = append(dfs, query)
			start := uint64(0)
			if imported {
				start = asOf + 1
			}
			for tm := start; tm < rounds; tm++ {
				send(tm)
				for _, df := range dfs {
					for df.Step() {
					}
				}
			}
			for _, df := range dfs {
				for df.Step() {
				}
			}
			if len(failed) > 0 {
				t.Fatal(failed)
			}
			if err := st.Err(); err != nil {
				t.Fatalf("the reduce stopped: %v", err)
			}
			if st.Updates() == 0 {
				t.Fatal("the reduce retired no updates")
			}
			var ups []upd
			zeros := map[uint64]int64{}
			for _, r := range rows {
				if r.b == 0 {
					zeros[max(r.t, asOf)] += r.d
					continue
				}
				ups = append(ups, u(r.k, r.a, 60/r.b, r.t, r.d))
			}
			var divErrs int64
			for tm := uint64(asOf); tm < rounds; tm++ {
				divErrs += zeros[tm]
				wantRows, wantErrs := model(ups, tm, asOf, aggs, modeReduce)
				if divErrs != 0 {
					wantErrs[expr.MsgDivisionByZero] = divErrs
				}
				checkAt(t, &out.got, tm, wantRows, wantErrs)
			}
			// Nothing is presented before as_of (§3.3), the forwarded
			// errors no more than the rows: the accumulations checked
			// above cannot tell an error at its source time from one
			// advanced to as_of.
			for _, up := range out.got.oks {
				if up.Time < asOf {
					t.Errorf("row %v presented at %d, before as_of %d", up, up.Time, asOf)
				}
			}
			for _, up := range out.got.errs {
				if up.Time < asOf {
					t.Errorf("error %v presented at %d, before as_of %d", up, up.Time, asOf)
				}
			}
		})
	}
}

func updOf(k, v []int64, t uint64, d int64) batch.Update {
	return batch.Update{Key: append([]int64(nil), k...), Val: append([]int64(nil), v...), Time: t, Diff: d}
}

// TestAddOperatorsRefuseANilArrangement: a nil arrangement given to
// AddReduce, AddThreshold or AddDistinct is the operator's error
// (ErrArity, naming it), not a nil dereference in the Build.
func TestAddOperatorsRefuseANilArrangement(t *testing.T) {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(_ string, err error) { t.Error(err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
		for name, add := range map[string]func() error{
			"reduce":    func() error { _, err := AddReduce(c, nil, []Aggregate{{Fn: Count}}, OperatorOptions{}); return err },
			"threshold": func() error { _, err := AddThreshold(c, nil, OperatorOptions{}); return err },
			"distinct":  func() error { _, err := AddDistinct(c, nil, OperatorOptions{}); return err },
		} {
			if err := add(); !errors.Is(err, ErrArity) || !strings.Contains(err.Error(), `operator "`+name+`": no arrangement`) {
				t.Errorf("%s of a nil arrangement: %v, want ErrArity naming the operator", name, err)
			}
		}
		return nil
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	df.Drop()
}
