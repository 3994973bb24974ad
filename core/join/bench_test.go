package join

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// joinRows are the two sides of a benchmark join, as unsorted (key, val)
// rows at time 0 with diff 1: the left side has n distinct keys, the right
// side n rows whose keys each repeat fanout times, so every right row
// matches one left row, n/fanout left rows match fanout right rows each,
// and the output has n rows.
type joinRows struct {
	n, fanout      int
	lk, lv, rk, rv []int64
}

func makeJoinRows(n, fanout int) *joinRows {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(fanout)))
	j := &joinRows{n: n, fanout: fanout, lk: make([]int64, n), lv: make([]int64, n), rk: make([]int64, n), rv: make([]int64, n)}
	lperm, rperm := rng.Perm(n), rng.Perm(n)
	for i := range n {
		j.lk[i], j.lv[i] = int64(lperm[i]), rng.Int64()
		j.rk[i], j.rv[i] = int64(rperm[i]/fanout), rng.Int64()
	}
	return j
}

// arrange builds one side's batch from its rows.
func arrangeRows(tb testing.TB, keys, vals []int64) *batch.Batch {
	b := batch.NewBuilder(ar11, len(keys))
	for i := range keys {
		b.Push1(keys[i], vals[i], 0, 1)
	}
	out, err := b.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// hashJoin is the limit: a Go map hash join of the same rows into the same
// output layout (key, left val, right val; time; diff), building on the
// side with distinct keys and probing with the other.
func hashJoin(j *joinRows, out *dataflow.Chunk) {
	m := make(map[int64]int32, j.n)
	for i, k := range j.lk {
		m[k] = int32(i)
	}
	out.Rows, out.Times, out.Diffs = out.Rows[:0], out.Times[:0], out.Diffs[:0]
	for i, k := range j.rk {
		if x, ok := m[k]; ok {
			out.Rows = append(out.Rows, k, j.lv[x], j.rv[i])
			out.Times = append(out.Times, 0)
			out.Diffs = append(out.Diffs, 1)
		}
	}
}

var benchSizes = []int{100_000, 1_000_000}

func benchShort(b *testing.B, n int) {
	if testing.Short() && n > 100_000 {
		b.Skip("n=1e6 in -short")
	}
}

func BenchmarkHashJoinLimit(b *testing.B) {
	for _, n := range benchSizes {
		for _, f := range []int{1, 4} {
			b.Run(fmt.Sprintf("n=%d/fanout=%d", n, f), func(b *testing.B) {
				benchShort(b, n)
				rows := makeJoinRows(n, f)
				out := dataflow.NewChunk(3, n)
				b.ReportAllocs()
				for b.Loop() {
					hashJoin(rows, out)
				}
				if out.Len() != n {
					b.Fatalf("limit joined %d rows, want %d", out.Len(), n)
				}
				reportPerRow(b, n)
			})
		}
	}
}

// limitNanos times the limit on rows (best of three), for x-limit.
func limitNanos(rows *joinRows) float64 {
	out := dataflow.NewChunk(3, rows.n)
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		hashJoin(rows, out)
		best = min(best, time.Since(start))
	}
	return float64(best.Nanoseconds())
}

func reportPerRow(b *testing.B, n int) {
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per/float64(2*n), "ns/in-row")
	b.ReportMetric(per/float64(n), "ns/out-row")
}

// BenchmarkJoinKernel is the binary join kernel on the limit's rows:
// index=imported joins two batches arranged beforehand (read through an
// as_of presentation, as imported indexes are); index=direct arranges both
// sides from the unsorted rows inside the timed loop, then joins. x-limit
// is the time per join over the limit's, measured on the same rows in the
// same run.
func BenchmarkJoinKernel(b *testing.B) {
	for _, n := range benchSizes {
		for _, f := range []int{1, 4} {
			for _, index := range []string{"imported", "direct"} {
				b.Run(fmt.Sprintf("n=%d/fanout=%d/index=%s", n, f, index), func(b *testing.B) {
					benchShort(b, n)
					rows := makeJoinRows(n, f)
					limit := limitNanos(rows)
					var la, ra *batch.Batch
					pres := batch.Identity()
					if index == "imported" {
						la, ra = arrangeRows(b, rows.lk, rows.lv), arrangeRows(b, rows.rk, rows.rv)
						pres = batch.Presentation{Since: frontier.At(0), Until: frontier.Empty()}
					}
					out := NewSink(3)
					b.ReportAllocs()
					for b.Loop() {
						if index == "direct" {
							la, ra = arrangeRows(b, rows.lk, rows.lv), arrangeRows(b, rows.rk, rows.rv)
						}
						out.Recycle()
						joinOnce(b, la, ra, pres, out)
					}
					if got, _ := out.Len(); got != n {
						b.Fatalf("kernel joined %d rows, want %d", got, n)
					}
					reportPerRow(b, n)
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/limit, "x-limit")
				})
			}
		}
	}
}

// joinOnce joins two batches that arrive on the two streams of a fresh
// join over fresh traces.
func joinOnce(b *testing.B, la, ra *batch.Batch, pres batch.Presentation, out *Sink) {
	lh, lw := trace.NewSpine(ar11, spine.Options{})
	rh, rw := trace.NewSpine(ar11, spine.Options{})
	j, err := NewBinary(Side{Reader: lh, Pres: pres, Arity: ar11}, Side{Reader: rh, Pres: pres, Arity: ar11}, BinaryOptions{AsOf: frontier.At(0)})
	if err != nil {
		b.Fatal(err)
	}
	if err := j.Step(nil, nil, out); err != nil {
		b.Fatal(err)
	}
	if err := lw.Insert(la); err != nil {
		b.Fatal(err)
	}
	if err := rw.Insert(ra); err != nil {
		b.Fatal(err)
	}
	if err := j.Step([]*batch.Batch{la}, []*batch.Batch{ra}, out); err != nil {
		b.Fatal(err)
	}
	j.Release()
}

// BenchmarkDeltaKernel is the two-way delta join of the limit's rows,
// already arranged: path 0 feeds the left batch through a half join with
// the right trace, path 1 the right batch through one with the left, and
// the tie-break leaves each pair to exactly one path. No intermediate
// arrangement is built.
func BenchmarkDeltaKernel(b *testing.B) {
	for _, n := range benchSizes {
		for _, f := range []int{1, 4} {
			b.Run(fmt.Sprintf("n=%d/fanout=%d", n, f), func(b *testing.B) {
				benchShort(b, n)
				rows := makeJoinRows(n, f)
				limit := limitNanos(rows)
				la, ra := arrangeRows(b, rows.lk, rows.lv), arrangeRows(b, rows.rk, rows.rv)
				// Both batches at time 1 past as_of 0, so no as_of dropping.
				la, ra = la.WithDesc(frontier.Description{Lower: frontier.At(0), Upper: frontier.At(2), Since: frontier.Min()}),
					ra.WithDesc(frontier.Description{Lower: frontier.At(0), Upper: frontier.At(2), Since: frontier.Min()})
				out := NewSink(3)
				b.ReportAllocs()
				for b.Loop() {
					out.Recycle()
					deltaOnce(b, la, ra, out)
				}
				if got, _ := out.Len(); got != n {
					b.Fatalf("delta joined %d rows, want %d", got, n)
				}
				reportPerRow(b, n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/limit, "x-limit")
			})
		}
	}
}

func deltaOnce(b *testing.B, la, ra *batch.Batch, out *Sink) {
	lh, lw := trace.NewSpine(ar11, spine.Options{})
	rh, rw := trace.NewSpine(ar11, spine.Options{})
	if err := lw.Insert(la); err != nil {
		b.Fatal(err)
	}
	if err := rw.Insert(ra); err != nil {
		b.Fatal(err)
	}
	id := batch.Identity()
	p0, err := NewPath(PathOptions{Source: 0, SourcePres: id, SourceArity: ar11, AsOf: frontier.At(0),
		Stages: []Stage{{Lookup: rh, Pres: id, Arity: ar11, Relation: 1, StreamKey: []int{0}}}})
	if err != nil {
		b.Fatal(err)
	}
	p1, err := NewPath(PathOptions{Source: 1, SourcePres: id, SourceArity: ar11, AsOf: frontier.At(0),
		Stages: []Stage{{Lookup: lh, Pres: id, Arity: ar11, Relation: 0, StreamKey: []int{0}}}})
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDelta([]*Path{p0, p1}, []batch.Presentation{id, id})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Step([][]*batch.Batch{{la}, {ra}}, nil, []frontier.Frontier{frontier.At(2), frontier.At(2)}, out); err != nil {
		b.Fatal(err)
	}
	d.Release()
}

// BenchmarkJoinSteadyKernel: rounds of updates into both sides of a
// Binary over two 1:1 indexes of n rows (n = 1e6, 1e5 in -short), the
// traces held at a fixed size: each round changes the vals of round keys
// per side (a retraction and an insertion each), arranges the round's
// batches, inserts them (merge work included), joins them with the other
// side cut at what it acknowledged, and lets the traces compact. ns/update
// is per input update of both sides.
func BenchmarkJoinSteadyKernel(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	for _, round := range []int{1, 1000} {
		b.Run(fmt.Sprintf("n=%d/round=%d", n, round), func(b *testing.B) {
			rows := makeJoinRows(n, 1)
			sides := [2]struct {
				h    *trace.Handle
				w    *trace.Writer
				keys []int64
				vals []int64
			}{}
			sides[0].keys, sides[0].vals = rows.lk, slices.Clone(rows.lv)
			sides[1].keys, sides[1].vals = rows.rk, slices.Clone(rows.rv)
			for i := range sides {
				sides[i].h, sides[i].w = trace.NewSpine(ar11, spine.Options{})
				if err := sides[i].w.Insert(arrangeRows(b, sides[i].keys, sides[i].vals)); err != nil {
					b.Fatal(err)
				}
			}
			id := batch.Identity()
			j, err := NewBinary(Side{sides[0].h, id, ar11}, Side{sides[1].h, id, ar11}, BinaryOptions{AsOf: frontier.At(0)})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Release()
			out := NewSink(3)
			if err := j.Step(nil, nil, out); err != nil { // the preload: the initial n matches
				b.Fatal(err)
			}
			preloaded := j.Stats().Matches()
			rng := rand.New(rand.NewPCG(7, uint64(round)))
			bld := batch.NewBuilder(ar11, 2*round)
			tm := uint64(1)
			var batches [2]*batch.Batch
			b.ReportAllocs()
			for b.Loop() {
				out.Recycle()
				for i := range sides {
					s := &sides[i]
					for range round {
						x := rng.IntN(n)
						bld.Push1(s.keys[x], s.vals[x], tm, -1)
						s.vals[x] = rng.Int64()
						bld.Push1(s.keys[x], s.vals[x], tm, 1)
					}
					bat, err := bld.Build(frontier.At(tm), frontier.At(tm+1))
					if err != nil {
						b.Fatal(err)
					}
					if err := s.w.Insert(bat); err != nil {
						b.Fatal(err)
					}
					batches[i] = bat
				}
				if err := j.Step(batches[:1], batches[1:], out); err != nil {
					b.Fatal(err)
				}
				tm++
				j.Compact(frontier.At(tm), frontier.At(tm))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(4*round), "ns/update")
			b.ReportMetric(float64(j.Stats().Matches()-preloaded)/float64(b.N)/float64(4*round), "matches/update")
			b.ReportMetric(float64(sides[0].h.State().Storage().Stats().Batches), "batches")
		})
	}
}
