package share

import (
	"sync/atomic"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
	"github.com/tracebench/tracebench/internal/invariants"
	"github.com/tracebench/tracebench/internal/isnil"
)

// Bundle is a trace bundle (TraceBundle, §4.2): the oks and errs traces of an
// index, each a local handle or a shared reader behind trace.Reader, with a
// drop token that keeps what the bundle depends on alive (for a peer bundle,
// its registry slot). A Bundle is used by one goroutine at a time, as its
// readers are.
type Bundle struct {
	Oks, Errs trace.Reader
	// Key and Columns describe the collection the index arranges: its key
	// columns and its number of columns (oks are keyed by Key, valued by
	// the other columns in order; errs by error code). A peer bundle has the
	// description its publisher gave (Registry.PublishBundle); one taken
	// before the publication has none until Describe finds it published.
	Key     []int
	Columns int
	// Writer is the id of the dataflow whose arrangement writes the
	// traces: a clone (a re-export) and a peer bundle carry their source's
	// (Registry.PublishBundle). When it is dropped the traces stop.
	Writer string
	// use detects a second goroutine in Describe, Clone or Release while
	// one is in another of them: the methods that read or write the
	// bundle's own state (invariant builds; no room and no code without
	// the tag).
	use invariants.Exclusive
	// slot is the registry slot of a peer bundle taken before its
	// publication, until Describe finds it published; nil otherwise.
	slot     *Slot
	drop     *dropToken
	released bool
}

// Describe reports whether b has its collection's description (Key,
// Columns, Writer). A local bundle has its maker's. A peer bundle has the
// one its publisher gave (Registry.PublishBundle) — but one taken before
// the incarnation was published (Registry.PeerBundleOf ahead of
// PublishBundle) has none when taken: its Key is nil, its Columns 0 and
// its Writer empty. Describe fills them in from the publication once it
// is published, and reports false until then (docs/semantics.md §4.8).
// The runtimes collect published bundles (AwaitPeerBundle), which have
// their description from the start; a Go caller that takes one early
// calls Describe before reading the description.
func (b *Bundle) Describe() bool {
	if invariants.Enabled {
		b.use.Enter("share: Bundle.Describe")
		defer b.use.Exit()
	}
	s := b.slot
	if s == nil {
		return true
	}
	s.g.mu.Lock()
	published, key, columns, writer := s.published, s.key, s.columns, s.writer
	s.g.mu.Unlock()
	if !published {
		return false
	}
	b.Key, b.Columns, b.Writer, b.slot = key, columns, writer, nil
	return true
}

// dropToken runs its function when its last holder releases it.
type dropToken struct {
	refs atomic.Int64
	fn   func()
}

func newBundle(oks, errs trace.Reader, drop func()) *Bundle {
	b := &Bundle{Oks: oks, Errs: errs}
	if drop != nil {
		b.drop = &dropToken{fn: drop}
		b.drop.refs.Store(1)
	}
	return b
}

// NewBundle returns a bundle of two readers (local handles, shared readers or
// padded ones) with an optional drop function run when the bundle and all
// its clones (IntoPadded's included) are released. Both halves are
// required: a nil one is a programmer error, and NewBundle panics at once,
// naming it, rather than return a bundle whose every method would fail. A
// typed nil half (a nil *trace.Handle, *Reader or *Padded behind
// trace.Reader) is nil alike.
func NewBundle(oks, errs trace.Reader, drop func()) *Bundle {
	noOks, noErrs := isNil(oks), isNil(errs)
	switch {
	case noOks && noErrs:
		panic("share: NewBundle with nil oks and errs halves")
	case noOks:
		panic("share: NewBundle with a nil oks half")
	case noErrs:
		panic("share: NewBundle with a nil errs half")
	}
	return newBundle(oks, errs, drop)
}

// IsPeer reports whether both halves are shared readers (possibly padded): a
// peer bundle, which holds nothing physically and which maintenance skips.
func (b *Bundle) IsPeer() bool {
	return isShared(b.Oks) && isShared(b.Errs)
}

// isNil reports whether r is nil or holds a nil pointer (or map, slice,
// func, chan): a typed nil behind trace.Reader is not == nil, and its first
// method call would panic with a nil dereference. The readers of this
// package and core/trace are told by a type switch; others by reflection
// (internal/isnil), paid when a bundle or an import is made, never per
// update.
func isNil(r trace.Reader) bool {
	switch r := r.(type) {
	case nil:
		return true
	case *trace.Handle:
		return r == nil
	case *Reader:
		return r == nil
	case *Padded:
		return r == nil
	}
	return isnil.Value(r)
}

func isShared(r trace.Reader) bool {
	switch r := r.(type) {
	case *Reader:
		return true
	case *Padded:
		return isShared(r.inner)
	}
	return false
}

// CompactionFrontier is the join of both halves' logical holds (§4.2).
func (b *Bundle) CompactionFrontier() frontier.Frontier {
	return b.Oks.LogicalCompaction().Join(b.Errs.LogicalCompaction())
}

// AllowCompaction sets both halves' logical compaction to f; for a peer
// bundle this moves this runtime's hold on the publication, and {} removes it.
func (b *Bundle) AllowCompaction(f frontier.Frontier) {
	b.Oks.SetLogicalCompaction(f)
	b.Errs.SetLogicalCompaction(f)
}

// Clone clones both halves (new holds) and takes a share of the drop
// token. The clone of a released bundle is released too: its halves are
// released clones and it takes no share of the token, whose share b gave
// up (its function may have run).
func (b *Bundle) Clone() *Bundle {
	if invariants.Enabled {
		b.use.Enter("share: Bundle.Clone")
		defer b.use.Exit()
	}
	c := &Bundle{Oks: b.Oks.CloneReader(), Errs: b.Errs.CloneReader(), Key: b.Key, Columns: b.Columns, Writer: b.Writer, slot: b.slot, released: b.released}
	if b.drop != nil && !b.released {
		c.drop = b.drop
		c.drop.refs.Add(1)
	}
	return c
}

// Release releases both halves and the bundle's share of the drop token.
func (b *Bundle) Release() {
	if b.release() && b.drop != nil && b.drop.refs.Add(-1) == 0 {
		b.drop.fn()
	}
}

// release marks b released and releases both halves, reporting whether b
// was live. The drop function, the caller's code, runs after it, outside
// the bundle's use check.
func (b *Bundle) release() bool {
	if invariants.Enabled {
		b.use.Enter("share: Bundle.Release")
		defer b.use.Exit()
	}
	if b.released {
		return false
	}
	b.released = true
	b.Oks.Release()
	b.Errs.Release()
	return true
}

// IntoPadded returns a padded clone of the bundle (§4.5): like Clone's, its
// halves are new holds at b's and it takes a share of the drop token of its
// own, and each half is padded — a half whose logical compaction is a time
// beyond {0} then reports {0}; one held at {} is not padded and reports {}. b stays the caller's to release: releasing either
// bundle leaves the other's holds, and the drop function runs once both (and
// every other clone) are released. The reading runtime pads its peer bundles
// as the publisher pads its own, because the publisher's padding never
// reaches the publication.
func (b *Bundle) IntoPadded() *Bundle {
	c := b.Clone()
	c.Oks, c.Errs = pad(c.Oks), pad(c.Errs)
	return c
}

// Padded is a reader presenting an empty collection for times in
// [padded since, inner since) and the inner trace's contents from the inner
// since on (PaddedTrace, §4.5). It lets a new dataflow at as_of {0} import a
// trace whose since is later. It is a different collection: it may seed new
// ones, never "uncompact" an old one. A Padded is used by one goroutine at a
// time, as the reader it wraps is.
type Padded struct {
	inner trace.Reader
	// use detects a second goroutine in a method that reads or writes the
	// padding (padded, on) while one is in another (invariant builds; no
	// room and no code without the tag). The methods that pass through
	// leave the check to the inner reader.
	use    invariants.Exclusive
	padded frontier.Frontier
	on     bool
}

var _ trace.Reader = (*Padded)(nil)

// pad wraps r; it is padded at {0} if r's logical compaction is a time
// beyond {0}. A reader held at {} is not padded (docs/semantics.md §4.5):
// its holder let every time go, so there is no inner since for the padding
// to end at, and padding it would present a trace that goes on as an empty
// collection complete forever. It reports {}, which refuses every import.
func pad(r trace.Reader) *Padded {
	if p, ok := r.(*Padded); ok {
		return p
	}
	since := r.LogicalCompaction()
	return &Padded{inner: r, padded: frontier.Min(), on: !since.IsEmpty() && frontier.Min().Less(since)}
}

// Inner returns the padded reader.
func (p *Padded) Inner() trace.Reader { return p.inner }

// IsPadded reports whether the padding is still in place.
func (p *Padded) IsPadded() bool {
	if invariants.Enabled {
		p.use.Enter("share: Padded.IsPadded")
		defer p.use.Exit()
	}
	return p.on
}

// LogicalCompaction reports the padded since while padded.
func (p *Padded) LogicalCompaction() frontier.Frontier {
	if invariants.Enabled {
		p.use.Enter("share: Padded.LogicalCompaction")
		defer p.use.Exit()
	}
	if p.on {
		return p.padded
	}
	return p.inner.LogicalCompaction()
}

// SetLogicalCompaction moves only the padding while f is before the inner
// since; at or after it, the padding goes and f is forwarded. On a released
// reader it is a no-op, as on the inner one: neither the padding nor the
// since it reports moves.
func (p *Padded) SetLogicalCompaction(f frontier.Frontier) {
	if invariants.Enabled {
		p.use.Enter("share: Padded.SetLogicalCompaction")
		defer p.use.Exit()
	}
	if released(p.inner) {
		return
	}
	if p.on && f.Less(p.inner.LogicalCompaction()) {
		p.padded = p.padded.Join(f)
		return
	}
	p.on = false
	p.inner.SetLogicalCompaction(f)
}

// released reports whether r, a shared reader or a local handle, is
// released.
func released(r trace.Reader) bool {
	rel, ok := r.(interface{ Released() bool })
	return ok && rel.Released()
}

// PhysicalCompaction passes through.
func (p *Padded) PhysicalCompaction() frontier.Frontier { return p.inner.PhysicalCompaction() }

// SetPhysicalCompaction passes through.
func (p *Padded) SetPhysicalCompaction(f frontier.Frontier) { p.inner.SetPhysicalCompaction(f) }

// BatchesThrough passes through.
func (p *Padded) BatchesThrough(f frontier.Frontier) ([]*batch.Batch, error) {
	return p.inner.BatchesThrough(f)
}

// MapBatches passes through.
func (p *Padded) MapBatches(f func(*batch.Batch)) { p.inner.MapBatches(f) }

// ReadUpper passes through.
func (p *Padded) ReadUpper() frontier.Frontier { return p.inner.ReadUpper() }

// CloneReader clones the inner reader with the same padding.
func (p *Padded) CloneReader() trace.Reader {
	if invariants.Enabled {
		p.use.Enter("share: Padded.CloneReader")
		defer p.use.Exit()
	}
	return &Padded{inner: p.inner.CloneReader(), padded: p.padded, on: p.on}
}

// Release releases the inner reader.
func (p *Padded) Release() { p.inner.Release() }
