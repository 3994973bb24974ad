package render

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/spine"
)

// Mode says where the query's arrangements come from (docs/spec.md "Indexes
// and arrangements").
type Mode uint8

const (
	// Imported: the query reads only indexes another runtime publishes.
	Imported Mode = iota
	// Direct: the query builds every view and arrangement from raw inputs.
	Direct
)

func (m Mode) String() string {
	switch m {
	case Imported:
		return "imported"
	case Direct:
		return "direct"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ErrUsage is wrapped by QueryDesc's errors for arguments no plan or
// option makes: a plan not made by plan.Resolve, no Output, a Mode or a
// Join of no such value (which were read as Imported and as Delta); and
// by the error of IndexDesc's Build for a plan not made by plan.Resolve,
// a nil index or another plan's.
var ErrUsage = errors.New("render: bad arguments")

// ErrMissingIndex: an imported query reads an arrangement no index serves.
var ErrMissingIndex = errors.New("render: no index serves an arrangement the query reads")

// Options configure the query dataflow.
type Options struct {
	Mode Mode
	// Join is the top-level query's strategy (views keep their own).
	Join plan.JoinKind
	// Runtime is the role name of the runtime that renders the dataflow,
	// for the pprof label runtime= of the operators' CPU samples.
	Runtime string
	// Spine configures the spines of arrangements built inside operators.
	Spine spine.Options
	// Metrics, if not nil, receives every operator's error counter.
	Metrics *Metrics
	// Probe, if not nil, is attached to an index dataflow's exported oks
	// (IndexDesc): it passes a time once the index is complete at it.
	Probe *dataflow.Probe
	// ID names the query dataflow; "" is QueryID.
	ID string
	// Window, when set, replaces the plan's as_of and until (AsOf, and
	// Until when HasUntil) for the query dataflow: a one-shot read at a
	// later time, for instance.
	Window   bool
	AsOf     uint64
	Until    uint64
	HasUntil bool
}

// IndexID is the trace manager id of a declared index.
func IndexID(ix *plan.ResolvedIndex) string { return "index " + ix.Name }

// QueryID is the id of the query dataflow.
const QueryID = "query"

// MaintainID returns the id of the dataflow that maintains the index
// named index (IndexDesc).
func MaintainID(index string) string { return "maintain " + index }

// Output is where the query's output goes: its oks and errs, as the
// operators emit them (unconsolidated, never arranged), probed, counted,
// and captured when capturing. Make one with NewOutput: the zero Output
// has no probes, so QueryDesc refuses it as it does no Output, it never
// passes a time, and a wait on it is an error wrapping ErrUsage.
type Output struct {
	// oks and errs pass a time once the output's oks and errs are complete
	// at it.
	okProbe, errProbe *dataflow.Probe
	// Oks and Errs capture the output rows and the error codes (one-column
	// rows) per worker; nil when the output is only counted. Their At
	// consolidates across workers.
	Oks, Errs *dataflow.Capture
	rows      atomic.Int64
	errs      atomic.Int64
}

// NewOutput returns an output for a dataflow on workers workers; capture
// keeps every row (for eval and check), otherwise rows are only counted.
func NewOutput(workers int, capture bool) *Output {
	o := &Output{okProbe: dataflow.NewProbe(workers), errProbe: dataflow.NewProbe(workers)}
	if capture {
		o.Oks, o.Errs = dataflow.NewCapture(workers), dataflow.NewCapture(workers)
	}
	return o
}

// WaitPassed waits until the output is complete at t (both its oks and
// its errs), or ctx ends. On the zero Output, which no dataflow writes,
// it is an error wrapping ErrUsage at once.
func (o *Output) WaitPassed(ctx context.Context, t frontier.Time) error {
	if o.okProbe == nil {
		return fmt.Errorf("%w: WaitPassed(%d) of the zero Output, which no dataflow writes (NewOutput makes one)", ErrUsage, t)
	}
	if err := o.okProbe.WaitPassed(ctx, t); err != nil {
		return err
	}
	return o.errProbe.WaitPassed(ctx, t)
}

// Passed reports whether the output is complete at t (both its oks and
// its errs), without waiting: never on the zero Output.
func (o *Output) Passed(t frontier.Time) bool {
	if o.okProbe == nil {
		return false
	}
	return o.okProbe.Passed(t) && o.errProbe.Passed(t)
}

// Rows returns the multiplicity of the output's oks accumulated so far
// (every update before until emitted so far: the output's size at the last
// time once the output is complete).
func (o *Output) Rows() int64 { return o.rows.Load() }

// Errors returns the multiplicity of the output's errors accumulated so far.
func (o *Output) Errors() int64 { return o.errs.Load() }

// Metrics collects the error counters of every operator a render adds:
// per dataflow and operator (and path of a delta join), the multiplicity
// of the errors the operator produced itself (K4 of core/join). Safe for
// concurrent use.
//
// An operator's counter is read live while its dataflow lives; when the
// dataflow is dropped on a worker (dataflow.Context.OnDrop) its final
// count, if not 0, is added to the retired total of its dataflow,
// operator and path, and the counter is let go. So one Metrics may serve
// every dataflow a long-lived caller renders (a Session's one-shot reads,
// created and dropped by the thousand): it keeps the live dataflows'
// counters and one total per dataflow id, operator and path that counted
// errors, not a counter per create, and Errors sums the dropped creates'
// counts with the live ones'. An operator of a dropped dataflow that
// counted none has no entry of its own any more.
type Metrics struct {
	mu     sync.Mutex
	stages []*stage // the live dataflows' counters, each at its at
	// retired has the summed final counts of the counters of dropped
	// dataflows, one per dataflow, operator and path, found by
	// retiredAt.
	retired   []StageErrors
	retiredAt map[stageKey]int
}

type stage struct {
	dataflow, operator, path, coll string
	count                          func() int64
	at                             int // its place in Metrics.stages; -1 once retired
}

type stageKey struct{ dataflow, operator, path string }

// StageErrors is one operator's error count, summed over workers.
// Collection is the view the operator computes ("" for the top-level
// query).
type StageErrors struct {
	Dataflow, Operator, Path, Collection string
	Errors                               int64
}

// add registers a live counter and returns it, nil on a nil Metrics.
func (m *Metrics) add(df, op, path, coll string, count func() int64) *stage {
	if m == nil {
		return nil
	}
	st := &stage{dataflow: df, operator: op, path: path, coll: coll, count: count}
	m.mu.Lock()
	st.at = len(m.stages)
	m.stages = append(m.stages, st)
	m.mu.Unlock()
	return st
}

// retire adds the final counts of stages, whose dataflow is dropped, to
// the retired totals and forgets the counters.
func (m *Metrics) retire(stages []*stage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range stages {
		if st.at < 0 {
			continue
		}
		last := len(m.stages) - 1
		m.stages[st.at] = m.stages[last]
		m.stages[st.at].at = st.at
		m.stages[last] = nil
		m.stages = m.stages[:last]
		st.at = -1
		n := st.count()
		st.count = nil
		if n == 0 {
			continue // nothing to add: a dropped operator that counted none leaves no entry
		}
		k := stageKey{st.dataflow, st.operator, st.path}
		i, ok := m.retiredAt[k]
		if !ok {
			if m.retiredAt == nil {
				m.retiredAt = map[stageKey]int{}
			}
			i = len(m.retired)
			m.retiredAt[k] = i
			m.retired = append(m.retired, StageErrors{Dataflow: st.dataflow, Operator: st.operator, Path: st.path, Collection: st.coll})
		}
		m.retired[i].Errors += n
	}
}

// metric registers an operator's error counter with the render's Metrics
// (if any) for as long as this worker's dataflow lives: the first one
// registers the dataflow's drop, which retires them all (Metrics.retire).
func (b *builder) metric(df, op, path, coll string, count func() int64) {
	m := b.opts.Metrics
	if m == nil {
		return
	}
	st := m.add(df, op, path, coll, count)
	if b.metrics == nil {
		g := &metricGroup{}
		if err := b.c.OnDrop(func() { m.retire(g.stages) }); err != nil {
			// Past the Build (no operator is added then either):
			// nothing would retire it.
			m.retire([]*stage{st})
			return
		}
		b.metrics = g
	}
	b.metrics.stages = append(b.metrics.stages, st)
}

// metricGroup is the counters one worker's build of a dataflow registered.
type metricGroup struct{ stages []*stage }

// arrangedAs names an arrangement of collection coll, whose columns are
// named cols, by the key columns key, as explain writes one:
// "edges(src, dst)". Context.ArrangeNamed puts it after "arrange oks" and
// "arrange errs" in its operators' names.
func arrangedAs(coll string, cols []string, key []int) string {
	names := make([]string, len(key))
	for i, k := range key {
		names[i] = cols[k]
	}
	return coll + "(" + strings.Join(names, ", ") + ")"
}

// refNames returns the refs as written ("a.src").
func refNames(refs []expr.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}

// collOf returns the collection a query's field names: "" for "query",
// N for "views.N.query".
func collOf(field string) string {
	if field == "query" {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(field, "views."), ".query")
}

// Errors returns the error count of every operator of a live dataflow,
// and of every one of a dropped dataflow that counted errors, summed over
// workers and creates of its dataflow id, sorted by dataflow, operator and
// path.
func (m *Metrics) Errors() []StageErrors {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.retired)
	at := maps.Clone(m.retiredAt)
	if at == nil {
		at = map[stageKey]int{}
	}
	for _, s := range m.stages {
		k := stageKey{s.dataflow, s.operator, s.path}
		i, ok := at[k]
		if !ok {
			out = append(out, StageErrors{Dataflow: s.dataflow, Operator: s.operator, Path: s.path, Collection: s.coll})
			i = len(out) - 1
			at[k] = i
		}
		out[i].Errors += s.count()
	}
	slices.SortFunc(out, func(a, b StageErrors) int {
		if c := compare(a.Dataflow, b.Dataflow); c != 0 {
			return c
		}
		if c := compare(a.Operator, b.Operator); c != 0 {
			return c
		}
		return compare(a.Path, b.Path)
	})
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// IndexOrder returns the declared indexes in the order their maintaining
// dataflows must be created: an index after every index its dataflow
// imports (indexes on inputs first, then by the views' topological order,
// ties in plan order).
func IndexOrder(r *plan.Resolved) []*plan.ResolvedIndex {
	rank := map[*plan.Collection]int{}
	for _, c := range r.Inputs {
		rank[c] = 0
	}
	for i, c := range r.Views {
		rank[c] = i + 1
	}
	out := slices.Clone(r.Indexes)
	slices.SortStableFunc(out, func(a, b *plan.ResolvedIndex) int { return rank[a.Collection] - rank[b.Collection] })
	return out
}

// IndexDesc returns the Maintained dataflow that maintains ix from time 0
// (docs/spec.md "Indexes and arrangements", `--index imported`): it builds
// the index's collection from raw inputs and the indexes it imports
// (plan.Maintain), arranges it by the index key, and exports it. The views it
// builds keep their own join strategies. A plan plan.Resolve did not make (as
// QueryDesc refuses), a nil ix or an index that is not one of r.Indexes gives
// a Desc that builds nothing: its Build returns an error wrapping ErrUsage
// naming what is wrong, which the runtime reports for the create.
func IndexDesc(r *plan.Resolved, ix *plan.ResolvedIndex, opts Options) dataflow.Desc {
	if err := checkIndex(r, ix); err != nil {
		name := "(no index)"
		if ix != nil {
			name = ix.Name
		}
		return dataflow.Desc{
			ID: MaintainID(name), Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(*dataflow.Context) error { return err },
		}
	}
	id := IndexID(ix)
	dfID := MaintainID(ix.Name)
	m := r.Maintain(ix)
	return dataflow.Desc{
		ID: dfID, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Exports: []string{id},
		Build: func(c *dataflow.Context) error {
			b := newBuilder(c, r, dfID, opts)
			b.importable = map[*plan.ResolvedIndex]bool{}
			for _, im := range m.Imports {
				b.importable[im] = true
			}
			b.raw = true
			coll, err := b.collection(ix.Collection)
			if err != nil {
				return err
			}
			a, err := c.ArrangeNamed(coll, ix.KeyColumns, arrangedAs(ix.Collection.Name, ix.Collection.Columns, ix.KeyColumns))
			if err != nil {
				return err
			}
			if opts.Probe != nil {
				c.Probe(opts.Probe, a.Oks.Stream)
			}
			return c.Export(id, a)
		},
	}
}

// checkIndex returns an error wrapping ErrUsage unless r was made by
// plan.Resolve and ix is one of its indexes.
func checkIndex(r *plan.Resolved, ix *plan.ResolvedIndex) error {
	switch {
	case r.Check() != nil:
		return fmt.Errorf("%w: IndexDesc: no resolved plan (nil, or not made by plan.Resolve)", ErrUsage)
	case ix == nil:
		return fmt.Errorf("%w: IndexDesc: no index (nil)", ErrUsage)
	case !slices.Contains(r.Indexes, ix):
		return fmt.Errorf("%w: IndexDesc: index %q is not one of the plan's indexes (another plan's?)", ErrUsage, ix.Name)
	}
	return nil
}

// QueryDesc returns the query dataflow at r's as_of and until. Imported,
// it reads only declared indexes (every arrangement the strategy reads
// must be served: ErrMissingIndex otherwise); Direct, it builds every view
// and arrangement from the raw inputs. Its output goes to out. A plan
// plan.Resolve did not make, no out (nil or the zero Output), or a Mode
// or Join of no such value is an error wrapping ErrUsage.
func QueryDesc(r *plan.Resolved, opts Options, out *Output) (dataflow.Desc, error) {
	switch {
	case r == nil || r.Query == nil:
		return dataflow.Desc{}, fmt.Errorf("%w: QueryDesc: no resolved plan (nil, or not made by plan.Resolve)", ErrUsage)
	case out == nil || out.okProbe == nil:
		return dataflow.Desc{}, fmt.Errorf("%w: QueryDesc: no Output (NewOutput makes one; the zero Output has no probes)", ErrUsage)
	case opts.Mode != Imported && opts.Mode != Direct:
		return dataflow.Desc{}, fmt.Errorf("%w: QueryDesc: Options.Mode %d is neither Imported nor Direct", ErrUsage, opts.Mode)
	case opts.Join != plan.Linear && opts.Join != plan.Delta:
		return dataflow.Desc{}, fmt.Errorf("%w: QueryDesc: Options.Join is %v, neither linear nor delta", ErrUsage, opts.Join)
	}
	if opts.Mode == Imported {
		m, err := r.Missing(opts.Join)
		if err != nil {
			return dataflow.Desc{}, fmt.Errorf("%w: QueryDesc: %v", ErrUsage, err)
		}
		if len(m) > 0 {
			names := make([]string, len(m))
			for i, a := range m {
				names[i] = a.String()
			}
			return dataflow.Desc{}, fmt.Errorf("%w: %v", ErrMissingIndex, names)
		}
	}
	asOf, until := frontier.At(r.Plan.AsOf), frontier.Empty()
	if r.Plan.HasUntil {
		until = frontier.At(r.Plan.Until)
	}
	if opts.Window {
		asOf, until = frontier.At(opts.AsOf), frontier.Empty()
		if opts.HasUntil {
			until = frontier.At(opts.Until)
		}
	}
	id := opts.ID
	if id == "" {
		id = QueryID
	}
	return dataflow.Desc{
		// A direct query reads the raw inputs, which only a Maintained
		// dataflow may do (core/dataflow D6); it exports nothing.
		ID: id, AsOf: asOf, Until: until, Maintained: opts.Mode == Direct,
		Build: func(c *dataflow.Context) error {
			b := newBuilder(c, r, id, opts)
			b.raw = opts.Mode == Direct
			if opts.Mode == Imported {
				b.importable = map[*plan.ResolvedIndex]bool{}
				for _, ix := range r.Indexes {
					b.importable[ix] = true
				}
			}
			coll, err := b.query(r.Query, opts.Join)
			if err != nil {
				return err
			}
			// The output is not arranged: its chunks go to the captures,
			// the counters and the probes as the operators emit them (N6).
			if out.Oks != nil {
				c.CaptureChunks(out.Oks, coll.Oks, coll.Arity)
				c.CaptureChunks(out.Errs, coll.Errs, 1)
			}
			for _, h := range []struct {
				s   *dataflow.Stream[*dataflow.Chunk]
				sum *atomic.Int64
			}{{coll.Oks, &out.rows}, {coll.Errs, &out.errs}} {
				ob := c.NewOperator("count")
				op := &countOp{in: dataflow.AddInput(ob, "in", h.s), sum: h.sum, until: c.Until()}
				if err := ob.Build(op); err != nil {
					return err
				}
			}
			// The probes come last: once a worker's probe passes a time,
			// its captures and counts have seen everything before it.
			c.Probe(out.okProbe, coll.Oks)
			c.Probe(out.errProbe, coll.Errs)
			return nil
		},
	}, nil
}

// builder renders collections into one dataflow on one worker.
type builder struct {
	c    *dataflow.Context
	r    *plan.Resolved
	df   string
	opts Options
	ctx  context.Context
	// raw: inputs are read from the runtime's inputs (not in an
	// Interactive query).
	raw bool
	// importable are the indexes this dataflow may import.
	importable map[*plan.ResolvedIndex]bool
	colls      map[*plan.Collection]dataflow.Collection
	arrs       map[string]*dataflow.Arrangement // by collection and key columns
	imports    map[*plan.ResolvedIndex]*dataflow.Arrangement
	ops        int
	// metrics are the error counters this build registered (metric).
	metrics *metricGroup
}

func newBuilder(c *dataflow.Context, r *plan.Resolved, df string, opts Options) *builder {
	// The worker's labels (its runtime's, with the caller's), or, built
	// outside a runtime, runtime= and worker= of their own.
	ctx := c.Labels()
	if ctx == nil {
		rt := opts.Runtime
		if rt == "" {
			rt = "unknown"
		}
		ctx = pprof.WithLabels(context.Background(), pprof.Labels("runtime", rt, "worker", strconv.Itoa(c.Worker())))
	}
	return &builder{
		c: c, r: r, df: df, opts: opts,
		ctx:     ctx,
		colls:   map[*plan.Collection]dataflow.Collection{},
		arrs:    map[string]*dataflow.Arrangement{},
		imports: map[*plan.ResolvedIndex]*dataflow.Arrangement{},
	}
}

// name returns a unique operator name within the dataflow.
func (b *builder) name(what string) string {
	b.ops++
	return what + " " + strconv.Itoa(b.ops)
}

// failer returns how an operator reports an error it meets while stepping:
// through the runtime, which reports it as the dataflow's error.
func (b *builder) failer() func(error) { return b.c.Failer() }

// servedBy returns an importable index on c with exactly the key columns
// cols as a set, or for cols == nil any importable index on c.
func (b *builder) servedBy(c *plan.Collection, cols []int, anyKey bool) *plan.ResolvedIndex {
	for _, ix := range c.Indexes {
		if !b.importable[ix] {
			continue
		}
		if anyKey || sameSet(ix.KeyColumns, cols) {
			return ix
		}
	}
	return nil
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// importIndex imports ix once per dataflow.
func (b *builder) importIndex(ix *plan.ResolvedIndex) (*dataflow.Arrangement, error) {
	if a, ok := b.imports[ix]; ok {
		return a, nil
	}
	a, err := b.c.ImportIndex(IndexID(ix))
	if err != nil {
		return nil, err
	}
	// An import knows its traces, not the collection's layout (an empty
	// trace has no batch to read an arity from): the plan does.
	n := len(ix.Collection.Columns)
	a.Key, a.Arity = ix.KeyColumns, n
	a.Oks.Arity = batch.Arity{Key: len(ix.KeyColumns), Val: n - len(ix.KeyColumns)}
	a.Errs.Arity = batch.Arity{Key: 1}
	b.imports[ix] = a
	return a, nil
}

// collection renders c as oks and errs streams: from an importable index
// on it, from the raw input, or by building the view.
func (b *builder) collection(c *plan.Collection) (dataflow.Collection, error) {
	if coll, ok := b.colls[c]; ok {
		return coll, nil
	}
	var coll dataflow.Collection
	var err error
	switch ix := b.servedBy(c, nil, true); {
	case ix != nil:
		var a *dataflow.Arrangement
		if a, err = b.importIndex(ix); err != nil {
			return coll, err
		}
		coll, err = b.flatten(a, len(c.Columns), c.Name)
	case c.Input != nil:
		if !b.raw {
			return coll, fmt.Errorf("%w: input %s", ErrMissingIndex, c.Name)
		}
		coll, err = b.c.Input(c.Name, len(c.Columns))
	case c.Simple != nil:
		var in dataflow.Collection
		if in, err = b.collection(c.Reads[0]); err != nil {
			return coll, err
		}
		coll, err = b.mfp(in, *c.Simple, "view "+c.Name, c.Name)
	default:
		coll, err = b.query(c.Query, c.Query.Query.Join)
	}
	if err != nil {
		return coll, fmt.Errorf("view %s: %w", c.Name, err)
	}
	b.colls[c] = coll
	return coll, nil
}

// flatten turns an arrangement back into its collection's streams, for
// the operators of collection coll (as Metrics names it).
//
// A flatten of an imported index adds one `numeric overflow` for each
// half the first time it reads a batch of it a merge saturated
// (flattenOp): errors it produced itself, counted in the Metrics as
// operator "flatten " + the index's id ("flatten index NAME"), whatever
// the flattens' own names (their place among the dataflow's operators,
// which a plan does not tell). A local arrangement's stream carries the
// batches it builds, which no merge made: its flattens add none, and
// have no count.
func (b *builder) flatten(a *dataflow.Arrangement, arity int, coll string) (dataflow.Collection, error) {
	var vals []int
	for i := range arity {
		if !slices.Contains(a.Key, i) {
			vals = append(vals, i)
		}
	}
	oks, over, okOp, err := b.flattenHalf(a.Oks, a.Key, vals, arity, false)
	if err != nil {
		return dataflow.Collection{}, err
	}
	errs, _, errOp, err := b.flattenHalf(a.Errs, []int{0}, nil, 1, true)
	if err != nil {
		return dataflow.Collection{}, err
	}
	if a.Flavor == dataflow.Imported {
		b.metric(b.df, "flatten "+a.Index, "", coll, func() int64 { return okOp.marks.Load() + errOp.marks.Load() })
	}
	// The numeric overflow of a saturated batch of the rows goes with
	// the errors.
	if errs, err = b.concat(errs, over); err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: arity, Oks: oks, Errs: errs}, nil
}

// flattenHalf flattens half h. The numeric overflow it adds where it
// reads a Saturated batch (flattenOp.Step) goes out on over: a stream of
// error codes of its own for an oks half, out itself for an errs half.
func (b *builder) flattenHalf(h dataflow.Arranged, key, vals []int, arity int, errsHalf bool) (out, over *dataflow.Stream[*dataflow.Chunk], op *flattenOp, err error) {
	ob := b.c.NewOperator(b.name("flatten"))
	op = &flattenOp{in: dataflow.AddInput(ob, "in", h.Stream), pres: h.Pres, keyCols: key, valCols: vals, arity: arity, row: make([]int64, arity)}
	op.out = dataflow.AddOutput[*dataflow.Chunk](ob)
	op.over = op.out
	if !errsHalf {
		op.over = dataflow.AddOutput[*dataflow.Chunk](ob)
	}
	return op.out, op.over, op, ob.Build(op)
}

// flattenErrs flattens errs half h of an arrangement the dataflow makes,
// whose flatten adds no error of its own and has no count (flatten).
func (b *builder) flattenErrs(h dataflow.Arranged) (*dataflow.Stream[*dataflow.Chunk], error) {
	out, _, _, err := b.flattenHalf(h, []int{0}, nil, 1, true)
	return out, err
}

// arrangement returns c arranged by cols (in that order): an importable
// index with that key set when cols is its key order or any is set, else
// c's collection arranged here.
func (b *builder) arrangement(c *plan.Collection, cols []int, anyKey bool) (*dataflow.Arrangement, error) {
	if ix := b.servedBy(c, cols, anyKey); ix != nil && (anyKey || slices.Equal(ix.KeyColumns, cols)) {
		return b.importIndex(ix)
	}
	k := c.Name + fmt.Sprint(cols)
	if a, ok := b.arrs[k]; ok {
		return a, nil
	}
	coll, err := b.collection(c)
	if err != nil {
		return nil, err
	}
	a, err := b.c.ArrangeNamed(coll, cols, arrangedAs(c.Name, c.Columns, cols))
	if err != nil {
		return nil, err
	}
	b.arrs[k] = a
	return a, nil
}

// mfp applies a map–filter–project to a collection; the result's errors
// are the input's and the expressions'.
func (b *builder) mfp(in dataflow.Collection, spec expr.MFPSpec, what, coll string) (dataflow.Collection, error) {
	m, err := expr.NewMFP(spec)
	if err != nil {
		return dataflow.Collection{}, err
	}
	if m.IsIdentity() {
		return in, nil
	}
	name := what
	ob := b.c.NewOperator(name)
	cnt := &atomic.Int64{}
	op := &mfpOp{in: dataflow.AddInput(ob, "in", in.Oks), clo: join.NewMFP(m), sink: join.NewSink(m.OutputArity()), errCount: cnt}
	op.oks = dataflow.AddOutput[*dataflow.Chunk](ob)
	op.errs = dataflow.AddOutput[*dataflow.Chunk](ob)
	if err := ob.Build(op); err != nil {
		return dataflow.Collection{}, err
	}
	b.metric(b.df, name, "", coll, cnt.Load)
	errs, err := b.concat(in.Errs, op.errs)
	if err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: m.OutputArity(), Oks: op.oks, Errs: errs}, nil
}

// concat merges chunk streams into one.
func (b *builder) concat(ss ...*dataflow.Stream[*dataflow.Chunk]) (*dataflow.Stream[*dataflow.Chunk], error) {
	if len(ss) == 1 {
		return ss[0], nil
	}
	ob := b.c.NewOperator(b.name("concat"))
	op := &concatOp{}
	for i, s := range ss {
		op.ins = append(op.ins, dataflow.AddInput(ob, strconv.Itoa(i), s))
	}
	op.out = dataflow.AddOutput[*dataflow.Chunk](ob)
	return op.out, ob.Build(op)
}

// query renders a query (the top-level one or a view's) with join
// strategy k: the join (or the single entry) with the query's closure,
// then reduce, distinct or threshold.
func (b *builder) query(q *plan.ResolvedQuery, k plan.JoinKind) (dataflow.Collection, error) {
	var recs dataflow.Collection
	// src is the arrangement recs flattens unchanged, when it does: a
	// reduce by its key reads it instead of arranging recs again.
	var src *dataflow.Arrangement
	var err error
	switch {
	case len(q.Entries) == 1:
		// A query with one entry reads any arrangement of it: imported,
		// an index on it; direct, the query arranges it itself (by the
		// first index's key when one is declared, else by every column)
		// and holds the arrangement as a caught-up reader does.
		var in dataflow.Collection
		c := q.Entries[0].Collection
		var a *dataflow.Arrangement
		if ix := b.servedBy(c, nil, true); ix != nil {
			a, err = b.importIndex(ix)
		} else {
			key := make([]int, len(c.Columns))
			for i := range key {
				key[i] = i
			}
			if len(c.Indexes) > 0 {
				key = c.Indexes[0].KeyColumns
			}
			if a, err = b.arrangement(c, key, false); err == nil && a.Flavor == dataflow.Local {
				b.c.Hold(a.Oks)
				b.c.Hold(a.Errs)
			}
		}
		if err == nil {
			in, err = b.flatten(a, len(c.Columns), collOf(q.Field))
		}
		if err == nil {
			recs, err = b.mfp(in, q.MFP, "map "+q.Field, collOf(q.Field))
		}
		if err == nil && recs.Oks == in.Oks {
			src = a
		}
	case k == plan.Linear:
		recs, err = b.linear(q)
	default:
		recs, err = b.delta(q)
	}
	if err != nil {
		return recs, err
	}
	switch {
	case q.Reduce != nil:
		return b.reduce(q, recs, src)
	case q.Distinct || q.Threshold:
		return b.record(q, recs)
	}
	return recs, nil
}

// closure compiles the query's per-row closure.
func closure(q *plan.ResolvedQuery) (join.Closure, error) {
	m, err := expr.NewMFP(q.MFP)
	if err != nil {
		return nil, err
	}
	return join.NewMFP(m), nil
}

// linear renders a linear join: stage k joins the running result of
// from[0..k-1], arranged by the stage's stream key, with from[k]'s lookup
// arrangement. Every stage lays its output out as the joined row of the
// entries bound so far; the last applies the query's closure. Running
// results are arranged with Context.Arrange, so with several workers they
// are exchanged by their stream key like any arrangement.
func (b *builder) linear(q *plan.ResolvedQuery) (dataflow.Collection, error) {
	lp := q.Linear
	var errStreams []*dataflow.Stream[*dataflow.Chunk]
	// Stage 1's left side: from[0] arranged by the stream key.
	e0 := q.Entries[0]
	sk0 := lp.Stages[0].StreamKey
	left, err := b.arrangement(e0.Collection, sk0, false)
	if err != nil {
		return dataflow.Collection{}, err
	}
	// Each entry's errors travel once (K4 of core/join): from[0]'s with
	// stage 1, from[k]'s with stage k.
	entryErrs := []dataflow.Arranged{left.Errs}
	leftKey := sk0 // joined-row positions of the left arrangement's key
	var running dataflow.Collection
	for si, st := range lp.Stages {
		e := q.Entries[st.Entry]
		if si > 0 {
			leftKey = st.StreamKey
			what := arrangedAs("linear "+q.Field+" stage "+strconv.Itoa(si), refNames(q.Joined), leftKey)
			if left, err = b.c.ArrangeNamed(running, leftKey, what); err != nil {
				return dataflow.Collection{}, err
			}
			// The running result's errors as arranged, in place of the
			// previous stage's: the same errors, with the numeric
			// overflow the arrangement adds where the running count of
			// a joined row leaves int64 (products that each fit, summed
			// at one time), which reaches no later stage otherwise.
			if errStreams[len(errStreams)-1], err = b.flattenErrs(left.Errs); err != nil {
				return dataflow.Collection{}, err
			}
		}
		right, err := b.arrangement(e.Collection, st.KeyColumns, false)
		if err != nil {
			return dataflow.Collection{}, err
		}
		entryErrs = append(entryErrs, right.Errs)
		// Layout: kernel row = key ++ left val ++ right val.
		bound := e.Offset // joined columns of the left side: [0, bound)
		K := len(leftKey)
		var leftVals []int
		for p := range bound {
			if !slices.Contains(leftKey, p) {
				leftVals = append(leftVals, p)
			}
		}
		var rightVals []int
		for c := range len(e.Collection.Columns) {
			if !slices.Contains(st.KeyColumns, c) {
				rightVals = append(rightVals, c)
			}
		}
		width := bound + len(e.Collection.Columns)
		cols := make([]int, width)
		for p := range bound {
			if i := slices.Index(leftKey, p); i >= 0 {
				cols[p] = i
			} else {
				cols[p] = K + slices.Index(leftVals, p)
			}
		}
		for c := range len(e.Collection.Columns) {
			if i := slices.Index(st.KeyColumns, c); i >= 0 {
				cols[bound+c] = i
			} else {
				cols[bound+c] = K + len(leftVals) + slices.Index(rightVals, c)
			}
		}
		var next join.Closure
		last := si == len(lp.Stages)-1
		if last {
			if next, err = closure(q); err != nil {
				return dataflow.Collection{}, err
			}
		}
		name := "linear " + q.Field + " stage " + strconv.Itoa(si+1)
		jm := &join.Metrics{}
		out, err := join.Join(b.c, left, right, newLayout(cols, next), join.OperatorOptions{
			Name: name, Metrics: jm, Dataflow: b.df, Labels: b.ctx, Errs: entryErrs,
		})
		if err != nil {
			return dataflow.Collection{}, err
		}
		entryErrs = nil
		b.joinMetrics(jm, collOf(q.Field))
		errStreams = append(errStreams, out.Errs)
		// The running result's errors travel with the join's errors (the
		// next stage's arrangement of the running result replaces them
		// with its own errs half, above).
		running = out
	}
	errs, err := b.concat(errStreams...)
	if err != nil {
		return dataflow.Collection{}, err
	}
	running.Errs = errs
	return running, nil
}

// delta renders a delta join: one path per from entry over the entries'
// arrangements, the entries' errors propagated once each (K4 of
// core/join).
func (b *builder) delta(q *plan.ResolvedQuery) (dataflow.Collection, error) {
	sources := make([]*dataflow.Arrangement, len(q.Entries))
	// Lookups first, so that every source can reuse one of them.
	type lk struct {
		a   *dataflow.Arrangement
		l   plan.Lookup
		src int
	}
	var lookups [][]lk
	for pi, p := range q.Delta {
		var ls []lk
		for _, st := range p.Stages {
			a, err := b.arrangement(q.Entries[st.Entry].Collection, st.KeyColumns, false)
			if err != nil {
				return dataflow.Collection{}, err
			}
			ls = append(ls, lk{a: a, l: st, src: pi})
			if sources[st.Entry] == nil && !b.servesAny(q.Entries[st.Entry].Collection) {
				sources[st.Entry] = a
			}
		}
		lookups = append(lookups, ls)
	}
	for i, e := range q.Entries {
		if sources[i] == nil {
			a, err := b.arrangement(e.Collection, nil, true)
			if err != nil {
				return dataflow.Collection{}, err
			}
			sources[i] = a
		}
	}
	var paths []join.DeltaPath
	for pi, p := range q.Delta {
		src := sources[p.Source.Entry]
		srcEntry := q.Entries[p.Source.Entry]
		// Row layout: source key ++ source val ++ each lookup's val.
		var rowOf []int // kernel column -> joined position
		for _, c := range src.Key {
			rowOf = append(rowOf, srcEntry.Offset+c)
		}
		for c := range len(srcEntry.Collection.Columns) {
			if !slices.Contains(src.Key, c) {
				rowOf = append(rowOf, srcEntry.Offset+c)
			}
		}
		var stages []join.DeltaStage
		keyOf := map[int]int{} // joined position bound by a lookup key -> kernel column of the stream key
		for _, x := range lookups[pi] {
			e := q.Entries[x.l.Entry]
			// StreamKey is in joined positions; translate to kernel columns.
			sk := make([]int, len(x.l.StreamKey))
			for i, p := range x.l.StreamKey {
				sk[i] = slices.Index(rowOf, p)
				if k, ok := keyOf[p]; ok && sk[i] < 0 {
					sk[i] = k
				}
				if sk[i] < 0 {
					return dataflow.Collection{}, fmt.Errorf("%s: delta path %d: stream column %d not bound", q.Field, pi, p)
				}
			}
			for i, c := range x.a.Key {
				keyOf[e.Offset+c] = sk[i]
			}
			stages = append(stages, join.DeltaStage{Lookup: x.a, Relation: x.l.Entry, StreamKey: sk})
			for c := range len(e.Collection.Columns) {
				if !slices.Contains(x.a.Key, c) {
					rowOf = append(rowOf, e.Offset+c)
				}
			}
		}
		cols := make([]int, len(q.Joined))
		for p := range cols {
			if i := slices.Index(rowOf, p); i >= 0 {
				cols[p] = i
			} else if k, ok := keyOf[p]; ok {
				cols[p] = k
			} else {
				return dataflow.Collection{}, fmt.Errorf("%s: delta path %d: joined column %d unbound", q.Field, pi, p)
			}
		}
		fin, err := closure(q)
		if err != nil {
			return dataflow.Collection{}, err
		}
		paths = append(paths, join.DeltaPath{Source: p.Source.Entry, Arranged: src, Stages: stages, Final: newLayout(cols, fin)})
	}
	// Each entry's errors, once (K4 of core/join): its source's.
	var errs []dataflow.Arranged
	for i := range q.Entries {
		errs = append(errs, sources[i].Errs)
	}
	jm := &join.Metrics{}
	out, err := join.DeltaJoin(b.c, paths, join.OperatorOptions{
		Name: "delta " + q.Field, Metrics: jm, Dataflow: b.df, Labels: b.ctx, Errs: errs,
	})
	if err != nil {
		return dataflow.Collection{}, err
	}
	b.joinMetrics(jm, collOf(q.Field))
	return out, nil
}

// joinMetrics registers the counters of a join operator (one per delta
// path) under the collection it computes.
func (b *builder) joinMetrics(jm *join.Metrics, coll string) {
	for _, st := range jm.Stats() {
		b.metric(st.Dataflow, st.Operator, st.Path, coll, st.Errors)
	}
}

// servesAny reports whether an importable index serves any arrangement of
// c (then a delta source is imported, never built).
func (b *builder) servesAny(c *plan.Collection) bool {
	return !b.raw && b.servedBy(c, nil, true) != nil
}

// reduce renders a reduce over the query's records: each record is
// extended by its aggregates' arguments (an erring record goes to the
// errors and leaves its group), arranged by the group columns with the
// rest as its val, and reduced. An argument that is a record column
// outside the group is read in place, not copied. When recs is src
// flattened unchanged, no argument extends it and src's key is the group
// (N7), the reduce reads src itself: the same updates, by the same key,
// with the same vals in the same order, already arranged (an index,
// imported or built here).
func (b *builder) reduce(q *plan.ResolvedQuery, recs dataflow.Collection, src *dataflow.Arrangement) (dataflow.Collection, error) {
	rr := q.Reduce
	// An argument that is a record column outside the group is read where
	// it stands (it cannot err); only other arguments extend the records.
	col := make([]int, len(rr.Aggregates)) // the record column read, or -1
	extend := false
	for i, v := range rr.ValueOf {
		col[i] = -1
		if v < 0 {
			continue
		}
		if c := recordColumn(rr, v); c >= 0 && !slices.Contains(rr.GroupBy, c) {
			col[i] = c
			continue
		}
		extend = true
	}
	ext := recs
	if extend {
		spec := rr.Values
		spec.Project = append(slices.Clone(spec.Input), spec.Project...)
		var err error
		if ext, err = b.mfp(recs, spec, "reduce args "+q.Field, collOf(q.Field)); err != nil {
			return dataflow.Collection{}, err
		}
	}
	nrec := len(rr.Values.Input)
	// The val is every column outside the group, in order.
	var vals []int
	for i := range ext.Arity {
		if !slices.Contains(rr.GroupBy, i) {
			vals = append(vals, i)
		}
	}
	var aggs []reduce.Aggregate
	for i, a := range rr.Aggregates {
		ag := reduce.Aggregate{}
		switch a.Fn {
		case plan.Count:
			ag.Fn = reduce.Count
		case plan.Sum:
			ag.Fn = reduce.Sum
		case plan.Min:
			ag.Fn = reduce.Min
		case plan.Max:
			ag.Fn = reduce.Max
		}
		if c := col[i]; c >= 0 {
			ag.Col = slices.Index(vals, c)
		} else if v := rr.ValueOf[i]; v >= 0 {
			ag.Col = slices.Index(vals, nrec+v)
		}
		aggs = append(aggs, ag)
	}
	a := src
	inErrs := ext.Errs
	if a == nil || ext.Oks != recs.Oks || !slices.Equal(a.Key, rr.GroupBy) {
		var err error
		what := arrangedAs("reduce "+q.Field, refNames(rr.Values.Input), rr.GroupBy)
		if a, err = b.c.ArrangeNamed(ext, rr.GroupBy, what); err != nil {
			return dataflow.Collection{}, err
		}
		// The records' errors as arranged: with the numeric overflow
		// of a record whose count the arrangement found out of int64.
		if inErrs, err = b.flattenErrs(a.Errs); err != nil {
			return dataflow.Collection{}, err
		}
	}
	name := "reduce " + q.Field
	stats := reduce.NewStats(b.df, name)
	stats.SetContext(b.ctx)
	r, err := reduce.New(reduce.Input{Reader: b.c.Keep(a.Oks.Reader), Pres: a.Oks.Pres, Arity: a.Oks.Arity},
		reduce.Options{AsOf: b.c.AsOf(), Aggregates: aggs, Spine: b.opts.Spine, Stats: stats})
	if err != nil {
		return dataflow.Collection{}, err
	}
	return b.reduceOp(r, a, name, collOf(q.Field), stats, len(rr.GroupBy)+len(aggs), inErrs)
}

// recordColumn returns the record column that Values' map v is, when the
// map is nothing but a reference to one record column, else -1.
func recordColumn(rr *plan.ResolvedReduce, v int) int {
	root := rr.Values.Maps[v].Expr.Root()
	if root.Op != expr.OpRef {
		return -1
	}
	c := -1
	for i, r := range rr.Values.Input {
		if r == root.Ref {
			if c >= 0 {
				return -1 // ambiguous: leave it to the map
			}
			c = i
		}
	}
	return c
}

// record renders distinct or threshold: the records arranged whole.
func (b *builder) record(q *plan.ResolvedQuery, recs dataflow.Collection) (dataflow.Collection, error) {
	all := make([]int, recs.Arity)
	for i := range all {
		all[i] = i
	}
	what := "threshold "
	if q.Distinct {
		what = "distinct "
	}
	name := what + q.Field
	// Arranged by the whole record: the operator's name says which.
	a, err := b.c.ArrangeNamed(recs, all, name)
	if err != nil {
		return dataflow.Collection{}, err
	}
	// The records' errors as arranged (reduce): with their overflows.
	inErrs, err := b.flattenErrs(a.Errs)
	if err != nil {
		return dataflow.Collection{}, err
	}
	stats := reduce.NewStats(b.df, name)
	stats.SetContext(b.ctx)
	in := reduce.Input{Reader: b.c.Keep(a.Oks.Reader), Pres: a.Oks.Pres, Arity: a.Oks.Arity}
	o := reduce.Options{AsOf: b.c.AsOf(), Spine: b.opts.Spine, Stats: stats}
	var r *reduce.Reduce
	if q.Distinct {
		r, err = reduce.NewDistinct(in, o)
	} else {
		r, err = reduce.NewThreshold(in, o)
	}
	if err != nil {
		return dataflow.Collection{}, err
	}
	return b.reduceOp(r, a, name, collOf(q.Field), stats, recs.Arity, inErrs)
}

// reduceStatsSeen, set by tests, is given each reduce operator's name and
// Stats as it is built.
var reduceStatsSeen func(name string, s *reduce.Stats)

// reduceOp adds the operator stepping r over a; the result's errors are
// the input's (inErrs, passed on once) and r's own.
func (b *builder) reduceOp(r *reduce.Reduce, a *dataflow.Arrangement, name, coll string, stats *reduce.Stats, arity int, inErrs *dataflow.Stream[*dataflow.Chunk]) (dataflow.Collection, error) {
	ob := b.c.NewOperator(name)
	if s := ob.StepLabels(); s != nil {
		// The reduce's labels go on its step's, and the rest of the step
		// (its output's chunks) stays under the step's.
		stats.SetContext(s)
	}
	if reduceStatsSeen != nil {
		reduceStatsSeen(name, stats)
	}
	op := &reduceOp{in: dataflow.AddInput(ob, "in", a.Oks.Stream), r: r, fail: b.failer()}
	op.oks = dataflow.AddOutput[*dataflow.Chunk](ob)
	op.errs = dataflow.AddOutput[*dataflow.Chunk](ob)
	if err := ob.Build(op); err != nil {
		r.Release()
		return dataflow.Collection{}, err
	}
	b.metric(b.df, name, "", coll, stats.Errors)
	errs, err := b.concat(inErrs, op.errs)
	if err != nil {
		return dataflow.Collection{}, err
	}
	return dataflow.Collection{Arity: arity, Oks: op.oks, Errs: errs}, nil
}
