package frontier

import (
	"maps"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestLatticeTable(t *testing.T) {
	for _, tc := range []struct {
		a, b       string
		le         bool
		join, meet string
	}{
		{"{0}", "{0}", true, "{0}", "{0}"},
		{"{1}", "{3}", true, "{3}", "{1}"},
		{"{3}", "{1}", false, "{3}", "{1}"},
		{"{5}", "{}", true, "{}", "{5}"},
		{"{}", "{5}", false, "{}", "{5}"},
		{"{}", "{}", true, "{}", "{}"},
	} {
		a, b := MustParse(tc.a), MustParse(tc.b)
		if got := a.LessEqual(b); got != tc.le {
			t.Errorf("%v <= %v = %v, want %v", a, b, got, tc.le)
		}
		if got := a.Join(b).String(); got != tc.join {
			t.Errorf("%v join %v = %v, want %v", a, b, got, tc.join)
		}
		if got := a.Meet(b).String(); got != tc.meet {
			t.Errorf("%v meet %v = %v, want %v", a, b, got, tc.meet)
		}
	}
}

func TestBeyondAndAdvance(t *testing.T) {
	for _, tc := range []struct {
		f       string
		t       Time
		beyond  bool
		advance Time
	}{
		{"{3}", 2, false, 3},
		{"{3}", 3, true, 3},
		{"{3}", 7, true, 7},
		{"{}", 0, false, 0},
		{"{}", 9, false, 9},
		{"{0}", 0, true, 0},
	} {
		f := MustParse(tc.f)
		if got := f.Beyond(tc.t); got != tc.beyond {
			t.Errorf("%d beyond %v = %v, want %v", tc.t, f, got, tc.beyond)
		}
		if got := f.AdvanceBy(tc.t); got != tc.advance {
			t.Errorf("advance %d by %v = %d, want %d", tc.t, f, got, tc.advance)
		}
	}
	if Min() != At(0) || (Frontier{}) != Min() {
		t.Fatal("zero frontier must be {0}")
	}
	if got := At(MaxTime).StepForward(); !got.IsEmpty() {
		t.Fatalf("StepForward of {max} = %v, want {}", got)
	}
	if got := At(4).StepBack(); got != At(3) {
		t.Fatalf("StepBack {4} = %v", got)
	}
	// Nothing lies before {0}, and {} steps back to itself: neither wraps.
	if got := Min().StepBack(); got != Min() {
		t.Fatalf("StepBack {0} = %v, want {0}", got)
	}
	if got := Empty().StepBack(); !got.IsEmpty() {
		t.Fatalf("StepBack {} = %v, want {}", got)
	}
}

// TestAdvanceByProperty checks the defining property of advance_by (§2.1): the
// advanced time compares identically to t against every time beyond f.
func TestAdvanceByProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Uint64Range(0, 20).Draw(t, "t")
		var f Frontier
		if rapid.Bool().Draw(t, "empty") {
			f = Empty()
		} else {
			f = At(rapid.Uint64Range(0, 20).Draw(t, "f"))
		}
		a := f.AdvanceBy(x)
		for y := Time(0); y <= 25; y++ {
			if f.Beyond(y) && (x <= y) != (a <= y) {
				t.Fatalf("advance %d by %v = %d compares differently to %d", x, f, a, y)
			}
		}
		if a < x {
			t.Fatalf("advance went backwards")
		}
	})
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "3", "{x}", "{-1}", "{1,2}", "[1]"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
	for _, s := range []string{"{}", "{0}", "{18446744073709551615}"} {
		if got := MustParse(s).String(); got != s {
			t.Errorf("round trip %q = %q", s, got)
		}
	}
}

func TestMutableFrontier(t *testing.T) {
	var m MutableFrontier
	if !m.Frontier().IsEmpty() {
		t.Fatal("no holds must give {}")
	}
	steps := []struct {
		f     string
		delta int64
		want  string
		ok    bool
	}{
		{"{5}", 1, "{5}", true},
		{"{3}", 2, "{3}", true},
		{"{}", 1, "{3}", true}, // a hold at {} holds nothing
		{"{3}", -1, "{3}", true},
		{"{3}", -1, "{5}", true},
		{"{3}", -1, "{5}", false}, // not held
		{"{5}", -2, "{5}", false}, // more than held
		{"{5}", -1, "{}", true},
	}
	for i, s := range steps {
		err := m.Update(MustParse(s.f), s.delta)
		if (err == nil) != s.ok {
			t.Fatalf("step %d: Update(%s, %d) err = %v, want ok=%v", i, s.f, s.delta, err, s.ok)
		}
		if got := m.Frontier().String(); got != s.want {
			t.Fatalf("step %d: frontier %s, want %s (%v)", i, got, s.want, m.String())
		}
	}
	if err := m.Move(At(1), At(2)); err == nil {
		t.Fatal("moving an unheld hold must fail")
	}
	if !m.IsEmpty() {
		t.Fatalf("failed Move must leave m unchanged: %v", m.String())
	}
}

func TestMutableFrontierMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m MutableFrontier
		model := map[Time]int64{}
		for range rapid.IntRange(0, 50).Draw(t, "steps") {
			x := rapid.Uint64Range(0, 12).Draw(t, "t")
			if rapid.IntRange(0, 2).Draw(t, "op") == 0 {
				// Move one hold from x to y.
				y := rapid.Uint64Range(0, 12).Draw(t, "to")
				before := m.String()
				err := m.Move(At(x), At(y))
				if x == y {
					// Moving to the same frontier is a no-op, held or not.
					if err != nil || m.String() != before {
						t.Fatalf("Move(%d, %d): err %v, %s -> %s", x, y, err, before, m.String())
					}
					continue
				}
				if model[x] < 1 {
					if err == nil || m.String() != before {
						t.Fatalf("Move of an unheld %d: err %v, %s -> %s", x, err, before, m.String())
					}
					continue
				}
				if err != nil {
					t.Fatalf("Move(%d, %d): %v", x, y, err)
				}
				model[x]--
				model[y]++
			} else {
				d := rapid.Int64Range(-2, 2).Draw(t, "d")
				err := m.Update(At(x), d)
				if model[x]+d < 0 {
					if err == nil {
						t.Fatalf("negative count accepted")
					}
					continue
				}
				model[x] += d
			}
			// The entries are exactly the model's positive counts.
			want := map[Time]int64{}
			for tt, n := range model {
				if n > 0 {
					want[tt] = n
				}
			}
			got := map[Time]int64{}
			for i, h := range m.entries {
				if h.n <= 0 || (i > 0 && m.entries[i-1].t >= h.t) {
					t.Fatalf("entries not sorted with positive counts: %v", m.String())
				}
				got[h.t] = h.n
			}
			if !maps.Equal(got, want) {
				t.Fatalf("entries %v, model %v", m.String(), want)
			}
			least := Empty()
			for tt := range want {
				least = least.Meet(At(tt))
			}
			if m.Frontier() != least {
				t.Fatalf("frontier %v, model %v", m.Frontier(), least)
			}
		}
		rt, err := ParseMutable(m.String())
		if err != nil || rt.String() != m.String() {
			t.Fatalf("round trip %q: %q %v", m.String(), rt.String(), err)
		}
	})
}

func TestDescription(t *testing.T) {
	d := Description{Lower: At(1), Upper: At(4), Since: At(2)}
	s := d.String()
	if s != "[{1}, {4}) since {2}" {
		t.Fatalf("String = %q", s)
	}
	got, err := ParseDescription(s)
	if err != nil || got != d {
		t.Fatalf("ParseDescription(%q) = %v, %v", s, got, err)
	}
	if !d.Contains(1) || !d.Contains(3) || d.Contains(4) || d.Contains(0) {
		t.Fatal("Contains is wrong")
	}
	for _, ok := range []string{"[{2}, {2}) since {0}", "[{2}, {}) since {0}", "[{}, {}) since {0}"} {
		if _, err := ParseDescription(ok); err != nil {
			t.Errorf("ParseDescription(%q): %v", ok, err)
		}
	}
	open := Description{Lower: At(4), Upper: Empty(), Since: Min()}
	if !open.Contains(MaxTime) {
		t.Fatal("[{4}, {}) must contain every time from 4")
	}
	for _, bad := range []string{"", "[{1}, {2}", "[{1} {2}) since {0}", "[{1}, {2}) {0}", "[{x}, {2}) since {0}",
		// An upper before the lower bounds no batch (B3).
		"[{3}, {2}) since {0}", "[{}, {2}) since {0}"} {
		if _, err := ParseDescription(bad); err == nil {
			t.Errorf("ParseDescription(%q) succeeded", bad)
		}
	}
}

// TestFirstBefore: FirstBefore finds the first time f is not beyond, as a
// loop of Beyond does, for the empty frontier, times on both sides of f's
// and at it, and no times.
func TestFirstBefore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := At(rapid.Uint64Range(0, 8).Draw(t, "f"))
		if rapid.Bool().Draw(t, "empty") {
			f = Empty()
		}
		ts := rapid.SliceOfN(rapid.Uint64Range(0, 10), 0, 40).Draw(t, "ts")
		want := -1
		for i, x := range ts {
			if !f.Beyond(x) {
				want = i
				break
			}
		}
		if got := f.FirstBefore(ts); got != want {
			t.Fatalf("%v.FirstBefore(%v) = %d, want %d", f, ts, got, want)
		}
	})
}

// TestFirstBeforeTimeAtFrontier: a time equal to the frontier's is beyond
// it (F2), so FirstBefore passes over it to the first time really before
// the frontier. The property above draws such a chunk only now and then.
func TestFirstBeforeTimeAtFrontier(t *testing.T) {
	for _, c := range []struct {
		f    Frontier
		ts   []Time
		want int
	}{
		{At(4), []Time{4, 0}, 1},
		{At(5), []Time{5, 5, 9, 5, 4}, 4},
		{At(5), []Time{6, 5, 7, 5, 6, 5, 8, 3, 5}, 7},
		{At(5), []Time{5, 5, 5, 5, 5}, -1},
		{At(0), []Time{0, 0}, -1},
	} {
		if got := c.f.FirstBefore(c.ts); got != c.want {
			t.Errorf("%v.FirstBefore(%v) = %d, want %d", c.f, c.ts, got, c.want)
		}
	}
}

// BenchmarkFirstBefore checks a round's chunk of 1,000 times against a
// frontier they are all beyond: the scan an input's Send and an
// arrangement's admission make of every chunk.
func BenchmarkFirstBefore(b *testing.B) {
	ts := make([]Time, 1000)
	for i := range ts {
		ts[i] = Time(100 + i*7919%1000)
	}
	f := At(100)
	for b.Loop() {
		if f.FirstBefore(ts) >= 0 {
			b.Fatal("found a time before the frontier")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ts)), "ns/time")
}

// TestMutableFrontierCountsDoNotWrap: a count that would leave int64 is an
// error that leaves the multiset unchanged, by Update and by Move's in-place
// step alike; it never wraps to a negative count (F3).
func TestMutableFrontierCountsDoNotWrap(t *testing.T) {
	const max = int64(^uint64(0) >> 1)
	var m MutableFrontier
	if err := m.Update(At(5), max); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(At(5), 1); err == nil || !strings.Contains(err.Error(), "1 more holds at {5} overflow the 9223372036854775807 held") {
		t.Fatalf("an overflowing Update: %v; want it refused as an overflow, not as a release", err)
	}
	if err := m.Update(At(1), 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Move(At(1), At(5)); err == nil {
		t.Fatal("an overflowing Move was accepted")
	}
	if m.String() != "{1:1, 5:9223372036854775807}" {
		t.Fatalf("after refused changes: %v", m.String())
	}
}

// ParseMutable reads a multiset of holds: entries in any order, and a time
// repeated, add up to the canonical form String writes; a count at a time
// adding past int64 is an error, not a wrapped count.
func TestParseMutableTakesUnsortedAndRepeatedTimes(t *testing.T) {
	for in, want := range map[string]string{
		"{5:1, 2:1, 5:2}": "{2:1, 5:3}",
		"{9:1, 3:4, 1:1}": "{1:1, 3:4, 9:1}",
		"{4:2, 4:2}":      "{4:4}",
	} {
		m, err := ParseMutable(in)
		if err != nil || m.String() != want {
			t.Fatalf("ParseMutable(%q) = %v, %v; want %v", in, m.String(), err, want)
		}
		if f, _ := ParseMutable(want); f.Frontier() != m.Frontier() || f.Len() != m.Len() {
			t.Fatalf("ParseMutable(%q) and ParseMutable(%q) differ", in, want)
		}
	}
	for _, in := range []string{"{4:9223372036854775807, 4:1}", "{4:0}", "{4:-1}", "{4:1,}"} {
		if m, err := ParseMutable(in); err == nil {
			t.Fatalf("ParseMutable(%q) = %v, want an error", in, m.String())
		}
	}
}

// TestParseRefusesAnUnclosedBrace: a frontier or a multiset of holds
// missing its closing brace, or its opening one, is refused, not read
// as what lies between.
func TestParseRefusesAnUnclosedBrace(t *testing.T) {
	for _, s := range []string{"{3", "3}", "{", "{ ", "3"} {
		if f, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, f)
		}
	}
	for _, s := range []string{"{3:12", "{3:1, 4:12", "3:1}"} {
		if m, err := ParseMutable(s); err == nil {
			t.Errorf("ParseMutable(%q) = %v, want an error", s, m.String())
		}
	}
}
