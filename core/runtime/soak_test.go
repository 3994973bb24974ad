package runtime

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
)

// TestSoak is the bounded soak of both runtimes with 2 workers: a Solo
// runtime and a Maintenance/Interactive pair receive the same random
// commands — rows streaming into two inputs, indexes over them dropped and
// created again under the same ids (new incarnations, at the same as_of or
// another), queries importing them created and dropped under re-used ids,
// compaction allowed, and one runtime of the pair falling behind the command
// stream and catching up. Every few steps each live query is checked against
// the model at every time it has completed since the last check. At the end,
// with everything dropped, no dataflow, index, trace, registry slot or
// reserved hold is left, every goroutine has ended after Shutdown, and,
// after two GCs, the live heap is at most the start plus max(10%, 8 MiB).
//
// It counts iterations, not wall time: 2000 steps (400 with -short, 600
// under -race).
func TestSoak(t *testing.T) {
	steps := 2000
	switch {
	case testing.Short():
		steps = 400
	case raceEnabled:
		steps = 600 // the race detector makes each step ~10 times slower
	}
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed %d)", s, s)
	rep := soak(t, s, 2, steps)
	t.Logf("soak: %d steps, %d checks of %d query-times, %d index incarnations and %d queries created, all dropped; heap %d KiB at start, %d KiB at end (limit %d KiB); goroutines %d at start, %d at end",
		rep.steps, rep.checks, rep.times, rep.indexes, rep.queries, rep.heap0>>10, rep.heap1>>10, rep.limit>>10, rep.g0, rep.g1)
}

// soakReport is what a soak did and measured.
type soakReport struct {
	steps, checks, times, indexes, queries int
	heap0, heap1, limit                    uint64
	g0, g1                                 int
}

// liveHeap returns the live heap after two GCs.
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func soak(t *testing.T, seed uint64, w, steps int) soakReport {
	rep := soakReport{steps: steps, g0: goruntime.NumGoroutine(), heap0: liveHeap()}
	// One deadline for the whole soak: long, since it runs thousands of
	// steps, under -race too; a hang still fails it.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(seed, 14))
	solo, pair := newSetup(t, "solo", w), newSetup(t, "pair", w)
	both := []*setup{solo, pair}
	inputs := []string{"in0", "in1"}
	rows := map[string][][]int64{}
	upper := map[string]uint64{}

	type index struct {
		id, input string
		asOf      uint64
		since     uint64
		live      bool
	}
	indexes := []*index{{id: "idx0", input: "in0"}, {id: "idx1", input: "in1"}, {id: "idx2", input: "in0"}}
	type query struct {
		id      string
		idx     *index
		asOf    uint64
		until   frontier.Frontier
		cps     []*dataflow.Capture
		checked uint64 // times below this are checked
		live    bool
		orphan  bool
	}
	var queries []*query
	var free []string
	// wantErrs are the errors the commands must cause, in order: one for
	// each live query whose index incarnation is dropped.
	var wantErrs []string
	var release func()
	catchUp := func() {
		if release != nil {
			release()
			release = nil
		}
	}
	defer catchUp()

	create := func(ix *index, asOf uint64) {
		ix.asOf, ix.since, ix.live = asOf, asOf, true
		rep.indexes++
		for _, s := range both {
			s.must(CreateDataflow{Desc: indexDesc(ix.id, ix.input, 2, []int{0}, asOf, nil)})
		}
	}
	for _, in := range inputs {
		for _, s := range both {
			s.declare(in, 2)
		}
	}
	for _, ix := range indexes {
		create(ix, 0)
	}

	// check waits for every live query of a live incarnation to pass the
	// inputs' upper and compares it with the model at every time not yet
	// checked.
	check := func(step int) {
		catchUp()
		for _, s := range both {
			if err := s.ctl.Sync(ctx); err != nil {
				t.Fatalf("seed %d step %d: %s: %v", seed, step, s.mode, err)
			}
		}
		rep.checks++
		for _, q := range queries {
			if !q.live || q.orphan || upper[q.idx.input] == 0 {
				continue
			}
			last := upper[q.idx.input] - 1
			if u, ok := q.until.Time(); ok {
				last = min(last, u-1)
			}
			if last < q.asOf || last < q.checked {
				continue
			}
			for j, cp := range q.cps {
				if err := cp.WaitPassed(ctx, last); err != nil {
					t.Fatalf("seed %d step %d: query %q in %s: %v", seed, step, q.id, both[j].mode, err)
				}
				for tm := max(q.asOf, q.checked); tm <= last; tm++ {
					if got, want := captured(cp, tm), model(rows[q.idx.input], tm); !maps.Equal(got, want) {
						t.Fatalf("seed %d step %d: query %q of %s (as_of %d, until %v) in %s at %d: %v, want %v",
							seed, step, q.id, q.idx.id, q.asOf, q.until, both[j].mode, tm, got, want)
					}
					rep.times++
				}
			}
			q.checked = last + 1
		}
	}

	for step := range steps {
		in := inputs[rng.IntN(len(inputs))]
		switch k := rng.IntN(16); {
		case k < 5: // rows at the input's current time
			var b [][]int64
			for range 1 + rng.IntN(6) {
				b = append(b, []int64{int64(upper[in]), []int64{1, 1, -1}[rng.IntN(3)], rng.Int64N(5), rng.Int64N(3)})
			}
			rows[in] = append(rows[in], b...)
			for _, s := range both {
				s.send(in, 2, b...)
			}
		case k < 8:
			upper[in] += uint64(1 + rng.IntN(2))
			for _, s := range both {
				s.advance(in, 2, frontier.At(upper[in]))
			}
		case k < 10: // a query of a live index at an as_of it still holds
			ix := indexes[rng.IntN(len(indexes))]
			if !ix.live {
				continue
			}
			up := max(upper[ix.input], ix.since)
			q := &query{id: fmt.Sprintf("q%d", len(queries)), idx: ix, asOf: ix.since + uint64(rng.IntN(int(up-ix.since)+3)), until: frontier.Empty(), live: true}
			if len(free) > 0 && rng.IntN(2) == 0 {
				q.id, free = free[len(free)-1], free[:len(free)-1]
			}
			if rng.IntN(3) == 0 {
				q.until = frontier.At(q.asOf + 1 + uint64(rng.IntN(6)))
			}
			for _, s := range both {
				cp := dataflow.NewCapture(w)
				q.cps = append(q.cps, cp)
				s.must(CreateDataflow{Desc: readDesc(q.id, ix.id, q.asOf, q.until, cp)})
			}
			q.checked = q.asOf
			queries = append(queries, q)
			rep.queries++
		case k < 11: // the controller allows an index to compact
			ix := indexes[rng.IntN(len(indexes))]
			if !ix.live || upper[ix.input] <= ix.since {
				continue
			}
			ix.since += uint64(rng.IntN(int(upper[ix.input]-ix.since) + 1))
			for _, s := range both {
				s.must(AllowCompaction{ID: ix.id, Frontier: frontier.At(ix.since)})
			}
		case k < 12: // drop a query; its id is re-used
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
		case k < 13: // drop an index, or create its next incarnation
			ix := indexes[rng.IntN(len(indexes))]
			if ix.live {
				// Each live query of the index not yet told is told
				// now, once (ErrIndexDropped), in Solo and the pair.
				var told []string
				for _, q := range queries {
					if q.live && !q.orphan && q.idx == ix {
						told = append(told, fmt.Sprintf("dataflow %s: index %q, which it imports, goes with dataflow maintain %s: %v", q.id, ix.id, ix.id, ErrIndexDropped))
					}
					q.orphan = q.orphan || (q.live && q.idx == ix)
				}
				slices.Sort(told)
				wantErrs = append(wantErrs, told...)
				ix.live = false
				for _, s := range both {
					s.must(DropDataflow{ID: "maintain " + ix.id})
				}
				continue
			}
			asOf := uint64(0)
			if rng.IntN(2) == 0 {
				asOf = uint64(rng.IntN(int(upper[ix.input]) + 2))
			}
			create(ix, asOf)
		case k < 15: // one runtime of the pair falls behind, or catches up
			if release == nil {
				release = gate(pair.role([]Role{Maintenance, Interactive}[rng.IntN(2)]))
			} else {
				catchUp()
			}
		default:
			check(step)
		}
	}
	check(steps)

	// Drop everything; nothing may be left.
	for _, q := range queries {
		if q.live {
			q.live = false
			for _, s := range both {
				s.must(DropDataflow{ID: q.id})
			}
		}
	}
	for _, ix := range indexes {
		if ix.live {
			ix.live = false
			for _, s := range both {
				s.must(DropDataflow{ID: "maintain " + ix.id})
			}
		}
	}
	var regs []*share.Registry
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
		for _, r := range s.rts {
			regs = append(regs, r.opts.Registries...)
			st, err := r.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Dataflows != 0 || st.Indexes != 0 || st.Traces != 0 || st.Trace.Batches != 0 {
				t.Fatalf("seed %d: %s %v runtime after every drop: %+v", seed, s.mode, r.Role(), st)
			}
		}
	}
	for i, g := range regs {
		if st := g.Stats(); st != (share.RegistryStats{}) {
			t.Fatalf("seed %d: registry %d after every drop: %+v", seed, i, st)
		}
	}
	for _, s := range both {
		s.ctl.Shutdown()
	}
	queries, free, rows = nil, nil, nil
	rep.limit = rep.heap0 + max(rep.heap0/10, 8<<20)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep.g1, rep.heap1 = goruntime.NumGoroutine(), liveHeap()
		if rep.g1 <= rep.g0 && rep.heap1 <= rep.limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed %d: after Shutdown: %d goroutines (start %d), live heap %d B (start %d, limit %d)", seed, rep.g1, rep.g0, rep.heap1, rep.heap0, rep.limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return rep
}
