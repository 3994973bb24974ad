package dataflow

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A runtime splits an input's chunk once (Chunk.Shard) and gives worker i
// part i (Inputs.SendShard): each worker must keep exactly what Send keeps
// from the whole chunk, in the same order, so the split changes no answer.
func TestShardKeepsWhatSendKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Rows of two columns take a path of their own; rows of none all go
	// to one worker.
	for _, ar := range []int{0, 2, 3} {
		for _, peers := range []int{2, 3, 5} {
			for _, n := range []int{0, 1, 7, 1000} {
				c := NewChunk(ar, n)
				for range n {
					row := []int64{rng.Int64N(50), rng.Int64(), rng.Int64N(3)}
					c.Push(row[:ar], rng.Uint64N(4), rng.Int64N(5)-2)
				}
				parts := c.Shard(peers, make([]int32, n))
				if len(parts) != peers {
					t.Fatalf("arity %d peers=%d n=%d: %d parts", ar, peers, n, len(parts))
				}
				total := 0
				for w, p := range parts {
					var sent, shard []*Chunk
					in := NewInputs(w, peers, func(*Dataflow) {})
					if err := in.Send("x", c); err != nil {
						t.Fatal(err)
					}
					sent = in.logs["x"].history
					in2 := NewInputs(w, peers, func(*Dataflow) {})
					if err := in2.SendShard("x", p); err != nil {
						t.Fatal(err)
					}
					shard = in2.logs["x"].history
					if len(sent) != len(shard) {
						t.Fatalf("peers=%d n=%d worker %d: Send kept %d chunks, SendShard %d", peers, n, w, len(sent), len(shard))
					}
					for i := range sent {
						a, b := sent[i], shard[i]
						if a.Arity != b.Arity || !slices.Equal(a.Rows, b.Rows) || !slices.Equal(a.Times, b.Times) || !slices.Equal(a.Diffs, b.Diffs) {
							t.Fatalf("arity %d peers=%d n=%d worker %d: SendShard kept %+v, Send %+v", ar, peers, n, w, b, a)
						}
					}
					total += p.Len()
				}
				if total != n {
					t.Fatalf("peers=%d n=%d: parts hold %d updates", peers, n, total)
				}
			}
		}
	}
}

// TestWorkerSpreadsHashes: Worker maps every hash into [0, peers), the
// ends of the hash range to the first and last worker, and the hashes of
// consecutive keys (as HashCols makes them) evenly: each worker's share of
// 100,000 keys within 3% of its fair share.
func TestWorkerSpreadsHashes(t *testing.T) {
	const n = 100_000
	for peers := 1; peers <= 7; peers++ {
		if w := Worker(0, peers); w != 0 {
			t.Fatalf("peers=%d: hash 0 on worker %d", peers, w)
		}
		if w := Worker(^uint64(0), peers); w != peers-1 {
			t.Fatalf("peers=%d: the greatest hash on worker %d", peers, w)
		}
		counts := make([]int, peers)
		for k := range int64(n) {
			w := Worker(HashCols([]int64{k}, []int{0}), peers)
			if w < 0 || w >= peers {
				t.Fatalf("peers=%d: key %d on worker %d", peers, k, w)
			}
			counts[w]++
		}
		for w, c := range counts {
			if fair := n / peers; c < fair*97/100 || c > fair*103/100 {
				t.Fatalf("peers=%d: worker %d holds %d of %d keys (fair share %d)", peers, w, c, n, fair)
			}
		}
	}
}

// BenchmarkShard splits a chunk of 100,000 two-column rows between two
// workers by the hash of their first column, as an input sharded across a
// runtime's workers is (Chunk.Shard). Reports ns/row.
func BenchmarkShard(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewChunk(2, n)
	for range n {
		c.Push([]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}, 5, 1)
	}
	dest := make([]int32, n)
	for b.Loop() {
		c.Shard(2, dest)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
}
