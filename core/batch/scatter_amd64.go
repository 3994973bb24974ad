package batch

import "unsafe"

// scatter is bucketSort's scatter: the assembly loop of
// scatter_amd64.s, which prefetches each record's destination 32 records
// ahead.
func scatter(recs, scratch, ids, counts unsafe.Pointer, n int) {
	scatterFast(recs, scratch, ids, counts, n)
}

// scatterFast moves record i of recs to scratch at counts[ids[i]] and
// increments that count, for i below n (scatter_amd64.s).
//
//go:noescape
func scatterFast(recs, scratch, ids, counts unsafe.Pointer, n int)
