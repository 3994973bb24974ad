package benchrun

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tracebench/tracebench/workloads/spec"
)

// TestArrangeLimitDoesTheWork checks that the dd arrange limit sorts and
// consolidates every update (key, val and time kept apart, opposite diffs
// cancelled), so that no ratio is taken against a limit that skipped
// work, and that DDArrange reports it beside its comparator reference.
func TestArrangeLimitDoesTheWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab := spec.NewTable([]string{"key", "val"}, 0)
	type kvt struct {
		k, v int64
		t    uint64
	}
	want := map[kvt]int64{}
	for range 5000 {
		u := kvt{rng.Int64N(50) - 25, rng.Int64N(8), uint64(rng.IntN(3))}
		d := rng.Int64N(5) - 2
		if d == 0 {
			d = 1
		}
		tab.Append(u.t, d, []int64{u.k, u.v})
		want[u] += d
	}
	kept := 0
	for _, d := range want {
		if d != 0 {
			kept++
		}
	}
	d, got := limitArrange(tab)
	if got != kept || d <= 0 {
		t.Fatalf("limit kept %d updates in %v, want %d", got, d, kept)
	}
	units := map[string]bool{}
	for _, v := range ddLimit(&Benchmark{Base: "DDArrange"}, []*spec.Table{tab}) {
		units[v.Unit] = v.Value > 0
	}
	if !units["limit-ns/row"] || !units["limit-sort-ns/row"] || len(units) != 2 {
		t.Fatalf("DDArrange limits: %v", units)
	}
}

// TestLimitSamplesCarryTheLimitLabel: in a CPU profile of a dd shape, the
// samples of its Go limit (plain Go on the sample's own goroutine, half
// of a dd sample's CPU and more) carry operator=(limit) beside the
// sample's benchmark=, and no runtime=, so -tagfocus and the flame graph
// set them apart from the engine's operators and from the benchmark
// goroutine's feeding, where they carried no operator at all. No sample
// of anything else carries the label.
func TestLimitSamplesCarryTheLimitLabel(t *testing.T) {
	chdirRoot(t)
	_, benches, err := selectBenchmarks(Selection{Targets: []string{"dd"}, Index: []string{IndexDirect}, Workers: 1, Params: []string{"rows=100000"}})
	if err != nil {
		t.Fatal(err)
	}
	var withLimit []*Benchmark
	for _, b := range benches {
		if b.builtinBase() != "DDImport" {
			withLimit = append(withLimit, b)
		}
	}
	specs := make([]*spec.Spec, len(withLimit))
	for i, b := range withLimit {
		specs[i] = b.Spec
	}
	inputs, err := loadAll(context.Background(), specs, 0)
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/tracebench/tracebench/internal/benchrun."
	inLimit := func(s *profile.Sample) bool {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if n := l.Function.Name; n == pkg+"ddLimit" || strings.HasPrefix(n, pkg+"limit") && !strings.HasPrefix(n, pkg+"limitLabels") {
					return true
				}
			}
		}
		return false
	}
	limitSamples := 0
	for pass := 0; limitSamples < 5 && pass < 20; pass++ {
		var buf bytes.Buffer
		if err := pprof.StartCPUProfile(&buf); err != nil {
			t.Fatal(err)
		}
		for i, b := range withLimit {
			ctx := context.WithValue(context.Background(), profilingKey{}, true)
			pprof.Do(ctx, pprof.Labels("benchmark", "Benchmark"+b.Name), func(ctx context.Context) {
				_, err = RuntimeEngine{}.Sample(ctx, b, inputs[i])
			})
			if err != nil {
				pprof.StopCPUProfile()
				t.Fatalf("%s: %v", b.Name, err)
			}
		}
		pprof.StopCPUProfile()
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Sample {
			op := strings.Join(s.Label["operator"], ",")
			if !inLimit(s) {
				// A sample whose Go stack is lost (runtime._System, the
				// race detector's C frames) shows no function to judge,
				// and one in limitLabels' own scope (pprof.Do around the
				// limit, or a limit inlined into its closure, as the 386
				// build does) is the limit's.
				names := stackNames(s)
				inScope := slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, pkg+"limitLabels") })
				if op == limitOperator && !inScope && slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "github.com/tracebench/") }) {
					t.Errorf("a sample outside the limits carries operator=%s (labels %v) %v", op, s.Label, stackNames(s))
				}
				continue
			}
			limitSamples++
			if op != limitOperator || len(s.Label["runtime"]) != 0 || !strings.HasPrefix(strings.Join(s.Label["benchmark"], ","), "BenchmarkDD") {
				t.Errorf("a sample of %s carries labels %v, want operator=%s and benchmark=BenchmarkDD…, no runtime", s.Location[0].Line[0].Function.Name, s.Label, limitOperator)
			}
		}
		if t.Failed() {
			return
		}
	}
	if limitSamples < 5 {
		t.Fatalf("only %d CPU samples of the limits in 20 passes", limitSamples)
	}
}

// stackNames returns the functions of s's stack, innermost first.
func stackNames(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			out = append(out, l.Function.Name)
		}
	}
	return out
}
