// Package spine implements the Spine: a trace of batches kept in
// power-of-two levels and merged with fuel proportional to arrivals, so that
// merge work is amortised over inserts (reference/semantics.md §1.7–§1.8;
// differential-dataflow's spine_fueled.rs).
//
// The chain is the time-ordered list of batches the spine holds: merging
// layers from the largest level (oldest) to level 0, then the pending batches
// that the physical frontier has not yet admitted to merging. Consecutive
// batches are contiguous.
//
// Two frontiers steer it. The logical compaction frontier is handed to every
// merge that starts, which advances times by it (§2.2). The physical
// compaction frontier decides which boundaries survive: a batch enters the
// merge structure only when its upper is at or before it, so a cut at any
// boundary at or beyond the physical frontier stays possible (§2.3).
//
// Invariants:
//
//	S1  Contiguity: Insert accepts a batch only if its lower equals the
//	    spine's upper and lower != upper; afterwards upper = batch.upper.
//	S2  Every merging-layer batch has upper <= physical frontier; pending
//	    batches are exactly those whose upper was not within it when
//	    considered, in arrival order.
//	S3  A layer is Vacant, Single or Double; inserting into a Double is a bug
//	    (roll-up and fuel make sure merges finish before they are needed).
//	S4  Both compaction frontiers only advance.
//	S5  BatchesThrough(F) with physical <= F returns exactly the batches whose
//	    updates lie before F, or reports a straddled non-empty batch.
//
// A Spine is owned by one goroutine. Batches it hands out are immutable and
// may be shared with any goroutine.
package spine
