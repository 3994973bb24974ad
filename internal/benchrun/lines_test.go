package benchrun

import (
	"context"
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
