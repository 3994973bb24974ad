package dataflow

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/frontier"
)

// Inputs are a worker's input collections: each keeps this worker's share of
// every update sent to it (rows whose hash falls to this worker) and its
// frontier, so a dataflow created later replays the whole history. An input
// declared with InputOptions.NoHistory keeps none of it: only the dataflows
// reading it when an update arrives are given the update.
type Inputs struct {
	worker, peers int
	logs          map[string]*inputLog
	activate      func(*Dataflow)
	idx           []int32 // scratch: the rows of a sent chunk this worker keeps
	// declaredOnly: a dataflow reads only an input declared (Declare)
	// since RequireDeclared, which records them in declared.
	declaredOnly bool
	declared     map[string]bool
}

// ErrUndeclaredInput is wrapped by Context.Input, once the inputs require
// declaration (Inputs.RequireDeclared), for an input never declared.
var ErrUndeclaredInput = errors.New("input not declared")

// RequireDeclared makes a dataflow's read of an input never declared an
// error (ErrUndeclaredInput) rather than a declaration with the arity it
// reads. A runtime requires it: its controller checks every Input,
// AdvanceInput and CreateInput against the inputs it declared, so an input
// that only a dataflow named (a misspelt one) would wait for updates
// forever, and a CreateInput of that name with another arity would be
// accepted by the controller and refused by every worker (R3 of
// core/runtime). Call it before any input is declared.
func (in *Inputs) RequireDeclared() {
	in.declaredOnly = true
	if in.declared == nil {
		in.declared = map[string]bool{}
	}
}

type inputLog struct {
	arity    int
	history  []*Chunk
	frontier frontier.Frontier
	subs     []*inputOp
	// noHistory: history stays empty; received: an update arrived (or
	// history was dropped when the option was set), so a dataflow that
	// starts reading now would miss it.
	noHistory, received bool
}

// InputOptions configure an input when it is declared.
type InputOptions struct {
	// NoHistory keeps none of the input's updates: each goes to the
	// dataflows reading the input when it arrives and is not kept for
	// later ones, so the input's memory does not grow with its rounds. A
	// dataflow may start reading the input only before its first update:
	// Context.Input refuses it after one (ErrInputHistory) instead of
	// giving it a partial collection.
	NoHistory bool
}

// ErrInputHistory is wrapped by Context.Input for an input declared with
// InputOptions.NoHistory that has received updates: they are gone, so the
// dataflow cannot be given the input's collection.
var ErrInputHistory = errors.New("the input keeps no history (InputOptions.NoHistory) and has received updates: a dataflow must read it before its first update")

// NewInputs returns a worker's inputs. activate is called when a dataflow
// reading an input has something new.
func NewInputs(worker, peers int, activate func(*Dataflow)) *Inputs {
	return &Inputs{worker: worker, peers: peers, logs: map[string]*inputLog{}, activate: activate}
}

func (in *Inputs) log(name string, arity int) (*inputLog, error) {
	l, ok := in.logs[name]
	if !ok {
		l = &inputLog{arity: arity}
		in.logs[name] = l
		return l, nil
	}
	if l.arity != arity {
		return nil, fmt.Errorf("input %q has arity %d, not %d", name, l.arity, arity)
	}
	return l, nil
}

// Declare declares input name with its arity; a dataflow that reads it
// before it is declared declares it with the arity it reads, and the arities
// must agree (unless RequireDeclared, when such a read is an error).
func (in *Inputs) Declare(name string, arity int) error {
	return in.DeclareWith(name, arity, InputOptions{})
}

// DeclareWith is Declare with options. NoHistory on an input that has a
// history (it was read, and sent to, before this declaration) drops it.
func (in *Inputs) DeclareWith(name string, arity int, o InputOptions) error {
	l, err := in.log(name, arity)
	if err != nil {
		return fmt.Errorf("dataflow: %w", err)
	}
	if in.declared != nil {
		in.declared[name] = true
	}
	if o.NoHistory && !l.noHistory {
		l.noHistory = true
		l.received = l.received || len(l.history) > 0
		l.history = nil
	}
	return nil
}

// Send adds updates to input name: this worker keeps the rows whose hash
// falls to it (Chunk.share; with one worker, the chunk itself), and every
// worker of a runtime is given the whole chunk and keeps its own share at
// once, so no one splits it for the others first. c must not change while
// any worker may still read it. Times must be at or after the input's
// frontier.
func (in *Inputs) Send(name string, c *Chunk) error {
	if err := c.Check(); err != nil {
		return err
	}
	l, err := in.log(name, c.Arity)
	if err != nil {
		return fmt.Errorf("dataflow: %w", err)
	}
	mine := c
	if in.peers > 1 {
		mine = c.share(in.worker, in.peers, &in.idx)
	}
	return in.keep(name, l, mine)
}

// keep records mine, this worker's share of an input's updates, and hands
// it to every dataflow reading the input.
func (in *Inputs) keep(name string, l *inputLog, mine *Chunk) error {
	if i := l.frontier.FirstBefore(mine.Times); i >= 0 {
		return fmt.Errorf("dataflow: input %q: update at %d is before its frontier %v", name, mine.Times[i], l.frontier)
	}
	if mine.Len() == 0 {
		return nil
	}
	l.received = true
	if !l.noHistory {
		l.history = append(l.history, mine)
	}
	for _, s := range l.subs {
		s.pending = append(s.pending, mine)
		in.activate(s.df)
	}
	return nil
}

// Advance moves input name's frontier to f (never back). The input must be
// declared, or read by a dataflow.
func (in *Inputs) Advance(name string, f frontier.Frontier) error {
	l, ok := in.logs[name]
	if !ok {
		return fmt.Errorf("dataflow: advance of unknown input %q", name)
	}
	if !l.frontier.LessEqual(f) {
		return fmt.Errorf("dataflow: input %q: frontier %v would move back to %v", name, l.frontier, f)
	}
	l.frontier = f
	for _, s := range l.subs {
		in.activate(s.df)
	}
	return nil
}

// inputOp is the source operator of an input in one dataflow.
type inputOp struct {
	df      *Dataflow
	log     *inputLog
	oks     *Stream[*Chunk]
	pending []*Chunk
	done    bool
}

func (o *inputOp) Step(frontier.Frontier) frontier.Frontier {
	if o.done {
		return frontier.Empty()
	}
	for _, c := range o.pending {
		o.oks.Send(c)
	}
	// The array is the next step's, unless a burst grew it (a dataflow
	// hydrated from the input's history of many chunks, a driver's many
	// sends between two steps) past portKeep and four times what this
	// step sent: then it goes, not kept for the dataflow's life, as a
	// port's (Port.Take).
	if c := cap(o.pending); c > portKeep && c > 4*len(o.pending) {
		o.pending = nil
	} else {
		clear(o.pending)
		o.pending = o.pending[:0]
	}
	return o.log.frontier
}

func (o *inputOp) Shutdown() {
	o.done = true
	for i, s := range o.log.subs {
		if s == o {
			// Delete, which zeroes the slot it frees: an append over it
			// left a copy of the last subscriber's pointer in the
			// array's spare capacity, which kept that operator (its
			// dataflow, its pending chunks) reachable after its own
			// drop, for the input's life.
			o.log.subs = slices.Delete(o.log.subs, i, i+1)
			break
		}
	}
	o.pending = nil
}
