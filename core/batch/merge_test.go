package batch

import (
	"maps"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// drawRunBatch builds a batch whose keys fall in clusters, so that merging
// two such batches alternates between long runs from one side (which the
// Merger copies in bulk) and interleaved keys (which it merges key by key).
// It returns the batch and the largest number of updates one key holds.
// Some batches are flat: distinct keys, each with one val and one update.
func drawRunBatch(t *rapid.T, ar Arity, lo, hi uint64, label string) (*Batch, int) {
	bld := NewBuilder(ar, 0)
	// A flat batch has distinct keys, so one val per key and one update
	// per val (the Merger has a fast path for two of them).
	flat := rapid.Bool().Draw(t, label+"-flat")
	seen := map[int64]bool{}
	for range rapid.IntRange(0, 200).Draw(t, label+"-n") {
		seg := rapid.IntRange(0, 7).Draw(t, "seg")
		off := rapid.Int64Range(0, int64(rapid.SampledFrom([]int{3, 40}).Draw(t, "spread"))).Draw(t, "off")
		if flat {
			if seen[int64(seg)*1000+off] {
				continue
			}
			seen[int64(seg)*1000+off] = true
		}
		k := make([]int64, ar.Key)
		for i := range k {
			k[i] = int64(seg)*1000 + off
		}
		v := make([]int64, ar.Val)
		for i := range v {
			v[i] = rapid.Int64Range(0, 3).Draw(t, "v")
		}
		bld.Push(k, v, rapid.Uint64Range(lo, hi-1).Draw(t, "t"), rapid.Int64Range(-2, 2).Draw(t, "d"))
	}
	b, err := bld.Build(frontier.At(lo), frontier.At(hi))
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for k := range b.Keys() {
		most = max(most, int(b.valOffs[b.keyOffs[k+1]]-b.valOffs[b.keyOffs[k]]))
	}
	return b, most
}

// TestMergeRunsAndFuel merges batches with long runs and multi-update keys
// under small fuel and checks the result update for update against a model,
// and that every Work call uses its fuel, overshooting by less than one key.
func TestMergeRunsAndFuel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: 1, Val: 1}
		if rapid.IntRange(0, 3).Draw(t, "wide") == 0 {
			ar = Arity{Key: rapid.IntRange(0, 2).Draw(t, "ka"), Val: rapid.IntRange(0, 2).Draw(t, "va")}
		}
		b1, most1 := drawRunBatch(t, ar, 0, 4, "b1")
		b2, most2 := drawRunBatch(t, ar, 4, 8, "b2")
		comp := drawCompaction(t)
		m := NewMerger(b1, b2, comp)
		total := int64(b1.Len() + b2.Len())
		for !m.Done() {
			f := rapid.Int64Range(1, 30).Draw(t, "fuel")
			fuel := f
			before := m.WorkDone()
			m.Work(&fuel)
			used := m.WorkDone() - before
			if used != f-fuel {
				t.Fatalf("Work subtracted %d but did %d", f-fuel, used)
			}
			// One key of the output: at most the largest key of each side.
			if used >= f+int64(most1+most2) {
				t.Fatalf("Work used %d of fuel %d: more than one key over (largest keys %d, %d)", used, f, most1, most2)
			}
			if !m.Done() && used < f {
				t.Fatalf("Work stopped at %d of fuel %d before the merge was done", used, f)
			}
		}
		if m.WorkDone() != total {
			t.Fatalf("work %d, want %d", m.WorkDone(), total)
		}
		out, err := m.Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Check(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		s, adv := comp.Time()
		adv = adv && s > 0
		want := map[modelKey]int64{}
		for _, b := range []*Batch{b1, b2} {
			for _, u := range b.Updates() {
				tm := u.Time
				if adv {
					tm = max(tm, s)
				}
				mk := modelKey{rowKey(u.Key, u.Val), tm}
				if want[mk] += u.Diff; want[mk] == 0 {
					delete(want, mk)
				}
			}
		}
		got := map[modelKey]int64{}
		for _, u := range out.Updates() {
			got[modelKey{rowKey(u.Key, u.Val), u.Time}] += u.Diff
		}
		if !maps.Equal(got, want) {
			t.Fatalf("merge of\n%s\nand\n%s\nunder %v:\n%s", b1, b2, comp, out)
		}
	})
}
