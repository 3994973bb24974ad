package benchrun

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// An output written through a temporary file (a profile, gen's files)
// gets the mode a file created in its place gets: 0666 less the umask
// when new, the permissions of the file it replaces otherwise. It was
// chmodded to 0644 whatever the umask, so umask 077 did not keep a
// profile private, and a file made private was readable again once
// written over.
func TestPendingFileMode(t *testing.T) {
	write := func(t *testing.T, path string, mask int, all bool) {
		t.Helper()
		old := syscall.Umask(mask)
		defer syscall.Umask(old)
		p, err := createPending(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("data\n")); err != nil {
			t.Fatal(err)
		}
		if all {
			err = commitAll([]*pendingFile{p}, os.Rename)
		} else {
			err = p.commit()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mode := func(t *testing.T, path string) fs.FileMode {
		t.Helper()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	for _, all := range []bool{false, true} {
		for _, tc := range []struct {
			mask int
			want fs.FileMode
		}{{0o022, 0o644}, {0o077, 0o600}, {0o000, 0o666}, {0o027, 0o640}, {0o002, 0o664}} {
			path := filepath.Join(t.TempDir(), "cpu.prof")
			write(t, path, tc.mask, all)
			if got := mode(t, path); got != tc.want {
				t.Errorf("umask %03o (commitAll %v): a new output has mode %v, want %v", tc.mask, all, got, tc.want)
			}
		}
		for _, perm := range []fs.FileMode{0o600, 0o640, 0o664} {
			path := filepath.Join(t.TempDir(), "cpu.prof")
			if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, perm); err != nil {
				t.Fatal(err)
			}
			write(t, path, 0o022, all)
			if got := mode(t, path); got != perm {
				t.Errorf("commitAll %v: an output written over a file of mode %v has mode %v", all, perm, got)
			}
		}
	}
}
