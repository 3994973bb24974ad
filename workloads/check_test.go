package workloads

import (
	"context"
	"testing"
	"time"
)

// TestCheckEveryBuiltin runs every built-in workload's benchmarks at a
// small size in every check configuration against the reference.
func TestCheckEveryBuiltin(t *testing.T) {
	for _, w := range Registry() {
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
