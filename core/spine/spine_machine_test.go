package spine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"pgregory.net/rapid"
)

// The spine's state machine: random fanouts and efforts, then random
// inserts (fresh updates, retractions of live ones so that merges cancel
// and levels shrink, empty batches, refused batches), Exert and Work with
// random fuel, logical and physical compaction moves, cuts, drains and a
// close, each applied as a spineOp, so that a sequence rapid finds replays
// as a plain test (runSpineOps). After every operation check compares
// the spine with a naive model: every update inserted, by (key, val, time).

type opKind int

const (
	opInsert   opKind = iota // a batch of fresh updates, retractions and single updates
	opRefused                // a batch the spine must refuse
	opExert                  // Exert(effort)
	opWork                   // Work(effort)
	opLogical                // SetLogicalCompaction(at)
	opPhysical               // SetPhysicalCompaction(at, or {} if empty)
	opCut                    // BatchesThrough(at, or {} if empty)
	opDrain                  // Exert(effort) until it reports no work left
	opClose                  // Close
)

// spineOp is one operation of the machine. Times are relative to the
// spine's upper when the operation runs (at = upper + dt may be before it
// for frontiers: the spine ignores those that go back).
type spineOp struct {
	kind   opKind
	width  uint64     // insert: the batch spans [upper, upper+width)
	fresh  int        // insert: new updates, +1 each, keys from seed
	cancel int        // insert: retractions of the oldest live updates
	seed   uint64     // insert: keys and vals of the fresh updates
	single [][4]int64 // insert: (key, val, dt, diff) updates
	follow bool       // insert: both compaction frontiers move to the new upper
	effort int64      // exert, work, drain
	dt     int64      // frontiers and cuts: at = upper + dt (clamped at 0)
	empty  bool       // frontiers and cuts: {} instead
}

var opNames = [...]string{"opInsert", "opRefused", "opExert", "opWork", "opLogical", "opPhysical", "opCut", "opDrain", "opClose"}

// String is the operation as a Go literal, for a replayed test.
func (o spineOp) String() string {
	switch o.kind {
	case opInsert:
		sg := ""
		for i, u := range o.single {
			if i == 0 {
				sg = ", single: [][4]int64{"
			} else {
				sg += ", "
			}
			sg += fmt.Sprintf("{%d, %d, %d, %d}", u[0], u[1], u[2], u[3])
			if i == len(o.single)-1 {
				sg += "}"
			}
		}
		return fmt.Sprintf("{kind: opInsert, width: %d, fresh: %d, cancel: %d, seed: %d%s, follow: %v}", o.width, o.fresh, o.cancel, o.seed, sg, o.follow)
	case opRefused:
		return fmt.Sprintf("{kind: opRefused, seed: %d}", o.seed)
	case opExert, opWork, opDrain:
		return fmt.Sprintf("{kind: %s, effort: %d}", opNames[o.kind], o.effort)
	case opClose:
		return "{kind: opClose}"
	}
	return fmt.Sprintf("{kind: %s, dt: %d, empty: %v}", opNames[o.kind], o.dt, o.empty)
}

// failer is what the machine needs of *testing.T and *rapid.T.
type failer interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// spineModel is a spine and what it must hold.
type spineModel struct {
	tb       failer
	s        *Spine
	model    map[uint64]map[[2]int64]int64 // time -> (key, val) -> diff, as inserted
	verified map[*batch.Batch]bool         // batches found to hold their interval's updates
	live     [][3]int64                    // fresh updates not yet retracted, oldest first
	keys     int64                         // fresh keys are drawn from [0, keys)
	upper    uint64
	end      uint64 // where the chain ends: the upper of the last batch with updates, or of the empty one before it
	closed   bool
	logical  frontier.Frontier
	physical frontier.Frontier
	inserted int                       // updates across inserted batches
	arrived  []uint64                  // the uppers of the batches the chain took, ascending
	versions map[uint64][]*batch.Batch // the chain seen at each version
}

func newSpineModel(tb failer, fanout int, effort, fuel, keys int64) *spineModel {
	return &spineModel{
		tb: tb, s: New(kv, Options{Fanout: fanout, Effort: effort, Fuel: fuel}),
		model: map[uint64]map[[2]int64]int64{}, keys: keys, verified: map[*batch.Batch]bool{},
		versions: map[uint64][]*batch.Batch{},
	}
}

func (m *spineModel) at(dt int64) uint64 {
	return uint64(max(int64(m.upper)+dt, 0))
}

func (m *spineModel) apply(o spineOp) {
	tb, s := m.tb, m.s
	tb.Helper()
	switch o.kind {
	case opInsert:
		m.insert(o)
	case opRefused:
		m.refused(o)
	case opExert:
		more := s.Exert(o.effort)
		if more != !s.reduced() {
			tb.Fatalf("Exert(%d) = %v, reduced %v\n%v", o.effort, more, s.reduced(), s)
		}
	case opWork:
		merges, was := s.Stats().Merges, s.Merging()
		more := s.Work(o.effort)
		if more != s.Merging() {
			tb.Fatalf("Work(%d) = %v, merging %v\n%v", o.effort, more, s.Merging(), s)
		}
		if !was && s.Stats().Merges != merges {
			tb.Fatalf("Work(%d) started a merge on an idle spine\n%v", o.effort, s)
		}
	case opLogical:
		f := frontier.At(m.at(o.dt))
		m.logical = m.logical.Join(f)
		s.SetLogicalCompaction(f)
	case opPhysical:
		f := frontier.At(m.at(o.dt))
		if o.empty {
			f = frontier.Empty()
		}
		m.physical = m.physical.Join(f)
		s.SetPhysicalCompaction(f)
	case opCut:
		f := frontier.At(m.at(o.dt))
		if o.empty {
			f = frontier.Empty()
		}
		m.cut(f)
	case opDrain:
		for calls := 0; s.Exert(o.effort); calls++ {
			if calls > 1<<20 {
				tb.Fatalf("Exert(%d) does not converge\n%v", o.effort, s)
			}
			m.check()
		}
		if !s.reduced() {
			tb.Fatalf("Exert(%d) ended with more than one batch or a merge\n%v", o.effort, s)
		}
	case opClose:
		if err := s.Close(); err != nil {
			tb.Fatalf("Close: %v", err)
		}
		m.closed = true // the upper moves to {}, the chain stays (S1)
	}
	m.check()
}

func (m *spineModel) insert(o spineOp) {
	tb := m.tb
	tb.Helper()
	if m.closed {
		b := batch.Empty(kv, frontier.At(m.upper), frontier.At(m.upper+o.width))
		if err := m.s.Insert(b); !errors.Is(err, ErrClosed) {
			tb.Fatalf("insert after close: err %v", err)
		}
		return
	}
	lo, hi := m.upper, m.upper+o.width
	bld := batch.NewBuilder(kv, o.fresh+o.cancel+len(o.single))
	push := func(k, v int64, tm uint64, d int64) {
		bld.Push1(k, v, tm, d)
		if m.model[tm] == nil {
			m.model[tm] = map[[2]int64]int64{}
		}
		m.model[tm][[2]int64{k, v}] += d
		m.inserted++ // an upper bound on the batch's updates
	}
	for range min(o.cancel, len(m.live)) {
		u := m.live[0]
		m.live = m.live[1:]
		push(u[0], u[1], lo+uint64(u[2])%o.width, -1)
	}
	rng := rand.New(rand.NewPCG(o.seed, 1))
	for range o.fresh {
		k, v, dt := rng.Int64N(m.keys), rng.Int64N(3), rng.Uint64N(o.width)
		push(k, v, lo+dt, 1)
		m.live = append(m.live, [3]int64{k, v, int64(rng.Uint64N(4))})
	}
	for _, u := range o.single {
		push(u[0], u[1], lo+uint64(u[2])%o.width, u[3])
	}
	b, err := bld.Build(frontier.At(lo), frontier.At(hi))
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.s.Insert(b); err != nil {
		tb.Fatalf("insert %v: %v", b.Desc(), err)
	}
	if !b.IsEmpty() {
		// The chain takes an empty batch over the rounds without updates
		// since it ended, then b; a batch without updates moves the upper
		// alone (S1).
		if m.end != lo {
			m.arrived = append(m.arrived, lo)
		}
		m.arrived = append(m.arrived, hi)
		m.end = hi
	}
	m.upper = hi
	if o.follow {
		// The steady trace's owner: both frontiers follow the upper.
		m.logical = m.logical.Join(b.Upper())
		m.physical = m.physical.Join(b.Upper())
		m.s.SetLogicalCompaction(b.Upper())
		m.s.SetPhysicalCompaction(b.Upper())
	}
}

// refused inserts a batch the spine must refuse (not contiguous, an empty
// or backward interval, another arity) and checks nothing moved.
func (m *spineModel) refused(o spineOp) {
	tb, s := m.tb, m.s
	tb.Helper()
	var b *batch.Batch
	var want error
	switch u := frontier.At(m.upper); o.seed % 4 {
	case 0:
		b, want = batch.Empty(kv, frontier.At(m.upper+1), frontier.At(m.upper+2)), ErrNotContiguous
	case 1:
		b, want = batch.Empty(kv, u, u), ErrEmptyInterval
	case 2:
		if m.upper == 0 {
			return
		}
		b, want = batch.Empty(kv, u, frontier.At(m.upper-1)), ErrEmptyInterval
	case 3:
		b, want = batch.Empty(batch.Arity{Key: 2}, u, frontier.At(m.upper+1)), ErrArity
	}
	if m.closed {
		want = ErrClosed
	}
	v, chain := s.Version(), s.Batches()
	if err := s.Insert(b); !errors.Is(err, want) {
		tb.Fatalf("insert %v: err %v, want %v", b.Desc(), err, want)
	}
	if s.Version() != v || !slices.Equal(chain, s.Batches()) {
		tb.Fatalf("a refused insert changed the chain\n%v", s)
	}
}

// contents are updates by (key, val, time), their times advanced by the
// logical frontier, consolidated: two sets of updates accumulate alike at
// every time at or past the frontier exactly when their contents are equal.
type contents map[[3]int64]int64

func (c contents) add(k, v int64, tm uint64, d int64, since uint64) {
	key := [3]int64{k, v, int64(max(tm, since))}
	if c[key] += d; c[key] == 0 {
		delete(c, key)
	}
}

func (m *spineModel) since() uint64 {
	return m.logical.MustTime() // the machine never sets {}
}

// cut checks BatchesThrough(f): refused as documented, or exactly the
// updates before f (S5).
func (m *spineModel) cut(f frontier.Frontier) {
	tb, s := m.tb, m.s
	tb.Helper()
	bs, err := s.BatchesThrough(f)
	var want error
	switch {
	case f == frontier.Min():
	case !s.physical.LessEqual(f):
		want = ErrBehindCut
	case !f.IsEmpty() && !f.LessEqual(s.upper):
		want = ErrBeyondUpper
	default:
		for _, b := range s.pending {
			if !b.IsEmpty() && b.Lower().Less(f) && f.Less(b.Upper()) {
				want = ErrStraddle
			}
		}
	}
	if !errors.Is(err, want) || (want == nil) != (err == nil) {
		tb.Fatalf("cut %v: err %v, want %v\n%v", f, err, want, s)
	}
	if err != nil {
		return
	}
	since := m.since()
	got, exp := contents{}, contents{}
	for _, b := range bs {
		if b.IsEmpty() {
			tb.Fatalf("cut %v returned an empty batch %v", f, b.Desc())
		}
		for _, u := range b.Updates() {
			got.add(u.Key[0], u.Val[0], u.Time, u.Diff, since)
		}
	}
	for tm, kvs := range m.model {
		if f.IsEmpty() || tm < f.MustTime() {
			for k, d := range kvs {
				exp.add(k[0], k[1], tm, d, since)
			}
		}
	}
	if !mapsEqual(got, exp) {
		tb.Fatalf("cut %v holds %v, want %v\n%v", f, got, exp, s)
	}
}

func mapsEqual(a, b contents) bool {
	if len(a) != len(b) {
		return false
	}
	for k, d := range a {
		if b[k] != d {
			return false
		}
	}
	return true
}

// check compares the spine with the model after every operation.
func (m *spineModel) check() {
	tb, s := m.tb, m.s
	tb.Helper()
	// S4: both frontiers are the join of every one set.
	if s.LogicalCompaction() != m.logical || s.PhysicalCompaction() != m.physical {
		tb.Fatalf("frontiers logical %v physical %v, want %v %v", s.LogicalCompaction(), s.PhysicalCompaction(), m.logical, m.physical)
	}
	wantUpper := frontier.At(m.upper)
	if m.closed {
		wantUpper = frontier.Empty()
	}
	if s.Upper() != wantUpper || s.ReadUpper() != wantUpper {
		tb.Fatalf("upper %v, want %v", s.Upper(), wantUpper)
	}
	// S1, S3: the chain is contiguous from {0}, in time order, and ends
	// where the last batch with updates (after an empty one over the
	// rounds before it without) ended; between there and the upper, every
	// batch inserted had no updates, and the model holds none.
	chain := s.Batches()
	at := frontier.Min()
	for _, b := range chain {
		if b.Lower() != at {
			tb.Fatalf("chain not contiguous: batch %v after upper %v\n%v", b.Desc(), at, s)
		}
		if !b.Lower().Less(b.Upper()) {
			tb.Fatalf("batch %v is an empty interval\n%v", b.Desc(), s)
		}
		at = b.Upper()
	}
	if at != frontier.At(m.end) || s.end != at || !at.LessEqual(s.Upper()) {
		tb.Fatalf("chain ends at %v (end %v), want %v, upper %v\n%v", at, s.end, frontier.At(m.end), s.Upper(), s)
	}
	for tm := m.end; tm < m.upper; tm++ {
		for k, d := range m.model[tm] {
			if d != 0 {
				tb.Fatalf("update %v at %d diff %d after the chain's end %d\n%v", k, tm, d, m.end, s)
			}
		}
	}
	// The version moves whenever the chain changes.
	if prev, ok := m.versions[s.Version()]; ok && !slices.Equal(prev, chain) {
		tb.Fatalf("version %d unchanged but the chain changed\n%v", s.Version(), s)
	}
	m.versions[s.Version()] = chain
	// The levels: one merge at most each, over its oldest batches (S3);
	// after normalize, fewer than fanout batches wait in a level unless it
	// is merging (a level with fanout starts a merge, one at a time, and a
	// roll-up may bring it up to fanout from each level below); every batch of the merge
	// structure is within the physical frontier, and the first pending
	// batch is not (S2).
	top := s.top()
	merging, batches, updates := 0, 0, 0
	for j := range s.levels {
		l := &s.levels[j]
		if (l.merger != nil) != (len(l.merging) > 0) {
			tb.Fatalf("level %d: merger %v with %d merging batches\n%v", j, l.merger != nil, len(l.merging), s)
		}
		if l.merger != nil {
			merging++
			if l.merger.Done() {
				tb.Fatalf("level %d: a finished merge left in place\n%v", j, s)
			}
		}
		if j > top && l.batches() > 0 {
			tb.Fatalf("level %d above the top %d holds batches\n%v", j, top, s)
		}
		if n := len(l.waiting); n >= s.fanout && l.merger == nil || n > (j+1)*s.fanout {
			tb.Fatalf("level %d: %d batches wait, fanout %d\n%v", j, n, s.fanout, s)
		}
		for _, b := range slices.Concat(l.merging, l.waiting) {
			if !b.Upper().LessEqual(s.physical) {
				tb.Fatalf("level %d: batch %v beyond the physical frontier %v\n%v", j, b.Desc(), s.physical, s)
			}
		}
	}
	if len(s.pending) > 0 && s.pending[0].Upper().LessEqual(s.physical) {
		tb.Fatalf("pending batch %v within the physical frontier %v\n%v", s.pending[0].Desc(), s.physical, s)
	}
	// Every batch is well formed (B1–B3), of the trace's arity, compacted
	// no further than the logical frontier, and holds exactly the model's
	// updates of its interval, accumulated at any time at or past it: with
	// the chain contiguous, no fold or merge loses or duplicates one. A
	// batch found so once is so at every later logical frontier too.
	since := m.since()
	for _, b := range chain {
		batches++
		updates += b.Len()
		if m.verified[b] {
			continue
		}
		m.verified[b] = true
		if err := b.Check(); err != nil {
			tb.Fatalf("batch %v: %v\n%v", b.Desc(), err, s)
		}
		if b.Arity() != kv {
			tb.Fatalf("batch %v of arity %v", b.Desc(), b.Arity())
		}
		if !b.Desc().Since.LessEqual(m.logical) {
			tb.Fatalf("batch %v compacted past the logical frontier %v", b.Desc(), m.logical)
		}
		got, want := contents{}, contents{}
		for _, u := range b.Updates() {
			got.add(u.Key[0], u.Val[0], u.Time, u.Diff, since)
		}
		hi := m.upper
		if t, ok := b.Upper().Time(); ok {
			hi = t
		}
		for tm := b.Lower().MustTime(); tm < hi; tm++ {
			for k, d := range m.model[tm] {
				want.add(k[0], k[1], tm, d, since)
			}
		}
		if !mapsEqual(got, want) {
			tb.Fatalf("batch %v holds %v, want %v\n%v", b.Desc(), got, want, s)
		}
	}
	m.checkDebts()
	// Merges never grow what they read.
	if updates > m.inserted {
		tb.Fatalf("%d updates in the chain, %d inserted", updates, m.inserted)
	}
	st := s.Stats()
	if st.Batches != batches || st.Updates != updates || st.Pending != len(s.pending) || st.Merging != merging || s.Merging() != (merging > 0) {
		tb.Fatalf("stats %+v, chain of %d batches, %d updates, %d pending, %d merging", st, batches, updates, len(s.pending), merging)
	}
	if s.Err() != nil {
		tb.Fatalf("a merge overflowed: %v", s.Err())
	}
}

// checkDebts checks the debt of every batch of the merge structure: it owes
// at most the inserted batches in its interval and at least those whose
// upper is beyond its since, and its updates bound those at
// times beyond its since, within its own (a batch whose debt is not
// recorded counts as owing one inserted batch, debtOf);
// owing counts the batches that owe (owes) and debts holds nothing else;
// ready counts the released ones; and once an operation is done no level
// without a merge in progress has a batch waiting that owes, released by
// the since's move (recompact started its merge).
func (m *spineModel) checkDebts() {
	tb, s := m.tb, m.s
	tb.Helper()
	// count returns the inserted batches whose upper is in (lo, hi].
	count := func(lo, hi frontier.Frontier) int {
		i := len(m.arrived)
		if t, ok := hi.Time(); ok {
			i, _ = slices.BinarySearch(m.arrived, t+1)
		}
		j := 0
		if t, ok := lo.Time(); ok {
			j, _ = slices.BinarySearch(m.arrived, t+1)
		} else {
			j = len(m.arrived)
		}
		return max(i-j, 0)
	}
	owing, recorded := 0, 0
	for j := range s.levels {
		l := &s.levels[j]
		for i, b := range slices.Concat(l.merging, l.waiting) {
			d := s.debtOf(b)
			if _, ok := s.debts[b]; ok {
				recorded++
			}
			since := b.Desc().Since
			if lo, all := count(since.Join(b.Lower()), b.Upper()), count(b.Lower(), b.Upper()); d.owed < lo || d.owed > all {
				tb.Fatalf("batch %v: debt %+v, %d inserted batches, %d beyond its since\n%v", b.Desc(), d, all, lo, s)
			}
			beyond := 0
			for _, u := range b.Updates() {
				if since.Less(frontier.At(u.Time)) {
					beyond++
				}
			}
			if d.updates < beyond || d.updates > b.Len() {
				tb.Fatalf("batch %v of %d updates, %d beyond its since: debt %+v\n%v", b.Desc(), b.Len(), beyond, d, s)
			}
			if s.owes(b) {
				owing++
				if waiting := i >= len(l.merging); waiting && l.merger == nil && b.Upper().LessEqual(s.logical) && d.released {
					tb.Fatalf("level %d: batch %v owes %+v, passed by the logical frontier %v, and nothing merges it\n%v", j, b.Desc(), d, s.logical, s)
				}
			}
		}
	}
	ready := 0
	for _, d := range s.debts {
		if d.released {
			ready++
		}
	}
	if ready != s.ready {
		tb.Fatalf("%d batches released, ready %d\n%v", ready, s.ready, s)
	}
	if owing != s.owing || recorded != len(s.debts) {
		tb.Fatalf("%d batches owe, owing %d; %d debts recorded of %d\n%v", owing, s.owing, recorded, len(s.debts), s)
	}
}

// drawSpineOp draws one operation: an insert with probability inserts in
// 30 (or more: the rest are drawn as 12 in 30 are), with both compaction
// frontiers moved to its upper follow times in 8; if steady, of up to 130
// fresh updates, retracting a share of the live ones.
func drawSpineOp(t *rapid.T, inserts, follow int, steady bool, live int) spineOp {
	efforts := []int64{-1, 0, 1, 2, 7, 100, 1 << 20, math.MaxInt64}
	k := rapid.IntRange(0, 29).Draw(t, "op")
	if k < inserts {
		k = 0
	}
	switch {
	case k < 18:
		o := spineOp{kind: opInsert, width: rapid.Uint64Range(1, 3).Draw(t, "width")}
		// Sizes spread evenly up to their bound (rapid's own draws favour
		// small ones), so that levels fill with batches of every size.
		bound := rapid.SampledFrom([]uint64{1, 8, 130}).Draw(t, "bound")
		r := rapid.Uint64().Draw(t, "sizes")
		o.fresh = int(r % (bound + 1))
		if rapid.IntRange(0, 2).Draw(t, "retract") == 0 {
			o.cancel = int(r >> 32 % (2*bound + 1))
			if steady {
				// A wave retracting a share of the live updates, the
				// oldest first: the top's first batch shrinks at once.
				o.cancel = live * rapid.IntRange(1, 4).Draw(t, "quarters") / 4
			}
		}
		o.seed = rapid.Uint64().Draw(t, "seed")
		o.follow = rapid.IntRange(0, 7).Draw(t, "follow") < follow
		for range rapid.IntRange(0, 2).Draw(t, "singles") {
			o.single = append(o.single, [4]int64{
				rapid.Int64Range(0, 3).Draw(t, "k"), rapid.Int64Range(0, 2).Draw(t, "v"),
				rapid.Int64Range(0, 2).Draw(t, "dt"), rapid.SampledFrom([]int64{-2, -1, 1, 1, 3}).Draw(t, "d"),
			})
		}
		return o
	case k < 19:
		return spineOp{kind: opRefused, seed: rapid.Uint64Range(0, 3).Draw(t, "how")}
	case k < 21:
		return spineOp{kind: opExert, effort: rapid.SampledFrom(efforts).Draw(t, "effort")}
	case k < 23:
		return spineOp{kind: opWork, effort: rapid.SampledFrom(efforts).Draw(t, "effort")}
	case k < 25:
		return spineOp{kind: opLogical, dt: rapid.Int64Range(-3, 1).Draw(t, "dt")}
	case k < 27:
		return spineOp{kind: opPhysical, dt: rapid.Int64Range(-3, 2).Draw(t, "dt"), empty: rapid.IntRange(0, 15).Draw(t, "empty") == 0}
	case k < 29:
		return spineOp{kind: opCut, dt: rapid.Int64Range(-6, 1).Draw(t, "dt"), empty: rapid.IntRange(0, 7).Draw(t, "empty") == 0}
	default:
		if rapid.IntRange(0, 9).Draw(t, "close") == 0 {
			return spineOp{kind: opClose}
		}
		return spineOp{kind: opDrain, effort: rapid.SampledFrom(efforts[2:]).Draw(t, "effort")}
	}
}

// spineMachine runs the machine. A steady run is a steady trace's: large
// batches retracting the oldest live updates, both frontiers following
// the upper, little fuel and nothing else, where merges in progress at one
// level meet folds and merges at the next (the fold into the top that
// moved batches past the merge in progress below it took 14 such
// inserts); the others draw every operation.
func spineMachine(steady bool) func(*rapid.T) {
	return func(t *rapid.T) { spineMachineRun(t, steady) }
}

func spineMachineRun(t *rapid.T, steady bool) {
	spines := 1
	if steady {
		// Three spines a run: the states sought are rare, and each
		// check of rapid's default hundred then tries more of them
		// (one under the race detector, which takes four times as long).
		spines = 3
		if raceEnabled {
			spines = 1
		}
	}
	for range spines {
		runOneSpine(t, steady)
	}
}

func runOneSpine(t *rapid.T, steady bool) {
	var fanout, follow, inserts, ops int
	var effort int64
	if steady {
		fanout = rapid.IntRange(4, 6).Draw(t, "fanout")
		effort = rapid.Int64Range(0, 1).Draw(t, "spine effort")
		follow, inserts = 8, 29
		ops = rapid.IntRange(300, 1500).Draw(t, "ops")
	} else {
		fanout = rapid.IntRange(1, 9).Draw(t, "fanout")
		if fanout == 9 {
			fanout = 0 // DefaultFanout
		}
		effort = rapid.SampledFrom([]int64{0, 1, 2, 5, 1 << 20, math.MaxInt64 / 3, math.MaxInt64 - 1, math.MaxInt64}).Draw(t, "spine effort")
		follow = rapid.IntRange(0, 8).Draw(t, "follow")
		inserts = rapid.SampledFrom([]int{18, 26, 29}).Draw(t, "inserts")
		ops = rapid.IntRange(20, 400).Draw(t, "ops")
	}
	keys := int64(1 << 40) // steady: every fresh update its own
	if !steady {
		keys = rapid.SampledFrom([]int64{4, 64, 1 << 40}).Draw(t, "keys")
	}
	// The fuel an arriving update brings (0: DefaultFuel; WorkedFuel, an
	// arrangement's; 1, what only a growing trace's lower levels need).
	fuel := rapid.SampledFrom([]int64{0, 1, WorkedFuel, 3}).Draw(t, "spine fuel")
	t.Logf("fanout %d, effort %d, fuel %d, keys %d, follow %d, inserts %d, steady %v", fanout, effort, fuel, keys, follow, inserts, steady)
	m := newSpineModel(t, fanout, effort, fuel, keys)
	m.check()
	for range ops {
		o := drawSpineOp(t, inserts, follow, steady, len(m.live))
		t.Logf("%v,", o)
		m.apply(o)
	}
}

// TestSpineMachine runs the spine's state machine over every operation.
func TestSpineMachine(t *testing.T) { rapid.Check(t, spineMachine(false)) }

// TestSpineMachineSteady runs it over a steady trace's inserts.
func TestSpineMachineSteady(t *testing.T) { rapid.Check(t, spineMachine(true)) }

// FuzzSpineMachine is the same state machine driven by the fuzzer.
func FuzzSpineMachine(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) { spineMachineRun(t, rapid.Bool().Draw(t, "steady")) }))
}

// runSpineOps replays a sequence of operations, as the machine found it.
func runSpineOps(t *testing.T, fanout int, effort, keys int64, ops []spineOp) {
	t.Helper()
	m := newSpineModel(t, fanout, effort, 0, keys)
	m.check()
	for _, o := range ops {
		m.apply(o)
	}
}

// TestSpineMachineFoldPastMergeBelow replays the machine's shortest find of
// the fold into the top that ignored the merge in progress below it (the
// fix of foldIntoTop, undone): twelve inserts of a steady trace with
// fanout 6, after which the top merged batches that were not contiguous.
func TestSpineMachineFoldPastMergeBelow(t *testing.T) {
	runSpineOps(t, 6, 1, 1<<40, []spineOp{
		{kind: opInsert, width: 2, fresh: 54, cancel: 0, seed: 159580989, single: [][4]int64{{0, 2, 2, -1}}, follow: true},
		{kind: opInsert, width: 3, fresh: 1, cancel: 13, seed: 98, follow: true},
		{kind: opInsert, width: 1, fresh: 75, cancel: 31, seed: 1210, single: [][4]int64{{2, 1, 1, 3}, {2, 0, 0, 1}}, follow: true},
		{kind: opInsert, width: 2, fresh: 0, cancel: 0, seed: 551212439687190, single: [][4]int64{{0, 0, 2, 1}, {2, 1, 0, -1}}, follow: true},
		{kind: opInsert, width: 2, fresh: 4, cancel: 86, seed: 585386025238469962, single: [][4]int64{{2, 0, 1, -1}}, follow: true},
		{kind: opInsert, width: 1, fresh: 0, cancel: 0, seed: 244599167, follow: true},
		{kind: opInsert, width: 1, fresh: 2, cancel: 0, seed: 5, single: [][4]int64{{1, 1, 1, 3}, {3, 1, 0, -2}}, follow: true},
		{kind: opInsert, width: 1, fresh: 21, cancel: 0, seed: 62, follow: true},
		{kind: opInsert, width: 3, fresh: 0, cancel: 0, seed: 478660, single: [][4]int64{{1, 0, 1, -1}}, follow: true},
		{kind: opInsert, width: 1, fresh: 0, cancel: 0, seed: 120, single: [][4]int64{{1, 1, 2, 1}, {1, 0, 2, -1}}, follow: true},
		{kind: opInsert, width: 2, fresh: 8, cancel: 0, seed: 36521372609231, single: [][4]int64{{2, 0, 1, 1}, {2, 0, 2, 1}}, follow: true},
		{kind: opInsert, width: 2, fresh: 8, cancel: 0, seed: 733256033413, follow: true},
	})
}
