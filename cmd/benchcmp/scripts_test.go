package main

// Tests of the two scripts that gate on benchcmp: scripts/bench-baseline.sh
// (scripts/test.sh's comparison with results/baseline.txt) and
// scripts/ci-bench.sh (a pull request's commits compared), and of the
// arguments of scripts/test.sh and scripts/mutants.sh. They run the
// scripts as a user would, on tiny workloads; the ones that run benchmarks
// are skipped with -short.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository's root, seen from this package.
const repoRoot = "../.."

// tiny is a lookup workload small enough to run in well under a second.
var tiny = []string{"lookup", "--param", "rows=300", "--param", "keys=30"}

// runScript runs scripts/NAME with args and returns its combined output and
// exit status.
func runScript(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	return runScriptIn(t, t.TempDir(), name, args...)
}

// runScriptIn is runScript run in directory dir.
func runScriptIn(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", name)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // what a script leaves there goes with the test
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("running %s: %v", name, err)
		return "", -1
	}
}

// git runs git in the repository and returns its trimmed output, skipping
// the test when the tree is not a git checkout with the needed history.
func git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git %s: %v (not a git checkout with history?)", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// configLine returns the value of the first "key: value" line of file.
func configLine(t *testing.T, file, key string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `: (.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no %q configuration line", file, key)
	}
	return string(m[1])
}

// withConfig writes a copy of src with the value of configuration line key
// replaced by value, or with extra appended, and returns its path.
func withConfig(t *testing.T, src, key, value, extra string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		b = regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(key)+`: .*$`).ReplaceAllLiteral(b, []byte(key+": "+value))
	}
	dst := filepath.Join(t.TempDir(), "baseline.txt")
	if err := os.WriteFile(dst, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// bins holds benchrun and benchcmp, built once for every test that runs
// bench-baseline.sh, which takes them with --bin DIR.
var bins struct {
	once sync.Once
	dir  string
	err  error
}

// binaries builds the binaries on first use and returns their directory.
func binaries() (string, error) {
	bins.once.Do(func() {
		dir, err := os.MkdirTemp("", "bench-baseline-bin")
		if err != nil {
			bins.err = err
			return
		}
		bins.dir = dir
		for _, name := range []string{"benchrun", "benchcmp"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
			cmd.Dir = repoRoot
			if out, err := cmd.CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
				return
			}
		}
	})
	return bins.dir, bins.err
}

// removeBinaries removes what binaries built, if anything; TestMain calls
// it after the tests.
func removeBinaries() {
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
}

// benchBaseline runs bench-baseline.sh with the binaries built once.
func benchBaseline(t *testing.T, args ...string) (string, int) {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return runScript(t, "bench-baseline.sh", append([]string{"--bin", dir}, args...)...)
}

// machineBaseline returns a baseline made on this machine: the tiny run
// bench-baseline.sh makes (benchrun run tiny... --count 2 --seed 1), made
// by benchrun itself, so that it carries this machine's configuration
// lines whichever machine the committed baseline is of. Made by
// bench-baseline.sh against the committed baseline, it was compared there
// with the default suite's rows on the committed baseline's own machine
// type, which pairs none of them (a broken comparison, exit 2), and
// skipped everywhere else.
func machineBaseline(t *testing.T) string {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "first.txt")
	args := append(append([]string{"run"}, tiny...), "--count", "2", "--seed", "1", "--progress", "off", "--out", out)
	cmd := exec.Command(filepath.Join(dir, "benchrun"), args...)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("benchrun %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// probeConfig returns this machine's value of a configuration line (cpu,
// gomaxprocs) as the probe run of bench-baseline.sh reads it.
func probeConfig(t *testing.T, key string) string {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "benchrun"), "run", "lookup", "--param", "rows=100", "--param", "keys=10", "--progress", "off")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe run: %v", err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `: (.*)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("probe run printed no %s line:\n%s", key, out)
	}
	return string(m[1])
}

func TestBenchBaselineSkipsAnotherMachine(t *testing.T) {
	for _, key := range []string{"cpu", "gomaxprocs"} {
		t.Run(key, func(t *testing.T) {
			src := filepath.Join(repoRoot, "results", "baseline.txt")
			if key != "cpu" {
				// Only key differs: the cpu line is this machine's,
				// whichever machine the committed baseline came from
				// (the script checks cpu first).
				src = withConfig(t, src, "cpu", probeConfig(t, "cpu"), "")
			}
			baseline := withConfig(t, src, key, "999 elsewhere", "")
			got, code := benchBaseline(t, "--baseline", baseline)
			if code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, got)
			}
			want := "bench-baseline: skipped: this machine's " + key + " is '"
			if !strings.Contains(got, want) || !strings.Contains(got, "the baseline's is '999 elsewhere'") {
				t.Errorf("output does not say it skipped because of %s:\n%s", key, got)
			}
			if strings.Contains(got, "benchrun run") {
				t.Errorf("it ran the suite although it skipped:\n%s", got)
			}
		})
	}
}

func TestBenchBaselineBrokenComparison(t *testing.T) {
	t.Run("missing baseline", func(t *testing.T) {
		got, code := benchBaseline(t, "--baseline", filepath.Join(t.TempDir(), "none.txt"))
		if code != 2 || !strings.Contains(got, "none.txt: cannot read it") {
			t.Errorf("exit %d, want 2 naming the file:\n%s", code, got)
		}
	})
	t.Run("no config lines", func(t *testing.T) {
		baseline := filepath.Join(t.TempDir(), "empty.txt")
		if err := os.WriteFile(baseline, []byte("BenchmarkX 1 5 ns/op\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, code := benchBaseline(t, "--baseline", baseline)
		if code != 2 || !strings.Contains(got, "empty.txt: no 'cpu:' configuration line") {
			t.Errorf("exit %d, want 2 naming the file and the line it lacks:\n%s", code, got)
		}
	})
	t.Run("bad result line", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs benchmarks")
		}
		// A baseline of this machine with a malformed line appended: the
		// comparison is broken (benchcmp exit 2), which must fail.
		good := machineBaseline(t)
		lines := strings.Count(string(must(os.ReadFile(good))), "\n")
		baseline := withConfig(t, good, "", "", "BenchmarkBroken 1 notanumber ns/op\n")
		got, code := benchBaseline(t, append([]string{"--baseline", baseline, "--count", "1", "--"}, tiny...)...)
		if code != 2 {
			t.Errorf("exit %d, want 2:\n%s", code, got)
		}
		if want := "baseline.txt:" + strconv.Itoa(lines+1) + ":"; !strings.Contains(got, want) || !strings.Contains(got, "the comparison is broken") {
			t.Errorf("output does not name %s and say the comparison is broken:\n%s", want, got)
		}
	})
}

func TestBenchBaselineCompares(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	baseline := machineBaseline(t)
	got, code := benchBaseline(t, append([]string{"--baseline", baseline, "--count", "3", "--threshold", "*=1000", "--"}, tiny...)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, got)
	}
	for _, want := range []string{
		"bench-baseline: benchrun run lookup --param rows=300 --param keys=30 --count 3 --seed 1\n",
		"install-sec: lower is better; threshold 1000%",
		"Lookup/workload=lookup/index=imported/join=linear/rows=300/keys=30/workers=1",
		"bench-baseline: no regression against " + baseline,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`(?m)^name +baseline +now +delta +p +verdict$`).MatchString(got) {
		t.Errorf("output lacks the comparison's table header:\n%s", got)
	}
}

// bench-baseline.sh's default threshold, *=5, is that of every unit
// without its own: --threshold install-ns=1000 alone left the others at
// benchcmp's 0.
func TestBenchBaselineOneUnitThresholdKeepsTheDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	baseline := machineBaseline(t)
	got, code := benchBaseline(t, append([]string{"--baseline", baseline, "--count", "3", "--threshold", "install-ns=1000", "--"}, tiny...)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, got)
	}
	for _, want := range []string{
		"install-sec: lower is better; threshold 1000%",
		"sec/update: lower is better; threshold 5%",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// Paths given to bench-baseline.sh — --out and a spec file after -- — are
// relative to where it runs; it ran benchrun in the repository root, where
// the spec file was not found and --out was written.
func TestBenchBaselineRelativePaths(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	spec := `{"version": 1, "name": "relw",
  "inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1]]}},
  "indexes": {"a_by_x": {"on": "a", "key": ["x"]}},
  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	if err := os.WriteFile(filepath.Join(cwd, "w.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	// A baseline of this machine, of the same spec.
	baseline := filepath.Join(t.TempDir(), "baseline.txt")
	cmd := exec.Command(filepath.Join(dir, "benchrun"), "run", "w.json", "--count", "2", "--seed", "1", "--progress", "off", "--out", baseline)
	cmd.Dir = cwd
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("benchrun: %v\n%s", err, b)
	}
	got, code := runScriptIn(t, cwd, "bench-baseline.sh", "--bin", dir, "--baseline", baseline, "--count", "2", "--out", "now 1.txt", "--", "w.json")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, got)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "now 1.txt")); err != nil || !strings.Contains(string(b), "workload=relw/") {
		t.Errorf("--out now 1.txt is not in the directory the script ran in, with the spec's results (%v):\n%s", err, got)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "now 1.txt")); err == nil {
		os.Remove(filepath.Join(repoRoot, "now 1.txt"))
		t.Errorf("--out now 1.txt was written in the repository root")
	}
}

func TestBenchBaselineUsage(t *testing.T) {
	emptyBin := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad count", []string{"--count", "0"}, "bench-baseline: --count 0: want a positive integer"},
		{"flag=value", []string{"--count=x"}, "bench-baseline: --count x: want a positive integer"},
		{"empty out", []string{"--out", ""}, "bench-baseline: --out needs a value, not an empty one"},
		{"empty baseline", []string{"--baseline="}, "bench-baseline: --baseline needs a value, not an empty one"},
		{"unknown", []string{"--bogus"}, "bench-baseline: unknown argument --bogus"},
		{"directory", []string{"--baseline", "."}, "bench-baseline: baseline .: is a directory, not a result file"},
		// Named as given, where the message named the empty result of
		// the failed cd.
		{"no bin", []string{"--bin", "/no/such/bin"}, "bench-baseline: --bin /no/such/bin: no such directory"},
		// benchrun refuses a flag given twice: these, which the script
		// sets, failed there, after the build and the probe run.
		{"count in benchrun args", []string{"--", "lookup", "--count", "2"}, "bench-baseline: benchrun argument --count is set by this script"},
		{"seed= in benchrun args", []string{"--", "lookup", "--seed=3"}, "bench-baseline: benchrun argument --seed is set by this script"},
		{"out in benchrun args", []string{"--", "--out", "x.txt", "lookup"}, "bench-baseline: benchrun argument --out is set by this script"},
		{"progress in benchrun args", []string{"--", "lookup", "--progress=off"}, "bench-baseline: benchrun argument --progress is set by this script"},
		{"threshold in benchrun args", []string{"--", "lookup", "--threshold", "*=10"}, "bench-baseline: benchrun argument --threshold is a flag of this script, not of benchrun run; give it before --"},
		{"baseline= in benchrun args", []string{"--", "lookup", "--baseline=b.txt"}, "bench-baseline: benchrun argument --baseline is a flag of this script"},
		// Taken as a file, - got the results after the whole run. (An
		// empty --bin stops the script before it builds or runs
		// anything, should it take -.)
		{"dash out", []string{"--bin", emptyBin, "--out", "-"}, "bench-baseline: --out -: - names no standard output here; give it a file, ./- for one named -"},
		{"dash out=", []string{"--bin", emptyBin, "--out=-"}, "bench-baseline: --out -: - names no standard output"},
		// Given twice, the second value won; benchrun and benchcmp
		// refuse it. --threshold, one a unit, may be given more than
		// once (the empty --bin then stops the script).
		{"count twice", []string{"--bin", emptyBin, "--count", "5", "--count", "6"}, "bench-baseline: --count is given more than once (5, then 6); give it once"},
		{"baseline= twice", []string{"--bin", emptyBin, "--baseline=a.txt", "--baseline", "b.txt"}, "bench-baseline: --baseline is given more than once (a.txt, then b.txt)"},
		{"bin twice", []string{"--bin", emptyBin, "--bin", emptyBin}, "bench-baseline: --bin is given more than once"},
		{"thresholds", []string{"--bin", emptyBin, "--threshold", "*=5", "--threshold", "install-ns=10"}, "bench-baseline: --bin " + emptyBin + ": want executables benchrun and benchcmp there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code := runScript(t, "bench-baseline.sh", tc.args...)
			if code != 2 || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tc.want, got)
			}
		})
	}
}

// TestRunnerScriptsUsage checks the arguments of scripts/test.sh, which
// takes none, scripts/mutants.sh and scripts/browser-deps.sh. test.sh ran
// every step whatever its arguments (-h included); mutants.sh took -n 0 (a
// concurrent mutant run no times, so "killed every time"), and a missing
// or non-numeric value failed on an unbound variable with exit 1;
// browser-deps.sh read no arguments, so --help or a mistyped flag ran it
// (an apt-get install, as root without chromium). They run with go, gofmt,
// apt-get and sudo shadowed by commands that fail at once, so that a
// script that goes on past its arguments stops there instead of running
// its steps.
func TestRunnerScriptsUsage(t *testing.T) {
	fail := "#!/bin/sh\nexit 97\n"
	stubsOnPath(t, map[string]string{"go": fail, "gofmt": fail, "apt-get": fail, "sudo": fail})
	for _, tc := range []struct {
		script string
		args   []string
		code   int
		want   string
	}{
		{"test.sh", []string{"--help"}, 0, "test.sh runs every check CI runs"},
		{"test.sh", []string{"-v"}, 2, "test.sh: takes no arguments, got -v"},
		{"mutants.sh", []string{"-n"}, 2, "mutants.sh: -n needs a value"},
		{"mutants.sh", []string{"-n", "0"}, 2, "mutants.sh: -n 0: want a positive integer"},
		{"mutants.sh", []string{"-s", "x"}, 2, "mutants.sh: -s x: want a non-negative integer"},
		{"mutants.sh", []string{"-t", "5"}, 2, "mutants.sh: -t 5: want a Go duration"},
		{"mutants.sh", []string{"-t", "1m30s", "-skip", ""}, 2, "mutants.sh: -skip needs a value"},
		// Past what Go's duration holds (about 2,562,047h): every go
		// test refused it; a fraction without its integer part is one.
		{"mutants.sh", []string{"-t", "3000000h"}, 2, "mutants.sh: -t 3000000h: want a Go duration of at most 2562047h"},
		{"mutants.sh", []string{"-t", ".5m", "-n"}, 2, "mutants.sh: -n needs a value"},
		{"browser-deps.sh", []string{"--help"}, 0, "browser-deps.sh installs a headless browser"},
		{"browser-deps.sh", []string{"-h"}, 0, "scripts/browser-deps.sh -h | --help"},
		{"browser-deps.sh", []string{"--bogus"}, 2, "browser-deps: unknown argument '--bogus'"},
		{"browser-deps.sh", []string{""}, 2, "browser-deps: unknown argument ''"},
	} {
		t.Run(tc.script+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			got, code := runScript(t, tc.script, tc.args...)
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, got)
			}
			if strings.Contains(got, "browser-deps: ") && !strings.Contains(got, "browser-deps: unknown argument") {
				t.Errorf("browser-deps.sh went on past its arguments:\n%s", got)
			}
		})
	}
}

// mutantsGoStub is a stand-in for go that prints a catalogue of three
// mutants (what mutants.sh reads with go run
// ./internal/mutants/testdata/catalogue) and fails at anything else.
const mutantsGoStub = `#!/bin/sh
case "$1" in
list) echo example.com/m ;;
run) printf 'delta-join\t1\tcore/join\tserial\ndelta-join2\t2\tcore/join\tserial\nmerge-since\t3\tcore/batch\tconcurrent\n' ;;
*) exit 97 ;;
esac
`

// TestMutantsSelection checks how scripts/mutants.sh selects mutants, on a
// catalogue of its own: go is a stand-in that prints it, and -list prints
// the selection and exits before anything is built. A NAME was a grep
// pattern: "delta.join" or ".*" matched a mutant, and the pattern itself
// was then run as that mutant's name; a NAME is now matched exactly, and
// -r REGEX selects by pattern.
func TestMutantsSelection(t *testing.T) {
	stubsOnPath(t, map[string]string{"go": mutantsGoStub})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-list", "delta-join"}, 0, "delta-join\n"},
		{[]string{"-list", "delta-join2", "delta-join"}, 0, "delta-join2\ndelta-join\n"},
		{[]string{"delta.join"}, 2, "mutants.sh: 'delta.join' is not in the catalogue"},
		{[]string{".*"}, 2, "mutants.sh: '.*' is not in the catalogue"},
		{[]string{"-list", "delta.join"}, 2, "mutants.sh: 'delta.join' is not in the catalogue"},
		{[]string{"-list", ".*"}, 2, "mutants.sh: '.*' is not in the catalogue"},
		{[]string{"-list", "delta-"}, 2, "mutants.sh: 'delta-' is not in the catalogue"},
		// Quoted: an empty name printed as "mutants.sh:  is not in the
		// catalogue".
		{[]string{"-list", ""}, 2, "mutants.sh: '' is not in the catalogue"},
		{[]string{"-list", "-r", "delta-join"}, 0, "delta-join\ndelta-join2\n"},
		{[]string{"-list", "-r", "^delta-join$"}, 0, "delta-join\n"},
		{[]string{"-list", "-r", "since", "delta-join"}, 0, "delta-join\nmerge-since\n"},
		{[]string{"-list", "-r", "join", "-r", "2$"}, 0, "delta-join\ndelta-join2\n"},
		{[]string{"-list", "-r", "nothing"}, 2, "mutants.sh: -r nothing matches no mutant"},
		{[]string{"-list", "-r", "("}, 2, "mutants.sh: -r (: not an extended regular expression"},
		{[]string{"-list", "-r"}, 2, "mutants.sh: -r needs a value"},
		{[]string{"-list"}, 0, "delta-join\ndelta-join2\nmerge-since\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, code := runScript(t, "mutants.sh", tc.args...)
			if code != tc.code || (tc.code == 0 && got != tc.want) || (tc.code != 0 && !strings.Contains(got, tc.want)) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, got)
			}
		})
	}
}

// TestMutantsSelectionFromALongCatalogue: a NAME is found in a catalogue
// longer than a pipe holds. The script piped the names into grep -q, which
// leaves at the first match: printf then died of SIGPIPE writing the rest,
// pipefail failed the test, and a name of the catalogue read as not in it
// (CI saw it once with three names, when grep won the race).
func TestMutantsSelectionFromALongCatalogue(t *testing.T) {
	stubsOnPath(t, map[string]string{"go": `#!/bin/sh
case "$1" in
list) echo example.com/m ;;
run)
	printf 'delta-join\t1\tcore/join\tserial\n'
	i=0
	while [ $i -lt 20000 ]; do
		printf 'mutant-%d\t%d\tcore/x\tserial\n' $i $i
		i=$((i+1))
	done
	;;
*) exit 97 ;;
esac
`})
	for _, name := range []string{"delta-join", "mutant-3"} {
		got, code := runScript(t, "mutants.sh", "-list", name)
		if code != 0 || got != name+"\n" {
			t.Errorf("-list %s: exit %d, want 0 with %q:\n%.300s", name, code, name+"\n", got)
		}
	}
}

// A baseline that is a pipe (--baseline <(git show REV:results/baseline.txt),
// as benchcmp takes one) is read once: the script read it for each
// configuration line, and then found the second one missing.
func TestBenchBaselineFromPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	baseline := machineBaseline(t)
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "bench-baseline.sh"))
	if err != nil {
		t.Fatal(err)
	}
	line := `bash "$0" --bin "$1" --count 2 --baseline <(cat "$2") -- ` + strings.Join(tiny, " ")
	cmd := exec.Command("bash", "-c", line, script, dir, baseline)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "bench-baseline: no regression against /dev/fd/") {
		t.Errorf("%v, want exit 0 comparing with the pipe:\n%s", err, out)
	}
}

// Run through a symbolic link, bench-baseline.sh looked for the
// repository, and its default baseline, next to the link.
func TestBenchBaselineThroughSymlink(t *testing.T) {
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "bench-baseline.sh"))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "bench-baseline")
	if err := os.Symlink(script, link); err != nil {
		t.Skip(err)
	}
	// A --bin without the binaries stops it after it read the default
	// baseline, before it builds or runs anything.
	empty := t.TempDir()
	cmd := exec.Command("bash", link, "--bin", empty)
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput()
	if want := "bench-baseline: --bin " + empty + ": want executables benchrun and benchcmp there"; !strings.Contains(string(out), want) {
		t.Errorf("want %q:\n%s", want, out)
	}
}

func TestCIBenchUsage(t *testing.T) {
	// In a source archive (no .git) there is no BASE_REF to look up: the
	// script says it needs a git clone.
	unknownRef := "ci-bench: BASE_REF no-such-ref-anywhere: no such commit"
	if !inGitWorkTree(repoRoot) {
		unknownRef = "is not the top of a git work tree (a source archive?)"
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no ref", nil, "ci-bench: missing BASE_REF"},
		{"unknown ref", []string{"no-such-ref-anywhere"}, unknownRef},
		{"count in benchrun args", []string{"HEAD", "--", "lookup", "--count", "3"}, "benchrun argument --count is set by this script"},
		{"out in benchrun args", []string{"HEAD", "--", "lookup", "--out=x.txt"}, "benchrun argument --out is set by this script"},
		// The script's own flags after --: benchrun refused them as
		// unknown after both builds, a failed round.
		{"rounds in benchrun args", []string{"HEAD", "--", "lookup", "--rounds", "3"}, "ci-bench: benchrun argument --rounds is a flag of this script, not of benchrun run; give it before --"},
		{"threshold= in benchrun args", []string{"HEAD", "--", "lookup", "--threshold=*=10"}, "ci-bench: benchrun argument --threshold is a flag of this script"},
		{"allow-lost in benchrun args", []string{"HEAD", "--", "lookup", "--allow-lost"}, "ci-bench: benchrun argument --allow-lost is a flag of this script"},
		{"bad rounds", []string{"--rounds", "0", "HEAD"}, "--rounds 0: want a positive integer"},
		{"flag=value", []string{"--rounds=0", "HEAD"}, "ci-bench: --rounds 0: want a positive integer"},
		// Fewer than 4 samples a side: the gate could not fail, and said
		// "No regression" (exit 0).
		{"count below 4", append([]string{"--count", "3", "--rounds", "5", "HEAD", "--"}, tiny...), "ci-bench: --count 3: the gate needs at least 4 samples a side"},
		{"cpuprofile", append([]string{"--count", "4", "--rounds", "1", "--out", t.TempDir(), "HEAD", "--", "--cpuprofile", "cpu.out"}, tiny...), "ci-bench: benchrun argument --cpuprofile: every round"},
		{"flamegraph=", append([]string{"--count", "4", "--rounds", "1", "--out", t.TempDir(), "HEAD", "--", "--flamegraph=f"}, tiny...), "ci-bench: benchrun argument --flamegraph: every round"},
		{"empty out", []string{"--out=", "HEAD"}, "ci-bench: --out needs a value, not an empty one"},
		// Taken as a directory, every round was written into ./-.
		{"dash out", []string{"--out", "-", "no-such-ref-anywhere"}, "ci-bench: --out -: - names no standard output here; give it a directory, ./- for one named -"},
		// Given twice, the second value won; benchrun and benchcmp
		// refuse it. --threshold, one a unit, may be given more than
		// once.
		{"count twice", []string{"--count", "5", "--count", "6", "no-such-ref-anywhere"}, "ci-bench: --count is given more than once (5, then 6); give it once"},
		{"gomaxprocs= twice", []string{"--gomaxprocs=2", "--gomaxprocs=2", "no-such-ref-anywhere"}, "ci-bench: --gomaxprocs is given more than once (2, then 2)"},
		{"allow-lost twice", []string{"--allow-lost", "--allow-lost", "no-such-ref-anywhere"}, "ci-bench: --allow-lost is given more than once"},
		{"thresholds", []string{"--threshold", "*=5", "--threshold", "install-ns=10", "no-such-ref-anywhere"}, unknownRef},
		// --count without its value took BASE_REF for it, and the
		// script said BASE_REF was missing.
		{"count takes the ref", []string{"--count", "HEAD~1"}, "ci-bench: --count HEAD~1: want a positive integer"},
		{"rounds takes the ref", []string{"--rounds", "HEAD~1"}, "ci-bench: --rounds HEAD~1: want a positive integer"},
		{"seed takes the ref", []string{"--seed", "HEAD~1"}, "ci-bench: --seed HEAD~1: want a non-negative integer"},
		{"empty threshold", append([]string{"--threshold", "", "--count", "1", "--rounds", "1", "HEAD", "--"}, tiny...), "ci-bench: --threshold needs a value, not an empty one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code := runScript(t, "ci-bench.sh", tc.args...)
			if code != 2 || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tc.want, got)
			}
		})
	}
}

func TestCIBenchBaseWithoutBenchrun(t *testing.T) {
	// The newest first-parent ancestor that has no cmd/benchrun.
	var old string
	for _, c := range strings.Fields(git(t, "rev-list", "--first-parent", "HEAD")) {
		if exec.Command("git", "-C", repoRoot, "cat-file", "-e", c+":cmd/benchrun").Run() != nil {
			old = c
			break
		}
	}
	if old == "" {
		t.Skip("every commit in this history has cmd/benchrun")
	}
	got, code := runScript(t, "ci-bench.sh", old, "--", "lookup")
	if code != 2 || !strings.Contains(got, "ci-bench: BASE_REF "+old+" ("+old[:7]) || !strings.Contains(got, "predates cmd/benchrun") {
		t.Errorf("exit %d, want 2 saying %s predates cmd/benchrun:\n%s", code, old[:7], got)
	}
}

func TestCIBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchrun at two commits and runs benchmarks")
	}
	base := git(t, "rev-parse", "HEAD~1")
	head := git(t, "rev-parse", "HEAD")
	if exec.Command("git", "-C", repoRoot, "cat-file", "-e", base+":cmd/benchrun").Run() != nil {
		t.Skipf("HEAD~1 (%s) has no cmd/benchrun", base)
	}
	out := t.TempDir()
	got, code := runScript(t, "ci-bench.sh", append([]string{"--count", "4", "--rounds", "2", "--out", out, "HEAD~1", "--"}, tiny...)...)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want 0 or 1:\n%s", code, got)
	}
	if !strings.Contains(got, "ci-bench: round 2 of 2\n") {
		t.Errorf("output does not show two rounds:\n%s", got)
	}
	// Each side's files carry its own commit: the base was built and run in
	// a worktree at BASE_REF.
	for r := 1; r <= 2; r++ {
		n := strconv.Itoa(r)
		if c := configLine(t, filepath.Join(out, "base-"+n+".txt"), "commit"); c != base {
			t.Errorf("base round %s ran commit %s, want %s", n, c, base)
		}
		if c := configLine(t, filepath.Join(out, "head-"+n+".txt"), "commit"); strings.TrimSuffix(c, "-dirty") != head {
			t.Errorf("head round %s ran commit %s, want %s", n, c, head)
		}
		if p := configLine(t, filepath.Join(out, "head-"+n+".txt"), "gomaxprocs"); p != "2" {
			t.Errorf("head round %s ran with gomaxprocs %s, want the script's default 2", n, p)
		}
	}
	summary := string(must(os.ReadFile(filepath.Join(out, "summary.md"))))
	for _, want := range []string{
		"# ci-bench: " + base[:12] + " (HEAD~1) → " + head[:12],
		"benchrun run lookup --param rows=300 --param keys=30 --count 4 --seed 1, GOMAXPROCS=2, 2 interleaved round(s) per side",
		"| benchmark | base | head | delta | threshold | verdict |",
		"| Lookup/workload=lookup/index=imported/join=linear/rows=300/keys=30/workers=1 |",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	confirmed := strings.Contains(summary, "**Confirmed regression**")
	if confirmed != (code == 1) {
		t.Errorf("exit %d but the summary says confirmed=%v:\n%s", code, confirmed, summary)
	}
	if strings.Contains(git(t, "worktree", "list"), "/base ") {
		t.Errorf("the base worktree is still listed:\n%s", git(t, "worktree", "list"))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Run through a symbolic link (~/bin/tracebench-test), scripts/test.sh,
// scripts/mutants.sh and .ci/run looked for the repository next to the
// link: test.sh ran every step there, each failing for want of a go.mod,
// and .ci/run found no scripts/test.sh. README's "Testing" says test.sh
// runs from the repository root wherever it is started. Each runs with a
// go that prints where it runs and fails, which stops the script there.
func TestRunnerScriptsThroughSymlink(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	stubGo(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		args   []string
	}{
		{"scripts/test.sh", nil},
		{"scripts/mutants.sh", []string{"-list"}},
		{".ci/run", nil},
	} {
		t.Run(tc.script, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), "bin", "run-it")
			if err := os.Mkdir(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, tc.script), link); err != nil {
				t.Skip(err)
			}
			cmd := exec.Command("bash", append([]string{link}, tc.args...)...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			out, _ := cmd.CombinedOutput()
			if want := "go stub in " + root + "\n"; !strings.Contains(string(out), want) {
				t.Errorf("want %q (go run in the repository):\n%s", want, out)
			}
		})
	}
}

// A mistyped setting of scripts/test.sh (TEST_TIMEOUT=5, FUZZ_TIME=10,
// MUTANTS_SUBSET=x) failed every go test step, the fuzz step or the
// mutants step, minutes into the run, with exit 1. It is now refused with
// exit 2, naming it, before go runs at all: go here is a stand-in that
// fails at once.
func TestTestScriptSettings(t *testing.T) {
	stubGo(t)
	for _, tc := range []struct {
		env, value, want string
	}{
		{"TEST_TIMEOUT", "5", "test.sh: TEST_TIMEOUT=5: want a Go duration"},
		{"TEST_TIMEOUT", "5 m", "test.sh: TEST_TIMEOUT=5 m: want a Go duration"},
		{"TEST_TIMEOUT", "3000000h", "test.sh: TEST_TIMEOUT=3000000h: want a Go duration of at most 2562047h"},
		{"FUZZ_TIME", "3000000h", "test.sh: FUZZ_TIME=3000000h: want a count of executions"},
		{"FUZZ_TIME", "10", "test.sh: FUZZ_TIME=10: want a count of executions"},
		{"FUZZ_TIME", "0x", "test.sh: FUZZ_TIME=0x: want a count of executions"},
		{"MUTANTS_SUBSET", "x", "test.sh: MUTANTS_SUBSET=x: want a non-negative integer"},
		{"MUTANTS_SUBSET", "-1", "test.sh: MUTANTS_SUBSET=-1: want a non-negative integer"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			got, code := runScript(t, "test.sh")
			if code != 2 || !strings.Contains(got, tc.want) || strings.Contains(got, "go stub") {
				t.Errorf("exit %d, want 2 with %q before go runs:\n%s", code, tc.want, got)
			}
		})
	}
	// Good values pass the check: go runs (and the stand-in fails).
	for _, env := range []string{"TEST_TIMEOUT=1m30s", "TEST_TIMEOUT=.5m", "TEST_TIMEOUT=2562047h", "FUZZ_TIME=30s", "FUZZ_TIME=100000x", "MUTANTS_SUBSET=0"} {
		name, value, _ := strings.Cut(env, "=")
		t.Run(env, func(t *testing.T) {
			t.Setenv(name, value)
			got, code := runScript(t, "test.sh")
			if code != 97 || !strings.Contains(got, "go stub in ") {
				t.Errorf("exit %d, want the stand-in go's 97:\n%s", code, got)
			}
		})
	}
}

// .ci/run dropped its arguments: `.ci/run --help` or a mistyped
// `.ci/run -v` ran every step of scripts/test.sh, which refuses
// arguments so that they do not. It now passes them on.
func TestCIRunPassesArguments(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	stubGo(t)
	run, err := filepath.Abs(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg  string
		code int
		want string
	}{
		{"--help", 0, "test.sh runs every check CI runs"},
		{"-v", 2, "test.sh: takes no arguments, got -v"},
	} {
		cmd := exec.Command("bash", run, tc.arg)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "go stub") {
			t.Errorf(".ci/run %s: exit %d, want %d with %q and no go run:\n%s", tc.arg, code, tc.code, tc.want, out)
		}
	}
}

// scripts/test.sh runs every step with TMPDIR set to a directory of its
// own, which mktemp -d makes 0700: run as root, as CI runs it,
// cmd/benchrun's TestOutputsInAStickyDirectory, which runs benchrun as
// nobody in a directory under TMPDIR, failed there (exit -1, nobody
// unable to reach the binary) and passed under go test alone. The
// directory is now searchable by every user, as /tmp is. go here is a
// stand-in that prints the mode of $TMPDIR when asked its version, the
// first go command the script runs, and fails.
func TestTestScriptTMPDIRIsSearchable(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	stubsOnPath(t, map[string]string{"go": "#!/bin/sh\necho \"TMPDIR mode $(stat -c %a \"$TMPDIR\")\"\nexit 97\n"})
	got, code := runScript(t, "test.sh")
	if code != 97 || !strings.Contains(got, "TMPDIR mode 755\n") {
		t.Errorf("exit %d, want the stand-in go's 97 seeing a TMPDIR of mode 755:\n%s", code, got)
	}
}

// mutants.sh -h read the script by $0 after it moved to the repository
// root, so run as ./mutants.sh from scripts/ (or through a link from
// elsewhere) it failed with sed's "can't read ./mutants.sh" (exit 2).
func TestMutantsHelpFromItsOwnDirectory(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "./mutants.sh", "-h")
	cmd.Dir = filepath.Join(root, "scripts")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "mutants.sh runs the test suite under each mutant") {
		t.Errorf("./mutants.sh -h from scripts/: %v:\n%s", err, out)
	}
}

// mutants.sh -s K in a tree inside a git repository without a commit (a
// source archive unpacked in one): rev-parse printed HEAD before it
// failed, the arithmetic on it failed without stopping the script, and
// the subset was empty: no mutant ran and the step passed. It now takes
// the first K, as without git. go is a stand-in that prints a catalogue.
func TestMutantsSubsetWithoutACommit(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	stubsOnPath(t, map[string]string{"go": mutantsGoStub})
	tree := t.TempDir()
	if err := os.Mkdir(filepath.Join(tree, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mutants.sh", "lib.sh"} {
		script := must(os.ReadFile(filepath.Join(repoRoot, "scripts", name)))
		if err := os.WriteFile(filepath.Join(tree, "scripts", name), script, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", tree).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", filepath.Join(tree, "scripts", "mutants.sh"), "-list", "-s", "2")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "delta-join\ndelta-join2\n" {
		t.Errorf("-list -s 2 without a commit: %v, printed %q; want the first two", err, out)
	}
}

// scripts/bench-baseline.sh judged its --threshold values only when
// benchcmp read them, after the build and the whole benchmark run, and
// scripts/ci-bench.sh after its first round. Both now check their form
// first (scripts/lib.sh's threshold_form), as benchcmp checks it: each
// value here is refused by each script, before anything is built (an
// empty --bin, or no BASE_REF, would stop it next), exactly when benchcmp
// refuses its form, with the same reason. A unit the results lack is
// still benchcmp's to judge, with the results.
func TestScriptsCheckTheThresholdsForm(t *testing.T) {
	emptyBin := t.TempDir()
	missing := filepath.Join(t.TempDir(), "none.txt")
	for _, th := range []string{
		"ns/op=5", "*=5", "*=5%", "ratio=x/op=5", "a=.5", "a=5.", "a=1e3", "a=1E-3", "a=-0", "a=-0.0e+5",
		"a=1.79e308", "a=1e-400", "a=00012.5", "über/op=5", "a==5",
		"x", "=5", "*", "a=", "a=%", "a=.", "a=-1", "a=-0.1", "a=1_0", "a=0x1p4", "a=inf", "a=NaN", "a=1e400",
		"a=5%%", "a=e5", "a=1e", "a=+1", "a=1e-+5", "a=5=", "ns/op= 5", "ns/op =5", "a\v=5", "a\t=5",
		"a\u00a0=5", "a\u0085=5", "a\u2009=5", "a\u3000=5", "a\u200b=5",
	} {
		t.Run(th, func(t *testing.T) {
			var out, errOut strings.Builder
			run([]string{"--threshold", th, missing, missing}, &out, &errOut)
			// benchcmp judges the thresholds' form before it reads a
			// file: a well-formed one gets to the missing file.
			cmpRefuses := strings.Contains(errOut.String(), "--threshold")
			// ci-bench.sh checks the form (scripts/lib.sh's
			// threshold_form) before it looks for BASE_REF, given none.
			for _, sc := range []struct{ script, prefix, next string }{
				{"bench-baseline.sh", "bench-baseline: --threshold ", "want executables benchrun and benchcmp there"},
				{"ci-bench.sh", "ci-bench: --threshold ", "missing BASE_REF"},
			} {
				args := []string{"--threshold", th}
				if sc.script == "bench-baseline.sh" {
					args = append([]string{"--bin", emptyBin}, args...)
				}
				got, code := runScript(t, sc.script, args...)
				refused := strings.Contains(got, sc.prefix)
				if code != 2 || refused != cmpRefuses {
					t.Fatalf("%s refuses it: %v (exit %d); benchcmp: %v\nscript: %s\nbenchcmp: %s", sc.script, refused, code, cmpRefuses, got, errOut.String())
				}
				if !refused {
					if !strings.Contains(got, sc.next) {
						t.Errorf("%s did not go on past the thresholds:\n%s", sc.script, got)
					}
					continue
				}
				for _, reason := range []string{"want UNIT=PCT", "white space in UNIT=PCT", "PCT must be a finite number >= 0 in decimal"} {
					if strings.Contains(errOut.String(), reason) != strings.Contains(got, reason) {
						t.Errorf("benchcmp and %s give different reasons:\nscript: %s\nbenchcmp: %s", sc.script, got, errOut.String())
					}
				}
			}
		})
	}
}
