package workloads

import (
	"context"
	"testing"
	"time"
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
