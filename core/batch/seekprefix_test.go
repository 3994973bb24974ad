package batch

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestCursorSeekPrefix checks SeekKey, SeekKeyBinary and SeekVal with a
// row shorter than the arity, which is a prefix: the cursor lands on the
// first key (val) whose leading columns are at or after it. A short row
// indexed past its end before.
func TestCursorSeekPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: rapid.IntRange(1, 3).Draw(t, "ka"), Val: rapid.IntRange(1, 3).Draw(t, "va")}
		b, _ := drawBatch(t, ar, 0, 3, "b")
		var keys [][]int64
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			keys = append(keys, slices.Clone(c.Key()))
		}
		n := rapid.IntRange(0, ar.Key-1).Draw(t, "n")
		probes := rapid.SliceOf(rapid.SliceOfN(rapid.Int64Range(-3, 4), n, n)).Draw(t, "probes")
		slices.SortFunc(probes, cmpRow)
		g, s := b.Cursor(), b.Cursor()
		for _, p := range probes {
			g.SeekKey(p)
			s.SeekKeyBinary(p)
			want := len(keys)
			for i, k := range keys {
				if cmpRow(k[:n], p) >= 0 {
					want = i
					break
				}
			}
			if g.KeyIndex() != want || s.KeyIndex() != want {
				t.Fatalf("seek prefix %v: gallop %d, binary %d, want %d (keys %v)", p, g.KeyIndex(), s.KeyIndex(), want, keys)
			}
		}
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			var vals [][]int64
			for ; c.ValValid(); c.StepVal() {
				vals = append(vals, slices.Clone(c.Val()))
			}
			m := rapid.IntRange(0, ar.Val-1).Draw(t, "m")
			p := rapid.SliceOfN(rapid.Int64Range(-3, 4), m, m).Draw(t, "val probe")
			c.RewindVals()
			c.SeekVal(p)
			want := len(vals)
			for i, v := range vals {
				if cmpRow(v[:m], p) >= 0 {
					want = i
					break
				}
			}
			got := len(vals)
			if c.ValValid() {
				got = slices.IndexFunc(vals, func(v []int64) bool { return slices.Equal(v, c.Val()) })
			}
			if got != want {
				t.Fatalf("seek val prefix %v: at %d, want %d (vals %v)", p, got, want, vals)
			}
		}
	})
}

// A seek row longer than the arity is compared on the arity's columns
// only, as SeekKey and SeekVal document: it lands where its leading
// columns do.
func TestCursorSeekIgnoresColumnsBeyondTheArity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ar := Arity{Key: rapid.IntRange(1, 2).Draw(t, "ka"), Val: rapid.IntRange(1, 2).Draw(t, "va")}
		b, _ := drawBatch(t, ar, 0, 3, "b")
		key := rapid.SliceOfN(rapid.Int64Range(-3, 4), ar.Key, ar.Key).Draw(t, "key")
		val := rapid.SliceOfN(rapid.Int64Range(-3, 4), ar.Val, ar.Val).Draw(t, "val")
		extra := rapid.SliceOfN(rapid.Int64Range(-9, 9), 1, 3).Draw(t, "extra")
		exact, long := b.Cursor(), b.Cursor()
		exact.SeekKey(key)
		long.SeekKey(append(slices.Clone(key), extra...))
		if exact.KeyIndex() != long.KeyIndex() {
			t.Fatalf("seek %v: %d, with extra columns %v: %d", key, exact.KeyIndex(), extra, long.KeyIndex())
		}
		if exact.KeyValid() {
			exact.SeekVal(val)
			long.SeekVal(append(slices.Clone(val), extra...))
			if exact.ValValid() != long.ValValid() || exact.ValValid() && !slices.Equal(exact.Val(), long.Val()) {
				t.Fatalf("seek val %v and with extra columns %v differ", val, extra)
			}
		}
	})
}
