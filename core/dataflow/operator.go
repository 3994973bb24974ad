package dataflow

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/tracebench/tracebench/internal/isnil"
)

// The activation contract (docs/semantics.md §3): how long a dataflow runs
// each time it is activated. An operator does bounded work per Step — what
// its inputs hold, or a fixed amount of fuel — and either finishes or keeps
// itself activated; it never loops until some other operator has moved.
const (
	// PassesPerActivation is how many passes (every operator stepped once,
	// in construction order) an activated dataflow runs at most. A
	// dataflow still moving after that many is activated again after the
	// worker's other dataflows had their turn, so an iterate-like operator
	// that needs several passes gets them, in rounds.
	PassesPerActivation = 8
	// PassesAtBuild is how many passes Build runs once the operators are
	// added, so that an imported trace's seed is delivered before the
	// create returns.
	PassesAtBuild = 4
)

// ErrOperatorBuilt is returned by OperatorBuilder.Build called twice.
var ErrOperatorBuilt = errors.New("dataflow: operator already built")

// OperatorBuilder adds one operator to a dataflow from outside this
// package: declare its inputs (AddInput) and outputs (AddOutput), ask for
// an activator if something outside the dataflow wakes it, then Build it
// with the operator's logic. The operator is placed after every operator
// added before Build, so it reads only streams that exist.
//
// The Operator it builds follows the contract of Operator: each Step takes
// what its input ports hold (Port.Take), emits on its outputs
// (Stream.Send) at times at or after its capability, and returns its
// capability — the earliest time it may still emit at regardless of its
// inputs. Returning {t} holds a capability at t; returning a later frontier
// downgrades it; {} drops it. Its outputs' frontier is the meet of that
// capability and its inputs' frontiers (D1), which only advances: a
// capability returned behind what the output had announced is the
// dataflow's error naming the operator, and its output frontier is held
// where it was from then on. A chunk it sends against
// this — at a time its output's frontier had passed, nil, malformed, of
// another arity than its collection's, empty or not — is refused by the
// exchange, arrangement or capture that reads it whole first, as the
// dataflow's error (ErrBadChunk, naming the operator), the same on one
// worker as on several, and that reader stops, its frontier held where it
// was.
//
// Stream.Send checks the chunks nothing (a check would cost every
// update; it checks only that the step calling it is its stream's own
// operator's, ErrNotItsOutput), and an operator of this seam that reads
// another's chunks is given them as sent: it checks what it relies on itself (Chunk.Check, the times
// against its Port.Frontier), or leaves it to an arrangement or exchange
// downstream. A message sent on a stream no operator reads is dropped.
type OperatorBuilder struct {
	c      *Context
	n      *node
	attach []func() // subscribe the input ports, at Build
	built  bool
}

// NewOperator starts an operator named name (for errors and profiles).
func (c *Context) NewOperator(name string) *OperatorBuilder {
	return &OperatorBuilder{c: c, n: &node{name: name, df: c.df}}
}

// StepLabels returns the pprof label context the operator's steps run
// under when the dataflow labels every step (Env.LabelSteps): the
// worker's labels with dataflow= and operator= (its name) added; nil when
// it does not. An operator that runs part of its step under labels of its
// own (pprof.Do, which restores the context it is given) gives it these,
// so the rest of its step is still counted as its own in a profile.
func (b *OperatorBuilder) StepLabels() context.Context {
	if !b.c.env.LabelSteps || b.c.env.Labels == nil {
		return nil
	}
	// Made once: the dataflow's labelling (Dataflow.label) keeps it.
	if b.n.labels == nil {
		b.n.labels = b.n.stepLabels(b.c.env.Labels, b.c.df.id)
	}
	return b.n.labels
}

// LabelAs makes the operator's steps, when the dataflow labels every step,
// run under operator=op and the label pairs (key, value, ...) given, in
// place of operator= its name: for an operator that does a piece of a
// larger operator's work, which a profile counts as that operator's (a
// staged delta join's path operators, under the join's operator= and
// their path's path=). Its name still names it in errors and Operators.
// It is called before StepLabels and Build.
func (b *OperatorBuilder) LabelAs(op string, pairs ...string) {
	if len(pairs)%2 != 0 {
		panic("dataflow: LabelAs: label pairs of odd length")
	}
	b.n.labelAs, b.n.labels = append([]string{op}, pairs...), nil
}

// AddInput makes s an input of the operator under construction, under name,
// and returns the port its Step takes s's messages from, before the
// operator's Build (after it, the port would receive nothing: the create
// fails). The port's
// frontier is s's (Port.Frontier); Step's argument is the meet over every
// input. s is a stream of this build: one of another dataflow, or of this
// dataflow's build on another worker, fails the create, and so does a nil
// s (ErrNilStream, naming the operator and the input), for which the port
// returned reads nothing.
func AddInput[T any](b *OperatorBuilder, name string, s *Stream[T]) *Port[T] {
	if s == nil {
		if b.c.late("AddInput") == nil {
			b.c.refuseNil(fmt.Sprintf("operator %q: AddInput %q", b.n.name, name), "")
		}
		return &Port[T]{name: name}
	}
	p := &Port[T]{from: s.from, name: name}
	if b.built {
		// Its port would receive nothing: the operator's ports are
		// attached at its Build.
		err := fmt.Errorf("dataflow %s: operator %q: input %q added after the operator's Build", b.c.df.id, b.n.name, name)
		if b.c.late("AddInput") == nil {
			b.c.fail(err)
		}
		return p
	}
	b.n.inputs = append(b.n.inputs, s.from)
	// Messages reach the port once the operator is built: one never built
	// holds none. A stream of another dataflow, or of another worker's
	// build, never reaches it: the build fails (an error naming the
	// operator), and the stream's dataflow keeps no port of it.
	if s.df == b.c.df {
		b.attach = append(b.attach, func() { s.ports = append(s.ports, p) })
	}
	return p
}

// AddOutput adds an output stream to the operator under construction; its
// Step sends on it. Build the operator before any other operator reads the
// stream, so that construction order stays a topological order.
func AddOutput[T any](b *OperatorBuilder) *Stream[T] {
	return newStream[T](b.c.df, b.n)
}

// Activator returns a function that activates the dataflow: the worker
// steps it soon after. It is safe from any goroutine and after the dataflow
// is dropped (then it does nothing useful and costs nothing). An operator
// whose input arrives from outside the dataflow (a publisher, a timer)
// calls it; one fed only by streams never needs it.
func (b *OperatorBuilder) Activator() func() {
	df, env := b.c.df, b.c.env
	return func() { env.Activate(df) }
}

// StepAgain returns a function the operator's Step calls when it leaves
// work for a later step (a Step does bounded work): the pass counts as
// moving, so the dataflow runs another pass, and one still moving after
// PassesPerActivation passes reports it (Dataflow.Step returns true, and a
// runtime's worker activates the dataflow again after its others had
// their turn). Until that work is done the operator keeps a capability at
// or before every time it may still send at. It is called on the
// dataflow's worker, as the Step is; outside the operator's own Step it
// does nothing.
func (b *OperatorBuilder) StepAgain() func() {
	df, n := b.c.df, b.n
	return func() {
		if df.stepping == n {
			df.again = true
		}
	}
}

// Build adds the operator with its logic op. Shutdown of op is called once
// when the dataflow is dropped, in reverse construction order. op is the
// operator's own: a pointer built already, by another builder of the
// dataflow, is refused (it would be stepped, and shut down, twice). A nil
// op, or a nil value of a type that implements Operator (a nil *T), is
// refused too, and fails the create whether or not the Build returns the
// error (README.md, "Dataflows"): stepped, it would panic in a worker.
func (b *OperatorBuilder) Build(op Operator) error {
	// Late first: after the dataflow's Build returned, b.built is the
	// worker's to read (a goroutine the Build started may call this).
	if err := b.c.late(fmt.Sprintf("OperatorBuilder.Build of operator %q", b.n.name)); err != nil {
		return err
	}
	if b.built {
		return fmt.Errorf("dataflow %s: operator %q: %w", b.c.df.id, b.n.name, ErrOperatorBuilt)
	}
	if op == nil {
		return b.refuse(fmt.Errorf("dataflow %s: operator %q: nil Operator", b.c.df.id, b.n.name))
	}
	if isnil.Value(op) {
		// A nil pointer (or map, slice, func, chan) of a type that
		// implements Operator: stepped, it would panic in a worker.
		return b.refuse(fmt.Errorf("dataflow %s: operator %q: nil Operator (a nil %T)", b.c.df.id, b.n.name, op))
	}
	// One operator value built twice would be stepped twice a pass and
	// shut down twice. Told apart by pointer: a value of another kind may
	// equal another built apart (two values of an empty struct).
	if t := reflect.TypeOf(op); t.Kind() == reflect.Pointer && t.Elem().Size() > 0 {
		for _, n := range b.c.df.nodes {
			if n.op == op {
				return fmt.Errorf("dataflow %s: operator %q: its Operator is operator %q's already: each Build takes an Operator of its own", b.c.df.id, b.n.name, n.name)
			}
		}
	}
	b.built = true
	b.n.op = op
	b.c.df.appendNode(b.n)
	for _, attach := range b.attach {
		attach()
	}
	return nil
}

// refuse records err, a Build refused for its Operator, as the build's
// error as well as returning it: a Build that drops what OperatorBuilder.Build
// returns still fails its create, on every worker alike, rather than run
// without the operator.
func (b *OperatorBuilder) refuse(err error) error {
	if !b.c.closed.Load() {
		b.c.fail(err)
	}
	return err
}

// Failer returns the function an operator calls with an error it meets
// while stepping (a kernel's protocol error, never bad data): the worker
// records it as the dataflow's error, and the runtime reports it (Err).
// The operator then stops emitting. Called from the operator's Step, it
// also holds the operator's output frontier where that step leaves it
// (or where it was, had the step taken it back), for good: a probe,
// capture or tally downstream of it on the worker never passes that
// frontier, so a wait on one for a time it has not passed returns an
// error wrapping err at once (Probe.WaitPassed) where it lasted until
// its context ended. Called from another goroutine than the worker's
// (one the Build started), it reports err as the dataflow's until the
// worker drops the dataflow, reads nothing the worker writes, and holds
// no operator: the one the worker steps then is not the caller.
func (c *Context) Failer() func(error) {
	return c.df.failer(c.env)
}
