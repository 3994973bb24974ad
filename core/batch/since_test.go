package batch

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// TestMergeUnderEmptySinceKeepsAdvancedTimes: a batch whose times were
// advanced to a since beyond its upper, merged again once every hold is gone
// (compaction {}), keeps those times and stays valid (B3).
func TestMergeUnderEmptySinceKeepsAdvancedTimes(t *testing.T) {
	ar := Arity{Key: 1, Val: 1}
	b1 := mustParse(t, ar, "[{0}, {2}) since {0}\n1 | 1 @0 +1\n1 | 1 @1 +1")
	b2 := mustParse(t, ar, "[{2}, {3}) since {0}\n2 | 2 @2 +1")
	m, err := Merge(b1, b2, frontier.At(3)) // since {3} > upper {3}'s times
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	b3 := mustParse(t, ar, "[{3}, {4}) since {0}\n1 | 1 @3 -2")
	out, err := Merge(m, b3, frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Check(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out.Desc().Since != frontier.Empty() {
		t.Fatalf("since %v, want {}", out.Desc().Since)
	}
	// (1,1) +2 @3 and -2 @3 cancel; (2,2) sits at its advanced time 3.
	if got := out.String(); got != "[{0}, {4}) since {}\n2 | 2 @3 +1" {
		t.Fatalf("got\n%s", got)
	}
}

// TestJoinEmptyIsTheirMerge: JoinEmpty of a run of adjacent batches without
// updates describes what merging them makes, at once (NewMergerN) or two
// at a time (Merge), whatever their sinces and the compaction frontier.
func TestJoinEmptyIsTheirMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: 1, Val: 1}
		n := rapid.IntRange(1, 6).Draw(t, "n")
		since := func(label string) frontier.Frontier {
			if rapid.IntRange(0, 5).Draw(t, label+"-empty") == 0 {
				return frontier.Empty()
			}
			return frontier.At(rapid.Uint64Range(0, 30).Draw(t, label))
		}
		var bs []*Batch
		lo := rapid.Uint64Range(0, 5).Draw(t, "lower")
		for i := range n {
			hi := lo + rapid.Uint64Range(1, 4).Draw(t, "width")
			b, err := Parse(ar, fmt.Sprintf("[{%d}, {%d}) since %v", lo, hi, since(fmt.Sprint("since", i))))
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
			lo = hi
		}
		comp := since("compaction")
		got := JoinEmpty(bs, comp)
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
		pair := bs[0]
		for _, b := range bs[1:] {
			var err error
			if pair, err = Merge(pair, b, comp); err != nil {
				t.Fatal(err)
			}
		}
		if n == 1 {
			d := bs[0].Desc()
			d.Since = d.Since.Join(comp)
			if got.Desc() != d {
				t.Fatalf("one batch %v: joined %v, want %v", bs[0].Desc(), got.Desc(), d)
			}
			return
		}
		if got.Desc() != pair.Desc() || got.Len() != 0 {
			t.Fatalf("joined %v, merged two at a time %v", got.Desc(), pair.Desc())
		}
		m := NewMergerN(bs, comp)
		fuel := int64(1 << 20)
		m.Work(&fuel)
		all, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		if got.Desc() != all.Desc() {
			t.Fatalf("joined %v, merged at once %v", got.Desc(), all.Desc())
		}
	})
}
