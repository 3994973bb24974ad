package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracebench/tracebench/internal/benchcmp"
	"github.com/tracebench/tracebench/internal/benchflame"
)

func TestMain(m *testing.M) {
	benchflame.RunChildIfRequested()
	code := m.Run()
	removeBinaries()
	os.Exit(code)
}

// fixtures are the files the examples name, from the packages' testdata.
var fixtures = map[string]string{
	"old.txt":        "../../internal/benchcmp/testdata/regress-old.txt",
	"new.txt":        "../../internal/benchcmp/testdata/regress-new.txt",
	"run.txt":        "../../internal/benchcmp/testdata/suite.txt",
	"shard0.txt":     "../../internal/benchcmp/testdata/shard0.txt",
	"shard1.txt":     "../../internal/benchcmp/testdata/shard1.txt",
	"batch.txt":      "../../internal/benchcmp/testdata/batch-a.txt",
	"bad-line.txt":   "../../internal/benchcmp/testdata/bad-line.txt",
	"direct.pprof":   "../../internal/benchflame/testdata/direct.pprof",
	"imported.pprof": "../../internal/benchflame/testdata/imported.pprof",
}

// inFixtureDir runs the rest of the test in a temporary directory holding
// the fixtures under the names the examples use.
func inFixtureDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range fixtures {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

// shellWords splits an example command line as a POSIX shell would for the
// quoting the examples use: single quotes, and a final "> FILE" redirect.
func shellWords(t *testing.T, line string) (args []string, redirect string) {
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ' || r == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in example %q", line)
	}
	if inWord {
		args = append(args, cur.String())
	}
	if n := len(args); n >= 2 && args[n-2] == ">" {
		redirect, args = args[n-1], args[:n-2]
	}
	return args, redirect
}

// examples returns every example command line of cmd and its subcommands.
func examples(cmd *cobra.Command) []string {
	var out []string
	for _, line := range strings.Split(cmd.Example, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "benchcmp ") {
			out = append(out, l)
		}
	}
	for _, c := range cmd.Commands() {
		out = append(out, examples(c)...)
	}
	return out
}

// TestExamples runs every example of every --help, so that the help cannot
// rot: each must succeed (exit 0), except the CI gate, which must find the
// regression in the fixtures (exit 1); and each must write something.
func TestExamples(t *testing.T) {
	dir := inFixtureDir(t)
	root := newRoot(io.Discard, io.Discard, &interruption{})
	exs := examples(root)
	if len(exs) < 8 {
		t.Fatalf("found %d examples, want every command to have at least one", len(exs))
	}
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c.Name() != "help" && c.Name() != "completion" && !strings.Contains(c.Example, "benchcmp ") {
			t.Errorf("command %q has no example in its --help", c.Name())
		}
	}
	for _, ex := range exs {
		t.Run(ex, func(t *testing.T) {
			args, redirect := shellWords(t, ex)
			var out, errOut bytes.Buffer
			code := run(args[1:], &out, &errOut)
			want := 0
			if strings.Contains(ex, "--fail-on regression") {
				want = 1
			}
			if code != want {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, want, errOut.String())
			}
			if redirect != "" {
				if err := os.WriteFile(filepath.Join(dir, redirect), out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(redirect, ".html") && !bytes.Contains(out.Bytes(), []byte("<svg")) {
					t.Errorf("%s has no chart", redirect)
				}
			}
			written := out.Len()
			for _, a := range args {
				if strings.HasSuffix(a, ".html") {
					st, err := os.Stat(filepath.Join(dir, a))
					if err != nil {
						t.Fatalf("example did not write %s: %v", a, err)
					}
					written += int(st.Size())
				}
			}
			if written == 0 {
				t.Error("example wrote nothing")
			}
		})
	}
}

func TestExitCodesAndMessages(t *testing.T) {
	inFixtureDir(t)
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"old.txt", "new.txt"}, 0, "regression", ""},
		{[]string{"--fail-on", "regression", "--threshold", "install-ns=5", "old.txt", "new.txt"}, 1, "regression", "benchcmp: regression: 2 significant change(s)"},
		{[]string{"--fail-on", "regression", "--threshold", "install-ns=30", "old.txt", "new.txt"}, 0, "worse", ""},
		{[]string{"old.txt", "bad-line.txt"}, 2, "", "bad-line.txt:5"},
		{[]string{"old.txt", "missing.txt"}, 2, "", "missing.txt"},
		{[]string{"old.txt"}, 2, "", "at least two"},
		// A flag that took a file for its value is named first: the
		// count of files left would blame the files.
		{[]string{"--fail-on", "old.txt", "new.txt"}, 2, "", `--fail-on "old.txt": the only value is regression`},
		{[]string{"--format", "old.txt", "new.txt"}, 2, "", `--format "old.txt": must be one of`},
		{[]string{"--fail-on", "old.txt"}, 2, "", `--fail-on "old.txt": the only value is regression`},
		{[]string{"old.txt", "=new.txt"}, 2, "", `empty label in "=new.txt"`},
		{[]string{"--no-such-flag", "old.txt", "new.txt"}, 2, "", "unknown flag"},
		{[]string{"--alpha", "x", "old.txt", "new.txt"}, 2, "", "invalid argument"},
		{[]string{"--alpha", "1e-400", "old.txt", "new.txt"}, 2, "", `"1e-400" for "--alpha" flag: 1e-400 is too small`},
		{[]string{"--confidence", "1e400", "old.txt", "new.txt"}, 2, "", `"1e400" for "--confidence" flag`},
		// Below 1 as written, 1 as a float64 reads it: named as typed,
		// not as the 1 a range check would see.
		{[]string{"--alpha", "0.99999999999999999999", "old.txt", "new.txt"}, 2, "", `"0.99999999999999999999" for "--alpha" flag: 0.99999999999999999999 is below 1, but a float64 reads it as 1: must be in (0, 1)`},
		{[]string{"--confidence", "9999999999999999999e-19", "old.txt", "new.txt"}, 2, "", `9999999999999999999e-19 is below 1, but a float64 reads it as 1`},
		{[]string{"scaling", "--by", "/rows", "--confidence", "0.99999999999999999999", "run.txt"}, 2, "", `0.99999999999999999999 is below 1, but a float64 reads it as 1`},
		{[]string{"--alpha", "1.0", "old.txt", "new.txt"}, 2, "", `--alpha 1: must be in (0, 1)`},
		{[]string{"scaling", "--by", "/rows", "--flag-above", "0.99999999999999999999", "run.txt"}, 0, "", ""},
		// Go literal syntax is not decimal: 0_05 would read as 5, 0x1p-5
		// as 0.03125.
		{[]string{"--alpha", "0_05", "old.txt", "new.txt"}, 2, "", `"0_05" for "--alpha" flag: not a decimal number`},
		{[]string{"--alpha", "0x1p-5", "old.txt", "new.txt"}, 2, "", `"0x1p-5" for "--alpha" flag: not a decimal number`},
		{[]string{"--alpha", "5e-2", "old.txt", "new.txt"}, 0, "alpha 0.05", ""},
		{[]string{"scaling", "--by", "/rows", "--flag-above", "0x1p-3", "run.txt"}, 2, "", `"0x1p-3" for "--flag-above" flag: not a decimal number`},
		{[]string{"--threshold", "*=1_0", "old.txt", "new.txt"}, 2, "", `--threshold "*=1_0": PCT must be a finite number >= 0 in decimal`},
		{[]string{"--threshold", "*=-0", "old.txt", "new.txt"}, 0, "threshold 0%;", ""},
		{[]string{"scaling", "--by", "/rows", "--flag-above", "-0.0e-999", "run.txt"}, 0, "", ""},
		{[]string{"scaling", "--by", "/rows", "--flag-above", "2e-999", "run.txt"}, 2, "", "2e-999 is too small"},
		{[]string{"--format", "xml", "old.txt", "new.txt"}, 2, "", "--format"},
		{[]string{"merge"}, 2, "", "at least one file"},
		{[]string{"merge", "shard0.txt", "bad-line.txt"}, 2, "", "bad-line.txt:5"},
		{[]string{"scaling", "run.txt"}, 2, "", "--by"},
		{[]string{"scaling", "--by", "/rows", "bad-line.txt"}, 2, "", "bad-line.txt:5"},
		{[]string{"profile", "imported.pprof"}, 2, "", "--base"},
		{[]string{"profile", "--base", "direct.pprof", "--flamegraph", "x.html"}, 2, "", "one profile"},
		{[]string{"profile", "--base", "old.txt", "imported.pprof", "--flamegraph", "x.html"}, 2, "", "old.txt"},
		{[]string{"--help"}, 0, "Examples:", ""},
		{[]string{"profile", "--help"}, 0, "--flamegraph diff.html", ""},
		// A help topic or completion shell that names nothing is bad
		// usage, where cobra's own commands printed a help with exit 0.
		{[]string{"help", "merge"}, 0, "merge writes the results", ""},
		{[]string{"help", "nosuch"}, 2, "", `unknown help topic "nosuch": not a command (see benchcmp help)`},
		{[]string{"help", "merge", "extra"}, 2, "", `unknown help topic "merge extra"`},
		{[]string{"completion", "bash"}, 0, "bash completion", ""},
		{[]string{"completion", "bsh"}, 2, "", `unknown command "bsh"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code {
			t.Errorf("benchcmp %s: exit %d, want %d\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.inStdout) {
			t.Errorf("benchcmp %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), tc.inStdout, out.String())
		}
		if !strings.Contains(errOut.String(), tc.inStderr) {
			t.Errorf("benchcmp %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut.String(), tc.inStderr)
		}
		if tc.code == 2 && strings.Contains(out.String(), "Usage:") {
			t.Errorf("benchcmp %s: printed usage on an error (SilenceUsage)", strings.Join(tc.args, " "))
		}
	}
}

// failWriter fails every write, as stdout does on a full disk (> /dev/full).
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) {
	return 0, errors.New("write /dev/stdout: no space left on device")
}

// TestExitCodesAsAUserMeetsThem runs, as a user would, the cases a user meets:
// the HTML report of the committed baseline against a run with hold gaps,
// a gate that compares nothing, a truncated file, a misspelt threshold, a
// shard merged with itself and a full disk. Exit 2 is for bad input only.
func TestExitCodesAsAUserMeetsThem(t *testing.T) {
	baseline, err := os.ReadFile(filepath.Join(repoRoot, "results", "baseline.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := inFixtureDir(t)
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("baseline.txt", string(baseline))
	// A run whose hold gaps are no longer 0: the old median is 0, the new
	// one is not, so the ratio to the baseline is not finite.
	held := strings.ReplaceAll(string(baseline), " 0 hold-gap", " 3 hold-gap")
	if held == string(baseline) {
		t.Fatal("results/baseline.txt has no hold-gap of 0 to change")
	}
	write("held.txt", held)
	write("procs4.txt", strings.Replace(string(baseline), "\ngomaxprocs: 2\n", "\ngomaxprocs: 4\n", 1))
	old := must(os.ReadFile("old.txt"))
	write("cut.txt", string(old)+"Benchm")
	lines := strings.Count(string(old), "\n") + 1

	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"--format", "html", "baseline.txt", "held.txt"}, 0, `data-chart="ratio"`, ""},
		{[]string{"--format", "html", "baseline.txt", "held.txt"}, 0, "Not drawn, ", ""},
		{[]string{"--fail-on", "regression", "baseline.txt", "procs4.txt"}, 2, "", "compared nothing, so it cannot pass: the columns differ in configuration: gomaxprocs [2 in baseline.txt; 4 in procs4.txt]"},
		{[]string{"--fail-on", "regression", "--col", "/index@(direct imported)", "--filter", "/index:imported", "run.txt"}, 2, "", `every result left after --filter "/index:imported" is in one column`},
		{[]string{"old.txt", "cut.txt"}, 2, "", "cut.txt:" + strconv.Itoa(lines) + `: "Benchm": the file ends in the middle of a benchmark line`},
		{[]string{"merge", "shard0.txt", "cut.txt"}, 2, "", "cut.txt:" + strconv.Itoa(lines)},
		{[]string{"--threshold", "instal-ns=50", "old.txt", "new.txt"}, 2, "", `--threshold "instal-ns=50": no result file has unit instal-ns; did you mean install-ns?`},
		{[]string{"--threshold", "install-ns=50", "--threshold", "install-ns=10", "old.txt", "new.txt"}, 2, "", `--threshold "install-ns=10" conflicts with --threshold "install-ns=50"`},
		{[]string{"merge", "shard0.txt", "shard0.txt"}, 0, "BenchmarkQuery", "shard0.txt and shard0.txt are the same file"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code {
			t.Errorf("benchcmp %s: exit %d, want %d\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.inStdout) {
			t.Errorf("benchcmp %s: stdout lacks %q:\n%.2000s", strings.Join(tc.args, " "), tc.inStdout, out.String())
		}
		if !strings.Contains(errOut.String(), tc.inStderr) {
			t.Errorf("benchcmp %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut.String(), tc.inStderr)
		}
		if tc.code == 2 && out.Len() > 0 {
			t.Errorf("benchcmp %s: wrote output for bad input:\n%.2000s", strings.Join(tc.args, " "), out.String())
		}
	}

	// A full disk is not bad input: exit 1, saying what failed.
	for _, args := range [][]string{
		{"old.txt", "new.txt"},
		{"--format", "html", "old.txt", "new.txt"},
		{"merge", "shard0.txt", "shard1.txt"},
		{"scaling", "--by", "/n", "batch.txt"},
		{"--help"},
		{"merge", "--help"},
		{"completion", "bash"},
	} {
		var errOut bytes.Buffer
		code := run(args, failWriter{}, &errOut)
		if want := "benchcmp: writing the output: write /dev/stdout: no space left on device\n"; code != 1 || errOut.String() != want {
			t.Errorf("benchcmp %s > /dev/full: exit %d, stderr %q; want exit 1, %q", strings.Join(args, " "), code, errOut.String(), want)
		}
	}
}

// goTestRun is go test output of two benchmarks, 6 samples each.
const goTestRun = `goos: linux
goarch: amd64
pkg: example.com/foo
BenchmarkA/size=10/k=v-2   	 1000	  694.6 ns/op
BenchmarkA/size=10/k=v-2   	 1000	  701.2 ns/op
BenchmarkA/size=10/k=v-2   	 1000	  690.0 ns/op
BenchmarkA/size=10/k=v-2   	 1000	  699.9 ns/op
BenchmarkA/size=10/k=v-2   	 1000	  705.3 ns/op
BenchmarkA/size=10/k=v-2   	 1000	  688.1 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  94.6 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  91.2 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  90.0 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  99.9 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  95.3 ns/op
BenchmarkB/size=10/k=v-2   	 1000	  98.1 ns/op
`

// TestFailedOrLostRunFailsTheGate: a new run that failed part-way (go test's
// FAIL lines, a benchmark of the baseline gone) is warned about, naming the
// file and line and the benchmarks; under --fail-on it fails the gate
// (exit 1) with the report written; a benchmark only the new run has, or a
// unit the new run lacks (no -benchmem), is a warning only.
func TestFailedOrLostRunFailsTheGate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Chdir(dir)
	lines := strings.SplitAfter(goTestRun, "\n")
	write("old.txt", goTestRun+"PASS\nok  \texample.com/foo\t0.015s\n")
	write("newfail.txt", strings.Join(lines[:9], "")+"--- FAIL: BenchmarkB/size=10/k=v-2\nFAIL\nexit status 1\nFAIL\texample.com/foo\t0.015s\n")
	write("testfail.txt", goTestRun+"--- FAIL: TestX (0.00s)\nFAIL\n")
	write("added.txt", goTestRun+strings.ReplaceAll(strings.Join(lines[3:9], ""), "BenchmarkA", "BenchmarkC"))
	// The baseline ran with -benchmem, the new run without: no benchmark
	// is lost, a unit is.
	write("mem.txt", strings.ReplaceAll(goTestRun, " ns/op\n", " ns/op\t  64 B/op\n"))
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string
		inStderr []string
	}{
		{[]string{"--fail-on", "regression", "--threshold", "*=50", "old.txt", "newfail.txt"}, 1, "B/size=10/k=v-2", []string{
			"warning: newfail.txt:10: --- FAIL: BenchmarkB/size=10/k=v-2: go test says a run failed",
			"warning: newfail.txt:11: FAIL: ",
			"warning: newfail.txt:13: FAIL example.com/foo 0.015s: ",
			"warning: benchmark set differs from the baseline, geomeans may not be comparable: newfail.txt has no result for 1 benchmark(s) of old.txt: B/size=10/k=v-2",
			"benchcmp: regression: 1 benchmark(s) of the baseline old.txt have no result to compare with (B/size=10/k=v-2); go test says a run failed (newfail.txt:10: --- FAIL: BenchmarkB/size=10/k=v-2 and 2 more)\n",
		}},
		{[]string{"old.txt", "newfail.txt"}, 0, "B/size=10/k=v-2", []string{"newfail.txt:10: --- FAIL", "newfail.txt has no result for 1 benchmark(s)"}},
		{[]string{"--format", "markdown", "old.txt", "newfail.txt"}, 0, "## benchcmp: **1 benchmark(s) of the baseline missing**, **a run failed**", nil},
		{[]string{"--fail-on", "regression", "old.txt", "testfail.txt"}, 1, "A/size=10/k=v-2", []string{"testfail.txt:16: --- FAIL: TestX", "regression: go test says a run failed (testfail.txt:16: --- FAIL: TestX (0.00s) and 1 more)"}},
		{[]string{"--fail-on", "regression", "old.txt", "added.txt"}, 0, "C/size=10/k=v-2", []string{"old.txt has no result for 1 benchmark(s) of added.txt: C/size=10/k=v-2"}},
		{[]string{"--fail-on", "regression", "mem.txt", "old.txt"}, 0, "A/size=10/k=v-2", []string{"warning: old.txt has no B/op result for 2 benchmark(s) of mem.txt that it has other results for: A/size=10/k=v-2, B/size=10/k=v-2"}},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code {
			t.Errorf("benchcmp %s: exit %d, want %d\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.inStdout) {
			t.Errorf("benchcmp %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), tc.inStdout, out.String())
		}
		for _, want := range tc.inStderr {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("benchcmp %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut.String(), want)
			}
		}
	}
}

// TestProfileRefusesItsInputsAsOutput: --flamegraph naming an input, under
// any spelling or through a symbolic or hard link, or a path that cannot be
// written (a directory, a missing directory, a directory that takes no new
// file: /proc, even for root) is bad usage naming the flag, found before any
// work: exit 2, nothing written, the input intact.
func TestProfileRefusesItsInputsAsOutput(t *testing.T) {
	dir := inFixtureDir(t)
	if err := os.Symlink("direct.pprof", "sym.pprof"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link("imported.pprof", "hard.pprof"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("sub.html", 0o755); err != nil {
		t.Fatal(err)
	}
	base := must(os.ReadFile("direct.pprof"))
	other := must(os.ReadFile("imported.pprof"))
	cases := []struct{ out, want string }{
		{"direct.pprof", "--flamegraph direct.pprof is the profile --base direct.pprof: it would be overwritten"},
		{"./direct.pprof", "--flamegraph ./direct.pprof is the profile --base"},
		{filepath.Join(dir, "direct.pprof"), "is the profile --base"},
		{"sym.pprof", "--flamegraph sym.pprof is the profile --base direct.pprof"},
		{"imported.pprof", "--flamegraph imported.pprof is the profile OTHER imported.pprof"},
		{"hard.pprof", "--flamegraph hard.pprof is the profile OTHER imported.pprof"},
		{"/nonexistent/out.html", "--flamegraph /nonexistent/out.html: its directory /nonexistent does not exist"},
		{filepath.Join(dir, "sub.html"), "--flamegraph " + filepath.Join(dir, "sub.html") + ": is a directory"},
		{"diff.svg", "--flamegraph diff.svg: must name an .html file"},
	}
	if st, err := os.Stat("/proc"); err == nil && st.IsDir() {
		cases = append(cases, struct{ out, want string }{"/proc/out.html", "--flamegraph /proc/out.html: its directory /proc takes no new file"})
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", tc.out}, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("--flamegraph %s: exit %d, stderr %q; want exit 2 with %q", tc.out, code, errOut.String(), tc.want)
		}
	}
	for _, labels := range []string{"a b", "runtime,x y"} {
		var out, errOut bytes.Buffer
		code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "out.html", "--labels=" + labels}, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "--labels") {
			t.Errorf("--labels %q: exit %d, stderr %q; want exit 2 naming --labels", labels, code, errOut.String())
		}
	}
	if _, err := os.Stat("out.html"); err == nil {
		t.Error("a refused run wrote out.html")
	}
	if !bytes.Equal(must(os.ReadFile("direct.pprof")), base) || !bytes.Equal(must(os.ReadFile("imported.pprof")), other) {
		t.Error("an input profile was overwritten")
	}
}

// TestProfileRefusesALabelKeyGivenTwice: a --labels key given twice, in
// one list or across repeated flags, is refused (exit 2 naming --labels)
// before any work; pprof drew its root frames twice, one on top of the
// other.
func TestProfileRefusesALabelKeyGivenTwice(t *testing.T) {
	inFixtureDir(t)
	for _, flags := range [][]string{
		{"--labels", "runtime,runtime"},
		{"--labels", "runtime,operator", "--labels", "runtime"},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "out.html"}, flags...)
		code := run(args, &out, &errOut)
		if want := `--labels: label key "runtime" given twice`; code != 2 || !strings.Contains(errOut.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with %q", flags, code, errOut.String(), want)
		}
		if _, err := os.Stat("out.html"); err == nil {
			t.Fatalf("%q: a refused run wrote out.html", flags)
		}
	}
}

// TestSingleValuedFlagsGivenTwiceOrEmpty: a single-valued flag given twice
// is refused (exit 2 naming it) instead of keeping the last value, which
// turned `--fail-on regression ... --fail-on=` into a gate that cannot
// fail; so is a text flag given empty, instead of meaning its default.
// The repeatable flags (--threshold, --labels) stay repeatable.
func TestSingleValuedFlagsGivenTwiceOrEmpty(t *testing.T) {
	inFixtureDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fail-on", "regression", "--fail-on", "", "old.txt", "new.txt"}, `"--fail-on" flag: the flag is given more than once`},
		{[]string{"--fail-on", "", "old.txt", "new.txt"}, `"--fail-on" flag: the value must not be empty`},
		{[]string{"--format", "text", "--format", "json", "old.txt", "new.txt"}, `"--format" flag: the flag is given more than once`},
		{[]string{"--alpha", "0.01", "--alpha=0.5", "old.txt", "new.txt"}, `"--alpha" flag: the flag is given more than once`},
		{[]string{"--col", "", "old.txt", "new.txt"}, `"--col" flag: the value must not be empty`},
		{[]string{"--strict", "--strict", "old.txt", "new.txt"}, `"--strict" flag: the flag is given more than once`},
		{[]string{"scaling", "--by", "/n", "--by", "/rows", "batch.txt"}, `"--by" flag: the flag is given more than once`},
		{[]string{"profile", "--base", "direct.pprof", "--base", "imported.pprof", "imported.pprof", "--flamegraph", "d.html"}, `"--base" flag: the flag is given more than once`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) || out.Len() != 0 {
			t.Errorf("benchcmp %q: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout, and %q", tc.args, code, out.Len(), errOut.String(), tc.want)
		}
	}
	if _, err := os.Stat("d.html"); err == nil {
		t.Error("profile wrote d.html")
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"--threshold", "*=5", "--threshold", "install-ns=10", "old.txt", "new.txt"}, &out, &errOut); code == 2 {
		t.Errorf("a repeated --threshold: exit 2: %s", errOut.String())
	}
}

// TestMergeOfAFailedShardFails: a shard in which go test says a run failed
// (its FAIL lines) fails the merge with exit 1, naming the file and line,
// instead of a warning and exit 0 that let CI go on with a partial run. The
// merged results are written whole, the FAIL lines in them where they
// were, so that a gate on the merged file fails too.
func TestMergeOfAFailedShardFails(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	lines := strings.SplitAfter(goTestRun, "\n")
	longFail := "FAIL\texample.com/foo/" + strings.Repeat("long/", 20) + "pkg\t0.015s"
	head, a, b := strings.Join(lines[:3], ""), strings.Join(lines[3:9], ""), strings.Join(lines[9:12], "")
	files := map[string]string{
		"old.txt": goTestRun + "PASS\nok  \texample.com/foo\t0.015s\n",
		"s0.txt":  head + a + "PASS\nok  \texample.com/foo\t0.015s\n",
		"s1.txt":  head + b + "--- FAIL: BenchmarkB/size=10/k=v-2\nFAIL\nexit status 1\n" + longFail + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	code := run([]string{"merge", "s0.txt", "s1.txt"}, &out, &errOut)
	if want := "benchcmp: a run failed: go test says so at s1.txt:7: --- FAIL: BenchmarkB/size=10/k=v-2 and 2 more"; code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("merge of a failed shard: exit %d, stderr %q; want exit 1 and %q", code, errOut.String(), want)
	}
	merged := out.String()
	if n := strings.Count(merged, "\nBenchmark"); n != 9 {
		t.Errorf("merged %d results, want the 9 of both shards:\n%s", n, merged)
	}
	bAt, failAt := strings.LastIndex(merged, "\nBenchmarkB/"), strings.Index(merged, "--- FAIL: BenchmarkB/size=10/k=v-2\nFAIL\n"+longFail+"\n")
	if failAt < 0 || failAt < bAt {
		t.Errorf("merged output lacks s1.txt's FAIL lines, whole, after its results:\n%s", merged)
	}
	// The failure travels with the merged file: a gate on it fails.
	if err := os.WriteFile("all.txt", out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code = run([]string{"--fail-on", "regression", "--threshold", "*=50", "old.txt", "all.txt"}, &out, &errOut)
	if want := "go test says a run failed (all.txt:"; code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("gate on the merged file: exit %d, stderr %q; want exit 1 and %q", code, errOut.String(), want)
	}
	// Shards that passed merge as before.
	out.Reset()
	errOut.Reset()
	if code := run([]string{"merge", "s0.txt", "old.txt"}, &out, &errOut); code != 0 || strings.Contains(out.String(), "FAIL") {
		t.Errorf("merge of passing runs: exit %d, stderr %q", code, errOut.String())
	}
}

// TestProfileWarnsOfItselfAsBase: a profile given as both --base and OTHER,
// under any spelling or through a link, draws a diff of zeros; it is drawn,
// with a warning that it is compared with itself, as the comparison of a
// result file with itself warns. Two different profiles draw no warning.
func TestProfileWarnsOfItselfAsBase(t *testing.T) {
	dir := inFixtureDir(t)
	if err := os.Symlink("direct.pprof", "sym.pprof"); err != nil {
		t.Fatal(err)
	}
	for i, other := range []string{"direct.pprof", "./direct.pprof", filepath.Join(dir, "direct.pprof"), "sym.pprof"} {
		var out, errOut bytes.Buffer
		html := fmt.Sprintf("self%d.html", i)
		code := run([]string{"profile", "--base", "direct.pprof", other, "--flamegraph", html}, &out, &errOut)
		want := "benchcmp: warning: --base direct.pprof and " + other + " are the same file: it is compared with itself, and every difference is zero\n"
		if code != 0 || errOut.String() != want {
			t.Errorf("profile --base direct.pprof %s: exit %d, stderr %q; want exit 0 and %q", other, code, errOut.String(), want)
		}
		if _, err := os.Stat(html); err != nil {
			t.Errorf("profile --base direct.pprof %s: %v", other, err)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "diff.html"}, &out, &errOut); code != 0 || errOut.String() != "" {
		t.Errorf("two profiles: exit %d, stderr %q; want exit 0 and no warning", code, errOut.String())
	}
}

// TestProfileWarnsOfALabelNoSampleCarries: --labels nosuch (a misspelt
// key) drew a flame graph without its frames and said nothing. A key the
// user gave that no sample of either profile carries is drawn, with a
// warning naming it; a key the samples carry, and the default keys, draw
// none.
func TestProfileWarnsOfALabelNoSampleCarries(t *testing.T) {
	inFixtureDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--labels", "nosuch"}, `benchcmp: warning: --labels "nosuch": no sample of direct.pprof or imported.pprof carries that label: the flame graph has no frames for it` + "\n"},
		{[]string{"--labels", "runtime"}, ""},
		{nil, ""},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "l.html"}, tc.args...)
		if code := run(args, &out, &errOut); code != 0 || errOut.String() != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 0 and %q", tc.args, code, errOut.String(), tc.want)
		}
		if _, err := os.Stat("l.html"); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
		os.Remove("l.html")
	}
}

// TestMergeOfAShardThatFailedBeforeAnyResult: a shard whose run failed
// before it wrote a result (a build that failed, a panic in the first
// benchmark) holds FAIL lines and no result. It is a run that failed, not
// bad input: the merge writes the other shards' results with its FAIL
// lines and exits 1 naming them, and so with every shard failed so.
func TestMergeOfAShardThatFailedBeforeAnyResult(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"s0.txt": goTestRun + "PASS\nok  \texample.com/foo\t0.015s\n",
		"s1.txt": "FAIL\texample.com/foo [build failed]\n",
		"s2.txt": "--- FAIL: BenchmarkC\n    c_test.go:9: boom\nFAIL\n",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args    []string
		want    string // on stderr
		results int
		fails   []string // in the merged output, in this order
	}{
		{[]string{"s1.txt", "s0.txt"}, "benchcmp: a run failed: go test says so at s1.txt:1: FAIL example.com/foo [build failed];", 12,
			[]string{"FAIL\texample.com/foo [build failed]\n"}},
		{[]string{"s0.txt", "s2.txt"}, "benchcmp: a run failed: go test says so at s2.txt:1: --- FAIL: BenchmarkC and 1 more;", 12,
			[]string{"--- FAIL: BenchmarkC\nFAIL\n"}},
		{[]string{"s1.txt", "s2.txt"}, "benchcmp: a run failed: go test says so at s1.txt:1: FAIL example.com/foo [build failed] and 2 more;", 0,
			[]string{"FAIL\texample.com/foo [build failed]\n--- FAIL: BenchmarkC\nFAIL\n"}},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"merge"}, tc.args...), &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "bad input") {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 1 and %q", tc.args, code, errOut.String(), tc.want)
		}
		merged := out.String()
		if n := strings.Count("\n"+merged, "\nBenchmark"); n != tc.results {
			t.Errorf("merge %v: %d results, want %d:\n%s", tc.args, n, tc.results, merged)
		}
		for _, f := range tc.fails {
			if !strings.Contains(merged, f) {
				t.Errorf("merge %v: the output lacks %q:\n%s", tc.args, f, merged)
			}
		}
	}
}

// TestCommandLineValuesAreQuotedShort: every flag value (and argument) that
// an error or warning echoes is quoted as benchrun quotes its values, at
// most its first 80 bytes and its length, a control character escaped, so
// a value of 100 KB still gets a message of a few short lines and an
// escape sequence never reaches the terminal raw. Each error is still
// exit 2 naming the flag.
func TestCommandLineValuesAreQuotedShort(t *testing.T) {
	inFixtureDir(t)
	const n = 100_000
	long := strings.Repeat("x", n)
	zeros := "0." + strings.Repeat("0", n) + "1"
	const esc = "\x1b[2J"
	files := []string{"old.txt", "new.txt"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", long}, 2, `--format "` + long[:80] + `"... (100000 bytes): must be one of`},
		{[]string{"--format", "x" + esc}, 2, `--format "x\x1b[2J": must be one of`},
		{[]string{"--fail-on", long}, 2, `--fail-on "` + long[:80] + `"... (100000 bytes): the only value is regression`},
		{[]string{"--fail-on", esc}, 2, `--fail-on "\x1b[2J": the only value`},
		{[]string{"--scale-by", long}, 2, `--scale-by "` + long[:80] + `"... (100000 bytes): want a name parameter`},
		{[]string{"--scale-by", "/" + long}, 0, `warning: --scale-by /` + long[:79] + `... (100001 bytes): only the html report`},
		{[]string{"--scale-by", "/x" + esc}, 0, `warning: --scale-by "/x\x1b[2J": only the html report`},
		{[]string{"--threshold", long}, 2, `--threshold "` + long[:80] + `"... (100000 bytes): want UNIT=PCT`},
		{[]string{"--threshold", "ns/op=" + long}, 2, `--threshold "ns/op=` + long[:74] + `"... (100006 bytes): PCT must be`},
		{[]string{"--threshold", "ns/op=" + esc}, 2, `--threshold "ns/op=\x1b[2J": PCT must be`},
		{[]string{"--threshold", long + "=5"}, 2, `--threshold "` + long[:80] + `"... (100002 bytes): no result file has unit ` + long[:80] + `... (100000 bytes) (their units`},
		{[]string{"--threshold", "x" + esc + "=5"}, 2, `--threshold "x\x1b[2J=5": no result file has unit "x\x1b[2J" (their units`},
		{[]string{"--threshold", "install-ns=5", "--threshold", "install-ns=6" + strings.Repeat(" ", n)}, 2, `--threshold "install-ns=6` + strings.Repeat(" ", 68) + `"... (100012 bytes): white space in UNIT=PCT`},
		{[]string{"--threshold", "install-ns=5", "--threshold", "install-ns=\v6"}, 2, `--threshold "install-ns=\v6": white space in UNIT=PCT`},
		{[]string{"--alpha", long}, 2, `invalid argument "` + long[:80] + `"... (100000 bytes) for "--alpha" flag`},
		{[]string{"--alpha", "x" + esc}, 2, `invalid argument "x\x1b[2J" for "--alpha" flag`},
		{[]string{"--alpha", zeros}, 2, `for "--alpha" flag: 0.` + strings.Repeat("0", 78) + `... (100003 bytes) is too small`},
		{[]string{"--confidence", zeros}, 2, `for "--confidence" flag: 0.` + strings.Repeat("0", 78) + `... (100003 bytes) is too small`},
		{[]string{"--filter", long}, 2, `--filter "` + long[:80] + `"... (100000 bytes): syntax error: expected key:value`},
		{[]string{"--filter", "x" + esc}, 2, `--filter "x\x1b[2J": syntax error`},
		{[]string{"--row", "(" + long}, 2, `--row "(` + long[:79] + `"... (100001 bytes): syntax error`},
		{[]string{"--col", "(" + long}, 2, `--col "(` + long[:79] + `"... (100001 bytes): syntax error`},
		{[]string{"--ignore", "(" + esc}, 2, `--ignore "(\x1b[2J": syntax error`},
		{[]string{"--ignore", long + ":"}, 2, `--ignore "` + long[:80] + `"... (100001 bytes): syntax error: expected key`},
		{[]string{"--fail-on", "regression", "--filter", ".name:" + long}, 2, `no result is left after --filter ".name:` + long[:74] + `"... (100006 bytes): there is nothing to compare`},
		{[]string{"--fail-on", "regression", "--col", "/x@(" + long + ")"}, 2, `no result is left after the values --col /x@(` + long[:76] + `... (100005 bytes) lists`},
		{[]string{"--fail-on", "regression", "--col", "/x@(a" + esc + ")"}, 2, `the values --col "/x@(a\x1b[2J)" lists`},
		{[]string{"--" + long}, 2, `unknown flag: --` + long[:78] + `... (100002 bytes)`},
		{[]string{"--x" + esc}, 2, `unknown flag: "--x\x1b[2J"`},
	} {
		args := append(tc.args, files...)
		if strings.HasPrefix(tc.args[0], "--fail-on") && len(tc.args) > 2 && tc.args[2] == "--col" {
			args = append(tc.args, "run.txt")
		}
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) || errOut.Len() > 1000 || strings.ContainsAny(errOut.String(), "\x1b\v") {
			t.Errorf("benchcmp %.200q: exit %d, stderr (%d bytes) %.600q; want exit %d, at most 1000 bytes, no raw control character, and %.300q",
				args, code, errOut.Len(), errOut.String(), tc.code, tc.want)
		}
	}
	// The subcommands' flags.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scaling", "--by", long, "batch.txt"}, `--by "` + long[:80] + `"... (100000 bytes): want a name parameter`},
		{[]string{"scaling", "--by", "/" + esc + "(", "batch.txt"}, `--by "/\x1b[2J(": syntax error`},
		{[]string{"scaling", "--by", "/n", "--format", long, "batch.txt"}, `--format "` + long[:80] + `"... (100000 bytes): scaling writes`},
		{[]string{"scaling", "--by", "/n", "--filter", long, "batch.txt"}, `--filter "` + long[:80] + `"... (100000 bytes): syntax error`},
		{[]string{"scaling", "--by", "/n", "--flag-above", long, "batch.txt"}, `invalid argument "` + long[:80] + `"... (100000 bytes) for "--flag-above" flag`},
		{[]string{"scaling", "--by", "/n", "--" + long, "batch.txt"}, `unknown flag: --` + long[:78] + `... (100002 bytes)`},
		{[]string{"merge", "--x" + esc, "shard0.txt"}, `unknown flag: "--x\x1b[2J"`},
		{[]string{"profile", "--base", "direct.pprof", "--labels", " " + long, "imported.pprof", "--flamegraph", "d.html"}, `--labels: label key " ` + long[:79] + `"... (100001 bytes): want`},
		{[]string{"profile", "--base", "direct.pprof", "--labels", "a " + esc, "imported.pprof", "--flamegraph", "d.html"}, `--labels: label key "a \x1b[2J": want`},
		{[]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", long + ".svg"}, `--flamegraph ` + long[:80] + `... (100004 bytes): must name an .html file`},
		{[]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "d" + esc + ".svg"}, `--flamegraph "d\x1b[2J.svg": must name an .html file`},
		{[]string{long + "=", "old.txt"}, `empty file name in "` + long[:80] + `"... (100001 bytes)`},
		{[]string{"=" + long, "old.txt"}, `empty label in "=` + long[:79] + `"... (100001 bytes)`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) || errOut.Len() > 1000 || strings.Contains(errOut.String(), "\x1b") {
			t.Errorf("benchcmp %.200q: exit %d, stderr (%d bytes) %.600q; want exit 2, at most 1000 bytes, no raw control character, and %.300q",
				tc.args, code, errOut.Len(), errOut.String(), tc.want)
		}
	}
}

// TestPathsWithControlCharactersAreEscaped: a file path holding a newline
// or an escape sequence reaches the terminal quoted and escaped wherever
// an error or warning of benchcmp names it (a file missing, unreadable,
// cut short or of bad lines, a file given twice, a column of the gate's
// reasons, a profile), never raw.
func TestPathsWithControlCharactersAreEscaped(t *testing.T) {
	dir := inFixtureDir(t)
	const bad = "a\nb\x1b[2J" // a newline and an escape sequence
	const q = `"a\nb\x1b[2J`  // as quoted, without its end
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile("old.txt")
	if err != nil {
		t.Fatal(err)
	}
	write(bad+"old.txt", string(old))
	write(bad+"nul.txt", "BenchmarkA 1 2 ns/op\n\x00\n")
	write(bad+"bom.txt", "BenchmarkA 1 2 ns/op\n\ufeffBenchmarkA 1 2 ns/op\n")
	write(bad+"syntax.txt", "BenchmarkA 1 2 ns/op\nBenchmarkA x 2 ns/op\n")
	write(bad+"iters.txt", "BenchmarkA 0 2 ns/op\n")
	write(bad+"cut.txt", "BenchmarkA 1 2 ns/op\nBenchm")
	write(bad+"none.txt", "goos: linux\n")
	write(bad+"better.txt", "Unit ns/op better=up\nBenchmarkA 1 2 ns/op\n")
	write(bad+"fail.txt", string(old)+"--- FAIL: BenchmarkX\n")
	write(bad+"lost.txt", strings.Join(strings.SplitAfter(string(old), "\n")[:14], ""))
	write(bad+"gomaxprocs.txt", strings.Replace(string(old), "gomaxprocs: 2", "gomaxprocs: 4", 1))
	for _, d := range []string{bad + "dir", bad + "dir.html"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"old.txt", bad + "missing.txt"}, 2, `bad input: ` + q + `missing.txt": no such file or directory`},
		{[]string{"old.txt", bad + "dir"}, 2, q + `dir": is a directory`},
		{[]string{"old.txt", bad + "nul.txt"}, 2, q + `nul.txt":2: a NUL byte`},
		{[]string{"old.txt", bad + "syntax.txt"}, 2, q + `syntax.txt":2: parsing iteration count`},
		{[]string{"old.txt", bad + "bom.txt"}, 2, q + `bom.txt":2: a byte order mark (U+FEFF) past the file's start`},
		{[]string{"merge", "shard0.txt", bad + "bom.txt"}, 2, q + `bom.txt":2: a byte order mark (U+FEFF) past the file's start`},
		{[]string{"old.txt", bad + "iters.txt"}, 2, q + `iters.txt":1: iteration count 0`},
		{[]string{"old.txt", bad + "cut.txt"}, 2, q + `cut.txt":2: "Benchm": the file ends in the middle`},
		{[]string{"old.txt", bad + "none.txt"}, 2, q + `none.txt": no benchmark results`},
		{[]string{"old.txt", bad + "better.txt"}, 2, q + `better.txt":1: Unit ns/op better=up`},
		{[]string{"old.txt", bad + "fail.txt"}, 0, `warning: ` + q + `fail.txt":` + strconv.Itoa(strings.Count(string(old), "\n")+1) + `: --- FAIL: BenchmarkX: go test says`},
		{[]string{"o=old.txt", "o=./old.txt", "new.txt"}, 0, `warning: old.txt and ./old.txt are the same file in column "o"`},
		{[]string{bad + "old.txt", "./" + bad + "old.txt"}, 0, `warning: ` + q + `old.txt" and "./a\nb\x1b[2Jold.txt" are the same file, read as two columns, ` + q + `old.txt" and "./a\nb\x1b[2Jold.txt"`},
		{[]string{"--fail-on", "regression", bad + "old.txt", bad + "lost.txt"}, 1, `of the baseline ` + q + `old.txt" have no result`},
		{[]string{"--fail-on", "regression", bad + "old.txt", bad + "gomaxprocs.txt"}, 2, `gomaxprocs [2 in ` + q + `old.txt"; 4 in ` + q + `gomaxprocs.txt"]`},
		{[]string{"old.txt", bad + "lost.txt"}, 0, `warning: benchmark set differs from the baseline, geomeans may not be comparable: ` + q + `lost.txt" has no result`},
		{[]string{"merge", "shard0.txt", bad + "missing.txt"}, 2, `bad input: ` + q + `missing.txt": no such file`},
		{[]string{"merge", "shard0.txt", bad + "syntax.txt"}, 2, q + `syntax.txt":2: parsing iteration count`},
		{[]string{"merge", bad + "old.txt", bad + "old.txt"}, 0, `merge: ` + q + `old.txt" and ` + q + `old.txt" are the same file`},
		{[]string{"merge", "shard0.txt", bad + "none.txt"}, 2, q + `none.txt": no benchmark results`},
		{[]string{"scaling", "--by", "/rows", bad + "syntax.txt"}, 2, q + `syntax.txt":2: parsing iteration count`},
		{[]string{"scaling", "--by", "/nope", bad + "old.txt"}, 2, q + `old.txt":13: Query/workload=star`},
		{[]string{"profile", "--base", bad + "missing.pprof", "imported.pprof", "--flamegraph", "d.html"}, 2, q + `missing.pprof": no such file`},
		{[]string{"profile", "--base", bad + "old.txt", "imported.pprof", "--flamegraph", "d.html"}, 2, q + `old.txt": parsing profile`},
		{[]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", bad + "dir"}, 2, `--flamegraph ` + q + `dir": must name an .html file`},
		{[]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", bad + "dir.html"}, 2, `--flamegraph ` + q + `dir.html": is a directory`},
		{[]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", bad + "no/d.html"}, 2, `--flamegraph ` + q + `no/d.html": its directory ` + q + `no" does not exist`},
		{[]string{"profile", "--base", bad + "old.txt", bad + "old.txt", "--flamegraph", bad + "old.txt"}, 2, `--flamegraph ` + q + `old.txt" is the profile --base ` + q + `old.txt": it would be overwritten`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "\x1b") {
			t.Errorf("benchcmp %q: exit %d, stderr %q; want exit %d, no raw control character, and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}

// TestGateAtTinyThresholds: the gate fails on a change past its
// threshold and passes one of exactly the threshold, however the
// arithmetic rounds it, at every threshold: 10 to 11 ns/op at 10%, and at
// thresholds far below 1e-5%, where the rounding of the ratio (a few
// units in its last place, about 1e-14%) is no longer small beside the
// threshold: 1e9 to 1e9+1 ns/op is exactly 1e-7% and computes to
// 1.000000082740371e-07%. A change a hair past a tiny threshold, and any
// change at a threshold of 0, still fails it.
func TestGateAtTinyThresholds(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		old, new, threshold string
		code                int
	}{
		{"10 ns/op", "11 ns/op", "10", 0},
		{"10 ns/op", "11 ns/op", "9.999", 1},
		{"100000000 ns/op", "100000003 ns/op", "3e-6", 0},
		{"1000000000 ns/op", "1000000001 ns/op", "1e-7", 0},
		{"1000000000 ns/op", "1000000003 ns/op", "3e-7", 0},
		{"10000000000000 ns/op", "10000000000001 ns/op", "1e-11", 0},
		{"100000000000000 ns/op", "100000000000003 ns/op", "3e-12", 0},
		{"1000000000 ns/op", "1000000002 ns/op", "1e-7", 1},
		{"1000000000 ns/op", "1000000001 ns/op", "9.9e-8", 1},
		{"10000000000000 ns/op", "10000000000002 ns/op", "1e-11", 1},
		{"1000000000000000 ns/op", "1000000000000001 ns/op", "0", 1},
		{"1000000000000000 ns/op", "1000000000000001 ns/op", "1e-20", 1},
		{"0 B/op", "16 B/op", "1.7976931348623157e308", 1},
	} {
		var o, n strings.Builder
		for range 8 {
			fmt.Fprintf(&o, "BenchmarkT 1 %s\n", tc.old)
			fmt.Fprintf(&n, "BenchmarkT 1 %s\n", tc.new)
		}
		old, new := filepath.Join(dir, fmt.Sprintf("old%d.txt", i)), filepath.Join(dir, fmt.Sprintf("new%d.txt", i))
		if err := os.WriteFile(old, []byte(o.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(new, []byte(n.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		unit := strings.Fields(tc.old)[1]
		var out, errOut bytes.Buffer
		code := run([]string{"--fail-on", "regression", "--threshold", unit + "=" + tc.threshold, "--format", "csv", old, new}, &out, &errOut)
		if code != tc.code || (code == 1) != strings.Contains(errOut.String(), "benchcmp: regression: 1 significant change(s) past their threshold") {
			t.Errorf("%s -> %s at threshold %s%%: exit %d, stderr %q; want exit %d\n%s", tc.old, tc.new, tc.threshold, code, errOut.String(), tc.code, out.String())
		}
	}
}

// TestInterruptedCompareWritesNothing: a signal (a cancelled context)
// stops a comparison blocked reading its input (a named pipe no one
// writes) with exit 130 and nothing on standard output, where the
// default action of SIGINT was the only way out, and one that waited
// for nothing but the signal.
func TestInterruptedCompareWritesNothing(t *testing.T) {
	dir := inFixtureDir(t)
	fifo := filepath.Join(dir, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, []string{"old.txt", "fifo.txt"}, &out, &errOut) }()
	// Cancelled before it blocks, the comparison would stop before its
	// read and test less: where /proc tells, wait until a thread of this
	// process waits in the pipe's open.
	if !awaitPipeOpen(t) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != 130 || out.Len() != 0 || errOut.String() != "benchcmp: interrupted: nothing written\n" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 130, nothing written and the message", code, out.String(), errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("an interrupted comparison did not stop within 10s")
	}
	// The reader left behind reads an empty pipe and ends: it writes
	// nothing either.
	if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		w.WriteString("BenchmarkA 1 5 ns/op\n")
		w.Close()
	}
	time.Sleep(100 * time.Millisecond)
	if out.Len() != 0 {
		t.Errorf("the interrupted comparison wrote %q after all", out.String())
	}
}

// TestInterruptedProfileLeavesNothing: a signal (a cancelled context)
// during profile, at any point, leaves the flame graph whole (exit 0, the
// export done first) or not written (exit 130), and no temporary file
// beside it; one given before the export starts always stops it.
func TestInterruptedProfileLeavesNothing(t *testing.T) {
	dir := inFixtureDir(t)
	args := []string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "d.html"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errOut bytes.Buffer
	if code := runContext(ctx, args, io.Discard, &errOut); code != 130 || !strings.HasPrefix(errOut.String(), "benchcmp: interrupted") {
		t.Errorf("interrupted before the export: exit %d, stderr %q; want 130 and the message", code, errOut.String())
	}
	for _, delay := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond} {
		os.Remove("d.html")
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(delay, cancel)
		code := runContext(ctx, args, io.Discard, io.Discard)
		timer.Stop()
		cancel()
		page, err := os.ReadFile("d.html")
		switch {
		case code == 0 && (err != nil || !bytes.HasSuffix(bytes.TrimSpace(page), []byte("</html>"))):
			t.Errorf("after %v: exit 0 with d.html %d bytes (%v), want the whole page", delay, len(page), err)
		case code == 130 && err == nil:
			t.Errorf("after %v: exit 130 with d.html written", delay)
		case code != 0 && code != 130:
			t.Errorf("after %v: exit %d, want 0 or 130", delay, code)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("after %v: a temporary file is left: %s", delay, e.Name())
			}
		}
	}
}

// TestInterruptionHoldsWrites: a signal that comes once the output is
// written says so, so that the command's own status stands (the report
// is whole); a write after it writes nothing.
func TestInterruptionHoldsWrites(t *testing.T) {
	in := &interruption{}
	var out bytes.Buffer
	w := in.writer(&out)
	if _, err := w.Write([]byte("report\n")); err != nil {
		t.Fatal(err)
	}
	if !in.stop() {
		t.Errorf("stop after a whole write: want it to say the output is written")
	}
	if n, err := w.Write([]byte("more\n")); n != 0 || !errors.Is(err, benchcmp.ErrInterrupted) {
		t.Errorf("a write after stop: %d, %v; want 0 and ErrInterrupted", n, err)
	}
	if out.String() != "report\n" {
		t.Errorf("out = %q", out.String())
	}
	if (&interruption{}).stop() {
		t.Errorf("stop with nothing written: want it to say so")
	}
}

// TestStdoutIsAnInput: standard output appended to a result file the
// command reads (benchcmp old.txt new.txt >> old.txt, merge s0.txt >>
// s0.txt) got the report after the results, and one truncated by the
// shell (> old.txt) was reported as a file of no results. Each is bad
// usage naming the file, with the file as it was; a report to a file of
// its own is written.
func TestStdoutIsAnInput(t *testing.T) {
	inFixtureDir(t)
	for _, args := range [][]string{
		{"old.txt", "new.txt"},
		{"new.txt", "old.txt"},
		{"base=old.txt", "new.txt"},
		{"merge", "shard0.txt", "old.txt"},
		{"scaling", "--by", "/rows", "old.txt"},
	} {
		before := must(os.ReadFile("old.txt"))
		f, err := os.OpenFile("old.txt", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		var errOut bytes.Buffer
		code := run(args, f, &errOut)
		f.Close()
		const want = "benchcmp: bad usage: standard output is old.txt, a result file this command reads"
		if code != 2 || !strings.HasPrefix(errOut.String(), want) {
			t.Errorf("benchcmp %s >> old.txt: exit %d, stderr %q; want exit 2, %q", strings.Join(args, " "), code, errOut.String(), want)
		}
		if after := must(os.ReadFile("old.txt")); !bytes.Equal(after, before) {
			t.Errorf("benchcmp %s >> old.txt: old.txt changed", strings.Join(args, " "))
		}
	}
	f, err := os.Create("report.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errOut bytes.Buffer
	if code := run([]string{"old.txt", "new.txt"}, f, &errOut); code != 0 {
		t.Errorf("benchcmp old.txt new.txt > report.txt: exit %d, stderr %q", code, errOut.String())
	}
	if st, err := f.Stat(); err != nil || st.Size() == 0 {
		t.Errorf("report.txt: no report written (%v)", err)
	}
}

// TestStderrIsAnInput: standard error appended to a result file the
// command reads (benchcmp merge old.txt new.txt 2>> old.txt) got the
// merge's warnings after the results, with exit 0. Each is bad usage
// naming the file, with the file as it was; the refusal is written to
// standard output, not into the file, and when standard output is a
// regular file too, nowhere.
func TestStderrIsAnInput(t *testing.T) {
	inFixtureDir(t)
	for _, args := range [][]string{
		{"old.txt", "new.txt"},
		{"base=old.txt", "new.txt"},
		{"merge", "old.txt", "new.txt"},
		{"merge", "shard0.txt", "old.txt"},
		{"scaling", "--by", "/rows", "old.txt"},
		// A flag that does not parse is found before the files are looked at.
		{"--bogus", "old.txt", "new.txt"},
	} {
		// Both streams into the file (>> old.txt 2>&1): written nowhere.
		before := must(os.ReadFile("old.txt"))
		f, err := os.OpenFile("old.txt", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		code := run(args, f, f)
		f.Close()
		if after := must(os.ReadFile("old.txt")); code != 2 || !bytes.Equal(after, before) {
			t.Errorf("benchcmp %s >> old.txt 2>&1: exit %d, %q added; want exit 2 and nothing", strings.Join(args, " "), code, strings.TrimPrefix(string(after), string(before)))
		}
		for _, stdoutIsFile := range []bool{false, true} {
			before := must(os.ReadFile("old.txt"))
			f, err := os.OpenFile("old.txt", os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			out := io.Writer(&buf)
			if stdoutIsFile {
				o, err := os.Create("stdout.txt")
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close()
				out = o
			}
			code := run(args, out, f)
			f.Close()
			name := "benchcmp " + strings.Join(args, " ") + " 2>> old.txt"
			if after := must(os.ReadFile("old.txt")); !bytes.Equal(after, before) {
				t.Errorf("%s: old.txt changed: %q added", name, strings.TrimPrefix(string(after), string(before)))
			}
			want := "benchcmp: bad usage: standard error is old.txt, a result file this command reads"
			if args[0] == "--bogus" {
				want = "benchcmp: bad usage: unknown flag: --bogus"
			}
			if code != 2 {
				t.Errorf("%s: exit %d, want 2", name, code)
			}
			if !stdoutIsFile && !strings.HasPrefix(buf.String(), want) {
				t.Errorf("%s: stdout %q; want %q", name, buf.String(), want)
			}
			if stdoutIsFile {
				if b := must(os.ReadFile("stdout.txt")); len(b) != 0 {
					t.Errorf("%s > stdout.txt: %q written there; want nothing in a regular file", name, b)
				}
			}
		}
	}
}

// TestScalingWritesTextCSVOrJSON: scaling writes text, csv or json
// (README "Scaling and profiles"); the comparison's markdown and html are
// bad usage naming the flag, with nothing written, not a report of
// another kind.
func TestScalingWritesTextCSVOrJSON(t *testing.T) {
	inFixtureDir(t)
	for format, code := range map[string]int{"text": 0, "csv": 0, "json": 0, "markdown": 2, "html": 2} {
		var out, errOut bytes.Buffer
		got := run([]string{"scaling", "--by", "/rows", "--format", format, "run.txt"}, &out, &errOut)
		if got != code {
			t.Errorf("scaling --format %s: exit %d, want %d: %s", format, got, code, errOut.String())
		}
		if code == 2 && (out.Len() != 0 || !strings.Contains(errOut.String(), `--format "`+format+`": scaling writes text, csv or json`)) {
			t.Errorf("scaling --format %s: stdout %q, stderr %q; want nothing written and the flag named", format, out.String(), errOut.String())
		}
		if code == 0 && out.Len() == 0 {
			t.Errorf("scaling --format %s wrote nothing", format)
		}
	}
}

// TestThresholdTakesAPercentSign: a --threshold's PCT may end in `%`
// (README "Gate CI"): `sec/op=5%` gates as `sec/op=5` does.
func TestThresholdTakesAPercentSign(t *testing.T) {
	inFixtureDir(t)
	var reports []string
	for _, th := range []string{"install-ns=5", "install-ns=5%"} {
		var out, errOut bytes.Buffer
		code := run([]string{"--fail-on", "regression", "--threshold", th, "old.txt", "new.txt"}, &out, &errOut)
		if code != 1 {
			t.Errorf("--threshold %s: exit %d, want 1 (the fixtures' regression): %s", th, code, errOut.String())
		}
		reports = append(reports, out.String())
	}
	if reports[0] != reports[1] {
		t.Errorf("install-ns=5%% reports\n%s\nwhere install-ns=5 reports\n%s", reports[1], reports[0])
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"--threshold", "install-ns=5%%", "old.txt", "new.txt"}, &out, &errOut); code != 2 {
		t.Errorf("--threshold install-ns=5%%%%: exit %d, want 2", code)
	}
}

// TestDashIsNoStandardInput: "-" names no standard input, which a result
// file is read from as /dev/stdin (README "Compare two commits"); a
// missing "-" is bad input saying so, in every subcommand that reads
// result files.
func TestDashIsNoStandardInput(t *testing.T) {
	inFixtureDir(t)
	for _, args := range [][]string{
		{"-", "new.txt"}, {"old.txt", "-"}, {"--col", "/index", "-"},
		{"merge", "shard0.txt", "-"}, {"scaling", "--by", "/rows", "-"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), `-: no such file or directory (standard input is not "-": name it /dev/stdin)`) {
			t.Errorf("benchcmp %s: exit %d, stdout %q, stderr %q; want exit 2 saying standard input is /dev/stdin", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"old.txt", "missing.txt"}, &out, &errOut); code != 2 || strings.Contains(errOut.String(), "standard input") {
		t.Errorf("a missing file other than -: exit %d, stderr %q; want exit 2 without a word of standard input", code, errOut.String())
	}
}

// TestMissingFileOneWording: a file that is not there is reported alike
// by every subcommand, "benchcmp: bad input: FILE: no such file or
// directory", where compare and scaling said "stat FILE" and merge "open
// FILE", naming the call that found it (README "Compare two commits").
func TestMissingFileOneWording(t *testing.T) {
	inFixtureDir(t)
	const want = "benchcmp: bad input: missing.txt: no such file or directory\n"
	for _, args := range [][]string{
		{"missing.txt", "new.txt"}, {"old.txt", "missing.txt"}, {"--col", "/index", "missing.txt"},
		{"o=old.txt", "n=missing.txt"},
		{"merge", "shard0.txt", "missing.txt"}, {"scaling", "--by", "/rows", "missing.txt"},
		{"profile", "--base", "missing.txt", "imported.pprof", "--flamegraph", "d.html"},
		{"profile", "--base", "direct.pprof", "missing.txt", "--flamegraph", "d.html"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != 2 || out.Len() != 0 || errOut.String() != want {
			t.Errorf("benchcmp %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, out.String(), errOut.String(), want)
		}
	}
	if _, err := os.Stat("d.html"); !os.IsNotExist(err) {
		t.Errorf("a profile missing left d.html behind (%v)", err)
	}
}

// TestReadErrorNamesTheFileOnce: a file whose reading fails partway (on
// Linux, /proc/self/mem reads with an I/O error) is named once,
// "benchcmp: bad input: FILE: input/output error", where the read's own
// error named it again ("FILE: read FILE: …").
func TestReadErrorNamesTheFileOnce(t *testing.T) {
	inFixtureDir(t)
	const mem = "/proc/self/mem"
	if _, err := os.Stat(mem); err != nil {
		t.Skipf("no %s here: %v", mem, err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"old.txt", mem}, &out, &errOut)
	if msg := errOut.String(); code != 2 || !strings.Contains(msg, "bad input: "+mem+": ") || strings.Count(msg, mem) != 1 {
		t.Errorf("benchcmp old.txt %s: exit %d, stderr %q; want exit 2, the file named once", mem, code, msg)
	}
}

// TestProfileErrorsNameTheCommand: a profile that cannot be read is bad
// input named by its file, in a message that starts with benchcmp as
// every other one does, without the name of the package that drew it
// ("benchflame: bad profile: ").
func TestProfileErrorsNameTheCommand(t *testing.T) {
	inFixtureDir(t)
	if err := os.WriteFile("junk.pprof", []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"profile", "--base", "junk.pprof", "imported.pprof", "--flamegraph", "d.html"},
		{"profile", "--base", "direct.pprof", "junk.pprof", "--flamegraph", "d.html"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if want := "benchcmp: bad input: junk.pprof: parsing profile: "; code != 2 || !strings.HasPrefix(errOut.String(), want) || strings.Contains(errOut.String(), "benchflame") {
			t.Errorf("benchcmp %s: exit %d, stderr %q; want exit 2 and a message starting %q, naming no package", strings.Join(args, " "), code, errOut.String(), want)
		}
	}
	if _, err := os.Stat("d.html"); !os.IsNotExist(err) {
		t.Errorf("a bad profile left d.html behind (%v)", err)
	}
}

// TestNumbersTakeNoSpaces: --threshold and --alpha refuse white space
// around their values, as benchrun's numeric flags do (--count ' 3'),
// naming the flag and writing nothing, where --threshold 'ns/op= 5' was
// read as ns/op=5 (README "Gate CI").
func TestNumbersTakeNoSpaces(t *testing.T) {
	inFixtureDir(t)
	for _, tc := range []struct{ args []string }{
		{[]string{"--threshold", "install-ns= 5"}},
		{[]string{"--threshold", "install-ns=5 "}},
		{[]string{"--threshold", " install-ns=5"}},
		{[]string{"--threshold", "install-ns =5"}},
		{[]string{"--threshold", "install-ns=\t5%"}},
		{[]string{"--alpha", " 0.05"}},
		{[]string{"--alpha", "0.05 "}},
	} {
		var out, errOut bytes.Buffer
		code := run(append(tc.args, "old.txt", "new.txt"), &out, &errOut)
		if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), tc.args[0]) {
			t.Errorf("benchcmp %q: exit %d, stdout %q, stderr %q; want exit 2 naming %s", tc.args, code, out.String(), errOut.String(), tc.args[0])
		}
	}
}

// TestProfileFlamegraphHTMLInAnyCase: profile's --flamegraph takes an
// .html name in any case (D.HTML), as benchrun's does, and writes the
// page there; it was refused as not naming an .html file (README
// "Scaling and profiles").
func TestProfileFlamegraphHTMLInAnyCase(t *testing.T) {
	inFixtureDir(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "D.HTML"}, &out, &errOut); code != 0 {
		t.Fatalf("profile --flamegraph D.HTML: exit %d: %s", code, errOut.String())
	}
	if page, err := os.ReadFile("D.HTML"); err != nil || !bytes.Contains(page, []byte("</html>")) {
		t.Errorf("profile --flamegraph D.HTML wrote no page (%d bytes, %v)", len(page), err)
	}
}

// TestFlamegraphDashIsNoStandardOutput: profile --flamegraph - exits 2
// saying "-" names no standard output, as "-" names no standard input
// (README "Scaling and profiles"), where it said only that - is not an
// .html file.
func TestFlamegraphDashIsNoStandardOutput(t *testing.T) {
	inFixtureDir(t)
	var out, errOut bytes.Buffer
	code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "-"}, &out, &errOut)
	if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), `--flamegraph -: "-" is no name of standard output`) {
		t.Errorf("profile --flamegraph -: exit %d, stdout %q, stderr %q; want exit 2 saying - is no name of standard output", code, out.String(), errOut.String())
	}
}

// TestEmptyNameIsListedQuoted: "Benchmark 1 5 ns/op", which go test
// writes for a function named Benchmark, is a result of the empty name,
// and every message lists it as "" (README, "Comparing results:
// benchcmp"). The reason a comparison paired nothing, and merge's
// warning of a benchmark in two shards, listed it as nothing at all
// (": X in old.txt" read ":  in old.txt").
func TestEmptyNameIsListedQuoted(t *testing.T) {
	t.Chdir(t.TempDir())
	for name, content := range map[string]string{
		"empty.txt": "Benchmark 1 5 ns/op\n",
		"x.txt":     "BenchmarkX 1 5 ns/op\n",
		"both.txt":  "Benchmark 1 6 ns/op\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"empty.txt", "x.txt"}, 0, `benchcmp: warning: nothing was compared: no benchmark has results both in the baseline column and in another (rows pair by --row .fullname): "" in empty.txt; X in x.txt` + "\n"},
		{[]string{"--fail-on", "regression", "empty.txt", "x.txt"}, 2, `benchcmp: bad input: --fail-on regression compared nothing, so it cannot pass: no benchmark has results both in the baseline column and in another (rows pair by --row .fullname): "" in empty.txt; X in x.txt` + "\n"},
		{[]string{"merge", "empty.txt", "both.txt"}, 0, `benchcmp merge: "" is in both empty.txt and both.txt (overlapping shards?)` + "\n"},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("benchcmp %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut.String(), c.code, c.want)
		}
	}
}

// awaitPipeOpen waits until a thread of this process waits in the open of a
// named pipe for its other end (Linux's wait_for_partner in
// /proc/self/task/*/wchan) and returns true, or returns false at once where
// the kernel names no thread's wait. It fails the test after a minute.
func awaitPipeOpen(t *testing.T) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
		named := false
		for _, p := range tasks {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			w := strings.TrimSpace(string(b))
			if strings.Contains(w, "partner") || strings.Contains(w, "fifo") {
				return true
			}
			named = named || w != "" && w != "0"
		}
		if !named {
			return false
		}
		if time.Now().After(deadline) {
			t.Fatal("no thread blocked in the pipe's open within a minute")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
