package batch

import "unsafe"

// scatterAhead is how many records ahead scatterFast prefetches a slot.
const scatterAhead = 32

// scatter is bucketSort's scatter: the assembly loop of scatter_amd64.s,
// which prefetches each record's destination scatterAhead records ahead,
// for every record but the last scatterAhead, and scatterGo for those.
func scatter(recs, scratch, ids, counts unsafe.Pointer, n int) {
	m := max(n-scatterAhead, 0)
	scatterFast(recs, scratch, ids, counts, n)
	scatterGo(unsafe.Add(recs, m*32), scratch, unsafe.Add(ids, m*2), counts, n-m)
}

// scatterFast moves record i of recs to scratch at counts[ids[i]] and
// increments that count, for i below n-scatterAhead (none when n is
// smaller), prefetching the slot of record i+scatterAhead
// (scatter_amd64.s).
//
//go:noescape
func scatterFast(recs, scratch, ids, counts unsafe.Pointer, n int)
