package reduce

import (
	"slices"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// groupOut collects the corrections of one group, which a stage emits time
// by time (a retraction of the old row, then the new row), and pushes them
// into a batch.Sorted in (val, time) order when the group is done. Groups
// are visited in key order, so the corrections reach the builder in (key,
// val, time) order without a sort of the whole batch.
type groupOut struct {
	va  int // val arity
	vs  []int64
	ts  []uint64
	ds  []int64
	ord []int32
}

// add collects one correction of the group.
func (g *groupOut) add(v []int64, t frontier.Time, d int64) {
	g.vs = append(g.vs, v...)
	g.ts = append(g.ts, t)
	g.ds = append(g.ds, d)
}

func (g *groupOut) val(i int32) []int64 { return g.vs[int(i)*g.va : int(i)*g.va+g.va] }

func (g *groupOut) cmp(a, b int32) int {
	if c := cmpRow(g.val(a), g.val(b)); c != 0 {
		return c
	}
	switch ta, tb := g.ts[a], g.ts[b]; {
	case ta < tb:
		return -1
	case ta > tb:
		return 1
	}
	return 0
}

// flush pushes the collected corrections under key into bld, sorted by
// (val, time), and empties g.
func (g *groupOut) flush(bld *batch.Sorted, key []int64) {
	n := len(g.ts)
	if n == 0 {
		return
	}
	if n == 1 {
		bld.Push(key, g.vs, g.ts[0], g.ds[0])
	} else {
		g.ord = identity(g.ord, n)
		if n <= 12 {
			for i := 1; i < n; i++ {
				for j := i; j > 0 && g.cmp(g.ord[j-1], g.ord[j]) > 0; j-- {
					g.ord[j-1], g.ord[j] = g.ord[j], g.ord[j-1]
				}
			}
		} else {
			slices.SortFunc(g.ord, g.cmp)
		}
		for _, i := range g.ord {
			bld.Push(key, g.val(i), g.ts[i], g.ds[i])
		}
	}
	g.vs, g.ts, g.ds = g.vs[:0], g.ts[:0], g.ds[:0]
}
