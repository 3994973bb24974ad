//go:build unix && !aix

package benchrun

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockOut takes an exclusive lock on the open --out file f without
// waiting. It returns errOutBusy when another process holds it, and nil
// when the file system does not lock (the run is then unguarded, as it
// would be without locks).
func lockOut(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errOutBusy
	}
	return nil
}
