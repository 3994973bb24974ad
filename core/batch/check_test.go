package batch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestCheckCatchesRepeatsAndEmptyRuns: B1's orders are strict (a key,
// a val within its key, or a time within its (key, val) repeated is a
// violation, not only one out of order) and B2 refuses a key owning no
// vals and a val owning no updates; the offsets must span the columns
// from their first element. Each corruption keeps the columns'
// lengths and the offsets' ends, so that only the rule named fails.
func TestCheckCatchesRepeatsAndEmptyRuns(t *testing.T) {
	// repeats: keys 1 (vals 1, 2), 2 (val 1); (1, 1) at 0 and 1.
	repeats := "[{0}, {3}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +1\n1 | 2 @0 +1\n2 | 1 @2 +1"
	// runs: keys 1 (val 1), 2 (vals 2, 3); (2, 3) at 1 and 2. Emptying
	// key 1 gives its val to key 2, and emptying val 2 its update to
	// val 3, each still in order.
	runs := "[{0}, {3}) since {0}\n1 | 1 @0 +1\n2 | 2 @0 +1\n2 | 3 @1 +1\n2 | 3 @2 +1"
	for _, c := range []struct {
		name, batch string
		corrupt     func(c *Batch)
	}{
		{"a key repeated", repeats, func(c *Batch) { c.keys[1] = c.keys[0] }},
		{"a val repeated", repeats, func(c *Batch) { c.vals[1] = c.vals[0] }},
		{"a time repeated", repeats, func(c *Batch) { c.times[1] = c.times[0] }},
		{"a key owning no vals", runs, func(c *Batch) { c.keyOffs[1] = 0 }},
		{"a val owning no updates", runs, func(c *Batch) { c.valOffs[2] = 1 }},
		{"a val owned by no key", repeats, func(c *Batch) { c.keyOffs[0] = 1 }},
		{"an update owned by no val", repeats, func(c *Batch) { c.valOffs[0] = 1 }},
	} {
		b := mustParse(t, Arity{1, 1}, c.batch)
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		x := *b
		x.keys, x.vals, x.times = slices.Clone(b.keys), slices.Clone(b.vals), slices.Clone(b.times)
		x.keyOffs, x.valOffs = slices.Clone(b.keyOffs), slices.Clone(b.valOffs)
		c.corrupt(&x)
		if x.Check() == nil {
			t.Errorf("%s: Check passed:\n%v", c.name, &x)
		}
	}
}

// TestAnEmptySinceKeepsATimeAnEarlierMergeAdvanced: B3's exception. A
// merge under {5} advances a time to 5, beyond the merged upper {3}; a
// later merge under {} (every hold gone) leaves it there, and the batch
// it makes, since {}, holds a time beyond its upper.
func TestAnEmptySinceKeepsATimeAnEarlierMergeAdvanced(t *testing.T) {
	a := mustParse(t, Arity{1, 1}, "[{0}, {2}) since {0}\n1 | 1 @0 +1\n2 | 1 @1 +1")
	b := mustParse(t, Arity{1, 1}, "[{2}, {3}) since {0}\n3 | 1 @2 +1")
	c := mustParse(t, Arity{1, 1}, "[{3}, {4}) since {0}\n4 | 1 @3 +1")
	ab, err := Merge(a, b, frontier.At(5))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Merge(ab, c, frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Check(); err != nil {
		t.Fatal(err)
	}
	if d := out.Desc(); !d.Since.IsEmpty() || d.Upper != frontier.At(4) {
		t.Fatalf("desc %v, want [{0}, {4}) since {}", d)
	}
	var times []uint64
	for _, u := range out.Updates() {
		times = append(times, u.Time)
	}
	if want := []uint64{5, 5, 5, 3}; !slices.Equal(times, want) {
		t.Fatalf("times %v, want %v", times, want)
	}
}

// TestStepKeyAtTheEndStaysThere: a cursor whose keys are all read
// stays at the end however often it steps, so its key index is the
// batch's key count.
func TestStepKeyAtTheEndStaysThere(t *testing.T) {
	b := mustParse(t, Arity{1, 1}, "[{0}, {3}) since {0}\n1 | 1 @0 +1\n2 | 1 @1 +1")
	c := b.Cursor()
	for range 4 {
		c.StepKey()
	}
	if c.KeyValid() || c.KeyIndex() != b.Keys() {
		t.Fatalf("after stepping past the end: valid %v, key index %d, want false, %d", c.KeyValid(), c.KeyIndex(), b.Keys())
	}
	c.SeekKey([]int64{2})
	if c.KeyValid() || c.KeyIndex() != b.Keys() {
		t.Fatalf("a seek back from the end: valid %v, key index %d, want false, %d", c.KeyValid(), c.KeyIndex(), b.Keys())
	}
}

// TestAMergeSumsATimeBothBatchesHold: two adjacent batches share a time
// only where an earlier merge advanced one's times beyond its upper; a
// merge under {} (which advances nothing) sums their diffs there, to a
// diff that fits (no overflow reported, nothing saturated) or to zero
// (the update dropped), two-way and k-way alike.
func TestAMergeSumsATimeBothBatchesHold(t *testing.T) {
	a := mustParse(t, Arity{1, 1}, "[{0}, {2}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +1\n2 | 1 @1 +1\n3 | 1 @0 -2")
	b := mustParse(t, Arity{1, 1}, "[{2}, {3}) since {0}\n3 | 1 @2 +1")
	ab, err := Merge(a, b, frontier.At(5)) // 1 | 1 @5 +2, 2 | 1 @5 +1, 3 | 1 @5 -1
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, Arity{1, 1}, "[{3}, {6}) since {0}\n1 | 1 @5 +1\n2 | 1 @5 -1\n3 | 1 @4 +7")
	d := mustParse(t, Arity{1, 1}, "[{6}, {7}) since {0}\n4 | 1 @6 +1")
	want := "[{0}, {6}) since {}\n1 | 1 @5 +3\n3 | 1 @4 +7\n3 | 1 @5 -1"
	got, err := Merge(ab, c, frontier.Empty())
	if err != nil || got.String() != want || got.Saturated() {
		t.Fatalf("two-way: err %v, saturated %v, batch\n%v\nwant\n%v", err, got.Saturated(), got, want)
	}
	m := NewMergerN([]*Batch{ab, c, d}, frontier.Empty())
	fuel := int64(1 << 20)
	m.Work(&fuel)
	got, err = m.Result()
	want = "[{0}, {7}) since {}\n1 | 1 @5 +3\n3 | 1 @4 +7\n3 | 1 @5 -1\n4 | 1 @6 +1"
	if err != nil || got.String() != want || got.Saturated() {
		t.Fatalf("k-way: err %v, saturated %v, batch\n%v\nwant\n%v", err, got.Saturated(), got, want)
	}
}

// TestABuildRefusesATimeOutsideAtEveryPosition: a build of up to 9
// updates (short of the radix sort, so that it reads its times after
// the sort) refuses one update before its lower or at its upper wherever
// that update sorts: the bound scan takes its times four at a time, then
// the rest one by one.
func TestABuildRefusesATimeOutsideAtEveryPosition(t *testing.T) {
	for _, ar := range []Arity{{1, 1}, {2, 1}} {
		for n := 1; n <= 9; n++ {
			for p := range n {
				for _, bad := range []uint64{9, 20} {
					bld := NewBuilder(ar, n)
					for i := range n {
						tm := uint64(10 + i)
						if i == p {
							tm = bad
						}
						key := make([]int64, ar.Key)
						key[0] = int64(i) // the updates sort in the order pushed
						bld.Push(key, []int64{1}, tm, 1)
					}
					if _, err := bld.Build(frontier.At(10), frontier.At(20)); !errors.Is(err, ErrTimeOutside) {
						t.Fatalf("arity %v, %d updates, time %d at %d: err %v, want ErrTimeOutside", ar, n, bad, p, err)
					}
				}
			}
		}
	}
}

// TestAMergeOfASaturatedBatchAnywhereIsSaturated: the mark passes to a
// merge from its later input as from its earlier, two-way, and k-way
// from its first, middle or last input.
func TestAMergeOfASaturatedBatchAnywhereIsSaturated(t *testing.T) {
	at := func(lo, hi uint64, s string) *Batch {
		return mustParse(t, Arity{1, 1}, fmt.Sprintf("[{%d}, {%d}) since {0}\n%s", lo, hi, s))
	}
	sat, err := Merge(at(2, 3, "1 | 1 @2 +9223372036854775807"), at(3, 4, "1 | 1 @3 +1"), frontier.At(3))
	if err != ErrOverflow || !sat.Saturated() {
		t.Fatalf("the overflowing merge: err %v, saturated %v", err, sat.Saturated())
	}
	before, after := at(0, 2, "2 | 1 @1 +1"), at(4, 6, "3 | 1 @5 +1")
	for name, bs := range map[string][]*Batch{
		"two-way, saturated first":  {sat, after},
		"two-way, saturated second": {before, sat},
		"k-way, saturated first":    {sat, after, at(6, 7, "4 | 1 @6 +1")},
		"k-way, saturated middle":   {before, sat, after},
		"k-way, saturated last":     {at(0, 1, "0 | 1 @0 +1"), at(1, 2, "2 | 1 @1 +1"), sat},
	} {
		m := NewMergerN(bs, frontier.Min())
		fuel := int64(1 << 20)
		m.Work(&fuel)
		out, err := m.Result()
		if err != nil || !out.Saturated() {
			t.Errorf("%s: err %v, saturated %v", name, err, out.Saturated())
		}
	}
}

// TestAMergeSaturatesATimeBothBatchesHoldToItsSign: where the two sums of
// a time both batches hold (TestAMergeSumsATimeBothBatchesHold) leave
// int64, the merge reports ErrOverflow and saturates the diff to the
// bound of the overflow's sign, and marks its batch.
func TestAMergeSaturatesATimeBothBatchesHoldToItsSign(t *testing.T) {
	for _, c := range []struct {
		d, e string
		want string
	}{
		{"+9223372036854775807", "+1", "+9223372036854775807"},
		{"-9223372036854775808", "-1", "-9223372036854775808"},
	} {
		a := mustParse(t, Arity{1, 1}, "[{0}, {2}) since {0}\n1 | 1 @0 "+c.d)
		b := mustParse(t, Arity{1, 1}, "[{2}, {3}) since {0}\n2 | 1 @2 +1")
		ab, err := Merge(a, b, frontier.At(5))
		if err != nil {
			t.Fatal(err)
		}
		cb := mustParse(t, Arity{1, 1}, "[{3}, {6}) since {0}\n1 | 1 @5 "+c.e)
		got, err := Merge(ab, cb, frontier.Empty())
		want := "[{0}, {6}) since {}\n1 | 1 @5 " + c.want + "\n2 | 1 @5 +1"
		if err != ErrOverflow || got.String() != want || !got.Saturated() {
			t.Errorf("%s then %s: err %v, saturated %v, batch\n%v\nwant\n%v", c.d, c.e, err, got.Saturated(), got, want)
		}
	}
}

// TestPush1IntoAWideSortedBuilderPanicsNamingIt: Push1 takes one-column
// keys and vals; a sorted builder of wider ones refuses it by name, for
// a wide key as for a wide val.
func TestPush1IntoAWideSortedBuilderPanicsNamingIt(t *testing.T) {
	for _, ar := range []Arity{{2, 1}, {1, 2}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Push1 into a sorted") {
					t.Fatalf("%v: Push1 recovered %v, want its panic naming it", ar, r)
				}
			}()
			NewSorted(ar, 0).Push1(1, 2, 0, 1)
		}()
	}
}

// TestAWideBuildOrdersTimesItsKeyLeftOut: when a wide build's columns
// take all 64 bits of its sort key, leaving no room for the time, the
// sort orders each row's updates by time itself, at any size.
func TestAWideBuildOrdersTimesItsKeyLeftOut(t *testing.T) {
	for _, per := range []int{4, 25} { // 32 and 200 updates: below and above the radix sort's minimum
		bld := NewBuilder(Arity{2, 1}, 8*per)
		for i := range 8 {
			// Column 0 spans 62 bits, columns 1 and 2 one each.
			key := []int64{int64(i%2) << 61, int64(i / 2 % 2)}
			val := []int64{int64(i / 4)}
			for tm := per - 1; tm >= 0; tm-- {
				bld.Push(key, val, uint64(tm), int64(i+1))
			}
		}
		b, err := bld.Build(frontier.At(0), frontier.At(uint64(per)))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]uint64, per)
		for i := range want {
			want[i] = uint64(i)
		}
		rows := 0
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			for ; c.ValValid(); c.StepVal() {
				if times, _ := c.Updates(); !slices.Equal(times, want) {
					t.Fatalf("%d updates: key %v val %v at times %v, want 0 to %d in order", 8*per, c.Key(), c.Val(), times, per-1)
				}
				rows++
			}
		}
		if rows != 8 || b.Len() != 8*per {
			t.Fatalf("%d updates: %d rows, %d updates; want 8, %d", 8*per, rows, b.Len(), 8*per)
		}
	}
}

// TestAKWayMergeOfADominantInputEndsWithItsStage: where a merge takes a
// dominant input beside its tree (kmergebig.go) and the tree runs out
// first, the merge is done only once the dominant input's staged
// updates are all out, whatever the fuel of each step.
func TestAKWayMergeOfADominantInputEndsWithItsStage(t *testing.T) {
	var bs []*Batch
	big := NewBuilder(Arity{1, 1}, 100)
	for k := range int64(100) {
		big.Push1(100+k, 0, 0, 1)
	}
	b, err := big.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	bs = append(bs, b)
	for i := range uint64(4) {
		small := NewBuilder(Arity{1, 1}, 1)
		small.Push1(int64(i+1), 0, i+1, 1)
		b, err := small.Build(frontier.At(i+1), frontier.At(i+2))
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	if bigInput(bs, kwDefault) != 0 {
		t.Fatal("the first input does not dominate")
	}
	for _, step := range []int64{1, 5, 7, 1 << 20} {
		m := NewMergerN(bs, frontier.Min())
		for !m.Done() {
			fuel := step
			m.Work(&fuel)
		}
		out, err := m.Result()
		if err != nil || out.Len() != 104 {
			t.Fatalf("steps of %d: err %v, %d updates, want 104", step, err, out.Len())
		}
	}
}

// TestATwoInputTreeStartsAtItsLeastHead: beside a dominant input, a
// tree of two inputs starts at the one of the lesser head, which here is
// the second, on the Go loop and the assembly's alike.
func TestATwoInputTreeStartsAtItsLeastHead(t *testing.T) {
	mk := func(lo uint64, keys ...int64) *Batch {
		bld := NewBuilder(Arity{1, 1}, len(keys))
		for _, k := range keys {
			bld.Push1(k, 0, lo, 1)
		}
		b, err := bld.Build(frontier.At(lo), frontier.At(lo+1))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bs := []*Batch{mk(0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19), mk(1, 5, 20), mk(2, 3, 21)}
	want := "[{0}, {3}) since {0}\n3 | 0 @2 +1\n5 | 0 @1 +1\n10 | 0 @0 +1\n11 | 0 @0 +1\n12 | 0 @0 +1\n13 | 0 @0 +1\n14 | 0 @0 +1\n" +
		"15 | 0 @0 +1\n16 | 0 @0 +1\n17 | 0 @0 +1\n18 | 0 @0 +1\n19 | 0 @0 +1\n20 | 0 @1 +1\n21 | 0 @2 +1"
	for _, slow := range []bool{false, true} {
		m := newMergerN(bs, frontier.Min(), kwParams{stage: kwStage, big: kwDefault.big, bigMin: 3, slow: slow}, 0)
		if m.k11 == nil || m.k11.big == nil || m.k11.p != 2 {
			t.Fatal("not a tree of two beside a dominant input")
		}
		fuel := int64(1 << 20)
		m.Work(&fuel)
		if got, err := m.Result(); err != nil || got.String() != want {
			t.Fatalf("slow=%v: err %v, batch\n%v\nwant\n%v", slow, err, got, want)
		}
	}
}
