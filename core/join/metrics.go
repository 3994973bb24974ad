package join

import (
	"cmp"
	"context"
	"runtime/pprof"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/dataflow"
)

// Stats are one join operator's counters (one stage of a linear join, one
// path of a delta join), the analogue of Materialize's
// mz_compute_error_counts: Errors is the sum of the multiplicities of the
// errors the operator produced itself (closure and diff-overflow errors,
// and the one `numeric overflow` it adds where it multiplies or forwards
// a count of a batch a merge saturated, K3), never of the errors its
// inputs carry (K4). A delta join's forwarding of its entries' errors is
// the operator's and no path's: its Stats have Path "". Counters are
// written by the operator's worker and may be read from any goroutine.
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
//
// The Stats of an operator Join or DeltaJoin built are kept while its
// dataflow lives on that worker: when it is dropped
// (dataflow.Context.OnDrop) they leave Stats, and their errors, if any,
// are added to a retired count of the dataflow and operator that
// ErrorCounts goes on reporting. So one Metrics may serve every query a
// long-lived runtime creates and drops: it keeps what the live dataflows'
// operators count, and one count per dataflow id and operator that
// produced errors, not a Stats per create.
type Metrics struct {
	mu sync.Mutex
	// stats are the live Stats, each with the number it was registered
	// under (Stats returns them in that order); seq the last number.
	stats map[*Stats]uint64
	seq   uint64
	// retired sums the errors of the Stats of dropped dataflows, by
	// dataflow and operator, for those that counted any.
	retired map[[2]string]int64
}

// Stage registers and returns the counters of one operator (or one path
// of a delta join operator). Registered so, they are kept for the
// Metrics' life; Join and DeltaJoin register theirs until their dataflow
// is dropped.
func (m *Metrics) Stage(dataflow, operator, path string) *Stats {
	s := NewStats(dataflow, operator, path)
	m.mu.Lock()
	if m.stats == nil {
		m.stats = map[*Stats]uint64{}
	}
	m.seq++
	m.stats[s] = m.seq
	m.mu.Unlock()
	return s
}

// stage is Stage for an operator of the dataflow c builds: the Stats leave
// m when that dataflow is dropped (retire).
func (m *Metrics) stage(c *dataflow.Context, operator, path string, df string) *Stats {
	s := m.Stage(df, operator, path)
	if err := c.OnDrop(func() { m.retire(s) }); err != nil {
		// Past the dataflow's Build: the operator is not built either.
		m.retire(s)
	}
	return s
}

// retire forgets s, whose dataflow is dropped, keeping its errors in the
// retired count of its dataflow and operator.
func (m *Metrics) retire(s *Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.stats[s]; !ok {
		return
	}
	delete(m.stats, s)
	if n := s.Errors(); n != 0 {
		if m.retired == nil {
			m.retired = map[[2]string]int64{}
		}
		m.retired[[2]string{s.Dataflow, s.Operator}] += n
	}
}

// ErrorCount is one operator's error count.
type ErrorCount struct {
	Dataflow, Operator string
	Errors             int64
}

// ErrorCounts returns the errors produced per (dataflow, operator), summed
// over the operator's paths (and a delta join's forwarding of its
// entries' errors, path ""), sorted by dataflow then operator.
func (m *Metrics) ErrorCounts() []ErrorCount {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx := map[[2]string]int{}
	var out []ErrorCount
	add := func(k [2]string, n int64) {
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, ErrorCount{Dataflow: k[0], Operator: k[1]})
		}
		out[i].Errors += n
	}
	for k, n := range m.retired {
		add(k, n)
	}
	for s := range m.stats {
		add([2]string{s.Dataflow, s.Operator}, s.Errors())
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
// path (and one, path "", for a delta join's forwarding of its entries'
// errors, when it has entries to forward), in registration order, but for those of dropped dataflows (their
// errors stay in ErrorCounts).
func (m *Metrics) Stats() []*Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Stats, 0, len(m.stats))
	for s := range m.stats {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Stats) int { return cmp.Compare(m.stats[a], m.stats[b]) })
	return out
}
