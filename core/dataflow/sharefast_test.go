package dataflow

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/tracebench/tracebench/internal/guardtest"
)

// On a CPU that runs share_amd64.s, a share of two-column rows among a
// power-of-two number of workers is made there (Chunk.shareFast): for
// every length around its groups of four (the tail kept in Go), blocks of
// groups a call of the default size and of three groups, 2, 4 and 8
// workers (each of them) and 64 (every ninth), keys over the whole int64
// range and at its ends, every key on one worker, and none kept, it keeps
// exactly what the Go path keeps (the rows that hash to the worker, in
// order), tagged the same.
func TestShareFastKeepsWhatGoKeeps(t *testing.T) {
	if !shareAVX {
		t.Skip("the CPU lacks AVX-512 VL/DQ or BMI2: shares are made in Go only")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ends := []int64{math.MinInt64, math.MaxInt64, 0, -1, 1, math.MinInt64 + 1, math.MaxInt64 - 1}
	lengths := []int{4, 5, 6, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099, 100_003}
	for _, n := range lengths {
		for _, keys := range []string{"random", "ends", "one"} {
			c := NewChunk(2, n)
			for i := range n {
				var k int64
				switch keys {
				case "random":
					k = int64(rng.Uint64())
				case "ends":
					k = ends[i%len(ends)]
				case "one":
					k = 42
				}
				c.Push([]int64{k, int64(rng.Uint64())}, rng.Uint64(), int64(rng.Uint64()))
			}
			for _, peers := range []int{2, 4, 8, 64} {
				for w := range peers {
					if peers == 64 && w%9 != 0 {
						continue
					}
					var idx []int32
					fast := c.shareFast(w, peers, &idx)
					was := shareBlock
					shareBlock = 3
					small := c.shareFast(w, peers, &idx)
					shareBlock = was
					if !slices.Equal(fast.Rows, small.Rows) || !slices.Equal(fast.Times, small.Times) || !slices.Equal(fast.Diffs, small.Diffs) {
						t.Fatalf("n=%d keys=%s peers=%d worker %d: blocks of 3 groups kept %d updates, of %d groups %d, or others", n, keys, peers, w, small.Len(), was, fast.Len())
					}
					shareAVX = false
					slow := c.share(w, peers, &idx)
					shareAVX = true
					if !slices.Equal(fast.Rows, slow.Rows) || !slices.Equal(fast.Times, slow.Times) || !slices.Equal(fast.Diffs, slow.Diffs) {
						t.Fatalf("n=%d keys=%s peers=%d worker %d: kept %d updates, Go keeps %d, or others", n, keys, peers, w, fast.Len(), slow.Len())
					}
					if fast.keyedWorker(peers) != w {
						t.Fatalf("n=%d keys=%s peers=%d worker %d: keyed to %d", n, keys, peers, w, fast.keyedWorker(peers))
					}
				}
			}
		}
	}
}

// compress2 stores no further past what it keeps than shareFast gives it
// room for (shareRoom words past each column), and
// shareMasks2 writes one byte a group: guard words after those bounds stay
// as they were, whichever updates of the last group are kept.
func TestShareFastStoresWithinItsRoom(t *testing.T) {
	if !shareAVX {
		t.Skip("the CPU lacks AVX-512 VL/DQ or BMI2: shares are made in Go only")
	}
	const guard = int64(0x5a5a5a5a5a5a5a5a)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, groups := range []int{1, 2, 3, 10} {
		for last := range 16 {
			n := 4 * groups
			rows := make([]int64, 2*n)
			times := make([]uint64, n)
			diffs := make([]int64, n)
			for i := range n {
				rows[2*i], rows[2*i+1] = int64(rng.Uint64()), int64(rng.Uint64())
				times[i], diffs[i] = rng.Uint64(), int64(rng.Uint64())
			}
			masks := make([]byte, groups+8)
			for i := range masks {
				masks[i] = byte(rng.Uint32())
			}
			for g := range groups {
				masks[g] &= 15
			}
			masks[groups-1] = byte(last)
			k := 0
			for g := range groups {
				k += bits.OnesCount8(masks[g])
			}
			prows := slices.Repeat([]int64{guard}, 2*k+shareRoom+4)
			ptimes := slices.Repeat([]uint64{uint64(guard)}, k+shareRoom+4)
			pdiffs := slices.Repeat([]int64{guard}, k+shareRoom+4)
			src := shareCols{&rows[0], &times[0], &diffs[0]}
			dst := shareCols{&prows[0], &ptimes[0], &pdiffs[0]}
			compress2(&src, groups, &masks[0], &dst)
			j := 0
			for i := range n {
				if masks[i/4]&(1<<(i%4)) == 0 {
					continue
				}
				if prows[2*j] != rows[2*i] || prows[2*j+1] != rows[2*i+1] || ptimes[j] != times[i] || pdiffs[j] != diffs[i] {
					t.Fatalf("groups=%d last=%04b: update %d kept as %d wrong", groups, last, i, j)
				}
				j++
			}
			for _, g := range prows[2*k+shareRoom:] {
				if g != guard {
					t.Fatalf("groups=%d last=%04b: rows written past their room", groups, last)
				}
			}
			for i := k + shareRoom; i < len(ptimes); i++ {
				if ptimes[i] != uint64(guard) || pdiffs[i] != guard {
					t.Fatalf("groups=%d last=%04b: times or diffs written past their room", groups, last)
				}
			}
			// The masks' pass writes groups bytes and no more.
			out := slices.Repeat([]byte{0xee}, groups+8)
			got := shareMasks2(&rows[0], groups, unsafe.SliceData(out), 63, 0)
			want := 0
			for g := range groups {
				var m byte
				for i := range 4 {
					if hashFirst(rows[2*(4*g+i)])>>63 == 0 {
						m |= 1 << i
					}
				}
				if out[g] != m {
					t.Fatalf("groups=%d: group %d's mask %04b, want %04b", groups, g, out[g], m)
				}
				want += bits.OnesCount8(m)
			}
			if got != want {
				t.Fatalf("groups=%d: %d kept, want %d", groups, got, want)
			}
			for _, b := range out[groups:] {
				if b != 0xee {
					t.Fatalf("groups=%d: a mask written past the last group", groups)
				}
			}
		}
	}
}

// TestShareReadsWithinItsChunk: an input's share (on amd64 with AVX-512 the
// assembly, four rows a group, the rows past the last whole group in Go)
// reads nothing past the chunk's rows, times or diffs, each of which ends
// at a guard page here (internal/guardtest; Linux only), at every length
// from 0 to 140, and keeps what the Go path keeps.
func TestShareReadsWithinItsChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for n := range 141 {
		c := &Chunk{Arity: 2, Rows: guardtest.Slice[int64](t, 2*n), Times: guardtest.Slice[uint64](t, n), Diffs: guardtest.Slice[int64](t, n)}
		for i := range n {
			c.Rows[2*i], c.Rows[2*i+1] = int64(rng.Uint64()), int64(rng.Uint64())
			c.Times[i], c.Diffs[i] = rng.Uint64(), int64(rng.Uint64())
		}
		for _, peers := range []int{2, 4, 64} {
			for _, w := range []int{0, peers - 1, rng.IntN(peers)} {
				var idx []int32
				got := c.share(w, peers, &idx)
				was := shareAVX
				shareAVX = false
				want := c.share(w, peers, &idx)
				shareAVX = was
				if !slices.Equal(got.Rows, want.Rows) || !slices.Equal(got.Times, want.Times) || !slices.Equal(got.Diffs, want.Diffs) {
					t.Fatalf("n=%d peers=%d worker %d: kept %d updates, the Go path %d, or others", n, peers, w, got.Len(), want.Len())
				}
			}
		}
	}
}
