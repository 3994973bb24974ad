package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// callerScript is what one goroutine of TestCallersOfOneControllerAgree
// sends: an input and index, re-export, reader and drop ids of its own
// (prefixed "g<g>/"), created, freed, dropped and created again, readers of
// indexes never made, freed or dropped, compactions forward and back, and
// a take of the controller's errors now and then (take). It returns each
// command with what Send refused, in its order: those depend on its own
// commands alone, as do the errors they cause.
func callerScript(t *testing.T, s *setup, g int, seed uint64, take func()) []string {
	rng := rand.New(rand.NewPCG(seed, uint64(g)))
	in := fmt.Sprintf("g%d in", g)
	id := func(kind string, n int) string { return fmt.Sprintf("g%d/%s%d", g, kind, rng.IntN(n)) }
	if err := s.ctl.Send(CreateInput{Name: in, Arity: 2}); err != nil {
		t.Error(err)
		return nil
	}
	var lines []string
	upper := uint64(0)
	for step := range 80 {
		var cmd Command
		switch k := rng.IntN(16); {
		case k < 3:
			c := dataflow.NewChunk(2, 2)
			for range 2 {
				c.Push([]int64{rng.Int64N(4), rng.Int64N(3)}, upper, 1)
			}
			cmd = Input{Name: in, Chunk: c}
		case k < 5:
			upper++
			cmd = AdvanceInput{Name: in, Frontier: frontier.At(upper)}
		case k < 7:
			cmd = CreateDataflow{Desc: indexDesc(id("i", 2), in, 2, []int{0}, 0, nil)}
		case k < 8:
			cmd = CreateDataflow{Desc: reexportDesc(id("m", 2), id("i", 2), id("x", 2), rng.IntN(2) == 0)}
		case k < 11:
			src := id("i", 2)
			if rng.IntN(3) == 0 {
				src = id("x", 2)
			}
			cmd = CreateDataflow{Desc: readDesc(id("r", 3), src, uint64(rng.IntN(int(upper)+2)), frontier.Empty(), dataflow.NewCapture(s.workers))}
		case k < 12:
			cmd = AllowCompaction{ID: id("i", 2), Frontier: frontier.At(uint64(rng.IntN(int(upper) + 2)))}
		case k < 13:
			cmd = AllowCompaction{ID: id("i", 2), Frontier: frontier.Empty()}
		case k < 15:
			ids := []string{"maintain " + id("i", 2), id("m", 2), id("r", 3)}
			cmd = DropDataflow{ID: ids[rng.IntN(len(ids))]}
		default:
			take()
			continue
		}
		line := fmt.Sprintf("%d %T %s", step, cmd, cmdID(cmd))
		if err := s.ctl.Send(cmd); err != nil {
			line += ": refused: " + err.Error()
		}
		lines = append(lines, line)
	}
	return lines
}

// One controller called from several goroutines at once — each sending
// its own random commands (callerScript), taking the controller's errors
// whenever it likes, while the others send — gives Solo and the
// Maintenance/Interactive pair the same refusals for every goroutine's
// commands and, once synced, the same errors, each once: how the
// goroutines interleave changes the commands' numbers, not what any
// command is refused or causes. One and two workers, under -race too.
func TestCallersOfOneControllerAgree(t *testing.T) {
	const callers = 4
	seeds := uint64(8)
	if testing.Short() {
		seeds = 3
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, w := range []int{1, 2} {
			var lines [2][callers][]string
			var errs [2][]string
			for k, mode := range []string{"solo", "pair"} {
				s := newSetup(t, mode, w)
				var mu gosync.Mutex
				seen := map[string]bool{} // each error once, by its command's number and text
				take := func() {
					taken := s.ctl.TakeErrors()
					mu.Lock()
					defer mu.Unlock()
					for _, e := range taken {
						if key := fmt.Sprintf("%d: %s", e.Seq, e.Err); seen[key] {
							t.Errorf("seed %d, %s, workers %d: %s taken twice", seed, mode, w, key)
						} else {
							seen[key] = true
						}
						errs[k] = append(errs[k], e.Err.Error())
					}
				}
				var wg gosync.WaitGroup
				for g := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						lines[k][g] = callerScript(t, s, g, seed, take)
					}()
				}
				wg.Wait()
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				take()
				slices.Sort(errs[k])
			}
			for g := range callers {
				if !slices.Equal(lines[0][g], lines[1][g]) {
					t.Fatalf("seed %d, workers %d, goroutine %d: Send's verdicts differ:\nsolo:\n%s\npair:\n%s", seed, w, g, strings.Join(lines[0][g], "\n"), strings.Join(lines[1][g], "\n"))
				}
			}
			if len(errs[0]) == 0 {
				t.Fatalf("seed %d, workers %d: no error at all: the scripts test nothing", seed, w)
			}
			if !slices.Equal(errs[0], errs[1]) {
				t.Fatalf("seed %d, workers %d: errors differ:\nsolo:\n%s\npair:\n%s", seed, w, strings.Join(errs[0], "\n"), strings.Join(errs[1], "\n"))
			}
		}
	}
}

// waitOutcome waits (briefly: a hang is an outcome here, not a test
// timeout) until w has passed t and names how the wait ended.
func waitOutcome(w interface {
	WaitPassed(context.Context, frontier.Time) error
}, t uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := w.WaitPassed(ctx, t)
	switch {
	case err == nil:
		return "passed"
	case errors.Is(err, dataflow.ErrProbeDropped):
		return "dropped"
	case errors.Is(err, ErrShutdown):
		return "shut down"
	case errors.Is(err, context.DeadlineExceeded):
		return "still waiting"
	}
	return err.Error()
}

// Waits on the probes and captures of dataflows a user drops, fails or
// creates again end alike in Solo and the pair, whichever runtime of the
// pair is behind: a query created and dropped while the pair lags, waited
// on before the lagging runtime applies either command (dropped, once it
// does); a Maintained dataflow's probe attached by a Build that then fails
// (dropped); a query's capture attached before an import of an index
// whose create failed (dropped), and that capture given to the query
// created again (the create refused: a capture reads one stream; dropped);
// a query dropped and created again under its id with a new capture (the
// old capture's wait dropped, the new one passes).
func TestWaitsOnDroppedAndFailedDataflowsAgree(t *testing.T) {
	want := "[created and dropped while behind: dropped failed Maintained probe: dropped capture before a failed import: dropped the same capture again: dropped first capture after the drop: dropped new capture of the same id: passed]"
	wantErrs := []string{
		`dataflow bad: no index today`,
		`dataflow q2: capture already attached on worker 0: one reads one stream of one dataflow (make a new one for each)`,
		`dataflow q2: import of index "bx": the create of dataflow "bad", which exports it, failed`,
	}
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			var out []string
			s.send("in", 2, []int64{0, 1, 1, 10})
			s.advance("in", 2, frontier.At(1))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			cp := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
			s.must(DropDataflow{ID: "q"})
			waited := make(chan string, 1)
			go func() { waited <- waitOutcome(cp, 5) }()
			s.resume()
			out = append(out, "created and dropped while behind: "+<-waited)

			p := dataflow.NewProbe(s.workers)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "bad", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"bx"},
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					c.Probe(p, in.Oks)
					return errors.New("no index today")
				},
			}})
			out = append(out, "failed Maintained probe: "+waitOutcome(p, 0))

			cp2 := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "q2", AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Capture(cp2, a.Oks)
					_, err = c.ImportIndex("bx")
					return err
				},
			}})
			out = append(out, "capture before a failed import: "+waitOutcome(cp2, 0))
			s.must(DropDataflow{ID: "q2"})
			s.must(CreateDataflow{Desc: readDesc("q2", "idx", 0, frontier.Empty(), cp2)})
			out = append(out, "the same capture again: "+waitOutcome(cp2, 0))

			cp3 := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: readDesc("q3", "idx", 0, frontier.Empty(), cp3)})
			if err := cp3.WaitPassed(testCtx(t), 0); err != nil {
				t.Fatal(err)
			}
			s.must(DropDataflow{ID: "q3"})
			cp4 := dataflow.NewCapture(s.workers)
			s.must(CreateDataflow{Desc: readDesc("q3", "idx", 0, frontier.Empty(), cp4)})
			s.advance("in", 2, frontier.At(3))
			// The old capture waits for 3, which no update reaches: in
			// the pair, the Interactive worker may step q3 through the
			// publication of the advance before it applies the drop
			// (the publisher runs on its own worker), and pass 2 where
			// Solo, applying both in order, had dropped it.
			out = append(out, "first capture after the drop: "+waitOutcome(cp3, 3), "new capture of the same id: "+waitOutcome(cp4, 2))
			return fmt.Sprint(out)
		})
		for w, o := range outs {
			if o.answer != want || !slices.Equal(o.errs, wantErrs) {
				t.Errorf("lag %v, workers %d: %s\nerrors %q\nwant %s\nerrors %q", lag, w, o.answer, o.errs, want, wantErrs)
			}
		}
	}
}
