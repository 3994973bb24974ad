package main

// Tests of scripts/ci-bench.sh's own logic — reading benchcmp's reports,
// the confirming round, the summary, its paths — on a stand-in repository:
// a copy of the script, a cmd/benchcmp that runs the real one, and a
// cmd/benchrun that writes results of a name and values the test picks, at
// once, without running any benchmark.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// standInBenchrun is cmd/benchrun of the stand-in repository. SIDE is
// "base" at its first commit and "head" at its second. It writes --count
// samples of unit install-ns for each benchmark $CIBENCH_NAME names
// (space-separated; $CIBENCH_HEAD_NAME instead at head, when set),
// valued from $CIBENCH_BASE or $CIBENCH_HEAD (plus the sample's index, so
// that no two tie), or $CIBENCH_HEAD_CONFIRM for head's confirming round.
// With $CIBENCH_HEAD_FAIL set, head writes go test's FAIL lines alone.
const standInBenchrun = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

const side = "SIDE"

// commit is the commit line benchrun writes: the revision go build
// stamped, with -dirty when the tree was modified.
func commit() string {
	rev, dirty := "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "-dirty"
			}
		}
	}
	return rev + dirty
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "run" {
		os.Exit(2)
	}
	count, out := 1, ""
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--help":
			return
		case "--count":
			count, _ = strconv.Atoi(args[i+1])
		case "--out":
			out = args[i+1]
		}
	}
	v, _ := strconv.Atoi(os.Getenv("CIBENCH_" + strings.ToUpper(side)))
	if c := os.Getenv("CIBENCH_HEAD_CONFIRM"); side == "head" && c != "" && strings.Contains(filepath.Base(out), "confirm") {
		v, _ = strconv.Atoi(c)
	}
	var sb strings.Builder
	sb.WriteString("Unit install-ns better=lower\ngoos: linux\ngomaxprocs: 2\ncommit: " + commit() + "\n\n")
	names := os.Getenv("CIBENCH_NAME")
	if h := os.Getenv("CIBENCH_HEAD_NAME"); side == "head" && h != "" {
		names = h
	}
	// With $CIBENCH_UPDATE set, each line also has the same value in
	// ns/update: a second unit, for thresholds of one unit alone.
	update := ""
	if os.Getenv("CIBENCH_UPDATE") != "" {
		sb.WriteString("Unit ns/update better=lower\n")
		update = " ns/update"
	}
	for _, name := range strings.Fields(names) {
		for i := 0; i < count; i++ {
			fmt.Fprintf(&sb, "Benchmark%s 1 %d install-ns", name, v+i)
			if update != "" {
				fmt.Fprintf(&sb, " %d%s", v+i, update)
			}
			sb.WriteString("\n")
		}
	}
	if side == "head" && os.Getenv("CIBENCH_HEAD_FAIL") != "" {
		sb.Reset() // a run that failed before its first result
		sb.WriteString("FAIL\texample.com/x [build failed]\nFAIL\n")
	}
	if err := os.WriteFile(out, []byte(sb.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// standInBenchcmp is cmd/benchcmp of the stand-in repository: it runs the
// real benchcmp, built by the test, named by $CIBENCH_BENCHCMP.
const standInBenchcmp = `package main

import (
	"os"
	"syscall"
)

func main() {
	bin := os.Getenv("CIBENCH_BENCHCMP")
	panic(syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ()))
}
`

// standIn makes the stand-in repository, with two commits (base, then
// head), and returns its root.
func standIn(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	script := must(os.ReadFile(filepath.Join(repoRoot, "scripts", "ci-bench.sh")))
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write("scripts/ci-bench.sh", string(script))
	write("scripts/lib.sh", string(must(os.ReadFile(filepath.Join(repoRoot, "scripts", "lib.sh"))))) // beside it, as in a checkout
	write("go.mod", "module example.com/standin\n\ngo 1.26\n")
	write("cmd/benchcmp/main.go", standInBenchcmp)
	write("cmd/benchrun/main.go", strings.Replace(standInBenchrun, "SIDE", "base", 1))
	gitIn("init", "-q")
	gitIn("add", ".")
	gitIn("commit", "-q", "-m", "base")
	write("cmd/benchrun/main.go", strings.Replace(standInBenchrun, "SIDE", "head", 1))
	gitIn("commit", "-q", "-am", "head")
	return dir
}

// runStandIn runs the stand-in's ci-bench.sh in dir with env added, and
// returns its combined output and exit status.
func runStandIn(t *testing.T, root, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "ci-bench.sh")}, args...)...)
	cmd.Dir = dir
	// TMPDIR: a run without --out keeps its results in a directory of
	// its own under it, which must not outlive the test.
	cmd.Env = append(append(os.Environ(), "CIBENCH_BENCHCMP="+filepath.Join(bin, "benchcmp"), "GITHUB_STEP_SUMMARY=",
		"TMPDIR="+t.TempDir()), env...)
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// A benchmark name holding a comma is quoted in benchcmp's CSV, and one
// holding a backquote must not end the summary's code span: the script
// read the CSV by splitting at commas, so such a row was never flagged,
// and the gate passed.
func TestCIBenchNameWithCommaAndBackquote(t *testing.T) {
	root := standIn(t)
	out := filepath.Join(t.TempDir(), "out")
	name := "X/workload=a,b`c/index=imported"
	got, code := runStandIn(t, root, t.TempDir(),
		[]string{"CIBENCH_NAME=" + name, "CIBENCH_BASE=100", "CIBENCH_HEAD=200"},
		"--count", "6", "--rounds", "1", "--threshold", "*=50", "--out", out, "HEAD~1")
	if code != 1 || !strings.Contains(got, "confirmed regression in 1 row(s)") {
		t.Fatalf("exit %d, want 1 with one confirmed row:\n%s", code, got)
	}
	summary := string(must(os.ReadFile(filepath.Join(out, "summary.md"))))
	if want := "- ``" + name + "`` (install-sec)\n"; !strings.Contains(summary, want) {
		t.Errorf("summary.md lacks %q:\n%s", want, summary)
	}
}

// A threshold given in the unit benchcmp shows (install-sec, for results
// in install-ns) held in the first comparison but was dropped from the
// confirming one, which then flagged any change.
func TestCIBenchConfirmKeepsTidiedThreshold(t *testing.T) {
	root := standIn(t)
	got, code := runStandIn(t, root, t.TempDir(),
		[]string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=200", "CIBENCH_HEAD_CONFIRM=110"},
		"--count", "6", "--rounds", "1", "--threshold", "install-sec=50", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 0 || !strings.Contains(got, "1 row(s) flagged") || !strings.Contains(got, "no confirmed regression") {
		t.Errorf("exit %d, want 0: +10%% in the confirming round is within install-sec=50:\n%s", code, got)
	}
}

// The default threshold, *=5, is that of every unit without its own: a
// --threshold for one unit alone left the others at benchcmp's default,
// 0, so that a 3% change in ns/update, within the 5% a run without the
// flag allows, failed the gate that loosened install time.
func TestCIBenchOneUnitThresholdKeepsTheDefault(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=1000", "CIBENCH_HEAD=1030", "CIBENCH_UPDATE=1"}
	got, code := runStandIn(t, root, t.TempDir(), env,
		"--count", "6", "--rounds", "1", "--threshold", "install-ns=50", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 0 || strings.Contains(got, "flagged") {
		t.Errorf("exit %d, want 0 with nothing flagged: +3%% in ns/update is within the default *=5:\n%s", code, got)
	}
	got, code = runStandIn(t, root, t.TempDir(), env,
		"--count", "6", "--rounds", "1", "--threshold", "install-ns=50", "--threshold", "*=1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 1 || !strings.Contains(got, "confirmed regression in 1 row(s)") {
		t.Errorf("exit %d, want 1 with ns/update confirmed: a '*' threshold given replaces the default:\n%s", code, got)
	}
}

// A threshold benchcmp refuses stops the script after the first round,
// not after every round has run.
func TestCIBenchBadThresholdStopsEarly(t *testing.T) {
	root := standIn(t)
	got, code := runStandIn(t, root, t.TempDir(),
		[]string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100"},
		"--count", "6", "--rounds", "3", "--threshold", "instal-ns=5", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 2 || !strings.Contains(got, "did you mean install-ns?") || !strings.Contains(got, "ci-bench: --threshold instal-ns=5") {
		t.Errorf("exit %d, want 2 naming the threshold:\n%s", code, got)
	}
	if strings.Contains(got, "round 2 of 3") {
		t.Errorf("it ran round 2 with a threshold benchcmp refuses:\n%s", got)
	}
}

// --out and $GITHUB_STEP_SUMMARY are relative to where the script runs,
// not to the repository root it moves to; an --out that is not a new or
// empty directory is refused before anything is written there.
func TestCIBenchOutPaths(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100"}
	t.Run("relative", func(t *testing.T) {
		cwd := t.TempDir()
		got, code := runStandIn(t, root, cwd, append(env, "GITHUB_STEP_SUMMARY=step summary.md"),
			"--count=6", "--rounds=1", "--out=my results", "HEAD~1")
		if code != 0 {
			t.Fatalf("exit %d, want 0:\n%s", code, got)
		}
		for _, f := range []string{"my results/summary.md", "my results/base-1.txt", "step summary.md"} {
			if _, err := os.Stat(filepath.Join(cwd, f)); err != nil {
				t.Errorf("%s is not where the script ran: %v\n%s", f, err, got)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "my results")); err == nil {
			t.Errorf("--out my results was made in the repository root")
		}
	})
	t.Run("not empty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, code := runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", dir, "HEAD~1")
		if code != 2 || !strings.Contains(got, "ci-bench: --out "+dir+": directory is not empty") {
			t.Errorf("exit %d, want 2 naming --out:\n%s", code, got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("it wrote into the refused directory: %v", entries)
		}
	})
	t.Run("a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		got, code := runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", file, "HEAD~1")
		if code != 2 || !strings.Contains(got, "ci-bench: --out "+file+": exists and is not a directory") {
			t.Errorf("exit %d, want 2 naming --out:\n%s", code, got)
		}
	})
}

// A benchmark of the base with no result at HEAD (a workload dropped from
// the suite, a renamed one) is compared with nothing: the script printed
// it as "not compared" and passed. It fails now (exit 1), naming it, unless
// --allow-lost says it was dropped on purpose; and with a flagged row as
// well, benchcmp's one message holding both reasons was left out whole,
// so the lost benchmark was not even named.
func TestCIBenchLostBenchmark(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w Y/workload=v", "CIBENCH_HEAD_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100"}
	t.Run("fails", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		got, code := runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", out, "HEAD~1")
		if code != 1 || !strings.Contains(got, "ci-bench: lost: 1 benchmark(s) of the baseline base have no result to compare with (Y/workload=v)") ||
			!strings.Contains(got, "ci-bench: failed: ") {
			t.Fatalf("exit %d, want 1 naming the benchmark HEAD lost:\n%s", code, got)
		}
		summary := string(must(os.ReadFile(filepath.Join(out, "summary.md"))))
		if !strings.Contains(summary, "**Failed:** lost: 1 benchmark(s) of the baseline base have no result to compare with (Y/workload=v).") {
			t.Errorf("summary.md does not say what was lost:\n%s", summary)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		got, code := runStandIn(t, root, t.TempDir(), env, "--allow-lost", "--count", "6", "--rounds", "1", "--out", out, "HEAD~1")
		if code != 0 || !strings.Contains(got, "ci-bench: not compared (--allow-lost): ") || !strings.Contains(got, "Y/workload=v") {
			t.Fatalf("exit %d, want 0 naming the benchmark not compared:\n%s", code, got)
		}
		summary := string(must(os.ReadFile(filepath.Join(out, "summary.md"))))
		if !strings.Contains(summary, "**No regression** in what was compared; not compared: ") {
			t.Errorf("summary.md does not say what was not compared:\n%s", summary)
		}
	})
	t.Run("with a regression", func(t *testing.T) {
		got, code := runStandIn(t, root, t.TempDir(),
			[]string{"CIBENCH_NAME=X/workload=w Y/workload=v", "CIBENCH_HEAD_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=200", "CIBENCH_HEAD_CONFIRM=100"},
			"--count", "6", "--rounds", "1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
		if code != 1 || !strings.Contains(got, "ci-bench: lost: 1 benchmark(s) of the baseline base have no result to compare with (Y/workload=v)") {
			t.Fatalf("exit %d, want 1 naming the lost benchmark beside the unconfirmed row:\n%s", code, got)
		}
	})
}

// The working tree is HEAD, and a new .go file not yet added is built into
// its benchrun: the commit was not marked -dirty for untracked files. An
// ignored file changes nothing and still does not mark it.
func TestCIBenchUntrackedIsDirty(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100"}
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte("scratch.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scratch.txt"), []byte("ignored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, code := runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 0 || strings.Contains(got, "-dirty") {
		t.Fatalf("exit %d, want 0 and HEAD not -dirty with an ignored file only:\n%s", code, got)
	}
	if err := os.WriteFile(filepath.Join(root, "cmd", "benchrun", "extra.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, code = runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 0 || !strings.Contains(got, "-dirty); results in") {
		t.Errorf("exit %d, want 0 and HEAD -dirty with an untracked .go file:\n%s", code, got)
	}
}

// An --out inside the checkout (a CI job's artifact directory) is
// untracked: benchcmp was built into it before HEAD's benchrun, which go
// build then stamped -dirty, so HEAD's result files said -dirty where the
// script's first line and the summary said the tree was clean.
func TestCIBenchOutInsideTheCheckout(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100"}
	got, code := runStandIn(t, root, root, env, "--count", "6", "--rounds", "1", "--out", "ci-out", "HEAD~1")
	if code != 0 || strings.Contains(got, "-dirty") {
		t.Fatalf("exit %d, want 0 and HEAD not -dirty:\n%s", code, got)
	}
	head := string(must(os.ReadFile(filepath.Join(root, "ci-out", "head-1.txt"))))
	m := regexp.MustCompile(`(?m)^commit: (\S+)$`).FindStringSubmatch(head)
	if m == nil || strings.HasSuffix(m[1], "-dirty") || m[1] == "unknown" {
		t.Errorf("head-1.txt's commit line %q, want HEAD's revision, not -dirty, as the script said:\n%s", m, head)
	}
}

// A HEAD whose results are FAIL lines alone (a run that failed before its
// first result) has nothing to compare: benchcmp exits 1 for the failed
// run and writes no report, and ci-bench stops (exit 2) saying so, rather
// than blame its --threshold or read the missing report as no regression.
func TestCIBenchRunWithoutResultsStops(t *testing.T) {
	root := standIn(t)
	got, code := runStandIn(t, root, t.TempDir(),
		[]string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100", "CIBENCH_HEAD_FAIL=1"},
		"--count", "6", "--rounds", "1", "HEAD~1")
	if code != 2 || !strings.Contains(got, "FAIL lines only") || !strings.Contains(got, "round 1: a run failed") {
		t.Fatalf("exit %d, want 2 naming the failed run:\n%s", code, got)
	}
	// Without --out the results and logs stay in the directory the first
	// line names, under $TMPDIR, for the failed run to be read.
	m := regexp.MustCompile(`results in (\S+)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no results directory named:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(m[1], "head-1.log")); err != nil {
		t.Errorf("the failed run's log is not kept where the script said: %v", err)
	}
}

// Run through a symbolic link (~/bin/ci-bench), the script looked for the
// repository next to the link, not next to itself.
func TestCIBenchThroughSymlink(t *testing.T) {
	root := standIn(t)
	link := filepath.Join(t.TempDir(), "ci-bench")
	if err := os.Symlink(filepath.Join(root, "scripts", "ci-bench.sh"), link); err != nil {
		t.Skip(err)
	}
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", link, "--count", "6", "--rounds", "1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CIBENCH_BENCHCMP="+filepath.Join(bin, "benchcmp"), "GITHUB_STEP_SUMMARY=", "TMPDIR="+t.TempDir(),
		"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ci-bench: no confirmed regression") {
		t.Errorf("%v, want exit 0:\n%s", err, out)
	}
}
