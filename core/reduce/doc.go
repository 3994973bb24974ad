// Package reduce implements reduce (count, sum, min, max by group),
// threshold and distinct over an arrangement, Local or imported, with
// their error outputs (docs/semantics.md §6; docs/spec.md, "The query" and
// "Expressions"). Differential-dataflow's reduce_abelian and Materialize's
// reduce plans (accumulable, hierarchical, monotonic, basic, collation)
// are the models; times are totally ordered, so a group's output needs
// recomputing only at the times of its new input updates.
//
// The parts:
//
//   - Reduce (New, NewThreshold, NewDistinct): the operator kernel. It is
//     stepped with the batches its input stream delivered and the
//     stream's frontier; each step retires the interval [lower, frontier)
//     and returns the corrections to its output (oks keyed by group, and
//     errors keyed by code) for that interval. A step that fails (a
//     broken stream contract, never data) is final: every later step
//     returns its error and retires nothing (docs/semantics.md §2.5).
//   - stage: one reduce over one arrangement with its own output trace.
//     Plans are built from stages: Accumulable, Basic and Monotonic are
//     one stage over the input; Hierarchical is a stage per layer over
//     internal traces keyed by (group, hashed sub-bucket of the record),
//     buckets shrinking by 16 per layer, then the group; a mixed reduce
//     runs one part per kind and collates their rows in a final stage.
//   - AddReduce, AddThreshold, AddDistinct: the kernels as dataflow
//     operators (core/dataflow's operator seam). An operator reads an
//     arrangement's batches, steps its Reduce to the stream's frontier,
//     emits rows (group columns then aggregates) and error codes as
//     chunks, forwards the arrangement's errors once when asked, and
//     holds its capability at the Reduce's lower.
//   - Stats: per-operator counters and the pprof labels dataflow= and
//     operator= under which a step runs.
//
// A stage visits its groups in key order and a group's corrections are
// put in (val, time) order as the group ends (groupOut; a group that
// changes at one time only pushes them straight), so a step's corrections
// and the visible rows are built by batch.Sorted with no sort of the
// batch (docs/semantics.md §1.5).
//
// A stage's output row is [tag, aggregates..., hidden...]: tag 0 is a row
// and any other tag the error code the group yields (core/expr's
// CodeOverflow, CodeNegativeMultiplicity); the accumulable plan keeps its
// state in diff space in the hidden columns (the numbers of negative and of
// non-zero records, the exact count and sums in 192 bits). The visible
// output projects the tags and aggregates.
//
// Aggregates read columns of the record (the arrangement's val row). The
// map that computes an aggregate's argument runs before the arrangement
// (core/expr's map-filter-project), so a record whose expression errs is
// already in the errors with its count and out of its group when the
// reduce sees it; the record keeps its other columns in the val, so
// records with equal arguments stay distinct records (§6.3, 2).
//
// Invariants:
//
//	G1  Corrections: after a step retires [lower, upper), the output
//	    accumulated at every time t < upper (t ≥ as_of) is, per group with
//	    records in the input accumulated at t, one row of the group's
//	    aggregates or one error, and nothing for other groups (§8.30,
//	    §8.31). A group is recomputed only at its new input times, against
//	    the stage's own output trace.
//	G2  Holds: a stage cuts its input and output traces at lower and
//	    holds both physically at lower from construction on, moving both
//	    holds to upper once it has retired the interval; the reduce's own
//	    input, which two parts may cut (accumulable and monotonic), is
//	    moved by the Reduce once every part has retired; the first step
//	    waits until the stream's frontier is beyond as_of and at or beyond
//	    the reader's physical hold (an import's seed), so no cut can fall
//	    inside a batch the publisher merged (the "upper straddles batch"
//	    failure of §2.6 cannot happen).
//	G3  Errors: precedence per group and time is numeric overflow of a
//	    record's count, then negative multiplicity, then numeric overflow
//	    of an aggregate, then the row (§6.3); each is one error of
//	    count 1 per group (per record for distinct), never scaled by the
//	    data. Input errors are not the reduce's: the caller passes them on,
//	    once. No data makes a step panic. A stage that reads a group in a
//	    batch of its input a merge saturated (batch.Batch.Saturated: the
//	    cut at lower, or a new batch such as an import's snapshot) reads a
//	    count standing for one out of int64, whose index reports it only
//	    at its frontier: the reduce adds one numeric overflow at the
//	    earliest new time of such a group it reads, whether or not its
//	    output changes there (a threshold drops a record saturated below
//	    int64 silently), once a Reduce (the error is never retracted;
//	    docs/semantics.md §1.1); the mark is read once per batch.
//	G4  Negative records: every plan sees each record's count. The
//	    accumulable plan seeks each new update's record in the input cut
//	    at lower (the input arrangement is the per-(group, record) count)
//	    and keeps the number of negative records in its state; the
//	    hierarchical plan's layer 0 keys every update of a record to the
//	    same group, so the record's count there is exact; the monotonic
//	    plan seeks each new record's count (it must still fit int64) and
//	    falls back to the basic one for a group that sees a retraction,
//	    holds an error or has a record whose count leaves int64.
//
// With W workers the input is exchanged by group key (Owner, the same
// hash as dataflow.Context.Exchange), and each worker's Reduce reduces
// the groups it owns.
//
// Ownership: a Reduce and its stages belong to one goroutine (a worker).
// Batches are shared by pointer; the reduce takes over the input's reader
// and releases it in Release. A constructor that returns an error (New,
// NewThreshold, NewDistinct) takes nothing over: the reader stays the
// caller's, its holds as they were, and the caller releases it.
package reduce
