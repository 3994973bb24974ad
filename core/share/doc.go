// Package share lets one runtime read the traces another runtime maintains,
// zero copy: a publisher mirrors its spine's chain of immutable batches into
// publication points, and readers in the other runtime hold, cut and import
// that chain through SharedReaders (docs/semantics.md §4.2–§4.9;
// Materialize's shared_trace.rs and sharing.rs).
//
// It is the only package of the core that takes locks across runtimes. A
// Point has one mutex; critical sections copy a few pointers and frontiers,
// never merge work. A Registry has one mutex over a map. Lock order: a
// Registry before a Point; several Points in address order.
//
// The parts:
//
//   - Point (Shared): the published chain, its upper, the published since,
//     its live readers' holds (each reader's two frontiers, assigned when
//     it moves them), importers' replay queues (each with its import's own
//     hold).
//     A fresh point is a placeholder at {0}, never at {} (§4.7).
//   - Spine (SharedSpine): wraps a *spine.Spine as trace.Storage, so local
//     handles work as before; after every insert, merge or compaction change
//     it mirrors the chain into its points, and it compacts to the meet of
//     its local holds and every remote hold, publishing a since before
//     applying it; it applies no physical frontier beyond its upper, where
//     a reader admitted later holds. Between Defer and Flush (a worker's
//     wake) it records hold changes and applies them once, at Flush.
//   - Reader (SharedReader): a remote hold implementing trace.Reader.
//   - Import: a live replay of a point from a seed, presented at as_of and
//     bounded by until (§3.3), with two read holds (§4.9): its consumer's
//     Reader and its own, kept in its replay queue.
//   - Registry: one per worker pair; slots keyed by Incarnation (index id,
//     as_of and the sequence number of the create that made it); publish
//     and peer_bundle with the reserved peer hold (§4.8); the publisher's
//     verdict per incarnation (Settle), which the reading runtime collects
//     in command order (AwaitPeerBundle). Each side (publishing, reading)
//     serves one live runtime at a time (Bind); a runtime that shuts down
//     leaves its side (Leave): a reader gone gives up its uncollected
//     verdicts and reserved peer holds and none are kept for it after, a
//     publisher gone abandons what it did not settle, so a registry is
//     empty once both have left and serves the next pair.
//   - Bundle and Padded: trace bundles (oks + errs) whose halves are local
//     handles or readers, and padding (§4.5).
//
// Invariants (numbers from §8 in brackets):
//
//	P1  Admission is atomic: ReaderAt(as_of) either refuses with the since or
//	    registers a hold that the publisher honours [14]. The publisher
//	    publishes a new since under the locks of all its points before it
//	    applies it to the spine.
//	P2  The applied since is the meet of the local holds and every remote
//	    hold; it never chases reader holds beyond the local request [13].
//	P3  An importer receives every batch exactly once: in its seed or in its
//	    queue (both are written under the point's lock) [17].
//	P4  A point's chain is contiguous from {0} and ends at or before its
//	    upper, with no update between (a batch without updates moves the
//	    upper alone); the published since never moves back.
//	P5  Each publication leaves exactly one peer hold, whichever of publish
//	    and peer_bundle comes first [20]; a peer hold is logical only [22].
//	P6  A slot of one incarnation is never returned, replaced or evicted for
//	    another, whether they differ in as_of [23] or only in sequence
//	    number; a slot lives while its token, a peer bundle or an uncollected
//	    verdict holds it [32].
//
// P1 and P3 are properties of interleavings, so their tests need a way into
// the windows a split critical section would open: Points and Spines carry
// unexported pause points (pause.go) that only this package's tests set, one
// at each such place — between an admission's since check and its
// registration, between an importer's seed and its queue's registration, and
// between a since's publication and its application. Unset they cost a nil
// check.
//
// Goroutines: a Spine is owned by the publisher's goroutine; a Reader, an
// Import, a Padded or a Bundle by one reader goroutine at a time; Points
// and the Registry are safe for concurrent use. In invariant builds (-tags
// invariants) a Reader or an Import that a second goroutine calls while
// another is in one of its methods panics, naming the method and the
// misuse (internal/invariants' Exclusive), with or without -race; so does
// a Padded in a method that reads or writes its padding, and a Bundle in
// Describe, Clone or Release, the methods that read or write its own
// state (a Padded's other methods and a Bundle's others only reach their
// readers, whose own checks apply). Without the tag the check is compiled
// out and takes no room.
package share
