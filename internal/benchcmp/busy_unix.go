//go:build unix && !aix

package benchcmp

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// beingWritten reports whether another process holds an exclusive flock on
// the open regular file f: benchrun run holds one on its --out file from
// the moment it truncates it until the run ends, so a result file it is
// still writing has only the lines of the samples finished so far.
func beingWritten(f *os.File) bool {
	err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true
	}
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	return false
}
