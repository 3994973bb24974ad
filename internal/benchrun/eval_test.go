package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

const evalSpec = "testdata/eval/small.json"

// evalConfigs are the configurations whose eval output must be the same
// bytes: both index modes, both joins, one and two workers.
var evalConfigs = []struct {
	index, join string
	workers     int
}{
	{IndexImported, "linear", 1}, {IndexImported, "linear", 2}, {IndexImported, "delta", 1}, {IndexImported, "delta", 2},
	{IndexDirect, "linear", 1}, {IndexDirect, "linear", 2}, {IndexDirect, "delta", 1}, {IndexDirect, "delta", 2},
}

// TestEvalGolden: the CSV and JSON output of eval equal the golden files
// in every configuration, byte for byte, twice in a row.
func TestEvalGolden(t *testing.T) {
	for _, g := range []struct{ format, at, golden string }{
		{FormatCSV, "1,2,3", "testdata/eval/small.csv"},
		{FormatJSON, "3,1,2", "testdata/eval/small.jsonl"},
	} {
		want, err := os.ReadFile(g.golden)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range evalConfigs {
			for range 2 {
				var out bytes.Buffer
				err := Eval(context.Background(), EvalConfig{Out: &out, Spec: evalSpec, At: g.at, Index: c.index, Join: c.join, Format: g.format, Workers: c.workers})
				if err != nil {
					t.Fatalf("%s %+v: %v", g.format, c, err)
				}
				if out.String() != string(want) {
					t.Errorf("%s index=%s join=%s workers=%d:\n got:\n%s\nwant:\n%s", g.format, c.index, c.join, c.workers, out.String(), want)
				}
			}
		}
	}
}

// TestEvalGoldenIsTheReference: the golden CSV is what the reference
// evaluator computes, written the same way.
func TestEvalGoldenIsTheReference(t *testing.T) {
	buf := referenceCSV(t, evalSpec, 1, 2, 3)
	want, err := os.ReadFile("testdata/eval/small.csv")
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("reference:\n%s\ngolden:\n%s", buf.String(), want)
	}
}

// TestEvalBadInput: every bad flag value and time is bad usage (exit 2)
// naming the flag, and prints nothing.
func TestEvalBadInput(t *testing.T) {
	for _, c := range []struct {
		cfg  EvalConfig
		want string
	}{
		{EvalConfig{At: "0"}, "--at: time 0 is before the spec's as_of 1"},
		{EvalConfig{At: "1,x"}, `--at: "x" is not a time`},
		{EvalConfig{At: " 1"}, `--at: " 1" is not a time`},
		{EvalConfig{At: "1, 2"}, `--at: " 2" is not a time`},
		{EvalConfig{At: "01"}, `--at: "01" is not a time`},
		{EvalConfig{At: "+1"}, `--at: "+1" is not a time`},
		{EvalConfig{At: "18446744073709551616"}, `--at: "18446744073709551616" is out of range: a time is at most 18446744073709551615`},
		{EvalConfig{At: "018446744073709551616"}, `--at: "018446744073709551616" is not a time`},
		{EvalConfig{At: ""}, "--at: is required"},
		{EvalConfig{At: "1,2,1"}, "--at: time 1 is given twice"},
		{EvalConfig{At: "1", Format: "xml"}, `--format: unknown value "xml"`},
		{EvalConfig{At: "1", Index: "both"}, `--index: unknown value "both"`},
		{EvalConfig{At: "1", Join: "hash"}, `--join: unknown value "hash"`},
	} {
		cfg := c.cfg
		var out bytes.Buffer
		cfg.Out = &out
		if cfg.Spec == "" {
			cfg.Spec = evalSpec
		}
		if cfg.Index == "" {
			cfg.Index = IndexImported
		}
		if cfg.Format == "" {
			cfg.Format = FormatCSV
		}
		if cfg.Workers == 0 {
			cfg.Workers = 1
		}
		err := Eval(context.Background(), cfg)
		if ExitCode(err) != ExitUsage || !strings.Contains(Message(err), c.want) {
			t.Errorf("%+v: got %v (exit %d), want exit 2 with %q", c.cfg, err, ExitCode(err), c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%+v: printed %q", c.cfg, out.String())
		}
	}
}

// TestEvalUntil: a time at or after until is refused; one before it is
// printed.
func TestEvalUntil(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(evalSpec)
	if err != nil {
		t.Fatal(err)
	}
	path := dir + "/until.json"
	if err := os.WriteFile(path, bytes.Replace(data, []byte(`"as_of": 1,`), []byte(`"as_of": 1, "until": 3,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = Eval(context.Background(), EvalConfig{Out: &out, Spec: path, At: "3", Index: IndexDirect, Format: FormatCSV, Workers: 1})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "not before the spec's until 3") {
		t.Fatalf("--at 3 with until 3: %v", err)
	}
	out.Reset()
	for _, index := range []string{IndexImported, IndexDirect} {
		out.Reset()
		if err := Eval(context.Background(), EvalConfig{Out: &out, Spec: path, At: "2", Index: index, Format: FormatCSV, Workers: 1}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "30,10,1,10,1") {
			t.Errorf("%s: at 2 before until 3:\n%s", index, out.String())
		}
	}
}

// TestEvalMissingIndex: imported without an index the query reads is exit
// 2 naming the collection and key set; direct runs.
func TestEvalMissingIndex(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(evalSpec)
	if err != nil {
		t.Fatal(err)
	}
	path := dir + "/missing.json"
	data = bytes.Replace(data, []byte(`,
    "sold_by_cust":     {"on": "sold",     "key": ["o_cust"]}`), nil, 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = Eval(context.Background(), EvalConfig{Out: &out, Spec: path, At: "1", Index: IndexImported, Format: FormatCSV, Workers: 1})
	if ExitCode(err) != ExitUsage || !errors.Is(err, spec.ErrInvalid) && !errors.Is(err, ErrUsage) {
		t.Fatalf("imported without indexes: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "sold(any)") || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("message does not name the file and sold's arrangement: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
	if err := Eval(context.Background(), EvalConfig{Out: &out, Spec: path, At: "1", Index: IndexDirect, Format: FormatCSV, Workers: 1}); err != nil {
		t.Fatalf("direct: %v", err)
	}
}

// TestEvalConcurrent: two evals of the same spec at once, in different
// modes, print the golden bytes (no state is shared between runs).
func TestEvalConcurrent(t *testing.T) {
	want, err := os.ReadFile("testdata/eval/small.csv")
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]bytes.Buffer, 4)
	errs := make(chan error, len(outs))
	for i := range outs {
		go func() {
			index := []string{IndexImported, IndexDirect}[i%2]
			errs <- Eval(context.Background(), EvalConfig{Out: &outs[i], Spec: evalSpec, At: "1,2,3", Index: index, Join: "linear", Format: FormatCSV, Workers: 1 + i/2})
		}()
	}
	for range outs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs {
		if outs[i].String() != string(want) {
			t.Errorf("eval %d:\n%s", i, outs[i].String())
		}
	}
}

// TestEvalInterrupted: a cancelled context stops eval with exit 130 and
// prints nothing.
func TestEvalInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Eval(ctx, EvalConfig{Out: &out, Spec: evalSpec, At: "1", Index: IndexImported, Format: FormatCSV, Workers: 1})
	if ExitCode(err) != ExitInterrupted || out.Len() != 0 {
		t.Fatalf("got %v (exit %d), printed %q", err, ExitCode(err), out.String())
	}
}

// TestEvalInterruptedAfterTheQuery: a Ctrl-C that comes while eval
// reads the query's finished output at each time (Session.Result takes
// no context, and at millions of rows takes seconds) stops eval with
// exit 130 and prints nothing, where it printed every time and exited 0.
func TestEvalInterruptedAfterTheQuery(t *testing.T) {
	orig := evaluateWorkload
	t.Cleanup(func() { evaluateWorkload = orig })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evaluateWorkload = func(c context.Context, s *spec.Spec, tables []*spec.Table, opts workloads.SessionOptions, times []uint64) ([]*reference.Result, []render.StageErrors, error, error) {
		res, stages, leak, err := orig(c, s, tables, opts, times)
		cancel() // the signal, once the query has finished
		return res, stages, leak, err
	}
	var out bytes.Buffer
	err := Eval(ctx, EvalConfig{Out: &out, Spec: evalSpec, At: "1,2", Index: IndexImported, Format: FormatCSV, Workers: 1})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted || out.Len() != 0 {
		t.Fatalf("eval interrupted after its query: %v (exit %d), printed %q; want ErrInterrupted, exit 130, nothing printed", err, ExitCode(err), out.String())
	}
}

// TestEvalInterruptedWhilePrinting: a Ctrl-C while eval prints a large
// output stops it at the next time's section, exit 130, the sections
// printed whole, where it printed every time and exited 0.
func TestEvalInterruptedWhilePrinting(t *testing.T) {
	orig := evaluateWorkload
	t.Cleanup(func() { evaluateWorkload = orig })
	evaluateWorkload = func(_ context.Context, _ *spec.Spec, _ []*spec.Table, _ workloads.SessionOptions, times []uint64) ([]*reference.Result, []render.StageErrors, error, error) {
		var res []*reference.Result
		for _, tm := range times {
			r := &reference.Result{Time: tm, Columns: []string{"s.o_cust", "total", "n", "lo"}}
			for i := range 10000 { // far more than a bufio.Writer holds
				r.Rows = append(r.Rows, reference.Row{Values: []int64{int64(i), 1, 1, 1}, Diff: 1})
			}
			res = append(res, r)
		}
		return res, nil, nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		cancel() // the signal, once the first bytes are out
		return out.Write(p)
	})
	err := Eval(ctx, EvalConfig{Out: w, Spec: evalSpec, At: "1,2", Index: IndexImported, Format: FormatCSV, Workers: 1})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted {
		t.Fatalf("eval interrupted while printing: %v (exit %d); want ErrInterrupted, exit 130", err, ExitCode(err))
	}
	if got := out.String(); strings.Contains(got, "# time=2") || !strings.HasSuffix(got, "# errors time=1\nerror,diff\n") {
		t.Errorf("eval interrupted while printing time 1 printed %d bytes ending in %q; want time 1 whole and nothing of time 2", len(got), got[max(0, len(got)-80):])
	}
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestEvalBuiltin: eval takes a built-in workload's name like the other
// commands, printing what its spec file prints; a workload of several
// specs names them (exit 2), as does an unknown name.
func TestEvalBuiltin(t *testing.T) {
	chdirRoot(t)
	eval := func(target string) (string, error) {
		var out bytes.Buffer
		err := Eval(context.Background(), EvalConfig{Out: &out, Spec: target, At: "0,9", Index: IndexImported, Format: FormatCSV, Workers: 1})
		return out.String(), err
	}
	want, err := eval("workloads/examples/groupby.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval("groupby")
	if err != nil || got != want || !strings.HasPrefix(got, "# time=0\n") {
		t.Errorf("eval groupby: %v\n%.200s\nwant the spec file's\n%.200s", err, got, want)
	}
	for _, tc := range []struct{ target, want string }{
		{"dd", "benchrun: dd: a workload of 5 specs; eval runs one: name one of workloads/examples/dd_arrange.json, workloads/examples/dd_count.json, "},
		{"groupbyy", `benchrun: groupbyy: workloads: unknown name: no built-in workload "groupbyy"`},
	} {
		out, err := eval(tc.target)
		if ExitCode(err) != ExitUsage || !strings.HasPrefix(Message(err), tc.want) || out != "" {
			t.Errorf("eval %s: %v (exit %d), stdout %q; want exit 2 and %q", tc.target, err, ExitCode(err), out, tc.want)
		}
	}
}

// TestCheckSaysWhenImportedDidNotRun checks that a spec with no index
// serving its query is checked in direct mode only and that its "ok" line
// says so, naming the arrangements no index serves, while a spec whose
// arrangements are all served says nothing of the kind.
func TestCheckSaysWhenImportedDidNotRun(t *testing.T) {
	chdirRoot(t)
	path := withoutIndexes(t, "workloads/examples/lookup.json")
	for _, tc := range []struct {
		target string
		note   bool
	}{{path, true}, {"workloads/examples/lookup.json", false}} {
		var out bytes.Buffer
		if err := Check(context.Background(), CheckConfig{Out: &out, Targets: []string{tc.target}}); err != nil {
			t.Fatalf("%s: %v\n%s", tc.target, err, out.String())
		}
		const note = "(direct only, imported not run: join="
		if got := strings.Contains(out.String(), note); got != tc.note {
			t.Errorf("%s: check says %q; want the note %q: %v", tc.target, out.String(), note, tc.note)
		}
		if tc.note && !strings.Contains(out.String(), "no index serves dims(key), facts(key)") {
			t.Errorf("%s: the note does not name the arrangement: %q", tc.target, out.String())
		}
	}
}

// withoutIndexes writes a copy of the spec file at path with its indexes
// removed, in a temporary directory, and returns the copy's path.
func withoutIndexes(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "indexes")
	bare, _ := json.Marshal(doc)
	out := filepath.Join(t.TempDir(), "bare.json")
	if err := os.WriteFile(out, bare, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEvalNamesAWorkloadsSpecsFromHere: eval of a built-in workload of
// several specs lists their files as a command run here can name them:
// from a checkout's subdirectory relative to it (it listed
// workloads/examples/..., which is no file there), and outside a checkout
// as paths of one, said so.
func TestEvalNamesAWorkloadsSpecsFromHere(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"../../core", "name one of ../workloads/examples/dd_arrange.json, ../workloads/examples/dd_count.json, "},
		{"", "name one of workloads/examples/dd_arrange.json, "},
	} {
		t.Run(tc.want[:20], func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = t.TempDir()
			}
			t.Chdir(dir)
			err := Eval(context.Background(), EvalConfig{Out: io.Discard, Spec: "dd", At: "0", Index: IndexImported, Format: FormatCSV, Workers: 1})
			msg := Message(err)
			if ExitCode(err) != ExitUsage || !strings.Contains(msg, tc.want) {
				t.Fatalf("eval dd from %s: %v; want exit 2 and %q", dir, err, tc.want)
			}
			if outside := strings.HasSuffix(msg, "(paths in a checkout of "+thisModule+", from its root)"); outside != (tc.dir == "") {
				t.Errorf("eval dd from %s: %q: said outside a checkout %v", dir, msg, outside)
			}
		})
	}
}

// TestCheckRunsATargetOnce: a workload or spec file named twice, the
// file under two spellings, is checked once, with one line, as run runs
// it once.
func TestCheckRunsATargetOnce(t *testing.T) {
	var out bytes.Buffer
	err := Check(context.Background(), CheckConfig{Out: &out, Targets: []string{evalSpec, "./" + evalSpec, evalSpec}})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 1 || !strings.HasPrefix(out.String(), "ok   "+evalSpec+": ") {
		t.Errorf("check %s ./%s %s printed %d lines, want one ok line:\n%s", evalSpec, evalSpec, evalSpec, n, out.String())
	}
}

// TestEvalExtremeGolden: eval prints, in every configuration and in --at
// order, rows with negative counts and int64 bounds sorted as numbers,
// two error messages at one time sorted by message, an error that
// cancels out later, and empty errors as an empty section or array; at
// until-1 too. The golden CSV is what the reference evaluator computes.
func TestEvalExtremeGolden(t *testing.T) {
	const file, at = "testdata/eval/extreme.json", "3,1,2"
	for _, g := range []struct{ format, golden string }{
		{FormatCSV, "testdata/eval/extreme.csv"},
		{FormatJSON, "testdata/eval/extreme.jsonl"},
	} {
		want, err := os.ReadFile(g.golden)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range evalConfigs {
			var out bytes.Buffer
			if err := Eval(context.Background(), EvalConfig{Out: &out, Spec: file, At: at, Index: c.index, Join: c.join, Format: g.format, Workers: c.workers}); err != nil {
				t.Fatalf("%s %+v: %v", g.format, c, err)
			}
			if out.String() != string(want) {
				t.Errorf("%s index=%s join=%s workers=%d:\n got:\n%s\nwant:\n%s", g.format, c.index, c.join, c.workers, out.String(), want)
			}
		}
	}
	buf := referenceCSV(t, file, 3, 1, 2)
	if want, _ := os.ReadFile("testdata/eval/extreme.csv"); buf.String() != string(want) {
		t.Errorf("reference:\n%s\ngolden:\n%s", buf.String(), want)
	}
}

// TestCheckSaysWhatDiffers: a workload that differs from the reference
// gets a FAIL line and its differences, the others still run and get
// their ok line, and check fails with exit 1 saying how many failed.
func TestCheckSaysWhatDiffers(t *testing.T) {
	chdirRoot(t)
	const diff = "eval_small: index=imported join=linear workers=1: time=3: 10,20,1,20: want diff 1, got 2"
	orig := checkWorkload
	t.Cleanup(func() { checkWorkload = orig })
	checkWorkload = func(ctx context.Context, s *spec.Spec, tables []*spec.Table, cases []workloads.CheckCase) (workloads.CheckReport, error) {
		if s.Name == "eval_small" {
			return workloads.CheckReport{Diffs: []string{diff}}, nil
		}
		return orig(ctx, s, tables, cases)
	}
	small, extreme := "internal/benchrun/"+evalSpec, "internal/benchrun/testdata/eval/extreme.json"
	var out bytes.Buffer
	err := Check(context.Background(), CheckConfig{Out: &out, Targets: []string{small, extreme}})
	if !errors.Is(err, ErrCheckFailed) || ExitCode(err) != ExitFailed || !strings.Contains(err.Error(), "1 of 2 workloads failed") {
		t.Errorf("check: %v (exit %d), want ErrCheckFailed, exit 1, saying 1 of 2 workloads failed", err, ExitCode(err))
	}
	want := "FAIL " + small + "\n     " + diff + "\nok   " + extreme + ": "
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("check printed\n%s\nwant it to begin\n%s", out.String(), want)
	}
}

// TestCheckSaysHowManyTimesItCompared: a workload's ok line says at how
// many times the output was compared with the reference and, where that
// is fewer than the input times, at how many every configuration was
// compared with the first.
func TestCheckSaysHowManyTimesItCompared(t *testing.T) {
	chdirRoot(t)
	orig := checkWorkload
	t.Cleanup(func() { checkWorkload = orig })
	checkWorkload = func(ctx context.Context, s *spec.Spec, tables []*spec.Table, cases []workloads.CheckCase) (workloads.CheckReport, error) {
		if s.Name == "eval_small" {
			return workloads.CheckReport{ReferenceTimes: 10, CrossTimes: 100}, nil
		}
		return workloads.CheckReport{ReferenceTimes: 1, CrossTimes: 1}, nil
	}
	small, extreme := "internal/benchrun/"+evalSpec, "internal/benchrun/testdata/eval/extreme.json"
	var out bytes.Buffer
	if err := Check(context.Background(), CheckConfig{Out: &out, Targets: []string{small, extreme}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ok   "+small+": ") || !strings.HasSuffix(lines[0], " agree with the reference at 10 times and with each other at 100") ||
		!strings.HasPrefix(lines[1], "ok   "+extreme+": ") || !strings.HasSuffix(lines[1], " agree with the reference at 1 time") {
		t.Errorf("check printed\n%s\nwant one line a workload, the first saying 10 times and 100, the second 1 time", out.String())
	}
}

// referenceCSV is what the reference evaluator computes for the spec file
// at each of the times, in that order, written as eval writes CSV.
func referenceCSV(t *testing.T, file string, times ...uint64) *bytes.Buffer {
	t.Helper()
	s, err := spec.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := workloads.Load(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for _, tm := range times {
		r, err := reference.Eval(s.Plan, workloads.ReferenceInputs(s, tables), tm)
		if err != nil {
			t.Fatal(err)
		}
		writeCSV(w, r)
	}
	w.Flush()
	return &buf
}

// TestCheckStopsAtCtrlC: check returns ErrInterrupted (exit 130) as soon
// as its context is cancelled, while a comparison that takes no context
// (the reference evaluator's, over a large input) is still running, where
// it waited for the comparison to end: 13.7 s at 10M generated rows.
func TestCheckStopsAtCtrlC(t *testing.T) {
	chdirRoot(t)
	orig := checkWorkload
	t.Cleanup(func() { checkWorkload = orig })
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 1)
	checkWorkload = func(context.Context, *spec.Spec, []*spec.Table, []workloads.CheckCase) (workloads.CheckReport, error) {
		started <- struct{}{}
		<-release // a reference evaluation, deaf to the context
		return workloads.CheckReport{}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- Check(ctx, CheckConfig{Out: &out, Targets: []string{"internal/benchrun/" + evalSpec}}) }()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted || out.Len() != 0 {
			t.Errorf("check after Ctrl-C: %v (exit %d), output %q; want ErrInterrupted, exit 130, no line", err, ExitCode(err), out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("check still waits for a comparison 10 s after its context was cancelled")
	}
}
