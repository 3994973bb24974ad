package join

import (
	"context"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
)

// Stats are one join operator's counters (one stage of a linear join, one
// path of a delta join), the analogue of Materialize's
// mz_compute_error_counts: Errors is the sum of the multiplicities of the
// errors the operator produced itself (closure and diff-overflow errors),
// never of the errors its inputs carry (K4). Counters are written by the
// operator's worker and may be read from any goroutine.
type Stats struct {
	Dataflow, Operator, Path string

	labels pprof.LabelSet
	// labelled holds each context Do was given with the labels added,
	// made once rather than at every step: one per operator the Stats
	// serve (a staged delta path's feed and lookups, and the union, share
	// one). The worker's goroutine alone touches it.
	labelled []labelledCtx
	errors   atomic.Int64
	matches  atomic.Int64
	fed      atomic.Int64
	failed   atomic.Pointer[error]
}

// Err returns the error that stopped the operator (a broken stream or
// trace contract, never a data error), or nil. The operator of a dataflow
// (Join, DeltaJoin) also gives it to the dataflow's Failer, so the runtime
// reports it.
func (s *Stats) Err() error {
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return nil
}

func (s *Stats) fail(err error) { s.failed.CompareAndSwap(nil, &err) }

// NewStats returns counters for an operator, with the pprof labels
// dataflow=, operator= and (when path is not empty) path=.
func NewStats(dataflow, operator, path string) *Stats {
	s := &Stats{Dataflow: dataflow, Operator: operator, Path: path}
	if path == "" {
		s.labels = pprof.Labels("dataflow", dataflow, "operator", operator)
	} else {
		s.labels = pprof.Labels("dataflow", dataflow, "operator", operator, "path", path)
	}
	return s
}

// Errors returns the sum of the multiplicities of the errors produced.
func (s *Stats) Errors() int64 { return s.errors.Load() }

// Matches returns the number of matched update pairs (joined rows before
// the closure, overflowed products included).
func (s *Stats) Matches() int64 { return s.matches.Load() }

// Fed returns the number of source updates a delta path has fed to its
// first stage (after consolidation and the as_of optimization).
func (s *Stats) Fed() int64 { return s.fed.Load() }

// Do runs f with the operator's pprof labels added to those of ctx (the
// worker's runtime= and worker=, or its step's when the dataflow labels
// every step: dataflow.OperatorBuilder.StepLabels), so CPU samples of the
// join's work split by dataflow, operator and path, and sets ctx's labels
// again after it, so the rest of the step is counted under them.
func (s *Stats) Do(ctx context.Context, f func(context.Context)) {
	l := s.with(ctx)
	defer pprof.SetGoroutineLabels(ctx)
	pprof.SetGoroutineLabels(l)
	f(l)
}

// labelledCtx is a context and it with a Stats' labels added.
type labelledCtx struct{ base, labelled context.Context }

// with returns ctx with s's labels added, made at the first call for ctx.
func (s *Stats) with(ctx context.Context) context.Context {
	for _, l := range s.labelled {
		if l.base == ctx {
			if doSeen != nil {
				doSeen(s, ctx, false)
			}
			return l.labelled
		}
	}
	if doSeen != nil {
		doSeen(s, ctx, true)
	}
	l := pprof.WithLabels(ctx, s.labels)
	s.labelled = append(s.labelled, labelledCtx{ctx, l})
	return l
}

// doSeen, set by tests, is called with every context Do is given, and
// whether Do made its labelled context then.
var doSeen func(s *Stats, ctx context.Context, made bool)

func (s *Stats) record(errsBefore int64, out *Sink, matches int64) {
	s.errors.Add(out.ErrorCount() - errsBefore)
	s.matches.Add(matches)
}

// Metrics holds the Stats of every join operator of a runtime, readable per
// dataflow and operator. It is safe for concurrent use.
type Metrics struct {
	mu    sync.Mutex
	stats []*Stats
}

// Stage registers and returns the counters of one operator (or one path
// of a delta join operator).
func (m *Metrics) Stage(dataflow, operator, path string) *Stats {
	s := NewStats(dataflow, operator, path)
	m.mu.Lock()
	m.stats = append(m.stats, s)
	m.mu.Unlock()
	return s
}

// ErrorCount is one operator's error count.
type ErrorCount struct {
	Dataflow, Operator string
	Errors             int64
}

// ErrorCounts returns the errors produced per (dataflow, operator), summed
// over the operator's paths, sorted by dataflow then operator.
func (m *Metrics) ErrorCounts() []ErrorCount {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx := map[[2]string]int{}
	var out []ErrorCount
	for _, s := range m.stats {
		k := [2]string{s.Dataflow, s.Operator}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, ErrorCount{Dataflow: s.Dataflow, Operator: s.Operator})
		}
		out[i].Errors += s.Errors()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dataflow != out[j].Dataflow {
			return out[i].Dataflow < out[j].Dataflow
		}
		return out[i].Operator < out[j].Operator
	})
	return out
}

// Stats returns the counters registered so far, one per operator or delta
// path, in registration order.
func (m *Metrics) Stats() []*Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Stats(nil), m.stats...)
}
