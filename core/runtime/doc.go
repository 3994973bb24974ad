// Package runtime runs dataflows on worker goroutines in one of three roles
// (reference/semantics.md §4.6):
//
//   - Solo maintains every index and serves every query itself, publishing
//     nothing;
//   - Maintenance renders the dataflows that maintain indexes and publishes
//     every index it exports into the sharing registry of its worker;
//   - Interactive renders query dataflows, which import the published
//     indexes through peer bundles.
//
// A Controller sends every command to every runtime in the same order
// (invariant I1b of §4.6): creating a dataflow, allowing compaction,
// dropping, and input updates and frontier advances. A runtime whose role
// covers a dataflow renders it; the other records the dataflow's exports as
// peers, taking over the peer hold the publisher reserved at publication
// (I1c), so a publisher never compacts past what the reading runtime may
// still read, even when the reading runtime is a whole create behind. It
// records them once the publisher has settled the incarnation (published,
// or abandoned because its Build failed): a reading runtime ahead of the
// publisher waits for that verdict at the create.
//
// A runtime runs W workers with data sharded by key hash; worker i of the
// Interactive runtime reads worker i of the Maintenance runtime through
// registry i, which is sound only if both run the same W and the same hash:
// NewController checks both. A worker parks on one wake channel and runs
// when a command arrives, when input or an exchange activates one of its
// dataflows, when a publisher it imports from seals a batch, or when a
// reader of an index it publishes moves a hold. It never polls.
//
// Invariants:
//
//	R1  Commands are applied by every worker of every runtime in the order
//	    the controller sent them.
//	R2  Dropping a dataflow releases every hold it took and every index it
//	    exported; Shutdown leaves no hold, no registry slot and no goroutine.
//	R3  A command the controller refuses (Send returns its error) reaches no
//	    runtime and changes nothing; a command it accepts is applied whole
//	    by every worker, so Solo and the pair give the same answers and the
//	    same errors.
//	R4  Every create is numbered by the controller; the number names the
//	    incarnation of the dataflow and of the indexes it exports, which
//	    keys its exchanges and its registry slots: nothing of one
//	    incarnation reaches another of the same id.
package runtime
