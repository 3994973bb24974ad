package share

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// stressRound is the precomputed input of one round: updates at time r.
type stressRound [][3]int64

// stressModel accumulates rounds [0, upper) at t.
func stressModel(rounds []stressRound, t uint64, upper uint64) map[[2]int64]int64 {
	out := map[[2]int64]int64{}
	for r := uint64(0); r < min(t+1, upper); r++ {
		for _, u := range rounds[r] {
			out[[2]int64{u[0], u[1]}] += u[2]
		}
	}
	maps.DeleteFunc(out, func(_ [2]int64, d int64) bool { return d == 0 })
	return out
}

// TestConcurrentPublishAndImport runs a publisher goroutine that inserts,
// merges and compacts while reader goroutines import at random as_ofs,
// downgrade and release. Every import's accumulation at every time it may
// read equals the model; at the end no hold remains and the registry is
// empty. Iterations are bounded; run under -race.
func TestConcurrentPublishAndImport(t *testing.T) {
	const (
		nRounds  = 300
		nReaders = 3
		imports  = 15 // at least this many imports per reader
		quota    = 60 // and at least this many checked accumulations
		maxTries = 400
		trail    = 30 // the publisher's own hold trails its upper by this: as_ofs spread over the last 30 rounds
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (replay: set seed in the test)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := make([]stressRound, nRounds)
	for r := range rounds {
		for range rng.IntN(6) {
			d := int64(1)
			if rng.IntN(3) == 0 {
				d = -1
			}
			rounds[r] = append(rounds[r], [3]int64{rng.Int64N(8), rng.Int64N(4), d})
		}
	}

	g := NewRegistry()
	oksH, oksW, oksS := NewTrace(kv, spine.Options{})
	errsH, errsW, errsS := NewTrace(batch.Arity{Key: 1}, spine.Options{})
	tok, err := g.Publish("idx", frontier.Min(), oksS, errsS)
	if err != nil {
		t.Fatal(err)
	}
	slot := tok.Slot()
	peer := g.PeerBundle("idx", frontier.Min())

	var wg sync.WaitGroup
	stop := make(chan struct{})
	pubDone := make(chan struct{}) // the publisher has inserted every round
	errc := make(chan error, nReaders+2)

	// The publisher: one round at a time; the controller's hold trails the
	// upper; maintenance merges everything sealed; wakes apply reader holds.
	wg.Add(1)
	go func() {
		defer wg.Done()
		bld := batch.NewBuilder(kv, 8)
		for r := range uint64(nRounds) {
			for _, u := range rounds[r] {
				bld.Push1(u[0], u[1], r, u[2])
			}
			b, err := bld.Build(frontier.At(r), frontier.At(r+1))
			if err == nil {
				err = oksW.Insert(b)
			}
			if err == nil {
				err = errsW.Seal(frontier.At(r + 1))
			}
			if err != nil {
				errc <- err
				close(pubDone)
				<-stop
				return
			}
			if r >= trail {
				f := frontier.At(r - trail)
				oksH.SetLogicalCompaction(f)
				errsH.SetLogicalCompaction(f)
			}
			oksH.SetPhysicalCompaction(oksW.Upper())
			errsH.SetPhysicalCompaction(errsW.Upper())
			oksW.Exert(64)
			if oksS.TakeWake() {
				oksS.Refresh()
			}
			if r%16 == 0 {
				runtime.Gosched()
			}
		}
		close(pubDone)
		// Keep applying holds until the readers are done, so their
		// releases are honoured.
		for {
			// A wake is a flag, not a channel: polled every
			// millisecond, and applied then regardless.
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				oksS.TakeWake()
				oksS.Refresh()
			}
		}
	}()

	// The peer: the reading runtime's controller advances its hold.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(0); ; i += 7 {
			select {
			case <-pubDone:
				peer.Release()
				return
			default:
			}
			peer.AllowCompaction(frontier.At(i))
			time.Sleep(50 * time.Microsecond)
		}
	}()

	var readers sync.WaitGroup
	var admitted, checked atomic.Int64
	for w := range nReaders {
		wg.Add(1)
		readers.Add(1)
		go func() {
			defer wg.Done()
			defer readers.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w+2)))
			// A fast publisher may finish before a reader starts; the
			// reader keeps importing until it has checked its quota, so
			// how much is checked does not depend on scheduling.
			mine := 0
			for try := 0; try < maxTries && (try < imports || mine < quota); try++ {
				st := slot.Oks().Stats()
				lo, _ := st.Since.Time()
				hi, _ := st.Upper.Time()
				asOf := lo + uint64(rng.IntN(int(hi-lo)+3))
				until := frontier.Empty()
				if rng.IntN(2) == 0 {
					until = frontier.At(asOf + 1 + uint64(rng.IntN(20)))
				}
				im, err := slot.Oks().Import(frontier.At(asOf), until)
				if err != nil {
					continue // the since moved past asOf: refused, as it must be
				}
				admitted.Add(1)
				target := frontier.At(min(asOf+10, nRounds))
				var bs []*batch.Batch
				deadline := time.Now().Add(10 * time.Second)
				for !im.Done() && im.Frontier().Less(target) {
					for _, e := range im.Drain(nil) {
						if e.Batch != nil {
							bs = append(bs, e.Batch)
						}
					}
					if time.Now().After(deadline) {
						errc <- fmt.Errorf("import at %d stuck at %v", asOf, im.Frontier())
						return
					}
					select {
					case <-im.Ready():
					case <-time.After(time.Millisecond):
					}
				}
				// The consumer downgrades as it reads; the trace still
				// serves every time from its hold on.
				hold := asOf + uint64(rng.IntN(3))
				im.Reader().SetLogicalCompaction(frontier.At(hold))
				acked, _ := im.Frontier().Time()
				if im.Done() {
					acked, _ = until.Time()
				}
				if u, ok := until.Time(); ok {
					acked = min(acked, u)
				}
				for tm := asOf; tm < acked; tm++ {
					want := stressModel(rounds, tm, acked)
					checked.Add(1)
					mine++
					if got := accumulate(bs, im.Presentation(), tm); !maps.Equal(got, want) {
						errc <- fmt.Errorf("seed %d: import at %d: t=%d: got %v want %v", seed, asOf, tm, got, want)
						return
					}
				}
				if !im.Done() {
					cut, err := im.Reader().BatchesThrough(im.Frontier())
					if err != nil {
						errc <- fmt.Errorf("seed %d: trace cut at %v: %w", seed, im.Frontier(), err)
						return
					}
					for tm := hold; tm < acked; tm++ {
						want := stressModel(rounds, tm, acked)
						if got := accumulate(cut, im.Presentation(), tm); !maps.Equal(got, want) {
							errc <- fmt.Errorf("seed %d: trace of import at %d (hold %d): t=%d: got %v want %v", seed, asOf, hold, tm, got, want)
							return
						}
					}
				}
				im.Close()
				im.Reader().Release()
			}
		}()
	}
	go func() { readers.Wait(); <-pubDone; close(stop) }()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("%d imports admitted, %d (import, time) accumulations checked", admitted.Load(), checked.Load())
	if admitted.Load() < nReaders*imports/3 || checked.Load() < nReaders*quota {
		t.Errorf("too little was checked: %d imports, %d accumulations", admitted.Load(), checked.Load())
	}

	// Nothing is left holding the publication.
	for _, pt := range []*Point{slot.Oks(), slot.Errs()} {
		if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
			t.Errorf("left on a point: %+v", st)
		}
		if l, ph := pt.RemoteHolds(); !l.IsEmpty() || !ph.IsEmpty() {
			t.Errorf("remote holds left: %s %s", l.String(), ph.String())
		}
	}
	tok.Release()
	oksH.Release()
	errsH.Release()
	if st := g.Stats(); st.Slots != 0 || st.Reserved != 0 {
		t.Errorf("registry not empty: %+v", st)
	}
	var _ trace.Reader = oksH
}
