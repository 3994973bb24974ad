package main

// Tests of the scripts in trees other than a plain clone: a source
// archive, one unpacked inside another repository, and a workspace file
// (go.work) of another project above the checkout.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inGitWorkTree reports whether root is the top of a git work tree, as
// ci-bench.sh needs it to be: a source archive has no .git.
func inGitWorkTree(root string) bool {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	top, err1 := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	abs, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	abs, err2 = filepath.EvalSymlinks(abs)
	return err2 == nil && top == abs
}

// unrelatedWorkspace writes a go.work of another module, one this
// repository is no part of, and returns its path.
func unrelatedWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other", "go.mod"), []byte("module example.com/other\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "go.work")
	if err := os.WriteFile(work, []byte("go 1.26\n\nuse ./other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work
}

// ci-bench.sh builds BASE_REF from the repository's history. In a source
// archive it said "not inside a git work tree", and in an archive unpacked
// inside another repository's work tree it took that repository for its
// own and said "needs cmd/benchrun at HEAD, and this tree has none",
// though the tree has one. Either way it now says the tree is no git
// clone of its own and that it needs one.
func TestCIBenchNeedsGitWorkTree(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	script := must(os.ReadFile(filepath.Join(repoRoot, "scripts", "ci-bench.sh")))
	lib := must(os.ReadFile(filepath.Join(repoRoot, "scripts", "lib.sh")))
	archive := func(dir string) {
		t.Helper()
		for name, text := range map[string]string{
			"scripts/ci-bench.sh":  string(script),
			"scripts/lib.sh":       string(lib),
			"go.mod":               "module example.com/standin\n\ngo 1.26\n",
			"cmd/benchrun/main.go": "package main\n\nfunc main() {}\n",
		} {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(dir, ceiling string) (string, int) {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(dir, "scripts", "ci-bench.sh"), "HEAD")
		cmd.Dir = t.TempDir()
		// No git work tree above the test's directories counts.
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+ceiling, "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	const want = "is not the top of a git work tree (a source archive?): ci-bench builds BASE_REF from this repository's git history, so run it in a git clone"

	alone := t.TempDir()
	archive(alone)
	if got, code := run(alone, filepath.Dir(alone)); code != 2 || !strings.Contains(got, "ci-bench: "+alone+" "+want) {
		t.Errorf("a source archive: exit %d, want 2 saying %q:\n%s", code, want, got)
	}

	outer := t.TempDir()
	if out, err := exec.Command("git", "-C", outer, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	inner := filepath.Join(outer, "vendor", "tracebench")
	archive(inner)
	got, code := run(inner, filepath.Dir(outer))
	if code != 2 || !strings.Contains(got, want) || !strings.Contains(got, "inside the git work tree of "+outer) {
		t.Errorf("an archive inside another work tree: exit %d, want 2 saying %q and naming %s:\n%s", code, want, outer, got)
	}
}

// The scripts build this module alone. With a go.work of another project
// in a parent directory of the checkout, or GOWORK naming one, go refused
// the module's packages ("directory cmd/benchcmp is contained in a module
// that is not one of the workspace modules listed in go.work") and
// ci-bench.sh stopped: "building benchcmp at HEAD failed".
func TestCIBenchIgnoresOtherWorkspace(t *testing.T) {
	root := standIn(t)
	env := []string{"CIBENCH_NAME=X/workload=w", "CIBENCH_BASE=100", "CIBENCH_HEAD=100", "GOWORK=" + unrelatedWorkspace(t)}
	got, code := runStandIn(t, root, t.TempDir(), env, "--count", "6", "--rounds", "1", "--out", filepath.Join(t.TempDir(), "out"), "HEAD~1")
	if code != 0 || !strings.Contains(got, "ci-bench: no confirmed regression") {
		t.Errorf("exit %d, want 0 with GOWORK naming another workspace:\n%s", code, got)
	}
}

// bench-baseline.sh builds benchrun and benchcmp itself (without --bin):
// under another project's workspace it stopped with "building benchrun
// failed".
func TestBenchBaselineIgnoresOtherWorkspace(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	// A baseline of another machine: the script builds both commands,
	// probes this machine, says it skipped and exits 0.
	baseline := withConfig(t, filepath.Join(repoRoot, "results", "baseline.txt"), "cpu", "999 elsewhere", "")
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "bench-baseline.sh"), "--baseline", baseline)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "GOWORK="+unrelatedWorkspace(t))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "bench-baseline: skipped: this machine's cpu is '") {
		t.Errorf("%v, want exit 0 and the comparison skipped with GOWORK naming another workspace:\n%s", err, out)
	}
}
