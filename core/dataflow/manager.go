package dataflow

import (
	"fmt"
	"maps"
	"slices"

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
	// list has the entries of entries, in the order they were set: what
	// Maintain walks every wake (a slice, because starting a map iteration
	// costs more than a wake's whole walk).
	list []*entry
	// rootImports are the imports queries made of each local Maintained
	// index, directly or through aliases (noteImports).
	rootImports map[string][]*share.Import
	// spines are the traces of every arrangement built on this worker,
	// exported or not, in the order tracked: maintenance gives each of
	// them idle fuel.
	spines []*tracked
}

// Defer makes every trace under maintenance record its hold changes until
// the next Maintain applies them, once each (share.Spine.Defer): a worker
// calls it when it wakes, before the commands and steps that move holds.
func (m *IndexManager) Defer() {
	for _, tr := range m.spines {
		tr.s.Defer()
	}
}

// Apply applies the hold changes recorded since Defer now, and goes on
// deferring: a barrier calls it first, so what it reads reflects every
// command before it (Runtime.Stats, Sync).
func (m *IndexManager) Apply() {
	for _, tr := range m.spines {
		tr.s.Flush()
		tr.s.Defer()
	}
}

// tracked is an arrangement trace under maintenance.
type tracked struct {
	s        *share.Spine
	name     string // "dataflow <id>: arrange oks", for errors
	reported bool   // its overflow error was returned by Overflows
	seen     int    // overflowing merges the owner was activated for
	activate func() // activates the arranging dataflow
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
func (m *IndexManager) WriterDropped(wr string) {
	for _, e := range m.list {
		if e.bundle.Writer == wr {
			e.writerEnded = true
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
// wakes the arranging dataflow when a merge of the trace overflows.
func (m *IndexManager) track(s *share.Spine, name string, activate func()) {
	m.spines = append(m.spines, &tracked{s: s, name: name, activate: activate})
}
func (m *IndexManager) untrack(s *share.Spine) {
	m.spines = slices.DeleteFunc(m.spines, func(tr *tracked) bool { return tr.s == s })
	// The trace may outlive its dataflow (a re-export's handles): what this
	// wake deferred is applied now, a reader's move whose wake this worker
	// has not taken too (its notification was skipped before Maintain, which
	// will not visit the trace again), and later changes apply as they come.
	if s.TakeWake() {
		s.Refresh()
	}
	s.Flush()
}

// Overflows returns, once per trace, an error for each arrangement trace
// whose merges overflowed since the last call (their other updates are
// kept, batch.Merger.Result). The error names the dataflow and the
// arrangement and wraps batch.ErrOverflow; it does not depend on how the
// trace happened to be batched. It also activates the dataflow of every
// trace with an overflowing merge it has not been activated for, so that
// its arrangement emits the `numeric overflow` row (Context.Arrange). Call
// it on the worker's goroutine after Maintain.
func (m *IndexManager) Overflows() []error {
	var errs []error
	for _, tr := range m.spines {
		s := tr.s
		if n := s.Overflows(); n != tr.seen {
			tr.seen = n
			tr.activate()
		}
		if err := s.Err(); err != nil && !tr.reported {
			tr.reported = true
			errs = append(errs, &MergeOverflowError{Trace: tr.name})
		}
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
// a benchmark run to record). Call it on the worker's goroutine.
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
	e := &entry{bundle: b, owner: owner, maintained: true}
	m.entries[id] = e
	m.list = append(m.list, e)
	return nil
}

func (m *IndexManager) set(id string, e *entry) error {
	if _, ok := m.entries[id]; ok {
		return fmt.Errorf("dataflow: index %q already exists", id)
	}
	m.entries[id] = e
	m.list = append(m.list, e)
	return nil
}

// AllowCompaction sets both halves' logical compaction of id to f (§4.2):
// for a peer bundle this moves the hold on the publication. {} drops the
// index.
func (m *IndexManager) AllowCompaction(id string, f frontier.Frontier) error {
	e, ok := m.entries[id]
	if !ok {
		return fmt.Errorf("dataflow: allow compaction of unknown index %q", id)
	}
	if f.IsEmpty() {
		m.Drop(id)
		return nil
	}
	e.bundle.AllowCompaction(f)
	return nil
}

// Drop releases index id: its bundle's holds and, for a published index, the
// publication.
func (m *IndexManager) Drop(id string) {
	e, ok := m.entries[id]
	if !ok {
		return
	}
	delete(m.entries, id)
	m.list = slices.DeleteFunc(m.list, func(x *entry) bool { return x == e })
	// A Maintained index's publication ends with it, and with it what the
	// other runtime's queries import of it or of their re-exports of it,
	// though its traces may go on (its writer alive, or a re-export's
	// source). The imports queries made here of it and of their
	// re-exports of it end too, so that Solo answers as the pair does.
	// Maintained importers read the traces, as on the Maintenance
	// runtime, and go on. (A peer's imports end with its publication.)
	for _, x := range m.list {
		if x.root == id {
			x.rootEnded = true // on every role alike: no new import
		}
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

// DropOwned drops every index owned by dataflow owner.
func (m *IndexManager) DropOwned(owner string) {
	// Only the owner's ids are collected: a dataflow that exports
	// nothing (most queries) owns none, and its drop allocates nothing
	// here.
	var ids []string
	for id, e := range m.entries {
		if e.owner == owner {
			ids = append(ids, id)
		}
	}
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
// Idle fuel matters: finishing merges between arrivals costs less per update
// than leaving them to be forced by later arrivals (BenchmarkSteady), so
// every arrangement gets it, not only exported indexes.
func (m *IndexManager) Maintain(effort int64) bool {
	m.Defer() // this call's own changes too, when no wake deferred them
	for _, e := range m.list {
		if e.bundle.IsPeer() {
			continue
		}
		for _, r := range []trace.Reader{e.bundle.Oks, e.bundle.Errs} {
			r.SetPhysicalCompaction(r.ReadUpper())
		}
	}
	more := false
	for _, tr := range m.spines {
		s := tr.s
		if s.TakeWake() {
			s.Refresh()
		}
		s.Flush() // what moved since Defer (this call's or the wake's), applied once
		if effort > 0 && s.Work(effort) {
			more = true
		}
	}
	return more
}

// Merging reports whether a merge is in progress in any trace under
// maintenance: whether Maintain has merge work to give fuel to.
func (m *IndexManager) Merging() bool {
	for _, tr := range m.spines {
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
