package dataflow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// checkPlaces requires what the IndexManager keeps of places and files to
// match what it holds: every trace of spines at its tracked.at, found by
// bySpine, not gone; every hot trace once in hot, at its tracked.hotAt;
// every entry filed once in byWriter, under its writer, and in byRoot
// under its root; nothing filed that is not an entry; every entry a trace
// or loose lists set, and at the place it keeps there.
func checkPlaces(t *testing.T, m *IndexManager, step int) {
	t.Helper()
	if len(m.bySpine) != len(m.spines) {
		t.Fatalf("step %d: %d traces found by spine, %d listed", step, len(m.bySpine), len(m.spines))
	}
	for i, tr := range m.spines {
		if tr.at != i || tr.gone || m.bySpine[tr.s] != tr {
			t.Fatalf("step %d: trace %s at %d says %d (gone %v, found %v)", step, tr.name, i, tr.at, tr.gone, m.bySpine[tr.s] == tr)
		}
	}
	seen := map[*tracked]bool{}
	for i, tr := range m.hot {
		if tr == nil || seen[tr] || tr.hotAt != i || tr.gone || m.bySpine[tr.s] != tr {
			t.Fatalf("step %d: hot place %d: %v (twice %v)", step, i, tr, tr != nil && seen[tr])
		}
		seen[tr] = true
	}
	filed := 0
	for w, es := range m.byWriter {
		for e := range es {
			filed++
			if e.writer != w || m.entries[keyOf(m, e)] != e {
				t.Fatalf("step %d: entry filed under writer %q, its writer %q, set %v", step, w, e.writer, m.entries[keyOf(m, e)] == e)
			}
		}
	}
	rooted := 0
	for r, es := range m.byRoot {
		for e := range es {
			rooted++
			if e.root != r || m.entries[keyOf(m, e)] != e {
				t.Fatalf("step %d: entry filed under root %q, its root %q", step, r, e.root)
			}
		}
	}
	roots := 0
	for _, e := range m.entries {
		if e.root != "" {
			roots++
		}
	}
	if filed != len(m.entries) || rooted != roots {
		t.Fatalf("step %d: %d entries, %d filed by writer; %d with a root, %d filed by root", step, len(m.entries), filed, roots, rooted)
	}
	// Every entry a trace lists is set, once, and knows its place there;
	// every loose one is set and at its looseAt.
	for _, tr := range m.spines {
		once := map[*entry]bool{}
		for i, e := range tr.entries {
			at := -1
			for k, l := range e.lists {
				if l == tr {
					at = e.at[k]
				}
			}
			if once[e] || at != i || m.entries[keyOf(m, e)] != e {
				t.Fatalf("step %d: trace %s lists an entry at %d that says %d (twice %v, set %v)", step, tr.name, i, at, once[e], m.entries[keyOf(m, e)] == e)
			}
			once[e] = true
		}
	}
	for i, e := range m.loose {
		if !e.loose || e.looseAt != i || m.entries[keyOf(m, e)] != e {
			t.Fatalf("step %d: loose entry at %d says %d (loose %v)", step, i, e.looseAt, e.loose)
		}
	}
}

// keyOf returns the id e is set under ("" if none).
func keyOf(m *IndexManager, e *entry) string {
	for id, x := range m.entries {
		if x == e {
			return id
		}
	}
	return ""
}

// TestManagerPlacesHoldAtRandom tracks, heats, maintains and untracks
// traces, and sets, drops and sets again indexes on them (with re-exports
// rooted at them and peer bundles described only later), at random with a
// fixed seed, checking after each step that every trace is at its place in
// spines and, while hot, in hot (untrack's swap-remove: the last trace,
// a place gone stale when a trace left the hot list, a trace made hot
// again), that byWriter and byRoot file exactly the entries set, and that
// a writer's drop reaches every index reading its traces, a peer's taken
// before its publication included, as a walk over every entry would.
func TestManagerPlacesHoldAtRandom(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			m := NewIndexManager()
			g := share.NewRegistry()
			type arr struct {
				writer   string
				oks, ers *share.Spine
				oh, eh   *trace.Handle
				ow       *trace.Writer
				next     uint64 // the time of its next batch
			}
			var arrs []*arr
			live := func() []*arr {
				var l []*arr
				for _, a := range arrs {
					if m.bySpine[a.oks] != nil {
						l = append(l, a)
					}
				}
				return l
			}
			// heated are the traces made hot since the last Maintain
			// (tracked, a batch, MarkHot, an index set on them), which
			// must be in the hot list until then.
			heated := map[*share.Spine]bool{}
			ended := map[string]bool{} // writers dropped
			var peers []*share.Bundle  // taken before their publication
			var pubs []share.Incarnation
			m.Defer()
			for step := range 400 {
				switch k := rng.IntN(13); {
				case k < 2: // an arrangement: two traces tracked
					a := &arr{writer: fmt.Sprintf("df%d", step)}
					a.oh, a.ow, a.oks = share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{Fanout: 2})
					a.eh, _, a.ers = share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
					m.track(a.oks, a.writer+": oks", func() {}, nil)
					m.track(a.ers, a.writer+": errs", func() {}, nil)
					arrs = append(arrs, a)
					heated[a.oks], heated[a.ers] = true, true
				case k < 4: // an index (or an index again under an id dropped) on an arrangement
					l := live()
					if len(l) == 0 {
						continue
					}
					a := l[rng.IntN(len(l))]
					id := fmt.Sprintf("x%d", rng.IntN(6))
					if _, ok := m.entries[id]; ok {
						continue
					}
					b := share.NewBundle(a.oh.Clone(), a.eh.Clone(), nil)
					b.Writer = a.writer
					if err := m.set(id, &entry{bundle: b, owner: a.writer, maintained: true}); err != nil {
						t.Fatal(err)
					}
					heated[a.oks], heated[a.ers] = true, true
				case k < 5: // a query's re-export of an index
					src := fmt.Sprintf("x%d", rng.IntN(6))
					id := fmt.Sprintf("r%d", rng.IntN(6))
					b, ok := m.Get(src)
					if _, taken := m.entries[id]; !ok || taken {
						continue
					}
					if err := m.set(id, &entry{bundle: b.Clone(), owner: "q" + id, reexport: true, root: m.RootOf(src)}); err != nil {
						t.Fatal(err)
					}
				case k < 6: // a peer bundle, taken before its publication
					id := fmt.Sprintf("p%d", rng.IntN(4))
					if _, ok := m.entries[id]; ok {
						continue
					}
					inc := share.Incarnation{ID: id, AsOf: frontier.At(0), Seq: uint64(step + 1)}
					b := g.PeerBundleOf(inc)
					if err := m.SetPeer(id, "peer "+id, b); err != nil {
						t.Fatal(err)
					}
					peers = append(peers, b)
					pubs = append(pubs, inc)
				case k < 7: // a peer's publication, written by an arrangement here
					l := live()
					if len(pubs) == 0 || len(l) == 0 {
						continue
					}
					i := rng.IntN(len(pubs))
					inc, a := pubs[i], l[rng.IntN(len(l))]
					pubs = append(pubs[:i], pubs[i+1:]...)
					b := share.NewBundle(a.oh.Clone(), a.eh.Clone(), nil)
					b.Writer = a.writer
					if _, err := g.PublishBundle(inc, b); err != nil {
						t.Fatal(err)
					}
					for _, p := range peers {
						p.Describe()
					}
				case k < 8: // a hot trace, or one that left the hot list
					l := live()
					if len(l) == 0 {
						continue
					}
					a := l[rng.IntN(len(l))]
					a.oks.MarkHot()
					heated[a.oks] = true
				case k < 9: // a wake: some merges left in progress, their traces hot
					m.Maintain([]int64{1, 4, 1 << 14}[rng.IntN(3)])
					m.Defer()
					clear(heated)
				case k < 10: // a batch: its trace hot, merges begun
					l := live()
					if len(l) == 0 {
						continue
					}
					a := l[rng.IntN(len(l))]
					bld := batch.NewBuilder(batch.Arity{Key: 1, Val: 1}, 64)
					for r := range int64(1 + rng.IntN(64)) {
						bld.Push1(r, int64(a.next), a.next, 1)
					}
					b, err := bld.Build(frontier.At(a.next), frontier.At(a.next+1))
					if err != nil {
						t.Fatal(err)
					}
					if err := a.ow.Insert(b); err != nil {
						t.Fatal(err)
					}
					a.next++
					heated[a.oks] = true
				case k < 11: // an index freed
					var ids []string
					for id := range m.entries {
						ids = append(ids, id)
					}
					if len(ids) == 0 {
						continue
					}
					slices.Sort(ids)
					if err := m.AllowCompaction(ids[rng.IntN(len(ids))], frontier.Empty()); err != nil {
						t.Fatal(err)
					}
				default: // an arrangement's dataflow dropped, as a worker drops it
					l := live()
					if len(l) == 0 {
						continue
					}
					a := l[rng.IntN(len(l))]
					m.WriterDropped(a.writer)
					ended[a.writer] = true
					m.DropOwned(a.writer)
					first, second := a.oks, a.ers
					if rng.IntN(2) == 0 {
						first, second = second, first
					}
					m.untrack(first)
					m.untrack(second)
					delete(heated, first)
					delete(heated, second)
				}
				checkPlaces(t, m, step)
				for sp := range heated {
					if tr := m.bySpine[sp]; tr == nil || !slices.Contains(m.hot, tr) {
						t.Fatalf("step %d: a trace made hot since the last Maintain is not in the hot list", step)
					}
				}
				// Every index reading a dropped writer's traces knows it
				// (a peer's is described as it is published, by a
				// writer then live).
				for id, e := range m.entries {
					if w := e.bundle.Writer; ended[w] && !e.writerEnded {
						t.Fatalf("step %d: %s reads the traces of %s, dropped, and does not know it", step, id, w)
					}
				}
			}
			for _, id := range m.IDs() {
				m.Drop(id)
			}
			for _, a := range live() {
				m.untrack(a.oks)
				m.untrack(a.ers)
			}
			checkPlaces(t, m, -1)
			if len(m.spines) != 0 || len(m.hot) != 0 || len(m.byWriter) != 0 || len(m.byRoot) != 0 || len(m.owned) != 0 || len(m.loose) != 0 {
				t.Fatalf("left: %d traces, %d hot, %d writers, %d roots, %d owners, %d loose", len(m.spines), len(m.hot), len(m.byWriter), len(m.byRoot), len(m.owned), len(m.loose))
			}
		})
	}
}
