// Package render turns a resolved plan (core/plan) into dataflows
// (core/dataflow): the dataflow that maintains each declared index, and the
// query dataflow, in either index mode (docs/spec.md "Indexes and arrangements").
//
//   - IndexDesc: a Maintained dataflow per index, from time 0. It builds
//     the index's collection from raw inputs and the other indexes its
//     views read (plan.Maintain), arranges it by the index key and exports
//     it. The Maintenance runtime publishes it; a Solo runtime keeps it.
//     A plan plan.Resolve did not make, or an index not its own, builds
//     nothing: Build returns ErrUsage.
//   - QueryDesc: the query at as_of (and until). Imported, it reads only
//     declared indexes: every arrangement the join strategy reads must be
//     served (ErrMissingIndex names what is not); direct, it builds every
//     view and arrangement from the raw inputs itself. Its output goes to
//     an Output as the operators emit it, never arranged (N6): probed,
//     counted, and captured for eval and check.
//
// Collections travel as oks and errs streams of chunks. A simple view is a
// map–filter–project operator (core/expr, compiled once, evaluated a chunk
// at a time); a query view or the query is a join (linear: one binary join
// operator per stage, the running result arranged between stages with
// Context.Arrange, so several workers exchange it by its stream key;
// delta: one operator stepping a path per from entry), then reduce,
// distinct or threshold (core/reduce kernels as operators). The kernels
// of core/join and core/reduce do the per-tuple work; the operators here
// dispatch per batch or chunk.
//
// Invariants:
//
//	N1  Errors travel with every collection: a collection's errs are the
//	    errs of each from entry's collection, once per entry, plus the
//	    errors its own operators produce (docs/spec.md "Expressions"). An
//	    operator's own errors are counted in Metrics under its dataflow,
//	    operator name (and path of a delta join) and the collection it
//	    computes, so that the output's error multiplicity is the sum of
//	    the counts weighted by how often each collection is read.
//	N2  Imported queries read no input: every arrangement comes from an
//	    import of a declared index whose key order equals the arrangement's
//	    (an index with the same key set in another order is flattened and
//	    arranged inside the query).
//	N3  One layout: a join kernel's output row (key ++ vals) is laid out
//	    as the query's joined row (every from entry's columns in from
//	    order, a join key at every position of its class) before the
//	    query's closure runs, so the closure compiled by core/plan applies
//	    unchanged to linear stages and delta paths alike.
//	N4  Every reader an operator keeps is released when the dataflow is
//	    dropped (Context.Keep, and the kernels' Release in Shutdown); the
//	    output's probes come after its captures and counters, so a passed
//	    probe means they have seen everything before it.
//	N5  A delta join runs on any number of workers: with several, each
//	    path's proposals are exchanged by the next lookup's key before each
//	    half join (core/join's staged paths, X1–X3), so every worker's
//	    answer is its share of the one-worker answer.
//	N6  The query's output is not arranged: nothing reads it back, so its
//	    oks and errs chunks go, unconsolidated and on the worker that
//	    produced them, to the captures, the counters and the probes. A
//	    capture consolidates when read (dataflow.Capture.At, across
//	    workers; docs/semantics.md §1.3), a count sums diffs, which
//	    consolidation does not change, and a probe needs only the stream's
//	    frontier. The output's times are those its operators emit (the
//	    imports' presented times); counts leave out times at or after
//	    until.
//	N7  A reduce whose records are one arrangement flattened unchanged (a
//	    single from entry, no map, every aggregate argument a record
//	    column outside the group, read in place) and whose group columns
//	    are that arrangement's key, in order, reads the arrangement itself
//	    — an index imported or built in the query — instead of arranging
//	    the records again: its vals are the other columns in order either
//	    way, so the reduce sees the same updates at the same presented
//	    times; the input's errors pass through once, as they would through
//	    the flatten. Any other reduce arranges its records, extended by
//	    its computed arguments, by the group.
//
// The operators here belong to the worker that steps their dataflow;
// Output (its captures included) and Metrics may be read from any
// goroutine.
package render
