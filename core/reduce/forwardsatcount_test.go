package reduce

import (
	"errors"
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// replayOnce sends its batches, each inserted into its trace first, one a
// step, then holds nothing.
type replayOnce struct {
	out *dataflow.Stream[*batch.Batch]
	w   *trace.Writer
	bs  []*batch.Batch
}

func (o *replayOnce) Step(frontier.Frontier) frontier.Frontier {
	if len(o.bs) == 0 {
		return frontier.Empty()
	}
	b := o.bs[0]
	o.bs = o.bs[1:]
	if err := o.w.Insert(b); err != nil {
		panic(err)
	}
	o.out.Send(b)
	return b.Upper()
}

func (o *replayOnce) Shutdown() {}

// TestASaturatedErrorCountForwardedByAReduceIsCounted: the numeric
// overflow a reduce with ForwardErrs adds where it passes on an errs batch
// a merge saturated (TestASaturatedErrorCountForwardedByAReduceIsAnOverflow)
// is the reduce's own error, not its input's (G3), as the one a saturated
// batch of its records adds is: its Stats count it, so that they add up to
// the errors it added to its output. They counted none.
func TestASaturatedErrorCountForwardedByAReduceIsCounted(t *testing.T) {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { t.Errorf("dataflow %s: %v", df, err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	// MinInt64 division-by-zero errors at 0 and one more at 1, merged at
	// 1: the count held at MinInt64, the batch saturated.
	ear := batch.Arity{Key: 1}
	mk := func(tm uint64, d int64) *batch.Batch {
		b := batch.NewBuilder(ear, 1)
		b.Push([]int64{expr.CodeDivisionByZero}, nil, tm, d)
		out, err := b.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	sat, err := batch.Merge(mk(0, math.MinInt64), mk(1, -1), frontier.At(1))
	if !errors.Is(err, batch.ErrOverflow) || !sat.Saturated() {
		t.Fatalf("merge: err %v, saturated %v; want ErrOverflow and a saturated batch", err, sat.Saturated())
	}
	ar := batch.Arity{Key: 1, Val: 1}
	stats := NewStats("q", "count")
	errs := dataflow.NewCapture(1)
	df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			half := func(ar batch.Arity, bs ...*batch.Batch) (dataflow.Arranged, error) {
				h, w := trace.NewSpine(ar, spine.Options{})
				ob := c.NewOperator("replay")
				op := &replayOnce{w: w, bs: bs, out: dataflow.AddOutput[*batch.Batch](ob)}
				if err := ob.Build(op); err != nil {
					return dataflow.Arranged{}, err
				}
				return dataflow.Arranged{Stream: op.out, Reader: h, Pres: batch.Identity(), Arity: ar, Key: []int{0}}, nil
			}
			oks, err := half(ar)
			if err != nil {
				return err
			}
			es, err := half(ear, sat)
			if err != nil {
				return err
			}
			a := &dataflow.Arrangement{Key: []int{0}, Arity: 2, Oks: oks, Errs: es}
			out, err := AddReduce(c, a, []Aggregate{{Fn: Count}}, OperatorOptions{Name: "count", Dataflow: "q", Stats: stats, ForwardErrs: true})
			if err != nil {
				return err
			}
			c.CaptureChunks(errs, out.Errs, 1)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	for range 5 {
		df.Step()
	}
	if !errs.Passed(1) {
		t.Fatalf("the reduce's errors never passed 1: frontier %v", errs.Frontier())
	}
	var over int64
	for _, rd := range errs.At(1) {
		if rd.Row[0] == expr.CodeOverflow {
			over += rd.Diff
		}
	}
	if over != 1 {
		t.Fatalf("the reduce's errors at 1 hold %d numeric overflow, want 1 (the forwarded count is saturated): %v", over, errs.At(1))
	}
	if got := stats.Errors(); got != 1 {
		t.Errorf("the reduce's Stats count %d errors, want 1: the numeric overflow it added is its own", got)
	}
}
