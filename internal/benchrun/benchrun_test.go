package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// The tests run from the repository root so example paths read as users
// write them.
func chdirRoot(t *testing.T) {
	t.Chdir("../..")
}

func names(bs []*Benchmark) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

func TestBenchmarkNames(t *testing.T) {
	chdirRoot(t)
	bs, err := Benchmarks(Selection{Targets: []string{"lookup", "fanout"}, Index: []string{IndexImported, IndexDirect}, Workers: 2, Params: []string{"rows=1e6"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Fanout/workload=fanout/index=direct/join=linear/rows=1000000/k=1/workers=2",
		"Fanout/workload=fanout/index=direct/join=linear/rows=1000000/k=16/workers=2",
		"Fanout/workload=fanout/index=direct/join=linear/rows=1000000/k=4/workers=2",
		"Fanout/workload=fanout/index=imported/join=linear/rows=1000000/k=1/workers=2",
		"Fanout/workload=fanout/index=imported/join=linear/rows=1000000/k=16/workers=2",
		"Fanout/workload=fanout/index=imported/join=linear/rows=1000000/k=4/workers=2",
		"Lookup/workload=lookup/index=direct/join=linear/rows=1000000/keys=1000/workers=2",
		"Lookup/workload=lookup/index=imported/join=linear/rows=1000000/keys=1000/workers=2",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := bs[6].Spec.Inputs[0].Generate; g.Rows != 1000000 {
		t.Errorf("rows=1e6 did not reach the spec: %d", g.Rows)
	}
	if k, ok := bs[1].Param("k"); !ok || k != 16 {
		t.Errorf("Param(k) = %d, %v", k, ok)
	}
	// The spec's join by default; --join overrides; a spec file is named
	// after its spec name.
	bs, err = Benchmarks(Selection{Targets: []string{"triangles", "workloads/spec/testdata/orders_lineitem.json"}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/workers=1",
		"Triangles/workload=triangles/index=imported/join=delta/edges=5000/nodes=1000/workers=1",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names: %q, want %q", got, want)
	}
	bs, err = Benchmarks(Selection{Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Join: []string{"delta", "linear"}, Workers: 1,
		Params: []string{"inputs.lineitem.generate.rows=5e3"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=delta/inputs.lineitem.generate.rows=5000/workers=1",
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.rows=5000/workers=1",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names: %q, want %q", got, want)
	}
	all, err := Benchmarks(Selection{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 17 { // 9 workloads, fanout ×3, dd ×5, star ×2 joins
		t.Errorf("every built-in: %d benchmarks: %q", len(all), names(all))
	}
}

// TestParamLists: a --param value may be a comma-separated list, as
// benchrun list shows a built-in parameter's defaults (k=1,4,16): each
// value runs, for a built-in workload and for a spec file's field alike,
// every combination of the lists' values.
func TestParamLists(t *testing.T) {
	chdirRoot(t)
	bs, err := Benchmarks(Selection{Targets: []string{"fanout"}, Workers: 1, Params: []string{"k=2,8", "rows=1e3,2000"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Fanout/workload=fanout/index=imported/join=linear/rows=1000/k=2/workers=1",
		"Fanout/workload=fanout/index=imported/join=linear/rows=1000/k=8/workers=1",
		"Fanout/workload=fanout/index=imported/join=linear/rows=2000/k=2/workers=1",
		"Fanout/workload=fanout/index=imported/join=linear/rows=2000/k=8/workers=1",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, b := range bs {
		rows, _ := b.Param("rows")
		if g := b.Spec.Inputs[0].Generate; int64(g.Rows) != rows {
			t.Errorf("%s: the spec has %d rows", b.Name, g.Rows)
		}
	}
	bs, err = Benchmarks(Selection{Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Workers: 1,
		Params: []string{"inputs.lineitem.generate.rows=5e3,7000"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.rows=5000/workers=1",
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.rows=7000/workers=1",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names: %q, want %q", got, want)
	}
	for i, rows := range []int64{5000, 7000} {
		for _, in := range bs[i].Spec.Inputs {
			if in.Name == "lineitem" && int64(in.Generate.Rows) != rows {
				t.Errorf("%s: lineitem has %d rows", bs[i].Name, in.Generate.Rows)
			}
		}
	}
	// A uint64 field (a seed, as_of, until) takes through --param every
	// value the file takes, also beyond int64; it was refused as
	// "outside the int64 range".
	bs, err = Benchmarks(Selection{Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Workers: 1,
		Params: []string{"inputs.lineitem.generate.seed=18446744073709551615,1.8e19"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.seed=18000000000000000000/workers=1",
		"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.seed=18446744073709551615/workers=1",
	}
	if got := names(bs); !slices.Equal(got, want) {
		t.Errorf("names: %q, want %q", got, want)
	}
	for i, seed := range []uint64{18000000000000000000, 18446744073709551615} {
		for _, in := range bs[i].Spec.Inputs {
			if in.Name == "lineitem" && in.Generate.Seed != seed {
				t.Errorf("%s: lineitem has seed %d", bs[i].Name, in.Generate.Seed)
			}
		}
	}
	// A spec file's parameters are in the name in the order of their
	// paths, whatever the command line's: the same run with its --params
	// swapped has the same names, which benchcmp pairs.
	for _, params := range [][]string{
		{"inputs.lineitem.generate.seed=9", "inputs.lineitem.generate.rows=5e3"},
		{"inputs.lineitem.generate.rows=5e3", "inputs.lineitem.generate.seed=9"},
	} {
		bs, err = Benchmarks(Selection{Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Workers: 1, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		want = []string{"OrdersLineitem/workload=orders_lineitem/index=imported/join=linear/inputs.lineitem.generate.rows=5000/inputs.lineitem.generate.seed=9/workers=1"}
		if got := names(bs); !slices.Equal(got, want) {
			t.Errorf("--param %q: names %q, want %q", params, got, want)
		}
	}
}

// TestShardsPartition checks B4: the shards of one n partition the sorted
// list, each taking every n-th entry from i.
func TestShardsPartition(t *testing.T) {
	chdirRoot(t)
	sel := Selection{Index: []string{IndexImported, IndexDirect}, Workers: 1}
	all, err := Benchmarks(sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7, 40} {
		var union []string
		for i := range n {
			sel.Shard = strings.Join([]string{itoa(i), itoa(n)}, "/")
			part, err := Benchmarks(sel)
			if err != nil {
				t.Fatal(err)
			}
			for j, b := range part {
				if b.Name != all[i+j*n].Name {
					t.Fatalf("shard %d/%d entry %d = %s, want %s", i, n, j, b.Name, all[i+j*n].Name)
				}
			}
			union = append(union, names(part)...)
		}
		slices.Sort(union)
		if !slices.Equal(union, names(all)) {
			t.Errorf("n=%d: shards do not partition the list", n)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSelectionErrors(t *testing.T) {
	chdirRoot(t)
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Workers: 0}, "benchrun: bad usage: --workers: must be at least 1, not 0"},
		{Selection{Workers: 1, Shard: "2/2"}, `--shard: "2/2" is not i/n with 0 <= i < n`},
		{Selection{Workers: 1, Shard: "a/2"}, `--shard: "a/2" is not i/n`},
		{Selection{Workers: 1, Shard: "0/0"}, `--shard: "0/0" is not i/n`},
		{Selection{Workers: 1, Shard: "01/2"}, `--shard: "01/2" is not i/n`},
		{Selection{Workers: 1, Shard: "+0/2"}, `--shard: "+0/2" is not i/n`},
		{Selection{Workers: 1, Shard: "0/ 2"}, `--shard: "0/ 2" is not i/n`},
		{Selection{Workers: 1, Shard: "-0/2"}, `--shard: "-0/2" is not i/n`},
		{Selection{Workers: 1, Shard: "0/18446744073709551615"}, `--shard: "0/18446744073709551615" is out of range: i and n are at most ` + strconv.Itoa(math.MaxInt)},
		{Selection{Workers: 1, Shard: "99999999999999999999/2"}, `--shard: "99999999999999999999/2" is out of range`},
		{Selection{Workers: 1, Shard: "+99999999999999999999/2"}, `--shard: "+99999999999999999999/2" is not i/n`},
		{Selection{Workers: 1, Shard: "0/099999999999999999999"}, `--shard: "0/099999999999999999999" is not i/n`},
		{Selection{Workers: 1, Params: []string{"rows"}}, `--param: "rows" is not key=value`},
		{Selection{Workers: 1, Params: []string{"rows=abc"}}, `--param: rows=abc: "abc" is not a decimal integer`},
		{Selection{Workers: 1, Params: []string{"rows=1.5"}}, `--param: rows=1.5: 1.5 is not an integer`},
		{Selection{Workers: 1, Params: []string{"rows=1", "rows=2"}}, `--param: rows is given twice`},
		{Selection{Workers: 1, Params: []string{"rows=1,1e0"}}, `--param: rows=1,1e0: the value 1 is given twice`},
		{Selection{Workers: 1, Params: []string{"rows=1,"}}, `--param: rows=1,: "" is not a decimal integer`},
		// Past float64's range, a value is still judged by its digits.
		{Selection{Workers: 1, Params: []string{"rows=1e400"}}, `--param: rows=1e400: 1e400 is outside -9223372036854775808..18446744073709551615, the range of every integer field`},
		{Selection{Workers: 1, Params: []string{"rows=1e-400"}}, `--param: rows=1e-400: 1e-400 is not an integer`},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.lineitem.generate.retract=1e-400"}}, `--param: inputs.lineitem.generate.retract=1e-400: inputs.lineitem.generate.retract is a fractional field, and a result name holds a parameter's value as a plain decimal integer: set it in the spec file (1e-400 is not an integer)`},
		{Selection{Workers: 1, Targets: []string{"fanout"}, Params: []string{"k=4,1025"}}, "--param: k=4,1025: workload fanout: k must be in 1..1024 (concurrent queries), not 1025"},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"edges=5"}}, `--param: edges=5: no selected workload has a parameter edges (parameters of lookup: rows, keys)`},
		// A spec's field is named as one, not as a parameter no
		// workload has, with the parameters there are.
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"version=1"}}, `--param: version=1: version is a field of the spec, not a parameter of lookup (parameters of lookup: rows, keys)`},
		{Selection{Workers: 1, Targets: []string{"lookup", "star"}, Params: []string{"as_of=1"}}, `--param: as_of=1: as_of is a field of the spec, not a parameter of the selected workloads (parameters: lookup: rows, keys; star: orders, lineitems, customers)`},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"inputs.facts.generate.rows=5"}}, `--param: inputs.facts.generate.rows=5: inputs.facts.generate.rows is a field of the spec, not a parameter of lookup (parameters of lookup: rows, keys)`},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"version=1"}}, `--param: version=1: version is a field of the spec, not a parameter: a spec file's parameters are paths of its integer fields other than version, such as as_of, until and inputs.NAME.generate.rows`},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"name=1"}}, `--param: name=1: name is a field of the spec, not a parameter`},
		{Selection{Workers: 1, Targets: []string{"nope"}}, `run: workloads: unknown name: no built-in workload "nope"`},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"keys=0"}}, "--param: keys=0: workload lookup: keys must be in 1..100000000 (dimension rows (distinct keys)), not 0"},
		{Selection{Workers: 1, Targets: []string{"dd"}, Params: []string{"rows=1500"}}, "--param: rows=1500: workload dd: rows must be in 1000..99900000, a multiple of 1000 (updates (per input; the trace size for rounds)), not 1500"},
		{Selection{Workers: 1, Targets: []string{"groupby"}, Params: []string{"rows=100000001"}}, "--param: rows=100000001: workload groupby: rows must be in 1..100000000 (updates), not 100000001"},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"rows=9223372036854775807"}}, "--param: rows=9223372036854775807: workload lookup: rows must be in 1..100000000"},
		// A value --param set is named as the parameter's, not as the
		// file's line's.
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.lineitem.generate.rows=-1"}}, "inputs.lineitem.generate.rows: --param inputs.lineitem.generate.rows=-1: -1 is outside 0..18446744073709551615"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.lineitem.generate.batches=0"}}, "inputs.lineitem.generate.batches: --param inputs.lineitem.generate.batches=0: must be at least 1"},
		// A rule between two fields broken at the one --param did not
		// set: the message still names the parameter.
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.lineitem.generate.columns.okey.min=10000"}}, "inputs.lineitem.generate.columns.okey.max: max 9999 is below min 10000 (with --param inputs.lineitem.generate.columns.okey.min=10000)"},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"rows=18446744073709551615"}}, "--param: rows=18446744073709551615: workload lookup: rows must be in 1..100000000 (fact updates), not 18446744073709551615"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.lineitem.generate.seed=18446744073709551616"}}, "--param: inputs.lineitem.generate.seed=18446744073709551616: 18446744073709551616 is outside -9223372036854775808..18446744073709551615"},
		{Selection{Workers: 5000, Targets: []string{"lookup"}}, "--workers: must be at most 1024, not 5000"},
		{Selection{Workers: 1, Targets: []string{"missing.json"}}, "missing.json: cannot read spec"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.nope.generate.rows=5"}}, "workloads/spec/testdata/orders_lineitem.json: inputs.nope.generate.rows: --param inputs.nope.generate.rows=5: the spec has no number at this field"},
		// Every selected spec file must have each --param, also when a
		// built-in workload takes it.
		{Selection{Workers: 1, Targets: []string{"lookup", "workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"rows=100"}}, "--param: rows=100: spec file workloads/spec/testdata/orders_lineitem.json has no parameter rows (a spec file's parameters are paths of its integer fields"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json", "lookup"}, Params: []string{"rows=100"}}, "--param: rows=100: spec file workloads/spec/testdata/orders_lineitem.json has no parameter rows"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"rows=100"}}, "--param: rows=100: spec file workloads/spec/testdata/orders_lineitem.json has no parameter rows"},
		// A built-in workload and a spec file of one name.
		{Selection{Workers: 1, Targets: []string{"lookup", "workloads/examples/lookup.json"}}, `workloads/examples/lookup.json:3: name: workload "lookup" is also the name of the built-in workload lookup`},
		{Selection{Workers: 1, Targets: []string{"./workloads/examples/groupby.json", "groupby"}}, `./workloads/examples/groupby.json:3: name: workload "groupby" is also the name of the built-in workload groupby`},
	} {
		_, err := Benchmarks(tc.sel)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.sel, err, tc.want)
			continue
		}
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d, want 2", err, ExitCode(err))
		}
	}
}

// fakeEngine returns fixed values and lets a test act between samples.
type fakeEngine struct {
	calls  int
	before func(call int)
	spin   time.Duration // CPU work per sample, for profiles
	deaf   bool          // finish the sample even when ctx is cancelled
	fail   int           // the call that fails, if any
	// extra are values the sample reports besides the fixed ones, from
	// the call extraFrom on.
	extra     []benchfmt.Value
	extraFrom int
	// profiled records, per call, whether the sample's context asked for
	// operator labels (profiling).
	profiled []bool
	// inputs records, per call, the tables the sample was given.
	inputs [][]*spec.Table
}

func (e *fakeEngine) Sample(ctx context.Context, b *Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	e.calls++
	e.profiled = append(e.profiled, profiling(ctx))
	e.inputs = append(e.inputs, inputs)
	if e.before != nil {
		e.before(e.calls)
	}
	if err := ctx.Err(); err != nil && !e.deaf {
		return nil, err
	}
	if e.calls == e.fail {
		return nil, errors.New("the engine failed")
	}
	x := uint64(1)
	for end := time.Now().Add(e.spin); time.Now().Before(end); {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	n := 0
	if x == 0 { // never: keeps the spin loop from being optimised away
		n = 1
	}
	for _, t := range inputs {
		n += t.Len()
	}
	vals := []benchfmt.Value{{Value: 1500, Unit: "install-ns"}, {Value: float64(n), Unit: "rows"}, {Value: 0, Unit: "errors"}}
	if e.extra != nil && e.calls >= e.extraFrom {
		vals = append(vals, e.extra...)
	}
	return vals, nil
}

// TestRunLoadsEachSpecOnce checks that the benchmarks of one spec (each
// index mode and join strategy) and of one built-in workload's spec under
// several values of a runner parameter (fanout's k) get the same tables,
// generated once: a copy per benchmark would multiply a large generated
// input's memory and loading time by their number.
func TestRunLoadsEachSpecOnce(t *testing.T) {
	chdirRoot(t)
	for _, sel := range []Selection{
		{Targets: []string{"star"}, Index: []string{IndexImported, IndexDirect}, Join: []string{"linear", "delta"}},
		{Targets: []string{"fanout"}, Index: []string{IndexImported, IndexDirect}, Params: []string{"k=1,4", "rows=100"}},
	} {
		sel.Workers = 1
		eng := &fakeEngine{}
		var stdout bytes.Buffer
		if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: io.Discard, Selection: sel, Count: 1, Progress: ProgressOff, Engine: eng, Env: testEnv}); err != nil {
			t.Fatal(err)
		}
		if len(eng.inputs) != 4 {
			t.Fatalf("%v: %d samples, want 4", sel.Targets, len(eng.inputs))
		}
		for call, in := range eng.inputs[1:] {
			for i := range in {
				if in[i] != eng.inputs[0][i] {
					t.Errorf("%v: sample %d got its own copy of input %d (%d updates), not the first sample's", sel.Targets, call+2, i, in[i].Len())
				}
			}
		}
	}
}

var testEnv = Env{GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU", GoVersion: "go1.26.0", GOMAXPROCS: 2, Commit: "abc123"}

const wantResults = `Unit install-ns better=lower
Unit ns/update better=lower
Unit updates/s better=higher
Unit peak-heap-B better=lower
Unit trace-B better=lower
Unit rows assume=exact
Unit errors assume=exact
Unit hold-gap better=lower
goos: linux
goarch: amd64
cpu: Test CPU
go: go1.26.0
gomaxprocs: 2
commit: abc123

BenchmarkGroupby/workload=groupby/index=direct/join=linear/rows=10000/keys=100/workers=1 1 1500 install-ns 10000 rows 0 errors
BenchmarkGroupby/workload=groupby/index=direct/join=linear/rows=10000/keys=100/workers=1 1 1500 install-ns 10000 rows 0 errors
BenchmarkGroupby/workload=groupby/index=imported/join=linear/rows=10000/keys=100/workers=1 1 1500 install-ns 10000 rows 0 errors
BenchmarkGroupby/workload=groupby/index=imported/join=linear/rows=10000/keys=100/workers=1 1 1500 install-ns 10000 rows 0 errors
`

// TestRunResults checks B2 and B3: the file format, that --out equals
// stdout, that each line is in the file when the next sample starts, and
// that the file reads back with benchfmt.
func TestRunResults(t *testing.T) {
	chdirRoot(t)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(outFile, []byte("old content that must go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	eng := &fakeEngine{}
	eng.before = func(call int) {
		data, _ := os.ReadFile(outFile)
		if got := strings.Count(string(data), "\nBenchmark"); got != call-1 {
			t.Errorf("sample %d starts with %d result lines in --out, want %d", call, got, call-1)
		}
	}
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Index: []string{IndexImported, IndexDirect}, Workers: 1},
		Count: 2, OutFile: outFile, Progress: ProgressOn, Engine: eng, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != wantResults {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), wantResults)
	}
	data, _ := os.ReadFile(outFile)
	if string(data) != wantResults {
		t.Errorf("--out:\n%s", data)
	}
	if !strings.Contains(stderr.String(), "benchrun: 4/4 Groupby/workload=groupby/index=imported") {
		t.Errorf("progress:\n%s", stderr.String())
	}
	r := benchfmt.NewReader(bytes.NewReader(data), "out.txt")
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			n++
			if rec.GetConfig("commit") != "abc123" || rec.GetConfig(".unit") != "" {
				t.Errorf("config of %s", rec.Name)
			}
			if v, ok := rec.Value("rows"); !ok || v != 10000 {
				t.Errorf("rows = %v", v)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if n != 4 {
		t.Errorf("%d results read back, want 4", n)
	}
	// --progress auto on a terminal: a bar, not lines; the summary after it.
	stderr.Reset()
	stdout.Reset()
	if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 3, Progress: ProgressAuto, ErrOutIsTerminal: true, Engine: &fakeEngine{}, Env: testEnv}); err != nil {
		t.Fatal(err)
	}
	if e := stderr.String(); !strings.Contains(e, "3/3 samples") || strings.Contains(e, "benchrun: 1/3") || !strings.HasSuffix(e, "benchrun: 1 benchmark, 3 samples in "+e[strings.LastIndex(e, " in ")+4:]) {
		t.Errorf("stderr with a bar:\n%q", e)
	}
	if stdout.String() == "" || strings.Contains(stdout.String(), "samples") {
		t.Errorf("stdout with a bar:\n%s", stdout.String())
	}
	// --progress off: nothing but the summary on stderr.
	stderr.Reset()
	stdout.Reset()
	if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, Engine: &fakeEngine{}, Env: testEnv}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "1/1") || !strings.Contains(stderr.String(), "1 benchmark, 1 sample in") {
		t.Errorf("stderr with --progress off:\n%s", stderr.String())
	}
}

// TestRunNeverWritesALineTooLongToRead: a result line longer than a result
// file's reader takes (benchfmt's 64 KB line buffer, benchcmp's limit) is
// not written; the run fails naming it, and stdout and --out hold the
// lines before it, every one readable.
func TestRunNeverWritesALineTooLongToRead(t *testing.T) {
	chdirRoot(t)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	// 2,000 operators' error counts: about 100 KB on one line.
	var extra []benchfmt.Value
	for i := range 2000 {
		extra = append(extra, benchfmt.Value{Value: 0, Unit: fmt.Sprintf("stage-errors:index_%s/view_%04d", strings.Repeat("x", 60), i)})
	}
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 3, OutFile: outFile, Progress: ProgressOff, Engine: &fakeEngine{extra: extra, extraFrom: 2}, Env: testEnv})
	if err == nil || ExitCode(err) != ExitFailed || !strings.Contains(err.Error(), "benchrun: workload groupby: a result line of ") ||
		!strings.Contains(err.Error(), "bytes, more than the 65535 a result file's reader takes: not written") {
		t.Fatalf("err = %v (exit %d), want exit 1 naming the line too long", err, ExitCode(err))
	}
	data, _ := os.ReadFile(outFile)
	if string(data) != stdout.String() {
		t.Errorf("--out differs from stdout")
	}
	for i, line := range strings.Split(string(data), "\n") {
		if len(line) > bufio.MaxScanTokenSize-1 {
			t.Errorf("line %d of --out is %d bytes", i+1, len(line))
		}
	}
	r := benchfmt.NewReader(bytes.NewReader(data), "out.txt")
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			n++
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil || n != 1 {
		t.Errorf("%d results read back (err %v), want 1: the sample before the long line", n, err)
	}
}

// TestRunInterrupted checks that a cancelled run keeps every finished line
// in --out and returns ErrInterrupted (exit 130).
func TestRunInterrupted(t *testing.T) {
	chdirRoot(t)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := &fakeEngine{before: func(call int) {
		if call == 3 {
			cancel()
		}
	}}
	var stdout, stderr bytes.Buffer
	err := Run(ctx, RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Index: []string{IndexImported, IndexDirect}, Workers: 1},
		Count: 2, OutFile: outFile, Progress: ProgressOff, Engine: eng, Env: testEnv})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted {
		t.Fatalf("err = %v (exit %d), want interrupted (130)", err, ExitCode(err))
	}
	data, _ := os.ReadFile(outFile)
	lines := strings.Split(wantResults, "\n")
	want := strings.Join(lines[:17], "\n") + "\n"
	if string(data) != want {
		t.Errorf("--out after interrupt:\n%s\nwant:\n%s", data, want)
	}
	if !strings.Contains(stderr.String(), "interrupted after 2 of 4 samples") {
		t.Errorf("stderr: %s", stderr.String())
	}
	// An engine that finishes its sample despite the cancellation: that
	// sample's line is kept, and no further sample starts.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	eng = &fakeEngine{deaf: true, before: func(call int) {
		if call == 2 {
			cancel()
		}
	}}
	stdout.Reset()
	stderr.Reset()
	err = Run(ctx, RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Index: []string{IndexImported, IndexDirect}, Workers: 1},
		Count: 2, OutFile: outFile, Progress: ProgressOff, Engine: eng, Env: testEnv})
	if !errors.Is(err, ErrInterrupted) || eng.calls != 2 {
		t.Fatalf("err = %v after %d samples, want interrupted after 2", err, eng.calls)
	}
	if data, _ := os.ReadFile(outFile); string(data) != want {
		t.Errorf("--out after interrupt of a finishing sample:\n%s\nwant:\n%s", data, want)
	}
}

// TestRunInterruptedWhileLoading checks that a run cancelled before its
// inputs are loaded exits 130 without touching --out.
func TestRunInterruptedWhileLoading(t *testing.T) {
	chdirRoot(t)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(outFile, []byte("previous results\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	eng := &fakeEngine{}
	err := Run(ctx, RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, OutFile: outFile, Progress: ProgressOff, Engine: eng, Env: testEnv})
	if ExitCode(err) != ExitInterrupted || eng.calls != 0 || stdout.Len() != 0 {
		t.Errorf("err = %v (exit %d), %d samples, stdout %q; want exit 130 and nothing run", err, ExitCode(err), eng.calls, stdout.String())
	}
	if data, _ := os.ReadFile(outFile); string(data) != "previous results\n" {
		t.Errorf("--out changed to %q", data)
	}
}

// TestRunBadInputWritesNothing checks B3: a run refused for bad input
// leaves an existing --out untouched.
func TestRunBadInputWritesNothing(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	outFile := filepath.Join(dir, "out.txt")
	os.WriteFile(outFile, []byte("previous results\n"), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version": 1, "name": "w", "nmae": 1}`), 0o644)
	badCSV := filepath.Join(dir, "csv.json")
	os.WriteFile(badCSV, []byte(`{"version": 1, "name": "w", "inputs": {"a": {"columns": ["x"], "csv": "a.csv"}}, "query": {"from": [{"as": "a", "collection": "a"}]}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("time,diff,x\n0,1,1\n0,1,1.5\n"), 0o644)
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{Selection: Selection{Targets: []string{bad}, Workers: 1}, Count: 1, Progress: ProgressAuto}, "bad.json:1: nmae: unknown field"},
		{RunConfig{Selection: Selection{Targets: []string{badCSV}, Workers: 1}, Count: 1, Progress: ProgressAuto}, `a.csv:3: field 3 (x) is "1.5"`},
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 0, Progress: ProgressAuto}, "--count: must be at least 1, not 0"},
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: "sometimes"}, `--progress: unknown value "sometimes"`},
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: ProgressAuto, Flamegraph: "x.svg"}, `--flamegraph: "x.svg" must name an .html file`},
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: ProgressAuto, CPUProfile: dir}, "--cpuprofile: " + dir + " is a directory"},
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: ProgressAuto, MemProfile: filepath.Join(dir, "no", "mem.pprof")}, "--memprofile: " + filepath.Join(dir, "no", "mem.pprof") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		// A file where a directory should be exists: it is named as
		// what it is.
		{RunConfig{Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: ProgressAuto, CPUProfile: filepath.Join(dir, "a.csv", "cpu.pprof")}, "--cpuprofile: " + filepath.Join(dir, "a.csv", "cpu.pprof") + ": " + filepath.Join(dir, "a.csv") + " is not a directory"},
	} {
		var stdout, stderr bytes.Buffer
		tc.cfg.Out, tc.cfg.ErrOut, tc.cfg.OutFile, tc.cfg.Engine, tc.cfg.Env = &stdout, &stderr, outFile, &fakeEngine{}, testEnv
		err := Run(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		if data, _ := os.ReadFile(outFile); string(data) != "previous results\n" {
			t.Errorf("%s: --out changed to %q", tc.want, data)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout got %q", tc.want, stdout.String())
		}
	}
}

// TestRunOutHeldByAnotherRunIsRefused checks that a run whose --out
// another run is still writing is refused (exit 2 naming --out and the
// file) before it truncates the file, so the first run's lines all stay
// and are not mixed with the second's under one header.
func TestRunOutHeldByAnotherRunIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock")
	}
	chdirRoot(t)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	cfg := func(eng Engine, stdout io.Writer) RunConfig {
		return RunConfig{Out: stdout, ErrOut: io.Discard, OutFile: outFile, Engine: eng, Env: testEnv,
			Selection: Selection{Targets: []string{"groupby"}, Workers: 1}, Count: 2, Progress: ProgressOff}
	}
	var secondErr error
	second := &fakeEngine{}
	first := &fakeEngine{before: func(call int) {
		if call == 2 {
			// The first run has written its first line and runs its
			// second sample: a second run starts on the same file.
			secondErr = Run(context.Background(), cfg(second, io.Discard))
		}
	}}
	var stdout bytes.Buffer
	if err := Run(context.Background(), cfg(first, &stdout)); err != nil {
		t.Fatal(err)
	}
	want := "--out: " + outFile + " is being written by another benchrun run"
	if secondErr == nil || !strings.Contains(secondErr.Error(), want) || ExitCode(secondErr) != ExitUsage {
		t.Errorf("second run: err = %v (exit %d), want %q and exit 2", secondErr, ExitCode(secondErr), want)
	}
	if second.calls != 0 {
		t.Errorf("second run ran %d samples", second.calls)
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != stdout.String() || strings.Count(string(data), "\nBenchmark") != 2 {
		t.Errorf("--out holds\n%s\nwant the first run's results\n%s", data, stdout.String())
	}
	// Once the first run has ended, the file is free again.
	if err := Run(context.Background(), cfg(&fakeEngine{}, io.Discard)); err != nil {
		t.Errorf("a run after the first one ended: %v", err)
	}
}

// TestRunOutGoneDuringTheRunFails checks that a run whose --out was
// removed (with its directory) or replaced while it ran exits 1 saying so,
// not 0 as if its lines were in --out.
func TestRunOutGoneDuringTheRunFails(t *testing.T) {
	chdirRoot(t)
	for _, tc := range []struct {
		what string
		do   func(dir, outFile string) error
	}{
		{"removed", func(dir, outFile string) error { return os.RemoveAll(dir) }},
		{"replaced by another file", func(dir, outFile string) error {
			other := filepath.Join(dir, "other.txt")
			if err := os.WriteFile(other, []byte("other\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(other, outFile)
		}},
	} {
		dir := filepath.Join(t.TempDir(), "results")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		outFile := filepath.Join(dir, "out.txt")
		eng := &fakeEngine{before: func(call int) {
			if call == 2 {
				if err := tc.do(dir, outFile); err != nil {
					t.Error(err)
				}
			}
		}}
		var stdout bytes.Buffer
		err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: io.Discard, OutFile: outFile, Engine: eng, Env: testEnv,
			Selection: Selection{Targets: []string{"groupby"}, Workers: 1}, Count: 3, Progress: ProgressOff})
		want := "--out: " + outFile + " was " + tc.what + " during the run: its 3 result lines are only on standard output"
		if err == nil || !strings.Contains(err.Error(), want) || ExitCode(err) != ExitFailed {
			t.Errorf("err = %v (exit %d), want %q and exit 1", err, ExitCode(err), want)
		}
		if n := strings.Count(stdout.String(), "\nBenchmark"); n != 3 {
			t.Errorf("%s: %d result lines on stdout, want 3", tc.what, n)
		}
	}
}

// TestRunCountTooLargeToCount: --count times the number of benchmarks must
// fit an int. Two benchmarks of math.MaxInt samples each wrapped the total
// to -2, which the progress showed as "1/-2" and the summary as "326 of -2
// samples"; such a run is refused before anything runs.
func TestRunCountTooLargeToCount(t *testing.T) {
	chdirRoot(t)
	// Refused, the run returns at once; run, it would run on.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	eng := &fakeEngine{}
	var stdout, stderr bytes.Buffer
	err := Run(ctx, RunConfig{Out: &stdout, ErrOut: &stderr, Engine: eng, Env: testEnv, Progress: ProgressOn, Count: math.MaxInt,
		Selection: Selection{Targets: []string{"lookup"}, Index: []string{IndexImported, IndexDirect}, Workers: 1}})
	want := fmt.Sprintf("--count: %d samples of each of 2 benchmarks is more than a run can count", math.MaxInt)
	if err == nil || !strings.Contains(err.Error(), want) || ExitCode(err) != ExitUsage {
		t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), want)
	}
	if eng.calls != 0 || stdout.Len() != 0 {
		t.Errorf("%d samples ran, %d bytes written", eng.calls, stdout.Len())
	}
}

// unwritableDir returns a directory in which this process cannot create
// a file: a read-only directory of its own, or, for root (whom mode bits
// do not stop), a read-only file system such as /sys.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, dir := range []string{"/sys", "/proc"} {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if f, err := os.CreateTemp(dir, "probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			continue
		}
		return dir
	}
	t.Skip("no directory this process cannot write")
	return ""
}

// TestRunUnwritableOutputsRefusedFirst checks that every output flag
// naming a file that cannot be created is refused as bad usage (exit 2)
// before the run, with --out as it was.
func TestRunUnwritableOutputsRefusedFirst(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	outFile := filepath.Join(dir, "out.txt")
	ro := unwritableDir(t)
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{MemProfile: filepath.Join(ro, "mem.pprof")}, "--memprofile: " + filepath.Join(ro, "mem.pprof") + ": cannot write: "},
		{RunConfig{Flamegraph: filepath.Join(ro, "flame.html")}, "--flamegraph: " + filepath.Join(ro, "flame.html") + ": cannot write: "},
		{RunConfig{CPUProfile: filepath.Join(ro, "cpu.pprof")}, "--cpuprofile: " + filepath.Join(ro, "cpu.pprof") + ": cannot write: "},
		{RunConfig{CPUProfile: filepath.Join(dir, "cpu.pprof"), MemProfile: filepath.Join(ro, "mem.pprof")}, "--memprofile: "},
	} {
		if err := os.WriteFile(outFile, []byte("previous results\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		eng := &fakeEngine{}
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.OutFile, cfg.Engine, cfg.Env = &stdout, &stderr, outFile, eng, testEnv
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
		err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		if eng.calls != 0 || stdout.Len() != 0 {
			t.Errorf("%s: %d samples ran, stdout %q", tc.want, eng.calls, stdout.String())
		}
		if data, _ := os.ReadFile(outFile); string(data) != "previous results\n" {
			t.Errorf("%s: --out changed to %q", tc.want, data)
		}
		if got := dirFiles(t, dir); !slices.Equal(got, []string{"out.txt"}) {
			t.Errorf("%s: files left: %q", tc.want, got)
		}
	}
}

// TestRunFlamegraphNeedsATempDir: the flame graph is drawn through files
// in the temporary directory (TMPDIR). One in which nothing can be made
// is refused before the run (exit 2), naming it, with --out as it was
// and no file left, where it failed the run after every sample, or before
// it with exit 1 and no word of TMPDIR.
func TestRunFlamegraphNeedsATempDir(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	outFile := filepath.Join(dir, "out.txt")
	tmp := filepath.Join(dir, "missing")
	t.Setenv("TMPDIR", tmp)
	want := "benchrun: --flamegraph: the temporary directory " + tmp + " (TMPDIR) cannot be written: no such file or directory: the flame graph is drawn through files there; set TMPDIR to a directory that can be written"
	for _, cpu := range []string{"", filepath.Join(dir, "cpu.pprof")} {
		if err := os.WriteFile(outFile, []byte("previous results\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		eng := &fakeEngine{}
		err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
			Count: 1, Progress: ProgressOff, OutFile: outFile, CPUProfile: cpu, Flamegraph: filepath.Join(dir, "flame.html"), Engine: eng, Env: testEnv})
		if err == nil || Message(err) != want || ExitCode(err) != ExitUsage {
			t.Errorf("--cpuprofile %q: err = %v (exit %d), want exit 2 and %q", cpu, err, ExitCode(err), want)
		}
		if eng.calls != 0 || stdout.Len() != 0 {
			t.Errorf("--cpuprofile %q: %d samples ran, stdout %q", cpu, eng.calls, stdout.String())
		}
		if data, _ := os.ReadFile(outFile); string(data) != "previous results\n" {
			t.Errorf("--cpuprofile %q: --out changed to %q", cpu, data)
		}
		if got := dirFiles(t, dir); !slices.Equal(got, []string{"out.txt"}) {
			t.Errorf("--cpuprofile %q: files left: %q", cpu, got)
		}
	}
}

func TestRunProfiles(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	cpu, mem, flame := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "flame.html")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 2, Progress: ProgressOff, CPUProfile: cpu, MemProfile: mem, Flamegraph: flame, Engine: &fakeEngine{spin: 150 * time.Millisecond}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, mem} {
		data, err := os.ReadFile(p)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Errorf("%s: not a gzipped profile (%d bytes, %v)", p, len(data), err)
		}
	}
	prof, err := os.Open(cpu)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(prof)
	prof.Close()
	if err != nil {
		t.Fatal(err)
	}
	labelled := 0
	for _, s := range p.Sample {
		// Named as the result lines name it, so that a profile is
		// filtered by the name the results show (-tagfocus
		// benchmark=BenchmarkGroupby/...).
		if strings.HasPrefix(strings.Join(s.Label["benchmark"], ""), "BenchmarkGroupby/workload=groupby/") {
			labelled++
		}
	}
	if labelled == 0 {
		t.Errorf("no CPU sample carries the benchmark label (%d samples)", len(p.Sample))
	}
	page, err := os.ReadFile(flame)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if !strings.Contains(html, "<html") || !strings.Contains(html, "fakeEngine") {
		t.Errorf("flame graph does not show the profiled function (%d bytes)", len(page))
	}
	// The page is named by the run's benchmarks, not by pprof's
	// "benchrun.test cpu", alike for every run.
	if m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(html); m == nil || !strings.HasPrefix(m[1], "CPU of BenchmarkGroupby/workload=groupby/") {
		t.Errorf("flame graph's title %q does not name the benchmark", m)
	}
	for _, ext := range []string{"<script src=\"http", "<link href=\"http", "<link rel=\"stylesheet\" href=\"http"} {
		if strings.Contains(html, ext) {
			t.Errorf("flame graph loads %s...: not self-contained", ext)
		}
	}
	// Without --cpuprofile the flame graph's profile is temporary: made
	// under TMPDIR, a directory of this test's own (the shared one holds
	// other processes' profiles), and removed.
	t.Setenv("TMPDIR", t.TempDir())
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "benchrun-cpu-*.pprof"))
	flame2 := filepath.Join(dir, "flame2.html")
	if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, Flamegraph: flame2, Engine: &fakeEngine{spin: 100 * time.Millisecond}, Env: testEnv}); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "benchrun-cpu-*.pprof"))
	if _, err := os.Stat(flame2); err != nil || len(after) != 0 || len(before) != 0 {
		t.Errorf("flame graph without --cpuprofile: %v; temporary profiles %d before, %d after", err, len(before), len(after))
	}
}

// TestRunProfilesThroughLinks checks that a profile or flame graph named
// by a symbolic link to a file not yet written writes that file, as --out
// does, and leaves the link in place.
func TestRunProfilesThroughLinks(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	flags := []string{"out", "cpu", "mem", "flame"}
	for _, f := range flags {
		if err := os.Symlink(f+"-target.html", filepath.Join(dir, f+".html")); err != nil {
			t.Fatal(err)
		}
	}
	link := func(f string) string { return filepath.Join(dir, f+".html") }
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, OutFile: link("out"), CPUProfile: link("cpu"), MemProfile: link("mem"), Flamegraph: link("flame"),
		Engine: &fakeEngine{spin: 100 * time.Millisecond}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flags {
		if st, err := os.Lstat(link(f)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: no longer a symbolic link (%v)", link(f), err)
		}
		if st, err := os.Stat(filepath.Join(dir, f+"-target.html")); err != nil || st.Size() == 0 {
			t.Errorf("%s-target.html, the link's file, not written: %v", f, err)
		}
	}
}

// TestRunFlamegraphWithCPUProfileNotAFile checks that --flamegraph works
// when --cpuprofile names a file that cannot be read back (/dev/null; a
// named pipe likewise): the flame graph is drawn from its own copy of the
// profile, not from the --cpuprofile destination.
func TestRunFlamegraphWithCPUProfileNotAFile(t *testing.T) {
	chdirRoot(t)
	flame := filepath.Join(t.TempDir(), "flame.html")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, CPUProfile: os.DevNull, Flamegraph: flame, Engine: &fakeEngine{spin: 100 * time.Millisecond}, Env: testEnv})
	if err != nil {
		t.Fatalf("--cpuprofile %s --flamegraph: %v", os.DevNull, err)
	}
	page, err := os.ReadFile(flame)
	if err != nil || !strings.Contains(string(page), "fakeEngine") {
		t.Errorf("flame graph does not show the profiled function (%d bytes, %v)", len(page), err)
	}
}

// TestInterruptedRunsFlamegraphNamesWhatRan: a run stopped by Ctrl-C
// draws the flame graph of its finished samples, and titles it by the
// benchmarks that ran; it was titled by every selected benchmark
// ("… and 1 more"), one of which the profile does not hold.
func TestInterruptedRunsFlamegraphNamesWhatRan(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	flame := filepath.Join(dir, "flame.html")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eng := &fakeEngine{spin: 100 * time.Millisecond, deaf: true, before: func(call int) {
		if call == 1 {
			cancel()
		}
	}}
	var stdout, stderr bytes.Buffer
	err := Run(ctx, RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Index: []string{IndexImported, IndexDirect}, Workers: 1},
		Count: 1, Progress: ProgressOff, Flamegraph: flame, Engine: eng, Env: testEnv})
	if !errors.Is(err, ErrInterrupted) || eng.calls != 1 {
		t.Fatalf("err = %v after %d samples, want interrupted after 1", err, eng.calls)
	}
	page, err := os.ReadFile(flame)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(string(page))
	if m == nil || !strings.HasPrefix(m[1], "CPU of BenchmarkGroupby/workload=groupby/index=direct/") || strings.Contains(m[1], " more") {
		t.Errorf("flame graph's title %q, want the one benchmark that ran", m)
	}
}

// TestFlamegraphOfAShardOfNoBenchmark checks that a shard that drew no
// benchmark, which passes as the empty part of a sharded suite, writes a
// flame graph titled to say so, not pprof's "benchrun.test cpu", which
// names no run.
func TestFlamegraphOfAShardOfNoBenchmark(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	flame := filepath.Join(dir, "flame.html")
	var stdout, stderr bytes.Buffer
	eng := &fakeEngine{}
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1, Shard: "1/2"},
		Count: 1, Progress: ProgressOff, Flamegraph: flame, Engine: eng, Env: testEnv})
	if err != nil || eng.calls != 0 {
		t.Fatalf("err = %v after %d samples, want none", err, eng.calls)
	}
	page, err := os.ReadFile(flame)
	if err != nil {
		t.Fatal(err)
	}
	const want = "CPU of no benchmark: shard 1/2 drew none of 1 benchmark"
	if m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(string(page)); m == nil || m[1] != want {
		t.Errorf("flame graph's title %q, want %q", m, want)
	}
}

// TestRunFlamegraphInterrupted checks that Ctrl-C during the flame-graph
// export, which reaches the export's subprocess too, exits 130 with a
// plain message, the results kept and no flame graph written.
func TestRunFlamegraphInterrupted(t *testing.T) {
	chdirRoot(t)
	// benchrun's main takes SIGINT (signal.NotifyContext), so the export's
	// subprocess starts with SIGINT's default action. This test binary
	// takes it too while the test runs: started with SIGINT ignored (as a
	// shell without job control starts a background job, and
	// scripts/mutants.sh then runs it), it would pass the ignoring on to
	// the subprocess, which would outlive its own SIGINT.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	dir := t.TempDir()
	outFile, flame := filepath.Join(dir, "out.txt"), filepath.Join(dir, "flame.html")
	t.Setenv(interruptFlameEnv, "1")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, OutFile: outFile, Progress: ProgressOff, Flamegraph: flame, Engine: &fakeEngine{}, Env: testEnv})
	want := "benchrun: interrupted while drawing the flame graph: " + flame + " was not written"
	if ExitCode(err) != ExitInterrupted || Message(err) != want {
		t.Errorf("err = %v (exit %d), want exit 130 and %q", err, ExitCode(err), want)
	}
	if data, _ := os.ReadFile(outFile); !strings.Contains(string(data), "\nBenchmarkGroupby/") {
		t.Errorf("--out lost the finished result: %q", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"out.txt"}) {
		t.Errorf("files after the interrupted export: %q", got)
	}
}

func TestRunWithoutEngine(t *testing.T) {
	chdirRoot(t)
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"lookup"}, Workers: 1}, Count: 1, Progress: ProgressAuto})
	if !errors.Is(err, ErrNoEngine) || ExitCode(err) != ExitFailed {
		t.Errorf("err = %v", err)
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{"orders_lineitem": "OrdersLineitem", "a": "A", "_x_1": "X1", "x__y": "XY", "a9b": "A9b"} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBuiltinsServeEveryArrangement checks that every built-in workload
// runs in imported mode under both join strategies: its indexes serve
// every arrangement either strategy reads.
func TestBuiltinsServeEveryArrangement(t *testing.T) {
	chdirRoot(t)
	bs, err := Benchmarks(Selection{Index: []string{IndexImported, IndexDirect}, Join: []string{"linear", "delta"}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 64 {
		t.Errorf("%d benchmarks, want 16 × 2 modes × 2 joins", len(bs))
	}
	// star runs both strategies unless --join says otherwise.
	bs, err = Benchmarks(Selection{Targets: []string{"star"}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(bs); len(got) != 2 || !strings.Contains(got[0], "/join=delta/") || !strings.Contains(got[1], "/join=linear/") {
		t.Errorf("star by default: %q", got)
	}
	bs, err = Benchmarks(Selection{Targets: []string{"star"}, Join: []string{"linear"}, Workers: 1})
	if err != nil || len(bs) != 1 {
		t.Errorf("star --join linear: %v, %v", names(bs), err)
	}
}

// TestDetectEnv checks the config values describe this process; in a git
// checkout the commit is the checkout's HEAD.
func TestDetectEnv(t *testing.T) {
	e := DetectEnv()
	if e.GOOS != runtime.GOOS || e.GOARCH != runtime.GOARCH || e.GoVersion != runtime.Version() || e.GOMAXPROCS != runtime.GOMAXPROCS(0) || e.CPU == "" {
		t.Errorf("env %+v", e)
	}
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		if !strings.HasPrefix(e.Commit, strings.TrimSpace(string(head))) {
			t.Errorf("commit %q, git HEAD %s", e.Commit, head)
		}
	}
}

// gitIn returns a function that runs git with its arguments in dir, as a
// committer of its own, failing the test if git fails.
func gitIn(t *testing.T, dir string) func(args ...string) {
	return func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestGitDirty checks that a checkout is dirty, for a go run's commit
// line, exactly when go build would stamp it modified: a changed tracked
// file or an untracked file not ignored; an ignored file alone is clean.
func TestGitDirty(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := gitIn(t, dir)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("a.go", "package a\n")
	write(".gitignore", "*.out\n")
	git("add", ".")
	git("commit", "-q", "-m", "a")
	if gitDirty(dir) {
		t.Fatal("a clean checkout is dirty")
	}
	write("x.out", "ignored\n")
	if gitDirty(dir) {
		t.Error("an ignored file made the checkout dirty")
	}
	write("b.go", "package a\n")
	if !gitDirty(dir) {
		t.Error("an untracked b.go did not make the checkout dirty (go build stamps it modified)")
	}
	if err := os.Remove(filepath.Join(dir, "b.go")); err != nil {
		t.Fatal(err)
	}
	write("a.go", "package a // changed\n")
	if !gitDirty(dir) {
		t.Error("a changed tracked file did not make the checkout dirty")
	}
}

// TestReadmeOutputsAreIgnored checks that the files and directories the
// examples of README.md and docs/spec.md write at the checkout root (a
// result file's --out, a profile's, a flame graph's, a redirected report,
// gen's --out directory) are ones the repository's .gitignore ignores: a
// user who follows them and runs again gets a commit line without
// -dirty, since an untracked file not ignored marks the checkout
// modified (TestGitDirty). `gen lookup --param rows=1e5 --out d` made a
// directory d of CSV files that did.
func TestReadmeOutputsAreIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	var docs []byte
	for _, name := range []string{"README.md", filepath.Join("docs", "spec.md")} {
		data, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(append(docs, data...), '\n')
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	// A relative file name with an extension, after an output flag (go
	// test's -cpuprofile and -o too) or a redirection: FILE and DIR
	// placeholders, "-", absolute paths and paths into the tree
	// (results/baseline.txt is committed) are not written at the root.
	fileRe := regexp.MustCompile(`(?:--?(?:out|flamegraph|cpuprofile|memprofile|o)[ =]|>>? )([A-Za-z0-9_-]+\.[a-z]+)\b`)
	// A relative name without one after --out is a directory: gen's
	// (or scripts/ci-bench.sh's), which holds CSV files.
	dirRe := regexp.MustCompile(`--out[ =]([A-Za-z0-9_-]+)(?:$|[^A-Za-z0-9_./-])`)
	files, dirs := map[string]bool{}, map[string]bool{}
	for _, m := range fileRe.FindAllSubmatch(docs, -1) {
		files[string(m[1])] = true
	}
	for _, m := range dirRe.FindAllSubmatch(docs, -1) {
		if name := string(m[1]); strings.ToUpper(name) != name { // not DIR, FILE or -
			dirs[name] = true
		}
	}
	if len(files) < 5 || len(dirs) < 1 {
		t.Fatalf("found %d output files (%v) and %d directories (%v) in the examples of README.md and docs/spec.md; the patterns no longer match them", len(files), files, len(dirs), dirs)
	}
	dir := t.TempDir()
	git := gitIn(t, dir)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), ignore, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "a")
	check := func(name, what string, write func(path string) error) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := write(path); err != nil {
			t.Fatal(err)
		}
		if gitDirty(dir) {
			t.Errorf("%s, %s the examples of README.md or docs/spec.md write at the checkout root, marks the checkout -dirty: .gitignore does not ignore it", name, what)
		}
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
	}
	for name := range files {
		check(name, "which", func(path string) error { return os.WriteFile(path, []byte("x\n"), 0o644) })
	}
	for name := range dirs {
		check(name, "a directory", func(path string) error {
			if err := os.Mkdir(path, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(path, "facts.csv"), []byte("time,diff,x\n"), 0o644)
		})
	}
}

// TestTrackedFilesAreNotIgnored checks that no file of the checkout is
// one the repository's .gitignore ignores (git check-ignore --no-index):
// a pattern that ignores outputs at the root (TestReadmeOutputsAreIgnored)
// must not also match a project file. git keeps tracking one that does,
// but a new project file the pattern matches would be left out of git add
// with no more than a hint, and out of git status.
func TestTrackedFilesAreNotIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	top, err := exec.Command("git", "-C", root, "rev-parse", "--show-toplevel").Output()
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != root {
		t.Skip("not a git checkout of the module")
	}
	tracked, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(tracked, []byte{0}); n < 100 {
		t.Fatalf("git ls-files lists %d files", n)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	// The patterns are checked in a repository of their own, so that no
	// exclude file of this checkout or of the user's takes part.
	dir := t.TempDir()
	gitIn(t, dir)("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), ignore, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "--stdin", "-z")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(tracked)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1 && len(out) == 0:
		// none is ignored
	case err == nil:
		t.Errorf(".gitignore ignores these files of the checkout: %q", strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"))
	default:
		t.Fatalf("git check-ignore: %v", err)
	}
}

// writeSpec writes a small spec file called name into dir and returns its
// path; rows is its inline rows' JSON.
func writeSpec(t *testing.T, dir, file, name, rows string) string {
	t.Helper()
	path := filepath.Join(dir, file)
	src := `{"version": 1, "name": "` + name + `",
  "inputs": {"a": {"columns": ["x"], "rows": ` + rows + `}},
  "indexes": {"a_by_x": {"on": "a", "key": ["x"]}},
  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDuplicateWorkloadNames checks that two spec files declaring one
// workload name are refused together, by run and by validate, naming
// both files (exit 2), instead of one being dropped; one file named two
// ways is one target.
func TestDuplicateWorkloadNames(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	a := writeSpec(t, dir, "a.json", "w", "[[0, 1, 1]]")
	b := writeSpec(t, dir, "b.json", "w", "[[0, 1, 2], [1, 1, 3]]")
	c := writeSpec(t, dir, "c.json", "v", "[[0, 1, 1]]")
	// A file deep in a tree (a CI workspace) is named whole, as the
	// other file of the error is: it is a path, not a value of the spec.
	deep := filepath.Join(dir, strings.Repeat("d", 100))
	if err := os.Mkdir(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	da, db := writeSpec(t, deep, "a.json", "w", "[[0, 1, 1]]"), writeSpec(t, deep, "b.json", "w", "[[0, 1, 1]]")
	for _, tc := range []struct {
		targets []string
		want    string
	}{
		{[]string{a, b}, b + `:1: name: workload "w" is also the name of ` + a + ": their results would have the same names (rename one)"},
		{[]string{b, c, a}, a + `:1: name: workload "w" is also the name of ` + b + ":"},
		{[]string{da, db}, db + `:1: name: workload "w" is also the name of ` + da + ": their results would have the same names (rename one)"},
	} {
		bs, err := Benchmarks(Selection{Targets: tc.targets, Index: []string{IndexImported, IndexDirect}, Workers: 1})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("run %q: %v (exit %d), benchmarks %q; want exit 2 and %q", tc.targets, err, ExitCode(err), names(bs), tc.want)
		}
		var out bytes.Buffer
		err = Validate(context.Background(), ValidateConfig{Out: &out, Specs: tc.targets})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("validate %q: %v (exit %d); want exit 2 and %q", tc.targets, err, ExitCode(err), tc.want)
		}
		// check refuses them too, before it checks anything: the specs
		// it passes are ones run would measure.
		out.Reset()
		err = Check(context.Background(), CheckConfig{Out: &out, Targets: tc.targets})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || ExitCode(err) != ExitUsage || out.Len() != 0 {
			t.Errorf("check %q: %v (exit %d), output %q; want exit 2, no output and %q", tc.targets, err, ExitCode(err), out.String(), tc.want)
		}
	}
	// The same file named twice is one target, and runs once.
	again := filepath.Join(dir, ".", "x", "..", "a.json")
	bs, err := Benchmarks(Selection{Targets: []string{a, again, c}, Workers: 1})
	if err != nil || len(bs) != 2 {
		t.Errorf("a spec named twice: %v, benchmarks %q", err, names(bs))
	}
	// validate lists it once too, under the spelling first given.
	var out bytes.Buffer
	if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{a, again, c, a}}); err != nil {
		t.Errorf("validate of a spec named twice: %v", err)
	}
	if want := a + ": ok: workload w, 1 input, 0 views, 1 index\n" + c + ": ok: workload v, 1 input, 0 views, 1 index\n"; out.String() != want {
		t.Errorf("validate of a spec named twice printed\n%s\nwant\n%s", out.String(), want)
	}
}

// TestRunOutputsNameDistinctFiles checks that two output flags naming one
// file, however spelled, are refused with both flags named (exit 2)
// before anything is written.
func TestRunOutputsNameDistinctFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	x := filepath.Join(dir, "x")
	if err := os.WriteFile(x, []byte("previous\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(x, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Links to files that do not exist yet, and a directory reached
	// through a link: writing either writes the other.
	for _, l := range [][2]string{{"new", "to-new"}, {filepath.Join(dir, "abs-new"), "to-abs-new"}, {"to-new", "to-to-new"}, {"sub", "sub-link"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{OutFile: x, CPUProfile: x}, "--out and --cpuprofile: both name " + x},
		{RunConfig{OutFile: "r.html", Flamegraph: "r.html"}, "--out and --flamegraph: both name r.html"},
		{RunConfig{CPUProfile: "p", MemProfile: "p"}, "--cpuprofile and --memprofile: both name p"},
		{RunConfig{CPUProfile: filepath.Join(dir, ".", "p"), MemProfile: filepath.Join(dir, "sub", "..", "p")}, "--cpuprofile and --memprofile: both name "},
		{RunConfig{OutFile: "x", MemProfile: x}, "--out and --memprofile: both name " + x},
		{RunConfig{CPUProfile: "x.html", Flamegraph: "./sub/../x.html"}, "--cpuprofile and --flamegraph: both name ./sub/../x.html"},
		{RunConfig{OutFile: "hard", CPUProfile: x}, "--out and --cpuprofile: both name " + x},
		{RunConfig{OutFile: "to-new", CPUProfile: "new"}, "--out and --cpuprofile: both name new"},
		{RunConfig{MemProfile: "abs-new", CPUProfile: "to-abs-new"}, "--cpuprofile and --memprofile: both name abs-new"},
		{RunConfig{OutFile: "to-to-new", MemProfile: "new"}, "--out and --memprofile: both name new"},
		{RunConfig{OutFile: "sub/r.txt", CPUProfile: "sub-link/r.txt"}, "--out and --cpuprofile: both name sub-link/r.txt"},
	} {
		var stdout, stderr bytes.Buffer
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &stdout, &stderr, &fakeEngine{}, testEnv
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
		err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout got %q", tc.want, stdout.String())
		}
		if data, _ := os.ReadFile(x); string(data) != "previous\n" {
			t.Errorf("%s: x changed to %q", tc.want, data)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 7 {
			t.Errorf("%s: the run wrote files: %d entries", tc.want, len(entries))
		}
	}
}

// TestRunOutputsAreNotStandardOutput checks that an output flag naming
// the regular file standard output goes to (benchrun run --out r.txt >
// r.txt) is refused (exit 2) with the file as it was: the results would
// reach it twice, through two offsets that overwrite each other, and a
// profile's rename would drop what standard output wrote; a pipe would
// get the results twice. The null device, which keeps nothing, is no
// such conflict.
func TestRunOutputsAreNotStandardOutput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r := filepath.Join(dir, "r.txt")
	if err := os.Symlink("r.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{OutFile: r}, "--out: " + r + " is also standard output"},
		{RunConfig{OutFile: "./link.txt"}, "--out: ./link.txt is also standard output"},
		{RunConfig{CPUProfile: "r.txt"}, "--cpuprofile: r.txt is also standard output"},
		{RunConfig{MemProfile: "r.txt"}, "--memprofile: r.txt is also standard output"},
	} {
		f, err := os.Create(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("previous\n"); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &ErrWriter{W: f}, &stderr, &fakeEngine{}, testEnv
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
		err = Run(context.Background(), cfg)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		if data, _ := os.ReadFile(r); string(data) != "previous\n" {
			t.Errorf("%s: r.txt changed to %q", tc.want, data)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("%s: the run wrote files: %d entries", tc.want, len(entries))
		}
	}

	// Nor may an output flag name the file standard error, where progress
	// goes, is redirected to (--out r.txt 2> r.txt).
	f, err := os.Create(r)
	if err != nil {
		t.Fatal(err)
	}
	cfg := RunConfig{OutFile: "r.txt", Out: &bytes.Buffer{}, ErrOut: f, Engine: &fakeEngine{}, Env: testEnv}
	cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOn
	err = Run(context.Background(), cfg)
	f.Close()
	if want := "--out: r.txt is also standard error"; err == nil || !strings.Contains(err.Error(), want) || ExitCode(err) != ExitUsage {
		t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), want)
	}
	if data, _ := os.ReadFile(r); len(data) != 0 {
		t.Errorf("--out naming standard error's file: r.txt changed to %q", data)
	}

	// Standard output or error that is a pipe, named through /dev/fd or
	// /proc/self/fd (benchrun run --out /dev/stdout | cat), would get
	// the results twice, or mixed into the progress lines: refused too.
	for _, stream := range []string{"output", "error"} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var piped bytes.Buffer
		copied := make(chan struct{})
		go func() { io.Copy(&piped, pr); close(copied) }()
		for _, name := range []string{fmt.Sprintf("/proc/self/fd/%d", pw.Fd()), fmt.Sprintf("/dev/fd/%d", pw.Fd())} {
			cfg := RunConfig{OutFile: name, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Engine: &fakeEngine{}, Env: testEnv}
			if stream == "output" {
				cfg.Out = &ErrWriter{W: pw}
			} else {
				cfg.ErrOut = pw
			}
			cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOn
			err = Run(context.Background(), cfg)
			if want := "--out: " + name + " is also standard " + stream; err == nil || !strings.Contains(err.Error(), want) || ExitCode(err) != ExitUsage {
				t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), want)
			}
		}
		pw.Close()
		<-copied
		pr.Close()
		if piped.Len() != 0 {
			t.Errorf("--out naming standard %s's pipe: the pipe got %d bytes", stream, piped.Len())
		}
	}

	// /dev/null as both standard output and --out is no conflict.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cfg = RunConfig{OutFile: os.DevNull, Out: null, ErrOut: null, Engine: &fakeEngine{}, Env: testEnv}
	cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
	if err := Run(context.Background(), cfg); err != nil {
		t.Errorf("--out %s with standard output there too: %v", os.DevNull, err)
	}
}

// TestRunOutputIsStandardOutputNamedEscaped: the refusal of an output
// flag naming the file standard output or error is redirected to names
// a path holding a control character escaped, as every message names a
// path (docs/spec.md), never raw.
func TestRunOutputIsStandardOutputNamedEscaped(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const name = "r\x1b[2J\n.txt"
	for _, stream := range []string{"output", "error"} {
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := RunConfig{OutFile: name, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Engine: &fakeEngine{}, Env: testEnv}
		if stream == "output" {
			cfg.Out = f
		} else {
			cfg.ErrOut = f
		}
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
		err = Run(context.Background(), cfg)
		f.Close()
		want := `--out: "r\x1b[2J\n.txt" is also standard ` + stream
		if err == nil || !strings.Contains(err.Error(), want) || strings.ContainsAny(err.Error(), "\x1b\n") || ExitCode(err) != ExitUsage {
			t.Errorf("standard %s: err = %q (exit %d), want %q and exit 2", stream, err, ExitCode(err), want)
		}
	}
}

// TestRunOutputsAreNotInputs checks that an output flag naming a spec
// file of the run or one of its CSV inputs, however spelled and in
// whichever shard, is refused (exit 2) with the file as it was.
func TestRunOutputsAreNotInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"a.csv":     "time,diff,x\n0,1,1\n",
		"base.json": `{"version": 1, "name": "w", "inputs": {"a": {"columns": ["x"], "csv": "a.csv"}}, "indexes": {"a_by_x": {"on": "a", "key": ["x"]}}, "query": {"from": [{"as": "a", "collection": "a"}]}}`,
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.csv", "link.csv"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link("base.json", "hard.json"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{OutFile: "a.csv"}, "--out: a.csv is the CSV input a of base.json, which this run reads"},
		{RunConfig{OutFile: "base.json"}, "--out: base.json is the spec file of workload w, which this run reads"},
		{RunConfig{CPUProfile: "./base.json"}, "--cpuprofile: ./base.json is the spec file of workload w"},
		{RunConfig{MemProfile: filepath.Join(dir, "a.csv")}, "--memprofile: " + filepath.Join(dir, "a.csv") + " is the CSV input a of base.json"},
		{RunConfig{OutFile: "link.csv"}, "--out: link.csv is the CSV input a of base.json"},
		{RunConfig{CPUProfile: "hard.json"}, "--cpuprofile: hard.json is the spec file of workload w"},
		{RunConfig{OutFile: "a.csv", Selection: Selection{Shard: "1/2"}}, "--out: a.csv is the CSV input a of base.json"},
	} {
		var stdout, stderr bytes.Buffer
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &stdout, &stderr, &fakeEngine{}, testEnv
		cfg.Selection.Targets, cfg.Selection.Workers, cfg.Count, cfg.Progress = []string{"base.json"}, 1, 1, ProgressOff
		err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		for name, data := range files {
			if got, _ := os.ReadFile(name); string(got) != data {
				t.Errorf("%s: %s changed to %q", tc.want, name, got)
			}
		}
		if got := dirFiles(t, dir); !slices.Equal(got, []string{"a.csv", "base.json", "hard.json", "link.csv"}) {
			t.Errorf("%s: files: %q", tc.want, got)
		}
	}
}

// TestBuiltinParamRanges checks that a built-in parameter outside its
// range is refused naming the parameter and the range (exit 2), at both
// ends, and that every default and check-size value is in range.
func TestBuiltinParamRanges(t *testing.T) {
	chdirRoot(t)
	for _, tc := range []struct {
		target, param, want string
	}{
		{"fanout", "k=-1", "--param: k=-1: workload fanout: k must be in 1..1024 (concurrent queries), not -1"},
		{"fanout", "k=0", "--param: k=0: workload fanout: k must be in 1..1024 (concurrent queries), not 0"},
		{"fanout", "k=1025", "--param: k=1025: workload fanout: k must be in 1..1024"},
		{"peek", "reads=0", "--param: reads=0: workload peek: reads must be in 1..1000000 (one-shot reads per sample), not 0"},
		{"peek", "reads=-3", "--param: reads=-3: workload peek: reads must be in 1..1000000"},
		{"peek", "reads=1e9", "--param: reads=1e9: workload peek: reads must be in 1..1000000"},
		{"triangles", "nodes=0", "--param: nodes=0: workload triangles: nodes must be in 1..16777216 (nodes), not 0"},
		{"stall", "rounds=0", "--param: rounds=0: workload stall: rounds must be in 1..100000000"},
		{"dd", "rows=0", "--param: rows=0: workload dd: rows must be in 1000..99900000"},
		{"dd", "rows=1e8", "--param: rows=1e8: workload dd: rows must be in 1000..99900000"},
	} {
		_, err := Benchmarks(Selection{Targets: []string{tc.target}, Workers: 1, Params: []string{tc.param}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("%s --param %s: %v (exit %d), want exit 2 and %q", tc.target, tc.param, err, ExitCode(err), tc.want)
		}
	}
	// Each end of a range is accepted.
	for _, tc := range []struct{ target, param string }{{"fanout", "k=1"}, {"fanout", "k=1024"}, {"peek", "reads=1"}, {"dd", "rows=1000"}, {"dd", "rows=99900000"}} {
		if _, err := Benchmarks(Selection{Targets: []string{tc.target}, Workers: 1, Params: []string{tc.param}}); err != nil {
			t.Errorf("%s --param %s: %v", tc.target, tc.param, err)
		}
	}
	for _, w := range workloads.Registry() {
		check := workloads.CheckParams(w)
		for _, p := range w.Params {
			for _, v := range append(slices.Clone(p.Defaults), check[p.Name]) {
				if err := p.Check(v); err != nil {
					t.Errorf("%s: a default or check size is out of range: %v", w.Name, err)
				}
			}
		}
	}
}

// TestCommitIsAskedOfThisModulesCheckoutOnly checks that a binary without
// VCS stamping takes the commit from git only in a checkout of its own
// module: run from another repository, its HEAD would name the wrong code.
func TestCommitIsAskedOfThisModulesCheckoutOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const module = "github.com/tracebench/tracebench"
	chdirRoot(t)
	if exec.Command("git", "rev-parse", "--show-toplevel").Run() == nil && !checkoutOf(module) {
		t.Fatal("the project's own checkout is not recognised")
	}
	other := t.TempDir()
	if out, err := exec.Command("git", "-C", other, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	t.Chdir(other)
	if checkoutOf(module) {
		t.Error("a repository with no go.mod taken for the module's checkout")
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if checkoutOf(module) {
		t.Error("another module's repository taken for this module's checkout")
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module "+module+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !checkoutOf(module) {
		t.Error("a checkout declaring the module not recognised")
	}
}

// TestValidateNamesEveryBadFile checks that validate reports every bad
// spec of its arguments, not only the first, and the good ones, and that
// the error is bad input (exit 2).
func TestValidateNamesEveryBadFile(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	bad1, bad2 := filepath.Join(dir, "bad1.json"), filepath.Join(dir, "bad2.json")
	if err := os.WriteFile(bad1, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad2, []byte("{\"version\": 1,\n \"nme\": \"x\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{bad1, "workloads/examples/lookup.json", bad2}})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("exit %d (%v), want %d", ExitCode(err), err, ExitUsage)
	}
	msg := Message(err)
	for _, want := range []string{bad1 + ":1:", bad2 + ":2:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q do not name %s", msg, want)
		}
	}
	if !strings.Contains(out.String(), "workloads/examples/lookup.json: ok") {
		t.Errorf("the good spec between them is not reported: %q", out.String())
	}
}

// TestValidateRefusesASpecNamedLikeABuiltinNamedWithIt: validate refuses a
// spec file declaring the name of a built-in workload given with it, in
// either order, as run and check do (their results would share workload=<name>),
// naming the file's line; alone, or with other workloads, the file is
// valid.
func TestValidateRefusesASpecNamedLikeABuiltinNamedWithIt(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "x.json")
	data, err := os.ReadFile("workloads/examples/groupby.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + `:3: name: workload "groupby" is also the name of the built-in workload groupby`
	for _, targets := range [][]string{{"groupby", file}, {file, "groupby"}, {file, "lookup", "groupby"}} {
		var out bytes.Buffer
		err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: targets})
		if ExitCode(err) != ExitUsage || !strings.Contains(Message(err), want) {
			t.Errorf("validate %v: exit %d (%v), want exit 2 with %q", targets, ExitCode(err), err, want)
		}
		// run says the same.
		err = Run(context.Background(), RunConfig{Out: &out, ErrOut: &out, Selection: Selection{Targets: targets, Workers: 1},
			Count: 1, Progress: ProgressOff, Engine: &fakeEngine{}, Env: testEnv})
		if ExitCode(err) != ExitUsage || !strings.Contains(Message(err), want) {
			t.Errorf("run %v: exit %d (%v), want exit 2 with %q", targets, ExitCode(err), err, want)
		}
		// And so does check, before checking anything.
		out.Reset()
		err = Check(context.Background(), CheckConfig{Out: &out, Targets: targets})
		if ExitCode(err) != ExitUsage || !strings.Contains(Message(err), want) || out.Len() != 0 {
			t.Errorf("check %v: exit %d (%v), output %q, want exit 2 with %q", targets, ExitCode(err), err, out.String(), want)
		}
	}
	for _, targets := range [][]string{{file}, {file, "lookup"}} {
		var out bytes.Buffer
		if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: targets}); err != nil {
			t.Errorf("validate %v: %v, want ok", targets, err)
		}
	}
}

// TestMissingIndexNamesWhatReadsIt checks the missing-index error of a
// query with one from entry: no join reads the arrangement, the query does.
func TestMissingIndexNamesWhatReadsIt(t *testing.T) {
	chdirRoot(t)
	path := withoutIndexes(t, "workloads/examples/groupby.json")
	var out bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &out, ErrOut: &out, Selection: Selection{Targets: []string{path}, Index: []string{IndexImported}, Workers: 1},
		Count: 1, Progress: ProgressOff, Engine: &fakeEngine{}, Env: testEnv})
	if ExitCode(err) != ExitUsage || !strings.Contains(Message(err), "(the query reads them; add indexes or use --index direct)") {
		t.Fatalf("exit %d, %v: want exit 2 saying the query reads the arrangements", ExitCode(err), err)
	}
}

// TestCPUProfileWriteErrorFails checks that a CPU profile that cannot be
// written (a full disk) fails the run (exit 1), as every other output
// does: the profiler itself drops its write errors.
func TestCPUProfileWriteErrorFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	chdirRoot(t)
	var out bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &out, ErrOut: &out, Selection: Selection{Targets: []string{"groupby"}, Index: []string{IndexDirect}, Workers: 1},
		Count: 1, CPUProfile: "/dev/full", Progress: ProgressOff, Engine: &fakeEngine{}, Env: testEnv})
	if ExitCode(err) != ExitFailed || !strings.Contains(err.Error(), "--cpuprofile: write /dev/full") {
		t.Fatalf("exit %d, %v: want exit 1 naming --cpuprofile and the failed write", ExitCode(err), err)
	}
}

// TestOperatorLabelsOnlyWhenProfiling: a run asks the engine for operator
// labels (their switches cost time) when it profiles its CPU, with
// --cpuprofile or --flamegraph, and not otherwise (--memprofile alone
// records no labels).
func TestOperatorLabelsOnlyWhenProfiling(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  func(*RunConfig)
		want bool
	}{
		{"no profile", func(*RunConfig) {}, false},
		{"memprofile", func(c *RunConfig) { c.MemProfile = filepath.Join(dir, "m.pprof") }, false},
		{"cpuprofile", func(c *RunConfig) { c.CPUProfile = filepath.Join(dir, "c.pprof") }, true},
		{"flamegraph", func(c *RunConfig) { c.Flamegraph = filepath.Join(dir, "f.html") }, true},
	} {
		e := &fakeEngine{}
		var stdout, stderr bytes.Buffer
		cfg := RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1}, Count: 2, Progress: ProgressOff, Engine: e, Env: testEnv}
		tc.cfg(&cfg)
		if err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(e.profiled) == 0 {
			t.Fatalf("%s: no sample ran", tc.name)
		}
		for _, p := range e.profiled {
			if p != tc.want {
				t.Errorf("%s: a sample asked for operator labels %v, want %v", tc.name, p, tc.want)
			}
		}
	}
	// The engine gives its runtimes the sample's labels only then.
	b := &Benchmark{Join: "linear", Index: IndexDirect, Workers: 1}
	for _, prof := range []bool{false, true} {
		ctx := context.Background()
		if prof {
			ctx = context.WithValue(ctx, profilingKey{}, true)
		}
		opts, err := sessionOptions(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if (opts.Labels != nil) != prof {
			t.Errorf("profiling %v: session labels %v", prof, opts.Labels)
		}
	}
}

// TestRunOutputsAreNotBuiltinSpecFiles: from a checkout, an output flag
// naming the spec file of a built-in workload the run selects (its source,
// workloads/examples/NAME.json, which the workload's name stands for) is
// refused as a spec file of the run is (exit 2), the file as it was.
func TestRunOutputsAreNotBuiltinSpecFiles(t *testing.T) {
	// A copy of the checkout, so that a run not refused overwrites the
	// copy.
	tempCheckout(t)
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{OutFile: "workloads/examples/lookup.json", Selection: Selection{Targets: []string{"lookup"}}}, "--out: workloads/examples/lookup.json is the spec file of the built-in workload lookup, which this run stands for"},
		{RunConfig{CPUProfile: "./workloads/examples/lookup.json", Selection: Selection{Targets: []string{"lookup"}}}, "--cpuprofile: ./workloads/examples/lookup.json is the spec file of the built-in workload lookup"},
		{RunConfig{MemProfile: "workloads/examples/dd_join.json", Selection: Selection{Targets: []string{"dd"}, Shard: "1/2"}}, "--memprofile: workloads/examples/dd_join.json is the spec file of the built-in workload dd"},
		{RunConfig{OutFile: "workloads/examples/star.json"}, "--out: workloads/examples/star.json is the spec file of the built-in workload star"},
	} {
		before, err := os.ReadFile(filepath.Clean(tc.cfg.OutFile + tc.cfg.CPUProfile + tc.cfg.MemProfile))
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &stdout, &stderr, &fakeEngine{}, testEnv
		cfg.Selection.Workers, cfg.Count, cfg.Progress = 1, 1, ProgressOff
		err = Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
		if after, _ := os.ReadFile(filepath.Clean(tc.cfg.OutFile + tc.cfg.CPUProfile + tc.cfg.MemProfile)); !bytes.Equal(after, before) {
			t.Fatalf("%s: the spec file changed", tc.want)
		}
	}
}

// TestStreamsAreNotBuiltinSpecFiles: from a checkout, standard output or
// error that is the spec file of a built-in workload a command names (or,
// named none, of any: the default suite) is refused as an output flag
// naming it is: benchrun explain lookup > workloads/examples/lookup.json
// emptied it.
func TestStreamsAreNotBuiltinSpecFiles(t *testing.T) {
	dir := tempCheckout(t)
	for _, tc := range []struct {
		file    string
		targets []string
		stderr  bool
		want    string // "": not refused
	}{
		{"workloads/examples/lookup.json", []string{"lookup"}, false, "standard output is " + filepath.Join(dir, "workloads/examples/lookup.json") + ", the spec file of the built-in workload lookup"},
		{"workloads/examples/lookup.json", []string{"lookup"}, true, "standard error is "},
		{"workloads/examples/dd_join.json", []string{"dd"}, false, "the spec file of the built-in workload dd"},
		{"workloads/examples/star.json", nil, false, "the spec file of the built-in workload star"},
		{"workloads/examples/star.json", []string{"lookup"}, false, ""},
	} {
		f, err := os.OpenFile(tc.file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut io.Writer = f, io.Discard
		if tc.stderr {
			out, errOut = io.Discard, f
		}
		err = CheckStreams(context.Background(), out, errOut, tc.targets)
		f.Close()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s with targets %q: %v, want no refusal", tc.file, tc.targets, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("%s with targets %q: %v (exit %d), want %q and exit 2", tc.file, tc.targets, err, ExitCode(err), tc.want)
		}
	}
}

// tempCheckout makes a copy of this module's go.mod and built-in workload
// spec files in a new directory, a checkout as the built-in spec guard
// finds one, changes the test's working directory to it and returns it.
func tempCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "workloads"), workloads.ExampleFS()); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// TestFlamegraphHTMLInAnyCase: --flamegraph takes an .html name in any
// case (F.HTML), as a browser does, and writes the page there; it was
// refused as not naming an .html file (README "Workloads and benchrun").
func TestFlamegraphHTMLInAnyCase(t *testing.T) {
	chdirRoot(t)
	flame := filepath.Join(t.TempDir(), "F.HTML")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, Flamegraph: flame, Engine: &fakeEngine{spin: 50 * time.Millisecond}, Env: testEnv})
	if err != nil {
		t.Fatalf("--flamegraph F.HTML: %v", err)
	}
	if page, err := os.ReadFile(flame); err != nil || !strings.Contains(string(page), "</html>") {
		t.Errorf("--flamegraph F.HTML wrote no page (%d bytes, %v)", len(page), err)
	}
}

// TestDashIsNoStandardOutput: "-" names no standard output, as it names
// no standard input (docs/spec.md "Decoding is strict"): --out -, --cpuprofile
// -, --memprofile -, --flamegraph - and gen --out - exit 2 saying so,
// naming the flag, where run and gen made a file or directory named "-"
// in the working directory. ./- is such a file, and is written.
func TestDashIsNoStandardOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	for i, cfg := range []RunConfig{{OutFile: "-"}, {CPUProfile: "-"}, {MemProfile: "-"}, {Flamegraph: "-"}} {
		flag := []string{"--out", "--cpuprofile", "--memprofile", "--flamegraph"}[i]
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"lookup"}, Workers: 1}, 1, ProgressOff
		var stdout, stderr bytes.Buffer
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &stdout, &stderr, &fakeEngine{}, testEnv
		err := Run(context.Background(), cfg)
		if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), flag+`: "-" is no name of standard output`) || stdout.Len() != 0 {
			t.Errorf("%s -: err = %v (exit %d), stdout %q; want exit 2 saying - is no name of standard output", flag, err, ExitCode(err), stdout.String())
		}
	}
	var out bytes.Buffer
	err := Gen(context.Background(), GenConfig{Out: &out, Spec: "lookup", Dir: "-"})
	if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `--out: "-" is no name of standard output`) || out.Len() != 0 {
		t.Errorf("gen --out -: err = %v (exit %d), stdout %q; want exit 2 saying - is no name of standard output", err, ExitCode(err), out.String())
	}
	if _, err := os.Lstat("-"); !os.IsNotExist(err) {
		t.Errorf("a file or directory named - was made (%v)", err)
	}
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"lookup"}, Workers: 1},
		Count: 1, Progress: ProgressOff, OutFile: "./-", Engine: &fakeEngine{}, Env: testEnv}); err != nil {
		t.Fatalf("--out ./-: %v", err)
	}
	if data, err := os.ReadFile("-"); err != nil || !bytes.Equal(data, stdout.Bytes()) {
		t.Errorf("--out ./- holds %q (%v), want the results %q", data, err, stdout.String())
	}
}

// A flame graph that cannot be drawn reads "benchrun: flame graph: " and
// what failed, naming the profile, without the package that found it
// ("benchflame: bad profile: …"), as benchcmp profile reports it; it is
// ErrFlamegraph and still the package's error.
func TestFlamegraphErrorNamesNoPackage(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "junk.pprof")
	if err := os.WriteFile(profile, []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	err := writeFlamegraph(context.Background(), profile, "", &page)
	if err == nil {
		t.Fatal("a junk profile drew a flame graph")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "benchrun: flame graph: bad profile: ") || strings.Contains(msg, "benchflame") || !strings.Contains(msg, "junk.pprof") {
		t.Errorf("error %q: want benchrun: flame graph: bad profile: naming junk.pprof, and no package name", msg)
	}
	if !errors.Is(err, ErrFlamegraph) || !errors.Is(err, benchflame.ErrProfile) {
		t.Errorf("error %q: want ErrFlamegraph and benchflame.ErrProfile", msg)
	}
	if page.Len() != 0 {
		t.Errorf("a failed flame graph wrote %d bytes", page.Len())
	}
}

// TestCheckStreamsInterrupted: the spec files a command names are decoded
// before it starts, to know their CSV inputs; a cancelled context
// (Ctrl-C) stops that with ErrInterrupted (exit 130), where a spec of
// millions of inline rows kept every command deaf to Ctrl-C for seconds,
// and explain then printed its plan and exited 0.
func TestCheckStreamsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := CheckStreams(ctx, io.Discard, io.Discard, []string{evalSpec})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted {
		t.Fatalf("CheckStreams with a cancelled context: %v (exit %d), want ErrInterrupted, exit 130", err, ExitCode(err))
	}
}
