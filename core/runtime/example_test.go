package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/spine"
)

// Example maintains an index in the Maintenance runtime and reads it from a
// query in the Interactive runtime, which imports the published trace.
func Example() {
	_, _, ctl, err := runtime.Pair(1, spine.Options{})
	if err != nil {
		panic(err)
	}
	defer ctl.Shutdown()

	// The index: input "orders" (okey, qty) arranged by okey.
	if err := ctl.Send(runtime.CreateInput{Name: "orders", Arity: 2}); err != nil {
		panic(err)
	}
	ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "maintain orders_by_okey", Maintained: true,
		AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{"orders_by_okey"},
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("orders", 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			return c.Export("orders_by_okey", a)
		},
	}})
	rows := dataflow.NewChunk(2, 3)
	rows.Push([]int64{1, 5}, 0, 1)
	rows.Push([]int64{2, 7}, 0, 1)
	rows.Push([]int64{1, 5}, 1, -1)
	ctl.Send(runtime.Input{Name: "orders", Chunk: rows})
	ctl.Send(runtime.AdvanceInput{Name: "orders", Frontier: frontier.At(2)})

	// The query: import the index at as_of 1 and capture what it presents.
	cp := dataflow.NewCapture(1)
	ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "peek", AsOf: frontier.At(1), Until: frontier.At(2),
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex("orders_by_okey")
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cp.WaitPassed(ctx, 1); err != nil {
		panic(err)
	}
	for _, rd := range cp.At(1) {
		fmt.Println(rd.Row, rd.Diff)
	}
	// Output:
	// [2 7] 1
}

// Example_failedCreate shows how a create whose Build fails on the workers
// is told: Send accepts it (the command is valid as a whole), and once
// Sync returns every runtime has applied it, so Err and Errors hold its
// error, naming the dataflow, and the CommandError names the command.
func Example_failedCreate() {
	_, _, ctl, err := runtime.Pair(1, spine.Options{})
	if err != nil {
		panic(err)
	}
	defer ctl.Shutdown()
	err = ctl.Send(runtime.CreateDataflow{Desc: dataflow.Desc{
		ID: "peek", AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			_, err := c.ImportIndex("no such index")
			return err
		},
	}})
	fmt.Println("Send:", err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ctl.Sync(ctx); err != nil {
		panic(err)
	}
	for _, e := range ctl.TakeErrors() {
		fmt.Printf("command %d, %T %q: %v\n", e.Seq, e.Command, e.Command.(runtime.CreateDataflow).Desc.ID, e)
	}
	// Output:
	// Send: <nil>
	// command 1, runtime.CreateDataflow "peek": dataflow peek: import of unknown index "no such index"
}
