package reduce_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// TestReduceEdgesInRuntimes runs a reduce (count, sum, min, max) grouped
// by the first column and by no column at all, in a Solo runtime that
// arranges in the query and in a pair that imports published indexes,
// on 1 and 2 workers, over scripted rounds: a group emptied and filled
// again, a min and a max whose extreme is retracted, a record whose count
// goes negative and comes back, and sums at int64's bounds that leave it
// and come back. The output at every time from as_of is a naive answer's.
func TestReduceEdgesInRuntimes(t *testing.T) {
	const asOf = 1
	type row struct {
		k, a, b int64
		d       int64
	}
	const hi, lo = math.MaxInt64, math.MinInt64
	rounds := [][]row{
		{{1, 0, hi - 1, 1}, {1, 1, 5, 1}, {2, 0, -3, 1}},
		{{1, 1, 5, -1}, {2, 0, lo, 1}},                     // group 1's min retracted
		{{2, 0, -3, -1}, {2, 0, lo, -1}, {1, 2, 1, 1}},     // group 2 empty; group 1's sum at MaxInt64
		{{2, 1, 7, 1}, {1, 3, 1, 1}},                       // group 2 again; group 1's sum beyond int64
		{{1, 3, 1, -1}, {3, 0, 4, -2}},                     // back in int64; a negative record
		{{3, 0, 4, 2}, {1, 0, hi - 1, -1}, {2, 2, lo, 1}},  // group 3 empty; group 1's max retracted
		{{2, 2, lo, 1}, {2, 1, 7, -1}, {4, 0, 0, 1}},       // group 2's sum below int64
		{{2, 2, lo, -2}, {2, 0, -1, 1}, {1, 2, 1, -1}},     // back
		{{4, 0, 0, -1}, {2, 0, -1, -1}, {1, 4, lo + 1, 1}}, // group by nothing: sum near MinInt64
	}
	aggs := []reduce.Aggregate{{Fn: reduce.Count}, {Fn: reduce.Sum, Col: 1}, {Fn: reduce.Min, Col: 1}, {Fn: reduce.Max, Col: 1}}
	// want is the naive answer at t, grouped by k or by nothing.
	want := func(t uint64, byK bool) (rows, errs map[string]int64) {
		recs := map[[3]int64]int64{}
		for tm := uint64(0); tm <= t; tm++ {
			for _, r := range rounds[tm] {
				recs[[3]int64{r.k, r.a, r.b}] += r.d
			}
		}
		groups := map[int64][][3]int64{}
		for r, c := range recs {
			if c != 0 {
				g := int64(0)
				if byK {
					g = r[0]
				}
				groups[g] = append(groups[g], r)
			}
		}
		rows, errs = map[string]int64{}, map[string]int64{}
		for g, rs := range groups {
			neg := false
			cnt, sum := new(big.Int), new(big.Int)
			mn, mx := rs[0][2], rs[0][2]
			for _, r := range rs {
				c := recs[r]
				neg = neg || c < 0
				cnt.Add(cnt, big.NewInt(c))
				sum.Add(sum, new(big.Int).Mul(big.NewInt(c), big.NewInt(r[2])))
				mn, mx = min(mn, r[2]), max(mx, r[2])
			}
			switch {
			case neg:
				errs["negative multiplicity"]++
			case !cnt.IsInt64() || !sum.IsInt64():
				errs["numeric overflow"]++
			default:
				out := []int64{cnt.Int64(), sum.Int64(), mn, mx}
				if byK {
					out = append([]int64{g}, out...)
				}
				rows[fmt.Sprint(out)] = 1
			}
		}
		return rows, errs
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				ctl := startController(t, mode, w)
				if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 3}); err != nil {
					t.Fatal(err)
				}
				// The group index by k (the record is (a, b)) and the
				// index by nothing (the record is (k, a, b)).
				arrange := func(c *dataflow.Context) (*dataflow.Arrangement, *dataflow.Arrangement, error) {
					in, err := c.Input("r", 3)
					if err != nil {
						return nil, nil, err
					}
					g, err := c.Arrange(in, []int{0})
					if err != nil {
						return nil, nil, err
					}
					all, err := c.Arrange(in, []int{})
					return g, all, err
				}
				if mode == "pair" {
					exportTwo(t, ctl, arrange, "by_k", "by_none")
				}
				send := func(tm uint64) {
					ch := dataflow.NewChunk(3, 0)
					for _, x := range rounds[tm] {
						ch.Push([]int64{x.k, x.a, x.b}, tm, x.d)
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
				caps := make([]*dataflow.Capture, 4) // by k: rows, errors; by nothing: rows, errors
				for i := range caps {
					caps[i] = dataflow.NewCapture(w)
				}
				if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "q", Maintained: mode == "solo", AsOf: frontier.At(asOf), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						var g, all *dataflow.Arrangement
						var err error
						if mode == "pair" {
							if g, err = c.ImportIndex("by_k"); err != nil {
								return err
							}
							if all, err = c.ImportIndex("by_none"); err != nil {
								return err
							}
						} else if g, all, err = arrange(c); err != nil {
							return err
						}
						byK, err := reduce.AddReduce(c, g, aggs, reduce.OperatorOptions{Dataflow: "q", Name: "by k"})
						if err != nil {
							return err
						}
						// By nothing the record is (k, a, b): b is column 2.
						none := []reduce.Aggregate{aggs[0], {Fn: reduce.Sum, Col: 2}, {Fn: reduce.Min, Col: 2}, {Fn: reduce.Max, Col: 2}}
						byNone, err := reduce.AddReduce(c, all, none, reduce.OperatorOptions{Dataflow: "q", Name: "by none"})
						if err != nil {
							return err
						}
						for i, coll := range []dataflow.Collection{byK, byNone} {
							a, err := c.Arrange(coll, []int{0})
							if err != nil {
								return err
							}
							c.Capture(caps[2*i], a.Oks)
							c.Capture(caps[2*i+1], a.Errs)
						}
						return nil
					}}}); err != nil {
					t.Fatal(err)
				}
				last := uint64(len(rounds) - 1)
				for tm := uint64(asOf + 1); tm <= last; tm++ {
					send(tm)
				}
				for _, cp := range caps {
					if err := cp.WaitPassed(ctx, last); err != nil {
						t.Fatalf("capture at %v: %v", cp.Frontier(), err)
					}
				}
				for tm := uint64(asOf); tm <= last; tm++ {
					for i, byK := range []bool{true, false} {
						rows, errs := want(tm, byK)
						for j, want := range []map[string]int64{rows, errs} {
							got := map[string]int64{}
							for _, rd := range caps[2*i+j].At(tm) {
								k := fmt.Sprint(rd.Row)
								if j == 1 {
									k, _ = expr.Message(rd.Row[0])
								}
								got[k] += rd.Diff
							}
							if !maps.Equal(got, want) {
								t.Errorf("by k %v, output %d at %d:\n got  %v\n want %v", byK, j, tm, sorted(got), sorted(want))
							}
						}
					}
				}
			})
		}
	}
}

// TestStatsCountOneReduce: a Stats given to a second reduce fails that
// create with ErrStatsAttached: a second New, NewThreshold or NewDistinct,
// a second operator of a dataflow, and one operator on two workers (Build
// runs once per worker), where they mixed their counts and raced on the
// Stats' labels. A create that fails for another reason leaves the Stats
// free.
func TestStatsCountOneReduce(t *testing.T) {
	newIn := func(ar batch.Arity) reduce.Input {
		h, w := trace.NewSpine(ar, spine.Options{})
		t.Cleanup(func() { w.Close() })
		return reduce.Input{Reader: h, Pres: batch.Identity(), Arity: ar}
	}
	st := reduce.NewStats("q", "r")
	count := []reduce.Aggregate{{Fn: reduce.Count}}
	if _, err := reduce.New(newIn(batch.Arity{Key: 1, Val: 1}), reduce.Options{Aggregates: count, Plan: reduce.Hierarchical, Stats: st}); err == nil || errors.Is(err, reduce.ErrStatsAttached) {
		t.Fatalf("count by the hierarchical plan: %v, want ErrAggregate", err)
	}
	r, err := reduce.New(newIn(batch.Arity{Key: 1, Val: 1}), reduce.Options{Aggregates: count, Stats: st})
	if err != nil {
		t.Fatalf("a Stats a failed create left: %v", err)
	}
	defer r.Release()
	if _, err := reduce.New(newIn(batch.Arity{Key: 1, Val: 1}), reduce.Options{Aggregates: count, Stats: st}); !errors.Is(err, reduce.ErrStatsAttached) {
		t.Errorf("a second New: %v, want ErrStatsAttached", err)
	}
	if _, err := reduce.NewDistinct(newIn(batch.Arity{Key: 2}), reduce.Options{Stats: st}); !errors.Is(err, reduce.ErrStatsAttached) {
		t.Errorf("a distinct: %v, want ErrStatsAttached", err)
	}
	for _, c := range []struct {
		what    string
		workers int
		twice   bool
	}{{"two operators", 1, true}, {"one operator on two workers", 2, false}} {
		t.Run(c.what, func(t *testing.T) {
			rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: c.workers})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := runtime.NewController(rt)
			if err != nil {
				t.Fatal(err)
			}
			defer ctl.Shutdown()
			if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 2}); err != nil {
				t.Fatal(err)
			}
			st := reduce.NewStats("q", "count")
			if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
				ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c2 *dataflow.Context) error {
					in, err := c2.Input("r", 2)
					if err != nil {
						return err
					}
					a, err := c2.Arrange(in, []int{0})
					if err != nil {
						return err
					}
					if _, err := reduce.AddReduce(c2, a, count, reduce.OperatorOptions{Dataflow: "q", Stats: st}); err != nil || !c.twice {
						return err
					}
					_, err = reduce.AddReduce(c2, a, count, reduce.OperatorOptions{Dataflow: "q", Name: "again", Stats: st})
					return err
				}}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := ctl.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Err(); !errors.Is(err, reduce.ErrStatsAttached) {
				t.Errorf("create: %v, want ErrStatsAttached", err)
			}
		})
	}
}

// TestAddReduceOverAMislabelledArrangement: an arrangement whose oks
// arity does not fit its key columns and arity fails the create
// (ErrArity); one labelled consistently with another arity than its
// batches' (the reduce learns it at its first step) is the dataflow's
// error, reported by the runtime, where the operator stopped in silence
// and a wait on its output never ended.
func TestAddReduceOverAMislabelledArrangement(t *testing.T) {
	for _, c := range []struct {
		what  string
		arity int // the mislabelled arrangement's columns
		want  string
	}{
		{"its key columns and arity", 3, "does not fit its 1 key columns of 3"},
		{"its batches", 4, "batch arity key=1 val=2, the input's is key=1 val=3"},
	} {
		t.Run(c.what, func(t *testing.T) {
			rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := runtime.NewController(rt)
			if err != nil {
				t.Fatal(err)
			}
			defer ctl.Shutdown()
			if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 3}); err != nil {
				t.Fatal(err)
			}
			ch := dataflow.NewChunk(3, 0)
			ch.Push([]int64{1, 2, 3}, 0, 1)
			if err := ctl.Send(runtime.Input{Name: "r", Chunk: ch}); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Send(runtime.AdvanceInput{Name: "r", Frontier: frontier.At(1)}); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
				ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(dc *dataflow.Context) error {
					in, err := dc.Input("r", 3)
					if err != nil {
						return err
					}
					g, err := dc.Arrange(in, []int{0})
					if err != nil {
						return err
					}
					bad := *g
					bad.Oks.Arity, bad.Arity = batch.Arity{Key: 1, Val: 3}, c.arity
					_, err = reduce.AddReduce(dc, &bad, []reduce.Aggregate{{Fn: reduce.Sum, Col: 2}}, reduce.OperatorOptions{})
					return err
				}}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := ctl.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for {
				err := ctl.Err()
				if err != nil {
					if !errors.Is(err, reduce.ErrArity) || !strings.Contains(err.Error(), c.want) {
						t.Fatalf("runtime errors: %v, want ErrArity saying %q", err, c.want)
					}
					return
				}
				select {
				case <-ctx.Done():
					t.Fatalf("no error reported: want ErrArity saying %q", c.want)
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}

// TestAddOperatorsRefuseAnArrangementMissingAHalf: an arrangement with
// no oks stream or reader (a zero Arrangement, or one put together by
// hand), or with no errs half to forward when ForwardErrs asks, fails the
// create of AddReduce, AddThreshold and AddDistinct with ErrArity naming
// what is missing, where the Build panicked on a nil.
func TestAddOperatorsRefuseAnArrangementMissingAHalf(t *testing.T) {
	rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := runtime.NewController(rt)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 2}); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(*dataflow.Context, *dataflow.Arrangement, reduce.OperatorOptions) error{
		"reduce": func(c *dataflow.Context, a *dataflow.Arrangement, o reduce.OperatorOptions) error {
			_, err := reduce.AddReduce(c, a, []reduce.Aggregate{{Fn: reduce.Count}}, o)
			return err
		},
		"threshold": func(c *dataflow.Context, a *dataflow.Arrangement, o reduce.OperatorOptions) error {
			_, err := reduce.AddThreshold(c, a, o)
			return err
		},
		"distinct": func(c *dataflow.Context, a *dataflow.Arrangement, o reduce.OperatorOptions) error {
			_, err := reduce.AddDistinct(c, a, o)
			return err
		},
	}
	cases := []struct {
		what    string
		mod     func(*dataflow.Arrangement)
		forward bool
		want    string
	}{
		{"a zero arrangement", func(a *dataflow.Arrangement) { *a = dataflow.Arrangement{} }, false, "no oks stream or reader"},
		{"no oks reader", func(a *dataflow.Arrangement) { a.Oks.Reader = nil }, false, "no oks stream or reader"},
		{"no oks stream", func(a *dataflow.Arrangement) { a.Oks.Stream = nil }, false, "no oks stream or reader"},
		{"no errs half", func(a *dataflow.Arrangement) { a.Errs = dataflow.Arranged{} }, true, "errs half has no stream"},
	}
	n := 0
	for name, add := range ops {
		for _, c := range cases {
			n++
			id := fmt.Sprint("q", n)
			if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
				ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(dc *dataflow.Context) error {
					in, err := dc.Input("r", 2)
					if err != nil {
						return err
					}
					a, err := dc.Arrange(in, []int{0, 1}) // the whole record: every operator's input
					if err != nil {
						return err
					}
					bad := *a
					c.mod(&bad)
					return add(dc, &bad, reduce.OperatorOptions{ForwardErrs: c.forward})
				}}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := ctl.Sync(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			errs := ctl.TakeErrors()
			if len(errs) != 1 || !errors.Is(errs[0], reduce.ErrArity) || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("%s of %s: %v, want one ErrArity saying %q", name, c.what, errs, c.want)
			}
		}
	}
}

// TestRefusedConstructorsLeaveTheReader: New released the caller's
// reader when a forced plan did not fit its aggregates, but not when it
// refused the aggregates, the input or the Stats before that, nor did
// NewThreshold or NewDistinct ever: a caller could not tell whether to
// release it (AddReduce released it again). Every refusal now leaves the
// reader with the caller, its holds untouched: the trace still counts it
// among its live handles after each refused call.
func TestRefusedConstructorsLeaveTheReader(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	h, w := trace.NewSpine(ar, spine.Options{})
	defer w.Close()
	defer h.Release()
	taken := reduce.NewStats("q", "taken")
	keep, err := reduce.New(reduce.Input{Reader: h.Clone(), Pres: batch.Identity(), Arity: ar}, reduce.Options{Aggregates: []reduce.Aggregate{{Fn: reduce.Count}}, Stats: taken})
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Release()
	count := []reduce.Aggregate{{Fn: reduce.Count}}
	type ctor func(reduce.Input, reduce.Options) (*reduce.Reduce, error)
	for _, c := range []struct {
		what string
		mk   ctor
		ar   batch.Arity
		pres batch.Presentation
		opts reduce.Options
	}{
		{"no aggregate", reduce.New, ar, batch.Identity(), reduce.Options{}},
		{"unknown function", reduce.New, ar, batch.Identity(), reduce.Options{Aggregates: []reduce.Aggregate{{Fn: reduce.Max + 1}}}},
		{"column out of the record", reduce.New, ar, batch.Identity(), reduce.Options{Aggregates: []reduce.Aggregate{{Fn: reduce.Sum, Col: 5}}}},
		{"zero presentation", reduce.New, ar, batch.Presentation{}, reduce.Options{Aggregates: count}},
		{"Stats of another reduce", reduce.New, ar, batch.Identity(), reduce.Options{Aggregates: count, Stats: taken}},
		{"plan that does not fit", reduce.New, ar, batch.Identity(), reduce.Options{Aggregates: count, Plan: reduce.Hierarchical}},
		{"plan of no such value", reduce.New, ar, batch.Identity(), reduce.Options{Aggregates: count, Plan: reduce.Basic + 10}},
		{"threshold of a keyed arrangement", reduce.NewThreshold, ar, batch.Identity(), reduce.Options{}},
		{"distinct, Stats of another reduce", reduce.NewDistinct, batch.Arity{Key: 2}, batch.Identity(), reduce.Options{Stats: taken}},
	} {
		reader := h.Clone()
		r, err := c.mk(reduce.Input{Reader: reader, Pres: c.pres, Arity: c.ar}, c.opts)
		if err == nil {
			r.Release()
			t.Errorf("%s: accepted", c.what)
			continue
		}
		// h, keep's reader and this one.
		if live := h.State().Live(); live != 3 || reader.Released() {
			t.Errorf("%s (%v): %d live handles, reader released %v; want 3, the reader the caller's", c.what, err, live, reader.Released())
		}
		reader.Release()
	}
	if live := h.State().Live(); live != 2 {
		t.Errorf("%d live handles at the end, want 2", live)
	}
}

// lateAdder is an operator whose first step adds a reduce to its dataflow,
// after the dataflow's Build returned: the operator's Build is refused.
type lateAdder struct {
	c    *dataflow.Context
	a    *dataflow.Arrangement
	st   *reduce.Stats
	done chan error
	sent bool
}

func (o *lateAdder) Step(frontier.Frontier) frontier.Frontier {
	if !o.sent {
		o.sent = true
		_, err := reduce.AddReduce(o.c, o.a, []reduce.Aggregate{{Fn: reduce.Count}}, reduce.OperatorOptions{Dataflow: "q", Name: "late", Stats: o.st})
		o.done <- err
	}
	return frontier.Empty()
}

func (o *lateAdder) Shutdown() {}

// TestAFailedAddLeavesTheStatsFree: an AddReduce whose reduce was made
// but whose operator's Build was refused (here, called from a step after
// the dataflow's Build returned) leaves its Stats free for another
// reduce, as every other failed create does; it released the reduce and
// kept the Stats claimed, so the next reduce given it was refused with
// ErrStatsAttached.
func TestAFailedAddLeavesTheStatsFree(t *testing.T) {
	rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := runtime.NewController(rt)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 2}); err != nil {
		t.Fatal(err)
	}
	st := reduce.NewStats("q", "late")
	done := make(chan error, 1)
	if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("r", 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			b := c.NewOperator("adds late")
			dataflow.AddInput(b, "arranged", a.Oks.Stream)
			return b.Build(&lateAdder{c: c, a: a, st: st, done: done})
		}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, dataflow.ErrBuildReturned) {
			t.Fatalf("AddReduce from a step: %v, want ErrBuildReturned", err)
		}
	case <-ctx.Done():
		t.Fatal("the operator was never stepped")
	}
	h, w := trace.NewSpine(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	defer w.Close()
	r, err := reduce.New(reduce.Input{Reader: h, Pres: batch.Identity(), Arity: batch.Arity{Key: 1, Val: 1}},
		reduce.Options{Aggregates: []reduce.Aggregate{{Fn: reduce.Count}}, Stats: st})
	if err != nil {
		t.Fatalf("a reduce given the Stats the failed AddReduce left: %v", err)
	}
	r.Release()
}
