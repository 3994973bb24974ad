package join

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// source is how a join reads one relation: a reader of its trace (a fresh
// one per consumer), the presentation, its stream's new batches and the
// stream's frontier. The same kernels read both kinds.
type source struct {
	reader   func() trace.Reader
	pres     batch.Presentation
	next     func() []*batch.Batch
	frontier func() frontier.Frontier
}

// published is a relation maintained in a publishing spine and imported
// at as_of, as a query in another runtime reads an index.
type published struct {
	h   *trace.Handle
	w   *trace.Writer
	s   *share.Spine
	im  *share.Import
	evs []share.Event
}

func (p *published) source() source {
	return source{
		reader: func() trace.Reader { return p.im.Reader().CloneReader() },
		pres:   p.im.Presentation(),
		next: func() []*batch.Batch {
			p.evs = p.im.Drain(p.evs[:0])
			var out []*batch.Batch
			for _, e := range p.evs {
				if e.Batch != nil {
					out = append(out, e.Batch)
				}
			}
			return out
		},
		frontier: p.im.Frontier,
	}
}

func directSource(r *rel) source {
	return source{
		reader:   func() trace.Reader { return r.h.Clone() },
		pres:     batch.Identity(),
		next:     func() []*batch.Batch { return r.deliver(1 << 30) },
		frontier: r.frontier,
	}
}

// joins is a binary join of sources 0 and 1 and a delta join of all three.
type joins struct {
	src    []source
	binary *Binary
	delta  *Delta
	bout   *Sink
	dout   *Sink
}

func newJoins(t *testing.T, src []source, asOf uint64) *joins {
	t.Helper()
	j := &joins{src: src, bout: NewSink(3), dout: NewSink(4)}
	var err error
	j.binary, err = NewBinary(Side{src[0].reader(), src[0].pres, ar11}, Side{src[1].reader(), src[1].pres, ar11}, BinaryOptions{AsOf: frontier.At(asOf)})
	if err != nil {
		t.Fatal(err)
	}
	var paths []*Path
	pres := make([]batch.Presentation, len(src))
	for i := range src {
		pres[i] = src[i].pres
		var stages []Stage
		for k := range src {
			if k != i {
				stages = append(stages, Stage{Lookup: src[k].reader(), Pres: src[k].pres, Arity: ar11, Relation: k, StreamKey: []int{0}})
			}
		}
		p, err := NewPath(PathOptions{Source: i, SourcePres: src[i].pres, SourceArity: ar11, AsOf: frontier.At(asOf), Stages: stages, Final: &Project{Cols: pathOrder(len(src), i)}})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if j.delta, err = NewDelta(paths, pres); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.binary.Release(); j.delta.Release() })
	return j
}

func (j *joins) step(t *testing.T) {
	t.Helper()
	oks := make([][]*batch.Batch, len(j.src))
	fs := make([]frontier.Frontier, len(j.src))
	for i, s := range j.src {
		oks[i], fs[i] = s.next(), s.frontier()
	}
	if err := j.binary.Step(oks[0], oks[1], j.bout); err != nil {
		t.Fatal(err)
	}
	j.binary.Compact(fs[0], fs[1])
	if err := j.delta.Step(oks, nil, fs, j.dout); err != nil {
		t.Fatal(err)
	}
}

// TestImportedEqualsDirect (§8.19): the binary and the delta join over
// indexes published by another trace's owner, compacted up to as_of before
// the import and following their uppers after, give at every time from
// as_of on what the same joins give over arrangements built from the raw
// updates, and what the nested-loop join gives.
func TestImportedEqualsDirect(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 4))
		asOf := uint64(1 + rng.IntN(3))
		rounds := asOf + uint64(2+rng.IntN(5))
		nkeys := 1 + rng.IntN(4)
		direct := make([]*rel, 3)
		pubs := make([]*published, 3)
		for i := range 3 {
			direct[i] = newRel(ar11)
			h, w, s := share.NewTrace(ar11, spine.Options{})
			pubs[i] = &published{h: h, w: w, s: s}
		}
		seal := func(tm uint64) {
			for i := range 3 {
				ups := randomUpdates(rng, rng.IntN(6), nkeys, tm)
				ups = append(ups, retractSome(rng, direct[i].all, rng.IntN(2), tm)...)
				b := direct[i].seal(t, ups, tm+1)
				if err := pubs[i].w.Insert(b); err != nil {
					t.Fatal(err)
				}
			}
		}
		for tm := range asOf {
			seal(tm)
		}
		for _, p := range pubs {
			p.h.SetLogicalCompaction(frontier.At(asOf))
			p.h.SetPhysicalCompaction(frontier.At(asOf))
			for range 4 {
				p.w.Exert(1 << 10)
			}
			im, err := p.s.LocalPoint().Import(frontier.At(asOf), frontier.Empty())
			if err != nil {
				t.Fatal(err)
			}
			p.im = im
		}
		var dsrc, isrc []source
		for i := range 3 {
			dsrc = append(dsrc, directSource(direct[i]))
			isrc = append(isrc, pubs[i].source())
		}
		dj, ij := newJoins(t, dsrc, asOf), newJoins(t, isrc, asOf)
		for tm := asOf; tm < rounds; tm++ {
			dj.step(t)
			ij.step(t)
			seal(tm)
			for _, p := range pubs { // the index's owner allows compaction to its upper
				p.h.SetLogicalCompaction(frontier.At(tm + 1))
				p.h.SetPhysicalCompaction(frontier.At(tm + 1))
				p.w.Exert(int64(1 + rng.IntN(64)))
			}
		}
		for i := range direct {
			if err := pubs[i].w.Insert(direct[i].seal(t, nil, rounds+1)); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			dj.step(t)
			ij.step(t)
		}
		for tm := asOf; tm < rounds; tm++ {
			label := fmt.Sprintf("seed %d as_of %d time %d", seed, asOf, tm)
			want2 := naiveJoin(acc(direct[0].all, tm), acc(direct[1].all, tm))
			want3 := naiveN([]map[[2]int64]int64{acc(direct[0].all, tm), acc(direct[1].all, tm), acc(direct[2].all, tm)})
			for _, c := range []struct {
				name string
				want map[string]int64
				out  *Sink
			}{{"binary direct", want2, dj.bout}, {"binary imported", want2, ij.bout}, {"delta direct", want3, dj.dout}, {"delta imported", want3, ij.dout}} {
				if d := diffMaps(c.want, rowDiffs(c.out, tm)); d != "" {
					t.Fatalf("%s: %s differs from the nested-loop join:\n%s", label, c.name, d)
				}
			}
		}
	}
}
