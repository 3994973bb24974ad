package batch

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
	"pgregory.net/rapid"
)

// sortUpdates sorts us by (key, val, time), keeping the order of equal ones.
func sortUpdates(us []Update) {
	slices.SortStableFunc(us, func(a, b Update) int {
		if c := cmpRow(a.Key, b.Key); c != 0 {
			return c
		}
		if c := cmpRow(a.Val, b.Val); c != 0 {
			return c
		}
		return cmp.Compare(a.Time, b.Time)
	})
}

// fataler is what buildBoth needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// buildBoth builds us with a Builder (in the given order) and with s (after
// sorting them), and fails unless the batches are equal.
func buildBoth(t fataler, s *Sorted, ar Arity, us []Update, lo, hi uint64) *Batch {
	t.Helper()
	bld := NewBuilder(ar, len(us))
	for _, u := range us {
		bld.Push(u.Key, u.Val, u.Time, u.Diff)
	}
	want, werr := bld.Build(frontier.At(lo), frontier.At(hi))
	sorted := slices.Clone(us)
	sortUpdates(sorted)
	for _, u := range sorted {
		s.Push(u.Key, u.Val, u.Time, u.Diff)
	}
	got, gerr := s.Build(frontier.At(lo), frontier.At(hi))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("errors differ: builder %v, sorted %v", werr, gerr)
	}
	if cerr := got.Check(); cerr != nil {
		t.Fatalf("sorted build: %v\n%v", cerr, got)
	}
	if got.String() != want.String() {
		t.Fatalf("sorted build\n%v\nbuilder\n%v", got, want)
	}
	return got
}

// TestSortedMatchesBuilder: the updates of a Builder, pushed in (key, val,
// time) order into a Sorted, build the same batch, with duplicates and
// diffs that consolidate to zero (which must drop their val and key), for
// every arity up to 2, twice on one reused builder.
func TestSortedMatchesBuilder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := drawArity(t)
		s := NewSorted(ar, rapid.IntRange(0, 8).Draw(t, "hint"))
		for round := range 2 {
			var us []Update
			for range rapid.IntRange(0, 50).Draw(t, "n") {
				us = append(us, Update{
					Key: drawRow(t, ar.Key, "k"), Val: drawRow(t, ar.Val, "v"),
					Time: rapid.Uint64Range(2, 5).Draw(t, "t"), Diff: rapid.Int64Range(-2, 2).Draw(t, "d"),
				})
			}
			lo := uint64(2 + 4*round)
			for i := range us {
				us[i].Time += lo - 2
			}
			buildBoth(t, s, ar, us, lo, lo+4)
		}
	})
}

// TestSortedLargeBuildsDoNotAlias: a build above sortedKeep hands its
// columns to the batch and one below copies them out; either way the
// batch is unchanged by the builds after it.
func TestSortedLargeBuildsDoNotAlias(t *testing.T) {
	ar := Arity{1, 2}
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int) []Update {
		us := make([]Update, n)
		for i := range us {
			us[i] = Update{Key: []int64{rng.Int64N(int64(n / 3))}, Val: []int64{rng.Int64N(3), rng.Int64N(2)}, Time: rng.Uint64N(3), Diff: rng.Int64N(5) - 2}
		}
		return us
	}
	s := NewSorted(ar, 10)
	var bs []*Batch
	var want []string
	for _, n := range []int{3 * sortedKeep, 100, sortedKeep + 1, 7, 2 * sortedKeep} {
		b := buildBoth(t, s, ar, draw(n), 0, 3)
		bs, want = append(bs, b), append(want, b.String())
	}
	for i, b := range bs {
		if b.String() != want[i] {
			t.Fatalf("batch %d changed after later builds", i)
		}
	}
}

// TestSortedOutOfOrder: a push before the previous one in (key, val, time)
// order is reported by Build (an assertion in invariant builds), and the
// builder is usable afterwards.
func TestSortedOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		push func(s *Sorted)
	}{
		{"key", func(s *Sorted) { s.Push1(2, 0, 0, 1); s.Push1(1, 0, 0, 1) }},
		{"val", func(s *Sorted) { s.Push1(1, 5, 0, 1); s.Push1(1, 4, 0, 1) }},
		{"time", func(s *Sorted) { s.Push1(1, 5, 2, 1); s.Push1(1, 5, 1, 1) }},
		{"after a dropped key", func(s *Sorted) { s.Push1(3, 0, 0, 1); s.Push1(3, 0, 0, -1); s.Push1(2, 0, 0, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSorted(Arity{1, 1}, 0)
			if invariants.Enabled {
				defer func() {
					if recover() == nil {
						t.Fatal("no assertion")
					}
				}()
			}
			c.push(s)
			if b, err := s.Build(frontier.At(0), frontier.At(3)); !errors.Is(err, ErrUnsorted) || b != nil {
				t.Fatalf("Build = %v, %v; want ErrUnsorted", b, err)
			}
			s.Push1(1, 1, 0, 1)
			if b, err := s.Build(frontier.At(0), frontier.At(3)); err != nil || b.Len() != 1 {
				t.Fatalf("after the error: %v, %v", b, err)
			}
		})
	}
}

// A sorted build that overflows keeps every other update, saturates the
// overflowed diff and names the times that overflowed.
func TestSortedOverflow(t *testing.T) {
	s := NewSorted(Arity{1, 1}, 0)
	s.Push1(0, 1, 2, math.MinInt64)
	s.Push1(0, 1, 2, -1)
	s.Push1(1, 5, 1, 7)
	s.Push1(2, 1, 2, 4)
	s.Push1(2, 1, 3, 1<<62)
	s.Push1(2, 1, 3, 1<<62)
	got, err := s.Build(frontier.At(0), frontier.At(4))
	var oe *OverflowError
	if !errors.As(err, &oe) || !slices.Equal(oe.Times, []frontier.Time{2, 3}) {
		t.Fatalf("err = %v, want an *OverflowError at times [2 3]", err)
	}
	want := "[{0}, {4}) since {0}\n0 | 1 @2 -9223372036854775808\n1 | 5 @1 +7\n2 | 1 @2 +4\n2 | 1 @3 +9223372036854775807"
	if got.String() != want {
		t.Fatalf("batch\n%v\nwant\n%v", got, want)
	}
	s.Push1(0, 0, 0, 1)
	if _, err := s.Build(frontier.At(0), frontier.At(1)); err != nil {
		t.Fatalf("the next build inherits the overflow: %v", err)
	}
}

// TestSortedGrowMakesRoom: after Grow(n), n pushes of one key and val each
// copy no column, on a builder with nothing pushed (a new one, and one
// whose last build handed its columns to its batch) and on one with
// updates pushed; the batch is the Builder's. Grow of no more than the
// room there is, or of n <= 0, allocates nothing.
func TestSortedGrowMakesRoom(t *testing.T) {
	ar := Arity{1, 2}
	push := func(s *Sorted, from, n int, tm uint64) {
		for i := from; i < from+n; i++ {
			s.Push([]int64{int64(i)}, []int64{int64(i), 1}, tm, 1)
		}
	}
	ups := func(from, n int, tm uint64) []Update {
		us := make([]Update, n)
		for i := range us {
			us[i] = Update{Key: []int64{int64(from + i)}, Val: []int64{int64(from + i), 1}, Time: tm, Diff: 1}
		}
		return us
	}
	s := NewSorted(ar, 0)
	buildBoth(t, s, ar, ups(0, 2*sortedKeep, 0), 0, 1) // hands its columns over
	for _, pushed := range []int{0, 3} {
		n := 3 * sortedKeep
		push(s, 0, pushed, 0)
		s.Grow(n)
		cols := [][]int64{s.keys[:cap(s.keys)], s.vals[:cap(s.vals)], s.diffs[:cap(s.diffs)]}
		times, keyOffs, valOffs := s.times[:cap(s.times)], s.keyOffs[:cap(s.keyOffs)], s.valOffs[:cap(s.valOffs)]
		if allocs := testing.AllocsPerRun(1, func() { s.Grow(n - 1); s.Grow(0); s.Grow(-1) }); allocs != 0 {
			t.Errorf("pushed %d: Grow within the room allocated %v times", pushed, allocs)
		}
		push(s, pushed, n, 0)
		for i, c := range [][]int64{s.keys, s.vals, s.diffs} {
			if &c[0] != &cols[i][0] {
				t.Errorf("pushed %d: column %d copied by %d pushes after Grow(%d)", pushed, i, n, n)
			}
		}
		if &s.times[0] != &times[0] || &s.keyOffs[0] != &keyOffs[0] || &s.valOffs[0] != &valOffs[0] {
			t.Errorf("pushed %d: times or offsets copied by %d pushes after Grow(%d)", pushed, n, n)
		}
		got, err := s.Build(frontier.At(0), frontier.At(1))
		if err != nil {
			t.Fatal(err)
		}
		bld := NewBuilder(ar, 0)
		for _, u := range ups(0, pushed+n, 0) {
			bld.Push(u.Key, u.Val, u.Time, u.Diff)
		}
		want, _ := bld.Build(frontier.At(0), frontier.At(1))
		if got.String() != want.String() {
			t.Fatalf("pushed %d: sorted build after Grow\n%v\nbuilder\n%v", pushed, got, want)
		}
	}
}

// TestSortedBuildReleasesRoomItDidNotUse: a Grow for more than sortedKeep
// updates (a reduce's step of many updates) followed by a build of a few
// (its corrections) leaves the builder without that room, as a build of
// more than sortedKeep does: kept, it would stay idle at the largest
// step's size. A builder whose room is within sortedKeep keeps it.
func TestSortedBuildReleasesRoomItDidNotUse(t *testing.T) {
	ar := Arity{1, 1}
	s := NewSorted(ar, 0)
	s.Grow(4 * sortedKeep)
	for i := range 3 {
		s.Push([]int64{int64(i)}, []int64{0}, 0, 1)
	}
	if b, err := s.Build(frontier.At(0), frontier.At(1)); err != nil || b.Len() != 3 {
		t.Fatalf("build: %v, %v", b, err)
	}
	if c := cap(s.times) + cap(s.keys) + cap(s.vals) + cap(s.keyOffs) + cap(s.valOffs) + cap(s.diffs); c != 0 {
		t.Errorf("after a build of 3 updates, the builder keeps room for %d column elements from a Grow(%d)", c, 4*sortedKeep)
	}
	s.Grow(sortedKeep)
	s.Push([]int64{1}, []int64{0}, 0, 1)
	if _, err := s.Build(frontier.At(0), frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	if cap(s.times) != sortedKeep {
		t.Errorf("room for %d updates kept after a Grow(%d), want it kept", cap(s.times), sortedKeep)
	}
}
