package workloads_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// A harness of its own: a spec decoded from bytes, its inputs loaded,
// one run driven step by step and read at the last time, then every
// check configuration compared with the reference.
func Example() {
	src := []byte(`{"version": 1, "name": "orders", "as_of": 1,
	  "inputs": {"orders": {"columns": ["okey", "ckey"], "rows": [[0,1,1,7],[1,1,2,8],[2,-1,1,7]]},
	             "customers": {"columns": ["ckey", "region"], "rows": [[0,1,7,1],[0,1,8,2]]}},
	  "indexes": {"orders_ckey": {"on": "orders", "key": ["ckey"]}, "customers_ckey": {"on": "customers", "key": ["ckey"]}},
	  "query": {"from": [{"as": "o", "collection": "orders"}, {"as": "c", "collection": "customers"}],
	            "on": [["o.ckey", "c.ckey"]], "project": ["o.okey", "c.region"]}}`)
	s, err := spec.Decode("orders.json", ".", src)
	if err != nil {
		log.Fatal(err)
	}
	tables, err := workloads.Load(s, 0)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	se, err := workloads.NewSession(s, tables, workloads.SessionOptions{Mode: render.Imported, Join: plan.Delta, Workers: 2, Capture: true})
	if err != nil {
		log.Fatal(err)
	}
	defer se.Close(ctx)
	if err := se.FeedThrough(s.AsOf); err != nil {
		log.Fatal(err)
	}
	if err := se.WaitIndexes(ctx, s.AsOf); err != nil {
		log.Fatal(err)
	}
	if _, err := se.InstallQuery(ctx); err != nil {
		log.Fatal(err)
	}
	if _, _, err := se.Finish(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := se.Result(se.LastTime())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res)
	if err := se.Close(ctx); err != nil {
		log.Fatal(err)
	}

	diffs, err := workloads.Check(ctx, s, tables, workloads.CheckCases(s))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(workloads.CheckCases(s)), "configurations,", len(diffs), "differences")
	// Output:
	// o.okey,c.region,diff
	// 2,2,1
	// error,diff
	// 8 configurations, 0 differences
}
