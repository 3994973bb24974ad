package share

import "testing"

// TestAMergeTheSinceStartsListsTheTraceHot: a publishing spine whose
// batches merged while its since was held back starts, when the since
// passes them, the merge that compacts them (spine.Spine.SetLogicalCompaction),
// with no batch arriving: the move lists the trace with its maintainer, whose
// passes fuel that merge, though the physical compaction did not move. Before,
// only a physical move listed it, and the merge waited for the next arrival.
func TestAMergeTheSinceStartsListsTheTraceHot(t *testing.T) {
	p := newPub(t)
	hot := 0
	p.s.Join(&Group{}, func() { hot++ })
	for range 2000 {
		p.rounds(1)
		p.h.SetPhysicalCompaction(p.w.Upper())
	}
	for p.s.Work(1 << 20) {
	}
	p.s.ClearHot() // the maintainer found it idle
	hot = 0
	before := p.s.Stats()
	p.h.SetLogicalCompaction(p.w.Upper())
	if !p.s.Merging() {
		t.Fatalf("the since passed %d updates merged at {0} and started no merge", before.Updates)
	}
	if hot != 1 {
		t.Errorf("the since started a merge and listed the trace %d times, want once", hot)
	}
	for p.s.Work(1 << 20) {
	}
	st := p.s.Stats()
	if st.Updates > 2+4*16 {
		t.Errorf("after the merges the since started: %d updates (before %d), 2 rows live", st.Updates, before.Updates)
	}
	t.Logf("%d updates before the since moved, %d after (%d recompactions)", before.Updates, st.Updates, st.Recompactions)
}

// TestAPhysicalMoveListsTheTraceHot: a physical compaction that admits
// batches held back from merging lists the trace with its maintainer,
// with no batch arriving and no merge in progress, so that its passes
// merge them.
func TestAPhysicalMoveListsTheTraceHot(t *testing.T) {
	p := newPub(t)
	hot := 0
	p.s.Join(&Group{}, func() { hot++ })
	p.rounds(64) // physical compaction held at {0}: none of them merges
	for p.s.Work(1 << 20) {
	}
	if p.s.Merging() {
		t.Fatal("merging with every batch held back")
	}
	p.s.ClearHot()
	hot = 0
	p.h.SetPhysicalCompaction(p.w.Upper())
	if hot != 1 {
		t.Errorf("a physical compaction that admitted 64 batches listed the trace %d times, want once", hot)
	}
}
