package batch

import (
	"strconv"
	"unsafe"

	"github.com/tracebench/tracebench/internal/invariants"
)

// Columns the kernels fill are allocated without zeroing them first. A
// merge's output is as long as its inputs together, tens of megabytes at the
// top of a large trace, and make clears all of it, evicting the cache, only
// for the merge to write every element it keeps (and the tail past what
// consolidation kept is cut, never read). Go allocates unzeroed memory for
// itself (runtime.mallocgc with needzero false, the allocation behind
// append and a make followed by a copy); the runtime keeps that function's
// signature for the packages that link to it by name (go.dev/issue/67401).
//
// The contract of a column from column: every element below the length a
// batch keeps is written before it is read. An invariants build fills the
// columns with a pattern no test writes (0xa5 bytes), so a kernel that read
// an element it had not written would show it in the tests' results.

//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// Uninit returns n elements of memory that is not zeroed first, for a
// column its caller writes whole before anything reads it (as column; an
// invariants build fills it with 0xa5 bytes): an input's share of a chunk
// and an exchange's parts (core/dataflow) are allocated by it. A negative
// n is a programmer error: Uninit panics naming it, as make does, where
// the allocator was asked for a size that wrapped and the process died
// out of memory.
func Uninit[T int64 | uint64](n int) []T { return column[T](n) }

// negativeColumn panics for a column of n < 0 elements (Uninit's
// programmer error), out of line so that column stays small.
//
//go:noinline
func negativeColumn(n int) {
	panic("batch: Uninit of " + strconv.Itoa(n) + " elements")
}

// column returns n elements of memory that is not zeroed (see above).
func column[T int64 | uint64 | uint32 | rec | keyIdx](n int) []T {
	if n <= 0 {
		if n < 0 {
			negativeColumn(n)
		}
		return []T{}
	}
	var z T
	size := uintptr(n) * unsafe.Sizeof(z)
	// A nil type allocates memory the collector does not scan, right for
	// columns of integers and records of them.
	p := mallocgc(size, nil, false)
	s := unsafe.Slice((*T)(p), n)
	if invariants.Enabled {
		b := unsafe.Slice((*byte)(p), size)
		for i := range b {
			b[i] = 0xa5
		}
	}
	return s
}

// grow returns s with room for n more elements, as slices.Grow does, its
// new room not zeroed (column): for the buffers pushes append to and the
// scratch a sort writes whole, where every element below the length is
// written before it is read. slices.Grow appends a made slice, which
// clears all of the new room first, and a batcher's buffers released
// after a large seal (builderKeep) come back so at the next one: in a
// fresh dataflow's wide arrangement the clearing was a third of its CPU.
// The capacity grows as append's does.
func grow[T int64 | uint64 | uint32 | rec | keyIdx](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	need, c := len(s)+n, cap(s)
	switch {
	case need > 2*c:
		c = need
	case c < 256:
		c *= 2
	default:
		for c < need {
			c += (c + 3*256) / 4
		}
	}
	g := column[T](c)[:len(s)]
	copy(g, s)
	return g
}
