// Package join implements the join kernels of linear and delta joins over
// arrangements (docs/semantics.md §5): the binary join of a linear join's
// stages (differential dataflow's join_core, §5.2–§5.3) and the half join
// of a delta join's paths (dogsdogsdogs' half_join, §5.4), with the error
// contract of §5.5–§5.6.
//
// The kernels are plain Go over batches, cursors and trace readers: they
// read lists of *batch.Batch (a stream's new batches, a trace's cut) and
// never lock. An arrangement is read the same way whether it is Local or
// imported: a trace.Reader plus a batch.Presentation (one body for both
// flavors, §4.1).
//
// The parts:
//
//   - Binary joins two arrangements with the same key. Output rows are
//     key ++ left val ++ right val, then the stage's closure. Linear chains
//     Binary stages, arranging the running result between them by each
//     stage's stream key (the only intermediate arrangements built).
//   - Path is one delta path: the source arrangement's new batches become
//     updates with an initial and a data time, which pass through one half
//     join per other relation (each optionally followed by a stage closure
//     that keeps, drops and projects rows but cannot err) and leave at
//     their data time, then the path's final closure. Delta runs the paths
//     of a query and propagates the inputs' errors.
//   - Join and DeltaJoin add these as operators to a dataflow (core/
//     dataflow's operator seam): they read arrangements' batch streams and
//     (through Context.Keep) their traces, Local and imported alike, emit
//     a Collection, and forward the error batches of the `from` entries the
//     caller lists in OperatorOptions.Errs, once each. With several workers
//     the arrangements are already sharded by key: Join exchanges nothing;
//     DeltaJoin stages each path into operators connected by exchanges on
//     each lookup's key (X1–X3).
//   - Closure is the per-chunk join closure (§5.1); MFP adapts a compiled
//     core/expr map–filter–project, Project is the expression-free one.
//   - Sink collects ok rows and error rows (one column: the error code) in
//     dataflow.Chunks.
//   - Stats and Metrics count, per operator and path, the errors an
//     operator produced (the analogue of mz_compute_error_counts) and carry
//     the pprof labels dataflow=, operator= and path=.
//
// Invariants (docs/semantics.md §8.25–§8.29):
//
//	K1  Join algebra: a matched pair's output is at the join (max) of the
//	    two times, advanced to as_of, with the product of the diffs (§8.25).
//	K2  A closure that errs turns the row into that error at the row's time
//	    with the row's diff.
//	K3  Diff arithmetic is checked: a product (or a consolidation) that
//	    leaves int64 is the error `numeric overflow` at that time with diff
//	    +1, never a wrapped count, never a panic (§8.29). So is a product
//	    with a count of a batch a merge saturated (batch.Batch.Saturated):
//	    one error, diff +1, at the earliest time emitted from such a batch,
//	    one a Sink (Sink.noteSaturated: a later product at an earlier time
//	    moves it there), since the arrangement's own error goes to its
//	    frontier, which may be past that time (§1.1).
//	K4  Error contract: an operator emits only the errors it produces (K2,
//	    K3) and counts only those; the errors its inputs carry are
//	    propagated by the caller once per `from` entry (Errors), however
//	    many paths or stages read the entry (§5.6, §8.28). The numeric
//	    overflow Errors adds for a batch a merge saturated is the
//	    forwarding operator's own (K3), counted with its errors: a
//	    binary join's, a delta join's under its Stats of path "".
//	B1  Exactly-once matching: a new batch of one input is joined with the
//	    other input's trace cut at the frontier that input has acknowledged;
//	    then its own acknowledged frontier moves to the batch's upper. Every
//	    pair of updates is produced by whichever of its batches came later.
//	B2  Each input's trace reader holds physical compaction at its
//	    acknowledged frontier, so that boundary survives merges and the cut
//	    never straddles a batch (the #801 lesson: a merge that consolidates
//	    an already-matched batch away loses nothing and repeats nothing).
//	B3  Preload: the first step takes the left trace's batches as
//	    acknowledged and joins the right trace's batches with them; stream
//	    batches at or below those uppers are skipped, one straddling them is
//	    ErrStraddle. Nothing else skips a stream batch: a trace that already
//	    covers a batch (an import's trace may run ahead of its stream) does
//	    not make the batch matched.
//	B4  Yielding: a budgeted step (Binary.step, the operator's) joins
//	    batches in the order B1–B3 would, the preload's first, and stops
//	    inside a batch pair once it has matched its budget, between two
//	    keys or two pairs of one key's values (a pair with a batch a merge
//	    saturated is joined whole); the rest wait, in order, for the
//	    next step. A batch still to join keeps the other trace from
//	    compacting past its lower (Compact) and the output frontier at
//	    the least such lower (Pending).
//	H1  A half join of a path whose source is relation i matches lookup
//	    relation j's updates at t_j <= t_init when i < j and t_j < t_init
//	    when i > j: each combination is produced by exactly one path (§9.C).
//	H2  A proposal is matched only when no time of the lookup's frontier
//	    compares with its initial time (the lookup is complete for it); the
//	    half join reads whole traces, so it releases physical compaction.
//	H3  Lookup compaction: a half join holds its lookup's logical
//	    compaction at one before the least initial time it may still see
//	    (stashed or to come), never at that time itself (§8.27).
//	D1  As-of optimization: source updates are advanced to as_of, and a
//	    path whose source is not relation 0 drops those at exactly as_of;
//	    the snapshot's combinations all come from path 0.
//	D2  A delta stage closure cannot err: an error raised on a partial row
//	    would miss the multiplicity of the lookups after it (docs/spec.md,
//	    "Expressions" counts an erring row with the joined row's count).
//	D3  Windows: a fused path matches a stage's ready proposals a window
//	    of at most about windowMatches matches at a time (a proposal's
//	    matches are never split) and runs each window through the later
//	    stages before the next (Path.drain), so a step holds a window a
//	    stage, whatever the round's intermediate matches number. What a
//	    proposal emits does not depend on its window: it is matched only
//	    once its lookup is complete for it (H2), in whichever window. The
//	    fused operator matches at most stepWindows windows a step over its
//	    paths and resumes at the next (Path.work: the later stages' open
//	    passes first), its capability the least initial time stashed, as
//	    a staged stage's is (X4).
//	X1  Staged paths (W ≥ 2 workers): before each half join a path's
//	    proposals are exchanged by the stage's stream key, hashed as the
//	    lookup arrangement shards its key (dataflow.HashCols), so every
//	    proposal meets the one shard that holds its key's lookup updates.
//	    Kernels are those of a fused path (Path.feed, Path.window): H1,
//	    H2, D1 and D2 hold per worker unchanged; each window of a stage's
//	    matches is a proposal chunk of its own.
//	X2  A proposal chunk's time is the proposal's initial time and its last
//	    column the data time: the exchange's frontier (the meet over every
//	    sender) bounds the initial times a stage may still receive, and H3
//	    compacts each lookup one before the meet of that frontier and the
//	    stage's stash. Finished rows leave the path's last operator at their
//	    data times (at or after the initial time, so after its frontier).
//	X3  The entries' errors are forwarded once, by the operator merging the
//	    paths, on whichever worker holds them (K4): the same multiplicities
//	    at any W.
//	X4  A stage's operator matches at most stepWindows windows a step and
//	    leaves the rest of its pass to its next step (OperatorBuilder.StepAgain),
//	    so the next stage's operator takes those windows first; its
//	    capability is the least initial time it has stashed, which holds
//	    every proposal it has not matched, ready or not.
//
// Operators: a join operator that meets a broken stream contract (a batch
// delivered twice, out of order, of the wrong arity) stops, records the
// error in its Stats (Err), gives it to the dataflow's Failer (the runtime
// reports it, naming the dataflow and the operator) and holds its output
// frontier where it stood before the step that failed, as a reduce's
// operator does (docs/semantics.md §2.5); data problems never stop it (they are error
// rows, K2 and K3). The kernels stop alike: once a step of a Binary,
// Linear, Path or Delta has failed, every later one returns the same
// error and emits nothing (docs/semantics.md §2.5).
//
// Ownership: a Binary, Linear, Path, Delta or Sink belongs to one goroutine
// (its worker). Stats and Metrics may be read from any goroutine.
//
// Differential-dataflow names: Binary is join_core's JoinCore with its
// acknowledged frontiers; halfJoin is half_join; Path is a delta path of
// Materialize's delta_join.rs; Errors is bundle_errs' propagation.
package join
