package share

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/mutants"
)

// ErrAbandoned is returned by AwaitPeerBundle for an incarnation whose
// publisher settled it as never published (its dataflow failed to build).
var ErrAbandoned = errors.New("share: index incarnation was not published")

// ErrStopped is returned by AwaitPeerBundle when its stop channel closes
// before the publisher settled the incarnation.
var ErrStopped = errors.New("share: stopped waiting for an index incarnation")

// ErrCollected is returned by AwaitPeerBundle for an incarnation whose
// verdict the reading runtime has collected already: it is collected once.
var ErrCollected = errors.New("share: index incarnation's verdict already collected")

// ErrSideBound is returned by Bind for a side of a registry that a live
// runtime holds already.
var ErrSideBound = errors.New("share: registry side already bound")

// Side is one of a registry's two sides: the runtime that publishes
// through it (Maintenance) or the one that reads (Interactive).
type Side uint8

const (
	PublisherSide Side = iota
	ReaderSide
)

func (s Side) String() string {
	switch s {
	case PublisherSide:
		return "publishing"
	case ReaderSide:
		return "reading"
	}
	return fmt.Sprintf("side %d", int(s))
}

// other returns the registry's other side.
func (s Side) other() Side { return 1 - s }

// Incarnation names one incarnation of a shared index (P6): its id, the
// as_of of the dataflow that exports it, and Seq, the position of that
// dataflow's create in the command stream both runtimes apply. Dropping an
// index and creating it again under the same id, even at the same as_of,
// makes a new incarnation: its slot, points and peer hold are its own, and
// no command of an older incarnation reaches them.
type Incarnation struct {
	ID   string
	AsOf frontier.Frontier
	Seq  uint64
}

// peerHold is where a peer hold of inc holds: at its as_of (P5).
func (inc Incarnation) peerHold() frontier.Frontier {
	if mutants.Enabled && mutants.On(mutants.PeerBundleAtZero) {
		return frontier.Min()
	}
	return inc.AsOf
}

func (inc Incarnation) String() string {
	return fmt.Sprintf("%q at %v (#%d)", inc.ID, inc.AsOf, inc.Seq)
}

// Registry is the sharing registry of one worker pair: worker i of the
// publishing runtime and worker i of the reading runtime (§4.8). Safe for
// concurrent use; its critical sections are a few map operations. The
// zero Registry is an empty one, as NewRegistry's: a new(Registry) in a
// runtime's Options.Registries panicked assigning to a nil map under the
// registry's lock at the first publication, and the pair, its Shutdown
// included, then waited for that lock forever.
type Registry struct {
	mu    sync.Mutex
	slots map[Incarnation]*Slot // every live slot
	// verdicts are the publisher's settlements of incarnations (Settle,
	// AwaitPeerBundle): those the reading runtime waits for or has not
	// collected yet, and, holding nothing, those of the last create it
	// collected (collectedSeq), so that a second Settle or AwaitPeerBundle
	// of one is told from a first. A collected verdict of an earlier
	// create is forgotten (kept, every create of a pair's life would
	// leave one per export): the reading runtime collects in command
	// order, so an incarnation of a create before collectedSeq that has no
	// verdict kept was collected already, and is told from a first by its
	// Seq alone.
	verdicts map[Incarnation]*verdict
	// collectedSeq is the greatest Seq of an incarnation the reading
	// runtime collected (0: none yet, or the reader left), and kept the
	// incarnations whose collected verdicts verdicts still holds, for
	// forgetting them once one of a later create is collected.
	collectedSeq uint64
	kept         []Incarnation
	// bound says which sides a live runtime holds (Bind); gone which
	// sides a runtime left (Leave) and no other has bound since: a
	// publisher gone settles nothing more, a reader gone takes no peer
	// hold, so none is reserved or kept for it.
	bound, gone [2]bool
	pause       *pauses // tests only: the pause after Leave's critical section
}

// verdict is a publisher's settlement of one incarnation: done is closed
// once settled; slot is the published slot (holding one reference for the
// peer that collects it), nil if the incarnation was abandoned or the
// verdict collected; collected is set when AwaitPeerBundle takes it.
type verdict struct {
	done      chan struct{}
	slot      *Slot
	collected bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{slots: map[Incarnation]*Slot{}, verdicts: map[Incarnation]*verdict{}}
}

// Slot is one incarnation of a shared index: its as_of and the oks and errs
// publication points.
type Slot struct {
	g         *Registry
	inc       Incarnation
	oks, errs *Point

	key              []int        // the collection's key columns (PublishBundle)
	columns          int          // and its number of columns
	writer           string       // and the dataflow writing its traces
	refs             int          // token + peer bundles
	reserved         [][2]*Reader // peer holds minted at publication, oldest first
	unpublishedPeers int          // peers that minted their own hold before publication
	published        bool
}

// ID returns the slot's index id.
func (s *Slot) ID() string { return s.inc.ID }

// AsOf returns the incarnation's as_of.
func (s *Slot) AsOf() frontier.Frontier { return s.inc.AsOf }

// Incarnation returns the slot's incarnation.
func (s *Slot) Incarnation() Incarnation { return s.inc }

// Oks returns the oks publication point.
func (s *Slot) Oks() *Point { return s.oks }

// Errs returns the errs publication point.
func (s *Slot) Errs() *Point { return s.errs }

// getOrCreateLocked returns the live slot of inc, or a fresh one (P6): a
// slot of another incarnation of the same id is never returned, replaced or
// evicted. REQUIRES: g.mu held.
func (g *Registry) getOrCreateLocked(inc Incarnation) *Slot {
	if s, ok := g.slots[inc]; ok {
		return s
	}
	s := &Slot{g: g, inc: inc, oks: NewPoint(), errs: NewPoint()}
	if g.slots == nil {
		g.slots = map[Incarnation]*Slot{} // the zero Registry
	}
	g.slots[inc] = s
	return s
}

// Bind binds a runtime to side of the registry, which one live runtime
// at a time may hold: ErrSideBound if another holds it, or if the runtime
// of this side that left belongs to the pair whose other runtime still
// holds the other side (a new runtime would pair with the old one's
// commands: its publications or verdicts would be the old stream's). A
// runtime binds when it starts and leaves (Leave) when it shuts down;
// once both sides have left, the registry is empty and serves the next
// pair.
func (g *Registry) Bind(side Side) error {
	if side != PublisherSide && side != ReaderSide {
		return fmt.Errorf("share: Bind of %v", side)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.bound[side]:
		return fmt.Errorf("%w: a live %s runtime holds it", ErrSideBound, side)
	case g.gone[side] && g.bound[side.other()]:
		return fmt.Errorf("%w: its %s runtime left and the %s runtime of that pair is still live", ErrSideBound, side, side.other())
	}
	if !g.bound[side.other()] {
		g.gone = [2]bool{} // no runtime of the last pair is left
	}
	g.bound[side] = true
	return nil
}

// Unbind undoes a Bind of side by a runtime that never ran (its start
// failed after it bound), leaving the registry as before that Bind.
func (g *Registry) Unbind(side Side) {
	if side != PublisherSide && side != ReaderSide {
		return
	}
	g.mu.Lock()
	g.bound[side] = false
	g.mu.Unlock()
}

// Leave unbinds the runtime of side once it has dropped everything it held
// (R2 of core/runtime: shutdown leaves no hold and no slot). A reader
// leaving gives up what was kept for it: the verdicts it did not collect
// (the slot reference each keeps) and the peer holds reserved at
// publication that it did not take; until another reader binds, a
// publication reserves none and a verdict keeps no slot. A publisher
// leaving settles every incarnation it did not as abandoned, so a reader
// behind it waits for none; and, while a reader is bound (no publisher
// can bind until it leaves), it ends the publication of every slot it
// never published, so the imports of a peer that came first see the end
// (Import.Closed) instead of waiting for a publisher that cannot come; it
// ends them under the registry's lock, so a Publish racing it either
// publishes first (its slot is left alone) or is refused (ErrAttached),
// never given a token of an ended publication.
// A side not bound is left unchanged.
func (g *Registry) Leave(side Side) {
	if side != PublisherSide && side != ReaderSide {
		return
	}
	g.mu.Lock()
	if !g.bound[side] {
		g.mu.Unlock()
		return
	}
	g.bound[side], g.gone[side] = false, true
	var drop []*Slot         // references the uncollected verdicts held
	var orphans [][2]*Reader // reserved peer holds nobody will take
	if side == PublisherSide && g.bound[ReaderSide] {
		// Placeholders no publisher will fill end in this critical section
		// (a Registry's lock before a Point's): a Publish of one after it
		// finds its points ended and is refused (ErrAttached), one before
		// it published the slot, which is left alone. Ended after the
		// unlock, a Publish in between got a token for an ended
		// publication.
		for _, sl := range g.slots {
			if !sl.published {
				sl.oks.close()
				sl.errs.close()
			}
		}
	}
	for inc, v := range g.verdicts {
		select {
		case <-v.done:
			if side == ReaderSide {
				if v.slot != nil {
					drop = append(drop, v.slot)
					v.slot = nil
				}
				delete(g.verdicts, inc)
			}
		default:
			if side == PublisherSide {
				close(v.done) // abandoned: v.slot is nil
			} else {
				delete(g.verdicts, inc)
			}
		}
	}
	if side == ReaderSide {
		for _, sl := range g.slots {
			orphans = append(orphans, sl.reserved...)
			clear(sl.reserved)
			sl.reserved = nil
		}
		// Every verdict went above: the next pair numbers its creates
		// from 1 again.
		g.collectedSeq, g.kept = 0, nil
	}
	g.mu.Unlock()
	g.pauseLeft()
	for _, pair := range orphans {
		pair[0].Release()
		pair[1].Release()
	}
	for _, sl := range drop {
		sl.releaseRef()
	}
}

// releaseRef drops one reference; the last one ends the slot: reserved holds
// nobody took die with it.
func (s *Slot) releaseRef() {
	g := s.g
	g.mu.Lock()
	s.refs--
	var orphans [][2]*Reader
	if s.refs == 0 {
		orphans, s.reserved = s.reserved, nil
		if g.slots[s.inc] == s {
			delete(g.slots, s.inc)
		}
	}
	g.mu.Unlock()
	for _, pair := range orphans {
		pair[0].Release()
		pair[1].Release()
	}
}

// Token is a publication: releasing it ends the publication (readers keep
// the last published chain) and drops the publisher's reference to the slot.
type Token struct {
	slot     *Slot
	released bool
}

// Slot returns the token's slot.
func (t *Token) Slot() *Slot { return t.slot }

// Release ends the publication. Twice is a no-op.
func (t *Token) Release() {
	if t.released {
		return
	}
	t.released = true
	t.slot.oks.close()
	t.slot.errs.close()
	t.slot.releaseRef()
}

// Publish publishes the incarnation (id, asOf) of sequence number 0; see
// PublishIncarnation. The runtimes publish by Incarnation (PublishBundle);
// Publish is the short form for tests of core/share and core/dataflow,
// which publish one incarnation per id.
func (g *Registry) Publish(id string, asOf frontier.Frontier, oks, errs *Spine) (*Token, error) {
	return g.PublishIncarnation(Incarnation{ID: id, AsOf: asOf}, oks, errs)
}

// PublishIncarnation publishes an index incarnation: it attaches oks and
// errs to the incarnation's slot, seeding readers that bound to it early,
// then reserves the peer hold at its as_of unless a peer recorded itself
// first (P5). Called on the publisher's goroutine. If either half cannot
// attach (its trace's last handle is released, ErrTraceReleased, or a
// reader that came first holds a time its trace has compacted past), the
// publication ends at once, both halves, as its token's release would end
// it, and the error names the half; a nil half is refused
// (ErrNotImportable) before anything is published. While a reader of it keeps its slot
// (a peer bundle), a second publication of the incarnation is
// ErrPublished; once none does, the slot is gone and a new publication
// starts afresh.
func (g *Registry) PublishIncarnation(inc Incarnation, oks, errs *Spine) (*Token, error) {
	// A nil half is refused before the slot is touched: nothing to end.
	if oks == nil {
		return nil, fmt.Errorf("share: publish %v: oks half is nil: %w", inc, ErrNotImportable)
	}
	if errs == nil {
		return nil, fmt.Errorf("share: publish %v: errs half is nil: %w", inc, ErrNotImportable)
	}
	asOf := inc.peerHold()
	g.mu.Lock()
	s := g.getOrCreateLocked(inc)
	if s.published {
		g.mu.Unlock()
		return nil, fmt.Errorf("share: publish %v: %w", inc, ErrPublished)
	}
	s.published = true
	s.refs++
	g.mu.Unlock()

	// Attaching may apply holds and merge: outside the registry lock.
	half, err := "oks", oks.Attach(s.oks)
	if err == nil {
		half, err = "errs", errs.Attach(s.errs)
	}
	if err != nil {
		// The publication fails whole and ends as a released token ends
		// one: a half already attached stops publishing (its points' holds
		// no longer keep its trace from compacting, and it is detached at
		// its next change), and readers of either half see it ended
		// instead of waiting for a publisher.
		s.oks.close()
		s.errs.close()
		s.releaseRef()
		return nil, fmt.Errorf("share: publish %v: %s half: %w", inc, half, err)
	}

	g.mu.Lock()
	if s.unpublishedPeers > 0 {
		s.unpublishedPeers--
	} else if g.gone[ReaderSide] {
		// No reader will take a peer hold: none is reserved, so the
		// publisher compacts as its own holds allow.
	} else if !mutants.Enabled || !mutants.On(mutants.PublishReservesNoPeerHold) {
		s.reserved = append(s.reserved, [2]*Reader{s.oks.ReaderAtLeast(asOf), s.errs.ReaderAtLeast(asOf)})
	}
	g.mu.Unlock()
	return &Token{slot: s}, nil
}

// PeerBundle returns the peer bundle of the incarnation (id, asOf) of
// sequence number 0; see PeerBundleOf. Like Publish, a short form for
// tests: the runtimes collect peer bundles with AwaitPeerBundle.
func (g *Registry) PeerBundle(id string, asOf frontier.Frontier) *Bundle {
	return g.PeerBundleOf(Incarnation{ID: id, AsOf: asOf})
}

// PeerBundleOf returns the reading runtime's peer bundle for inc: it takes
// over the oldest hold reserved at publication, or, when the peer comes
// first, mints its own and records itself so the publication reserves none
// (P5). The bundle keeps the slot alive until released. Taken before the
// publication, it has no description (Key, Columns, Writer) until
// Bundle.Describe finds the incarnation published.
func (g *Registry) PeerBundleOf(inc Incarnation) *Bundle {
	g.mu.Lock()
	s := g.getOrCreateLocked(inc)
	b := g.peerBundleLocked(s)
	g.mu.Unlock()
	return b
}

// peerBundleLocked takes a reference to s and its peer hold. REQUIRES: g.mu
// held.
func (g *Registry) peerBundleLocked(s *Slot) *Bundle {
	asOf := s.inc.peerHold()
	s.refs++
	var pair [2]*Reader
	if len(s.reserved) > 0 {
		pair = s.reserved[0]
		s.reserved[0] = [2]*Reader{}
		s.reserved = s.reserved[1:]
	} else {
		s.unpublishedPeers++
		pair = [2]*Reader{s.oks.ReaderAtLeast(asOf), s.errs.ReaderAtLeast(asOf)}
	}
	b := newBundle(pair[0], pair[1], s.releaseRef)
	b.Key, b.Columns, b.Writer = s.key, s.columns, s.writer
	if !s.published {
		b.slot = s // no description yet: Describe takes it once published
	}
	return b
}

// verdictLocked returns inc's verdict, creating an unsettled one.
// REQUIRES: g.mu held.
func (g *Registry) verdictLocked(inc Incarnation) *verdict {
	v, ok := g.verdicts[inc]
	if !ok {
		v = &verdict{done: make(chan struct{})}
		if g.verdicts == nil {
			g.verdicts = map[Incarnation]*verdict{} // the zero Registry
		}
		g.verdicts[inc] = v
	}
	return v
}

// forgottenLocked reports whether inc's verdict was collected and then
// forgotten: none is kept of it, and it is of a create before the last
// one the reading runtime collected, which collects in command order.
// REQUIRES: g.mu held.
func (g *Registry) forgottenLocked(inc Incarnation) bool {
	if inc.Seq >= g.collectedSeq {
		return false
	}
	_, ok := g.verdicts[inc]
	return !ok
}

// keepCollectedLocked records that inc's verdict is collected: it is
// kept while no later create's is, and the collected verdicts of earlier
// creates are forgotten. REQUIRES: g.mu held.
func (g *Registry) keepCollectedLocked(inc Incarnation) {
	if inc.Seq > g.collectedSeq {
		g.collectedSeq = inc.Seq
		n := 0
		for _, k := range g.kept {
			if k.Seq < g.collectedSeq {
				if v, ok := g.verdicts[k]; ok && v.collected {
					delete(g.verdicts, k)
				}
				continue
			}
			g.kept[n] = k
			n++
		}
		clear(g.kept[n:])
		g.kept = g.kept[:n]
	}
	g.kept = append(g.kept, inc)
}

// Settle records the publisher's verdict on inc for the reading runtime's
// AwaitPeerBundle: published (the slot of inc must be published; the
// verdict keeps it alive, with its reserved peer hold, until the peer
// collects it, however far behind the reading runtime is) or abandoned (its
// dataflow failed to build: the peer records nothing). Settling twice is a
// no-op, after the verdict is collected too, and so is settling an
// incarnation of a create (Seq) before the last one the reading runtime
// collected, of which no verdict is kept: collecting in command order, it
// collected that one already, or never will. Called on the publisher's
// goroutine once the dataflow is built.
func (g *Registry) Settle(inc Incarnation, published bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.forgottenLocked(inc) {
		return // collected already, and forgotten
	}
	v := g.verdictLocked(inc)
	select {
	case <-v.done:
		return
	default:
	}
	if g.gone[ReaderSide] {
		// No reader will collect it: a verdict kept would keep its slot.
		delete(g.verdicts, inc)
		return
	}
	if published {
		if s, ok := g.slots[inc]; ok && s.published {
			s.refs++
			v.slot = s
		}
	}
	close(v.done)
}

// AwaitPeerBundle waits until the publisher settles inc (or stop closes)
// and returns its peer bundle (PeerBundleOf), ErrAbandoned if the
// incarnation was not published, or ErrStopped. The reading runtime calls it
// once per incarnation, in command order, so a stale command of an older
// incarnation never touches a newer one's slot or hold; a second call for
// an incarnation whose verdict a first collected is ErrCollected, at once,
// as is a call for an incarnation of a create (Seq) before the last one
// collected of which no verdict is kept (a collected verdict is kept until
// one of a later create is collected, and its Seq tells it after that).
func (g *Registry) AwaitPeerBundle(inc Incarnation, stop <-chan struct{}) (*Bundle, error) {
	g.mu.Lock()
	if g.forgottenLocked(inc) {
		g.mu.Unlock()
		return nil, fmt.Errorf("%v: %w", inc, ErrCollected)
	}
	v := g.verdictLocked(inc)
	if v.collected {
		g.mu.Unlock()
		return nil, fmt.Errorf("%v: %w", inc, ErrCollected)
	}
	if g.gone[PublisherSide] {
		select {
		case <-v.done:
		default:
			close(v.done) // abandoned: the publisher left without settling it
		}
	}
	g.mu.Unlock()
	select {
	case <-v.done:
	case <-stop:
		return nil, fmt.Errorf("%w %v", ErrStopped, inc)
	}
	g.mu.Lock()
	if v.collected {
		// Another call took it while this one waited.
		g.mu.Unlock()
		return nil, fmt.Errorf("%v: %w", inc, ErrCollected)
	}
	v.collected = true
	g.keepCollectedLocked(inc)
	s := v.slot
	v.slot = nil
	if mutants.Enabled && mutants.On(mutants.StaleDropReleasesNewHold) && s != nil {
		// The peer takes the newest live slot of the id and as_of, whatever
		// its sequence number; the verdict's reference moves with it.
		newest := s
		for other, o := range g.slots {
			if other.ID == inc.ID && other.AsOf == inc.AsOf && o.published && other.Seq > newest.inc.Seq {
				newest = o
			}
		}
		if newest != s {
			newest.refs++
			defer s.releaseRef()
			s = newest
		}
	}
	var b *Bundle
	if s != nil {
		b = g.peerBundleLocked(s)
	}
	g.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("%v: %w", inc, ErrAbandoned)
	}
	s.releaseRef() // the verdict's reference; the bundle holds its own
	return b, nil
}

// Lookup returns the newest live slot for (id, asOf), or nil. The
// runtimes find slots by Incarnation and never call it: it is inspection,
// exported for tests above core/share (core/runtime's hold tests read a
// publication's since through it).
func (g *Registry) Lookup(id string, asOf frontier.Frontier) *Slot {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out *Slot
	for inc, s := range g.slots {
		if inc.ID == id && inc.AsOf == asOf && (out == nil || out.inc.Seq < inc.Seq) {
			out = s
		}
	}
	return out
}

// RegistryStats are the registry's metrics.
type RegistryStats struct {
	Slots    int // live slots, old incarnations included
	Reserved int // peer holds reserved and not yet taken
	Settled  int // verdicts the reading runtime has not collected
	Awaited  int // incarnations the reading runtime waits for, not yet settled
}

// Stats returns the registry's metrics.
func (g *Registry) Stats() RegistryStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := RegistryStats{Slots: len(g.slots)}
	for _, s := range g.slots {
		st.Reserved += len(s.reserved)
	}
	for _, v := range g.verdicts {
		select {
		case <-v.done:
			if !v.collected {
				st.Settled++
			}
		default:
			st.Awaited++
		}
	}
	return st
}
