package batch

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/internal/guardtest"
)

// TestScatterStaysInItsSlices: the bucket pass's scatter (on amd64 the
// assembly loop, scatterBlock records a call, which reads the bucket number
// and count of the record 32 ahead to prefetch its slot) touches nothing
// past the records, their bucket numbers, the counts or the scratch, each
// of which ends at a guard page here (internal/guardtest; Linux only), and
// moves every record where scatterGo does: at every length around the
// look-ahead with one to 2^16 buckets, and with blocks of 1, 3, 32 and 100
// records at every length to 260, so that each block's look-ahead ends
// where the next block starts.
func TestScatterStaysInItsSlices(t *testing.T) {
	was := scatterBlock
	defer func() { scatterBlock = was }()
	rng := rand.New(rand.NewPCG(3, 11))
	run := func(n, nb int) {
		recs, ids, counts := guardtest.Slice[rec](t, n), guardtest.Slice[uint16](t, n), guardtest.Slice[uint32](t, nb+1)
		for i := range recs {
			recs[i] = rec{int64(rng.Uint64()), int64(rng.Uint64()), rng.Uint64(), int64(i)}
			ids[i] = uint16(rng.IntN(nb))
			if i%5 == 0 {
				ids[i] = uint16(nb - 1) // the last bucket, whose count is the slice's last
			}
			counts[int(ids[i])+1]++
		}
		for d := 1; d <= nb; d++ {
			counts[d] += counts[d-1]
		}
		wantCounts, want := slices.Clone(counts), make([]rec, n)
		scatterGo(unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(want)), unsafe.Pointer(unsafe.SliceData(ids)), unsafe.Pointer(unsafe.SliceData(wantCounts)), n)
		scratch := guardtest.Slice[rec](t, n)
		scatter(unsafe.Pointer(unsafe.SliceData(recs)), unsafe.Pointer(unsafe.SliceData(scratch)), unsafe.Pointer(unsafe.SliceData(ids)), unsafe.Pointer(unsafe.SliceData(counts)), n)
		if !slices.Equal(scratch, want) || !slices.Equal(counts, wantCounts) {
			t.Fatalf("n=%d, %d buckets, blocks of %d: scatter differs from scatterGo", n, nb, scatterBlock)
		}
	}
	for n := range 100 {
		for _, nb := range []int{1, 3, 256, 1 << 16} {
			run(n, nb)
		}
	}
	for _, block := range []int{1, 3, 32, 100} {
		scatterBlock = block
		for n := range 261 {
			run(n, 7)
		}
	}
}

// TestEmitRangeStaysInItsSlices: the column writer (on amd64 the assembly
// loop, which prefetches the columns 128 records ahead) reads nothing past
// the records and writes nothing past the columns, each ending at a guard
// page (the diffs, the block's last column, and the val offsets, the
// offsets' last), over lengths around its chunking, called chunk by chunk
// as the seal calls it, and writes what emitRangeGo writes.
func TestEmitRangeStaysInItsSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	for n := 1; n <= 300; n++ {
		src := make([]rec, n)
		for i := range src {
			// Keys and vals from small ranges, so that both repeat in runs.
			src[i] = rec{rng.Int64N(int64(n/4 + 1)), rng.Int64N(3), rng.Uint64N(4), 1 + rng.Int64N(5)}
		}
		slices.SortFunc(src, cmpRec)
		src = slices.CompactFunc(src, func(a, b rec) bool { return cmpRec(a, b) == 0 })
		m := len(src)
		recs := guardtest.Slice[rec](t, m)
		copy(recs, src)
		for _, chunk := range []int{1, 7, 256, m} {
			emit := func(words []int64, offs []uint32, f func([]rec, int, unsafe.Pointer, unsafe.Pointer, int, int, int, int64, int64) (int, int, int64, int64)) [4]int64 {
				nk, nv, pk, pv := 0, 0, ^recs[0].k, int64(0)
				w, o := unsafe.Pointer(unsafe.SliceData(words)), unsafe.Pointer(unsafe.SliceData(offs))
				for lo := 0; lo < m; lo += chunk {
					nk, nv, pk, pv = f(recs[:min(lo+chunk, m)], lo, w, o, m, nk, nv, pk, pv)
				}
				return [4]int64{int64(nk), int64(nv), pk, pv}
			}
			words, offs := guardtest.Slice[int64](t, 4*m), guardtest.Slice[uint32](t, 2*(m+1))
			wantWords, wantOffs := make([]int64, 4*m), make([]uint32, 2*(m+1))
			got, want := emit(words, offs, emitRange), emit(wantWords, wantOffs, emitRangeGo)
			if got != want {
				t.Fatalf("n=%d, chunks of %d: emitRange returned %v, emitRangeGo %v", m, chunk, got, want)
			}
			nk, nv := int(got[0]), int(got[1])
			for _, c := range []struct {
				name      string
				got, want any
			}{
				{"keys", words[:nk], wantWords[:nk]},
				{"vals", words[m : m+nv], wantWords[m : m+nv]},
				{"times and diffs", words[2*m:], wantWords[2*m:]},
				{"key offsets", offs[:nk], wantOffs[:nk]},
				{"val offsets", offs[m+1 : m+1+nv], wantOffs[m+1 : m+1+nv]},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Fatalf("n=%d, chunks of %d: %s: emitRange wrote %v, emitRangeGo %v", m, chunk, c.name, c.got, c.want)
				}
			}
		}
	}
}
