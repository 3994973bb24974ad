package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// The life of a pair's registries (R2, R4): a registry side serves one live
// runtime at a time, Shutdown leaves no slot, hold or verdict behind
// whichever runtime is behind, and the registries then serve the next pair.

// newRegs returns w fresh registries.
func newRegs(w int) []*share.Registry {
	regs := make([]*share.Registry, w)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	return regs
}

// pairOn starts a Maintenance and an Interactive runtime on regs (lag
// starts Paused) and a controller over them, shut down at the test's end.
func pairOn(t *testing.T, regs []*share.Registry, lag Role) (m, i *Runtime, ctl *Controller) {
	t.Helper()
	m, err := New(Options{Role: Maintenance, Workers: len(regs), Registries: regs, Paused: lag == Maintenance})
	if err != nil {
		t.Fatal(err)
	}
	i, err = New(Options{Role: Interactive, Workers: len(regs), Registries: regs, Paused: lag == Interactive})
	if err != nil {
		m.Shutdown()
		t.Fatal(err)
	}
	if ctl, err = NewController(m, i); err != nil {
		m.Shutdown()
		i.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(ctl.Shutdown)
	return m, i, ctl
}

// regStats sums the registries' metrics.
func regStats(regs []*share.Registry) share.RegistryStats {
	var sum share.RegistryStats
	for _, g := range regs {
		st := g.Stats()
		sum.Slots += st.Slots
		sum.Reserved += st.Reserved
		sum.Settled += st.Settled
		sum.Awaited += st.Awaited
	}
	return sum
}

// publishRow declares input "x", maintains it as index "ix" (probed) and
// sends one row (1, v) at time 0, then advances to 1, and waits until the
// Maintenance runtime has published it.
func publishRow(t *testing.T, ctl *Controller, v int64) {
	t.Helper()
	probe := dataflow.NewProbe(len(ctl.rts[0].workers))
	c := dataflow.NewChunk(2, 1)
	c.Push([]int64{1, v}, 0, 1)
	sendAll(t, ctl,
		CreateInput{Name: "x", Arity: 2},
		CreateDataflow{Desc: indexDesc("ix", "x", 2, []int{0}, 0, probe)},
		Input{Name: "x", Chunk: c},
		AdvanceInput{Name: "x", Frontier: frontier.At(1)})
	if err := probe.WaitPassed(testCtx(t), 0); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownWithTheInteractiveRuntimeBehindLeavesTheRegistriesEmpty(t *testing.T) {
	for _, w := range agreeWorkers {
		for _, behind := range []string{"paused", "in a build"} {
			t.Run(fmt.Sprintf("workers=%d/%s", w, behind), func(t *testing.T) {
				regs := newRegs(w)
				lag := Role(-1)
				if behind == "paused" {
					lag = Interactive
				}
				_, _, ctl := pairOn(t, regs, lag)
				release := make(chan struct{})
				if behind == "in a build" {
					started := make(chan struct{})
					sendAll(t, ctl, CreateDataflow{Desc: blockingDesc("slow", started, release)})
					<-started
				}
				publishRow(t, ctl, 100)
				// The publisher settled its export for a reader that has not
				// collected it: a slot, its reserved peer hold and a verdict.
				if st := regStats(regs); st != (share.RegistryStats{Slots: w, Reserved: w, Settled: w}) {
					t.Fatalf("registries while the reader is behind: %+v, want %d of each", st, w)
				}
				done := make(chan struct{})
				go func() { ctl.Shutdown(); close(done) }()
				close(release)
				<-done
				if st := regStats(regs); st != (share.RegistryStats{}) {
					t.Fatalf("registries after Shutdown: %+v, want empty (R2)", st)
				}
			})
		}
	}
}

// A pair shut down while its reader was behind leaves nothing that the next
// pair on the same registries, whose controller numbers its commands from 1
// again, could take for its own: the next pair publishes and reads its rows.
func TestRegistriesServeOnePairAfterAnother(t *testing.T) {
	for _, w := range agreeWorkers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			regs := newRegs(w)
			_, _, first := pairOn(t, regs, Interactive)
			publishRow(t, first, 100)
			first.Shutdown()
			_, _, ctl := pairOn(t, regs, -1)
			publishRow(t, ctl, 200)
			cp := dataflow.NewCapture(w)
			sendAll(t, ctl, CreateDataflow{Desc: readDesc("q", "ix", 0, frontier.At(1), cp)})
			if got := read(cp, 0); got != "map[[1 200]:1]" {
				t.Errorf("second pair reads %s, want its own row map[[1 200]:1]", got)
			}
			if err := ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if err := ctl.Err(); err != nil {
				t.Errorf("second pair: %v", err)
			}
		})
	}
}

// leaveAlone stops r's workers and waits for them to exit, leaving the
// other runtime of its pair running: Shutdown of a pair that a controller
// joins stops both, but their workers exit each in its own time (one may
// be inside a Build, or a publisher's settling a create), and the
// registries must serve whichever order they leave in. Holding the other
// runtime live shows that order at its widest.
func leaveAlone(r *Runtime) {
	r.signalStop()
	r.wg.Wait()
}

// A reader that left first leaves its publisher free to compact: a
// publication after it left reserves no peer hold and its verdict keeps
// no slot. (The controller refuses commands once a runtime is shut down,
// so the publisher applies commands it had queued before.)
func TestAReaderShutDownFirstHoldsThePublisherBackNoMore(t *testing.T) {
	regs := newRegs(1)
	m, i, ctl := pairOn(t, regs, Maintenance)
	probe := dataflow.NewProbe(1)
	c := dataflow.NewChunk(2, 2)
	c.Push([]int64{1, 1}, 0, 1)
	c.Push([]int64{2, 2}, 1, 1)
	sendAll(t, ctl, CreateInput{Name: "x", Arity: 2},
		CreateDataflow{Desc: indexDesc("ix", "x", 2, []int{0}, 0, probe)},
		CreateDataflow{Desc: indexDesc("iy", "x", 2, []int{0}, 0, nil)},
		Input{Name: "x", Chunk: c}, AdvanceInput{Name: "x", Frontier: frontier.At(5)},
		AllowCompaction{ID: "ix", Frontier: frontier.At(4)}, AllowCompaction{ID: "iy", Frontier: frontier.At(4)})
	// The Interactive worker waits for the paused publisher's first verdict.
	for regs[0].Stats().Awaited == 0 {
		time.Sleep(time.Millisecond)
	}
	leaveAlone(i)
	if err := ctl.Send(CreateInput{Name: "z", Arity: 1}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Send with the reader shut down: %v, want ErrShutdown", err)
	}
	m.Resume()
	if err := probe.WaitPassed(testCtx(t), 4); err != nil {
		t.Fatal(err)
	}
	if err := m.barrier(testCtx(t), func(w *worker) {
		for w.env.Manager.Maintain(1 << 20) {
		}
	}); err != nil {
		t.Fatal(err)
	}
	if st := regStats(regs); st != (share.RegistryStats{Slots: 2}) {
		t.Fatalf("registries: %+v, want two publications, nothing reserved, settled or awaited", st)
	}
	for _, id := range []string{"ix", "iy"} {
		slot := regs[0].Lookup(id, frontier.At(0))
		if slot == nil {
			t.Fatalf("%s: no slot", id)
		}
		if got := slot.Oks().Stats().Since; got != frontier.At(4) {
			t.Errorf("%s: since %v, want {4}: no peer hold of the gone reader holds it", id, got)
		}
	}
	m.Shutdown()
	if st := regStats(regs); st != (share.RegistryStats{}) {
		t.Fatalf("registries after both left: %+v, want empty", st)
	}
}

// A publisher that left before it applied a create leaves the reader
// waiting for nothing, whether the reader was waiting for the verdict
// already or reaches the create afterwards: the wait ends (abandoned), so
// its worker goes on with its commands (see leaveAlone).
func TestAPublisherShutDownFirstLeavesNoReaderWaiting(t *testing.T) {
	for _, reader := range []string{"waiting", "arriving later"} {
		t.Run(reader, func(t *testing.T) {
			regs := newRegs(1)
			m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs, Paused: true})
			if err != nil {
				t.Fatal(err)
			}
			i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs, Paused: reader == "arriving later"})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := NewController(m, i)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(ctl.Shutdown)
			sendAll(t, ctl, CreateInput{Name: "x", Arity: 2}, CreateDataflow{Desc: indexDesc("ix", "x", 2, []int{0}, 0, nil)})
			if reader == "waiting" {
				// Until the Interactive worker waits for the paused
				// publisher's verdict.
				for regs[0].Stats().Awaited == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			leaveAlone(m)
			i.Resume()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := i.Stats(ctx); err != nil {
				t.Fatalf("Interactive runtime after its publisher left: %v (its worker still waits for a verdict)", err)
			}
			i.Shutdown()
			if st := regStats(regs); st != (share.RegistryStats{}) {
				t.Fatalf("registries after both left: %+v, want empty", st)
			}
		})
	}
}

// A registry side takes one live runtime: a second Maintenance or
// Interactive runtime on the same registries is refused until the first
// shuts down, and a refused runtime binds none of them.
func TestARegistrySideTakesOneLiveRuntime(t *testing.T) {
	regs := newRegs(2)
	for _, role := range []Role{Maintenance, Interactive} {
		t.Run(role.String(), func(t *testing.T) {
			first, err := New(Options{Role: role, Workers: 2, Registries: regs})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := New(Options{Role: role, Workers: 2, Registries: regs}); !errors.Is(err, share.ErrSideBound) {
				t.Fatalf("second %v runtime on the same registries: %v, want share.ErrSideBound", role, err)
			}
			// Bound to the second registry only: refused, and the first
			// registry is left as it was.
			other := []*share.Registry{share.NewRegistry(), regs[1]}
			if _, err := New(Options{Role: role, Workers: 2, Registries: other}); !errors.Is(err, share.ErrSideBound) {
				t.Fatalf("%v runtime on a bound registry: %v, want share.ErrSideBound", role, err)
			}
			if err := other[0].Bind(map[Role]share.Side{Maintenance: share.PublisherSide, Interactive: share.ReaderSide}[role]); err != nil {
				t.Fatalf("a refused runtime left registry 0 bound: %v", err)
			}
			first.Shutdown()
			again, err := New(Options{Role: role, Workers: 2, Registries: regs})
			if err != nil {
				t.Fatalf("%v runtime after the first shut down: %v", role, err)
			}
			again.Shutdown()
		})
	}
	// The same registry twice in one runtime is two workers on one side.
	g := share.NewRegistry()
	if _, err := New(Options{Role: Maintenance, Workers: 2, Registries: []*share.Registry{g, g}}); !errors.Is(err, share.ErrSideBound) {
		t.Fatalf("one registry for two workers: %v, want share.ErrSideBound", err)
	}
}

func TestNewControllerTakesOneSoloOrOnePair(t *testing.T) {
	regs := newRegs(1)
	start := func(role Role, regs []*share.Registry) *Runtime {
		r, err := New(Options{Role: role, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Shutdown)
		return r
	}
	m, i := start(Maintenance, regs), start(Interactive, regs)
	s1, s2 := start(Solo, nil), start(Solo, nil)
	for _, tc := range []struct {
		name string
		rts  []*Runtime
	}{
		{"none", nil},
		{"interactive alone", []*Runtime{i}},
		{"maintenance alone", []*Runtime{m}},
		{"two solo", []*Runtime{s1, s2}},
		{"solo and a pair", []*Runtime{s1, m, i}},
		{"a nil runtime", []*Runtime{nil}},
	} {
		if _, err := NewController(tc.rts...); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// The refusals took no runtime: each still takes its controller.
	if _, err := NewController(s1); err != nil {
		t.Errorf("solo: %v", err)
	}
	if _, err := NewController(m, i); err != nil {
		t.Errorf("pair: %v", err)
	}
	if _, err := New(Options{Role: Role(7), Workers: 1}); err == nil {
		t.Error("role 7 accepted")
	}
}

// A runtime shut down takes no controller: NewController refuses it with
// ErrShutdown, naming its role, rather than returning a controller whose
// every Send fails. The refusal takes no live runtime listed with it.
func TestNewControllerRefusesARuntimeShutDown(t *testing.T) {
	solo, err := New(Options{Role: Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	solo.Shutdown()
	if _, err := NewController(solo); !errors.Is(err, ErrShutdown) || err.Error() != "runtime: NewController: solo runtime is shut down: runtime: shut down" {
		t.Fatalf("NewController of a Solo runtime shut down: %v, want ErrShutdown naming the runtime", err)
	}
	for _, gone := range []Role{Interactive, Maintenance} {
		t.Run(gone.String()+" shut down", func(t *testing.T) {
			regs := newRegs(2)
			start := func(role Role) *Runtime {
				r, err := New(Options{Role: role, Workers: 2, Registries: regs})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(r.Shutdown)
				return r
			}
			rts := map[Role]*Runtime{Maintenance: start(Maintenance), Interactive: start(Interactive)}
			rts[gone].Shutdown()
			for _, order := range [][]Role{{Maintenance, Interactive}, {Interactive, Maintenance}} {
				_, err := NewController(rts[order[0]], rts[order[1]])
				if want := fmt.Sprintf("runtime: NewController: %v runtime is shut down: runtime: shut down", gone); !errors.Is(err, ErrShutdown) || err.Error() != want {
					t.Fatalf("NewController with the %v runtime shut down: %v, want %s", gone, err, want)
				}
			}
			// The live runtime was not taken: it has no controller.
			live := rts[Maintenance+Interactive-gone]
			live.ctlMu.Lock()
			taken := live.controlled
			live.ctlMu.Unlock()
			if taken {
				t.Fatalf("the refusal left the live %v runtime controlled", live.Role())
			}
		})
	}
}

// Pair with fewer than one worker is an error, as New's, not a panic
// making its registries.
func TestPairRefusesFewerThanOneWorker(t *testing.T) {
	for _, w := range []int{0, -1} {
		_, _, ctl, err := Pair(w, spine.Options{})
		if want := fmt.Sprintf("runtime: %d workers: need at least one", w); err == nil || err.Error() != want {
			if ctl != nil {
				ctl.Shutdown()
			}
			t.Fatalf("Pair(%d): %v, want %s", w, err, want)
		}
	}
}

// More than MaxWorkers workers is an error of New and Pair, before any
// worker starts: a count of 1<<30 had started workers until memory ran
// out, a hang on the way.
func TestNoMoreThanMaxWorkers(t *testing.T) {
	for _, w := range []int{MaxWorkers + 1, 1 << 30} {
		want := fmt.Sprintf("runtime: %d workers: at most %d", w, MaxWorkers)
		if r, err := New(Options{Role: Solo, Workers: w}); err == nil || err.Error() != want {
			if r != nil {
				r.Shutdown()
			}
			t.Fatalf("New with %d workers: %v, want %s", w, err, want) // stop before 1<<30 starts
		}
		if _, _, ctl, err := Pair(w, spine.Options{}); err == nil || err.Error() != want {
			if ctl != nil {
				ctl.Shutdown()
			}
			t.Fatalf("Pair(%d): %v, want %s", w, err, want)
		}
	}
	// MaxWorkers itself starts (and shuts down).
	r, err := New(Options{Role: Solo, Workers: MaxWorkers})
	if err != nil {
		t.Fatal(err)
	}
	r.Shutdown()
}

// A runtime of a new pair cannot bind a registry side whose runtime left
// while the other runtime of that old pair is still live: it would take
// the old stream's publications or verdicts for its own (a new reader
// read the old publisher's rows; an old reader waited for a new
// publisher's verdicts). Once both have left, the registries serve the
// new pair. (The old pair has no controller: Shutdown of one runtime of a
// pair that a controller joins shuts down both.)
func TestANewRuntimeWaitsForTheWholeOldPair(t *testing.T) {
	for _, first := range []Role{Interactive, Maintenance} {
		t.Run(first.String()+" left first", func(t *testing.T) {
			regs := newRegs(1)
			m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Shutdown)
			i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(i.Shutdown)
			gone, live := i, m
			if first == Maintenance {
				gone, live = m, i
			}
			gone.Shutdown()
			if _, err := New(Options{Role: first, Workers: 1, Registries: regs}); !errors.Is(err, share.ErrSideBound) {
				t.Fatalf("new %v runtime beside the old pair's live %v runtime: %v, want share.ErrSideBound", first, live.Role(), err)
			}
			live.Shutdown()
			_, _, ctl := pairOn(t, regs, -1)
			publishRow(t, ctl, 200)
			cp := dataflow.NewCapture(1)
			sendAll(t, ctl, CreateDataflow{Desc: readDesc("q", "ix", 0, frontier.At(1), cp)})
			if got := read(cp, 0); got != "map[[1 200]:1]" {
				t.Errorf("the new pair reads %s, want map[[1 200]:1]", got)
			}
		})
	}
}

// Controller.Shutdown stops every runtime before it waits for any: with the
// Maintenance worker held inside a command, the Interactive runtime is
// already stopping, so it applies none of its queued commands against a
// publisher that has left (its creates would be abandoned and its queries
// fail on indexes that never came, errors Solo never reports).
func TestControllerShutdownStopsEveryRuntimeFirst(t *testing.T) {
	regs := newRegs(1)
	m, i, ctl := pairOn(t, regs, -1)
	gate, held := make(chan struct{}), make(chan struct{})
	m.workers[0].enqueue(queued{cmd: barrier{done: func(*worker) { close(held); <-gate }}})
	<-held
	done := make(chan struct{})
	go func() { ctl.Shutdown(); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !i.stopping() {
		if time.Now().After(deadline) {
			close(gate)
			t.Fatal("the Interactive runtime was not stopped while the Maintenance runtime's shutdown waited")
		}
		time.Sleep(time.Millisecond)
	}
	close(gate)
	<-done
	if errs := ctl.TakeErrors(); len(errs) != 0 {
		t.Errorf("errors after Shutdown: %v", errs)
	}
}

// After Shutdown, Send, Sync and Stats all say so with ErrShutdown, and
// Send's error reads the same in Solo and the pair.
func TestShutdownIsOneErrorEverywhere(t *testing.T) {
	var texts []string
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 1)
		s.ctl.Shutdown()
		err := s.ctl.Send(CreateInput{Name: "x", Arity: 1})
		if !errors.Is(err, ErrShutdown) {
			t.Fatalf("%s: Send: %v, want ErrShutdown", mode, err)
		}
		texts = append(texts, err.Error())
		if err := s.ctl.Sync(testCtx(t)); !errors.Is(err, ErrShutdown) {
			t.Errorf("%s: Sync: %v, want ErrShutdown", mode, err)
		}
		if _, err := s.rts[0].Stats(testCtx(t)); !errors.Is(err, ErrShutdown) {
			t.Errorf("%s: Stats: %v, want ErrShutdown", mode, err)
		}
	}
	if texts[0] != texts[1] {
		t.Errorf("Send after Shutdown says %q in Solo and %q in the pair", texts[0], texts[1])
	}
}

// SyncRole waits for the runtime of its role only: a query's create is
// built and synced on the Interactive runtime while the Maintenance one is
// held back (where Sync, which waits for both, cannot return), and the
// held runtime's own SyncRole waits for it. A role the controller does not
// have is an error, as is a runtime shut down.
func TestSyncRoleWaitsForItsRuntimeOnly(t *testing.T) {
	m, _, ctl := pairOn(t, newRegs(2), Maintenance)
	var built atomic.Int32
	sendAll(t, ctl, CreateDataflow{Desc: dataflow.Desc{ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(*dataflow.Context) error { built.Add(1); return nil }}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ctl.SyncRole(ctx, Interactive); err != nil {
		t.Fatalf("SyncRole(Interactive) with the Maintenance runtime held: %v", err)
	}
	if n := built.Load(); n != 2 {
		t.Fatalf("after SyncRole(Interactive): %d workers built the query, want 2", n)
	}
	for _, sync := range []struct {
		name string
		f    func(context.Context) error
	}{
		{"Sync", ctl.Sync},
		{"SyncRole(Maintenance)", func(ctx context.Context) error { return ctl.SyncRole(ctx, Maintenance) }},
	} {
		short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := sync.f(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s with the Maintenance runtime held: %v, want its deadline", sync.name, err)
		}
	}
	m.Resume()
	if err := ctl.SyncRole(ctx, Maintenance); err != nil {
		t.Fatalf("SyncRole(Maintenance) once resumed: %v", err)
	}
	if err := ctl.SyncRole(ctx, Solo); err == nil || !strings.Contains(err.Error(), "no solo runtime") {
		t.Fatalf("SyncRole(Solo) of a pair: %v, want an error naming the role", err)
	}
	ctl.Shutdown()
	if err := ctl.SyncRole(ctx, Interactive); !errors.Is(err, ErrShutdown) {
		t.Fatalf("SyncRole after Shutdown: %v, want ErrShutdown", err)
	}

	solo, err := New(Options{Role: Solo, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	sctl, err := NewController(solo)
	if err != nil {
		t.Fatal(err)
	}
	defer sctl.Shutdown()
	if err := sctl.SyncRole(ctx, Solo); err != nil {
		t.Fatalf("SyncRole(Solo) of a Solo controller: %v", err)
	}
	if err := sctl.SyncRole(ctx, Interactive); err == nil || !strings.Contains(err.Error(), "no interactive runtime") {
		t.Fatalf("SyncRole(Interactive) of a Solo controller: %v, want an error naming the role", err)
	}
}

// A nil registry and a negative Effort are New's errors, not a worker's
// nil dereference or traces that merge only when updates arrive.
func TestNewRefusesANilRegistryAndANegativeEffort(t *testing.T) {
	for _, role := range []Role{Maintenance, Interactive} {
		regs := []*share.Registry{share.NewRegistry(), nil}
		r, err := New(Options{Role: role, Workers: 2, Registries: regs})
		if want := fmt.Sprintf("runtime: %v runtime: registry 1 is nil", role); err == nil || err.Error() != want {
			if r != nil {
				r.Shutdown()
			}
			t.Fatalf("%v runtime with a nil registry: %v, want %s", role, err, want)
		}
		// The refusal bound nothing: the registry serves a runtime after.
		r, err = New(Options{Role: role, Workers: 1, Registries: regs[:1]})
		if err != nil {
			t.Fatalf("%v runtime after the refusal: %v", role, err)
		}
		r.Shutdown()
	}
	r, err := New(Options{Role: Solo, Workers: 1, Effort: -1})
	if want := "runtime: Effort -1 is negative (0 means DefaultEffort)"; err == nil || err.Error() != want {
		if r != nil {
			r.Shutdown()
		}
		t.Fatalf("negative Effort: %v, want %s", err, want)
	}
}

// Shutting down one runtime of a pair that a controller joins, directly
// (not Controller.Shutdown), shuts down both, as it shuts down Solo's one
// runtime: the partner applies none of its queued commands against a
// runtime that has left, so the controller reports what Solo reports (no
// error; before, the Interactive runtime went on, found the publisher's
// creates abandoned and failed the query on an index that never came),
// every runtime says ErrShutdown, and once Shutdown returns both have left
// their registries, which serve the next pair at once. The runtime shut
// down is the one behind (held Paused), so its partner has commands left
// to apply.
func TestShuttingDownOneRuntimeOfAPairShutsDownBoth(t *testing.T) {
	for _, w := range []int{1, 2} {
		for _, gone := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("workers=%d/%v", w, gone), func(t *testing.T) {
				var ctl *Controller
				var regs []*share.Registry
				if gone == Solo {
					r, err := New(Options{Role: Solo, Workers: w, Paused: true})
					if err != nil {
						t.Fatal(err)
					}
					if ctl, err = NewController(r); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(ctl.Shutdown)
				} else {
					regs = newRegs(w)
					_, _, ctl = pairOn(t, regs, gone)
				}
				sendAll(t, ctl,
					CreateInput{Name: "x", Arity: 2},
					CreateDataflow{Desc: indexDesc("ix", "x", 2, []int{0}, 0, nil)},
					CreateDataflow{Desc: readDesc("q", "ix", 0, frontier.At(1), dataflow.NewCapture(w))})
				var shut *Runtime
				for _, r := range ctl.rts {
					if r.Role() == gone {
						shut = r
					}
				}
				shut.Shutdown()
				for _, r := range ctl.rts {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, err := r.Stats(ctx) // waits for a runtime still live to apply its queue
					cancel()
					if !errors.Is(err, ErrShutdown) {
						t.Errorf("%v runtime after the %v runtime's Shutdown: Stats says %v, want ErrShutdown", r.Role(), gone, err)
					}
				}
				if errs := ctl.Errors(); len(errs) != 0 {
					t.Errorf("errors after the %v runtime's Shutdown: %v, want none, as Solo", gone, errs)
				}
				for _, role := range []Role{Maintenance, Interactive} {
					if regs == nil {
						break
					}
					r, err := New(Options{Role: role, Workers: w, Registries: regs})
					if err != nil {
						t.Errorf("new %v runtime on the registries once the %v runtime's Shutdown returned: %v", role, gone, err)
						continue
					}
					t.Cleanup(r.Shutdown)
				}
			})
		}
	}
}

// Two NewController calls racing on one pair, naming its runtimes in
// opposite orders: exactly one takes the pair, and the other is refused
// with ErrControlled. (Each used to take its first runtime and then find
// the other's taken, so both could fail, leaving the pair with no
// controller.) The winner's controller works, and Shutdown of either
// runtime shuts down the pair it took.
func TestRacingNewControllersOneTakesThePair(t *testing.T) {
	for n := range 10000 {
		regs := newRegs(1)
		m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		var ctls [2]*Controller
		var errs [2]error
		var ready atomic.Int32
		var wg gosync.WaitGroup
		for k, order := range [][]*Runtime{{m, i}, {i, m}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Both start at once, each on its own thread where it
				// can: a channel's wake would start one well after
				// the other.
				ready.Add(1)
				for ready.Load() < 2 {
					goruntime.Gosched()
				}
				ctls[k], errs[k] = NewController(order...)
			}()
		}
		wg.Wait()
		won := 0
		for k := range ctls {
			switch {
			case errs[k] == nil:
				won++
			case !errors.Is(errs[k], ErrControlled):
				t.Errorf("race %d: NewController: %v, want ErrControlled", n, errs[k])
			}
		}
		if won != 1 {
			m.Shutdown()
			i.Shutdown()
			t.Fatalf("race %d: %d of two racing NewControllers took the pair (%v), want one", n, won, errs)
		}
		ctl := ctls[0]
		if ctl == nil {
			ctl = ctls[1]
		}
		if err := ctl.Send(CreateInput{Name: "x", Arity: 1}); err != nil {
			t.Fatalf("race %d: the winner's Send: %v", n, err)
		}
		m.Shutdown()
		if !i.stopping() {
			i.Shutdown()
			t.Fatalf("race %d: the Maintenance runtime's Shutdown left the Interactive runtime of its controller live", n)
		}
	}
}

// Shutdown called from a Build, on the goroutine of the worker running it,
// returns: it cannot wait for that worker, which is running its caller,
// nor for the others, which run the same Build and may be waiting in
// Shutdown too, so it stops every runtime and returns, and the workers
// discard the create and exit once their Builds return. So through the
// controller or either runtime of the pair, whichever runtime builds the
// dataflow, called by one worker or by every one at once (before,
// Shutdown of the runtime building it, or of its partner, waited forever
// for the worker that called it). Nothing is reported, and once the Build
// has returned every worker exits and the registries serve the next pair.
func TestShutdownCalledFromABuildReturns(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		shutters := []string{"controller", "solo"}
		if mode == "pair" {
			shutters = []string{"controller", "maintenance", "interactive"}
		}
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				for _, shutter := range shutters {
					for _, every := range []bool{false, true} {
						if every && w == 1 {
							continue
						}
						t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v/%s/every=%v", mode, w, maintained, shutter, every), func(t *testing.T) {
							// No Shutdown at cleanup: one that waited forever
							// for the worker stuck in the Build would hold the
							// test's end too.
							s := &setup{mode: mode, workers: w, tb: t}
							if mode == "solo" {
								r, err := New(Options{Role: Solo, Workers: w})
								if err != nil {
									t.Fatal(err)
								}
								s.rts = []*Runtime{r}
								if s.ctl, err = NewController(r); err != nil {
									t.Fatal(err)
								}
							} else {
								m, i, ctl, err := Pair(w, spine.Options{})
								if err != nil {
									t.Fatal(err)
								}
								s.rts, s.ctl = []*Runtime{m, i}, ctl
							}
							shut := s.ctl.Shutdown
							for _, r := range s.rts {
								if r.Role().String() == shutter {
									shut = r.Shutdown
								}
							}
							// Worker 0 calls it, or, with every, every worker
							// at once, once all of them are in the Build.
							callers := 1
							if every {
								callers = w
							}
							var calls, arrived gosync.WaitGroup
							calls.Add(callers)
							arrived.Add(callers)
							s.must(CreateDataflow{Desc: dataflow.Desc{
								ID: "shuts down", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
								Build: func(c *dataflow.Context) error {
									if c.Worker() < callers {
										arrived.Done()
										arrived.Wait()
										shut()
										calls.Done()
									}
									return nil
								},
							}})
							returned := make(chan struct{})
							go func() { calls.Wait(); close(returned) }()
							// Sent before the Shutdown or refused after it.
							if err := s.ctl.Send(CreateInput{Name: "after", Arity: 1}); err != nil && !errors.Is(err, ErrShutdown) {
								t.Fatal(err)
							}
							select {
							case <-returned:
							case <-time.After(5 * time.Second):
								t.Fatal("Shutdown called from a Build did not return")
							}
							waitExited(t, s.rts, "the workers did not exit once the Build returned")
							if errs := s.ctl.TakeErrors(); len(errs) != 0 {
								t.Errorf("errors after Shutdown: %v, want none", errs)
							}
							if err := s.ctl.Send(CreateInput{Name: "later", Arity: 1}); !errors.Is(err, ErrShutdown) {
								t.Errorf("Send after Shutdown: %v, want ErrShutdown", err)
							}
							if mode == "pair" {
								regs := s.rts[0].opts.Registries
								m, err := New(Options{Role: Maintenance, Workers: w, Registries: regs})
								if err != nil {
									t.Fatalf("the registries after Shutdown: %v", err)
								}
								m.Shutdown()
							}
						})
					}
				}
			}
		}
	}
}

// shutOp is an operator that calls shut in its first step.
type shutOp struct {
	shut     func()
	returned chan struct{}
}

func (o *shutOp) Step(frontier.Frontier) frontier.Frontier {
	if o.shut != nil {
		o.shut()
		o.shut = nil
		close(o.returned)
	}
	return frontier.Empty()
}

func (o *shutOp) Shutdown() {}

// So too from an operator's step, which runs on the worker's goroutine:
// here the Maintenance runtime's, shutting down its partner.
func TestShutdownCalledFromAStepReturns(t *testing.T) {
	m, i, ctl, err := Pair(1, spine.Options{}) // no Shutdown at cleanup, as above
	if err != nil {
		t.Fatal(err)
	}
	op := &shutOp{shut: i.Shutdown, returned: make(chan struct{})}
	if err := ctl.Send(CreateDataflow{Desc: dataflow.Desc{
		ID: "shuts down", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("shut")
			dataflow.AddOutput[*dataflow.Chunk](b)
			return b.Build(op)
		},
	}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-op.returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown called from a step did not return")
	}
	m.wg.Wait()
	i.wg.Wait()
	if errs := ctl.TakeErrors(); len(errs) != 0 {
		t.Errorf("errors after Shutdown: %v, want none", errs)
	}
}

// shutOnShutdownOp calls shut from its Shutdown: as its runtime shuts
// down, on the worker's goroutine as it exits.
type shutOnShutdownOp struct{ shut func() }

func (shutOnShutdownOp) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (o shutOnShutdownOp) Shutdown()                              { o.shut() }

// And from an operator's Shutdown, run by the worker as it exits after a
// Shutdown: the worker left its loop marked parked (its parks count odd),
// so the call, asking whether it ran on a worker, looked no further
// (mayBeOnWorker) and waited for its own goroutine to end, and neither it
// nor the Shutdown that stopped the runtime returned, whichever runtime
// renders the dataflow, in Solo and the pair, on one worker or two.
func TestShutdownCalledFromAnOperatorsShutdownReturns(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", mode, w, maintained), func(t *testing.T) {
					t.Parallel()
					// No Shutdown at cleanup: one that hangs would hang the test.
					s := &setup{mode: mode, workers: w, tb: t}
					if mode == "solo" {
						r, err := New(Options{Role: Solo, Workers: w})
						if err != nil {
							t.Fatal(err)
						}
						if s.ctl, err = NewController(r); err != nil {
							t.Fatal(err)
						}
						s.rts = []*Runtime{r}
					} else {
						m, i, ctl, err := Pair(w, spine.Options{})
						if err != nil {
							t.Fatal(err)
						}
						s.rts, s.ctl = []*Runtime{m, i}, ctl
					}
					s.must(CreateDataflow{Desc: dataflow.Desc{
						ID: "shuts down", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							return c.NewOperator("shut").Build(shutOnShutdownOp{shut: s.ctl.Shutdown})
						},
					}})
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
					// Every worker parked: each leaves its loop marked so.
					if !awaitIdle(testCtx(t).Done(), s.rts...) {
						t.Fatal("workers never idle")
					}
					returned := make(chan struct{})
					go func() {
						s.ctl.Shutdown()
						close(returned)
					}()
					select {
					case <-returned:
					case <-time.After(10 * time.Second):
						t.Fatal("Shutdown did not return: an operator's Shutdown called it on its exiting worker")
					}
					waitExited(t, s.rts, "workers did not exit")
					if errs := s.ctl.Errors(); len(errs) != 0 {
						t.Errorf("errors after Shutdown: %v, want none", errs)
					}
				})
			}
		}
	}
}

// And from both runtimes of the pair at once: a query's Build on the
// Interactive runtime shuts down the Maintenance runtime while a Maintained
// Build shuts down the Interactive one, each on its worker's goroutine.
func TestShutdownCalledFromBothRuntimesBuildsReturns(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			m, i, ctl, err := Pair(w, spine.Options{}) // no Shutdown at cleanup, as above
			if err != nil {
				t.Fatal(err)
			}
			var arrived, calls gosync.WaitGroup
			arrived.Add(2)
			calls.Add(2)
			desc := func(id string, maintained bool, shut func()) dataflow.Desc {
				return dataflow.Desc{
					ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						if c.Worker() == 0 {
							arrived.Done()
							arrived.Wait()
							shut()
							calls.Done()
						}
						return nil
					},
				}
			}
			// The Maintenance runtime skips the query and the Interactive
			// runtime the Maintained dataflow, which exports nothing: both
			// Builds run at once.
			sendAll(t, ctl,
				CreateDataflow{Desc: desc("query", false, m.Shutdown)},
				CreateDataflow{Desc: desc("maintained", true, i.Shutdown)})
			returned := make(chan struct{})
			go func() { calls.Wait(); m.wg.Wait(); i.wg.Wait(); close(returned) }()
			select {
			case <-returned:
			case <-time.After(5 * time.Second):
				t.Fatal("Shutdown called from both runtimes' Builds did not return")
			}
			if errs := ctl.TakeErrors(); len(errs) != 0 {
				t.Errorf("errors after Shutdown: %v, want none", errs)
			}
		})
	}
}

// Shutting down a pair while the Interactive runtime waits for a create
// the Maintenance runtime has not reached (behind a backlog of input
// commands, which the Interactive runtime never gets) reports nothing,
// through the Maintenance runtime or the controller: the Maintenance
// worker, which sees its runtime marked stopping before any signal,
// exits and abandons the create, and the Interactive worker must find its
// own runtime marked before its next command, a query on the index that
// never came. The Maintenance runtime was marked first, and a Shutdown
// held up between the two marks let the query fail: a few times in
// thousands of runs with more threads than cores, which this test makes.
func TestShuttingDownAPairMarksTheReaderFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of pairs")
	}
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(4))
	stop := make(chan struct{})
	defer close(stop)
	for range 2 { // busy threads: the OS preempts the others more often
		go func() {
			for {
				select {
				case <-stop:
					return
				//lint:ignore SA5004 the loop spins on purpose: a busy thread
				default:
				}
			}
		}()
	}
	failed := 0
	for n := range 8000 {
		m, _, ctl, err := Pair(1, spine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cmds := []Command{CreateInput{Name: "in", Arity: 2}}
		for k := range 40 {
			cmds = append(cmds, AdvanceInput{Name: "in", Frontier: frontier.At(uint64(k + 1))})
		}
		cmds = append(cmds,
			CreateDataflow{Desc: indexDesc("x", "in", 2, []int{0}, 40, nil)},
			CreateDataflow{Desc: readDesc("q", "x", 40, frontier.Empty(), dataflow.NewCapture(1))})
		if err := ctl.SendAll(cmds...); err != nil {
			t.Fatal(err)
		}
		if n%2 == 0 {
			m.Shutdown()
		} else {
			ctl.Shutdown()
		}
		if errs := ctl.TakeErrors(); len(errs) != 0 {
			if failed++; failed <= 3 {
				t.Errorf("run %d: errors after Shutdown: %v, want none", n, errs)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of 8000 runs reported errors", failed)
	}
}

// Shutdown of either runtime of a pair and of its controller, called many
// times at once while commands are sent and errors taken, returns
// everywhere: no call waits for another (no lock is held across the
// stop), both runtimes stop, and once the calls return the registries
// serve a new pair.
func TestConcurrentShutdownsOfAPairAllReturn(t *testing.T) {
	for _, w := range []int{1, 2} {
		for n := range 20 {
			m, i, ctl, err := Pair(w, spine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			start, quit := make(chan struct{}), make(chan struct{})
			var busy, calls gosync.WaitGroup
			busy.Add(2)
			go func() {
				defer busy.Done()
				for k := 0; ; k++ {
					select {
					case <-quit:
						return
					default:
					}
					id := fmt.Sprint("d", k)
					err := ctl.Send(CreateDataflow{Desc: dataflow.Desc{
						ID: id, Maintained: k%2 == 0, AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(*dataflow.Context) error { return errors.New("fails") },
					}})
					if err != nil && !errors.Is(err, ErrShutdown) {
						t.Error(err)
					}
				}
			}()
			go func() {
				defer busy.Done()
				for {
					select {
					case <-quit:
						return
					default:
					}
					ctl.TakeErrors()
					ctl.Errors()
				}
			}()
			for k := range 9 {
				calls.Add(1)
				go func() {
					defer calls.Done()
					<-start
					[]func(){m.Shutdown, i.Shutdown, ctl.Shutdown}[k%3]()
				}()
			}
			time.Sleep(time.Duration(n%5) * 100 * time.Microsecond)
			close(start)
			returned := make(chan struct{})
			go func() { calls.Wait(); close(returned) }()
			select {
			case <-returned:
			case <-time.After(10 * time.Second):
				t.Fatal("concurrent Shutdowns did not return")
			}
			close(quit)
			busy.Wait()
			if !m.stopping() || !i.stopping() {
				t.Fatalf("workers=%d: the Maintenance runtime stopping %v, the Interactive %v, want both", w, m.stopping(), i.stopping())
			}
			m2, err := New(Options{Role: Maintenance, Workers: w, Registries: m.opts.Registries})
			if err != nil {
				t.Fatal(err)
			}
			i2, err := New(Options{Role: Interactive, Workers: w, Registries: m.opts.Registries})
			if err != nil {
				t.Fatal(err)
			}
			m2.Shutdown()
			i2.Shutdown()
		}
	}
}

// NewController racing with Shutdown of either runtime it is given: it
// takes the pair, and the Shutdown then stops both, or it is refused with
// ErrShutdown, and the other runtime is left as it was.
func TestNewControllerRacingAShutdown(t *testing.T) {
	for n := range 2000 {
		regs := newRegs(1)
		m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
		if err != nil {
			t.Fatal(err)
		}
		gone, other := m, i
		if n%2 == 1 {
			gone, other = i, m
		}
		var err2 error
		var wg gosync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _, err2 = NewController(i, m) }()
		go func() { defer wg.Done(); gone.Shutdown() }()
		wg.Wait()
		switch {
		case err2 == nil && !other.stopping():
			t.Fatalf("race %d: a controller took the pair, and Shutdown of one left the other live", n)
		case err2 != nil && !errors.Is(err2, ErrShutdown):
			t.Fatalf("race %d: NewController: %v, want ErrShutdown", n, err2)
		case err2 != nil && other.stopping():
			t.Fatalf("race %d: NewController refused, and Shutdown of one stopped the other", n)
		}
		other.Shutdown()
	}
}

// Sync, SyncRole and Stats called from a Build, on a worker's goroutine,
// return ErrOnWorker: each waits for every worker of the runtimes it asks
// to apply a barrier, and the worker running the Build applies nothing
// until it returns (before, each waited for its own caller until its
// context ended). So for every worker of Solo and the pair at once,
// whichever runtime builds, and the same error in Solo and the pair.
// Stats of the pair's other runtime, and SyncRole of its role, are
// refused too, every time: that runtime may wait for a Maintained
// create's verdict, or answer, as fast as it happens to (before, they
// answered if it did within half a millisecond, so the answer depended on
// timing; the Maintenance runtime, idle while a query builds, answered).
// The create goes on, and the runtimes answer the same calls made outside.
func TestBarriersCalledFromABuildReturnErrOnWorker(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", mode, w, maintained), func(t *testing.T) {
					t.Parallel()
					s := newSetup(t, mode, w)
					builder := Solo
					if mode == "pair" {
						builder = Interactive
						if maintained {
							builder = Maintenance
						}
					}
					// A context that ends only if a call waits for itself:
					// the call then fails with its error, not ErrOnWorker.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					calls := map[string]func() error{
						"Sync":     func() error { return s.ctl.Sync(ctx) },
						"SyncRole": func() error { return s.ctl.SyncRole(ctx, builder) },
					}
					for _, r := range s.rts {
						if role := r.Role(); role != builder {
							calls["SyncRole of "+role.String()] = func() error { return s.ctl.SyncRole(ctx, role) }
						}
					}
					for _, r := range s.rts {
						calls["Stats of "+r.Role().String()] = func() error {
							st, err := r.Stats(ctx)
							if err != nil && st != (Stats{}) {
								return fmt.Errorf("Stats %+v with its error %w", st, err)
							}
							return err
						}
					}
					got := s.callsInBuild(t, "asks", maintained, func(*dataflow.Context) (map[string]func() error, error) {
						return calls, nil
					})
					for name := range calls {
						if len(got[name]) != w {
							t.Fatalf("%s called by %d workers, want %d", name, len(got[name]), w)
						}
						for _, err := range got[name] {
							if err != ErrOnWorker {
								t.Errorf("%s from a Build: %v, want ErrOnWorker", name, err)
							}
						}
					}
					for name, call := range calls {
						if err := call(); err != nil {
							t.Errorf("%s outside the Build: %v", name, err)
						}
					}
					if st, err := s.role(builder).Stats(testCtx(t)); err != nil || st.Dataflows != w {
						t.Errorf("Stats after the create: %+v, %v; want the dataflow built on %d workers", st, err, w)
					}
				})
			}
		}
	}
}

// stepCallOp is an operator that calls call in its first step and sends
// what it returned on got.
type stepCallOp struct {
	call func() error
	got  chan error
}

func (o *stepCallOp) Step(frontier.Frontier) frontier.Frontier {
	if o.call != nil {
		o.got <- o.call()
		o.call = nil
	}
	return frontier.Empty()
}

func (o *stepCallOp) Shutdown() {}

// So too from an operator's Step, which runs on the worker's goroutine.
func TestSyncCalledFromAStepReturnsErrOnWorker(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		for _, maintained := range []bool{true, false} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := make(chan error, s.workers)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: fmt.Sprintf("steps maintained=%v", maintained), Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					b := c.NewOperator("sync")
					dataflow.AddOutput[*dataflow.Chunk](b)
					return b.Build(&stepCallOp{call: func() error { return s.ctl.Sync(ctx) }, got: got})
				},
			}})
			for range s.workers {
				if err := <-got; err != ErrOnWorker {
					t.Errorf("Sync from a step (maintained %v): %v, want ErrOnWorker", maintained, err)
				}
			}
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
}

// funcOp is an operator that runs step at every step.
type funcOp struct{ step func() }

func (o *funcOp) Step(frontier.Frontier) frontier.Frontier {
	o.step()
	return frontier.Empty()
}

func (o *funcOp) Shutdown() {}

// A worker stepping a busy dataflow steps nothing more once Shutdown is
// called, also when its own step called it (and Shutdown returned at
// once): the runtime applies nothing after Shutdown and reports no error
// for what it discards, and a step after it ran the caller's operators on
// and reported what they met. Here dataflow "shuts" calls Shutdown in a
// step once armed, and "busy", created after it and active at every
// round, fails if its worker steps it after that call (before, it was
// stepped for the rest of the wake, and the error reported).
func TestNoStepAfterShutdownCalledFromAStep(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		maintained bool
	}{{"solo", true}, {"pair", true}, {"pair", false}} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", tc.mode, workers, tc.maintained), func(t *testing.T) {
				t.Parallel()
				s, maintained := newSetup(t, tc.mode, workers), tc.maintained
				var armed atomic.Bool
				shut := make([]atomic.Bool, s.workers) // worker i's step called Shutdown
				activate := make([]func(), s.workers)
				desc := func(id string, step func(c *dataflow.Context, activate func()) func()) dataflow.Desc {
					return dataflow.Desc{
						ID: id, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							b := c.NewOperator(id)
							dataflow.AddOutput[*dataflow.Chunk](b)
							return b.Build(&funcOp{step: step(c, b.Activator())})
						},
					}
				}
				var mu gosync.Mutex
				sendAll(t, s.ctl,
					CreateDataflow{Desc: desc("shuts", func(c *dataflow.Context, act func()) func() {
						mu.Lock()
						activate[c.Worker()] = act
						mu.Unlock()
						w := c.Worker()
						return func() {
							if armed.Load() && !shut[w].Load() {
								s.ctl.Shutdown()
								shut[w].Store(true)
							}
						}
					})},
					CreateDataflow{Desc: desc("busy", func(c *dataflow.Context, act func()) func() {
						w, fail := c.Worker(), c.Failer()
						return func() {
							if shut[w].Load() {
								fail(errors.New("stepped after Shutdown"))
							}
							act() // active again at the next round
						}
					})})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				armed.Store(true)
				for _, act := range activate {
					act()
				}
				waitExited(t, s.rts, "the workers did not exit")
				if errs := s.takeErrors(); len(errs) != 0 {
					t.Errorf("errors after Shutdown: %q, want none", errs)
				}
			})
		}
	}
}

// Nor does it step another operator of the caller's dataflow: "shuts"
// has two operators, the first calling Shutdown in a step once armed, the
// second, after it in the pass, failing if stepped after that call
// (before, the rest of the pass ran it, and the passes after it).
func TestNoOperatorStepAfterShutdownCalledFromAStep(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 1)
			var armed, shut atomic.Bool
			var activate func()
			sendAll(t, s.ctl, CreateDataflow{Desc: dataflow.Desc{
				ID: "shuts", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					first := c.NewOperator("first")
					dataflow.AddOutput[*dataflow.Chunk](first)
					activate = first.Activator()
					if err := first.Build(&funcOp{step: func() {
						if armed.Load() && !shut.Load() {
							s.ctl.Shutdown()
							shut.Store(true)
						}
					}}); err != nil {
						return err
					}
					second := c.NewOperator("second")
					dataflow.AddOutput[*dataflow.Chunk](second)
					fail := c.Failer()
					return second.Build(&funcOp{step: func() {
						if shut.Load() {
							fail(errors.New("stepped after Shutdown"))
						}
					}})
				},
			}})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			activate()
			waitExited(t, s.rts, "the workers did not exit")
			if !shut.Load() {
				t.Fatal("the first operator did not call Shutdown")
			}
			if errs := s.takeErrors(); len(errs) != 0 {
				t.Errorf("errors after Shutdown: %q, want none", errs)
			}
		})
	}
}

// waitExited waits for every worker of rts to exit, and fails the test
// with what if they have not within 10 s.
func waitExited(t *testing.T, rts []*Runtime, what string) {
	t.Helper()
	exited := make(chan struct{})
	go func() {
		for _, r := range rts {
			r.wg.Wait()
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// A Build or a step that ends its worker's goroutine (runtime.Goexit, as
// testing.T.FailNow calls off the test's goroutine) shuts the runtime
// down, and the pair's other runtime with it: Sync returns ErrShutdown,
// where it waited for the lost worker until its context ended, the
// workers exit, Errors reports ErrWorkerExited once naming the dataflow,
// alike in Solo and the pair, and Shutdown, called after, returns. Worker
// 0 alone calls it, or every worker.
func TestGoexitOnAWorkerShutsTheRuntimeDown(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, in := range []string{"build", "step"} {
				for _, maintained := range []bool{true, false} {
					for _, every := range []bool{false, true} {
						if every && w == 1 {
							continue
						}
						t.Run(fmt.Sprintf("%s/workers=%d/%s/maintained=%v/every=%v", mode, w, in, maintained, every), func(t *testing.T) {
							t.Parallel()
							s := newSetup(t, mode, w)
							var armed atomic.Bool
							var mu gosync.Mutex
							var activate []func()
							exit := func(c *dataflow.Context) bool { return every || c.Worker() == 0 }
							s.must(CreateDataflow{Desc: dataflow.Desc{
								ID: "exits", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
								Build: func(c *dataflow.Context) error {
									if in == "build" && exit(c) {
										goruntime.Goexit()
									}
									b := c.NewOperator("exits")
									dataflow.AddOutput[*dataflow.Chunk](b)
									mu.Lock()
									activate = append(activate, b.Activator())
									mu.Unlock()
									me := exit(c)
									return b.Build(&funcOp{step: func() {
										if armed.Load() && me {
											goruntime.Goexit()
										}
									}})
								},
							}})
							if in == "step" {
								if err := s.ctl.Sync(testCtx(t)); err != nil {
									t.Fatal(err)
								}
								armed.Store(true)
								for _, act := range activate {
									act()
								}
							}
							if err := s.ctl.Sync(testCtx(t)); !errors.Is(err, ErrShutdown) {
								t.Fatalf("Sync: %v, want ErrShutdown", err)
							}
							waitExited(t, s.rts, "the workers did not exit")
							errs := s.ctl.TakeErrors()
							what := "its Build or first steps"
							if in == "step" {
								what = "a step"
							}
							want := fmt.Sprintf("dataflow exits: %s ended a worker's goroutine: %v", what, ErrWorkerExited)
							if len(errs) != 1 || !errors.Is(errs[0], ErrWorkerExited) || errs[0].Error() != want {
								t.Fatalf("errors: %q, want one: %q", errs, want)
							}
							// A Build's is its create's (the first command
							// sent); a step's no command's.
							if seq, cmd := errs[0].Seq, errs[0].Command; in == "build" && (seq != 1 || cmd == nil) || in == "step" && (seq != 0 || cmd != nil) {
								t.Errorf("the error's command: %d %T", seq, cmd)
							}
							if err := s.ctl.Send(CreateInput{Name: "later", Arity: 1}); !errors.Is(err, ErrShutdown) {
								t.Errorf("Send after: %v, want ErrShutdown", err)
							}
							s.ctl.Shutdown()
							s.ctl.Shutdown()
							if mode == "pair" {
								m, err := New(Options{Role: Maintenance, Workers: w, Registries: s.rts[0].opts.Registries})
								if err != nil {
									t.Fatalf("the registries after: %v", err)
								}
								m.Shutdown()
							}
						})
					}
				}
			}
		}
	}
}

// exitOnShutdownOp is an operator whose Shutdown (its dataflow's drop)
// ends the worker's goroutine.
type exitOnShutdownOp struct{}

func (exitOnShutdownOp) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (exitOnShutdownOp) Shutdown()                                { goruntime.Goexit() }

// So too from a command other than a create: a DropDataflow whose
// operator's Shutdown ends the goroutine is that command's error, alike
// in Solo and the pair.
func TestGoexitApplyingADropShutsTheRuntimeDown(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, maintained := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/maintained=%v", mode, maintained), func(t *testing.T) {
				s := newSetup(t, mode, 1)
				s.must(CreateDataflow{Desc: dataflow.Desc{
					ID: "exits", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						b := c.NewOperator("exits")
						dataflow.AddOutput[*dataflow.Chunk](b)
						return b.Build(exitOnShutdownOp{})
					},
				}})
				s.must(DropDataflow{ID: "exits"})
				if err := s.ctl.Sync(testCtx(t)); !errors.Is(err, ErrShutdown) {
					t.Fatalf("Sync: %v, want ErrShutdown", err)
				}
				waitExited(t, s.rts, "the workers did not exit")
				errs := s.ctl.TakeErrors()
				want := "runtime: applying runtime.DropDataflow ended a worker's goroutine: " + ErrWorkerExited.Error()
				if len(errs) != 1 || errs[0].Error() != want || errs[0].Seq != 2 {
					t.Fatalf("errors: %q, want one of command 2: %q", errs, want)
				}
			})
		}
	}
}

// And from an operator's Shutdown as the runtime shuts down, when the
// worker drops what it holds on its way out: the rest is dropped all the
// same, so the registries are left empty and free for the next pair, and
// the error names the dataflow, once, alike in Solo and the pair. The
// worker stopped at the operator's Shutdown, leaving every other
// dataflow, its registry side and its publications in place: the next
// pair on the registries was refused, and nothing was reported.
func TestGoexitInAnOperatorsShutdownAtShutdownLeavesNothing(t *testing.T) {
	want := "dataflow exits: an operator's Shutdown, as the runtime shut down, ended a worker's goroutine: " + ErrWorkerExited.Error()
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", mode, w, maintained), func(t *testing.T) {
					var regs []*share.Registry
					var s *setup
					if mode == "pair" {
						regs = newRegs(w)
						m, i, ctl := pairOn(t, regs, -1)
						s = &setup{mode: mode, workers: w, ctl: ctl, rts: []*Runtime{m, i}, tb: t}
					} else {
						s = newSetup(t, mode, w)
					}
					s.declare("in", 2)
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: dataflow.Desc{
						ID: "exits", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							if !maintained {
								if _, err := c.ImportIndex("idx"); err != nil {
									return err
								}
							}
							b := c.NewOperator("exits")
							dataflow.AddOutput[*dataflow.Chunk](b)
							return b.Build(exitOnShutdownOp{})
						},
					}})
					s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), dataflow.NewCapture(w))})
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
					s.ctl.Shutdown()
					waitExited(t, s.rts, "the workers did not exit")
					if mode == "pair" {
						if st := regStats(regs); st != (share.RegistryStats{}) {
							t.Errorf("registries after Shutdown: %+v, want empty (R2)", st)
						}
					}
					errs := s.ctl.TakeErrors()
					if len(errs) != 1 || errs[0].Error() != want || errs[0].Seq != 0 {
						t.Fatalf("errors: %q, want one of no command: %q", errs, want)
					}
					if mode == "pair" {
						_, _, ctl := pairOn(t, regs, -1)
						publishRow(t, ctl, 1)
					}
				})
			}
		}
	}
}

// TestSyncTakesTheInteractiveRuntimeFirst: Controller.Sync syncs the
// Interactive runtime of a pair before the Maintenance runtime, so that
// the peer holds its copies of AllowCompaction move (in a wake of its
// own, often the barrier's) reach the Maintenance runtime before its
// barrier, whose wake's Maintain applies them; synced Maintenance first, a
// Stats right after could read a hold gap above 0. With the Interactive
// runtime busy in a Build and the Maintenance runtime held, the Sync that
// times out is the Interactive runtime's: its barrier was sent first.
func TestSyncTakesTheInteractiveRuntimeFirst(t *testing.T) {
	m, _, ctl := pairOn(t, newRegs(1), Maintenance)
	started, release := make(chan struct{}), make(chan struct{})
	sendAll(t, ctl, CreateDataflow{Desc: blockingDesc("busy", started, release)})
	<-started
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := ctl.Sync(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "runtime: interactive barrier") {
		t.Errorf("Sync with the Interactive runtime busy and the Maintenance runtime held: %v, want the interactive barrier's deadline", err)
	}
	close(release)
	m.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ctl.Sync(ctx); err != nil {
		t.Fatalf("Sync once both run: %v", err)
	}
}
