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
