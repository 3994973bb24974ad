package reduce

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/mutants"
)

// kind selects a stage's per-group logic. Dispatch is per group, never per
// update.
type kind uint8

const (
	// kindBasic: records → aggregates, recomputed from the group's whole
	// accumulated history at every new time.
	kindBasic kind = iota
	// kindAccum: count and sum kept in diff space in hidden columns of
	// the output row, with the number of negative and of non-zero records;
	// a new update costs one seek for its record's count (G4).
	kindAccum
	// kindMonotonic: min and max folded into the best value so far while
	// the group sees only insertions; otherwise kindBasic for the group.
	kindMonotonic
	// kindLayer: min and max of a hierarchical layer over records;
	// kindLayerUp: over the rows of the layer below ([tag, values]).
	kindLayer
	kindLayerUp
	kindThreshold
	kindDistinct
	// kindCollate: records are [part, tag, aggregates at their positions]
	// of the parts of a mixed reduce.
	kindCollate
)

// stage is one reduce over an arrangement: it retires intervals of its
// input and keeps its own output trace, against which it emits
// corrections (§6.1). Its output has the input's key and rows of width
// ova: [tag, aggregates..., hidden...], tag 0 for a row and an error code
// otherwise, one row per group (G1).
type stage struct {
	kind  kind
	aggs  []Aggregate
	slots []int // kindAccum: the sum slot of each aggregate, -1 for count
	nsum  int

	in trace.Reader
	// shared: in is the Reduce's input reader (a top stage's, which an
	// accumulable and a monotonic part both cut at lower); Reduce.retire
	// moves its holds once every part has retired, not the stage (G2).
	shared bool
	pres   batch.Presentation
	asOf   frontier.Frontier
	inAr   batch.Arity

	out   *trace.Handle
	outW  *trace.Writer
	ova   int
	lower frontier.Frontier
	bld   *batch.Sorted // the step's corrections, pushed in key order
	gout  groupOut      // the current group's corrections
	tmp   []*batch.Batch

	// The current group.
	key                 []int64
	nv                  []int64 // new updates: vals (inAr.Val each), times, diffs
	nt                  []uint64
	nd                  []int64
	ord                 []int32
	hc, oc, nc          []batch.Cursor
	hk                  []int // the history cursors at the group
	cur, want           []int64
	curM, wantM         int64
	curOK, wantOK       bool
	recV                []int64 // kindBasic family: the group's records, sorted
	recC                []wide
	sorted              bool // the new updates are sorted by (val, time)
	sized               bool // the corrections builder has been sized by a first step
	sums                []wide
	acc                 accState
	dT                  []uint64 // kindAccum: per-update deltas
	dNeg, dNz, dBig, dD []int64
	dSum                []wide
	oV                  []int64 // output history rows of the group
	oC                  []int64

	// hsat and nsat are the indexes of the cursors of hc and nc whose
	// batch a merge saturated a count of (batch.Batch.Saturated), where
	// the stage reads the reduce's input (shared): empty but for that
	// rare batch, so a group's read tests one length. satAt, when satOK,
	// is the earliest time of the corrections of a group read from such a
	// batch in this retire, where it adds one numeric overflow (overflow:
	// the Reduce's, docs/semantics.md §1.1) unless the Reduce has
	// (satMarked).
	hsat, nsat []int
	satAt      frontier.Time
	satOK      bool
	// pushed, when pushedOK, is the time at which the current group's
	// corrections went straight into bld, bypassing gout (emitOnce,
	// accumFresh).
	pushed   frontier.Time
	pushedOK bool
	overflow *[]frontier.Time
	// satMarked is the Reduce's: whether a read of a saturated batch has
	// added its numeric overflow already (Reduce.satMarked).
	satMarked *bool
}

func (r *Reduce) newStage(k kind, aggs []Aggregate, in trace.Reader, pres batch.Presentation, inAr batch.Arity, ova int) *stage {
	outAr := batch.Arity{Key: inAr.Key, Val: ova}
	h, w := trace.NewSpine(outAr, r.spine)
	s := &stage{
		kind: k, aggs: aggs, in: in, pres: pres, asOf: r.asOf, inAr: inAr,
		out: h, outW: w, ova: ova, lower: frontier.Min(), bld: batch.NewSorted(outAr, 0), gout: groupOut{va: ova},
		cur: make([]int64, ova), want: make([]int64, ova), overflow: &r.overflow,
		satMarked: &r.satMarked,
	}
	if k == kindAccum {
		for _, a := range aggs {
			if a.Fn == Sum {
				s.slots = append(s.slots, s.nsum)
				s.nsum++
			} else {
				s.slots = append(s.slots, -1)
			}
		}
		s.acc.sum = make([]wide, s.nsum)
	}
	return s
}

// accWidth is the output width of an accumulable stage with na aggregates
// of which nsum are sums: tag, aggregates, negative records, non-zero
// records, records whose count leaves int64, the exact count and the
// exact sums.
func accWidth(na, nsum int) int { return 1 + na + 3 + 3 + 3*nsum }

// accState is an accumulable group's state in diff space.
type accState struct {
	neg, nz, big int64 // records with negative, non-zero, beyond-int64 count
	cnt          wide
	sum          []wide
}

func (s *stage) release() {
	s.out.Release()
	s.outW.Close()
}

// retire computes the corrections for [lower, upper) given the input's
// new batches of that interval (each already in the input's trace),
// inserts them into the output trace and returns them. It cuts the input
// and output traces at lower, where both are held physically (G2).
func (s *stage) retire(news []*batch.Batch, upper frontier.Frontier) (*batch.Batch, error) {
	lower := s.lower
	s.nc, s.nsat = s.nc[:0], s.nsat[:0]
	s.satOK = false
	keys, ups := 0, 0
	for _, b := range news {
		if !b.IsEmpty() {
			if s.shared && b.Saturated() {
				s.nsat = append(s.nsat, len(s.nc))
			}
			s.nc = append(s.nc, b.Cursor())
			keys += b.Keys()
			ups += b.Len()
		}
	}
	if !s.sized && keys > 0 {
		// The first step (an install) sizes the corrections' builder by
		// its groups (one row each), so that it does not grow by copying.
		s.bld, s.sized = batch.NewSorted(batch.Arity{Key: s.inAr.Key, Val: s.ova}, keys), true
	} else {
		// A later step makes room for its corrections too: a build of more
		// than a Sorted keeps hands its columns to its batch, and the
		// next would grow them from none by copying, a quarter at a time
		// at these lengths. A step corrects only its updates' keys, each
		// by a row retracted and one added a time: about one correction
		// an update (a hierarchical layer's), two a key in a step of one
		// time. Room it already has is kept.
		s.bld.Grow(min(ups, 2*keys))
	}
	if len(s.nc) > 0 {
		if err := s.cut(lower); err != nil {
			return nil, err
		}
		if err := s.groups(); err != nil {
			return nil, err
		}
	}
	if s.satOK && (!*s.satMarked || mutants.Enabled && mutants.On(mutants.SaturatedMarkEachStep)) {
		*s.overflow = append(*s.overflow, s.satAt)
		*s.satMarked = true
	}
	b, err := s.bld.Build(lower, upper)
	if err != nil {
		return nil, fmt.Errorf("reduce: building corrections [%v, %v): %w", lower, upper, err)
	}
	if err := s.outW.Insert(b); err != nil {
		return nil, fmt.Errorf("reduce: output trace [%v, %v): %w", lower, upper, err)
	}
	s.lower = upper
	trace.SetCompaction(s.out, upper)
	if !s.shared {
		trace.SetCompaction(s.in, upper)
	}
	clear(s.tmp)
	s.tmp = s.tmp[:0]
	return b, nil
}

// cut positions cursors over the input and output traces cut at lower.
func (s *stage) cut(lower frontier.Frontier) error {
	s.hc, s.oc, s.hsat = s.hc[:0], s.oc[:0], s.hsat[:0]
	if lower == frontier.Min() {
		return nil // nothing lies before time 0
	}
	hist, err := s.in.BatchesThrough(lower)
	if err != nil {
		return fmt.Errorf("reduce: cutting the input at %v: %w", lower, err)
	}
	for _, b := range hist {
		if !b.IsEmpty() {
			if s.shared && b.Saturated() {
				s.hsat = append(s.hsat, len(s.hc))
			}
			s.hc = append(s.hc, b.Cursor())
		}
	}
	outs, err := s.out.BatchesThrough(lower)
	if err != nil {
		return fmt.Errorf("reduce: cutting the output at %v: %w", lower, err)
	}
	for _, b := range outs {
		if !b.IsEmpty() {
			s.oc = append(s.oc, b.Cursor())
		}
	}
	return nil
}

// groups visits the groups of the new batches in key order.
func (s *stage) groups() error {
	for {
		found := -1
		for i := range s.nc {
			c := &s.nc[i]
			if c.KeyValid() && (found < 0 || cmpRow(c.Key(), s.nc[found].Key()) < 0) {
				found = i
			}
		}
		if found < 0 {
			return nil
		}
		s.key = append(s.key[:0], s.nc[found].Key()...)
		s.pushedOK = false
		if s.kind == kindAccum && len(s.nc) == 1 && len(s.hc) == 0 && len(s.oc) == 0 && s.accumFresh(&s.nc[0]) {
			if len(s.nsat) > 0 && s.pushedOK { // nc's one cursor saturated
				s.saturated(s.pushed)
			}
			s.gout.flush(s.bld, s.key)
			s.nc[0].StepKey()
			continue
		}
		s.nv, s.nt, s.nd = s.nv[:0], s.nt[:0], s.nd[:0]
		s.sorted = true // one batch holds the group's new updates: sorted by (val, time)
		sat := false    // the group is read from a Saturated batch
		for i := range s.nc {
			c := &s.nc[i]
			if !c.KeyValid() || cmpRow(c.Key(), s.key) != 0 {
				continue
			}
			if i != found {
				s.sorted = false
			}
			if len(s.nsat) > 0 && !sat {
				sat = slices.Contains(s.nsat, i)
			}
			for ; c.ValValid(); c.StepVal() {
				v := c.Val()
				ts, ds := c.Updates()
				for x, t := range ts {
					t, ok := s.pres.Present(t)
					if !ok {
						continue
					}
					s.nv = append(s.nv, v...)
					s.nt = append(s.nt, s.asOf.AdvanceBy(t))
					s.nd = append(s.nd, ds[x])
				}
			}
			c.StepKey()
		}
		if len(s.nt) == 0 {
			continue
		}
		s.hk = s.hk[:0]
		for i := range s.hc {
			c := &s.hc[i]
			c.SeekKey(s.key)
			if c.KeyValid() && cmpRow(c.Key(), s.key) == 0 {
				s.hk = append(s.hk, i)
				if len(s.hsat) > 0 && !sat {
					sat = slices.Contains(s.hsat, i)
				}
			}
		}
		if err := s.loadCur(); err != nil {
			return err
		}
		if sat {
			// Read from a saturated batch: marked at the group's earliest
			// new time, whether or not its output changes there (a
			// threshold drops a record saturated below int64 silently).
			s.saturated(slices.Min(s.nt))
		}
		switch s.kind {
		case kindAccum:
			s.accumGroup()
		case kindMonotonic:
			if !s.monotonicGroup() {
				s.recordsGroup()
			}
		default:
			s.recordsGroup()
		}
		if sat && s.pushedOK {
			s.saturated(s.pushed)
		}
		s.gout.flush(s.bld, s.key)
	}
}

// saturated notes that the stage read a group with new updates at t (its
// earliest) in a batch where a merge saturated an overflowed count,
// whether or not its output changed there: the count it read
// stands for one out of int64 (a record's, or, where the batch's
// overflowed row is another, one whose diffs already add up beyond it),
// and the input's own marker is at its frontier when the merge ran,
// which may be after t. retire adds one numeric overflow at the earliest
// such t (docs/semantics.md §1.1).
func (s *stage) saturated(t frontier.Time) {
	if !s.satOK || t < s.satAt {
		s.satAt, s.satOK = t, true
	}
}

// loadCur reads the group's row in the output trace cut at lower.
func (s *stage) loadCur() error {
	s.oV, s.oC = s.oV[:0], s.oC[:0]
	for i := range s.oc {
		c := &s.oc[i]
		c.SeekKey(s.key)
		if !c.KeyValid() || cmpRow(c.Key(), s.key) != 0 {
			continue
		}
		for ; c.ValValid(); c.StepVal() {
			_, ds := c.Updates()
			var m int64
			for _, d := range ds {
				m += d
			}
			v := c.Val()
			j := 0
			for ; j < len(s.oC); j++ {
				if slices.Equal(s.oV[j*s.ova:(j+1)*s.ova], v) {
					s.oC[j] += m
					break
				}
			}
			if j == len(s.oC) {
				s.oV = append(s.oV, v...)
				s.oC = append(s.oC, m)
			}
		}
	}
	s.curOK = false
	for j, m := range s.oC {
		if m == 0 {
			continue
		}
		if s.curOK {
			return fmt.Errorf("%w: group %v: %v and %v", ErrCorrupt, s.key, s.cur, s.oV[j*s.ova:(j+1)*s.ova])
		}
		s.curOK, s.curM = true, m
		copy(s.cur, s.oV[j*s.ova:(j+1)*s.ova])
	}
	return nil
}

// emit makes the group's output at t equal want: it retracts the current
// row and inserts the wanted one when they differ.
func (s *stage) emit(t frontier.Time) {
	if s.curOK == s.wantOK && (!s.curOK || s.curM == s.wantM && slices.Equal(s.cur, s.want)) {
		return
	}
	if s.curOK {
		s.gout.add(s.cur, t, -s.curM)
	}
	if s.wantOK {
		s.gout.add(s.want, t, s.wantM)
	}
	s.curOK, s.curM = s.wantOK, s.wantM
	copy(s.cur, s.want)
}

// emitOnce is emit for a group whose corrections are all at t (it
// changes at one time only): it pushes them straight into the builder,
// the retraction and the insertion in val order, bypassing gout.
func (s *stage) emitOnce(t frontier.Time) {
	if s.curOK == s.wantOK && (!s.curOK || s.curM == s.wantM && slices.Equal(s.cur, s.want)) {
		return
	}
	s.pushed, s.pushedOK = t, true
	switch {
	case !s.curOK:
		s.bld.Push(s.key, s.want, t, s.wantM)
	case !s.wantOK:
		s.bld.Push(s.key, s.cur, t, -s.curM)
	case cmpRow(s.cur, s.want) <= 0: // equal rows (counts differ) consolidate
		s.bld.Push(s.key, s.cur, t, -s.curM)
		s.bld.Push(s.key, s.want, t, s.wantM)
	default:
		s.bld.Push(s.key, s.want, t, s.wantM)
		s.bld.Push(s.key, s.cur, t, -s.curM)
	}
	s.curOK, s.curM = s.wantOK, s.wantM
	copy(s.cur, s.want)
}

// byTime orders the new updates by time (within a time the order does
// not matter: every update of the time is applied before emitting).
func (s *stage) byTime() {
	s.ord = identity(s.ord, len(s.nt))
	sortByTime(s.ord, s.nt)
}

// identity returns ord holding 0..n-1.
func identity(ord []int32, n int) []int32 {
	ord = ord[:0]
	for i := range n {
		ord = append(ord, int32(i))
	}
	return ord
}

// sortByTime sorts ord by ts[ord[i]], after a pass that finds most
// groups' updates already in order (one time per step, or one record).
func sortByTime(ord []int32, ts []uint64) {
	for i := 1; i < len(ord); i++ {
		if ts[ord[i]] < ts[ord[i-1]] {
			slices.SortStableFunc(ord, func(a, b int32) int { return cmp.Compare(ts[a], ts[b]) })
			return
		}
	}
}

// newVal returns the val of new update i.
func (s *stage) newVal(i int32) []int64 {
	va := s.inAr.Val
	return s.nv[int(i)*va : int(i)*va+va]
}

// recordsGroup is the basic logic: the group's records accumulated at
// lower, then the new updates applied time by time, the output
// recomputed from all records at each time.
func (s *stage) recordsGroup() {
	va := s.inAr.Val
	s.recV, s.recC = s.recV[:0], s.recC[:0]
	for _, i := range s.hk {
		c := &s.hc[i]
		// From the group's first val: the monotonic logic's countsFit
		// seeks these cursors to its records (histCount) before it gives
		// the group up to this one.
		c.RewindVals()
		for ; c.ValValid(); c.StepVal() {
			if m := s.histSum(c); !m.isZero() {
				s.addRecord(c.Val(), m)
			}
		}
		c.RewindVals()
	}
	s.byTime()
	for x := 0; x < len(s.ord); {
		t := s.nt[s.ord[x]]
		for ; x < len(s.ord) && s.nt[s.ord[x]] == t; x++ {
			i := s.ord[x]
			s.addRecord(s.nv[int(i)*va:int(i)*va+va], wideOf(s.nd[i]))
		}
		s.evalRecords()
		s.emit(t)
	}
}

// addRecord adds m to the count of record v, keeping records sorted.
func (s *stage) addRecord(v []int64, m wide) {
	va := s.inAr.Val
	n := len(s.recC)
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if cmpRow(s.recV[mid*va:mid*va+va], v) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo
	if i < n && cmpRow(s.recV[i*va:i*va+va], v) == 0 {
		s.recC[i] = s.recC[i].add(m)
		return
	}
	s.recC = slices.Insert(s.recC, i, m)
	s.recV = slices.Insert(s.recV, i*va, v...)
}

// evalRecords sets want from the group's records.
func (s *stage) evalRecords() {
	clear(s.want)
	s.wantOK, s.wantM = false, 1
	switch s.kind {
	case kindThreshold, kindDistinct:
		s.evalCount()
	case kindCollate:
		s.evalCollate()
	default:
		s.evalAggregates()
	}
}

// evalCount is threshold and distinct: the record's accumulated count. A
// count outside int64, below it too, is a numeric overflow (docs/spec.md,
// "Expressions"), before the negative count's own treatment.
func (s *stage) evalCount() {
	var c wide
	for _, m := range s.recC {
		c = c.add(m)
	}
	x, fits := c.int64()
	switch {
	case c.isZero():
	case !fits:
		s.wantOK, s.want[0] = true, expr.CodeOverflow
	case c.negative():
		if s.kind == kindDistinct {
			s.wantOK, s.want[0] = true, expr.CodeNegativeMultiplicity
		}
	case s.kind == kindDistinct:
		s.wantOK = true
	default:
		s.wantOK, s.wantM = true, x
	}
}

// evalAggregates computes the aggregates of the group's records (basic,
// monotonic fallback and hierarchical layers), in the order of precedence
// of §6.3: a record whose count leaves int64, then a negative record, then
// an overflow of the aggregates, then the row.
func (s *stage) evalAggregates() {
	va := s.inAr.Val
	up := s.kind == kindLayerUp
	var cnt wide
	s.sums = s.sums[:0]
	for range s.aggs {
		s.sums = append(s.sums, wide{})
	}
	first, overflow, neg := true, false, false
	for r, m := range s.recC {
		if m.isZero() {
			continue
		}
		s.wantOK = true
		row := s.recV[r*va : r*va+va]
		mv, fits := m.int64()
		if !fits || up && row[0] != 0 && row[0] != expr.CodeNegativeMultiplicity {
			overflow = true // an accumulated count beyond int64 (docs/spec.md, "Expressions")
			continue
		}
		if m.negative() || up && row[0] == expr.CodeNegativeMultiplicity {
			neg = true
			continue
		}
		cnt = cnt.add(m)
		for j, a := range s.aggs {
			switch a.Fn {
			case Sum:
				s.sums[j] = s.sums[j].add(mulWide(mv, row[a.Col]))
			case Min:
				if first || row[a.Col] < s.want[1+j] {
					s.want[1+j] = row[a.Col]
				}
			case Max:
				if first || row[a.Col] > s.want[1+j] {
					s.want[1+j] = row[a.Col]
				}
			}
		}
		first = false
	}
	if !s.wantOK {
		return
	}
	if overflow || neg {
		clear(s.want)
		s.want[0] = expr.CodeNegativeMultiplicity
		if overflow {
			s.want[0] = expr.CodeOverflow
		}
		return
	}
	for j, a := range s.aggs {
		var w wide
		switch a.Fn {
		case Count:
			w = cnt
		case Sum:
			w = s.sums[j]
		default:
			continue
		}
		x, fits := w.int64()
		if !fits {
			clear(s.want)
			s.want[0] = expr.CodeOverflow
			return
		}
		s.want[1+j] = x
	}
}

// evalCollate sets want from the parts' rows: a numeric overflow in any
// part wins over a negative multiplicity, and either over a row; a row
// needs every part's row. Every part sees the same records and puts a
// negative record before an overflow of its aggregates (§6.3), so a part
// reports an overflow beside another's negative multiplicity only after
// one of the group's record counts left int64 — in the part that counts
// it exactly, while a hierarchical layer holds it saturated — and that
// overflow wins (§6.3, 3).
func (s *stage) evalCollate() {
	va := s.inAr.Val
	parts, code := 0, int64(0)
	for r, m := range s.recC {
		if m.isZero() {
			continue
		}
		row := s.recV[r*va : r*va+va]
		parts++
		switch tag := row[1]; {
		case tag == expr.CodeOverflow:
			code = tag
		case tag != 0 && code == 0:
			code = tag
		}
		for j := range len(s.want) - 1 {
			s.want[1+j] += row[2+j] // each aggregate is set by exactly one part
		}
	}
	switch {
	case parts == 0:
		clear(s.want)
	case code != 0:
		clear(s.want)
		s.wantOK, s.want[0] = true, code
	default:
		s.wantOK = true
	}
}

// histSum returns the accumulated count of the history cursor's current
// (key, val), leaving out times the presentation hides (at or beyond
// until).
func (s *stage) histSum(c *batch.Cursor) wide {
	ts, ds := c.Updates()
	var m wide
	for i, t := range ts {
		if _, ok := s.pres.Present(t); ok {
			m = m.add(wideOf(ds[i]))
		}
	}
	return m
}

// histCount returns the accumulated count of record v of the group at
// lower: a seek in each history batch (G4). Records must be asked for in
// ascending order within a group.
func (s *stage) histCount(v []int64) wide {
	var m wide
	for _, i := range s.hk {
		c := &s.hc[i]
		c.SeekVal(v)
		if c.ValValid() && cmpRow(c.Val(), v) == 0 {
			m = m.add(s.histSum(c))
		}
	}
	return m
}

// accumGroup is the accumulable logic: the group's state at lower comes
// from its output row's hidden columns; each new update changes it by its
// diff (count), diff × value (sums) and, through its record's count
// before and after, the numbers of negative and non-zero records (G4).
func (s *stage) accumGroup() {
	na := len(s.aggs)
	base := 1 + na
	st := &s.acc
	st.neg, st.nz, st.big, st.cnt = 0, 0, 0, wide{}
	clear(st.sum)
	if s.curOK {
		st.neg, st.nz, st.big = s.cur[base], s.cur[base+1], s.cur[base+2]
		st.cnt = wideCols(s.cur[base+3:])
		for k := range st.sum {
			st.sum[k] = wideCols(s.cur[base+6+3*k:])
		}
	}
	s.ord = identity(s.ord, len(s.nt))
	if !s.sorted {
		slices.SortFunc(s.ord, func(a, b int32) int {
			if c := cmpRow(s.newVal(a), s.newVal(b)); c != 0 {
				return c
			}
			return cmp.Compare(s.nt[a], s.nt[b])
		})
	}
	if s.oneTime() {
		s.accumOneTime()
		return
	}
	s.dT, s.dNeg, s.dNz, s.dBig, s.dD, s.dSum = s.dT[:0], s.dNeg[:0], s.dNz[:0], s.dBig[:0], s.dD[:0], s.dSum[:0]
	for x := 0; x < len(s.ord); {
		v := s.newVal(s.ord[x])
		c := s.histCount(v)
		for ; x < len(s.ord) && cmpRow(s.newVal(s.ord[x]), v) == 0; x++ {
			i := s.ord[x]
			d := s.nd[i]
			before := c
			c = c.add(wideOf(d))
			s.dT = append(s.dT, s.nt[i])
			s.dNeg = append(s.dNeg, b2i(c.negative())-b2i(before.negative()))
			s.dNz = append(s.dNz, b2i(!c.isZero())-b2i(!before.isZero()))
			s.dBig = append(s.dBig, b2i(!c.fits())-b2i(!before.fits()))
			s.dD = append(s.dD, d)
			for _, a := range s.aggs {
				if a.Fn == Sum {
					s.dSum = append(s.dSum, mulWide(d, v[a.Col]))
				}
			}
		}
	}
	s.ord = identity(s.ord, len(s.dT))
	sortByTime(s.ord, s.dT)
	for y := 0; y < len(s.ord); {
		t := s.dT[s.ord[y]]
		for ; y < len(s.ord) && s.dT[s.ord[y]] == t; y++ {
			i := int(s.ord[y])
			st.neg += s.dNeg[i]
			st.big += s.dBig[i]
			st.nz += s.dNz[i]
			st.cnt = st.cnt.add(wideOf(s.dD[i]))
			for k := range st.sum {
				st.sum[k] = st.sum[k].add(s.dSum[i*s.nsum+k])
			}
		}
		s.evalAccum()
		s.emit(t)
	}
}

// accumFresh is the accumulable logic for a group with no history and no
// output yet whose updates, all in the one new batch c is at, show at a
// single time (a reduce's first step over an arrangement built at one
// time): it reads the batch in place. It reports false, having done
// nothing, when the group's updates show at several times or at none.
func (s *stage) accumFresh(c *batch.Cursor) bool {
	st := &s.acc
	st.neg, st.nz, st.big, st.cnt = 0, 0, 0, wide{}
	clear(st.sum)
	s.curOK = false
	t0, shown := frontier.Time(0), false
	var cnt int64 // the count while it fits; st.cnt holds what overflowed it
	for v := *c; v.ValValid(); v.StepVal() {
		val := v.Val()
		ts, ds := v.Updates()
		var d int64
		fits := true
		for i, t := range ts {
			t, ok := s.pres.Present(t)
			if !ok {
				continue
			}
			if t = s.asOf.AdvanceBy(t); shown && t != t0 {
				return false // several times: the general logic
			}
			t0, shown = t, true
			y := ds[i]
			r := d + y
			fits = fits && (r > d) == (y > 0)
			d = r
			if s.nsum > 0 {
				k := 0
				for _, a := range s.aggs {
					if a.Fn == Sum {
						st.sum[k] = st.sum[k].add(mulWide(y, val[a.Col]))
						k++
					}
				}
			}
		}
		if !fits {
			var dw wide
			for i, t := range ts {
				if _, ok := s.pres.Present(t); ok {
					dw = dw.add(wideOf(ds[i]))
				}
			}
			st.cnt = st.cnt.add(dw)
			st.nz++
			st.neg += b2i(dw.negative())
			st.big++
			continue
		}
		if r := cnt + d; (r > cnt) == (d > 0) {
			cnt = r
		} else {
			st.cnt, cnt = st.cnt.add(wideOf(cnt)).add(wideOf(d)), 0
		}
		st.nz += b2i(d != 0)
		st.neg += b2i(d < 0)
	}
	if !shown {
		return false
	}
	st.cnt = st.cnt.add(wideOf(cnt))
	s.evalAccum()
	// emitOnce with no current row: the wanted row, if any, is the
	// group's one correction, and no later group reads cur.
	if s.wantOK {
		s.bld.Push(s.key, s.want, t0, s.wantM)
		s.pushed, s.pushedOK = t0, true
	}
	return true
}

// oneTime reports whether the group's new updates share one time (every
// step that retires a single time, and every install).
func (s *stage) oneTime() bool {
	for _, t := range s.nt[1:] {
		if t != s.nt[0] {
			return false
		}
	}
	return true
}

// accumOneTime is accumGroup when the new updates share one time: each
// record's count moves once, from its count at lower to that plus its new
// diffs, and the state is evaluated once.
func (s *stage) accumOneTime() {
	st := &s.acc
	for x := 0; x < len(s.ord); {
		v := s.newVal(s.ord[x])
		x0 := x
		var d int64
		fits := true
		for ; x < len(s.ord) && cmpRow(s.newVal(s.ord[x]), v) == 0; x++ {
			i := s.ord[x]
			y := s.nd[i]
			r := d + y
			fits = fits && (r > d) == (y > 0)
			d = r
			if s.nsum > 0 {
				k := 0
				for _, a := range s.aggs {
					if a.Fn == Sum {
						st.sum[k] = st.sum[k].add(mulWide(y, v[a.Col]))
						k++
					}
				}
			}
		}
		dw := wideOf(d)
		if !fits { // the record's new diffs overflow int64 together: add them exactly
			dw = wide{}
			for _, i := range s.ord[x0:x] {
				dw = dw.add(wideOf(s.nd[i]))
			}
		}
		st.cnt = st.cnt.add(dw)
		var before wide
		if len(s.hk) > 0 {
			before = s.histCount(v)
		}
		c := before.add(dw)
		st.neg += b2i(c.negative()) - b2i(before.negative())
		st.nz += b2i(!c.isZero()) - b2i(!before.isZero())
		st.big += b2i(!c.fits()) - b2i(!before.fits())
	}
	s.evalAccum()
	s.emitOnce(s.nt[0])
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// evalAccum sets want from the accumulable state: no row when no record
// is left, else the hidden state with the row or the error it implies.
func (s *stage) evalAccum() {
	st := &s.acc
	clear(s.want)
	s.wantOK, s.wantM = st.nz != 0, 1
	if !s.wantOK {
		return
	}
	base := 1 + len(s.aggs)
	s.want[base], s.want[base+1], s.want[base+2] = st.neg, st.nz, st.big
	st.cnt.cols(s.want[base+3:])
	for k, w := range st.sum {
		w.cols(s.want[base+6+3*k:])
	}
	if st.big > 0 { // a record's count leaves int64 (docs/spec.md, "Expressions")
		clear(s.want[:base])
		s.want[0] = expr.CodeOverflow
		return
	}
	if st.neg > 0 {
		s.want[0] = expr.CodeNegativeMultiplicity
		return
	}
	for j, a := range s.aggs {
		w := st.cnt
		if a.Fn == Sum {
			w = st.sum[s.slots[j]]
		}
		x, fits := w.int64()
		if !fits {
			clear(s.want[:base])
			s.want[0] = expr.CodeOverflow
			return
		}
		s.want[1+j] = x
	}
}

// countsFit reports whether every record with new updates keeps a count
// within int64 (a count beyond it is a numeric overflow, which the basic
// logic reports): one seek per record in the input cut at lower.
func (s *stage) countsFit() bool {
	s.ord = identity(s.ord, len(s.nt))
	if !s.sorted {
		slices.SortFunc(s.ord, func(a, b int32) int { return cmpRow(s.newVal(a), s.newVal(b)) })
	}
	for x := 0; x < len(s.ord); {
		v := s.newVal(s.ord[x])
		var c wide
		if len(s.hk) > 0 {
			c = s.histCount(v)
		}
		for ; x < len(s.ord) && cmpRow(s.newVal(s.ord[x]), v) == 0; x++ {
			c = c.add(wideOf(s.nd[s.ord[x]]))
		}
		if !c.fits() {
			return false
		}
	}
	return true
}

// monotonicGroup is the monotonic logic: while the group's row is a row
// and its new updates are all insertions, each aggregate folds the new
// values into the best so far. It reports false, doing nothing, when the
// group needs the basic logic.
func (s *stage) monotonicGroup() bool {
	if s.curOK && s.cur[0] != 0 {
		return false
	}
	for _, d := range s.nd {
		if d < 0 {
			return false
		}
	}
	if !s.countsFit() {
		return false
	}
	s.byTime()
	copy(s.want, s.cur)
	have := s.curOK
	for x := 0; x < len(s.ord); {
		t := s.nt[s.ord[x]]
		for ; x < len(s.ord) && s.nt[s.ord[x]] == t; x++ {
			v := s.newVal(s.ord[x])
			for j, a := range s.aggs {
				y := v[a.Col]
				if !have || a.Fn == Min && y < s.want[1+j] || a.Fn == Max && y > s.want[1+j] {
					s.want[1+j] = y
				}
			}
			have = true
		}
		s.want[0] = 0
		s.wantOK, s.wantM = true, 1
		s.emit(t)
	}
	return true
}
