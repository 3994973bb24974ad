//go:build !unix || aix

package benchcmp

import "os"

// beingWritten tells nothing where the system offers no flock: benchrun
// locks its --out file there neither (internal/benchrun, lockOut).
func beingWritten(f *os.File) bool { return false }
