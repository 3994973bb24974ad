package dataflow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/mutants"
)

// Operator is one node's logic. Step is called once per pass of its
// dataflow with the meet of its inputs' frontiers ({} for a source); it does
// the work its inputs allow and returns its capability: the earliest time it
// may still emit at regardless of its inputs, or {} for none.
type Operator interface {
	Step(in frontier.Frontier) (capability frontier.Frontier)
	// Shutdown releases what the operator holds; called once on drop.
	Shutdown()
}

// node is an operator in a dataflow graph.
type node struct {
	name   string
	df     *Dataflow // the dataflow, on its worker, whose build made it
	op     Operator
	labels context.Context // its steps' pprof labels (Dataflow.label); nil: none
	// labelAs, when set, is what its steps' labels say in place of
	// operator=name: an operator= value, then label pairs
	// (OperatorBuilder.LabelAs).
	labelAs []string
	inputs  []*node
	in      frontier.Frontier // meet of the inputs' outputs
	cap     frontier.Frontier
	out     frontier.Frontier // meet(cap, in)
	// held says the operator's output frontier once went back
	// (Dataflow.step): it stays where it was from then on.
	held bool
	// sentElsewhere says the operator's step sent on another operator's
	// output (Stream.Send), which is reported once.
	sentElsewhere bool
	// blame, when set, is the operator a refused chunk of this node's
	// comes from (admit names it): the source of a node that forwards
	// another's chunks, an arrangement's concatenation of its errors
	// with its overflows or an exchange's receiver.
	blame *node
	// link is, for an exchange's receiver, the sender of the same
	// exchange on its worker: the receiver's frontier is its senders'
	// meet over the workers, so what is downstream of the sender is
	// downstream of the receiver too (freezeDownstream).
	link *node
	// failed is the error the operator reported of its own step (the
	// failer Context.Failer gives, an arrangement's or an exchange's):
	// its output frontier is held where that step left it, and the
	// probes downstream of it on this worker never pass it
	// (Dataflow.stepFailed, freezeDownstream).
	failed error
	// failHeld says the failure was taken (Dataflow.step): the output
	// frontier held and what is downstream frozen, once.
	failHeld bool
	// kept says the chunks the node sends keep the operator contract by
	// construction, times included: an input's source (Inputs.Send checked
	// them against its frontier), an exchange's receiver (its sender
	// admitted them), an arrangement (its overflow rows, at its frontier),
	// a concatenation of such streams. A reader of its chunks skips their
	// time scan (admit).
	kept bool
	// closed says the node is stepped no more: an import that nothing in
	// the dataflow reads, closed at build (closeUnreadImports), whose
	// output frontier stays where its import stopped. Its step would
	// return that frontier every pass of every activation (the errs half
	// of an index a query reads only the oks of, in every round).
	closed bool
}

// Stream is an output of a node: each consumer has its own Port.
type Stream[T any] struct {
	from  *node
	df    *Dataflow
	ports []*Port[T]
	// keyedBy, when set, are columns every update of the stream on this
	// worker is keyed to it by (Worker(HashCols(row, keyedBy), peers) is
	// this worker), on every worker alike: an exchange by them moves
	// nothing and is left out (Context.Exchange). An input's stream is
	// keyed by its first column (Inputs.Send keeps each worker's share).
	keyedBy []int
	// width is the columns of every chunk of the stream plus one when
	// the build knows them (an input's oks and errs, an exchange of such
	// a stream); 0 when it does not (an operator's output): an exchange
	// by a column past them fails the build (Context.ExchangeNamed).
	width int
}

// Port is one consumer's queue of messages from a stream. Its two arrays
// take turns: the messages a Take returns stay in theirs until the next
// Take, while the sends meanwhile go to the other, so a port that receives
// every step allocates nothing once both are grown.
type Port[T any] struct {
	from  *node
	name  string
	msgs  []T
	spare []T // what the last Take returned: the sends' array after the next Take
}

// Name returns the input name the port was added under (AddInput).
func (p *Port[T]) Name() string { return p.name }

// Frontier returns the frontier of the stream the port reads: every message
// at an earlier time has been delivered to the port.
func (p *Port[T]) Frontier() frontier.Frontier { return p.from.out }

// Send delivers m to every consumer. It is called by the step of the
// operator whose output s is: one called by another operator's step
// delivers nothing and is the dataflow's error naming both operators
// (ErrNotItsOutput), reported once per operator, as a Context method
// called from a step is (ErrBuildReturned).
func (s *Stream[T]) Send(m T) {
	if n := s.df.stepping; n != s.from && n != nil {
		s.df.sentOnAnothers(n, s.from)
		return
	}
	for _, p := range s.ports {
		p.msgs = append(p.msgs, m)
	}
	if len(s.ports) > 0 {
		s.df.sent++
	}
}

// Frontier returns the stream's frontier: its node's output frontier. An
// operator that depends on it takes the stream as an input (AddInput): an
// import that no operator takes as an input is closed at build, and its
// frontier then stays where it was (Dataflow.closeUnreadImports).
func (s *Stream[T]) Frontier() frontier.Frontier { return s.from.out }

// Consumed reports whether any operator reads the stream, so that an
// operator can skip forming messages nobody would receive.
func (s *Stream[T]) Consumed() bool { return len(s.ports) > 0 }

// subscribe adds a consumer port for an operator of df. A stream of
// another dataflow, or of this one's build on another worker, is read by
// a port that receives nothing: the reader's build fails (checkOrder), and
// the stream's own dataflow never sends to a port nobody takes from (nor,
// from another worker's goroutine, races with its reader).
func (s *Stream[T]) subscribe(df *Dataflow) *Port[T] {
	p := &Port[T]{from: s.from}
	if s.df == df {
		s.ports = append(s.ports, p)
	}
	return p
}

// portKeep is the most messages' room a port keeps in an array past
// the steps that needed it: an array grown beyond it by a burst (a
// dataflow hydrated from an input's history of many chunks, say) and
// more than four times what the step after takes is let go, not kept
// for the dataflow's life.
const portKeep = 1024

// Take returns the queued messages and empties the queue. The returned slice
// is valid until the next Take, which reuses its array.
func (p *Port[T]) Take() []T {
	m := p.msgs
	// The slice the last Take returned is no longer the caller's: its
	// array, cleared (it keeps no message alive), takes the next sends,
	// unless it is a burst's, which goes (the sends grow a new one). An
	// empty Take clears it too, and lets a burst's go: a stream that goes
	// quiet after a step may send nothing again.
	next := p.spare[:0]
	if c := cap(next); c > portKeep && c > 4*len(m) {
		next = nil
	} else {
		clear(p.spare)
	}
	if len(m) == 0 {
		p.spare = next
		return m
	}
	p.msgs, p.spare = next, m
	return m
}

// Dataflow is one worker's instance of a dataflow.
type Dataflow struct {
	id    string
	inc   uint64 // incarnation: the create's sequence number
	nodes []*node
	asOf  frontier.Frontier
	until frontier.Frontier
	sent  int // messages sent in the current pass
	// again says an operator left work for a later pass in the current
	// one (OperatorBuilder.StepAgain): the pass counts as moving.
	again   bool
	dropped bool
	onDrop  []func()
	imports []string // the index ids the dataflow reads (Imports)
	// maintained is Desc.Maintained.
	maintained bool
	// importRoots maps each imported index id to the Maintained index the
	// dataflow reads through it (IndexManager.RootOf at import).
	importRoots map[string]string
	// importWriters maps each imported index id to the dataflow writing
	// its traces (share.Bundle.Writer at import).
	importWriters map[string]string
	// kept are the imported index ids an operator reads through a
	// reader of its own (Context.Keep) or that the dataflow re-exports.
	kept map[string]bool
	// keepAlive has, per imported index id, the handles a Maintained
	// importer keeps on its traces (Context.keepAlive): released when the
	// dataflow is dropped, or at build when nothing reads the index
	// (closeUnreadImports).
	keepAlive map[string][]*trace.Handle
	// unreadExamined counts the nodes and imports closeUnreadImports
	// looked at (tests).
	unreadExamined int
	// labels are the worker's pprof labels, set again after each pass
	// whose operators' steps ran under their own (label); nil: none.
	labels context.Context
	// fail reports an error as the dataflow's (Env.Fail); nil: nowhere.
	fail func(error)
	// elsewhere guards gone, set once drop has begun: a report from
	// another goroutine than the worker's (Context.late) is made under
	// it, and only before the drop, so none comes after the worker has
	// applied the drop (a runtime forgets what it took of a dropped
	// incarnation's errors then).
	elsewhere sync.Mutex
	gone      bool
	// stepping is the operator being stepped, nil between steps: what
	// an error of a call it makes names (Context.late).
	stepping *node
	// stopping is Env.Stopping: once it is set, a pass steps no more
	// operators and reports nothing moved (nil: never).
	stopping *atomic.Bool
	// panicked says an operator's step panicked (recoverStep): the
	// dataflow steps nothing more on this worker, its frontiers held
	// where they were, until it is dropped.
	panicked bool
}

// ImportRoot returns the Maintained index the dataflow reads through
// imported index id: id itself if a Maintained dataflow exports it, the
// index a query's re-export re-exports, or "" (a query's own export).
func (d *Dataflow) ImportRoot(id string) string { return d.importRoots[id] }

// ImportWriter returns the id of the dataflow whose arrangement writes the
// traces the dataflow reads through imported index id (share.Bundle.Writer):
// the exporter of a Maintained or query's index, the source's writer for a
// re-export. Its drop stops them.
func (d *Dataflow) ImportWriter(id string) string { return d.importWriters[id] }

// Maintained reports whether the dataflow is Maintained (Desc.Maintained).
func (d *Dataflow) Maintained() bool { return d.maintained }

// EndImport records err as the end of imported index id, which its
// runtime reports of the command that ended it (the drop of the index,
// or of what it re-exports): the dataflow's imports of id stop where the
// index did. Once such an import has read every batch the index
// published (share.Import.Ended), the probes, captures and tallies
// downstream of it on this worker are frozen at its final frontier with
// err (Probe.freezeAt), so a wait for a time it never passes returns
// err where it lasted until its context ended; the import's next step
// does it, which the caller brings about (Env.Activate). It reports
// whether the dataflow imports id. Called on the dataflow's worker, as
// its steps are.
func (d *Dataflow) EndImport(id string, err error) bool {
	found := false
	for _, n := range d.nodes {
		if o, ok := n.op.(*importOp); ok && o.index == id && !o.unread {
			found = true
			if o.ended == nil {
				o.ended = err
			}
		}
	}
	return found
}

// readsIndex records that the dataflow reads imported index id other than
// through its import's stream.
func (d *Dataflow) readsIndex(id string) {
	if d.kept == nil {
		d.kept = map[string]bool{}
	}
	d.kept[id] = true
}

// ID returns the dataflow's id.
func (d *Dataflow) ID() string { return d.id }

// Incarnation returns the number Assemble was given for the dataflow (a
// runtime's create number), which tells it from another of the same id.
func (d *Dataflow) Incarnation() uint64 { return d.inc }

// Imports returns the ids of the indexes the dataflow reads: those its
// Build imported (Context.ImportIndex), in the order of their first
// import, but for any that nothing reads — every half closed at build
// (closeUnreadImports), no operator keeping a reader of it (Context.Keep)
// and no re-export of it — whose end the dataflow does not see. The
// caller must not change the slice.
func (d *Dataflow) Imports() []string { return d.imports }

// Operators returns the names of the dataflow's operators, in the order
// they step: each is its steps' operator= pprof label when the dataflow
// labels every step (Env.LabelSteps), and names it in its errors.
func (d *Dataflow) Operators() []string {
	names := make([]string, len(d.nodes))
	for i, n := range d.nodes {
		names[i] = n.name
	}
	return names
}

// OperatorLabels returns the operator= pprof label of each of the
// dataflow's operators, in the order they step, when the dataflow labels
// every step (Env.LabelSteps): its name (Operators), or what LabelAs set
// in its place. The caller may change the slice.
func (d *Dataflow) OperatorLabels() []string {
	labels := make([]string, len(d.nodes))
	for i, n := range d.nodes {
		labels[i] = n.name
		if n.labelAs != nil {
			labels[i] = n.labelAs[0]
		}
	}
	return labels
}

// origin is the operator whose chunks n forwards (node.blame), n itself
// if it forwards none.
func (n *node) origin() *node {
	if n.blame != nil {
		return n.blame
	}
	return n
}

// addNode appends an operator reading the given input nodes.
func (d *Dataflow) addNode(name string, op Operator, inputs ...*node) *node {
	n := &node{name: name, df: d, op: op, inputs: inputs}
	d.appendNode(n)
	return n
}

// appendNode appends n, with its frontiers at their start: nothing passed.
func (d *Dataflow) appendNode(n *node) {
	n.cap, n.in, n.out = frontier.Min(), frontier.Empty(), frontier.Min()
	d.nodes = append(d.nodes, n)
	if d.labels != nil && n.labels == nil { // labelled already: a step sets every node's
		n.labels = d.nodeLabels(n)
	}
}

// checkOrder reports an operator that reads one added after it (an
// OperatorBuilder built after a reader of its outputs): construction order
// must be a topological order.
func (d *Dataflow) checkOrder() error {
	at := make(map[*node]int, len(d.nodes))
	for i, n := range d.nodes {
		at[n] = i
	}
	for i, n := range d.nodes {
		for _, in := range n.inputs {
			if in.df != d {
				return fmt.Errorf("dataflow %s: operator %q reads a stream of operator %q of another dataflow, or of another worker's build: an operator reads only streams its own build made", d.id, n.name, in.name)
			}
			if j, ok := at[in]; !ok || j >= i {
				return fmt.Errorf("dataflow %s: operator %q reads operator %q, which is not built before it", d.id, n.name, in.name)
			}
		}
	}
	return nil
}

// closeUnreadImports closes every import that nothing in the dataflow
// reads: no operator takes its stream or its frontier (an operator that
// takes a stream has its node among its inputs), and the build has
// released its reader (an operator that reads the trace keeps a clone of
// its own, Context.Keep). Its replay could reach no one, and its holds
// would only keep the publication from compacting; closed, it releases
// them, and its node's frontier stays at what it had acknowledged (an
// operator that read the stream's frontier without taking it as an input
// would see it stall, not complete). A local arrangement that nothing
// reads costs as little: with no handle left its trace is dropped
// (trace.Writer). The half of an index a query never looks at, say the
// errs of a query that reads only the oks, then costs the query nothing.
func (d *Dataflow) closeUnreadImports() {
	// read has the nodes some node takes as an input, readIdx the
	// indexes a half still imported is of: one pass over the nodes each,
	// so a build costs its nodes and imports, not their product.
	var read map[*node]bool
	var readIdx map[string]bool
	for _, n := range d.nodes {
		d.unreadExamined++
		o, ok := n.op.(*importOp)
		if !ok {
			continue
		}
		if read == nil {
			read, readIdx = map[*node]bool{}, map[string]bool{}
			for _, m := range d.nodes {
				d.unreadExamined++
				for _, in := range m.inputs {
					read[in] = true
				}
			}
		}
		if !read[n] {
			o.unread = true
			o.im.Close()
			// Its frontier is final (no one takes it as an input), so
			// the node is not stepped again.
			n.cap = o.im.Frontier()
			n.out = n.cap.Meet(n.in)
			n.closed = true
			continue
		}
		readIdx[o.index] = true
	}
	// An index is read while one of its halves is, or through a reader
	// kept of it, or by its re-export.
	d.imports = slices.DeleteFunc(d.imports, func(id string) bool {
		d.unreadExamined++
		if d.kept[id] || readIdx[id] {
			return false
		}
		d.releaseKeepAlive(id)
		return true
	})
}

// releaseKeepAlive releases the handles the dataflow keeps on the traces
// of imported index id (Context.keepAlive), if any.
func (d *Dataflow) releaseKeepAlive(id string) {
	for _, h := range d.keepAlive[id] {
		h.Release()
	}
	delete(d.keepAlive, id)
}

// label makes each operator's step run under the pprof labels of base
// (the worker's) with dataflow= the dataflow's id and operator= the
// operator's name added, made here once: a step sets them and nothing
// more. A nil base labels nothing.
func (d *Dataflow) label(base context.Context) {
	if base == nil {
		return
	}
	d.labels = base
	for _, n := range d.nodes {
		if n.labels == nil { // an operator that asked for them has them (StepLabels)
			n.labels = d.nodeLabels(n)
		}
	}
}

// nodeLabels returns n's step labels: the dataflow's with dataflow= and
// operator= added.
func (d *Dataflow) nodeLabels(n *node) context.Context {
	return n.stepLabels(d.labels, d.id)
}

// stepLabels is the label context of a step of n in dataflow id on a
// worker whose labels are base: operator= its name, or what LabelAs set.
func (n *node) stepLabels(base context.Context, id string) context.Context {
	if n.labelAs == nil {
		return stepLabels(base, id, n.name)
	}
	return pprof.WithLabels(base, pprof.Labels(append([]string{"dataflow", id, "operator"}, n.labelAs...)...))
}

// stepLabels is the label context of a step of operator name of dataflow
// id on a worker whose labels are base (OperatorBuilder.StepLabels gives
// it to operators before the dataflow labels its nodes).
func stepLabels(base context.Context, id, name string) context.Context {
	return pprof.WithLabels(base, pprof.Labels("dataflow", id, "operator", name))
}

// step runs one pass over the graph in order and reports whether anything
// moved (a message was sent or a frontier changed).
func (d *Dataflow) step() bool {
	if d.dropped || d.panicked {
		return false
	}
	d.sent, d.again = 0, false
	moved := false
	labelled := d.labels != nil
	for _, n := range d.nodes {
		if d.stopping != nil && d.stopping.Load() {
			// Shutdown was called (by a step before this one, say):
			// the dataflow is discarded, and runs nothing more.
			moved, d.sent, d.again = false, 0, false
			break
		}
		if n.closed {
			continue
		}
		in := frontier.Empty()
		for _, i := range n.inputs {
			in = in.Meet(i.out)
		}
		n.in = in
		if labelled {
			pprof.SetGoroutineLabels(n.labels)
		}
		d.stepping = n
		n.cap = n.op.Step(in)
		d.stepping = nil
		out := n.cap.Meet(in)
		if n.failed != nil && !n.failHeld {
			// Its step failed: held where the step left it (or
			// where it was, had the step taken it back, or had it
			// gone back before: held there already), and what is
			// downstream never passes that.
			n.failHeld = true
			if !n.held && out != n.out && n.out.LessEqual(out) {
				n.out = out
				moved = true
			}
			n.held = true
			d.freezeDownstream(n, n.out, n.failed)
			continue
		}
		if out != n.out && !n.held {
			if !n.out.LessEqual(out) {
				// A capability returned behind what the output had
				// announced: the readers took the times before it
				// as complete. One comparison a moving frontier.
				n.held = true
				d.wentBack(n, out)
				continue
			}
			n.out = out
			moved = true
		}
	}
	if labelled {
		pprof.SetGoroutineLabels(d.labels)
	}
	return moved || d.sent > 0 || d.again
}

// stepFailed records err as the failure of the operator being stepped
// (d.stepping), which a failer of its own reports (Context.Failer, an
// arrangement's, an exchange's): step then holds its output frontier and
// freezes what is downstream of it. A failure reported outside a step, or
// the same operator's second, is only reported.
func (d *Dataflow) stepFailed(err error) {
	if n := d.stepping; n != nil && n.failed == nil {
		n.failed = err
	}
}

// failer returns the function an operator of d calls with the error of
// its own step: recorded against the operator (stepFailed) and reported
// as the dataflow's (Env.Fail). Called from another goroutine than the
// worker's (one the Build started, say), it reads nothing the worker
// writes: the error is reported through Env.FailElsewhere, until the
// worker drops the dataflow, and holds no operator, as no step of the
// dataflow's made it (the operator the worker is stepping then, if any,
// is not the caller). Telling the goroutine apart costs a stack trace,
// paid by a failure only.
func (d *Dataflow) failer(env *Env) func(error) {
	return func(err error) {
		if env.OnItsWorker != nil && !env.OnItsWorker() {
			if env.FailElsewhere != nil {
				if !strings.HasPrefix(err.Error(), "dataflow "+d.id+":") {
					err = fmt.Errorf("dataflow %s: %w", d.id, err)
				}
				d.elsewhere.Lock()
				if !d.gone {
					env.FailElsewhere(d.id, d.inc, err)
				}
				d.elsewhere.Unlock()
			}
			return
		}
		d.stepFailed(err)
		if env.Fail != nil {
			env.Fail(d.id, err)
		}
	}
}

// freezeDownstream freezes, at limit with err, every probe, capture and
// tally downstream of n on this worker (Probe.freezeAt): n's output
// frontier is held at limit for good, so none of them passes it. What is
// downstream follows the inputs, and an exchange from sender to receiver
// (node.link). The nodes are in a topological order (checkOrder), so one
// pass finds them; a cold path, taken once per failed operator.
func (d *Dataflow) freezeDownstream(n *node, limit frontier.Frontier, err error) {
	if mutants.Enabled && mutants.On(mutants.FailedStepFreezesNothing) {
		return
	}
	down := map[*node]bool{n: true}
	if a, ok := n.op.(*arrangeOp); ok {
		a.spine.Fail(limit, err) // its own failure: its trace stops at its sealed frontier
	}
	for _, m := range d.nodes {
		if down[m] {
			continue
		}
		reached := m.link != nil && down[m.link]
		for _, in := range m.inputs {
			reached = reached || down[in]
		}
		if !reached {
			continue
		}
		down[m] = true
		if f, ok := m.op.(freezer); ok {
			p, w := f.probed()
			p.freezeAt(w, limit, err)
		}
		if a, ok := m.op.(*arrangeOp); ok {
			// Its trace's upper never passes limit: nor does that of
			// any reader importing it, in this dataflow or another
			// (share.Spine.Fail).
			a.spine.Fail(limit, err)
		}
	}
}

// ErrNotItsOutput is what a dataflow reports of an operator whose step
// sent on a stream that is another operator's output (Stream.Send): the
// message is not delivered. The stream's frontier is its own operator's,
// so a message sent there by another could arrive at a time its readers
// took as complete.
var ErrNotItsOutput = errors.New("an operator sends on its own outputs only")

// sentOnAnothers reports, once for operator n, that its step sent on an
// output of operator of.
func (d *Dataflow) sentOnAnothers(n, of *node) {
	if n.sentElsewhere {
		return
	}
	n.sentElsewhere = true
	if d.fail != nil {
		d.fail(fmt.Errorf("dataflow %s: operator %q: Stream.Send on an output of operator %q: %w", d.id, n.name, of.name, ErrNotItsOutput))
	}
}

// wentBack reports that operator n returned a capability that would take
// its output frontier back to out: its frontier is held where it was, so
// no reader sees a time it took as complete open again, and what it sends
// at a time before that is refused where it is read whole (ErrBadChunk).
func (d *Dataflow) wentBack(n *node, out frontier.Frontier) {
	if d.fail != nil {
		d.fail(fmt.Errorf("dataflow %s: operator %q: its output frontier went back from %v to %v (its capability %v, its inputs' frontier %v): a capability only advances; its output frontier is held at %v", d.id, n.name, n.out, out, n.cap, n.in, n.out))
	}
}

// run steps the dataflow until nothing moves, at most limit passes, and
// reports whether the last pass still moved. It is where a panic in an
// operator's Step is recovered (recoverStep): one deferred call per
// activation of the dataflow (Step) or per create's first passes
// (Start), not one per pass or per operator, and an open-coded defer
// costs a few instructions when nothing panics.
func (d *Dataflow) run(limit int) (moved bool) {
	defer d.recoverStep(&moved)
	for range limit {
		if !d.step() {
			return false
		}
	}
	return true
}

// ErrOperatorPanicked is what a dataflow reports of an operator whose Step
// or Shutdown panicked: the panic is the operator's mistake in that
// dataflow, reported as the dataflow's error with the operator's name,
// the panic's value (matched by errors.Is when it is an error) and the
// start of the panicking goroutine's stack, not a crash of the worker
// that stepped it. After a step's panic the dataflow steps nothing more
// on that worker, its output frontiers held where they were, until it
// is dropped, when every operator is shut down (README "Concepts"). The
// error's first line names the dataflow, the operator, the method and the
// value; the stack follows it. A runtime reports one panic met on several
// workers once, comparing the errors without their stacks.
var ErrOperatorPanicked = errors.New("operator panicked")

// panicStackMax bounds the stack an ErrOperatorPanicked error carries.
const panicStackMax = 2048

// recoverStep is run deferred by run: a panic in a step is the dataflow's
// error naming the operator being stepped (d.stepping), and the dataflow
// stops. One that is no operator's (d.stepping nil: the engine's own),
// with nowhere to report it (no Env.Fail), or an invariant build's check
// (invariants.IsViolation: the engine's bug, which must stop the build's
// tests where it is found) goes on.
func (d *Dataflow) recoverStep(moved *bool) {
	p := recover()
	if p == nil {
		return
	}
	n := d.stepping
	if n == nil || d.fail == nil || invariants.IsViolation(p) {
		panic(p)
	}
	d.stepping = nil
	d.panicked = true
	*moved = false
	if d.labels != nil {
		pprof.SetGoroutineLabels(d.labels)
	}
	err := panicError(d.id, n.name, "Step", p, debug.Stack())
	// Nothing of the dataflow steps on this worker again: the frontiers
	// its probes, captures and tallies hold here are final, and a wait
	// for a time they have not passed ends with the panic.
	for _, m := range d.nodes {
		if f, ok := m.op.(freezer); ok {
			p, w := f.probed()
			p.freeze(w, err)
		}
		if a, ok := m.op.(*arrangeOp); ok {
			// Its trace stays where it was sealed: readers importing
			// it, in other dataflows too, never pass that.
			a.spine.Fail(a.sealed, err)
		}
	}
	d.fail(err)
}

// panicError is the error of operator name's method (Step, Shutdown) that
// panicked with p, stack being the goroutine's stack at the recover.
func panicError(df, name, method string, p any, stack []byte) error {
	s := string(stack)
	// From the frame that panicked: the frames above it are the
	// recover's and the runtime's panic.
	if i := strings.Index(s, "\npanic("); i >= 0 {
		s = s[i+1:]
		for range 2 {
			if j := strings.IndexByte(s, '\n'); j >= 0 {
				s = s[j+1:]
			}
		}
	}
	if len(s) > panicStackMax {
		s = s[:panicStackMax] + "\n\t..."
	}
	e := &operatorPanic{stack: strings.TrimRight(s, "\n"), errs: []error{ErrOperatorPanicked}}
	if pe, ok := p.(error); ok {
		e.errs = append(e.errs, pe)
	}
	e.head = fmt.Sprintf("dataflow %s: operator %q: %s: %v: %v", df, name, method, ErrOperatorPanicked, p)
	return e
}

// operatorPanic is an ErrOperatorPanicked error: its text is head (the
// dataflow, the operator, the method and the panic's value), a newline
// and the stack.
type operatorPanic struct {
	head, stack string
	errs        []error // ErrOperatorPanicked, and the panic's value if an error
}

func (e *operatorPanic) Error() string { return e.head + "\n" + e.stack }

// Unwrap matches ErrOperatorPanicked and the panic's value (errors.Is).
func (e *operatorPanic) Unwrap() []error { return e.errs }

// PanicStack returns the stack the error's text ends with. The stacks of
// one panic met on several workers differ (goroutine ids, arguments), so
// a runtime that reports an error once however many workers meet it
// (core/runtime's CommandError) names it by its text without the stack.
func (e *operatorPanic) PanicStack() string { return e.stack }

// shutdownNode shuts operator n down, returning the error of a panic in
// its Shutdown, so that the operators after it are shut down and the
// drop's hooks run all the same.
func (d *Dataflow) shutdownNode(n *node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if invariants.IsViolation(p) {
				panic(p)
			}
			err = panicError(d.id, n.name, "Shutdown", p, debug.Stack())
		}
	}()
	n.op.Shutdown()
	return nil
}

// runDropHook runs one drop hook, returning the error of a panic in it,
// so that the hooks after it run all the same: a Build's own
// (Context.OnDrop) is the caller's code, as an operator's Shutdown is,
// and the hooks after it release the dataflow's holds and indexes.
func (d *Dataflow) runDropHook(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if invariants.IsViolation(p) {
				panic(p)
			}
			err = panicError(d.id, "drop hook", "OnDrop", p, debug.Stack())
		}
	}()
	f()
	return nil
}

// drop shuts every operator down and runs the drop hooks (D3).
func (d *Dataflow) drop() {
	if d.dropped {
		return
	}
	d.dropped = true
	d.elsewhere.Lock()
	d.gone = true
	d.elsewhere.Unlock()
	var panicked error
	for i := len(d.nodes) - 1; i >= 0; i-- {
		if err := d.shutdownNode(d.nodes[i]); err != nil {
			if d.fail != nil {
				d.fail(err)
			} else if panicked == nil {
				panicked = err
			}
		}
	}
	for i := len(d.onDrop) - 1; i >= 0; i-- {
		if err := d.runDropHook(d.onDrop[i]); err != nil {
			if d.fail != nil {
				d.fail(err)
			} else if panicked == nil {
				panicked = err
			}
		}
	}
	// A dropped dataflow may still be named by a late activation; keep
	// nothing it referenced alive through it.
	d.nodes, d.onDrop = nil, nil
	if panicked != nil {
		panic(panicked) // nowhere to report it (no Env.Fail), once all is released
	}
}
