package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// The tests of this file drive Solo and the Maintenance/Interactive pair
// with the same commands, as a controller would, and require both to
// observe the same outcome: the same answers and the same errors.

// outcome is what a scenario observed: its answers, the errors Send
// returned, and the distinct errors the runtimes reported (without the
// runtime and worker that reported them).
type outcome struct {
	answer string
	sent   []string
	errs   []string
}

// takeErrors returns the distinct errors the runtimes reported so far,
// sorted, and consumes them (so the setup's cleanup does not report them).
func (s *setup) takeErrors() []string {
	set := map[string]bool{}
	for _, e := range s.ctl.TakeErrors() {
		set[e.Error()] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// newLagSetup is newSetup with one runtime of the pair paused ("" for
// none): it applies nothing until resume.
func newLagSetup(t *testing.T, mode string, workers int, lag Role) *setup {
	if mode == "solo" || lag == Solo {
		return newSetup(t, mode, workers)
	}
	regs := make([]*share.Registry, workers)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	m, err := New(Options{Role: Maintenance, Workers: workers, Registries: regs, Paused: lag == Maintenance})
	if err != nil {
		t.Fatal(err)
	}
	i, err := New(Options{Role: Interactive, Workers: workers, Registries: regs, Paused: lag == Interactive})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := NewController(m, i)
	if err != nil {
		t.Fatal(err)
	}
	s := &setup{mode: mode, workers: workers, ctl: ctl, rts: []*Runtime{m, i}, tb: t}
	t.Cleanup(func() {
		s.ctl.Shutdown()
		if err := s.ctl.Err(); err != nil {
			t.Errorf("runtime errors: %v", err)
		}
	})
	return s
}

func (s *setup) resume() {
	for _, r := range s.rts {
		r.Resume()
	}
}

func (s *setup) role(r Role) *Runtime {
	for _, rt := range s.rts {
		if rt.Role() == r {
			return rt
		}
	}
	return nil
}

// sendErr sends cmd and returns the error text Send returned ("" if none).
func (s *setup) sendErr(cmd Command) string {
	if err := s.ctl.Send(cmd); err != nil {
		return err.Error()
	}
	return ""
}

// read waits until the capture passed t and returns its accumulation at t,
// or "never passed t" (an outcome to compare, not a test timeout).
func read(cp *dataflow.Capture, t uint64) string {
	// A wait for a time that must pass: its bound only ends a failing
	// test, so it is testCtx's, not one a loaded host under -race can
	// outlast (5 s did, once, with four setups running at once).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cp.WaitPassed(ctx, t); err != nil {
		return fmt.Sprintf("never passed %d", t)
	}
	return fmt.Sprint(captured(cp, t))
}

var agreeWorkers = []int{1, 2, 4}

// agree runs scenario on Solo and on the pair (lagging as lag says) with 1,
// 2 and 4 workers, requires both to observe the same outcome, and returns
// them per worker count for the caller to check.
func agree(t *testing.T, lag Role, scenario func(s *setup, sent *[]string) string) map[int]outcome {
	t.Helper()
	outs := map[int]outcome{}
	for _, w := range agreeWorkers {
		var got [2]outcome
		for i, mode := range []string{"solo", "pair"} {
			s := newLagSetup(t, mode, w, lag)
			var sent []string
			ans := scenario(s, &sent)
			s.resume()
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			got[i] = outcome{answer: ans, sent: sent, errs: s.takeErrors()}
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Fatalf("workers=%d: Solo and the pair disagree:\nsolo: %+v\npair: %+v", w, got[0], got[1])
		}
		outs[w] = got[0]
	}
	return outs
}

// Case 1 of the robustness list: a dataflow dropped and created again under
// its id gets exchanges of its own, so its arrangement has every row.
func TestRecreatedDataflowKeepsEveryRow(t *testing.T) {
	var rows [][]int64
	for k := range int64(32) {
		rows = append(rows, []int64{0, 1, k, k * 10})
	}
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 2, rows...)
		s.advance("in", 2, frontier.At(1))
		var out []string
		for round := range 6 {
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			cp := dataflow.NewCapture(s.workers)
			q := fmt.Sprintf("q%d", round)
			s.must(CreateDataflow{Desc: readDesc(q, "idx", 0, frontier.At(1), cp)})
			out = append(out, read(cp, 0))
			s.must(DropDataflow{ID: q})
			s.must(DropDataflow{ID: "maintain idx"})
		}
		return strings.Join(out, "\n")
	})
	want := fmt.Sprint(model(rows, 0))
	for w, o := range outs {
		for i, got := range strings.Split(o.answer, "\n") {
			if got != want {
				t.Fatalf("workers=%d: incarnation %d read %s, want %s", w, i, got, want)
			}
		}
	}
}

// Case 2: a diff that overflows while the index's spine merges is an error
// of the index, and the index keeps every other update.
func TestMergeOverflowIsReportedAndKeepsOtherUpdates(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.declare("in", 2)
		ctx := testCtx(s.tb)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(2)})
		first := [][]int64{{0, math.MaxInt64, 1, 1}}
		second := [][]int64{{1, 1, 1, 1}}
		for k := int64(2); k < 10; k++ {
			first = append(first, []int64{0, 1, k, k})
			second = append(second, []int64{1, 1, k + 8, k + 8})
		}
		s.send("in", 2, first...)
		s.advance("in", 2, frontier.At(1))
		if err := s.ctl.Sync(ctx); err != nil {
			s.tb.Fatal(err)
		}
		s.send("in", 2, second...)
		s.advance("in", 2, frontier.At(2))
		// Later rounds (at times from 3) bring the arrivals that drive merges.
		s.advance("in", 2, frontier.At(3))
		for i := int64(3); i < 40; i++ {
			if err := s.ctl.Sync(ctx); err != nil {
				s.tb.Fatal(err)
			}
			var more [][]int64
			for k := range int64(16) {
				more = append(more, []int64{i, 1, 100*i + k, 0})
			}
			s.send("in", 2, more...)
			s.advance("in", 2, frontier.At(uint64(i+1)))
		}
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 2, frontier.At(3), cp)})
		return read(cp, 2)
	})
	for w, o := range outs {
		for k := 2; k < 18; k++ {
			if !strings.Contains(o.answer, fmt.Sprintf("[%d %d]:1", k, k)) {
				t.Fatalf("workers=%d: row [%d %d] lost to the overflow: %s", w, k, k, o.answer)
			}
		}
		if len(o.errs) == 0 || !strings.Contains(strings.Join(o.errs, "\n"), "numeric overflow") {
			t.Fatalf("workers=%d: overflow not reported: %q", w, o.errs)
		}
	}
}

// holdInteractive makes every worker of the pair's Interactive runtime stop
// at this point of its command stream until the returned release is called;
// reached is closed once every worker is there.
func holdInteractive(s *setup) (reached <-chan struct{}, release func()) {
	inter := s.role(Interactive)
	gate := make(chan struct{})
	all := make(chan struct{})
	left := len(inter.workers)
	var mu gosync.Mutex
	for _, w := range inter.workers {
		w.enqueue(queued{cmd: barrier{done: func(*worker) {
			mu.Lock()
			if left--; left == 0 {
				close(all)
			}
			mu.Unlock()
			<-gate
		}}})
	}
	return all, func() { close(gate) }
}

// quiesceMaintenance lets the Maintenance runtime apply every hold and
// finish every merge it can.
func quiesceMaintenance(t testing.TB, s *setup) {
	if err := s.role(Maintenance).barrier(testCtx(t), func(w *worker) {
		for w.env.Manager.Maintain(1 << 20) {
		}
	}); err != nil {
		t.Fatal(err)
	}
}

// Case 3: an index dropped and created again at the same as_of while the
// Interactive runtime lags: the lagging runtime's stale create and drop of
// the old incarnation neither take nor release the new incarnation's peer
// hold, so the publisher cannot compact past a query's as_of.
func TestStaleIncarnationNeverReleasesTheNewPeerHold(t *testing.T) {
	outs := agree(t, Interactive, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20}, []int64{0, 1, 3, 30})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(DropDataflow{ID: "maintain idx"})
		var reached <-chan struct{}
		release := func() {}
		if s.mode == "pair" {
			reached, release = holdInteractive(s)
		}
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
		s.send("in", 2, []int64{1, -1, 1, 10}, []int64{1, -1, 2, 20}, []int64{1, -1, 3, 30})
		s.advance("in", 2, frontier.At(5))
		if s.mode == "pair" {
			s.resume() // the stale create and drop apply, then the gate holds
			<-reached
			quiesceMaintenance(s.tb, s)
			release()
		}
		return read(cp, 0)
	})
	for w, o := range outs {
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1, "[3 30]": 1}); o.answer != want || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want %s and no error", w, o, want)
		}
	}
}

// reexportDesc is a query (or, maintained, an index) that imports index id
// and exports it again as as.
func reexportDesc(dfID, id, as string, maintained bool) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{as},
		Build: func(c *dataflow.Context) error {
			a, err := c.ImportIndex(id)
			if err != nil {
				return err
			}
			return c.Export(as, a)
		},
	}
}

// Case 5: an index created again with the same id and as_of while a reader
// still holds the old incarnation's slot (here a query's re-export of it)
// is published as a new incarnation, and a query on it answers. The drop
// under the reader is that reader's one error (ErrIndexDropped), in Solo
// and the pair alike.
func TestRecreatedIndexPublishesWhileTheOldSlotIsHeld(t *testing.T) {
	outs := agree(t, Maintenance, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: reexportDesc("q1", "idx", "copy", false)})
		s.must(DropDataflow{ID: "maintain idx"})
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q2", "idx", 0, frontier.At(1), cp)})
		s.resume()
		return read(cp, 0)
	})
	for w, o := range outs {
		wantErr := fmt.Sprintf(`dataflow q1: index "idx", which it imports, goes with dataflow maintain idx: %v`, ErrIndexDropped)
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1}); o.answer != want || fmt.Sprint(o.errs) != fmt.Sprint([]string{wantErr}) {
			t.Fatalf("workers=%d: %+v, want %s and the error %s", w, o, want, wantErr)
		}
	}
}

// Case 6: the Interactive runtime's stale peer bundle of an older
// incarnation (another as_of) neither evicts nor unbinds the newer
// published slot; once everything is dropped no slot and no reserved hold
// is left.
func TestStalePeerBundleLeavesTheNewerSlotAlone(t *testing.T) {
	outs := agree(t, Interactive, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10}, []int64{1, 1, 2, 20}, []int64{2, 1, 3, 30})
		s.advance("in", 2, frontier.At(3))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(DropDataflow{ID: "maintain idx"})
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 2, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 2, frontier.At(3), cp)})
		s.resume()
		ans := read(cp, 2)
		s.must(DropDataflow{ID: "q"})
		s.must(DropDataflow{ID: "maintain idx"})
		if err := s.ctl.Sync(testCtx(s.tb)); err != nil {
			s.tb.Fatal(err)
		}
		for _, r := range s.rts {
			for i, g := range r.opts.Registries {
				if st := g.Stats(); st != (share.RegistryStats{}) {
					ans += fmt.Sprintf("; registry %d: %+v", i, st)
				}
			}
		}
		return ans
	})
	for w, o := range outs {
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1, "[3 30]": 1}); o.answer != want || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want %s and no error", w, o, want)
		}
	}
}

// Case 4: an index maintained from as_of 5 starts compacted at 5, so a query
// at as_of 3 is refused by Solo and the pair alike, naming the index, its
// since and the as_of.
func TestIndexStartsCompactedAtItsAsOf(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(10))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 5, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 3, frontier.Empty(), cp)})
		return ""
	})
	for w, o := range outs {
		want := `dataflow q: index "idx": since {5}, as_of {3}: ` + dataflow.ErrCompactedBeyondAsOf.Error()
		if !slices.Equal(o.errs, []string{want}) {
			t.Fatalf("workers=%d: errors %q, want %q", w, o.errs, want)
		}
	}
}

// Case 7: a maintained dataflow that imports an index and exports it under
// a new name publishes the re-export, so a query on it answers.
func TestReexportedIndexIsPublished(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: reexportDesc("maintain idx2", "idx", "idx2", true)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx2", 0, frontier.At(1), cp)})
		return read(cp, 0)
	})
	for w, o := range outs {
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1, "[2 20]": 1}); o.answer != want || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want %s and no error", w, o, want)
		}
	}
}

// Case 8: a query cannot take the id of a live maintained dataflow, and the
// refused create leaves the maintained index in place.
func TestQueryCannotTakeAMaintainedDataflowsID(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, sent *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		*sent = append(*sent, s.sendErr(CreateDataflow{Desc: dataflow.Desc{
			ID: "maintain idx", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(*dataflow.Context) error { return errors.New("a query that fails to build") },
		}}))
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
		return read(cp, 0)
	})
	for w, o := range outs {
		want := outcome{answer: fmt.Sprint(map[string]int64{"[1 10]": 1}), sent: []string{`runtime: create dataflow "maintain idx": a dataflow with this id exists`}}
		if fmt.Sprint(o) != fmt.Sprint(want) {
			t.Fatalf("workers=%d: %+v, want %+v", w, o, want)
		}
	}
}

// exportsDesc maintains input "in" arranged and exports it under every id
// of build, while declaring declared.
func exportsDesc(dfID string, declared, build []string) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: declared,
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			a, err := c.Arrange(in, []int{0})
			if err != nil {
				return err
			}
			for _, id := range build {
				if err := c.Export(id, a); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// Case 9: Desc.Exports must list exactly what Build exports: otherwise the
// create fails with an error naming both lists, and a query on any of the
// ids finds no index — the failed create, for an id Desc.Exports lists —
// in Solo and in the pair alike (no hang).
func TestExportsMustMatchWhatBuildExports(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: exportsDesc("maintain a", []string{"a"}, []string{"a", "b"})})
		s.must(CreateDataflow{Desc: exportsDesc("maintain c", []string{"c", "d"}, []string{"c"})})
		// None declared, one exported, and the other way round: the
		// check is not skipped.
		s.must(CreateDataflow{Desc: exportsDesc("maintain e", nil, []string{"e"})})
		s.must(CreateDataflow{Desc: exportsDesc("maintain f", []string{"f"}, nil)})
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			s.must(CreateDataflow{Desc: readDesc("q "+id, id, 0, frontier.At(1), dataflow.NewCapture(s.workers))})
		}
		return ""
	})
	want := []string{
		`dataflow maintain a: Desc.Exports ["a"], Build exported ["a" "b"]: dataflow: exports differ from Desc.Exports`,
		`dataflow maintain c: Desc.Exports ["c" "d"], Build exported ["c"]: dataflow: exports differ from Desc.Exports`,
		`dataflow maintain e: Desc.Exports [], Build exported ["e"]: dataflow: exports differ from Desc.Exports`,
		`dataflow maintain f: Desc.Exports ["f"], Build exported []: dataflow: exports differ from Desc.Exports`,
		`dataflow q a: import of index "a": the create of dataflow "maintain a", which exports it, failed`,
		`dataflow q b: import of unknown index "b"`,
		`dataflow q c: import of index "c": the create of dataflow "maintain c", which exports it, failed`,
		`dataflow q d: import of index "d": the create of dataflow "maintain c", which exports it, failed`,
		`dataflow q e: import of unknown index "e"`,
		`dataflow q f: import of index "f": the create of dataflow "maintain f", which exports it, failed`,
	}
	for w, o := range outs {
		if !slices.Equal(o.errs, want) {
			t.Fatalf("workers=%d: errors\n%s\nwant\n%s", w, strings.Join(o.errs, "\n"), strings.Join(want, "\n"))
		}
	}
}

// Case 10: a chunk with one row before the input frontier is refused whole:
// none of its good rows lands, whatever the number of workers.
func TestBadChunkIsRefusedWhole(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, sent *[]string) string {
		s.advance("in", 2, frontier.At(5))
		c := dataflow.NewChunk(2, 17)
		for k := range int64(16) {
			if k == 7 {
				c.Push([]int64{99, 99}, 2, 1) // before the frontier
			}
			c.Push([]int64{k, k}, 5, 1)
		}
		*sent = append(*sent, s.sendErr(Input{Name: "in", Chunk: c}))
		s.advance("in", 2, frontier.At(6))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 5, frontier.At(6), cp)})
		return read(cp, 5)
	})
	for w, o := range outs {
		want := outcome{answer: "map[]", sent: []string{`runtime: input "in": Chunk row 7: time 2 is before the input frontier {5}`}}
		if fmt.Sprint(o) != fmt.Sprint(want) {
			t.Fatalf("workers=%d: %+v, want %+v", w, o, want)
		}
	}
}

// Case 11: commands that used to panic in a worker goroutine are errors
// naming the command and the field: a nil chunk, a chunk of negative arity,
// and a capture made for fewer workers than the runtime has.
func TestMalformedCommandsAreErrorsNotPanics(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, sent *[]string) string {
		s.advance("in", 2, frontier.At(0))
		neg := &dataflow.Chunk{Arity: -1, Rows: nil, Times: []uint64{0}, Diffs: []int64{1}}
		*sent = append(*sent,
			s.sendErr(Input{Name: "in", Chunk: nil}),
			s.sendErr(Input{Name: "in", Chunk: neg}),
			s.sendErr(CreateInput{Name: "neg", Arity: -1}),
		)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), dataflow.NewCapture(1))})
		return ""
	})
	for w, o := range outs {
		want := []string{
			`runtime: input "in": Chunk is nil`,
			`runtime: input "in": Chunk.Arity -1, the input has arity 2`,
			`runtime: create input "neg": Arity -1 is negative`,
		}
		if !slices.Equal(o.sent, want) {
			t.Fatalf("workers=%d: Send errors %q, want %q", w, o.sent, want)
		}
		var wantErrs []string
		if w > 1 {
			wantErrs = []string{fmt.Sprintf("dataflow q: capture made for 1 workers in a runtime of %d", w)}
		}
		if !slices.Equal(o.errs, wantErrs) {
			t.Fatalf("workers=%d: errors %q, want %q", w, o.errs, wantErrs)
		}
	}
	// A chunk whose columns disagree with its arity, on its own.
	s := newSetup(t, "pair", 2)
	s.declare("in", 2)
	bad := &dataflow.Chunk{Arity: 2, Rows: []int64{1}, Times: []uint64{0}, Diffs: []int64{1}}
	if got, want := s.sendErr(Input{Name: "in", Chunk: bad}), `runtime: input "in": dataflow: chunk columns disagree: len(Rows) 1 at arity 2, len(Times) 1, len(Diffs) 1`; got != want {
		t.Fatalf("Send = %q, want %q", got, want)
	}
	// An arity so large that times × arity wraps around to the rows' length
	// (4 × 2^62 is 0; 4 × 2^30 where int is 32 bits): refused, not a
	// worker's index out of range.
	const huge = 1 << (strconv.IntSize - 2)
	s.declare("huge", huge)
	wrap := &dataflow.Chunk{Arity: huge, Times: []uint64{0, 0, 0, 0}, Diffs: []int64{1, 1, 1, 1}}
	if got, want := s.sendErr(Input{Name: "huge", Chunk: wrap}), fmt.Sprintf(`runtime: input "huge": dataflow: chunk columns disagree: len(Rows) 0 at arity %d, len(Times) 4, len(Diffs) 4`, huge); got != want {
		t.Fatalf("Send = %q, want %q", got, want)
	}
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// Case 11b: once a runtime is shut down, Send and SendAll refuse every
// command (ErrShutdown) and the controller records none of them: the same
// CreateInput is refused for the shutdown again, not as already declared.
func TestSendAfterShutdownIsRefused(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 1)
			s.rts[len(s.rts)-1].Shutdown()
			for range 2 {
				if err := s.ctl.Send(CreateInput{Name: "late", Arity: 1}); !errors.Is(err, ErrShutdown) {
					t.Fatalf("Send after Shutdown: %v, want ErrShutdown", err)
				}
			}
			if err := s.ctl.SendAll(CreateInput{Name: "late2", Arity: 1}); !errors.Is(err, ErrShutdown) {
				t.Fatalf("SendAll after Shutdown: %v, want ErrShutdown", err)
			}
			for _, r := range s.rts {
				for _, w := range r.workers {
					w.qmu.Lock()
					n := len(w.queue)
					w.qmu.Unlock()
					if n != 0 {
						t.Fatalf("%v worker %d: %d commands queued after Shutdown", r.Role(), w.index, n)
					}
				}
			}
		})
	}
}

// Case 12: sending to an unknown input, advancing it, dropping an unknown
// dataflow and allowing compaction of an unknown index are errors.
func TestUnknownNamesAreErrors(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, sent *[]string) string {
		c := dataflow.NewChunk(1, 1)
		c.Push([]int64{1}, 0, 1)
		*sent = append(*sent,
			s.sendErr(Input{Name: "nope", Chunk: c}),
			s.sendErr(AdvanceInput{Name: "nope", Frontier: frontier.At(1)}),
			s.sendErr(DropDataflow{ID: "nope"}),
			s.sendErr(AllowCompaction{ID: "nope", Frontier: frontier.At(1)}),
		)
		return ""
	})
	want := []string{
		`runtime: input "nope": unknown input (declare it with CreateInput)`,
		`runtime: advance input "nope": unknown input (declare it with CreateInput)`,
		`runtime: drop dataflow "nope": unknown dataflow`,
		`runtime: allow compaction of "nope": unknown index`,
	}
	for w, o := range outs {
		if !slices.Equal(o.sent, want) || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want Send errors %q", w, o, want)
		}
	}
}

// blockingDesc is a dataflow whose Build, on worker 0, closes started and
// waits for release: it holds that worker inside a command.
func blockingDesc(id string, started, release chan struct{}) dataflow.Desc {
	return dataflow.Desc{
		ID: id, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			if c.Worker() == 0 {
				close(started)
				<-release
			}
			return nil
		},
	}
}

// Case 13: a barrier (Stats) whose context ends returns an error, runs its
// callback on no worker afterwards (no data race with the caller, checked
// under -race), and leaves no goroutine behind when the runtime stops
// without ever reaching it.
func TestTimedOutBarrierNeitherRacesNorLeaks(t *testing.T) {
	for _, w := range agreeWorkers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			before := goruntime.NumGoroutine()
			r, err := New(Options{Role: Solo, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := NewController(r)
			if err != nil {
				t.Fatal(err)
			}
			started, release := make(chan struct{}), make(chan struct{})
			ctl.Send(CreateDataflow{Desc: blockingDesc("block", started, release)})
			<-started
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			st, err := r.Stats(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || st != (Stats{}) {
				t.Fatalf("Stats on a blocked worker = %+v, %v; want zero Stats and DeadlineExceeded", st, err)
			}
			close(release) // the worker now reaches the abandoned barrier
			if st, err := r.Stats(testCtx(t)); err != nil || st.Dataflows != w {
				t.Fatalf("Stats = %+v, %v; want %d dataflows", st, err, w)
			}
			// Barriers a stopped runtime never reaches.
			p, err := New(Options{Role: Solo, Workers: w, Paused: true})
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				if _, err := p.Stats(ctx); err == nil {
					t.Fatal("Stats of a paused runtime returned")
				}
				cancel()
			}
			p.Shutdown()
			ctl.Shutdown()
			deadline := time.Now().Add(5 * time.Second)
			for goruntime.NumGoroutine() > before {
				if time.Now().After(deadline) {
					t.Fatalf("%d goroutines after shutdown, %d before", goruntime.NumGoroutine(), before)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// Case 14: Shutdown and Resume may be called any number of times from any
// goroutine.
func TestShutdownAndResumeAreSafeConcurrently(t *testing.T) {
	for _, w := range agreeWorkers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			for range 20 {
				_, _, ctl, err := Pair(w, spine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				p, err := New(Options{Role: Solo, Workers: w, Paused: true})
				if err != nil {
					t.Fatal(err)
				}
				start := make(chan struct{})
				var wg gosync.WaitGroup
				for range 16 {
					wg.Add(2)
					go func() { defer wg.Done(); <-start; p.Resume() }()
					go func() { defer wg.Done(); <-start; ctl.Shutdown(); p.Shutdown() }()
				}
				close(start)
				wg.Wait()
				p.Resume()
				ctl.Shutdown()
			}
		})
	}
	// The same on runtimes without workers, many times over: two callers
	// that both find the channel open must not both close it.
	for range 3000 {
		r := &Runtime{stop: make(chan struct{}), resume: make(chan struct{})}
		start := make(chan struct{})
		var wg gosync.WaitGroup
		for range 4 {
			wg.Add(2)
			go func() { defer wg.Done(); <-start; r.Resume() }()
			go func() { defer wg.Done(); <-start; r.Shutdown() }()
		}
		close(start)
		wg.Wait()
	}
}

// Case 15: a runtime shut down with a backlog of queued commands applies
// none of them after Shutdown is called.
func TestShutdownDiscardsTheBacklog(t *testing.T) {
	for _, w := range agreeWorkers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			r, err := New(Options{Role: Solo, Workers: w, Paused: true})
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := NewController(r)
			if err != nil {
				t.Fatal(err)
			}
			started, release := make(chan struct{}), make(chan struct{})
			ctl.Send(CreateDataflow{Desc: blockingDesc("block", started, release)})
			var built atomic.Int64
			for i := range 2000 {
				ctl.Send(CreateDataflow{Desc: dataflow.Desc{
					ID: fmt.Sprint("d", i), AsOf: frontier.At(0), Until: frontier.Empty(),
					Build: func(c *dataflow.Context) error {
						if c.Worker() == 0 {
							built.Add(1)
						}
						return nil
					},
				}})
			}
			r.Resume() // worker 0 takes the whole backlog in one go
			<-started
			done := make(chan struct{})
			go func() { r.Shutdown(); close(done) }()
			for !r.stopping() {
				time.Sleep(time.Millisecond)
			}
			before := built.Load()
			close(release)
			<-done
			// Worker 0, blocked in the first command when Shutdown was
			// called, applies none of the backlog behind it.
			if after := built.Load(); after != before {
				t.Fatalf("%d commands applied after Shutdown was called", after-before)
			}
		})
	}
}

// A Build that waits for something outside the runtime (here, for
// nothing: it would wait forever) and watches Context.Done returns once
// the runtime is shut down, so Shutdown, which waits for every Build to
// return, returns too: through the controller or either runtime of the
// pair, with every worker in the Build, whichever runtime builds it. The
// interrupted create is discarded with the commands after it and reports
// nothing, in Solo as in the pair. (A Build that waits without watching
// Done holds Shutdown until it returns; nothing can stop it.)
func TestABuildWatchingDoneLetsShutdownReturn(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		shutters := []string{"controller", "solo"}
		if mode == "pair" {
			shutters = []string{"controller", "maintenance", "interactive"}
		}
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				for _, shutter := range shutters {
					t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v/%s", mode, w, maintained, shutter), func(t *testing.T) {
						s := newSetup(t, mode, w)
						started := make(chan struct{}, w)
						var interrupted atomic.Int32
						s.must(CreateDataflow{Desc: dataflow.Desc{
							ID: "waits", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								started <- struct{}{}
								<-c.Done()
								interrupted.Add(1)
								return errors.New("interrupted")
							},
						}})
						s.must(CreateInput{Name: "after", Arity: 1})
						for range w {
							<-started
						}
						if shutter == "controller" {
							s.ctl.Shutdown()
						} else {
							for _, r := range s.rts {
								if r.Role().String() == shutter {
									r.Shutdown()
								}
							}
						}
						if n := interrupted.Load(); n != int32(w) {
							t.Errorf("%d Builds returned on Done, want %d", n, w)
						}
						if errs := s.ctl.TakeErrors(); len(errs) != 0 {
							t.Errorf("errors after Shutdown: %v, want none", errs)
						}
					})
				}
			}
		}
	}
}

// A Build that returns nil on Context.Done, its operators built, is
// discarded as one that returns an error is: Shutdown was called during
// its create, so nothing of it runs and nothing of it is reported. Its
// operator meets an error in its first step, which the create runs once
// its dataflow is started; started, the dataflow reported it with one
// worker always, and with several whenever a worker took the workers'
// agreement before the stop.
func TestACreateInterruptedByShutdownRunsNothing(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, maintained := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/workers=%d/maintained=%v", mode, w, maintained), func(t *testing.T) {
					for range 20 {
						s := newSetup(t, mode, w)
						started := make(chan struct{}, w)
						var reads atomic.Int64
						s.must(CreateDataflow{Desc: dataflow.Desc{
							ID: "waits", Maintained: maintained, AsOf: frontier.At(0), Until: frontier.Empty(),
							Build: func(c *dataflow.Context) error {
								b := c.NewOperator("faults")
								dataflow.AddOutput[*dataflow.Chunk](b)
								if err := b.Build(&faultsOp{df: "waits", faults: 1, fail: c.Failer(), reads: &reads}); err != nil {
									return err
								}
								started <- struct{}{}
								<-c.Done()
								return nil
							},
						}})
						for range w {
							<-started
						}
						s.ctl.Shutdown()
						if errs := s.ctl.TakeErrors(); len(errs) != 0 {
							t.Fatalf("errors after Shutdown: %v, want none", errs)
						}
					}
				})
			}
		}
	}
}

// An imported arrangement describes itself from the moment it exists — its
// key columns, its number of columns and each half's arity — not from its
// first batch: here the index has no data at all.
func TestImportedArrangementDescribesItself(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.declare("in", 3)
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 3, []int{1}, 0, nil)})
		got := make(chan string, s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				got <- fmt.Sprintf("%v %q key %v arity %d oks %+v errs %+v", a.Flavor, a.Index, a.Key, a.Arity, a.Oks.Arity, a.Errs.Arity)
				return nil
			},
		}})
		if err := s.ctl.Sync(testCtx(s.tb)); err != nil {
			s.tb.Fatal(err)
		}
		return <-got
	})
	for w, o := range outs {
		if want := `imported "idx" key [1] arity 3 oks key=1 val=2 errs key=1 val=0`; o.answer != want {
			t.Fatalf("workers=%d: %s, want %s", w, o.answer, want)
		}
	}
}

// An index whose create failed is in the controller's books until its
// dataflow is dropped, so compacting it is accepted, and is then that
// command's error on the runtime that would hold the index: an error
// that names the failed create, not an index the user never heard of
// being unknown. So for a Maintained index and a query's, compacted to a
// time and to {} (which frees the id), in Solo and the pair with either
// runtime behind; the id then serves a create that builds.
func TestCompactingAFailedCreatesIndexNamesTheCreate(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10})                                       // commands 1, 2
				s.advance("in", 2, frontier.At(1))                                          // 3
				s.must(CreateDataflow{Desc: exportsDesc("maintain x", []string{"x"}, nil)}) // 4: fails
				s.must(CreateDataflow{Desc: reexportDesc("q", "missing", "y", false)})      // 5: fails
				s.must(AllowCompaction{ID: "x", Frontier: frontier.At(1)})                  // 6
				s.must(AllowCompaction{ID: "y", Frontier: frontier.At(1)})                  // 7
				s.must(AllowCompaction{ID: "x", Frontier: frontier.Empty()})                // 8
				s.must(AllowCompaction{ID: "y", Frontier: frontier.Empty()})                // 9
				s.resume()
				if err := s.ctl.Sync(testCtx(s.tb)); err != nil {
					s.tb.Fatal(err)
				}
				var got []string
				for _, e := range s.ctl.TakeErrors() {
					got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
				}
				// The index ids are free now (the failed creates keep
				// their dataflow ids): an index exported under one answers.
				again := indexDesc("x", "in", 2, []int{0}, 0, nil)
				again.ID = "maintain x again"
				s.must(CreateDataflow{Desc: again})
				cp := dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("read x", "x", 0, frontier.At(1), cp)})
				return strings.Join(got, "\n") + "\nread: " + read(cp, 0)
			})
			want := strings.Join([]string{
				`4: dataflow maintain x: Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`,
				`5: dataflow q: import of unknown index "missing"`,
				`6: runtime: allow compaction of "x": the create of dataflow "maintain x", which exports it, failed`,
				`7: runtime: allow compaction of "y": the create of dataflow "q", which exports it, failed`,
				`8: runtime: allow compaction of "x": the create of dataflow "maintain x", which exports it, failed`,
				`9: runtime: allow compaction of "y": the create of dataflow "q", which exports it, failed`,
				`read: map[[1 10]:1]`,
			}, "\n")
			for w, o := range outs {
				if o.answer != want || len(o.errs) != 0 {
					t.Fatalf("workers=%d: errors\n%s\nthen %q\nwant\n%s", w, o.answer, o.errs, want)
				}
			}
		})
	}
}

// Importing an index whose create failed is the importer's error, naming
// the failed create, as compacting it is: not an index the user declared
// being unknown. So for a query and a Maintained reader of a Maintained
// index, and a query reading a query's, in Solo and the pair with either
// runtime behind; a dataflow importing an index that it exports itself
// (its own create, not failed but in progress) finds it unknown.
func TestImportingAFailedCreatesIndexNamesTheCreate(t *testing.T) {
	self := exportsDesc("selfish", []string{"s"}, []string{"s"})
	build := self.Build
	self.Build = func(c *dataflow.Context) error {
		if _, err := c.ImportIndex("s"); err != nil {
			return err
		}
		return build(c)
	}
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10})                                       // commands 1, 2
				s.advance("in", 2, frontier.At(1))                                          // 3
				s.must(CreateDataflow{Desc: exportsDesc("maintain x", []string{"x"}, nil)}) // 4: fails
				s.must(CreateDataflow{Desc: reexportDesc("q", "missing", "y", false)})      // 5: fails
				s.must(CreateDataflow{Desc: readDesc("read x", "x", 0, frontier.At(1), dataflow.NewCapture(s.workers))})
				s.must(CreateDataflow{Desc: reexportDesc("m", "x", "z", true)})
				s.must(CreateDataflow{Desc: readDesc("read y", "y", 0, frontier.At(1), dataflow.NewCapture(s.workers))})
				s.must(CreateDataflow{Desc: self}) // 9
				s.resume()
				if err := s.ctl.Sync(testCtx(s.tb)); err != nil {
					s.tb.Fatal(err)
				}
				var got []string
				for _, e := range s.ctl.TakeErrors() {
					got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
				}
				return strings.Join(got, "\n")
			})
			want := strings.Join([]string{
				`4: dataflow maintain x: Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`,
				`5: dataflow q: import of unknown index "missing"`,
				`6: dataflow read x: import of index "x": the create of dataflow "maintain x", which exports it, failed`,
				`7: dataflow m: import of index "x": the create of dataflow "maintain x", which exports it, failed`,
				`8: dataflow read y: import of index "y": the create of dataflow "q", which exports it, failed`,
				`9: dataflow selfish: import of unknown index "s"`,
			}, "\n")
			for w, o := range outs {
				if o.answer != want || len(o.errs) != 0 {
					t.Fatalf("workers=%d: errors\n%s\nthen %q\nwant\n%s", w, o.answer, o.errs, want)
				}
			}
		})
	}
}

// The import of an index whose create failed names the create exporting
// the id now, not one before it: a failed create dropped and made again
// under its id, successfully, is read; a good one dropped and followed by
// a failed create of another id exporting the index names that one; once
// that one is dropped, or the index freed, the index is unknown again; and
// a good create after a failed one's index is freed is read. In Solo and
// the pair, with either runtime behind, for a query and a Maintained
// reader alike.
func TestImportingAnIndexNamesItsCurrentCreate(t *testing.T) {
	good := func(id string) dataflow.Desc { return exportsDesc(id, []string{"x"}, []string{"x"}) }
	bad := func(id string) dataflow.Desc { return exportsDesc(id, []string{"x"}, nil) }
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		for _, maintained := range []bool{false, true} {
			t.Run(fmt.Sprintf("lag=%v/maintained reader=%v", lag, maintained), func(t *testing.T) {
				outs := agree(t, lag, func(s *setup, _ *[]string) string {
					reader := func(id string) dataflow.Desc {
						return reexportDesc(id, "x", "copy of x by "+id, maintained)
					}
					s.send("in", 2, []int64{0, 1, 1, 10})                        // commands 1, 2
					s.advance("in", 2, frontier.At(1))                           // 3
					s.must(CreateDataflow{Desc: bad("a")})                       // 4: fails
					s.must(DropDataflow{ID: "a"})                                // 5
					s.must(CreateDataflow{Desc: good("a")})                      // 6
					s.must(CreateDataflow{Desc: reader("r1")})                   // 7: reads a's
					s.must(DropDataflow{ID: "r1"})                               // 8
					s.must(DropDataflow{ID: "a"})                                // 9
					s.must(CreateDataflow{Desc: bad("b")})                       // 10: fails
					s.must(CreateDataflow{Desc: reader("r2")})                   // 11: names b
					s.must(DropDataflow{ID: "b"})                                // 12
					s.must(CreateDataflow{Desc: reader("r3")})                   // 13: unknown
					s.must(CreateDataflow{Desc: bad("c")})                       // 14: fails
					s.must(CreateDataflow{Desc: reader("r4")})                   // 15: names c
					s.must(AllowCompaction{ID: "x", Frontier: frontier.Empty()}) // 16: c failed
					s.must(CreateDataflow{Desc: reader("r5")})                   // 17: unknown
					s.must(CreateDataflow{Desc: good("d")})                      // 18
					s.must(CreateDataflow{Desc: reader("r6")})                   // 19: reads d's
					s.resume()
					if err := s.ctl.Sync(testCtx(s.tb)); err != nil {
						s.tb.Fatal(err)
					}
					var got []string
					for _, e := range s.ctl.TakeErrors() {
						got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
					}
					return strings.Join(got, "\n")
				})
				differ := `Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`
				want := strings.Join([]string{
					`4: dataflow a: ` + differ,
					`10: dataflow b: ` + differ,
					`11: dataflow r2: import of index "x": the create of dataflow "b", which exports it, failed`,
					`13: dataflow r3: import of unknown index "x"`,
					`14: dataflow c: ` + differ,
					`15: dataflow r4: import of index "x": the create of dataflow "c", which exports it, failed`,
					`16: runtime: allow compaction of "x": the create of dataflow "c", which exports it, failed`,
					`17: dataflow r5: import of unknown index "x"`,
				}, "\n")
				for w, o := range outs {
					if o.answer != want || len(o.errs) != 0 {
						t.Fatalf("workers=%d: errors\n%s\nthen %q\nwant\n%s", w, o.answer, o.errs, want)
					}
				}
			})
		}
	}
}

// A create's Desc.Exports is the controller's once sent, as it validated
// it: a caller that reuses the slice for its next create (here, rewrites
// it before any runtime has applied the first) changes nothing of the
// create it sent. Every runtime, Solo or either of the pair, exports and
// settles the ids the controller accepted, so the controller's book and
// the runtimes' agree: the index answers and its compaction is applied.
func TestACreatesExportsAreCopiedWhenSent(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				// Every runtime paused: none applies the create before the
				// caller rewrites its slice.
				var rts []*Runtime
				if mode == "solo" {
					r, err := New(Options{Role: Solo, Workers: w, Paused: true})
					if err != nil {
						t.Fatal(err)
					}
					rts = append(rts, r)
				} else {
					regs := newRegs(w)
					for _, role := range []Role{Maintenance, Interactive} {
						r, err := New(Options{Role: role, Workers: w, Registries: regs, Paused: true})
						if err != nil {
							t.Fatal(err)
						}
						rts = append(rts, r)
					}
				}
				ctl, err := NewController(rts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(ctl.Shutdown)
				s := &setup{mode: mode, workers: w, ctl: ctl, rts: rts, tb: t}
				s.send("in", 2, []int64{0, 1, 1, 10})
				s.advance("in", 2, frontier.At(1))
				exports := []string{"x"}
				desc := indexDesc("x", "in", 2, []int{0}, 0, nil)
				desc.Exports = exports
				s.must(CreateDataflow{Desc: desc})
				exports[0] = "not sent" // reused before any runtime applied the create
				s.must(AllowCompaction{ID: "x", Frontier: frontier.At(1)})
				cp := dataflow.NewCapture(w)
				s.must(CreateDataflow{Desc: readDesc("q", "x", 1, frontier.At(2), cp)})
				s.advance("in", 2, frontier.At(2))
				if got := s.sendErr(AllowCompaction{ID: "not sent", Frontier: frontier.At(1)}); got != `runtime: allow compaction of "not sent": unknown index` {
					t.Fatalf("compaction of the id written after the send: %q, want the controller's refusal", got)
				}
				s.resume()
				if got := read(cp, 1); got != "map[[1 10]:1]" {
					t.Errorf("the query reads %s, want map[[1 10]:1]", got)
				}
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				if errs := s.takeErrors(); len(errs) != 0 {
					t.Errorf("errors %q, want none", errs)
				}
			})
		}
	}
}

// Errors a user reads: one per failed command, tied to the command (its
// number and the command itself), with the exact text, however many
// workers and runtimes met it; TakeErrors consumes them.
func TestOneErrorPerFailedCommand(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 4)
			s.declare("in", 2)                         // command 1
			bad := CreateDataflow{Desc: dataflow.Desc{ // command 2
				ID: "q", AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					_, err := c.ImportIndex("missing")
					return err
				},
			}}
			s.must(bad)
			// Commands 3 and 4: an index whose Build fails, then its
			// compaction, which every runtime (both, in the pair) refuses.
			s.must(CreateDataflow{Desc: exportsDesc("maintain x", []string{"x"}, nil)})
			s.must(AllowCompaction{ID: "x", Frontier: frontier.At(1)})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			errs := s.ctl.Errors()
			want := []string{
				`2: dataflow q: import of unknown index "missing"`,
				`3: dataflow maintain x: Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`,
				`4: runtime: allow compaction of "x": the create of dataflow "maintain x", which exports it, failed`,
			}
			var got []string
			for _, e := range errs {
				got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, r := range s.rts {
				if r.Err() == nil {
					continue
				}
				lines := strings.Split(r.Err().Error(), "\n")
				if len(slices.Compact(slices.Clone(lines))) != len(lines) {
					t.Fatalf("%v runtime reports an error per worker:\n%v", r.Role(), r.Err())
				}
			}
			if fmt.Sprint(errs[0].Command) != fmt.Sprint(bad) {
				t.Fatalf("error of command %v, want %v", errs[0].Command, bad)
			}
			if got := s.ctl.TakeErrors(); len(got) != 3 || s.ctl.Err() != nil {
				t.Fatalf("TakeErrors %v, then Err %v: want the error taken once", got, s.ctl.Err())
			}
		})
	}
}

// An error taken while the pair's Interactive runtime is behind is not
// returned again when that runtime meets it after the take: TakeErrors
// returns a command's error once, however many runtimes meet it and when.
func TestATakenErrorIsNotReturnedAgain(t *testing.T) {
	s := newSetup(t, "pair", 2)
	reached, release := holdInteractive(s)
	<-reached
	s.declare("in", 2)
	s.must(CreateDataflow{Desc: exportsDesc("maintain x", []string{"x"}, nil)}) // fails to build
	s.must(AllowCompaction{ID: "x", Frontier: frontier.At(1)})                  // its create failed, on both runtimes
	if _, err := s.role(Maintenance).Stats(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	first := s.ctl.TakeErrors()
	release()
	if err := s.ctl.Sync(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	second := s.ctl.TakeErrors()
	var got []string
	for _, e := range append(first, second...) {
		got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
	}
	want := []string{
		`2: dataflow maintain x: Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`,
		`3: runtime: allow compaction of "x": the create of dataflow "maintain x", which exports it, failed`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("errors taken before and after the Interactive runtime caught up:\n%s\nwant each once:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Every runtime has applied both commands now: the controller keeps
	// no memory of what it took of them.
	s.ctl.mu.Lock()
	kept := len(s.ctl.taken)
	s.ctl.mu.Unlock()
	if kept != 0 {
		t.Errorf("the controller remembers %d taken errors of commands every runtime applied", kept)
	}
}

// Every command the controller refuses, with the exact text a user reads;
// a refused command reaches no runtime (Solo and the pair alike).
func TestControllerRefusalsAreExact(t *testing.T) {
	build := func(*dataflow.Context) error { return nil }
	desc := func(id string, asOf, until frontier.Frontier, exports ...string) CreateDataflow {
		return CreateDataflow{Desc: dataflow.Desc{ID: id, AsOf: asOf, Until: until, Exports: exports, Build: build}}
	}
	cases := []struct {
		cmd  Command
		want string
	}{
		{nil, `runtime: nil command`},
		{CreateInput{Arity: 1}, `runtime: create input: empty Name`},
		{CreateInput{Name: "in", Arity: 3}, `runtime: create input "in": already declared`},
		{AdvanceInput{Name: "in", Frontier: frontier.At(1)}, `runtime: advance input "in": Frontier {1} is before the input frontier {2}`},
		{CreateDataflow{Desc: dataflow.Desc{AsOf: frontier.At(0), Until: frontier.Empty(), Build: build}}, `runtime: create dataflow: empty Desc.ID`},
		{CreateDataflow{Desc: dataflow.Desc{ID: "d", AsOf: frontier.At(0), Until: frontier.Empty()}}, `runtime: create dataflow "d": Desc.Build is nil`},
		{desc("d", frontier.At(3), frontier.At(3)), `runtime: create dataflow "d": Desc.AsOf {3} is not before Desc.Until {3}`},
		{desc("d", frontier.At(0), frontier.Empty(), "x", "x"), `runtime: create dataflow "d": Desc.Exports lists "x" twice`},
		{desc("d", frontier.At(0), frontier.Empty(), ""), `runtime: create dataflow "d": empty id in Desc.Exports`},
		{desc("d", frontier.At(0), frontier.Empty(), "idx"), `runtime: create dataflow "d": Desc.Exports: index "idx" is exported by dataflow "maintain idx"`},
	}
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 2)
		s.advance("in", 2, frontier.At(2))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		for _, c := range cases {
			if got := s.sendErr(c.cmd); got != c.want {
				t.Errorf("%s: Send(%#v) = %q, want %q", mode, c.cmd, got, c.want)
			}
		}
		st, err := s.rts[0].Stats(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if mode == "solo" && st.Dataflows != 2 { // one dataflow on each of 2 workers
			t.Errorf("solo: %d dataflows after the refusals, want 2", st.Dataflows)
		}
		// A closed input (advanced to {}) is named closed, not "before
		// the input frontier {}".
		s.declare("shut", 1)
		s.must(AdvanceInput{Name: "shut", Frontier: frontier.Empty()})
		closedRow := dataflow.NewChunk(1, 1)
		closedRow.Push([]int64{7}, 3, 1)
		for _, c := range []struct {
			cmd  Command
			want string
		}{
			{Input{Name: "shut", Chunk: closedRow}, `runtime: input "shut": the input is closed (advanced to {}): it takes no more rows`},
			{AdvanceInput{Name: "shut", Frontier: frontier.At(5)}, `runtime: advance input "shut": the input is closed (advanced to {}): its frontier moves no more`},
		} {
			if got := s.sendErr(c.cmd); got != c.want {
				t.Errorf("%s: Send(%#v) = %q, want %q", mode, c.cmd, got, c.want)
			}
		}
	}
}

// Errors of a Build, with the exact text: an input read at another arity
// than declared, an arrangement by a column the collection lacks.
func TestBuildErrorsAreExact(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("a", "in", 3, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: indexDesc("b", "in", 2, []int{5}, 0, nil)})
		return ""
	})
	want := []string{
		`dataflow maintain a: input "in" has arity 2, not 3`,
		`dataflow maintain b: arrange: key column 5 of a 2-column collection`,
	}
	for w, o := range outs {
		if !slices.Equal(o.errs, want) {
			t.Fatalf("workers=%d: errors %q, want %q", w, o.errs, want)
		}
	}
}

// A capture records rows in the collection's column order, whatever
// columns the arrangement is keyed by, for an imported index too.
func TestCaptureRecordsCollectionOrder(t *testing.T) {
	outs := agree(t, Solo, func(s *setup, _ *[]string) string {
		s.send("in", 3, []int64{0, 1, 1, 20, 300}, []int64{0, 1, 2, 10, 100})
		s.advance("in", 3, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 3, []int{2, 1}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
		return read(cp, 0)
	})
	for w, o := range outs {
		if want := "map[[1 20 300]:1 [2 10 100]:1]"; o.answer != want || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want %s", w, o, want)
		}
	}
}

// An input created with NoHistory feeds the dataflows that read it before
// its first update, on every worker alike; a dataflow reading it created
// after an update is refused on every worker (even those its rows did not
// reach), exports nothing, and the readers before it keep answering.
func TestNoHistoryInputRefusesALateReader(t *testing.T) {
	rows := [][]int64{{0, 1, 1, 10}, {0, 1, 2, 20}, {0, 1, 3, 30}}
	more := [][]int64{{1, 1, 4, 40}, {1, -1, 1, 10}}
	outs := agree(t, Maintenance, func(s *setup, _ *[]string) string {
		s.declared = map[string]bool{"in": true}
		s.must(CreateInput{Name: "in", Arity: 2, NoHistory: true})
		s.advance("in", 2, frontier.At(0))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), cp)})
		s.send("in", 2, rows...)
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("late", "in", 2, []int{0}, 0, nil)})
		late := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("qlate", "late", 0, frontier.Empty(), late)})
		s.send("in", 2, more...)
		s.advance("in", 2, frontier.At(2))
		s.resume()
		return read(cp, 0) + " " + read(cp, 1)
	})
	want := fmt.Sprint(model(rows, 0)) + " " + fmt.Sprint(model(append(rows, more...), 1))
	for w, o := range outs {
		if o.answer != want {
			t.Fatalf("workers=%d: the early reader read %s, want %s", w, o.answer, want)
		}
		wantErrs := []string{
			`dataflow maintain late: input "in": ` + dataflow.ErrInputHistory.Error(),
			`dataflow qlate: import of index "late": the create of dataflow "maintain late", which exports it, failed`,
		}
		if !slices.Equal(o.errs, wantErrs) {
			t.Fatalf("workers=%d: errors %q, want %q", w, o.errs, wantErrs)
		}
	}
}

// A Build that panics, on one worker or on all, is its create's error
// (dataflow.ErrBuildPanicked, once), not a crash: what it made is dropped
// on every worker (R5), the runtime goes on, and Solo and the pair agree.
// Exporting a nil arrangement is an error naming the dataflow.
func TestAPanickingBuildIsAnError(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, on := range []int{-1, 1} {
			t.Run(fmt.Sprintf("%s/panics-on=%d", mode, on), func(t *testing.T) {
				s := newSetup(t, mode, 2)
				s.declare("in", 2)
				desc := indexDesc("idx", "in", 2, []int{0}, 0, nil)
				build := desc.Build
				desc.Build = func(c *dataflow.Context) error {
					if err := build(c); err != nil {
						return err
					}
					if on < 0 || c.Worker() == on {
						panic("boom in Build")
					}
					return nil
				}
				s.must(CreateDataflow{Desc: desc})
				nilExport := dataflow.Desc{ID: "nil export", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
					Exports: []string{"n"}, Build: func(c *dataflow.Context) error { return c.Export("n", nil) }}
				s.must(CreateDataflow{Desc: nilExport})
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				errs := s.ctl.TakeErrors()
				if len(errs) != 2 || !errors.Is(errs[0], dataflow.ErrBuildPanicked) ||
					!strings.Contains(errs[0].Error(), "dataflow maintain idx: Build panicked: boom in Build") ||
					errs[1].Error() != `dataflow nil export: export "n" of a nil arrangement` {
					t.Fatalf("errors %v, want the panic and the nil export, once each", errs)
				}
				// Nothing of the failed create is left; its id is kept until
				// dropped, and then serves a create that builds.
				s.must(DropDataflow{ID: "maintain idx"})
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.send("in", 2, []int64{0, 1, 1, 2}) // time 0, diff 1, row [1 2]
				s.advance("in", 2, frontier.At(1))
				cp := dataflow.NewCapture(2)
				s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
				if got := read(cp, 0); got != "map[[1 2]:1]" {
					t.Fatalf("after the panic: %s, want map[[1 2]:1]", got)
				}
				if err := s.ctl.Err(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// A query's export freed by AllowCompaction to {} may be exported again by
// a maintained dataflow, and that one freed and exported again: the
// Maintenance runtime, which records the query's export as foreign, forgets
// that record when the controller accepts another export of the id (it
// was freed), as the runtime rendering the query dropped the index. Solo
// and the pair agree.
func TestAFreedQueryExportIsExportedAgain(t *testing.T) {
	outs := agree(t, -1, func(s *setup, _ *[]string) string {
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: reexportDesc("q", "idx", "y", false)})
		s.must(AllowCompaction{ID: "y", Frontier: frontier.Empty()})
		s.must(CreateDataflow{Desc: indexDesc("y", "in", 2, []int{1}, 0, nil)})
		s.must(AllowCompaction{ID: "y", Frontier: frontier.At(1)})
		s.must(AllowCompaction{ID: "y", Frontier: frontier.Empty()})
		again := indexDesc("y", "in", 2, []int{1}, 0, nil)
		again.ID = "maintain y again"
		s.must(CreateDataflow{Desc: again})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q2", "y", 0, frontier.At(1), cp)})
		return read(cp, 0)
	})
	for w, o := range outs {
		if want := fmt.Sprint(map[string]int64{"[1 10]": 1}); o.answer != want || len(o.errs) != 0 {
			t.Fatalf("workers=%d: %+v, want %s and no error", w, o, want)
		}
	}
}

// A maintained dataflow that imports an index a query exports is refused
// alike in Solo and in the pair (dataflow.ErrMaintainedReadsQuery): the
// Maintenance runtime renders no query, so it could not read one, and Solo
// must not answer what the pair cannot. Every runtime decides it from the
// commands alone, so it holds also for a query whose Build failed (its
// index exists nowhere) and, once the query's export is freed by
// AllowCompaction to {}, the import is of an unknown index on both.
func TestAMaintainedDataflowReadsNoQuerysIndex(t *testing.T) {
	failing := reexportDesc("q", "idx", "y", false)
	build := failing.Build
	failing.Build = func(c *dataflow.Context) error {
		if err := build(c); err != nil {
			return err
		}
		return errors.New("the query's build fails")
	}
	for _, tc := range []struct {
		name  string
		query dataflow.Desc
		free  bool
		want  []string
	}{
		{"built", reexportDesc("q", "idx", "y", false), false, []string{
			`dataflow m: import of index "y", which query "q" exports: dataflow: a Maintained dataflow reads no index a query exports`}},
		{"failed", failing, false, []string{
			`dataflow m: import of index "y", which query "q" exports: dataflow: a Maintained dataflow reads no index a query exports`,
			`dataflow q: the query's build fails`}},
		{"freed", reexportDesc("q", "idx", "y", false), true, []string{
			`dataflow m: import of unknown index "y"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outs := agree(t, -1, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10})
				s.advance("in", 2, frontier.At(1))
				s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
				s.must(CreateDataflow{Desc: tc.query})
				if tc.free {
					s.must(AllowCompaction{ID: "y", Frontier: frontier.Empty()})
				}
				s.must(CreateDataflow{Desc: reexportDesc("m", "y", "z", true)})
				return ""
			})
			for w, o := range outs {
				if !slices.Equal(o.errs, tc.want) {
					t.Fatalf("workers=%d: errors %q, want %q", w, o.errs, tc.want)
				}
			}
		})
	}
}

// A maintained dataflow that reads an input never declared (a misspelt
// name) fails its create (dataflow.ErrUndeclaredInput) in Solo and the pair
// alike, and a later CreateInput of that name with any arity is applied by
// every worker as the controller accepted it (R3): before, the dataflow
// declared the input with the arity it read, waited for it forever, and
// the later CreateInput failed on every worker after the controller took it.
func TestAnUndeclaredInputIsTheCreatesError(t *testing.T) {
	outs := agree(t, -1, func(s *setup, _ *[]string) string {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: indexDesc("idx", "inn", 2, []int{0}, 0, nil)})
		s.send("inn", 1, []int64{0, 1, 7})
		s.advance("inn", 1, frontier.At(1))
		s.must(DropDataflow{ID: "maintain idx"})
		s.must(CreateDataflow{Desc: indexDesc("idx", "inn", 1, []int{0}, 0, nil)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.At(1), cp)})
		return read(cp, 0)
	})
	for w, o := range outs {
		want := outcome{answer: "map[[7]:1]", errs: []string{`dataflow maintain idx: input "inn": input not declared (CreateInput)`}}
		if fmt.Sprint(o) != fmt.Sprint(want) {
			t.Fatalf("workers=%d: %+v, want %+v", w, o, want)
		}
	}
}

// A Maintained re-export is published at its dataflow's as_of: a query
// reads it, directly or through a query's re-export of it, from there on,
// and one created below is refused in Solo as in the pair (whose queries
// read the publication, held at the as_of); a Maintained reader reads the
// traces from their since, in both alike.
func TestMaintainedReexportIsReadFromItsAsOf(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		t.Run(fmt.Sprintf("lag=%v", lag), func(t *testing.T) {
			outs := agree(t, lag, func(s *setup, _ *[]string) string {
				s.send("in", 2, []int64{0, 1, 1, 10}, []int64{4, 1, 2, 20})
				s.advance("in", 2, frontier.At(10))
				s.must(CreateDataflow{Desc: indexDesc("base", "in", 2, []int{0}, 0, nil)})
				alias := reexportDesc("m alias", "base", "alias", true)
				alias.AsOf = frontier.At(5)
				s.must(CreateDataflow{Desc: alias})
				early, onTime, viaQuery, maintained := dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers), dataflow.NewCapture(s.workers)
				s.must(CreateDataflow{Desc: readDesc("early", "alias", 3, frontier.At(4), early)})
				s.must(CreateDataflow{Desc: readDesc("on time", "alias", 5, frontier.At(6), onTime)})
				// The query's alias, created at 7, is read from the
				// Maintained export's as_of, 5, not from its own.
				q := reexportDesc("q alias", "alias", "q out", false)
				q.AsOf = frontier.At(7)
				s.must(CreateDataflow{Desc: q})
				s.must(CreateDataflow{Desc: readDesc("via query", "q out", 3, frontier.At(4), dataflow.NewCapture(s.workers))})
				s.must(CreateDataflow{Desc: readDesc("via query at 6", "q out", 6, frontier.At(7), viaQuery)})
				m := readDesc("maintained", "alias", 3, frontier.At(4), maintained)
				m.Maintained = true
				s.must(CreateDataflow{Desc: m})
				s.resume()
				return fmt.Sprintf("on time %s; via query at 6 %s; maintained %s", read(onTime, 5), read(viaQuery, 6), read(maintained, 3))
			})
			both := map[string]int64{"[1 10]": 1, "[2 20]": 1}
			want := fmt.Sprintf("on time %v; via query at 6 %v; maintained %v", both, both, map[string]int64{"[1 10]": 1})
			refused := func(df, id string) string {
				return fmt.Sprintf("dataflow %s: index %q: since {5}, as_of {3}: %v", df, id, dataflow.ErrCompactedBeyondAsOf)
			}
			wantErrs := []string{refused("early", "alias"), refused("via query", "q out")}
			for w, o := range outs {
				if o.answer != want {
					t.Errorf("workers=%d: %s\nwant %s", w, o.answer, want)
				}
				if !slices.Equal(o.errs, wantErrs) {
					t.Errorf("workers=%d: errors\n%q\nwant\n%q", w, o.errs, wantErrs)
				}
			}
		})
	}
}

// countedErr is a Build's error that counts the reads of its text.
type countedErr struct {
	msg   string
	reads *atomic.Int64
}

func (e countedErr) Error() string { e.reads.Add(1); return e.msg }

// faultsOp is an operator that meets faults errors in its first step
// (dataflow.Context.Failer), each its own, whose reads it counts.
type faultsOp struct {
	df     string
	faults int
	fail   func(error)
	reads  *atomic.Int64
	done   bool
}

func (o *faultsOp) Step(frontier.Frontier) frontier.Frontier {
	if !o.done {
		o.done = true
		for i := range o.faults {
			o.fail(countedErr{fmt.Sprintf("dataflow %s: fault %03d", o.df, i), o.reads})
		}
	}
	return frontier.Empty()
}

func (o *faultsOp) Shutdown() {}

// faultsDesc is a Maintained dataflow whose one operator meets faults
// errors in its first step, which it runs while its create is applied.
func faultsDesc(id string, faults int, reads *atomic.Int64) dataflow.Desc {
	return dataflow.Desc{
		ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("faults")
			dataflow.AddOutput[*dataflow.Chunk](b)
			return b.Build(&faultsOp{df: id, faults: faults, fail: c.Failer(), reads: reads})
		},
	}
}

// Errors nobody takes cost each a few reads of its text however many are
// kept, not one more read of every kept error of its command for each new
// one (which made many errors quadratic in their number, in the runtime
// recording them and in every Errors). Each failed create's error is its
// Build's own, whose reads it counts, as are the many errors one
// dataflow's operator meets in its first passes, alike on every worker
// (a step's errors, of no command); every
// AllowCompaction of the failed index is refused by every worker of every
// runtime, and reported once. The errors come in command order (a
// command's by text), and TakeErrors takes each once.
func TestKeptErrorsAreReadAFewTimesEach(t *testing.T) {
	const n = 400
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, w), func(t *testing.T) {
				s := newSetup(t, mode, w)
				s.declare("in", 2)                                                          // command 1
				s.must(CreateDataflow{Desc: exportsDesc("maintain x", []string{"x"}, nil)}) // 2
				var reads atomic.Int64
				want := []string{`2: dataflow maintain x: Desc.Exports ["x"], Build exported []: dataflow: exports differ from Desc.Exports`}
				for k := range n {
					seq := k + 3
					if k%2 == 0 {
						s.must(AllowCompaction{ID: "x", Frontier: frontier.At(uint64(k))})
						want = append(want, fmt.Sprintf(`%d: runtime: allow compaction of "x": the create of dataflow "maintain x", which exports it, failed`, seq))
						continue
					}
					id := fmt.Sprint("d", k)
					msg := fmt.Sprintf("dataflow %s: fails", id)
					s.must(CreateDataflow{Desc: dataflow.Desc{
						ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
						Build: func(*dataflow.Context) error { return countedErr{msg, &reads} },
					}})
					want = append(want, fmt.Sprintf("%d: %s", seq, msg))
				}
				const faults = 300
				s.must(CreateDataflow{Desc: faultsDesc("many", faults, &reads)})
				// A step's errors, the first passes' a create runs
				// included, are no command's (Seq 0): they come first.
				var stepErrs []string
				for i := range faults {
					stepErrs = append(stepErrs, fmt.Sprintf("0: dataflow many: fault %03d", i))
				}
				want = append(stepErrs, want...)
				if err := s.ctl.Sync(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				texts := func(errs []*CommandError) []string {
					var out []string
					for _, e := range errs {
						out = append(out, fmt.Sprintf("%d: %v", e.Seq, e))
					}
					return out
				}
				before := reads.Load()
				for range 3 {
					if got := texts(s.ctl.Errors()); !slices.Equal(got, want) {
						t.Fatalf("Errors: %d errors\n%s\nwant %d\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
					}
				}
				// Recording an error reads it at most twice on each
				// worker that meets it (once to name its dataflow), and
				// each Errors at most once besides the formatting above.
				counted := int64(n/2 + faults)
				if most := 2 * int64(w) * counted; before > most {
					t.Errorf("%d errors read %d times as they were recorded, want at most %d", counted, before, most)
				}
				if got, most := reads.Load()-before-3*counted, 3*counted; got > most {
					t.Errorf("%d errors read %d times by three Errors, want at most %d", counted, got, most)
				}
				if got := texts(s.ctl.TakeErrors()); !slices.Equal(got, want) {
					t.Fatalf("TakeErrors: %d errors, want %d", len(got), len(want))
				}
				if got := s.ctl.TakeErrors(); len(got) != 0 {
					t.Fatalf("TakeErrors again: %d errors, want none", len(got))
				}
			})
		}
	}
}

// What Errors and TakeErrors return, error by error, as the runtimes
// record them (Runtime.fail, what a worker calls): one per command and
// text however many workers and runtimes met it (the first runtime's),
// by command and then text; a taken error of a command is not returned
// again when a runtime behind meets it after the take, while an error no
// command caused (Seq 0, met while stepping) is, each time it is met
// again after a take.
func TestErrorsAndTakeErrorsErrorByError(t *testing.T) {
	m, i, ctl, err := Pair(1, spine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	create := CreateInput{Name: "c"}
	i.fail(2, create, errors.New("b"))
	m.fail(2, create, errors.New("b"))
	m.fail(2, create, errors.New("a"))
	m.fail(0, nil, errors.New("overflow"))
	m.fail(0, nil, errors.New("overflow"))
	i.fail(1, create, errors.New("z"))
	m.fail(2, create, errors.New("b"))
	list := func(errs []*CommandError) string {
		var out []string
		for _, e := range errs {
			out = append(out, fmt.Sprintf("%d:%v", e.Seq, e))
		}
		return strings.Join(out, " ")
	}
	errs := ctl.Errors()
	if got, want := list(errs), "0:overflow 1:z 2:a 2:b"; got != want {
		t.Fatalf("Errors: %s, want %s", got, want)
	}
	if errs[3].Err != m.errs[0].Err {
		t.Errorf("the error of command 2 met by both runtimes is not the Maintenance runtime's")
	}
	if got := list(ctl.Errors()); got != list(errs) {
		t.Fatalf("Errors again: %s, want %s", got, list(errs))
	}
	if got := list(ctl.TakeErrors()); got != list(errs) {
		t.Fatalf("TakeErrors: %s, want %s", got, list(errs))
	}
	if m.Err() != nil || i.Err() != nil || ctl.Err() != nil {
		t.Fatalf("after the take: %v, %v, %v, want nothing", m.Err(), i.Err(), ctl.Err())
	}
	// Met again after the take, as by a runtime behind.
	i.fail(2, create, errors.New("a"))
	m.fail(0, nil, errors.New("overflow"))
	i.fail(3, create, errors.New("new"))
	i.fail(3, create, errors.New("new"))
	if got, want := list(ctl.TakeErrors()), "0:overflow 3:new"; got != want {
		t.Fatalf("TakeErrors after errors met again: %s, want %s", got, want)
	}
	if got := ctl.TakeErrors(); len(got) != 0 {
		t.Fatalf("TakeErrors again: %s, want none", list(got))
	}
}

// TakeErrors called over and over from two goroutines while the runtimes
// record errors returns each error once in all: a failed create's (the
// Maintenance runtime's in the pair), every runtime's refusal of its
// index's AllowCompaction (the same text from both runtimes of the pair),
// and a query's import of the index (the Interactive runtime's), in Solo
// and the pair, with either runtime behind until half are sent.
func TestErrorsTakenWhileRecordedAreTakenOnce(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		for _, w := range []int{1, 2} {
			for _, lag := range []Role{Solo, Maintenance, Interactive} {
				if mode == "solo" && lag != Solo {
					continue
				}
				t.Run(fmt.Sprintf("%s/workers=%d/lag=%v", mode, w, lag), func(t *testing.T) {
					s := newLagSetup(t, mode, w, lag)
					s.declare("in", 2) // command 1
					const n = 150
					var want []string
					var mu gosync.Mutex
					got := map[string]int{}
					take := func() {
						for _, e := range s.ctl.TakeErrors() {
							mu.Lock()
							got[fmt.Sprintf("%d: %v", e.Seq, e)]++
							mu.Unlock()
						}
					}
					quit := make(chan struct{})
					var takers gosync.WaitGroup
					for range 2 {
						takers.Add(1)
						go func() {
							defer takers.Done()
							for {
								select {
								case <-quit:
									return
								default:
									take()
								}
							}
						}()
					}
					seq := 1
					for k := range n {
						x := fmt.Sprint("x", k)
						s.must(CreateDataflow{Desc: exportsDesc("maintain "+x, []string{x}, nil)})
						s.must(AllowCompaction{ID: x, Frontier: frontier.At(1)})
						s.must(CreateDataflow{Desc: readDesc("q"+x, x, 0, frontier.At(1), dataflow.NewCapture(w))})
						want = append(want,
							fmt.Sprintf(`%d: dataflow maintain %s: Desc.Exports ["%s"], Build exported []: dataflow: exports differ from Desc.Exports`, seq+1, x, x),
							fmt.Sprintf(`%d: runtime: allow compaction of "%s": the create of dataflow "maintain %s", which exports it, failed`, seq+2, x, x),
							fmt.Sprintf(`%d: dataflow q%s: import of index "%s": the create of dataflow "maintain %s", which exports it, failed`, seq+3, x, x, x))
						seq += 3
						if k == n/2 {
							s.resume()
						}
					}
					if err := s.ctl.Sync(testCtx(t)); err != nil {
						t.Fatal(err)
					}
					close(quit)
					takers.Wait()
					take()
					var bad []string
					for _, k := range want {
						if got[k] != 1 {
							bad = append(bad, fmt.Sprintf("taken %d times: %s", got[k], k))
						}
						delete(got, k)
					}
					for k, c := range got {
						bad = append(bad, fmt.Sprintf("taken %d times, not met: %s", c, k))
					}
					if len(bad) > 0 {
						slices.Sort(bad)
						t.Fatalf("%d errors amiss:\n%s", len(bad), strings.Join(bad[:min(len(bad), 10)], "\n"))
					}
				})
			}
		}
	}
}

// A capture made for no worker (NewCapture(0), or a negative count) fails
// its create, naming the count, in Solo as in the pair, and never passes a
// time: a caller waiting on it gets dataflow.ErrNoWorker at once, not an
// empty answer read as complete.
func TestCaptureForNoWorkerFailsTheCreate(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(2))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		var want []string
		caps := map[int]*dataflow.Capture{}
		for i, n := range []int{0, -1} {
			caps[n] = dataflow.NewCapture(n)
			s.must(CreateDataflow{Desc: readDesc(fmt.Sprintf("q%d", i), "idx", 0, frontier.Empty(), caps[n])})
			want = append(want, fmt.Sprintf("dataflow q%d: capture made for %d workers in a runtime of %d", i, n, s.workers))
		}
		if got := s.syncedErrors(t); !slices.Equal(got, want) {
			t.Fatalf("errors %q, want %q", got, want)
		}
		for n, cp := range caps {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the wait answers before it reads ctx
			err := cp.WaitPassed(ctx, 0)
			if !errors.Is(err, dataflow.ErrNoWorker) || cp.Passed(0) || cp.At(0) != nil {
				t.Errorf("capture for %d workers: WaitPassed(0) = %v, Passed(0) = %v: want it never to pass", n, err, cp.Passed(0))
			}
		}
	})
}

// An exchange by a negative column fails its create, naming the column, in
// Solo as in the pair and on any number of workers: on two it hashed the
// rows by it in a step, indexing before each row, and the panic ended the
// process.
func TestExchangeByANegativeColumnFailsTheCreate(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1}, []int64{0, 1, 2, 2})
		var want []string
		for i, cols := range [][]int{{-1}, {0, -2}} {
			id := fmt.Sprintf("x%d", i)
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					out := c.Exchange(in.Oks, cols)
					if i == 1 {
						out = c.ExchangeNamed(in.Oks, cols, "named") // checked alike
					}
					c.CaptureChunks(dataflow.NewCapture(c.Peers()), out, 2)
					return nil
				}}})
			want = append(want, fmt.Sprintf("dataflow %s: exchange by column %d: columns are numbered from 0", id, cols[len(cols)-1]))
		}
		if got := s.syncedErrors(t); !slices.Equal(got, want) {
			t.Fatalf("errors %q, want %q", got, want)
		}
	})
}

// A tally made for another number of workers than the runtime's fails its
// create, naming both counts, as a probe or a capture does: attached
// unchecked, one made for fewer workers was told of a worker it had no
// place for, and the panic in the step ended the process; one made for
// more waited for a worker that never reports.
func TestTallyOfAnotherWorkerCountFailsTheCreate(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1}, []int64{0, 1, 2, 2})
		s.advance("in", 2, frontier.At(2))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		var want []string
		for i, n := range []int{s.workers - 1, s.workers + 1} {
			tl := dataflow.NewTally(n)
			id := fmt.Sprintf("t%d", i)
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: id, AsOf: frontier.At(1), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					c.Tally(tl, a.Oks)
					return nil
				}}})
			want = append(want, fmt.Sprintf("dataflow %s: tally made for %d workers in a runtime of %d", id, n, s.workers))
		}
		if got := s.syncedErrors(t); !slices.Equal(got, want) {
			t.Fatalf("errors %q, want %q", got, want)
		}
	})
}

// A barrier asked with a context that has ended already (Sync, SyncRole,
// Stats) returns its error at once and queues nothing: a caller polling a
// lagging runtime with short timeouts queued one barrier per call, each
// applied to no one once the workers reached it.
func TestABarrierOfAnEndedContextQueuesNothing(t *testing.T) {
	for _, w := range agreeWorkers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			p, err := New(Options{Role: Solo, Workers: w, Paused: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown()
			ctl, err := NewController(p)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for range 100 {
				if _, err := p.Stats(ctx); !errors.Is(err, context.Canceled) {
					t.Fatalf("Stats with an ended context: %v, want context.Canceled", err)
				}
				if err := ctl.Sync(ctx); !errors.Is(err, context.Canceled) {
					t.Fatalf("Sync with an ended context: %v, want context.Canceled", err)
				}
				if err := ctl.SyncRole(ctx, Solo); !errors.Is(err, context.Canceled) {
					t.Fatalf("SyncRole with an ended context: %v, want context.Canceled", err)
				}
			}
			for i, wk := range p.workers {
				wk.qmu.Lock()
				n := len(wk.queue)
				wk.qmu.Unlock()
				if n != 0 {
					t.Errorf("worker %d has %d commands queued, want none", i, n)
				}
			}
			p.Resume()
			if err := ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
