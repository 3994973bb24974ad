// Package runtime runs dataflows on worker goroutines in one of three roles
// (docs/semantics.md §4.6):
//
//   - Solo maintains every index and serves every query itself, publishing
//     nothing;
//   - Maintenance renders the dataflows that maintain indexes and publishes
//     every index it exports into the sharing registry of its worker;
//   - Interactive renders query dataflows, which import the published
//     indexes through peer bundles.
//
// Inputs feed Maintained dataflows only: the controller sends input
// updates, frontier advances and compactions (AllowInputCompaction) to the
// runtimes that maintain (Solo, Maintenance), and a query reads indexes
// only — Context.Input refuses a dataflow that is not Maintained, in every
// role alike (dataflow.ErrQueryReadsInput), so Solo never answers a query
// the pair cannot. Direct mode's query, which builds everything from raw
// inputs in one Solo runtime (docs/spec.md "Indexes and arrangements"), is
// a Maintained dataflow with no exports.
//
// A Controller sends every command to every runtime in the same order
// (invariant I1b of §4.6): creating a dataflow, allowing compaction,
// dropping, declaring and dropping inputs, and input updates, frontier
// advances and compactions (these three to the maintaining runtimes). A
// runtime whose role covers a dataflow renders it; the other records the
// dataflow's exports as peers, taking over the peer hold the publisher
// reserved at publication (I1c), so a publisher never compacts past what
// the reading runtime may still read, even when the reading runtime is a
// whole create behind. It
// records them once the publisher has settled the incarnation (published,
// or abandoned because its Build failed): a reading runtime ahead of the
// publisher waits for that verdict at the create.
//
// A runtime runs W workers with data sharded by key hash; worker i of the
// Interactive runtime reads worker i of the Maintenance runtime through
// registry i, which is sound only if both run the same W and the same hash:
// NewController checks W (and that the two share their registries); the
// hash is one function, dataflow.HashCols, which every runtime uses and no
// option changes. A worker parks on one wake channel and runs
// when a command arrives, when input or an exchange activates one of its
// dataflows, when a publisher it imports from seals a batch, or when a
// reader of an index it publishes moves a hold. It never polls.
//
// Hand-offs are what a round of few updates costs, so a round pays one per
// worker and runtime: Controller.SendAll queues a round's commands and wakes
// each worker once; every worker is given an Input's whole chunk and keeps
// its own share of it, all workers at once, where a split by the controller
// would run before any worker starts (dataflow.Inputs.Send); and
// AllowCompaction reaches the Interactive runtime
// without a wake (R6): the Maintenance worker that applied it wakes the
// Interactive worker of its index if that one has not already taken it,
// usually in the wake that worker's publication caused anyway.
//
// Invariants:
//
//	R1  Commands are applied by every worker of every runtime in the order
//	    the controller sent them.
//	R2  Dropping a dataflow releases every hold it took and every index it
//	    exported; Shutdown leaves no hold, no registry slot and no goroutine,
//	    and so returns only once every Build being run has returned (it
//	    cannot interrupt one; dataflow.Context.Done tells one to return),
//	    but called from a Build, when the workers leave once it returns.
//	    Shutting down either runtime of a pair that a controller joins shuts
//	    down both, as Controller.Shutdown does: neither applies a command
//	    after it, so the pair reports no error that Solo would not.
//	R3  A command the controller refuses (Send returns its error) reaches no
//	    runtime and changes nothing; a command it accepts is applied whole
//	    by every worker, so Solo and the pair give the same answers and the
//	    same errors.
//	R4  Every create is numbered by the controller; the number names the
//	    incarnation of the dataflow and of the indexes it exports, which
//	    keys its exchanges and its registry slots: nothing of one
//	    incarnation reaches another of the same id.
//	R5  A create exists on every worker of the runtime that renders it, or
//	    on none: each worker assembles the dataflow, the workers agree, and
//	    only then does it run (or every worker drops it) and the publisher
//	    settles its exports. A Build that fails on some workers only leaves
//	    no operator, hold, exchange, registry slot or peer anywhere, and one
//	    error (the lowest failing worker's). A failed create keeps its id,
//	    as the controller does, until it is dropped; an AllowCompaction of
//	    an index it was to export, and a create importing one, is an error
//	    naming it.
//	R6  An AllowCompaction queued without a wake on an Interactive runtime
//	    is applied in order with every other command, once its Maintenance
//	    worker has applied it (or at the next command, barrier or
//	    publication that wakes it): a peer hold moves no earlier than the
//	    command allows, and no later than that wake.
package runtime
