package reduce

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// TestReduceOnAnotherGoroutineThanItsPublisher: the publisher inserts,
// allows compaction to its upper and merges on its own goroutine while a
// reduce imports the index at a stale as_of and steps on another, as the
// Maintenance and Interactive runtimes do. The output matches the model
// at every time from as_of on (run it with -race).
func TestReduceOnAnotherGoroutineThanItsPublisher(t *testing.T) {
	const asOf, rounds = 3, 60
	rng := rand.New(rand.NewPCG(11, 5))
	c := config{aggs: []Aggregate{aggCount, aggMax, aggSum}, workers: 1}
	all := make([][]upd, rounds)
	for tm := range uint64(rounds) {
		all[tm] = randomUpdates(rng, c, 1+rng.IntN(12), 8, tm)
	}
	h, w, sp := share.NewTrace(ar12, spine.Options{})
	insert := func(tm uint64) {
		b := batch.NewBuilder(ar12, len(all[tm]))
		for _, u := range all[tm] {
			b.Push(u.key, u.val, u.t, u.d)
		}
		out, err := b.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Error(err)
			return
		}
		if err := w.Insert(out); err != nil {
			t.Error(err)
		}
	}
	for tm := range uint64(asOf + 2) {
		insert(tm)
	}
	h.SetLogicalCompaction(frontier.At(asOf))
	im, err := sp.LocalPoint().Import(frontier.At(asOf), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Input{Reader: im.Reader(), Pres: im.Presentation(), Arity: ar12}, Options{AsOf: frontier.At(asOf), Aggregates: c.aggs})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // the publisher
		defer close(done)
		for tm := uint64(asOf + 2); tm < rounds; tm++ {
			insert(tm)
			h.SetLogicalCompaction(frontier.At(tm + 1))
			h.SetPhysicalCompaction(frontier.At(tm + 1))
			if sp.TakeWake() {
				sp.Refresh()
			}
			w.Exert(1 << 12)
			if tm%7 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		w.Close() // seals the trace: the import's frontier becomes {}
		for range 100 {
			if sp.TakeWake() {
				sp.Refresh()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var got collected
	var evs []share.Event
	var pending []*batch.Batch
	front := frontier.Min()
	deadline := time.After(20 * time.Second)
	for !front.IsEmpty() {
		select {
		case <-im.Ready():
		case <-deadline:
			t.Fatalf("the import stalled at %v", front)
		}
		evs = im.Drain(evs[:0])
		for _, e := range evs {
			if e.Batch != nil {
				pending = append(pending, e.Batch)
			} else {
				front = e.Frontier
			}
		}
		o, err := r.Step(pending, front)
		pending = pending[:0]
		if err != nil {
			t.Fatalf("step to %v: %v", front, err)
		}
		got.add(o)
	}
	<-done
	r.Release()
	im.Close()
	h.Release()
	var flat []upd
	for _, ups := range all {
		flat = append(flat, ups...)
	}
	for tm := uint64(asOf); tm < rounds; tm++ {
		rows, errs := model(flat, tm, asOf, c.aggs, modeReduce)
		checkAt(t, &got, tm, rows, errs)
	}
}
