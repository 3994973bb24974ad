package workloads

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads/spec"
)

// TestCheckBuiltins runs built-in workloads at their check size in every
// check configuration against the reference: errors (views that err, a
// nested view, a three-way delta join and a reduce), star (a three-way
// join, linear and delta) and triangles (a delta self-join). `benchrun
// check`, a step of scripts/test.sh, runs every built-in workload.
func TestCheckBuiltins(t *testing.T) {
	for _, w := range Registry() {
		if w.Name != "errors" && w.Name != "star" && w.Name != "triangles" {
			continue
		}
		for bi := range w.Benches {
			b := &w.Benches[bi]
			t.Run(b.Base, func(t *testing.T) {
				s, err := b.Spec(CheckParams(w))
				if err != nil {
					t.Fatal(err)
				}
				tables, err := Load(s, 0)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				diffs, err := Check(ctx, s, tables, CheckCases(s))
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffs {
					t.Error(d)
				}
			})
		}
	}
}

// TestStageDiff: the per-operator check weighs each collection by the
// ways it is read and reports a mismatch with the output's errors.
func TestStageDiff(t *testing.T) {
	w, err := Lookup("errors")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Benches[0].Spec(CheckParams(*w))
	if err != nil {
		t.Fatal(err)
	}
	weights := Weights(s.Plan)
	// The query reads va, vb and vd once each; vd reads vc.
	for coll, want := range map[string]int64{"": 1, "va": 1, "vb": 1, "vc": 1, "vd": 1} {
		if weights[coll] != want {
			t.Errorf("weight of %q: %d, want %d", coll, weights[coll], want)
		}
	}
	stages := []render.StageErrors{{Operator: "view va", Collection: "va", Errors: 3}, {Operator: "reduce query", Errors: 2}}
	got := &reference.Result{Errors: []reference.Error{{Message: "division by zero", Diff: 5}}}
	if d := stageDiff(s.Plan, stages, got); d != "" {
		t.Errorf("matching counts reported: %s", d)
	}
	got.Errors[0].Diff = 4
	if d := stageDiff(s.Plan, stages, got); !strings.Contains(d, "sum to 5; the output has 4 errors") {
		t.Errorf("mismatch not reported: %q", d)
	}
}

// TestWeightsCountEveryRead: a view read by two from entries, and through
// another view, reaches the output once per read.
func TestWeightsCountEveryRead(t *testing.T) {
	src := `{"version": 1, "name": "w",
	  "inputs": {"a": {"columns": ["k"], "rows": []}},
	  "views": {"v": {"input": "a", "map": [{"name": "x", "expr": "1 / k"}]},
	            "u": {"query": {"from": [{"as": "p", "collection": "v"}, {"as": "q", "collection": "v"}], "on": [["p.k", "q.k"]]}}},
	  "query": {"from": [{"as": "s", "collection": "u"}, {"as": "t", "collection": "v"}], "on": [["s.p_k", "t.k"]]}}`
	s, err := spec.DecodeWith("w.json", ".", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := Weights(s.Plan)
	if w["u"] != 1 || w["v"] != 3 {
		t.Errorf("weights %v, want u 1 and v 3 (twice through u, once directly)", w)
	}
}
