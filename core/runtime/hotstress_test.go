package runtime

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// TestHotTracesUnderRandomMoves stresses a wake's maintenance of the
// traces with work only (dataflow.IndexManager.Maintain): on a pair of two
// workers, indexes over an input that gets rounds and over one that gets
// nothing, readers of their publications on goroutines of their own moving
// holds at random while the rounds run, compactions allowed at random,
// and indexes without readers dropped and created again. Once the
// runtimes are idle, every publication read has the since its holds
// require (the meet of what is allowed and its reader's hold: no move left
// unapplied) and no merge is in progress on either runtime (none left
// without fuel).
func TestHotTracesUnderRandomMoves(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	const workers = 2
	nRead, nChurn, rounds := 12, 6, 40
	if testing.Short() {
		nRead, nChurn, rounds = 6, 3, 16
	}
	m, i, ctl, err := Pair(workers, spine.Options{Effort: 1, Fanout: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx := testCtx(t)
	probe := dataflow.NewProbe(workers)
	sendAll(t, ctl, CreateInput{Name: "in", Arity: 2}, CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, probe)})
	sendAll(t, ctl, CreateInput{Name: "quiet", Arity: 2})
	type read struct {
		id      string
		allowed uint64
		pts     []*share.Point
		rds     []*share.Reader
		holds   []uint64 // each reader's last hold, set by its goroutine
	}
	reads := make([]*read, nRead)
	for k := range reads {
		in := "quiet"
		if k%2 == 0 {
			in = "in"
		}
		rd := &read{id: fmt.Sprintf("read%d", k)}
		reads[k] = rd
		sendAll(t, ctl, CreateDataflow{Desc: indexDesc(rd.id, in, 2, []int{0}, 0, nil)})
	}
	gen := make([]int, nChurn)
	churn := func(k int) dataflow.Desc {
		d := indexDesc(fmt.Sprintf("churn%d", k), []string{"in", "quiet"}[k%2], 2, []int{k % 2}, 0, nil)
		d.ID = fmt.Sprintf("maintain churn%d gen %d", k, gen[k])
		return d
	}
	for k := range nChurn {
		sendAll(t, ctl, CreateDataflow{Desc: churn(k)})
	}
	round := func(r uint64) {
		c := dataflow.NewChunk(2, 8)
		for j := range int64(8) {
			c.Push([]int64{rng.Int64N(64), j}, r, 1)
		}
		sendAll(t, ctl, Input{Name: "in", Chunk: c}, AdvanceInput{Name: "in", Frontier: frontier.At(r + 1)}, AllowCompaction{ID: "idx", Frontier: frontier.At(r)})
	}
	round(0)
	if err := probe.WaitPassed(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, rd := range reads {
		for w, g := range m.opts.Registries {
			slot := g.Lookup(rd.id, frontier.At(0))
			if slot == nil {
				t.Fatalf("%s: worker %d: no published slot", rd.id, w)
			}
			rd.pts = append(rd.pts, slot.Oks())
			rd.rds = append(rd.rds, slot.Oks().Reader())
			rd.holds = append(rd.holds, 0)
		}
	}
	// Each reader moves on a goroutine of its own, at random.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for k, rd := range reads {
		for w := range rd.rds {
			wg.Add(1)
			go func(r *rand.Rand) {
				defer wg.Done()
				top := uint64(r.IntN(rounds / 2)) // where it stops: some bind, some do not
				for {
					select {
					case <-stop:
						return
					default:
					}
					if r.IntN(8) == 0 && rd.holds[w] < top {
						rd.holds[w]++
						rd.rds[w].SetLogicalCompaction(frontier.At(rd.holds[w]))
					}
					goruntime.Gosched()
				}
			}(rand.New(rand.NewPCG(seed, uint64(2+k*workers+w))))
		}
	}
	for r := uint64(1); r <= uint64(rounds); r++ {
		round(r)
		for _, rd := range reads {
			if rng.IntN(3) == 0 {
				rd.allowed += uint64(rng.IntN(3))
				sendAll(t, ctl, AllowCompaction{ID: rd.id, Frontier: frontier.At(rd.allowed)})
			}
		}
		if k := rng.IntN(nChurn); rng.IntN(4) == 0 {
			sendAll(t, ctl, AllowCompaction{ID: fmt.Sprintf("churn%d", k), Frontier: frontier.Empty()})
			gen[k]++
			sendAll(t, ctl, CreateDataflow{Desc: churn(k)})
		}
		if rng.IntN(2) == 0 {
			if err := probe.WaitPassed(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if err := probe.WaitPassed(ctx, uint64(rounds)); err != nil {
		t.Fatal(err)
	}
	if !awaitIdle(ctx.Done(), m, i) {
		t.Fatal("never idle")
	}
	for _, rd := range reads {
		for w, pt := range rd.pts {
			want := frontier.At(min(rd.allowed, rd.holds[w]))
			if got := pt.Stats().Since; got != want {
				t.Errorf("%s: worker %d: since %v once idle, allowed {%d}, its reader at {%d}: want %v", rd.id, w, got, rd.allowed, rd.holds[w], want)
			}
		}
	}
	for _, r := range []*Runtime{m, i} {
		st, err := r.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Trace.Merging != 0 {
			t.Errorf("%v: idle with %d merges in progress", r.Role(), st.Trace.Merging)
		}
	}
	if err := ctl.Err(); err != nil {
		t.Fatal(err)
	}
	for _, rd := range reads {
		for _, x := range rd.rds {
			x.Release()
		}
	}
}
