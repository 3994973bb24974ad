package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goEchoStub is a stand-in for go that prints, on its standard error (a
// script may read its output), the directory it runs in and each argument
// in brackets, and fails: scripts/figures.sh's build step stops there,
// before any benchmark.
const goEchoStub = `#!/bin/sh
echo "go stub in $(pwd -P)" >&2
for a; do echo "[$a]" >&2; done
exit 97
`

// stubGo puts goEchoStub first on PATH for the rest of the test.
func stubGo(t *testing.T) {
	t.Helper()
	stubsOnPath(t, map[string]string{"go": goEchoStub})
}

// stubCommands writes each script of stubs (command name → its text) as
// an executable into a new directory, and returns the directory.
func stubCommands(t *testing.T, stubs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range stubs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// stubsOnPath puts the commands of stubs (stubCommands) first on PATH for
// the rest of the test.
func stubsOnPath(t *testing.T, stubs map[string]string) {
	t.Helper()
	t.Setenv("PATH", stubCommands(t, stubs)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// scripts/figures.sh took --help for OUTDIR (mkdir printed its own help,
// then the build step failed writing --help/build.txt, exit 1), failed in
// mkdir on -h with exit 1, dropped a second argument, and said an empty
// file OUTDIR "exists and is not empty". Each is now bad usage (exit 2)
// with a message naming it, or the usage (exit 0), before anything is
// made.
func TestFiguresUsage(t *testing.T) {
	stubGo(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, 0, "figures.sh runs, in one go, every benchmark"},
		{"h", []string{"-h"}, 0, "scripts/figures.sh [OUTDIR]"},
		{"unknown flag", []string{"--out=x"}, 2, "figures.sh: unknown flag --out=x; the one argument is OUTDIR"},
		{"two arguments", []string{"a", "b"}, 2, "figures.sh: takes one argument, OUTDIR; got 2: a b"},
		{"empty", []string{""}, 2, "figures.sh: OUTDIR is empty"},
		// Taken as a directory named -, it ran every step (minutes) into ./-.
		{"dash", []string{"-"}, 2, "figures.sh: OUTDIR -: - names no directory"},
		{"file", []string{"file"}, 2, "exists and is not a directory"},
		{"full directory", []string{"full"}, 2, "exists and is not empty; give a new or empty one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.WriteFile(filepath.Join(cwd, "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(cwd, "full", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			got, code := runScriptIn(t, cwd, "figures.sh", tc.args...)
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, got)
			}
			if strings.Contains(got, "== build") {
				t.Errorf("the build step ran:\n%s", got)
			}
			for _, name := range append([]string{"--help", "-h"}, tc.args...) {
				if name == "" || name == "file" || name == "full" {
					continue
				}
				for _, dir := range []string{cwd, repoRoot} {
					if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
						os.RemoveAll(filepath.Join(dir, name))
						t.Errorf("%s was made in %s", name, dir)
					}
				}
			}
		})
	}
}

// Run through a symbolic link, from another directory, with a $TMPDIR
// holding a space, scripts/figures.sh looked for the repository next to
// the link, made a relative OUTDIR under the repository root rather than
// where it ran, and split the test binaries' paths at the space (its
// multi-command steps were sh -c strings).
func TestFiguresPaths(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	stubGo(t)
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "figures.sh"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(script)))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "figures")
	if err := os.Symlink(script, link); err != nil {
		t.Skip(err)
	}
	tmp := filepath.Join(t.TempDir(), "tmp dir")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	cmd := exec.Command("bash", link, "out dir")
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "figures.sh: step build failed") {
		t.Fatalf("%v, want exit 1 from the build step (go fails):\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "out dir")); err == nil {
		os.RemoveAll(filepath.Join(root, "out dir"))
		t.Errorf("OUTDIR \"out dir\" was made in the repository root")
	}
	log, err := os.ReadFile(filepath.Join(cwd, "out dir", "build.txt"))
	if err != nil {
		t.Fatalf("no build.txt in OUTDIR, relative to where the script ran: %v\n%s", err, out)
	}
	if want := "go stub in " + root + "\n"; !strings.Contains(string(log), want) {
		t.Errorf("go did not run in the repository (want %q):\n%s", want, log)
	}
	if want := "\n[" + tmp + "/"; !strings.Contains(string(log), want) || !strings.Contains(string(log), "/batch.test]\n") {
		t.Errorf("the test binary's path is not one argument under %q:\n%s", tmp, log)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		t.Errorf("left in $TMPDIR (%v): %v", err, left)
	}
}
