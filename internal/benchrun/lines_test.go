package benchrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// TestStageUnitsCoverASample: every stage-errors unit a real sample
// reports is one stageUnits predicts, for every built-in workload at its
// check size and a spec file of views and indexes, in both index modes and
// with both join strategies, so that checkLine's bound is never below the
// line a run writes.
func TestStageUnitsCoverASample(t *testing.T) {
	chdirRoot(t)
	var benches []*Benchmark
	for _, w := range workloads.Registry() {
		if w.Name == "peek" || w.Name == "fanout" {
			continue // their samples report no stage-errors unit
		}
		for bi := range w.Benches {
			s, err := w.Benches[bi].Spec(workloads.CheckParams(w))
			if err != nil {
				t.Fatal(err)
			}
			benches = append(benches, &Benchmark{Base: w.Benches[bi].Base, Workload: w.Name, Spec: s})
		}
	}
	s, err := spec.ReadFile("workloads/spec/testdata/orders_lineitem.json")
	if err != nil {
		t.Fatal(err)
	}
	benches = append(benches, &Benchmark{Base: "OrdersLineitem", Workload: s.Name, Spec: s, file: true})
	reported := 0
	for _, b0 := range benches {
		inputs, err := workloads.Load(b0.Spec, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range []string{IndexImported, IndexDirect} {
			for _, j := range []string{spec.JoinLinear, spec.JoinDelta} {
				if ix == IndexImported && missing(b0.Spec, j) != nil {
					continue
				}
				b := *b0
				b.Index, b.Join, b.Workers = ix, j, 1
				b.Name = b.name()
				var predicted []string
				for _, us := range stageUnits(&b) {
					predicted = append(predicted, us...)
				}
				vals, err := RuntimeEngine{}.Sample(context.Background(), &b, inputs)
				if err != nil {
					t.Fatalf("%s: %v", b.Name, err)
				}
				for _, v := range vals {
					if !strings.HasPrefix(v.Unit, stageUnitPrefix) {
						continue
					}
					reported++
					if !slices.Contains(predicted, v.Unit) {
						t.Errorf("%s: the sample reports %s, which stageUnits does not predict (%v)", b.Name, v.Unit, predicted)
					}
				}
				if err := checkLine(&b); err != nil {
					t.Errorf("%s: %v", b.Name, err)
				}
			}
		}
	}
	if reported == 0 {
		t.Fatal("no sample reported a stage-errors unit")
	}
}

// TestValidateLineOnlyOfRunnableConfigurations: validate bounds the
// result line of the configurations run can run, not of one run refuses
// anyway. A spec whose query reads arrangements no index serves runs only
// in direct mode; the imported dataflows it would build (each index's
// rebuilding the views below it) are never built, so their operators'
// units cannot make its line too long, and validate accepts the spec that
// run --index direct runs.
func TestValidateLineOnlyOfRunnableConfigurations(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("v", 1000)
	var views, indexes []string
	prev := "a"
	for i := range 20 {
		name := fmt.Sprintf("%s%02d", long, i)
		views = append(views, fmt.Sprintf(`%q: {"input": %q, "filter": ["x != %d"]}`, name, prev, i))
		prev = name
	}
	for i := range 4 {
		indexes = append(indexes, fmt.Sprintf(`"ix%d": {"on": %q, "key": ["x"]}`, i, prev))
	}
	doc := `{"version": 1, "name": "w",
"inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1]]}, "b": {"columns": ["x"], "rows": [[0, 1, 1]]}},
"views": {` + strings.Join(views, ", ") + `},
"indexes": {` + strings.Join(indexes, ", ") + `},
"query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}], "on": [["p.x", "q.x"]]}}`
	path := filepath.Join(dir, "w.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{spec.JoinLinear, spec.JoinDelta} {
		if missing(s, j) == nil {
			t.Fatalf("join %s: imported mode runs, want a spec it refuses", j)
		}
	}
	// The premise: imported, the line would be too long; direct, it fits.
	b := &Benchmark{Base: "W", Workload: "w", Index: IndexImported, Join: spec.JoinLinear, Workers: 1, Spec: s}
	b.Name = b.name()
	if checkLine(b) == nil {
		t.Fatal("imported, the spec's line fits: the test needs one that does not")
	}
	if _, err := Benchmarks(Selection{Targets: []string{path}, Index: []string{IndexDirect}, Workers: 1}); err != nil {
		t.Fatalf("run --index direct: %v", err)
	}
	var out bytes.Buffer
	if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{path}}); err != nil {
		t.Errorf("validate refuses a spec run --index direct runs: %v", err)
	}
}
