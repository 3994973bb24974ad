package spine

import (
	"runtime"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A merge that is started and not worked holds no output. The recompaction
// a lagging since's move starts (SetLogicalCompaction brings no fuel) in a
// trace no runtime maintains any more, which a reader keeps, would
// otherwise hold columns as long as the batches it merges until the trace
// is freed; now its first Work allocates them. Here 48 rounds of 2,000
// updates over 1,000 keys merge at since 0, and the since's move to the
// upper starts their recompaction.
func TestAStartedMergeHoldsNoOutputUntilWorked(t *testing.T) {
	s := New(kv, Options{})
	bld := batch.NewBuilder(kv, 2000)
	for tm := range uint64(48) {
		for i := range int64(2000) {
			bld.Push1(i%1000, i/1000, tm, 1)
		}
		b, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(b); err != nil {
			t.Fatal(err)
		}
		s.SetPhysicalCompaction(s.Upper())
	}
	for s.Work(1 << 20) {
	}
	before := s.Stats()
	started := allocated(func() { s.SetLogicalCompaction(s.Upper()) })
	st := s.Stats()
	if st.Recompactions == before.Recompactions || st.Merging == 0 {
		t.Fatalf("the since's move started no merge: %+v", st)
	}
	worked := allocated(func() { s.Work(1) })
	t.Logf("%d recompactions of %d updates started: %d bytes; the first Work: %d bytes", st.Recompactions-before.Recompactions, st.Updates, started, worked)
	if started*8 > worked {
		t.Errorf("starting the recompaction allocated %d bytes, its first Work %d: the output was allocated before any work", started, worked)
	}
	for s.Work(1 << 20) {
	}
	if st := s.Stats(); st.Updates != 2000 {
		t.Errorf("recompacted, the trace holds %d updates, want 2,000", st.Updates)
	}
}
