package join

import (
	"context"
	"runtime/pprof"
	"sync"
	"testing"
)

// TestStatsDoLabelsOnTopOfTheWorkers: the operator's labels are added to
// the worker's runtime= and worker= labels, not put in their place.
func TestStatsDoLabelsOnTopOfTheWorkers(t *testing.T) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("runtime", "interactive", "worker", "1"))
	for _, c := range []struct {
		s    *Stats
		want map[string]string
	}{
		{NewStats("q7", "join 2", ""), map[string]string{"runtime": "interactive", "worker": "1", "dataflow": "q7", "operator": "join 2"}},
		{NewStats("q7", "delta join", "1"), map[string]string{"runtime": "interactive", "worker": "1", "dataflow": "q7", "operator": "delta join", "path": "1"}},
	} {
		ran := false
		c.s.Do(ctx, func(ctx context.Context) {
			ran = true
			got := map[string]string{}
			pprof.ForLabels(ctx, func(k, v string) bool { got[k] = v; return true })
			if len(got) != len(c.want) {
				t.Errorf("labels %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("label %s = %q, want %q", k, got[k], v)
				}
			}
		})
		if !ran {
			t.Fatal("Do did not run f")
		}
	}
}

// TestMetricsErrorCountsPerOperator: counts are summed over an operator's
// paths, kept apart per dataflow and operator, and readable while another
// goroutine adds to them.
func TestMetricsErrorCountsPerOperator(t *testing.T) {
	m := &Metrics{}
	p0, p1 := m.Stage("q1", "delta join", "0"), m.Stage("q1", "delta join", "1")
	j := m.Stage("q1", "join 1", "")
	o := m.Stage("q0", "join 1", "")
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 1000 {
			p0.errors.Add(1)
			p1.errors.Add(2)
		}
	})
	for range 100 {
		_ = m.ErrorCounts()
	}
	wg.Wait()
	j.errors.Add(-3)
	o.errors.Add(5)
	got := m.ErrorCounts()
	want := []ErrorCount{{"q0", "join 1", 5}, {"q1", "delta join", 3000}, {"q1", "join 1", -3}}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("counts %v, want %v", got, want)
		}
	}
}
