package batch

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
)

// ErrOverflow reports that consolidating diffs left the int64 range.
var ErrOverflow = errors.New("batch: numeric overflow in diff")

// OverflowError is the error of a build whose consolidated diffs left int64
// (Builder.Build, Batcher.Seal). It wraps ErrOverflow.
type OverflowError struct {
	// Times are the times of the updates that overflowed, ascending and
	// distinct.
	Times []frontier.Time
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("%v at times %v", ErrOverflow, e.Times)
}

func (e *OverflowError) Unwrap() error { return ErrOverflow }

// Arity is the number of int64 columns of the key and of the val rows.
type Arity struct {
	Key, Val int
}

// String formats the arity as "key=K val=V".
func (a Arity) String() string { return fmt.Sprintf("key=%d val=%d", a.Key, a.Val) }

// Batch is an immutable, sorted, consolidated set of updates with a
// Description. See the package documentation for layout and invariants.
type Batch struct {
	desc    frontier.Description
	ar      Arity
	keys    []int64
	keyOffs []uint32
	vals    []int64
	valOffs []uint32
	times   []uint64
	diffs   []int64
	// saturated: a merge that made this batch, or made a batch merged
	// into it, saturated an overflowed diff (see Saturated).
	saturated bool
}

// Empty returns a batch with no updates describing [lower, upper): a progress
// record saying nothing happened in that interval (§1.4).
//
// Empty does not check its bounds: an upper before lower makes a batch a
// spine refuses (spine.ErrEmptyInterval) and a merge refuses
// (ErrUpperBeforeLower).
func Empty(ar Arity, lower, upper frontier.Frontier) *Batch {
	return &Batch{
		desc:    frontier.Description{Lower: lower, Upper: upper, Since: frontier.Min()},
		ar:      ar,
		keyOffs: []uint32{0},
		valOffs: []uint32{0},
	}
}

// Desc returns the batch's description.
func (b *Batch) Desc() frontier.Description { return b.desc }

// Lower returns the batch's lower frontier.
func (b *Batch) Lower() frontier.Frontier { return b.desc.Lower }

// Upper returns the batch's upper frontier.
func (b *Batch) Upper() frontier.Frontier { return b.desc.Upper }

// Saturated reports that a merge that made b, or one that made a batch
// merged into b, found a consolidated diff outside int64 and saturated it
// to the bound of its sign: some count of b stands for one out of range
// (it is the bound, or the bound summed with later diffs). Readers that
// multiply b's counts report `numeric overflow` where they use them
// (docs/semantics.md §1.1). A build that overflows does not set it: its
// owner reports the overflow at the build's own times, before anything
// reads the batch.
func (b *Batch) Saturated() bool { return b.saturated }

// Arity returns the batch's key and val arity.
func (b *Batch) Arity() Arity { return b.ar }

// Len returns the number of updates.
func (b *Batch) Len() int { return len(b.times) }

// IsEmpty reports whether the batch has no updates.
func (b *Batch) IsEmpty() bool { return len(b.times) == 0 }

// Keys returns the number of distinct keys.
func (b *Batch) Keys() int { return len(b.keyOffs) - 1 }

// Vals returns the number of distinct (key, val) pairs.
func (b *Batch) Vals() int { return len(b.valOffs) - 1 }

// SizeBytes returns the bytes the batch's columns occupy (their lengths, not
// capacities), the measure behind trace-B.
func (b *Batch) SizeBytes() int {
	return 8*(len(b.keys)+len(b.vals)+len(b.times)+len(b.diffs)) + 4*(len(b.keyOffs)+len(b.valOffs))
}

// WithDesc returns a batch sharing b's columns under another description.
// REQUIRES: the description is honest for b's updates (B3). Checking it
// takes a pass over the updates, so only invariant builds (-tags
// invariants) do, and panic naming the first time outside it.
func (b *Batch) WithDesc(d frontier.Description) *Batch {
	c := *b
	c.desc = d
	if invariants.Enabled {
		for _, t := range c.times {
			invariants.Assertf(holds(d, t), "batch: WithDesc(%v) of a batch with an update at %d outside it (B3)", d, t)
		}
	}
	return &c
}

// ProjectVals returns a batch with b's description, keys and updates whose
// val rows are columns [lo, hi) of b's, and true. It shares every column
// but the vals with b (batches are immutable), so it costs one copy of
// the kept val columns. It returns nil and false when a key of b has more
// than one val: projected vals could then collide, which takes a build to
// consolidate. REQUIRES: 0 <= lo <= hi <= b's val arity; a range outside
// it is a programming error, and ProjectVals panics naming it (a check
// once a call) rather than read a neighbouring row's columns.
func (b *Batch) ProjectVals(lo, hi int) (*Batch, bool) {
	if lo < 0 || lo > hi || hi > b.ar.Val {
		panic(fmt.Sprintf("batch: ProjectVals of val columns [%d, %d) of a batch of val arity %d", lo, hi, b.ar.Val))
	}
	nv := b.Vals()
	if nv != b.Keys() {
		return nil, false
	}
	va, w := b.ar.Val, hi-lo
	vals := column[int64](nv * w)
	if w == 1 {
		for j := range nv {
			vals[j] = b.vals[j*va+lo]
		}
	} else {
		for j := range nv {
			copy(vals[j*w:j*w+w], b.vals[j*va+lo:j*va+hi])
		}
	}
	out := &Batch{desc: b.desc, ar: Arity{Key: b.ar.Key, Val: w}, keys: b.keys, keyOffs: b.keyOffs,
		vals: vals, valOffs: b.valOffs, times: b.times, diffs: b.diffs, saturated: b.saturated}
	if invariants.Enabled {
		if err := out.Check(); err != nil {
			invariants.Assertf(false, "batch: ProjectVals produced a bad batch: %v", err)
		}
	}
	return out, true
}

// ValColumnZero reports whether column c of every val row of b is 0.
func (b *Batch) ValColumnZero(c int) bool {
	va := b.ar.Val
	for j := c; j < len(b.vals); j += va {
		if b.vals[j] != 0 {
			return false
		}
	}
	return true
}

// Rows returns b's updates in row form, in the batch's order: rows holds
// each update's key and val (Key+Val columns), a new slice; times and
// diffs are b's own columns, capped at their length (an append copies
// them), which the caller reads and never writes, as no one writes a
// batch (a chunk made of them is not written once sent either).
func (b *Batch) Rows() (rows []int64, times []uint64, diffs []int64) {
	ka, va := b.ar.Key, b.ar.Val
	w := ka + va
	rows = column[int64](b.Len() * w)
	switch {
	case ka == 1 && va == 1 && b.Keys() == b.Len(): // one update per key
		for i, k := range b.keys {
			rows[2*i], rows[2*i+1] = k, b.vals[i]
		}
	case ka == 1 && va == 1:
		// A key and a val a row, written as words: copy would call
		// memmove for each.
		i := 0
		for k, key := range b.keys {
			for v := int(b.keyOffs[k]); v < int(b.keyOffs[k+1]); v++ {
				val := b.vals[v]
				for range int(b.valOffs[v+1] - b.valOffs[v]) {
					rows[i], rows[i+1] = key, val
					i += 2
				}
			}
		}
	default:
		i := 0
		for k := range b.Keys() {
			key := b.key(k)
			for v := int(b.keyOffs[k]); v < int(b.keyOffs[k+1]); v++ {
				val := b.val(v)
				for range int(b.valOffs[v+1] - b.valOffs[v]) {
					copy(rows[i:], key)
					copy(rows[i+ka:], val)
					i += w
				}
			}
		}
	}
	n := len(b.times)
	return rows, b.times[:n:n], b.diffs[:n:n]
}

// key returns key row i.
func (b *Batch) key(i int) []int64 { return b.keys[i*b.ar.Key : (i+1)*b.ar.Key] }

// val returns val row j.
func (b *Batch) val(j int) []int64 { return b.vals[j*b.ar.Val : (j+1)*b.ar.Val] }

// Update is one update in row form, used by tests, text forms and cold paths.
type Update struct {
	Key, Val []int64
	Time     frontier.Time
	Diff     int64
}

// String formats u as "k1 k2 | v1 @t +d".
func (u Update) String() string {
	var sb strings.Builder
	writeRow(&sb, u.Key)
	sb.WriteString(" | ")
	writeRow(&sb, u.Val)
	sb.WriteString(" @")
	sb.WriteString(strconv.FormatUint(u.Time, 10))
	sb.WriteByte(' ')
	if u.Diff > 0 {
		sb.WriteByte('+')
	}
	sb.WriteString(strconv.FormatInt(u.Diff, 10))
	return sb.String()
}

func writeRow(sb *strings.Builder, r []int64) {
	if len(r) == 0 {
		sb.WriteString("()")
		return
	}
	for i, x := range r {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.FormatInt(x, 10))
	}
}

// Updates returns the batch's updates in order (cold path: it allocates).
func (b *Batch) Updates() []Update {
	out := make([]Update, 0, b.Len())
	for k := 0; k < b.Keys(); k++ {
		for v := int(b.keyOffs[k]); v < int(b.keyOffs[k+1]); v++ {
			for u := int(b.valOffs[v]); u < int(b.valOffs[v+1]); u++ {
				out = append(out, Update{Key: b.key(k), Val: b.val(v), Time: b.times[u], Diff: b.diffs[u]})
			}
		}
	}
	return out
}

// String formats the batch as its description followed by one update a line.
func (b *Batch) String() string {
	var sb strings.Builder
	sb.WriteString(b.desc.String())
	for _, u := range b.Updates() {
		sb.WriteString("\n")
		sb.WriteString(u.String())
	}
	return sb.String()
}

// Check verifies invariants B1–B3 and returns the first violation.
func (b *Batch) Check() error {
	nk := b.Keys()
	if len(b.keys) != nk*b.ar.Key || len(b.vals) != b.Vals()*b.ar.Val || len(b.diffs) != len(b.times) {
		return fmt.Errorf("batch: column lengths disagree (keys %d, vals %d, times %d, diffs %d)", len(b.keys), len(b.vals), len(b.times), len(b.diffs))
	}
	if b.keyOffs[0] != 0 || int(b.keyOffs[nk]) != b.Vals() || b.valOffs[0] != 0 || int(b.valOffs[b.Vals()]) != b.Len() {
		return errors.New("batch: offsets do not span the columns")
	}
	for k := 0; k < nk; k++ {
		if k > 0 && slices.Compare(b.key(k-1), b.key(k)) >= 0 {
			return fmt.Errorf("batch: B1: key %d %v not after %v", k, b.key(k), b.key(k-1))
		}
		lo, hi := int(b.keyOffs[k]), int(b.keyOffs[k+1])
		if lo >= hi {
			return fmt.Errorf("batch: B2: key %v owns no vals", b.key(k))
		}
		for v := lo; v < hi; v++ {
			if v > lo && slices.Compare(b.val(v-1), b.val(v)) >= 0 {
				return fmt.Errorf("batch: B1: key %v val %v not after %v", b.key(k), b.val(v), b.val(v-1))
			}
			ulo, uhi := int(b.valOffs[v]), int(b.valOffs[v+1])
			if ulo >= uhi {
				return fmt.Errorf("batch: B2: (%v, %v) owns no updates", b.key(k), b.val(v))
			}
			for u := ulo; u < uhi; u++ {
				if u > ulo && b.times[u-1] >= b.times[u] {
					return fmt.Errorf("batch: B1: (%v, %v) times %d, %d not increasing", b.key(k), b.val(v), b.times[u-1], b.times[u])
				}
				if b.diffs[u] == 0 {
					return fmt.Errorf("batch: B2: zero diff at (%v, %v) @%d", b.key(k), b.val(v), b.times[u])
				}
				if t := b.times[u]; !holds(b.desc, t) {
					return fmt.Errorf("batch: B3: time %d outside %v", t, b.desc)
				}
			}
		}
	}
	return nil
}

// holds reports whether a batch described by d may hold an update at t
// (B3): t lies in [Lower, Upper), or it is a time advanced to Since, which
// may lie at or beyond Upper (or, under a since of {}, was advanced so by
// an earlier merge).
func holds(d frontier.Description, t frontier.Time) bool {
	return d.Lower.Beyond(t) && (!d.Upper.Beyond(t) || d.Since == frontier.At(t) || d.Since.IsEmpty())
}

// Parse reads the String form of a batch: a description line, then one update
// a line as "k1 k2 | v1 @t +d" ("()" for an empty row). Updates may come in
// any order; they are consolidated. Every time must lie in the description
// as B3 says: in [lower, upper), or equal to a since at or beyond the upper
// (a merged batch's), so the String form of any batch parses back. Blank
// lines and lines starting with '#' are ignored.
func Parse(ar Arity, s string) (*Batch, error) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	desc, err := frontier.ParseDescription(lines[0])
	if err != nil {
		return nil, err
	}
	bld := NewBuilder(ar, len(lines))
	for i, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := ParseUpdate(ar, line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		if !holds(desc, u.Time) {
			return nil, fmt.Errorf("line %d: time %d outside %v", i+2, u.Time, desc)
		}
		bld.Push(u.Key, u.Val, u.Time, u.Diff)
	}
	// Built up to {}: a time advanced to a since at or beyond the upper
	// is the batch's own (B3), which a build's [lower, upper) would refuse.
	out, err := bld.Build(desc.Lower, frontier.Empty())
	if err != nil {
		return nil, err
	}
	out.desc = desc
	return out, nil
}

// ParseUpdate reads one update in the form "k1 k2 | v1 @t +d".
func ParseUpdate(ar Arity, line string) (Update, error) {
	var u Update
	kv, td, ok := strings.Cut(line, "@")
	if !ok {
		return u, fmt.Errorf("batch: update %q: missing '@'", line)
	}
	ks, vs, ok := strings.Cut(kv, "|")
	if !ok {
		return u, fmt.Errorf("batch: update %q: missing '|'", line)
	}
	var err error
	if u.Key, err = parseRow(ks, ar.Key); err != nil {
		return u, fmt.Errorf("batch: update %q: key: %w", line, err)
	}
	if u.Val, err = parseRow(vs, ar.Val); err != nil {
		return u, fmt.Errorf("batch: update %q: val: %w", line, err)
	}
	f := strings.Fields(td)
	if len(f) != 2 {
		return u, fmt.Errorf("batch: update %q: want '@time diff'", line)
	}
	if u.Time, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return u, fmt.Errorf("batch: update %q: time: %w", line, err)
	}
	if u.Diff, err = strconv.ParseInt(strings.TrimPrefix(f[1], "+"), 10, 64); err != nil || u.Diff == 0 {
		return u, fmt.Errorf("batch: update %q: diff must be a non-zero integer", line)
	}
	return u, nil
}

func parseRow(s string, arity int) ([]int64, error) {
	f := strings.Fields(s)
	if len(f) == 1 && f[0] == "()" {
		f = nil
	}
	if len(f) != arity {
		return nil, fmt.Errorf("%d columns, want %d", len(f), arity)
	}
	row := make([]int64, arity)
	for i, x := range f {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// cmpRow compares two rows of equal length lexicographically.
func cmpRow(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
