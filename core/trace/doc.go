// Package trace provides read handles over a trace's storage (a spine): each
// handle holds a logical and a physical compaction frontier, and the trace
// compacts to the meet of every live handle's holds (docs/semantics.md
// §2.4; differential-dataflow's TraceAgent and TraceBox).
//
// Go has no destructors, so a handle is released explicitly with Release. In
// invariant builds (-tags invariants) a handle that becomes garbage without
// Release is recorded and reported by Leaks, with the stack that created it.
//
// Invariants:
//
//	H1  Meet rule: the storage's logical (physical) compaction equals the meet
//	    of the logical (physical) holds of all live handles (§8.7); a
//	    publishing share.Spine applies the physical meet only as far as its
//	    upper (§4.7).
//	H2  Monotone handles: Set*Compaction joins the request with the handle's
//	    hold; a request before it leaves the hold unchanged (§8.8).
//	H3  Clone registers a new, independent hold at the source's frontiers;
//	    the clone of a released handle is released and holds nothing.
//	H4  Release removes the handle's holds; releasing the last handle sets
//	    both compaction frontiers to {} and frees the storage: later writes are
//	    discarded (§8.11). The storage is told only the logical {}: its
//	    physical compaction stays, so the release merges nothing.
//
// A storage backs one trace. New of a storage that backs one already, live
// or freed, panics naming the misuse (for storage that implements Claimer:
// a *spine.Spine and core/share's publishing spine do): the second trace
// would keep holds of its own, so its handles' moves would compact the
// storage past the first's holds (H1 broken: the first's cuts would read
// coalesced times), and releasing its last handle would set the storage's
// since to {} and free it (H4) under the first's live handles. More handles
// of a trace come from Clone.
//
// Ownership: a trace, its handles and its writer belong to one goroutine (a
// worker). Sharing with another runtime goes through core/share, whose
// readers implement the same Reader interface.
package trace
