package trace

import (
	"maps"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"pgregory.net/rapid"
)

// traceMachine drives a trace and its handles with random operations and
// checks them against a naive model: a map (key, val, time) → diff of every
// update inserted.
type traceMachine struct {
	ar      batch.Arity
	w       *Writer
	handles []*Handle // live handles; never empty
	model   map[[3]int64]int64
	upper   uint64
	bounds  []uint64 // every batch boundary so far, ascending
}

func newTraceMachine(t *rapid.T) *traceMachine {
	m := &traceMachine{ar: batch.Arity{Key: 1, Val: 1}, model: map[[3]int64]int64{}, bounds: []uint64{0}}
	effort := rapid.Int64Range(1, 4).Draw(t, "effort")
	h, w := NewSpine(m.ar, spine.Options{Effort: effort})
	m.w, m.handles = w, []*Handle{h}
	return m
}

func (m *traceMachine) pick(t *rapid.T) (int, *Handle) {
	i := rapid.IntRange(0, len(m.handles)-1).Draw(t, "handle")
	return i, m.handles[i]
}

// insert seals a batch of random updates (same-time duplicates and ±diffs
// included) over [upper, upper+width).
func (m *traceMachine) insert(t *rapid.T) {
	width := rapid.Uint64Range(1, 3).Draw(t, "width")
	bld := batch.NewBuilder(m.ar, 8)
	for range rapid.IntRange(0, 6).Draw(t, "n") {
		k := rapid.Int64Range(0, 3).Draw(t, "k")
		v := rapid.Int64Range(0, 2).Draw(t, "v")
		tm := m.upper + rapid.Uint64Range(0, width-1).Draw(t, "dt")
		d := rapid.SampledFrom([]int64{-2, -1, 1, 1, 2}).Draw(t, "d")
		bld.Push1(k, v, tm, d)
		m.model[[3]int64{k, v, int64(tm)}] += d
	}
	b, err := bld.Build(frontier.At(m.upper), frontier.At(m.upper+width))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.w.Insert(b); err != nil {
		t.Fatal(err)
	}
	m.upper += width
	m.bounds = append(m.bounds, m.upper)
}

// laterBound draws a batch boundary at or after f, or {}.
func (m *traceMachine) laterBound(t *rapid.T, f frontier.Frontier) frontier.Frontier {
	var opts []frontier.Frontier
	for _, b := range m.bounds {
		if f.LessEqual(frontier.At(b)) {
			opts = append(opts, frontier.At(b))
		}
	}
	opts = append(opts, frontier.Empty())
	return rapid.SampledFrom(opts).Draw(t, "bound")
}

func (m *traceMachine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"insert": m.insert,
		"seal-empty": func(t *rapid.T) {
			up := m.upper + rapid.Uint64Range(1, 2).Draw(t, "width")
			if err := m.w.Seal(frontier.At(up)); err != nil {
				t.Fatal(err)
			}
			m.upper = up
			m.bounds = append(m.bounds, up)
		},
		"clone": func(t *rapid.T) {
			_, h := m.pick(t)
			c := h.Clone()
			if c.LogicalCompaction() != h.LogicalCompaction() || c.PhysicalCompaction() != h.PhysicalCompaction() {
				t.Fatalf("clone holds %v / %v, source %v / %v", c.LogicalCompaction(), c.PhysicalCompaction(), h.LogicalCompaction(), h.PhysicalCompaction())
			}
			m.handles = append(m.handles, c)
		},
		"release": func(t *rapid.T) {
			if len(m.handles) == 1 {
				t.Skip("keep one handle")
			}
			i, h := m.pick(t)
			h.Release()
			m.handles = slices.Delete(m.handles, i, i+1)
		},
		"logical": func(t *rapid.T) {
			_, h := m.pick(t)
			f := frontier.At(rapid.Uint64Range(0, m.upper+2).Draw(t, "f"))
			before := h.LogicalCompaction()
			h.SetLogicalCompaction(f)
			if h.LogicalCompaction() != before.Join(f) {
				t.Fatalf("logical hold %v, want %v ⊔ %v", h.LogicalCompaction(), before, f)
			}
		},
		"physical": func(t *rapid.T) {
			_, h := m.pick(t)
			f := m.laterBound(t, h.PhysicalCompaction())
			h.SetPhysicalCompaction(f)
			if h.PhysicalCompaction() != f {
				t.Fatalf("physical hold %v, want %v", h.PhysicalCompaction(), f)
			}
		},
		"exert": func(t *rapid.T) {
			m.w.Exert(rapid.Int64Range(1, 64).Draw(t, "fuel"))
		},
		"cut": func(t *rapid.T) {
			// A cut at a held physical frontier, or at any later boundary
			// not past the upper, returns exactly the updates before it.
			_, h := m.pick(t)
			if h.PhysicalCompaction().IsEmpty() {
				t.Skip("handle holds nothing physically")
			}
			f := m.laterBound(t, h.PhysicalCompaction())
			if x, ok := f.Time(); ok && x > m.upper {
				t.Skip("beyond upper")
			}
			bs, err := h.BatchesThrough(f)
			if err != nil {
				t.Fatalf("cut at %v (hold %v): %v\n%v", f, h.PhysicalCompaction(), err, h.State().Storage())
			}
			m.checkAccumulations(t, bs, f)
		},
		"": m.check,
	}
}

// check runs after every action: the meet rule and accumulations.
func (m *traceMachine) check(t *rapid.T) {
	logical, physical := frontier.Empty(), frontier.Empty()
	for _, h := range m.handles {
		logical = logical.Meet(h.LogicalCompaction())
		physical = physical.Meet(h.PhysicalCompaction())
	}
	st := m.handles[0].State()
	s := st.Storage()
	if s.LogicalCompaction() != logical || s.PhysicalCompaction() != physical {
		t.Fatalf("storage compaction %v/%v, meet of holds %v/%v", s.LogicalCompaction(), s.PhysicalCompaction(), logical, physical)
	}
	if st.Live() != len(m.handles) {
		t.Fatalf("live %d, handles %d", st.Live(), len(m.handles))
	}
	bs, err := m.handles[0].BatchesThrough(frontier.Empty())
	if err != nil {
		t.Fatal(err)
	}
	m.checkAccumulations(t, bs, frontier.Empty())
}

// checkAccumulations compares bs, which should hold exactly the updates
// before cut, with the model at every time beyond the logical frontier.
func (m *traceMachine) checkAccumulations(t *rapid.T, bs []*batch.Batch, cut frontier.Frontier) {
	logical := m.handles[0].State().Storage().LogicalCompaction()
	lo, _ := logical.Time()
	for tm := lo; tm <= m.upper+3; tm++ {
		if !logical.Beyond(tm) {
			break
		}
		want := map[[2]int64]int64{}
		for k, d := range m.model {
			if uint64(k[2]) <= tm && !cut.Beyond(uint64(k[2])) {
				want[[2]int64{k[0], k[1]}] += d
			}
		}
		maps.DeleteFunc(want, func(_ [2]int64, d int64) bool { return d == 0 })
		got := map[[2]int64]int64{}
		for _, b := range bs {
			for _, u := range b.Updates() {
				if u.Time <= tm {
					got[[2]int64{u.Key[0], u.Val[0]}] += u.Diff
				}
			}
		}
		maps.DeleteFunc(got, func(_ [2]int64, d int64) bool { return d == 0 })
		if !maps.Equal(got, want) {
			t.Fatalf("cut %v, t=%d (logical %v): trace %v, model %v", cut, tm, logical, got, want)
		}
	}
}

// TestTraceAgainstModel is the state-machine test of §8 invariants 1, 3, 4,
// 5, 7 and 8: random inserts, compaction, fuel, cuts and handle operations,
// checked after every step. Replay a failure with -rapid.seed.
func TestTraceAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newTraceMachine(t)
		t.Repeat(m.actions())
		for _, h := range m.handles {
			h.Release()
		}
		if st := m.handles[0].State(); st.Storage() != nil || st.Live() != 0 {
			t.Fatalf("after releasing every handle: storage %v, live %d", st.Storage(), st.Live())
		}
	})
}

func TestReleaseAllFreesTheTrace(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	h, w := NewSpine(ar, spine.Options{})
	bld := batch.NewBuilder(ar, 1)
	bld.Push1(1, 1, 0, 1)
	b, _ := bld.Build(frontier.At(0), frontier.At(1))
	if err := w.Insert(b); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(4) { // pending batches a final compaction would merge
		bld.Push1(int64(i), 1, i+1, 1)
		b, _ := bld.Build(frontier.At(i+1), frontier.At(i+2))
		if err := w.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	sp := h.State().Storage().(*spine.Spine)
	physical := sp.PhysicalCompaction()
	h2 := h.Clone()
	h.Release()
	h.Release() // twice is a no-op
	if h.State().Live() != 1 || h.State().Storage() == nil {
		t.Fatal("one handle left must keep the trace")
	}
	if _, err := h.BatchesThrough(frontier.Empty()); err != ErrReleased {
		t.Fatalf("read through a released handle: %v", err)
	}
	h2.Release()
	// H4: the storage saw {} as its logical compaction before being dropped,
	// and was not merged on the way out.
	if !sp.LogicalCompaction().IsEmpty() {
		t.Fatalf("storage logical compaction after last release: %v", sp.LogicalCompaction())
	}
	if st := sp.Stats(); st.Merges != 0 {
		t.Fatalf("releasing the last handle merged %d times", st.Merges)
	}
	if sp.PhysicalCompaction() != physical {
		t.Fatalf("storage physical compaction after last release: %v, want %v as before (H4)", sp.PhysicalCompaction(), physical)
	}
	if h.State().Storage() != nil {
		t.Fatal("storage kept after the last release")
	}
	// Later writes are discarded, not errors.
	b2, _ := bld.Build(frontier.At(5), frontier.At(6))
	if err := w.Insert(b2); err != nil {
		t.Fatal(err)
	}
	if sp.Upper() != frontier.At(5) {
		t.Fatalf("write after drop reached the storage: upper %v", sp.Upper())
	}
	// So are the writer's other calls: a seal, work and a close do
	// nothing, and its upper is {}, the upper of a trace no one reads.
	if err := w.Seal(frontier.At(7)); err != nil {
		t.Fatal(err)
	}
	if w.Exert(1 << 20) {
		t.Fatal("Exert after the drop reports work left")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if u := w.Upper(); !u.IsEmpty() {
		t.Fatalf("writer upper after the drop: %v, want {}", u)
	}
	if sp.Upper() != frontier.At(5) {
		t.Fatalf("a seal after the drop reached the storage: upper %v", sp.Upper())
	}
}

// TestHoldPreventsCompaction is §8 invariant 9 and 10: a live hold at h keeps
// every accumulation beyond h intact however far the other handle goes;
// releasing it lets the trace compact past h.
func TestHoldPreventsCompaction(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	h, w := NewSpine(ar, spine.Options{})
	hold := h.Clone()
	hold.SetLogicalCompaction(frontier.At(2))
	bld := batch.NewBuilder(ar, 1)
	for i := range uint64(10) {
		bld.Push1(1, int64(i), i, 1) // val i appears at time i
		b, _ := bld.Build(frontier.At(i), frontier.At(i+1))
		if err := w.Insert(b); err != nil {
			t.Fatal(err)
		}
	}
	h.SetLogicalCompaction(frontier.At(9))
	h.SetPhysicalCompaction(frontier.Empty())
	hold.SetPhysicalCompaction(frontier.Empty())
	for w.Exert(1 << 10) {
	}
	if got := h.State().Storage().LogicalCompaction(); got != frontier.At(2) {
		t.Fatalf("trace compacted to %v with a hold at {2}", got)
	}
	acc := func() int {
		bs, _ := hold.BatchesThrough(frontier.Empty())
		n := 0
		for _, b := range bs {
			for _, u := range b.Updates() {
				if u.Time <= 2 {
					n += int(u.Diff)
				}
			}
		}
		return n
	}
	if n := acc(); n != 3 {
		t.Fatalf("acc at the held time 2 = %d, want 3", n)
	}
	hold.Release()
	if got := h.State().Storage().LogicalCompaction(); got != frontier.At(9) {
		t.Fatalf("after release the trace stays at %v, want {9}", got)
	}
}
