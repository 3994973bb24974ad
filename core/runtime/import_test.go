package runtime

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// The input of differential-dataflow's tests/import.rs: six epochs of
// ((src, dst), diff).
var importEpochs = [][][3]int64{
	{{2, 0, 1}, {1, 0, 1}, {1, 3, 1}, {4, 2, 1}},
	{{2, 0, -1}, {1, 0, -1}},
	{{2, 0, 1}, {1, 3, -1}},
	{{1, 0, 1}, {1, 3, 1}, {2, 0, -1}, {4, 2, -1}},
	{{2, 0, 1}, {4, 2, 1}, {1, 3, -1}},
	{{1, 3, 1}, {4, 2, -1}},
}

// importExpected is tests/import.rs's expected table: per time, the changes
// of (src, number of dsts) — what counting the imported arrangement per key
// yields.
var importExpected = []string{
	"[(1,2)+1 (2,1)+1 (4,1)+1]",
	"[(1,1)+1 (1,2)-1 (2,1)-1]",
	"[(1,1)-1 (2,1)+1]",
	"[(1,2)+1 (2,1)-1 (4,1)-1]",
	"[(1,1)+1 (1,2)-1 (2,1)+1 (4,1)+1]",
	"[(1,1)-1 (1,2)+1 (4,1)-1]",
}

// countChanges reads the capture as counts per key and returns the changes
// of (key, count) at t.
func countChanges(cp *dataflow.Capture, t uint64) string {
	counts := func(at int64) map[int64]int64 {
		m := map[int64]int64{}
		if at < 0 {
			return m
		}
		for _, rd := range cp.At(uint64(at)) {
			m[rd.Row[0]] += rd.Diff
		}
		return m
	}
	before, after := counts(int64(t)-1), counts(int64(t))
	type kc struct{ k, c int64 }
	diff := map[kc]int64{}
	for k, c := range before {
		if c != 0 {
			diff[kc{k, c}]--
		}
	}
	for k, c := range after {
		if c != 0 {
			diff[kc{k, c}]++
		}
	}
	var keys []kc
	for x, d := range diff {
		if d != 0 {
			keys = append(keys, x)
		}
	}
	slices.SortFunc(keys, func(a, b kc) int {
		return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.c, b.c))
	})
	out := "["
	for i, x := range keys {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("(%d,%d)%+d", x.k, x.c, diff[x])
	}
	return out + "]"
}

func (s *setup) sendEpochs(name string) {
	for t, epoch := range importEpochs {
		var rows [][]int64
		for _, u := range epoch {
			rows = append(rows, []int64{int64(t), u[2], u[0], u[1]})
		}
		s.send(name, 2, rows...)
		s.advance(name, 2, frontier.At(uint64(t+1)))
	}
}

func checkImportTable(t *testing.T, cp *dataflow.Capture) {
	t.Helper()
	for tm, want := range importExpected {
		if got := countChanges(cp, uint64(tm)); got != want {
			t.Errorf("t=%d: %s, want %s", tm, got, want)
		}
	}
}

// TestImportLive is tests/import.rs test_import: a live arrangement imported
// into a second dataflow, read back per time against the expected table.
func TestImportLive(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		cp := dataflow.NewCapture(s.workers)
		s.declare("edges", 2)
		s.ctl.Send(CreateDataflow{Desc: indexDesc("edges", "edges", 2, []int{0}, 0, nil)})
		s.ctl.Send(CreateDataflow{Desc: readDesc("read", "edges", 0, frontier.Empty(), cp)})
		s.sendEpochs("edges")
		s.advance("edges", 2, frontier.Empty())
		if err := cp.WaitPassed(ctx, 5); err != nil {
			t.Fatal(err)
		}
		checkImportTable(t, cp)
	})
}

// TestImportCompletedDataflow is tests/import.rs
// test_import_completed_dataflow: the source runs to completion before the
// importing dataflow is created.
func TestImportCompletedDataflow(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		probe := dataflow.NewProbe(s.workers)
		s.declare("edges", 2)
		s.ctl.Send(CreateDataflow{Desc: indexDesc("edges", "edges", 2, []int{0}, 0, probe)})
		s.sendEpochs("edges")
		s.advance("edges", 2, frontier.Empty())
		if err := probe.WaitPassed(ctx, frontier.MaxTime); err != nil {
			t.Fatal(err)
		}
		cp := dataflow.NewCapture(s.workers)
		s.ctl.Send(CreateDataflow{Desc: readDesc("read", "edges", 0, frontier.Empty(), cp)})
		if err := cp.WaitPassed(ctx, 5); err != nil {
			t.Fatal(err)
		}
		checkImportTable(t, cp)
		if !cp.Frontier().IsEmpty() {
			t.Fatalf("import of a completed trace has frontier %v, want {}", cp.Frontier())
		}
	})
}

// TestImportStalledSource imports a source that stops sending data but keeps
// advancing its frontier: the import's frontier must follow.
func TestImportStalledSource(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		cp := dataflow.NewCapture(s.workers)
		s.declare("edges", 2)
		s.ctl.Send(CreateDataflow{Desc: indexDesc("edges", "edges", 2, []int{0}, 0, nil)})
		s.send("edges", 2, []int64{0, 1, 1, 2})
		s.advance("edges", 2, frontier.At(1))
		s.ctl.Send(CreateDataflow{Desc: readDesc("read", "edges", 0, frontier.Empty(), cp)})
		if err := cp.WaitPassed(ctx, 0); err != nil {
			t.Fatal(err)
		}
		for _, f := range []uint64{5, 50, 500} {
			s.advance("edges", 2, frontier.At(f))
			if err := cp.WaitPassed(ctx, f-1); err != nil {
				t.Fatalf("no data after 0; frontier advanced to %d: %v", f, err)
			}
		}
		if got := cp.At(499); len(got) != 1 || got[0].Diff != 1 {
			t.Fatalf("at 499: %v", got)
		}
	})
}
