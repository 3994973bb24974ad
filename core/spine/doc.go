// Package spine implements the Spine: a trace of batches kept in tiered
// levels and merged with fuel proportional to arrivals, so that merge work is
// amortised over inserts (docs/semantics.md §1.7–§1.8; the fuel discipline of
// differential-dataflow's spine_fueled.rs, with k-way instead of binary
// merges).
//
// Levels are tiers of size: a batch of n updates belongs to level
// floor(log_F(n)) for the fanout F (Options.Fanout, 16 by default). An
// arriving batch joins its level as its newest batch, after the batches of
// every lower level have moved up to that level (they are older: roll-up).
// A level below the top merges its oldest F waiting batches at once (one
// k-way merge, batch.NewMergerN) into one batch for the level above, so each
// update is merged about once per level: log_F of the trace over the
// arrival size, where binary merges take log_2. The top level keeps the
// largest batch and merges it with the batches after it once those add up
// to as much again (or number F), keeping the result in its place: the
// largest batch is reread once per as many updates as it holds, and the
// trace stays within about three times the live updates. When the
// batches waiting just below the top would make the top's merge due, they
// fold into it at once, whatever their number (after the merge in progress
// there, if any, whose batches are older), saving the pass that would
// write them once more in between and keeping that level from holding
// nearly fanout batches of the top's size.
//
// A merge's output is allocated for every update it reads unless its level's
// last merge kept much less (under 90%): then for that share of its input
// and a tenth more (batch.NewMergerNExpect), grown if it keeps more. At the
// top of a steady trace, where retractions meet the updates they retract,
// about half cancels, and the output no longer takes twice its memory first
// and a copy to its size after.
//
// A batch without updates is progress, not a batch: it moves the upper
// and leaves the chain where it was; it brings the merges in progress an
// arrival's fuel (one update's), so a trace that only its inserts drive
// finishes them over rounds without updates. An errors trace with no
// errors, which takes one every round, holds no batch, never merges, and
// publishes a new upper a round with the chain it had. The next batch
// with updates goes in after one empty batch from where the chain ended
// to its lower, so the chain stays contiguous.
//
// Every merge in progress receives Options.Fuel units of merge work per
// arriving update (each its own copy, as in differential-dataflow;
// DefaultFuel, 4), so a level's merge finishes before the level calls for
// the next one; if it has not, it is finished at once. A spine its owner
// also works between arrivals takes WorkedFuel, 2: enough to finish the
// top level's merge about when it is due, so that its work comes a
// little every arrival rather than in bursts (the runtime's arrangements).
//
// The chain is the time-ordered list of batches the spine holds: levels from
// the highest (oldest) to level 0, each its merging batches then its waiting
// ones, then the pending batches that the physical frontier has not yet
// admitted to merging. Consecutive batches are contiguous; the last one
// ends at the upper, or before it when batches without updates came after
// it (S1).
//
// Two frontiers steer it. The logical compaction frontier is handed to every
// merge that starts, which advances times by it (§2.2). The physical
// compaction frontier decides which boundaries survive: a batch enters the
// merge structure only when its upper is at or before it, so a cut at any
// boundary at or beyond the physical frontier stays possible (§2.3).
//
// A merge compacts only to the logical frontier as it stood when the merge
// started, so batches merged while it was held back (a reader's lagging
// hold, released after the batches it held pending were admitted) keep
// their updates at their own times after it moves, until their level
// merges again: at the top, once as many updates arrive again. Each batch
// the spine makes therefore carries a debt: how many inserted batches it
// holds that its merges could not compact because they lay at or after the
// merge's since, and a bound on their updates. An inserted batch owes
// itself; a merge takes the debt of each input whose upper is beyond its
// since and forgets the others' (every time in them became the since). A
// batch owes (Spine.owes) when it holds at least fanout such inserted
// batches, and at least four, and their updates are at least half its
// own; once the logical frontier has passed its upper and the spine's
// lag (its upper less its logical frontier, in time) is at most half what
// it was when the merge that made the batch started (the lag let go: it is
// released, in one move or in many), its level merges its oldest batches
// through it at the current since (a recompaction, counted in
// Stats.Recompactions), as a merge that SetLogicalCompaction, an arrival,
// Work or Exert starts, fueled like any other; a move to the empty
// frontier (the last handle's release, before the trace is freed) starts
// none. With the logical frontier one arrival behind the upper a batch
// owes one or two inserted batches, now and then three (a bound: an input
// made by a merge and straddling the since counts its whole debt), so a
// steady trace starts none, at any fanout; with it a fixed number of
// arrivals behind, the lag stays where it was, releasing none, and the
// level's next merge compacts them as it would anyway.
//
// Invariants:
//
//	S1  Contiguity: Insert accepts a batch only if its lower equals the
//	    spine's upper and lower < upper; afterwards upper = batch.upper.
//	    The chain is contiguous from {0} to its end, at or before the
//	    upper; no update lies between the end and the upper (every batch
//	    inserted there had none).
//	S2  Every merging-layer batch has upper <= physical frontier; pending
//	    batches are exactly those whose upper was not within it when
//	    considered, in arrival order.
//	S3  A level has at most one merge in progress, over the oldest of its
//	    batches; a level that calls for another merge finishes that one first
//	    (roll-up and fuel make this rare). A merge's result takes its inputs'
//	    place in the chain, so merging never reorders it.
//	S4  Both compaction frontiers only advance.
//	S5  BatchesThrough(F) with physical <= F returns exactly the batches whose
//	    updates lie before F, or reports a straddled non-empty batch.
//
// A state machine (spine_machine_test.go) checks S1–S5, the levels' bounds
// and every batch's updates against a naive model after each insert,
// Exert, Work, compaction move and cut it draws.
//
// A Spine is owned by one goroutine. Batches it hands out are immutable and
// may be shared with any goroutine.
package spine
