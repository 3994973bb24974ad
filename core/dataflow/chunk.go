package dataflow

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Chunk is a message of unsorted updates of full rows of a fixed arity,
// stored columnar. Chunks are immutable once sent.
type Chunk struct {
	Arity int
	Rows  []int64 // Arity columns per update
	Times []uint64
	Diffs []int64

	// keyed, when not 0, says that every row's first column hashes to
	// worker keyed-1 of keyedPeers (Worker(HashCols(row, []int{0}),
	// keyedPeers)): an input's share made by this package says so, and an
	// exchange by the first column routes it whole without hashing its
	// rows again. Only this package sets it (keyTo), on chunks it made and
	// filled. It holds for the rows it was set on (keyedRows, keyedLen):
	// a copy of the chunk given other rows (an operator's output made
	// from its input by a struct copy) is hashed as any chunk is.
	keyed, keyedPeers int32
	keyedLen          int
	keyedRows         *int64
}

// keyTo tags c as keyed to worker w of peers by its rows' first column.
// REQUIRES: every row of c is.
func (c *Chunk) keyTo(w, peers int) {
	c.keyed, c.keyedPeers = int32(w)+1, int32(peers)
	c.keyedRows, c.keyedLen = unsafe.SliceData(c.Rows), len(c.Rows)
}

// keyedWorker returns the worker of peers that every row of c is keyed to
// by its first column, or -1 if c does not say (or says it of other rows).
func (c *Chunk) keyedWorker(peers int) int {
	if c.keyed == 0 || int(c.keyedPeers) != peers || unsafe.SliceData(c.Rows) != c.keyedRows || len(c.Rows) != c.keyedLen {
		return -1
	}
	return int(c.keyed) - 1
}

// NewChunk returns an empty chunk with room for n updates (none for an n
// below 0). A chunk of an arity below 0 has no room for rows, and Check
// refuses it.
func NewChunk(arity, n int) *Chunk {
	n = max(n, 0)
	rows := 0
	if arity > 0 && n <= math.MaxInt/arity {
		rows = n * arity
	}
	return &Chunk{Arity: arity, Rows: make([]int64, 0, rows), Times: make([]uint64, 0, n), Diffs: make([]int64, 0, n)}
}

// Len returns the number of updates.
func (c *Chunk) Len() int { return len(c.Times) }

// Row returns row i (aliasing the chunk).
func (c *Chunk) Row(i int) []int64 { return c.Rows[i*c.Arity : i*c.Arity+c.Arity] }

// Push appends an update; the row is copied.
func (c *Chunk) Push(row []int64, t frontier.Time, d int64) {
	c.Rows = append(c.Rows, row...)
	c.Times = append(c.Times, t)
	c.Diffs = append(c.Diffs, d)
}

// Check reports a malformed chunk.
func (c *Chunk) Check() error {
	// len(Rows) == len(Times)*Arity, by division: the product of a huge
	// arity and a few times wraps around (4 * 2^62 is 0 in an int).
	rowsAgree := c.Arity >= 0 && (c.Arity == 0 && len(c.Rows) == 0 ||
		c.Arity > 0 && len(c.Rows)%c.Arity == 0 && len(c.Rows)/c.Arity == len(c.Times))
	if len(c.Diffs) != len(c.Times) || !rowsAgree {
		return fmt.Errorf("dataflow: chunk columns disagree: len(Rows) %d at arity %d, len(Times) %d, len(Diffs) %d", len(c.Rows), c.Arity, len(c.Times), len(c.Diffs))
	}
	return nil
}

// HashCols hashes the given columns of row. It is the function that shards
// data across workers: a key lives on worker Worker(HashCols(row, key),
// peers).
func HashCols(row []int64, cols []int) uint64 {
	h := hashSeed
	for _, c := range cols {
		h = mix(h ^ uint64(row[c]))
	}
	return h
}

// Worker returns the worker of peers that a hash h belongs to: the high
// word of h × peers, h's place in [0, 2^64) scaled to [0, peers). Every
// place that shards by a hash (inputs, exchanges, a reduce's owner) takes
// its worker from here, so they agree. A multiply where h % peers would
// divide: a 64-bit division costs some cores 40 cycles or more, more than
// hashing the row (BenchmarkShare). The hashes are splitmix64 finalisers,
// whose high bits are as uniform as their low ones.
func Worker(h uint64, peers int) int {
	hi, _ := bits.Mul64(h, uint64(peers))
	return int(hi)
}

// split returns one chunk per worker of peers holding, in order, the
// updates i with dest[i] equal to its worker; each is allocated at its
// exact size and filled by index.
func (c *Chunk) split(peers int, dest []int32) []*Chunk {
	counts := make([]int, peers)
	for _, w := range dest {
		counts[w]++
	}
	ar := c.Arity
	parts := make([]*Chunk, peers)
	for w, k := range counts {
		// Each part is filled whole below, by index: its memory need not
		// be zeroed first (zeroing was a quarter of a split).
		parts[w] = &Chunk{Arity: ar, Rows: batch.Uninit[int64](k * ar), Times: batch.Uninit[uint64](k), Diffs: batch.Uninit[int64](k)}
		counts[w] = 0 // now: updates filled
	}
	times, diffs := c.Times[:len(dest)], c.Diffs[:len(dest)]
	if ar == 2 {
		// The common chunk, a key and a val: a row is two words.
		rows := c.Rows[:2*len(dest)]
		for i, w := range dest {
			p, k := parts[w], counts[w]
			r := p.Rows[2*k : 2*k+2]
			r[0], r[1] = rows[2*i], rows[2*i+1]
			p.Times[k], p.Diffs[k] = times[i], diffs[i]
			counts[w] = k + 1
		}
		return parts
	}
	// A row moves column by column: copy would call memmove for each row
	// of a few words.
	for i, w := range dest {
		p, k := parts[w], counts[w]
		dst, src := p.Rows[k*ar:k*ar+ar], c.Rows[i*ar:i*ar+ar]
		for j := range dst {
			dst[j] = src[j]
		}
		p.Times[k] = times[i]
		p.Diffs[k] = diffs[i]
		counts[w] = k + 1
	}
	return parts
}

// share returns the updates of c whose row hashes (hashRow) to worker w of
// peers, in order, tagged as keyed to w (a row of no columns tags nothing);
// idx is scratch, grown as needed. A pass hashes every row and writes the
// index of each kept one, branch-free; the share is then allocated at its
// size and filled by index.
func (c *Chunk) share(w, peers int, idx *[]int32) *Chunk {
	n, ar := c.Len(), c.Arity
	if ar == 2 && shareAVX && peers&(peers-1) == 0 && n >= 4 {
		return c.shareFast(w, peers, idx)
	}
	ix := slices.Grow((*idx)[:0], n)[:n]
	*idx = ix
	k := 0
	if ar == 0 {
		if Worker(hashRow(nil), peers) == w {
			for i := range ix {
				ix[i] = int32(i)
			}
			k = n
		}
	} else {
		k = keepFirst(c.Rows[:n*ar], ar, ix, w, peers)
	}
	ix = ix[:k]
	p := &Chunk{Arity: ar, Rows: batch.Uninit[int64](k * ar), Times: batch.Uninit[uint64](k), Diffs: batch.Uninit[int64](k)}
	if ar > 0 {
		p.keyTo(w, peers)
	}
	times, diffs := c.Times[:n], c.Diffs[:n]
	if ar == 2 {
		// One pass gathers the whole row, time and diff: the kept indexes
		// are read once, and each of the four streams moves forward.
		rows, pr, pt, pd := c.Rows[:2*n], p.Rows[:2*k], p.Times[:k], p.Diffs[:k]
		for j, i := range ix {
			pt[j], pd[j] = times[i], diffs[i]
			pr[2*j], pr[2*j+1] = rows[2*i], rows[2*i+1]
		}
		return p
	}
	for j, i := range ix {
		p.Times[j], p.Diffs[j] = times[i], diffs[i]
		copy(p.Rows[j*ar:j*ar+ar], c.Rows[int(i)*ar:int(i)*ar+ar])
	}
	return p
}

// shareCols are the first elements of a chunk's rows, times and diffs, as
// compress2 reads and writes them.
type shareCols struct {
	rows  *int64
	times *uint64
	diffs *int64
}

// shareFast is share for two-column rows and a power-of-two number of
// workers (more than one) on a CPU that runs share_amd64.s: one pass
// hashes four rows at a time and writes which of them are kept, a bit
// each; a second compresses the kept updates of each four into place,
// column by column, without an index per row. The last n%4 updates are
// kept in Go. The share's columns have room past their length
// (shareRoom) for the assembly's whole-vector stores. In Go, a share of
// 100,000 rows spent about 4 ns a row of the chunk hashing, 3.5
// gathering and 3.3 first touching the share's memory; the Go path takes
// 1.3 times this one's (BenchmarkShareInGo beside BenchmarkShare), and
// in two workers' steady rounds of 100,000 the share fell from 16% to
// 10% of the workers' CPU profile. What is left is mostly memory: the
// chunk read twice, the share written once into new memory.
func (c *Chunk) shareFast(w, peers int, idx *[]int32) *Chunk {
	n := c.Len()
	groups := n / 4
	// The mask bytes live in the index scratch, which they fit in a
	// sixteenth of.
	ix := slices.Grow((*idx)[:0], groups/4+1)[:groups/4+1]
	*idx = ix
	masks := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ix))), groups+1)
	sh := uint64(64 - bits.TrailingZeros(uint(peers)))
	rows, times, diffs := c.Rows[:2*n], c.Times[:n], c.Diffs[:n]
	// The assembly runs a block of groups a call: a goroutine in it
	// cannot be preempted, so a call is kept to about a tenth of a
	// millisecond whatever the chunk's size.
	blocks := (groups + shareBlock - 1) / shareBlock
	kept := make([]int, blocks) // updates kept before each block
	k := 0
	for bl := range blocks {
		g0, g1 := bl*shareBlock, min((bl+1)*shareBlock, groups)
		kept[bl] = k
		k += shareMasks2(&rows[8*g0], g1-g0, &masks[g0], sh, uint64(w))
	}
	// The tail's mask, in Go.
	tail := byte(0)
	for i := 4 * groups; i < n; i++ {
		if hashFirst(rows[2*i])>>sh == uint64(w) {
			tail |= 1 << (i - 4*groups)
			k++
		}
	}
	p := &Chunk{Arity: 2, Rows: batch.Uninit[int64](2*k + shareRoom)[:2*k], Times: batch.Uninit[uint64](k + shareRoom)[:k], Diffs: batch.Uninit[int64](k + shareRoom)[:k]}
	p.keyTo(w, peers)
	for bl := range blocks {
		g0, g1, j := bl*shareBlock, min((bl+1)*shareBlock, groups), kept[bl]
		// &p.Rows[2*j] would be out of range where the block keeps
		// nothing at the share's end: the columns' room past it is there.
		src := shareCols{&rows[8*g0], &times[4*g0], &diffs[4*g0]}
		dst := shareCols{&p.Rows[:2*j+shareRoom][2*j], &p.Times[:j+shareRoom][j], &p.Diffs[:j+shareRoom][j]}
		compress2(&src, g1-g0, &masks[g0], &dst)
	}
	j := k - bits.OnesCount8(tail)
	for i := 4 * groups; i < n; i++ {
		if tail&(1<<(i-4*groups)) != 0 {
			p.Times[j], p.Diffs[j] = times[i], diffs[i]
			p.Rows[2*j], p.Rows[2*j+1] = rows[2*i], rows[2*i+1]
			j++
		}
	}
	return p
}

// shareRoom is the words past its length that each column of a share made
// by compress2 needs: its stores are whole vectors of four words.
const shareRoom = 4

// shareBlock is the groups of four rows each call of the share's assembly
// takes (shareFast).
var shareBlock = 1 << 14

// keepFirst writes to ix, in order, the index of every row of rows (ar
// columns each, len(ix) rows) whose first column hashes to worker w of
// peers, and returns how many it wrote. It writes an index for every row
// and moves its end past the kept ones only, so the pass has no branch
// (a kept row is a coin toss a branch would mispredict half the time). The
// rows and the indexes are read and written through their base pointers:
// with a bounds check on each and the slices' lengths live beside the
// hash's constants, the loop kept the hash's state on the stack, a store
// and a reload inside each row's chain (13 ns a row; BenchmarkShare). For
// a power-of-two number of workers the worker is the hash's top bits,
// which is what Worker's multiply gives for them.
func keepFirst(rows []int64, ar int, ix []int32, w, peers int) int {
	n := len(ix)
	if n == 0 {
		return 0
	}
	_ = rows[(n-1)*ar] // every row's first column lies in rows
	rp, ip := unsafe.Pointer(unsafe.SliceData(rows)), unsafe.Pointer(unsafe.SliceData(ix))
	stride := uintptr(ar) * 8
	k := 0
	if peers&(peers-1) == 0 && peers > 1 {
		// The top log2(peers) bits of the hash, compared in place.
		sh := uint(64 - bits.TrailingZeros(uint(peers)))
		mask, want := ^uint64(0)<<sh, uint64(w)<<sh
		for i := range n {
			x := *(*int64)(unsafe.Add(rp, uintptr(i)*stride))
			*(*int32)(unsafe.Add(ip, uintptr(k)*4)) = int32(i)
			if hashFirst(x)&mask == want {
				k++
			}
		}
		return k
	}
	for i := range n {
		x := *(*int64)(unsafe.Add(rp, uintptr(i)*stride))
		*(*int32)(unsafe.Add(ip, uintptr(k)*4)) = int32(i)
		if Worker(hashFirst(x), peers) == w {
			k++
		}
	}
	return k
}

// workersOf writes to dest the worker of peers that each row of rows (ar
// columns each, len(dest) rows) hashes to by its column col alone, as
// Worker(HashCols(row, []int{col}), peers) gives it, and returns the or of
// every row's worker xor the first row's: 0 when all go to one worker. As
// in keepFirst, the rows and workers are read and written through base
// pointers, and a power-of-two number of workers takes the hash's top bits.
// REQUIRES: col < ar.
func workersOf(rows []int64, ar, col int, dest []int32, peers int) int32 {
	n := len(dest)
	if n == 0 {
		return 0
	}
	_ = rows[(n-1)*ar+col] // every row's column col lies in rows
	rp := unsafe.Pointer(&rows[col])
	dp := unsafe.Pointer(unsafe.SliceData(dest))
	stride := uintptr(ar) * 8
	first := int32(Worker(hashFirst(rows[col]), peers))
	apart := int32(0)
	if peers&(peers-1) == 0 && peers > 1 {
		sh := uint(64-bits.TrailingZeros(uint(peers))) & 63
		for i := range n {
			x := *(*int64)(unsafe.Add(rp, uintptr(i)*stride))
			w := int32(hashFirst(x) >> sh)
			*(*int32)(unsafe.Add(dp, uintptr(i)*4)) = w
			apart |= w ^ first
		}
		return apart
	}
	for i := range n {
		x := *(*int64)(unsafe.Add(rp, uintptr(i)*stride))
		w := int32(Worker(hashFirst(x), peers))
		*(*int32)(unsafe.Add(dp, uintptr(i)*4)) = w
		apart |= w ^ first
	}
	return apart
}

// hashRow is the hash an input's update is kept by: its first column's, as
// HashCols(row, []int{0}) hashes it, so an arrangement keyed by that column
// (the common index) finds every update already on the worker owning its key:
// its exchange sends nothing across, and hashes no row again (Chunk.keyed).
// A row of no columns hashes as HashCols of no columns.
func hashRow(row []int64) uint64 {
	if len(row) > 0 {
		return hashFirst(row[0])
	}
	return hashSeed
}

// hashSeed is the hash of no columns, where HashCols starts.
const hashSeed = uint64(0x9e3779b97f4a7c15)

// hashFirst is hashRow of a row whose first column is x, without slicing
// the row (a share's pass over 100,000 rows ran 15-20% slower through the
// slice).
func hashFirst(x int64) uint64 { return mix(hashSeed ^ uint64(x)) }

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// ErrBadChunk is what an exchange, an arrangement or a capture of chunks
// (Context.CaptureChunks) reports, as its dataflow's error, of a chunk it
// is sent that breaks the operator contract: nil, columns that disagree
// (Chunk.Check), another arity than its collection's (an empty chunk's
// too: a chunk's arity is its collection's whatever its length, as
// Inputs.Send refuses an empty one of another), or an update at a time
// its stream's frontier had already passed. An arrangement's exchange
// refuses such a chunk under the arrangement's name, as the arrangement
// does on one worker, so one worker and several report the same error. Inputs refuse such
// chunks at Send; one sent by an operator (the seam: OperatorBuilder) is
// refused where it is first read whole, with the operator named, and the
// reader stops there, its frontier held where it was, so that no answer
// reads as complete without the chunk's updates.
var ErrBadChunk = errors.New("chunk breaks the operator contract")

// admit checks a chunk an operator reads from stream s (produced by node
// from) before anything of it is used: not nil, its columns agreeing, of
// arity wide columns (any number above the highest of cols, with wide
// < 0), and no update at a time f, the frontier s had announced when the
// reader last looked, had passed. The time check scans the chunk
// (Frontier.FirstBefore), and is left out for a node whose chunks keep the
// contract by construction (node.kept: an input's, whose Send scanned
// them, an exchange's), so an update is scanned once on its way.
func admit(c *Chunk, from *node, wide int, cols []int, f frontier.Frontier) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: operator %q sent one %s", ErrBadChunk, from.origin().name, fmt.Sprintf(format, args...))
	}
	if c == nil {
		return bad("that is nil")
	}
	if err := c.Check(); err != nil {
		return bad("that is malformed (%v)", err)
	}
	if wide >= 0 && c.Arity != wide {
		return bad("of %d columns to a collection of %d", c.Arity, wide)
	}
	for _, k := range cols {
		if k >= c.Arity {
			return bad("of %d columns, keyed by column %d", c.Arity, k)
		}
	}
	if from.kept {
		return nil
	}
	if i := f.FirstBefore(c.Times); i >= 0 {
		return bad("with an update at time %d, which its stream's frontier %v had passed", c.Times[i], f)
	}
	return nil
}
