//go:build !unix || aix

package benchrun

import "os"

// lockOut locks nothing where the system offers no flock (or x/sys does
// not wrap it, as on AIX): two runs into one --out are not told apart
// there.
func lockOut(f *os.File) error { return nil }
