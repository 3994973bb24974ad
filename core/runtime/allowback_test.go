package runtime

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// An AllowCompaction to a frontier before one already allowed for the
// index is refused by Send, with an error naming the index and both
// frontiers (ErrCompactionBackward), and reaches no runtime: before, it
// was accepted and changed nothing, a hold never moving back
// (docs/semantics.md §2.4), while the caller took the index to keep the
// times between. The same frontier again, and a later one, are accepted;
// an index dropped and created again starts afresh. Solo and the pair,
// one and two workers, alike.
func TestABackwardAllowCompactionIsRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(6))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(3)})
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(3)})
		err := s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(1)})
		want := `runtime: allow compaction of "idx" to {1}: {3} is allowed already: compaction never moves back`
		if !errors.Is(err, ErrCompactionBackward) || err.Error() != want {
			t.Fatalf("a backward AllowCompaction: %v, want %q", err, want)
		}
		err = s.ctl.SendAll(AllowCompaction{ID: "idx", Frontier: frontier.At(5)}, AllowCompaction{ID: "idx", Frontier: frontier.At(4)})
		if !errors.Is(err, ErrCompactionBackward) {
			t.Fatalf("a backward AllowCompaction after a forward one in one SendAll: %v, want ErrCompactionBackward", err)
		}
		if got := s.syncedErrors(t); len(got) > 0 {
			t.Fatalf("runtime errors: %q", got)
		}
		s.must(DropDataflow{ID: "maintain idx"})
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		if err := s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(1)}); err != nil {
			t.Fatalf("AllowCompaction of an index created again: %v", err)
		}
		if got := s.syncedErrors(t); len(got) > 0 {
			t.Fatalf("runtime errors: %q", got)
		}
	})
}

// An index's since starts at its create's as_of (dataflow D5), so an
// AllowCompaction before that as_of, though nothing was allowed yet, is a
// backward one too: refused by Send (ErrCompactionBackward), naming the
// index, the frontier, the as_of and the dataflow that exports it. Before,
// it was accepted and changed nothing, while a query at a time between
// was refused all the same (dataflow.ErrCompactedBeyondAsOf). The as_of
// itself, and a later frontier, are accepted. Solo and the pair, one and
// two workers, alike.
func TestAnAllowCompactionBeforeTheAsOfIsRefused(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(6))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 4, nil)})
		err := s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(2)})
		want := `runtime: allow compaction of "idx" to {2}: its since is {4} already, the as_of of dataflow "maintain idx", which exports it: compaction never moves back`
		if !errors.Is(err, ErrCompactionBackward) || err.Error() != want {
			t.Fatalf("an AllowCompaction before the as_of: %v, want %q", err, want)
		}
		// The since is the as_of indeed: a query at {2} is refused.
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 2, frontier.Empty(), dataflow.NewCapture(s.workers))})
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := s.ctl.TakeErrors(); len(got) != 1 || !errors.Is(got[0], dataflow.ErrCompactedBeyondAsOf) {
			t.Fatalf("a query at {2}: errors %v, want one ErrCompactedBeyondAsOf", got)
		}
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(4)})
		s.must(AllowCompaction{ID: "idx", Frontier: frontier.At(5)})
		if err := s.ctl.Send(AllowCompaction{ID: "idx", Frontier: frontier.At(4)}); !errors.Is(err, ErrCompactionBackward) {
			t.Fatalf("a backward AllowCompaction after the as_of: %v, want ErrCompactionBackward", err)
		}
		if got := s.syncedErrors(t); len(got) > 0 {
			t.Fatalf("runtime errors: %q", got)
		}
	})
}
