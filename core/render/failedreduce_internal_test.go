package render

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
)

// TestAFailedRenderedReduceHoldsItsOutputWhereItStood: a rendered reduce
// whose step fails (an arrangement labelled with another arity than its
// batches') holds its output frontier where it stood before that step, as
// core/reduce's and core/join's operators do (docs/semantics.md §2.5). It
// dropped its capability, and its output frontier followed its input to
// the end, announcing as complete every time it never reduced.
func TestAFailedRenderedReduceHoldsItsOutputWhereItStood(t *testing.T) {
	rt, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := runtime.NewController(rt)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctl.Send(runtime.CreateInput{Name: "r", Arity: 2}); err != nil {
		t.Fatal(err)
	}
	probe := dataflow.NewProbe(1)
	if err := ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "q", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(dc *dataflow.Context) error {
			in, err := dc.Input("r", 2)
			if err != nil {
				return err
			}
			a, err := dc.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			bad := a.Oks
			bad.Arity = batch.Arity{Key: 1, Val: 2} // the batches have one val column
			stats := reduce.NewStats("q", "reduce")
			r, err := reduce.New(reduce.Input{Reader: dc.Keep(bad.Reader), Pres: bad.Pres, Arity: bad.Arity},
				reduce.Options{AsOf: dc.AsOf(), Aggregates: []reduce.Aggregate{{Fn: reduce.Count}}, Stats: stats})
			if err != nil {
				return err
			}
			b := &builder{c: dc, df: "q"}
			out, err := b.reduceOp(r, a, "reduce", "", stats, 2, in.Errs)
			if err != nil {
				return err
			}
			dc.Probe(probe, out.Oks)
			return nil
		}}}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := probe.Frontier()
	for tm := range uint64(3) {
		ch := dataflow.NewChunk(2, 0)
		ch.Push([]int64{1, int64(tm)}, tm, 1)
		if err := ctl.Send(runtime.Input{Name: "r", Chunk: ch}); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Send(runtime.AdvanceInput{Name: "r", Frontier: frontier.At(tm + 1)}); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for ctl.Err() == nil {
		select {
		case <-ctx.Done():
			t.Fatal("no error reported for the mislabelled arrangement")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := ctl.Err(); !errors.Is(err, reduce.ErrArity) {
		t.Fatalf("runtime errors: %v, want reduce.ErrArity", err)
	}
	if got := probe.Frontier(); got != before {
		t.Errorf("output frontier %v after the failed step, want %v, where it stood before it", got, before)
	}
}
