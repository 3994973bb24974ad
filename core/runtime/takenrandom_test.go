package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// valueBoomOp panics with "boom <v>" at the first row it takes, v the
// row's second column, on whichever worker the row falls to; with shut
// set its Shutdown panics with "shut".
type valueBoomOp struct {
	in   *dataflow.Port[*dataflow.Chunk]
	shut bool
}

func (o *valueBoomOp) Step(frontier.Frontier) frontier.Frontier {
	for _, ch := range o.in.Take() {
		if ch.Len() > 0 {
			panic(fmt.Sprintf("boom %d", ch.Row(0)[1]))
		}
	}
	return frontier.Empty()
}

func (o *valueBoomOp) Shutdown() {
	if o.shut {
		panic("shut")
	}
}

// errBuildRefused is what a valueBoomDesc with refuse set returns from
// its Build.
var errBuildRefused = errors.New("build refused")

// valueBoomDesc reads input (arity 2) with a valueBoomOp; with refuse set
// its Build fails instead.
func valueBoomDesc(id, input string, shut, refuse bool) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			if refuse {
				return errBuildRefused
			}
			in, err := c.Input(input, 2)
			if err != nil {
				return err
			}
			b := c.NewOperator("boom")
			return b.Build(&valueBoomOp{in: dataflow.AddInput(b, "rows", in.Oks), shut: shut})
		},
	}
}

// takenModel is what the controller must return over a run: each error
// once, the required ones by the end.
type takenModel struct {
	// required are the errors some take must return: a command's by its
	// number and first line, a step's by incarnation (the create's
	// number) and first line; possible are those that may come (a row
	// sent to a dataflow dropped before a Sync: the worker may have
	// dropped it before it stepped to the row).
	required, possible map[errKey]bool
	taken              map[errKey]int
	// dropped has the number of each incarnation's drop, by its create's.
	dropped map[uint64]uint64
}

// checkAllTaken fails t unless every required error was taken, once.
func (m *takenModel) checkAllTaken(t *testing.T) {
	t.Helper()
	var missing []string
	for k := range m.required {
		if m.taken[k] != 1 {
			missing = append(missing, fmt.Sprintf("%+v", k))
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Fatalf("errors never returned: %q", missing)
	}
}

// checkErrors calls Errors twice and checks what it returns against the
// model: nothing taken already, and no fewer errors the second time
// (Errors takes nothing). It returns the errors' keys, which the next take
// must return.
func (m *takenModel) checkErrors(t *testing.T, op int, ctl *Controller) []errKey {
	t.Helper()
	errs := ctl.Errors()
	keys := make([]errKey, 0, len(errs))
	for _, e := range errs {
		k := m.keyOf(e)
		if m.taken[k] > 0 {
			t.Fatalf("op %d: Errors returned %+v, taken already", op, k)
		}
		keys = append(keys, k)
	}
	if again := ctl.Errors(); len(again) < len(errs) {
		t.Fatalf("op %d: Errors returned %d errors, then %d", op, len(errs), len(again))
	}
	return keys
}

// checkTake checks the errors of a take against the model: each one met
// by someone (required or possible) and taken once over the run, and
// every error promised (returned by an Errors call since the last take)
// among them.
func (m *takenModel) checkTake(t *testing.T, op int, errs []*CommandError, promised []errKey) {
	t.Helper()
	got := map[errKey]bool{}
	for _, e := range errs {
		k := m.keyOf(e)
		got[k] = true
		if !m.required[k] && !m.possible[k] {
			t.Fatalf("op %d: take returned %+v, an error no one met", op, k)
		}
		if m.taken[k]++; m.taken[k] > 1 {
			t.Fatalf("op %d: take returned %+v again (%d times)", op, k, m.taken[k])
		}
	}
	for _, k := range promised {
		if !got[k] {
			t.Fatalf("op %d: Errors returned %+v, and the take after it did not", op, k)
		}
	}
}

// mustKeep checks that c keeps every error m has taken that a worker may
// meet again: a command's until every worker has applied it, a step's of
// an incarnation until every worker has applied its drop. It reads how
// far the workers are after the take, which is at least as far as the
// take saw them.
func (m *takenModel) mustKeep(t *testing.T, op int, c *Controller) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	done := c.seq
	for _, r := range c.rts {
		for _, w := range r.workers {
			done = min(done, w.applied.Load())
		}
	}
	for k := range m.taken {
		until := k.seq
		if k.seq == 0 {
			if until = m.dropped[k.inc]; until == 0 {
				until = c.seq + 1 // alive
			}
		}
		if until > done && !c.taken[k] {
			t.Fatalf("op %d: %+v forgotten while a worker may meet it again (workers at %d, it waits for %d)", op, k, done, until)
		}
	}
}

func (m *takenModel) keyOf(e *CommandError) errKey {
	line, _, _ := strings.Cut(e.Error(), "\n")
	return errKey{seq: e.Seq, inc: e.inc, err: line}
}

// TestErrorsAreTakenOnceRandomly drives, in a seeded random order, creates
// of dataflows (ids used again once dropped: each create a new
// incarnation) whose operators panic at a row (the panic's text set per
// worker and incarnation, so two workers meet the same error or two
// differing ones), creates whose Build fails and drops whose Shutdown
// panics (a command's error), drops, Syncs, TakeErrors and Errors, and
// checks against a model: every error of a command, and every step's
// error of an incarnation, is returned by one take only; every error a
// Sync settled before its dataflow's drop is returned by some take; the
// errors Errors returns are all returned by the next take (Errors changes
// nothing); and once everything is dropped, every worker has applied it
// and the errors are taken, the controller keeps nothing of them (taken,
// takenDrops and forget are empty). Solo and the pair, one and two
// workers; takes come while workers lag behind, before and after drops.
func TestErrorsAreTakenOnceRandomly(t *testing.T) {
	seeds, ops := 8, 600
	if testing.Short() {
		seeds, ops = 2, 200
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for seed := range seeds {
				t.Run(fmt.Sprintf("%s/workers=%d/seed=%d", mode, w, seed), func(t *testing.T) {
					runTakenRandom(t, mode, w, uint64(seed), ops)
				})
			}
		}
	}
}

func runTakenRandom(t *testing.T, mode string, workers int, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 0x7a6e))
	s := newSetup(t, mode, workers)
	ids := []string{"d0", "d1", "d2"}
	type live struct {
		input    string
		seq      uint64
		refused  bool
		shut     bool
		v        []int64 // the panic's value per worker
		unsynced []errKey
	}
	lives := map[string]*live{}
	m := &takenModel{required: map[errKey]bool{}, possible: map[errKey]bool{}, taken: map[errKey]int{}, dropped: map[uint64]uint64{}}
	seq := func() uint64 {
		s.ctl.mu.Lock()
		defer s.ctl.mu.Unlock()
		return s.ctl.seq
	}
	inputs := 0
	stepText := func(id string, v int64) string {
		return fmt.Sprintf(`dataflow %s: operator "boom": Step: operator panicked: boom %d`, id, v)
	}
	syncAll := func() {
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		for _, l := range lives {
			for _, k := range l.unsynced {
				delete(m.possible, k)
				m.required[k] = true
			}
			l.unsynced = nil
		}
	}
	var promised []errKey // what Errors returned, which the next take must return
	take := func(op int) {
		t.Helper()
		m.checkTake(t, op, s.ctl.TakeErrors(), promised)
		promised = nil
		m.mustKeep(t, op, s.ctl)
	}
	for op := range ops {
		switch r := rng.IntN(100); {
		case r < 18: // create
			id := ids[rng.IntN(len(ids))]
			if lives[id] != nil {
				continue
			}
			inputs++
			l := &live{input: fmt.Sprintf("in%d", inputs), refused: rng.IntN(6) == 0, shut: rng.IntN(2) == 0}
			for range workers {
				l.v = append(l.v, int64(rng.IntN(2)))
			}
			s.declare(l.input, 2)
			s.must(CreateDataflow{Desc: valueBoomDesc(id, l.input, l.shut, l.refused)})
			l.seq = seq()
			if l.refused {
				m.required[errKey{seq: l.seq, err: fmt.Sprintf("dataflow %s: %v", id, errBuildRefused)}] = true
			}
			lives[id] = l
		case r < 45: // a row, to a worker of a live dataflow
			id := ids[rng.IntN(len(ids))]
			l := lives[id]
			if l == nil {
				continue
			}
			i := rng.IntN(workers)
			s.send(l.input, 2, []int64{0, 1, keyOn(i, workers), l.v[i]})
			if !l.refused {
				k := errKey{inc: l.seq, err: stepText(id, l.v[i])}
				if !m.required[k] {
					m.possible[k] = true
					l.unsynced = append(l.unsynced, k)
				}
			}
		case r < 60: // drop
			id := ids[rng.IntN(len(ids))]
			l := lives[id]
			if l == nil {
				continue
			}
			if rng.IntN(2) == 0 {
				syncAll() // its rows stepped to before the drop
			}
			s.must(DropDataflow{ID: id})
			m.dropped[l.seq] = seq()
			if l.shut && !l.refused {
				m.required[errKey{seq: seq(), err: fmt.Sprintf(`dataflow %s: operator "boom": Shutdown: operator panicked: shut`, id)}] = true
			}
			delete(lives, id)
		case r < 70:
			syncAll()
		case r < 90:
			take(op)
		default:
			promised = append(promised, m.checkErrors(t, op, s.ctl)...)
		}
	}
	for _, id := range ids {
		if l := lives[id]; l != nil {
			syncAll()
			s.must(DropDataflow{ID: id})
			m.dropped[l.seq] = seq()
			if l.shut && !l.refused {
				m.required[errKey{seq: seq(), err: fmt.Sprintf(`dataflow %s: operator "boom": Shutdown: operator panicked: shut`, id)}] = true
			}
		}
	}
	syncAll()
	take(ops)
	m.checkAllTaken(t)
	keepsNothing(t, s.ctl)
	t.Logf("%d errors taken, %d required", len(m.taken), len(m.required))
}

// gateOp blocks its worker's step at the first row it takes, telling
// entered, until release is closed.
type gateOp struct {
	in               *dataflow.Port[*dataflow.Chunk]
	entered, release chan struct{}
}

func (o *gateOp) Step(frontier.Frontier) frontier.Frontier {
	for _, ch := range o.in.Take() {
		if ch.Len() > 0 {
			o.entered <- struct{}{}
			<-o.release
		}
	}
	return frontier.Empty()
}

func (o *gateOp) Shutdown() {}

// TestATakeKeepsWhatALaggingWorkerMayMeet: worker 1 held in a step (a
// gate) while worker 0 applies a drop whose Shutdown panics; the take of
// that command's error keeps its key, worker 1 having applied the command
// before the drop only, and worker 1, let go, meets the error again
// without its being returned again. Solo and the pair, two workers.
func TestATakeKeepsWhatALaggingWorkerMayMeet(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			entered, release := make(chan struct{}, 1), make(chan struct{})
			var once sync.Once
			let := func() { once.Do(func() { close(release) }) }
			t.Cleanup(let) // before the Shutdown of newSetup's cleanup, which waits for worker 1
			s.declare("in", 2)
			s.declare("gate", 2)
			s.must(CreateDataflow{Desc: valueBoomDesc("b", "in", true, false)})
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "g", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("gate", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("gate")
					return b.Build(&gateOp{in: dataflow.AddInput(b, "rows", in.Oks), entered: entered, release: release})
				},
			}})
			s.send("gate", 2, []int64{0, 1, keyOn(1, 2), 0})
			<-entered // worker 1 is held, its last command applied the row
			s.must(DropDataflow{ID: "b"})
			m := &takenModel{required: map[errKey]bool{}, possible: map[errKey]bool{}, taken: map[errKey]int{}, dropped: map[uint64]uint64{}}
			ctx := testCtx(t)
			var errs []*CommandError
			for len(errs) == 0 && ctx.Err() == nil {
				errs = s.ctl.TakeErrors() // worker 0's Shutdown panic, once it has met it
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "Shutdown: operator panicked: shut") {
				t.Fatalf("errors %v, want the drop's shut", errs)
			}
			m.taken[m.keyOf(errs[0])] = 1
			m.mustKeep(t, 0, s.ctl)
			let()
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.TakeErrors(); len(errs) != 0 {
				t.Fatalf("after worker 1 applied the drop: errors %v, want none (taken already)", errs)
			}
			s.must(DropDataflow{ID: "g"})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.TakeErrors(); len(errs) != 0 {
				t.Fatalf("errors %v", errs)
			}
			s.ctl.mu.Lock()
			kept, forget := len(s.ctl.taken), len(s.ctl.forget)
			s.ctl.mu.Unlock()
			if kept+forget > 0 {
				t.Fatalf("the controller keeps %d taken errors and %d to forget, want none", kept, forget)
			}
		})
	}
}
