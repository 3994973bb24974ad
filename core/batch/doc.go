// Package batch implements immutable, columnar, consolidated batches of
// updates (key row, val row, time, diff) and the three things done with them:
// building one from unsorted updates (Builder) or from updates already in
// (key, val, time) order (Sorted, sorted.go), reading one (Cursor; a
// reader of several batches cursors each in turn; Batch.Tally is a cursor's
// whole walk in one call, for the lightest query), and merging two or more
// adjacent ones in bounded steps of work while applying logical compaction
// (Merger; NewMergerN merges k at once through a loser tree, kmerge.go;
// for one-column keys and vals, kmerge11.go, with a dominant input merged
// beside the tree, kmergebig.go, and the tree's common update and emit in
// amd64 assembly, kselect_amd64.s; a build's column writes are in amd64
// assembly too, emit_amd64.s).
// Semantics:
// docs/semantics.md §1.3–§1.6 and §1.7 (merges).
//
// A row is a fixed-arity tuple of int64; the key and val arities are fixed per
// batch (an Arity). Arity 0 is allowed: every update then has the same key
// (or val), the empty row.
//
// Layout (a two-level trie stored as flat columns):
//
//	keys    []int64   nkeys×KeyArity, key i is keys[i*KA:(i+1)*KA]
//	keyOffs []uint32  nkeys+1; key i owns vals [keyOffs[i], keyOffs[i+1])
//	vals    []int64   nvals×ValArity
//	valOffs []uint32  nvals+1; val j owns updates [valOffs[j], valOffs[j+1])
//	times   []uint64  one per update
//	diffs   []int64   one per update
//
// For one-column keys and vals whose (key, val) pairs are all distinct this is
// 40 bytes per update. A batch without updates shares one read-only
// one-element offsets column, and Batch.ProjectVals shares every column but the
// vals with the batch it maps: batches are immutable, so a column may
// belong to several. A merge's output columns are allocated without
// being zeroed (alloc.go): a kernel writes every element below the length
// the batch keeps before anything reads it, and invariant builds fill the
// columns with a pattern so the tests would see an element read unwritten.
//
// Invariants (checked by Batch.Check, and after every build and merge in
// invariant builds):
//
//	B1  Keys strictly increase; within a key, vals strictly increase; within a
//	    (key, val), times strictly increase (sorted by (key, val, time) and
//	    consolidated: no two updates share (key, val, time)).
//	B2  No diff is zero; no key owns zero vals; no val owns zero updates.
//	B3  Every time t lies in [Lower, Upper), except that a time advanced to
//	    Since equals Since, which may lie at or beyond Upper (a since may run
//	    ahead of the batch's upper). Under a since of {} (every hold gone)
//	    times are no longer advanced, so such a time stays where an earlier
//	    merge put it.
//	B4  Since is the join of the merged batches' sinces and the compaction
//	    frontier of their merge (differential-dataflow #247); every time of a
//	    merged batch is already advanced by it.
//	BT1 A Batcher holds every pushed update in exactly one place (the
//	    builder's records, the records parked during a build, a chunk pushed
//	    whole and not yet gathered, or the wide columns) until the Seal whose
//	    upper passes its time takes it; a chunk pushed whole is only read,
//	    and by nothing after the first Seal that follows its push.
//
// A build refuses what its caller got wrong: a row of another arity than the
// builder's (ErrArity), an update at a time outside the [lower, upper) it
// is built into (ErrTimeOutside, B3) and an upper before the lower
// (ErrUpperBeforeLower) make Build return no batch and the error, in every
// build.
//
// Diff arithmetic is checked: a consolidation whose sum leaves int64 is
// reported as ErrOverflow, never wrapped. A build or a merge that overflows
// returns the complete batch with the overflowed diff saturated to the int64
// bound of its sign, and the error, so that no other update is lost; a
// build's error is an *OverflowError naming the times that overflowed, so
// its owner can report them at those times (docs/semantics.md §1.1). A
// merge that overflows marks its batch Saturated, and so does a merge of a
// saturated batch: its owner reports the overflow at its frontier, later
// than a reader may multiply the saturated count, so readers check the
// mark (one per batch, no work per update).
//
// Batches are immutable once built and may be read from any goroutine. A
// Builder, Cursor or Merger is owned by one goroutine. Slices returned by a
// Cursor alias the batch and stay valid as long as the batch is reachable.
//
// Differential-dataflow names: Batch is OrdValBatch, Builder is Batcher +
// Builder, Merger is OrdValMerger; there is no CursorList.
package batch
