// Package guardtest places, in tests, slices that end where a page the
// process may not touch begins, so that a kernel reading or writing one
// element past its slice faults there and stops the test binary, where an
// overrun into ordinary heap memory would pass unseen (a prefetch never
// faults). The memory is mapped by the test, not the Go heap's: the
// element type must hold no pointers. Linux only; elsewhere Slice skips
// the test.
package guardtest

import "testing"

// Slice returns n zeroed elements of T whose last one ends at a guard page
// (on Linux; elsewhere it skips the test). The mapping is released when the
// test ends. T must hold no pointers.
func Slice[T any](t testing.TB, n int) []T {
	t.Helper()
	return slice[T](t, n)
}
