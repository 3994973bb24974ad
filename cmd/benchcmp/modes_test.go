//go:build unix

package main

import (
	"bytes"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// TestProfileOutputMode runs profile under umasks 022, 002 and 000: the
// page, written through a temporary file renamed into place, gets 0666
// less the umask when new, as a shell's > makes a file, and keeps the
// mode of a file it is written over. It got 0644 less the umask, so under
// umask 002 the page was not group-writable where > makes it so. The test
// changes the process's umask, so it is not parallel.
func TestProfileOutputMode(t *testing.T) {
	inFixtureDir(t)
	profile := func(mask int) {
		t.Helper()
		old := syscall.Umask(mask)
		var out, errOut bytes.Buffer
		code := run([]string{"profile", "--base", "direct.pprof", "imported.pprof", "--flamegraph", "diff.html"}, &out, &errOut)
		syscall.Umask(old)
		if code != 0 {
			t.Fatalf("umask %03o: profile: exit %d: %s", mask, code, errOut.String())
		}
	}
	mode := func() fs.FileMode {
		t.Helper()
		st, err := os.Stat("diff.html")
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	for _, mask := range []int{0o022, 0o002, 0o000} {
		if err := os.Remove("diff.html"); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		profile(mask)
		if got, want := mode(), fs.FileMode(0o666&^mask); got != want {
			t.Errorf("umask %03o: a new page has mode %v, want %v", mask, got, want)
		}
		if err := os.Chmod("diff.html", 0o640); err != nil {
			t.Fatal(err)
		}
		profile(mask)
		if got := mode(); got != 0o640 {
			t.Errorf("umask %03o: a page written over a file of mode 0640 has mode %v", mask, got)
		}
	}
}
