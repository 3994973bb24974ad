package share

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// Benchmarks of sharing: what it costs a reader to install, follow and hold
// an index another runtime maintains, each beside the limit it replaces
// (README.md, "Benchmarks"): building the same index directly
// from its updates, the publisher's own insert, and k private copies.
//
//	ImportInstall  one import of a published index (seed + first frontier,
//	               close, release) vs building it directly from its n updates.
//	               Goals: imported <= 1/100 of direct at n=1000000, and
//	               imported nearly flat in n (growth exponent < 0.2).
//	Follow         per-batch cost of a live reader (one Drain of one batch and
//	               its frontier, then the consumer's downgrade) beside the
//	               publisher's per-batch insert and maintenance, on the same
//	               stream of batches.
//	Readers        column bytes k readers reach (trace-B, a shared batch counted
//	               once) over one publication vs k private copies.
//	               Goal: imported <= 1.1x one copy for any k.
//
// A published index is maintained as a controller and maintenance loop do:
// batches arrive one time apart; after each insert the local handle's
// physical compaction follows the upper, its logical compaction trails it by
// benchLag times, and the writer exerts one batch worth of effort. Inputs come
// from fixed PCG seeds and are made outside the timed loops; batches are
// immutable and shared, so one stream serves every iteration.
//
// Under -short the n=1000000 cases of ImportInstall are skipped and Readers
// publishes 100000 updates, so that
// `go test -short -run '^$' -bench . -benchtime 1x ./core/share` stays fast.

const (
	// benchLag is how many times the logical compaction trails the upper.
	benchLag = 2
	// benchBatches is the number of batches an index of n updates is
	// inserted as (n/benchBatches updates each, at consecutive times).
	benchBatches = 100
	// benchSeed seeds every generator (with n or a stream id as the
	// second PCG word).
	benchSeed = 0x5368_6172_6542
)

// benchRec is one update of a benchmark index (one-column key and val).
type benchRec struct {
	k, v int64
	t    uint64
	d    int64
}

// benchRecs returns nb*per random updates, per at each time 0..nb-1 in time
// order: keys uniform over [0, max(nb*per/8, 1)) (about eight updates per
// key), vals over [0, 1<<40), diff +1.
func benchRecs(nb, per int, stream uint64) []benchRec {
	rng := rand.New(rand.NewPCG(benchSeed, stream))
	keys := max(int64(nb*per/8), 1)
	out := make([]benchRec, 0, nb*per)
	for t := range uint64(nb) {
		for range per {
			out = append(out, benchRec{rng.Int64N(keys), rng.Int64N(1 << 40), t, 1})
		}
	}
	return out
}

// benchBuild builds recs into one batch [lower, upper) with bld.
func benchBuild(tb testing.TB, bld *batch.Builder, recs []benchRec, lower, upper frontier.Frontier) *batch.Batch {
	for _, r := range recs {
		bld.Push1(r.k, r.v, r.t, r.d)
	}
	bt, err := bld.Build(lower, upper)
	if err != nil {
		tb.Fatal(err)
	}
	return bt
}

// benchMaintain is one publisher step: apply remote holds if a reader woke
// it, insert bt, move the local handle's holds (physical to the upper,
// logical benchLag behind) and exert effort.
func benchMaintain(tb testing.TB, h *trace.Handle, w *trace.Writer, s *Spine, bt *batch.Batch, effort int64) {
	if s.TakeWake() {
		s.Refresh()
	}
	if err := w.Insert(bt); err != nil {
		tb.Fatal(err)
	}
	up := bt.Upper().MustTime()
	h.SetLogicalCompaction(frontier.At(up - min(up, benchLag)))
	h.SetPhysicalCompaction(frontier.At(up))
	w.Exert(effort)
}

// benchIndex is a maintained index published into a point, with the updates
// it was built from.
type benchIndex struct {
	recs  []benchRec
	upper frontier.Frontier
	h     *trace.Handle
	w     *trace.Writer
	s     *Spine
	pt    *Point
}

// newBenchIndex publishes n random updates (n/benchBatches per time) into a
// fresh point and maintains the trace after every insert.
func newBenchIndex(tb testing.TB, n int) *benchIndex {
	tb.Helper()
	per := n / benchBatches
	ix := &benchIndex{recs: benchRecs(benchBatches, per, uint64(n)), upper: frontier.At(benchBatches)}
	ix.h, ix.w, ix.s = NewTrace(kv, spine.Options{})
	ix.pt = NewPoint()
	if err := ix.s.Attach(ix.pt); err != nil {
		tb.Fatal(err)
	}
	bld := batch.NewBuilder(kv, per)
	for i := range uint64(benchBatches) {
		bt := benchBuild(tb, bld, ix.recs[int(i)*per:int(i+1)*per], frontier.At(i), frontier.At(i+1))
		benchMaintain(tb, ix.h, ix.w, ix.s, bt, int64(per))
	}
	return ix
}

// asOf is the import time: the published since (benchLag behind the upper).
func (ix *benchIndex) asOf() frontier.Frontier { return ix.pt.Stats().Since }

// release drops the publication.
func (ix *benchIndex) release() { ix.h.Release() }

// checkNoReaders fails if a reader of pt is left (holds accumulate otherwise).
func checkNoReaders(tb testing.TB, pt *Point) {
	tb.Helper()
	if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		tb.Fatalf("point left with %d readers and %d importers", st.Readers, st.Importers)
	}
	if l, p := pt.RemoteHolds(); !l.IsEmpty() || !p.IsEmpty() {
		tb.Fatalf("remote holds left: %s %s", l.String(), p.String())
	}
}

// importSeed imports pt at asOf (until {}) and drains it until the first
// frontier event, appending the events to evs.
func importSeed(tb testing.TB, pt *Point, asOf frontier.Frontier, evs []Event) (*Import, []Event) {
	im, err := pt.Import(asOf, frontier.Empty())
	if err != nil {
		tb.Fatal(err)
	}
	for {
		n0 := len(evs)
		evs = im.Drain(evs)
		for _, e := range evs[n0:] {
			if e.Batch == nil {
				return im, evs
			}
		}
		if len(evs) == n0 {
			tb.Fatalf("import at %v: the seed ends without a frontier", asOf)
		}
	}
}

// installDirect builds the index directly from recs, as the direct query
// dataflow does: one batch [{0}, upper) built with bld, inserted into a
// fresh spine. It returns the trace's handle.
func installDirect(tb testing.TB, bld *batch.Builder, recs []benchRec, upper frontier.Frontier) *trace.Handle {
	bt := benchBuild(tb, bld, recs, frontier.Min(), upper)
	h, w := trace.NewSpine(kv, spine.Options{})
	if err := w.Insert(bt); err != nil {
		tb.Fatal(err)
	}
	return h
}

// BenchmarkImportInstall measures installing an index in a query: importing
// the published one (imported) or building it from its n updates (direct).
//
// imported: one op is Import at the published since, Drain through the seed
// and its frontier, Close, and Release of the import's Trace. Its work is
// proportional to the chain (seed-batches), not to n.
// direct: one op is Push1 of the n updates into a builder (reused across ops,
// as an arrange operator reuses its builder; this favours direct), Build,
// Insert into a fresh spine, and Release of its handle.
//
// Metrics: ns/update is ns/op / n. Goals: imported <= 1/100 of direct at
// n=1000000; imported nearly flat in n (log-log growth exponent < 0.2).
func BenchmarkImportInstall(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if testing.Short() && n >= 1_000_000 {
				b.Skip("n=1000000 under -short")
			}
			ix := newBenchIndex(b, n)
			defer ix.release()
			asOf := ix.asOf()

			b.Run("index=imported", func(b *testing.B) {
				// Untimed check: the seed presents every published update.
				im, evs := importSeed(b, ix.pt, asOf, nil)
				got := 0
				for _, e := range evs {
					if e.Batch != nil {
						got += e.Batch.Len()
					}
				}
				im.Close()
				im.Reader().Release()
				if want := ix.s.Stats().Updates; got != want {
					b.Fatalf("seed presented %d updates, the trace holds %d", got, want)
				}
				seed := len(ix.pt.Chain())

				b.ReportAllocs()
				for b.Loop() {
					im, evs = importSeed(b, ix.pt, asOf, evs[:0])
					im.Close()
					im.Reader().Release()
				}
				checkNoReaders(b, ix.pt)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/update")
				b.ReportMetric(float64(seed), "seed-batches")
			})

			b.Run("index=direct", func(b *testing.B) {
				bld := batch.NewBuilder(kv, n)
				installDirect(b, bld, ix.recs, ix.upper).Release() // warm the builder
				b.ReportAllocs()
				for b.Loop() {
					installDirect(b, bld, ix.recs, ix.upper).Release()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/update")
			})
		})
	}
}

const (
	// followBatch is the number of updates in each batch of the Follow
	// stream.
	followBatch = 1000
	// followCycle is the length of the pre-built stream: the trace is
	// restarted (untimed) every followCycle batches.
	followCycle = 512
	// followReadChunk is how many batches the untimed publisher inserts
	// at a time in the side=reader run, before the reader follows them.
	followReadChunk = 256
)

// follow is one publisher and one live reader of its point on the Follow
// stream: the publisher inserts batches (publish), then the reader follows
// them one batch at a time (read); every followCycle batches the trace
// restarts. Only the side under test is timed.
type follow struct {
	tb       testing.TB
	stream   []*batch.Batch // batch i is [i, i+1)
	maintain bool           // the publisher maintains its trace (benchMaintain)
	h        *trace.Handle
	w        *trace.Writer
	s        *Spine
	pt       *Point
	im       *Import

	pubNext, readNext int     // next stream index each side handles
	pending           []event // the import's queued events, taken after inserts
	pendingBase       int     // stream index of pending[0]
	evs               []Event
}

func newFollow(tb testing.TB, maintain bool) *follow {
	recs := benchRecs(followCycle, followBatch, 0xf0110)
	bld := batch.NewBuilder(kv, followBatch)
	f := &follow{tb: tb, stream: make([]*batch.Batch, followCycle), maintain: maintain}
	for i := range f.stream {
		t := uint64(i)
		f.stream[i] = benchBuild(tb, bld, recs[i*followBatch:(i+1)*followBatch], frontier.At(t), frontier.At(t+1))
	}
	f.restart()
	return f
}

// restart drops the current trace and import (checking that no hold is
// left) and starts a fresh publication with a live import at {0}.
func (f *follow) restart() {
	if f.im != nil {
		f.close()
	}
	f.h, f.w, f.s = NewTrace(kv, spine.Options{})
	f.pt = NewPoint()
	if err := f.s.Attach(f.pt); err != nil {
		f.tb.Fatal(err)
	}
	im, err := f.pt.Import(frontier.Min(), frontier.Empty())
	if err != nil {
		f.tb.Fatal(err)
	}
	f.im = im
	f.im.Drain(nil) // the empty seed: its frontier {0} does not advance
	f.pubNext, f.readNext = 0, 0
}

// publish is the publisher's work on the next stream batch: with maintain,
// a maintained index's step (benchMaintain); without, Insert alone (after
// applying holds if a reader woke it), so the trace never merges.
func (f *follow) publish() {
	b := f.stream[f.pubNext]
	if f.maintain {
		benchMaintain(f.tb, f.h, f.w, f.s, b, followBatch)
	} else {
		if f.s.TakeWake() {
			f.s.Refresh()
		}
		if err := f.w.Insert(b); err != nil {
			f.tb.Fatal(err)
		}
	}
	f.pubNext++
}

// take moves the events the publisher queued for the import (two per
// inserted batch: the batch and its upper) aside, so that read can hand
// them back one insert at a time.
//
// NB: this reaches into the import's queue (package internals). It is the
// only way to let the reader Drain exactly one insert's events per op while
// the publisher's inserts run untimed in chunks.
func (f *follow) take() {
	f.pt.mu.Lock()
	f.pending = append(f.pending[:0], f.im.q.events...)
	clear(f.im.q.events)
	f.im.q.events = f.im.q.events[:0]
	f.pt.mu.Unlock()
	if want := 2 * (f.pubNext - f.readNext); len(f.pending) != want {
		f.tb.Fatalf("import queue holds %d events after %d inserts, want %d", len(f.pending), f.pubNext-f.readNext, want)
	}
	f.pendingBase = f.readNext
}

// read is the live reader's per-batch work: the two events of one insert
// are put back on the queue as the publisher's Insert put them (lock, push,
// signal: about the cost of one uncontended lock, counted here, not on the
// publisher's side), then the reader wakes, drains one batch and its
// frontier, and downgrades its consumer-facing trace (physically to the
// frontier, logically benchLag behind), as a consumer does to let the
// publisher merge and compact.
func (f *follow) read() {
	i := 2 * (f.readNext - f.pendingBase)
	f.pt.mu.Lock()
	f.im.q.push(f.pending[i])
	f.im.q.push(f.pending[i+1])
	f.im.q.signal()
	f.pt.mu.Unlock()
	select {
	case <-f.im.Ready():
	default:
	}
	f.evs = f.im.Drain(f.evs[:0])
	if len(f.evs) != 2 || f.evs[0].Batch != f.stream[f.readNext] || f.evs[1].Batch != nil {
		f.tb.Fatalf("batch %d: drained %v", f.readNext, f.evs)
	}
	fr := f.evs[1].Frontier
	tr := f.im.Reader()
	tr.SetPhysicalCompaction(fr)
	up := fr.MustTime()
	tr.SetLogicalCompaction(frontier.At(up - min(up, benchLag)))
	f.readNext++
}

// readAll follows every batch published so far.
func (f *follow) readAll() {
	f.take()
	for f.readNext < f.pubNext {
		f.read()
	}
}

// close ends the import and the publication and checks no hold is left.
func (f *follow) close() {
	f.im.Close()
	f.im.Reader().Release()
	f.h.Release()
	checkNoReaders(f.tb, f.pt)
}

// BenchmarkFollow measures, per batch of followBatch updates, a live reader
// following the publisher (side=reader: one Drain of one batch event and its
// frontier, and the consumer's downgrade) beside the publisher's own work
// (side=publisher: Insert, local compaction, Exert of one batch of effort,
// applying the reader's holds). One op is one batch; ns/batch = ns/op.
// Both sides handle the same pre-built batches, in the same order, through
// the same point and import.
//
// side=publisher: each op inserts one batch with maintenance; then, untimed,
// the reader follows it, so the reader's holds never lag more than one batch
// behind (as a live reader's). The trace restarts, untimed, every
// followCycle batches: the cost is amortised over a trace growing from 0 to
// followCycle batches (merge work included); b.N spans many cycles.
//
// side=reader: untimed, the publisher inserts followReadChunk batches
// without maintenance (no merging); then each op follows one batch. The
// reader's work touches only its queue, its point's lock and the remote
// holds, none of which depends on how the publisher merges; a maintaining
// publisher costs a few hundred times a reader's batch, and would make the
// untimed side dominate the run (tens of minutes at -count 6).
func BenchmarkFollow(b *testing.B) {
	b.Run("side=reader", func(b *testing.B) {
		f := newFollow(b, false)
		b.ReportAllocs()
		for b.Loop() {
			if f.readNext == f.pubNext {
				b.StopTimer()
				if f.pubNext == len(f.stream) {
					f.restart()
				}
				for range followReadChunk {
					f.publish()
				}
				f.take()
				b.StartTimer()
			}
			f.read()
		}
		f.close()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/batch")
	})
	b.Run("side=publisher", func(b *testing.B) {
		f := newFollow(b, true)
		b.ReportAllocs()
		for b.Loop() {
			f.publish()
			b.StopTimer()
			f.readAll()
			if f.pubNext == len(f.stream) {
				f.restart()
			}
			b.StartTimer()
		}
		f.close()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/batch")
	})
}

// readersUpdates is the size of the BenchmarkReaders publication.
func readersUpdates() int {
	if testing.Short() {
		return 100_000
	}
	return 1_000_000
}

// importedReach imports pt k times at asOf and returns, per reader, the
// batches it can reach (those its seed presented and those its Trace maps),
// and a function that closes the imports and releases their traces.
func importedReach(tb testing.TB, pt *Point, asOf frontier.Frontier, k int) ([][]*batch.Batch, func()) {
	reach := make([][]*batch.Batch, k)
	ims := make([]*Import, k)
	var evs []Event
	for i := range k {
		ims[i], evs = importSeed(tb, pt, asOf, evs[:0])
		for _, e := range evs {
			if e.Batch != nil {
				reach[i] = append(reach[i], e.Batch)
			}
		}
		ims[i].Reader().MapBatches(func(b *batch.Batch) { reach[i] = append(reach[i], b) })
	}
	return reach, func() {
		for _, im := range ims {
			im.Close()
			im.Reader().Release()
		}
	}
}

// directReach builds k private copies of the index from recs (each its own
// trace) and returns, per reader, the batches of its copy, and a function
// that releases the copies.
func directReach(tb testing.TB, bld *batch.Builder, recs []benchRec, upper frontier.Frontier, k int) ([][]*batch.Batch, func()) {
	reach := make([][]*batch.Batch, k)
	hs := make([]*trace.Handle, k)
	for i := range k {
		hs[i] = installDirect(tb, bld, recs, upper)
		hs[i].MapBatches(func(b *batch.Batch) { reach[i] = append(reach[i], b) })
	}
	return reach, func() {
		for _, h := range hs {
			h.Release()
		}
	}
}

// distinctBytes is trace-B over readers: the column bytes of the distinct
// batches they reach, a batch shared by pointer counted once.
func distinctBytes(reach [][]*batch.Batch) int {
	seen := map[*batch.Batch]struct{}{}
	total := 0
	for _, bs := range reach {
		for _, b := range bs {
			if _, ok := seen[b]; !ok {
				seen[b] = struct{}{}
				total += b.SizeBytes()
			}
		}
	}
	return total
}

// BenchmarkReaders measures the bytes k readers hold over one publication of
// readersUpdates() updates: k imports of the published index (imported) or k
// private copies built from the same updates (direct). trace-B counts the
// column bytes of the distinct batches the readers reach (not the heap);
// trace-B/update divides it by the publication's updates; copies divides it
// by one private copy's trace-B. Goal: imported copies <= 1.1 for any k.
//
// The timed op creates the k readers and releases them.
func BenchmarkReaders(b *testing.B) {
	n := readersUpdates()
	ix := newBenchIndex(b, n)
	defer ix.release()
	asOf := ix.asOf()
	bld := batch.NewBuilder(kv, n)
	one, release := directReach(b, bld, ix.recs, ix.upper, 1)
	oneCopy := distinctBytes(one)
	release()

	type reachFunc func(tb testing.TB, k int) ([][]*batch.Batch, func())
	kinds := []struct {
		name  string
		reach reachFunc
	}{
		{"imported", func(tb testing.TB, k int) ([][]*batch.Batch, func()) { return importedReach(tb, ix.pt, asOf, k) }},
		{"direct", func(tb testing.TB, k int) ([][]*batch.Batch, func()) {
			return directReach(tb, bld, ix.recs, ix.upper, k)
		}},
	}
	for _, k := range []int{1, 4} {
		for _, kind := range kinds {
			b.Run(fmt.Sprintf("k=%d/index=%s", k, kind.name), func(b *testing.B) {
				reach, release := kind.reach(b, k)
				bytes := distinctBytes(reach)
				release()
				b.ReportAllocs()
				for b.Loop() {
					_, release := kind.reach(b, k)
					release()
				}
				checkNoReaders(b, ix.pt)
				b.ReportMetric(float64(bytes), "trace-B")
				b.ReportMetric(float64(bytes)/float64(n), "trace-B/update")
				b.ReportMetric(float64(bytes)/float64(oneCopy), "copies")
			})
		}
	}
}

// TestBenchmarkMetricsAreSane runs BenchmarkReaders' metric at a small n:
// four imports of one publication reach exactly the bytes of one (the
// published chain), four private copies exactly four times one copy.
func TestBenchmarkMetricsAreSane(t *testing.T) {
	ix := newBenchIndex(t, 10_000)
	defer ix.release()
	asOf := ix.asOf()
	bld := batch.NewBuilder(kv, len(ix.recs))
	measure := func(reach [][]*batch.Batch, release func()) int {
		defer release()
		for i, bs := range reach {
			if len(bs) == 0 {
				t.Fatalf("reader %d reaches no batch", i)
			}
		}
		return distinctBytes(reach)
	}
	imp1 := measure(importedReach(t, ix.pt, asOf, 1))
	imp4 := measure(importedReach(t, ix.pt, asOf, 4))
	dir1 := measure(directReach(t, bld, ix.recs, ix.upper, 1))
	dir4 := measure(directReach(t, bld, ix.recs, ix.upper, 4))
	checkNoReaders(t, ix.pt)
	if chain := ix.pt.Stats().Bytes; imp1 != chain || imp4 != chain {
		t.Errorf("imported trace-B k=1 %d, k=4 %d; want the published chain's %d for both", imp1, imp4, chain)
	}
	if dir1 <= 0 || dir4 != 4*dir1 {
		t.Errorf("direct trace-B k=1 %d, k=4 %d; want k=4 = 4 x k=1", dir1, dir4)
	}
	t.Logf("trace-B: imported %d (%.3f copies), one private copy %d", imp1, float64(imp1)/float64(dir1), dir1)
}
