package batch

import "unsafe"

// scatterAhead is how many records ahead scatterFast prefetches a slot.
const scatterAhead = 32

// scatter is bucketSort's scatter: the assembly loop of scatter_amd64.s,
// which prefetches each record's destination scatterAhead records ahead,
// for every record but the last scatterAhead, and scatterGo for those.
// The assembly runs scatterBlock records a call: a goroutine in it cannot
// be preempted, and a bucket pass of bucketSortMax records in one call
// took about 5 ms (the share's assembly keeps its calls short for the
// same reason: core/dataflow's shareBlock).
func scatter(recs, scratch, ids, counts unsafe.Pointer, n int) {
	m := max(n-scatterAhead, 0)
	for lo := 0; lo < m; lo += scatterBlock {
		// Records [lo, lo+k) go, and the look-ahead reads the bucket
		// numbers up to lo+k+scatterAhead-1, at most n-1.
		k := min(scatterBlock, m-lo)
		scatterFast(unsafe.Add(recs, lo*32), scratch, unsafe.Add(ids, lo*2), counts, k+scatterAhead)
	}
	scatterGo(unsafe.Add(recs, m*32), scratch, unsafe.Add(ids, m*2), counts, n-m)
}

// scatterFast moves record i of recs to scratch at counts[ids[i]] and
// increments that count, for i below n-scatterAhead (none when n is
// smaller), prefetching the slot of record i+scatterAhead
// (scatter_amd64.s).
//
//go:noescape
func scatterFast(recs, scratch, ids, counts unsafe.Pointer, n int)
