package share

import (
	"fmt"
	"sync"

	"github.com/tracebench/tracebench/core/frontier"
)

// Registry is the sharing registry of one worker pair: worker i of the
// publishing runtime and worker i of the reading runtime (§4.8). Safe for
// concurrent use; its critical sections are a few map operations.
type Registry struct {
	mu    sync.Mutex
	slots map[string]*Slot // id → the latest live incarnation
	live  int              // live slots, old incarnations included
	wake  chan struct{}    // capacity 1: publication, unpublication
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{slots: map[string]*Slot{}, wake: make(chan struct{}, 1)}
}

// Wake is signalled on every publication and unpublication, for the reading
// runtime's loop.
func (g *Registry) Wake() <-chan struct{} { return g.wake }

func (g *Registry) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Slot is one incarnation of a shared index: its as_of and the oks and errs
// publication points.
type Slot struct {
	g         *Registry
	id        string
	asOf      frontier.Frontier
	oks, errs *Point

	refs             int          // token + peer bundles
	reserved         [][2]*Reader // peer holds minted at publication, oldest first
	unpublishedPeers int          // peers that minted their own hold before publication
	published        bool
}

// ID returns the slot's index id.
func (s *Slot) ID() string { return s.id }

// AsOf returns the incarnation's as_of.
func (s *Slot) AsOf() frontier.Frontier { return s.asOf }

// Oks returns the oks publication point.
func (s *Slot) Oks() *Point { return s.oks }

// Errs returns the errs publication point.
func (s *Slot) Errs() *Point { return s.errs }

// getOrCreateLocked returns the live slot for (id, asOf), or a fresh one that
// replaces an older incarnation in the map (P6). REQUIRES: g.mu held.
func (g *Registry) getOrCreateLocked(id string, asOf frontier.Frontier) *Slot {
	if s, ok := g.slots[id]; ok && s.asOf == asOf {
		return s
	}
	s := &Slot{g: g, id: id, asOf: asOf, oks: NewPoint(), errs: NewPoint()}
	g.slots[id] = s
	g.live++
	return s
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
		if g.slots[s.id] == s {
			delete(g.slots, s.id)
		}
		g.live--
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
	t.slot.g.signal()
}

// Publish publishes an index incarnation: it attaches oks and errs to the
// slot for (id, asOf), seeding readers that bound to it early, then reserves
// the peer hold at asOf unless a peer recorded itself first (P5). Called on
// the publisher's goroutine.
func (g *Registry) Publish(id string, asOf frontier.Frontier, oks, errs *Spine) (*Token, error) {
	g.mu.Lock()
	s := g.getOrCreateLocked(id, asOf)
	if s.published {
		g.mu.Unlock()
		return nil, fmt.Errorf("share: publish %q at %v: %w", id, asOf, ErrPublished)
	}
	s.published = true
	s.refs++
	g.mu.Unlock()

	// Attaching may apply holds and merge: outside the registry lock.
	err := oks.Attach(s.oks)
	if err == nil {
		err = errs.Attach(s.errs)
	}
	if err != nil {
		s.releaseRef()
		return nil, fmt.Errorf("share: publish %q at %v: %w", id, asOf, err)
	}

	g.mu.Lock()
	if s.unpublishedPeers > 0 {
		s.unpublishedPeers--
	} else {
		s.reserved = append(s.reserved, [2]*Reader{s.oks.ReaderAtLeast(asOf), s.errs.ReaderAtLeast(asOf)})
	}
	g.mu.Unlock()
	g.signal()
	return &Token{slot: s}, nil
}

// PeerBundle returns the reading runtime's peer bundle for (id, asOf): it
// takes over the oldest hold reserved at publication, or, when the peer
// comes first, mints its own and records itself so the publication reserves
// none (P5). The bundle keeps the slot alive until released.
func (g *Registry) PeerBundle(id string, asOf frontier.Frontier) *Bundle {
	g.mu.Lock()
	s := g.getOrCreateLocked(id, asOf)
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
	g.mu.Unlock()
	return newBundle(pair[0], pair[1], s.releaseRef)
}

// Lookup returns the live slot for (id, asOf), or nil.
func (g *Registry) Lookup(id string, asOf frontier.Frontier) *Slot {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.slots[id]; ok && s.asOf == asOf {
		return s
	}
	return nil
}

// RegistryStats are the registry's metrics.
type RegistryStats struct {
	Slots    int // live slots, old incarnations included
	Reserved int // peer holds reserved and not yet taken
}

// Stats returns the registry's metrics.
func (g *Registry) Stats() RegistryStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := RegistryStats{Slots: g.live}
	for _, s := range g.slots {
		st.Reserved += len(s.reserved)
	}
	return st
}
