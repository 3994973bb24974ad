package batch

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A chunk pushed whole is read by nothing after the first Seal that
// follows its push (BT1): its caller may reuse it once that Seal returns.
// A Seal refused for a bad push or bad bounds keeps the buffered updates
// for the seal after, so it must take its own copy of a queued chunk's
// updates; before, the next Seal read the chunk again and built whatever
// its caller had written into it since.
func TestARefusedSealDoesNotKeepReadingAQueuedChunk(t *testing.T) {
	lo, up := frontier.At(0), frontier.At(5)
	for _, c := range []struct {
		name             string
		ar               Arity
		width            int
		keyCols, valCols []int
	}{
		{"one-column pairs", Arity{1, 1}, 2, []int{0}, []int{1}},
		{"key only", Arity{1, 0}, 1, []int{0}, nil},
		{"wide, whole rows", Arity{2, 1}, 3, []int{0, 1}, []int{2}},
		{"wide, reordered", Arity{2, 1}, 3, []int{1, 0}, []int{2}},
	} {
		for _, refuse := range []string{"arity", "bounds", "shape"} {
			bt := NewBatcher(c.ar, 4)
			// Three updates: two before upper, one at it (kept buffered).
			rows := make([]int64, 3*c.width)
			for i := range rows {
				rows[i] = int64(10 + i)
			}
			times := []uint64{1, 2, 7}
			diffs := []int64{1, 1, 1}
			bt.PushChunk(rows, c.width, c.keyCols, c.valCols, times, diffs)
			sealLo, sealUp := lo, up
			switch refuse {
			case "arity":
				bt.Push(make([]int64, c.ar.Key+1), make([]int64, c.ar.Val), 1, 1)
			case "bounds":
				sealLo, sealUp = up, lo
			case "shape":
				bt.PushChunk(rows, c.width, c.keyCols, c.valCols, []uint64{1, 1, 1, 1}, []int64{1, 1, 1, 1})
			}
			if b, err := bt.Seal(sealLo, sealUp); err == nil || b != nil {
				t.Fatalf("%s, refused for %s: Seal = %v, %v; want no batch and an error", c.name, refuse, b, err)
			}
			want := func() []Update {
				bld := NewBuilder(c.ar, 4)
				for i, tm := range times[:2] {
					row := rows[i*c.width : (i+1)*c.width]
					var k, v []int64
					for _, kc := range c.keyCols {
						k = append(k, row[kc])
					}
					for _, vc := range c.valCols {
						v = append(v, row[vc])
					}
					bld.Push(k, v, tm, diffs[i])
				}
				b, err := bld.Build(lo, up)
				if err != nil {
					t.Fatal(err)
				}
				return b.Updates()
			}()
			// The refused Seal has returned: the chunk is its caller's.
			for i := range rows {
				rows[i] = -1
			}
			for i := range times {
				times[i] = 1
			}
			b, err := bt.Seal(lo, up)
			if err != nil {
				t.Fatalf("%s, refused for %s: the seal after = %v", c.name, refuse, err)
			}
			if got := b.Updates(); !sameUpdates(got, want) {
				t.Fatalf("%s, refused for %s: the seal after built %v; want %v, as pushed", c.name, refuse, got, want)
			}
			if n := bt.Len(); n != 1 {
				t.Fatalf("%s, refused for %s: %d updates buffered after the seal; want the one at 7", c.name, refuse, n)
			}
		}
	}
}

func sameUpdates(a, b []Update) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Time != b[i].Time || a[i].Diff != b[i].Diff || cmpRow(a[i].Key, b[i].Key) != 0 || len(a[i].Key) != len(b[i].Key) || cmpRow(a[i].Val, b[i].Val) != 0 || len(a[i].Val) != len(b[i].Val) {
			return false
		}
	}
	return true
}

// TestARefusedSealOwnsAOneUpdateChunk: the copy a refused Seal takes of
// the queued chunks is taken for a chunk of one update too.
func TestARefusedSealOwnsAOneUpdateChunk(t *testing.T) {
	bt := NewBatcher(Arity{1, 1}, 1)
	rows, times, diffs := []int64{4, 5}, []uint64{2}, []int64{3}
	bt.PushChunk(rows, 2, []int{0}, []int{1}, times, diffs)
	if b, err := bt.Seal(frontier.At(5), frontier.At(0)); err == nil || b != nil {
		t.Fatalf("Seal of an upper before its lower = %v, %v; want no batch and an error", b, err)
	}
	rows[0], rows[1], times[0], diffs[0] = -1, -1, 1, 1
	b, err := bt.Seal(frontier.At(0), frontier.At(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "[{0}, {5}) since {0}\n4 | 5 @2 +3" {
		t.Fatalf("the seal after built\n%s\nwant the update as pushed, 4 | 5 @2 +3", got)
	}
}
