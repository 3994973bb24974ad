package benchrun

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExplainAgreesWithRun: for every example, with its indexes and
// without them, and each join strategy, explain --index imported refuses
// (exit 2) exactly when run --index imported does, with the same message;
// the arrangements that message names are the query's arrangements
// explain prints with "no index", and every other arrangement of the
// query is served by an index of its collection.
func TestExplainAgreesWithRun(t *testing.T) {
	chdirRoot(t)
	files, err := filepath.Glob("workloads/examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	var targets []string
	for _, f := range append(files, "internal/benchrun/testdata/explain/classes.json") {
		targets = append(targets, f, withoutIndexes(t, f))
	}
	for _, target := range targets {
		for _, join := range []string{"linear", "delta"} {
			var out bytes.Buffer
			explainErr := Explain(context.Background(), ExplainConfig{Out: &out, Spec: target, Index: IndexImported, Join: join})
			_, runErr := Benchmarks(Selection{Targets: []string{target}, Index: []string{IndexImported}, Join: []string{join}, Workers: 1})
			if (explainErr == nil) != (runErr == nil) || explainErr != nil && Message(explainErr) != Message(runErr) {
				t.Errorf("%s --join %s: explain says %v (exit %d), run %v (exit %d)", target, join, explainErr, ExitCode(explainErr), runErr, ExitCode(runErr))
				continue
			}
			if explainErr != nil && ExitCode(explainErr) != ExitUsage {
				t.Errorf("%s --join %s: explain exits %d, want %d: %v", target, join, ExitCode(explainErr), ExitUsage, explainErr)
			}
			// The query's arrangements without an index, as explain prints them.
			_, query, ok := strings.Cut(out.String(), "\nquery:\n")
			if !ok {
				t.Fatalf("%s: no query section:\n%s", target, out.String())
			}
			var unserved []string
			for _, line := range strings.Split(query, "\n") {
				what, arr, ok := strings.Cut(strings.TrimSpace(line), ": ")
				if verb, _, _ := strings.Cut(what, " "); !ok || !slices.Contains([]string{"source", "stage", "path", "lookup", "reads"}, verb) {
					continue // not an arrangement line
				}
				if rest, found := strings.CutSuffix(arr, ", no index"); found {
					a, _, _ := strings.Cut(rest, " by (")
					if !slices.Contains(unserved, a) {
						unserved = append(unserved, a)
					}
				} else if !strings.Contains(arr, ", index ") {
					t.Errorf("%s --join %s: %q names no index and does not say \"no index\"", target, join, line)
				}
			}
			slices.Sort(unserved)
			var named []string
			if explainErr != nil {
				msg := Message(explainErr)
				_, list, _ := strings.Cut(msg, "no index serves ")
				list, _, _ = strings.Cut(list, " (")
				named = strings.Split(list, ", ")
				// A key set is named whole: "a(x, y)" was split in two.
				for i := 0; i < len(named); i++ {
					for !strings.HasSuffix(named[i], ")") && i+1 < len(named) {
						named[i] += ", " + named[i+1]
						named = slices.Delete(named, i+1, i+2)
					}
				}
				slices.Sort(named)
			}
			if !slices.Equal(unserved, named) {
				t.Errorf("%s --join %s: explain prints %q with no index, the refusal names %q\n%s", target, join, unserved, named, out.String())
			}
		}
	}
}

// TestExplainInterrupted: a cancelled context (Ctrl-C) stops explain with
// exit 130 and prints nothing, where it printed the plan and exited 0
// once the spec, which may take seconds to decode, was read.
func TestExplainInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Explain(ctx, ExplainConfig{Out: &out, Spec: evalSpec, Index: IndexDirect})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted || out.Len() != 0 {
		t.Fatalf("explain interrupted: %v (exit %d), printed %q; want ErrInterrupted, exit 130, nothing printed", err, ExitCode(err), out.String())
	}
}
