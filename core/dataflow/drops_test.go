package dataflow

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// scaleIndex is an index set as Context.Export sets one: its dataflow
// (owner and writer "df<i>") arranges both traces and exports "x<i>",
// and a query ("q<i>") re-exports it as "r<i>", rooted at it.
type scaleIndex struct {
	oks, errs   *share.Spine
	oh, eh      *trace.Handle
	ow          *trace.Writer
	src, reexp  string
	writer, qry string
}

func newScaleIndex(t *testing.T, m *IndexManager, i int) *scaleIndex {
	t.Helper()
	x := &scaleIndex{src: fmt.Sprintf("x%d", i), reexp: fmt.Sprintf("r%d", i), writer: fmt.Sprintf("df%d", i), qry: fmt.Sprintf("q%d", i)}
	x.oh, x.ow, x.oks = share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	var ew *trace.Writer
	x.eh, ew, x.errs = share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
	for _, w := range []*trace.Writer{x.ow, ew} {
		if err := w.Seal(frontier.At(3)); err != nil {
			t.Fatal(err)
		}
	}
	m.track(x.oks, x.writer+": arrange oks", func() {}, nil)
	m.track(x.errs, x.writer+": arrange errs", func() {}, nil)
	b := share.NewBundle(x.oh.Clone(), x.eh.Clone(), nil)
	b.Writer = x.writer
	if err := m.set(x.src, &entry{bundle: b, owner: x.writer, maintained: true}); err != nil {
		t.Fatal(err)
	}
	src, _ := m.Get(x.src)
	if err := m.set(x.reexp, &entry{bundle: src.Clone(), owner: x.qry, reexport: true, root: m.RootOf(x.src)}); err != nil {
		t.Fatal(err)
	}
	return x
}

// dropWriter drops x's dataflow as a worker does (DropDataflow): the
// writer's end, its indexes, its handles, then its traces (Dataflow.drop's
// hooks).
func (x *scaleIndex) dropWriter(m *IndexManager) {
	m.WriterDropped(x.writer)
	m.DropOwned(x.writer)
	x.oh.Release()
	x.eh.Release()
	m.untrack(x.errs)
	m.untrack(x.oks)
}

// TestDroppingIndexesCostsWhatIsDropped: dropping N dataflows that each
// own an index (and the queries re-exporting them), as a runtime's
// Shutdown or a burst of DropDataflow does, looks at O(N) traces and
// entries (IndexManager.examined), whether the traces are hot (created in
// the same wake) or idle: not at every trace and entry per drop, which
// was O(N²) — 8,007,000 looked at for 1,000 idle indexes, 10,005,000 for 1,000 made in the same wake. The re-exports
// learn that their root and their writer ended.
func TestDroppingIndexesCostsWhatIsDropped(t *testing.T) {
	const n = 1000
	for _, wake := range []bool{false, true} {
		t.Run(fmt.Sprintf("same wake=%v", wake), func(t *testing.T) {
			m := NewIndexManager()
			m.Defer()
			xs := make([]*scaleIndex, n)
			for i := range xs {
				xs[i] = newScaleIndex(t, m, i)
			}
			if !wake {
				m.Maintain(1 << 14)
			}
			if got := len(m.hot); wake && got != 2*n || !wake && got != 0 {
				t.Fatalf("setup: %d hot traces", got)
			}
			before := m.examined
			for i := n - 1; i >= 0; i-- { // as Shutdown: the last made first
				x := xs[i]
				x.dropWriter(m)
				if _, ok := m.Get(x.src); ok {
					t.Fatalf("%s kept after its dataflow's drop", x.src)
				}
				if root, ended := m.rootEnded(x.reexp); root != x.src || !ended {
					t.Fatalf("%s: root %q ended %v, want %q ended", x.reexp, root, ended, x.src)
				}
				if !m.writerEnded(x.reexp) {
					t.Fatalf("%s: its writer's drop not recorded", x.reexp)
				}
				m.WriterDropped(x.qry)
				m.DropOwned(x.qry)
			}
			n2 := m.examined - before
			t.Logf("%d indexes dropped: %d traces and entries looked at", n, n2)
			if n2 > 16*n {
				t.Fatalf("dropping %d indexes looked at %d traces and entries, want O(%d)", n, n2, n)
			}
			if m.Len() != 0 || m.Tracked() != 0 || len(m.hot) != 0 || len(m.byWriter) != 0 || len(m.byRoot) != 0 || len(m.owned) != 0 {
				t.Fatalf("left: %d indexes, %d traces, %d hot, %d writers, %d roots, %d owners", m.Len(), m.Tracked(), len(m.hot), len(m.byWriter), len(m.byRoot), len(m.owned))
			}
		})
	}
}

// TestAReexportOfADroppedIndexIsNotVisitedEveryWake: when the dataflow
// arranging an index is dropped while a re-export of it goes on, the
// re-export's holds move to its traces' upper as they are untracked,
// once: their upper moves no more (their writer is gone), so no wake
// visits it again. They were loose before, visited by every Maintain: 500
// such re-exports made every wake move 500 entries' holds.
func TestAReexportOfADroppedIndexIsNotVisitedEveryWake(t *testing.T) {
	const n = 500
	m := NewIndexManager()
	xs := make([]*scaleIndex, n)
	for i := range xs {
		xs[i] = newScaleIndex(t, m, i)
	}
	m.Maintain(1 << 14)
	m.Defer()
	for _, x := range xs {
		x.dropWriter(m)
	}
	m.Maintain(1 << 14)
	for r := range 3 {
		m.Defer()
		m.Maintain(1 << 14)
		if len(m.loose) != 0 || len(m.hot) != 0 {
			t.Fatalf("wake %d: %d loose entries and %d hot traces visited, want none", r, len(m.loose), len(m.hot))
		}
	}
	for _, x := range xs {
		for _, s := range []*share.Spine{x.oks, x.errs} {
			if got := s.PhysicalCompaction(); got != frontier.At(3) {
				t.Fatalf("%s: physical compaction %v, want the upper {3}", x.reexp, got)
			}
		}
	}
	for _, x := range xs {
		m.Drop(x.reexp)
	}
}

// TestDroppingReexportsOfOneIndexCostsWhatIsDropped: N queries' re-exports
// of one index (each an entry in the lists of the index's two traces)
// dropped one by one look at O(N) entries: each leaves its traces' lists
// by its place there, where a pass over the list for each drop was O(N²)
// (4,008,000 entries looked at for 2,000 re-exports). The index's own
// entry stays listed, and moves its holds when its traces are hot.
func TestDroppingReexportsOfOneIndexCostsWhatIsDropped(t *testing.T) {
	const n = 2000
	m := NewIndexManager()
	x := newScaleIndex(t, m, 0)
	src, _ := m.Get(x.src)
	ids := []string{x.reexp}
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("r0-%d", i)
		if err := m.set(id, &entry{bundle: src.Clone(), owner: fmt.Sprintf("q0-%d", i), reexport: true, root: m.RootOf(x.src)}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tr := m.bySpine[x.oks]
	if got := len(tr.entries); got != n+1 {
		t.Fatalf("setup: %d entries listed by the index's trace, want %d", got, n+1)
	}
	before := m.examined
	for i, id := range ids {
		if i%2 == 0 {
			m.Drop(id) // the first made first, then the last made first
		}
	}
	for i := len(ids) - 1; i >= 0; i-- {
		if i%2 == 1 {
			m.Drop(ids[i])
		}
	}
	looked := m.examined - before
	t.Logf("%d re-exports dropped: %d entries looked at", n, looked)
	if looked > 8*n {
		t.Fatalf("dropping %d re-exports of one index looked at %d entries, want O(%d)", n, looked, n)
	}
	for _, s := range []*share.Spine{x.oks, x.errs} {
		tr := m.bySpine[s]
		if len(tr.entries) != 1 || tr.entries[0].lists[0] != tr && tr.entries[0].lists[1] != tr {
			t.Fatalf("%d entries left listed by a trace of %s, want its own", len(tr.entries), x.src)
		}
		e := tr.entries[0]
		for k, l := range e.lists {
			if l == tr && e.at[k] != 0 {
				t.Fatalf("the entry left has place %d, want 0", e.at[k])
			}
		}
	}
	if e, _ := m.entries[x.src]; e == nil || m.bySpine[x.oks].entries[0] != e {
		t.Fatalf("the index's own entry is not the one listed")
	}
	x.dropWriter(m)
	if m.Len() != 0 || m.Tracked() != 0 {
		t.Fatalf("left: %d indexes, %d traces", m.Len(), m.Tracked())
	}
}

// TestDroppingLooseIndexesCostsWhatIsDropped: indexes reading traces this
// manager does not maintain (another runtime's) are loose, visited by every
// Maintain; N of them dropped in any order leave loose by their places
// (entry.looseAt), O(N) in all, and every one left keeps its place.
func TestDroppingLooseIndexesCostsWhatIsDropped(t *testing.T) {
	const n = 2000
	m := NewIndexManager()
	oh, _, _ := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	eh, _, _ := share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("l%d", i)
		b := share.NewBundle(oh.Clone(), eh.Clone(), nil)
		if err := m.set(ids[i], &entry{bundle: b, owner: "q" + ids[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.loose) != n {
		t.Fatalf("setup: %d loose entries, want %d", len(m.loose), n)
	}
	before := m.examined
	for i := 0; i < n; i += 3 { // a third from the front, then the rest from the back
		m.Drop(ids[i])
	}
	for i, e := range m.loose {
		if e.looseAt != i {
			t.Fatalf("a loose entry at %d says %d", i, e.looseAt)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i%3 != 0 {
			m.Drop(ids[i])
		}
	}
	if looked := m.examined - before; looked > 4*n {
		t.Fatalf("dropping %d loose indexes looked at %d entries, want O(%d)", n, looked, n)
	}
	if len(m.loose) != 0 || m.Len() != 0 {
		t.Fatalf("left: %d loose, %d indexes", len(m.loose), m.Len())
	}
	oh.Release()
	eh.Release()
}

// TestAllowCompactionFindsTheIndexAliveNow: AllowCompaction keeps the
// entry it found last (IndexManager.last), so that a driver's rounds,
// which name one index every time, skip the map. A drop of that index
// lets it go: the id is unknown until an index is set under it again,
// and then the new index moves, not the dropped one.
func TestAllowCompactionFindsTheIndexAliveNow(t *testing.T) {
	m := NewIndexManager()
	old := newScaleIndex(t, m, 0)
	if err := m.AllowCompaction(old.src, frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	first, _ := m.Get(old.src)
	old.dropWriter(m)
	m.DropOwned(old.qry)
	if err := m.AllowCompaction(old.src, frontier.At(2)); err == nil {
		t.Fatalf("AllowCompaction of %q after its drop: no error", old.src)
	}
	if got := first.CompactionFrontier(); got != frontier.At(1) {
		t.Fatalf("the dropped index's compaction moved to %v after its drop", got)
	}
	again := newScaleIndex(t, m, 0)
	// The same id spelt by another string: the comparison is by value.
	if err := m.AllowCompaction(fmt.Sprint("x", 0), frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	now, _ := m.Get(again.src)
	if now == first {
		t.Fatal("Get returned the dropped bundle")
	}
	if got := now.CompactionFrontier(); got != frontier.At(2) {
		t.Fatalf("the index set again compacts to %v, want {2}", got)
	}
	if got := first.CompactionFrontier(); got != frontier.At(1) {
		t.Fatalf("the dropped index's compaction moved to %v", got)
	}
	if err := m.AllowCompaction("x1", frontier.At(3)); err == nil {
		t.Fatal("AllowCompaction of an id never set: no error")
	}
	again.dropWriter(m)
	m.DropOwned(again.qry)
}
