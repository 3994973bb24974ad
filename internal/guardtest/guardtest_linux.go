//go:build linux

package guardtest

import (
	"syscall"
	"testing"
	"unsafe"
)

func slice[T any](t testing.TB, n int) []T {
	t.Helper()
	var z T
	size := n * int(unsafe.Sizeof(z))
	page := syscall.Getpagesize()
	span := (size+page-1)/page*page + page
	m, err := syscall.Mmap(-1, 0, span, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("guardtest: mapping %d bytes: %v", span, err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	if err := syscall.Mprotect(m[span-page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("guardtest: protecting the guard page: %v", err)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&m[span-page-size])), n)
}
