package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// Shutdown called twice at once, from two goroutines, while callers wait
// on Sync, SyncRole and on a query's capture and an index's probe that
// have not passed the time they wait for (the runtime that would move
// them is held behind): every wait returns, with an error wrapping
// ErrShutdown, whatever the order in which the waits and the Shutdowns
// start, and a probe already past its time still answers nil. Solo and the
// pair alike. Before, a probe's wait took no notice of the Shutdown and
// waited until its context ended: with context.Background, forever.
func TestWaitsReturnErrShutdownWhenShutDownTwiceAtOnce(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, lag := range []Role{Solo, Maintenance, Interactive} {
				if mode == "solo" && lag != Solo {
					continue
				}
				t.Run(fmt.Sprintf("%s/workers=%d/lag=%v", mode, w, lag), func(t *testing.T) {
					t.Parallel()
					s := newSetup(t, mode, w)
					idx, cp := indexAndQueryAtZero(t, s, w)
					// The runtime that moves the waits' probes is held:
					// none can pass 5 before Shutdown.
					held := s.rts[0]
					if lag != Solo {
						held = s.role(lag)
					} else if mode == "pair" {
						held = s.role(Interactive)
					}
					release := stoppableGate(held)
					defer release()
					s.advance("in", 2, frontier.At(10))
					// A deadline only a wait that missed the Shutdown
					// reaches: it then fails with the context's error.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					waits := map[string]func() error{
						"sync":           func() error { return s.ctl.Sync(ctx) },
						"capture":        func() error { return cp.WaitPassed(ctx, 5) },
						"capture passed": func() error { return cp.WaitPassed(ctx, 0) },
						"probe passed":   func() error { return idx.WaitPassed(ctx, 0) },
						"syncrole":       func() error { return s.ctl.SyncRole(ctx, held.Role()) },
					}
					if held.Role() != Interactive {
						// The index's probe moves with the held runtime.
						waits["index"] = func() error { return idx.WaitPassed(ctx, 5) }
					}
					var mu gosync.Mutex
					got := map[string]error{}
					var wg gosync.WaitGroup
					for name, wait := range waits {
						wg.Add(1)
						go func() {
							defer wg.Done()
							err := wait()
							mu.Lock()
							got[name] = err
							mu.Unlock()
						}()
					}
					for range 2 {
						wg.Add(1)
						go func() { defer wg.Done(); s.rts[len(s.rts)-1].Shutdown() }()
					}
					wg.Wait()
					for name, err := range got {
						switch {
						case name == "capture passed" || name == "probe passed":
							if err != nil {
								t.Errorf("%s: %v, want nil", name, err)
							}
						case !errors.Is(err, ErrShutdown):
							t.Errorf("%s: %v, want ErrShutdown", name, err)
						}
					}
					if err := s.ctl.Sync(testCtx(t)); !errors.Is(err, ErrShutdown) {
						t.Errorf("Sync after Shutdown: %v, want ErrShutdown", err)
					}
					if err := cp.WaitPassed(testCtx(t), 5); !errors.Is(err, ErrShutdown) {
						t.Errorf("capture's wait after Shutdown: %v, want ErrShutdown", err)
					}
				})
			}
		}
	}
}

// indexAndQueryAtZero sends input "in" rows at time 0 and its frontier to
// 1, creates index idx on it (dataflow "maintain idx", probed by idx) and
// query q capturing it from time 0 (cp), and waits until both have passed
// 0.
func indexAndQueryAtZero(t *testing.T, s *setup, w int) (idx *dataflow.Probe, cp *dataflow.Capture) {
	t.Helper()
	idx = dataflow.NewProbe(w)
	s.send("in", 2, []int64{0, 1, 5, 6})
	s.advance("in", 2, frontier.At(1))
	s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, idx)})
	cp = dataflow.NewCapture(w)
	s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
	for _, p := range []*dataflow.Probe{idx, &cp.Probe} {
		if err := p.WaitPassed(testCtx(t), 0); err != nil {
			t.Fatal(err)
		}
	}
	return idx, cp
}

// stoppableGate is gate, but a worker held at it leaves once its runtime
// is shut down (Shutdown waits for the workers, which a gate only its
// release opens would keep), and it returns once every worker of r is held
// there: nothing sent after it moves r's dataflows until the release.
func stoppableGate(r *Runtime) (release func()) {
	ch := make(chan struct{})
	var held gosync.WaitGroup
	held.Add(len(r.workers))
	for _, w := range r.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) {
			held.Done()
			select {
			case <-ch:
			case <-r.stop:
			}
		}}})
	}
	held.Wait()
	var once gosync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// An index and a query importing it dropped and created again under the
// same ids, over and over, while another goroutine sends input rounds and
// advances the input's frontier, the index compacted to where the next
// query starts, and every third incarnation's query imports an index
// whose drop comes right after its create, the Interactive runtime held
// behind both (so it applies the import of an index the Maintenance
// runtime has already dropped and freed): Solo and the pair report the
// same errors — one ErrIndexDropped for each query live at its index's
// drop, whatever the input rounds in between — and every query's answer,
// at every time it passed, is the model's.
func TestIndexAndQueryRecreatedDuringInputRounds(t *testing.T) {
	const rounds, incarnations = 60, 12
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				s := newSetup(t, mode, w)
				s.declare("in", 2)
				var rows [][]int64
				for tm := range rounds {
					rows = append(rows, []int64{int64(tm), 1, int64(tm % 5), int64(tm)}, []int64{int64(tm), -1, int64((tm + 3) % 5), int64(tm - 3)})
				}
				rows = slices.DeleteFunc(rows, func(r []int64) bool { return r[0] < 3 && r[1] < 0 })
				inputDone := make(chan struct{})
				go func() {
					defer close(inputDone)
					for tm := range rounds {
						c := dataflow.NewChunk(2, 2)
						for _, r := range rows {
							if r[0] == int64(tm) {
								c.Push(r[2:], uint64(r[0]), r[1])
							}
						}
						if err := s.ctl.SendAll(Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(uint64(tm + 1))}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
				type query struct {
					asOf uint64
					cp   *dataflow.Capture
				}
				var queries []query
				var want []string
				told := fmt.Sprintf("dataflow q: index %q, which it imports, goes with dataflow maintain idx: %v", "idx", ErrIndexDropped)
				for k := range incarnations {
					asOf := uint64(k)
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(asOf)})
					var release func()
					if k%3 == 2 && mode == "pair" {
						release = stoppableGate(s.role(Interactive))
					}
					cp := dataflow.NewCapture(w)
					queries = append(queries, query{asOf, cp})
					s.must(CreateDataflow{Desc: readDesc("q", "idx", asOf, frontier.Empty(), cp)})
					if k%3 == 0 {
						s.must(DropDataflow{ID: "q"})
						s.must(DropDataflow{ID: "maintain idx"})
					} else {
						s.must(DropDataflow{ID: "maintain idx"})
						want = append(want, told)
						s.must(DropDataflow{ID: "q"})
					}
					if release != nil {
						release()
					}
				}
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				last := dataflow.NewCapture(w)
				queries = append(queries, query{0, last})
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), last)})
				<-inputDone
				if err := last.WaitPassed(ctx, rounds-1); err != nil {
					t.Fatal(err)
				}
				if got := s.syncedErrors(t); !slices.Equal(got, want) {
					t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				for i, q := range queries {
					upto := uint64(rounds - 1)
					if f, ok := q.cp.Frontier().Time(); ok {
						if f == 0 {
							continue
						}
						upto = min(upto, f-1)
					}
					for tm := q.asOf; tm <= upto; tm++ {
						if got, want := captured(q.cp, tm), model(rows, tm); !maps.Equal(got, want) {
							t.Fatalf("query %d (as_of %d) at %d: %v, want %v", i, q.asOf, tm, got, want)
						}
					}
				}
			})
		}
	}
}

// Bad chunks sent while either runtime of the pair lags — nil, of the
// wrong arity, the zero Chunk, columns that disagree, a row behind the
// frontier, one refused in the middle of a SendAll — are each refused by
// Send with an error naming the input and the fault, and reach no
// runtime; empty chunks are accepted and change nothing, not even a
// NoHistory input's "first update", so a reader created after them is
// built. The runtimes go on as if the refused chunks were never sent:
// Solo and the pair give the same answers, Send errors and errors.
func TestBadAndEmptyChunksLeaveTheRuntimesUsable(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, sent *[]string) string {
				s.must(CreateInput{Name: "nh", Arity: 2, NoHistory: true})
				s.declare("in", 2)
				s.advance("in", 2, frontier.At(2))
				behind := dataflow.NewChunk(2, 2)
				behind.Push([]int64{4, 40}, 2, 1)
				behind.Push([]int64{5, 50}, 1, 1)
				narrow := dataflow.NewChunk(1, 1)
				narrow.Push([]int64{4}, 3, 1)
				good := dataflow.NewChunk(2, 1)
				good.Push([]int64{6, 60}, 2, 1)
				later := dataflow.NewChunk(2, 1)
				later.Push([]int64{7, 70}, 3, 1)
				for _, cmd := range []Command{
					Input{Name: "in", Chunk: nil},
					Input{Name: "in", Chunk: &dataflow.Chunk{}},
					Input{Name: "in", Chunk: narrow},
					Input{Name: "in", Chunk: behind},
					Input{Name: "in", Chunk: &dataflow.Chunk{Arity: 2, Rows: []int64{1, 2}}},
					Input{Name: "in", Chunk: dataflow.NewChunk(2, 0)},
					Input{Name: "in", Chunk: &dataflow.Chunk{Arity: 2}},
					Input{Name: "nh", Chunk: dataflow.NewChunk(2, 0)},
					Input{Name: "nh", Chunk: &dataflow.Chunk{Arity: 2}},
				} {
					*sent = append(*sent, s.sendErr(cmd))
				}
				err := s.ctl.SendAll(Input{Name: "in", Chunk: good}, Input{Name: "in", Chunk: behind}, Input{Name: "in", Chunk: later})
				*sent = append(*sent, fmt.Sprint(err))
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: indexDesc("nhidx", "nh", 2, []int{0}, 0, nil)})
				nh := dataflow.NewChunk(2, 1)
				nh.Push([]int64{8, 80}, 2, 1)
				s.must(Input{Name: "nh", Chunk: nh})
				s.must(Input{Name: "in", Chunk: later})
				s.advance("in", 2, frontier.At(4))
				s.must(AdvanceInput{Name: "nh", Frontier: frontier.At(4)})
				cp, cpnh := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 2, frontier.At(4), cp)})
				s.must(CreateDataflow{Desc: readDesc("qnh", "nhidx", 2, frontier.At(4), cpnh)})
				s.resume()
				return read(cp, 2) + " " + read(cp, 3) + " " + read(cpnh, 3)
			})
			want := outcome{
				answer: "map[[6 60]:1] map[[6 60]:1 [7 70]:1] map[[8 80]:1]",
				sent: []string{
					`runtime: input "in": Chunk is nil`,
					`runtime: input "in": Chunk.Arity 0, the input has arity 2`,
					`runtime: input "in": Chunk.Arity 1, the input has arity 2`,
					`runtime: input "in": Chunk row 1: time 1 is before the input frontier {2}`,
					`runtime: input "in": dataflow: chunk columns disagree: len(Rows) 2 at arity 2, len(Times) 0, len(Diffs) 0`,
					"", "", "", "",
					`runtime: input "in": Chunk row 1: time 1 is before the input frontier {2}`,
				},
			}
			for w, o := range outs {
				if fmt.Sprint(o) != fmt.Sprint(want) {
					t.Fatalf("workers=%d: %+v, want %+v", w, o, want)
				}
			}
		})
	}
}

// The Interactive runtime held behind for many rounds while the
// Maintenance runtime takes every round's input and compacts the index to
// each round's frontier, queries created before and during the lag (the
// later ones at the since the index had then): once the Interactive
// runtime catches up, every query is exact at every time from its as_of,
// in the pair as in Solo, so no hold the lagging reader needed was given
// up (a compaction past one would fold its times together and the model,
// which changes at every time, would tell). A query whose as_of the index
// compacted past before its create is an error, the same in both.
func TestLaggingReaderKeepsEveryTimeItNeeds(t *testing.T) {
	const rounds = 40
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				s := newSetup(t, mode, w)
				s.declare("in", 2)
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				type query struct {
					asOf uint64
					cp   *dataflow.Capture
				}
				var queries []query
				var rows [][]int64
				newQuery := func(asOf uint64) {
					cp := dataflow.NewCapture(w)
					queries = append(queries, query{asOf, cp})
					s.must(CreateDataflow{Desc: readDesc(fmt.Sprint("q", len(queries)), "idx", asOf, frontier.Empty(), cp)})
				}
				newQuery(0)
				var release func()
				for tm := range uint64(rounds) {
					switch {
					case tm == 5 && mode == "pair":
						release = stoppableGate(s.role(Interactive))
					case tm == 30 && release != nil:
						release()
						release = nil
					}
					r := []int64{int64(tm), 1, int64(tm % 7), int64(tm)}
					rows = append(rows, r)
					if tm%4 == 3 {
						rows = append(rows, []int64{int64(tm), -1, int64((tm - 3) % 7), int64(tm - 3)})
					}
					c := dataflow.NewChunk(2, 2)
					for _, r := range rows {
						if r[0] == int64(tm) {
							c.Push(r[2:], tm, r[1])
						}
					}
					s.must(Input{Name: "in", Chunk: c})
					s.advance("in", 2, frontier.At(tm+1))
					if tm%6 == 2 {
						newQuery(tm)
					}
					s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(tm + 1)})
				}
				cp := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: readDesc("late", "idx", 3, frontier.Empty(), cp)})
				if release != nil {
					release()
				}
				for i, q := range queries {
					if err := q.cp.WaitPassed(ctx, rounds-1); err != nil {
						t.Fatalf("query %d: %v", i, err)
					}
					for tm := q.asOf; tm < rounds; tm++ {
						if got, want := captured(q.cp, tm), model(rows, tm); !maps.Equal(got, want) {
							t.Fatalf("query %d (as_of %d) at %d: %v, want %v", i, q.asOf, tm, got, want)
						}
					}
				}
				want := []string{`dataflow late: index "idx": since {40}, as_of {3}: dataflow: index has been allowed to compact beyond the dataflow as_of`}
				if got := s.syncedErrors(t); !slices.Equal(got, want) {
					t.Fatalf("errors %q, want %q", got, want)
				}
			})
		}
	}
}

// Shutdown from two goroutines at once while a third sends input rounds
// and creates and drops a query, a fourth Syncs in a loop and a fifth
// waits on a capture for a time no round reaches: everything returns,
// every refusal and wait error is ErrShutdown, and neither Solo nor the
// pair reports an error for what the Shutdown discarded.
func TestShutdownTwiceDuringRoundsAndWaits(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				s := newSetup(t, mode, w)
				s.declare("in", 2)
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				cp := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
				s.advance("in", 2, frontier.At(1))
				if err := cp.WaitPassed(testCtx(t), 0); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				started := make(chan struct{})
				errs := make(chan error, 1000)
				var wg gosync.WaitGroup
				wg.Add(3)
				go func() {
					defer wg.Done()
					for tm := uint64(1); ; tm++ {
						if tm == 20 {
							close(started)
						}
						c := dataflow.NewChunk(2, 1)
						c.Push([]int64{int64(tm % 3), int64(tm)}, tm, 1)
						cmds := []Command{Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(tm + 1)}}
						if tm%5 == 0 {
							cmds = append(cmds, CreateDataflow{Desc: readDesc("r", "idx", 0, frontier.Empty(), dataflow.NewCapture(w))}, DropDataflow{ID: "r"})
						}
						if err := s.ctl.SendAll(cmds...); err != nil {
							errs <- err
							if tm < 20 {
								close(started)
							}
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					for {
						if err := s.ctl.Sync(ctx); err != nil {
							errs <- err
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					errs <- cp.WaitPassed(ctx, 1<<40)
				}()
				<-started
				var stops gosync.WaitGroup
				for k := range 2 {
					stops.Add(1)
					go func() { defer stops.Done(); s.rts[k%len(s.rts)].Shutdown() }()
				}
				stops.Wait()
				wg.Wait()
				close(errs)
				for err := range errs {
					if !errors.Is(err, ErrShutdown) {
						t.Errorf("%v, want ErrShutdown", err)
					}
				}
				if got := s.ctl.Errors(); len(got) != 0 {
					t.Errorf("errors after Shutdown: %v", got)
				}
			})
		}
	}
}

// An index dropped while a query's Build is importing it: the
// Interactive runtime's Build has imported the index and waits until the
// Maintenance runtime has applied the drop and freed its side, then
// finishes. The query is told once (ErrIndexDropped), as in Solo, where
// the drop comes after the Build; what it passed is the index's, and the
// next incarnation of the index and the query, under the same ids, is
// exact.
func TestIndexDroppedWhileItsImportIsBuilt(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				s := newSetup(t, mode, w)
				s.send("in", 2, []int64{0, 1, 1, 10}, []int64{1, 1, 2, 20})
				s.advance("in", 2, frontier.At(2))
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				imported := make(chan struct{}, w)
				proceed := make(chan struct{})
				cp := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: dataflow.Desc{
					ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						a, err := c.ImportIndex("idx")
						if err != nil {
							return err
						}
						imported <- struct{}{}
						<-proceed
						c.Capture(cp, a.Oks)
						return nil
					},
				}})
				s.must(DropDataflow{ID: "maintain idx"})
				for range w {
					<-imported
				}
				if mode == "pair" {
					if err := s.ctl.SyncRole(ctx, Maintenance); err != nil {
						t.Fatal(err)
					}
				}
				close(proceed)
				want := []string{fmt.Sprintf("dataflow q: index %q, which it imports, goes with dataflow maintain idx: %v", "idx", ErrIndexDropped)}
				if got := s.syncedErrors(t); !slices.Equal(got, want) {
					t.Fatalf("errors %q, want %q", got, want)
				}
				if f, ok := cp.Frontier().Time(); !ok || f > 0 {
					for tm := uint64(0); tm < 2 && (!ok || tm < f); tm++ {
						if got, want := captured(cp, tm), model([][]int64{{0, 1, 1, 10}, {1, 1, 2, 20}}, tm); !maps.Equal(got, want) {
							t.Fatalf("dropped index's query at %d: %v, want %v", tm, got, want)
						}
					}
				}
				s.must(DropDataflow{ID: "q"})
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				again := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), again)})
				if err := again.WaitPassed(ctx, 1); err != nil {
					t.Fatal(err)
				}
				if got, want := captured(again, 1), model([][]int64{{0, 1, 1, 10}, {1, 1, 2, 20}}, 1); !maps.Equal(got, want) {
					t.Fatalf("re-created query at 1: %v, want %v", got, want)
				}
			})
		}
	}
}

// A wait on a query's capture or an index's probe for a time not passed
// when the dataflow feeding it is dropped (DropDataflow) returns an error
// wrapping dataflow.ErrProbeDropped, a wait in progress at the drop too:
// nothing moves them again. Before, it waited until its context ended
// (forever with context.Background). A time passed before the drop is
// still nil. Solo and the pair alike, one and two workers.
func TestWaitsOnADroppedDataflowReturnErrProbeDropped(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				s := newSetup(t, mode, w)
				idx, cp := indexAndQueryAtZero(t, s, w)
				// A deadline only a wait that missed the drop reaches.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- cp.WaitPassed(ctx, 5) }()
				s.must(DropDataflow{ID: "q"})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				if err := <-done; !errors.Is(err, dataflow.ErrProbeDropped) {
					t.Fatalf("a capture's wait in progress at its query's drop: %v; want ErrProbeDropped", err)
				}
				if err := cp.WaitPassed(ctx, 0); err != nil {
					t.Errorf("a capture's wait for a time passed before the drop: %v; want nil", err)
				}
				// The index goes on: its probe passes times as before.
				s.advance("in", 2, frontier.At(6))
				if err := idx.WaitPassed(ctx, 5); err != nil {
					t.Fatalf("the index's probe, its dataflow live: %v", err)
				}
				s.must(DropDataflow{ID: "maintain idx"})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				if err := idx.WaitPassed(ctx, 7); !errors.Is(err, dataflow.ErrProbeDropped) {
					t.Errorf("the index's probe after its drop: %v; want ErrProbeDropped", err)
				}
				// The runtime's own stop, after the drop, changes nothing.
				s.rts[len(s.rts)-1].Shutdown()
				if err := cp.WaitPassed(ctx, 5); !errors.Is(err, dataflow.ErrProbeDropped) {
					t.Errorf("after Shutdown, a capture dropped before it: %v; want ErrProbeDropped", err)
				}
			})
		}
	}
}

// Shutdown marks its runtimes stopping before it signals them, and a
// worker busy then (applying a command, stepping) sees the mark, exits and
// drops its dataflows before the signal: a wait on their probes still
// ends with ErrShutdown, as the Shutdown came before the drops, never
// with dataflow.ErrProbeDropped. The mark alone is given here, and the
// workers woken to see it, as a busy worker would.
func TestAWorkerThatSeesShutdownFirstKeepsTheWaitsErrShutdown(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				t.Parallel()
				s := newSetup(t, mode, w)
				idx, cp := indexAndQueryAtZero(t, s, w)
				// A deadline only a wait that missed the stop reaches.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done := make(chan error, 2)
				go func() { done <- idx.WaitPassed(ctx, 5) }()
				go func() { done <- cp.WaitPassed(ctx, 5) }()
				markStopping(s.rts)
				for _, r := range s.rts {
					for _, wk := range r.workers {
						wk.signal()
					}
				}
				exited := make(chan struct{})
				go func() {
					for _, r := range s.rts {
						r.wg.Wait()
					}
					close(exited)
				}()
				select {
				case <-exited:
				case <-ctx.Done():
					t.Fatal("the workers did not exit on the mark")
				}
				for range 2 {
					if err := <-done; !errors.Is(err, ErrShutdown) {
						t.Errorf("a wait on a live dataflow's probe at Shutdown: %v; want ErrShutdown", err)
					}
				}
			})
		}
	}
}
