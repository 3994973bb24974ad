package reduce_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
)

// TestASaturatedErrorCountForwardedByAReduceIsAnOverflow: an index's
// error count leaves int64 only across two times (MinInt64
// division-by-zero errors at 0, one more at 1), exact in each batch; once
// compaction to 1 lets a merge consolidate them, the merged batch holds
// the count saturated at MinInt64 and the index's marker goes to its
// frontier, well after 1. A reduce created then at as_of 1 with
// ForwardErrs passes that batch on: it adds one `numeric overflow` at the
// earliest time it forwards from it, as it does where it recomputes a
// group from a saturated batch of its records (docs/semantics.md §1.1),
// where its errors at 1 read MinInt64 division-by-zero errors and
// nothing else, a count off by one with no error saying so.
func TestASaturatedErrorCountForwardedByAReduceIsAnOverflow(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				ctl := startController(t, mode, w)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				must := func(cmd runtime.Command) {
					t.Helper()
					if err := ctl.Send(cmd); err != nil {
						t.Fatal(err)
					}
				}
				must(runtime.CreateInput{Name: "rows", Arity: 2})
				must(runtime.CreateInput{Name: "errs", Arity: 1})
				must(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "maintain idx", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
					Exports: []string{"idx"},
					Build: func(c *dataflow.Context) error {
						rows, err := c.Input("rows", 2)
						if err != nil {
							return err
						}
						errs, err := c.Input("errs", 1)
						if err != nil {
							return err
						}
						a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: rows.Oks, Errs: errs.Oks}, []int{0})
						if err != nil {
							return err
						}
						return c.Export("idx", a)
					}}})
				must(runtime.AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
				send := func(name string, row []int64, tm uint64, d int64) {
					ch := dataflow.NewChunk(len(row), 1)
					ch.Push(row, tm, d)
					must(runtime.Input{Name: name, Chunk: ch})
				}
				advance := func(tm uint64) {
					must(runtime.AdvanceInput{Name: "rows", Frontier: frontier.At(tm)})
					must(runtime.AdvanceInput{Name: "errs", Frontier: frontier.At(tm)})
				}
				div := []int64{expr.CodeDivisionByZero}
				send("rows", []int64{1, 7}, 0, 1)
				send("errs", div, 0, math.MinInt64)
				advance(1)
				if err := ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				send("errs", div, 1, -1)
				advance(2)
				// Later errors (+1, then -1) drive the merges of the
				// errors' trace until one consolidates times 0 and 1.
				var reported []string
				for i := uint64(2); len(reported) == 0 && ctx.Err() == nil; i++ {
					d := int64(1)
					if i%2 == 1 {
						d = -1
					}
					send("errs", div, i, d)
					advance(i + 1)
					if err := ctl.Sync(ctx); err != nil {
						t.Fatal(err)
					}
					for _, e := range ctl.TakeErrors() {
						reported = append(reported, e.Error())
					}
				}
				if !strings.Contains(strings.Join(reported, "\n"), batch.ErrOverflow.Error()) {
					t.Fatalf("the overflowing merge was not reported: %q", reported)
				}
				oks, errs := dataflow.NewCapture(w), dataflow.NewCapture(w)
				must(runtime.CreateDataflow{Desc: dataflow.Desc{
					ID: "q", Maintained: mode == "solo", AsOf: frontier.At(1), Until: frontier.At(2),
					Build: func(c *dataflow.Context) error {
						a, err := c.ImportIndex("idx")
						if err != nil {
							return err
						}
						a.Oks.Arity, a.Errs.Arity = batch.Arity{Key: 1, Val: 1}, batch.Arity{Key: 1}
						red, err := reduce.AddReduce(c, a, []reduce.Aggregate{{Fn: reduce.Count}}, reduce.OperatorOptions{Dataflow: "q", Name: "count", ForwardErrs: true})
						if err != nil {
							return err
						}
						c.CaptureChunks(oks, red.Oks, red.Arity)
						c.CaptureChunks(errs, red.Errs, 1)
						return nil
					}}})
				for _, cp := range []*dataflow.Capture{oks, errs} {
					if err := cp.WaitPassed(ctx, 1); err != nil {
						t.Fatal(err)
					}
				}
				got := map[string]int64{}
				for _, rd := range errs.At(1) {
					m, _ := expr.Message(rd.Row[0])
					got[m] += rd.Diff
				}
				if got[expr.MsgOverflow] != 1 {
					t.Fatalf("rows %v, errors %v at 1: the errors are out of int64, want one %s", oks.At(1), got, expr.MsgOverflow)
				}
			})
		}
	}
}
