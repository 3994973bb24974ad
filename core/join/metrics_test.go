package join

import (
	"context"
	"fmt"
	"maps"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/labelstest"
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

// TestJoinOperatorsSetTheirStepsLabelsBack: when the dataflow labels every
// step, a join's and a delta join's operators (on two workers, the staged
// paths' feeds, lookups and union) run their work on top of their step's
// labels and set those back after it (the rest of the step, its sends, is
// still the operator's in a profile), not the worker's.
func TestJoinOperatorsSetTheirStepsLabelsBack(t *testing.T) {
	for _, peers := range []int{1, 2} {
		envs := labelledEnvs(t, peers)
		names := []string{"r0", "r1", "r2"}
		dfs := buildOnEach(t, envs, names, func(c *dataflow.Context, arr []*dataflow.Arrangement) error {
			metrics := &Metrics{}
			if _, err := Join(c, arr[0], arr[1], nil, OperatorOptions{Name: "join", Dataflow: "q", Metrics: metrics, Labels: c.Labels()}); err != nil {
				return err
			}
			_, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Metrics: metrics, Labels: c.Labels()})
			return err
		})
		sendRound(t, envs, names, 0, 2)
		// Every context a join's Do is given, by the operator= it names,
		// and how many times one was made (once per operator and Stats).
		seen := map[string]bool{}
		calls, made := 0, 0
		t.Cleanup(func() { doSeen = nil })
		doSeen = func(s *Stats, ctx context.Context, m bool) {
			calls++
			if m {
				made++
			}
			op, _ := pprof.Label(ctx, "operator")
			d, _ := pprof.Label(ctx, "dataflow")
			if !strings.HasPrefix(op, s.Operator) || d != "q" {
				t.Errorf("peers=%d: %s path %q runs on and sets back operator=%q dataflow=%q, want its step's", peers, s.Operator, s.Path, op, d)
			}
			if path, ok := pprof.Label(ctx, "path"); ok {
				op += " path=" + path // a staged path's operator's (TestDeltaPathStepsAreThePaths)
			}
			seen[op] = true
		}
		stepAll(dfs, peers)
		// A second time, each operator's labelled context is made already.
		sendRound(t, envs, names, 1, 3)
		madeFirst := made
		stepAll(dfs, peers)
		doSeen = nil
		if made != madeFirst || calls == 0 {
			t.Errorf("peers=%d: %d labelled contexts made over the second round's steps (%d calls)", peers, made-madeFirst, calls)
		}
		pprof.SetGoroutineLabels(context.Background())
		want := []string{"join", "delta"}
		if peers > 1 {
			want = append(want, "delta path=0", "delta path=1", "delta path=2")
		}
		for _, op := range want {
			if !seen[op] {
				t.Errorf("peers=%d: no work of operator %q ran on its step's labels (saw %v)", peers, op, seen)
			}
		}
	}
}

// TestStatsDoSetsItsContextBack: after f, the goroutine carries the labels
// of the context Do was given, whichever context that is from one call to
// the next.
func TestStatsDoSetsItsContextBack(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	s := NewStats("q", "join", "")
	for _, w := range []string{"1", "2", "1"} {
		ctx := pprof.WithLabels(context.Background(), pprof.Labels("worker", w, "operator", "step"))
		inside := ""
		s.Do(ctx, func(ctx context.Context) { inside, _ = pprof.Label(ctx, "worker") })
		if inside != w {
			t.Errorf("Do's f ran with worker=%q, want %q", inside, w)
		}
		if got, want := labelstest.Own(t), fmt.Sprintf(`{"operator":"step", "worker":%q}`, w); got != want {
			t.Errorf("after Do: %s, want %s", got, want)
		}
	}
}

// TestDeltaEntryErrorsAreNoPaths checks that a delta join's forwarding of
// its entries' errors (in the fused operator on one worker, in the union
// on several) runs under the operator's labels without path=: it is the
// work of no path, and counted under path=0 it would add to that path's
// share of a profile.
func TestDeltaEntryErrorsAreNoPaths(t *testing.T) {
	for _, peers := range []int{1, 2} {
		envs := labelledEnvs(t, peers)
		names := []string{"r0", "r1", "r2"}
		dfs := buildOnEach(t, envs, names, func(c *dataflow.Context, arr []*dataflow.Arrangement) error {
			var errs []dataflow.Arranged
			for _, a := range arr {
				errs = append(errs, a.Errs)
			}
			_, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Labels: c.Labels(), Errs: errs})
			return err
		})
		sendRound(t, envs, names, 0, 1)
		paths := map[string]int{}
		t.Cleanup(func() { doSeen = nil })
		doSeen = func(s *Stats, _ context.Context, _ bool) { paths[s.Path]++ }
		stepAll(dfs, peers)
		doSeen = nil
		pprof.SetGoroutineLabels(context.Background())
		if paths[""] == 0 {
			t.Errorf("peers=%d: no work of the delta join ran without path= (by path: %v): its entries' errors are counted as a path's", peers, paths)
		}
	}
}

// labelledEnvs is workerEnvs with each worker's labels (runtime=solo,
// worker=) set and every step labelled.
func labelledEnvs(t *testing.T, peers int) []*dataflow.Env {
	t.Helper()
	envs, _ := workerEnvs(t, peers)
	for w, env := range envs {
		env.Labels = pprof.WithLabels(context.Background(), pprof.Labels("runtime", "solo", "worker", fmt.Sprint(w)))
		env.LabelSteps = true
	}
	return envs
}

// sendRound sends keys 0-3 with val v at time tm to every input names of
// every worker, and closes tm.
func sendRound(t *testing.T, envs []*dataflow.Env, names []string, tm uint64, v int64) {
	t.Helper()
	for _, env := range envs {
		for _, n := range names {
			ch := dataflow.NewChunk(2, 4)
			for k := range int64(4) {
				ch.Push([]int64{k, v}, tm, 1)
			}
			if err := env.Inputs.Send(n, ch); err != nil {
				t.Fatal(err)
			}
			if err := env.Inputs.Advance(n, frontier.At(tm+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// buildOnEach builds dataflow "q" on every worker of envs: the inputs
// names arranged by their first column, then build's operators over them.
// The dataflows are dropped at the test's end.
func buildOnEach(t *testing.T, envs []*dataflow.Env, names []string, build func(*dataflow.Context, []*dataflow.Arrangement) error) []*dataflow.Dataflow {
	t.Helper()
	var dfs []*dataflow.Dataflow
	for w, env := range envs {
		df, err := dataflow.Build(env, dataflow.Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
			arr, err := arrangeInputs(c, names...)
			if err != nil {
				return err
			}
			return build(c, arr)
		}}, uint64(w+1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(df.Drop)
		dfs = append(dfs, df)
	}
	return dfs
}

// TestDeltaPathStepsAreThePaths checks that on several workers, where a
// delta join's paths are staged, each path operator's step (the feed's
// and every lookup's) runs under the path's labels, operator= the join's
// and path= the path's, as its work does: Do sets those back after the
// work, so the rest of the step (its sends) is counted as the path's. A
// step under operator= its own name ("delta path 0 feed") and no path=
// counted the sends apart from the path's work in a profile.
func TestDeltaPathStepsAreThePaths(t *testing.T) {
	envs := labelledEnvs(t, 2)
	names := []string{"r0", "r1", "r2"}
	dfs := buildOnEach(t, envs, names, func(c *dataflow.Context, arr []*dataflow.Arrangement) error {
		_, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Labels: c.Labels()})
		return err
	})
	sendRound(t, envs, names, 0, 2)
	// The contexts each path's Stats were given, one per operator.
	steps := map[string]map[context.Context]bool{}
	t.Cleanup(func() { doSeen = nil })
	doSeen = func(s *Stats, ctx context.Context, _ bool) {
		if s.Path == "" {
			return // the union's
		}
		op, _ := pprof.Label(ctx, "operator")
		path, _ := pprof.Label(ctx, "path")
		if op != s.Operator || path != s.Path {
			t.Errorf("path %s's work sets back operator=%q path=%q, want the path's operator=%q path=%q", s.Path, op, path, s.Operator, s.Path)
		}
		if steps[s.Path] == nil {
			steps[s.Path] = map[context.Context]bool{}
		}
		steps[s.Path][ctx] = true
	}
	stepAll(dfs, 2)
	doSeen = nil
	pprof.SetGoroutineLabels(context.Background())
	for _, p := range []string{"0", "1", "2"} {
		// Its feed and two lookups, on each of two workers.
		if n := len(steps[p]); n != 6 {
			t.Errorf("path %s: %d operators' steps ran its work, want 6 (a feed and two lookups on each worker)", p, n)
		}
	}
}

// TestStagedPathExchangesAreNamed: on several workers a staged delta
// path's exchange of proposals before each lookup is named after that
// lookup, so a profile tells one path's sends from another's and from an
// arrangement's; they were all plain "exchange send" and "exchange recv".
func TestStagedPathExchangesAreNamed(t *testing.T) {
	names := []string{"r0", "r1", "r2"}
	// exchanges lists the exchanges of worker 0's dataflow, with the
	// delta join or without it.
	exchanges := func(join bool) []string {
		dfs := buildOnEach(t, labelledEnvs(t, 2), names, func(c *dataflow.Context, arr []*dataflow.Arrangement) error {
			if !join {
				return nil
			}
			_, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Labels: c.Labels()})
			return err
		})
		var ex []string
		for _, op := range dfs[0].Operators() {
			if strings.HasPrefix(op, "exchange ") {
				ex = append(ex, op)
			}
		}
		return ex
	}
	// The arrangements' own, plain (they are made by Arrange), first.
	want := exchanges(false)
	for p := range names {
		for l := range names {
			if l != p {
				what := fmt.Sprintf("delta path %d lookup %d", p, l)
				want = append(want, "exchange send "+what, "exchange recv "+what)
			}
		}
	}
	if got := exchanges(true); !slices.Equal(got, want) {
		t.Errorf("exchanges\n%q\nwant\n%q", got, want)
	}
}

// TestMetricsForgetDroppedDataflowsStats: a Metrics is a runtime's (one
// for every query it runs), and it kept the Stats of every join and delta
// path of every create for its life, after the dataflow's drop: a service
// creating and dropping queries grew it by a Stats a path and worker per
// query (about 400 bytes each, with their labelled contexts), without
// bound. A dropped dataflow's Stats now leave it: once every dataflow is
// dropped Stats is empty, and ErrorCounts still sums every create's
// errors, one entry per dataflow id and operator that counted any.
func TestMetricsForgetDroppedDataflowsStats(t *testing.T) {
	envs, _ := workerEnvs(t, 1)
	env := envs[0]
	names := []string{"r0", "r1", "r2"}
	for _, n := range names {
		if err := env.Inputs.Declare(n, 2); err != nil {
			t.Fatal(err)
		}
	}
	// Keys 0-3 with value 0: the binary join's closure divides by it.
	sendRound(t, envs, names, 0, 0)
	q, err := expr.Parse("100 / r.v")
	if err != nil {
		t.Fatal(err)
	}
	cols := []expr.Ref{{Alias: "l", Column: "k"}, {Alias: "l", Column: "v"}, {Alias: "r", Column: "v"}}
	mfp, err := expr.NewMFP(expr.MFPSpec{Input: cols, Maps: []expr.Map{{Name: "q", Expr: q}}, Project: append(cols, expr.Ref{Column: "q"})})
	if err != nil {
		t.Fatal(err)
	}
	m := &Metrics{}
	sum := func() (n int64) {
		for _, ec := range m.ErrorCounts() {
			n += ec.Errors
		}
		return n
	}
	const creates = 30
	var perCreate int64
	for i := range creates {
		id := "q"
		if i%2 == 1 {
			id = fmt.Sprintf("q%d", i)
		}
		before := sum()
		df, err := dataflow.Build(env, dataflow.Desc{ID: id, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
			arr, err := arrangeInputs(c, names...)
			if err != nil {
				return err
			}
			if _, err := Join(c, arr[0], arr[1], NewMFP(mfp), OperatorOptions{Name: "join", Dataflow: id, Metrics: m}); err != nil {
				return err
			}
			_, err = DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: id, Metrics: m})
			return err
		}}, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		for df.Step() {
		}
		if n := len(m.Stats()); n != 4 {
			t.Fatalf("create %d: %d Stats live, want 4 (the join's and three paths')", i, n)
		}
		got := sum() - before
		if i == 0 {
			perCreate = got
			if perCreate == 0 {
				t.Fatal("the join counted no error: the test counts nothing")
			}
		} else if got != perCreate {
			t.Fatalf("create %d counted %d errors, the first %d", i, got, perCreate)
		}
		df.Drop()
	}
	if n := len(m.Stats()); n != 0 {
		t.Errorf("%d Stats kept after %d creates, all dropped: want 0", n, creates)
	}
	m.mu.Lock()
	kept := len(m.stats)
	m.mu.Unlock()
	if kept != 0 {
		t.Errorf("the Metrics keep %d Stats after every dataflow was dropped, want 0", kept)
	}
	// The join erred, the delta paths did not: one entry per id.
	if got, want := len(m.ErrorCounts()), 1+creates/2; got != want {
		t.Errorf("ErrorCounts has %d entries, want %d (the join of each id): %v", got, want, m.ErrorCounts())
	}
	if got := sum(); got != perCreate*creates {
		t.Errorf("ErrorCounts sums %d after the drops, want %d (%d creates of %d)", got, perCreate*creates, creates, perCreate)
	}
}

// TestDeltaPathMatchesOnWorkers: a two-way delta join's paths count each
// match once, on one worker and on two, where the paths are staged and a
// path operator steps every round. Each of three rounds adds keys 0-3 to
// both relations: round t's rows on path 0 (R1 looked up with <=) match
// t+1 rows a key, on path 1 (R0 with <) t rows, so 4·(1+2+3) and
// 4·(0+1+2). A staged path that kept its count once it recorded it would
// count its matches again at every later step.
func TestDeltaPathMatchesOnWorkers(t *testing.T) {
	for _, peers := range []int{1, 2} {
		envs, _ := workerEnvs(t, peers)
		names := []string{"r0", "r1"}
		m := &Metrics{}
		dfs := buildOnEach(t, envs, names, func(c *dataflow.Context, arr []*dataflow.Arrangement) error {
			_, err := DeltaJoin(c, deltaPaths(arr), OperatorOptions{Name: "delta", Dataflow: "q", Metrics: m})
			return err
		})
		for tm := range uint64(3) {
			sendRound(t, envs, names, tm, int64(tm))
			stepAll(dfs, peers)
		}
		got := map[string]int64{}
		for _, st := range m.Stats() {
			if st.Path != "" {
				got[st.Path] += st.Matches()
			}
		}
		if want := map[string]int64{"0": 24, "1": 12}; !maps.Equal(got, want) {
			t.Errorf("peers=%d: matches by path %v, want %v", peers, got, want)
		}
	}
}
