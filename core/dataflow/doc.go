// Package dataflow runs dataflows over totally ordered time on one worker:
// graphs of operators that pass messages along typed streams and track
// progress with frontiers (docs/semantics.md §1.5, §3, §4.1–§4.4).
//
// A dataflow is built by a function given a Context; operators are added in
// order, and an operator can only read streams of operators added before it,
// so construction order is a topological order. The worker steps a dataflow
// by running every operator once in that order: each sees the meet of its
// inputs' frontiers, does the work its inputs allow, and reports its
// capability (the earliest time it may still emit at, {} for none). Its
// output frontier is the meet of its capability and its input frontier: it
// advances only when no operator upstream can still produce earlier data.
// Streams between workers of one runtime go through an exchange, whose
// receiving side's frontier is the meet over the senders.
//
// Collections travel as oks + errs streams of Chunks (unsorted updates of
// full rows); arrangements as streams of immutable batches plus a trace
// reader. An arrangement is Local (built here by Arrange) or Imported (imported
// by ImportIndex); in both the reader is a trace.Reader and the batches are
// *batch.Batch, so every operator has one body for both flavors (§4.1). An
// import is presented at the dataflow's as_of and bounded by its until; one
// that no operator takes as an input is closed when the build ends, its
// holds released and its frontier left where it was (§4.4).
//
// # Writing an operator
//
// Operator packages (joins, reduces) add operators through the exported
// seam, never through unexported fields:
//
//	b := c.NewOperator("half join")
//	left := dataflow.AddInput(b, "left", a.Oks.Stream)  // *Port[*batch.Batch]
//	out := dataflow.AddOutput[*dataflow.Chunk](b)       // *Stream[*Chunk]
//	wake := b.Activator()                               // only if woken from outside
//	err := b.Build(op)                                  // op implements Operator
//
// op.Step(in) is called once per pass with the meet of its inputs'
// frontiers: it takes what its ports hold (Port.Take; a port's own frontier
// is Port.Frontier), sends on its outputs (Stream.Send) at times at or
// after its capability, and returns its capability: {t} holds one at t, a
// later frontier downgrades it, {} drops it. An arrangement is read as its
// stream of batches (Arranged.Stream) and its trace (Arranged.Trace, kept
// past Build with Context.Keep), both presented by Arranged.Pres.
//
// The Context and the builders are the Build's only: called from a Step,
// or from another goroutine, once the Build returned, a method that adds
// to the dataflow adds nothing and is the dataflow's error
// (ErrBuildReturned); an operator reads only streams its own build made,
// never another dataflow's or another worker's, and sends only on its own
// outputs (ErrNotItsOutput). A nil stream given to a Context method or
// AddInput (a nil *Stream, the zero Arranged, a Collection missing a half)
// fails the create naming the method (ErrNilStream), as a nil trace
// reader given to Keep does, whether or not the Build returns what the
// call returned. A Step or a Shutdown that panics is the
// dataflow's error naming the operator (ErrOperatorPanicked), recovered
// once per activation (Dataflow.Step), not per operator: the dataflow then
// steps nothing more until it is dropped.
//
// Activation: a worker steps an activated dataflow for at most
// PassesPerActivation passes, then lets its other dataflows run before the
// next round if anything still moved. A Step does bounded work; an operator
// with work left keeps its capability (it is stepped again while anything
// moves) and calls the function OperatorBuilder.StepAgain returned, which
// makes its pass count as moving; one woken from outside the dataflow calls
// its activator. Build runs PassesAtBuild passes; a caller
// that must first agree with the other workers (a runtime) calls Assemble,
// then Start or Drop.
//
// A Probe observes a stream's frontier over the workers; a Capture (for
// eval, check and tests) is a probe that also keeps every update of a
// collection's chunks (CaptureChunks) or of an arrangement half as
// presented (Capture), appended per worker as they come, and consolidates
// only when read (At: docs/semantics.md §1.3), so nothing needs to be
// arranged to be captured. Only the workers that feed a probe move it: a
// wait on it (WaitPassed) from a Build on one of them is refused at once,
// as Env.OnWorker tells.
//
// Only a Maintained dataflow reads inputs (Context.Input); a query reads
// indexes, and Input in a query is an error wrapping ErrQueryReadsInput
// (D6).
//
// Every runtime's IndexManager maps index ids to trace bundles: local ones
// (this runtime maintains the trace) and peer ones (another runtime
// publishes it). ImportIndex has one body for both: it checks the index's
// since is at or before the dataflow's as_of (a violation is an error naming
// the index and the times) and imports through a share.Import — from the
// publisher's point for a peer bundle, from the trace's private point for a
// local one.
//
// Invariants:
//
//	D1  An operator's output frontier is the meet of its capability and its
//	    inputs' frontiers; a message it sends carries times at or after its
//	    output frontier before the send.
//	D2  Arrange seals exactly once per input frontier advance: the batch
//	    [previous frontier, new frontier) is inserted into its trace and sent
//	    downstream in the same step, so trace and stream never disagree.
//	D3  Dropping a dataflow releases every hold it took (imports, local
//	    arrangement handles) and the indexes it exported.
//	D4  A dataflow exports exactly its Desc.Exports (Build checks the
//	    Export calls against them), each under its incarnation: the other
//	    runtime records peers from Desc.Exports alone.
//	D5  A new arrangement starts compacted at its dataflow's as_of, so an
//	    index maintained from as_of A refuses a dataflow at an as_of before
//	    A in every runtime alike.
//	D6  A dataflow that is not Maintained reads no input: whatever runtime
//	    builds it, Context.Input refuses it, so a query gets the same answer
//	    (or the same error) from a runtime that receives inputs as from one
//	    that does not.
//	D7  Diff overflow in an arrangement never fails its dataflow nor loses
//	    another update: the arrangement's errs half (keyed by core/expr's
//	    error codes) gains a `numeric overflow` row at the overflowing time
//	    when its batch is built, at the arrangement's frontier when a merge
//	    finds it later (docs/semantics.md §1.1). The oks half's rows travel
//	    through the errs exchange; the errs half never seals a time the oks
//	    half has not sealed.
//
// Goroutines: a worker owns its dataflows, trace manager and inputs; only
// exchanges (between workers of a runtime) and core/share (between runtimes)
// cross goroutines.
package dataflow
