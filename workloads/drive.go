package workloads

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ErrRuntime wraps an error a runtime reported while a session ran (an
// operator's protocol error): never bad input.
var ErrRuntime = errors.New("workloads: runtime error")

// ErrClosed is returned by the methods of a `Session` that run or feed
// it once it is closed: its runtimes are shut down, and a wait on them
// would never end.
var ErrClosed = errors.New("workloads: use after Close")

// errZeroSession is the error of the zero `Session`'s methods, which
// has no spec, runtimes or inputs to serve them with.
func errZeroSession() error {
	return usagef("the zero Session has no spec or runtimes (make one with NewSession)")
}

// usable returns an error wrapping ErrUsage for the zero `Session`, and
// ErrClosed once Close was called.
func (se *Session) usable() error {
	if se.r == nil {
		return errZeroSession()
	}
	if se.closed {
		return ErrClosed
	}
	return nil
}

// enter marks what as the call running on the `Session`, or returns an
// error wrapping ErrUsage naming both calls when another one runs: a
// `Session` is used by one goroutine at a time, and a second goroutine's
// call that overlapped one (FeedThrough twice, say) raced on its state,
// sent times twice or out of order, and failed with the runtime's error
// (an input closed) or not at all. leave ends the call.
func (se *Session) enter(what string) error {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.running != "" {
		return usagef("%s called while %s runs on another goroutine: a Session is used by one goroutine at a time", what, se.running)
	}
	se.running = what
	return nil
}

// enterWith is enter for a call given ctx: a nil ctx is refused first,
// wrapping ErrUsage and dataflow.ErrNilContext, as the runtime's waits
// refuse one, instead of panicking in the first wait or derived context.
func (se *Session) enterWith(what string, ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: %s: %w", ErrUsage, what, dataflow.ErrNilContext)
	}
	return se.enter(what)
}

func (se *Session) leave() {
	se.mu.Lock()
	se.running = ""
	se.mu.Unlock()
}

// SessionOptions configure a `Session`. `NewSession` refuses, wrapping
// ErrUsage, a Mode other than render.Imported or render.Direct, a Join
// other than plan.Linear or plan.Delta, and Workers outside 1..MaxWorkers
// (0 too: the zero value is no default).
type SessionOptions struct {
	Mode    render.Mode
	Join    plan.JoinKind
	Workers int // workers per runtime, 1..MaxWorkers
	// Capture keeps every output row (Result); otherwise the output is
	// only counted.
	Capture bool
	// Spine configures every spine of the session: the runtimes'
	// arrangements (runtime.Options.Spine: a Fuel of 0 or less is
	// spine.WorkedFuel there) and the reduces' and joins' own spines (a
	// Fuel of 0 or less is spine.DefaultFuel: nothing else works them).
	// Leave Fuel 0 for each its default: a fuel set here is both's.
	Spine spine.Options
	// Labels, when set, is a context whose pprof labels the runtimes'
	// workers carry beside their own (runtime.Options.Labels): benchrun
	// passes its benchmark= label so a profile splits by benchmark.
	Labels context.Context
}

// Session drives one workload through the runtimes (docs/spec.md "Fields",
// `as_of` and `until`; "Indexes and arrangements"): imported, a Maintenance runtime maintains every index from time 0
// and an Interactive runtime runs the query; direct, one Solo runtime runs
// the query, which builds everything from the raw inputs. Inputs are fed
// as time-ordered updates: every update of a time, then every input
// advanced past it.
//
// A `Session` is used by one goroutine at a time: a method that returns
// an error (Close and Result too) called while another such call runs,
// on another goroutine, is refused with an error wrapping ErrUsage naming
// both calls, and changes nothing. Output, Metrics, LastTime, Updates and
// Leaks may be called at any time. Once closed, the methods that feed
// or run it (FeedThrough, WaitIndexes, InstallQuery, InstallQueries,
// ImportOnly, Stall, Peeks, Finish, FinishRounds, Stats) return
// ErrClosed; Output, Result, Metrics and the counts still read what the
// run left.
//
// Make one with `NewSession`: the zero `Session` has no spec or runtimes,
// and its methods that return an error, Close and Result too, return one
// wrapping ErrUsage that says so; LastTime returns 0, and the others
// read nothing (no Output, no Metrics, no updates, no leaks). A method
// given a nil context refuses it before doing anything, with an error
// wrapping ErrUsage and dataflow.ErrNilContext, but Close, whose waits
// ctx does not bound, which takes it as context.Background().
type Session struct {
	spec   *spec.Spec
	r      *plan.Resolved
	opts   SessionOptions
	ctl    *runtime.Controller
	rts    []*runtime.Runtime
	regs   []*share.Registry
	tables []*spec.Table
	times  []uint64 // every input time, ascending, distinct
	next   int      // times[:next] have been fed
	// The inputs are advanced to {advanced}, or to {} when ended.
	advanced uint64
	ended    bool
	byTime   [][][]int
	idxProb  []*dataflow.Probe
	out      *render.Output
	outs     []*render.Output
	metrics  *render.Metrics
	query    bool
	queries  []string // live query dataflows
	stalled  bool     // Stall was called: imported, its reader dataflow is live
	// past is the latest time past as_of that every index was allowed to
	// compact to (imported; direct, where nothing compacts, the time
	// alike), by pastBy, Peeks or Finish: nothing can read at as_of any
	// more (asOfGone). pastBy is "" while nothing went past as_of.
	past   uint64
	pastBy string
	// allowed is the latest time every index was allowed to compact to
	// (imported): the runtime refuses a compaction that goes back.
	allowed uint64
	closed  bool
	updates int // updates fed after the query was installed
	// running names the call running on the `Session` ("" between
	// calls), under mu (enter, leave).
	mu      sync.Mutex
	running string
}

// NewSession starts the runtimes, declares the inputs and, imported,
// creates every index's maintaining dataflow at time 0. s is a decoded
// spec (spec.Decode, spec.ReadFile, Bench.Spec); tables are its loaded
// inputs, in s.Inputs order (Load). Anything else is an error wrapping
// ErrUsage (CheckTables). The tables are only read: several `Session`
// values running at once may share them.
func NewSession(s *spec.Spec, tables []*spec.Table, opts SessionOptions) (*Session, error) {
	if err := CheckTables(s, tables); err != nil {
		return nil, err
	}
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	se := &Session{spec: s, r: s.Plan, opts: opts, tables: tables, metrics: &render.Metrics{}}
	if opts.Mode == render.Imported {
		se.regs = make([]*share.Registry, opts.Workers)
		for i := range se.regs {
			se.regs[i] = share.NewRegistry()
		}
		m, err := runtime.New(runtime.Options{Role: runtime.Maintenance, Workers: opts.Workers, Registries: se.regs, Spine: opts.Spine, Labels: opts.Labels})
		if err != nil {
			return nil, err
		}
		in, err := runtime.New(runtime.Options{Role: runtime.Interactive, Workers: opts.Workers, Registries: se.regs, Spine: opts.Spine, Labels: opts.Labels})
		if err != nil {
			m.Shutdown()
			return nil, err
		}
		se.rts = []*runtime.Runtime{m, in}
	} else {
		solo, err := runtime.New(runtime.Options{Role: runtime.Solo, Workers: opts.Workers, Spine: opts.Spine, Labels: opts.Labels})
		if err != nil {
			return nil, err
		}
		se.rts = []*runtime.Runtime{solo}
	}
	ctl, err := runtime.NewController(se.rts...)
	if err != nil {
		se.shutdown()
		return nil, err
	}
	se.ctl = ctl
	se.index()
	for _, in := range s.Inputs {
		if err := ctl.Send(runtime.CreateInput{Name: in.Name, Arity: len(in.Columns)}); err != nil {
			se.shutdown()
			return nil, err
		}
	}
	if opts.Mode == render.Imported {
		for _, ix := range render.IndexOrder(se.r) {
			p := dataflow.NewProbe(opts.Workers)
			se.idxProb = append(se.idxProb, p)
			desc := render.IndexDesc(se.r, ix, render.Options{Runtime: "maintenance", Spine: opts.Spine, Metrics: se.metrics, Probe: p})
			if err := ctl.Send(runtime.CreateDataflow{Desc: desc}); err != nil {
				se.shutdown()
				return nil, err
			}
		}
	}
	return se, nil
}

// index sorts every input's updates by time.
func (se *Session) index() {
	set := map[uint64]bool{}
	se.byTime = make([][][]int, len(se.tables))
	for _, t := range se.tables {
		for _, tm := range t.Times {
			set[tm] = true
		}
	}
	for tm := range set {
		se.times = append(se.times, tm)
	}
	slices.Sort(se.times)
	pos := make(map[uint64]int, len(se.times))
	for i, tm := range se.times {
		pos[tm] = i
	}
	for ti, t := range se.tables {
		b := make([][]int, len(se.times))
		for i, tm := range t.Times {
			b[pos[tm]] = append(b[pos[tm]], i)
		}
		se.byTime[ti] = b
	}
}

// Updates returns the number of updates of every input with time > t.
func (se *Session) Updates(after uint64) int {
	n := 0
	for _, t := range se.tables {
		for _, tm := range t.Times {
			if tm > after {
				n++
			}
		}
	}
	return n
}

// Metrics returns the operators' error counters.
func (se *Session) Metrics() *render.Metrics { return se.metrics }

// Output returns the query's output (nil before InstallQuery).
func (se *Session) Output() *render.Output {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.out
}

// FeedThrough sends every update with time <= t not sent yet and advances
// every input to t+1 (to {} when t is the largest time), in time order.
// It waits for nothing. A t the inputs are advanced past already (fed
// through a later time before) sends nothing and moves nothing: inputs
// never go back.
func (se *Session) FeedThrough(t uint64) error {
	if err := se.enter("FeedThrough"); err != nil {
		return err
	}
	defer se.leave()
	return se.feedThrough(t)
}

func (se *Session) feedThrough(t uint64) error {
	if err := se.usable(); err != nil {
		return err
	}
	for se.next < len(se.times) && se.times[se.next] <= t {
		tm := se.times[se.next]
		for ti, tb := range se.tables {
			rows := se.byTime[ti][se.next]
			if len(rows) == 0 {
				continue
			}
			c := dataflow.NewChunk(len(tb.Columns), len(rows))
			for _, i := range rows {
				c.Push(tb.Row(i), tm, tb.Diffs[i])
			}
			if err := se.ctl.Send(runtime.Input{Name: se.spec.Inputs[ti].Name, Chunk: c}); err != nil {
				return err
			}
			if se.query {
				se.updates += len(rows)
			}
		}
		se.next++
		if err := se.advance(tm+1, false); err != nil {
			return err
		}
	}
	if t == math.MaxUint64 || se.next == len(se.times) && len(se.times) > 0 && t >= se.times[len(se.times)-1] {
		return se.advance(0, true)
	}
	return se.advance(t+1, false)
}

// advance advances every input to {t}, or to {} when end, unless they
// are there or past it already: the runtime refuses a frontier that goes
// back.
func (se *Session) advance(t uint64, end bool) error {
	if se.ended || !end && t <= se.advanced {
		return nil
	}
	f := frontier.At(t)
	if end {
		f = frontier.Empty()
	}
	for _, in := range se.spec.Inputs {
		if err := se.ctl.Send(runtime.AdvanceInput{Name: in.Name, Frontier: f}); err != nil {
			return err
		}
	}
	se.advanced, se.ended = t, end
	return nil
}

// WaitIndexes waits until every index has passed t (imported; direct has
// no index dataflows and returns once its runtime applied what was sent).
// An index passes t only once the inputs are fed through t, and nothing
// else feeds them while the one goroutine that uses the `Session` waits:
// a t the inputs are not fed through yet is an error wrapping ErrUsage
// in both modes (fedThrough), where imported waited until ctx ended.
func (se *Session) WaitIndexes(ctx context.Context, t uint64) error {
	if err := se.enterWith("WaitIndexes", ctx); err != nil {
		return err
	}
	defer se.leave()
	return se.waitIndexes(ctx, t)
}

func (se *Session) waitIndexes(ctx context.Context, t uint64) error {
	if err := se.usable(); err != nil {
		return err
	}
	if err := se.fedThrough("WaitIndexes", t); err != nil {
		return err
	}
	for _, p := range se.idxProb {
		if err := se.wait(ctx, p.WaitPassed, t); err != nil {
			return err
		}
	}
	return se.ctl.Sync(ctx)
}

// fedThrough returns an error wrapping ErrUsage, naming what and how far
// the inputs are fed, unless they are fed through t (advanced past it,
// or closed): a wait for time t (WaitIndexes, InstallQuery) ends only
// then, and the `Session` feeds nothing while it waits.
func (se *Session) fedThrough(what string, t uint64) error {
	if se.ended || se.advanced > t {
		return nil
	}
	if se.advanced == 0 {
		return usagef("%s waits for time %d, but no input is fed yet: FeedThrough(%d) first", what, t, t)
	}
	return usagef("%s waits for time %d, but the inputs are fed only through %d: FeedThrough(%d) first", what, t, se.advanced-1, t)
}

// wait waits until waitPassed(t) returns, failing early with a runtime's
// error.
func (se *Session) wait(ctx context.Context, waitPassed func(context.Context, frontier.Time) error, t uint64) error {
	for {
		if err := se.runtimeErr(); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := waitPassed(wctx, t)
		cancel()
		if err == nil {
			return se.runtimeErr()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// runtimeErr returns the runtimes' errors as the controller reports them:
// once each, a command's error met by both runtimes of the pair once, as
// Solo reports it (Controller.Errors), where joining each runtime's own
// errors with the controller's listed every error twice.
func (se *Session) runtimeErr() error {
	var errs []error
	if se.ctl == nil {
		for _, rt := range se.rts {
			errs = appendFailures(errs, rt.Err())
		}
	} else {
		errs = appendFailures(errs, se.ctl.Err())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrRuntime, errors.Join(errs...))
	}
	return nil
}

// appendFailures appends the errors joined in err to errs, except an
// arrangement's overflowing merge (a CommandError of no command holding a
// dataflow.MergeOverflowError). That is not a failure of the run: an
// input row whose accumulated count leaves int64 across times is valid
// input, and the arrangement keeps every other update and adds `numeric
// overflow` to its error collection, which reaches the output like any
// other error (docs/semantics.md §1.1, "Where an arrangement reports an
// overflow").
// The runtime reports such a merge besides, and only on the worker whose
// merge met it: a Maintenance runtime merging an index's compacted
// batches meets it where a Solo query's arrangement, never compacted that
// far, does not, so failing on it made imported runs fail (at random,
// mid-run or at Close) where direct ones of the same spec succeed.
func appendFailures(errs []error, err error) []error {
	if err == nil {
		return errs
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = appendFailures(errs, e)
		}
		return errs
	}
	// Only the merge's own report: an operator that fails while stepping
	// (a reduce whose build overflowed, say) is recorded under no command
	// too, wrapping batch.ErrOverflow, and is a failure.
	var ce *runtime.CommandError
	var me *dataflow.MergeOverflowError
	if errors.As(err, &ce) && ce.Seq == 0 && ce.Command == nil && errors.As(ce.Err, &me) {
		return errs
	}
	return append(errs, err)
}

// InstallQuery allows every index to compact to as_of (imported), creates
// the query dataflow at as_of and waits until its output is complete at
// as_of. It returns the time from the create to that moment (install-ns).
// The output is complete at as_of only once the inputs are fed through
// as_of: before that (FeedThrough(as_of) first), InstallQuery is an error
// wrapping ErrUsage that creates nothing, in both modes, where it waited
// until ctx ended. A wait that ctx ends leaves the query installed:
// Finish then answers.
func (se *Session) InstallQuery(ctx context.Context) (time.Duration, error) {
	if err := se.enterWith("InstallQuery", ctx); err != nil {
		return 0, err
	}
	defer se.leave()
	return se.installQueries(ctx, 1)
}

// InstallQueries is InstallQuery with k copies of the query created at
// once (ids query, query-1, …), timed until every output is complete at
// as_of. Output is the first copy's. The query is installed once: a
// second call, or k below 1 or above MaxQueries, is an error wrapping
// ErrUsage, as is a call after Peeks read past as_of (asOfGone).
func (se *Session) InstallQueries(ctx context.Context, k int) (time.Duration, error) {
	if err := se.enterWith("InstallQueries", ctx); err != nil {
		return 0, err
	}
	defer se.leave()
	return se.installQueries(ctx, k)
}

func (se *Session) installQueries(ctx context.Context, k int) (time.Duration, error) {
	if err := se.usable(); err != nil {
		return 0, err
	}
	if k < 1 || k > MaxQueries {
		return 0, usagef("%d copies of the query: want 1 to %d", k, MaxQueries)
	}
	if len(se.queries) > 0 {
		return 0, usagef("the query is installed already: it runs once")
	}
	if err := se.asOfGone("InstallQuery"); err != nil {
		return 0, err
	}
	asOf := se.r.Plan.AsOf
	if err := se.fedThrough("InstallQuery", asOf); err != nil {
		return 0, err
	}
	if err := se.allowCompaction(asOf); err != nil {
		return 0, err
	}
	var descs []dataflow.Desc
	var outs []*render.Output
	for i := range k {
		out := render.NewOutput(se.opts.Workers, se.opts.Capture && i == 0)
		id := render.QueryID
		if i > 0 {
			id += "-" + strconv.Itoa(i)
		}
		desc, err := render.QueryDesc(se.r, se.renderOptions(id), out)
		if err != nil {
			return 0, err
		}
		descs, outs = append(descs, desc), append(outs, out)
	}
	start := time.Now()
	for i, d := range descs {
		if err := se.ctl.Send(runtime.CreateDataflow{Desc: d}); err != nil {
			return 0, err
		}
		// Only a created query's output is waited for (Finish).
		se.queries, se.outs = append(se.queries, d.ID), append(se.outs, outs[i])
	}
	se.mu.Lock() // Output reads it at any time
	se.out = outs[0]
	se.mu.Unlock()
	se.query = true
	for _, o := range outs {
		if err := se.wait(ctx, o.WaitPassed, asOf); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// asOfGone is the ErrUsage error of what, a call that reads at as_of,
// after Peeks or Finish went past it: imported, they allowed every index
// to compact to their rounds' times, so no dataflow can be created at
// as_of any more (the controller refuses the compaction back, the runtime
// the create at as_of, which failed at Close or later). Direct has nothing
// compacted, and refuses the call all the same, so that both modes answer
// one sequence of calls alike.
func (se *Session) asOfGone(what string) error {
	if se.pastBy == "" {
		return nil
	}
	if what == se.pastBy {
		return usagef("%s reads from as_of %d again, but the %s before let the indexes compact to %d (imported): it runs once", what, se.r.Plan.AsOf, se.pastBy, se.past)
	}
	return usagef("%s reads at as_of %d, but %s let the indexes compact to %d (imported): call %s before %s", what, se.r.Plan.AsOf, se.pastBy, se.past, what, se.pastBy)
}

// wentPast records that by allowed every index to compact to t (past).
func (se *Session) wentPast(t uint64, by string) {
	if t > se.r.Plan.AsOf && (se.pastBy == "" || t > se.past) {
		se.past, se.pastBy = t, by
	}
}

// renderOptions returns the options of a query dataflow called id.
func (se *Session) renderOptions(id string) render.Options {
	rt := "solo"
	if se.opts.Mode == render.Imported {
		rt = "interactive"
	}
	return render.Options{Mode: se.opts.Mode, Join: se.opts.Join, Runtime: rt, Spine: se.opts.Spine, Metrics: se.metrics, ID: id}
}

// allowCompaction lets every index compact to t (imported): what the
// controller of a serving system does as its readers move on. A t before
// the time allowed already moves nothing: compaction never goes back
// (runtime.ErrCompactionBackward). FinishRounds after an InstallQuery
// whose wait was cancelled before the inputs were fed through as_of (an
// install fedThrough now refuses) reached the rounds before as_of, which
// the install allowed past; sent, the first failed the run in imported
// mode, where direct answered.
func (se *Session) allowCompaction(t uint64) error {
	if se.opts.Mode != render.Imported || t < se.allowed {
		return nil
	}
	for _, ix := range se.r.Indexes {
		if err := se.ctl.Send(runtime.AllowCompaction{ID: render.IndexID(ix), Frontier: frontier.At(t)}); err != nil {
			return err
		}
	}
	se.allowed = t
	return nil
}

// ImportOnly times a dataflow that imports every index at as_of and reads
// nothing else (imported only): from its create until every worker of
// the Interactive runtime has built it, which delivers each import's seed
// (dataflow.PassesAtBuild). Only the Interactive runtime is waited for
// (Controller.SyncRole): the Maintenance runtime records a query's create
// and builds nothing. The dataflow is dropped again. Direct mode has no
// import and returns 0.
func (se *Session) ImportOnly(ctx context.Context) (time.Duration, error) {
	if err := se.enterWith("ImportOnly", ctx); err != nil {
		return 0, err
	}
	defer se.leave()
	if err := se.usable(); err != nil {
		return 0, err
	}
	if err := se.asOfGone("ImportOnly"); err != nil {
		return 0, err
	}
	if se.opts.Mode != render.Imported {
		return 0, nil
	}
	return se.timeQueryBuild(ctx, se.readerDesc("import only"))
}

// timeQueryBuild creates desc, a query (imported), times it until every
// worker of the Interactive runtime has built it, and drops it again
// (ImportOnly; a test wraps desc's Build).
func (se *Session) timeQueryBuild(ctx context.Context, desc dataflow.Desc) (time.Duration, error) {
	start := time.Now()
	if err := se.ctl.Send(runtime.CreateDataflow{Desc: desc}); err != nil {
		return 0, err
	}
	if err := se.ctl.SyncRole(ctx, runtime.Interactive); err != nil {
		// A wait ctx ended leaves the dataflow created: dropped here, or
		// the next ImportOnly's create of the same id failed with the
		// runtime's error and Close found it still importing the indexes.
		return 0, errors.Join(err, se.ctl.Send(runtime.DropDataflow{ID: desc.ID}))
	}
	d := time.Since(start)
	if err := se.ctl.Send(runtime.DropDataflow{ID: desc.ID}); err != nil {
		return 0, err
	}
	return d, se.runtimeErr()
}

// readerDesc is a query dataflow that imports every index at as_of and
// keeps a reader of each, never moving its holds.
func (se *Session) readerDesc(id string) dataflow.Desc {
	ids := make([]string, len(se.r.Indexes))
	for i, ix := range se.r.Indexes {
		ids[i] = render.IndexID(ix)
	}
	return dataflow.Desc{
		ID: id, AsOf: frontier.At(se.r.Plan.AsOf), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			for _, id := range ids {
				a, err := c.ImportIndex(id)
				if err != nil {
					return err
				}
				c.Keep(a.Oks.Reader)
				c.Keep(a.Errs.Reader)
			}
			return nil
		},
	}
}

// stallID is the id of the stalled reader's dataflow.
const stallID = "stalled reader"

// Stall creates, in the Interactive runtime, a reader of every index at
// as_of that never moves its holds (imported only): the indexes' applied
// compaction stays at as_of while the controller allows more (hold-gap),
// and their traces keep every distinct time since. The reader stays
// until Close: a second call is an error wrapping ErrUsage, in both
// modes.
func (se *Session) Stall(ctx context.Context) error {
	if err := se.enterWith("Stall", ctx); err != nil {
		return err
	}
	defer se.leave()
	if err := se.usable(); err != nil {
		return err
	}
	if se.stalled {
		return usagef("Stall: the stalled reader is created already: it holds the indexes until Close")
	}
	if err := se.asOfGone("Stall"); err != nil {
		return err
	}
	if se.opts.Mode != render.Imported {
		se.stalled = true // nothing to stall, but once all the same
		return nil
	}
	desc := se.readerDesc(stallID)
	if err := se.ctl.Send(runtime.CreateDataflow{Desc: desc}); err != nil {
		return err
	}
	se.stalled = true
	if err := se.ctl.Sync(ctx); err != nil {
		return err
	}
	// Its create is applied: one that failed says so here, not at Close.
	return se.runtimeErr()
}

// Peeks runs reads one-shot reads while the inputs are fed: before read
// i the inputs are fed through the read's time t (the input times from
// as_of on, in turn, the last one repeated), then a query at as_of = t,
// until = t+1 (none at the largest time, 2^64−1, which an as_of may be)
// is created, waited for until complete at t, and dropped. The
// read latency is from the create to its completion: imported, the
// Maintenance runtime ingests concurrently and the read imports; direct,
// the read builds everything from the raw inputs. Imported, every index is
// allowed to compact to each read's time, so a call that reads at as_of
// after it (InstallQuery, ImportOnly, Stall, Peeks again) is an error
// wrapping ErrUsage, in both modes (asOfGone).
func (se *Session) Peeks(ctx context.Context, reads int) ([]time.Duration, error) {
	if err := se.enterWith("Peeks", ctx); err != nil {
		return nil, err
	}
	defer se.leave()
	if err := se.usable(); err != nil {
		return nil, err
	}
	if reads < 0 {
		return nil, usagef("%d reads: want 0 or more", reads)
	}
	if err := se.asOfGone("Peeks"); err != nil {
		return nil, err
	}
	asOf := se.r.Plan.AsOf
	var ts []uint64
	for _, t := range se.times {
		if t >= asOf {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		ts = []uint64{asOf}
	}
	if err := se.feedThrough(asOf); err != nil {
		return nil, err
	}
	if err := se.waitIndexes(ctx, asOf); err != nil {
		return nil, err
	}
	// Room for the reads a run makes (benchrun's at most a million), not
	// for any count: reads of 2^62 and more panicked here (makeslice: cap
	// out of range) before reading anything, and fewer but still huge ones
	// asked for terabytes at once, where each read grows the slice as it
	// runs, until ctx ends.
	lat := make([]time.Duration, 0, min(reads, 1<<20))
	for i := range reads {
		t := ts[min(i, len(ts)-1)]
		if err := se.feedThrough(t); err != nil {
			return nil, err
		}
		if err := se.allowCompaction(t); err != nil {
			return nil, err
		}
		se.wentPast(t, "Peeks")
		o := se.renderOptions("peek")
		o.Window, o.AsOf = true, t
		if t < math.MaxUint64 {
			// At the largest time no until is needed, and t+1 would
			// wrap to 0, before the as_of.
			o.Until, o.HasUntil = t+1, true
		}
		out := render.NewOutput(se.opts.Workers, false)
		desc, err := render.QueryDesc(se.r, o, out)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if err := se.ctl.Send(runtime.CreateDataflow{Desc: desc}); err != nil {
			return nil, err
		}
		if peekCreated != nil {
			peekCreated()
		}
		if err := se.wait(ctx, out.WaitPassed, t); err != nil {
			// A read ctx ended (or a runtime's error) is dropped all the
			// same: left, Close found it still importing the indexes (a
			// leak and a runtime error) or holding its traces (direct).
			return nil, errors.Join(err, se.ctl.Send(runtime.DropDataflow{ID: "peek"}))
		}
		lat = append(lat, time.Since(start))
		if err := se.ctl.Send(runtime.DropDataflow{ID: "peek"}); err != nil {
			return nil, err
		}
	}
	return lat, nil
}

// peekCreated, when a test sets it, runs in Peeks right after each read's
// create is sent: a test ends the read's context there, whatever the
// read's speed.
var peekCreated func()

// Finish feeds every remaining update, closes the inputs and waits until
// the query's output is complete, and, imported, every index (one no
// query reads included). It returns the time that took and the
// number of updates fed since the query was installed. Before
// InstallQuery there is no output to wait for: Finish is then an error
// wrapping ErrUsage and feeds nothing (FeedThrough feeds the inputs
// without a query).
func (se *Session) Finish(ctx context.Context) (time.Duration, int, error) {
	if err := se.enterWith("Finish", ctx); err != nil {
		return 0, 0, err
	}
	defer se.leave()
	return se.finishRounds(ctx)
}

// FinishRounds is Finish, feeding the remaining times one round at a time;
// imported, every index is allowed to compact to each round's time as it
// is fed, as a serving system's controller would (a stalled reader then
// holds them back), never back to a round before the time allowed
// already (as_of, by InstallQuery). It waits for every query's output and
// every index to be complete.
func (se *Session) FinishRounds(ctx context.Context) (time.Duration, int, error) {
	if err := se.enterWith("FinishRounds", ctx); err != nil {
		return 0, 0, err
	}
	defer se.leave()
	return se.finishRounds(ctx)
}

func (se *Session) finishRounds(ctx context.Context) (time.Duration, int, error) {
	if err := se.usable(); err != nil {
		return 0, 0, err
	}
	if len(se.outs) == 0 {
		return 0, 0, usagef("Finish: the query is not installed (InstallQuery first); FeedThrough feeds the inputs without one")
	}
	start := time.Now()
	for se.next < len(se.times) {
		t := se.times[se.next]
		if err := se.feedThrough(t); err != nil {
			return 0, 0, err
		}
		if err := se.allowCompaction(t); err != nil {
			return 0, 0, err
		}
		se.wentPast(t, "Finish")
	}
	if err := se.feedThrough(math.MaxUint64); err != nil {
		return 0, 0, err
	}
	for _, o := range se.outs {
		if err := se.wait(ctx, o.WaitPassed, math.MaxUint64); err != nil {
			return 0, 0, err
		}
	}
	// Every index too: one no query reads (another index on its key
	// serves the query) is still the Maintenance runtime's work, which
	// the time must hold, and its dataflow's error counts are complete
	// only once it has passed the end.
	for _, p := range se.idxProb {
		if err := se.wait(ctx, p.WaitPassed, math.MaxUint64); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start), se.updates, nil
}

// LastTime returns the largest input time, or as_of when there is none
// later: the time `rows` and `errors` describe. The zero `Session` has no
// inputs and returns 0.
func (se *Session) LastTime() uint64 {
	if se.r == nil {
		return 0
	}
	t := se.r.Plan.AsOf
	if n := len(se.times); n > 0 && se.times[n-1] > t {
		t = se.times[n-1]
	}
	if se.r.Plan.HasUntil && t >= se.r.Plan.Until {
		t = se.r.Plan.Until - 1
	}
	return t
}

// Stats returns the runtimes' stats summed (trace bytes: each runtime
// counts the traces it maintains, so a shared batch is counted once),
// once every hold its readers moved before the call is applied. A
// reader's move (an import acknowledging what it read, a join's or a
// reduce's compaction) reaches the runtime that maintains the trace as a
// wake, applied at the end of that runtime's next wake (its Maintain), and
// not by a barrier: read at once after Finish, the Maintenance runtime's
// indexes were still held where the query had been, and hold-gap read 0
// in some samples and up to 9 in others of one benchmark (lookup, 10
// rounds). A Sync's wake ends with that Maintain, and the barrier that
// reads the stats runs in a later wake. The Sync takes the Interactive
// runtime first (Controller.Sync): its worker applies its copies of the
// last rounds' AllowCompaction in its own wake (runtime doc, R6), and the
// peer holds they move reach the Maintenance runtime as wakes too; synced
// Maintenance first, those moves came after its barrier, and hold-gap
// read 2 to 9 in a few percent of the samples of star, triangles,
// groupby, distinct and errors.
func (se *Session) Stats(ctx context.Context) (runtime.Stats, error) {
	if err := se.enterWith("Stats", ctx); err != nil {
		return runtime.Stats{}, err
	}
	defer se.leave()
	if err := se.usable(); err != nil {
		return runtime.Stats{}, err
	}
	if err := se.ctl.Sync(ctx); err != nil {
		return runtime.Stats{}, err
	}
	return se.stats(ctx)
}

func (se *Session) stats(ctx context.Context) (runtime.Stats, error) {
	var sum runtime.Stats
	for _, rt := range se.rts {
		st, err := rt.Stats(ctx)
		if err != nil {
			return sum, err
		}
		sum.Dataflows += st.Dataflows
		sum.Indexes += st.Indexes
		sum.Traces += st.Traces
		sum.Exchanges += st.Exchanges
		sum.Trace.Bytes += st.Trace.Bytes
		sum.Trace.Batches += st.Trace.Batches
		sum.Trace.Updates += st.Trace.Updates
		sum.Trace.Merges += st.Trace.Merges
		sum.Trace.MergeWork += st.Trace.MergeWork
		sum.HoldGap = max(sum.HoldGap, st.HoldGap)
	}
	return sum, nil
}

// Result returns the captured output accumulated at t as a reference
// result (rows sorted numerically, errors by message). It is an error
// wrapping ErrUsage when no query was installed, the `Session` was not
// created with Capture, t is before as_of or at or after until (the
// query's output holds no answer there), or the output is not complete
// at t yet (Finish, or a wait, first).
func (se *Session) Result(t uint64) (*reference.Result, error) {
	if err := se.enter("Result"); err != nil {
		return nil, err
	}
	defer se.leave()
	if se.r == nil {
		return nil, errZeroSession()
	}
	if err := se.checkTime(t); err != nil {
		return nil, err
	}
	switch {
	case se.out == nil:
		return nil, usagef("no result: the query is not installed (InstallQuery)")
	case se.out.Oks == nil:
		return nil, usagef("no result: the output is only counted (set `SessionOptions.Capture`)")
	case !se.out.Passed(t):
		return nil, usagef("no result at time %d: the output is not complete there yet (Finish first)", t)
	}
	res := &reference.Result{Time: t, Columns: slices.Clone(se.r.Query.Output)}
	rows, over := se.out.Oks.Accumulate(t)
	for _, rd := range rows {
		res.Rows = append(res.Rows, reference.Row{Values: rd.Row, Diff: rd.Diff})
	}
	codes, errOver := se.out.Errs.Accumulate(t)
	errs := map[string]int64{}
	for _, rd := range codes {
		errs[ErrorMessage(rd.Row[0])] += rd.Diff
	}
	// A count that leaves int64 when the output is consolidated is a
	// numeric overflow (docs/semantics.md §1.1), one per row.
	if n := over + errOver; n > 0 {
		errs[reference.MsgOverflow] += int64(n)
	}
	for _, m := range slices.Sorted(maps.Keys(errs)) {
		if errs[m] != 0 {
			res.Errors = append(res.Errors, reference.Error{Message: m, Diff: errs[m]})
		}
	}
	return res, nil
}

// checkTime returns an error wrapping ErrUsage unless the query's output
// answers at t: as_of ≤ t, and t < until when the spec has one.
func (se *Session) checkTime(t uint64) error {
	return checkTime(se.r, t)
}

func checkTime(r *plan.Resolved, t uint64) error {
	if t < r.Plan.AsOf {
		return usagef("time %d is before as_of %d: the query's output starts at as_of", t, r.Plan.AsOf)
	}
	if r.Plan.HasUntil && t >= r.Plan.Until {
		return usagef("time %d is not before until %d: the query's output ends before until", t, r.Plan.Until)
	}
	return nil
}

// ErrorMessage is the message of an error code (docs/spec.md "Expressions").
func ErrorMessage(code int64) string {
	switch code {
	case 1:
		return reference.MsgDivisionByZero
	case 2:
		return reference.MsgOverflow
	case 3:
		return reference.MsgNegativeMultiplicity
	}
	return "error code " + strconv.FormatInt(code, 10)
}

// Leaks reports what the session still holds after Close: registry slots,
// reserved peer holds and uncollected verdicts, and runtime dataflows,
// indexes and traces. Nil when everything is released.
func (se *Session) Leaks() error {
	var errs []error
	for i, g := range se.regs {
		if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
			errs = append(errs, fmt.Errorf("registry %d: %d slots, %d reserved peer holds left", i, st.Slots, st.Reserved))
		}
	}
	return errors.Join(errs...)
}

// Close drops the query and every index dataflow (releasing every hold)
// and checks the runtimes hold nothing, then shuts them down. It returns
// what is still held, if anything, or a runtime's error. It may be called
// at any point of a run; a second call returns nil. The zero `Session`
// has nothing to close: Close returns an error wrapping ErrUsage. Its
// waits are bounded by a minute of their own, not by ctx's end (releasing
// must finish when the run was interrupted), so a nil ctx is taken as
// context.Background(): `defer se.Close(nil)` closes, where a refusal
// would leave the runtimes running.
func (se *Session) Close(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := se.enter("Close"); err != nil {
		return err
	}
	defer se.leave()
	if se.r == nil {
		return errZeroSession()
	}
	if se.closed {
		return nil
	}
	se.closed = true
	// Releasing must finish even when the run was interrupted: the
	// caller's cancellation does not reach the drops.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var errs []error
	for _, id := range se.queries {
		if err := se.ctl.Send(runtime.DropDataflow{ID: id}); err != nil {
			errs = append(errs, err)
		}
	}
	if se.stalled && se.opts.Mode == render.Imported {
		if err := se.ctl.Send(runtime.DropDataflow{ID: stallID}); err != nil {
			errs = append(errs, err)
		}
	}
	if se.opts.Mode == render.Imported {
		// Importers before what they import: a view's index before the
		// indexes its dataflow reads (runtime.ErrIndexDropped).
		for _, ix := range slices.Backward(render.IndexOrder(se.r)) {
			if err := se.ctl.Send(runtime.DropDataflow{ID: render.MaintainID(ix.Name)}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := se.ctl.Sync(ctx); err != nil {
		errs = append(errs, err)
	}
	if st, err := se.stats(ctx); err == nil {
		if st.Dataflows != 0 || st.Indexes != 0 || st.Traces != 0 {
			errs = append(errs, fmt.Errorf("after dropping every dataflow: %d dataflows, %d indexes, %d traces left", st.Dataflows, st.Indexes, st.Traces))
		}
	}
	if err := se.Leaks(); err != nil {
		errs = append(errs, err)
	}
	if err := se.runtimeErr(); err != nil {
		errs = append(errs, err)
	}
	se.shutdown()
	return errors.Join(errs...)
}

func (se *Session) shutdown() {
	for _, rt := range se.rts {
		rt.Shutdown()
	}
}
