package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestReshapedIdsAgreeAndLeaveNothing drives Solo and the pair with the
// same random commands over ids that come back with other shapes: the
// dataflows m0..m2 export one or two of the indexes X, Y and Z, each
// arranged over an input of one, two or three columns by a random key
// (a key column past the row now and then, which fails the create), so
// an id dropped or freed and created again has another arity, another
// key, another exporter or another as_of; queries import one or two of
// them (or an index never made), a Maintained reader reads one;
// compaction is allowed forward, past the input's frontier, backward and
// to {}; inputs are closed ({}) and then sent rows, empty chunks and
// rows behind the frontier. Either runtime of the pair is held behind
// for random stretches. Beside the commands, a goroutine per setup waits
// on the captures, calls Sync, SyncRole and Errors with contexts ended
// mid-wait (their outcomes are timing's, not compared; -race reads
// them). At every check both controllers must have returned the same
// Send errors, reported the same errors, and every live reader no error
// names must equal the model at every time its input completed (the
// others agree where both passed). At the end every dataflow is dropped:
// no runtime, registry, worker or controller keeps anything of them, and
// once shut down no goroutine is left. RESHAPE_SEED runs one seed, and
// RESHAPE_LOG set logs its commands.
func TestReshapedIdsAgreeAndLeaveNothing(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if testing.Short() {
		seeds = seeds[:2]
	}
	if v := os.Getenv("RESHAPE_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RESHAPE_SEED=%q: %v", v, err)
		}
		seeds = []uint64{s}
	}
	for _, s := range seeds {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("seed=%d/workers=%d", s, w), func(t *testing.T) {
				reshape(t, s, w, 300)
			})
		}
	}
}

// reshapeIndex is the test's record of an index id's live incarnation.
type reshapeIndex struct {
	by    string // the dataflow exporting it ("": none live)
	input string
	key   []int
	asOf  uint64
	since uint64 // its as_of, or the last compaction allowed
	bad   bool   // its create fails
}

type reshapeReader struct {
	id    string
	seq   uint64
	asOf  uint64
	until frontier.Frontier
	imps  []string
	ins   []string // the input each import carries ("": none known); nil once an error names the reader
	cps   [2][]*dataflow.Capture
	live  bool
}

func reshape(t *testing.T, seed uint64, w, steps int) {
	goroutines := goruntime.NumGoroutine()
	rng := rand.New(rand.NewPCG(seed, 41))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	solo, pair := newSetup(t, "solo", w), newSetup(t, "pair", w)
	both := [2]*setup{solo, pair}
	var release func()
	catchUp := func() {
		if release != nil {
			release()
			release = nil
		}
	}
	defer catchUp()

	arity := map[string]int{"a": 1, "b": 2, "c": 3}
	inputs := []string{"a", "b", "c"}
	rows := map[string][][]int64{}
	upper := map[string]uint64{}
	closed := map[string]bool{}
	ixs := map[string]*reshapeIndex{"X": {}, "Y": {}, "Z": {}}
	exportsOf := map[string][]string{} // live dataflow m* → its exports
	var readers []*reshapeReader
	byID := map[string]*reshapeReader{}
	var seq uint64
	var refused, nerrs, times, agreed int
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, workers %d: %s\ncommands:\n%s", seed, w, fmt.Sprintf(format, args...), strings.Join(log, "\n"))
	}
	send := func(what string, mk func(i int) Command) bool {
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
		} else {
			refused++
		}
		return got[0] == ""
	}
	sendBoth := func(what string, cmd Command) bool { return send(what, func(int) Command { return cmd }) }
	for _, in := range inputs {
		sendBoth("create input "+in, CreateInput{Name: in, Arity: arity[in]})
	}

	// The goroutine beside the commands: waits, syncs and reads of the
	// errors, each with a context that may end while it waits.
	var capsMu gosync.Mutex
	var caps [2][]*dataflow.Capture
	stop := make(chan struct{})
	var side gosync.WaitGroup
	// quiet is held by a check while it waits for the workers to be idle
	// at once, which a Sync a moment wakes them for would put off for as
	// long as it goes on (on one thread, for the run's whole minute).
	var quiet gosync.RWMutex
	for i, s := range both {
		side.Add(1)
		go func() {
			defer side.Done()
			r := rand.New(rand.NewPCG(seed, uint64(100+i)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				quiet.RLock()
				wctx, wcancel := context.WithCancel(ctx)
				done := make(chan struct{})
				after := time.Duration(r.IntN(200)) * time.Microsecond
				go func() {
					select {
					case <-done:
					case <-time.After(after):
					}
					wcancel()
				}()
				var err error
				switch r.IntN(4) {
				case 0:
					capsMu.Lock()
					var cp *dataflow.Capture
					if n := len(caps[i]); n > 0 {
						cp = caps[i][r.IntN(n)]
					}
					capsMu.Unlock()
					if cp != nil {
						err = cp.WaitPassed(wctx, uint64(r.IntN(8)))
						cp.Frontier()
					}
				case 1:
					err = s.ctl.Sync(wctx)
				case 2:
					err = s.ctl.SyncRole(wctx, s.rts[r.IntN(len(s.rts))].Role())
				default:
					for _, e := range s.ctl.Errors() {
						_ = e.Error()
					}
				}
				close(done)
				wcancel()
				quiet.RUnlock()
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
					!errors.Is(err, dataflow.ErrProbeDropped) && !errors.Is(err, ErrIndexDropped) && !strings.Contains(err.Error(), "dataflow ") {
					t.Errorf("%s: a call beside the commands: %v", s.mode, err)
				}
			}
		}()
	}
	stopSide := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		side.Wait()
	}
	defer stopSide()

	chunk := func(ar int, rs [][]int64) *dataflow.Chunk {
		c := dataflow.NewChunk(ar, len(rs))
		for _, r := range rs {
			c.Push(r[2:], uint64(r[0]), r[1])
		}
		return c
	}
	// indexDesc arranges, for each export, its input by its key.
	indexDesc := func(id string, exps []string, ins []string, keys [][]int, asOf uint64) dataflow.Desc {
		return dataflow.Desc{
			ID: id, Maintained: true, AsOf: frontier.At(asOf), Until: frontier.Empty(),
			Exports: slices.Clone(exps),
			Build: func(c *dataflow.Context) error {
				for j, exp := range exps {
					in, err := c.Input(ins[j], arity[ins[j]])
					if err != nil {
						return err
					}
					a, err := c.Arrange(in, keys[j])
					if err != nil {
						return err
					}
					if err := c.Export(exp, a); err != nil {
						return err
					}
				}
				return nil
			},
		}
	}
	readerDesc := func(id string, maintained bool, imps []string, asOf uint64, until frontier.Frontier, cps []*dataflow.Capture) dataflow.Desc {
		return dataflow.Desc{
			ID: id, Maintained: maintained, AsOf: frontier.At(asOf), Until: until,
			Build: func(c *dataflow.Context) error {
				for j, imp := range imps {
					a, err := c.ImportIndex(imp)
					if err != nil {
						return err
					}
					c.Capture(cps[j], a.Oks)
				}
				return nil
			},
		}
	}
	var taken [2][]string
	take := func() {
		for i, s := range both {
			for _, e := range s.ctl.TakeErrors() {
				taken[i] = append(taken[i], fmt.Sprintf("%d: %v", e.Seq, e.Err))
			}
		}
	}
	check := func(step int) {
		catchUp()
		quiet.Lock()
		defer quiet.Unlock()
		for _, s := range both {
			if err := s.ctl.Sync(ctx); err != nil {
				fail("step %d: %s: Sync: %v", step, s.mode, err)
			}
			if !awaitIdle(ctx.Done(), s.rts...) {
				fail("step %d: %s: never idle", step, s.mode)
			}
		}
		take()
		errs := taken
		for i := range errs {
			slices.Sort(errs[i])
		}
		if !slices.Equal(errs[0], errs[1]) {
			fail("step %d: errors differ:\nsolo:\n%s\npair:\n%s", step, strings.Join(errs[0], "\n"), strings.Join(errs[1], "\n"))
		}
		taken = [2][]string{}
		nerrs += len(errs[0])
		for _, e := range errs[0] {
			if strings.HasPrefix(e, "0: ") {
				fail("step %d: a step's error: %s", step, e)
			}
			var n uint64
			fmt.Sscanf(e, "%d:", &n)
			for _, q := range readers {
				if q.live && n >= q.seq && strings.Contains(e, "dataflow "+q.id+":") {
					q.ins = nil // broken: compared between the two only
				}
			}
		}
		for _, q := range readers {
			if !q.live {
				continue
			}
			for j := range q.imps {
				var last [2]uint64
				for i := range both {
					if ft, ok := q.cps[i][j].Frontier().Time(); ok {
						last[i] = ft
					} else {
						last[i] = ^uint64(0)
					}
				}
				upto := min(last[0], last[1])
				if u, ok := q.until.Time(); ok {
					upto = min(upto, u)
				}
				for tm := q.asOf; tm < upto && tm < q.asOf+40; tm++ {
					if a, b := fmt.Sprint(captured(q.cps[0][j], tm)), fmt.Sprint(captured(q.cps[1][j], tm)); a != b {
						fail("step %d: reader %s, import %s at %d: solo %s, pair %s", step, q.id, q.imps[j], tm, a, b)
					}
					agreed++
				}
				if q.ins == nil || q.ins[j] == "" {
					continue
				}
				in := q.ins[j]
				lastT := upper[in]
				if closed[in] {
					lastT = q.asOf + 6
				}
				if lastT == 0 {
					continue
				}
				lastT--
				if u, ok := q.until.Time(); ok {
					lastT = min(lastT, u-1)
				}
				if lastT < q.asOf {
					continue
				}
				for i := range both {
					cp := q.cps[i][j]
					wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
					err := cp.WaitPassed(wctx, lastT)
					wcancel()
					if err != nil {
						fail("step %d: reader %s (as_of %d, until %v) import %s in %s never passed %d (frontier %v): %v", step, q.id, q.asOf, q.until, q.imps[j], both[i].mode, lastT, cp.Frontier(), err)
					}
					for tm := q.asOf; tm <= lastT; tm++ {
						if got, want := captured(cp, tm), model(rows[in], tm); fmt.Sprint(got) != fmt.Sprint(want) {
							fail("step %d: reader %s (as_of %d) import %s in %s at %d: %v, want %v", step, q.id, q.asOf, q.imps[j], both[i].mode, tm, got, want)
						}
						times++
					}
				}
			}
		}
	}

	pick := func(ids ...string) string { return ids[rng.IntN(len(ids))] }
	drop := func(id string) {
		if !sendBoth("drop "+id, DropDataflow{ID: id}) {
			return
		}
		if q := byID[id]; q != nil {
			q.live = false
			delete(byID, id)
		}
		for _, x := range exportsOf[id] {
			if ixs[x].by == id {
				*ixs[x] = reshapeIndex{}
			}
		}
		delete(exportsOf, id)
	}
	for step := range steps {
		in := inputs[rng.IntN(len(inputs))]
		switch k := rng.IntN(26); {
		case k < 5: // rows at the frontier or later; behind it; after {}
			var b [][]int64
			for range 1 + rng.IntN(3) {
				r := []int64{int64(upper[in] + uint64(rng.IntN(2))), []int64{1, 1, -1}[rng.IntN(3)]}
				for range arity[in] {
					r = append(r, rng.Int64N(3))
				}
				b = append(b, r)
			}
			if rng.IntN(6) == 0 && upper[in] > 0 {
				b[0][0] = int64(upper[in] - 1)
			}
			if closed[in] && rng.IntN(2) == 0 {
				b = nil // an empty chunk to a closed input
			}
			if sendBoth(fmt.Sprintf("input %s %v", in, b), Input{Name: in, Chunk: chunk(arity[in], b)}) {
				rows[in] = append(rows[in], b...)
			}
		case k < 8: // the frontier forward, kept, back, or to {}
			f := frontier.At(upper[in] + uint64(rng.IntN(3)))
			if rng.IntN(5) == 0 && upper[in] > 0 {
				f = frontier.At(upper[in] - 1)
			} else if rng.IntN(40) == 0 {
				f = frontier.Empty()
			}
			if sendBoth(fmt.Sprintf("advance %s to %v", in, f), AdvanceInput{Name: in, Frontier: f}) {
				if ft, ok := f.Time(); ok {
					upper[in] = ft
				} else {
					closed[in] = true
				}
			}
		case k < 11: // an index dataflow created, exporting one or two ids
			id := fmt.Sprintf("m%d", rng.IntN(3))
			if exportsOf[id] != nil && rng.IntN(3) > 0 {
				drop(id) // the id comes back with another shape
			}
			exps := []string{pick("X", "Y", "Z")}
			if rng.IntN(3) == 0 {
				if e := pick("X", "Y", "Z"); e != exps[0] {
					exps = append(exps, e)
				}
			}
			var ins []string
			var keys [][]int
			bad := false
			for range exps {
				src := inputs[rng.IntN(len(inputs))]
				key := []int{rng.IntN(arity[src])}
				if arity[src] > 1 && rng.IntN(3) == 0 {
					key = append(key, (key[0]+1)%arity[src])
				}
				if rng.IntN(12) == 0 {
					key = []int{arity[src]} // past the row: the create fails
					bad = true
				}
				ins, keys = append(ins, src), append(keys, key)
			}
			asOf := uint64(rng.IntN(int(upper[ins[0]]) + 3))
			if sendBoth(fmt.Sprintf("create %s exporting %v of %v by %v as_of %d", id, exps, ins, keys, asOf), CreateDataflow{Desc: indexDesc(id, exps, ins, keys, asOf)}) {
				exportsOf[id] = exps
				for j, x := range exps {
					*ixs[x] = reshapeIndex{by: id, input: ins[j], key: keys[j], asOf: asOf, since: asOf, bad: bad}
				}
			}
		case k < 15: // a reader of one or two indexes
			maintained := rng.IntN(5) == 0
			id := fmt.Sprintf("q%d", rng.IntN(3))
			if maintained {
				id = "r0"
			}
			if byID[id] != nil && rng.IntN(3) > 0 {
				drop(id)
			}
			var good []string
			for _, x := range []string{"X", "Y", "Z"} {
				if ix := ixs[x]; ix.by != "" && !ix.bad {
					good = append(good, x)
				}
			}
			imps := []string{pick("X", "Y", "Z", "W")}
			if len(good) > 0 && rng.IntN(4) > 0 {
				imps[0] = good[rng.IntN(len(good))]
			}
			if rng.IntN(3) == 0 {
				imps = append(imps, pick("X", "Y", "Z"))
			}
			var since uint64
			for _, imp := range imps {
				if ix := ixs[imp]; ix != nil {
					since = max(since, ix.since)
				}
			}
			q := &reshapeReader{id: id, imps: imps, until: frontier.Empty(), live: true}
			for _, imp := range imps {
				ix := ixs[imp]
				if ix == nil || ix.by == "" || ix.bad {
					q.ins = append(q.ins, "")
					continue
				}
				q.ins = append(q.ins, ix.input)
			}
			of := q.ins[0]
			if of == "" {
				of = pick(inputs...)
			}
			q.asOf = uint64(rng.IntN(int(upper[of]) + 3))
			if rng.IntN(4) > 0 {
				q.asOf = max(q.asOf, since)
			}
			if rng.IntN(3) == 0 {
				q.until = frontier.At(q.asOf + 1 + uint64(rng.IntN(4)))
			}
			if send(fmt.Sprintf("create reader %s (maintained %v) of %v as_of %d until %v", id, maintained, imps, q.asOf, q.until), func(i int) Command {
				q.cps[i] = nil
				for range imps {
					q.cps[i] = append(q.cps[i], dataflow.NewCapture(w))
				}
				capsMu.Lock()
				caps[i] = append(caps[i], q.cps[i]...)
				capsMu.Unlock()
				return CreateDataflow{Desc: readerDesc(id, maintained, imps, q.asOf, q.until, q.cps[i])}
			}) {
				q.seq = seq
				readers = append(readers, q)
				byID[id] = q
			}
		case k < 18: // compaction: forward, past the frontier, back, {}
			x := pick("X", "Y", "Z", "W")
			f := frontier.At(uint64(rng.IntN(int(upper[pick(inputs...)]) + 5)))
			if rng.IntN(5) == 0 {
				f = frontier.Empty()
			}
			if sendBoth(fmt.Sprintf("allow compaction %s to %v", x, f), AllowCompaction{ID: x, Frontier: f}) {
				if ft, ok := f.Time(); ok {
					ixs[x].since = ft
				} else {
					*ixs[x] = reshapeIndex{}
				}
			}
		case k < 20:
			drop(pick("m0", "m1", "m2", "q0", "q1", "q2", "r0", "nope"))
		case k < 22: // one runtime of the pair falls behind, or catches up
			if release == nil {
				release = stoppableGate(pair.role([]Role{Maintenance, Interactive}[rng.IntN(2)]))
			} else if rng.IntN(2) == 0 {
				catchUp()
			}
		case k < 25:
			check(step)
		default:
			take()
		}
	}
	check(steps)
	// Readers first, then what they read: every id dropped.
	for _, id := range []string{"q0", "q1", "q2", "r0", "m0", "m1", "m2"} {
		if byID[id] != nil || exportsOf[id] != nil {
			drop(id)
		}
	}
	check(steps + 1)
	if os.Getenv("RESHAPE_LOG") != "" {
		t.Logf("%s", strings.Join(log, "\n"))
	}
	t.Logf("%d commands accepted, %d refused, %d errors, %d times against the model, %d between the two", seq, refused, nerrs, times, agreed)
	stopSide()
	for _, s := range both {
		zeroState(t, s, "every dataflow dropped")
		reshapeEmpty(t, s)
	}
	for _, s := range both {
		s.ctl.Shutdown()
	}
	deadline := time.Now().Add(10 * time.Second)
	for goruntime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<20)
		buf = buf[:goruntime.Stack(buf, true)]
		t.Fatalf("%d goroutines after Shutdown, %d before:\n%s", n, goroutines, buf)
	}
}

// reshapeEmpty requires that nothing of the dropped dataflows is left in
// the controller and the workers' records, once every error is taken.
func reshapeEmpty(t *testing.T, s *setup) {
	t.Helper()
	s.ctl.TakeErrors()
	c := s.ctl
	c.mu.Lock()
	ctlLeft := fmt.Sprintf("dataflows %d, indexes %d, incs %d, taken %d, takenDrops %d, forget %d",
		len(c.dataflows), len(c.indexes), len(c.incs), len(c.taken), len(c.takenDrops), len(c.forget))
	c.mu.Unlock()
	if ctlLeft != "dataflows 0, indexes 0, incs 0, taken 0, takenDrops 0, forget 0" {
		t.Errorf("%s: the controller keeps %s", s.mode, ctlLeft)
	}
	for _, r := range s.rts {
		r.voteMu.Lock()
		votes := len(r.votes)
		r.voteMu.Unlock()
		if votes != 0 {
			t.Errorf("%s: %v runtime keeps %d votes", s.mode, r.Role(), votes)
		}
		if err := r.barrier(testCtx(t), func(w *worker) {
			left := fmt.Sprintf("dataflows %d, rendered %d, orderAt %d, foreign %d, queryExports %d, exporters %d, endedImports %d, exportsOf %d, readers %d, rootReaders %d, writerReaders %d",
				len(w.dataflows), w.rendered, len(w.orderAt), len(w.foreign), len(w.queryExports), len(w.exporters), len(w.endedImports), len(w.exportsOf), len(w.readers), len(w.rootReaders), len(w.writerReaders))
			if left != "dataflows 0, rendered 0, orderAt 0, foreign 0, queryExports 0, exporters 0, endedImports 0, exportsOf 0, readers 0, rootReaders 0, writerReaders 0" {
				t.Errorf("%s: %v worker %d keeps %s", s.mode, r.Role(), w.index, left)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
}
