//go:build unix && !aix

package benchcmp

import (
	"os"

	"golang.org/x/sys/unix"
)

const lockingSystem = true

// lockExclusive locks f as benchrun run locks its --out file.
func lockExclusive(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}
