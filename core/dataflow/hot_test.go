package dataflow

import (
	"fmt"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// TestMaintainVisitsOnlyHotTraces: a wake's maintenance visits the traces
// with something to do (IndexManager.hot), not every trace it maintains:
// with one index getting a batch and a hold change each round, the traces
// Maintain visits per round are as many with 500 idle indexes beside it
// as with none, and the busy index's holds are applied every round.
func TestMaintainVisitsOnlyHotTraces(t *testing.T) {
	visits := func(idle int) int {
		m := NewIndexManager()
		var handles []*trace.Handle
		index := func(id string) (*trace.Handle, *trace.Writer, *share.Spine) {
			oh, ow, os := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
			eh, _, es := share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
			m.track(os, id+": arrange oks", func() {}, nil)
			m.track(es, id+": arrange errs", func() {}, nil)
			if err := m.set(id, &entry{bundle: share.NewBundle(oh.Clone(), eh.Clone(), nil), owner: "maintain " + id, maintained: true}); err != nil {
				t.Fatal(err)
			}
			handles = append(handles, oh, eh)
			return oh, ow, os
		}
		for i := range idle {
			index(fmt.Sprintf("idle%d", i))
		}
		h, w, s := index("busy")
		n := 0
		for r := range uint64(40) {
			if r == 8 {
				n = m.visits // the first Maintain visits every new trace
			}
			m.Defer()
			insertAt(t, w, r)
			h.SetLogicalCompaction(frontier.At(r))
			if err := m.AllowCompaction("busy", frontier.At(r)); err != nil {
				t.Fatal(err)
			}
			m.Maintain(1 << 14)
			if errs := m.Overflows(); len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := s.LogicalCompaction(); got != frontier.At(r) {
				t.Fatalf("round %d: since %v, want {%d}", r, got, r)
			}
		}
		n = m.visits - n
		for _, id := range m.IDs() {
			m.Drop(id)
		}
		for _, h := range handles {
			h.Release()
		}
		return n
	}
	none, many := visits(0), visits(500)
	t.Logf("visits: %d, %d", none, many)
	if none != many || none > 2*32 {
		t.Fatalf("32 rounds of one busy index: Maintain visited %d traces beside no idle index, %d beside 500", none, many)
	}
}

// TestAMergeAHoldStartsIsFuelled: a hold applied at once (no wake
// deferring it, as when a caller steps and maintains without Defer) that
// admits pending batches starts a merge in a trace Maintain had left: the
// trace is listed again, so that Merging reports it and Maintain finishes
// it, as it did when every trace was visited.
func TestAMergeAHoldStartsIsFuelled(t *testing.T) {
	m := NewIndexManager()
	ar := batch.Arity{Key: 1, Val: 1}
	h, w, s := share.NewTrace(ar, spine.Options{Effort: 1, Fanout: 2})
	m.track(s, "t", func() {}, nil)
	for r := range uint64(8) {
		insertAt(t, w, r)
	}
	for m.Maintain(1 << 20) {
	}
	if s.Merging() {
		t.Fatal("merging after Maintain")
	}
	h.SetPhysicalCompaction(frontier.At(8)) // admits the pending batches
	if !s.Merging() {
		t.Fatal("no merge in progress after the hold moved: nothing to test")
	}
	if !m.Merging() {
		t.Error("Merging: false, with a merge in progress")
	}
	for m.Maintain(1 << 20) {
	}
	if s.Merging() {
		t.Fatal("a merge the hold started is in progress after Maintain")
	}
	h.Release()
}

// insertAt inserts into w a batch of one update, (r, 1) at time r with
// diff 1, spanning [r, r+1).
func insertAt(t *testing.T, w *trace.Writer, r uint64) {
	t.Helper()
	bld := batch.NewBuilder(batch.Arity{Key: 1, Val: 1}, 1)
	bld.Push1(int64(r), 1, r, 1)
	b, err := bld.Build(frontier.At(r), frontier.At(r+1))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Insert(b); err != nil {
		t.Fatal(err)
	}
}
