package spine

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Errors reported by the spine. They wrap with context; match with errors.Is.
var (
	ErrNotContiguous = errors.New("spine: batch lower is not the trace upper")
	ErrEmptyInterval = errors.New("spine: batch lower is not before its upper")
	ErrClosed        = errors.New("spine: trace is closed")
	ErrStraddle      = errors.New("spine: cut straddles a non-empty batch")
	ErrBehindCut     = errors.New("spine: cut is before the physical compaction frontier")
	ErrBeyondUpper   = errors.New("spine: cut is beyond the trace upper")
	ErrArity         = errors.New("spine: batch arity differs from the trace's")
	ErrNilBatch      = errors.New("spine: nil batch")
)

// level is one tier of the merge structure: a merge in progress over a
// prefix of its batches (merging, nil when none), then the batches waiting
// after it, oldest first.
type level struct {
	merging []*batch.Batch
	merger  *batch.Merger
	waiting []*batch.Batch
	// lag is the spine's lag (Spine.lag) when the merge in progress
	// started, for its result's debt (debt.lag).
	lag uint64
	// in is the updates of the merge in progress; kept is the share of its
	// input the level's last merge kept (0 before the first), which sizes
	// the next one's output (batch.NewMergerNExpect).
	in   int
	kept float64
}

// keptSlack is how much more than the last merge's share of its input the
// next merge of a level is sized for, on top of keptExtra updates; a level
// whose merges kept at least keptHint of their input gets no hint.
const (
	keptSlack = 1.1
	keptExtra = 1024
	keptHint  = 0.9
)

// debt is what a batch of the merge structure holds that no merge
// compacted: owed counts the inserted batches it holds that its merges
// could not compact because they lay at or after the merge's since, and
// updates bounds their updates in it. Both are bounds: an inserted batch
// that straddled a merge's since counts whole. An inserted batch owes
// itself (owed 1, updates its own: the empty batch the chain takes over
// rounds without updates, before the next batch with them, counts too,
// one for all those rounds); a merge at
// since S takes the debt of each input whose upper is beyond S (in one
// whose upper is at or before S every time became S), its updates bounded
// by the merge's.
type debt struct {
	owed, updates int
	// lag is the spine's lag (Spine.lag: its upper less its logical
	// frontier) when the merge that made the batch started.
	lag uint64
	// released is set on a batch that owes (owes) once the logical
	// frontier has passed its upper and the spine's lag is at most half
	// what it was when the merge that made it started (releasable): the lag it owes was let go (a reader caught up), not a
	// since following the arrivals some rounds behind, whose batches the
	// level's next merge compacts anyway. Only a released batch recompacts
	// (recompact).
	released bool
}

// batches returns how many batches of the chain the level holds.
func (l *level) batches() int { return len(l.merging) + len(l.waiting) }

// Stats are counters a benchmark reads.
type Stats struct {
	Batches   int   // batches in the chain (non-nil, empty ones included)
	Updates   int   // updates across the chain
	Bytes     int   // column bytes across the chain (trace-B)
	Merges    int64 // merges started
	MergeWork int64 // updates consumed by merges (fuel spent): merge passes
	Pending   int   // batches not yet admitted to merging
	Merging   int   // merges in progress (0: the spine is quiescent)
	// Recompactions counts the merges (among Merges) started to compact
	// batches that earlier merges left uncompacted (Spine.recompact).
	Recompactions int64
}

// Spine is a fueled, tiered LSM of batches. The zero value is not usable;
// call New.
type Spine struct {
	ar       batch.Arity
	logical  frontier.Frontier
	physical frontier.Frontier
	upper    frontier.Frontier
	// end is where the chain ends: the upper of its newest batch, {0}
	// before the first. A batch without updates moves the upper and
	// leaves the chain as it was (S1), so end may lie before the upper,
	// with no update between them; the next batch with updates goes in
	// after an empty batch from end to its lower, so the chain stays
	// contiguous.
	end      frontier.Frontier
	levels   []level
	pending  []*batch.Batch
	effort   int64
	fuel     int64 // per arriving update (Options.Fuel)
	fanout   int
	err      error // the first merge that overflowed, if any
	overflow int   // merges that overflowed
	merges   int64
	work     int64
	version  uint64 // bumped whenever the chain's batches change
	noHint   bool   // tests: size no merge from its level's last one
	claimed  bool   // a trace wraps it (ClaimTrace)

	// debts holds the debt of every batch of the merge structure that a
	// merge or a join made owing two or more inserted batches; a batch it
	// lacks owes as an inserted one (debtOf). owing
	// counts the batches of the merge structure whose debt calls for a
	// recompaction (owes), recompactions the merges started for them.
	debts         map[*batch.Batch]debt
	owing         int
	recompactions int64
	noRecompact   bool // tests: start no recompaction
	// ready counts the released batches (recompact has work only while it
	// is positive). release looks for batches to release only once the
	// logical frontier reaches unpassed, at or before the least upper of
	// the batches that owe and that it has not passed, or the lag falls to
	// shrunk, at or above the largest lag at which a batch that owes,
	// passed and not released, would be (releasable; hasShrunk says one
	// is). finite is the upper's time, or the last finite one once closed.
	ready     int
	unpassed  frontier.Frontier
	shrunk    uint64
	hasShrunk bool
	finite    uint64
}

// ClaimTrace marks s as the storage of a trace and reports whether it was
// free: trace.New wraps a spine once, and refuses a second trace over it,
// whose holds the first would not know (core/trace's package doc).
func (s *Spine) ClaimTrace() bool {
	if s.claimed {
		return false
	}
	s.claimed = true
	return true
}

// DefaultFanout is the number of batches of a level merged at once when
// Options.Fanout is zero. 16 against 8: a trace of 1M rows absorbing rounds
// of 1,000 merges each update 3.8 times instead of 4.5, for a chain of about
// 17 batches instead of 12 (docs/engine-history.md, Kernels, second round).
const DefaultFanout = 16

// DefaultFuel is Options.Fuel when left 0: the merge work each merge in
// progress may do per update that arrives. A level merges fanout batches
// when fanout more have arrived below it, so 1 would finish each merge just
// in time on a growing trace; the slack covers batches that consolidation
// shrinks on the way up and the top level, whose merge also rereads the
// largest batch.
const DefaultFuel = 4

// WorkedFuel is the fuel per update for a spine that its owner also works
// between arrivals, at every turn it gets (Work), as the runtime's
// maintenance pass works every arrangement's trace at every wake while it
// merges: half of DefaultFuel, that work giving the rest of the slack. At
// the top of a steady trace a merge reads the largest batch and as much
// again, and the level calls for the next once as much again has arrived,
// so 2 an update finishes it about when it is due, and 4 in half that: its
// work then comes as a burst every arrival for half the rounds between two
// top merges and none in the other half, and a runtime of several workers,
// whose rounds wait for every worker, turns each worker's burst into the
// others' idle time (docs/engine-history.md, "A worked trace's arrivals
// bring half the fuel"). A spine that only its arrivals drive keeps
// DefaultFuel: with 2 its trace grows a little past three times its live
// updates. Worked between arrivals with about a sixth of each arrival's
// updates or more (the runtime's Effort, 16,384 a wake, is that for
// arrivals of up to about 100,000), 2 keeps that bound; with less, the
// trace can pass it by a few percent, its merges finished late but whole.
const WorkedFuel = 2

// Options configure a spine.
type Options struct {
	// Effort scales the fuel each arrival brings (differential-dataflow's
	// effort multiplier). Zero or less means 1; the fuel of an arrival
	// saturates at MaxInt64, so a huge effort merges at once.
	Effort int64
	// Fuel is the merge work each merge in progress receives per arriving
	// update, before Effort scales it; zero or less means DefaultFuel. A
	// spine given less relies on work between arrivals (Work, Exert) for
	// the rest (WorkedFuel); the product saturates at MaxInt64 as Effort's
	// does.
	Fuel int64
	// Fanout is how many batches of one level are merged at once (at least
	// 2); zero means DefaultFanout. Each update is merged about once per
	// level, and a level is fanout times the size of the one below, so a
	// larger fanout means fewer merge passes per update and a longer chain
	// for readers.
	Fanout int
}

// New returns an empty spine for batches of the given arity, with upper,
// logical and physical compaction at {0}.
func New(ar batch.Arity, opts Options) *Spine {
	e := opts.Effort
	if e <= 0 {
		e = 1
	}
	f := opts.Fanout
	if f == 0 {
		f = DefaultFanout
	}
	f = max(f, 2)
	fuel := opts.Fuel
	if fuel <= 0 {
		fuel = DefaultFuel
	}
	return &Spine{ar: ar, effort: e, fuel: fuel, fanout: f}
}

// Arity returns the arity of the spine's batches.
func (s *Spine) Arity() batch.Arity { return s.ar }

// Fuel returns the merge work each merge in progress receives per arriving
// update, before effort (Options.Fuel, or DefaultFuel).
func (s *Spine) Fuel() int64 { return s.fuel }

// Upper returns the spine's upper: the upper of the last inserted batch.
func (s *Spine) Upper() frontier.Frontier { return s.upper }

// ReadUpper is Upper: the chain's coverage (§1.8).
func (s *Spine) ReadUpper() frontier.Frontier { return s.upper }

// Err returns the error of the first merge that overflowed, if any. The
// merged batch is in the chain with every other update (batch.Merger.Result);
// the spine keeps accepting inserts, and its owner reports the error.
func (s *Spine) Err() error { return s.err }

// Overflows returns the number of merges that overflowed so far: an owner
// that compares it with an earlier count learns of each new overflow (Err
// keeps only the first).
func (s *Spine) Overflows() int { return s.overflow }

// LogicalCompaction returns the logical compaction frontier.
func (s *Spine) LogicalCompaction() frontier.Frontier { return s.logical }

// PhysicalCompaction returns the physical compaction frontier.
func (s *Spine) PhysicalCompaction() frontier.Frontier { return s.physical }

// SetLogicalCompaction records f for merges that start from now on (§2.2). A
// frontier before the current one is ignored (S4). When it moves past the
// upper of a batch that earlier merges left mostly uncompacted (owes), it
// starts the merge that compacts it (recompact), which Work, Exert and
// arrivals fuel as any other. The empty frontier starts none: it is the
// last handle's release (trace.Handle.Release), after which nothing reads
// the trace, about to be freed.
func (s *Spine) SetLogicalCompaction(f frontier.Frontier) {
	j := s.logical.Join(f)
	if j == s.logical {
		return
	}
	s.logical = j
	if j.IsEmpty() {
		return
	}
	if s.owing > 0 && (s.unpassed.LessEqual(j) || s.hasShrunk && s.lag() <= s.shrunk) {
		s.release()
	}
	if s.ready > 0 && s.recompact() {
		s.normalize()
	}
}

// SetPhysicalCompaction records f (ignored if before the current one, S4) and
// admits pending batches whose upper is within it to merging (§2.3).
// Unchanged, it does nothing: every change to pending or physical already
// admitted what it could.
func (s *Spine) SetPhysicalCompaction(f frontier.Frontier) {
	j := s.physical.Join(f)
	if j == s.physical {
		return
	}
	s.physical = j
	s.considerMerges()
}

// Insert appends b to the chain (S1) and lets arrivals drive merge work.
// A batch without updates is progress only: it moves the upper and leaves
// the chain where it was, so a trace that takes no update for many rounds
// (an errors trace with no errors) holds no batch for them; the next
// batch with updates is appended after an empty batch over the rounds
// between. It still brings an arrival's fuel (one update's) to the merges
// in progress, which may finish one and so change the version. A nil b is
// refused (ErrNilBatch), as is a batch of another arity.
func (s *Spine) Insert(b *batch.Batch) error {
	switch {
	case b == nil:
		return ErrNilBatch
	case s.upper.IsEmpty():
		return ErrClosed
	case b.Arity() != s.ar:
		return fmt.Errorf("%w: %v into %v", ErrArity, b.Arity(), s.ar)
	case b.Lower() != s.upper:
		return fmt.Errorf("%w: batch %v, trace upper %v", ErrNotContiguous, b.Desc(), s.upper)
	case !b.Lower().Less(b.Upper()):
		// Equal, or an upper before the lower: either would leave the
		// chain's coverage where it was or move it back.
		return fmt.Errorf("%w: %v", ErrEmptyInterval, b.Desc())
	}
	s.upper = b.Upper()
	if t, ok := s.upper.Time(); ok {
		s.finite = t
	}
	if b.IsEmpty() {
		// It takes no place in the chain, but it is an arrival: the
		// merges in progress take an arrival's fuel (one update's, what
		// an admitted empty batch gave them), so that a trace only its
		// inserts drive (a reduce's output, a join's intermediate, which
		// no maintenance pass works) finishes them, and reports their
		// overflows, over rounds without updates.
		s.Work(arrivalFuel(0, s.fuel, s.effort))
		return nil
	}
	if lower := b.Lower(); s.end != lower {
		s.pending = append(s.pending, batch.Empty(s.ar, s.end, lower))
		s.version++
	}
	s.end = b.Upper()
	s.pending = append(s.pending, b)
	s.version++
	s.considerMerges()
	return nil
}

// Close seals the spine with an empty batch up to the empty frontier.
func (s *Spine) Close() error {
	if s.upper.IsEmpty() {
		return nil
	}
	return s.Insert(batch.Empty(s.ar, s.upper, frontier.Empty()))
}

// considerMerges moves pending batches whose upper is within the physical
// frontier into the merge structure, in arrival order.
func (s *Spine) considerMerges() {
	base := s.pending
	for len(s.pending) > 0 && s.pending[0].Upper().LessEqual(s.physical) {
		b := s.pending[0]
		s.pending[0] = nil
		s.pending = s.pending[1:]
		s.arrive(b)
	}
	n := len(s.pending)
	if n == len(base) {
		return
	}
	// What stays pending moves to the front of the array, which the next
	// Insert fills again (one batch a round, usually admitted at once,
	// costs no allocation); an array grown while the physical frontier
	// held many batches back is dropped once they are all admitted. The
	// move is made only when at least as many were admitted as stay (so
	// it costs at most one copy per admission): otherwise the slice stays
	// past the admitted ones, as a reader's lagging hold keeps it, and
	// append moves it when it grows.
	switch {
	case n == 0 && cap(base) > 64:
		s.pending = nil
	case len(base)-n >= n:
		copy(base, s.pending)
		clear(base[n:])
		s.pending = base[:n]
	}
}

// classOf returns the level a batch of n updates belongs to by size:
// floor(log_fanout(n)), 0 for n < fanout.
func (s *Spine) classOf(n int) int {
	c := 0
	for ; n >= s.fanout; n /= s.fanout {
		c++
	}
	return c
}

// top returns the highest level holding a batch, -1 if none does.
func (s *Spine) top() int {
	for j := len(s.levels) - 1; j >= 0; j-- {
		if s.levels[j].batches() > 0 {
			return j
		}
	}
	return -1
}

func (s *Spine) grow(j int) {
	for len(s.levels) <= j {
		s.levels = append(s.levels, level{})
	}
}

// arrive admits b to the merge structure: its updates fuel the merges in
// progress, it joins the level of its size — after the batches of every
// lower level move up to that level, since they are older (roll-up) — and
// levels that are full start merging.
func (s *Spine) arrive(b *batch.Batch) {
	s.applyFuel(arrivalFuel(b.Len(), s.fuel, s.effort))
	c := s.classOf(b.Len())
	s.grow(c)
	s.rollUp(c)
	l := &s.levels[c]
	l.waiting = append(l.waiting, b)
	s.normalize()
}

// arrivalFuel is the fuel an arrival of n updates brings under fuel (per
// update) and effort: fuel per update (at least one update), times
// effort, saturated at MaxInt64. A product that wrapped would be negative,
// and a spine of huge effort or fuel (merge eagerly) would then do no merge
// work on arrivals at all.
func arrivalFuel(n int, fuel, effort int64) int64 {
	u := int64(max(n, 1))
	if fuel > math.MaxInt64/u {
		return math.MaxInt64
	}
	per := fuel * u
	if effort > math.MaxInt64/per {
		return math.MaxInt64
	}
	return per * effort
}

// rollUp moves every batch below level c to level c's waiting batches, in
// chain order, finishing the merges in progress there first.
func (s *Spine) rollUp(c int) {
	occupied := false
	for j := range c {
		if s.levels[j].merger != nil {
			s.complete(j)
		}
	}
	for j := range c {
		occupied = occupied || s.levels[j].batches() > 0
	}
	if !occupied {
		return
	}
	dst := &s.levels[c]
	for j := c - 1; j >= 0; j-- {
		dst.waiting = append(dst.waiting, s.levels[j].waiting...)
		clear(s.levels[j].waiting)
		s.levels[j].waiting = s.levels[j].waiting[:0]
	}
}

// normalize starts the merges the levels call for, bottom up (a merge that
// finishes at once places its result above): a level below the top merges
// its oldest fanout waiting batches once it has that many, unless it is
// just below the top and its batches make the top's merge due, when they
// fold into it (foldIntoTop); the top level merges all its waiting batches
// once they number fanout or those after the first add up to at least the
// first (so the largest batch is reread only when as much again has
// arrived). A level that calls for a merge while one is in progress there
// finishes that one first (S3). Then, while a batch owes (owes), it starts
// the merges that compact those the logical frontier has passed
// (recompact), and applies the rules again if one finished at once.
func (s *Spine) normalize() {
	for {
		s.normalizeLevels()
		if s.ready == 0 || !s.recompact() {
			return
		}
	}
}

// normalizeLevels starts the merges the levels call for (normalize).
func (s *Spine) normalizeLevels() {
	for j := 0; j < len(s.levels); j++ {
		for {
			l := &s.levels[j]
			var group int
			if t := s.top(); j < t {
				if j == t-1 && len(l.waiting) > 0 && s.foldIntoTop(j) {
					break
				}
				if len(l.waiting) >= s.fanout {
					group = s.fanout
				}
			} else if n := len(l.waiting); n >= 2 {
				tail := 0
				for _, b := range l.waiting[1:] {
					tail += b.Len()
				}
				// Batches without updates after the first are no reason
				// to merge: the empty batch over rounds without updates
				// is followed by the batch with updates that made it.
				if n >= s.fanout || tail >= l.waiting[0].Len() && tail > 0 {
					group = n
				}
			}
			if group == 0 {
				break
			}
			if l.merger != nil {
				s.complete(j)
				continue
			}
			s.start(j, group)
			if !s.levels[j].merger.Done() {
				break
			}
			s.finish(j)
		}
	}
}

// foldIntoTop handles level j, just below the top, when the top level is
// idle and j's waiting batches, with the ones waiting after the top's
// first, add up to at least the first: the top's merge is due, so they move
// up and merge with it at once, instead of merging into one batch that the
// top then rereads. The volume decides, not the number of batches: a level
// that waited for fanout batches, just below a top just above a level
// boundary, would hold up to fanout-1 batches of nearly the top's size, and
// the trace would grow past three times the live updates. It reports
// whether it did.
//
// Level j may be merging its oldest batches meanwhile: it started while
// the top was merging, or before the top's first batch shrank (its
// retractions met the updates they retract). Those batches are older than
// the ones waiting after them, which cannot move above them (S3), so the
// merge's inputs count towards the tail, and a fold finishes it first: its
// result joins the top's batches, ahead of the ones folded after it.
func (s *Spine) foldIntoTop(j int) bool {
	top, l := &s.levels[j+1], &s.levels[j]
	if top.merger != nil || len(top.waiting) == 0 {
		return false
	}
	tail := 0
	for _, b := range top.waiting[1:] {
		tail += b.Len()
	}
	for _, b := range l.waiting {
		tail += b.Len()
	}
	if l.merger != nil {
		tail += l.in
	}
	if tail < top.waiting[0].Len() {
		return false
	}
	if l.merger != nil {
		s.complete(j) // its result is level j+1's newest batch
		top = &s.levels[j+1]
	}
	top.waiting = append(top.waiting, l.waiting...)
	clear(l.waiting)
	l.waiting = l.waiting[:0]
	s.start(j+1, len(top.waiting))
	if s.levels[j+1].merger.Done() {
		s.finish(j + 1)
	}
	return true
}

// start begins merging the oldest n waiting batches of level j.
func (s *Spine) start(j, n int) {
	l := &s.levels[j]
	l.merging = append([]*batch.Batch(nil), l.waiting[:n]...)
	rest := copy(l.waiting, l.waiting[n:])
	clear(l.waiting[rest:])
	l.waiting = l.waiting[:rest]
	l.in = 0
	for _, b := range l.merging {
		l.in += b.Len()
	}
	// A level whose last merge cancelled much (the top of a steady trace,
	// where retractions meet the updates they retract) sizes this one's
	// output from it instead of from every input update.
	expect := 0
	if l.kept > 0 && l.kept < keptHint && !s.noHint {
		expect = int(float64(l.in)*l.kept*keptSlack) + keptExtra
	}
	l.merger = batch.NewMergerNExpect(l.merging, s.logical, expect)
	l.lag = s.lag()
	s.merges++
}

// applyFuel gives each merge in progress its own copy of fuel and places
// the results of those that finish.
func (s *Spine) applyFuel(fuel int64) {
	for j := range s.levels {
		l := &s.levels[j]
		if l.merger == nil {
			continue
		}
		f := fuel
		before := l.merger.WorkDone()
		l.merger.Work(&f)
		s.work += l.merger.WorkDone() - before
		if l.merger.Done() {
			s.finish(j)
		}
	}
}

// complete finishes level j's merge in progress whatever the fuel.
func (s *Spine) complete(j int) {
	m := s.levels[j].merger
	fuel := int64(1) << 62
	before := m.WorkDone()
	m.Work(&fuel)
	s.work += m.WorkDone() - before
	s.finish(j)
}

// finish places the result of level j's finished merge: on the top level it
// takes the place of its inputs, ahead of the batches that arrived since,
// unless it has outgrown the level; elsewhere it joins the level above as
// its newest batch. A merge that overflowed records its error (Err) and
// places its complete result like any other.
//
// An overflow is the only error that reaches it: a merger refuses only a
// nil batch, one whose upper is before its lower, batches that are not
// adjacent or of two arities (batch.NewMergerN), and Insert admits none of
// those (S1), while a merge takes consecutive batches of the chain and
// puts its result in their place (S3). A refusal would be one of them
// broken, with no result for the inputs the chain would lose: finish
// panics naming it rather than count it as an overflow.
func (s *Spine) finish(j int) {
	l := &s.levels[j]
	res, err := l.merger.Result()
	if err != nil && !errors.Is(err, batch.ErrOverflow) {
		panic(fmt.Sprintf("spine: merge refused (S1 or S3 broken): merging %v through %v: %v", l.merging[0].Desc(), l.merging[len(l.merging)-1].Desc(), err))
	}
	if err != nil {
		s.overflow++
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("spine: merging %v through %v: %w", l.merging[0].Desc(), l.merging[len(l.merging)-1].Desc(), err)
	}
	s.settle(l.merging, res, l.lag)
	clear(l.merging)
	l.merging, l.merger = nil, nil
	s.version++
	// A merge that overflowed returns its whole batch; only a refusal,
	// which panicked above, returns none.
	if l.in > 0 {
		l.kept = max(float64(res.Len())/float64(l.in), 1e-9)
	}
	if j >= s.top() && s.classOf(res.Len()) <= j {
		l.waiting = append(l.waiting, nil)
		copy(l.waiting[1:], l.waiting)
		l.waiting[0] = res
		return
	}
	s.grow(j + 1)
	s.levels[j+1].waiting = append(s.levels[j+1].waiting, res)
}

// debtOf returns b's debt: recorded when a merge (or a join of batches
// without updates) made it owing two or more inserted batches, else that of
// an inserted batch (owed 1, all its updates): a bound for a made batch that
// owes one or none, whose upper, when it owes none, is at or before every
// later since, so that it adds nothing to a later merge's debt. So a spine
// whose since keeps up with its arrivals records nothing, and its merges pay
// no map operation.
func (s *Spine) debtOf(b *batch.Batch) debt {
	if len(s.debts) > 0 {
		if d, ok := s.debts[b]; ok {
			return d
		}
	}
	return debt{owed: 1, updates: b.Len()}
}

// owes reports whether b is worth a merge of its own once the logical
// frontier passes its upper: it has updates, owes at least fanout inserted
// batches and at least minOwed, and their updates are at least half of its
// own (so that the merge rereads at most twice the updates it compacts).
// A merge whose since is one arrival behind, started by an arrival before
// the since's move of its round, leaves a batch owing one or two inserted
// batches, now and then three (an input made by a merge and straddling
// the since counts its whole debt): at fanout 2 or 3 that would be the
// fanout, and such a trace would merge again half of what it merged.
func (s *Spine) owes(b *batch.Batch) bool { return s.owesDebt(b, s.debtOf(b)) }

// minOwed is the fewest inserted batches a batch owes before it is worth a
// recompaction whatever the fanout (owes): more than a since one arrival
// behind leaves (at most three over 200,000 rounds of churn at fanouts 2
// and 3).
const minOwed = 4

// owesDebt is owes for b of debt d.
func (s *Spine) owesDebt(b *batch.Batch, d debt) bool {
	return d.owed >= max(s.fanout, minOwed) && 2*d.updates >= b.Len() && !b.IsEmpty()
}

// settle records the debt of res, the result of a merge (or join) of the
// batches in, and forgets theirs: the merge's since (res's) compacted every
// input whose upper is at or before it. A debt of one inserted batch or
// none is not recorded (debtOf).
func (s *Spine) settle(in []*batch.Batch, res *batch.Batch, lag uint64) {
	since := res.Desc().Since
	d := debt{lag: lag}
	for _, b := range in {
		bd := s.debtOf(b)
		if s.owesDebt(b, bd) {
			s.owing--
		}
		if bd.released {
			s.ready--
		}
		if len(s.debts) > 0 {
			delete(s.debts, b)
		}
		if !b.Upper().LessEqual(since) {
			d.owed += bd.owed
			d.updates += bd.updates
		}
	}
	if d.owed < 2 {
		return
	}
	d.updates = min(d.updates, res.Len())
	if s.debts == nil {
		s.debts = map[*batch.Batch]debt{}
	}
	if s.owesDebt(res, d) {
		s.owing++
		if d.released = s.releasable(res, d); d.released {
			s.ready++
		} else {
			s.watch(res, d)
		}
	}
	s.debts[res] = d
}

// lag returns the spine's lag: the time of its upper (the last finite one
// once closed) less that of its logical frontier, 0 if that is later.
func (s *Spine) lag() uint64 {
	t, ok := s.logical.Time()
	if !ok || t >= s.finite {
		return 0
	}
	return s.finite - t
}

// releasable reports whether b, which owes debt d, is released
// (debt.released): the logical frontier has passed its upper, and the lag
// is at most half what it was when the merge that made b started
// (releaseLag). A since that follows the arrivals a fixed number of rounds
// behind keeps the lag where it was; a reader's catch-up takes it back to
// about 0.
func (s *Spine) releasable(b *batch.Batch, d debt) bool {
	return b.Upper().LessEqual(s.logical) && s.lag() <= releaseLag(d)
}

// releaseLag returns the lag at or below which a batch owing debt d is
// releasable once passed: half the lag its merge started at.
func releaseLag(d debt) uint64 { return d.lag / 2 }

// watch records what releases b, which owes debt d and is not released,
// for release to look again: the logical frontier reaching its upper, or,
// once that has passed it, the lag falling to its release lag.
func (s *Spine) watch(b *batch.Batch, d debt) {
	if !b.Upper().LessEqual(s.logical) {
		s.unpassed = s.unpassed.Meet(b.Upper())
		return
	}
	if at := releaseLag(d); !s.hasShrunk || at > s.shrunk {
		s.shrunk, s.hasShrunk = at, true
	}
}

// release marks released the waiting batches that owe and are releasable,
// and sets unpassed and shrunk anew from those it leaves (watch).
func (s *Spine) release() {
	s.unpassed, s.shrunk, s.hasShrunk = frontier.Empty(), 0, false
	for j := range s.levels {
		for _, b := range s.levels[j].waiting {
			d, ok := s.debts[b]
			if !ok || d.released || !s.owesDebt(b, d) {
				continue
			}
			if s.releasable(b, d) {
				d.released = true
				s.debts[b] = d
				s.ready++
				continue
			}
			s.watch(b, d)
		}
	}
}

// recompact starts, in every level with no merge in progress, a merge of its
// oldest waiting batches through the newest one that owes (owes), whose
// upper is at or before the logical frontier, and that the since's move
// released (debt.released): a merge that started at an
// older since (a reader's lagging hold kept it while the batches merged)
// compacted little, and without this the batch would wait for the level's
// next merge, at the top for as many updates to arrive again. The merge
// starts at the current since, so its result owes nothing. Such a merge is
// one of its level's like any other (S3: the oldest batches, its result in
// their place). It reports whether one finished at once (its result is
// placed, and the levels' rules may call for merges).
func (s *Spine) recompact() bool {
	if s.noRecompact {
		return false
	}
	done := false
	for j := range s.levels {
		l := &s.levels[j]
		if l.merger != nil {
			continue
		}
		n := 0
		for i, b := range l.waiting {
			if !b.Upper().LessEqual(s.logical) {
				break // the batches after it are later
			}
			if d := s.debtOf(b); s.owesDebt(b, d) && d.released {
				n = i + 1
			}
		}
		if n == 0 {
			continue
		}
		s.start(j, n)
		s.recompactions++
		if s.levels[j].merger.Done() {
			s.finish(j)
			done = true
		}
	}
	return done
}

// reduced reports whether the merge structure holds at most one batch and
// nothing is merging.
func (s *Spine) reduced() bool {
	n := 0
	for j := range s.levels {
		if s.levels[j].merger != nil {
			return false
		}
		n += s.levels[j].batches()
	}
	return n <= 1
}

// Exert does merge work without new input, as if effort records had arrived
// (§1.7 exert). It returns whether work remains. Repeated calls reduce the
// merge structure to one batch, bottom up: with no merge in progress, the
// lowest level's batches merge into one for the level above (or move up
// when there is one), and the top level's merge into one where they are.
// An effort below 1 counts as 1, so that repeated calls end.
func (s *Spine) Exert(effort int64) bool {
	effort = max(effort, 1)
	if s.reduced() {
		return false
	}
	if !s.Merging() {
		t, j := s.top(), 0
		for s.levels[j].batches() == 0 {
			j++
		}
		switch l := &s.levels[j]; {
		case j == t:
			s.start(j, len(l.waiting))
		case len(l.waiting) == 1:
			s.levels[j+1].waiting = append(s.levels[j+1].waiting, l.waiting[0])
			l.waiting[0] = nil
			l.waiting = l.waiting[:0]
		default:
			s.start(j, len(l.waiting))
		}
	}
	s.applyFuel(effort)
	s.normalize()
	return !s.reduced()
}

// Work applies effort fuel to the merges in progress, without introducing
// virtual records (what an idle maintenance pass does: arrivals drive the
// rest). A merge it finishes may make the levels' rules, or a batch that
// owes (recompact), start another, which the next call fuels. It reports
// whether a merge is still in progress. An effort below 1 counts as 1, as
// in Exert.
func (s *Spine) Work(effort int64) bool {
	if !s.Merging() {
		return false
	}
	effort = max(effort, 1)
	s.applyFuel(effort)
	s.normalize()
	return s.Merging()
}

// Version changes whenever the chain's batches change (an insert, or a
// merge replacing its batches by one); moving batches between levels leaves
// it alone. A mirror of the chain is current while the version is the same.
func (s *Spine) Version() uint64 { return s.version }

// Merging reports whether a merge is in progress.
func (s *Spine) Merging() bool {
	for j := range s.levels {
		if s.levels[j].merger != nil {
			return true
		}
	}
	return false
}

// MapBatches calls f on every batch of the chain in time order (empty ones
// included). A nil f visits nothing.
func (s *Spine) MapBatches(f func(*batch.Batch)) {
	if f == nil {
		return
	}
	for j := len(s.levels) - 1; j >= 0; j-- {
		l := &s.levels[j]
		for _, b := range l.merging {
			f(b)
		}
		for _, b := range l.waiting {
			f(b)
		}
	}
	for _, b := range s.pending {
		f(b)
	}
}

// Batches returns the chain (cold path: it allocates), with spare capacity
// so that a caller mirroring the chain can append the next inserted batches.
func (s *Spine) Batches() []*batch.Batch {
	n := len(s.pending)
	for j := range s.levels {
		n += s.levels[j].batches()
	}
	out := make([]*batch.Batch, 0, n+4)
	s.MapBatches(func(b *batch.Batch) { out = append(out, b) })
	return out
}

// BatchesThrough returns the non-empty batches holding exactly the updates at
// times before f (§1.8, S5). f must be at or beyond the physical compaction
// frontier and at or before the upper; f = {} means everything inserted so
// far. A non-empty pending batch that f splits is reported as ErrStraddle.
// The returned slice is fresh; the batches are shared.
func (s *Spine) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	if f == frontier.Min() {
		return nil, nil
	}
	if !s.physical.LessEqual(f) {
		return nil, fmt.Errorf("%w: cut %v, physical compaction %v", ErrBehindCut, f, s.physical)
	}
	if !f.IsEmpty() && !f.LessEqual(s.upper) {
		return nil, fmt.Errorf("%w: cut %v, upper %v", ErrBeyondUpper, f, s.upper)
	}
	var out []*batch.Batch
	for j := len(s.levels) - 1; j >= 0; j-- {
		l := &s.levels[j]
		for _, b := range l.merging {
			out = appendNonEmpty(out, b)
		}
		for _, b := range l.waiting {
			out = appendNonEmpty(out, b)
		}
	}
	for _, b := range s.pending {
		if b.IsEmpty() {
			continue
		}
		inLower, inUpper := b.Lower().LessEqual(f), b.Upper().LessEqual(f)
		if inLower != inUpper && f != b.Lower() {
			return nil, fmt.Errorf("%w: cut %v, batch %v", ErrStraddle, f, b.Desc())
		}
		if inUpper {
			out = append(out, b)
		}
	}
	return out, nil
}

func appendNonEmpty(out []*batch.Batch, b *batch.Batch) []*batch.Batch {
	if b.IsEmpty() {
		return out
	}
	return append(out, b)
}

// Stats returns the spine's counters.
func (s *Spine) Stats() Stats {
	st := Stats{Merges: s.merges, MergeWork: s.work, Pending: len(s.pending), Recompactions: s.recompactions}
	for j := range s.levels {
		if s.levels[j].merger != nil {
			st.Merging++
		}
	}
	s.MapBatches(func(b *batch.Batch) {
		st.Batches++
		st.Updates += b.Len()
		st.Bytes += b.SizeBytes()
	})
	return st
}

// String describes the levels and pending batches, one batch a line, for
// tests.
func (s *Spine) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "upper %v logical %v physical %v", s.upper, s.logical, s.physical)
	if s.end != s.upper {
		fmt.Fprintf(&sb, " (chain ends at %v)", s.end)
	}
	for j := len(s.levels) - 1; j >= 0; j-- {
		l := &s.levels[j]
		for i, b := range l.merging {
			verb := "merging"
			if i > 0 {
				verb = "   with"
			}
			fmt.Fprintf(&sb, "\nlevel %d: %s %v (%d)", j, verb, b.Desc(), b.Len())
		}
		for _, b := range l.waiting {
			fmt.Fprintf(&sb, "\nlevel %d: %v (%d)", j, b.Desc(), b.Len())
		}
	}
	for _, b := range s.pending {
		fmt.Fprintf(&sb, "\npending: %v (%d)", b.Desc(), b.Len())
	}
	return sb.String()
}
