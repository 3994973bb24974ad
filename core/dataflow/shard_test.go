package dataflow

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// Each worker of a runtime keeps its share of every chunk sent to an input
// (Inputs.Send, Chunk.share): exactly the updates whose row hashes to it,
// in order, as a row-by-row filter keeps them, so the shares of all
// workers are the chunk, each update once. A share says which worker its
// rows are keyed to by their first column (so an exchange by that column
// need not hash them again), for its own worker count only, and a row of
// no columns says nothing.
func TestShareKeepsItsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Rows of two columns take a path of their own; rows of none all go
	// to one worker; a power-of-two number of workers (2, 4, 8) compares
	// the hash's top bits, any other goes through Worker.
	for _, ar := range []int{0, 1, 2, 3} {
		for _, peers := range []int{2, 3, 4, 5, 8} {
			for _, n := range []int{0, 1, 7, 1000} {
				c := NewChunk(ar, n)
				for range n {
					row := []int64{rng.Int64N(50), rng.Int64(), rng.Int64N(3)}
					c.Push(row[:ar], rng.Uint64N(4), rng.Int64N(5)-2)
				}
				total := 0
				for w := range peers {
					want := NewChunk(ar, 0)
					for i := range n {
						if Worker(HashCols(c.Row(i), []int{0}[:min(ar, 1)]), peers) == w {
							want.Push(c.Row(i), c.Times[i], c.Diffs[i])
						}
					}
					in := NewInputs(w, peers, func(*Dataflow) {})
					if err := in.Send("x", c); err != nil {
						t.Fatal(err)
					}
					var got *Chunk
					switch h := in.logs["x"].history; {
					case len(h) == 0 && want.Len() == 0:
						continue
					case len(h) != 1:
						t.Fatalf("arity %d peers=%d n=%d worker %d: kept %d chunks, want 1 of %d updates", ar, peers, n, w, len(h), want.Len())
					default:
						got = h[0]
					}
					if got.Arity != ar || !slices.Equal(got.Rows, want.Rows) || !slices.Equal(got.Times, want.Times) || !slices.Equal(got.Diffs, want.Diffs) {
						t.Fatalf("arity %d peers=%d n=%d worker %d: kept %+v, want %+v", ar, peers, n, w, got, want)
					}
					wantKeyed := w
					if ar == 0 {
						wantKeyed = -1
					}
					if k := got.keyedWorker(peers); k != wantKeyed {
						t.Fatalf("arity %d peers=%d worker %d: share keyed to %d, want %d", ar, peers, w, k, wantKeyed)
					}
					if k := got.keyedWorker(peers + 1); k != -1 {
						t.Fatalf("arity %d peers=%d worker %d: share keyed to %d of %d workers", ar, peers, w, k, peers+1)
					}
					total += got.Len()
				}
				if total != n {
					t.Fatalf("arity %d peers=%d n=%d: the shares hold %d updates", ar, peers, n, total)
				}
			}
		}
	}
	// A chunk made elsewhere says nothing, and one worker keeps the chunk
	// itself.
	c := chunkOf(2, 3)
	if k := c.keyedWorker(2); k != -1 {
		t.Fatalf("a chunk not made by Send keyed to worker %d", k)
	}
	in := NewInputs(0, 1, func(*Dataflow) {})
	if err := in.Send("x", c); err != nil {
		t.Fatal(err)
	}
	if h := in.logs["x"].history; len(h) != 1 || h[0] != c {
		t.Fatalf("one worker kept %v, not the chunk sent", h)
	}
}

// chunkOf returns a chunk of n two-column rows (i, 10i) at time 0.
func chunkOf(ar, n int) *Chunk {
	c := NewChunk(ar, n)
	for i := range int64(n) {
		c.Push([]int64{i, 10 * i}[:ar], 0, 1)
	}
	return c
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

// An exchange by one column takes each row's worker from a pass of its own
// (workersOf): the worker Worker(HashCols(row, []int{col}), peers) gives,
// for power-of-two worker counts (the hash's top bits), others and one,
// and it says whether any row goes elsewhere than the first.
func TestWorkersOfAgreesWithWorker(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, peers := range []int{1, 2, 3, 4, 5, 8} {
		for _, ar := range []int{1, 2, 3} {
			for _, n := range []int{1, 7, 1000} {
				for _, same := range []bool{false, true} {
					c := NewChunk(ar, n)
					for range n {
						row := []int64{rng.Int64(), rng.Int64N(50), rng.Int64()}
						if same {
							row = []int64{7, 7, 7}
						}
						c.Push(row[:ar], 5, 1)
					}
					for col := range ar {
						dest := make([]int32, n)
						apart := workersOf(c.Rows, ar, col, dest, peers)
						one := true
						for i := range n {
							if want := int32(Worker(HashCols(c.Row(i), []int{col}), peers)); dest[i] != want {
								t.Fatalf("peers=%d arity %d n=%d column %d: row %d to worker %d, want %d", peers, ar, n, col, i, dest[i], want)
							}
							one = one && dest[i] == dest[0]
						}
						if (apart == 0) != one {
							t.Fatalf("peers=%d arity %d n=%d column %d: apart %d, every row to one worker %v", peers, ar, n, col, apart, one)
						}
					}
				}
			}
		}
	}
}

// BenchmarkRoute is an exchange's routing pass over a chunk of 100,000
// two-column rows keyed by their second column, for two workers
// (workersOf, as exchangeSend runs it on every chunk it cannot route by a
// share's tag): a hash of every row's key column and its worker written
// down. Reports ns per row.
func BenchmarkRoute(b *testing.B) {
	c := benchChunk()
	dest := make([]int32, c.Len())
	for b.Loop() {
		workersOf(c.Rows, 2, 1, dest, 2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Len()), "ns/row")
}

// benchChunk is the chunk BenchmarkShare and BenchmarkRoute pass over:
// 100,000 rows of two random columns.
func benchChunk() *Chunk {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewChunk(2, n)
	for range n {
		c.Push([]int64{rng.Int64N(1 << 40), rng.Int64N(1 << 40)}, 5, 1)
	}
	return c
}

// BenchmarkShare keeps one worker's share of a chunk of 100,000 two-column
// rows sent to a runtime of two workers (Chunk.share, as Inputs.Send keeps
// it): a hash of every row's first column, then the kept rows gathered,
// in share_amd64.s where the CPU runs it (Chunk.shareFast). Each worker
// does this for itself, at once. Reports ns per row of the whole chunk.
func BenchmarkShare(b *testing.B) {
	benchShare(b, shareAVX)
}

// BenchmarkShareInGo is BenchmarkShare on the Go path, which a CPU without
// AVX-512 VL/DQ or BMI2 takes: a reference beside the assembly.
func BenchmarkShareInGo(b *testing.B) {
	benchShare(b, false)
}

func benchShare(b *testing.B, fast bool) {
	c := benchChunk()
	var idx []int32
	was := shareAVX
	shareAVX = fast
	defer func() { shareAVX = was }()
	for b.Loop() {
		c.share(0, 2, &idx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Len()), "ns/row")
}

// An exchange by the first column routes a share as its tag says, without
// hashing its rows; an exchange by another column, a tag made for another
// worker count, or a tag on a copy of the chunk given other rows (a copy
// of them, or one more appended in place) is hashed as any chunk is, so
// an operator that makes its output from its input by a struct copy is not
// routed by a tag its new rows do not earn. (The shares Send makes
// are tagged truly; the chunks here carry tags that disagree with their
// rows, so that where each lands shows which way it was routed.)
func TestExchangeRoutesAShareByItsTag(t *testing.T) {
	// Rows whose first column hashes to worker 0 of 2, and whose second
	// column does too.
	var rows []int64
	for k := int64(0); len(rows) < 10; k++ {
		if Worker(HashCols([]int64{k}, []int{0}), 2) == 0 {
			rows = append(rows, k, k)
		}
	}
	more := rows[8:10] // a row a copy appends in the tagged rows' spare room
	rows = rows[:8:10]
	for _, tc := range []struct {
		name       string
		key        int
		keyed      int // the worker the tag names
		peers      int
		copied     string // "rows": the tagged chunk copied with a copy of its rows; "appended": with a row appended in place
		wantWorker int
	}{
		{"first column, tag trusted", 0, 1, 2, "", 1},
		{"second column, rows hashed", 1, 1, 2, "", 0},
		{"tag for three workers, rows hashed", 0, 1, 3, "", 0},
		{"tag of other rows, rows hashed", 0, 1, 2, "rows", 0},
		{"tag of fewer rows, rows hashed", 0, 1, 2, "appended", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := NewHub(2)
			envs := []*Env{testEnv(t, 0, 2, hub), testEnv(t, 1, 2, hub)}
			// The tag is read by an exchange of a stream not known to
			// be keyed (a filtered input's, say): the input's stream is
			// arranged as one.
			dfs, kept := arrangeOnWorkersKeyed(t, envs, tc.key, nil, false)
			c := &Chunk{Arity: 2, Rows: rows, Times: make([]uint64, len(rows)/2), Diffs: make([]int64, len(rows)/2)}
			for i := range c.Diffs {
				c.Diffs[i] = 1
			}
			c.keyTo(tc.keyed, tc.peers)
			switch d := *c; tc.copied {
			case "rows":
				d.Rows = slices.Clone(c.Rows)
				c = &d
			case "appended":
				d.Rows = append(c.Rows, more...) // the same array, one row longer
				d.Times, d.Diffs = append(c.Times, 0), append(c.Diffs, 1)
				c = &d
			}
			l, err := envs[0].Inputs.log("in", 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := envs[0].Inputs.keep("in", l, c); err != nil {
				t.Fatal(err)
			}
			for _, env := range envs {
				if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				for _, df := range dfs {
					df.Step()
				}
			}
			for w, r := range kept {
				bs, err := r.BatchesThrough(frontier.At(1))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, b := range bs {
					n += b.Len()
				}
				want := 0
				if w == tc.wantWorker {
					want = len(c.Times)
				}
				if n != want {
					t.Fatalf("worker %d holds %d updates, want %d (all on worker %d)", w, n, want, tc.wantWorker)
				}
			}
			for _, df := range dfs {
				df.Drop()
			}
		})
	}
}
