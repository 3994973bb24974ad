package benchcmp

import (
	"bytes"
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

// TestCIBenchArguments checks scripts/ci-bench.sh's argument handling: it
// needs cmd/benchrun to do more, and refuses clearly (exit 2) until then.
func TestCIBenchArguments(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := "../../scripts/ci-bench.sh"
	_, statErr := os.Stat("../../cmd/benchrun")
	haveBenchrun := statErr == nil
	// In a source archive (no .git) there is no BASE_REF to look up: the
	// script says it needs a git clone.
	unknownRef := "BASE_REF no-such-ref-xyz: no such commit"
	if !inGitWorkTree("../..") {
		unknownRef = "is not the top of a git work tree (a source archive?)"
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "Usage:"},
		{nil, 2, "missing BASE_REF"},
		{[]string{"no-such-ref-xyz"}, 2, unknownRef},
		{[]string{"HEAD", "HEAD~1"}, 2, "one BASE_REF only"},
		{[]string{"--count", "0", "HEAD"}, 2, "--count 0: want a positive integer"},
		{[]string{"--rounds", "x", "HEAD"}, 2, "--rounds x"},
		{[]string{"--gomaxprocs", "-1", "HEAD"}, 2, "--gomaxprocs -1"},
		{[]string{"--seed", "s", "HEAD"}, 2, "--seed s"},
		{[]string{"--threshold"}, 2, "--threshold needs a value"},
		{[]string{"--bogus", "HEAD"}, 2, "unknown flag --bogus"},
	} {
		cmd := exec.Command("bash", append([]string{script}, tc.args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("ci-bench.sh %s: exit %d, output %q; want exit %d and %q", strings.Join(tc.args, " "), code, out.String(), tc.code, tc.want)
		}
	}
	if !haveBenchrun {
		cmd := exec.Command("bash", script, "HEAD")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "needs cmd/benchrun") {
			t.Errorf("without cmd/benchrun: %v %q, want exit 2 saying it needs cmd/benchrun", err, out)
		}
	}
}
