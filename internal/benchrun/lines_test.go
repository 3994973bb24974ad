package benchrun

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
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

// TestStageUnitsCoverRandomSpecs: for specs drawn at random (inputs,
// simple and query views over one another, linear and delta joins,
// cross products, reduces, distinct and threshold, indexes by any key
// set on any collection), every unit a sample reports in every
// configuration run runs, both index modes, both join strategies, one and
// two workers, is one checkLine counts, with a value no longer than it
// counts: the line a run writes is never longer than the bound.
func TestStageUnitsCoverRandomSpecs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	query := func(colls []string) string {
		n := 1 + r.IntN(3)
		var from, on []string
		for i := range n {
			from = append(from, fmt.Sprintf(`{"as": "e%d", "collection": %q}`, i, colls[r.IntN(len(colls))]))
			if i > 0 && r.IntN(4) > 0 {
				on = append(on, fmt.Sprintf(`["e%d.k", "e%d.k"]`, i-1, i))
			}
		}
		v := "e0.v"
		for i := 1; i < n; i++ {
			v += fmt.Sprintf(" + e%d.v", i)
		}
		q := fmt.Sprintf(`"from": [%s], "on": [%s], "join": %q, "map": [{"name": "k", "expr": "e0.k"}, {"name": "v", "expr": "(%s) / e0.k"}], "filter": [%q], "project": ["k", "v"]`,
			strings.Join(from, ", "), strings.Join(on, ", "), pick("linear", "delta"), v, pick("1", "v != 2"))
		return q + pick("", "", `, "distinct": true`, `, "threshold": true`,
			`, "reduce": {"group_by": ["k"], "aggregates": [{"name": "v", "fn": "sum", "expr": "v"}]}`)
	}
	ran, stages := 0, 0
	for range 40 {
		colls := []string{"a", "b"}
		var views, indexes []string
		for i := range r.IntN(5) {
			name := fmt.Sprintf("v%d", i)
			if r.IntN(2) == 0 {
				views = append(views, fmt.Sprintf(`%q: {"input": %q, "filter": ["v != %d"]}`, name, colls[r.IntN(len(colls))], i))
			} else {
				views = append(views, fmt.Sprintf(`%q: {"query": {%s}}`, name, query(colls)))
			}
			colls = append(colls, name)
		}
		for i := range r.IntN(6) {
			indexes = append(indexes, fmt.Sprintf(`"ix%d": {"on": %q, "key": %s}`, i, colls[r.IntN(len(colls))], pick(`[]`, `["k"]`, `["v"]`, `["v", "k"]`)))
		}
		doc := fmt.Sprintf(`{"version": 1, "name": "w",
"inputs": {"a": {"columns": ["k", "v"], "rows": [[0, 1, 1, 2], [1, 1, 0, 3], [1, -1, 2, 2], [2, 1, 2, 0]]},
           "b": {"columns": ["k", "v"], "rows": [[0, 1, 2, 2], [1, 1, 1, 1], [2, 1, 0, 5], [2, 1, 2, 2]]}},
"views": {%s}, "indexes": {%s}, "query": {%s}}`, strings.Join(views, ", "), strings.Join(indexes, ", "), query(colls))
		s, err := spec.Decode("w.json", ".", []byte(doc))
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		inputs, err := workloads.Load(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range []string{IndexImported, IndexDirect} {
			for _, j := range []string{spec.JoinLinear, spec.JoinDelta} {
				if ix == IndexImported && missing(s, j) != nil {
					continue
				}
				for _, w := range []int{1, 2} {
					b := &Benchmark{Base: "W", Workload: "w", Index: ix, Join: j, Workers: w, Spec: s, file: true}
					b.Name = b.name()
					counted := map[string]bool{}
					for _, u := range units {
						counted[u.unit] = true
					}
					for _, us := range stageUnits(b) {
						for _, u := range us {
							counted[u] = true
						}
					}
					vals, err := RuntimeEngine{}.Sample(context.Background(), b, inputs)
					if err != nil {
						t.Fatalf("%s: %v\n%s", b.Name, err, doc)
					}
					ran++
					for _, v := range vals {
						if strings.HasPrefix(v.Unit, stageUnitPrefix) {
							stages++
						}
						if !counted[v.Unit] {
							t.Errorf("%s: the sample reports %s, which checkLine does not count\n%s", b.Name, v.Unit, doc)
						}
						counted[v.Unit] = false // each unit once
						if n := len(fmt.Sprint(v.Value)); n > maxValueText {
							t.Errorf("%s: %s value %v of %d bytes, more than checkLine counts", b.Name, v.Unit, v.Value, n)
						}
					}
				}
			}
		}
	}
	if ran < 100 || stages < 500 {
		t.Fatalf("only %d samples ran, reporting %d stage-errors units", ran, stages)
	}
}

// TestStageErrorsOfAnIndexNoQueryReads: a sample's stage-errors units of
// an index the query does not read (a chain of views over a join, whose
// dataflow finishes after the query's output) are its whole input's
// counts, the same in every sample: the sample's rounds end only when
// every index has passed the last time (Session.FinishRounds). Without
// that wait it still passes here, as Stats' Sync steps the dataflows
// once; TestEvaluateWaitsForEveryIndex (workloads) fails without it.
func TestStageErrorsOfAnIndexNoQueryReads(t *testing.T) {
	s, err := spec.ReadFile("../../workloads/spec/testdata/unread_index.json")
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := workloads.Load(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	const unit = stageUnitPrefix + "maintain_v3_k/linear_views.big.query_stage_2"
	b := &Benchmark{Base: "UnreadIndex", Workload: "unread_index", Index: IndexImported, Join: spec.JoinLinear, Workers: 2, Spec: s, file: true}
	b.Name = b.name()
	n := 10
	if testing.Short() {
		n = 3
	}
	for range n {
		vals, err := RuntimeEngine{}.Sample(context.Background(), b, inputs)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, v := range vals {
			if v.Unit == unit {
				found = true
				if v.Value != 24000 {
					t.Fatalf("%s = %v, want 24000 (every row of the join divides by zero)", unit, v.Value)
				}
			}
		}
		if !found {
			t.Fatalf("no unit %s in %v", unit, vals)
		}
	}
}
