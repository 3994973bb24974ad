package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unreadableFile returns a regular file this process may stat but not
// open for reading: path, made with mode 000, or, where mode bits do not
// stop this process (root, or a process with CAP_DAC_OVERRIDE), a
// write-only file of /proc/sys, whose mode stops root too. The test is
// skipped, saying why, when neither is to be had.
func unreadableFile(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("time,diff,x\n0,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o000); err != nil {
		t.Fatal(err)
	}
	candidates := []string{path, "/proc/sys/vm/compact_memory", "/proc/sys/vm/drop_caches"}
	for _, p := range candidates {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(p)
		if err == nil {
			f.Close()
			continue
		}
		if errors.Is(err, fs.ErrPermission) {
			return p
		}
	}
	t.Skipf("no file this process (uid %d) may not read: mode 000 does not stop it, and no write-only file of /proc/sys does (%s)", os.Geteuid(), strings.Join(candidates[1:], ", "))
	return ""
}

// TestUnreadableSpecAndCSVAreNamed: a spec file, or a spec's csv input,
// that this user may not read (mode 000 for an ordinary user; for root,
// whom mode bits do not stop, a write-only file of /proc/sys) is bad
// input, exit 2, in every command that reads it, named as docs/spec.md
// "Decoding is strict" says: the spec by its file, the CSV at the spec's
// line and field; nothing is written.
func TestUnreadableSpecAndCSVAreNamed(t *testing.T) {
	dir := t.TempDir()
	u := unreadableFile(t, filepath.Join(dir, "unreadable"))
	t.Logf("the unreadable file: %s", u)
	w := filepath.Join(dir, "w.json")
	if err := os.WriteFile(w, []byte(`{"version": 1, "name": "w",
"inputs": {"a": {"columns": ["x"], "csv": `+strings.ReplaceAll(`"`+u+`"`, `\`, `\\`)+`}},
"query": {"from": [{"as": "a", "collection": "a"}]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "results.txt")
	genDir := filepath.Join(dir, "gen")
	for _, tc := range []struct {
		spec, want string
	}{
		{u, u + ": cannot read spec: permission denied\n"},
		{w, w + ":2: inputs.a.csv: " + u + ": cannot read CSV: permission denied\n"},
	} {
		for _, args := range [][]string{
			{"validate", tc.spec},
			{"run", tc.spec, "--count", "1", "--out", outFile},
			{"gen", tc.spec, "--out", genDir},
			{"eval", tc.spec, "--at", "1"},
			{"explain", tc.spec},
		} {
			code, out, errOut := execute(t, args...)
			if code != 2 || errOut != tc.want || out != "" {
				t.Errorf("benchrun %q: exit %d, stdout %q, stderr %q; want exit 2, no output and %q", args, code, out, errOut, tc.want)
			}
		}
	}
	for _, p := range []string{outFile, genDir} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused command wrote %s", p)
		}
	}
}
