//go:build mutants

package workloads

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/internal/mutants"
)

// TestCheckSeesAnErrorThatComesAndGoes: an error that comes at time 1 and
// goes at time 2 is compared where it stood. Under mutant 1 (a delta join
// emits each input error once per path) its count at time 1 is 3, not 1,
// and at every later time it is 0 as it should be: Check must report time
// 1, which a check at as_of, the quartiles of the later times and the
// last (0, 3, 5, 7 and 8) passed over. The mutant is switched on in
// a child run of this test (TRACEBENCH_MUTANT is read once at start), so
// the test runs in every build with the mutants tag, whatever mutant the
// parent runs under.
func TestCheckSeesAnErrorThatComesAndGoes(t *testing.T) {
	if os.Getenv("WORKLOADS_CHECK_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckSeesAnErrorThatComesAndGoes$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "WORKLOADS_CHECK_CHILD=1", "TRACEBENCH_MUTANT="+string(mutants.DeltaJoinErrorsPerPath))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child run under %s: %v\n%s", mutants.DeltaJoinErrorsPerPath, err, out)
		}
		return
	}
	if !mutants.On(mutants.DeltaJoinErrorsPerPath) {
		t.Fatalf("child run without %s on", mutants.DeltaJoinErrorsPerPath)
	}
	src := `{"version": 1, "name": "transient",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,5,1],[1,1,1,0],[2,-1,1,0],[3,1,2,5],[4,1,3,5]]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,5,1],[0,1,1,1],[5,1,2,1],[6,1,3,1]]},
	             "c": {"columns": ["k", "z"], "rows": [[0,1,5,1],[0,1,1,1],[7,1,2,1],[8,1,3,1]]}},
	  "views": {"va": {"input": "a", "map": [{"name": "q", "expr": "100 / x"}]}},
	  "query": {"from": [{"as": "p", "collection": "va"}, {"as": "q", "collection": "b"}, {"as": "d", "collection": "c"}],
	            "join": "delta", "on": [["p.k", "q.k", "d.k"]], "project": ["p.k", "p.q"]}}`
	s, tables := decodeAndLoad(t, "transient.json", src)
	diffs, err := Check(context.Background(), s, tables, []CheckCase{{Mode: render.Direct, Join: plan.Delta, Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range diffs {
		if !strings.Contains(d, "time=1: ") {
			t.Errorf("a difference at a time other than 1: %s", d)
		}
		found = found || strings.Contains(d, "division by zero: want diff 1, got 3")
	}
	if !found {
		t.Errorf("the error counted 3 times at time 1 was not reported: %q", diffs)
	}
}

// TestCheckSeesARowThatComesAndGoes: a row that stands at time 1 only is
// compared where it stood, as an error is. Under mutant 4 (every delta
// path compares times with <=) the two inputs' updates of time 1 are
// joined twice, so the row's count there is 2, not 1; at time 2 the
// second update of b and the retraction of a, joined twice too, take the
// extra count away again, and every later time agrees with the reference.
// No error is involved: Check must report the row at time 1, which a
// check at as_of, the quartiles of the later times and the last (0, 3, 5,
// 7 and 8) passed over.
func TestCheckSeesARowThatComesAndGoes(t *testing.T) {
	if os.Getenv("WORKLOADS_CHECK_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckSeesARowThatComesAndGoes$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "WORKLOADS_CHECK_CHILD=1", "TRACEBENCH_MUTANT="+string(mutants.DeltaJoinLessEqualAllPaths))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child run under %s: %v\n%s", mutants.DeltaJoinLessEqualAllPaths, err, out)
		}
		return
	}
	if !mutants.On(mutants.DeltaJoinLessEqualAllPaths) {
		t.Fatalf("child run without %s on", mutants.DeltaJoinLessEqualAllPaths)
	}
	src := `{"version": 1, "name": "transient_row",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[1,1,1,10],[2,-1,1,10],[3,1,5,1],[4,1,6,1],[5,1,7,1],[6,1,8,1],[7,1,9,1],[8,1,10,1]]},
	             "b": {"columns": ["k", "y"], "rows": [[1,1,1,20],[2,1,1,20],[3,1,15,1],[4,1,16,1]]}},
	  "query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}],
	            "join": "delta", "on": [["p.k", "q.k"]], "project": ["p.k", "p.x", "q.y"]}}`
	s, tables := decodeAndLoad(t, "transient_row.json", src)
	diffs, err := Check(context.Background(), s, tables, []CheckCase{{Mode: render.Direct, Join: plan.Delta, Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range diffs {
		if !strings.Contains(d, "time=1: ") {
			t.Errorf("a difference at a time other than 1: %s", d)
		}
		found = found || strings.Contains(d, "1,10,20: want diff 1, got 2")
	}
	if !found {
		t.Errorf("the row counted twice at time 1 was not reported: %q", diffs)
	}
}
