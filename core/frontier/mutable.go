package frontier

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MutableFrontier is a counted multiset of held times (MutableAntichain). Its
// frontier is the least time with a positive count, or {} when nothing is held
// (F3). Holds are few (one per handle), so entries live in a small slice sorted
// by time.
type MutableFrontier struct {
	entries []hold // sorted by time, every count > 0
}

type hold struct {
	t Time
	n int64
}

// Update adds delta holds at f. Updating at {} is a no-op: a hold at the empty
// frontier holds nothing. It returns an error if a count would go negative
// (releasing a hold that was never taken) or leave int64, leaving m
// unchanged.
func (m *MutableFrontier) Update(f Frontier, delta int64) error {
	t, ok := f.Time()
	if !ok || delta == 0 {
		return nil
	}
	i, found := m.find(t)
	if !found {
		if delta < 0 {
			return fmt.Errorf("frontier: release of %d holds at {%d}, none held", -delta, t)
		}
		m.entries = slices.Insert(m.entries, i, hold{t, delta})
		return nil
	}
	n := m.entries[i].n + delta
	switch {
	case delta > 0 && n < 0:
		return fmt.Errorf("frontier: %d more holds at {%d} overflow the %d held", delta, t, m.entries[i].n)
	case n < 0:
		return fmt.Errorf("frontier: release of %d holds at {%d}, %d held", -delta, t, m.entries[i].n)
	case n == 0:
		m.entries = slices.Delete(m.entries, i, i+1)
	default:
		m.entries[i].n = n
	}
	return nil
}

// find returns where t's entry is or would go, and whether it is there.
// Holds are few, so a scan of the slice (no call per comparison) finds
// them faster than a binary search would, up to a handful.
func (m *MutableFrontier) find(t Time) (int, bool) {
	e := m.entries
	if len(e) > 8 {
		return slices.BinarySearchFunc(e, t, func(h hold, t Time) int {
			switch {
			case h.t < t:
				return -1
			case h.t > t:
				return 1
			}
			return 0
		})
	}
	for i := range e {
		if e[i].t >= t {
			return i, e[i].t == t
		}
	}
	return len(e), false
}

// Move moves one hold from old to new (new is taken first, so moving to the
// same frontier is a no-op). A hold moving forward past no other held time
// (a reader advancing its hold, the common move) is done in place: the
// entry's time changes when it was the only hold there, the next entry's
// count grows when it is at new (several readers advancing together, one
// after another), and otherwise one entry is inserted or removed.
func (m *MutableFrontier) Move(old, new Frontier) error {
	if old == new {
		return nil
	}
	if to, ok := new.Time(); ok {
		if from, ok := old.Time(); ok && from < to {
			if i, found := m.find(from); found {
				e := m.entries
				j := i + 1
				switch {
				case j == len(e) || to < e[j].t:
					// Nothing held in (from, to].
					if e[i].n == 1 {
						e[i].t = to
					} else {
						e[i].n--
						m.entries = slices.Insert(e, j, hold{to, 1})
					}
					return nil
				case e[j].t == to && e[j].n < math.MaxInt64:
					e[j].n++
					if e[i].n == 1 {
						m.entries = slices.Delete(e, i, j)
					} else {
						e[i].n--
					}
					return nil
				}
			}
		}
	}
	if err := m.Update(new, 1); err != nil {
		return err
	}
	if err := m.Update(old, -1); err != nil {
		_ = m.Update(new, -1)
		return err
	}
	return nil
}

// Frontier returns the least held time, or {} when nothing is held.
func (m *MutableFrontier) Frontier() Frontier {
	if len(m.entries) == 0 {
		return Empty()
	}
	return At(m.entries[0].t)
}

// Count returns the number of holds at f.
func (m *MutableFrontier) Count(f Frontier) int64 {
	t, ok := f.Time()
	if !ok {
		return 0
	}
	for _, h := range m.entries {
		if h.t == t {
			return h.n
		}
	}
	return 0
}

// Len returns the total number of holds (with multiplicity).
func (m *MutableFrontier) Len() int64 {
	var n int64
	for _, h := range m.entries {
		n += h.n
	}
	return n
}

// Clone returns an independent copy of m.
func (m *MutableFrontier) Clone() MutableFrontier {
	return MutableFrontier{entries: slices.Clone(m.entries)}
}

// IsEmpty reports whether nothing is held.
func (m *MutableFrontier) IsEmpty() bool { return len(m.entries) == 0 }

// String formats m as "{t1:n1, t2:n2}".
func (m *MutableFrontier) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, h := range m.entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatUint(h.t, 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(h.n, 10))
	}
	b.WriteByte('}')
	return b.String()
}

// ParseMutable parses the String form "{t1:n1, t2:n2}". As the holds of a
// multiset, entries may come in any order and may repeat a time, whose
// counts then add ("{5:1, 2:1, 5:2}" is "{2:1, 5:3}"); a count must be
// positive, and counts at one time adding past int64 are an error.
func ParseMutable(s string) (MutableFrontier, error) {
	var m MutableFrontier
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return m, fmt.Errorf("frontier: %q: want {t:n, ...}", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return m, nil
	}
	for part := range strings.SplitSeq(inner, ",") {
		ts, ns, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return m, fmt.Errorf("frontier: %q: entry %q lacks ':'", s, part)
		}
		t, err := strconv.ParseUint(strings.TrimSpace(ts), 10, 64)
		if err != nil {
			return m, fmt.Errorf("frontier: %q: %w", s, err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(ns), 10, 64)
		if err != nil || n <= 0 {
			return m, fmt.Errorf("frontier: %q: count %q must be a positive integer", s, ns)
		}
		if err := m.Update(At(t), n); err != nil {
			return m, err
		}
	}
	return m, nil
}
