package reduce

import (
	"math/bits"

	"github.com/tracebench/tracebench/internal/mutants"
)

// wide is an exact signed integer of 192 bits in two's complement (three
// limbs, least significant first): the accumulator of a count or a sum.
// A product of two int64 needs 127 bits, so a wide adds up more than 2^64
// such products before it could wrap: exact for any data that fits in
// memory (§6.3: sums and counts are computed exactly).
type wide [3]uint64

// wideOf returns x sign-extended.
func wideOf(x int64) wide {
	s := uint64(x >> 63)
	return wide{uint64(x), s, s}
}

// mulWide returns the exact product a*b.
func mulWide(a, b int64) wide {
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absU(a), absU(b))
	w := wide{lo, hi, 0}
	if neg {
		w = w.neg()
	}
	return w
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-x) // also right for MinInt64: 1<<63
	}
	return uint64(x)
}

// add returns w+v (exact within 192 bits).
func (w wide) add(v wide) wide {
	var c uint64
	w[0], c = bits.Add64(w[0], v[0], 0)
	w[1], c = bits.Add64(w[1], v[1], c)
	w[2], _ = bits.Add64(w[2], v[2], c)
	return w
}

// neg returns -w.
func (w wide) neg() wide {
	var c uint64
	w[0], c = bits.Add64(^w[0], 1, 0)
	w[1], c = bits.Add64(^w[1], 0, c)
	w[2], _ = bits.Add64(^w[2], 0, c)
	return w
}

// int64 returns w as an int64 and whether it fits.
func (w wide) int64() (int64, bool) {
	x := int64(w[0])
	s := uint64(x >> 63)
	return x, w[1] == s && w[2] == s
}

// negative reports whether w < 0.
// Every caller asks it of a record's accumulated count.
func (w wide) negative() bool {
	if mutants.Enabled && mutants.On(mutants.ReduceIgnoresNegative) {
		return false
	}
	return int64(w[2]) < 0
}

// fits reports whether w is within int64.
func (w wide) fits() bool {
	_, ok := w.int64()
	return ok
}

// isZero reports whether w is 0.
func (w wide) isZero() bool { return w[0]|w[1]|w[2] == 0 }

// cols writes w into three int64 columns (how a wide is kept in a row).
func (w wide) cols(dst []int64) {
	dst[0], dst[1], dst[2] = int64(w[0]), int64(w[1]), int64(w[2])
}

// wideCols reads a wide from three int64 columns.
func wideCols(src []int64) wide { return wide{uint64(src[0]), uint64(src[1]), uint64(src[2])} }
