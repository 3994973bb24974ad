package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// dropBurst creates n dataflows that each export an index, a query's
// re-export of every fourth and a query reading each re-export, then drops
// them all one command at a time, the indexes last first (as a runtime's
// Shutdown does): the readers and re-exports of every eighth index before
// it, the others' after every index (each then told once that the index
// it reads went, ErrIndexDropped). It returns what the drops
// looked at (worker.dropExamined, summed over every worker of every
// runtime) and the errors they reported.
func dropBurst(t testing.TB, s *setup, n int) (examined int, errs []*CommandError) {
	t.Helper()
	s.declare("in", 2)
	s.send("in", 2, []int64{0, 1, 1, 10})
	s.advance("in", 2, frontier.At(1))
	for k := range n {
		s.must(CreateDataflow{Desc: indexDesc(fmt.Sprintf("i%d", k), "in", 2, []int{0}, 0, nil)})
	}
	for k := 0; k < n; k += 4 {
		s.must(CreateDataflow{Desc: reexportDesc(fmt.Sprintf("q%d", k), fmt.Sprintf("i%d", k), fmt.Sprintf("q%d out", k), false)})
		s.must(CreateDataflow{Desc: readDesc(fmt.Sprintf("r%d", k), fmt.Sprintf("q%d out", k), 0, frontier.Empty(), dataflow.NewCapture(s.workers))})
	}
	counted := func() (n int) {
		for _, r := range s.rts {
			if err := r.barrier(testCtx(t), func(w *worker) { n += w.dropExamined }); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	before := counted()
	for k := n - 1; k >= 0; k-- {
		if k%8 == 4 {
			s.must(DropDataflow{ID: fmt.Sprintf("r%d", k)})
			s.must(DropDataflow{ID: fmt.Sprintf("q%d", k)})
		}
		s.must(DropDataflow{ID: fmt.Sprintf("maintain i%d", k)})
	}
	for k := 0; k < n; k += 8 {
		s.must(DropDataflow{ID: fmt.Sprintf("q%d", k)})
		s.must(DropDataflow{ID: fmt.Sprintf("r%d", k)})
	}
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return counted() - before, s.ctl.TakeErrors()
}

// TestABurstOfDropsCostsWhatIsDropped: dropping N dataflows one command at
// a time looked, on every worker, at every dataflow's exports and imports
// for each drop (the maps of ids by owner, every rendered dataflow's
// imports for the ended indexes and the dropped writer, the list of
// dataflows in creation order): O(N²) in all. Each drop now looks at what
// the dropped dataflow exports and at the imports of what it ends, and the
// errors are those of the commands, once each.
func TestABurstOfDropsCostsWhatIsDropped(t *testing.T) {
	const n = 1000
	for _, mode := range []string{"solo", "pair"} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, workers), func(t *testing.T) {
				s := newSetup(t, mode, workers)
				examined, errs := dropBurst(t, s, n)
				// Every dataflow dropped, on every worker of every
				// runtime (a pair's runtimes each keep every dataflow's
				// exports): 1,500 drops a worker.
				drops := (n + n/2) * workers * len(s.rts)
				t.Logf("%d dropped dataflows looked at %d entries", drops, examined)
				if examined > 16*drops {
					t.Fatalf("%d drops looked at %d entries; want at most %d", drops, examined, 16*drops)
				}
				// The re-export and reader of every eighth index are told
				// once each that it went.
				if want := 2 * n / 8; len(errs) != want {
					t.Fatalf("%d errors, want %d: %v", len(errs), want, errs)
				}
				for _, e := range errs {
					if !errors.Is(e, ErrIndexDropped) {
						t.Fatalf("error %v, want ErrIndexDropped", e)
					}
				}
			})
		}
	}
}

// TestDropsKeepTheCreationOrder: a drop leaves a nil in w.order, which is
// packed once half of it is nils. Through creates and drops at random (an
// index, a query's re-export of one, a reader of a re-export) every worker
// keeps its rendered dataflows in creation order, each at the place
// orderAt has, with the nils counted, and once all are dropped it keeps
// nothing of them: no place, no export, no import filed, nothing told.
func TestDropsKeepTheCreationOrder(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			s.declare("in", 2)
			s.send("in", 2, []int64{0, 1, 1, 10})
			s.advance("in", 2, frontier.At(1))
			check := func(step int) {
				t.Helper()
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				for _, r := range s.rts {
					if err := r.barrier(testCtx(t), func(w *worker) {
						nils, last := 0, uint64(0)
						for i, df := range w.order {
							if df == nil {
								nils++
								continue
							}
							if at, ok := w.orderAt[df]; !ok || at != i || df.Incarnation() <= last || w.dataflows[df.ID()] != df {
								t.Errorf("step %d: %v worker %d: dataflow %s at %d (orderAt %d, %v), after incarnation %d", step, r.Role(), w.index, df.ID(), i, at, ok, last)
							}
							last = df.Incarnation()
						}
						if nils != w.holes || len(w.orderAt) != w.rendered || nils > len(w.order)/2 {
							t.Errorf("step %d: %v worker %d: %d nils of %d, holes %d, %d placed, %d rendered", step, r.Role(), w.index, nils, len(w.order), w.holes, len(w.orderAt), w.rendered)
						}
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var live []string
			indexes, reexports := 0, 0
			for step := range 600 {
				switch k := rng.IntN(6); {
				case k < 3 || len(live) == 0:
					id := fmt.Sprintf("i%d", step)
					s.must(CreateDataflow{Desc: indexDesc(id, "in", 2, []int{0}, 0, nil)})
					live = append(live, "maintain "+id)
					indexes = step
				case k == 3:
					q := fmt.Sprintf("q%d", step)
					s.must(CreateDataflow{Desc: reexportDesc(q, fmt.Sprintf("i%d", indexes), q+" out", false)})
					live = append(live, q)
					reexports = step
				case k == 4 && reexports > 0:
					r := fmt.Sprintf("r%d", step)
					s.must(CreateDataflow{Desc: readDesc(r, fmt.Sprintf("q%d out", reexports), 0, frontier.Empty(), dataflow.NewCapture(s.workers))})
					live = append(live, r)
				default:
					i := rng.IntN(len(live))
					s.must(DropDataflow{ID: live[i]})
					live = slices.Delete(live, i, i+1)
				}
				if step%25 == 24 {
					check(step)
				}
			}
			for _, id := range live {
				s.must(DropDataflow{ID: id})
			}
			check(600)
			s.ctl.TakeErrors() // the creates of re-exports and readers of what went, the drops under readers
			for _, r := range s.rts {
				if err := r.barrier(testCtx(t), func(w *worker) {
					if len(w.order) != 0 || len(w.orderAt) != 0 || len(w.exportsOf) != 0 || len(w.endedImports) != 0 ||
						len(w.readers) != 0 || len(w.rootReaders) != 0 || len(w.writerReaders) != 0 {
						t.Errorf("%v worker %d keeps, with every dataflow dropped: order %d, orderAt %d, exportsOf %d, endedImports %d, imports filed %d/%d/%d",
							r.Role(), w.index, len(w.order), len(w.orderAt), len(w.exportsOf), len(w.endedImports), len(w.readers), len(w.rootReaders), len(w.writerReaders))
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestDroppingAWideIndexCostsItsExportsAndReaders: a drop tells each
// import of what it ends once, looking up whether the import's index (or
// the one read through it) ended in a set of the ended ids: a scan of the
// ended ids for each import (slices.Contains) cost exports × imports.
// One dataflow exports 200 indexes, each read by 4 queries; its drop
// looks at O(200 + 800) entries on each worker, and tells each import
// once (ErrIndexDropped).
func TestDroppingAWideIndexCostsItsExportsAndReaders(t *testing.T) {
	const exports, readers = 200, 4
	ids := make([]string, exports)
	for k := range ids {
		ids[k] = fmt.Sprintf("e%d", k)
	}
	for _, mode := range []string{"solo", "pair"} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, workers), func(t *testing.T) {
				s := newSetup(t, mode, workers)
				s.declare("in", 2)
				s.send("in", 2, []int64{0, 1, 1, 10})
				s.advance("in", 2, frontier.At(1))
				s.must(CreateDataflow{Desc: exportsDesc("wide", ids, ids)})
				for r := range readers {
					s.must(CreateDataflow{Desc: dataflow.Desc{
						ID: fmt.Sprintf("r%d", r), AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(c *dataflow.Context) error {
							for _, id := range ids {
								a, err := c.ImportIndex(id)
								if err != nil {
									return err
								}
								c.Probe(dataflow.NewProbe(workers), a.Oks.Stream) // read, so imported
							}
							return nil
						},
					}})
				}
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				if errs := s.ctl.TakeErrors(); len(errs) != 0 {
					t.Fatalf("setup: %v", errs)
				}
				counted := func() (n int) {
					for _, r := range s.rts {
						if err := r.barrier(testCtx(t), func(w *worker) { n += w.dropExamined }); err != nil {
							t.Fatal(err)
						}
					}
					return n
				}
				before := counted()
				s.must(DropDataflow{ID: "wide"})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				examined := counted() - before
				// Every worker of every runtime looks at the exports; the
				// imports are looked at where the readers are rendered.
				bound := 4 * (exports*len(s.rts) + readers*exports) * workers
				t.Logf("a drop of %d exports read by %d imports looked at %d entries (bound %d)", exports, readers*exports, examined, bound)
				if examined > bound {
					t.Fatalf("the drop looked at %d entries; want at most %d", examined, bound)
				}
				errs := s.ctl.TakeErrors()
				if want := readers * exports; len(errs) != want {
					t.Fatalf("%d errors, want %d", len(errs), want)
				}
				for _, e := range errs {
					if !errors.Is(e, ErrIndexDropped) {
						t.Fatalf("error %v, want ErrIndexDropped", e)
					}
				}
				for r := range readers {
					s.must(DropDataflow{ID: fmt.Sprintf("r%d", r)})
				}
			})
		}
	}
}
