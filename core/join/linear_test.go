package join

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// linear3 is the linear join R0 ⋈ R1 ⋈ R2 on the key: a Binary of R0 and
// R1, its output arranged by the key (key | v0 v1) at every step up to the
// frontier nothing earlier can still come at, and a Binary of that
// arrangement and R2.
type linear3 struct {
	first, second *Binary
	mid           *Sink
	midH          *trace.Handle
	midW          *trace.Writer
	midUpper      uint64
	pending       []midRow
	out           *Sink
}

type midRow struct {
	row [3]int64
	t   uint64
	d   int64
}

var ar12 = batch.Arity{Key: 1, Val: 2}

func newLinear3(t *testing.T, rels []*rel, asOf uint64) *linear3 {
	t.Helper()
	l := &linear3{mid: NewSink(3), out: NewSink(4)}
	l.midH, l.midW = trace.NewSpine(ar12, spine.Options{})
	var err error
	id := batch.Identity()
	if l.first, err = NewBinary(Side{rels[0].h.Clone(), id, ar11}, Side{rels[1].h.Clone(), id, ar11}, BinaryOptions{AsOf: frontier.At(asOf)}); err != nil {
		t.Fatal(err)
	}
	if l.second, err = NewBinary(Side{l.midH, id, ar12}, Side{rels[2].h.Clone(), id, ar11}, BinaryOptions{AsOf: frontier.At(asOf)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.first.Release(); l.second.Release() })
	return l
}

// step runs the linear join over the relations' new batches; fs are the
// relations' stream frontiers after delivery.
func (l *linear3) step(t *testing.T, oks [][]*batch.Batch, fs []frontier.Frontier) {
	t.Helper()
	if err := l.first.Step(oks[0], oks[1], l.mid); err != nil {
		t.Fatal(err)
	}
	for _, c := range l.mid.Oks() {
		for i := range c.Len() {
			r := c.Row(i)
			l.pending = append(l.pending, midRow{[3]int64{r[0], r[1], r[2]}, c.Times[i], c.Diffs[i]})
		}
	}
	l.mid.Recycle()
	var mids []*batch.Batch
	if f := fs[0].Meet(fs[1]); frontier.At(l.midUpper).Less(f) {
		up := f.MustTime()
		b := batch.NewBuilder(ar12, len(l.pending))
		keep := l.pending[:0]
		for _, p := range l.pending {
			if p.t < up {
				b.Push(p.row[:1], p.row[1:], p.t, p.d)
			} else {
				keep = append(keep, p)
			}
		}
		l.pending = keep
		mb, err := b.Build(frontier.At(l.midUpper), f)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.midW.Insert(mb); err != nil {
			t.Fatal(err)
		}
		l.midUpper = up
		if !mb.IsEmpty() {
			mids = append(mids, mb)
		}
	}
	if err := l.second.Step(mids, oks[2], l.out); err != nil {
		t.Fatal(err)
	}
	l.first.Compact(fs[0], fs[1])
	l.second.Compact(frontier.At(l.midUpper), fs[2])
}

// TestDeltaEqualsLinearEqualsNestedLoop runs a three-way delta join and
// the linear join of the same relations on the same deliveries, and
// compares both with the nested-loop join at every time.
func TestDeltaEqualsLinearEqualsNestedLoop(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 3))
		rounds := uint64(3 + rng.IntN(7))
		asOf := uint64(rng.IntN(3))
		nkeys := 1 + rng.IntN(4)
		pres := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
		q := newDeltaQuery(t, 3, asOf, pres, nil)
		lin := newLinear3(t, q.rels, asOf)
		run := func(lag func() int) {
			oks := make([][]*batch.Batch, 3)
			fs := make([]frontier.Frontier, 3)
			for i, r := range q.rels {
				oks[i] = r.deliver(lag())
				fs[i] = r.frontier()
			}
			if err := q.delta.Step(oks, nil, fs, q.out); err != nil {
				t.Fatal(err)
			}
			lin.step(t, oks, fs)
			for _, r := range q.rels {
				r.h.SetLogicalCompaction(frontier.At(r.upper))
				r.h.SetPhysicalCompaction(frontier.At(r.upper))
				for range rng.IntN(3) {
					r.w.Exert(int64(1 + rng.IntN(64)))
				}
			}
		}
		for tm := range rounds {
			for _, r := range q.rels {
				if rng.IntN(4) != 0 {
					ups := randomUpdates(rng, rng.IntN(6), nkeys, tm)
					r.seal(t, append(ups, retractSome(rng, r.all, rng.IntN(2), tm)...), tm+1)
				}
			}
			run(func() int { return rng.IntN(3) })
		}
		for _, r := range q.rels {
			r.seal(t, nil, rounds+1)
		}
		run(func() int { return 1 << 30 })
		run(func() int { return 1 << 30 })
		label := fmt.Sprintf("seed %d as_of %d", seed, asOf)
		q.check(t, label+" delta", asOf, rounds)
		for tm := asOf; tm < rounds; tm++ {
			if d := diffMaps(rowDiffs(q.out, tm), rowDiffs(lin.out, tm)); d != "" {
				t.Fatalf("%s: linear differs from delta at %d (want = delta):\n%s", label, tm, d)
			}
		}
	}
}
