package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ImportOnly, imported: a positive time, the import-only query built and
// dropped again (the session's dataflows as before it), and the session's
// own query still answering; direct: nothing to time.
func TestImportOnly(t *testing.T) {
	s, err := spec.ReadFileWith("examples/dd_import.json", []spec.Override{{Field: "inputs.updates.generate.rows", Value: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	tabs, err := Load(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer se.Close(ctx)
			if err := se.FeedThrough(s.Plan.Plan.AsOf); err != nil {
				t.Fatal(err)
			}
			if err := se.WaitIndexes(ctx, s.Plan.Plan.AsOf); err != nil {
				t.Fatal(err)
			}
			if _, err := se.InstallQuery(ctx); err != nil {
				t.Fatal(err)
			}
			before, err := se.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				d, err := se.ImportOnly(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if mode == render.Direct && d != 0 || mode == render.Imported && d <= 0 {
					t.Fatalf("ImportOnly: %v", d)
				}
			}
			after, err := se.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Dataflows != before.Dataflows {
				t.Fatalf("dataflows after ImportOnly: %d, before: %d (the import-only query is not dropped)", after.Dataflows, before.Dataflows)
			}
			if _, _, err := se.FinishRounds(ctx); err != nil {
				t.Fatal(err)
			}
			if got := se.Output().Rows(); got != 2000 {
				t.Fatalf("the session's query after ImportOnly: %d rows, want 2000", got)
			}
		})
	}
}
