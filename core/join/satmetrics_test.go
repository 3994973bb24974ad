package join

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// saturatedErrs returns an errs half's batch a merge saturated: MinInt64
// division-by-zero errors at 0 and one more at 1, consolidated at 1, the
// count held at MinInt64 (an import's snapshot of such an index).
func saturatedErrs(t *testing.T) *batch.Batch {
	t.Helper()
	ar := batch.Arity{Key: 1}
	mk := func(tm uint64, d int64) *batch.Batch {
		b := batch.NewBuilder(ar, 1)
		b.Push([]int64{codeDivisionByZero}, nil, tm, d)
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
	return sat
}

// replayed is an arrangement half of arity ar keyed by key whose stream
// sends bs, one a step (replay), each inserted into a trace of its own.
func replayed(c *dataflow.Context, ar batch.Arity, key []int, bs ...*batch.Batch) (dataflow.Arranged, error) {
	h, w := trace.NewSpine(ar, spine.Options{})
	b := c.NewOperator("replay")
	op := &replay{w: w, batches: bs, sent: map[*batch.Batch]bool{}}
	op.out = dataflow.AddOutput[*batch.Batch](b)
	if err := b.Build(op); err != nil {
		return dataflow.Arranged{}, err
	}
	return dataflow.Arranged{Stream: op.out, Reader: h, Pres: batch.Identity(), Arity: ar, Key: key}, nil
}

// TestASaturatedErrorCountForwardedByAJoinIsCounted: the numeric overflow
// a join adds where it forwards a `from` entry's errors from a batch a
// merge saturated (Errors; TestASaturatedErrorCountForwardedByAJoinIsAnOverflow)
// is an error the operator produced itself, as the one a product of a
// saturated count adds is (K3, K4): its Stats count it, so Metrics'
// ErrorCounts (and benchrun's stage-errors units, read from them) add up
// to the errors the operator added to its output. They counted none: the
// step's count began after the forwarding, which had put the error in
// place already. A binary join counts it in its Stats, a delta join, one
// worker (its paths fused) or two (staged, its entries' errors forwarded
// by the union), in its Stats of no path (Path ""), whose work the
// forwarding is.
func TestASaturatedErrorCountForwardedByAJoinIsCounted(t *testing.T) {
	for _, tc := range []struct {
		join    string
		workers int
	}{{"join", 1}, {"delta", 1}, {"delta", 2}} {
		t.Run(fmt.Sprintf("%s/workers=%d", tc.join, tc.workers), func(t *testing.T) {
			sat := saturatedErrs(t)
			envs, _ := workerEnvs(t, tc.workers)
			metrics := &Metrics{}
			cp := dataflow.NewCapture(tc.workers)
			var dfs []*dataflow.Dataflow
			for w, env := range envs {
				df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						// Entry 0's errors: the saturated batch, on worker 0.
						var errBatches []*batch.Batch
						if w == 0 {
							errBatches = []*batch.Batch{sat}
						}
						var arr []*dataflow.Arrangement
						for i := range 2 {
							oks, err := replayed(c, ar11, []int{0})
							if err != nil {
								return err
							}
							var bs []*batch.Batch
							if i == 0 {
								bs = errBatches
							}
							errs, err := replayed(c, batch.Arity{Key: 1}, []int{0}, bs...)
							if err != nil {
								return err
							}
							arr = append(arr, &dataflow.Arrangement{Key: []int{0}, Arity: 2, Oks: oks, Errs: errs})
						}
						opts := OperatorOptions{Name: tc.join, Dataflow: "q", Metrics: metrics, Errs: []dataflow.Arranged{arr[0].Errs, arr[1].Errs}}
						var out dataflow.Collection
						var err error
						if tc.join == "join" {
							out, err = Join(c, arr[0], arr[1], nil, opts)
						} else {
							out, err = DeltaJoin(c, deltaPaths(arr), opts)
						}
						if err != nil {
							return err
						}
						c.CaptureChunks(cp, out.Errs, 1)
						return nil
					}}, 1)
				if err != nil {
					t.Fatal(err)
				}
				dfs = append(dfs, df)
			}
			stepAll(dfs, tc.workers)
			if !cp.Passed(1) {
				t.Fatalf("the join's errors never passed 1: frontier %v", cp.Frontier())
			}
			var over int64
			for _, rd := range cp.At(1) {
				if rd.Row[0] == expr.CodeOverflow {
					over += rd.Diff
				}
			}
			if over != 1 {
				t.Fatalf("the join's errors at 1 hold %d numeric overflow, want 1 (the forwarded count is saturated): %v", over, cp.At(1))
			}
			if got, want := metrics.ErrorCounts(), []ErrorCount{{"q", tc.join, 1}}; len(got) != 1 || got[0] != want[0] {
				t.Errorf("ErrorCounts = %v, want %v: the numeric overflow the join added is its own error", got, want)
			}
			if tc.join == "delta" {
				var entry int64
				for _, st := range metrics.Stats() {
					if st.Path == "" {
						entry += st.Errors()
					}
				}
				if entry != 1 {
					t.Errorf("the delta join's Stats of no path count %d errors, want 1 (its forwarding's)", entry)
				}
			}
			for _, df := range dfs {
				df.Drop()
			}
		})
	}
}
