package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// unreadableFile returns a regular file this process may stat but not
// open for reading: name, made in the current directory with mode 000,
// or, where mode bits do not stop this process (root, or a process with
// CAP_DAC_OVERRIDE), a write-only file of /proc/sys, whose mode stops
// root too. The test is skipped, saying why, when neither is to be had.
func unreadableFile(t *testing.T, name string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte("BenchmarkA 1 2 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o000); err != nil {
		t.Fatal(err)
	}
	candidates := []string{name, "/proc/sys/vm/compact_memory", "/proc/sys/vm/drop_caches"}
	for _, path := range candidates {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(path)
		if err == nil {
			f.Close()
			continue
		}
		if errors.Is(err, fs.ErrPermission) {
			return path
		}
	}
	t.Skipf("no file this process (uid %d) may not read: mode 000 does not stop it, and no write-only file of /proc/sys does (%s)", os.Geteuid(), strings.Join(candidates[1:], ", "))
	return ""
}

// TestUnreadableInputIsNamed: a file this user may not read (mode 000
// for an ordinary user; for root, whom mode bits do not stop, a
// write-only file of /proc/sys) is bad input, exit 2, named by its file
// alone in every subcommand, as a missing one is: "bad input: FILE:
// permission denied". A profile was named by the call that found it
// ("open direct.pprof: permission denied"), unlike every other file.
func TestUnreadableInputIsNamed(t *testing.T) {
	inFixtureDir(t)
	u := unreadableFile(t, "unreadable.txt")
	t.Logf("the unreadable file: %s", u)
	want := "benchcmp: bad input: " + u + ": permission denied\n"
	for _, args := range [][]string{
		{"old.txt", u},
		{u, "new.txt"},
		{"--col", "/index", u},
		{"merge", "shard0.txt", u},
		{"scaling", "--by", "/rows", u},
		{"profile", "--base", u, "imported.pprof", "--flamegraph", "d.html"},
		{"profile", "--base", "direct.pprof", u, "--flamegraph", "d.html"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != 2 || errOut.String() != want || out.Len() != 0 {
			t.Errorf("benchcmp %q: exit %d, stdout %q, stderr %q; want exit 2, no output and %q", args, code, out.String(), errOut.String(), want)
		}
	}
	if _, err := os.Stat("d.html"); err == nil {
		t.Error("a refused profile wrote d.html")
	}
}
