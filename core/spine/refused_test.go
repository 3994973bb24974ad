package spine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// finish counted every error of a merge's Result as an overflow. Only an
// overflow reaches it through the spine's methods (Insert admits a batch
// only at the upper, non-nil, of the spine's arity and non-empty of time,
// S1, and a merge takes consecutive batches of the chain, S3), but a
// merger's refusal (batch.ErrNotAdjacent and the like) would have been
// counted as one, and its inputs, for which a refused merge has no result,
// dropped from the chain. Such a refusal is the spine's invariant broken:
// finish now panics naming it, and counts no overflow. The levels are set
// by hand here, which only a broken S1 or S3 would do.
func TestAMergeRefusalIsNotCountedAsAnOverflow(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	s := New(ar, Options{})
	gap := []*batch.Batch{batch.Empty(ar, frontier.At(0), frontier.At(1)), batch.Empty(ar, frontier.At(2), frontier.At(3))}
	s.levels = []level{{waiting: gap}}
	defer func() {
		p := recover()
		if msg := fmt.Sprint(p); !strings.Contains(msg, "spine: merge refused") || !strings.Contains(msg, "not adjacent") {
			t.Fatalf("a refused merge panicked with %q (overflows %d, Err %v), want a panic naming the refusal", msg, s.Overflows(), s.Err())
		}
		if s.Overflows() != 0 || s.Err() != nil {
			t.Fatalf("a refused merge counted as an overflow: %d, %v", s.Overflows(), s.Err())
		}
	}()
	s.Exert(1)
}

// An overflow is still counted and kept as the spine's error.
func TestAnOverflowIsStillCounted(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	s := New(ar, Options{})
	for i := range uint64(2) {
		bld := batch.NewBuilder(ar, 1)
		bld.Push1(1, 1, i, 1<<62)
		b, err := bld.Build(frontier.At(i), frontier.At(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	s.SetLogicalCompaction(frontier.At(2))
	s.SetPhysicalCompaction(frontier.At(2))
	for s.Exert(1 << 20) {
	}
	if s.Overflows() != 1 || !errors.Is(s.Err(), batch.ErrOverflow) {
		t.Fatalf("overflows %d, Err %v, want 1 and ErrOverflow", s.Overflows(), s.Err())
	}
}
