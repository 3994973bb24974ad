package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/internal/benchrun"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/gen"
	"github.com/tracebench/tracebench/workloads/spec"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/golden/*.txt from the current output")

// execute runs the command line from the repository root and returns the
// exit code and both outputs.
func execute(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), &out, &errOut, args)
	return code, out.String(), errOut.String()
}

// TestGolden compares each command's exit code, stdout and stderr with
// testdata/golden/NAME.txt.
func TestGolden(t *testing.T) {
	golden, _ := filepath.Abs("testdata/golden")
	t.Chdir("../..")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"list", []string{"list"}},
		{"validate", []string{"validate", "workloads/examples/lookup.json", "workloads/examples/errors.json"}},
		{"explain_star_delta", []string{"explain", "workloads/examples/star.json", "--join", "delta"}},
		{"explain_star_linear", []string{"explain", "workloads/examples/star.json"}},
		{"explain_errors_direct", []string{"explain", "workloads/examples/errors.json", "--index", "direct"}},
		{"explain_views", []string{"explain", "workloads/spec/testdata/orders_lineitem.json"}},
		{"explain_missing_index", []string{"explain", "cmd/benchrun/testdata/bad/missing_index.json"}},
		{"explain_missing_index_delta", []string{"explain", "cmd/benchrun/testdata/bad/missing_index.json", "--join", "delta"}},
		{"explain_missing_index_direct", []string{"explain", "cmd/benchrun/testdata/bad/missing_index.json", "--index", "direct"}},
		{"bad_unknown_field", []string{"validate", "cmd/benchrun/testdata/bad/unknown_field.json"}},
		{"bad_name", []string{"validate", "cmd/benchrun/testdata/bad/bad_name.json"}},
		{"bad_cycle", []string{"validate", "cmd/benchrun/testdata/bad/cycle.json"}},
		{"bad_expr", []string{"validate", "cmd/benchrun/testdata/bad/bad_expr.json"}},
		{"bad_csv", []string{"validate", "cmd/benchrun/testdata/bad/bad_csv.json"}},
		{"bad_missing_file", []string{"validate", "cmd/benchrun/testdata/bad/nope.json"}},
		{"run_missing_index", []string{"run", "cmd/benchrun/testdata/bad/missing_index.json"}},
		{"eval_missing_index", []string{"eval", "cmd/benchrun/testdata/bad/missing_index.json", "--at", "0"}},
		{"eval_missing_index_direct_ok", []string{"eval", "cmd/benchrun/testdata/bad/missing_index.json", "--at", "0", "--index", "direct", "--join", "delta"}},
		{"run_bad_count", []string{"run", "lookup", "--count", "abc"}},
		{"run_zero_count", []string{"run", "lookup", "--count", "0"}},
		{"run_bad_index", []string{"run", "lookup", "--index", "imported,shared"}},
		{"run_bad_join", []string{"run", "lookup", "--join", "hash"}},
		{"run_bad_shard", []string{"run", "--shard", "4/4"}},
		{"run_bad_param", []string{"run", "lookup", "--param", "rows=ten"}},
		{"run_unknown_param", []string{"run", "lookup", "--param", "edges=10"}},
		{"run_bad_progress", []string{"run", "lookup", "--progress", "loud"}},
		{"run_unknown_workload", []string{"run", "lookups"}},
		{"run_unknown_flag", []string{"run", "--rows", "5"}},
		{"unknown_command", []string{"frobnicate"}},
		{"help_unknown_topic", []string{"help", "chek"}},
		{"help_extra_word", []string{"help", "run", "lookup"}},
		{"completion_unknown_shell", []string{"completion", "bsh"}},
		{"validate_no_args", []string{"validate"}},
		{"explain_builtin", []string{"explain", "triangles", "--join", "linear"}},
		{"validate_builtin", []string{"validate", "dd"}},
		{"explain_unknown_workload", []string{"explain", "triangle"}},
		{"explain_bad_index", []string{"explain", "workloads/examples/star.json", "--index", "both"}},
		{"eval_csv", []string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1,3"}},
		{"eval_json", []string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "3,1", "--format", "json", "--index", "direct", "--workers", "2"}},
		{"eval_before_as_of", []string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1,0"}},
		{"eval_bad_format", []string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1", "--format", "xml"}},
		{"eval_no_at", []string{"eval", "internal/benchrun/testdata/eval/small.json"}},
		{"check_spec", []string{"check", "internal/benchrun/testdata/eval/small.json", "cmd/benchrun/testdata/bad/missing_index.json"}},
		{"check_unknown_workload", []string{"check", "lookups"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := execute(t, tc.args...)
			got := fmt.Sprintf("$ benchrun %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, out, errOut)
			path := filepath.Join(golden, tc.name+".txt")
			if *rewrite {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

// TestBadInputExitsTwo checks every bad-input path: exit 2, a message
// naming the file and line or field (or the flag), and nothing on stdout
// or in --out.
func TestBadInputExitsTwo(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	small := func(name, input string) string {
		return `{"version": 1, "name": "` + name + `",` + "\n" + `"inputs": {"a": {"columns": ["x"], ` + input + `}},
"indexes": {"a_by_x": {"on": "a", "key": ["x"]}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`
	}
	deep := write("deep.json", strings.Replace(small("w", `"rows": []`), `"name": "w"`, `"name": "w", "description": `+strings.Repeat("[", 200000)+strings.Repeat("]", 200000), 1))
	maxTime := write("max_time.json", small("w", `"rows": [[10, 1, 1], [18446744073709551615, 1, 2]]`))
	maxTimeCSV := write("max_time_csv.json", small("w", `"csv": "max_time.csv"`))
	write("max_time.csv", "time,diff,x\n10,1,1\n18446744073709551615,1,2\n")
	if err := os.MkdirAll(filepath.Join(dir, "g2", "dims.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A name longer than MaxName would put result lines past what
	// benchcmp reads.
	longName := write("long_name.json", small(strings.Repeat("w", 70000), `"rows": [[0, 1, 1]]`))
	longInput := write("long_input.json", strings.ReplaceAll(small("w", `"rows": [[0, 1, 1]]`), `"a"`, `"`+strings.Repeat("a", 1025)+`"`))
	hugeRows := write("huge_rows.json", small("w", `"generate": {"rows": 9223372036854775807, "columns": {"x": {"dist": "seq"}}}`))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "cmd/benchrun/testdata/bad/unknown_field.json"}, "cmd/benchrun/testdata/bad/unknown_field.json:5: inputs.a.colums: unknown field"},
		{[]string{"run", "cmd/benchrun/testdata/bad/bad_name.json"}, "cmd/benchrun/testdata/bad/bad_name.json:5: inputs.a.columns[1]: bad name"},
		{[]string{"run", "cmd/benchrun/testdata/bad/cycle.json"}, "cmd/benchrun/testdata/bad/cycle.json:8: views.v: views form a cycle"},
		{[]string{"run", "cmd/benchrun/testdata/bad/bad_expr.json"}, "cmd/benchrun/testdata/bad/bad_expr.json:8: query.map[0].expr:"},
		{[]string{"run", "cmd/benchrun/testdata/bad/bad_csv.json"}, "cmd/benchrun/testdata/bad/bad.csv:3: 3 fields"},
		{[]string{"run", "cmd/benchrun/testdata/bad/nope.json"}, "cmd/benchrun/testdata/bad/nope.json: cannot read spec"},
		{[]string{"run", "cmd/benchrun/testdata/bad/missing_index.json"}, "cmd/benchrun/testdata/bad/missing_index.json:9: indexes: --index imported: no index serves a(k), c(y)"},
		{[]string{"run", "lookup", "--count", "x"}, `--count`},
		{[]string{"run", "lookup", "--workers", "0"}, `--workers: must be at least 1`},
		{[]string{"run", "lookup", "--seed", "-1"}, `--seed`},
		{[]string{"run", "lookup", "--param", "keys=0"}, "benchrun: --param: keys=0: workload lookup: keys must be in 1..100000000 (dimension rows (distinct keys)), not 0"},
		{[]string{"run", "fanout", "--param", "k=-1"}, "benchrun: --param: k=-1: workload fanout: k must be in 1..1024 (concurrent queries), not -1"},
		{[]string{"run", "peek", "--param", "reads=0"}, "benchrun: --param: reads=0: workload peek: reads must be in 1..1000000 (one-shot reads per sample), not 0"},
		{[]string{"run", "lookup", "--workers", "5000"}, "benchrun: --workers: must be at most 1024, not 5000"},
		{[]string{"eval", "lookup", "--at", "0", "--workers", "5000"}, "benchrun: --workers: must be at most 1024, not 5000"},
		{[]string{"run", "lookup", "--flamegraph", "x.svg"}, `--flamegraph: "x.svg" must name an .html file`},
		{[]string{"gen", "cmd/benchrun/testdata/bad/bad_csv.json", "--out", filepath.Join(dir, "gen")}, "bad.csv:3: 3 fields"},
		{[]string{"gen", "workloads/examples/lookup.json"}, "--out: gen needs --out DIR"},
		{[]string{"run", "lookup", "--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof")}, "--cpuprofile: "},
		{[]string{"run", "lookup", "--cpuprofile", filepath.Join(dir, "results.txt")}, "benchrun: --out and --cpuprofile: both name " + filepath.Join(dir, "results.txt")},
		{[]string{"run", "lookup", "--cpuprofile", filepath.Join(dir, "p"), "--memprofile", filepath.Join(dir, ".", "p")}, "benchrun: --cpuprofile and --memprofile: both name "},
		{[]string{"gen", "lookup", "--out", filepath.Join(dir, "g2")}, "benchrun: --out: " + filepath.Join(dir, "g2", "dims.csv") + " is a directory"},
		{[]string{"gen", "lookup", "--out", hugeRows}, "benchrun: --out: " + hugeRows + " is not a directory"},
		{[]string{"validate", hugeRows}, hugeRows + ":2: inputs.a.generate.rows: 9223372036854775807 rows is more than the 100000000 a generated input may have"},
		{[]string{"run", hugeRows}, hugeRows + ":2: inputs.a.generate.rows: 9223372036854775807 rows is more than"},
		{[]string{"validate", deep}, deep + ":1: description[0][0]"},
		{[]string{"run", longName, "--index", "direct"}, longName + ":1: name: a name of 70000 bytes: names are at most 1024 bytes"},
		{[]string{"validate", longName}, longName + ":1: name: a name of 70000 bytes: names are at most 1024 bytes"},
		{[]string{"run", longInput}, longInput + ":2: inputs." + strings.Repeat("a", 80) + "... (1025 bytes): a name of 1025 bytes: names are at most 1024 bytes"},
		{[]string{"run", deep}, "]: nesting deeper than 64 arrays and objects"},
		{[]string{"validate", maxTime}, maxTime + ":2: inputs.a.rows[1][0]: time 18446744073709551615 is outside 0..18446744073709551614"},
		{[]string{"run", maxTime, "--index", "direct"}, maxTime + ":2: inputs.a.rows[1][0]: time 18446744073709551615 is outside"},
		{[]string{"validate", maxTimeCSV}, filepath.Join(dir, "max_time.csv") + ":3: field 1 (time) is 18446744073709551615, outside 0..18446744073709551614"},
		{[]string{"gen", maxTimeCSV, "--out", filepath.Join(dir, "gen")}, filepath.Join(dir, "max_time.csv") + ":3: field 1 (time)"},
		// An empty value would mean the default, a repeated flag the
		// last value: both are refused, naming the flag.
		{[]string{"run", "lookup", "--shard", ""}, `invalid argument "" for "--shard" flag: the value must not be empty`},
		{[]string{"run", "lookup", "--join="}, `invalid argument "" for "--join" flag: the value must not be empty`},
		{[]string{"run", "lookup", "--cpuprofile", ""}, `invalid argument "" for "--cpuprofile" flag: the value must not be empty`},
		{[]string{"gen", "lookup", "--out", ""}, `invalid argument "" for "--out" flag: the value must not be empty`},
		{[]string{"eval", "lookup", "--at", "0", "--format", ""}, `invalid argument "" for "--format" flag: the value must not be empty`},
		{[]string{"run", "lookup", "--out", filepath.Join(dir, "other.txt")}, `for "--out" flag: the flag is given more than once`},
		{[]string{"run", "lookup", "--count", "1", "--count", "2"}, `invalid argument "2" for "--count" flag: the flag is given more than once`},
		{[]string{"gen", "lookup", "--out", filepath.Join(dir, "gen"), "--seed", "1", "--seed=2"}, `invalid argument "2" for "--seed" flag: the flag is given more than once`},
		{[]string{"explain", "lookup", "--index", "direct", "--index", "imported"}, `for "--index" flag: the flag is given more than once`},
		// A value given twice in a list is refused, as in a --param
		// list, not run once.
		{[]string{"run", "lookup", "--index", "imported,direct,imported"}, "benchrun: --index: imported,direct,imported: the value imported is given twice"},
		{[]string{"run", "lookup", "--join", "delta,delta"}, "benchrun: --join: delta,delta: the value delta is given twice"},
		{[]string{"eval", "lookup", "--at", "0,5,0"}, "benchrun: --at: time 0 is given twice"},
		// Integer flags read decimal: 0x2 is refused, not read as 2.
		{[]string{"run", "lookup", "--count", "0x2"}, `invalid argument "0x2" for "--count" flag: must be a plain decimal integer`},
		{[]string{"eval", "lookup", "--at", "0", "--seed", "1_0"}, `invalid argument "1_0" for "--seed" flag: must be a plain decimal integer`},
	} {
		outFile := filepath.Join(dir, "results.txt")
		os.Remove(outFile)
		args := tc.args
		if args[0] == "run" {
			args = append(args, "--out", outFile)
		}
		code, out, errOut := execute(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("benchrun %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, out, errOut, tc.want)
		}
		if _, err := os.Stat(outFile); err == nil {
			t.Errorf("benchrun %s: --out was written", strings.Join(args, " "))
		}
		if _, err := os.Stat(filepath.Join(dir, "gen")); err == nil {
			t.Errorf("benchrun %s: gen wrote its directory", strings.Join(args, " "))
		}
		if _, err := os.Stat(filepath.Join(dir, "g2", "facts.csv")); err == nil {
			t.Errorf("benchrun %s: gen wrote g2/facts.csv", strings.Join(args, " "))
		}
	}
}

// TestGen checks that gen writes every input as CSV equal to what the
// generator produces with the given seed, readable by the CSV reader.
func TestGen(t *testing.T) {
	t.Chdir("../..")
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := execute(t, "gen", "workloads/examples/lookup.json", "--out", dir, "--seed", "9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := fmt.Sprintf("%s/facts.csv: 10000 updates\n%s/dims.csv: 1000 updates\n", dir, dir)
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	s, err := spec.ReadFile("workloads/examples/lookup.json")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := workloads.Load(s, 9)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range s.Inputs {
		got, err := spec.ReadCSVFile(filepath.Join(dir, in.Name+".csv"), in.Columns)
		if err != nil {
			t.Fatal(err)
		}
		named := *got
		named.Input = in.Name // Load names the input each table is for
		if !reflect.DeepEqual(&named, tables[i]) {
			t.Errorf("%s.csv differs from the generated input", in.Name)
		}
		if !reflect.DeepEqual(got, gen.Table(in.Generate, in.Columns, 9)) {
			t.Errorf("%s.csv is not the generator's output for seed 9", in.Name)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("gen left %d files, want 2 (no temporaries)", len(entries))
	}
	// A built-in workload of several specs: one directory per spec.
	ddDir := filepath.Join(t.TempDir(), "dd")
	code, out, errOut = execute(t, "gen", "dd", "--out", ddDir, "--seed", "1")
	if code != 0 {
		t.Fatalf("gen dd: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"dd_arrange/updates.csv", "dd_count/updates.csv", "dd_join/left.csv", "dd_join/right.csv", "dd_rounds/updates.csv", "dd_import/updates.csv"} {
		if !strings.Contains(out, filepath.Join(ddDir, f)+": ") {
			t.Errorf("gen dd did not write %s:\n%s", f, out)
		}
	}
}

// TestHelpExamples runs the examples in every command's --help. Commands
// that need the engine must get as far as asking for it: every flag and
// spec in the example is valid.
func TestHelpExamples(t *testing.T) {
	t.Chdir("../..")
	tmp := t.TempDir()
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{}, nil)
	cmds := append(root.Commands(), root)
	n := 0
	for _, c := range cmds {
		for _, args := range helpExamples(c) {
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "/tmp/", tmp+"/")
				if strings.HasSuffix(a, ".txt") {
					args[i] = filepath.Join(tmp, a)
				}
			}
			n++
			code, _, errOut := execute(t, args...)
			switch {
			case code == 0:
			case code == 1 && strings.Contains(errOut, "no engine to run benchmarks with"):
			default:
				t.Errorf("example `benchrun %s` of %s: exit %d: %s", strings.Join(args, " "), c.Name(), code, errOut)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d examples found in the help texts", n)
	}
}

// TestLongOrRawStringsAreQuotedShort: a spec's error quotes at most a
// bounded prefix of a long field name or value (a 300 KB key, name, number
// or path), as the CSV errors do, so that the message stays a line; and a
// control character in a field name or value reaches the terminal escaped,
// never raw. Each is still exit 2 naming the file, line and field.
func TestLongOrRawStringsAreQuotedShort(t *testing.T) {
	dir := t.TempDir()
	const n = 300_000
	long := strings.Repeat("x", n)
	base := `{"version": 1, "name": "w",
"inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1]]}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`
	for i, tc := range []struct {
		from, to string // base with from replaced by to
		want     string
	}{
		{`"version": 1`, `"version": 1, "` + long + `": 1`, `:1: ` + long[:80] + `... (300000 bytes): unknown field (allowed: version,`},
		{`"version": 1`, `"version": 1, "` + long + `": tru`, `:1: ` + long[:80] + `... (300000 bytes): invalid JSON`},
		{`"version": 1`, `"version": 1` + strings.Repeat("0", n), `:1: version: 1` + strings.Repeat("0", 79) + `... (300001 bytes) is outside the int64 range`},
		{`"version": 1`, `"version": 1.` + strings.Repeat("5", n), `:1: version: 1.` + strings.Repeat("5", 78) + `... (300002 bytes) is not an integer`},
		{`"name": "w"`, `"name": "W` + long + `"`, `:1: name: bad name "W` + long[:79] + `"... (300001 bytes): names match`},
		{`"rows": [[0, 1, 1]]`, `"generate": {"rows": 1, "columns": {"x": {"dist": "` + long + `"}}}`, `:2: inputs.a.generate.columns.x.dist: unknown distribution "` + long[:80] + `"... (300000 bytes) (seq, uniform or zipf)`},
		{`"rows": [[0, 1, 1]]`, `"rows": [[0, 1, 1` + strings.Repeat("1", n) + `]]`, `:2: inputs.a.rows[0][2]: 1` + strings.Repeat("1", 79) + `... (300001 bytes) is outside the int64 range`},
		{`"rows": [[0, 1, 1]]`, `"csv": "` + long + `"`, ` bytes): cannot read CSV: file name too long`},
		{`"from"`, `"join": "` + long + `", "from"`, `:3: query.join: unknown join "` + long[:80] + `"... (300000 bytes) (linear or delta)`},
		{`"from"`, `"reduce": {"group_by": [], "aggregates": [{"name": "n", "fn": "` + long + `"}]}, "from"`, `:3: query.reduce.aggregates[0].fn: unknown aggregate "` + long[:80] + `"... (300000 bytes)`},
		{`"collection": "a"`, `"collection": "` + long + `"`, `:3: query.from[0].collection: a name of 300000 bytes: names are at most 1024 bytes`},
		{`"from"`, `"project": ["` + long + `"], "from"`, `:3: query.project[0]: ` + long[:80] + `... (300000 bytes) is not a map name`},
		{`"inputs": {"a": {"columns": ["x"]`, `"inputs": {"` + long + `": {"columns": ["X"]`, `:2: inputs.` + long[:80] + `... (300000 bytes): a name of 300000 bytes: names are at most 1024 bytes`},
		// Control characters: escaped in a field name and in a value.
		{`"version": 1`, `"version": 1, "\u001b[2Jboom": 1`, `:1: "\x1b[2Jboom": unknown field`},
		{`"from"`, `"reduce": {"group_by": ["\u001b[31mred"], "aggregates": [{"name": "n", "fn": "count"}]}, "from"`, `:3: query.reduce.group_by[0]: "\x1b[31mred" is not a project output name`},
	} {
		data := strings.Replace(base, tc.from, tc.to, 1)
		if data == base {
			t.Fatalf("case %d: %q is not in the spec", i, tc.from)
		}
		path := filepath.Join(dir, fmt.Sprintf("long%d.json", i))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := execute(t, "validate", path)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || len(errOut) > 1000 || strings.Contains(errOut, "\x1b") {
			t.Errorf("case %d: exit %d, stdout %q, stderr (%d bytes) %.600q; want exit 2, nothing on stdout, at most 1000 bytes, no raw escape, and %.300q",
				i, code, out, len(errOut), errOut, tc.want)
		}
	}
}

// TestLongCommandLineValuesAreQuotedShort: a command-line value echoed in
// an error (a workload name, a --param, a flag's value, an unknown flag
// or command) is quoted to its first 80 bytes and its length, as a spec's
// values are, so a value of 100 KB still gets a message of one short
// line; each is still exit 2 naming the flag or argument.
func TestLongCommandLineValuesAreQuotedShort(t *testing.T) {
	t.Chdir("../..")
	const n = 100_000
	long := strings.Repeat("x", n)
	digits := strings.Repeat("1", n)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", long}, `no built-in workload "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"validate", long}, `no built-in workload "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"explain", long}, `no built-in workload "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"check", long}, `no built-in workload "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"run", "lookup", "--param", "rows=" + digits}, `benchrun: --param: rows=` + digits[:75] + `... (100005 bytes): ` + digits[:80] + `... (100000 bytes) is outside -9223372036854775808..18446744073709551615, the range of every integer field`},
		{[]string{"run", "lookup", "--param", "rows=" + long}, `benchrun: --param: rows=`},
		{[]string{"run", "lookup", "--param", long + "=1"}, `benchrun: --param: ` + long[:80] + `... (100002 bytes): no selected workload has a parameter ` + long[:80] + `... (100000 bytes)`},
		{[]string{"run", "lookup", "--param", long}, `benchrun: --param: "` + long[:80] + `"... (100000 bytes) is not key=value`},
		{[]string{"run", "lookup", "--param", "rows=1", "--param", "rows=2"}, `benchrun: --param: rows is given twice`},
		{[]string{"run", "workloads/examples/lookup.json", "--param", "inputs." + long + "=1"}, `--param inputs.` + long[:73] + `... (100009 bytes): the spec has no number at this field`},
		{[]string{"run", "lookup", "--index", long}, `benchrun: --index: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"run", "lookup", "--join", long}, `benchrun: --join: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"run", "lookup", "--shard", long}, `benchrun: --shard: "` + long[:80] + `"... (100000 bytes) is not i/n`},
		{[]string{"run", "lookup", "--progress", long}, `benchrun: --progress: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"run", "lookup", "--flamegraph", long + ".svg"}, `benchrun: --flamegraph: "` + long[:80] + `"... (100004 bytes) must name an .html file`},
		{[]string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", long}, `benchrun: --at: "` + long[:80] + `"... (100000 bytes) is not a time`},
		{[]string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1", "--format", long}, `benchrun: --format: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1", "--index", long}, `benchrun: --index: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"explain", "lookup", "--join", long}, `benchrun: --join: unknown value "` + long[:80] + `"... (100000 bytes)`},
		{[]string{"run", "lookup", "--count", digits}, `invalid argument "` + digits[:80] + `"... (100000 bytes) for "--count" flag: out of range`},
		{[]string{"run", "--" + long}, `unknown flag: --` + long[:78] + `... (100002 bytes)`},
		{[]string{long}, `unknown command "` + long[:80] + `"... (100000 bytes) for "benchrun"`},
	} {
		code, out, errOut := execute(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || len(errOut) > 1000 {
			t.Errorf("benchrun %.200q: exit %d, stdout %.200q, stderr (%d bytes) %.600q; want exit 2, nothing on stdout, at most 1000 bytes, and %.300q",
				tc.args, code, out, len(errOut), errOut, tc.want)
		}
	}
}

// TestByteOrderMarkSkipped: a spec file and its CSV input that start with
// a UTF-8 byte order mark (as some Windows editors save them) validate
// and run, as benchcmp reads such a result file.
func TestByteOrderMarkSkipped(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "bom.json")
	if err := os.WriteFile(specPath, []byte("\ufeff"+`{"version": 1, "name": "bom",
"inputs": {"a": {"columns": ["x"], "csv": "a.csv"}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("\ufefftime,diff,x\r\n0,1,7\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := execute(t, "validate", specPath); code != 0 {
		t.Errorf("validate: exit %d: %s", code, errOut)
	}
	code, out, errOut := execute(t, "eval", specPath, "--at", "0", "--index", "direct")
	if code != 0 || out != "# time=0\na.x,diff\n7,1\n# errors time=0\nerror,diff\n" {
		t.Errorf("eval: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCommandLineControlCharactersAreEscaped: a --param echoed in an error
// reaches the terminal escaped and quoted when it holds a control
// character, as a workload name or a spec's values do, never raw; a
// printable one is still shown bare.
func TestCommandLineControlCharactersAreEscaped(t *testing.T) {
	t.Chdir("../..")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "lookup", "--param", "ro\x1b[2Jws=1"}, `benchrun: --param: "ro\x1b[2Jws=1": no selected workload has a parameter "ro\x1b[2Jws"`},
		{[]string{"run", "lookup", "--param", "rows=1\x1b[2J"}, `benchrun: --param: "rows=1\x1b[2J": "1\x1b[2J" is not a decimal integer`},
		{[]string{"run", "lookup", "--param", "rows=1", "--param", "rows\x07=2"}, `benchrun: --param: "rows\a=2": no selected workload has a parameter "rows\a"`},
		{[]string{"run", "workloads/examples/lookup.json", "--param", "inputs.\x1b[31mred=1"}, `--param "inputs.\x1b[31mred=1": the spec has no number at this field`},
		{[]string{"run", "lookup", "--param", "rowz=1"}, `benchrun: --param: rowz=1: no selected workload has a parameter rowz`},
		{[]string{"run", "lookup", "--param", "version=1"}, `benchrun: --param: version=1: version is a field of the spec, not a parameter of lookup (parameters of lookup: rows, keys)`},
		{[]string{"run", "workloads/examples/lookup.json", "--param", "version=1"}, `benchrun: --param: version=1: version is a field of the spec, not a parameter: a spec file's parameters are paths of its integer fields`},
	} {
		code, out, errOut := execute(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.ContainsAny(errOut, "\x1b\x07") {
			t.Errorf("benchrun %q: exit %d, stdout %q, stderr %q; want exit 2, no raw control character, and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestPathsWithControlCharactersAreEscaped: a file path holding a newline
// or an escape sequence (a spec file, its CSV input, an output flag's file
// or directory) reaches the terminal quoted and escaped wherever an error
// or a command's output names it, never raw; each error is still exit 2.
func TestPathsWithControlCharactersAreEscaped(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, data string) {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const bad = "a\nb\x1b[2J" // a newline and an escape sequence
	const q = `a\nb\x1b[2J`   // as quoted
	small := func(name, input string) string {
		return `{"version": 1, "name": "` + name + `", "as_of": 3,` + "\n" + `"inputs": {"a": {"columns": ["x"], ` + input + `}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`
	}
	write(bad+".json", small("w", `"rows": [[0, 1, 1]]`))
	write(bad+"2.json", small("w", `"rows": [[0, 1, 1]]`))
	write(bad+"file", "")
	// A spec in a directory of that name: its CSV inputs' paths hold it.
	if err := os.Mkdir(bad+"d", 0o755); err != nil {
		t.Fatal(err)
	}
	write(bad+"d/csv.json", small("c", `"csv": "a.csv"`))
	write(bad+"d/a.csv", "time,diff,x\n0,1,7\n")
	write(bad+"d/nocsv.json", small("n", `"csv": "none.csv"`))
	if err := os.Mkdir(bad+"dir", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", bad + "x.json"}, `"` + q + `x.json": cannot read spec`},
		{[]string{"run", bad + "d/nocsv.json"}, `"` + q + `d/none.csv": cannot read CSV`},
		{[]string{"run", bad + ".json", bad + "2.json", "--index", "direct"}, `"` + q + `2.json":1: name: workload "w" is also the name of "` + q + `.json"`},
		{[]string{"run", bad + ".json", "--param", "rows=1"}, `spec file "` + q + `.json" has no parameter rows`},
		{[]string{"eval", bad + ".json", "--at", "1", "--index", "direct"}, `time 1 is before the spec's as_of 3 ("` + q + `.json")`},
		{[]string{"run", "lookup", "--out", bad + "dir"}, `--out: "` + q + `dir" is a directory`},
		{[]string{"run", "lookup", "--out", bad + "none/r.txt"}, `--out: "` + q + `none/r.txt": directory "` + q + `none" does not exist`},
		{[]string{"run", "lookup", "--cpuprofile", bad + "p", "--memprofile", "./" + bad + "p"}, `--cpuprofile and --memprofile: both name "./` + q + `p"`},
		{[]string{"run", bad + ".json", "--index", "direct", "--out", bad + ".json"}, `--out: "` + q + `.json" is the spec file of workload w`},
		{[]string{"run", bad + "d/csv.json", "--index", "direct", "--out", bad + "d/a.csv"}, `--out: "` + q + `d/a.csv" is the CSV input a of "` + q + `d/csv.json"`},
		{[]string{"gen", bad + ".json", "--out", bad + "file"}, `--out: "` + q + `file" is not a directory`},
		{[]string{"gen", bad + "d/csv.json", "--out", bad + "d"}, `--out: "` + q + `d/a.csv" is the CSV input a of "` + q + `d/csv.json"`},
		{[]string{"gen", bad + "d/csv.json", "--out", bad + "file/x"}, `--out: "` + q + `file" is not a directory`},
	} {
		code, out, errOut := execute(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.ContainsAny(errOut, "\x1b") || strings.Count(errOut, "\n") != strings.Count(tc.want, "\n")+1 {
			t.Errorf("benchrun %q: exit %d, stdout %q, stderr %q; want exit 2, one line, no raw control character, and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// Output that names a file.
	code, out, errOut := execute(t, "validate", bad+".json")
	if want := `"` + q + `.json": ok: workload w`; code != 0 || !strings.Contains(out, want) || strings.ContainsAny(out, "\x1b") {
		t.Errorf("validate: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
}

// TestPathsWithUnicodeAreShownWhole: a path of printable text in any
// script is named whole, as written (docs/spec.md: only a path holding a
// control character is quoted): an ideographic or no-break space, an
// emoji joined by zero-width joiners, a combining accent. A path holding
// a character that moves or ends the terminal's line (a bidirectional
// override, a line separator) is quoted as one holding a newline is.
func TestPathsWithUnicodeAreShownWhole(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	spec := `{"version": 1, "name": "w", "inputs": {"a": {"columns": ["x"], "csv": "none.csv"}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`
	for _, name := range []string{"日本\u3000語", "a\u00a0b", "👨\u200d👩\u200d👧", "cafe\u0301", "Ελλάδα"} {
		if err := os.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(name, "w.json")
		if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(name, "none.csv") + ": cannot read CSV"
		if code, out, errOut := execute(t, "validate", path); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("validate %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", path, code, out, errOut, want)
		}
	}
	for _, tc := range []struct{ name, quoted string }{{"a\u202eb.json", `"a\u202eb.json"`}, {"a\u2028b.json", `"a\u2028b.json"`}} {
		want := tc.quoted + ": cannot read spec"
		if code, out, errOut := execute(t, "validate", tc.name); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("validate %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.name, code, out, errOut, want)
		}
	}
}

// TestOutputIsNotABuiltinSpecFileFromAnyDirectory: an output flag naming
// the spec file of a selected built-in workload in a checkout
// (workloads/examples/NAME.json) is refused with exit 2, the file as it
// was, from any directory: the checkout's subdirectories, a directory
// outside it naming the file by its absolute path, and through a link.
func TestOutputIsNotABuiltinSpecFileFromAnyDirectory(t *testing.T) {
	// A copy of the checkout's go.mod and examples, so that a run not
	// refused overwrites the copy.
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "workloads"), workloads.ExampleFS()); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "cmd", "benchrun")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	lookup := filepath.Join(root, "workloads", "examples", "lookup.json")
	if err := os.Symlink("../../workloads/examples", filepath.Join(sub, "ex")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(lookup, filepath.Join(sub, "hard.json")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		dir  string
		args []string
		want string
	}{
		{sub, []string{"run", "lookup", "--out", "../../workloads/examples/lookup.json"}, "benchrun: --out: ../../workloads/examples/lookup.json is the spec file of the built-in workload lookup, which this run stands for"},
		{filepath.Join(root, "cmd"), []string{"run", "groupby", "--cpuprofile", "../workloads/examples/groupby.json"}, "benchrun: --cpuprofile: ../workloads/examples/groupby.json is the spec file of the built-in workload groupby"},
		{filepath.Join(root, "workloads", "examples"), []string{"run", "lookup", "--memprofile", "lookup.json"}, "benchrun: --memprofile: lookup.json is the spec file of the built-in workload lookup"},
		{outside, []string{"run", "lookup", "--out", lookup}, "benchrun: --out: " + lookup + " is the spec file of the built-in workload lookup"},
		{sub, []string{"run", "lookup", "--out", "ex/lookup.json"}, "benchrun: --out: ex/lookup.json is the spec file of the built-in workload lookup"},
		{sub, []string{"run", "lookup", "--out", "hard.json"}, "benchrun: --out: hard.json is the spec file of the built-in workload lookup"},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			t.Chdir(tc.dir)
			file := tc.args[len(tc.args)-1]
			before, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut := execute(t, tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %.200q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
			if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
				t.Errorf("%s changed", file)
			}
		})
	}
}

// longLineSpec returns a spec of n simple views in a chain, each a filter
// with a name of 1,000 bytes, read by the query: a result line carries an
// error count per view, about 1,050 bytes each.
func longLineSpec(n int) string {
	var views []string
	prev := "a"
	for i := range n {
		name := fmt.Sprintf("v%04d_%s", i, strings.Repeat("w", 994))
		views = append(views, fmt.Sprintf(`"%s": {"input": "%s", "filter": ["x > 0"]}`, name, prev))
		prev = name
	}
	return `{"version": 1, "name": "long",
"inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1], [1, 1, 2]]}},
"views": {` + strings.Join(views, ",\n") + `},
"query": {"from": [{"as": "v", "collection": "` + prev + `"}]}}`
}

// TestResultLineTooLongIsRefusedUpFront: a spec whose result line could be
// longer than a result file's reader takes (65,535 bytes: a view's error
// count per view) is refused before anything runs or is written, exit 2
// naming the file, line and field, by run and by validate alike; one
// whose line fits runs. The message is the one docs/spec.md quotes for
// specs/long.json, this spec: the page showed 74199 bytes, which no spec
// it describes gives.
func TestResultLineTooLongIsRefusedUpFront(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.json")
	if err := os.WriteFile(long, []byte(longLineSpec(70)), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	var quoted string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "specs/long.json:") {
			quoted = long + strings.TrimPrefix(l, "specs/long.json") + "\n"
		}
	}
	if quoted == "" {
		t.Fatal("docs/spec.md quotes no message for specs/long.json")
	}
	outFile := filepath.Join(dir, "out.txt")
	const before = "an earlier run\n"
	for _, args := range [][]string{
		{"run", long, "--index", "direct", "--out", outFile},
		{"run", long, "--index", "direct", "--join", "delta", "--count", "3", "--out", outFile},
		{"validate", long},
	} {
		if err := os.WriteFile(outFile, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := execute(t, args...)
		want := long + ":3: views: a result line of up to "
		if code != 2 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "more than the 65535 a result file's reader takes") {
			t.Errorf("benchrun %q: exit %d, stdout %.300q, stderr %.300q; want exit 2, nothing on stdout, and %q", args, code, out, errOut, want)
		}
		// --join delta names its results join=delta, a byte shorter
		// than the join=linear of the page's validate and of run's
		// default.
		if !slices.Contains(args, "delta") && errOut != quoted {
			t.Errorf("benchrun %q: stderr %q; docs/spec.md quotes %q", args, errOut, quoted)
		}
		if data, _ := os.ReadFile(outFile); string(data) != before {
			t.Errorf("benchrun %q: --out changed to %.200q", args, data)
		}
	}
	fits := filepath.Join(dir, "fits.json")
	if err := os.WriteFile(fits, []byte(strings.Replace(longLineSpec(40), `"name": "long"`, `"name": "fits"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execute(t, "run", fits, "--index", "direct", "--progress", "off")
	if code != 0 || !strings.Contains(out, "BenchmarkFits/workload=fits/index=direct") {
		t.Fatalf("run fits.json: exit %d, stderr %.300q", code, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 65535 {
			t.Errorf("a result line of %d bytes", len(line))
		}
	}
}

// TestOutputInAnotherTreesExamplesIsWritten: the refusal of an output
// naming a built-in workload's spec file holds in a checkout of this
// module (docs/spec.md); a user's own tree that happens to hold a
// workloads/examples/NAME.json (a spec copied out to start their own
// from, in a directory that is no checkout, or the checkout of another
// module) is not a built-in's spec file, and an output there is written.
func TestOutputInAnotherTreesExamplesIsWritten(t *testing.T) {
	for _, gomod := range []string{"", "module example.com/mine\n"} {
		root := t.TempDir()
		ex := filepath.Join(root, "workloads", "examples")
		if err := os.MkdirAll(ex, 0o755); err != nil {
			t.Fatal(err)
		}
		if gomod != "" {
			if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(gomod), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(ex, "lookup.json"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(root)
		code, out, errOut := execute(t, "run", "lookup", "--param", "rows=100", "--param", "keys=10", "--progress", "off", "--out", "workloads/examples/lookup.json")
		data, _ := os.ReadFile(filepath.Join(ex, "lookup.json"))
		if code != 0 || !strings.Contains(string(data), "BenchmarkLookup/workload=lookup") {
			t.Errorf("go.mod %q: exit %d, stdout %.200q, stderr %q, file %.200q; want exit 0 and the results in the file", gomod, code, out, errOut, data)
		}
	}
}

// TestEmptyArgumentIsNamed checks that an empty argument where a spec
// file or workload goes (an unset shell variable) is refused naming it as
// "", not with an empty word before the message.
func TestEmptyArgumentIsNamed(t *testing.T) {
	for _, args := range [][]string{{"validate", ""}, {"explain", ""}, {"eval", "", "--at", "0"}, {"gen", "", "--out", t.TempDir()}} {
		code, out, errOut := execute(t, args...)
		if want := `benchrun: "": workloads: unknown name: no built-in workload ""`; code != 2 || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("benchrun %q: exit %d, stdout %q, stderr %q; want exit 2, stderr starting %q", args, code, out, errOut, want)
		}
	}
}

// TestCheckRunsBothJoinsOnlyWhereTheQueryJoins: check runs a query of two
// `from` entries under both join strategies, and one of a single entry,
// where the strategy changes nothing, under its spec's own only, as
// docs/spec.md "benchrun check [WORKLOAD|SPEC.json ...]" says: eight
// configurations against four.
func TestCheckRunsBothJoinsOnlyWhereTheQueryJoins(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	two := filepath.Join(dir, "two.json")
	for path, src := range map[string]string{
		one: `{"version": 1, "name": "one", "inputs": {"a": {"columns": ["k"], "rows": [[0, 1, 1], [1, 1, 2]]}},
"indexes": {"a_k": {"on": "a", "key": ["k"]}},
"query": {"from": [{"as": "a", "collection": "a"}]}}`,
		two: `{"version": 1, "name": "two", "inputs": {"a": {"columns": ["k"], "rows": [[0, 1, 1], [1, 1, 2]]}},
"indexes": {"a_k": {"on": "a", "key": ["k"]}},
"query": {"from": [{"as": "a", "collection": "a"}, {"as": "b", "collection": "a"}], "on": [["a.k", "b.k"]]}}`,
	} {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := execute(t, "check", one, two)
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"ok   " + one + ": 4 configurations agree",
		"ok   " + two + ": 8 configurations agree",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check printed\n%s\nwant a line starting %q", out, want)
		}
	}
}

// TestParamKeyInTwoFlagsIsRefused: `--param` may be repeated, but each
// parameter once (docs/spec.md "Commands"): a key in two of them is bad
// usage naming it, for run and gen alike, and an existing --out is left
// as it was; the list form runs both values.
func TestParamKeyInTwoFlagsIsRefused(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(out, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "lookup", "--param", "rows=1e3", "--param", "rows=2e3", "--out", out},
		{"run", "lookup", "--param=rows=1e3", "--param=keys=10", "--param=rows=1e3", "--out=" + out},
		{"gen", "lookup", "--param", "rows=1e3", "--param", "rows=2e3", "--out", filepath.Join(dir, "g")},
	} {
		code, stdout, errOut := execute(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(errOut, "--param: rows is given twice") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming rows", args, code, stdout, errOut)
		}
	}
	if data, _ := os.ReadFile(out); string(data) != "kept\n" {
		t.Errorf("--out holds %q after a refused run, want it as it was", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
		t.Errorf("a refused gen made its --out directory")
	}
	code, stdout, errOut := execute(t, "run", "lookup", "--param", "rows=1e3,2e3", "--count", "1", "--progress", "off")
	if code != 0 || !strings.Contains(stdout, "/rows=1000/") || !strings.Contains(stdout, "/rows=2000/") {
		t.Errorf("run lookup --param rows=1e3,2e3: exit %d, stderr %q; want results at rows=1000 and rows=2000", code, errOut)
	}
}

// quickEngine returns one value per sample at once, so that a test sees
// which benchmarks a command line selects without measuring them.
type quickEngine struct{}

func (quickEngine) Sample(ctx context.Context, b *benchrun.Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	return []benchfmt.Value{{Value: 1, Unit: "install-ns"}}, nil
}

// TestRunWithoutAWorkloadRunsEveryBuiltin: `benchrun run` with no
// workload runs every built-in workload, in the imported mode its --index
// defaults to, where `benchrun` alone (the default suite) runs both
// modes (docs/spec.md "benchrun run [WORKLOAD|SPEC.json ...]").
func TestRunWithoutAWorkloadRunsEveryBuiltin(t *testing.T) {
	t.Chdir("../..")
	var out, errOut bytes.Buffer
	if code := runWith(context.Background(), &out, &errOut, []string{"run", "--progress", "off"}, quickEngine{}); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "/index=direct/") {
		t.Errorf("run without --index ran direct mode:\n%s", out.String())
	}
	for _, w := range workloads.Registry() {
		if !strings.Contains(out.String(), "/workload="+w.Name+"/index=imported/") {
			t.Errorf("run without a workload ran nothing of %s:\n%s", w.Name, out.String())
		}
	}
}

// TestDashIsNoStandardInput: "-" names no standard input, where many
// commands read one; a spec there is /dev/stdin (docs/spec.md "Decoding
// is strict"). Every command taking a spec says so, where the message
// said only that a spec file must end in .json.
func TestDashIsNoStandardInput(t *testing.T) {
	t.Chdir("../..")
	for _, args := range [][]string{
		{"validate", "-"}, {"explain", "-"}, {"gen", "-", "--out", t.TempDir()},
		{"run", "-"}, {"eval", "-", "--at", "0"}, {"check", "-"},
	} {
		code, out, errOut := execute(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, `no built-in workload "-"`) || !strings.Contains(errOut, `standard input is not "-": name it /dev/stdin`) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 saying standard input is /dev/stdin", args, code, out, errOut)
		}
	}
}

// TestSpecFileOfAnotherEndingIsNamedByItsPath: a spec file whose name
// does not end in .json (W.JSON, w.spec) is taken for a built-in
// workload's name unless a / names it as a path; the refusal says so and
// names it as ./W.JSON, which every command takes, where it said that a
// spec file must end in .json, as if the file had to be renamed.
func TestSpecFileOfAnotherEndingIsNamedByItsPath(t *testing.T) {
	src, err := os.ReadFile("../../internal/benchrun/testdata/eval/small.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, name := range []string{"W.JSON", "w.spec"} {
		if err := os.WriteFile(name, src, 0o666); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"validate", name}, {"explain", name}, {"run", name}, {"eval", name, "--at", "1"}, {"check", name}} {
			code, out, errOut := execute(t, args...)
			want := name + " is a file here, but a spec file is named by a path that ends in .json or holds a /: ./" + name
			if code != 2 || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out, errOut, want)
			}
		}
		if code, out, errOut := execute(t, "validate", "./"+name); code != 0 || !strings.Contains(out, "./"+name+": ok") {
			t.Errorf("validate ./%s: exit %d, stdout %q, stderr %q; want it validated", name, code, out, errOut)
		}
	}
}

// TestRunsFlagGivenToTheSuiteSaysWhereItGoes: `benchrun --count 5` is
// refused (the default suite takes no flags), and the message says that
// the flag is run's and that `run --index imported,direct` runs the same
// benchmarks; a flag run does not have gets no such hint.
func TestRunsFlagGivenToTheSuiteSaysWhereItGoes(t *testing.T) {
	for _, args := range [][]string{{"--count", "5"}, {"--out=r.txt"}, {"--index", "direct"}} {
		code, out, errOut := execute(t, args...)
		name := strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0]
		want := "The default suite takes no flags; --" + name + " is run's: 'benchrun run --index imported,direct' runs the same benchmarks and takes run's flags."
		if code != 2 || out != "" || !strings.Contains(errOut, "unknown flag: --"+name) || !strings.Contains(errOut, want) {
			t.Errorf("benchrun %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, out, errOut, want)
		}
	}
	code, _, errOut := execute(t, "--bogus")
	if code != 2 || strings.Contains(errOut, "default suite") {
		t.Errorf("benchrun --bogus: exit %d, stderr %q; want exit 2 and no hint", code, errOut)
	}
	code, _, errOut = execute(t, "list", "--count", "5")
	if code != 2 || strings.Contains(errOut, "default suite") {
		t.Errorf("benchrun list --count 5: exit %d, stderr %q; want exit 2 and no hint", code, errOut)
	}
}
