package runtime

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"
	"weak"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/trace"
)

// model accumulates (time, diff, cols...) rows at t: row → count.
func model(rows [][]int64, t uint64) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rows {
		if uint64(r[0]) <= t {
			out[fmt.Sprint(r[2:])] += r[1]
		}
	}
	maps.DeleteFunc(out, func(_ string, d int64) bool { return d == 0 })
	return out
}

// captured turns a capture's accumulation into the model's form, with the
// key column moved back into place (the arrangement is keyed by column 0 of
// two-column rows, so key ++ val is the row itself).
func captured(cp *dataflow.Capture, t uint64) map[string]int64 {
	out := map[string]int64{}
	for _, rd := range cp.At(t) {
		out[fmt.Sprint(rd.Row)] += rd.Diff
	}
	return out
}

// TestImportFidelity is §8 invariants 15 and 16: for random updates and
// random as_of/until (with the index allowed to compact up to as_of first),
// the imported arrangement accumulated at every t in [as_of, until) equals
// the source accumulated at t; nothing before as_of or at/after until is
// presented; with until = as_of+1 the import completes once the source
// passes as_of.
func TestImportFidelity(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		seed := testSeed(t)
		rng := rand.New(rand.NewPCG(seed, 7))
		s.declare("in", 2)
		s.ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		var rows [][]int64
		const times = 30
		for tm := range times {
			var batch [][]int64
			for range rng.IntN(5) {
				r := []int64{int64(tm), []int64{1, 1, -1}[rng.IntN(3)], rng.Int64N(5), rng.Int64N(3)}
				batch = append(batch, r)
			}
			rows = append(rows, batch...)
			s.send("in", 2, batch...)
			s.advance("in", 2, frontier.At(uint64(tm+1)))
		}
		for q := range 6 {
			asOf := uint64(rng.IntN(times - 2))
			until := frontier.Empty()
			if q%2 == 1 {
				until = frontier.At(asOf + 1 + uint64(rng.IntN(times-int(asOf))))
			}
			if q == 0 {
				until = frontier.At(asOf + 1)
			}
			// The controller lets the index compact up to as_of before the
			// query (SPEC §1 Time); later queries need earlier times, so
			// each query reads its own incarnation of the index.
			id := fmt.Sprintf("idx%d", q)
			s.ctl.Send(CreateDataflow{Desc: indexDesc(id, "in", 2, []int{0}, 0, nil)})
			s.ctl.Send(AllowCompaction{ID: id, Frontier: frontier.At(asOf)})
			cp := dataflow.NewCapture(s.workers)
			s.ctl.Send(CreateDataflow{Desc: readDesc(fmt.Sprintf("q%d", q), id, asOf, until, cp)})
			last := uint64(times - 1)
			if u, ok := until.Time(); ok {
				last = u - 1
			}
			if err := cp.WaitPassed(ctx, last); err != nil {
				t.Fatal(err)
			}
			for tm := asOf; tm <= last; tm++ {
				if got, want := captured(cp, tm), model(rows, tm); !maps.Equal(got, want) {
					t.Fatalf("seed %d: query %d (as_of %d until %v) at %d: %v, want %v", seed, q, asOf, until, tm, got, want)
				}
			}
			for _, tm := range cp.Times() {
				if tm < asOf || until.Beyond(tm) {
					t.Fatalf("query %d presented time %d outside [%d, %v)", q, tm, asOf, until)
				}
			}
			if !until.IsEmpty() && !cp.Frontier().IsEmpty() {
				t.Fatalf("query %d with until %v not complete: frontier %v", q, until, cp.Frontier())
			}
		}
	})
}

// A pair over zero Registries (new(share.Registry), not NewRegistry) runs
// as one over NewRegistry's: the first publication panicked on a nil map
// with the registry's lock held, and the pair, Sync and Shutdown with it,
// waited for that lock forever.
func TestAPairOverZeroRegistriesRuns(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			ctx := testCtx(t)
			regs := []*share.Registry{}
			for range w {
				regs = append(regs, new(share.Registry))
			}
			maint, err := New(Options{Role: Maintenance, Workers: w, Registries: regs})
			if err != nil {
				t.Fatal(err)
			}
			inter, err := New(Options{Role: Interactive, Workers: w, Registries: regs})
			if err != nil {
				maint.Shutdown()
				t.Fatal(err)
			}
			ctl, err := NewController(maint, inter)
			if err != nil {
				maint.Shutdown()
				inter.Shutdown()
				t.Fatal(err)
			}
			shut := make(chan struct{})
			defer func() {
				go func() { ctl.Shutdown(); close(shut) }()
				select {
				case <-shut:
				case <-ctx.Done():
					t.Error("Shutdown did not return")
				}
			}()
			s := &setup{ctl: ctl, workers: w}
			s.declare("in", 2)
			s.ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
			s.advance("in", 2, frontier.At(1))
			cp := dataflow.NewCapture(w)
			s.ctl.Send(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
			if err := cp.WaitPassed(ctx, 0); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"[1 10]": 1, "[2 20]": 1}
			if got := captured(cp, 0); !maps.Equal(got, want) {
				t.Fatalf("rows at 0: %v, want %v", got, want)
			}
			if err := ctl.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// New copies Options.Registries: a caller that reuses its slice for the
// next pair (regs[i] = share.NewRegistry(), then New again) leaves the
// first pair on the registries it was made with. The runtime kept the
// caller's slice and looked its registry up there at each publication,
// so both pairs published into the second's registries: a query read the
// other pair's rows, or waited for an index that never came to it.
func TestNewCopiesItsRegistries(t *testing.T) {
	ctx := testCtx(t)
	regs := make([]*share.Registry, 1)
	var ctls []*Controller
	for range 2 {
		regs[0] = share.NewRegistry()
		maint, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		inter, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
		if err != nil {
			maint.Shutdown()
			t.Fatal(err)
		}
		ctl, err := NewController(maint, inter)
		if err != nil {
			maint.Shutdown()
			inter.Shutdown()
			t.Fatal(err)
		}
		defer ctl.Shutdown()
		ctls = append(ctls, ctl)
	}
	for p, ctl := range ctls {
		s := &setup{ctl: ctl, workers: 1}
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.send("in", 2, []int64{0, 1, int64(p), 10})
		s.advance("in", 2, frontier.At(1))
	}
	for p, ctl := range ctls {
		cp := dataflow.NewCapture(1)
		if err := ctl.Send(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)}); err != nil {
			t.Fatal(err)
		}
		if err := cp.WaitPassed(ctx, 0); err != nil {
			t.Fatalf("pair %d: %v", p, err)
		}
		want := map[string]int64{fmt.Sprint([]int64{int64(p), 10}): 1}
		if got := captured(cp, 0); !maps.Equal(got, want) {
			t.Fatalf("pair %d reads %v, want %v", p, got, want)
		}
		if err := ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Err(); err != nil {
			t.Fatalf("pair %d: %v", p, err)
		}
	}
}

// TestCreateThenCancelRace is the counterexample of §4.6 (I1b): create a
// query at as_of 0, the controller releases its hold and allows compaction
// to 1, and the publisher applies it before the reading runtime has even
// rendered the create. The peer hold reserved at publication keeps time 0
// readable: the query still sees the rows at 0.
func TestCreateThenCancelRace(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			ctx := testCtx(t)
			regs := []*share.Registry{}
			for range w {
				regs = append(regs, share.NewRegistry())
			}
			maint, err := New(Options{Role: Maintenance, Workers: w, Registries: regs})
			if err != nil {
				t.Fatal(err)
			}
			inter, err := New(Options{Role: Interactive, Workers: w, Registries: regs, Paused: true})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := NewController(maint, inter)
			if err != nil {
				t.Fatal(err)
			}
			defer ctl.Shutdown()
			s := &setup{ctl: ctl, workers: w}
			s.declare("in", 2)
			s.ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20}, []int64{0, 1, 3, 30})
			s.advance("in", 2, frontier.At(1))
			cp := dataflow.NewCapture(w)
			s.ctl.Send(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
			// The controller's hold on the index moves to 1, and later
			// updates retract every row at 1.
			s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
			s.send("in", 2, []int64{1, -1, 1, 10}, []int64{1, -1, 2, 20}, []int64{1, -1, 3, 30})
			s.advance("in", 2, frontier.At(5))
			// The publisher applies everything; the reader has rendered nothing.
			if err := maint.barrier(ctx, func(w *worker) {
				for w.env.Manager.Maintain(1 << 20) {
				}
			}); err != nil {
				t.Fatal(err)
			}
			for i, reg := range regs {
				since := reg.Lookup("idx", frontier.At(0)).Oks().Stats().Since
				if since != frontier.At(0) {
					t.Fatalf("worker %d: publisher compacted to %v with the reader behind", i, since)
				}
			}
			inter.Resume()
			if err := cp.WaitPassed(ctx, 0); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"[1 10]": 1, "[2 20]": 1, "[3 30]": 1}
			if got := captured(cp, 0); !maps.Equal(got, want) {
				t.Fatalf("rows at 0: %v, want %v", got, want)
			}
			if err := ctl.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDropReleasesEverything: dropping every dataflow and index returns the
// runtimes to no holds and no registry slots, Shutdown leaves no goroutine
// beyond those before, and the traces can be collected.
func TestDropReleasesEverything(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				before := goruntime.NumGoroutine()
				s := newSetup(t, mode, w)
				ctx := testCtx(t)
				s.declare("in", 2)
				s.ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.sendEpochs("in")
				cps := make([]*dataflow.Capture, 3)
				for i := range cps {
					cps[i] = dataflow.NewCapture(w)
					s.ctl.Send(CreateDataflow{Desc: readDesc(fmt.Sprintf("q%d", i), "idx", 2, frontier.Empty(), cps[i])})
				}
				for _, cp := range cps {
					if err := cp.WaitPassed(ctx, 4); err != nil {
						t.Fatal(err)
					}
				}
				// Take weak pointers to the index's trace storage.
				var weaks []weak.Pointer[share.Spine]
				var mu gosync.Mutex
				var regs []*share.Registry
				for _, r := range s.rts {
					regs = append(regs, r.opts.Registries...)
					if err := r.barrier(ctx, func(wk *worker) {
						if b, ok := wk.env.Manager.Get("idx"); ok && !b.IsPeer() {
							sp := b.Oks.(*trace.Handle).State().Storage().(*share.Spine)
							mu.Lock()
							weaks = append(weaks, weak.Make(sp))
							mu.Unlock()
						}
					}); err != nil {
						t.Fatal(err)
					}
				}
				if len(weaks) != w {
					t.Fatalf("found %d local traces, want %d", len(weaks), w)
				}
				for i := range cps {
					s.ctl.Send(DropDataflow{ID: fmt.Sprintf("q%d", i)})
				}
				s.ctl.Send(DropDataflow{ID: "maintain idx"})
				if err := s.ctl.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				for _, r := range s.rts {
					st, err := r.Stats(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if st.InputHistory = 0; st != (Stats{}) { // the input's history stays
						t.Fatalf("%v runtime after drops: %+v", r.Role(), st)
					}
				}
				for i, g := range regs {
					if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
						t.Fatalf("registry %d after drops: %+v", i, st)
					}
				}
				s.ctl.Shutdown()
				deadline := time.Now().Add(5 * time.Second)
				for {
					goruntime.GC()
					alive := 0
					for _, wp := range weaks {
						if wp.Value() != nil {
							alive++
						}
					}
					n := goruntime.NumGoroutine()
					if alive == 0 && n <= before {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("after shutdown: %d traces alive, %d goroutines (before: %d)", alive, n, before)
					}
					time.Sleep(5 * time.Millisecond)
				}
			})
		}
	}
}

// seed replays a randomized runtime test: go test ./core/runtime -run
// TestRandomTwoRuntime -seed N. Zero draws a fresh seed, which the test
// logs.
var seed = flag.Uint64("seed", 0, "seed of the randomized runtime tests (0: draw one and log it)")

// testSeed returns -seed, or a fresh seed, and logs it with how to replay.
func testSeed(t *testing.T) uint64 {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -run '%s' -seed %d)", s, t.Name(), s)
	return s
}

// TestRandomTwoRuntime interleaves random commands — input, frontier
// advances, queries at random as_of and until (re-using the ids of dropped
// queries), compaction of the index, drops, and dropping the index and
// creating a new incarnation of it at the same or another as_of — against a
// Solo runtime and a Maintenance/Interactive pair in which one runtime
// repeatedly falls behind the command stream, and checks every query
// against the model at every time it must be correct.
func TestRandomTwoRuntime(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			name := "none"
			if lag != Solo {
				name = lag.String()
			}
			t.Run(fmt.Sprintf("workers=%d/lag=%s", w, name), func(t *testing.T) {
				t.Parallel()
				runRandom(t, testSeed(t), w, lag)
			})
		}
	}
}

// gate stops every worker of r at this point of its command stream until
// the returned function is called.
func gate(r *Runtime) (release func()) {
	ch := make(chan struct{})
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) { <-ch }}})
	}
	return func() { close(ch) }
}

func runRandom(t *testing.T, seed uint64, w int, lag Role) {
	ctx := testCtx(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	solo := newSetup(t, "solo", w)
	pair := newSetup(t, "pair", w)
	both := []*setup{solo, pair}
	var release func() // the lagging runtime's gate, while it lags
	defer func() {
		if release != nil {
			release()
		}
	}()
	for _, s := range both {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
	}
	type query struct {
		id     string
		asOf   uint64
		until  frontier.Frontier
		cps    []*dataflow.Capture
		live   bool
		orphan bool // its index incarnation was dropped: it passes what it passes
	}
	var rows [][]int64
	var queries []*query
	var free []string // ids of dropped queries
	// wantErrs are the errors the commands must cause, in order: one for
	// each live query whose index incarnation is dropped.
	var wantErrs []string
	upper, since := uint64(0), uint64(0)
	for range 150 {
		switch k := rng.IntN(13); {
		case k < 4: // input at the current time
			var batch [][]int64
			for range 1 + rng.IntN(4) {
				batch = append(batch, []int64{int64(upper), []int64{1, 1, -1}[rng.IntN(3)], rng.Int64N(4), rng.Int64N(3)})
			}
			rows = append(rows, batch...)
			for _, s := range both {
				s.send("in", 2, batch...)
			}
		case k < 6:
			upper += uint64(1 + rng.IntN(2))
			for _, s := range both {
				s.advance("in", 2, frontier.At(upper))
			}
		case k < 8: // a query at an as_of the index still holds
			q := &query{id: fmt.Sprintf("q%d", len(queries)), asOf: since + uint64(rng.IntN(int(upper-min(upper, since))+3)), until: frontier.Empty(), live: true}
			if len(free) > 0 && rng.IntN(2) == 0 {
				q.id, free = free[len(free)-1], free[:len(free)-1]
			}
			if rng.IntN(2) == 0 {
				q.until = frontier.At(q.asOf + 1 + uint64(rng.IntN(6)))
			}
			for _, s := range both {
				cp := dataflow.NewCapture(w)
				q.cps = append(q.cps, cp)
				s.must(CreateDataflow{Desc: readDesc(q.id, "idx", q.asOf, q.until, cp)})
			}
			queries = append(queries, q)
		case k < 9 && upper > since: // the controller's hold moves
			since += uint64(rng.IntN(int(upper-since) + 1))
			for _, s := range both {
				s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(since)})
			}
		case k < 10: // drop a random query
			if len(queries) == 0 {
				continue
			}
			q := queries[rng.IntN(len(queries))]
			if !q.live {
				continue
			}
			q.live = false
			free = append(free, q.id)
			for _, s := range both {
				s.must(DropDataflow{ID: q.id})
			}
		case k < 11: // a new incarnation of the index, at the same as_of or another
			asOf := since
			if rng.IntN(2) == 0 {
				asOf = uint64(rng.IntN(int(upper) + 2))
			}
			// Each live query not yet told is told now, once
			// (ErrIndexDropped), in Solo and the pair alike.
			var told []string
			for _, q := range queries {
				if q.live && !q.orphan {
					told = append(told, fmt.Sprintf("dataflow %s: index %q, which it imports, goes with dataflow maintain idx: %v", q.id, "idx", ErrIndexDropped))
				}
				q.orphan = q.orphan || q.live
			}
			slices.Sort(told)
			wantErrs = append(wantErrs, told...)
			for _, s := range both {
				s.must(DropDataflow{ID: "maintain idx"})
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, asOf, nil)})
			}
			since = asOf
		default: // the lagging runtime falls behind, or catches up
			if lag == Solo {
				continue
			}
			if release == nil {
				release = gate(pair.role(lag))
			} else {
				release()
				release = nil
			}
		}
	}
	if release != nil {
		release()
		release = nil
	}
	upper++
	for _, s := range both {
		s.advance("in", 2, frontier.At(upper))
	}
	for _, s := range both {
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, q := range queries {
		if !q.live {
			continue
		}
		last := upper - 1
		if u, ok := q.until.Time(); ok {
			last = min(last, u-1)
		}
		if last < q.asOf {
			continue
		}
		for j, cp := range q.cps {
			last := last
			if q.orphan {
				// An ended incarnation's queries pass what was published
				// before its end: whatever passed must be right.
				f, ok := cp.Frontier().Time()
				if !ok {
					f = last + 1
				}
				if f == 0 {
					continue
				}
				last = min(last, f-1)
			} else if err := cp.WaitPassed(ctx, last); err != nil {
				t.Fatalf("seed %d: query %d in %s: %v", seed, i, both[j].mode, err)
			}
			for tm := q.asOf; tm <= last; tm++ {
				if got, want := captured(cp, tm), model(rows, tm); !maps.Equal(got, want) {
					t.Fatalf("seed %d: query %d %q (as_of %d, until %v, orphan %v) in %s at %d: %v, want %v", seed, i, q.id, q.asOf, q.until, q.orphan, both[j].mode, tm, got, want)
				}
			}
		}
	}
	for _, s := range both {
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range s.ctl.TakeErrors() {
			got = append(got, e.Err.Error())
		}
		if !slices.Equal(got, wantErrs) {
			t.Fatalf("seed %d: %s: errors\n%s\nwant\n%s", seed, s.mode, strings.Join(got, "\n"), strings.Join(wantErrs, "\n"))
		}
	}
}

// TestImportBeyondAsOfIsAnError: importing an index whose since is beyond
// the dataflow's as_of is an error naming the index and the times, never
// coalesced data.
func TestImportBeyondAsOfIsAnError(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		s.declare("in", 2)
		s.ctl.Send(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(10))
		s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(5)})
		cp := dataflow.NewCapture(s.workers)
		s.ctl.Send(CreateDataflow{Desc: readDesc("q", "idx", 3, frontier.Empty(), cp)})
		if err := s.ctl.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		err := s.ctl.Err()
		if !errors.Is(err, dataflow.ErrCompactedBeyondAsOf) {
			t.Fatalf("err = %v, want ErrCompactedBeyondAsOf", err)
		}
		for _, frag := range []string{`"idx"`, "since {5}", "as_of {3}"} {
			if !strings.Contains(err.Error(), frag) {
				t.Fatalf("error %q does not name %s", err, frag)
			}
		}
		s.ctl.TakeErrors() // handled: cleanup does not report it
	})
}

// TestControllerChecksPairing: runtimes that share registries must run the
// same number of workers.
func TestControllerChecksPairing(t *testing.T) {
	regs := []*share.Registry{share.NewRegistry(), share.NewRegistry()}
	m, err := New(Options{Role: Maintenance, Workers: 2, Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	defer i.Shutdown()
	if _, err := NewController(m, i); err == nil {
		t.Fatal("controller accepted runtimes with 2 and 1 workers")
	}
	if _, err := New(Options{Role: Interactive, Workers: 2, Registries: regs[:1]}); err == nil {
		t.Fatal("an Interactive runtime without a registry per worker was accepted")
	}
}
