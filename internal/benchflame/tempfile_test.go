package benchflame

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs f with the process's umask set to mask.
func withUmask(t *testing.T, mask int, f func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// A page written through a temporary file has the mode a file created
// in its place has: 0666 less the umask when new, and the permissions of
// the file it replaces. It was chmodded to 0644 whatever the umask, so
// under umask 077 a profile's page was readable by all, and a file made
// private became readable again when it was written over.
func TestWriteFileAtomicMode(t *testing.T) {
	for _, tc := range []struct {
		mask int
		want fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o000, 0o666}, {0o027, 0o640}, {0o002, 0o664}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "flame.html")
		withUmask(t, tc.mask, func() {
			if err := writeFileAtomic(path, []byte("<p>page</p>\n")); err != nil {
				t.Fatal(err)
			}
		})
		if st, err := os.Stat(path); err != nil {
			t.Fatal(err)
		} else if st.Mode().Perm() != tc.want {
			t.Errorf("umask %03o: a new page has mode %v, want %v", tc.mask, st.Mode().Perm(), tc.want)
		}
	}
	for _, perm := range []fs.FileMode{0o600, 0o640, 0o664} {
		path := filepath.Join(t.TempDir(), "flame.html")
		if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
		withUmask(t, 0o022, func() {
			if err := writeFileAtomic(path, []byte("<p>page</p>\n")); err != nil {
				t.Fatal(err)
			}
		})
		if st, err := os.Stat(path); err != nil {
			t.Fatal(err)
		} else if st.Mode().Perm() != perm {
			t.Errorf("a page written over a file of mode %v has mode %v", perm, st.Mode().Perm())
		}
	}
}

// pprof's web view reads its saved settings from os.UserConfigDir, which
// fails with HOME and XDG_CONFIG_HOME unset (a service's environment, env
// -i): the export failed, called a bad profile ("neither
// $XDG_CONFIG_HOME nor $HOME are defined"), so benchrun --flamegraph and
// benchcmp profile wrote no page. The subprocess now has a configuration
// directory of its own.
func TestWriteWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("stackViewer(")) {
		t.Error("the page holds no flame graph")
	}
}
