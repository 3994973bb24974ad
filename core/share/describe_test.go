package share_test

import (
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// A peer bundle taken before its incarnation is published (PeerBundleOf
// ahead of PublishBundle) has no description when taken; Describe fills it
// in once the publisher has given it, in the bundle and in its clones and
// padded clones taken early too. Before, such a bundle kept an empty Key,
// Columns and Writer for good.
func TestAPeerBundleTakenBeforePublicationIsDescribedOnceItIs(t *testing.T) {
	oh, _, _ := share.NewTrace(kv, spine.Options{})
	eh, _, _ := share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
	local := share.NewBundle(oh, eh, nil)
	local.Key, local.Columns, local.Writer = []int{0}, 2, "maintain idx"
	if !local.Describe() || local.Writer != "maintain idx" {
		t.Fatalf("a local bundle: Describe false or writer %q; want its maker's description", local.Writer)
	}

	g := share.NewRegistry()
	inc := share.Incarnation{ID: "idx", AsOf: frontier.At(0), Seq: 1}
	peer := g.PeerBundleOf(inc)
	early := map[string]*share.Bundle{"peer": peer, "peer's clone": peer.Clone(), "peer padded": peer.IntoPadded()}
	for name, b := range early {
		if b.Describe() {
			t.Fatalf("%s: described before publication (key %v, columns %d, writer %q)", name, b.Key, b.Columns, b.Writer)
		}
		if b.Key != nil || b.Columns != 0 || b.Writer != "" {
			t.Fatalf("%s: before publication key %v, columns %d, writer %q; want none", name, b.Key, b.Columns, b.Writer)
		}
	}

	tok, err := g.PublishBundle(inc, local)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range early {
		if !b.Describe() {
			t.Fatalf("%s: not described once published", name)
		}
		if !slices.Equal(b.Key, []int{0}) || b.Columns != 2 || b.Writer != "maintain idx" {
			t.Fatalf("%s: once published key %v, columns %d, writer %q; want [0], 2, %q", name, b.Key, b.Columns, b.Writer, "maintain idx")
		}
	}
	for _, b := range early {
		b.Release()
	}
	tok.Release()
	local.Release()
	if st := g.Stats(); st.Slots != 0 {
		t.Fatalf("registry left with %+v", st)
	}
}

// A publishing spine and the spine it wraps are one storage: a trace over
// the one refuses a trace over the other (core/trace's package doc).
func TestATraceOverAPublishingSpinesInnerIsRefused(t *testing.T) {
	h, _, s := share.NewTrace(kv, spine.Options{})
	defer h.Release()
	defer func() {
		if recover() == nil {
			t.Fatal("trace.New of the spine a publishing spine wraps returned a second trace over it")
		}
	}()
	trace.New(s.Inner())
}
