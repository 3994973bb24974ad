package share

import (
	"errors"
	"maps"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
	"pgregory.net/rapid"
)

// shareMachine drives a publishing spine, its local handle and a point's
// readers and imports with random operations, checking each against a
// naive model: every update inserted, by (key, val, time).
type shareMachine struct {
	h     *trace.Handle
	w     *trace.Writer
	s     *Spine
	pt    *Point
	model map[[3]int64]int64
	upper uint64
	local uint64 // the local handle's logical hold
	since frontier.Frontier

	readers []*Reader
	imports []*machineImport
}

// machineImport is an import and what it has delivered so far.
type machineImport struct {
	im   *Import
	asOf uint64
	bs   []*batch.Batch
}

func newShareMachine(t *rapid.T) *shareMachine {
	effort := rapid.Int64Range(1, 8).Draw(t, "effort")
	h, w, s := NewTrace(kv, spine.Options{Effort: effort})
	m := &shareMachine{h: h, w: w, s: s, pt: NewPoint(), model: map[[3]int64]int64{}, since: frontier.Min()}
	if err := s.Attach(m.pt); err != nil {
		t.Fatal(err)
	}
	return m
}

// want is the model accumulated at t.
func (m *shareMachine) want(t uint64) map[[2]int64]int64 {
	out := map[[2]int64]int64{}
	for k, d := range m.model {
		if uint64(k[2]) <= t {
			out[[2]int64{k[0], k[1]}] += d
		}
	}
	maps.DeleteFunc(out, func(_ [2]int64, d int64) bool { return d == 0 })
	return out
}

func (m *shareMachine) insert(t *rapid.T) {
	width := rapid.Uint64Range(1, 3).Draw(t, "width")
	bld := batch.NewBuilder(kv, 8)
	for range rapid.IntRange(0, 5).Draw(t, "n") {
		k := rapid.Int64Range(0, 3).Draw(t, "k")
		v := rapid.Int64Range(0, 2).Draw(t, "v")
		tm := m.upper + rapid.Uint64Range(0, width-1).Draw(t, "dt")
		d := rapid.SampledFrom([]int64{-1, 1, 1, 2}).Draw(t, "d")
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
}

// compact is the owner allowing compaction and maintenance merging.
func (m *shareMachine) compact(t *rapid.T) {
	m.local = rapid.Uint64Range(m.local, m.upper).Draw(t, "allow")
	m.h.SetLogicalCompaction(frontier.At(m.local))
	m.h.SetPhysicalCompaction(m.w.Upper())
	m.s.Refresh()
	for range rapid.IntRange(0, 3).Draw(t, "exerts") {
		m.w.Exert(rapid.SampledFrom([]int64{1, 16, 1 << 20}).Draw(t, "fuel"))
	}
}

// admit asks for a reader or an import at a random time: refused exactly
// when the published since is beyond it.
func (m *shareMachine) admit(t *rapid.T) {
	asOf := rapid.Uint64Range(0, m.upper+1).Draw(t, "as_of")
	since := m.pt.Stats().Since
	refuse := !since.LessEqual(frontier.At(asOf))
	var err error
	if rapid.Bool().Draw(t, "import") {
		var im *Import
		im, err = m.pt.Import(frontier.At(asOf), frontier.Empty())
		if err == nil {
			m.imports = append(m.imports, &machineImport{im: im, asOf: asOf})
		}
	} else {
		var r *Reader
		r, err = m.pt.ReaderAt(frontier.At(asOf))
		if err == nil {
			m.readers = append(m.readers, r)
		}
	}
	if refuse != (err != nil) {
		t.Fatalf("admission at {%d} with since %v: err %v", asOf, since, err)
	}
	if err != nil && !errors.Is(err, ErrSinceBeyond) {
		t.Fatalf("refusal %v is not ErrSinceBeyond", err)
	}
}

// read checks a reader's view at its logical hold against the model, cut
// at its physical hold (where the publisher must keep a batch boundary) or
// at the published upper.
func (m *shareMachine) read(t *rapid.T) {
	if len(m.readers) == 0 {
		return // nothing to do: a skip would leave the fuzzer no valid action
	}
	r := rapid.SampledFrom(m.readers).Draw(t, "reader")
	cutAt := r.ReadUpper()
	if rapid.Bool().Draw(t, "at physical hold") {
		cutAt = r.PhysicalCompaction()
	}
	hold, ok := r.LogicalCompaction().Time()
	end, bounded := cutAt.Time()
	if !ok || !bounded || hold >= end {
		return // nothing to do: a skip would leave the fuzzer no valid action
	}
	bs, err := r.BatchesThrough(cutAt)
	if err != nil {
		t.Fatalf("reader at %v cut at %v: %v", r.LogicalCompaction(), cutAt, err)
	}
	if got, want := accumulate(bs, batch.Identity(), hold), m.want(hold); !maps.Equal(got, want) {
		t.Fatalf("reader at {%d} cut at {%d}: %v, want %v", hold, end, got, want)
	}
}

// drain checks an import's deliveries at a time it has completed.
func (m *shareMachine) drain(t *rapid.T) {
	if len(m.imports) == 0 {
		return // nothing to do: a skip would leave the fuzzer no valid action
	}
	mi := rapid.SampledFrom(m.imports).Draw(t, "import")
	for _, e := range mi.im.Drain(nil) {
		if e.Batch != nil {
			mi.bs = append(mi.bs, e.Batch)
		}
	}
	done, ok := mi.im.Frontier().Time()
	if !ok || done <= mi.asOf {
		return
	}
	at := rapid.Uint64Range(mi.asOf, done-1).Draw(t, "at")
	if got, want := accumulate(mi.bs, mi.im.Presentation(), at), m.want(at); !maps.Equal(got, want) {
		t.Fatalf("import at {%d} read at {%d}: %v, want %v", mi.asOf, at, got, want)
	}
	mi.im.Reader().SetLogicalCompaction(frontier.At(rapid.Uint64Range(mi.asOf, at).Draw(t, "downgrade")))
}

// downgrade moves a reader's holds forward.
func (m *shareMachine) downgrade(t *rapid.T) {
	if len(m.readers) == 0 {
		return // nothing to do: a skip would leave the fuzzer no valid action
	}
	r := rapid.SampledFrom(m.readers).Draw(t, "reader")
	hold, _ := r.LogicalCompaction().Time()
	r.SetLogicalCompaction(frontier.At(rapid.Uint64Range(hold, m.upper+1).Draw(t, "to")))
	r.SetPhysicalCompaction(r.ReadUpper())
	m.s.Refresh()
}

// release ends a reader or an import.
func (m *shareMachine) release(t *rapid.T) {
	if len(m.readers)+len(m.imports) == 0 {
		return // nothing to do: a skip would leave the fuzzer no valid action
	}
	i := rapid.IntRange(0, len(m.readers)+len(m.imports)-1).Draw(t, "which")
	if i < len(m.readers) {
		m.readers[i].Release()
		m.readers = append(m.readers[:i], m.readers[i+1:]...)
	} else {
		i -= len(m.readers)
		m.imports[i].im.Close()
		m.imports[i].im.Reader().Release()
		m.imports = append(m.imports[:i], m.imports[i+1:]...)
	}
	m.s.Refresh()
}

// check holds after every action: the since never moves back (P4), is
// applied as published, and never passes a live hold (P2).
func (m *shareMachine) check(t *rapid.T) {
	st := m.pt.Stats()
	if !m.since.LessEqual(st.Since) {
		t.Fatalf("since moved back from %v to %v", m.since, st.Since)
	}
	m.since = st.Since
	if got := m.s.LogicalCompaction(); got != st.Since {
		t.Fatalf("applied since %v, published %v", got, st.Since)
	}
	for _, r := range m.readers {
		if !st.Since.LessEqual(r.LogicalCompaction()) {
			t.Fatalf("since %v passed a reader's hold %v", st.Since, r.LogicalCompaction())
		}
	}
	for _, mi := range m.imports {
		if !st.Since.LessEqual(mi.im.Reader().LogicalCompaction()) {
			t.Fatalf("since %v passed an import's hold %v", st.Since, mi.im.Reader().LogicalCompaction())
		}
	}
	if want := len(m.readers) + 2*len(m.imports) - m.doneImports(); st.Readers != want {
		t.Fatalf("%d readers registered, want %d", st.Readers, want)
	}
}

// doneImports counts imports whose own hold is released (finished).
func (m *shareMachine) doneImports() int {
	n := 0
	for _, mi := range m.imports {
		if mi.im.Done() {
			n++
		}
	}
	return n
}

// finish releases everything: no hold may be left.
func (m *shareMachine) finish(t *rapid.T) {
	for _, r := range m.readers {
		r.Release()
	}
	for _, mi := range m.imports {
		mi.im.Close()
		mi.im.Reader().Release()
	}
	if st := m.pt.Stats(); st.Readers != 0 || st.Importers != 0 {
		t.Fatalf("after releasing everything: %d readers, %d importers", st.Readers, st.Importers)
	}
	m.h.Release()
}

func shareMachineRun(t *rapid.T) {
	m := newShareMachine(t)
	t.Repeat(map[string]func(*rapid.T){
		"insert":    m.insert,
		"compact":   m.compact,
		"admit":     m.admit,
		"read":      m.read,
		"drain":     m.drain,
		"downgrade": m.downgrade,
		"release":   m.release,
		"":          m.check,
	})
	m.finish(t)
}

// TestShareMachine runs the state machine of a publisher, its handle and
// a point's readers and imports.
func TestShareMachine(t *testing.T) { rapid.Check(t, shareMachineRun) }

// FuzzShareMachine is the same state machine driven by the fuzzer.
func FuzzShareMachine(f *testing.F) { f.Fuzz(rapid.MakeFuzz(shareMachineRun)) }
