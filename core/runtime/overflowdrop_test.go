package runtime

import (
	"math"
	goruntime "runtime"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// barriersQueued returns the fewest barriers a worker of r has queued and
// not yet taken.
func barriersQueued(r *Runtime) int {
	least := math.MaxInt
	for _, w := range r.workers {
		w.qmu.Lock()
		n := 0
		for _, q := range w.queue {
			if _, ok := q.cmd.(barrier); ok {
				n++
			}
		}
		w.qmu.Unlock()
		least = min(least, n)
	}
	return least
}

// queueBarrier starts call (a Sync, or a barrier of r's) on a goroutine of
// its own and returns once every worker of r has its barrier queued, so
// that the commands sent after it come after it in each worker's queue;
// the returned channel receives call's error.
func queueBarrier(r *Runtime, call func() error) <-chan error {
	before := barriersQueued(r)
	done := make(chan error, 1)
	go func() { done <- call() }()
	for barriersQueued(r) == before {
		goruntime.Gosched()
	}
	return done
}

// A merge's overflow found before its dataflow is dropped, in the same
// wake, is reported as a step's error of that dataflow met then is
// (docs/semantics.md §1.1): the drop discards neither. Here the workers
// of the runtime that maintains index idx are held while commands are
// sent, and then take in one wake two Syncs' barriers, whose steps build
// one batch of each worker's key each (math.MaxInt64 at time 0, 1 at time
// 1) and meet dataflow boom's panic, an AllowCompaction to {2} (which the
// pair's Interactive runtime applies first, moving its hold), a barrier
// that merges what it can (as a wake's Maintain would: both batches,
// compacted to time 2, overflow), and the drops of both dataflows. Both
// errors are taken once, and the controller keeps nothing of them once
// the drops are applied. Before, only the panic was reported: the drop
// untracked the trace before the worker asked for overflows, which looked
// at tracked traces only. Solo and the pair, one worker and two.
func TestAMergeOverflowBeforeTheDropIsReported(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		pub := s.rts[0] // Solo's, or the pair's Maintenance runtime
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: rowBoomDesc("boom")})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		release := holdWorkers(t, []*Runtime{pub})
		var waits []<-chan error
		sync := func() error { return s.ctl.Sync(testCtx(t)) }
		for at, diff := range []int64{math.MaxInt64, 1} {
			for i := range s.workers {
				s.send("in", 2, []int64{int64(at), diff, keyOn(i, s.workers), 1})
			}
			s.advance("in", 2, frontier.At(uint64(at+1)))
			waits = append(waits, queueBarrier(pub, sync))
		}
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(2)})
		if s.mode == "pair" {
			// The reader's hold moves now, and the held worker's
			// Maintain below takes it: the merge is at {2}.
			if err := s.ctl.SyncRole(testCtx(t), Interactive); err != nil {
				t.Fatal(err)
			}
		}
		waits = append(waits, queueBarrier(pub, func() error {
			return pub.barrier(testCtx(t), func(w *worker) {
				for w.env.Manager.Maintain(1 << 20) {
				}
			})
		}))
		s.must(DropDataflow{ID: "maintain idx"})
		s.must(DropDataflow{ID: "boom"})
		release()
		for _, wait := range waits {
			if err := <-wait; err != nil {
				t.Fatal(err)
			}
		}
		got := takeLinesOf(t, s)
		slices.Sort(got)
		want := []string{
			`0: dataflow boom: operator "boom": Step: operator panicked: row boom`,
			"0: dataflow maintain idx: arrange oks: batch: numeric overflow in diff",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("errors after the wake that met them and dropped their dataflows: %q, want %q", got, want)
		}
		if got := takeLinesOf(t, s); len(got) != 0 {
			t.Fatalf("errors taken again: %q", got)
		}
		keepsNothing(t, s.ctl)
	})
}
