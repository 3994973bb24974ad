package share

import (
	"errors"
	"sync"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestLeaveAndPublishNeverYieldATokenOfAnEndedPublication runs a
// publisher's Leave and a Publish of a placeholder a peer made first
// concurrently, many times: Leave ends the placeholders nobody published,
// and a Publish that races it either publishes first (Leave then leaves the
// slot alone) or is refused. Before Leave closed the placeholders under the
// registry's lock, a Publish in between got a token for a publication
// already ended.
func TestLeaveAndPublishNeverYieldATokenOfAnEndedPublication(t *testing.T) {
	const rounds = 500
	var published, refused int
	for i := range rounds {
		g := NewRegistry()
		if err := g.Bind(PublisherSide); err != nil {
			t.Fatal(err)
		}
		if err := g.Bind(ReaderSide); err != nil {
			t.Fatal(err)
		}
		peer := g.PeerBundle("idx", frontier.Min()) // the placeholder
		oks, errs := newPub(t), newPub(t)
		var tok *Token
		var err error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			g.Leave(PublisherSide)
		}()
		go func() {
			defer wg.Done()
			<-start
			tok, err = g.Publish("idx", frontier.Min(), oks.s, errs.s)
		}()
		close(start)
		wg.Wait()
		sl := g.Lookup("idx", frontier.Min())
		if err == nil {
			published++
			if st := sl.Oks().Stats(); st.Closed {
				t.Fatalf("round %d: Publish returned a token, but Leave had ended its publication (oks point %+v)", i, st)
			}
			if st := sl.Errs().Stats(); st.Closed {
				t.Fatalf("round %d: Publish returned a token, but Leave had ended its publication (errs point %+v)", i, st)
			}
			tok.Release()
		} else {
			refused++
		}
		peer.Release()
		oks.h.Release()
		errs.h.Release()
		g.Leave(ReaderSide)
	}
	t.Logf("%d published first, %d refused", published, refused)
}

// TestPublishAfterLeavesSectionIsRefused lets a Publish in just after a
// publisher's Leave has released the registry's lock (the left pause
// point): the placeholder Leave found unpublished is ended by then, so the
// Publish is refused with ErrAttached instead of getting a token for an
// ended publication.
func TestPublishAfterLeavesSectionIsRefused(t *testing.T) {
	g := NewRegistry()
	if err := g.Bind(PublisherSide); err != nil {
		t.Fatal(err)
	}
	if err := g.Bind(ReaderSide); err != nil {
		t.Fatal(err)
	}
	peer := g.PeerBundle("idx", frontier.Min())
	defer peer.Release()
	oks, errs := newPub(t), newPub(t)
	defer oks.h.Release()
	defer errs.h.Release()
	var tok *Token
	var err error
	g.pause = &pauses{left: func() {
		tok, err = g.Publish("idx", frontier.Min(), oks.s, errs.s)
	}}
	g.Leave(PublisherSide)
	if err == nil {
		tok.Release()
		t.Fatal("Publish let in after Leave's critical section got a token; want it refused: Leave ended the placeholder")
	}
	if !errors.Is(err, ErrAttached) {
		t.Fatalf("Publish after Leave: %v, want ErrAttached (the publication has ended)", err)
	}
	if !peer.Oks.(*Reader).Point().Stats().Closed {
		t.Fatal("the placeholder's oks point is not ended after the publisher left")
	}
}
