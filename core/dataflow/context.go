package dataflow

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// ErrCompactedBeyondAsOf is wrapped by ImportIndex when an index has been
// allowed to compact beyond the dataflow's as_of (§3.5): a protocol error,
// never coalesced data.
var ErrCompactedBeyondAsOf = errors.New("index has been allowed to compact beyond the dataflow as_of")

// Desc describes a dataflow to create on every worker of a runtime.
type Desc struct {
	ID string
	// Maintained dataflows maintain indexes (the Maintenance runtime renders
	// them); the others are queries (the Interactive runtime renders them).
	// A Solo runtime renders both.
	Maintained bool
	// AsOf and Until bound the times the dataflow must be correct at: from
	// AsOf on, before Until ({} for no bound).
	AsOf, Until frontier.Frontier
	// Exports lists the index ids Build exports; a runtime that does not
	// render the dataflow records them as peers.
	Exports []string
	// Build adds the dataflow's operators. It runs once per worker.
	Build func(*Context) error
}

// Env is what a worker gives the dataflows it builds.
type Env struct {
	Worker, Peers int
	Manager       *TraceManager
	Inputs        *Inputs
	Hub           *Hub
	// Registry is where a publishing runtime publishes exported indexes;
	// nil for a runtime that publishes nothing (Solo).
	Registry *share.Registry
	// Activate marks a dataflow as having work; safe from any goroutine.
	Activate func(*Dataflow)
	// Wake signals the worker without naming a dataflow (publisher holds
	// moved); safe from any goroutine.
	Wake func()
	// Spine configures the spines of arrangements.
	Spine spine.Options
	// Fail records an operator's error (the worker reports it).
	Fail func(df string, err error)
}

// Context is what a dataflow's Build function adds operators through.
type Context struct {
	df        *Dataflow
	env       *Env
	temp      []trace.Reader // arrangement readers owned by the build
	exchanges int
	exports   []string // index ids exported so far, in call order
	err       error    // the first error of a call that returns none
}

// fail records err as the build's error unless one is recorded already.
func (c *Context) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// AsOf returns the dataflow's as_of.
func (c *Context) AsOf() frontier.Frontier { return c.df.asOf }

// Until returns the dataflow's until.
func (c *Context) Until() frontier.Frontier { return c.df.until }

// Worker returns this worker's index.
func (c *Context) Worker() int { return c.env.Worker }

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
func (c *Context) Input(name string, arity int) (Collection, error) {
	l, err := c.env.Inputs.log(name, arity)
	if err != nil {
		return Collection{}, err
	}
	op := &inputOp{df: c.df, log: l, pending: append([]*Chunk(nil), l.history...)}
	n := c.df.addNode("input "+name, op)
	op.oks = newStream[*Chunk](c.df, n)
	l.subs = append(l.subs, op)
	return Collection{Arity: arity, Oks: op.oks, Errs: newStream[*Chunk](c.df, n)}, nil
}

// Exchange routes every update of s to the worker that owns its key columns
// (HashCols % peers). With one worker it is the identity.
func (c *Context) Exchange(s *Stream[*Chunk], cols []int) *Stream[*Chunk] {
	if c.env.Peers == 1 {
		return s
	}
	key := exchangeKey{df: c.df.id, inc: c.df.inc, seq: c.exchanges}
	c.exchanges++
	df, env := c.df, c.env
	ch := c.env.Hub.join(key, c.env.Worker, func() { env.Activate(df) })
	send := &exchangeSend{hub: c.env.Hub, key: key, ch: ch, worker: c.env.Worker, cols: cols, in: s.subscribe(), parts: make([]*Chunk, c.env.Peers), last: frontier.Min()}
	c.df.addNode("exchange send", send, s.from)
	recv := &exchangeRecv{ch: ch, worker: c.env.Worker}
	n := c.df.addNode("exchange recv", recv)
	recv.out = newStream[*Chunk](c.df, n)
	return recv.out
}

// Arrange arranges coll by the key columns (oks; errs by error code),
// exchanging by key first when there are several workers. The result is a
// Local arrangement. Its traces are publishing spines, so the runtime can
// publish or locally import them with one mechanism.
func (c *Context) Arrange(coll Collection, key []int) (*Arrangement, error) {
	for _, k := range key {
		if k < 0 || k >= coll.Arity {
			return nil, fmt.Errorf("dataflow: arrange: key column %d of a %d-column collection", k, coll.Arity)
		}
	}
	var vals []int
	for i := range coll.Arity {
		if !containsInt(key, i) {
			vals = append(vals, i)
		}
	}
	oks := c.arrangeHalf("arrange oks", c.Exchange(coll.Oks, key), key, vals)
	errs := c.arrangeHalf("arrange errs", c.Exchange(coll.Errs, []int{0}), []int{0}, nil)
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

func (c *Context) arrangeHalf(name string, in *Stream[*Chunk], key, vals []int) Arranged {
	ar := batch.Arity{Key: len(key), Val: len(vals)}
	h, w, s := share.NewTrace(ar, c.env.Spine)
	// A new arrangement starts compacted at its dataflow's as_of: it is
	// correct from as_of on only, and says so to every importer (the MZ
	// #3005 row of docs/semantics.md §7.3).
	h.SetLogicalCompaction(c.df.asOf)
	if c.env.Wake != nil {
		s.SetNotify(c.env.Wake)
	}
	m := c.env.Manager
	m.track(s, "dataflow "+c.df.id+": "+name)
	c.df.onDrop = append(c.df.onDrop, func() { m.untrack(s) })
	df, env := c.df, c.env
	op := &arrangeOp{
		in: in.subscribe(), keyCols: key, valCols: vals, batcher: batch.NewBatcher(ar, 0), w: w, ar: ar,
		sealed: frontier.Min(), onErr: func(err error) { env.Fail(df.id, err) },
	}
	n := c.df.addNode(name, op, in.from)
	op.out = newStream[*batch.Batch](c.df, n)
	c.temp = append(c.temp, h)
	return Arranged{Stream: op.out, Trace: h, Pres: batch.Identity(), Arity: ar}
}

// ImportIndex imports index id from the worker's trace manager as a Trace
// arrangement, at the dataflow's as_of and bounded by its until (§4.4). It
// has one body for every runtime and both kinds of bundle: local traces are
// imported through their private point, peer bundles through the
// publication (never through the bundle's own logical-only hold).
func (c *Context) ImportIndex(id string) (*Arrangement, error) {
	b, ok := c.env.Manager.Get(id)
	if !ok {
		return nil, fmt.Errorf("dataflow %s: import of unknown index %q", c.df.id, id)
	}
	if since := b.CompactionFrontier(); !since.LessEqual(c.df.asOf) {
		return nil, fmt.Errorf("dataflow %s: index %q: since %v, as_of %v: %w", c.df.id, id, since, c.df.asOf, ErrCompactedBeyondAsOf)
	}
	oks, err := c.importHalf("import "+id+" oks", b.Oks)
	if err != nil {
		return nil, fmt.Errorf("dataflow %s: index %q oks: %w", c.df.id, id, err)
	}
	errs, err := c.importHalf("import "+id+" errs", b.Errs)
	if err != nil {
		return nil, fmt.Errorf("dataflow %s: index %q errs: %w", c.df.id, id, err)
	}
	return &Arrangement{Flavor: Trace, Index: id, Oks: oks, Errs: errs}, nil
}

func (c *Context) importHalf(name string, r trace.Reader) (Arranged, error) {
	asOf := c.df.asOf
	if p, ok := r.(*share.Padded); ok {
		// The padded range presents nothing: import from the inner since.
		r = p.Inner()
		asOf = asOf.Join(r.LogicalCompaction())
	}
	df, env := c.df, c.env
	wake := func() { env.Activate(df) }
	var im *share.Import
	var err error
	switch r := r.(type) {
	case *share.Reader:
		im, err = r.ImportWith(asOf, c.df.until, wake)
	case *trace.Handle:
		s, ok := r.Trace().Storage().(*share.Spine)
		if !ok {
			return Arranged{}, fmt.Errorf("local trace is not importable (storage %T)", r.Trace().Storage())
		}
		im, err = s.LocalPoint().ImportWith(asOf, c.df.until, wake)
	default:
		return Arranged{}, fmt.Errorf("cannot import a %T", r)
	}
	if err != nil {
		return Arranged{}, err
	}
	op := &importOp{im: im}
	n := c.df.addNode(name, op)
	op.out = newStream[*batch.Batch](c.df, n)
	c.temp = append(c.temp, im.Trace())
	var ar batch.Arity
	if chain := im.Trace().Point().Chain(); len(chain) > 0 {
		ar = chain[0].Arity()
	}
	return Arranged{Stream: op.out, Trace: im.Trace(), Pres: im.Presentation(), Arity: ar}, nil
}

// Keep clones r for an operator that reads the trace after construction; the
// clone is released when the dataflow is dropped.
func (c *Context) Keep(r trace.Reader) trace.Reader {
	k := r.CloneReader()
	c.df.onDrop = append(c.df.onDrop, k.Release)
	return k
}

// Export makes a an index id of this worker's trace manager (§4.2). A Local
// arrangement's traces are cloned into a bundle; a Trace arrangement
// re-exports the bundle it was imported from. In a publishing runtime the
// traces are published under the incarnation (id, as_of, the create's
// sequence number), a re-export included. Dropping the dataflow drops the
// index. Build checks the ids exported against Desc.Exports.
func (c *Context) Export(id string, a *Arrangement) error {
	m := c.env.Manager
	var e *entry
	if a.Flavor == Trace {
		src, ok := m.Get(a.Index)
		if !ok {
			return fmt.Errorf("dataflow %s: re-export of unknown index %q", c.df.id, a.Index)
		}
		e = &entry{bundle: src.Clone(), owner: c.df.id}
	} else {
		e = &entry{bundle: share.NewBundle(a.Oks.Trace.CloneReader(), a.Errs.Trace.CloneReader(), nil), owner: c.df.id}
	}
	if c.env.Registry != nil {
		oksS, okO := publishable(e.bundle.Oks)
		errsS, okE := publishable(e.bundle.Errs)
		if !okO || !okE {
			e.bundle.Release()
			return fmt.Errorf("dataflow %s: export %q: the index is not maintained by this runtime", c.df.id, id)
		}
		tok, err := c.env.Registry.PublishIncarnation(share.Incarnation{ID: id, AsOf: c.df.asOf, Seq: c.df.inc}, oksS, errsS)
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

// publishable returns the publishing spine under a local handle.
func publishable(r trace.Reader) (*share.Spine, bool) {
	h, ok := r.(*trace.Handle)
	if !ok {
		return nil, false
	}
	s, ok := h.Trace().Storage().(*share.Spine)
	return s, ok
}

// checkProbe reports a probe sized for another number of workers: it fails
// the build (an error naming the dataflow and both counts), never a worker.
func (c *Context) checkProbe(what string, p *Probe) bool {
	if n := len(p.fronts); n != c.env.Peers {
		c.fail(fmt.Errorf("dataflow %s: %s made for %d workers in a runtime of %d", c.df.id, what, n, c.env.Peers))
		return false
	}
	return true
}

// Probe attaches p to the arrangement's oks stream. A probe made for
// another number of workers than the runtime's fails the build.
func (c *Context) Probe(p *Probe, s *Stream[*batch.Batch]) {
	if c.checkProbe("probe", p) {
		c.df.addNode("probe", &probeOp{p: p, worker: c.env.Worker}, s.from)
	}
}

// ProbeChunks attaches p to a collection stream (as Probe).
func (c *Context) ProbeChunks(p *Probe, s *Stream[*Chunk]) {
	if c.checkProbe("probe", p) {
		c.df.addNode("probe", &probeOp{p: p, worker: c.env.Worker}, s.from)
	}
}

// Capture records an arrangement half as presented. A capture made for
// another number of workers than the runtime's fails the build.
func (c *Context) Capture(cp *Capture, a Arranged) {
	if c.checkProbe("capture", &cp.Probe) {
		op := &captureOp{c: cp, worker: c.env.Worker, in: a.Stream.subscribe(), pres: a.Pres}
		c.df.addNode("capture", op, a.Stream.from)
	}
}

// ErrExportsDiffer is wrapped by Build when the indexes a dataflow's Build
// exported are not exactly its Desc.Exports.
var ErrExportsDiffer = errors.New("dataflow: exports differ from Desc.Exports")

// Build builds desc on one worker as incarnation inc (the sequence number
// of its create: exchanges and publications of two incarnations of one id
// never meet). It runs desc.Build, checks the ids it exported against
// desc.Exports, then releases the readers the build context owned (an
// operator keeps what it needs with Keep; §4.9) and steps the dataflow
// once. On error everything created is dropped.
func Build(env *Env, desc Desc, inc uint64) (*Dataflow, error) {
	asOf, until := desc.AsOf, desc.Until
	if !asOf.Less(until) {
		return nil, fmt.Errorf("dataflow %s: as_of %v is not before until %v", desc.ID, asOf, until)
	}
	if desc.Build == nil {
		return nil, fmt.Errorf("dataflow %s: Desc.Build is nil", desc.ID)
	}
	df := &Dataflow{id: desc.ID, inc: inc, asOf: asOf, until: until}
	ctx := &Context{df: df, env: env}
	err := desc.Build(ctx)
	if err == nil {
		err = ctx.err
	}
	if err == nil {
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
	df.onDrop = append(df.onDrop, func() { env.Manager.DropOwned(df.id) })
	df.Run(PassesAtBuild)
	return df, nil
}

// Drop drops the dataflow: every operator releases what it holds and the
// indexes it exported are dropped (D3).
func (d *Dataflow) Drop() { d.drop() }

// Step runs passes until nothing moves, at most PassesPerActivation, and
// reports whether the last pass still moved (the caller activates it again
// after its other work).
func (d *Dataflow) Step() bool {
	for range PassesPerActivation {
		if !d.step() {
			return false
		}
	}
	return true
}

// Hold keeps a reader of the arrangement half for the life of the dataflow
// and moves its logical and physical holds to the half's frontier as it
// advances: what a consumer that has read everything so far does (a join
// moves its holds likewise, §2.5). The trace then merges and compacts behind
// the frontier instead of being pinned at as_of.
func (c *Context) Hold(a Arranged) {
	op := &holdOp{r: c.Keep(a.Trace)}
	c.df.addNode("hold", op, a.Stream.from)
}

type holdOp struct{ r trace.Reader }

func (o *holdOp) Step(in frontier.Frontier) frontier.Frontier {
	o.r.SetLogicalCompaction(in)
	o.r.SetPhysicalCompaction(in)
	return frontier.Empty()
}

func (o *holdOp) Shutdown() {}
