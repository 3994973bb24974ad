package dataflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// testEnv is a single worker without a runtime: dataflows are stepped by
// hand.
func testEnv(t *testing.T, worker, peers int, hub *Hub) *Env {
	var errs []error
	env := &Env{
		Worker: worker, Peers: peers, Manager: NewIndexManager(), Hub: hub,
		Activate: func(*Dataflow) {}, Wake: func() {}, Spine: spine.Options{},
		Fail: func(df string, err error) { errs = append(errs, err) },
	}
	env.Inputs = NewInputs(worker, peers, env.Activate)
	t.Cleanup(func() {
		for _, err := range errs {
			t.Errorf("operator error: %v", err)
		}
	})
	return env
}

func chunk(rows ...[]int64) *Chunk {
	c := NewChunk(len(rows[0])-2, len(rows))
	for _, r := range rows {
		c.Push(r[2:], uint64(r[0]), r[1])
	}
	return c
}

// batchTap records the descriptions of the batches on a stream.
type batchTap struct {
	in    *Port[*batch.Batch]
	descs []string
}

func (o *batchTap) Step(frontier.Frontier) frontier.Frontier {
	for _, b := range o.in.Take() {
		o.descs = append(o.descs, b.Desc().String())
	}
	return frontier.Empty()
}
func (o *batchTap) Shutdown() {}

// TestArrangeSealsOncePerAdvance is D2 and D1: each input frontier advance
// seals exactly the batch [previous, new), inserted into the trace and sent
// downstream in the same step; the probe's frontier follows the input's.
func TestArrangeSealsOncePerAdvance(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	p := NewProbe(1)
	var tap *batchTap
	var arr *Arrangement
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		arr, err = c.Arrange(in, []int{1})
		if err != nil {
			return err
		}
		c.Keep(arr.Oks.Reader)
		tap = &batchTap{in: arr.Oks.Stream.subscribe(c.df)}
		c.df.addNode("tap", tap, arr.Oks.Stream.from)
		c.Probe(p, arr.Oks.Stream)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Inputs.Send("in", chunk([]int64{0, 1, 7, 1}, []int64{2, 1, 8, 1})); err != nil {
		t.Fatal(err)
	}
	df.Step()
	if p.Frontier() != frontier.Min() || len(tap.descs) != 0 {
		t.Fatalf("sealed before the input frontier moved: %v %v", p.Frontier(), tap.descs)
	}
	for _, f := range []uint64{1, 2, 3} {
		if err := env.Inputs.Advance("in", frontier.At(f)); err != nil {
			t.Fatal(err)
		}
		df.Step()
		if p.Frontier() != frontier.At(f) {
			t.Fatalf("probe %v after advancing to %d", p.Frontier(), f)
		}
	}
	// Non-empty batches travel; empty ones are progress in the trace only.
	if want := []string{"[{0}, {1}) since {0}", "[{2}, {3}) since {0}"}; !slices.Equal(tap.descs, want) {
		t.Fatalf("batches sent %v, want %v", tap.descs, want)
	}
	if up := env.Manager.Len(); up != 0 {
		t.Fatalf("nothing was exported, manager has %d", up)
	}
	// Both halves are under maintenance.
	if n, st := env.Manager.Tracked(), env.Manager.TraceStats(); n != 2 || st.Updates != 2 || st.Batches == 0 {
		t.Fatalf("%d traces tracked with %+v, want 2 holding the 2 updates", n, st)
	}
	df.Drop()
	if n, st := env.Manager.Tracked(), env.Manager.TraceStats(); n != 0 || st != (spine.Stats{}) {
		t.Fatalf("after the drop %d traces tracked with %+v", n, st)
	}
}

// TestExchangeRoutesByKey steps two workers by hand: every update ends on
// the worker that owns its key, exactly once, and each receiver's frontier
// waits for both senders. Inputs keep an update on the worker of its first
// column's hash, so an index keyed by the first column finds every update
// at home, one keyed by the second makes updates cross, and one whose
// updates share a key makes each worker's message go whole, to itself or
// to the other worker.
func TestExchangeRoutesByKey(t *testing.T) {
	var distinct, oneKey [][]int64
	for k := range int64(20) {
		distinct = append(distinct, []int64{0, 1, k, k * 10})
		oneKey = append(oneKey, []int64{0, 1, k, 7})
	}
	for _, tc := range []struct {
		name string
		key  int
		rows [][]int64
	}{
		{"keyed by the first column", 0, distinct},
		{"keyed by the second column", 1, distinct},
		{"one key", 1, oneKey},
	} {
		t.Run(tc.name, func(t *testing.T) { testExchangeRoutesByKey(t, tc.key, tc.rows) })
	}
}

// TestInputByItsFirstColumnNeedsNoExchange: an input arranged by its
// first column is already keyed on every worker (each keeps its share,
// Inputs.Send), so no exchange is made: every key is on its owner, and
// each worker's arrangement passes a time as soon as its own input has,
// without waiting for its peers'. For 2, 3 and 5 workers.
func TestInputByItsFirstColumnNeedsNoExchange(t *testing.T) {
	var rows [][]int64
	for k := range int64(40) {
		rows = append(rows, []int64{0, 1, k, k * 10})
	}
	for _, peers := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("workers=%d", peers), func(t *testing.T) {
			hub := NewHub(peers)
			var envs []*Env
			for w := range peers {
				envs = append(envs, testEnv(t, w, peers, hub))
			}
			cp := NewCapture(peers)
			dfs, kept := arrangeOnWorkers(t, envs, 0, cp)
			if n := hub.Len(); n != 0 {
				t.Fatalf("%d exchanges in the hub, want none", n)
			}
			sendOnEveryWorker(t, envs, rows)
			for w, df := range dfs {
				df.Step()
				if cp.fronts[w] != frontier.At(1) {
					t.Fatalf("worker %d at %v after its own step, want {1}", w, cp.fronts[w])
				}
			}
			checkOwners(t, kept, len(rows))
		})
	}
}

// arrangeOnWorkers builds, on every worker of envs, dataflow "x": input
// "in" of two columns arranged by column key, its trace kept (returned,
// one reader a worker) and, unless cp is nil, captured.
func arrangeOnWorkers(t *testing.T, envs []*Env, key int, cp *Capture) ([]*Dataflow, []trace.Reader) {
	return arrangeOnWorkersKeyed(t, envs, key, cp, true)
}

// arrangeOnWorkersKeyed is arrangeOnWorkers; with keyed false the input's
// stream is arranged as any stream (its keyedBy cleared), exchanged even
// by its first column, as a filtered input's would be.
func arrangeOnWorkersKeyed(t *testing.T, envs []*Env, key int, cp *Capture, keyed bool) ([]*Dataflow, []trace.Reader) {
	t.Helper()
	kept := make([]trace.Reader, len(envs))
	var dfs []*Dataflow
	for w, env := range envs {
		df, err := Build(env, Desc{ID: "x", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			if !keyed {
				in.Oks.keyedBy = nil
			}
			a, err := c.Arrange(in, []int{key})
			if err != nil {
				return err
			}
			kept[w] = c.Keep(a.Oks.Reader)
			if cp != nil {
				c.Capture(cp, a.Oks)
			}
			return nil
		}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		dfs = append(dfs, df)
	}
	return dfs, kept
}

// sendOnEveryWorker sends rows to input "in" on every worker (each keeps
// its share) and advances it to {1}.
func sendOnEveryWorker(t *testing.T, envs []*Env, rows [][]int64) {
	t.Helper()
	for _, env := range envs {
		if err := env.Inputs.Send("in", chunk(rows...)); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOwners checks that the kept traces (one a worker) hold want updates
// through {1} in all, each on the worker that owns its key.
func checkOwners(t *testing.T, kept []trace.Reader, want int) {
	t.Helper()
	n := 0
	for w, r := range kept {
		bs, err := r.BatchesThrough(frontier.At(1))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			for _, u := range b.Updates() {
				n++
				if owner := Worker(HashCols(u.Key, []int{0}), len(kept)); owner != w {
					t.Fatalf("key %d on worker %d, owned by %d", u.Key[0], w, owner)
				}
			}
		}
	}
	if n != want {
		t.Fatalf("the workers' indexes hold %d updates, want %d", n, want)
	}
}

func testExchangeRoutesByKey(t *testing.T, key int, rows [][]int64) {
	hub := NewHub(2)
	envs := []*Env{testEnv(t, 0, 2, hub), testEnv(t, 1, 2, hub)}
	cp := NewCapture(2)
	// The input's stream as any stream: exchanged by the first column too
	// (TestInputByItsFirstColumnNeedsNoExchange has it unexchanged).
	dfs, kept := arrangeOnWorkersKeyed(t, envs, key, cp, false)
	sendOnEveryWorker(t, envs, rows)
	dfs[0].Step()
	// Worker 1 has not sent yet: worker 0's receiver must not pass 0.
	if cp.fronts[0] != frontier.Min() {
		t.Fatalf("worker 0 passed 0 before worker 1 reported: %v", cp.fronts[0])
	}
	dfs[1].Step()
	dfs[0].Step()
	if !cp.Passed(0) {
		t.Fatalf("capture did not pass 0: %v", cp.Frontier())
	}
	if got := len(cp.At(0)); got != len(rows) {
		t.Fatalf("%d rows across workers, want %d", got, len(rows))
	}
	for _, rd := range cp.At(0) {
		if rd.Diff != 1 {
			t.Fatalf("row %v captured %d times, want once", rd.Row, rd.Diff)
		}
	}
	checkOwners(t, kept, len(rows))
	for _, df := range dfs {
		df.Drop()
	}
	if hub.Len() != 0 {
		t.Fatalf("exchange left in the hub after both drops")
	}
}

// TestHoldFollowsFrontier: a held arrangement's trace compacts behind the
// frontier instead of staying pinned.
func TestHoldFollowsFrontier(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	var arr *Arrangement
	df, err := Build(env, Desc{ID: "h", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Exports: []string{"idx"}, Build: func(c *Context) error {
		in, err := c.Input("in", 1)
		if err != nil {
			return err
		}
		arr, err = c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		c.Hold(arr.Oks)
		return c.Export("idx", arr)
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := env.Manager.Get("idx")
	b.AllowCompaction(frontier.At(100)) // the controller lets go; only Hold remains
	if err := env.Inputs.Advance("in", frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	env.Manager.Maintain(1 << 10)
	if got := b.Oks.ReadUpper(); got != frontier.At(5) {
		t.Fatalf("upper %v", got)
	}
	// The hold moved to {5} and the controller allowed {100}: the trace
	// compacts to the meet, {5}.
	st := b.Oks.(interface{ State() trace.State }).State().Storage()
	if got := st.LogicalCompaction(); got != frontier.At(5) {
		t.Fatalf("trace compacted to %v, want {5}", got)
	}
	// Maintenance moved the bundle's physical hold to the upper; the hold
	// follows the frontier, so sealed batches may merge up to {5}.
	if got := st.PhysicalCompaction(); got != frontier.At(5) {
		t.Fatalf("physical compaction %v, want {5}", got)
	}
	df.Drop()
	if env.Manager.Len() != 0 {
		t.Fatal("dropping the dataflow kept its index")
	}
}

// TestBuildFailureDropsEverything: an error during Build releases what the
// build created and reports the error.
func TestBuildFailureDropsEverything(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	boom := errors.New("boom")
	_, err := Build(env, Desc{ID: "f", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 1)
		if err != nil {
			return err
		}
		a, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		if err := c.Export("idx", a); err != nil {
			return err
		}
		return boom
	}}, 0)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if env.Manager.Len() != 0 {
		t.Fatal("a failed build left its export")
	}
	if _, err := Build(env, Desc{ID: "g", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		_, err := c.ImportIndex("missing")
		return err
	}}, 0); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Fatalf("import of a missing index: %v", err)
	}
	if _, err := Build(env, Desc{ID: "h", AsOf: frontier.At(3), Until: frontier.At(3), Build: func(*Context) error { return nil }}, 0); err == nil {
		t.Fatal("as_of == until accepted")
	}
}

// TestTraceStatsSumsEveryField: IndexManager.TraceStats is the field-wise sum
// of the tracked traces' counters, merges included.
func TestTraceStatsSumsEveryField(t *testing.T) {
	m := NewIndexManager()
	var want spine.Stats
	for n := range 2 {
		h, w, s := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
		bld := batch.NewBuilder(batch.Arity{Key: 1, Val: 1}, 8)
		for r := range uint64(6 + n) {
			bld.Push1(int64(r), int64(n), r, 1)
			b, err := bld.Build(frontier.At(r), frontier.At(r+1))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Insert(b); err != nil {
				t.Fatal(err)
			}
		}
		h.SetPhysicalCompaction(w.Upper())
		for w.Exert(1 << 20) {
		}
		m.track(s, "t", func() {}, nil)
		st := s.Stats()
		want = spine.Stats{Batches: want.Batches + st.Batches, Updates: want.Updates + st.Updates, Bytes: want.Bytes + st.Bytes,
			Merges: want.Merges + st.Merges, MergeWork: want.MergeWork + st.MergeWork, Pending: want.Pending + st.Pending,
			Merging: want.Merging + st.Merging, Recompactions: want.Recompactions + st.Recompactions}
		defer h.Release()
	}
	if got := m.TraceStats(); got != want || want.Merges == 0 || want.MergeWork == 0 || want.Updates != 13 {
		t.Fatalf("TraceStats %+v, want %+v with merges and 13 updates", got, want)
	}
}

// TestManagerMerging: Merging reports a merge in progress while one is
// (the rounds' inserts start merges that a Maintain without effort leaves
// unfinished), and none once Maintain has finished them all.
func TestManagerMerging(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	df, err := Build(env, Desc{ID: "m", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		a, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		c.Hold(a.Oks)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	if env.Manager.Merging() {
		t.Fatal("an empty arrangement reports a merge in progress")
	}
	seen := false
	for r := range int64(64) {
		var rows [][]int64
		for k := range int64(64) {
			rows = append(rows, []int64{r, 1, r*64 + k, k})
		}
		if err := env.Inputs.Send("in", chunk(rows...)); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.At(uint64(r+1))); err != nil {
			t.Fatal(err)
		}
		df.Step()
		env.Manager.Maintain(0) // holds only: no fuel
		seen = seen || env.Manager.Merging()
	}
	if !seen {
		t.Fatal("64 rounds of inserts never left a merge in progress")
	}
	for env.Manager.Maintain(1 << 20) {
	}
	if env.Manager.Merging() {
		t.Fatal("a merge in progress after Maintain reported none left")
	}
}
