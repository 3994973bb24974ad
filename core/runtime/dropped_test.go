package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/reduce"
)

// droppedErr is the text of ErrIndexDropped for importer df of index id,
// ended as how says.
func droppedErr(df, id, how string) string {
	return fmt.Sprintf("dataflow %s: index %q, which it imports, %s: %v", df, id, how, ErrIndexDropped)
}

// An index dropped under the dataflows that import it is an error of the
// dropping command, once for each importer and index, the same in Solo and
// in the pair whichever runtime lags: a query and a maintained view that
// read it (rendered by different runtimes of the pair) and a query reading
// the view's re-export of it, after the drop of its maintaining dataflow;
// a query of a freed index (AllowCompaction to
// {}), told at the free and not again at the drop of its dataflow; a new
// incarnation of the id, whose drop tells only its own importers (one a
// dropped importer's id created again); and importers dropped first,
// which are told nothing.
func TestIndexDroppedUnderItsImporters(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run("lag="+lag.String(), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, sent *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
				s.advance("in", 2, frontier.At(1))
				// idx: read by query q and by the maintained view "maintain
				// view", whose own export a second query reads.
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: reexportDesc("maintain view", "idx", "view", true)})
				q := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), q)})
				onView := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("on view", "view", 0, frontier.Empty(), onView)})
				s.must(DropDataflow{ID: "maintain idx"})
				// other: freed while query r reads it, then its dataflow
				// dropped; a new incarnation under another dataflow, read
				// by r2 and dropped under it.
				s.must(CreateDataflow{Desc: indexDesc("other", "in", 2, []int{1}, 0, nil)})
				r := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("r", "other", 0, frontier.Empty(), r)})
				s.must(AllowCompaction{ID: "other", Frontier: frontier.Empty()})
				s.must(DropDataflow{ID: "maintain other"})
				again := indexDesc("other", "in", 2, []int{1}, 0, nil)
				again.ID = "maintain other again"
				s.must(CreateDataflow{Desc: again})
				r2 := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("r2", "other", 0, frontier.Empty(), r2)})
				s.must(DropDataflow{ID: "maintain other again"})
				// q, told already, dropped and created again on a new
				// incarnation of idx: the new q is told afresh.
				s.must(DropDataflow{ID: "q"})
				idxAgain := indexDesc("idx", "in", 2, []int{0}, 0, nil)
				idxAgain.ID = "maintain idx again"
				s.must(CreateDataflow{Desc: idxAgain})
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), dataflow.NewCapture(s.workers))})
				s.must(DropDataflow{ID: "maintain idx again"})
				// last: its importer dropped before it.
				s.must(CreateDataflow{Desc: indexDesc("last", "in", 2, []int{0}, 0, nil)})
				l := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("l", "last", 0, frontier.Empty(), l)})
				s.must(DropDataflow{ID: "l"})
				s.must(DropDataflow{ID: "maintain last"})
				// kept: an index no one drops answers its query.
				s.must(CreateDataflow{Desc: indexDesc("kept", "in", 2, []int{0}, 0, nil)})
				k := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("k", "kept", 0, frontier.At(1), k)})
				s.resume()
				return read(k, 0)
			})
			want := []string{
				droppedErr("maintain view", "idx", "goes with dataflow maintain idx"),
				// view re-exports idx: its traces stop with their writer.
				writerErr("on view", "view", "maintain idx"),
				droppedErr("q", "idx", "goes with dataflow maintain idx"),
				droppedErr("r", "other", "is freed (AllowCompaction to {})"),
				droppedErr("r2", "other", "goes with dataflow maintain other again"),
				droppedErr("q", "idx", "goes with dataflow maintain idx again"),
			}
			slices.Sort(want) // as setup.takeErrors gives them
			for w, o := range outs {
				if !slices.Equal(o.errs, want) {
					t.Errorf("workers=%d: errors\n%q\nwant\n%q", w, o.errs, want)
				}
				if wantAns := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1}); o.answer != wantAns {
					t.Errorf("workers=%d: k read %s, want %s", w, o.answer, wantAns)
				}
			}
		})
	}
}

// The errors of one drop come in the same order from Solo and from the
// pair, whose runtimes render different importers (the view on the
// Maintenance runtime, the queries on the Interactive one): by command,
// then by text. Each wraps ErrIndexDropped and names its command.
func TestIndexDroppedErrorsInOneOrder(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 2)
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: readDesc("b query", "idx", 0, frontier.Empty(), dataflow.NewCapture(2))})
		s.must(CreateDataflow{Desc: reexportDesc("a view", "idx", "view", true)})
		s.must(CreateDataflow{Desc: readDesc("c query", "idx", 0, frontier.Empty(), dataflow.NewCapture(2))})
		s.must(DropDataflow{ID: "maintain idx"})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		errs := s.ctl.TakeErrors()
		var got []string
		for _, e := range errs {
			got = append(got, e.Err.Error())
			if !errors.Is(e, ErrIndexDropped) {
				t.Errorf("%s: %v does not wrap ErrIndexDropped", mode, e)
			}
			if d, ok := e.Command.(DropDataflow); !ok || d.ID != "maintain idx" || e.Seq != errs[0].Seq {
				t.Errorf("%s: %v is of command %d %#v, want the drop of maintain idx", mode, e, e.Seq, e.Command)
			}
		}
		want := []string{
			droppedErr("a view", "idx", "goes with dataflow maintain idx"),
			droppedErr("b query", "idx", "goes with dataflow maintain idx"),
			droppedErr("c query", "idx", "goes with dataflow maintain idx"),
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: errors\n%q\nwant\n%q", mode, got, want)
		}
		// Once everything is dropped, the workers remember no export and
		// no importer told.
		for _, id := range []string{"a view", "b query", "c query"} {
			s.must(DropDataflow{ID: id})
		}
		for _, r := range s.rts {
			if err := r.barrier(testCtx(t), func(w *worker) {
				if len(w.exporters) != 0 || len(w.endedImports) != 0 {
					t.Errorf("%s: %v worker %d keeps exporters %v and told importers %v", mode, r.Role(), w.index, w.exporters, w.endedImports)
				}
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A caller taking errors while commands apply gets each error once: an
// ErrIndexDropped is met by every worker of the runtime that renders the
// importer, and a worker's copy recorded while TakeErrors ran came back
// at the next take once TakeErrors had forgotten the key that filtered it.
func TestTakeErrorsWhileWorkersMeetThem(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 4)
		s.declare("in", 2)
		stop, out := make(chan struct{}), make(chan map[string]int)
		go func() {
			seen := map[string]int{}
			take := func() {
				for _, e := range s.ctl.TakeErrors() {
					seen[fmt.Sprint(e.Seq, e.Err)]++
				}
			}
			for {
				take()
				select {
				case <-stop:
					take()
					out <- seen
					return
				default:
				}
			}
		}()
		const n = 150
		for i := range n {
			ix := fmt.Sprint("i", i)
			s.must(CreateDataflow{Desc: indexDesc(ix, "in", 2, []int{0}, 0, nil)})
			s.must(CreateDataflow{Desc: readDesc("q"+ix, ix, 0, frontier.Empty(), dataflow.NewCapture(4))})
			s.must(DropDataflow{ID: "maintain " + ix})
			s.must(DropDataflow{ID: "q" + ix})
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		close(stop)
		seen := <-out
		if len(seen) != n {
			t.Errorf("%s: %d distinct errors taken, want %d", mode, len(seen), n)
		}
		for k, c := range seen {
			if c > 1 {
				t.Errorf("%s: taken %d times: %s", mode, c, k)
			}
		}
	}
}

// An index a dataflow imports but never reads (every half closed at
// build, nothing taking it) is not among its imports: dropping it tells
// no one, and the dataflow goes on answering from what it reads.
func TestUnreadImportIsNotToldOfItsDrop(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("a", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: indexDesc("b", "in", 2, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
			if _, err := c.ImportIndex("a"); err != nil { // looked at, never read
				return err
			}
			b, err := c.ImportIndex("b")
			if err != nil {
				return err
			}
			c.Capture(cp, b.Oks)
			return nil
		}}})
		s.must(DropDataflow{ID: "maintain a"})
		s.send("in", 2, []int64{1, 1, 2, 20})
		s.advance("in", 2, frontier.At(5))
		ans := read(cp, 4)
		s.must(DropDataflow{ID: "q"})
		return ans
	})
	for w, o := range outs {
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1}); o.answer != want || len(o.errs) != 0 {
			t.Errorf("workers=%d: %+v, want %s and no error", w, o, want)
		}
	}
}

// An index a dataflow reads only through a reader of its own (Keep, as a
// lookup into an arrangement does), or re-exports, is among its imports
// though no operator takes the import's stream: its drop tells it.
func TestKeptOrReexportedImportIsTold(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: dataflow.Desc{ID: "lookup", AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex("idx")
			if err != nil {
				return err
			}
			c.Keep(a.Oks.Reader)
			return nil
		}}})
		s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "idx copy", false)})
		s.must(DropDataflow{ID: "maintain idx"})
		return ""
	})
	want := []string{
		droppedErr("copy", "idx", "goes with dataflow maintain idx"),
		droppedErr("lookup", "idx", "goes with dataflow maintain idx"),
	}
	for w, o := range outs {
		if !slices.Equal(o.errs, want) {
			t.Errorf("workers=%d: errors\n%q\nwant\n%q", w, o.errs, want)
		}
	}
}

// A re-export shares its source's traces, which go on when it ends. A
// query reading a Maintained re-export stops when the re-export ends, in
// Solo as in the pair (whose query reads the re-export's own publication,
// which ends with it): it is told so. A Maintained dataflow reading it,
// and any reader of a query's re-export, read the source's traces in both
// setups and go on: they are told nothing. Whichever runtime lags.
func TestReexportEndsForItsQueryReaders(t *testing.T) {
	for _, end := range []Command{AllowCompaction{ID: "idx copy", Frontier: frontier.Empty()}, DropDataflow{ID: "copy"}} {
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("%T/lag=%v", end, lag), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					s.send("in", 2, []int64{0, 1, 1, 10})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "idx copy", true)})
					s.must(CreateDataflow{Desc: reexportDesc("v", "idx copy", "v out", true)})
					s.must(CreateDataflow{Desc: reexportDesc("qcopy", "idx", "idx qcopy", false)})
					// vm: a Maintained dataflow reading the re-export's
					// stream itself (its probe shows how far it read).
					pm := dataflow.NewProbe(s.workers)
					s.must(CreateDataflow{Desc: dataflow.Desc{ID: "vm", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
						a, err := c.ImportIndex("idx copy")
						if err != nil {
							return err
						}
						c.Probe(pm, a.Oks.Stream)
						return nil
					}}})
					cps := map[string]*dataflow.Capture{}
					for _, r := range [][2]string{{"ctl", "idx"}, {"r copy", "idx copy"}, {"r v", "v out"}, {"r q", "idx qcopy"}} {
						cps[r[0]] = dataflow.NewCapture(s.workers)
						s.must(CreateDataflow{Desc: readDesc(r[0], r[1], 0, frontier.Empty(), cps[r[0]])})
					}
					s.must(end)
					s.must(AllowCompaction{ID: "idx qcopy", Frontier: frontier.Empty()})
					// A new incarnation of the id, ended too, tells no
					// reader of the old one.
					s.must(CreateDataflow{Desc: reexportDesc("copy2", "idx", "idx copy", true)})
					s.must(AllowCompaction{ID: "idx copy", Frontier: frontier.Empty()})
					s.send("in", 2, []int64{1, 1, 2, 20})
					s.advance("in", 2, frontier.At(3))
					s.resume()
					// Once the control has passed 2, every reader has been
					// given what it will be given up to 3.
					out := "ctl " + read(cps["ctl"], 2)
					for _, r := range []string{"r v", "r q"} {
						out += "; " + r + " " + read(cps[r], 2)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					out += fmt.Sprintf("; vm passed 2: %v", pm.WaitPassed(ctx, 2) == nil)
					// r copy stops where the re-export ended: before 2, at
					// 0 or 1 by how far the index had sealed on each
					// worker (in either setup). What it passed is right.
					rc := cps["r copy"]
					stopped := !rc.Passed(2)
					if rc.Passed(0) && fmt.Sprint(captured(rc, 0)) != fmt.Sprint(map[string]int64{"[1 10]": 1}) {
						return out + "; r copy passed 0 with " + fmt.Sprint(captured(rc, 0))
					}
					return out + fmt.Sprintf("; r copy stopped before 2: %v", stopped)
				})
				how := "is freed (AllowCompaction to {})"
				if _, ok := end.(DropDataflow); ok {
					how = "goes with dataflow copy"
				}
				rows := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1})
				wantAns := "ctl " + rows + "; r v " + rows + "; r q " + rows + "; vm passed 2: true; r copy stopped before 2: true"
				for w, o := range outs {
					if o.answer != wantAns {
						t.Errorf("workers=%d: %s\nwant %s", w, o.answer, wantAns)
					}
					if want := []string{droppedErr("r copy", "idx copy", how)}; !slices.Equal(o.errs, want) {
						t.Errorf("workers=%d: errors %q, want %q", w, o.errs, want)
					}
				}
			})
		}
	}
}

// A query's re-export of a Maintained index (here itself a Maintained
// re-export) is an alias of that index: in the pair it reads the index's
// publication, so its readers stop when the index ends, and Solo ends
// their imports alike; they are told so, naming the re-export they read.
// A query created on the alias after the end is refused in both
// (dataflow.ErrSourceEnded), where the pair's would read the ended
// publication and Solo's the traces that go on.
func TestQueryReexportEndsWithItsMaintainedSource(t *testing.T) {
	for _, end := range []Command{AllowCompaction{ID: "idx copy", Frontier: frontier.Empty()}, DropDataflow{ID: "copy"}} {
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("%T/lag=%v", end, lag), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					s.send("in", 2, []int64{0, 1, 1, 10})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "idx copy", true)})
					s.must(CreateDataflow{Desc: reexportDesc("qcopy", "idx copy", "q out", false)})
					s.must(CreateDataflow{Desc: reexportDesc("qcopy2", "q out", "q out 2", false)})
					r, r2, ctl := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
					s.must(CreateDataflow{Desc: readDesc("r", "q out", 0, frontier.Empty(), r)})
					s.must(CreateDataflow{Desc: readDesc("r2", "q out 2", 0, frontier.Empty(), r2)})
					s.must(CreateDataflow{Desc: readDesc("ctl", "idx", 0, frontier.Empty(), ctl)})
					s.must(end)
					s.send("in", 2, []int64{1, 1, 2, 20})
					s.advance("in", 2, frontier.At(3))
					s.must(CreateDataflow{Desc: readDesc("late", "q out", 0, frontier.Empty(), dataflow.NewCapture(s.workers))})
					s.resume()
					out := "ctl " + read(ctl, 2)
					for name, cp := range map[string]*dataflow.Capture{"r": r, "r2": r2} {
						if cp.Passed(0) && fmt.Sprint(captured(cp, 0)) != fmt.Sprint(map[string]int64{"[1 10]": 1}) {
							out += "; " + name + " passed 0 with " + fmt.Sprint(captured(cp, 0))
						}
					}
					return out + fmt.Sprintf("; r stopped before 2: %v; r2: %v", !r.Passed(2), !r2.Passed(2))
				})
				how := "is freed (AllowCompaction to {})"
				if _, ok := end.(DropDataflow); ok {
					how = "goes with dataflow copy"
				}
				rows := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1})
				wantAns := "ctl " + rows + "; r stopped before 2: true; r2: true"
				// qcopy, a query reading the Maintained re-export, and
				// qcopy2, re-exporting qcopy's alias, stop too.
				want := []string{
					fmt.Sprintf(`dataflow late: import of index "q out", which re-exports "idx copy": %v`, dataflow.ErrSourceEnded),
					droppedErr("qcopy", "idx copy", how),
					droppedErr("qcopy2", "q out", "ends with the index it re-exports, which "+how),
					droppedErr("r", "q out", "ends with the index it re-exports, which "+how),
					droppedErr("r2", "q out 2", "ends with the index it re-exports, which "+how),
				}
				slices.Sort(want) // as setup.takeErrors gives them
				for w, o := range outs {
					if o.answer != wantAns {
						t.Errorf("workers=%d: %s\nwant %s", w, o.answer, wantAns)
					}
					if !slices.Equal(o.errs, want) {
						t.Errorf("workers=%d: errors\n%q\nwant\n%q", w, o.errs, want)
					}
				}
			})
		}
	}
}

// A Maintained index freed while its writer lives and a query's re-export
// of it holds its traces: its query readers, direct and through the
// re-export, stop in Solo as in the pair (whose queries read its ended
// publication), and are told.
func TestFreedIndexWithAnAliasStopsItsQueries(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10})
				s.advance("in", 2, frontier.At(1))
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: indexDesc("other", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: reexportDesc("alias", "idx", "idx alias", false)})
				r, ra, ctl := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("r", "idx", 0, frontier.Empty(), r)})
				s.must(CreateDataflow{Desc: readDesc("ra", "idx alias", 0, frontier.Empty(), ra)})
				s.must(CreateDataflow{Desc: readDesc("ctl", "other", 0, frontier.Empty(), ctl)})
				s.must(AllowCompaction{ID: "idx", Frontier: frontier.Empty()})
				s.send("in", 2, []int64{1, 1, 2, 20})
				s.advance("in", 2, frontier.At(3))
				s.resume()
				return fmt.Sprintf("ctl %s; r stopped before 2: %v; ra: %v", read(ctl, 2), !r.Passed(2), !ra.Passed(2))
			})
			how := "is freed (AllowCompaction to {})"
			want := []string{
				droppedErr("alias", "idx", how),
				droppedErr("r", "idx", how),
				droppedErr("ra", "idx alias", "ends with the index it re-exports, which "+how),
			}
			slices.Sort(want)
			rows := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1})
			for w, o := range outs {
				if wantAns := "ctl " + rows + "; r stopped before 2: true; ra: true"; o.answer != wantAns || !slices.Equal(o.errs, want) {
					t.Errorf("workers=%d: %s %q\nwant %s %q", w, o.answer, o.errs, wantAns, want)
				}
			}
		})
	}
}

// An alias's readers stop with its root, and are told, also when the
// query exporting the alias was dropped first (they read the root, in the
// pair its publication): in Solo as in the pair, for a root that is a
// Maintained re-export or a plain index freed while its writer lives.
func TestAliasReadersStopWithTheRootAfterTheAliasIsGone(t *testing.T) {
	for _, root := range []string{"idx copy", "idx"} {
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("root=%s/lag=%v", root, lag), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					s.send("in", 2, []int64{0, 1, 1, 10})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: indexDesc("other", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "idx copy", true)})
					s.must(CreateDataflow{Desc: reexportDesc("alias", root, "q out", false)})
					ra, ctl := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
					s.must(CreateDataflow{Desc: readDesc("ra", "q out", 0, frontier.Empty(), ra)})
					s.must(CreateDataflow{Desc: readDesc("ctl", "other", 0, frontier.Empty(), ctl)})
					s.must(DropDataflow{ID: "alias"})
					s.must(AllowCompaction{ID: root, Frontier: frontier.Empty()})
					s.send("in", 2, []int64{1, 1, 2, 20})
					s.advance("in", 2, frontier.At(3))
					s.resume()
					return fmt.Sprintf("ctl %s; ra stopped before 2: %v", read(ctl, 2), !ra.Passed(2))
				})
				want := []string{droppedErr("ra", "q out", "ends with the index it re-exports, which is freed (AllowCompaction to {})")}
				// (copy reads idx too: a Maintained reader, it keeps
				// the traces written and goes on, told nothing.)
				rows := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1})
				for w, o := range outs {
					if wantAns := "ctl " + rows + "; ra stopped before 2: true"; o.answer != wantAns || !slices.Equal(o.errs, want) {
						t.Errorf("workers=%d: %s %q\nwant %s %q", w, o.answer, o.errs, wantAns, want)
					}
				}
			})
		}
	}
}

// writerErr is the text of ErrIndexDropped for importer df of index id,
// whose traces dataflow writer wrote until its drop.
func writerErr(df, id, writer string) string {
	return fmt.Sprintf("dataflow %s: index %q, which it imports, reads traces whose writer, dataflow %s, is dropped: %v", df, id, writer, ErrIndexDropped)
}

// A re-export shares its source's traces, so it outlives the source's
// exporter only in name: dropping the dataflow whose arrangement writes
// them stops every reader of a re-export of them — a query and a
// Maintained dataflow reading a Maintained re-export, a query reading a
// query's alias of it — and each is told, in Solo as in the pair (whose
// queries read the re-export's publication, stopped alike), whichever
// runtime lags: whether the drop comes straight, after the index was
// freed while its writer lived (the re-export's readers went on), or after
// the re-export ended (its query readers were told then, and are not told
// again; the Maintained reader went on until now). A dataflow created
// afterwards on the re-export is refused (dataflow.ErrSourceEnded), and a
// new incarnation of the writer, dropped too, tells no one.
func TestWriterDropStopsReexportReaders(t *testing.T) {
	const w = "maintain idx"
	sourceEnded := func(df string) string {
		return fmt.Sprintf("dataflow %s: import of index %q, whose traces' writer, dataflow %s, is dropped: %v", df, "idx copy", w, dataflow.ErrSourceEnded)
	}
	cases := []struct {
		name   string
		before Command
		want   []string
	}{
		{"straight", nil, []string{
			droppedErr("copy", "idx", "goes with dataflow "+w),
			writerErr("qcopy", "idx copy", w), writerErr("r", "idx copy", w),
			writerErr("r2", "q out", w), writerErr("vm", "idx copy", w),
			sourceEnded("late"), sourceEnded("late vm"),
		}},
		{"freed first", AllowCompaction{ID: "idx", Frontier: frontier.Empty()}, []string{
			// copy, a Maintained reader of idx, went on until now.
			writerErr("copy", "idx", w),
			writerErr("qcopy", "idx copy", w), writerErr("r", "idx copy", w),
			writerErr("r2", "q out", w), writerErr("vm", "idx copy", w),
			sourceEnded("late"), sourceEnded("late vm"),
		}},
		{"re-export dropped first", DropDataflow{ID: "copy"}, []string{
			droppedErr("qcopy", "idx copy", "goes with dataflow copy"),
			droppedErr("r", "idx copy", "goes with dataflow copy"),
			droppedErr("r2", "q out", "ends with the index it re-exports, which goes with dataflow copy"),
			writerErr("vm", "idx copy", w),
			`dataflow late vm: import of unknown index "idx copy"`,
			`dataflow late: import of unknown index "idx copy"`,
		}},
	}
	for _, tc := range cases {
		slices.Sort(tc.want) // as setup.takeErrors gives them
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("%s/lag=%v", tc.name, lag), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					s.send("in", 2, []int64{0, 1, 1, 10})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: indexDesc("ctl idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "idx copy", true)})
					s.must(CreateDataflow{Desc: reexportDesc("qcopy", "idx copy", "q out", false)})
					vmDesc := func(id string, p *dataflow.Probe) dataflow.Desc {
						return dataflow.Desc{ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
							a, err := c.ImportIndex("idx copy")
							if err != nil {
								return err
							}
							c.Probe(p, a.Oks.Stream)
							return nil
						}}
					}
					pm := dataflow.NewProbe(s.workers)
					s.must(CreateDataflow{Desc: vmDesc("vm", pm)})
					r, r2, ctl := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
					s.must(CreateDataflow{Desc: readDesc("r", "idx copy", 0, frontier.Empty(), r)})
					s.must(CreateDataflow{Desc: readDesc("r2", "q out", 0, frontier.Empty(), r2)})
					s.must(CreateDataflow{Desc: readDesc("ctl", "ctl idx", 0, frontier.Empty(), ctl)})
					if tc.before != nil {
						s.must(tc.before)
					}
					s.must(DropDataflow{ID: w})
					s.must(CreateDataflow{Desc: readDesc("late", "idx copy", 0, frontier.Empty(), dataflow.NewCapture(s.workers))})
					s.must(CreateDataflow{Desc: vmDesc("late vm", dataflow.NewProbe(s.workers))})
					// The writer's id again, a new incarnation: its drop
					// is no one's concern.
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(DropDataflow{ID: w})
					s.send("in", 2, []int64{1, 1, 2, 20})
					s.advance("in", 2, frontier.At(3))
					s.resume()
					out := "ctl " + read(ctl, 2)
					for name, cp := range map[string]*dataflow.Capture{"r": r, "r2": r2} {
						if cp.Passed(0) && fmt.Sprint(captured(cp, 0)) != fmt.Sprint(map[string]int64{"[1 10]": 1}) {
							out += "; " + name + " passed 0 with " + fmt.Sprint(captured(cp, 0))
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
					defer cancel()
					return out + fmt.Sprintf("; stopped before 2: r %v, r2 %v, vm %v", !r.Passed(2), !r2.Passed(2), pm.WaitPassed(ctx, 2) != nil)
				})
				wantAns := "ctl " + fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1}) + "; stopped before 2: r true, r2 true, vm true"
				for n, o := range outs {
					if o.answer != wantAns {
						t.Errorf("workers=%d: %s\nwant %s", n, o.answer, wantAns)
					}
					if !slices.Equal(o.errs, tc.want) {
						t.Errorf("workers=%d: errors\n%q\nwant\n%q", n, o.errs, tc.want)
					}
				}
			})
		}
	}
}

// A query's index and a query's alias of it: the alias's reader reads the
// query's traces, which stop when that query is dropped, and is told, in
// Solo as in the pair.
func TestQueryWriterDropStopsItsAliasReaders(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run("lag="+lag.String(), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10})
				s.advance("in", 2, frontier.At(1))
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0, 1}, 0, nil)})
				// qw arranges the distinct rows of idx: an index of its own.
				s.must(CreateDataflow{Desc: dataflow.Desc{ID: "qw", AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"qidx"}, Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					d, err := reduce.AddDistinct(c, a, reduce.OperatorOptions{})
					if err != nil {
						return err
					}
					out, err := c.Arrange(d, []int{0})
					if err != nil {
						return err
					}
					return c.Export("qidx", out)
				}}})
				s.must(CreateDataflow{Desc: reexportDesc("qa", "qidx", "qalias", false)})
				r := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("qr", "qalias", 0, frontier.Empty(), r)})
				s.must(DropDataflow{ID: "qw"})
				s.send("in", 2, []int64{1, 1, 2, 20})
				s.advance("in", 2, frontier.At(3))
				s.resume()
				return ""
			})
			want := []string{droppedErr("qa", "qidx", "goes with dataflow qw"), writerErr("qr", "qalias", "qw")}
			for n, o := range outs {
				if !slices.Equal(o.errs, want) {
					t.Errorf("workers=%d: errors\n%q\nwant\n%q", n, o.errs, want)
				}
			}
		})
	}
}

// A Maintained dataflow reads the traces and keeps them written while it
// lives (dataflow.Context.keepAlive): freeing the index it reads, or the
// Maintained re-export it reads, ends nothing for it — it goes on, told
// nothing, in Solo as in the pair, also where a query's alias of the
// re-export exists (which in Solo held the traces open while the pair's,
// reading the publication, did not: the two setups' Maintained readers
// answered apart). Dropping the writer then stops them, and tells each.
func TestMaintainedReaderKeepsTheTracesWritten(t *testing.T) {
	for _, alias := range []bool{false, true} {
		for _, lag := range []Role{Solo, Maintenance, Interactive} {
			t.Run(fmt.Sprintf("alias=%v/lag=%v", alias, lag), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					s.send("in", 2, []int64{0, 1, 1, 10})
					s.advance("in", 2, frontier.At(1))
					s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
					s.must(CreateDataflow{Desc: reexportDesc("copy", "idx", "c1", true)})
					if alias {
						s.must(CreateDataflow{Desc: reexportDesc("qa", "c1", "qa out", false)})
					}
					probes := map[string]*dataflow.Probe{}
					for _, r := range [][2]string{{"m", "c1"}, {"v", "idx"}} {
						p := dataflow.NewProbe(s.workers)
						probes[r[0]] = p
						s.must(CreateDataflow{Desc: dataflow.Desc{ID: r[0], Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
							a, err := c.ImportIndex(r[1])
							if err != nil {
								return err
							}
							c.Probe(p, a.Oks.Stream)
							return nil
						}}})
					}
					s.must(AllowCompaction{ID: "idx", Frontier: frontier.Empty()})
					s.must(AllowCompaction{ID: "c1", Frontier: frontier.Empty()})
					s.send("in", 2, []int64{1, 1, 2, 20})
					s.advance("in", 2, frontier.At(3))
					s.resume()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					out := fmt.Sprintf("m passed 2: %v; v passed 2: %v", probes["m"].WaitPassed(ctx, 2) == nil, probes["v"].WaitPassed(ctx, 2) == nil)
					s.must(DropDataflow{ID: "maintain idx"})
					return out
				})
				want := []string{writerErr("copy", "idx", "maintain idx"), writerErr("m", "c1", "maintain idx"), writerErr("v", "idx", "maintain idx")}
				if alias {
					want = append(want, droppedErr("qa", "c1", "is freed (AllowCompaction to {})"))
				}
				slices.Sort(want)
				for n, o := range outs {
					if o.answer != "m passed 2: true; v passed 2: true" || !slices.Equal(o.errs, want) {
						t.Errorf("workers=%d: %s %q\nwant m and v past 2, %q", n, o.answer, o.errs, want)
					}
				}
			})
		}
	}
}
