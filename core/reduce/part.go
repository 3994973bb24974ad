package reduce

import (
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// The hashed sub-bucket widths of the hierarchical plan's
// layers, widest first: layer 0 groups records by (group, 8 bits of the
// record's hash), each layer above keeps 4 bits fewer, and the last layer
// is keyed by the group alone. A new record touches one small group per
// layer: about group size / 256 records in layer 0 and at most 16 rows in
// each layer above (§6.2; Materialize's buckets shrink by 16 per layer
// likewise).
const (
	layers     = 2 // layers below the group layer
	layer0Bits = 8 // bucket bits of layer 0
	layerStep  = 4 // bits dropped per layer
)

// layerBits returns the bucket bits of layer l < layers.
func layerBits(l int) uint { return uint(layer0Bits - layerStep*l) }

// part computes the aggregates of one kind of a reduce (all of them unless
// the reduce collates) and yields corrections keyed by group with rows
// [tag, its aggregates, hidden...].
type part struct {
	plan Plan
	pos  []int // output position of each of the part's aggregates

	top *stage // reads the input directly (every plan but Hierarchical)

	layers []*stage        // Hierarchical: layer 0 .. the group layer
	ins    []*trace.Writer // the layers' input traces
	spines []*spine.Spine  // their storage, whose merges may overflow
	merges []int           // overflowing merges of each spine already reported
	bld    []*batch.Builder
	room   []int // the updates each layer's builder was last sized for
	pres   batch.Presentation
	asOf   frontier.Frontier
}

// build chooses the plan of each part (§6.2) and builds its stages.
func (r *Reduce) build() error {
	var acc, mm []int
	for i, a := range r.aggs {
		if a.Fn.accumulable() {
			acc = append(acc, i)
		} else {
			mm = append(mm, i)
		}
	}
	minmax := Hierarchical
	if r.appendOnly {
		minmax = Monotonic
	}
	all := make([]int, len(r.aggs))
	for i := range all {
		all[i] = i
	}
	switch r.plan {
	case Basic:
		r.addPart(Basic, all)
	case Accumulable:
		if len(mm) > 0 {
			return fmt.Errorf("%w: the accumulable plan serves count and sum, not %v", ErrAggregate, r.aggs[mm[0]].Fn)
		}
		r.addPart(Accumulable, all)
	case Hierarchical, Monotonic:
		if len(acc) > 0 {
			return fmt.Errorf("%w: the %v plan serves min and max, not %v", ErrAggregate, r.plan, r.aggs[acc[0]].Fn)
		}
		r.addPart(r.plan, all)
	case Auto:
		if len(acc) > 0 {
			r.addPart(Accumulable, acc)
		}
		if len(mm) > 0 {
			r.addPart(minmax, mm)
		}
	default:
		return fmt.Errorf("%w: unknown plan %v", ErrAggregate, r.plan)
	}
	na := len(r.aggs)
	ka := r.in.Arity.Key
	if len(r.parts) == 2 {
		colAr := batch.Arity{Key: ka, Val: 2 + na}
		h, w := trace.NewSpine(colAr, r.spine)
		r.collate = r.newStage(kindCollate, nil, h, batch.Identity(), colAr, 1+na)
		r.collate.asOf = frontier.Min()
		r.colIn, r.colBld = w, batch.NewBuilder(colAr, 0)
	}
	r.okBld = batch.NewSorted(batch.Arity{Key: ka, Val: na}, 0)
	r.errBld = batch.NewBuilder(batch.Arity{Key: 1}, 0)
	return nil
}

// addPart adds a part computing the aggregates at positions pos.
func (r *Reduce) addPart(plan Plan, pos []int) {
	aggs := make([]Aggregate, len(pos))
	nsum := 0
	for j, i := range pos {
		aggs[j] = r.aggs[i]
		if aggs[j].Fn == Sum {
			nsum++
		}
	}
	p := &part{plan: plan, pos: pos, pres: r.in.Pres, asOf: r.asOf}
	in, na := r.in, len(aggs)
	switch plan {
	case Accumulable:
		p.top = r.newStage(kindAccum, aggs, in.Reader, in.Pres, in.Arity, accWidth(na, nsum))
	case Basic:
		p.top = r.newStage(kindBasic, aggs, in.Reader, in.Pres, in.Arity, 1+na)
	case Monotonic:
		p.top = r.newStage(kindMonotonic, aggs, in.Reader, in.Pres, in.Arity, 1+na)
	case Hierarchical:
		up := make([]Aggregate, na)
		for j, a := range aggs {
			up[j] = Aggregate{Fn: a.Fn, Col: 1 + j}
		}
		inAr := batch.Arity{Key: in.Arity.Key + 1, Val: in.Arity.Val}
		for l := 0; l <= layers; l++ {
			if l == layers {
				inAr.Key = in.Arity.Key
			}
			sp := spine.New(inAr, r.spine)
			h, w := trace.New(sp)
			k, a := kindLayerUp, up
			if l == 0 {
				k, a = kindLayer, aggs
			}
			st := r.newStage(k, a, h, batch.Identity(), inAr, 1+na)
			st.asOf = frontier.Min()
			p.layers = append(p.layers, st)
			p.ins = append(p.ins, w)
			p.spines = append(p.spines, sp)
			p.merges = append(p.merges, 0)
			p.bld = append(p.bld, batch.NewBuilder(inAr, 0))
			p.room = append(p.room, 0)
			inAr.Val = 1 + na
		}
	}
	if p.top != nil {
		p.top.shared = true // it reads the reduce's input, as another part may
	}
	r.parts = append(r.parts, p)
}

// retire retires [r.lower, upper) of the part given the input's new
// batches, and returns the part's corrections.
func (p *part) retire(r *Reduce, news []*batch.Batch, upper frontier.Frontier) (*batch.Batch, error) {
	if p.top != nil {
		return p.top.retire(news, upper)
	}
	lower := r.lower
	var out *batch.Batch
	for l, st := range p.layers {
		// Each layer's input builder has room for the step's pushes
		// (layer 0 takes every update, a layer above one correction per
		// group below), sized at the first step (an install) and again at
		// any step larger than it was sized for: pushes past its room
		// would grow its columns by copying, a quarter at a time at these
		// lengths.
		n := 0
		if l == 0 {
			for _, b := range news {
				n += b.Len()
			}
		} else {
			n = out.Len()
		}
		p.bld[l] = sized(p.bld[l], &p.room[l], n)
		bld := p.bld[l]
		if l == 0 {
			p.rekeyInput(bld, news)
		} else {
			rekeyLayer(bld, out, l)
		}
		b, err := bld.Build(lower, upper)
		b, err = keepOverflow(&r.overflow, b, err)
		if err != nil {
			return nil, fmt.Errorf("reduce: layer %d input [%v, %v): %w", l, lower, upper, err)
		}
		if err := p.ins[l].Insert(b); err != nil {
			return nil, fmt.Errorf("reduce: layer %d input [%v, %v): %w", l, lower, upper, err)
		}
		if out, err = st.retire(nonEmpty(b), upper); err != nil {
			return nil, err
		}
	}
	p.mergeOverflows(r, lower)
	for _, b := range news {
		if b.Saturated() && !r.satMarked {
			// Layer 0 took a count a merge of the input saturated (an
			// import's snapshot): the error at the earliest time the
			// part emits (docs/semantics.md §1.1), once a Reduce.
			if t, ok := earliest(out); ok {
				r.overflow = append(r.overflow, t)
				r.satMarked = true
			}
			break
		}
	}
	return out, nil
}

// sized returns a builder with room for n pushes: bld, when n is within
// the room it was last sized for (*room), else a new one sized for n. A
// builder keeps its columns' capacity from one build to the next, so a
// builder sized for a step holds its room for every step no larger.
func sized(bld *batch.Builder, room *int, n int) *batch.Builder {
	if n <= *room {
		return bld
	}
	*room = n
	return batch.NewBuilder(bld.Arity(), n)
}

// earliest returns the least time of b's updates, and false when it has
// none.
func earliest(b *batch.Batch) (frontier.Time, bool) {
	var t frontier.Time
	found := false
	for c := b.Cursor(); c.KeyValid(); c.StepKey() {
		for ; c.ValValid(); c.StepVal() {
			ts, _ := c.Updates()
			if m := slices.Min(ts); !found || m < t {
				t, found = m, true
			}
		}
	}
	return t, found
}

// mergeOverflows appends lower to r.overflow once per merge of a layer's
// input trace that overflowed since the last retire. Such a merge
// consolidates a record's updates of times already retired, compacted
// to one, and keeps the record saturated: a later recomputation of its
// bucket cannot see its count leave int64, so the merge reports it, at
// the earliest time the reduce can still emit (docs/semantics.md §1.1,
// as an arrangement's merge does at its frontier).
func (p *part) mergeOverflows(r *Reduce, lower frontier.Frontier) {
	t, ok := lower.Time()
	for l, sp := range p.spines {
		n := sp.Overflows()
		if n != p.merges[l] && ok {
			r.overflow = append(r.overflow, slices.Repeat([]frontier.Time{t}, n-p.merges[l])...)
		}
		p.merges[l] = n
	}
}

// rekeyInput pushes the input's new updates, presented, into layer 0:
// key = group ++ [the record's bucket], val = the record. All updates of
// a record land in one layer-0 group, so its count there is exact.
func (p *part) rekeyInput(bld *batch.Builder, news []*batch.Batch) {
	key := make([]int64, 0, 8)
	mask := uint64(1)<<layerBits(0) - 1
	for _, b := range news {
		for c := b.Cursor(); c.KeyValid(); c.StepKey() {
			key = append(key[:0], c.Key()...)
			key = append(key, 0)
			for ; c.ValValid(); c.StepVal() {
				v := c.Val()
				key[len(key)-1] = int64(hashRecord(v) & mask)
				ts, ds := c.Updates()
				for i, t := range ts {
					if t, ok := p.pres.Present(t); ok {
						bld.Push(key, v, p.asOf.AdvanceBy(t), ds[i])
					}
				}
			}
		}
	}
}

// rekeyLayer pushes layer l-1's corrections into layer l: the bucket
// shrinks by layerStep bits, or is dropped for the group layer.
func rekeyLayer(bld *batch.Builder, b *batch.Batch, l int) {
	key := make([]int64, 0, 8)
	for c := b.Cursor(); c.KeyValid(); c.StepKey() {
		key = append(key[:0], c.Key()...)
		n := len(key) - 1
		if l < layers {
			key[n] >>= layerStep
		} else {
			key = key[:n]
		}
		for ; c.ValValid(); c.StepVal() {
			ts, ds := c.Updates()
			for i, t := range ts {
				bld.Push(key, c.Val(), t, ds[i])
			}
		}
	}
}

func (p *part) release() {
	if p.top != nil {
		p.top.release()
		return
	}
	for l, st := range p.layers {
		st.release()
		st.in.Release()
		p.ins[l].Close()
	}
}

// hashRecord hashes a record for its layer-0 bucket (splitmix64's
// finaliser folded over the columns). Any function of the record keeps
// all its updates in one bucket; a hash keeps buckets even.
func hashRecord(v []int64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range v {
		z := h ^ uint64(x) + 0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		h = z ^ (z >> 31)
	}
	return h
}
