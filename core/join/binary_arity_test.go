package join

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// wupd is one update of a relation of any key and val arity.
type wupd struct {
	key, val []int64
	t        uint64
	d        int64
}

// wrel is rel for any arity.
type wrel struct {
	stream
	ar  batch.Arity
	all []wupd
}

func newWrel(ar batch.Arity) *wrel { return &wrel{stream: newStream(ar), ar: ar} }

func (r *wrel) seal(t testing.TB, ups []wupd, to uint64) {
	t.Helper()
	b := batch.NewBuilder(r.ar, len(ups))
	for _, u := range ups {
		b.Push(u.key, u.val, u.t, u.d)
	}
	out, err := b.Build(frontier.At(r.upper), frontier.At(to))
	if err != nil {
		t.Fatal(err)
	}
	r.insert(t, out, to)
	r.all = append(r.all, ups...)
}

// random draws n updates at t: few distinct keys, so that a key has many
// vals on both sides (a hot key's cross product spans many steps), and
// some updates of one (key, val) repeated or retracted.
func (r *wrel) random(rng *rand.Rand, n int, t uint64) []wupd {
	out := make([]wupd, 0, n)
	for range n {
		if len(r.all) > 0 && rng.IntN(5) == 0 {
			u := r.all[rng.IntN(len(r.all))]
			out = append(out, wupd{u.key, u.val, t, -u.d})
			continue
		}
		key, val := make([]int64, r.ar.Key), make([]int64, r.ar.Val)
		for i := range key {
			key[i] = rng.Int64N(2)
		}
		for i := range val {
			val[i] = rng.Int64N(4) - 1
		}
		out = append(out, wupd{key, val, t, rng.Int64N(3) + 1})
	}
	return out
}

// accW accumulates ups at t: (key, val) text -> diff, with the rows.
func accW(ups []wupd, t uint64) map[string]wupd {
	m := map[string]wupd{}
	for _, u := range ups {
		if u.t > t {
			continue
		}
		k := fmt.Sprint(u.key, u.val)
		a, ok := m[k]
		if !ok {
			a = wupd{key: u.key, val: u.val}
		}
		a.d += u.d
		m[k] = a
		if a.d == 0 {
			delete(m, k)
		}
	}
	return m
}

// TestBinaryYieldsInsideKeysOfEveryArity runs budgeted binary joins (a
// budget of 1 to 9 pairs a step) of sides with keys of 0 to 2 columns and
// vals of 0 to 2, few keys with many vals each, a preloaded history, the
// streams delivered with random lag and the traces compacted and exerted
// between steps: the output is the nested-loop join at every time, no
// step stops before its budget unless it is done, and none matches more
// than its budget and one pair of values' updates beyond it. A resumed
// key that joined a pair of values twice or skipped one fails here.
func TestBinaryYieldsInsideKeysOfEveryArity(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 12
	}
	for _, ka := range []int{0, 1, 2} {
		for _, va := range [][2]int{{0, 0}, {1, 0}, {0, 2}, {2, 1}} {
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(seed, uint64(ka*16+va[0]*4+va[1])))
				label := fmt.Sprintf("key arity %d, vals %v, seed %d", ka, va, seed)
				yieldRun(t, rng, label, batch.Arity{Key: ka, Val: va[0]}, batch.Arity{Key: ka, Val: va[1]})
			}
		}
	}
}

func yieldRun(t *testing.T, rng *rand.Rand, label string, a0, a1 batch.Arity) {
	rounds := uint64(3 + rng.IntN(5))
	asOf := uint64(rng.IntN(2))
	l, r := newWrel(a0), newWrel(a1)
	pres := func() batch.Presentation {
		if rng.IntN(2) == 0 {
			return batch.Identity()
		}
		return batch.Presentation{Since: frontier.At(asOf), Until: frontier.Empty()}
	}
	j, err := NewBinary(Side{Reader: l.h, Pres: pres(), Arity: a0}, Side{Reader: r.h, Pres: pres(), Arity: a1}, BinaryOptions{AsOf: frontier.At(asOf)})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	// A step matches at most one pair of values' updates past its
	// budget: a (key, val) has at most one update a time in a batch.
	over := int64(rounds * rounds)
	out := NewSink(a0.Key + a0.Val + a1.Val)
	steps := 0
	step := func(lb, rb []*batch.Batch) bool {
		budget := int64(1 + rng.IntN(9))
		b := budget
		done, err := j.step(lb, rb, out, &b)
		if err != nil {
			t.Fatalf("%s: step %d: %v", label, steps, err)
		}
		matched := budget - b
		if !done && matched < budget {
			t.Fatalf("%s: step %d stopped at %d pairs, budget %d, not done", label, steps, matched, budget)
		}
		if matched >= budget+over {
			t.Fatalf("%s: step %d matched %d pairs, budget %d", label, steps, matched, budget)
		}
		steps++
		j.Compact(l.frontier(), r.frontier())
		for _, x := range []*wrel{l, r} {
			if rng.IntN(2) == 0 {
				x.w.Exert(int64(1 + rng.IntN(64)))
			}
		}
		return done
	}
	pre := uint64(rng.IntN(3))
	for tm := range pre {
		l.seal(t, l.random(rng, rng.IntN(10), tm), tm+1)
		r.seal(t, r.random(rng, rng.IntN(10), tm), tm+1)
	}
	for tm := pre; tm < rounds; tm++ {
		for _, x := range []*wrel{l, r} {
			if rng.IntN(4) > 0 {
				x.seal(t, x.random(rng, rng.IntN(12), tm), tm+1)
			}
		}
		step(l.deliver(rng.IntN(3)), r.deliver(rng.IntN(3)))
	}
	for _, x := range []*wrel{l, r} {
		if x.upper < rounds {
			x.seal(t, x.random(rng, rng.IntN(6), x.upper), rounds)
		}
	}
	for done := step(l.deliver(1<<30), r.deliver(1<<30)); !done; done = step(nil, nil) {
		if steps > 1<<16 {
			t.Fatalf("%s: batches left to join after %d steps", label, steps)
		}
	}
	for tm := asOf; tm < rounds; tm++ {
		want := map[string]int64{}
		la, ra := accW(l.all, tm), accW(r.all, tm)
		for _, lu := range la {
			for _, ru := range ra {
				if slices.Equal(lu.key, ru.key) {
					k := fmt.Sprint(slices.Concat(lu.key, lu.val, ru.val))
					want[k] += lu.d * ru.d
					if want[k] == 0 {
						delete(want, k)
					}
				}
			}
		}
		if d := diffMaps(want, rowDiffs(out, tm)); d != "" {
			t.Fatalf("%s: as_of %d, output at %d differs from the nested-loop join:\n%s", label, asOf, tm, d)
		}
	}
	if _, n := out.Len(); n != 0 {
		t.Fatalf("%s: %d error rows", label, n)
	}
}
