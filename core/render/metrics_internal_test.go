package render

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/spine"
)

// TestMetricsForgetDroppedDataflowsCounters: one Metrics serving every
// query a long-lived caller renders (a Session's one-shot reads) kept
// each create's error counters, and through them each dropped dataflow's
// operator stats, forever: 2.6 KB a read of a two-worker delta join,
// without bound. A dropped dataflow's counters are now folded into one
// retired total per dataflow, operator and path that counted errors: none
// is kept live once every dataflow is dropped, the entries Errors returns
// are as many as one create's that counted errors whatever the number of
// creates of an id, and their counts are every create's summed, as
// before.
func TestMetricsForgetDroppedDataflowsCounters(t *testing.T) {
	r, err := plan.Resolve(&plan.Plan{
		Inputs: []plan.Input{{Name: "a", Columns: []string{"k", "x"}}, {Name: "b", Columns: []string{"k", "y"}}},
		Query: plan.Query{
			From:    []plan.From{{As: "p", Collection: "a"}, {As: "q", Collection: "b"}},
			On:      [][]string{{"p.k", "q.k"}},
			Maps:    []plan.Map{{Name: "m", Expr: "q.y / p.x"}},
			Project: []string{"p.k", "m"},
			Reduce:  &plan.Reduce{GroupBy: []string{"p.k"}, Aggregates: []plan.Aggregate{{Name: "t", Fn: plan.Sum, Expr: "m"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { t.Errorf("%s: %v", df, err) },
	}
	e.Inputs = dataflow.NewInputs(0, 1, e.Activate)
	for _, in := range []string{"a", "b"} {
		if err := e.Inputs.Declare(in, 2); err != nil {
			t.Fatal(err)
		}
	}
	// One row of a with x = 0 joins one row of b: a division by zero,
	// counted by the map's operator at every create that reads it.
	for _, in := range []string{"a", "b"} {
		ch := dataflow.NewChunk(2, 1)
		ch.Push([]int64{1, 0}, 0, 1)
		if err := e.Inputs.Send(in, ch); err != nil {
			t.Fatal(err)
		}
		if err := e.Inputs.Advance(in, frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
	m := &Metrics{}
	sum := func(st []StageErrors) (n int64) {
		for _, s := range st {
			n += s.Errors
		}
		return n
	}
	const creates = 40
	var perCreate int64
	entries := 0 // of the first create's, those that counted errors
	for i := range creates {
		id := "peek"
		if i%2 == 1 {
			id = fmt.Sprintf("read %d", i)
		}
		desc, err := QueryDesc(r, Options{Mode: Direct, Join: plan.Linear, Metrics: m, ID: id, Window: true, AsOf: 0, Until: 1, HasUntil: true}, NewOutput(1, false))
		if err != nil {
			t.Fatal(err)
		}
		before := sum(m.Errors())
		df, err := dataflow.Build(e, desc, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		for df.Step() {
		}
		got := sum(m.Errors()) - before
		if i == 0 {
			perCreate = got
			for _, st := range m.Errors() {
				if st.Errors != 0 {
					entries++
				}
			}
			if perCreate == 0 || entries == 0 {
				t.Fatalf("the first create counted %d errors in %d entries: the test counts nothing", perCreate, entries)
			}
		} else if got != perCreate {
			t.Fatalf("create %d counted %d errors, the first %d", i, got, perCreate)
		}
		df.Drop()
	}
	m.mu.Lock()
	live := len(m.stages)
	m.mu.Unlock()
	if live != 0 {
		t.Errorf("%d counters kept after %d creates, all dropped: want 0", live, creates)
	}
	// "peek" (20 creates) and 20 ids of one create each.
	if n := len(m.Errors()); n != entries*(1+creates/2) {
		t.Errorf("Errors has %d entries, want %d (one create's %d that counted errors for each of %d ids)", n, entries*(1+creates/2), entries, 1+creates/2)
	}
	if got := sum(m.Errors()); got != perCreate*creates {
		t.Errorf("Errors sums %d errors after the drops, want %d (%d creates of %d)", got, perCreate*creates, creates, perCreate)
	}
}
