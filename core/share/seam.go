package share

import (
	"errors"
	"fmt"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
)

// ErrNotImportable is returned for a reader that is neither shared nor a
// local handle over a publishing Spine.
var ErrNotImportable = errors.New("share: reader cannot be imported")

// Importer imports a trace live, presented at as_of and bounded by until,
// calling wake (if not nil) whenever new events are queued. A Point, a
// Reader and a Padded reader implement it; ImporterOf finds the one behind
// any reader, so that no caller switches on concrete reader types.
type Importer interface {
	ImportWith(asOf, until frontier.Frontier, wake func()) (*Import, error)
}

var (
	_ Importer = (*Point)(nil)
	_ Importer = (*Reader)(nil)
	_ Importer = (*Padded)(nil)
)

// ImporterOf returns how r is imported: a shared or padded reader imports
// itself; a local handle over a publishing Spine imports through the
// trace's private point (§4.4: one body for local and shared imports),
// refusing, as a shared reader does, an as_of before the handle's logical
// hold (a *SinceError, though another handle may hold the trace back
// further) and, once the handle is released, any import (ErrReleased). A
// released handle (its clones included) imports nothing: ErrReleased, as
// an import through a released shared reader is, and no hold on the
// trace its holder let go. A nil r, typed (a nil *Reader or *trace.Handle
// behind trace.Reader) or not, is ErrNotImportable.
func ImporterOf(r trace.Reader) (Importer, error) {
	if isNil(r) {
		return nil, ErrNotImportable
	}
	switch r := r.(type) {
	case Importer:
		return r, nil
	case *trace.Handle:
		if r.Released() {
			return nil, ErrReleased
		}
		if s, ok := r.State().Storage().(*Spine); ok {
			return handleImporter{h: r, s: s}, nil
		}
	}
	return nil, ErrNotImportable
}

// handleImporter imports the trace behind a local handle through the
// trace's private point, on the terms of the handle's holds, as a Reader
// imports on the terms of its own: never once the handle is released,
// never at an as_of before its logical hold.
type handleImporter struct {
	h *trace.Handle
	s *Spine
}

// ImportWith imports the trace at asOf bounded by until through its
// private point, or refuses as Reader.ImportWith refuses.
func (hi handleImporter) ImportWith(asOf, until frontier.Frontier, wake func()) (*Import, error) {
	if hi.h.Released() {
		return nil, ErrReleased
	}
	if since := hi.h.LogicalCompaction(); !since.LessEqual(asOf) {
		return nil, &SinceError{Since: since, AsOf: asOf}
	}
	return hi.s.LocalPoint().ImportWith(asOf, until, wake)
}

// ImportWith imports the inner reader from its since on: the padded range
// presents nothing, so an import at an as_of below the inner since starts at
// the inner since. An import that ends there (until at or before the inner
// since: a peek into the padding) reads nothing but the padding: it
// presents nothing, completes at once and holds nothing of the inner trace
// (docs/semantics.md §4.5). An as_of before the since p reports (the
// padding's, or the inner one once the padding is gone) is refused with a
// *SinceError, as a shared reader refuses one before its hold.
// REQUIRES: asOf < until.
func (p *Padded) ImportWith(asOf, until frontier.Frontier, wake func()) (*Import, error) {
	if !asOf.Less(until) {
		return nil, fmt.Errorf("share: import as_of %v is not before until %v", asOf, until)
	}
	if since := p.LogicalCompaction(); !since.LessEqual(asOf) {
		return nil, &SinceError{Since: since, AsOf: asOf}
	}
	in, err := ImporterOf(p.inner)
	if err != nil {
		return nil, err
	}
	inner := p.inner.LogicalCompaction()
	if until.LessEqual(inner) {
		if released(p.inner) {
			return nil, ErrReleased
		}
		return emptyImport(asOf, until, inner, wake), nil
	}
	return in.ImportWith(asOf.Join(inner), until, wake)
}

// publishingSpine returns the publishing Spine under a local handle. The
// trace of a handle whose last handle is released has dropped its storage,
// spine included: a spine that stands for it is returned, which Attach
// refuses as it refuses the trace's own (ErrTraceReleased). A released
// handle of a trace that lives on holds nothing of it, and publishes
// nothing, as it imports nothing (ImporterOf): a spine that stands for it
// is returned, which Attach refuses with ErrReleased.
func publishingSpine(r trace.Reader) (*Spine, bool) {
	h, ok := r.(*trace.Handle)
	if !ok || h == nil {
		return nil, false
	}
	switch s := h.State().Storage().(type) {
	case *Spine:
		if h.Released() {
			return &Spine{released: true, group: &noGroup}, true
		}
		return s, true
	case nil:
		return &Spine{dropped: true, group: &noGroup}, true
	}
	return nil, false
}

// PublishBundle publishes the traces of a local bundle (both halves local
// handles over publishing Spines) as incarnation inc, with the bundle's
// description (Key, Columns) and writer for the peers; see
// PublishIncarnation, which refuses a half whose trace's last handle is
// released. A half that is a released handle (of a released bundle, say)
// is refused likewise, with ErrReleased, though its trace lives on. A nil
// half, typed (a nil *trace.Handle) or not, is ErrNotImportable.
func (g *Registry) PublishBundle(inc Incarnation, b *Bundle) (*Token, error) {
	if b == nil {
		return nil, fmt.Errorf("share: publish %v: nil bundle: %w", inc, ErrNotImportable)
	}
	oks, okO := publishingSpine(b.Oks)
	errs, okE := publishingSpine(b.Errs)
	if !okO || !okE {
		return nil, fmt.Errorf("share: publish %v: the bundle's traces are not maintained here: %w", inc, ErrNotImportable)
	}
	g.mu.Lock()
	s := g.getOrCreateLocked(inc)
	if !s.published {
		s.key, s.columns, s.writer = append([]int(nil), b.Key...), b.Columns, b.Writer
	}
	g.mu.Unlock()
	return g.PublishIncarnation(inc, oks, errs)
}
