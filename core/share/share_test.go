package share

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

var kv = batch.Arity{Key: 1, Val: 1}

// pub is a publishing trace under test: its local handle (the controller's
// hold), writer and publishing spine, and a model of what was inserted.
type pub struct {
	t     testing.TB
	h     *trace.Handle
	w     *trace.Writer
	s     *Spine
	model map[[3]int64]int64 // (key, val, time) → diff
	upper uint64
}

func newPub(t testing.TB) *pub {
	h, w, s := NewTrace(kv, spine.Options{})
	return &pub{t: t, h: h, w: w, s: s, model: map[[3]int64]int64{}}
}

// round inserts one batch [upper, upper+1) with the given (key, val, diff)s.
func (p *pub) round(ups ...[3]int64) {
	p.t.Helper()
	bld := batch.NewBuilder(kv, len(ups))
	for _, u := range ups {
		bld.Push1(u[0], u[1], p.upper, u[2])
		p.model[[3]int64{u[0], u[1], int64(p.upper)}] += u[2]
	}
	b, err := bld.Build(frontier.At(p.upper), frontier.At(p.upper+1))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.w.Insert(b); err != nil {
		p.t.Fatal(err)
	}
	p.upper++
}

// rounds inserts n rounds; round r adds (r%3, r, +1) and retracts round r-2's.
func (p *pub) rounds(n int) {
	for range n {
		r := int64(p.upper)
		ups := [][3]int64{{r % 3, r, 1}}
		if r >= 2 {
			ups = append(ups, [3]int64{(r - 2) % 3, r - 2, -1})
		}
		p.round(ups...)
	}
}

// compact is the controller allowing compaction to f and maintenance merging
// everything sealed: the local handle's holds move, then merges run.
func (p *pub) compact(f frontier.Frontier) {
	p.h.SetLogicalCompaction(f)
	p.h.SetPhysicalCompaction(p.w.Upper())
	p.s.Refresh()
	for p.w.Exert(1 << 20) {
	}
}

// want returns the model accumulated at t.
func (p *pub) want(t uint64) map[[2]int64]int64 {
	out := map[[2]int64]int64{}
	for k, d := range p.model {
		if uint64(k[2]) <= t {
			out[[2]int64{k[0], k[1]}] += d
		}
	}
	maps.DeleteFunc(out, func(_ [2]int64, d int64) bool { return d == 0 })
	return out
}

// accumulate sums batches at t under a presentation.
func accumulate(bs []*batch.Batch, pres batch.Presentation, t uint64) map[[2]int64]int64 {
	out := map[[2]int64]int64{}
	for _, b := range bs {
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				times, diffs := c.Updates()
				for i, tm := range times {
					if pt, ok := pres.Present(tm); ok && pt <= t {
						out[[2]int64{c.Key()[0], c.Val()[0]}] += diffs[i]
					}
				}
			}
		}
	}
	maps.DeleteFunc(out, func(_ [2]int64, d int64) bool { return d == 0 })
	return out
}

// drained drains im and returns the batches it presented.
func drained(im *Import) []*batch.Batch {
	var bs []*batch.Batch
	for _, e := range im.Drain(nil) {
		if e.Batch != nil {
			bs = append(bs, e.Batch)
		}
	}
	return bs
}

func eq(t testing.TB, what string, got, want map[[2]int64]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// attached publishes p's trace into a fresh point.
func attached(t testing.TB, p *pub) *Point {
	pt := NewPoint()
	if err := p.s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	return pt
}

func TestImportReplaysTheRowsAndHoldsAtAsOf(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im, err := pt.Import(frontier.At(3), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	// Draining moves the import's own hold to the upper it acknowledged, so
	// from here only the consumer-facing trace holds as_of.
	bs := drained(im)
	for tm := uint64(3); tm < 10; tm++ {
		eq(t, fmt.Sprintf("import at t=%d", tm), accumulate(bs, im.Presentation(), tm), p.want(tm))
	}
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(3) {
		t.Fatalf("since %v with an import's trace at {3}", got)
	}
	// Reading through the trace after compaction still gives every time
	// from as_of on.
	cutBs, err := im.Reader().BatchesThrough(frontier.At(10))
	if err != nil {
		t.Fatal(err)
	}
	for tm := uint64(3); tm < 10; tm++ {
		eq(t, fmt.Sprintf("trace at t=%d", tm), accumulate(cutBs, im.Presentation(), tm), p.want(tm))
	}
	// Nothing is presented before as_of: every presented time is >= 3.
	for _, b := range bs {
		for _, u := range b.Updates() {
			if pt, _ := im.Presentation().Present(u.Time); pt < 3 {
				t.Fatalf("time %d presented before as_of", pt)
			}
		}
	}
	im.Close()
	im.Reader().Release()
}

func TestImportHoldsAfterConstructionWithNoConsumerHandleLeft(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im, err := pt.Import(frontier.At(3), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	im.Reader().Release() // a stream-only consumer drops the trace at once
	p.compact(frontier.At(8))
	// The import's own hold keeps as_of readable until it has replayed.
	if got := pt.Stats().Since; got != frontier.At(3) {
		t.Fatalf("since %v: the import's own hold did not hold {3}", got)
	}
	if r, err := pt.ReaderAt(frontier.At(3)); err != nil {
		t.Fatalf("as_of no longer admitted: %v", err)
	} else {
		r.Release()
	}
	bs := drained(im)
	eq(t, "rows at as_of", accumulate(bs, im.Presentation(), 3), p.want(3))
	// Having acknowledged the upper, the hold follows it: compaction proceeds.
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(8) {
		t.Fatalf("since %v after the import acknowledged {10}, want {8}", got)
	}
	im.Close()
}

func TestImportHoldDowngradesWhileLive(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im, err := pt.Import(frontier.At(3), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	drained(im)
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(3) {
		t.Fatalf("since %v, want the consumer's {3}", got)
	}
	im.Reader().SetLogicalCompaction(frontier.At(6))
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(6) {
		t.Fatalf("since %v after the consumer downgraded to {6}", got)
	}
	im.Reader().SetLogicalCompaction(frontier.At(9))
	p.rounds(2)
	drained(im)
	p.compact(frontier.At(11))
	// No frozen floor: the since follows the downgrades (§8.12).
	if got := pt.Stats().Since; got != frontier.At(9) {
		t.Fatalf("since %v, want {9}", got)
	}
	im.Close()
	im.Reader().Release()
}

func TestImportHoldReleasesOnDrop(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	im, err := pt.Import(frontier.At(3), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if n := pt.Stats().Readers; n != 2 {
		t.Fatalf("readers %d, want 2 (consumer trace + import hold)", n)
	}
	im.Close()
	im.Reader().Release()
	if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		t.Fatalf("after drop: %+v", st)
	}
	l, ph := pt.RemoteHolds()
	if !l.IsEmpty() || !ph.IsEmpty() {
		t.Fatalf("remote holds left: %s %s", l.String(), ph.String())
	}
	p.compact(frontier.At(8))
	if got := pt.Stats().Since; got != frontier.At(8) {
		t.Fatalf("since %v after the import dropped, want {8}", got)
	}
	if _, err := pt.ReaderAt(frontier.At(3)); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("a reader at {3} was admitted after compaction to {8}: %v", err)
	}
}

func TestPublishedSinceDoesNotChaseReaderHolds(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	r := pt.Reader()
	r.SetLogicalCompaction(frontier.At(7))
	p.s.Refresh()
	for p.w.Exert(1 << 20) {
	}
	// The local request is still {0}: the since stays there (§8.13).
	if got := pt.Stats().Since; got != frontier.Min() {
		t.Fatalf("since %v chased a reader hold", got)
	}
	r.Release()
}

func TestReaderPhysicalHoldStaysWithinChainCoverage(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(5)
	r := pt.Reader()
	if r.PhysicalCompaction() != frontier.At(5) {
		t.Fatalf("reader physical hold %v, want the coverage {5}", r.PhysicalCompaction())
	}
	// The owner lets everything merge; the reader's hold keeps {5} a boundary.
	p.rounds(5)
	p.compact(frontier.At(2))
	if got := p.s.PhysicalCompaction(); got != frontier.At(5) {
		t.Fatalf("applied physical %v, want the reader's {5}", got)
	}
	bs, err := r.BatchesThrough(frontier.At(5))
	if err != nil {
		t.Fatalf("cut at the held boundary: %v", err)
	}
	eq(t, "cut at {5}", accumulate(bs, batch.Identity(), 9), func() map[[2]int64]int64 {
		out := map[[2]int64]int64{}
		for k, d := range p.model {
			if k[2] < 5 {
				out[[2]int64{k[0], k[1]}] += d
			}
		}
		maps.DeleteFunc(out, func(_ [2]int64, d int64) bool { return d == 0 })
		return out
	}())
	r.Release()
	p.compact(frontier.At(2))
	if got := p.s.PhysicalCompaction(); got != frontier.At(10) {
		t.Fatalf("applied physical %v after release, want {10}", got)
	}
}

func TestAPeerHandleBelowTheSinceJoinsUpToIt(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	p.compact(frontier.At(5))
	r := pt.ReaderAtLeast(frontier.At(2))
	if r.LogicalCompaction() != frontier.At(5) || !r.PhysicalCompaction().IsEmpty() {
		t.Fatalf("peer hold %v/%v, want {5}/{}", r.LogicalCompaction(), r.PhysicalCompaction())
	}
	if _, err := pt.ReaderAt(frontier.At(2)); !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("ReaderAt below the since: %v", err)
	}
	r.Release()
}

func TestAPublicationHoldsItsAsOfUntilThePeerTakesItOver(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	// §9.E(i): the controller compacts the publisher to 10 before the reader
	// has rendered anything.
	oks.compact(frontier.At(10))
	if got := tok.Slot().Oks().Stats().Since; got != frontier.At(0) {
		t.Fatalf("since %v: the reserved peer hold did not hold as_of {0}", got)
	}
	b := g.PeerBundle("idx", frontier.At(0))
	if b.CompactionFrontier() != frontier.At(0) {
		t.Fatalf("peer bundle reports %v, want {0}", b.CompactionFrontier())
	}
	if st := g.Stats(); st.Reserved != 0 {
		t.Fatalf("reserved holds left: %d", st.Reserved)
	}
	im, err := b.Oks.(*Reader).Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	bs := drained(im)
	for tm := uint64(0); tm < 10; tm++ {
		eq(t, fmt.Sprintf("rows at %d", tm), accumulate(bs, im.Presentation(), tm), oks.want(tm))
	}
	im.Close()
	im.Reader().Release()
	b.AllowCompaction(frontier.At(10))
	oks.compact(frontier.At(10))
	if got := tok.Slot().Oks().Stats().Since; got != frontier.At(10) {
		t.Fatalf("since %v after the peer advanced, want {10}", got)
	}
	b.Release()
	tok.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry not empty: %+v", st)
	}
}

func TestAPeerRecordedFirstLeavesNoReservedHold(t *testing.T) {
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(0)) // §9.E(ii): the peer comes first
	oks, errs := newPub(t), newPub(t)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	if st := g.Stats(); st.Reserved != 0 {
		t.Fatalf("publish reserved %d holds after the peer recorded itself", st.Reserved)
	}
	for _, pt := range []*Point{tok.Slot().Oks(), tok.Slot().Errs()} {
		if l, _ := pt.RemoteHolds(); l.Len() != 1 {
			t.Fatalf("remote holds %s, want exactly one peer hold", l.String())
		}
	}
	b.Release()
	tok.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry not empty: %+v", st)
	}
}

func TestAPaddedPeerBundleReportsTheMinimumTime(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(10)
	oks.compact(frontier.At(5))
	errs.compact(frontier.At(5))
	tok, err := g.Publish("idx", frontier.At(5), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.At(5))
	b := peer.IntoPadded() // a padded clone: the peer bundle goes
	peer.Release()
	if b.CompactionFrontier() != frontier.Min() {
		t.Fatalf("padded bundle reports %v, want {0}", b.CompactionFrontier())
	}
	if !b.IsPeer() {
		t.Fatal("a padded peer bundle is still a peer bundle")
	}
	b.AllowCompaction(frontier.At(3)) // below the inner since: padding moves
	oks.compact(frontier.At(9))
	if b.CompactionFrontier() != frontier.At(3) || tok.Slot().Oks().Stats().Since != frontier.At(5) {
		t.Fatalf("after {3}: bundle %v, since %v", b.CompactionFrontier(), tok.Slot().Oks().Stats().Since)
	}
	b.AllowCompaction(frontier.At(7)) // at/after it: padding goes, {7} forwarded
	oks.compact(frontier.At(9))
	if b.CompactionFrontier() != frontier.At(7) || tok.Slot().Oks().Stats().Since != frontier.At(7) {
		t.Fatalf("after {7}: bundle %v, since %v", b.CompactionFrontier(), tok.Slot().Oks().Stats().Since)
	}
	b.Release()
	tok.Release()
}

func TestAPeerBundleHoldsLogicallyOnlyAndItsImportReadsTheRows(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	b := g.PeerBundle("idx", frontier.At(0))
	if !b.Oks.PhysicalCompaction().IsEmpty() || !b.Errs.PhysicalCompaction().IsEmpty() {
		t.Fatal("a peer bundle holds physically")
	}
	oks.rounds(16)
	oks.compact(frontier.At(0))
	// Nothing physical pins the publisher: everything sealed merged.
	if st := tok.Slot().Oks().Stats(); st.Batches != 1 {
		t.Fatalf("chain of %d batches: the peer bundle pinned merging", st.Batches)
	}
	im, err := b.Oks.(*Reader).Import(frontier.At(4), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	bs := drained(im)
	for tm := uint64(4); tm < 16; tm++ {
		eq(t, fmt.Sprintf("rows at %d", tm), accumulate(bs, im.Presentation(), tm), oks.want(tm))
	}
	im.Close()
	im.Reader().Release()
	b.Release()
	tok.Release()
}

func TestIncarnationsNeverMix(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(5)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	b := g.PeerBundle("idx", frontier.At(3)) // a new incarnation's as_of
	r := b.Oks.(*Reader)
	if r.Point() == tok.Slot().Oks() {
		t.Fatal("the slot for (idx, {0}) was returned for (idx, {3})")
	}
	if got := r.Point().Stats(); got.Bound || got.Batches != 0 {
		t.Fatalf("the new incarnation sees the old chain: %+v", got)
	}
	if g.Lookup("idx", frontier.At(0)) != tok.Slot() {
		t.Fatal("a new incarnation evicted the live one from the registry")
	}
	if st := g.Stats(); st.Slots != 2 {
		t.Fatalf("slots %d, want both incarnations alive", st.Slots)
	}
	b.Release()
	tok.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry not empty: %+v", st)
	}
}

func TestLateBindingDeliversTheFullContentsOnce(t *testing.T) {
	g := NewRegistry()
	b := g.PeerBundle("idx", frontier.At(0))
	im, err := b.Oks.(*Reader).Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if evs := im.Drain(nil); len(evs) != 0 {
		t.Fatalf("a placeholder produced %v", evs)
	}
	oks, errs := newPub(t), newPub(t)
	oks.rounds(6) // the index has contents before it is published
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	bs := drained(im)
	oks.rounds(4)
	bs = append(bs, drained(im)...)
	if im.Frontier() != frontier.At(10) {
		t.Fatalf("import frontier %v, want {10}", im.Frontier())
	}
	// Exactly once: total counts per (key, val, time) equal the model's.
	got := map[[3]int64]int64{}
	for _, bt := range bs {
		for _, u := range bt.Updates() {
			got[[3]int64{u.Key[0], u.Val[0], int64(u.Time)}] += u.Diff
		}
	}
	maps.DeleteFunc(oks.model, func(_ [3]int64, d int64) bool { return d == 0 })
	if !maps.Equal(got, oks.model) {
		t.Fatalf("late-bound import delivered %v, want %v", got, oks.model)
	}
	im.Close()
	im.Reader().Release()
	b.Release()
	tok.Release()
}

// TestImportUntil is §9.B: as_of 4, until 6 over (+1 @1), (+1 @4), (-1 @5),
// (+1 @7): presented (+1 @4), (+1 @4), (-1 @5); the update at 7 is not; the
// import completes once the source passes 6.
func TestImportUntil(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	for tm := range uint64(8) {
		switch tm {
		case 1, 4, 7:
			p.round([3]int64{1, 1, 1})
		case 5:
			p.round([3]int64{1, 1, -1})
		default:
			p.round()
		}
	}
	im, err := pt.Import(frontier.At(4), frontier.At(6))
	if err != nil {
		t.Fatal(err)
	}
	evs := im.Drain(nil)
	if !im.Done() || !evs[len(evs)-1].Frontier.IsEmpty() {
		t.Fatalf("import with until {6} not done at upper {8}: %v", evs)
	}
	var presented []string
	for _, e := range evs {
		if e.Batch == nil {
			continue
		}
		for _, u := range e.Batch.Updates() {
			if pt, ok := im.Presentation().Present(u.Time); ok {
				presented = append(presented, fmt.Sprintf("%+d@%d", u.Diff, pt))
			}
		}
	}
	if got := fmt.Sprint(presented); got != "[+1@4 +1@4 -1@5]" {
		t.Fatalf("presented %s", got)
	}
	if n := pt.Stats().Readers; n != 1 {
		t.Fatalf("readers %d after completion, want only the consumer's", n)
	}
	im.Reader().Release()
}

// TestReaderCutReportsAStraddle: a reader's cut inside a non-empty batch is
// an error, never a partial answer; a cut inside an empty batch is not.
func TestReaderCutReportsAStraddle(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	bld := batch.NewBuilder(kv, 2)
	bld.Push1(1, 1, 0, 1)
	bld.Push1(1, 1, 3, 1)
	b, err := bld.Build(frontier.At(0), frontier.At(5))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.w.Insert(b); err != nil {
		t.Fatal(err)
	}
	if err := p.w.Seal(frontier.At(9)); err != nil {
		t.Fatal(err)
	}
	r := pt.Reader()
	defer r.Release()
	if _, err := r.BatchesThrough(frontier.At(2)); !errors.Is(err, spine.ErrStraddle) {
		t.Fatalf("cut inside [0, 5): err = %v, want ErrStraddle", err)
	}
	if bs, err := r.BatchesThrough(frontier.At(7)); err != nil || len(bs) != 1 {
		t.Fatalf("cut inside the empty [5, 9): %v, %v", bs, err)
	}
	if _, err := r.BatchesThrough(frontier.At(10)); !errors.Is(err, spine.ErrBeyondUpper) {
		t.Fatalf("cut beyond the upper: err = %v", err)
	}
}

// TestRemoteHoldsIsASnapshot: what RemoteHolds returns does not change when
// holds move afterwards.
func TestRemoteHoldsIsASnapshot(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(4)
	a, _ := pt.ReaderAt(frontier.At(1))
	b, _ := pt.ReaderAt(frontier.At(3))
	l, _ := pt.RemoteHolds()
	before := l.String()
	a.Release()
	b.SetLogicalCompaction(frontier.At(4))
	if after := l.String(); after != before {
		t.Fatalf("snapshot changed from %s to %s", before, after)
	}
	b.Release()
}

// TestPublishedChainIsTheSpinesAfterEveryInsert checks the point's chain
// against the spine's own listing after every insert, with batch sizes
// that make merges start and finish during inserts and holds that let the
// spine compact: the publisher appends an inserted batch to the chain it
// mirrored only when nothing else changed (P3, P4). Every chain published on
// the way must stay as it was when published: appending shares the array.
func TestPublishedChainIsTheSpinesAfterEveryInsert(t *testing.T) {
	for _, size := range []int{1, 3, 17} {
		t.Run(fmt.Sprint("size=", size), func(t *testing.T) {
			p := newPub(t)
			pt := attached(t, p)
			finished, appended := 0, 0
			var seen, copies [][]*batch.Batch
			for r := range 200 {
				ups := make([][3]int64, 0, size*(r%4+1))
				for i := range cap(ups) {
					ups = append(ups, [3]int64{int64(i), int64(r), 1})
				}
				before := p.s.Inner().Version()
				prev := pt.Chain()
				p.round(ups...)
				if p.s.Inner().Version() > before+1 {
					finished++
				}
				got := pt.Chain()
				if want := p.s.Inner().Batches(); !slices.Equal(got, want) {
					t.Fatalf("round %d: published chain has %d batches, the spine %d", r, len(got), len(want))
				}
				if len(prev) > 0 && len(got) == len(prev)+1 && &got[0] == &prev[0] {
					appended++ // the new chain extends the old one's array
				}
				seen, copies = append(seen, got), append(copies, slices.Clone(got))
				if r%7 == 0 {
					p.h.SetLogicalCompaction(frontier.At(uint64(r / 2)))
					p.h.SetPhysicalCompaction(frontier.At(uint64(r + 10))) // ahead: inserts merge at once
				}
			}
			for i := range seen {
				if !slices.Equal(seen[i], copies[i]) {
					t.Fatalf("the chain published at round %d changed after it was published", i)
				}
			}
			if finished == 0 || appended == 0 {
				t.Fatalf("%d inserts finished a merge, %d appended: the test does not reach both paths", finished, appended)
			}
		})
	}
}

// TestReaderAtAdmissionIsAtomic is §8 invariant 14: while a publisher
// goroutine inserts and compacts as far as its holds allow, reader_at at
// times around the owner's request either refuses (since beyond as_of) or
// returns a reader whose hold the trace honours: each admitted reader, read
// while the publisher goes on compacting, still shows the rows at its as_of.
func TestReaderAtAdmissionIsAtomic(t *testing.T) {
	const nRounds = 400
	gt := &goTB{TB: t}
	p := newPub(gt) // driven by the publisher goroutine only
	pt := attached(t, p)
	// pub.rounds adds (r%3, r) at r and retracts it at r+2: at t the rows
	// of t-1 and t remain. The closed form keeps the publisher's model map
	// to the publisher's goroutine.
	want := func(t uint64) map[[2]int64]int64 {
		out := map[[2]int64]int64{}
		for r := max(int64(t)-1, 0); r <= int64(t); r++ {
			out[[2]int64{r % 3, r}] = 1
		}
		return out
	}
	done, start := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-start
		for r := range uint64(nRounds) {
			p.rounds(1)
			if r >= 2 {
				p.compact(frontier.At(r - 2))
			}
		}
	}()
	type admitted struct {
		r    *Reader
		asOf uint64
	}
	check := func(a admitted) error {
		defer a.r.Release()
		upper := a.r.ReadUpper()
		if u, _ := upper.Time(); u <= a.asOf {
			return nil // nothing at as_of sealed yet
		}
		bs, err := a.r.BatchesThrough(upper)
		if err != nil {
			return fmt.Errorf("reader at %d: cut at %v: %w", a.asOf, upper, err)
		}
		if got, w := accumulate(bs, batch.Identity(), a.asOf), want(a.asOf); !maps.Equal(got, w) {
			return fmt.Errorf("reader admitted at %d reads %v, want %v", a.asOf, got, w)
		}
		return nil
	}
	var held []admitted
	var failure error
	admittedN, refused := 0, 0
	close(start)
loop:
	for i := 0; ; i++ {
		select {
		case <-done:
			break loop
		default:
		}
		// Ask around the owner's request: below it the applied since may
		// already have passed, at it the compaction is underway.
		req, _ := pt.Stats().Requested.Time()
		asOf := req + uint64(i%4)
		if asOf >= 2 {
			asOf -= 2
		}
		r, err := pt.ReaderAt(frontier.At(asOf))
		if err != nil {
			if se := (*SinceError)(nil); !errors.As(err, &se) {
				failure = err
				break loop
			}
			refused++
			continue
		}
		admittedN++
		held = append(held, admitted{r, asOf})
		if len(held) > 2 { // check and release the oldest: compaction moves on
			if failure = check(held[0]); failure != nil {
				break loop
			}
			held = held[1:]
		}
	}
	<-done
	if gt.failed() != nil {
		t.Fatalf("publisher: %v", gt.failed())
	}
	for _, a := range held {
		if err := check(a); err != nil && failure == nil {
			failure = err
		}
	}
	if failure != nil {
		t.Fatal(failure)
	}
	if admittedN == 0 {
		t.Fatal("no reader admitted")
	}
	t.Logf("%d readers admitted and checked, %d refused", admittedN, refused)
	if st := pt.Stats(); st.Readers != 0 {
		t.Errorf("%d readers left", st.Readers)
	}
}

// goTB is the testing.TB of a helper goroutine: Fatal records the failure
// and ends that goroutine; the test goroutine reports it.
type goTB struct {
	testing.TB
	mu  sync.Mutex
	err error
}

func (g *goTB) Helper()                           {}
func (g *goTB) Fatal(args ...any)                 { g.fail(fmt.Sprint(args...)) }
func (g *goTB) Fatalf(format string, args ...any) { g.fail(fmt.Sprintf(format, args...)) }

func (g *goTB) fail(msg string) {
	g.mu.Lock()
	if g.err == nil {
		g.err = errors.New(msg)
	}
	g.mu.Unlock()
	runtime.Goexit()
}

func (g *goTB) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// TestAReleasedPublicationStopsFollowing: releasing the publication token
// ends the publication. Its points keep the last chain and upper, an import
// of it sees the end and receives nothing the publisher inserts afterwards,
// and the publisher detaches the points.
func TestAReleasedPublicationStopsFollowing(t *testing.T) {
	g := NewRegistry()
	oks, errs := newPub(t), newPub(t)
	oks.rounds(3)
	tok, err := g.Publish("idx", frontier.At(0), oks.s, errs.s)
	if err != nil {
		t.Fatal(err)
	}
	pt := tok.Slot().Oks()
	im, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	drained(im)
	chain, upper := pt.Chain(), pt.Stats().Upper
	tok.Release()
	oks.rounds(3) // after the end: nobody may see these
	oks.compact(frontier.At(4))
	if evs := im.Drain(nil); slices.ContainsFunc(evs, func(e Event) bool { return e.Batch != nil }) {
		t.Fatalf("an ended publication delivered %v", evs)
	}
	if !im.Closed() {
		t.Fatal("the import did not see the publication end")
	}
	if got := pt.Chain(); !slices.Equal(got, chain) || pt.Stats().Upper != upper {
		t.Fatalf("an ended publication moved: %d batches up to %v, was %d up to %v", len(got), pt.Stats().Upper, len(chain), upper)
	}
	if n := oks.s.Points(); n != 0 {
		t.Fatalf("the publisher still has %d points attached", n)
	}
	im.Close()
	im.Reader().Release()
}

// TestDeferredHoldsApplyAtFlush: between Defer and Flush the calls that move
// a publishing trace's holds (the owner's logical and physical compaction, a
// reader's hold through Refresh) only record the move: the trace keeps its
// applied compaction, the points their published since and the pending
// batches stay pending, so a reader may still register at the old since.
// Flush applies all of it at once, as the calls would have one by one, and
// a Flush with nothing recorded changes nothing; Exert ends a deferral.
func TestDeferredHoldsApplyAtFlush(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(10)
	p.compact(frontier.At(2))
	r := pt.Reader() // holds at the since, 2
	v := p.s.Inner().Version()

	p.s.Defer()
	p.h.SetLogicalCompaction(frontier.At(6))
	r.SetCompaction(frontier.At(5))
	p.s.Refresh()
	if got := p.s.LogicalCompaction(); got != frontier.At(2) {
		t.Fatalf("deferred: applied logical compaction %v, want {2}", got)
	}
	if got := pt.Stats().Since; got != frontier.At(2) {
		t.Fatalf("deferred: published since %v, want {2}", got)
	}
	if p.s.Inner().Version() != v {
		t.Fatal("deferred: the chain changed before Flush")
	}
	late, err := pt.ReaderAt(frontier.At(3))
	if err != nil {
		t.Fatalf("deferred: a reader at 3 was refused: %v", err)
	}

	p.s.Flush()
	// The late reader holds at 3, the other at 5: the since is their meet.
	if got := pt.Stats().Since; got != frontier.At(3) {
		t.Fatalf("flushed: published since %v, want {3}", got)
	}
	if got := p.s.LogicalCompaction(); got != frontier.At(3) {
		t.Fatalf("flushed: applied logical compaction %v, want {3}", got)
	}
	v = p.s.Inner().Version()
	p.s.Flush()
	if p.s.Inner().Version() != v || pt.Stats().Since != frontier.At(3) {
		t.Fatal("a Flush with nothing recorded changed the trace")
	}

	late.Release()
	p.s.Defer()
	p.s.Refresh()
	for p.w.Exert(1 << 20) {
	}
	if got := pt.Stats().Since; got != frontier.At(5) {
		t.Fatalf("after Exert: published since %v, want {5}", got)
	}
	r.Release()
}

// TestExertAppliesDeferredHolds: Exert ends a deferral and applies what it
// recorded, on a trace with no publication point as on one with points.
func TestExertAppliesDeferredHolds(t *testing.T) {
	h, w, s := NewTrace(kv, spine.Options{})
	s.Defer()
	h.SetLogicalCompaction(frontier.At(5))
	for w.Exert(1 << 20) {
	}
	s.Flush()
	if got := s.LogicalCompaction(); got != frontier.At(5) {
		t.Fatalf("applied %v after Exert, want {5}", got)
	}
	h.Release()
}

// liveImport imports pt at asOf, unbounded, and closes the import and
// releases its consumer reader at cleanup.
func liveImport(t *testing.T, pt *Point, asOf uint64) *Import {
	t.Helper()
	im, err := pt.Import(frontier.At(asOf), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		im.Close()
		im.Reader().Release()
	})
	return im
}

// TestDrainKeepsNothingReachable: the events a drain took are cleared in
// the array the queue reuses, so a batch the consumer has dropped is not
// kept alive by the importer's replay buffer until it fills again.
func TestDrainKeepsNothingReachable(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(4)
	im := liveImport(t, pt, 1)
	for range 3 {
		drained(im)
		p.rounds(2)
	}
	drained(im)
	pt.mu.Lock()
	buf := im.q.events[:cap(im.q.events)]
	pt.mu.Unlock()
	for _, b := range [][]event{im.buf[:cap(im.buf)], buf} {
		for i, e := range b {
			if e != (event{}) {
				t.Fatalf("replay buffer slot %d holds %+v after the drain", i, e)
			}
		}
	}
}

// TestImportReadySignalsArrivals: an import's Ready channel holds a token
// once events arrive (seeded or published), one however many arrive before
// it is taken, and a new one for arrivals after it is taken.
func TestImportReadySignalsArrivals(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(2)
	im := liveImport(t, pt, 0)
	ready := func() bool {
		select {
		case <-im.Ready():
			return true
		default:
			return false
		}
	}
	if !ready() {
		t.Fatal("no token after the seed")
	}
	drained(im)
	if ready() {
		t.Fatal("a token with nothing new")
	}
	p.rounds(3)
	if !ready() || ready() {
		t.Fatal("three rounds before the take: want exactly one token")
	}
	drained(im)
	p.rounds(1)
	if !ready() {
		t.Fatal("no token for a round after the take")
	}
}

// TestImportEndKeepsWhatArrived: an ended import drains what arrived
// before End — its frontier moves to that upper — takes nothing inserted
// after, and holds the trace no more (its own hold gone), while another
// import of the point goes on.
func TestImportEndKeepsWhatArrived(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(4)
	ended, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	other, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	drained(ended) // the seed, up to {4}: its own hold moves to {4}
	p.rounds(2)    // to {6}: queued, not drained
	ended.End()
	ended.End() // a second End is a no-op
	p.rounds(3) // to {9}: after End
	var last frontier.Frontier
	for _, e := range ended.Drain(nil) {
		if e.Batch == nil {
			last = e.Frontier
		}
	}
	if last != frontier.At(6) {
		t.Fatalf("ended import drained to %v, want {6}: what arrived before End", last)
	}
	if evs := ended.Drain(nil); len(evs) != 0 {
		t.Fatalf("ended import took %d events after End", len(evs))
	}
	bs := drained(other)
	eq(t, "the other import at t=8", accumulate(bs, other.Presentation(), 8), p.want(8))
	// Once the consumer-facing readers are released, only the other
	// import's own hold (drained to {9}) holds the point: the ended one's,
	// at {6}, is gone.
	ended.Reader().Release()
	other.Reader().Release()
	logical, _ := pt.RemoteHolds()
	if f := logical.Frontier(); f != frontier.At(9) {
		t.Fatalf("holds at %v after the readers' release, want {9}: only the other import's own hold", f)
	}
	ended.Close()
	other.Close()
}

// End and finish on the goroutines that call them: the importer's (a
// worker drains its imports, and its IndexManager.Drop ends them), while
// the publisher inserts on its own. One import finishes (its until
// reached) and is ended after; the other is ended while the publisher goes
// on, then drained of what arrived and closed. Under -race nothing is
// reported: finish sets done and End reads it on the importer's goroutine
// alone, both under the point's lock, which the publisher takes
// too. Each own hold goes once, by whichever came first.
func TestImportEndAndFinishOnTheImportersGoroutine(t *testing.T) {
	p := newPub(t)
	pt := attached(t, p)
	p.rounds(2)
	peek, err := pt.Import(frontier.At(0), frontier.At(4))
	if err != nil {
		t.Fatal(err)
	}
	follow, err := pt.Import(frontier.At(0), frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	published := make(chan struct{})
	go func() { // the publisher
		defer close(published)
		p.rounds(6) // to {8}
	}()
	for !peek.Done() { // finished by a Drain once {4} is published
		<-peek.Ready()
		peek.Drain(nil)
	}
	peek.End() // a no-op: done
	for !frontier.At(4).LessEqual(follow.Frontier()) {
		<-follow.Ready()
		follow.Drain(nil)
	}
	follow.End()
	if n := pt.Stats().Readers; n != 2 {
		t.Fatalf("one import finished, the other ended: %d readers, want 2 (the consumers')", n)
	}
	<-published
	follow.Drain(nil) // what arrived before End
	if follow.Done() || !peek.Done() {
		t.Fatalf("done: ended import %v, finished one %v; want false (its until not reached), true", follow.Done(), peek.Done())
	}
	follow.Close()
	peek.Close()
	if n := pt.Stats().Readers; n != 2 {
		t.Fatalf("both closed: %d readers, want 2 (the consumers'): no own hold goes twice", n)
	}
	peek.Reader().Release()
	follow.Reader().Release()
	if st := pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		t.Fatalf("everything released: %d readers, %d importers, want none", st.Readers, st.Importers)
	}
	p.h.Release()
}

// A bundle's writer (the dataflow whose arrangement writes its traces)
// travels with its clones, its padding and its publication to the peer
// bundles: a re-export, in either runtime, knows whose drop stops it.
func TestBundleWriterTravels(t *testing.T) {
	oh, _, _ := NewTrace(kv, spine.Options{})
	eh, _, _ := NewTrace(batch.Arity{Key: 1}, spine.Options{})
	b := NewBundle(oh, eh, nil)
	b.Key, b.Columns, b.Writer = []int{0}, 2, "maintain idx"
	g := NewRegistry()
	inc := Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 3}
	tok, err := g.PublishBundle(inc, b)
	if err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundleOf(inc)
	bundles := map[string]*Bundle{"clone": b.Clone(), "padded": b.IntoPadded(), "peer": peer, "peer's clone": peer.Clone(), "peer padded": peer.IntoPadded()}
	for name, x := range bundles {
		if x.Writer != "maintain idx" {
			t.Errorf("%s: writer %q, want %q", name, x.Writer, "maintain idx")
		}
	}
	for _, x := range bundles {
		x.Release()
	}
	b.Release()
	tok.Release()
}
