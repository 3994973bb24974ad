// Package frontier holds the time vocabulary of tracebench: times, frontiers,
// counted holds and batch descriptions (docs/semantics.md §1.2, §1.4, §2.1).
//
// Times are uint64 and totally ordered. An antichain of a total order has at
// most one element, so a Frontier is either one time or empty. The empty
// frontier is the greatest one: as a progress frontier it means "complete", as
// a compaction frontier it means "compact everything"; nothing is beyond it.
// The zero Frontier is {0}, the least frontier, so a fresh frontier never
// claims completeness by accident (§4.7).
//
// Differential-dataflow names: Frontier is Antichain<T>, MutableFrontier is
// MutableAntichain<T>, Description is trace::Description.
//
// Invariants:
//
//	F1  Join is max (empty absorbs), Meet is min (empty is the identity).
//	F2  t is Beyond F iff F = {f} and f <= t; nothing is beyond {}.
//	F3  A MutableFrontier never holds a negative count; its frontier is the
//	    least time held with a positive count, or {} when nothing is held.
//
// All types here are values or owned by one goroutine; none is safe for
// concurrent mutation.
package frontier
