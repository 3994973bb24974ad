package join

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// upd is one update of a relation with a one-column key and val.
type upd struct {
	key, val int64
	t        uint64
	d        int64
}

var ar11 = batch.Arity{Key: 1, Val: 1}

// mustBatch builds a batch of ups over [lower, upper).
func mustBatch(t testing.TB, ar batch.Arity, ups []upd, lower, upper uint64) *batch.Batch {
	t.Helper()
	b := batch.NewBuilder(ar, len(ups))
	for _, u := range ups {
		b.Push([]int64{u.key}, []int64{u.val}, u.t, u.d)
	}
	out, err := b.Build(frontier.At(lower), frontier.At(upper))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stream is a trace and the batches its stream has not delivered yet.
type stream struct {
	h     *trace.Handle
	w     *trace.Writer
	queue []*batch.Batch
	upper uint64
}

func newStream(ar batch.Arity) stream {
	h, w := trace.NewSpine(ar, spine.Options{})
	return stream{h: h, w: w}
}

// insert inserts b, the batch of [upper, to), into the trace and queues it
// on the stream when it is not empty.
func (r *stream) insert(t testing.TB, b *batch.Batch, to uint64) {
	t.Helper()
	if err := r.w.Insert(b); err != nil {
		t.Fatal(err)
	}
	r.upper = to
	if !b.IsEmpty() {
		r.queue = append(r.queue, b)
	}
}

// deliver removes and returns the first n queued batches.
func (r *stream) deliver(n int) []*batch.Batch {
	n = min(n, len(r.queue))
	out := slices.Clone(r.queue[:n])
	r.queue = r.queue[n:]
	return out
}

// frontier is the stream frontier: the lower of the first undelivered
// batch, or the sealed upper.
func (r *stream) frontier() frontier.Frontier {
	if len(r.queue) > 0 {
		return r.queue[0].Lower()
	}
	return frontier.At(r.upper)
}

// rel is a relation of one-column keys and vals kept in a trace, with the
// batches its stream has not delivered yet.
type rel struct {
	stream
	all []upd
}

func newRel(ar batch.Arity) *rel { return &rel{stream: newStream(ar)} }

// seal inserts the updates of [upper, to) into the trace and queues the
// batch on the stream when it is not empty.
func (r *rel) seal(t testing.TB, ups []upd, to uint64) *batch.Batch {
	t.Helper()
	b := mustBatch(t, ar11, ups, r.upper, to)
	r.insert(t, b, to)
	r.all = append(r.all, ups...)
	return b
}

// acc accumulates ups at t: (key, val) -> diff.
func acc(ups []upd, t uint64) map[[2]int64]int64 {
	m := map[[2]int64]int64{}
	for _, u := range ups {
		if u.t <= t {
			k := [2]int64{u.key, u.val}
			m[k] += u.d
			if m[k] == 0 {
				delete(m, k)
			}
		}
	}
	return m
}

// rowDiffs accumulates the ok rows of a sink at t, keyed by the row's text.
func rowDiffs(s *Sink, t uint64) map[string]int64 {
	m := map[string]int64{}
	for _, c := range s.Oks() {
		for i := range c.Len() {
			if c.Times[i] <= t {
				k := fmt.Sprint(c.Row(i))
				m[k] += c.Diffs[i]
				if m[k] == 0 {
					delete(m, k)
				}
			}
		}
	}
	return m
}

// errDiffs accumulates the error rows of a sink at t by code.
func errDiffs(s *Sink, t uint64) map[int64]int64 {
	m := map[int64]int64{}
	for _, c := range s.Errs() {
		for i := range c.Len() {
			if c.Times[i] <= t {
				m[c.Rows[i]] += c.Diffs[i]
				if m[c.Rows[i]] == 0 {
					delete(m, c.Rows[i])
				}
			}
		}
	}
	return m
}

// naiveJoin is the nested-loop join of two accumulations: key, left val,
// right val -> product of counts.
func naiveJoin(l, r map[[2]int64]int64) map[string]int64 {
	m := map[string]int64{}
	for lk, ld := range l {
		for rk, rd := range r {
			if lk[0] == rk[0] {
				k := fmt.Sprint([]int64{lk[0], lk[1], rk[1]})
				m[k] += ld * rd
				if m[k] == 0 {
					delete(m, k)
				}
			}
		}
	}
	return m
}

func diffMaps[K comparable](want, got map[K]int64) string {
	var sb strings.Builder
	keys := slices.Collect(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if want[k] != got[k] {
			fmt.Fprintf(&sb, "  %v: want %d, got %d\n", k, want[k], got[k])
		}
	}
	return sb.String()
}

// randomUpdates draws n updates at time t over nkeys (at most 5) keys: few
// keys give large fan-out, a small val range gives duplicates, and keys
// and vals sit at the int64 limits.
func randomUpdates(rng *rand.Rand, n, nkeys int, t uint64) []upd {
	vals := []int64{0, 1, 2, math.MaxInt64, math.MinInt64, -7}
	keys := []int64{3, math.MinInt64, -1, math.MaxInt64, 0}
	out := make([]upd, 0, n)
	for range n {
		d := int64(rng.IntN(5)) - 2
		if d == 0 {
			d = 1
		}
		out = append(out, upd{key: keys[rng.IntN(min(nkeys, len(keys)))], val: vals[rng.IntN(len(vals))], t: t, d: d})
	}
	return out
}

// retractSome returns retractions of up to n earlier updates at time t.
func retractSome(rng *rand.Rand, all []upd, n int, t uint64) []upd {
	var out []upd
	for range n {
		if len(all) == 0 {
			break
		}
		u := all[rng.IntN(len(all))]
		out = append(out, upd{key: u.key, val: u.val, t: t, d: -u.d})
	}
	return out
}

// minTime returns the least time of the sink's ok and error rows (MaxUint64
// for none): no output may be earlier than as_of (K1).
func minTime(s *Sink) uint64 {
	m := uint64(math.MaxUint64)
	for _, cs := range [][]*dataflow.Chunk{s.Oks(), s.Errs()} {
		for _, c := range cs {
			for _, t := range c.Times {
				m = min(m, t)
			}
		}
	}
	return m
}
