package benchrun

import (
	"context"
	"math"
	rt "runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// RuntimeEngine runs benchmarks on the tracebench runtimes
// (workloads.Session): imported, a Maintenance runtime maintains every
// index from time 0 and the query runs in an Interactive runtime; direct,
// one Solo runtime runs a query that builds everything itself.
//
// One sample: feed every update at or before as_of and wait for the
// indexes (not timed: the Maintenance runtime's work before as_of), create
// the query and time it until its output is complete at as_of
// (install-ns), then feed the rest and time it until the output is
// complete (ns/update, updates/s). The workloads peek, stall, fanout and
// dd add their own measurements (docs/spec.md, built-in workloads).
type RuntimeEngine struct{}

// profilingKey marks a sample's context when the run profiles its CPU
// (--cpuprofile, --flamegraph): the engine then labels every operator.
type profilingKey struct{}

// profiling reports whether ctx is a sample of a run that profiles its CPU.
func profiling(ctx context.Context) bool {
	v, _ := ctx.Value(profilingKey{}).(bool)
	return v
}

// sessionOptions returns the options of b's sessions: its index mode, join
// and workers, and, when the run profiles its CPU, ctx as the runtimes'
// labels: ctx carries the sample's benchmark= label (RunConfig.samples),
// which the workers then carry too, labelling every operator.
func sessionOptions(ctx context.Context, b *Benchmark) (workloads.SessionOptions, error) {
	kind, err := plan.ParseJoinKind(b.Join)
	if err != nil {
		return workloads.SessionOptions{}, usagef("--join", "%v", err)
	}
	mode := render.Imported
	if b.Index == IndexDirect {
		mode = render.Direct
	}
	opts := workloads.SessionOptions{Mode: mode, Join: kind, Workers: b.Workers}
	if profiling(ctx) {
		opts.Labels = ctx
	}
	return opts, nil
}

// Sample implements Engine.
func (RuntimeEngine) Sample(ctx context.Context, b *Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	opts, err := sessionOptions(ctx, b)
	if err != nil {
		return nil, err
	}
	rt.GC()
	heap := startHeapSampler()
	defer heap.stop()
	var vals []benchfmt.Value
	switch b.builtinWorkload() {
	case "peek":
		vals, err = samplePeek(ctx, b, inputs, opts)
	case "fanout":
		vals, err = sampleFanout(ctx, b, inputs, opts)
	default:
		vals, err = sampleQuery(ctx, b, inputs, opts)
	}
	if err != nil {
		return nil, err
	}
	vals = append(vals, benchfmt.Value{Value: float64(heap.stop()), Unit: "peak-heap-B"})
	if strings.HasPrefix(b.builtinBase(), "DD") {
		rt.GC() // the engine's garbage is not the limit's to collect
		limitLabels(ctx, func() { vals = append(vals, ddLimit(b, inputs)...) })
	}
	return vals, nil
}

// limitLabels runs f, a dd shape's Go limit, which runs on the sample's
// own goroutine, under the label operator=(limit) beside the sample's
// benchmark= when the run profiles its CPU: the limit is plain Go, no
// runtime's work, and without a label of its own its samples (half of a
// dd sample's and more) were mixed with the benchmark goroutine's
// feeding and the Go runtime's under no operator.
func limitLabels(ctx context.Context, f func()) {
	if !profiling(ctx) {
		f()
		return
	}
	pprof.Do(ctx, pprof.Labels("operator", limitOperator), func(context.Context) { f() })
}

// limitOperator is the operator label of a dd shape's Go limit in a CPU
// profile (-tagfocus operator='\(limit\)').
const limitOperator = "(limit)"

// sampleQuery is the sample of one query: install, then steady updates.
func sampleQuery(ctx context.Context, b *Benchmark, inputs []*spec.Table, opts workloads.SessionOptions) ([]benchfmt.Value, error) {
	s := b.Spec
	se, err := workloads.NewSession(s, inputs, opts)
	if err != nil {
		return nil, err
	}
	vals, err := func() ([]benchfmt.Value, error) {
		asOf := s.Plan.Plan.AsOf
		if err := se.FeedThrough(asOf); err != nil {
			return nil, err
		}
		if err := se.WaitIndexes(ctx, asOf); err != nil {
			return nil, err
		}
		install, err := se.InstallQuery(ctx)
		if err != nil {
			return nil, err
		}
		var importOnly time.Duration
		if b.builtinBase() == "DDImport" && opts.Mode == render.Imported {
			if importOnly, err = se.ImportOnly(ctx); err != nil {
				return nil, err
			}
		}
		if b.builtinWorkload() == "stall" {
			// A reader that stops advancing: it holds every index at
			// as_of while the indexes are allowed to compact each round.
			if err := se.Stall(ctx); err != nil {
				return nil, err
			}
		}
		out, err := steadyValues(ctx, se, install)
		if err != nil {
			return nil, err
		}
		if importOnly > 0 {
			out = append(out, benchfmt.Value{Value: float64(importOnly.Nanoseconds()), Unit: "import-ns"})
		}
		if strings.HasPrefix(b.builtinBase(), "DD") {
			if rows := inputRowsThrough(inputs, s.Plan.Plan.AsOf); rows > 0 {
				out = append(out, benchfmt.Value{Value: float64(install.Nanoseconds()) / float64(rows), Unit: "install-ns/row"})
			}
		}
		return append(out, stageValues(se.Metrics().Errors())...), nil
	}()
	if cerr := se.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	return vals, err
}

// steadyValues runs a session's remaining rounds and reports what every
// query sample does: the install time, the steady rounds' time an update,
// the trace's size and merge work, the output's rows and errors and the
// hold gap.
func steadyValues(ctx context.Context, se *workloads.Session, install time.Duration) ([]benchfmt.Value, error) {
	steady, n, err := se.FinishRounds(ctx)
	if err != nil {
		return nil, err
	}
	st, err := se.Stats(ctx)
	if err != nil {
		return nil, err
	}
	out := []benchfmt.Value{{Value: float64(install.Nanoseconds()), Unit: "install-ns"}}
	if n > 0 {
		ns := float64(steady.Nanoseconds()) / float64(n)
		out = append(out, benchfmt.Value{Value: ns, Unit: "ns/update"}, benchfmt.Value{Value: 1e9 / ns, Unit: "updates/s"})
	}
	out = append(out,
		benchfmt.Value{Value: float64(st.Trace.Bytes), Unit: "trace-B"},
		benchfmt.Value{Value: float64(se.Output().Rows()), Unit: "rows"},
		benchfmt.Value{Value: float64(se.Output().Errors()), Unit: "errors"},
		benchfmt.Value{Value: float64(st.HoldGap), Unit: "hold-gap"},
		benchfmt.Value{Value: float64(st.Trace.MergeWork), Unit: "merge-work"},
	)
	return out, nil
}

// inputRowsThrough counts the input updates at or before t.
func inputRowsThrough(inputs []*spec.Table, t uint64) int {
	n := 0
	for _, tb := range inputs {
		for _, tm := range tb.Times {
			if tm <= t {
				n++
			}
		}
	}
	return n
}

// stageUnitPrefix starts the unit of one operator's error count.
const stageUnitPrefix = "stage-errors:"

// stageValues reports each operator's error count as an exact unit
// "stage-errors:<dataflow>/<operator>[/path]" (spaces become '_').
func stageValues(stages []render.StageErrors) []benchfmt.Value {
	var out []benchfmt.Value
	for _, st := range stages {
		name := st.Dataflow + "/" + st.Operator
		if st.Path != "" {
			name += "/path" + st.Path
		}
		out = append(out, benchfmt.Value{Value: float64(st.Errors), Unit: stageUnitPrefix + strings.ReplaceAll(name, " ", "_")})
	}
	return out
}

// samplePeek measures one-shot reads (until = as_of + 1) while the
// Maintenance runtime ingests: after each round of input, a read at the
// round's time is created, waited for and dropped. It reports the p50 and
// p99 read latency besides the steady figures.
func samplePeek(ctx context.Context, b *Benchmark, inputs []*spec.Table, opts workloads.SessionOptions) ([]benchfmt.Value, error) {
	reads, _ := b.Param("reads")
	if reads < 1 {
		reads = 1
	}
	se, err := workloads.NewSession(b.Spec, inputs, opts)
	if err != nil {
		return nil, err
	}
	lat, err := se.Peeks(ctx, int(reads))
	if cerr := se.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(lat)))) - 1
		return float64(lat[max(i, 0)].Nanoseconds())
	}
	return []benchfmt.Value{
		{Value: q(0.5), Unit: "read-p50-ns"},
		{Value: q(0.99), Unit: "read-p99-ns"},
		{Value: q(0.5), Unit: "install-ns"},
	}, nil
}

// sampleFanout installs k copies of the query at once over the same
// inputs: their total install time and the trace bytes they hold.
func sampleFanout(ctx context.Context, b *Benchmark, inputs []*spec.Table, opts workloads.SessionOptions) ([]benchfmt.Value, error) {
	k, _ := b.Param("k")
	if k < 1 {
		k = 1
	}
	se, err := workloads.NewSession(b.Spec, inputs, opts)
	if err != nil {
		return nil, err
	}
	vals, err := func() ([]benchfmt.Value, error) {
		asOf := b.Spec.Plan.Plan.AsOf
		if err := se.FeedThrough(asOf); err != nil {
			return nil, err
		}
		if err := se.WaitIndexes(ctx, asOf); err != nil {
			return nil, err
		}
		install, err := se.InstallQueries(ctx, int(k))
		if err != nil {
			return nil, err
		}
		return steadyValues(ctx, se, install)
	}()
	if cerr := se.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	return vals, err
}

// heapSampler records the largest live heap seen while it runs, reading
// runtime/metrics (no stop-the-world) every millisecond.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	peak uint64
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{})}
	h.peak = liveHeap()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
				h.peak = max(h.peak, liveHeap())
			}
		}
	}()
	return h
}

// stop ends the sampling (once) and returns the peak.
func (h *heapSampler) stop() uint64 {
	h.once.Do(func() {
		close(h.done)
		h.wg.Wait()
		h.peak = max(h.peak, liveHeap())
	})
	return h.peak
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
