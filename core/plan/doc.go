// Package plan is the logical plan a workload spec decodes into, its
// checks, and the arrangements each join strategy reads (docs/spec.md,
// "Fields" to "Expressions").
//
// A decoder (workloads/) fills a Plan: inputs, views (simple or query),
// indexes and the top-level query, with expressions as source text.
// Resolve checks every rule of docs/spec.md ("Fields" to "Expressions")
// and returns a Resolved plan:
//
//   - every collection's columns (a query view's are its output names with
//     "." replaced by "_") and the views in topological order;
//   - per query: the joined row layout (every from entry's columns, in from
//     order, as alias.column), the merged equivalence classes, the
//     per-row closure as an expr.MFPSpec (equivalences, maps, filters,
//     project), the output names, and a reduce's group positions and value
//     expressions;
//   - the arrangements a linear join and a delta join read (LinearPlan,
//     DeltaPath), which declared index serves each (by column set, any
//     order), the list of missing (collection, key set) for
//     --index imported, and what each index's maintaining dataflow builds,
//     imports and reads raw (Maintain).
//
// Explain and Missing read a plan Resolve made, under Linear or Delta:
// anything else is an error wrapping ErrUsage (Check), never a panic.
//
// Errors name the spec field by its path ("views.sold.query.map[0].expr",
// "indexes.by_cust.key[1]", "query.reduce.aggregates[2].expr") so a
// decoder can prefix the file name; they wrap ErrInvalid and, for
// expressions, the *expr.Error.
//
// Invariants:
//
//	L1  A Resolved plan satisfies every rule of docs/spec.md ("Fields" to
//	    "Expressions"): names, one namespace for inputs and views, refs,
//	    unique outputs, no cycle, expressions that parse and refer to
//	    existing columns, reduce, distinct and threshold rules,
//	    as_of < until.
//	L2  Views come after every view they read; Resolve reports the first
//	    cycle it meets, naming the views on it.
//	L3  Equivalence classes are merged when they share a ref; each joined
//	    column is in at most one class.
//	L4  A lookup's key is the set of the entry's columns sharing a class
//	    with bound entries; StreamKey[i] is a bound column of Key[i]'s class,
//	    so matching keys means the whole class agrees on bound columns.
//	L5  An index serves an arrangement iff it is on the same collection with
//	    the same key set; the first such index in plan order is chosen and
//	    fixes the key's order.
//
// A Resolved plan is immutable and may be read by several goroutines:
// Resolve resolves its own deep copy of the caller's Plan (Plan.Clone).
package plan
