package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// failLevel is one dataflow of a random chain: it imports index from
// (idx0, the input's, or an earlier level's), passes it through a
// capFailOp, arranges the result and exports it as its own index, which
// later levels may read; its capture reads the arrangement.
type failLevel struct {
	id, from   string
	maintained bool
	asOf       uint64
	until      uint64 // 0: {}
	c, failAt  uint64
	parent     int // the level read, -1: idx0
	dropped    bool
	droppedAt  uint64 // what its capture had reached when dropped
	cp         *dataflow.Capture
	frozen     map[uint64]bool // times a wait reported frozen
}

// failOutcome classifies a wait: one that lasts is cut short after 30 ms,
// and told apart as "waiting".
func failOutcome(w waiter, t uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := w.WaitPassed(ctx, t)
	switch {
	case err == nil:
		return "passed"
	case errors.Is(err, context.DeadlineExceeded):
		return "waiting"
	case errors.Is(err, dataflow.ErrProbeDropped):
		return "dropped"
	case errors.Is(err, ErrShutdown):
		return "shut down"
	case errors.Is(err, ErrIndexDropped):
		return "index dropped"
	}
	// The failure: its text names the level, not the frontier.
	msg := err.Error()
	if i := strings.Index(msg, "level "); i >= 0 {
		return "frozen: " + msg[i:]
	}
	return "frozen: " + msg
}

// Random chains of indexes and queries (Maintained levels first, each
// level reading idx0 or an earlier level's index at a random as_of and
// until), some levels failing at a random time while holding at a random
// capability, some dropped once settled, one runtime of the pair lagging
// while the chain is made: every wait a level's capture reports frozen is
// for a time the capture never passes, also once the input has gone on;
// every time before the least capability of a failing level on its path,
// the frontier a dropped level on it had reached and the input's passes;
// a level whose operator's input passed its failAt ends a wait for its
// capability frozen; and Solo and the pair report the same outcomes and
// errors, one and two workers. A wait at or past what a level reaches
// for sure counts as "not passed" in the comparison: whether a failure
// was stepped yet, and which of two at the same limit came first, is
// timing, and so is whether a level dropped had failed before its drop,
// whose error is left out. Each script's seed is in its failures (FAILRANDOM_SEED runs
// one, FAILRANDOM_SCRIPTS sets how many). -short runs fewer scripts.
func TestRandomFailedChainsAreSoundAndAgree(t *testing.T) {
	scripts := 24
	if s := os.Getenv("FAILRANDOM_SCRIPTS"); s != "" {
		scripts, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		scripts = 6
	}
	waits := 0
	for n := range scripts {
		seed := uint64(n)*7919 + 1
		if v := os.Getenv("FAILRANDOM_SEED"); v != "" {
			seed, _ = strconv.ParseUint(v, 10, 64)
		}
		for _, w := range []int{1, 2} {
			var got [2]string
			for i, mode := range []string{"solo", "pair"} {
				lag := []Role{Solo, Maintenance, Interactive}[seed%3]
				s := newLagSetup(t, mode, w, lag)
				out, k := failScript(t, s, seed)
				waits += k
				got[i] = out
				s.ctl.Shutdown()
			}
			if got[0] != got[1] {
				t.Fatalf("seed %d, workers %d: Solo and the pair disagree:\nsolo: %s\npair: %s", seed, w, got[0], got[1])
			}
		}
	}
	t.Logf("%d scripts on %d setups, %d waits checked", scripts, scripts*4, waits)
}

// failScript runs the script of seed on s and returns its outcomes, and
// how many waits it checked.
func failScript(t *testing.T, s *setup, seed uint64) (string, int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	var out []string
	s.declare("in", 2)
	s.must(CreateDataflow{Desc: indexDesc("idx0", "in", 2, []int{0}, 0, nil)})
	var levels []*failLevel
	nl := 2 + rng.IntN(4)
	maint := rng.IntN(nl) // the first maint levels are Maintained
	for i := range nl {
		l := &failLevel{id: fmt.Sprintf("L%d", i), maintained: i < maint, parent: rng.IntN(i+1) - 1, cp: dataflow.NewCapture(s.workers), frozen: map[uint64]bool{}}
		if l.parent >= 0 && !levels[l.parent].maintained && l.maintained {
			l.parent = -1
		}
		l.from = "idx0"
		if l.parent >= 0 {
			l.from = "ix" + levels[l.parent].id
		}
		if rng.IntN(2) == 0 {
			l.c = uint64(rng.IntN(8))
			l.failAt = l.c + uint64(rng.IntN(4)) + 1
		}
		if !l.maintained && rng.IntN(3) == 0 {
			l.asOf = uint64(rng.IntN(3))
		}
		if l.parent >= 0 {
			// An index's since starts at its create's as_of: a reader
			// before it would be refused.
			l.asOf = max(l.asOf, levels[l.parent].asOf)
		}
		if !l.maintained && rng.IntN(3) == 0 {
			l.until = l.asOf + 1 + uint64(rng.IntN(8))
		}
		levels = append(levels, l)
		until := frontier.Empty()
		if l.until > 0 {
			until = frontier.At(l.until)
		}
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: l.id, Maintained: l.maintained, AsOf: frontier.At(l.asOf), Until: until, Exports: []string{"ix" + l.id},
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex(l.from)
				if err != nil {
					return err
				}
				b := c.NewOperator("fail")
				op := &capFailOp{in: dataflow.AddInput(b, "batches", a.Oks.Stream), out: dataflow.AddOutput[*dataflow.Chunk](b), fail: c.Failer(), c: l.c, failAt: l.failAt, id: l.id}
				if err := b.Build(op); err != nil {
					return err
				}
				errs := dataflow.AddOutput[*dataflow.Chunk](b)
				arr, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: op.out, Errs: errs}, []int{0})
				if err != nil {
					return err
				}
				c.Capture(l.cp, arr.Oks)
				return c.Export("ix"+l.id, arr)
			},
		}})
	}
	resumeAt := rng.IntN(4)
	waits := 0
	input := uint64(0)
	// bound is what a level's capture reaches for sure, and no further
	// unless its until completes it: the least capability of a failing
	// level on its path, the frontier a dropped level on its path (other
	// than itself) had reached when dropped, and the input's.
	bound := func(l *failLevel) uint64 {
		b := input
		for i, m := 0, l; ; i++ {
			if m.failAt > 0 {
				b = min(b, m.c)
			}
			if m.dropped && i > 0 {
				b = min(b, m.droppedAt)
			}
			if m.parent < 0 {
				return b
			}
			m = levels[m.parent]
		}
	}
	// settle waits until every live level's capture has passed what it
	// reaches for sure (a Sync says the commands are applied, not that
	// the dataflows have stepped them): the times before it must pass.
	settle := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, l := range levels {
			if b := bound(l); !l.dropped && b > 0 {
				waits++
				if err := l.cp.WaitPassed(ctx, b-1); err != nil {
					t.Errorf("seed %d %s workers %d: level %s (from %s, as_of %d, until %d, cap %d fail at %d): a wait for %d, before the bound %d: %v", seed, s.mode, s.workers, l.id, l.from, l.asOf, l.until, l.c, l.failAt, b-1, b, err)
				}
			}
		}
	}
	// outcome is a wait's for the agreement: one for a time at or past
	// what a level reaches for sure may end frozen, with the index's end
	// or its dataflow's drop, or still wait, as a failure may not have
	// been stepped yet, and of two failures (or a failure and an end) at
	// the same limit the first stepped is the one told; a frozen one is
	// checked at the end.
	outcome := func(l *failLevel, tm uint64) string {
		o := failOutcome(l.cp, tm)
		waits++
		if strings.HasPrefix(o, "frozen") {
			l.frozen[tm] = true
		}
		b := bound(l)
		if l.dropped {
			b = min(b, l.droppedAt)
		}
		if tm >= b && o != "passed" && o != "shut down" {
			return "not passed"
		}
		return o
	}
	rounds := 10 + rng.IntN(8)
	for r := range rounds {
		s.send("in", 2, []int64{int64(r), 1, int64(r % 3), int64(r)})
		input = uint64(r + 1)
		s.advance("in", 2, frontier.At(input))
		if r == resumeAt {
			s.resume()
		}
		if r < resumeAt || rng.IntN(3) != 0 {
			continue
		}
		settle()
		for range 4 {
			l := levels[rng.IntN(len(levels))]
			tm := uint64(rng.IntN(int(input) + 3))
			out = append(out, fmt.Sprintf("r%d %s@%d %s", r, l.id, tm, outcome(l, tm)))
		}
		if rng.IntN(3) == 0 {
			// Drop a level, settled where its bound is: its readers'
			// imports end there.
			l := levels[rng.IntN(len(levels))]
			if !l.dropped {
				l.dropped, l.droppedAt = true, bound(l)
				s.must(DropDataflow{ID: l.id})
				out = append(out, "drop "+l.id)
				// Applied by both runtimes before the input goes on: in
				// the pair, the Maintenance runtime may publish idx0
				// further while the Interactive one has yet to apply
				// the drop of a query reading it.
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	s.resume()
	for r := rounds; r < rounds+5; r++ {
		s.send("in", 2, []int64{int64(r), 1, int64(r % 3), int64(r)})
		input = uint64(r + 1)
		s.advance("in", 2, frontier.At(input))
	}
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	settle()
	for _, l := range levels {
		if l.dropped {
			continue
		}
		// Its own failure is certain once its operator's input passed
		// its failAt: the import reaches its parent's bound, or its
		// until.
		in := input
		if l.parent >= 0 {
			in = bound(levels[l.parent])
			if levels[l.parent].dropped {
				in = min(in, levels[l.parent].droppedAt)
			}
		}
		if l.until > 0 && l.until <= in {
			in = input
		}
		if l.failAt > 0 && l.failAt <= in && (l.until == 0 || l.until > l.c) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := l.cp.WaitPassed(ctx, l.c)
			cancel()
			waits++
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("seed %d %s workers %d: level %s (from %s, as_of %d, until %d, cap %d fail at %d, its input at %d): a wait for %d: %v, want it frozen", seed, s.mode, s.workers, l.id, l.from, l.asOf, l.until, l.c, l.failAt, in, l.c, err)
			}
			l.frozen[l.c] = true
		}
		f := l.cp.Frontier()
		for tm := range l.frozen {
			if !f.Beyond(tm) {
				t.Errorf("seed %d %s workers %d: level %s (from %s, as_of %d, until %d, cap %d fail at %d): a wait for %d reported frozen, and the capture passed it (at %v)", seed, s.mode, s.workers, l.id, l.from, l.asOf, l.until, l.c, l.failAt, tm, f)
			}
			// Still ended at once: frozen, or by an end at an earlier
			// limit, which a probe takes.
			if o := failOutcome(l.cp, tm); o == "passed" || o == "waiting" {
				t.Errorf("seed %d %s workers %d: level %s: a wait for %d reported frozen, and now %s", seed, s.mode, s.workers, l.id, tm, o)
			}
			waits++
		}
		for _, tm := range []uint64{bound(l), input - 1, input + 2} {
			out = append(out, fmt.Sprintf("end %s@%d %s", l.id, tm, outcome(l, tm)))
		}
	}
	var desc []string
	for _, l := range levels {
		desc = append(desc, fmt.Sprintf("%s(from %s maintained %v as_of %d until %d cap %d failAt %d dropped %v at %d, at %v)", l.id, l.from, l.maintained, l.asOf, l.until, l.c, l.failAt, l.dropped, l.droppedAt, l.cp.Frontier()))
	}
	// A dropped level's own failure is its if its operator's input
	// passed failAt before the drop: how far it had run is timing.
	var errs []string
	for _, e := range s.takeErrors() {
		timing := false
		for _, l := range levels {
			timing = timing || (l.dropped && e == fmt.Sprintf("dataflow %s: level %s failed", l.id, l.id))
		}
		if !timing {
			errs = append(errs, e)
		}
	}
	return fmt.Sprintf("%q errors %q levels %s", out, errs, desc), waits
}
