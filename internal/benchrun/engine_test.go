package benchrun

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// runEngine runs targets with the runtime engine and returns the result
// file's text.
func runEngine(t *testing.T, sel Selection, count int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.txt")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{
		Out: &stdout, ErrOut: &stderr, Selection: sel, Count: count, OutFile: out,
		Progress: ProgressOff, Engine: RuntimeEngine{}, Env: DetectEnv(),
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// values reads every result of a file: name -> unit -> values. Units are
// as benchfmt tidies them (install-ns is install-sec, ns/update
// sec/update, in seconds).
func values(t *testing.T, text string) map[string]map[string][]float64 {
	t.Helper()
	out := map[string]map[string][]float64{}
	r := benchfmt.NewReader(strings.NewReader(text), "out.txt")
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		name := string(res.Name)
		if out[name] == nil {
			out[name] = map[string][]float64{}
		}
		for _, v := range res.Values {
			out[name][v.Unit] = append(out[name][v.Unit], v.Value)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEngineUnits: a real run of lookup in both modes reports every unit
// of docs/spec.md with values that describe the run: the exact row count
// of the output at the last time (the same in both modes), no errors, a
// positive install time and per-update cost, and trace bytes.
func TestEngineUnits(t *testing.T) {
	text := runEngine(t, Selection{Targets: []string{"lookup"}, Index: []string{IndexImported, IndexDirect}, Workers: 1, Params: []string{"rows=2000", "keys=100"}}, 1)
	vals := values(t, text)
	if len(vals) != 2 {
		t.Fatalf("want 2 benchmarks, got %d:\n%s", len(vals), text)
	}
	var rows []float64
	for name, u := range vals {
		for _, unit := range []string{"install-sec", "sec/update", "updates/s", "peak-heap-B", "trace-B", "rows", "errors", "hold-gap", "merge-work"} {
			if len(u[unit]) != 1 {
				t.Errorf("%s: unit %s: %v", name, unit, u[unit])
			}
		}
		for _, unit := range []string{"install-sec", "sec/update", "updates/s", "peak-heap-B", "trace-B"} {
			if len(u[unit]) == 1 && u[unit][0] <= 0 {
				t.Errorf("%s: %s = %v, want > 0", name, unit, u[unit][0])
			}
		}
		if u["errors"][0] != 0 {
			t.Errorf("%s: errors = %v", name, u["errors"][0])
		}
		rows = append(rows, u["rows"][0])
	}
	// lookup's output is one row per live fact: 2000 updates over 10
	// times, a tenth of those after the first retracting earlier rows.
	if rows[0] != rows[1] || rows[0] <= 0 || rows[0] > 2000 {
		t.Errorf("rows: %v, want the same positive count in both modes", rows)
	}
	if !strings.Contains(text, "Unit stage-errors:query/linear_query_stage_1 assume=exact") {
		t.Errorf("no Unit line for the join stage's error count:\n%s", text)
	}
}

// TestEngineErrorsAndStages: the errors workload reports its output's
// error multiplicity and the error counts of the operators that produce
// them.
func TestEngineErrorsAndStages(t *testing.T) {
	text := runEngine(t, Selection{Targets: []string{"errors"}, Index: []string{IndexDirect}, Workers: 1, Params: []string{"rows=300"}}, 1)
	for name, u := range values(t, text) {
		if u["errors"][0] <= 0 {
			t.Errorf("%s: errors = %v, want > 0 (views divide by zero)", name, u["errors"])
		}
		if v := u["stage-errors:query/view_va"]; len(v) != 1 || v[0] <= 0 {
			t.Errorf("%s: stage-errors of view va: %v", name, v)
		}
	}
}

// TestBenchstatColIndex: `go tool benchstat -col /index` reads a real
// results file and puts imported and direct side by side for each unit.
func TestBenchstatColIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchstat")
	}
	text := runEngine(t, Selection{Targets: []string{"lookup"}, Index: []string{IndexImported, IndexDirect}, Workers: 1, Params: []string{"rows=2000", "keys=100"}}, 3)
	path := filepath.Join(t.TempDir(), "lookup.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "benchstat", "-col", "/index", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"imported", "direct", "install-sec", "sec/update", "trace-B", "Lookup/workload=lookup/join=linear/rows=2000/keys=100/workers=1"} {
		if !strings.Contains(s, want) {
			t.Errorf("benchstat output lacks %q:\n%s", want, s)
		}
	}
}

// TestStallHoldGap: with a reader that never moves, the imported index is
// allowed to compact every round but stays at as_of: the hold gap is the
// rounds fed after it; direct has no shared index to hold back.
func TestStallHoldGap(t *testing.T) {
	text := runEngine(t, Selection{Targets: []string{"stall"}, Index: []string{IndexImported, IndexDirect}, Workers: 1, Params: []string{"rows=2000", "rounds=20"}}, 1)
	for name, u := range values(t, text) {
		gap := u["hold-gap"][0]
		switch {
		case strings.Contains(name, "index=imported") && gap != 19:
			t.Errorf("%s: hold-gap %v, want 19 (allowed to 19, held at 0)", name, gap)
		case strings.Contains(name, "index=direct") && gap != 0:
			t.Errorf("%s: hold-gap %v, want 0", name, gap)
		}
	}
}

// TestEngineRowsBeforeUntil: rows and errors describe the output at the
// last time before until, though a direct query's raw inputs run past it.
func TestEngineRowsBeforeUntil(t *testing.T) {
	data, err := os.ReadFile(evalSpec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "until.json")
	if err := os.WriteFile(path, bytes.Replace(data, []byte(`"as_of": 1,`), []byte(`"as_of": 1, "until": 2,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	text := runEngine(t, Selection{Targets: []string{path}, Index: []string{IndexImported, IndexDirect}, Workers: 1}, 1)
	for name, u := range values(t, text) {
		// At time 1: customers 10 and 20, and one division by zero.
		if u["rows"][0] != 2 || u["errors"][0] != 1 {
			t.Errorf("%s: rows %v errors %v, want 2 and 1 (the output at time 1)", name, u["rows"], u["errors"])
		}
	}
}

// TestDirectSingleEntryHoldsItsArrangement: a direct query of one entry
// builds the arrangement an imported one reads and holds it like an
// index, so both modes hold about the same trace bytes.
func TestDirectSingleEntryHoldsItsArrangement(t *testing.T) {
	text := runEngine(t, Selection{Targets: []string{"fanout"}, Index: []string{IndexImported, IndexDirect}, Workers: 1, Params: []string{"rows=2000", "k=1"}}, 1)
	bytesOf := map[string]float64{}
	for name, u := range values(t, text) {
		for _, m := range []string{IndexImported, IndexDirect} {
			if strings.Contains(name, "index="+m) {
				bytesOf[m] = u["trace-B"][0]
			}
		}
	}
	imp, dir := bytesOf[IndexImported], bytesOf[IndexDirect]
	if imp <= 0 || dir < imp/2 || dir > imp*2 {
		t.Errorf("trace-B imported %v, direct %v: want both positive and within 2x", imp, dir)
	}
}

// TestSpecNamedLikeBuiltin: a spec file may declare any name, also one
// that is (or camel-cases to the Base of) a built-in with a measurement
// of its own: peek, fanout, stall or a dd shape. Such a spec is measured
// as any other query: the dd shapes' Go limits, which index its inputs as
// the built-in's (two for d_d_join), once panicked on a spec of one
// input, and peek's reads replaced its rows and errors.
func TestSpecNamedLikeBuiltin(t *testing.T) {
	dir := t.TempDir()
	var targets []string
	for _, name := range []string{"peek", "fanout", "stall", "d_d_arrange", "d_d_count", "d_d_join", "d_d_rounds", "d_d_import"} {
		path := filepath.Join(dir, name+".json")
		data := `{"version": 1, "name": "` + name + `",
  "inputs": {"a": {"columns": ["k"], "rows": [[0, 1, 5], [1, 1, 6], [2, -1, 5]]}},
  "indexes": {"a_by_k": {"on": "a", "key": ["k"]}},
  "query": {"from": [{"as": "x", "collection": "a"}]}}`
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, path)
	}
	text := runEngine(t, Selection{Targets: targets, Index: []string{IndexImported, IndexDirect}, Workers: 1}, 1)
	vals := values(t, text)
	if len(vals) != 2*len(targets) {
		t.Fatalf("want %d benchmarks, got %d:\n%s", 2*len(targets), len(vals), text)
	}
	query := map[string]bool{"install-sec": true, "sec/update": true, "updates/s": true, "peak-heap-B": true, "trace-B": true, "rows": true, "errors": true, "hold-gap": true, "merge-work": true}
	for name, u := range vals {
		for unit := range u {
			if !query[unit] && !strings.HasPrefix(unit, stageUnitPrefix) {
				t.Errorf("%s: unit %s, which only a built-in workload reports", name, unit)
			}
		}
		if r := u["rows"]; len(r) != 1 || r[0] != 1 {
			t.Errorf("%s: rows %v, want [1]", name, r)
		}
		if e := u["errors"]; len(e) != 1 || e[0] != 0 {
			t.Errorf("%s: errors %v, want [0]", name, e)
		}
	}
}
