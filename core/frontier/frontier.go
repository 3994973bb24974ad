package frontier

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Time is a logical timestamp. Times are totally ordered.
type Time = uint64

// MaxTime is the greatest representable time.
const MaxTime Time = math.MaxUint64

// Frontier is an antichain of a total order: a single time {t}, or the empty
// antichain {}. The zero value is {0}, the minimum frontier.
type Frontier struct {
	t     Time
	empty bool
}

// At returns the frontier {t}.
func At(t Time) Frontier { return Frontier{t: t} }

// Min returns the minimum frontier {0}.
func Min() Frontier { return Frontier{} }

// Empty returns the empty frontier {}: complete, the greatest frontier.
func Empty() Frontier { return Frontier{empty: true} }

// IsEmpty reports whether f is {}.
func (f Frontier) IsEmpty() bool { return f.empty }

// Time returns f's element and true, or (0, false) when f is empty.
func (f Frontier) Time() (Time, bool) { return f.t, !f.empty }

// MustTime returns f's element. REQUIRES: f is not empty.
func (f Frontier) MustTime() Time {
	if f.empty {
		panic("frontier: MustTime of the empty frontier")
	}
	return f.t
}

// Beyond reports whether time t is beyond f, i.e. f = {x} with x <= t (§2.1).
func (f Frontier) Beyond(t Time) bool { return !f.empty && f.t <= t }

// FirstBefore returns the index of the first of ts that f is not beyond,
// or -1 when f is beyond them all: a chunk's check against its input's
// frontier. It takes the least time first, without a branch a time (a
// loop of Beyond tests the frontier's two fields every time), in four
// running minima, since one waits on the last time's compare
// (BenchmarkFirstBefore), and looks for the index only when there is one
// to report.
func (f Frontier) FirstBefore(ts []Time) int {
	if len(ts) == 0 {
		return -1
	}
	if f.empty {
		return 0
	}
	l0, l1, l2, l3 := ts[0], ts[0], ts[0], ts[0]
	n := len(ts) &^ 3
	for i := 0; i < n; i += 4 {
		q := ts[i : i+4 : i+4]
		l0, l1, l2, l3 = min(l0, q[0]), min(l1, q[1]), min(l2, q[2]), min(l3, q[3])
	}
	for _, t := range ts[n:] {
		l0 = min(l0, t)
	}
	if lo := min(l0, l1, l2, l3); lo >= f.t {
		return -1
	}
	for i, t := range ts {
		if t < f.t {
			return i
		}
	}
	return -1
}

// LessEqual reports f <= g: every time beyond g is beyond f (g is later).
func (f Frontier) LessEqual(g Frontier) bool {
	if g.empty {
		return true
	}
	if f.empty {
		return false
	}
	return f.t <= g.t
}

// Less reports f < g.
func (f Frontier) Less(g Frontier) bool { return f.LessEqual(g) && f != g }

// Join returns the later of f and g (antichain join; {} absorbs).
func (f Frontier) Join(g Frontier) Frontier {
	if f.LessEqual(g) {
		return g
	}
	return f
}

// Meet returns the earlier of f and g (antichain meet; {} is the identity).
func (f Frontier) Meet(g Frontier) Frontier {
	if f.LessEqual(g) {
		return f
	}
	return g
}

// AdvanceBy returns t advanced by f: the largest time that compares with every
// time beyond f as t does. For f = {x} that is max(t, x); {} leaves t alone (§2.1).
func (f Frontier) AdvanceBy(t Time) Time {
	if !f.empty && t < f.t {
		return f.t
	}
	return t
}

// StepBack returns {t-1} for f = {t} with t > 0, and f otherwise.
func (f Frontier) StepBack() Frontier {
	if !f.empty && f.t > 0 {
		return At(f.t - 1)
	}
	return f
}

// StepForward returns {t+1} for f = {t} (or {} at MaxTime), and {} for {}.
func (f Frontier) StepForward() Frontier {
	if f.empty || f.t == MaxTime {
		return Empty()
	}
	return At(f.t + 1)
}

// String formats f as "{t}" or "{}".
func (f Frontier) String() string {
	if f.empty {
		return "{}"
	}
	return "{" + strconv.FormatUint(f.t, 10) + "}"
}

// Parse parses "{t}" or "{}" (spaces around the element are allowed).
func Parse(s string) (Frontier, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return Frontier{}, fmt.Errorf("frontier: %q: want {t} or {}", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return Empty(), nil
	}
	t, err := strconv.ParseUint(inner, 10, 64)
	if err != nil {
		return Frontier{}, fmt.Errorf("frontier: %q: %w", s, err)
	}
	return At(t), nil
}

// MustParse is Parse for tests and literals; it panics on error.
func MustParse(s string) Frontier {
	f, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return f
}
