package reduce

import (
	"context"
	"runtime/pprof"
	"sync/atomic"
)

// Stats are one reduce operator's counters, on one worker: a Stats given
// to a second reduce (New, NewThreshold, NewDistinct, or AddReduce and the
// others on any worker of any dataflow) makes its create fail with
// ErrStatsAttached, where the two would mix their counts and race on
// its labels; make one for each, inside the dataflow's Build. Errors is the net multiplicity
// of the errors the operator produced itself (negative multiplicity and
// overflow, the `numeric overflow` it adds where it reads a batch a merge
// saturated among them, the one ForwardErrs adds for a saturated batch
// of its input's errors too), never of the errors its input carries (G3); Updates counts
// the input updates it retired. Counters are written by the operator's
// worker and may be read from any goroutine.
//
// The claim (attached) is a flag in the Stats and nothing more: no
// registry keeps a Stats, and a Stats points at nothing of its reduce
// (its traces, readers and batches are the Reduce's, freed by Release),
// so a Stats kept after its reduce's Release, or its dataflow's drop,
// holds its counters, labels and SetContext's context only. The claim
// outlives the Release, as a probe's or capture's attachment outlives its
// dataflow's drop: a Stats read after its reduce ended still reports that
// reduce's counts and Err, never another's. A create that fails leaves
// the Stats free (New, NewThreshold, NewDistinct, AddReduce and the
// others alike).
type Stats struct {
	Dataflow, Operator string

	labels  pprof.LabelSet
	errors  atomic.Int64
	updates atomic.Int64
	// ctx is the context SetContext set (nil: none), labelled it with the
	// operator's labels added, made once rather than at every step.
	ctx, labelled context.Context
	failure       atomic.Pointer[error]
	// attached is set by the one reduce the Stats count (attach).
	attached atomic.Bool
}

// attach claims s for one reduce: false when another reduce has it.
func (s *Stats) attach() bool { return s.attached.CompareAndSwap(false, true) }

// Err returns the error that stopped the operator (a broken stream
// contract), or nil. An operator of a dataflow (AddReduce and the others)
// also gives it to the dataflow's Failer, so the runtime reports it.
func (s *Stats) Err() error {
	if e := s.failure.Load(); e != nil {
		return *e
	}
	return nil
}

func (s *Stats) fail(err error) { s.failure.CompareAndSwap(nil, &err) }

// NewStats returns counters for an operator, with the pprof labels
// dataflow= and operator= (as core/join's).
func NewStats(dataflow, operator string) *Stats {
	return &Stats{
		Dataflow: dataflow, Operator: operator,
		labels: pprof.Labels("dataflow", dataflow, "operator", operator),
	}
}

// SetContext sets the context whose labels (the worker's runtime= and
// worker=, or the operator's step's when the dataflow labels every step:
// dataflow.OperatorBuilder.StepLabels) the operator's labels are added to,
// and which Do sets again after its work. Until it is called, Do labels
// nothing (as core/join's operators without OperatorOptions.Labels): a
// reduce made by New alone works on its goroutine's labels, the worker's,
// since Do cannot read them to set them back.
func (s *Stats) SetContext(ctx context.Context) { s.ctx, s.labelled = ctx, nil }

// Errors returns the net multiplicity of the errors produced.
func (s *Stats) Errors() int64 { return s.errors.Load() }

// Updates returns the number of input updates retired.
func (s *Stats) Updates() int64 { return s.updates.Load() }

// Do runs f with the operator's pprof labels added to those of the
// context set by SetContext, so CPU samples of the reduce's work split by
// dataflow and operator; f receives the labelled context. It sets that
// context's labels again after f, so the rest of the step (its sends) is
// counted under them. Without SetContext it runs f and nothing more.
func (s *Stats) Do(f func(context.Context)) {
	if s.ctx == nil {
		f(context.Background())
		return
	}
	if s.labelled == nil {
		s.labelled = pprof.WithLabels(s.ctx, s.labels)
	}
	defer pprof.SetGoroutineLabels(s.ctx)
	pprof.SetGoroutineLabels(s.labelled)
	f(s.labelled)
}
