package benchrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/workloads/spec"
)

// paramSpec is a spec file of one generated input joined to inline rows,
// each step of whose generator a --param can set.
const paramSpec = `{"version": 1, "name": "gz",
  "inputs": {
    "a": {"columns": ["k", "v"], "generate": {"rows": 50, "seed": 3, "batches": 5, "retract": 0.2,
          "columns": {"k": {"dist": "uniform", "min": 0, "max": 3}, "v": {"dist": "zipf", "n": 5, "s": 0.5}}}},
    "b": {"columns": ["k"], "rows": [[0, 1, 1], [0, 1, 2]]}
  },
  "indexes": {"a_k": {"on": "a", "key": ["k"]}, "b_k": {"on": "b", "key": ["k"]}},
  "query": {"from": [{"as": "a", "collection": "a"}, {"as": "b", "collection": "b"}], "on": [["a.k", "b.k"]],
            "project": ["a.k", "a.v"],
            "reduce": {"group_by": ["a.k"], "aggregates": [{"name": "n", "fn": "count"}, {"name": "m", "fn": "min", "expr": "a.v"}]}}}
`

// TestZeroGeneratedRows checks that a generated input of no rows, set by
// --param inputs.a.generate.rows=0 or in the file, works end to end
// (docs/spec.md, "Generators"): run measures it in every mode and join
// strategy with an empty output and no steady state (no ns/update or
// updates/s, since no update follows as_of), check finds every
// configuration in agreement with the reference, eval prints empty
// sections, and gen writes a CSV file of the header alone.
func TestZeroGeneratedRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	file := filepath.Join(dir, "gz.json")
	if err := os.WriteFile(file, []byte(paramSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err := Run(ctx, RunConfig{Out: &stdout, ErrOut: &bytes.Buffer{}, Engine: RuntimeEngine{}, Env: testEnv, Count: 1, Progress: ProgressOff,
		Selection: Selection{Targets: []string{file}, Index: []string{IndexImported, IndexDirect}, Join: []string{"linear", "delta"},
			Workers: 1, Params: []string{"inputs.a.generate.rows=0,50"}}})
	if err != nil {
		t.Fatal(err)
	}
	zero, fifty := 0, 0
	for _, line := range strings.Split(stdout.String(), "\n") {
		switch {
		case strings.Contains(line, "/inputs.a.generate.rows=0/"):
			zero++
			if !strings.Contains(line, " 0 rows ") || !strings.Contains(line, " 0 errors ") || strings.Contains(line, "ns/update") || strings.Contains(line, "updates/s") {
				t.Errorf("rows=0: %s: want 0 rows, 0 errors and no steady-state units", line)
			}
		case strings.Contains(line, "/inputs.a.generate.rows=50/"):
			fifty++
			if !strings.Contains(line, " ns/update ") {
				t.Errorf("rows=50: %s: no ns/update", line)
			}
		}
	}
	if zero != 4 || fifty != 4 {
		t.Fatalf("%d lines of rows=0 and %d of rows=50, want 4 of each:\n%s", zero, fifty, stdout.String())
	}

	// The same input written in the file.
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(strings.Replace(paramSpec, `"rows": 50`, `"rows": 0`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(ctx, CheckConfig{Out: &out, Targets: []string{empty}}); err != nil || !strings.HasPrefix(out.String(), "ok   ") {
		t.Errorf("check: %v\n%s", err, out.String())
	}
	for _, c := range evalConfigs {
		out.Reset()
		if err := Eval(ctx, EvalConfig{Out: &out, Spec: empty, At: "0,4", Index: c.index, Join: c.join, Format: FormatCSV, Workers: c.workers}); err != nil {
			t.Fatalf("eval %+v: %v", c, err)
		}
		want := "# time=0\na.k,n,m,diff\n# errors time=0\nerror,diff\n# time=4\na.k,n,m,diff\n# errors time=4\nerror,diff\n"
		if out.String() != want {
			t.Errorf("eval %+v:\n%s\nwant\n%s", c, out.String(), want)
		}
	}
	out.Reset()
	csv := filepath.Join(dir, "csv")
	if err := Gen(ctx, GenConfig{Out: &out, Spec: empty, Dir: csv}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(csv, "a.csv")); err != nil || string(data) != "time,diff,k,v\n" {
		t.Errorf("gen of no rows wrote %q, %v; want the header alone", data, err)
	}
}

// TestParamOfAFractionalField checks --param on a spec file's numbers: an
// integer field takes any number that denotes an integer (2.5e1) and
// refuses a fraction, naming the parameter (exit 2); a fractional field
// (retract, a zipf column's s) is refused a fraction too, since a result
// name holds every parameter's value as a plain decimal integer
// (docs/spec.md, "benchrun run"), and the message says to set it in the
// file rather than only that the value is no integer.
func TestParamOfAFractionalField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gz.json")
	if err := os.WriteFile(file, []byte(paramSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	sel := func(p string) Selection {
		return Selection{Targets: []string{file}, Index: []string{IndexDirect}, Workers: 1, Params: []string{p}}
	}
	for p, want := range map[string]string{
		"inputs.a.generate.retract=0.5":         "--param: inputs.a.generate.retract=0.5: inputs.a.generate.retract is a fractional field, and a result name holds a parameter's value as a plain decimal integer: set it in the spec file (0.5 is not an integer)",
		"inputs.a.generate.columns.v.s=1.5":     "--param: inputs.a.generate.columns.v.s=1.5: inputs.a.generate.columns.v.s is a fractional field, and a result name holds a parameter's value as a plain decimal integer: set it in the spec file (1.5 is not an integer)",
		"inputs.a.generate.rows=2.5":            "--param: inputs.a.generate.rows=2.5: 2.5 is not an integer",
		"inputs.a.generate.columns.k.max=0.5e1": "", // 5: an integer
		"inputs.a.generate.retract=1":           file + ":3: inputs.a.generate.retract: --param inputs.a.generate.retract=1: 1 is outside [0, 1)",
	} {
		bs, err := Benchmarks(sel(p))
		if want == "" {
			if err != nil || len(bs) != 1 || !strings.Contains(bs[0].Name, "/inputs.a.generate.columns.k.max=5/") {
				t.Errorf("--param %s: %v, %q", p, err, names(bs))
			}
			continue
		}
		if err == nil || strings.TrimPrefix(Message(err), "benchrun: ") != want || ExitCode(err) != ExitUsage {
			t.Errorf("--param %s: %v (exit %d),\nwant exit 2 and %s", p, err, ExitCode(err), want)
		}
	}
	// A whole number in a fractional field is a value like any other.
	bs, err := Benchmarks(sel("inputs.a.generate.retract=0"))
	if err != nil || len(bs) != 1 || bs[0].Spec.Inputs[0].Generate.Retract != 0 {
		t.Errorf("--param retract=0: %v, %q", err, names(bs))
	}
}

// feedEngine records the tables each sample is fed, by spec name.
type feedEngine struct {
	fed map[string][]*spec.Table
	of  map[string]*spec.Spec
}

func (e *feedEngine) Sample(ctx context.Context, b *Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	e.fed[b.Spec.Name], e.of[b.Spec.Name] = inputs, b.Spec
	return []benchfmt.Value{{Value: 1, Unit: "install-ns"}}, nil
}

// TestGenWritesWhatRunFeeds checks that gen takes --param as run does
// (docs/spec.md, "benchrun gen"): for a spec file's field paths, a
// built-in's parameters and a built-in of several specs, with --seed,
// the CSV files gen writes hold exactly the updates run feeds the engine
// with the same parameters. A list, a parameter no target has and a
// value outside a built-in's range are refused with exit 2, writing
// nothing.
func TestGenWritesWhatRunFeeds(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "gz.json")
	if err := os.WriteFile(file, []byte(paramSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		params []string
	}{
		{file, []string{"inputs.a.generate.rows=37", "inputs.a.generate.seed=9", "inputs.a.generate.columns.k.max=1e2"}},
		{"lookup", []string{"rows=150", "keys=1.2e1"}},
		{"fanout", []string{"rows=40", "k=4"}},
		{"dd", []string{"rows=2e3"}},
	} {
		t.Run(filepath.Base(tc.target), func(t *testing.T) {
			const seed = 5
			eng := &feedEngine{fed: map[string][]*spec.Table{}, of: map[string]*spec.Spec{}}
			err := Run(context.Background(), RunConfig{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Engine: eng, Env: testEnv, Count: 1, Progress: ProgressOff, Seed: seed,
				Selection: Selection{Targets: []string{tc.target}, Index: []string{IndexDirect}, Workers: 1, Params: tc.params}})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "csv")
			if err := Gen(context.Background(), GenConfig{Out: &bytes.Buffer{}, Spec: tc.target, Dir: out, Seed: seed, Params: tc.params}); err != nil {
				t.Fatal(err)
			}
			files := 0
			for name, tables := range eng.fed {
				s := eng.of[name]
				sub := out
				if len(eng.fed) > 1 {
					sub = filepath.Join(out, name)
				}
				for i, want := range tables {
					got, err := spec.ReadCSVFile(filepath.Join(sub, s.Inputs[i].Name+".csv"), want.Columns)
					if err != nil {
						t.Fatal(err)
					}
					files++
					if !reflect.DeepEqual(got.Columns, want.Columns) || !slices.Equal(got.Times, want.Times) || !slices.Equal(got.Diffs, want.Diffs) || !slices.Equal(got.Vals, want.Vals) {
						t.Errorf("%s input %s: gen wrote %d updates, run fed %d, not the same", name, s.Inputs[i].Name, got.Len(), want.Len())
					}
				}
			}
			dirs := 0 // DIR/SPEC for a workload of several specs
			if len(eng.fed) > 1 {
				dirs = len(eng.fed)
			}
			if n := len(dirFiles(t, out)); n != files+dirs || files == 0 {
				t.Errorf("gen wrote %v; run fed %d inputs", dirFiles(t, out), files)
			}
		})
	}
	for _, tc := range []struct {
		target string
		params []string
		want   string
	}{
		{"lookup", []string{"rows=100,200"}, "--param: rows=100,200: gen writes one set of inputs: give one value (run runs each value of a list)"},
		{"lookup", []string{"nope=1"}, "--param: nope=1: lookup has no parameter nope (parameters of lookup: rows, keys)"},
		{"lookup", []string{"version=1"}, "--param: version=1: version is a field of the spec, not a parameter of lookup (parameters of lookup: rows, keys)"},
		{file, []string{"version=1"}, "--param: version=1: version is a field of the spec, not a parameter: a spec file's parameters are"},
		{"lookup", []string{"rows=0"}, "--param: rows=0: workload lookup: rows must be in 1..100000000 (fact updates), not 0"},
		{file, []string{"rows=10"}, "--param: rows=10: spec file " + file + " has no parameter rows"},
		{file, []string{"inputs.a.generate.rows=2.5"}, "--param: inputs.a.generate.rows=2.5: 2.5 is not an integer"},
	} {
		out := filepath.Join(t.TempDir(), "csv")
		err := Gen(context.Background(), GenConfig{Out: &bytes.Buffer{}, Spec: tc.target, Dir: out, Params: tc.params})
		if err == nil || ExitCode(err) != ExitUsage || !strings.HasPrefix(strings.TrimPrefix(Message(err), "benchrun: "), tc.want) {
			t.Errorf("gen %s --param %v: %v (exit %d), want exit 2 and %s", tc.target, tc.params, err, ExitCode(err), tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("gen %s --param %v: wrote %v", tc.target, tc.params, dirFiles(t, out))
		}
	}
}
