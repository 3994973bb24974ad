package runtime

import (
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// Command is an instruction the controller sends to runtimes.
type Command interface{ command() }

// CreateInput declares an input collection of rows of Arity columns. Input
// and AdvanceInput name a declared input; dataflows read it with
// dataflow.Context.Input. An input keeps every update sent to it, so a
// dataflow created later reads its whole history (AllowInputCompaction
// bounds it); with NoHistory it keeps none, and a dataflow reading it must
// be created before its first update (dataflow.InputOptions; a later one
// fails with dataflow.ErrInputHistory).
type CreateInput struct {
	Name      string
	Arity     int
	NoHistory bool
}

// CreateDataflow creates a dataflow: the runtime whose role covers it
// renders it on every worker; the other records its exports as peers.
type CreateDataflow struct{ Desc dataflow.Desc }

// AllowCompaction lets index ID compact to Frontier: a local trace's hold or
// a peer's hold on the publication moves alike; {} drops the index. A
// frontier before one already allowed for the index, or before the as_of
// of the create that exports it when none is, is refused by Send
// (ErrCompactionBackward): compaction only moves forward, from the as_of.
type AllowCompaction struct {
	ID       string
	Frontier frontier.Frontier
}

// DropDataflow drops a dataflow: it releases every hold it took and the
// indexes it exported (or, on the other runtime, their peer bundles).
type DropDataflow struct{ ID string }

// Input adds updates to an input collection (maintaining roles only). Each
// worker is given the whole chunk and keeps the rows whose hash falls to it
// (dataflow.Inputs.Send), after Send returns: the chunk is the runtime's
// once sent, and the caller must not change it (with one worker it is kept
// as it is).
type Input struct {
	Name  string
	Chunk *dataflow.Chunk
}

// AdvanceInput moves an input's frontier (maintaining roles only).
type AdvanceInput struct {
	Name     string
	Frontier frontier.Frontier
}

// AllowInputCompaction lets an input's history compact to Frontier
// (maintaining roles only; dataflow.Inputs.AllowCompaction): the history
// a dataflow created later reads need only be exact from Frontier on, so
// each worker keeps the updates of earlier times at Frontier, those of
// one row and time summed into one, and its memory follows the
// collection's size rather than the updates ever sent. A dataflow created
// later reads the input only with an as_of at or after Frontier (its
// create fails otherwise, dataflow.ErrInputCompacted); the dataflows
// reading it already are not affected. {} drops the history. A frontier
// before one already allowed is refused by Send (ErrCompactionBackward).
type AllowInputCompaction struct {
	Name     string
	Frontier frontier.Frontier
}

// DropInput drops a declared input (dataflow.Inputs.Drop; every role, as
// CreateInput, declares and drops it): its frontier moves to {}, so the dataflows
// reading it see its collection complete, its history goes, and its name
// is free for a CreateInput of a new input, of any arity. Until then an
// Input, AdvanceInput or AllowInputCompaction of the name is refused by
// Send, and a dataflow created reading it fails (dataflow.ErrUndeclaredInput).
type DropInput struct{ Name string }

// barrier is a barrier: each worker calls done after applying every earlier
// command and stepping its dataflows. state is the barrier call that
// queued it (Runtime.guardedBarrier; nil for one queued otherwise), which
// takes it out of the queues it is still in when its caller stops waiting.
type barrier struct {
	done  func(*worker)
	state *barrierState
}

// queued is a command with its position in the controller's stream (0 for
// a barrier, which no controller numbers).
type queued struct {
	cmd Command
	seq uint64
}

func (CreateInput) command()          {}
func (CreateDataflow) command()       {}
func (AllowCompaction) command()      {}
func (DropDataflow) command()         {}
func (Input) command()                {}
func (AdvanceInput) command()         {}
func (AllowInputCompaction) command() {}
func (DropInput) command()            {}
func (barrier) command()              {}
