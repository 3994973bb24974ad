package runtime

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// misuseFor is how long TestMisuseDiff draws seeds: a few seconds by
// default (less with -short), as long as asked to hunt locally.
var (
	misuseFor   = flag.Duration("misuse.for", 0, "how long TestMisuseDiff draws seeds (0: 3s, 1s with -short)")
	misuseSteps = flag.Int("misuse.steps", 60, "commands TestMisuseDiff draws per seed")
)

// TestMisuseDiff is the differential test of misuse: Solo and the
// Maintenance/Interactive pair (1 and 2 workers; one runtime of the pair
// started Paused and resumed at a random step, and later held behind and
// released at random steps) receive the same random commands, valid ones
// mixed with what users do wrong — re-creating a live dataflow or input,
// creating again an id just dropped, dropping unknown or dropped ids,
// importing an index never made, dropped, freed or whose create failed,
// Builds failing on every worker, the first or the last one only, a
// Maintained dataflow importing a query's re-export, a query reading an
// input, operators sending bad chunks, compaction allowed backward and to
// {}, rows behind the input frontier, of the wrong arity or nil,
// frontiers moved backward or closed, batches (SendAll) refused halfway,
// errors taken while the pair lags, and at the end Shutdown twice (by
// the controller, or by a runtime from two goroutines, or while the pair
// lags) and Send, Sync and Stats after it. After each command the two
// controllers must have returned the same Send error and numbered it
// alike; at every check (both caught up, Synced and at rest) the errors
// taken must be the same (command number and text; a step's error, Seq 0,
// as CommandError says), every live query that no error names must equal
// the model at every time its inputs completed, and every other live
// query must agree between the two at every time both have passed.
//
// Each seed is deterministic (the commands drawn depend on the seed
// alone); the test draws seeds from -seed (or the clock) on for
// -misuse.for, -misuse.steps commands each.
func TestMisuseDiff(t *testing.T) {
	budget := *misuseFor
	if budget == 0 {
		budget = 3 * time.Second
		if testing.Short() {
			budget = time.Second
		}
	}
	base := testSeed(t)
	deadline := time.Now().Add(budget)
	n := 0
	var st misuseStats
	for s := base; n == 0 || time.Now().Before(deadline); s++ {
		for _, w := range []int{1, 2} {
			ok := t.Run(fmt.Sprintf("seed=%d/workers=%d", s, w), func(t *testing.T) {
				misuseDiff(t, s, w, *misuseSteps, &st)
			})
			if !ok {
				t.Fatalf("seed %d fails (replay with -run 'TestMisuseDiff' -seed %d -misuse.for 1ns)", s, s)
			}
		}
		n++
	}
	t.Logf("%d seeds from %d, 1 and 2 workers: %+v", n, base, st)
}

// misuseIndex is the test's record of an index id: whether a dataflow
// exporting it lives (the controller's view) and what its rows are.
type misuseIndex struct {
	id, input string
	made      bool // a create of it was accepted and not dropped
	freed     bool // AllowCompaction to {} since
}

// misuseStats count what the seeds did.
type misuseStats struct {
	Accepted, Refused, Errors, Checks, Times, BrokenTimes int
	Readers, Broken, StepErrsOfDropped                    int
}

type misuseQuery struct {
	id     string
	input  string // "" if it reads no input's index
	seq    uint64 // its create's command number
	asOf   uint64
	until  frontier.Frontier
	cps    [2]*dataflow.Capture
	live   bool
	broken bool   // an error names it
	export string // the index it re-exports, if any
}

func misuseDiff(t *testing.T, seed uint64, w, steps int, st *misuseStats) {
	rng := rand.New(rand.NewPCG(seed, 23))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lag := []Role{Solo, Maintenance, Interactive}[rng.IntN(3)]
	solo, pair := newSetup(t, "solo", w), newLagSetup(t, "pair", w, lag)
	both := [2]*setup{solo, pair}
	resumeAt := rng.IntN(steps)
	var release func()
	catchUp := func() {
		pair.resume()
		if release != nil {
			release()
			release = nil
		}
	}
	defer catchUp()

	inputs := []string{"in0", "in1", "in2"}
	rows := map[string][][]int64{}
	upper := map[string]uint64{}
	closed := map[string]bool{} // advanced to {}
	ixs := []*misuseIndex{{id: "ix0", input: "in0"}, {id: "ix1", input: "in1"}, {id: "ix2", input: "in0"}, {id: "ix3", input: "in2"}}
	// carries are the inputs whose rows the live exports carry, by index
	// id ("" for a re-export whose import cannot have been made): an
	// index's id may be a reader's re-export.
	carries := map[string]string{}
	var queries []*misuseQuery
	byID := map[string]*misuseQuery{}
	var seq uint64
	var log []string // the commands sent, for a failure's message

	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, workers %d, lag %v: %s\ncommands:\n%s", seed, w, lag, fmt.Sprintf(format, args...), strings.Join(log, "\n"))
	}
	// send sends the command made by mk (one per setup) to both and
	// requires the same verdict.
	send := func(what string, mk func(i int) Command) {
		var got [2]string
		for i, s := range both {
			got[i] = s.sendErr(mk(i))
		}
		log = append(log, fmt.Sprintf("%d %s -> %q", seq+1, what, got[0]))
		if got[0] != got[1] {
			fail("Send of %s: solo %q, pair %q", what, got[0], got[1])
		}
		if got[0] == "" {
			seq++
			st.Accepted++
		} else {
			st.Refused++
		}
		if a, b := ctlSeq(solo), ctlSeq(pair); a != seq || b != seq {
			fail("Send of %s: commands numbered to %d in solo, %d in the pair, want %d", what, a, b, seq)
		}
	}
	sendAll := func(what string, cmd Command) { send(what, func(int) Command { return cmd }) }

	chunk := func(arity int, rs [][]int64) *dataflow.Chunk {
		c := dataflow.NewChunk(arity, len(rs))
		for _, r := range rs {
			c.Push(r[2:], uint64(r[0]), r[1])
		}
		return c
	}
	for _, in := range inputs {
		// in2 keeps no history: an index of it created after its first
		// rows fails (dataflow.ErrInputHistory).
		sendAll("create input "+in, CreateInput{Name: in, Arity: 2, NoHistory: in == "in2"})
	}

	// readerDesc imports imp, captures it, and re-exports it as exp
	// ("": none); failOn is as indexDesc's.
	readerDesc := func(id string, maintained bool, imp, exp string, asOf uint64, until frontier.Frontier, cp *dataflow.Capture, failOn int, ctl *Controller) dataflow.Desc {
		d := dataflow.Desc{
			ID: id, Maintained: maintained, AsOf: frontier.At(asOf), Until: until,
			Build: func(c *dataflow.Context) error {
				if failOn == -2 {
					// Sync from a Build: refused at once, ErrOnWorker,
					// whichever runtime builds it.
					if err := ctl.Sync(ctx); !errors.Is(err, ErrOnWorker) {
						return fmt.Errorf("Sync from the Build of %s: %v, want ErrOnWorker", id, err)
					}
					return fmt.Errorf("the build of %s: %w", id, ErrOnWorker)
				}
				if failOn == w || failOn == c.Worker() {
					return fmt.Errorf("the build of %s fails on worker %d", id, c.Worker())
				}
				var a *dataflow.Arrangement
				if in, ok := strings.CutPrefix(imp, "input "); ok {
					// Direct mode's reading of an input (refused to a
					// query, ErrQueryReadsInput).
					coll, err := c.Input(in, 2)
					if err != nil {
						return err
					}
					if a, err = c.Arrange(coll, []int{0}); err != nil {
						return err
					}
				} else {
					var err error
					if a, err = c.ImportIndex(imp); err != nil {
						return err
					}
				}
				c.Capture(cp, a.Oks)
				if exp != "" {
					return c.Export(exp, a)
				}
				return nil
			},
		}
		if exp != "" {
			d.Exports = []string{exp}
		}
		return d
	}

	// indexBuild maintains ix's input arranged by column 0; failOn is the
	// worker whose Build fails (-1: none, w: every worker).
	indexDesc := func(ix *misuseIndex, asOf uint64, failOn int, fault string) dataflow.Desc {
		return dataflow.Desc{
			ID: "maintain " + ix.id, Maintained: true, AsOf: frontier.At(asOf), Until: frontier.Empty(),
			Exports: []string{ix.id},
			Build: func(c *dataflow.Context) error {
				if failOn == w || failOn == c.Worker() {
					return fmt.Errorf("the build of %s fails on worker %d", ix.id, c.Worker())
				}
				in, err := c.Input(ix.input, 2)
				if err != nil {
					return err
				}
				if fault != "" {
					// An operator that breaks its contract once the
					// input reaches {3} (see feed).
					b := c.NewOperator("feed")
					f := &feed{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b), fault: fault}
					if err := b.Build(f); err != nil {
						return err
					}
					in.Oks = f.out
				}
				a, err := c.Arrange(in, []int{0})
				if err != nil {
					return err
				}
				return c.Export(ix.id, a)
			},
		}
	}

	// taken are the errors taken since the last check: a take while
	// the pair lags returns what its runtimes met so far, and the rest
	// come once, later.
	var taken [2][]string
	droppedSince := map[string]bool{}
	take := func() {
		for i, s := range both {
			for _, e := range s.ctl.TakeErrors() {
				taken[i] = append(taken[i], fmt.Sprintf("%d: %v", e.Seq, e.Err))
			}
		}
	}
	check := func(step int) {
		catchUp()
		for _, s := range both {
			if err := s.ctl.Sync(ctx); err != nil {
				fail("step %d: %s: Sync: %v", step, s.mode, err)
			}
			// An error no command caused (Seq 0: a step's, here an
			// operator's bad chunk) comes as the dataflows run, and
			// Sync waits for no step another worker's output causes
			// after its barrier: both are compared at rest.
			if !awaitIdle(ctx.Done(), s.rts...) {
				fail("step %d: %s: never idle", step, s.mode)
			}
		}
		take()
		errs := taken
		for i := range errs {
			// A step's error (Seq 0) is met as far as the dataflow ran,
			// which the commands do not decide: one dropped since the
			// last check may have been dropped before it stepped to it,
			// in one setup and not the other (CommandError). Of a
			// dataflow still live, both ran to rest and met the same.
			errs[i] = slices.DeleteFunc(errs[i], func(e string) bool {
				for id := range droppedSince {
					if strings.HasPrefix(e, "0: dataflow "+id+":") {
						st.StepErrsOfDropped++
						return true
					}
				}
				return false
			})
			slices.Sort(errs[i])
			// A step's error met by several workers is returned once a
			// take, and again by a take after one met it later
			// (TakeErrors): the same ones, once each, are compared.
			errs[i] = slices.CompactFunc(errs[i], func(a, b string) bool { return a == b && strings.HasPrefix(a, "0: ") })
		}
		clear(droppedSince)
		if !slices.Equal(errs[0], errs[1]) {
			fail("step %d: errors differ:\nsolo:\n%s\npair:\n%s", step, strings.Join(errs[0], "\n"), strings.Join(errs[1], "\n"))
		}
		taken = [2][]string{}
		st.Errors += len(errs[0])
		st.Checks++
		for _, e := range errs[0] {
			// An error of its create or after names it (an earlier
			// incarnation's come before its create).
			var n uint64
			fmt.Sscanf(e, "%d:", &n)
			for _, q := range queries {
				if q.live && n >= q.seq && strings.Contains(e, "dataflow "+q.id+":") {
					q.broken = true
				}
			}
		}
		for _, q := range queries {
			if !q.live {
				continue
			}
			st.Readers++
			if q.broken || q.input == "" {
				st.Broken++
				// It passes what it passes: the two agree where both
				// have.
				var last [2]uint64
				for i, cp := range q.cps {
					f := cp.Frontier()
					if ft, ok := f.Time(); ok {
						last[i] = ft
					} else {
						last[i] = ^uint64(0)
					}
				}
				upto := min(last[0], last[1])
				if u, ok := q.until.Time(); ok {
					upto = min(upto, u)
				}
				for tm := q.asOf; tm < upto && tm < q.asOf+64; tm++ {
					if a, b := fmt.Sprint(captured(q.cps[0], tm)), fmt.Sprint(captured(q.cps[1], tm)); a != b {
						fail("step %d: query %s (broken) at %d: solo %s, pair %s", step, q.id, tm, a, b)
					}
					st.BrokenTimes++
				}
				continue
			}
			if upper[q.input] == 0 {
				continue
			}
			last := upper[q.input] - 1
			if u, ok := q.until.Time(); ok {
				last = min(last, u-1)
			}
			if last < q.asOf {
				continue
			}
			for i, cp := range q.cps {
				wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
				err := cp.WaitPassed(wctx, last)
				wcancel()
				if err != nil {
					fail("step %d: query %s (as_of %d, until %v) in %s never passed %d (frontier %v): %v", step, q.id, q.asOf, q.until, both[i].mode, last, cp.Frontier(), err)
				}
				for tm := q.asOf; tm <= last; tm++ {
					if got, want := captured(cp, tm), model(rows[q.input], tm); fmt.Sprint(got) != fmt.Sprint(want) {
						fail("step %d: query %s (as_of %d) in %s at %d: %v, want %v", step, q.id, q.asOf, both[i].mode, tm, got, want)
					}
					st.Times++
				}
			}
		}
	}

	pick := func(ids ...string) string { return ids[rng.IntN(len(ids))] }
	for step := range steps {
		if step == resumeAt {
			pair.resume()
		}
		in := inputs[rng.IntN(len(inputs))]
		switch k := rng.IntN(22); {
		case k < 4: // rows at the frontier, or later
			var b [][]int64
			for range 1 + rng.IntN(4) {
				b = append(b, []int64{int64(upper[in] + uint64(rng.IntN(2))), []int64{1, 1, -1}[rng.IntN(3)], rng.Int64N(4), rng.Int64N(3)})
			}
			before := seq
			sendAll(fmt.Sprintf("input %s %v", in, b), Input{Name: in, Chunk: chunk(2, b)})
			if seq > before {
				rows[in] = append(rows[in], b...)
			}
		case k < 5: // rows behind the frontier, of the wrong arity, nil, or to an unknown input
			switch rng.IntN(4) {
			case 0:
				if upper[in] > 0 {
					sendAll("input behind "+in, Input{Name: in, Chunk: chunk(2, [][]int64{{int64(upper[in] - 1), 1, 1, 1}})})
				}
			case 1:
				sendAll("input arity 3 "+in, Input{Name: in, Chunk: chunk(3, [][]int64{{int64(upper[in]), 1, 1, 1, 1}})})
			case 2:
				sendAll("input nil chunk "+in, Input{Name: in})
			default:
				sendAll("input unknown", Input{Name: "nope", Chunk: chunk(2, [][]int64{{0, 1, 1, 1}})})
			}
		case k < 7: // frontier forward, kept, backward, or to {}
			f := frontier.At(upper[in] + uint64(rng.IntN(3)))
			if rng.IntN(4) == 0 && upper[in] > 0 {
				f = frontier.At(upper[in] - 1 - uint64(rng.IntN(int(upper[in]))))
			} else if rng.IntN(12) == 0 {
				f = frontier.Empty()
			}
			before := seq
			sendAll(fmt.Sprintf("advance %s to %v", in, f), AdvanceInput{Name: in, Frontier: f})
			if seq > before {
				if ft, ok := f.Time(); ok {
					upper[in] = ft
				} else {
					closed[in] = true
				}
			}
		case k < 8: // declared again
			sendAll("create input again "+in, CreateInput{Name: in, Arity: 1 + rng.IntN(2)})
		case k < 11: // an index created (live or not), maybe failing
			ix := ixs[rng.IntN(len(ixs))]
			asOf := uint64(0)
			if rng.IntN(2) == 0 {
				asOf = uint64(rng.IntN(int(upper[ix.input]) + 2))
			}
			failOn := -1
			switch rng.IntN(6) {
			case 0:
				failOn = w // every worker: worker 0's error is reported
			case 1:
				failOn = w - 1 // the last worker only
			case 2:
				failOn = 0 // the first only
			}
			fault := ""
			if rng.IntN(6) == 0 {
				// Not "past": whether its update is behind the frontier
				// its stream announced depends on the steps it ran
				// between two advances, which timing decides.
				fault = pick("nil", "arity")
			}
			before := seq
			sendAll(fmt.Sprintf("create index %s as_of %d fail %d fault %q", ix.id, asOf, failOn, fault), CreateDataflow{Desc: indexDesc(ix, asOf, failOn, fault)})
			if seq > before {
				ix.made, ix.freed = true, false
				carries[ix.id] = ix.input
				if fault != "" {
					carries[ix.id] = "" // its readers stop where it does
				}
			}
		case k < 14: // a reader of an index, whatever its state
			maintained := rng.IntN(4) == 0
			id := fmt.Sprintf("q%d", rng.IntN(4))
			if maintained {
				id = fmt.Sprintf("m%d", rng.IntN(2))
			}
			imp := pick("ix0", "ix1", "ix2", "ix3", "r0", "r1", "never", "input in0", "input in2", "input nope")
			if live := slices.Sorted(maps.Keys(carries)); len(live) > 0 && rng.IntN(3) > 0 {
				imp = live[rng.IntN(len(live))] // mostly a live one
			}
			input := carries[imp]
			if in, ok := strings.CutPrefix(imp, "input "); ok {
				input = in
				if in == "nope" {
					input = ""
				}
			}
			exp := ""
			until := frontier.Empty()
			of := input
			if of == "" {
				of = pick(inputs...)
			}
			asOf := uint64(rng.IntN(int(upper[of]) + 2))
			if rng.IntN(4) == 0 {
				exp = pick("r0", "r1", "ix0")
			} else if rng.IntN(3) == 0 {
				until = frontier.At(asOf + 1 + uint64(rng.IntN(4)))
			}
			failOn := -1
			switch rng.IntN(16) {
			case 0:
				failOn = w
			case 1:
				failOn = w - 1
			case 2:
				failOn = 0
			case 3:
				failOn = -2 // Sync from the Build
			}
			q := &misuseQuery{id: id, input: input, asOf: asOf, until: until, live: true}
			before := seq
			send(fmt.Sprintf("create reader %s (maintained %v) of %s as %q as_of %d until %v fail %d", id, maintained, imp, exp, asOf, until, failOn), func(i int) Command {
				q.cps[i] = dataflow.NewCapture(w)
				return CreateDataflow{Desc: readerDesc(id, maintained, imp, exp, asOf, until, q.cps[i], failOn, both[i].ctl)}
			})
			if seq > before {
				q.seq, q.export = seq, exp
				queries = append(queries, q)
				byID[id] = q
				if exp != "" {
					carries[exp] = input
				}
			}
		case k < 16: // compaction: forward, backward, or to {}
			ixID := pick("ix0", "ix1", "ix2", "ix3", "r0", "r1", "never")
			f := frontier.At(uint64(rng.IntN(int(upper[pick(inputs...)]) + 2)))
			if rng.IntN(4) == 0 {
				f = frontier.Empty()
			}
			before := seq
			sendAll(fmt.Sprintf("allow compaction %s to %v", ixID, f), AllowCompaction{ID: ixID, Frontier: f})
			if seq > before && f.IsEmpty() {
				for _, ix := range ixs {
					if ix.id == ixID {
						ix.freed = true
					}
				}
				delete(carries, ixID)
			}
		case k < 18: // a drop, of a live id or not
			id := pick("maintain ix0", "maintain ix1", "maintain ix2", "maintain ix3", "q0", "q1", "q2", "q3", "m0", "m1", "nope")
			before := seq
			sendAll("drop "+id, DropDataflow{ID: id})
			if seq > before {
				droppedSince[id] = true
				if q := byID[id]; q != nil {
					q.live = false
					delete(byID, id)
					if q.export != "" {
						delete(carries, q.export)
					}
				}
				for _, ix := range ixs {
					if "maintain "+ix.id == id {
						ix.made = false
						delete(carries, ix.id)
					}
				}
			}
		case k < 19: // one runtime of the pair falls behind, or catches up
			if release == nil {
				release = gate(pair.role([]Role{Maintenance, Interactive}[rng.IntN(2)]))
			} else {
				catchUp()
			}
		case k < 20:
			check(step)
		case k < 21: // errors taken whatever either runtime has applied
			take()
		default: // a batch: the commands before a refused one are sent
			var cmds []Command
			var adds [][][]int64
			var what []string
			for range 2 + rng.IntN(2) {
				switch rng.IntN(3) {
				case 0:
					b := [][]int64{{int64(upper[in] + uint64(rng.IntN(2))), 1, rng.Int64N(4), rng.Int64N(3)}}
					cmds, adds, what = append(cmds, Input{Name: in, Chunk: chunk(2, b)}), append(adds, b), append(what, fmt.Sprintf("input %s %v", in, b))
				case 1:
					f := upper[in] + 1
					if rng.IntN(2) == 0 && upper[in] > 0 {
						f = upper[in] - 1
					}
					cmds, adds, what = append(cmds, AdvanceInput{Name: in, Frontier: frontier.At(f)}), append(adds, nil), append(what, fmt.Sprintf("advance %s to %d", in, f))
				default:
					id := pick("q0", "m0", "nope")
					cmds, adds, what = append(cmds, DropDataflow{ID: id}), append(adds, nil), append(what, "drop "+id)
				}
			}
			var got [2]string
			for i, s := range both {
				if err := s.ctl.SendAll(cmds...); err != nil {
					got[i] = err.Error()
				}
			}
			n := ctlSeq(solo) - seq
			log = append(log, fmt.Sprintf("%d batch %s -> %q, %d sent", seq+1, strings.Join(what, "; "), got[0], n))
			if got[0] != got[1] || ctlSeq(pair) != ctlSeq(solo) {
				fail("SendAll: solo %q to %d, pair %q to %d", got[0], ctlSeq(solo), got[1], ctlSeq(pair))
			}
			seq += n
			for j := range n {
				switch c := cmds[j].(type) {
				case Input:
					rows[in] = append(rows[in], adds[j]...)
				case AdvanceInput:
					upper[in], _ = c.Frontier.Time()
				case DropDataflow:
					droppedSince[c.ID] = true
					if q := byID[c.ID]; q != nil {
						q.live = false
						delete(byID, c.ID)
						if q.export != "" {
							delete(carries, q.export)
						}
					}
				}
			}
		}
	}
	// Shut down twice: by the controller, or by a runtime (either of the
	// pair's shuts down both), from two goroutines at once; or while the
	// pair may still lag, where the errors of what a runtime discarded
	// are not compared (they agree once both runtimes applied a command,
	// and Shutdown discards what is queued).
	variant := rng.IntN(3)
	log = append(log, fmt.Sprintf("shutdown, variant %d", variant))
	if variant < 2 {
		check(steps)
	} else if release != nil {
		release() // a gate's worker waits in a barrier that only this ends
		release = nil
	}
	for _, s := range both {
		switch variant {
		case 1:
			r := s.rts[rng.IntN(len(s.rts))]
			done := make(chan struct{})
			go func() { r.Shutdown(); close(done) }()
			r.Shutdown()
			<-done
			s.ctl.Shutdown()
		default:
			s.ctl.Shutdown()
			s.ctl.Shutdown()
		}
	}
	var after [2][]string // each mode's errors after Shutdown, as text
	for i, s := range both {
		if err := s.ctl.Send(DropDataflow{ID: "q0"}); !errors.Is(err, ErrShutdown) {
			fail("%s: Send after Shutdown: %v, want ErrShutdown", both[i].mode, err)
		} else {
			after[i] = append(after[i], err.Error())
		}
		if err := s.ctl.SendAll(CreateInput{Name: "late", Arity: 1}); !errors.Is(err, ErrShutdown) {
			fail("%s: SendAll after Shutdown: %v, want ErrShutdown", both[i].mode, err)
		} else {
			after[i] = append(after[i], err.Error())
		}
		if err := s.ctl.Sync(ctx); !errors.Is(err, ErrShutdown) {
			fail("%s: Sync after Shutdown: %v, want ErrShutdown", both[i].mode, err)
		} else {
			after[i] = append(after[i], err.Error())
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.ctl.Sync(done); !errors.Is(err, context.Canceled) {
			fail("%s: Sync of an ended context after Shutdown: %v, want context.Canceled", both[i].mode, err)
		} else {
			after[i] = append(after[i], err.Error())
		}
	}
	// Solo's and the pair's say the same (a Sync's named the role of the
	// runtime it asked: "solo barrier", "interactive barrier").
	if !slices.Equal(after[0], after[1]) {
		fail("after Shutdown: Send, SendAll and Sync say different things:\nsolo: %q\npair: %q", after[0], after[1])
	}
	for _, s := range both {
		for _, r := range s.rts {
			if _, err := r.Stats(ctx); !errors.Is(err, ErrShutdown) {
				fail("%s: %v Stats after Shutdown: %v, want ErrShutdown", s.mode, r.Role(), err)
			}
		}
	}
	take()
	if variant == 2 {
		return
	}
	errs := taken
	if !slices.Equal(errs[0], errs[1]) {
		fail("after Shutdown: errors differ:\nsolo:\n%s\npair:\n%s", strings.Join(errs[0], "\n"), strings.Join(errs[1], "\n"))
	}
}

// ctlSeq returns the number of the last command s's controller accepted.
func ctlSeq(s *setup) uint64 {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.ctl.seq
}
