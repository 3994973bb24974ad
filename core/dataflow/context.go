package dataflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/isnil"
)

// ErrQueryReadsInput is wrapped by Context.Input in a dataflow that is not
// Maintained: a query reads indexes only, in every runtime role alike (the
// Interactive runtime receives no input, so a Solo runtime that let a query
// read one would answer what the pair cannot).
var ErrQueryReadsInput = errors.New("dataflow: a query reads no input (only a Maintained dataflow reads inputs)")

// ErrMaintainedReadsQuery is wrapped by Context.ImportIndex in a Maintained
// dataflow for an index that a query (a dataflow not Maintained) exports:
// the Maintenance runtime renders no query, so it has no such index, and a
// Solo runtime that let a maintained dataflow read one would answer what
// the pair cannot.
var ErrMaintainedReadsQuery = errors.New("dataflow: a Maintained dataflow reads no index a query exports")

// ErrCompactedBeyondAsOf is wrapped by ImportIndex when an index has been
// allowed to compact beyond the dataflow's as_of (§3.5): a protocol error,
// never coalesced data.
var ErrCompactedBeyondAsOf = errors.New("dataflow: index has been allowed to compact beyond the dataflow as_of")

// ErrSourceEnded is wrapped by Context.ImportIndex for a query's re-export
// whose Maintained source has ended (freed, or its exporter dropped): its
// readers stopped with the source (the pair's read the source's ended
// publication), so a new one would read nothing after it in the pair and
// everything after it in Solo. Refused alike in both. It is wrapped too for
// an index whose traces' writer (share.Bundle.Writer) has been dropped — a
// re-export, Maintained or a query's, that outlived the dataflow whose
// arrangement it shares: nothing would ever come after what it holds.
var ErrSourceEnded = errors.New("dataflow: the index re-exported has ended")

// Desc describes a dataflow to create on every worker of a runtime.
type Desc struct {
	ID string
	// Maintained dataflows are fed by the inputs and maintain indexes: the
	// runtimes that receive inputs (Solo, Maintenance) render them. The
	// others are queries, which read indexes only (Context.Input refuses
	// them with ErrQueryReadsInput in every role): the Interactive runtime
	// renders them, a Solo runtime too. A dataflow that builds everything
	// from raw inputs itself (direct mode, docs/spec.md "Indexes and
	// arrangements") is Maintained, with no exports, and runs in a Solo
	// runtime.
	Maintained bool
	// AsOf and Until bound the times the dataflow must be correct at: from
	// AsOf on, before Until ({} for no bound).
	AsOf, Until frontier.Frontier
	// Exports lists the index ids Build exports; a runtime that does not
	// render the dataflow records them as peers.
	Exports []string
	// Build adds the dataflow's operators. It runs once per worker, on
	// the worker's goroutine, which applies nothing else meanwhile, and
	// it must return: nothing interrupts it, and a runtime's Shutdown
	// waits for it (as for every command being applied) before it
	// returns, so a Build that never returns makes Shutdown wait forever.
	// A Build that waits for something outside the runtime should wait
	// for Context.Done too, and return (an error) when it is closed. An
	// operator's Step runs on the worker's goroutine as well, and must
	// not wait either. A call there that waits for the runtime's workers
	// (runtime.Controller.Sync, SyncRole, Runtime.Stats) would wait for
	// its caller: it returns runtime.ErrOnWorker instead, at once in a
	// Build and after about half a millisecond in a Step. So does, in a
	// Build, a wait on a probe or a capture of the runtime's dataflows
	// (Probe.WaitPassed), which only its workers move, whether or not it
	// has passed its time; in a Step such a wait is not told apart (that
	// would cost every round a check) and waits until its context ends.
	Build func(*Context) error
}

// Env is what a worker gives the dataflows it builds.
type Env struct {
	Worker, Peers int
	Manager       *IndexManager
	Inputs        *Inputs
	Hub           *Hub
	// Registry is where a publishing runtime publishes exported indexes;
	// nil for a runtime that publishes nothing (Solo).
	Registry *share.Registry
	// Activate marks a dataflow as having work; safe from any goroutine.
	Activate func(*Dataflow)
	// ActivatePublished, when set, is Activate for an import whose
	// publisher inserted a batch of the given number of updates: called on
	// the publisher's goroutine (share.Import.OnPublished). A runtime may
	// then run the importing worker's work on the publisher's worker
	// rather than wake it.
	ActivatePublished func(df *Dataflow, updates int)
	// Wake signals the worker without naming a dataflow (publisher holds
	// moved); safe from any goroutine.
	Wake func()
	// Spine configures the spines of arrangements (a Fuel of 0 or less
	// is spine.WorkedFuel there: IndexManager.Maintain works them).
	Spine spine.Options
	// Fail records an operator's error (the worker reports it).
	Fail func(df string, err error)
	// QueryExport returns the query whose create exports index id, as
	// the runtime records it from its commands on every role (on the
	// Maintenance runtime, which renders no query, such an index is not
	// in Manager; in Solo it may not be either, if the query failed to
	// build or the index was freed). Nil (no runtime): no index counts
	// as a query's.
	QueryExport func(id string) (query string, ok bool)
	// Exporter returns the live dataflow whose create exports index id,
	// as the runtime records it from its commands on every role, built
	// or not: an index it names that is not in Manager is one whose
	// create failed (its Build, or for a peer the publisher's), which
	// ImportIndex names instead of calling the index unknown. Nil (no
	// runtime): no index has a recorded exporter.
	Exporter func(id string) (dataflow string, ok bool)
	// OnWorker reports the runtime's error (runtime.ErrOnWorker) for a
	// wait on a probe this worker feeds (Probe.WaitPassed) whose caller
	// must make the probe move itself: a Build on a worker of the runtime,
	// or of the pair's other runtime. Called at every wait, so it costs a
	// wait outside a create no more than a few loads. Nil (no runtime):
	// no wait is refused.
	OnWorker func() error
	// Stop is closed once the runtime running the worker is shut down
	// (Context.Done); nil: never.
	Stop <-chan struct{}
	// Stopper ends the waits on the probes this worker feeds
	// (Probe.WaitPassed) for times they have not passed, which they never
	// will then, once the runtime stops (the runtime's Stopper.Stop, with
	// runtime.ErrShutdown). Nil: such a wait lasts until its context ends.
	Stopper *Stopper
	// Stopping is set once the runtime running the worker is shut down,
	// as Stop's closing says: a pass steps no operator once it is (a step
	// before it in the pass, say, called Shutdown), so nothing of the
	// dataflow runs after Shutdown and reports what it meets. Nil: never.
	Stopping *atomic.Bool
	// OnItsWorker reports whether the caller runs on the worker's
	// goroutine, and FailElsewhere reports an error as Fail does from any
	// goroutine, naming the dataflow's incarnation (Dataflow.Incarnation)
	// too: a Context method called from another goroutine once the
	// Build returned is refused with both, reading nothing the worker
	// writes (Context.late), and reported only until the worker drops
	// the dataflow. Only such a call asks (a stack trace). Nil
	// OnItsWorker: every caller is taken as the worker's.
	OnItsWorker   func() bool
	FailElsewhere func(df string, inc uint64, err error)
	// Labels is the worker's pprof label context (a runtime's worker
	// carries runtime= and worker=, on top of its caller's labels), which
	// operators that label their work add their labels to; nil: none.
	Labels context.Context
	// LabelSteps runs each operator's step under Labels with dataflow=
	// and operator= added, so CPU samples split by operator: two label
	// switches a step, about 1,000 instructions a wake of a small
	// dataflow (a tenth of a round of one update), so only when asked
	// for (runtime.Options.Labels).
	LabelSteps bool
}

// Context is what a dataflow's Build function adds operators through.
type Context struct {
	df         *Dataflow
	env        *Env
	maintained bool           // Desc.Maintained: the dataflow may read inputs
	temp       []trace.Reader // arrangement readers owned by the build
	exchanges  int
	exports    []string // index ids exported so far, in call order
	declared   []string // Desc.Exports
	err        error    // the first error of a call that returns none
	// importReaders maps each import's reader to its index id: an
	// operator that keeps a clone of it (Keep) reads the index whether
	// or not it takes the import's stream (Dataflow.Imports).
	importReaders map[*share.Reader]string
	// closed says the dataflow's Build has returned: a method that adds
	// to the dataflow is refused (late). Atomic: a goroutine the Build
	// started may read it while the worker steps.
	closed atomic.Bool
}

// late returns, once the dataflow's Build has returned, the error of
// calling method (a Context method that adds to the dataflow, or an
// OperatorBuilder's Build) then, naming the operator whose step called it
// if one did; and reports it as the dataflow's error (Env.Fail), since a
// step may well drop what such a call returns. Nil during the Build.
// A dataflow is what its Build made: an operator added by a step would
// escape the build's checks (construction order, exports) and the
// agreement between the workers.
//
// Called from a goroutine other than the worker's (one the Build started,
// say), it reads nothing the worker writes: it returns the error, naming
// no operator, and reports it through Env.FailElsewhere, which any
// goroutine may call, unless the worker has dropped the dataflow (the
// call still returns the error); a call there before the Build returned
// is the caller's race, which no check tells. Telling the goroutine apart costs
// a stack trace, paid by such a call only: a step pays nothing for it.
func (c *Context) late(method string) error {
	if !c.closed.Load() {
		return nil
	}
	if c.env.OnItsWorker != nil && !c.env.OnItsWorker() {
		err := fmt.Errorf("dataflow %s: %s called from another goroutine than the worker's after the dataflow's Build returned: %w", c.df.id, method, ErrBuildReturned)
		if c.env.FailElsewhere != nil {
			// Not once the dataflow is dropped: the worker has applied
			// its drop, and it met no error of the incarnation since.
			c.df.elsewhere.Lock()
			if !c.df.gone {
				c.env.FailElsewhere(c.df.id, c.df.inc, err)
			}
			c.df.elsewhere.Unlock()
		}
		return err
	}
	who := ""
	if n := c.df.stepping; n != nil {
		who = fmt.Sprintf(" operator %q:", n.name)
	}
	err := fmt.Errorf("dataflow %s:%s %s called after the dataflow's Build returned: %w", c.df.id, who, method, ErrBuildReturned)
	if c.env.Fail != nil {
		c.env.Fail(c.df.id, err)
	}
	return err
}

// ErrBuildReturned is wrapped by a Context method that adds to a dataflow,
// or OperatorBuilder.Build, called after the dataflow's Build returned
// (from an operator's Step, say): it adds nothing, and the error is
// reported as the dataflow's (Env.Fail) as well as returned.
var ErrBuildReturned = errors.New("a dataflow's operators are added by its Build only")

// fail records err as the build's error unless one is recorded already.
func (c *Context) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// ErrNilStream is wrapped by the error of a create whose Build gave a
// Context method, or AddInput, a nil stream: a nil *Stream (or Source), an
// Arranged whose Stream is nil (the zero Arranged), a Collection whose Oks
// or Errs is, an Arrangement with such a half. The call adds nothing and
// fails the create with an error naming the dataflow, the method and,
// for a field, the field ("dataflow q: Context.Capture: nil stream
// (Arranged.Stream)"), on every worker alike, whether or not the Build
// returns what the call returned: it panicked in the Build before
// (ErrBuildPanicked), with a nil dereference that named nothing. A nil
// trace reader given to Keep, or as the Reader of an Arranged given to
// Hold or of an Arrangement given to Export, is refused alike ("nil trace
// reader"), without this error: no stream is nil there.
var ErrNilStream = errors.New("nil stream")

// refuseNil fails the build with the error of method given a nil stream
// (field, when not empty, naming where in its argument), and returns it.
func (c *Context) refuseNil(method, field string) error {
	if field != "" {
		field = " (" + field + ")"
	}
	err := fmt.Errorf("dataflow %s: %s: %w%s", c.df.id, method, ErrNilStream, field)
	c.fail(err)
	return err
}

// refuseNilReader is refuseNil for a nil trace reader.
func (c *Context) refuseNilReader(method, field string) error {
	if field != "" {
		field = " (" + field + ")"
	}
	err := fmt.Errorf("dataflow %s: %s: nil trace reader%s", c.df.id, method, field)
	c.fail(err)
	return err
}

// AsOf returns the dataflow's as_of.
func (c *Context) AsOf() frontier.Frontier { return c.df.asOf }

// Until returns the dataflow's until.
func (c *Context) Until() frontier.Frontier { return c.df.until }

// Worker returns this worker's index.
func (c *Context) Worker() int { return c.env.Worker }

// Labels returns the worker's pprof label context (Env.Labels), nil if it
// has none: an operator that adds labels of its own adds them to these.
func (c *Context) Labels() context.Context { return c.env.Labels }

// Done returns a channel closed once the runtime building the dataflow is
// shut down (never, with no runtime). A Build is not interrupted by
// Shutdown, which waits for it to return (see Desc.Build): one that waits
// for something outside the runtime should select on Done as well and
// return an error when it is closed. A runtime discards that create, as
// it discards the commands after it, and reports none of its errors.
func (c *Context) Done() <-chan struct{} { return c.env.Stop }

// Peers returns the number of workers.
func (c *Context) Peers() int { return c.env.Peers }

// Collection is a stream of oks and a stream of errors (error codes as
// one-column rows) that represent the same collection.
type Collection struct {
	Arity int
	Oks   *Stream[*Chunk]
	Errs  *Stream[*Chunk]
}

func newStream[T any](df *Dataflow, n *node) *Stream[T] { return &Stream[T]{from: n, df: df} }

// Input reads the worker's input name: its whole history, then what arrives.
// Only a Maintained dataflow reads inputs: in a query it returns an error
// wrapping ErrQueryReadsInput naming the dataflow and the input. An input
// declared with InputOptions.NoHistory is read only from before its first
// update: after one, the error wraps ErrInputHistory. An input whose
// history has been allowed to compact (Inputs.AllowCompaction) is read
// only by a dataflow whose as_of is at or after its since, and its history
// may then come with times advanced to the since: otherwise the error
// wraps ErrInputCompacted.
func (c *Context) Input(name string, arity int) (Collection, error) {
	if err := c.late("Context.Input"); err != nil {
		return Collection{}, err
	}
	if !c.maintained {
		return Collection{}, fmt.Errorf("dataflow %s: input %q: %w", c.df.id, name, ErrQueryReadsInput)
	}
	if in := c.env.Inputs; in.declaredOnly && !in.declared[name] {
		return Collection{}, fmt.Errorf("dataflow %s: input %q: %w (CreateInput)", c.df.id, name, ErrUndeclaredInput)
	}
	l, err := c.env.Inputs.log(name, arity)
	if err != nil {
		return Collection{}, fmt.Errorf("dataflow %s: %w", c.df.id, err)
	}
	if l.noHistory && l.received {
		return Collection{}, fmt.Errorf("dataflow %s: input %q: %w", c.df.id, name, ErrInputHistory)
	}
	if !l.since.LessEqual(c.df.asOf) {
		return Collection{}, fmt.Errorf("dataflow %s: input %q: since %v, as_of %v: %w", c.df.id, name, l.since, c.df.asOf, ErrInputCompacted)
	}
	op := &inputOp{df: c.df, log: l, pending: append([]*Chunk(nil), l.history...)}
	n := c.df.addNode("input "+name, op)
	n.kept = true
	op.oks = newStream[*Chunk](c.df, n)
	if arity > 0 {
		op.oks.keyedBy = []int{0} // each worker's share (Inputs.Send)
	}
	op.oks.width = arity + 1
	errs := newStream[*Chunk](c.df, n)
	errs.width = 2 // error codes
	l.subs = append(l.subs, op)
	return Collection{Arity: arity, Oks: op.oks, Errs: errs}, nil
}

// Exchange routes every update of s to the worker that owns its key columns
// (Worker(HashCols(row, cols), peers)). With one worker it is the identity,
// and so it is for a stream already keyed by cols (Stream.keyedBy: an
// input exchanged by its first column): no update would move, and the
// stream's progress stays the worker's own instead of waiting on every
// peer's. A negative column fails the build, and so does a column past
// the rows of a stream whose columns the build knows (an input's), naming
// the operator and the column, and so does a nil stream (ErrNilStream),
// for which it returns nil. A column past the rows of a chunk an
// operator sent is that chunk's ErrBadChunk where the exchange reads it,
// on one worker as on several: where no update would move, a check reads
// every chunk as the exchange would (nil, malformed, a column past its
// rows, a time its stream had passed) and forwards it, so one worker
// refuses what two refuse, with the same error. An exchange forwards an
// empty chunk too, whole to its own worker, so a reader after it refuses
// one of another arity than its collection's as it would without the
// exchange (README.md, "Dataflows").
//
// Exchange copies cols, and Arrange its key: the caller may reuse the
// slice at once (a Build arranging by one key slice rewritten between
// calls used to rearrange the earlier arrangements by the later keys).
func (c *Context) Exchange(s *Stream[*Chunk], cols []int) *Stream[*Chunk] {
	return c.exchangeNamed("Context.Exchange", s, cols, "")
}

// ExchangeNamed is Exchange with its two operators named "exchange send
// WHAT" and "exchange recv WHAT" (their pprof operator= labels and the
// names their errors give), so that a dataflow's several exchanges are
// told apart in a profile; an empty what is Exchange's plain names.
func (c *Context) ExchangeNamed(s *Stream[*Chunk], cols []int, what string) *Stream[*Chunk] {
	return c.exchangeNamed("Context.ExchangeNamed", s, cols, what)
}

// exchangeNamed is ExchangeNamed called as method.
func (c *Context) exchangeNamed(method string, s *Stream[*Chunk], cols []int, what string) *Stream[*Chunk] {
	if c.late("Context.Exchange") != nil {
		return s
	}
	if s == nil {
		c.refuseNil(method, "")
		return nil
	}
	// Its operators read cols at every step: the caller's slice is the
	// caller's to reuse once this returns.
	cols = slices.Clone(cols)
	// A column past the rows is told at the first chunk (admit); a
	// negative one is no column of any chunk, so it fails the build here,
	// on every worker alike, rather than index before a row in a step.
	// So does a column past a stream's known columns: on one worker no
	// chunk of it would be read by column.
	for _, k := range cols {
		if k < 0 {
			c.fail(fmt.Errorf("dataflow %s: exchange by column %d: columns are numbered from 0", c.df.id, k))
			return s
		}
		if s.width > 0 && k >= s.width-1 {
			c.fail(fmt.Errorf("dataflow %s: exchange by column %d of the %d-column stream of operator %q", c.df.id, k, s.width-1, s.from.origin().name))
			return s
		}
	}
	if s.width == 0 && (c.env.Peers == 1 || s.keyedBy != nil && slices.Equal(s.keyedBy, cols)) {
		// No update would move, but an operator's chunks are read
		// as the exchange reads them, on every worker count alike.
		return c.exchangeCheck(s, cols, what)
	}
	out := c.exchange(s, cols, what, -1, "exchange")
	out.width = s.width
	return out
}

// exchangeCheck is an exchange on one worker of an operator's stream,
// whose columns the build does not know: it admits each chunk as an
// exchange's sender does (exchangeSend) and forwards it.
func (c *Context) exchangeCheck(s *Stream[*Chunk], cols []int, what string) *Stream[*Chunk] {
	df, env := c.df, c.env
	op := &exchangeCheck{in: s.subscribe(c.df), cols: cols, last: frontier.Min(), onErr: df.failer(env)}
	n := c.df.addNode(named("exchange check", what), op, s.from)
	n.kept = true // its chunks admitted
	n.blame = s.from.origin()
	op.out = newStream[*Chunk](c.df, n)
	return op.out
}

// named is base followed by what, or base alone when what is empty.
func named(base, what string) string {
	if what == "" {
		return base
	}
	return base + " " + what
}

// halfNamed is what an arrangement's exchange of half ("oks", "errs") is
// named after: the half and what the arrangement arranges, or nothing
// (plain "exchange send") when that is unnamed.
func halfNamed(half, what string) string {
	if what == "" {
		return ""
	}
	return named(half, what)
}

// exchange is ExchangeNamed for a caller whose columns are checked
// already (ArrangeNamed's key). Its sender admits each chunk as of wide
// columns (any, with wide < 0) and names where in a refusal: an
// arrangement's exchange admits as the arrangement does and under its
// name, so a chunk it refuses is the same error on one worker, where the
// arrangement reads the chunk itself, as on several.
func (c *Context) exchange(s *Stream[*Chunk], cols []int, what string, wide int, where string) *Stream[*Chunk] {
	if c.env.Peers == 1 || s.keyedBy != nil && slices.Equal(s.keyedBy, cols) {
		return s
	}
	key := exchangeKey{df: c.df.id, inc: c.df.inc, seq: c.exchanges}
	c.exchanges++
	df, env := c.df, c.env
	ch := c.env.Hub.join(key, c.env.Worker, func() { env.Activate(df) })
	send := &exchangeSend{hub: c.env.Hub, key: key, ch: ch, worker: c.env.Worker, cols: cols, byFirst: len(cols) == 1 && cols[0] == 0, in: s.subscribe(c.df), last: frontier.Min(), wide: wide, where: where, onErr: df.failer(env)}
	sn := c.df.addNode(named("exchange send", what), send, s.from)
	recv := &exchangeRecv{ch: ch, worker: c.env.Worker}
	n := c.df.addNode(named("exchange recv", what), recv)
	n.link = sn
	n.kept = true
	n.blame = s.from.origin()
	recv.out = newStream[*Chunk](c.df, n)
	return recv.out
}

// Arrange arranges coll by the key columns (oks; errs by error code),
// exchanging by key first when there are several workers. The result is a
// Local arrangement. Its traces are publishing spines, so the runtime can
// publish or locally import them with one mechanism.
//
// Diff arithmetic is checked (docs/semantics.md §1.1): an overflow never
// fails the dataflow and never loses another update. The overflowed diff is
// kept saturated, and the arrangement's error collection gains a `numeric
// overflow` row (core/expr's CodeOverflow, count 1 per detection): at the
// time of the overflowing update when it is found while building that
// time's batch; when a merge finds it later (the time already sealed), at
// the arrangement's current frontier, the earliest time it can still emit.
// An arrangement whose input is complete (frontier {}) can emit nothing
// more: the overflow is then reported by the runtime only.
// The runtime also reports every overflowing merge as an error of the
// arrangement (IndexManager.Overflows).
//
// Its operators are named "arrange oks" and "arrange errs" (and "arrange
// overflows", the oks half's overflow rows joining the errors): the names
// of their pprof operator= labels and of their errors. ArrangeNamed names
// them after what they arrange.
//
// A Collection whose Oks or Errs is nil fails the create (ErrNilStream),
// as well as returning the error.
func (c *Context) Arrange(coll Collection, key []int) (*Arrangement, error) {
	return c.arrangeNamed("Context.Arrange", coll, key, "")
}

// ArrangeNamed is Arrange with its operators named after what they
// arrange: "arrange oks WHAT", "arrange errs WHAT" and "arrange overflows
// WHAT", and on several workers the exchanges before them "exchange send
// oks WHAT", "exchange recv oks WHAT" and the same with errs, so that the several arrangements of one dataflow are told apart
// in a profile (operator=) and in their errors. An empty what is Arrange's
// names. The names are made once, here: a step pays nothing for them.
func (c *Context) ArrangeNamed(coll Collection, key []int, what string) (*Arrangement, error) {
	return c.arrangeNamed("Context.ArrangeNamed", coll, key, what)
}

// arrangeNamed is ArrangeNamed called as method.
func (c *Context) arrangeNamed(method string, coll Collection, key []int, what string) (*Arrangement, error) {
	if err := c.late("Context.Arrange"); err != nil {
		return nil, err
	}
	if coll.Oks == nil {
		return nil, c.refuseNil(method, "Collection.Oks")
	}
	if coll.Errs == nil {
		return nil, c.refuseNil(method, "Collection.Errs")
	}
	// Its operators read key at every step, and the Arrangement's Key is
	// it: the caller's slice is the caller's to reuse once this returns.
	key = slices.Clone(key)
	for _, k := range key {
		if k < 0 || k >= coll.Arity {
			return nil, fmt.Errorf("dataflow %s: arrange: key column %d of a %d-column collection", c.df.id, k, coll.Arity)
		}
	}
	var vals []int
	for i := range coll.Arity {
		if !containsInt(key, i) {
			vals = append(vals, i)
		}
	}
	// A collection already keyed by the key on every worker (an input
	// arranged by its first column) is arranged where it is: each worker
	// seals as its own input allows, without waiting for its peers'
	// progress, and keeps its overflow errors in its own errs half (the
	// error collection is the sum over workers either way).
	keyed := coll.Oks.keyedBy != nil && slices.Equal(coll.Oks.keyedBy, key)
	oksName, errsName := named("arrange oks", what), named("arrange errs", what)
	oks, over := c.arrangeHalf(oksName, c.exchange(coll.Oks, key, halfNamed("oks", what), coll.Arity, oksName), coll.Arity, key, vals, true)
	// The oks half's overflow rows join the collection's errors before the
	// exchange, so they land on the worker that owns their code; the
	// concatenation's frontier holds the errs half back until the oks half
	// has sealed (and so reported) every earlier time.
	errsIn := c.concat(named("arrange overflows", what), coll.Errs, over)
	if !keyed {
		errsIn = c.exchange(errsIn, []int{0}, halfNamed("errs", what), 1, errsName)
	}
	errs, _ := c.arrangeHalf(errsName, errsIn, 1, []int{0}, nil, false)
	return &Arrangement{Flavor: Local, Key: key, Arity: coll.Arity, Oks: oks, Errs: errs}, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// arrangeHalf arranges in. With overflows it also returns the stream of
// the half's overflow error rows (one column: CodeOverflow), for the errs
// half; without, the half is an errs half and adds its own overflow rows
// itself: into the batch being built, at the times that overflowed, or,
// found by a merge, into its batcher at its frontier.
func (c *Context) arrangeHalf(name string, in *Stream[*Chunk], wide int, key, vals []int, overflows bool) (Arranged, *Stream[*Chunk]) {
	ar := batch.Arity{Key: len(key), Val: len(vals)}
	// The manager works the trace at every wake while it merges
	// (IndexManager.Maintain), so its arrivals bring spine.WorkedFuel
	// unless the runtime's options set a fuel.
	opts := c.env.Spine
	if opts.Fuel <= 0 {
		opts.Fuel = spine.WorkedFuel
	}
	h, w, s := share.NewTrace(ar, opts)
	// A new arrangement starts compacted at its dataflow's as_of: it is
	// correct from as_of on only, and says so to every importer (the MZ
	// #3005 row of docs/semantics.md §7.3).
	h.SetLogicalCompaction(c.df.asOf)
	m := c.env.Manager
	df, env := c.df, c.env
	tr := m.track(s, "dataflow "+c.df.id+": "+name, func() { env.Activate(df) }, c.env.Wake)
	tr.df, tr.inc = c.df.id, c.df.inc
	c.df.onDrop = append(c.df.onDrop, func() { m.untrack(s) })
	op := &arrangeOp{
		in: in.subscribe(c.df), keyCols: key, valCols: vals, batcher: batch.NewBatcher(ar, 0), w: w, spine: s, ar: ar,
		sealed: frontier.Min(), name: name, wide: wide, onErr: df.failer(env), consolidateAt: consolidateMin,
	}
	n := c.df.addNode(name, op, in.from)
	n.kept = true // its overflow rows
	op.out = newStream[*batch.Batch](c.df, n)
	var over *Stream[*Chunk]
	if overflows {
		over = newStream[*Chunk](c.df, n)
		op.over = over
	}
	c.temp = append(c.temp, h)
	return Arranged{Stream: op.out, Reader: h, Pres: batch.Identity(), Arity: ar, Key: key}, over
}

// concat returns a stream of the chunks of a and b; its frontier is the
// meet of theirs.
func (c *Context) concat(name string, a, b *Stream[*Chunk]) *Stream[*Chunk] {
	op := &concatOp{a: a.subscribe(c.df), b: b.subscribe(c.df)}
	n := c.df.addNode(name, op, a.from, b.from)
	n.kept = a.from.kept && b.from.kept
	// One stream kept by construction (the overflow rows): a refused
	// chunk is the other's.
	if b.from.kept && !a.from.kept {
		n.blame = a.from.origin()
	} else if a.from.kept && !b.from.kept {
		n.blame = b.from.origin()
	}
	op.out = newStream[*Chunk](c.df, n)
	return op.out
}

// ImportIndex imports index id from the worker's trace manager as an Imported
// arrangement, at the dataflow's as_of and bounded by its until (§4.4). It
// has one body for every runtime and both kinds of bundle: local traces are
// imported through their private point, peer bundles through the
// publication (never through the bundle's own logical-only hold).
func (c *Context) ImportIndex(id string) (*Arrangement, error) {
	if err := c.late("Context.ImportIndex"); err != nil {
		return nil, err
	}
	if c.maintained {
		if q, ok := c.queryExport(id); ok {
			return nil, fmt.Errorf("dataflow %s: import of index %q, which query %q exports: %w", c.df.id, id, q, ErrMaintainedReadsQuery)
		}
	}
	b, ok := c.env.Manager.Get(id)
	if !ok {
		// An index whose create failed keeps its id until its dataflow
		// is dropped: that failure is the reason, alike on every role
		// (the dataflow's own create, still building, is no failure).
		if ex, ok := c.exporter(id); ok && ex != c.df.id {
			return nil, fmt.Errorf("dataflow %s: import of index %q: the create of dataflow %q, which exports it, failed", c.df.id, id, ex)
		}
		return nil, fmt.Errorf("dataflow %s: import of unknown index %q", c.df.id, id)
	}
	if root, ended := c.env.Manager.rootEnded(id); ended {
		return nil, fmt.Errorf("dataflow %s: import of index %q, which re-exports %q: %w", c.df.id, id, root, ErrSourceEnded)
	}
	if c.env.Manager.writerEnded(id) {
		return nil, fmt.Errorf("dataflow %s: import of index %q, whose traces' writer, dataflow %s, is dropped: %w", c.df.id, id, b.Writer, ErrSourceEnded)
	}
	if since := c.env.Manager.importSince(id, b, c.maintained); !since.LessEqual(c.df.asOf) {
		return nil, fmt.Errorf("dataflow %s: index %q: since %v, as_of %v: %w", c.df.id, id, since, c.df.asOf, ErrCompactedBeyondAsOf)
	}
	oksAr := batch.Arity{Key: len(b.Key), Val: b.Columns - len(b.Key)}
	oks, oksIm, err := c.importHalf(id, "oks", b.Oks, oksAr, b.Key)
	if err != nil {
		return nil, fmt.Errorf("dataflow %s: index %q oks: %w", c.df.id, id, err)
	}
	errs, errsIm, err := c.importHalf(id, "errs", b.Errs, batch.Arity{Key: 1}, []int{0}) // by error code
	if err != nil {
		return nil, fmt.Errorf("dataflow %s: index %q errs: %w", c.df.id, id, err)
	}
	c.env.Manager.noteImports(id, c.maintained, oksIm, errsIm)
	if c.maintained {
		c.keepAlive(id, b)
	}
	if root := c.env.Manager.RootOf(id); root != "" {
		if c.df.importRoots == nil {
			c.df.importRoots = map[string]string{}
		}
		c.df.importRoots[id] = root
	}
	if c.df.importWriters == nil {
		c.df.importWriters = map[string]string{}
	}
	c.df.importWriters[id] = b.Writer
	if !slices.Contains(c.df.imports, id) {
		c.df.imports = append(c.df.imports, id)
	}
	return &Arrangement{Flavor: Imported, Index: id, Key: b.Key, Arity: b.Columns, Oks: oks, Errs: errs}, nil
}

// keepAlive keeps the traces of local bundle b written for as long as the
// dataflow lives, as a Maintained importer reads them: it takes a handle on
// each half that holds no time (its holds at {}), so the traces' writer
// goes on inserting though every index sharing them is freed, and the
// import's own hold (on the traces' point) decides what stays. Only a
// Maintained importer does: it reads the traces, on the Maintenance runtime
// as in Solo, while a query reads a Maintained export's publication in the
// pair, which keeps nothing of the publisher's traces alive; Solo's query
// must not either, or its Maintained readers would read on where the
// pair's stop. A peer bundle has no handle to take. The handles go with
// the dataflow, or at build with the import if nothing reads it
// (Dataflow.closeUnreadImports): the writer then need not maintain traces
// no one reads.
func (c *Context) keepAlive(id string, b *share.Bundle) {
	df := c.df
	for _, r := range []trace.Reader{b.Oks, b.Errs} {
		h, ok := r.(*trace.Handle)
		if !ok {
			continue
		}
		k := h.Clone()
		trace.SetCompaction(k, frontier.Empty())
		if df.keepAlive == nil {
			df.keepAlive = map[string][]*trace.Handle{}
			df.onDrop = append(df.onDrop, func() {
				for id := range df.keepAlive {
					df.releaseKeepAlive(id)
				}
			})
		}
		df.keepAlive[id] = append(df.keepAlive[id], k)
	}
}

// queryExport returns the query that exports index id, if one does, as
// the runtime records it (Env.QueryExport; without a runtime, none).
func (c *Context) queryExport(id string) (string, bool) {
	if c.env.QueryExport == nil {
		return "", false
	}
	return c.env.QueryExport(id)
}

// exporter is Env.Exporter, or none without one.
func (c *Context) exporter(id string) (string, bool) {
	if c.env.Exporter == nil {
		return "", false
	}
	return c.env.Exporter(id)
}

func (c *Context) importHalf(id, half string, r trace.Reader, ar batch.Arity, key []int) (Arranged, *share.Import, error) {
	in, err := share.ImporterOf(r)
	if err != nil {
		return Arranged{}, nil, err
	}
	df, env := c.df, c.env
	im, err := in.ImportWith(c.df.asOf, c.df.until, func() { env.Activate(df) })
	if err != nil {
		return Arranged{}, nil, err
	}
	if env.ActivatePublished != nil {
		im.OnPublished(func(n int) { env.ActivatePublished(df, n) })
	}
	op := &importOp{im: im, index: id}
	n := c.df.addNode("import "+id+" "+half, op)
	op.n = n
	op.out = newStream[*batch.Batch](c.df, n)
	c.temp = append(c.temp, im.Reader())
	if c.importReaders == nil {
		c.importReaders = map[*share.Reader]string{}
	}
	c.importReaders[im.Reader()] = id
	return Arranged{Stream: op.out, Reader: im.Reader(), Pres: im.Presentation(), Arity: ar, Key: key}, im, nil
}

// Keep clones r for an operator that reads the trace after construction; the
// clone is released when the dataflow is dropped. A nil r (a nil
// *trace.Handle or *share.Reader too) fails the create, naming Keep, and
// Keep returns nil.
func (c *Context) Keep(r trace.Reader) trace.Reader {
	if c.late("Context.Keep") != nil {
		return r
	}
	if r == nil || isnil.Value(r) {
		c.refuseNilReader("Context.Keep", "")
		return nil
	}
	if sr, ok := r.(*share.Reader); ok {
		if id, ok := c.importReaders[sr]; ok {
			c.df.readsIndex(id)
		}
	}
	k := r.CloneReader()
	c.df.onDrop = append(c.df.onDrop, k.Release)
	return k
}

// OnDrop registers f to run once, on the worker, when this worker's
// dataflow is dropped: by its DropDataflow, as a create that failed (its
// Build's error, or another worker's) or was discarded, or as the runtime
// shuts down — after every operator is shut down, when nothing of the
// dataflow steps again. It is for what a Build registers outside the
// dataflow and must go with it (render's Metrics keep each operator's
// error counter only while its dataflow lives): kept for the life of
// whatever holds it, such a registration grows with every create. Hooks
// run in the reverse order of their registration; one that panics is the
// drop's error (ErrOperatorPanicked, naming the "drop hook"), as an
// operator's Shutdown that panics is, and the others run all the same.
// Called after the Build returned, it registers nothing and returns an
// error wrapping ErrBuildReturned, as the other adding methods do.
func (c *Context) OnDrop(f func()) error {
	if err := c.late("Context.OnDrop"); err != nil {
		return err
	}
	if f != nil {
		c.df.onDrop = append(c.df.onDrop, f)
	}
	return nil
}

// Export makes a an index id of this worker's trace manager (§4.2). A Local
// arrangement's traces are cloned into a bundle; an Imported arrangement
// re-exports the bundle it was imported from. In a publishing runtime the
// traces are published under the incarnation (id, as_of, the create's
// sequence number), a re-export included. Dropping the dataflow drops the
// index. Build checks the ids exported against Desc.Exports: an id it does
// not list, or one exported already, makes no index and is not published
// (what the manager or registry would say of it differs by role: a query's
// index is in Solo's manager and not in the Maintenance runtime's, an
// incarnation published twice is the registry's error), so the create fails
// with ErrExportsDiffer, naming both lists, on every role alike. An
// Arrangement with a nil Stream or Reader in a half (one no Context method
// made) fails the create (ErrNilStream; "nil trace reader").
func (c *Context) Export(id string, a *Arrangement) error {
	if err := c.late("Context.Export"); err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("dataflow %s: export %q of a nil arrangement", c.df.id, id)
	}
	method := fmt.Sprintf("Context.Export %q", id)
	for _, h := range []struct {
		half string
		a    Arranged
	}{{"Oks", a.Oks}, {"Errs", a.Errs}} {
		if h.a.Stream == nil {
			return c.refuseNil(method, "Arrangement."+h.half+".Stream")
		}
		if h.a.Reader == nil || isnil.Value(h.a.Reader) {
			return c.refuseNilReader(method, "Arrangement."+h.half+".Reader")
		}
	}
	for _, h := range []Arranged{a.Oks, a.Errs} {
		if h.Stream != nil && h.Stream.df != c.df {
			// Its traces are another build's, written on its worker:
			// an index of them would outlive or race with their writer.
			return fmt.Errorf("dataflow %s: export %q of an arrangement of another dataflow, or of another worker's build", c.df.id, id)
		}
	}
	m := c.env.Manager
	var e *entry
	if a.Flavor == Imported {
		c.df.readsIndex(a.Index) // the re-export follows the index
		src, ok := m.Get(a.Index)
		if !ok {
			return fmt.Errorf("dataflow %s: re-export of unknown index %q", c.df.id, a.Index)
		}
		e = &entry{bundle: src.Clone(), owner: c.df.id, reexport: true, maintained: c.maintained, asOf: c.df.asOf}
		if !c.maintained {
			e.root = m.RootOf(a.Index)
		}
	} else {
		// An index names each key column once. Arrange takes a repeated
		// one (a linear join's stream key can repeat a column, and lays
		// out its rows itself), but then its halves have more columns than
		// the collection, and an importer, which reads the value arity as
		// Columns minus the key's, would misread every row.
		for i, k := range a.Key {
			if slices.Contains(a.Key[:i], k) {
				return fmt.Errorf("dataflow %s: export %q: key column %d listed twice", c.df.id, id, k)
			}
		}
		e = &entry{bundle: share.NewBundle(a.Oks.Reader.CloneReader(), a.Errs.Reader.CloneReader(), nil), owner: c.df.id, maintained: c.maintained, asOf: c.df.asOf}
		e.bundle.Key, e.bundle.Columns = slices.Clone(a.Key), a.Arity
		e.bundle.Writer = c.df.id
	}
	if !slices.Contains(c.declared, id) || slices.Contains(c.exports, id) {
		e.bundle.Release()
		c.exports = append(c.exports, id)
		return nil
	}
	if c.env.Registry != nil {
		tok, err := c.env.Registry.PublishBundle(share.Incarnation{ID: id, AsOf: c.df.asOf, Seq: c.df.inc}, e.bundle)
		if err != nil {
			e.bundle.Release()
			return fmt.Errorf("dataflow %s: export %q: %w", c.df.id, id, err)
		}
		e.token = tok
	}
	if err := m.set(id, e); err != nil {
		e.bundle.Release()
		if e.token != nil {
			e.token.Release()
		}
		return fmt.Errorf("dataflow %s: export %q: %w", c.df.id, id, err)
	}
	c.exports = append(c.exports, id)
	return nil
}

// checkProbe attaches p (a probe, or a capture's or tally's) on the worker,
// or fails the build, never a worker: a probe made for another number of
// workers (an error naming the dataflow and both counts), or one already
// attached on the worker, to this dataflow or an earlier one.
func (c *Context) checkProbe(what string, p *Probe) bool {
	if p == nil {
		c.fail(fmt.Errorf("dataflow %s: probe is nil: make one with NewProbe(workers)", c.df.id))
		return false
	}
	if n := p.made; n != c.env.Peers {
		c.fail(fmt.Errorf("dataflow %s: %s made for %d workers in a runtime of %d", c.df.id, what, n, c.env.Peers))
		return false
	}
	if !p.attach(c.env.Worker) {
		c.fail(fmt.Errorf("dataflow %s: %s already attached on worker %d: one reads one stream of one dataflow (make a new one for each)", c.df.id, what, c.env.Worker))
		return false
	}
	p.watch(c.env.OnWorker)
	if c.env.Stopper != nil {
		c.env.Stopper.add(p)
	}
	return true
}

// Source is any stream, of whatever message type: what a probe observes
// the frontier of. *Stream[T] implements it.
type Source interface{ source() *node }

func (s *Stream[T]) source() *node {
	if s == nil {
		return nil
	}
	return s.from
}

// Probe attaches p to the stream s (an arrangement's batches, a
// collection's chunks, any operator output). A probe made for another
// number of workers than the runtime's fails the build, and so does a nil
// s (ErrNilStream).
func (c *Context) Probe(p *Probe, s Source) {
	if c.late("Context.Probe") != nil {
		return
	}
	// The source is read before the probe is attached: a nil one fails
	// the create with nothing attached that no operator would leave.
	var from *node
	if s != nil {
		from = s.source()
	}
	if from == nil {
		c.refuseNil("Context.Probe", "")
		return
	}
	if c.checkProbe("probe", p) {
		c.df.addNode("probe", &probeOp{p: p, worker: c.env.Worker, stopper: c.env.Stopper}, from)
	}
}

// ErrExportsDiffer is wrapped by Build when the indexes a dataflow's Build
// exported are not exactly its Desc.Exports.
var ErrExportsDiffer = errors.New("dataflow: exports differ from Desc.Exports")

// Build builds desc on one worker as incarnation inc (the sequence number
// of its create: exchanges and publications of two incarnations of one id
// never meet). It runs desc.Build, checks the ids it exported against
// desc.Exports, then releases the readers the build context owned (an
// operator keeps what it needs with Keep; §4.9) and runs PassesAtBuild
// passes. On error everything created is dropped.
func Build(env *Env, desc Desc, inc uint64) (*Dataflow, error) {
	df, err := Assemble(env, desc, inc)
	if err != nil {
		return nil, err
	}
	df.Start()
	return df, nil
}

// Assemble is Build without its first passes: the dataflow's operators,
// imports and exports exist, and nothing has run. A caller that must learn
// whether the other workers built it too before it runs (a runtime, whose
// create exists on every worker or on none) calls Start once they did, or
// Drop.
func Assemble(env *Env, desc Desc, inc uint64) (*Dataflow, error) {
	asOf, until := desc.AsOf, desc.Until
	if !asOf.Less(until) {
		return nil, fmt.Errorf("dataflow %s: as_of %v is not before until %v", desc.ID, asOf, until)
	}
	if desc.Build == nil {
		return nil, fmt.Errorf("dataflow %s: Desc.Build is nil", desc.ID)
	}
	df := &Dataflow{id: desc.ID, inc: inc, asOf: asOf, until: until, maintained: desc.Maintained, stopping: env.Stopping}
	ctx := &Context{df: df, env: env, maintained: desc.Maintained, declared: desc.Exports}
	if env.Fail != nil {
		df.fail = func(err error) { env.Fail(df.id, err) }
	}
	err := runBuild(desc, ctx)
	ctx.closed.Store(true)
	if err == nil {
		err = ctx.err
	}
	if err == nil {
		err = df.checkOrder()
	}
	if err == nil && len(desc.Exports)+len(ctx.exports) > 0 {
		want := slices.Sorted(slices.Values(desc.Exports))
		got := slices.Sorted(slices.Values(ctx.exports))
		if !slices.Equal(want, got) {
			err = fmt.Errorf("dataflow %s: Desc.Exports %q, Build exported %q: %w", desc.ID, desc.Exports, ctx.exports, ErrExportsDiffer)
		}
	}
	for _, r := range ctx.temp {
		r.Release()
	}
	if err != nil {
		df.drop()
		env.Manager.DropOwned(df.id)
		return nil, err
	}
	df.closeUnreadImports()
	df.onDrop = append(df.onDrop, func() { env.Manager.DropOwned(df.id) })
	if env.LabelSteps {
		df.label(env.Labels)
	}
	return df, nil
}

// ErrBuildPanicked wraps the value a Build panicked with: the panic is the
// caller's mistake in that dataflow, reported as its create's error (and
// what the Build had made is dropped), not a crash of the worker that ran it.
var ErrBuildPanicked = errors.New("Build panicked")

// runBuild calls desc.Build, turning a panic into an error.
func runBuild(desc Desc, ctx *Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dataflow %s: %w: %v", desc.ID, ErrBuildPanicked, p)
		}
	}()
	return desc.Build(ctx)
}

// Start runs an assembled dataflow's first PassesAtBuild passes, which
// deliver each import's seed. Build calls it; after Assemble the caller
// does, once.
func (d *Dataflow) Start() { d.run(PassesAtBuild) }

// Drop drops the dataflow: every operator releases what it holds and the
// indexes it exported are dropped (D3).
func (d *Dataflow) Drop() { d.drop() }

// Step runs passes until nothing moves, at most PassesPerActivation, and
// reports whether the last pass still moved (the caller activates it again
// after its other work).
//
// A panic in an operator's Step is the dataflow's error
// (ErrOperatorPanicked, naming the operator), reported through Env.Fail,
// and the dataflow steps nothing more; without an Env.Fail it goes on.
func (d *Dataflow) Step() bool { return d.run(PassesPerActivation) }

// Hold keeps a reader of the arrangement half for the life of the dataflow
// and moves its logical and physical holds to the half's frontier as it
// advances: what a consumer that has read everything so far does (a join
// moves its holds likewise, §2.5). The trace then merges and compacts behind
// the frontier instead of being pinned at as_of. An Arranged whose Stream
// or Reader is nil (the zero Arranged) fails the create, naming Hold.
func (c *Context) Hold(a Arranged) {
	if c.late("Context.Hold") != nil {
		return
	}
	if a.Stream == nil {
		c.refuseNil("Context.Hold", "Arranged.Stream")
		return
	}
	if a.Reader == nil || isnil.Value(a.Reader) {
		c.refuseNilReader("Context.Hold", "Arranged.Reader")
		return
	}
	op := &holdOp{r: c.Keep(a.Reader)}
	c.df.addNode("hold", op, a.Stream.from)
}

type holdOp struct{ r trace.Reader }

func (o *holdOp) Step(in frontier.Frontier) frontier.Frontier {
	trace.SetCompaction(o.r, in) // a shared reader's two holds under one lock
	return frontier.Empty()
}

func (o *holdOp) Shutdown() {}
