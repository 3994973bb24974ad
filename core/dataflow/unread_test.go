package dataflow

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// TestAnUnreadImportIsClosedAtBuild: an import half that nothing in the
// dataflow reads (no operator takes its stream or its frontier; the build
// released its reader) is closed when the build ends (closeUnreadImports):
// its point has no importer and no hold of it, so the publication compacts
// as far as its own holds allow, and its node is stepped no more (an
// invariants build asserts that no closed import is stepped). A half an
// operator reads, by its stream or by its frontier alone, stays imported,
// and the half that is read answers the same either way.
func TestAnUnreadImportIsClosedAtBuild(t *testing.T) {
	for _, tc := range []struct {
		name        string
		read        func(c *Context, a *Arrangement)
		errsOpen    bool
		errsReaders int
	}{
		{"oks only", func(c *Context, a *Arrangement) {}, false, 1},
		{"errs by stream", func(c *Context, a *Arrangement) { c.Capture(NewCapture(1), a.Errs) }, true, 2},
		{"errs by frontier", func(c *Context, a *Arrangement) { c.Hold(a.Errs) }, true, 3},
		{"errs reader kept", func(c *Context, a *Arrangement) { c.Keep(a.Errs.Reader) }, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := publishIndex(t, [][4]int64{{0, 0, 0, 1}, {1, 10, 1, 1}, {2, 20, 2, 1}, {3, 30, 3, 1}}, 4, 0)
			g := x.g
			env := testEnv(t, 0, 1, NewHub(1))
			peer := g.PeerBundle("idx", frontier.At(0))
			if err := env.Manager.SetPeer("idx", "maintain idx", peer); err != nil {
				t.Fatal(err)
			}
			pts := [2]*share.Point{peer.Oks.(*share.Reader).Point(), peer.Errs.(*share.Reader).Point()}
			cp := NewCapture(1)
			var errsStream *Stream[*batch.Batch]
			df, err := Build(env, Desc{
				ID: "q", AsOf: frontier.At(1), Until: frontier.Empty(),
				Build: func(c *Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Capture(cp, a.Oks)
					tc.read(c, a)
					errsStream = a.Errs.Stream
					return nil
				},
			}, 1)
			if err != nil {
				t.Fatal(err)
			}
			df.run(16)
			if !cp.Passed(3) {
				t.Fatalf("oks frontier %v, want beyond 3", cp.Frontier())
			}
			if n := len(cp.At(3)); n != 4 {
				t.Fatalf("oks at 3: %d rows, want 4", n)
			}
			if st := pts[0].Stats(); st.Importers != 1 {
				t.Fatalf("oks point: %d importers, want 1", st.Importers)
			}
			st := pts[1].Stats()
			if open := st.Importers == 1; open != tc.errsOpen {
				t.Fatalf("errs point: %d importers, want open=%v", st.Importers, tc.errsOpen)
			}
			// A closed import's frontier stays where it was ({0}: it was
			// closed before its first drain); it never says {}, complete.
			if got := errsStream.Frontier(); tc.errsOpen != (got == frontier.At(4)) || !tc.errsOpen && got != frontier.Min() {
				t.Fatalf("errs stream frontier %v with the import open=%v", got, tc.errsOpen)
			}
			// Its holds: the peer bundle's, the import's own while it is
			// open, and a clone an operator keeps.
			if st.Readers != tc.errsReaders {
				t.Fatalf("errs point: %d readers, want %d", st.Readers, tc.errsReaders)
			}
			x.drop(t, df, env)
		})
	}
}

// TestUntrackTakesAPendingWake: a reader's hold move whose wake the worker
// has not taken when the trace leaves maintenance (its dataflow dropped in
// the same wake, the trace still published) is applied as the trace goes,
// not left set where no Maintain will take it.
func TestUntrackTakesAPendingWake(t *testing.T) {
	h, w, s := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	if err := w.Seal(frontier.At(8)); err != nil {
		t.Fatal(err)
	}
	pt := share.NewPoint()
	if err := s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	r, err := pt.ReaderAt(frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	m := NewIndexManager()
	m.track(s, "t", func() {}, nil)
	h.SetLogicalCompaction(frontier.At(5))
	s.TakeWake()
	if got := s.LogicalCompaction(); got != frontier.At(1) {
		t.Fatalf("setup: since %v, want the reader's {1}", got)
	}
	r.SetLogicalCompaction(frontier.At(4)) // sets the wake; no Maintain takes it
	m.untrack(s)
	if got := s.LogicalCompaction(); got != frontier.At(4) {
		t.Fatalf("since %v after untrack, want {4}: the reader's move was left untaken", got)
	}
	h.Release()
}

// TestAMoveAfterUntrackIsApplied: a reader's hold move on the publication
// of a trace that has left maintenance (its dataflow dropped, the trace
// still published for a re-export's readers) sets the trace's wake and
// wakes the worker, whose next Maintain takes it and applies the move,
// once, without listing the trace as hot again. Before, Maintain skipped
// the untracked trace: the move waited for the next change to the trace's
// own holds, and the wake stayed set, so no later move woke anyone.
func TestAMoveAfterUntrackIsApplied(t *testing.T) {
	h, w, s := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	if err := w.Seal(frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	pt := share.NewPoint()
	if err := s.Attach(pt); err != nil {
		t.Fatal(err)
	}
	r, err := pt.ReaderAt(frontier.At(1)) // holding physically at the upper, {2}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if err := w.Seal(frontier.At(8)); err != nil {
		t.Fatal(err)
	}
	m := NewIndexManager()
	wakes := 0
	m.track(s, "t", func() {}, func() { wakes++ })
	h.SetLogicalCompaction(frontier.At(5))
	h.SetPhysicalCompaction(frontier.At(5))
	m.Maintain(0)
	m.untrack(s)
	if got := s.LogicalCompaction(); got != frontier.At(1) {
		t.Fatalf("setup: since %v, want the reader's {1}", got)
	}
	for i, to := range []uint64{4, 5} {
		r.SetLogicalCompaction(frontier.At(to)) // sets the wake, and wakes the worker
		if wakes != i+1 {
			t.Fatalf("move %d: %d wakes of the worker, want %d", i, wakes, i+1)
		}
		m.Maintain(0)
		if got := s.LogicalCompaction(); got != frontier.At(to) {
			t.Fatalf("move %d: since %v after Maintain, want the reader's {%d}: the move was not applied", i, got, to)
		}
		if s.TakeWake() {
			t.Fatalf("move %d: the wake is left set after Maintain", i)
		}
		if len(m.hot) != 0 {
			t.Fatalf("move %d: %d traces hot, want none (the trace is untracked)", i, len(m.hot))
		}
	}
	// The last handle's release ends the publication, which wakes the
	// worker: nothing is applied to the trace about to be freed (its
	// physical compaction, held by the reader at {2}, stays).
	if got := s.PhysicalCompaction(); got != frontier.At(2) {
		t.Fatalf("setup: physical compaction %v, want the reader's {2}", got)
	}
	h.Release()
	m.Maintain(0)
	if got := s.PhysicalCompaction(); got != frontier.At(2) {
		t.Fatalf("physical compaction %v after the release, want {2} kept", got)
	}
	if s.TakeWake() {
		t.Fatal("the wake of the release is left set")
	}
}

// TestClosingUnreadImportsCostsImportsPlusNodes: at build a dataflow finds
// the imports it reads and drops the others (closeUnreadImports); it
// looked, for every import, at every node, so a dataflow of many imports
// and as many nodes cost their product to build. It collects the read
// indexes in one pass over the nodes now: here 200 imports, each read by
// its oks half (its errs half unread, closed), with a capture of each:
// 600 nodes and 200 imports are looked at once each, and each import's
// index stays among the dataflow's imports.
func TestClosingUnreadImportsCostsImportsPlusNodes(t *testing.T) {
	const n = 200
	x := publishIndex(t, [][4]int64{{0, 0, 0, 1}}, 1, 0)
	env := testEnv(t, 0, 1, NewHub(1))
	for k := range n {
		if err := env.Manager.SetPeer(fmt.Sprintf("idx%d", k), "maintain idx", x.g.PeerBundle("idx", frontier.At(0))); err != nil {
			t.Fatal(err)
		}
	}
	df, err := Build(env, Desc{
		ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *Context) error {
			for k := range n {
				a, err := c.ImportIndex(fmt.Sprintf("idx%d", k))
				if err != nil {
					return err
				}
				c.Capture(NewCapture(1), a.Oks)
			}
			return nil
		},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	if got := len(df.Imports()); got != n {
		t.Fatalf("%d imports kept, want %d (each read by its oks)", got, n)
	}
	nodes := len(df.nodes)
	t.Logf("%d imports, %d nodes: %d looked at", n, nodes, df.unreadExamined)
	if want := 2 * (nodes + n); df.unreadExamined > want {
		t.Fatalf("closing the unread imports looked at %d nodes and imports, want at most %d (%d nodes, %d imports)", df.unreadExamined, want, nodes, n)
	}
}
