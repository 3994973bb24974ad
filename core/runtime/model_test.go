package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
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
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/share"
)

// modelRow is one update sent to an input.
type modelRow struct {
	row  []int64
	t    uint64
	diff int64
}

// modelInput is the model's declared input: one incarnation of a name.
type modelInput struct {
	name      string
	arity     int
	noHistory bool
	frontier  uint64
	since     uint64
	closed    bool
	rows      []modelRow
}

// modelIndex is a live index as the model knows it: the input incarnation
// its dataflow was created on.
type modelIndex struct {
	id, by string
	in     *modelInput
	asOf   uint64
	// reader: it reads another index (a Maintained reader's or a
	// re-export), and stopped where that one's writer had sealed if
	// that one was dropped: how far is timing (README, "Concepts").
	reader, stopped bool
}

// modelQuery is a query created in both setups: what it reads and its
// captures (solo's first).
type modelQuery struct {
	id     string
	kind   int // 0 a read, 1 a self-join, 2 a join of two indexes
	ix     *modelIndex
	asOf   uint64
	until  frontier.Frontier
	cps    [2]*dataflow.Capture
	orphan bool // an index was dropped or freed since it was created, or it reads one stopped
}

// runModel drives a Solo runtime and a Maintenance/Interactive pair of w
// workers through steps random commands of every kind — inputs declared
// (with or without history, again at another arity once dropped), rows
// (now and then behind the frontier, of the wrong arity, or past a lent
// wake's size), frontier advances and closes, input compactions and drops;
// indexes on an input (by its first or second column), Maintained readers
// of an index joined with an input, re-exports (Maintained or a query's);
// queries reading, self-joining or joining two indexes; drops, index
// compactions (backward, ahead, to {}); Sync, SyncRole, Stats (some with
// contexts that end at once or within microseconds) and TakeErrors
// between Syncs — with one runtime of the pair held behind for stretches
// and a health check polling both from another goroutine. The pair's
// ReaderBudget (the package's, 1ns, none) and both runtimes' Effort (the
// default, 1) vary with the seed.
//
// Both controllers must refuse the same commands with the same text, and
// at every Sync: the errors taken since the last (number and text) must be
// the same; Solo's Dataflows, Traces and Exchanges the pair's two
// runtimes' sums, and its InputHistory the Maintenance runtime's; every
// query that no drop stopped must have passed the same frontier in both,
// every query must answer the same in both at every time both passed, and
// a read or a self-join of an index on an input must answer as the model
// does. Then either everything is dropped — after which no runtime keeps
// a dataflow, index, trace, exchange, input update, hold gap, worker
// bookkeeping entry, registry slot, reserved hold or verdict, no capture
// some worker attached has a wait that does not end, and once shut down
// no goroutine is left — or (abrupt) both are shut down as they stand,
// the pair by one of its runtimes while it may be held behind, after
// which every registry is empty, Send refuses, every attached capture's
// wait ends and no goroutine is left.
func runModel(t *testing.T, seed uint64, w, steps int, abrupt bool) {
	ctx, progress := progressCtx(t)
	rng := rand.New(rand.NewPCG(seed, 23))
	goroutines := goruntime.NumGoroutine()
	// Merge work a wake: the default, or one update, so that merges are
	// in progress across the drops and compactions.
	effort := []int64{0, 1}[seed/3%2]
	solo := newSoloWithEffort(t, w, effort)
	pair := newPairWithBudget(t, w, []time.Duration{0, time.Nanosecond, -1}[seed%3], effort)
	both := [2]*setup{solo, pair}
	var release func()
	var taken [2][]string // errors taken between Syncs
	defer func() {
		if release != nil {
			release()
		}
	}()
	// A health check polls each setup as a service's would: Stats, Sync,
	// SyncRole and Errors with short timeouts, from its own goroutine.
	stopPoll := make(chan struct{})
	var polls gosync.WaitGroup
	for i, s := range both {
		polls.Add(1)
		go func() {
			defer polls.Done()
			prng := rand.New(rand.NewPCG(seed, uint64(i)))
			for {
				select {
				case <-stopPoll:
					return
				default:
				}
				short, cancel := context.WithTimeout(ctx, time.Duration(prng.IntN(300))*time.Microsecond)
				var err error
				switch prng.IntN(4) {
				case 0:
					_, err = s.rts[prng.IntN(len(s.rts))].Stats(short)
				case 1:
					err = s.ctl.Sync(short)
				case 2:
					err = s.ctl.SyncRole(short, s.rts[prng.IntN(len(s.rts))].Role())
				default:
					_ = s.ctl.Errors()
				}
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrShutdown) {
					t.Errorf("seed %d: %s: a poll: %v", seed, s.mode, err)
					return
				}
				time.Sleep(time.Duration(prng.IntN(200)) * time.Microsecond)
			}
		}()
	}
	defer func() {
		close(stopPoll)
		polls.Wait()
	}()
	inputs := map[string]*modelInput{}
	indexes := map[string]*modelIndex{}
	dataflows := map[string]bool{}
	queries := map[string]*modelQuery{}
	var allQueries []*modelQuery
	names := []string{"a", "b"}
	checked := 0
	defer func() { t.Logf("%d answers checked against the model", checked) }()
	send := func(mk func(s *setup, i int) Command) {
		var errs [2]string
		for i, s := range both {
			cmd := mk(s, i)
			if err := s.ctl.Send(cmd); err != nil {
				errs[i] = err.Error()
			}
			if i == 0 && modelVerbose {
				t.Logf("%T %s -> %v", cmd, describeCmd(cmd), errs[0])
			}
		}
		if errs[0] != errs[1] {
			t.Fatalf("seed %d: Send: solo %q, pair %q", seed, errs[0], errs[1])
		}
	}
	sync := func() {
		if release != nil {
			release()
			release = nil
		}
		got := taken
		taken = [2][]string{}
		for i, s := range both {
			if err := s.ctl.Sync(ctx); err != nil {
				t.Fatalf("seed %d: Sync: %v", seed, err)
			}
			for _, e := range s.ctl.TakeErrors() {
				got[i] = append(got[i], fmt.Sprintf("%d %s", e.Seq, e.Err))
			}
			// Taken in several takes, split between them as each
			// runtime had got on: compared as one list by command.
			slices.SortStableFunc(got[i], func(a, b string) int {
				na, _ := strconv.Atoi(a[:strings.IndexByte(a, ' ')])
				nb, _ := strconv.Atoi(b[:strings.IndexByte(b, ' ')])
				return cmp.Or(cmp.Compare(na, nb), strings.Compare(a, b))
			})
		}
		if modelVerbose {
			t.Logf("sync: errors %q", got[0])
		}
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("seed %d: errors differ:\nsolo %q\npair %q", seed, got[0], got[1])
		}
		// What Solo keeps is what the pair keeps between its runtimes.
		var st [3]Stats
		for i, r := range []*Runtime{solo.rts[0], pair.rts[0], pair.rts[1]} {
			var err error
			if st[i], err = r.Stats(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if st[0].InputHistory != st[1].InputHistory || st[2].InputHistory != 0 || st[0].Dataflows != st[1].Dataflows+st[2].Dataflows || st[0].Exchanges != st[1].Exchanges+st[2].Exchanges || st[0].Traces != st[1].Traces+st[2].Traces {
			t.Fatalf("seed %d: solo's stats %+v, the pair's %+v and %+v", seed, st[0], st[1], st[2])
		}
		for _, q := range queries {
			f0, f1 := q.cps[0].Frontier(), q.cps[1].Frontier()
			if !q.orphan && f0 != f1 {
				t.Fatalf("seed %d: query %s passed %v in solo, %v in the pair", seed, q.id, f0, f1)
			}
			// hi is the last time both have passed and the query shows.
			hi, ok := uint64(0), false
			for _, f := range []frontier.Frontier{f0, f1} {
				if f.IsEmpty() {
					continue
				}
				if !ok || f.MustTime() < hi {
					hi = f.MustTime()
				}
				ok = true
			}
			if !ok {
				hi = q.asOf + 8
			} else if hi == 0 {
				continue
			} else {
				hi--
			}
			if u, ok := q.until.Time(); ok && hi >= u {
				if u == 0 {
					continue
				}
				hi = u - 1
			}
			if hi < q.asOf {
				continue
			}
			if tm, row, a, b, _, _, differs := q.cps[0].FirstDifference(q.cps[1], q.asOf, hi); differs {
				t.Fatalf("seed %d: query %s at %d: row %v counts %d in solo, %d in the pair", seed, q.id, tm, row, a, b)
			}
			if q.kind == 2 || q.ix.in == nil || !q.cps[0].Passed(q.asOf) {
				continue
			}
			for tm := q.asOf; tm <= hi && tm < q.asOf+4; tm++ {
				if !q.cps[0].Passed(tm) {
					break
				}
				live := map[string]int64{}
				rows := map[string][]int64{}
				for _, r := range q.ix.in.rows {
					if r.t <= tm {
						k := fmt.Sprint(r.row)
						live[k] += r.diff
						rows[k] = r.row
					}
				}
				if q.kind == 1 && len(live) > 64 {
					break // the model's join of a large input costs more than the check is worth
				}
				want := map[string]int64{}
				for k, n := range live {
					if q.kind == 0 {
						want[k] += n
						continue
					}
					// The index joined with itself on its key: key,
					// left val, right val.
					a := rows[k]
					for l, m := range live {
						if b := rows[l]; a[0] == b[0] {
							want[fmt.Sprint(slices.Concat(a, b[1:]))] += n * m
						}
					}
				}
				maps.DeleteFunc(want, func(_ string, n int64) bool { return n == 0 })
				got := map[string]int64{}
				for _, rd := range q.cps[0].At(tm) {
					got[fmt.Sprint(rd.Row)] += rd.Diff
				}
				checked++
				if !maps.Equal(got, want) {
					t.Fatalf("seed %d: query %s at %d: %v, want %v", seed, q.id, tm, got, want)
				}
			}
		}
	}
	for range steps {
		progress()
		switch k := rng.IntN(40); {
		case k < 2: // declare an input (again, or at another arity)
			name := names[rng.IntN(len(names))]
			ar := 1 + rng.IntN(3)
			nh := rng.IntN(5) == 0
			send(func(*setup, int) Command { return CreateInput{Name: name, Arity: ar, NoHistory: nh} })
			if inputs[name] == nil {
				inputs[name] = &modelInput{name: name, arity: ar, noHistory: nh}
			}
		case k < 10: // updates, now and then at a time refused or of the wrong arity
			name := names[rng.IntN(len(names))]
			in := inputs[name]
			ar := 2
			base := uint64(0)
			if in != nil {
				ar, base = in.arity, in.frontier
			}
			if rng.IntN(10) == 0 {
				ar++
			}
			var rows []modelRow
			n := 1 + rng.IntN(4)
			if rng.IntN(25) == 0 {
				n = 1100 + rng.IntN(500) // past what a lent wake takes, and an input's compaction
			}
			for range n {
				r := modelRow{t: base + uint64(rng.IntN(3)), diff: []int64{1, 1, -1}[rng.IntN(3)]}
				for range ar {
					if n > 4 {
						r.row = append(r.row, rng.Int64N(1<<40)) // few matches: a join of it stays small
					} else {
						r.row = append(r.row, rng.Int64N(4))
					}
				}
				rows = append(rows, r)
			}
			if rng.IntN(10) == 0 && base > 0 {
				rows[0].t = base - 1
			}
			send(func(*setup, int) Command {
				c := dataflow.NewChunk(ar, len(rows))
				for _, r := range rows {
					c.Push(r.row, r.t, r.diff)
				}
				return Input{Name: name, Chunk: c}
			})
			if in != nil && !in.closed && ar == in.arity && (base == 0 || rows[0].t >= base) {
				in.rows = append(in.rows, rows...)
			}
		case k < 15: // advance, now and then closing the input
			name := names[rng.IntN(len(names))]
			in := inputs[name]
			f := frontier.At(uint64(rng.IntN(3)))
			if in != nil {
				f = frontier.At(in.frontier + uint64(rng.IntN(3)))
			}
			if rng.IntN(40) == 0 {
				f = frontier.Empty()
			}
			send(func(*setup, int) Command { return AdvanceInput{Name: name, Frontier: f} })
			if in != nil && !in.closed {
				if f.IsEmpty() {
					in.closed = true
				} else if f.MustTime() >= in.frontier {
					in.frontier = f.MustTime()
				}
			}
		case k < 17: // allow an input's compaction, ahead, behind or to {}
			name := names[rng.IntN(len(names))]
			f := frontier.At(uint64(rng.IntN(6)))
			if in := inputs[name]; in != nil && rng.IntN(4) != 0 {
				f = frontier.At(in.since + uint64(rng.IntN(int(max(in.frontier, in.since)-in.since)+1)))
			}
			if rng.IntN(20) == 0 {
				f = frontier.Empty()
			}
			send(func(*setup, int) Command { return AllowInputCompaction{Name: name, Frontier: f} })
			if in := inputs[name]; in != nil && !f.IsEmpty() && f.MustTime() >= in.since {
				in.since = f.MustTime()
			}
		case k < 18: // drop an input (its readers keep what they read)
			name := names[rng.IntN(len(names))]
			send(func(*setup, int) Command { return DropInput{Name: name} })
			delete(inputs, name)
		case k < 22: // an index: on an input, or a Maintained reader's of another index, or a re-export
			id := fmt.Sprintf("x%d", rng.IntN(3))
			dfID := fmt.Sprintf("m%d", rng.IntN(4))
			name := names[rng.IntN(len(names))]
			if live := slices.Sorted(maps.Keys(inputs)); len(live) > 0 && rng.IntN(4) != 0 {
				name = live[rng.IntN(len(live))]
			}
			in := inputs[name]
			ar := 2
			if in != nil {
				ar = in.arity
			}
			if rng.IntN(10) == 0 {
				ar++
			}
			key := []int{0}
			if rng.IntN(4) == 0 {
				key = []int{1}
			}
			asOf := uint64(rng.IntN(4))
			if in != nil {
				asOf = max(in.frontier, in.since) + uint64(rng.IntN(2))
				if rng.IntN(2) == 0 {
					asOf = in.since
				}
			}
			src := fmt.Sprintf("x%d", rng.IntN(3))
			if live := slices.Sorted(maps.Keys(indexes)); len(live) > 0 && rng.IntN(4) != 0 {
				src = live[rng.IntN(len(live))]
			}
			shape := rng.IntN(5) // 0-2 on an input, 3 a re-arrangement of src joined with the input, 4 a re-export of src
			maintained := shape != 4 || rng.IntN(2) == 0
			if shape >= 3 {
				if ix := indexes[src]; ix != nil {
					asOf = ix.asOf + uint64(rng.IntN(2))
				}
			}
			refused := dataflows[dfID] || indexes[id] != nil
			if modelVerbose {
				t.Logf("index %s of %s: shape %d input %s arity %d key %v src %s maintained %v", id, dfID, shape, name, ar, key, src, maintained)
			}
			send(func(*setup, int) Command {
				var d dataflow.Desc
				switch shape {
				case 3:
					d = dataflow.Desc{
						ID: dfID, Maintained: true, AsOf: frontier.At(asOf), Until: frontier.Empty(), Exports: []string{id},
						Build: func(c *dataflow.Context) error {
							a, err := c.ImportIndex(src)
							if err != nil {
								return err
							}
							in, err := c.Input(name, ar)
							if err != nil {
								return err
							}
							b, err := c.Arrange(in, []int{0})
							if err != nil {
								return err
							}
							out, err := join.Join(c, a, b, nil, join.OperatorOptions{})
							if err != nil {
								return err
							}
							arr, err := c.Arrange(out, key)
							if err != nil {
								return err
							}
							return c.Export(id, arr)
						},
					}
				case 4:
					d = reexportDesc(dfID, src, id, maintained)
					d.AsOf = frontier.At(asOf)
				default:
					d = indexDesc(id, name, ar, key, asOf, nil)
					d.ID = dfID
				}
				return CreateDataflow{Desc: d}
			})
			if !refused {
				dataflows[dfID] = true
				ix := &modelIndex{id: id, by: dfID, asOf: asOf, reader: shape >= 3}
				if shape < 3 && in != nil && in.arity == ar && key[0] == 0 && (!in.noHistory || len(in.rows) == 0) && in.since <= asOf {
					ix.in = in
				}
				indexes[id] = ix
			}
		case k < 28: // a query: a read, a self-join or a join of two indexes
			id := fmt.Sprintf("q%d", rng.IntN(6))
			x := fmt.Sprintf("x%d", rng.IntN(3))
			if live := slices.Sorted(maps.Keys(indexes)); len(live) > 0 && rng.IntN(4) != 0 {
				x = live[rng.IntN(len(live))]
			}
			y := fmt.Sprintf("x%d", rng.IntN(3))
			kind := rng.IntN(3)
			ix := indexes[x]
			asOf := uint64(rng.IntN(4))
			if ix != nil {
				asOf = ix.asOf + uint64(rng.IntN(3))
			}
			until := frontier.Empty()
			if rng.IntN(3) == 0 {
				until = frontier.At(asOf + 1 + uint64(rng.IntN(4)))
			}
			refused := dataflows[id]
			if modelVerbose {
				t.Logf("query %s: kind %d of %s and %s", id, kind, x, y)
			}
			q := &modelQuery{id: id, kind: kind, ix: ix, asOf: asOf, until: until}
			if ix != nil && ix.stopped || kind == 2 && indexes[y] != nil && indexes[y].stopped {
				q.orphan = true
			}
			if ix == nil {
				q.ix = &modelIndex{}
			}
			send(func(s *setup, i int) Command {
				cp := dataflow.NewCapture(w)
				q.cps[i] = cp
				if kind == 0 {
					return CreateDataflow{Desc: readDesc(id, x, asOf, until, cp)}
				}
				return CreateDataflow{Desc: dataflow.Desc{
					ID: id, AsOf: frontier.At(asOf), Until: until,
					Build: func(c *dataflow.Context) error {
						a, err := c.ImportIndex(x)
						if err != nil {
							return err
						}
						b := a
						if kind == 2 {
							if b, err = c.ImportIndex(y); err != nil {
								return err
							}
						}
						out, err := join.Join(c, a, b, nil, join.OperatorOptions{})
						if err != nil {
							return err
						}
						arr, err := c.Arrange(out, []int{0})
						if err != nil {
							return err
						}
						c.Capture(cp, arr.Oks)
						return nil
					},
				}}
			})
			if !refused {
				dataflows[id] = true
				queries[id] = q
				allQueries = append(allQueries, q)
			}
		case k < 31: // drop a dataflow, a query or an index's
			var id string
			if rng.IntN(2) == 0 {
				id = fmt.Sprintf("q%d", rng.IntN(6))
			} else {
				id = fmt.Sprintf("m%d", rng.IntN(4))
			}
			send(func(*setup, int) Command { return DropDataflow{ID: id} })
			delete(dataflows, id)
			delete(queries, id)
			for x, ix := range indexes {
				if ix.by == id {
					delete(indexes, x)
					for _, q := range queries {
						q.orphan = true
					}
					for _, ix := range indexes {
						ix.stopped = ix.stopped || ix.reader
					}
				}
			}
		case k < 34: // allow an index's compaction, now and then to {} or back
			x := fmt.Sprintf("x%d", rng.IntN(3))
			f := frontier.At(uint64(rng.IntN(6)))
			if rng.IntN(10) == 0 {
				f = frontier.Empty()
			}
			send(func(*setup, int) Command { return AllowCompaction{ID: x, Frontier: f} })
			if f.IsEmpty() {
				if ix := indexes[x]; ix != nil {
					// The controller refuses a compaction back, so the
					// index may live on: look at what the controller
					// holds.
					if solo.ctl.index(x) == nil {
						delete(indexes, x)
						for _, q := range queries {
							q.orphan = true
						}
						for _, ix := range indexes {
							ix.stopped = ix.stopped || ix.reader
						}
					}
				}
			}
		case k < 35 && rng.IntN(2) == 0: // take the errors met so far, without a Sync
			for i, s := range both {
				for _, e := range s.ctl.TakeErrors() {
					taken[i] = append(taken[i], fmt.Sprintf("%d %s", e.Seq, e.Err))
				}
			}
		case k < 36: // hold one runtime of the pair behind, or let it go
			if release != nil {
				release()
				release = nil
			} else {
				release = gate(pair.rts[rng.IntN(2)])
			}
		default: // a barrier: Sync, SyncRole, Stats, some with a short context
			switch rng.IntN(6) {
			case 0, 4, 5:
				sync()
			case 1:
				short, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(200))*time.Microsecond)
				for _, s := range both {
					if err := s.ctl.Sync(short); err != nil && !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("seed %d: a short Sync: %v", seed, err)
					}
				}
				cancel()
			case 2:
				for _, s := range both {
					r := s.rts[rng.IntN(len(s.rts))]
					if release != nil {
						continue // it may be the one held
					}
					if err := s.ctl.SyncRole(ctx, r.Role()); err != nil {
						t.Fatalf("seed %d: SyncRole(%v): %v", seed, r.Role(), err)
					}
					if _, err := r.Stats(ctx); err != nil {
						t.Fatalf("seed %d: Stats: %v", seed, err)
					}
				}
			default:
				short, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(100))*time.Microsecond)
				for _, s := range both {
					for _, r := range s.rts {
						if _, err := r.Stats(short); err != nil && !errors.Is(err, context.DeadlineExceeded) {
							t.Fatalf("seed %d: a short Stats: %v", seed, err)
						}
					}
				}
				cancel()
			}
		}
	}
	if abrupt {
		// Shut down with whatever is live and queued, one runtime of
		// the pair perhaps held behind: every registry is left empty,
		// every wait ends and no goroutine stays.
		close(stopPoll)
		polls.Wait()
		stopPoll = make(chan struct{})
		done := make(chan struct{})
		which := pair.rts[rng.IntN(2)]
		go func() {
			defer close(done)
			solo.ctl.Shutdown()
			which.Shutdown()
		}()
		if release != nil {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
			release()
			release = nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("seed %d: Shutdown did not return", seed)
		}
		for _, s := range both {
			for _, r := range s.rts {
				for i, g := range r.opts.Registries {
					if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 || st.Settled != 0 {
						t.Fatalf("seed %d: registry %d keeps %+v after Shutdown", seed, i, st)
					}
				}
			}
			if err := s.ctl.Send(DropInput{Name: "a"}); !errors.Is(err, ErrShutdown) {
				t.Fatalf("seed %d: Send after Shutdown: %v", seed, err)
			}
			s.ctl.TakeErrors() // what each applied before the Shutdown: not compared
		}
		for _, q := range allQueries {
			for i, cp := range q.cps {
				if cp == nil || !cp.Passed(q.asOf) {
					continue // perhaps never attached: it waits for its context
				}
				short, cancel := context.WithTimeout(ctx, 20*time.Second)
				err := cp.WaitPassed(short, math.MaxUint64-1)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("seed %d: %s query %s: a wait after Shutdown: %v", seed, both[i].mode, q.id, err)
				}
			}
		}
		deadline := time.Now().Add(20 * time.Second)
		for goruntime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := goruntime.NumGoroutine(); n > goroutines {
			t.Fatalf("seed %d: %d goroutines after Shutdown, %d before", seed, n, goroutines)
		}
		return
	}
	sync()
	// Drop everything, queries first, then the inputs: nothing is kept.
	ids := slices.Sorted(maps.Keys(dataflows))
	slices.SortStableFunc(ids, func(a, b string) int {
		return strings.Compare(a[:1], b[:1]) * -1
	})
	for _, id := range ids {
		send(func(*setup, int) Command { return DropDataflow{ID: id} })
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		send(func(*setup, int) Command { return DropInput{Name: name} })
	}
	sync()
	// Every capture some worker attached (it passed a time) is done with:
	// a wait past what it passed ends at once.
	for _, q := range allQueries {
		for i, cp := range q.cps {
			if cp == nil || !cp.Passed(q.asOf) {
				continue
			}
			short, cancel := context.WithTimeout(ctx, 20*time.Second)
			err := cp.WaitPassed(short, math.MaxUint64-1)
			cancel()
			if err != nil && !errors.Is(err, dataflow.ErrProbeDropped) && !errors.Is(err, ErrIndexDropped) {
				t.Fatalf("seed %d: %s query %s, dropped: a wait: %v", seed, both[i].mode, q.id, err)
			}
		}
	}
	for _, s := range both {
		for _, r := range s.rts {
			st, err := r.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st != (Stats{}) {
				t.Fatalf("seed %d: %s %v runtime keeps %+v once everything is dropped", seed, s.mode, r.Role(), st)
			}
			{
				var kept []string
				if err := r.barrier(ctx, func(w *worker) {
					w.amu.Lock()
					active := len(w.active)
					w.amu.Unlock()
					for name, n := range map[string]int{
						"dataflows": len(w.dataflows), "order": len(w.order) - w.holes, "orderAt": len(w.orderAt),
						"foreign": len(w.foreign), "queryExports": len(w.queryExports), "exporters": len(w.exporters),
						"endedImports": len(w.endedImports), "exportsOf": len(w.exportsOf), "readers": len(w.readers),
						"rootReaders": len(w.rootReaders), "writerReaders": len(w.writerReaders), "manager": len(w.env.Manager.IDs()),
						"inputs": w.env.Inputs.Len(), "active": active,
					} {
						if n != 0 {
							kept = append(kept, fmt.Sprintf("worker %d: %s %d", w.index, name, n))
						}
					}
				}); err != nil {
					t.Fatal(err)
				}
				if len(kept) > 0 {
					slices.Sort(kept)
					t.Fatalf("seed %d: %s %v runtime keeps %v once everything is dropped", seed, s.mode, r.Role(), kept)
				}
			}
			for i, g := range r.opts.Registries {
				if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 || st.Settled != 0 {
					t.Fatalf("seed %d: registry %d keeps %+v", seed, i, st)
				}
			}
		}
		if len(s.ctl.inputs) != 0 || len(s.ctl.dataflows) != 0 || len(s.ctl.indexes) != 0 || len(s.ctl.incs) != 0 {
			t.Fatalf("seed %d: %s controller keeps %d inputs, %d dataflows, %d indexes, %d incs", seed, s.mode, len(s.ctl.inputs), len(s.ctl.dataflows), len(s.ctl.indexes), len(s.ctl.incs))
		}
	}
	close(stopPoll)
	polls.Wait()
	stopPoll = make(chan struct{})
	for _, s := range both {
		s.ctl.Shutdown()
	}
	deadline := time.Now().Add(20 * time.Second)
	for goruntime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > goroutines {
		t.Fatalf("seed %d: %d goroutines after Shutdown, %d before", seed, n, goroutines)
	}
}

// newPairWithBudget is newSetup's pair with Options.ReaderBudget budget
// (0: this package's, which lends every wake the rule allows; 1ns: each
// lent wake runs past it, so the lending pauses and backs off; -1: none).
func newPairWithBudget(t *testing.T, w int, budget time.Duration, effort int64) *setup {
	regs := make([]*share.Registry, w)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	m, err := New(Options{Role: Maintenance, Workers: w, Registries: regs, ReaderBudget: budget, Effort: effort})
	if err != nil {
		t.Fatal(err)
	}
	i, err := New(Options{Role: Interactive, Workers: w, Registries: regs, Effort: effort})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := NewController(m, i)
	if err != nil {
		t.Fatal(err)
	}
	return cleanedUp(t, &setup{mode: "pair", workers: w, ctl: ctl, rts: []*Runtime{m, i}, tb: t})
}

// newSoloWithEffort is newSetup's solo with Options.Effort effort.
func newSoloWithEffort(t *testing.T, w int, effort int64) *setup {
	r, err := New(Options{Role: Solo, Workers: w, Effort: effort})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := NewController(r)
	if err != nil {
		t.Fatal(err)
	}
	return cleanedUp(t, &setup{mode: "solo", workers: w, ctl: ctl, rts: []*Runtime{r}, tb: t})
}

// cleanedUp shuts s down when the test ends, and fails it for an error
// left untaken.
func cleanedUp(t *testing.T, s *setup) *setup {
	t.Cleanup(func() {
		s.ctl.Shutdown()
		if err := s.ctl.Err(); err != nil {
			t.Errorf("runtime errors: %v", err)
		}
	})
	return s
}

var modelVerbose = os.Getenv("MODEL_VERBOSE") != ""

// describeCmd prints cmd for MODEL_VERBOSE's log.
func describeCmd(cmd Command) string {
	switch c := cmd.(type) {
	case Input:
		var b strings.Builder
		for i := range c.Chunk.Len() {
			fmt.Fprintf(&b, "%v@%d%+d ", c.Chunk.Row(i), c.Chunk.Times[i], c.Chunk.Diffs[i])
		}
		return c.Name + " " + b.String()
	case CreateDataflow:
		return fmt.Sprintf("%s asOf %v until %v exports %v", c.Desc.ID, c.Desc.AsOf, c.Desc.Until, c.Desc.Exports)
	}
	return fmt.Sprintf("%+v", cmd)
}

// TestRandomCommandsOfEveryKindAgree runs runModel at 1 to 4 workers, six
// seeds each (two with -short), every other one shut down abruptly.
// MODEL_SEEDS=n runs n seeds a worker count of 2,000 commands each (a
// hunt), MODEL_VERBOSE=1 logs every command.
func TestRandomCommandsOfEveryKindAgree(t *testing.T) {
	seeds, steps := 6, 300
	if testing.Short() {
		seeds = 2
	}
	if n, err := strconv.Atoi(os.Getenv("MODEL_SEEDS")); err == nil {
		seeds, steps = n, 2000
	}
	for w := 1; w <= 4; w++ {
		for s := range seeds {
			seed := uint64(1000*w + s)
			t.Run(fmt.Sprintf("workers=%d/seed=%d", w, seed), func(t *testing.T) {
				runModel(t, seed, w, steps, s%2 == 1)
			})
		}
	}
}
