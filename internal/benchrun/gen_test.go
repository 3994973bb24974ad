package benchrun

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirFiles lists the entries under dir, recursively, as slash paths.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestGenChecksEveryDestinationFirst checks that a destination gen cannot
// write is bad usage (exit 2) found before any file is written.
func TestGenChecksEveryDestinationFirst(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	// dims.csv is a directory: facts.csv, written first, must not appear.
	g2 := filepath.Join(dir, "g2")
	if err := os.MkdirAll(filepath.Join(g2, "dims.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, out, want string
	}{
		{"lookup", g2, "benchrun: --out: " + filepath.Join(g2, "dims.csv") + " is a directory"},
		{"lookup", file, "benchrun: --out: " + file + " is not a directory"},
		{"lookup", filepath.Join(file, "sub"), "benchrun: --out: " + file + " is not a directory"},
		{"dd", file, "benchrun: --out: " + file + " is not a directory"},
	} {
		var out bytes.Buffer
		err := Gen(GenConfig{Out: &out, Spec: tc.target, Dir: tc.out})
		if err == nil || Message(err) != tc.want || ExitCode(err) != ExitUsage {
			t.Errorf("gen %s --out %s: %v (exit %d), want exit 2 and %q", tc.target, tc.out, err, ExitCode(err), tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("gen %s --out %s printed %q", tc.target, tc.out, out.String())
		}
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"file", "g2", "g2/dims.csv"}) {
		t.Errorf("gen wrote files: %q", got)
	}
}

// TestGenRollsBack checks that gen is all or nothing when renaming a
// written file into place fails: files it replaced get their old
// content back, files and directories it created are removed, and no
// temporary file is left (exit 1).
func TestGenRollsBack(t *testing.T) {
	chdirRoot(t)
	failOn := func(n int) func(string, string) error {
		calls := 0
		return func(oldpath, newpath string) error {
			if calls++; calls == n {
				return errors.New("injected rename failure")
			}
			return os.Rename(oldpath, newpath)
		}
	}
	// lookup writes facts.csv then dims.csv: the second rename fails.
	dir := t.TempDir()
	facts := filepath.Join(dir, "facts.csv")
	if err := os.WriteFile(facts, []byte("old facts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Gen(GenConfig{Out: &out, Spec: "lookup", Dir: dir, rename: failOn(2)})
	if err == nil || !strings.Contains(err.Error(), "injected rename failure") || ExitCode(err) != ExitFailed {
		t.Errorf("err = %v (exit %d), want the rename failure and exit 1", err, ExitCode(err))
	}
	if data, _ := os.ReadFile(facts); string(data) != "old facts\n" {
		t.Errorf("facts.csv holds %.40q after the rollback, want its old content", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"facts.csv"}) || out.Len() != 0 {
		t.Errorf("after the rollback: files %q, stdout %q", got, out.String())
	}
	// A workload of several specs into a directory gen creates: the
	// fourth of six renames fails, and every directory goes again.
	parent := t.TempDir()
	dd := filepath.Join(parent, "a", "dd")
	err = Gen(GenConfig{Out: &out, Spec: "dd", Dir: dd, rename: failOn(4)})
	if err == nil || ExitCode(err) != ExitFailed {
		t.Errorf("dd: err = %v (exit %d), want exit 1", err, ExitCode(err))
	}
	if got := dirFiles(t, parent); len(got) != 0 {
		t.Errorf("dd: after the rollback: %q", got)
	}
	// Without a failure the old content is replaced and no backup is left.
	if err := Gen(GenConfig{Out: &out, Spec: "lookup", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(facts); !strings.HasPrefix(string(data), "time,diff,") {
		t.Errorf("facts.csv not replaced: %.40q", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"dims.csv", "facts.csv"}) {
		t.Errorf("files after gen: %q", got)
	}
}
