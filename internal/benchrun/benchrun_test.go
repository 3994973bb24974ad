package benchrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/perf/benchfmt"

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
		{Selection{Workers: 1, Params: []string{"rows"}}, `--param: "rows" is not key=value`},
		{Selection{Workers: 1, Params: []string{"rows=abc"}}, `--param: rows=abc: "abc" is not a decimal integer`},
		{Selection{Workers: 1, Params: []string{"rows=1.5"}}, `--param: rows=1.5: 1.5 is not an integer`},
		{Selection{Workers: 1, Params: []string{"rows=1", "rows=2"}}, `--param: rows is given twice`},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"edges=5"}}, `--param: edges=5: no selected workload has a parameter edges`},
		{Selection{Workers: 1, Targets: []string{"nope"}}, `run: workloads: unknown name: no built-in workload "nope"`},
		{Selection{Workers: 1, Targets: []string{"lookup"}, Params: []string{"keys=0"}}, "workloads/examples/lookup.json:9: inputs.facts.generate.columns.key.max: max -1 is below min 0 (with parameters keys=0, rows=10000)"},
		{Selection{Workers: 1, Targets: []string{"missing.json"}}, "missing.json: cannot read spec"},
		{Selection{Workers: 1, Targets: []string{"workloads/spec/testdata/orders_lineitem.json"}, Params: []string{"inputs.nope.generate.rows=5"}}, "workloads/spec/testdata/orders_lineitem.json: inputs.nope.generate.rows: --param inputs.nope.generate.rows=5: the spec has no number at this field"},
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
}

func (e *fakeEngine) Sample(ctx context.Context, b *Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	e.calls++
	if e.before != nil {
		e.before(e.calls)
	}
	if err := ctx.Err(); err != nil && !e.deaf {
		return nil, err
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
	return []benchfmt.Value{{Value: 1500, Unit: "install-ns"}, {Value: float64(n), Unit: "rows"}, {Value: 0, Unit: "errors"}}, nil
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
	if e := stderr.String(); !strings.Contains(e, "3/3 samples") || strings.Contains(e, "benchrun: 1/3") || !strings.HasSuffix(e, "benchrun: 1 benchmarks, 3 samples in "+e[strings.LastIndex(e, " in ")+4:]) {
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
	if strings.Contains(stderr.String(), "1/1") || !strings.Contains(stderr.String(), "1 benchmarks, 1 samples") {
		t.Errorf("stderr with --progress off:\n%s", stderr.String())
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
		if strings.HasPrefix(strings.Join(s.Label["benchmark"], ""), "Groupby/workload=groupby/") {
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
	for _, ext := range []string{"<script src=\"http", "<link href=\"http", "<link rel=\"stylesheet\" href=\"http"} {
		if strings.Contains(html, ext) {
			t.Errorf("flame graph loads %s...: not self-contained", ext)
		}
	}
	// Without --cpuprofile the flame graph's profile is temporary.
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "benchrun-cpu-*.pprof"))
	flame2 := filepath.Join(dir, "flame2.html")
	if err := Run(context.Background(), RunConfig{Out: &stdout, ErrOut: &stderr, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
		Count: 1, Progress: ProgressOff, Flamegraph: flame2, Engine: &fakeEngine{spin: 100 * time.Millisecond}, Env: testEnv}); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "benchrun-cpu-*.pprof"))
	if _, err := os.Stat(flame2); err != nil || len(after) != len(before) {
		t.Errorf("flame graph without --cpuprofile: %v; temporary profiles %d before, %d after", err, len(before), len(after))
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
