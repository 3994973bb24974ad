//go:build !amd64

package batch

import "unsafe"

// scatter is bucketSort's scatter: the Go loop (scatterGo) on this
// architecture, which has no assembly for it.
func scatter(recs, scratch, ids, counts unsafe.Pointer, n int) {
	scatterGo(recs, scratch, ids, counts, n)
}
