package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestIndexAtTheLargestTime: an index fed updates at the last times of
// uint64, its input advanced to {2^64−1} and then closed ({}), is read at
// every one of them by an import from 0, and, once allowed to compact to
// {2^64−1}, by an import at as_of 2^64−1, which reads its updates before
// that time advanced to it; an import at 2^64−2 is refused as before the
// index's since. In Solo and the pair alike, no time wraps, no wait
// hangs, and compaction to {} then frees the index without an error.
func TestIndexAtTheLargestTime(t *testing.T) {
	const top = frontier.MaxTime
	rows := func(rds []dataflow.RowDiff) string { return fmt.Sprint(rds) }
	forEachSetup(t, func(t *testing.T, s *setup) {
		ctx := testCtx(t)
		probe := dataflow.NewProbe(s.workers)
		s.declare("e", 2)
		s.must(CreateDataflow{Desc: indexDesc("e", "e", 2, []int{0}, 0, probe)})
		cp := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("read", "e", 0, frontier.Empty(), cp)})
		at := func(tm frontier.Time, d int64, k int64) []int64 { return []int64{int64(tm), d, k, k} }
		s.send("e", 2, at(top-2, 1, 1), at(top-1, 1, 2))
		s.advance("e", 2, frontier.At(top-1))
		if err := cp.WaitPassed(ctx, top-2); err != nil {
			t.Fatal(err)
		}
		s.send("e", 2, at(top, 1, 3), at(top, -1, 1))
		s.advance("e", 2, frontier.At(top))
		if err := cp.WaitPassed(ctx, top-1); err != nil {
			t.Fatal(err)
		}
		if got, want := rows(cp.At(top-2)), "[{[1 1] 1}]"; got != want {
			t.Errorf("at 2^64-3: %s, want %s", got, want)
		}
		if got, want := rows(cp.At(top-1)), "[{[1 1] 1} {[2 2] 1}]"; got != want {
			t.Errorf("at 2^64-2: %s, want %s", got, want)
		}
		if f := cp.Frontier(); f != frontier.At(top) {
			t.Errorf("read's frontier %v with the input at {2^64-1}, want {2^64-1}", f)
		}
		s.must(AllowCompaction{ID: "e", Frontier: frontier.At(top)})
		cpTop := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: readDesc("read top", "e", top, frontier.Empty(), cpTop)})
		s.must(CreateDataflow{Desc: readDesc("read before", "e", top-1, frontier.Empty(), dataflow.NewCapture(s.workers))})
		errs := s.syncedErrors(t)
		if len(errs) != 1 || !strings.Contains(errs[0], "read before") || !strings.Contains(errs[0], dataflow.ErrCompactedBeyondAsOf.Error()) {
			t.Errorf("errors %q, want the import at 2^64-2 refused as before the since", errs)
		}
		s.must(DropDataflow{ID: "read before"})
		s.advance("e", 2, frontier.Empty())
		for name, c := range map[string]*dataflow.Capture{"from 0": cp, "at 2^64-1": cpTop} {
			if err := c.WaitPassed(ctx, top); err != nil {
				t.Fatalf("read %s: %v", name, err)
			}
			if got, want := rows(c.At(top)), "[{[2 2] 1} {[3 3] 1}]"; got != want {
				t.Errorf("read %s at 2^64-1: %s, want %s", name, got, want)
			}
			if f := c.Frontier(); !f.IsEmpty() {
				t.Errorf("read %s: frontier %v with the input closed, want {}", name, f)
			}
		}
		if err := probe.WaitPassed(ctx, top); err != nil {
			t.Fatal(err)
		}
		s.must(DropDataflow{ID: "read"})
		s.must(DropDataflow{ID: "read top"})
		s.must(AllowCompaction{ID: "e", Frontier: frontier.Empty()})
		if errs := s.syncedErrors(t); len(errs) != 0 {
			t.Errorf("errors %q after the readers' drops and compaction to {}", errs)
		}
	})
}
