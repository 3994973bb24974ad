package reduce

import (
	"context"
	"runtime/pprof"
	"sync/atomic"
)

// Stats are one reduce operator's counters: Errors is the net multiplicity
// of the errors the operator produced itself (negative multiplicity and
// overflow), never of the errors its input carries (G3); Updates counts
// the input updates it retired. Counters are written by the operator's
// worker and may be read from any goroutine.
type Stats struct {
	Dataflow, Operator string

	labels  pprof.LabelSet
	errors  atomic.Int64
	updates atomic.Int64
	ctx     context.Context
}

// NewStats returns counters for an operator, with the pprof labels
// dataflow= and operator= (as core/join's).
func NewStats(dataflow, operator string) *Stats {
	return &Stats{
		Dataflow: dataflow, Operator: operator,
		labels: pprof.Labels("dataflow", dataflow, "operator", operator),
		ctx:    context.Background(),
	}
}

// SetContext sets the context whose labels (the worker's runtime= and
// worker=) the operator's labels are added to.
func (s *Stats) SetContext(ctx context.Context) { s.ctx = ctx }

// Errors returns the net multiplicity of the errors produced.
func (s *Stats) Errors() int64 { return s.errors.Load() }

// Updates returns the number of input updates retired.
func (s *Stats) Updates() int64 { return s.updates.Load() }

// Do runs f with the operator's pprof labels, so CPU samples of the
// reduce's work split by dataflow and operator.
func (s *Stats) Do(f func()) {
	pprof.Do(s.ctx, s.labels, func(context.Context) { f() })
}
