package dataflow

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// IndexManager maps index ids to trace bundles for one worker of a runtime
// (§4.2): local bundles of traces this runtime maintains, and peer bundles
// of traces another runtime publishes.
type IndexManager struct {
	entries map[string]*entry
	// byWriter has the entries of entries by their bundle's Writer as it
	// was when set ("" for a peer bundle not yet described), for
	// WriterDropped; byRoot has the entries whose root is set, by root,
	// for Drop. Neither walks every entry.
	byWriter map[string]map[*entry]struct{}
	byRoot   map[string]map[*entry]struct{}
	// rootImports are the imports queries made of each local Maintained
	// index, directly or through aliases (noteImports).
	rootImports map[string][]*share.Import
	// spines are the traces of every arrangement built on this worker,
	// exported or not, in no order (untrack moves the last into the place
	// of the one it removes: tracked.at); bySpine finds them (when an
	// index is set).
	spines  []*tracked
	bySpine map[*share.Spine]*tracked
	// group defers the hold changes of every trace in spines at once
	// (Defer).
	group share.Group
	// hot are the traces with something for Maintain to do, each once
	// (share.Spine.MarkHot): a batch inserted, a hold change recorded,
	// a physical compaction applied, a reader's move taken from remote,
	// a merge in progress, an overflow not yet seen by Overflows. Maintain, Merging and Overflows
	// walk them only, so that a wake costs what its traces have to do,
	// not what the worker holds. Its order is no one's: untrack moves
	// the last into the place of the one it removes (tracked.hotAt).
	hot []*tracked
	// dropped are the traces untrack took out of maintenance with an
	// overflow error Overflows had not returned: their merge overflowed
	// before their dataflow was dropped, and DroppedOverflows returns it
	// once.
	dropped []*tracked
	// remote is the stack of traces whose readers moved a hold (pushed by
	// their notify, on the reader's goroutine, tracked.queued set while
	// in it): Maintain takes it whole and makes them hot.
	remote atomic.Pointer[tracked]
	// loose are the local entries whose halves were not both traces
	// tracked here when set (a reader that is no trace.Handle of a
	// share.Spine of this worker): no hot trace tells when their upper
	// moves, so Maintain visits them every time. An entry whose trace is
	// untracked later is not loose: its holds move once, there (untrack).
	loose []*entry
	// owned lists the ids each owner set, for DropOwned.
	owned map[string][]string
	// last is the entry AllowCompaction found last, under lastID: a
	// driver's rounds name the same index every time, and comparing the
	// id costs a fraction of the map's hash and probe. Drop clears it
	// when that entry goes.
	last   *entry
	lastID string
	seq    uint64 // the last tracked.seq
	// maintains counts Maintain calls (entry.held).
	maintains uint64
	// visits counts the traces Maintain has visited (tests).
	visits int
	// examined counts the traces and entries that untrack, Drop and
	// WriterDropped have looked at (tests).
	examined int
}

// Defer makes every trace under maintenance record its hold changes until
// the next Maintain applies them, once each (share.Spine.Defer, through
// the worker's share.Group: O(1) whatever the number of traces): a worker
// calls it when it wakes, before the commands and steps that move holds.
// A trace whose change is recorded becomes hot.
func (m *IndexManager) Defer() { m.group.Defer() }

// Apply applies the hold changes recorded since Defer now, and goes on
// deferring: a barrier calls it first, so what it reads reflects every
// command before it (Runtime.Stats, Sync). Only hot traces have any.
func (m *IndexManager) Apply() {
	for _, tr := range m.hot {
		tr.s.Flush()
	}
	m.group.Defer()
}

// tracked is an arrangement trace under maintenance.
type tracked struct {
	s    *share.Spine
	name string // "dataflow <id>: arrange oks", for errors
	// df and inc are the id and incarnation of the dataflow arranging
	// the trace (Context.arrangeHalf; empty and 0 for a trace tracked
	// by no dataflow's build), named by its overflow error.
	df       string
	inc      uint64
	reported bool   // its overflow error was returned by Overflows, or kept for DroppedOverflows
	seen     int    // overflowing merges the owner was activated for
	activate func() // activates the arranging dataflow
	seq      uint64 // its place in the order of tracking
	at       int    // its place in IndexManager.spines
	// hotAt is its place in IndexManager.hot while it is there (set when
	// listed and when Maintain keeps it); stale once it leaves, which
	// untrack tells by finding another trace there.
	hotAt int
	// entries are the local indexes reading the trace whose traces are
	// all tracked here: Maintain moves their physical holds when the
	// trace is hot.
	entries []*entry
	gone    bool // untracked: popped from remote, it is skipped
	// queued is set while the trace is in IndexManager.remote; next links
	// it there (written by the pusher before the push, read by the worker
	// after taking the stack).
	queued atomic.Bool
	next   *tracked
}

// heat lists tr as hot (its share.Spine's onHot).
func (m *IndexManager) heat(tr *tracked) {
	tr.hotAt = len(m.hot)
	m.hot = append(m.hot, tr)
}

// notify returns the notification of a reader's move on tr's trace
// (share.Spine.SetNotify): it pushes tr on remote, once while queued,
// then calls wake (the worker's, if any). It runs on the reader's
// goroutine under a point's lock, and only signals: the push is one CAS.
// The push precedes wake, so a worker that skips the wake because it has
// yet to reach Maintain (worker.holdsMoved) takes tr there.
func (m *IndexManager) notify(tr *tracked, wake func()) func() {
	return func() {
		if tr.queued.CompareAndSwap(false, true) {
			for {
				old := m.remote.Load()
				tr.next = old
				if m.remote.CompareAndSwap(old, tr) {
					break
				}
			}
		}
		if wake != nil {
			wake()
		}
	}
}

// takeRemote makes every trace pushed on remote hot. A trace is pushed
// again only once its queued flag is cleared, after its next link is read.
// An untracked one (its dataflow dropped, the trace still published) is
// hot no more: a reader's move on it is applied here, once, its wake
// taken (its holds apply as they come: untrack took it out of the
// deferral), so the next move wakes the worker again. Once its last
// handle is released (share.Spine.Dropped, whose end of the publication
// wakes it too) the wake is taken and nothing applied: the trace is
// about to be freed, and a physical hold moved on would merge its
// pending batches (trace.Handle.Release).
func (m *IndexManager) takeRemote() {
	if m.remote.Load() == nil {
		return
	}
	for tr := m.remote.Swap(nil); tr != nil; {
		next := tr.next
		tr.next = nil
		tr.queued.Store(false)
		if !tr.gone {
			tr.s.MarkHot()
		} else if tr.s.TakeWake() && !tr.s.Dropped() {
			tr.s.Refresh()
		}
		tr = next
	}
}

type entry struct {
	bundle *share.Bundle
	token  *share.Token // the publication, for a published local index
	owner  string       // the dataflow that exported it, or recorded the peer
	// maintained: the exporter is Maintained (a peer's always is);
	// reexport: a local bundle cloned from an imported index's (Export of
	// an Imported arrangement), whose traces go on when it ends; root,
	// for a query's re-export, is the Maintained index it re-exports
	// (through any query re-exports between), whose end ends it.
	maintained, reexport bool
	root                 string
	rootEnded            bool // root has ended (Drop): no new import
	// writerEnded: the dataflow writing the bundle's traces is dropped
	// (WriterDropped), so they stop: no new import.
	writerEnded bool
	// asOf is the exporting dataflow's as_of: a Maintained export is
	// published at it, so a query reads it from there on (importSince).
	asOf frontier.Frontier
	// writer is its key in IndexManager.byWriter: its bundle's Writer
	// when set, or when WriterDropped found it described since.
	writer string
	// loose: Maintain visits it every time (IndexManager.link).
	loose bool
	// held is the Maintain call (IndexManager.maintains) that last moved
	// its physical holds: an entry whose halves are both hot is moved
	// once a call.
	held uint64
	// lists are the traces whose entries list it (link), and at its place
	// in each list; looseAt is its place in IndexManager.loose while
	// loose. unlink takes it out of each by its place, filling it with
	// the last: a list's order is no one's.
	lists   [2]*tracked
	at      [2]int
	looseAt int
}

// importSince is the since a dataflow importing index id (bundle b) is
// checked against: b's, and for a query reading a local Maintained
// export, directly or through queries' re-exports of it, no earlier than
// that export's as_of. The pair's queries read a Maintained export
// through its publication, whose hold is at least the exporter's as_of
// (share.Incarnation); a Maintained re-export's bundle is a clone of its
// source's, whose since may be earlier. A Maintained importer reads the
// traces, on the Maintenance runtime as in Solo.
func (m *IndexManager) importSince(id string, b *share.Bundle, maintained bool) frontier.Frontier {
	since := b.CompactionFrontier()
	if maintained {
		return since
	}
	if root := m.RootOf(id); root != "" {
		if e := m.entries[root]; e != nil && !e.bundle.IsPeer() {
			since = since.Join(e.asOf)
		}
	}
	return since
}

// noteImports records the imports a query made of index id under the
// Maintained index it reads through id (RootOf), if that index is local,
// for ending them with it (Drop) — also when id, an alias, has gone by
// then; those finished since are forgotten. A Maintained importer's are
// not recorded: it reads the traces, on the Maintenance runtime as in
// Solo; nor those of a peer's publication, which ends by itself.
func (m *IndexManager) noteImports(id string, maintained bool, ims ...*share.Import) {
	root := m.RootOf(id)
	if root == "" || maintained {
		return
	}
	if e := m.entries[root]; e == nil || e.bundle.IsPeer() {
		return
	}
	if m.rootImports == nil {
		m.rootImports = map[string][]*share.Import{}
	}
	l := slices.DeleteFunc(m.rootImports[root], (*share.Import).Done)
	m.rootImports[root] = append(l, ims...)
}

// Reexport reports whether index id is a local re-export (a bundle cloned
// from an imported index's, by Export) and whether its exporter is
// Maintained. A peer bundle is not one, whatever its publisher exported.
func (m *IndexManager) Reexport(id string) (reexport, maintained bool) {
	e, ok := m.entries[id]
	return ok && e.reexport, ok && e.maintained
}

// rootEnded reports whether index id is a query's re-export whose root
// has ended, and the root.
func (m *IndexManager) rootEnded(id string) (string, bool) {
	e, ok := m.entries[id]
	if !ok {
		return "", false
	}
	return e.root, e.rootEnded
}

// WriterDropped records that dataflow wr is dropped: the
// traces it wrote stop, and no dataflow may import an index still reading
// them (a re-export of one of its exports, a peer's included) from then on
// (Context.ImportIndex, ErrSourceEnded).
//
// It looks at wr's entries (byWriter) and at those set before their
// bundle was described, each of which it files under its writer once
// described: not at every entry.
func (m *IndexManager) WriterDropped(wr string) {
	for e := range m.byWriter[""] {
		m.examined++
		if w := e.bundle.Writer; w != "" {
			m.file(e, w)
		}
	}
	for e := range m.byWriter[wr] {
		m.examined++
		e.writerEnded = true
	}
}

// file lists e under writer w in byWriter, out of the list it was in.
func (m *IndexManager) file(e *entry, w string) {
	removeEntry(m.byWriter, e.writer, e)
	e.writer = w
	m.byWriter = addEntry(m.byWriter, w, e)
}

// addEntry adds e to ix[k], making ix and ix[k] if need be, and returns ix.
func addEntry(ix map[string]map[*entry]struct{}, k string, e *entry) map[string]map[*entry]struct{} {
	if ix == nil {
		ix = map[string]map[*entry]struct{}{}
	}
	l := ix[k]
	if l == nil {
		l = map[*entry]struct{}{}
		ix[k] = l
	}
	l[e] = struct{}{}
	return ix
}

// removeEntry removes e from ix[k], and ix[k] once empty.
func removeEntry(ix map[string]map[*entry]struct{}, k string, e *entry) {
	if l := ix[k]; l != nil {
		delete(l, e)
		if len(l) == 0 {
			delete(ix, k)
		}
	}
}

// writerEnded reports whether the traces of index id stopped with their
// writer (WriterDropped).
func (m *IndexManager) writerEnded(id string) bool {
	e, ok := m.entries[id]
	return ok && e.writerEnded
}

// RootOf returns the Maintained index a query reads through index src:
// src's root if src is a query's re-export (an alias), src itself if a
// Maintained dataflow exports it, else "". Its end ends the query's read.
func (m *IndexManager) RootOf(src string) string {
	e, ok := m.entries[src]
	switch {
	case !ok:
		return ""
	case e.root != "":
		return e.root
	case e.maintained:
		return src
	}
	return ""
}

// NewIndexManager returns an empty trace manager.
func NewIndexManager() *IndexManager {
	return &IndexManager{entries: map[string]*entry{}}
}

// track adds an arrangement's trace to maintenance until untrack; activate
// wakes the arranging dataflow when a merge of the trace overflows, wake
// (if not nil) the worker when a reader of the trace moves a hold. The
// trace joins the worker's deferral and hot set, hot from the start. It
// returns the trace's record, for its builder to name its dataflow in.
func (m *IndexManager) track(s *share.Spine, name string, activate, wake func()) *tracked {
	m.seq++
	tr := &tracked{s: s, name: name, activate: activate, seq: m.seq, at: len(m.spines)}
	m.spines = append(m.spines, tr)
	if m.bySpine == nil {
		m.bySpine = map[*share.Spine]*tracked{}
	}
	m.bySpine[s] = tr
	s.SetNotify(m.notify(tr, wake))
	s.Join(&m.group, func() { m.heat(tr) })
	s.MarkHot()
	return tr
}

// untrack ends the maintenance of a trace track added, once its dataflow
// is dropped. It costs what the trace has: its place in spines and, if
// hot, in hot are found from the trace (tracked.at, tracked.hotAt) and
// filled by the last one, and its indexes' holds move once, now. A merge
// of the trace that overflowed before, or in the holds applied here, and
// that Overflows has not reported is kept for DroppedOverflows
// (IndexManager.dropped): the drop discards no error the dataflow met, as
// it discards no step's error. A merge of the trace after this (a
// re-export's handles keep it) reports nothing: its dataflow is gone.
func (m *IndexManager) untrack(s *share.Spine) {
	// The trace may outlive its dataflow (a re-export's handles): what this
	// wake deferred is applied now, a reader's move whose wake this worker
	// has not taken too (its notification was skipped before Maintain, which
	// will not visit the trace again), and later changes apply as they come:
	// it leaves the worker's deferral and hot set (after the Refresh, which
	// may list it).
	if s.TakeWake() {
		s.Refresh()
	}
	s.Flush()
	s.Join(nil, nil)
	tr := m.bySpine[s]
	delete(m.bySpine, s)
	if tr == nil {
		return
	}
	tr.gone = true // a move pushed on remote from now on is skipped
	m.examined++
	if !tr.reported && s.Err() != nil {
		// Its dataflow is dropped: nothing to activate for the
		// `numeric overflow` row, but the error is the runtime's to report.
		tr.reported = true
		m.dropped = append(m.dropped, tr)
	}
	last := len(m.spines) - 1
	m.spines[tr.at] = m.spines[last]
	m.spines[tr.at].at = tr.at
	m.spines[last] = nil
	m.spines = m.spines[:last]
	if i := tr.hotAt; i < len(m.hot) && m.hot[i] == tr {
		last := len(m.hot) - 1
		m.hot[i] = m.hot[last]
		m.hot[i].hotAt = i
		m.hot[last] = nil
		m.hot = m.hot[:last]
	}
	// Its indexes (re-exports that outlive it) are not loose: its upper
	// moves no more (its writer went with its dataflow), so their holds
	// move to it now, once, and not in every wake. The other half's
	// trace, if still tracked, moves them when hot, as before.
	for _, e := range tr.entries {
		m.examined++
		e.holdPhysical()
	}
	tr.entries = nil
}

// link records local entry e with the tracked traces its halves read, so
// that Maintain moves its physical holds when one of them is hot (its
// upper moves only with a batch inserted), and makes them hot for the
// first Maintain after e is set; an entry whose halves are not both
// tracked traces here is loose, visited every time. (A trace untracked
// later moves its entries' holds then, once: untrack.)
func (m *IndexManager) link(e *entry) {
	if e.bundle.IsPeer() {
		return
	}
	var trs [2]*tracked
	for i, r := range []trace.Reader{e.bundle.Oks, e.bundle.Errs} {
		h, ok := r.(*trace.Handle)
		if !ok {
			m.loosen(e)
			return
		}
		sp, ok := h.Storage().(*share.Spine)
		if !ok || m.bySpine[sp] == nil {
			m.loosen(e)
			return
		}
		trs[i] = m.bySpine[sp]
	}
	for k, tr := range trs {
		if k == 1 && tr == trs[0] {
			break // both halves in one trace: listed once
		}
		e.lists[k], e.at[k] = tr, len(tr.entries)
		tr.entries = append(tr.entries, e)
		tr.s.MarkHot()
	}
}

// loosen makes e loose (link).
func (m *IndexManager) loosen(e *entry) {
	e.loose = true
	e.looseAt = len(m.loose)
	m.loose = append(m.loose, e)
}

// unlink forgets e (Drop): it takes e out of loose and of the entries of
// the traces that list it by its places there, each filled with the last
// (whose place is updated), so that dropping N indexes of one trace costs
// O(N), not a pass over the trace's entries each. A trace untracked since
// lists no entry (untrack), which the check of the place tells.
func (m *IndexManager) unlink(e *entry) {
	if e.loose {
		m.examined++
		last := len(m.loose) - 1
		x := m.loose[last]
		m.loose[e.looseAt], x.looseAt = x, e.looseAt
		m.loose[last] = nil
		m.loose = m.loose[:last]
		e.loose = false
	}
	for k, tr := range e.lists {
		if tr == nil {
			continue
		}
		e.lists[k] = nil
		i := e.at[k]
		if i >= len(tr.entries) || tr.entries[i] != e {
			continue // untracked since: its list is gone
		}
		m.examined++
		last := len(tr.entries) - 1
		x := tr.entries[last]
		tr.entries[i] = x
		for k2, t2 := range x.lists {
			if t2 == tr {
				x.at[k2] = i
			}
		}
		tr.entries[last] = nil
		tr.entries = tr.entries[:last]
	}
}

// Overflows returns, once per trace, an error for each arrangement trace
// whose merges overflowed since the last call (their other updates are
// kept, batch.Merger.Result). The error names the dataflow and the
// arrangement and wraps batch.ErrOverflow; it does not depend on how the
// trace happened to be batched. It also activates the dataflow of every
// trace with an overflowing merge it has not been activated for, so that
// its arrangement emits the `numeric overflow` row (Context.Arrange). Call
// it on the worker's goroutine after Maintain. It looks at hot traces
// only: a merge, and so an overflow, happens only in one (at an insert,
// or in Maintain's fuel), which stays hot until this has seen it. An
// untracked trace is no longer hot: DroppedOverflows returns its error.
func (m *IndexManager) Overflows() []error {
	var reps []*tracked
	for _, tr := range m.hot {
		s := tr.s
		if n := s.Overflows(); n != tr.seen {
			tr.seen = n
			tr.activate()
		}
		if err := s.Err(); err != nil && !tr.reported {
			tr.reported = true
			reps = append(reps, tr)
		}
	}
	return overflowErrors(reps)
}

// DroppedOverflows returns, once, an error for each arrangement trace
// untracked since the last call (its dataflow dropped) whose merge had
// overflowed and Overflows had not reported it: a merge in the steps of a
// barrier, or in a Maintain run before the drop in the same wake. The
// errors are those Overflows would have returned. The worker calls it
// right after it drops a dataflow, so that the error is recorded before
// the drop counts as applied: no error of an incarnation comes after.
func (m *IndexManager) DroppedOverflows() []error {
	reps := m.dropped
	m.dropped = nil
	return overflowErrors(reps)
}

// overflowErrors returns the overflow error of each trace of reps, in the
// order the traces were tracked, whatever made them hot.
func overflowErrors(reps []*tracked) []error {
	if len(reps) == 0 {
		return nil
	}
	slices.SortFunc(reps, func(a, b *tracked) int { return cmp.Compare(a.seq, b.seq) })
	errs := make([]error, len(reps))
	for i, tr := range reps {
		errs[i] = &MergeOverflowError{Trace: tr.name, Dataflow: tr.df, Incarnation: tr.inc}
	}
	return errs
}

// MergeOverflowError is the error IndexManager.Overflows reports for an
// arrangement trace whose merge overflowed. It is no failure of the
// dataflow: the merged batch keeps every other update, and the
// arrangement adds `numeric overflow` to its error collection
// (docs/semantics.md §1.1). It wraps batch.ErrOverflow; its own type
// tells it apart from an operator that failed on an overflow while
// stepping, which the runtime also records under no command.
type MergeOverflowError struct {
	Trace string // the dataflow and arrangement, as IndexManager names them
	// Dataflow and Incarnation are the id and the incarnation
	// (Dataflow.Incarnation) of the dataflow whose arrangement it is:
	// every worker's merge of that arrangement finds the same error, and
	// the runtime reports it once per incarnation.
	Dataflow    string
	Incarnation uint64
}

func (e *MergeOverflowError) Error() string {
	return fmt.Sprintf("%s: %v", e.Trace, batch.ErrOverflow)
}

// Unwrap returns batch.ErrOverflow.
func (e *MergeOverflowError) Unwrap() error { return batch.ErrOverflow }

// Tracked returns the number of arrangement traces under maintenance.
func (m *IndexManager) Tracked() int { return len(m.spines) }

// TraceStats sums the counters of every arrangement trace under maintenance
// (batches, updates, bytes, merges and merge work: what §8 invariant 33 asks
// a benchmark run to record; and recompactions). Call it on the worker's goroutine.
func (m *IndexManager) TraceStats() spine.Stats {
	var sum spine.Stats
	for _, tr := range m.spines {
		st := tr.s.Stats()
		sum.Batches += st.Batches
		sum.Updates += st.Updates
		sum.Bytes += st.Bytes
		sum.Merges += st.Merges
		sum.MergeWork += st.MergeWork
		sum.Pending += st.Pending
		sum.Merging += st.Merging
		sum.Recompactions += st.Recompactions
	}
	return sum
}

// Get returns the bundle of index id.
func (m *IndexManager) Get(id string) (*share.Bundle, bool) {
	e, ok := m.entries[id]
	if !ok {
		return nil, false
	}
	return e.bundle, true
}

// IDs returns the ids of every index, sorted.
func (m *IndexManager) IDs() []string { return slices.Sorted(maps.Keys(m.entries)) }

// Len returns the number of indexes.
func (m *IndexManager) Len() int { return len(m.entries) }

// SetPeer records a peer bundle for id (the other runtime maintains it).
func (m *IndexManager) SetPeer(id, owner string, b *share.Bundle) error {
	if _, ok := m.entries[id]; ok {
		return fmt.Errorf("dataflow: index %q already exists", id)
	}
	return m.set(id, &entry{bundle: b, owner: owner, maintained: true})
}

func (m *IndexManager) set(id string, e *entry) error {
	if _, ok := m.entries[id]; ok {
		return fmt.Errorf("dataflow: index %q already exists", id)
	}
	m.entries[id] = e
	m.file(e, e.bundle.Writer)
	if e.root != "" {
		m.byRoot = addEntry(m.byRoot, e.root, e)
	}
	if m.owned == nil {
		m.owned = map[string][]string{}
	}
	m.owned[e.owner] = append(m.owned[e.owner], id)
	m.link(e)
	return nil
}

// AllowCompaction sets both halves' logical compaction of id to f (§4.2):
// for a peer bundle this moves the hold on the publication. {} drops the
// index.
func (m *IndexManager) AllowCompaction(id string, f frontier.Frontier) error {
	e := m.last
	if e == nil || id != m.lastID {
		var ok bool
		if e, ok = m.entries[id]; !ok {
			return fmt.Errorf("dataflow: allow compaction of unknown index %q", id)
		}
		m.last, m.lastID = e, id
	}
	if f.IsEmpty() {
		m.Drop(id)
		return nil
	}
	e.bundle.AllowCompaction(f)
	return nil
}

// Drop releases index id: its bundle's holds and, for a published index, the
// publication. It looks at what the index has (its owner's ids, its traces'
// indexes, the re-exports of it: byRoot), not at every index or trace.
func (m *IndexManager) Drop(id string) {
	e, ok := m.entries[id]
	if !ok {
		return
	}
	delete(m.entries, id)
	if m.last == e {
		m.last, m.lastID = nil, ""
	}
	m.examined++
	removeEntry(m.byWriter, e.writer, e)
	if e.root != "" {
		removeEntry(m.byRoot, e.root, e)
	}
	if ids := slices.DeleteFunc(m.owned[e.owner], func(x string) bool { return x == id }); len(ids) > 0 {
		m.owned[e.owner] = ids
	} else {
		delete(m.owned, e.owner)
	}
	m.unlink(e)
	// A Maintained index's publication ends with it, and with it what the
	// other runtime's queries import of it or of their re-exports of it,
	// though its traces may go on (its writer alive, or a re-export's
	// source). The imports queries made here of it and of their
	// re-exports of it end too, so that Solo answers as the pair does.
	// Maintained importers read the traces, as on the Maintenance
	// runtime, and go on. (A peer's imports end with its publication.)
	for x := range m.byRoot[id] {
		m.examined++
		x.rootEnded = true // on every role alike: no new import
	}
	for _, im := range m.rootImports[id] {
		im.End()
	}
	delete(m.rootImports, id)
	e.bundle.Release()
	if e.token != nil {
		e.token.Release()
	}
}

// DropOwned drops every index owned by dataflow owner, in the order of
// their ids. It looks at the owner's ids only (IndexManager.owned): a
// dataflow that exports nothing (most queries) owns none, and its drop
// allocates nothing here.
func (m *IndexManager) DropOwned(owner string) {
	ids := m.owned[owner]
	delete(m.owned, owner) // each Drop finds its id gone from the list
	slices.Sort(ids)
	for _, id := range ids {
		m.Drop(id)
	}
}

// Maintain lets every local index merge what it has sealed (physical
// compaction of its traces to their read upper, §2.3; peer bundles are
// skipped: the publisher maintains them), then, for the trace of every
// arrangement on this worker, exported or not, applies the holds of remote
// readers that moved, with every hold change since Defer, at once, and
// gives merges in progress up to effort fuel. Arrivals
// drive the rest: no virtual records are introduced, so an idle worker does
// not rewrite a large trace. It reports whether merges remain.
//
// It visits the hot traces only (and the loose entries, set with
// traces that are not this worker's: IndexManager.loose): a trace whose
// readers moved (taken from remote), that got a batch or a hold change
// or merges. Another has nothing to do: its upper has not moved, nothing
// is recorded for it and no wake is set, so its visit would change
// nothing. Each visited trace leaves the hot set unless it still merges,
// has a change recorded (made during this call) or an overflow
// Overflows has not seen.
//
// Idle fuel matters: finishing merges between arrivals costs less per update
// than leaving them to be forced by later arrivals (BenchmarkSteady), so
// every arrangement gets it, not only exported indexes.
func (m *IndexManager) Maintain(effort int64) bool {
	m.group.Defer() // this call's own changes too, when no wake deferred them
	m.maintains++
	m.takeRemote()
	for _, e := range m.loose {
		e.holdPhysical() // listed by no trace (link)
	}
	// Indexed: a hold change made here lists its trace at the end.
	for i := 0; i < len(m.hot); i++ {
		for _, e := range m.hot[i].entries {
			if e.held != m.maintains {
				e.held = m.maintains // once, whether one half or both are hot
				e.holdPhysical()
			}
		}
	}
	more := false
	// Indexed too: a trace listed while this loop runs (a hold change
	// one trace's flush makes in another, still deferring) is flushed in
	// this call, as every trace was when every trace was visited.
	for i := 0; i < len(m.hot); i++ {
		s := m.hot[i].s
		m.visits++
		if s.TakeWake() {
			s.Refresh()
		}
		s.Flush() // what moved since Defer (this call's or the wake's), applied once
		if effort > 0 && s.Work(effort) {
			more = true
		}
	}
	m.group.Done()
	j := 0
	for _, tr := range m.hot {
		if !tr.s.Idle() || tr.s.Overflows() != tr.seen || !tr.reported && tr.s.Err() != nil {
			m.hot[j] = tr
			tr.hotAt = j
			j++
		} else {
			tr.s.ClearHot()
		}
	}
	clear(m.hot[j:])
	m.hot = m.hot[:j]
	return more
}

// holdPhysical moves e's physical holds to its traces' read upper (a local
// entry; a peer's is its publisher's).
func (e *entry) holdPhysical() {
	if e.bundle.IsPeer() {
		return
	}
	e.bundle.Oks.SetPhysicalCompaction(e.bundle.Oks.ReadUpper())
	e.bundle.Errs.SetPhysicalCompaction(e.bundle.Errs.ReadUpper())
}

// Merging reports whether a merge is in progress in any trace under
// maintenance: whether Maintain has merge work to give fuel to. A trace
// that merges is hot until its merge is done: only hot ones are looked at.
func (m *IndexManager) Merging() bool {
	for _, tr := range m.hot {
		if tr.s.Merging() {
			return true
		}
	}
	return false
}

// HoldGap returns the largest gap, in time units, between the compaction
// requested of a trace under maintenance (by its local holds) and the
// compaction applied to it (held back by readers of its publication), over
// every trace: the hold-gap of a benchmark. A dropped request ({}) counts
// against the trace's upper. Call it on the worker's goroutine.
func (m *IndexManager) HoldGap() uint64 {
	var gap uint64
	for _, tr := range m.spines {
		s := tr.s
		at, ok := s.LogicalCompaction().Time()
		if !ok {
			continue
		}
		rt, ok := s.RequestedCompaction().Time()
		if !ok {
			if rt, ok = s.Upper().Time(); !ok {
				continue
			}
		}
		if rt > at && rt-at > gap {
			gap = rt - at
		}
	}
	return gap
}
