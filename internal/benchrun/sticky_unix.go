//go:build unix

package benchrun

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// errStickyReplace is why a file in a directory with the sticky bit
// cannot be replaced by a rename.
var errStickyReplace = errors.New("another user's file in a directory with the sticky bit (as /tmp), which only its owner may replace")

// mayReplace returns an error when a rename into path, an existing file,
// would be refused however writable the file is: its directory has the
// sticky bit, and neither the file nor the directory is this process's
// (root, which the bit does not stop, excepted). A file written through a
// temporary name failed there only when renamed into place, after the
// run (exit 1), or, for gen, leaving its backup behind.
func mayReplace(path string, file os.FileInfo) error {
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil || dir.Mode()&os.ModeSticky == 0 {
		return nil
	}
	euid := os.Geteuid()
	fs, ok := file.Sys().(*syscall.Stat_t)
	ds, dok := dir.Sys().(*syscall.Stat_t)
	if euid == 0 || !ok || !dok || int(fs.Uid) == euid || int(ds.Uid) == euid {
		return nil
	}
	return &os.PathError{Op: "replace", Path: path, Err: errStickyReplace}
}
