package benchrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeManyViews writes a spec file of n views in dir, each a filter of
// the one input, the query reading the last, and returns its path.
func writeManyViews(t testing.TB, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"version": 1, "name": "many", "inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1]]}}, "views": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`"v` + strconv.Itoa(i) + `": {"input": "a", "filter": ["x > 0"]}`)
	}
	b.WriteString(`}, "query": {"from": [{"as": "q", "collection": "v` + strconv.Itoa(n-1) + `"}]}}`)
	path := filepath.Join(dir, "many.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValidateManyViews validates a spec of 100,000 views, which took
// over a minute when reading a spec compared each member name with
// every one before it (workloads/spec's TestManyMembersComparedOnce
// counts the comparisons; BenchmarkValidateViews shows the time).
func TestValidateManyViews(t *testing.T) {
	if testing.Short() {
		t.Skip("a spec of 100,000 views")
	}
	const n = 100000
	path := writeManyViews(t, t.TempDir(), n)
	var out bytes.Buffer
	if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{path}}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s: ok: workload many, 1 input, %d views, 0 indexes\n", path, n); out.String() != want {
		t.Errorf("validate: %q, want %q", out.String(), want)
	}
}

// BenchmarkValidateViews validates a spec of n views, to show how the
// time grows with n (docs/engine-history.md, "validate reads a spec of
// many views is read in linear time").
func BenchmarkValidateViews(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5} {
		b.Run("views="+strconv.Itoa(n), func(b *testing.B) {
			path := writeManyViews(b, b.TempDir(), n)
			for b.Loop() {
				if err := Validate(context.Background(), ValidateConfig{Out: io.Discard, Specs: []string{path}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/view")
		})
	}
}
