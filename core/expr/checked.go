package expr

import (
	"math"
	"math/bits"
)

// Add returns a+b and whether it fits in an int64 (ok false: the sum
// overflowed and s is the wrapped value). For diffs as well as values.
func Add(a, b int64) (s int64, ok bool) {
	s = a + b
	return s, (a^s)&(b^s) >= 0
}

// Sub returns a-b and whether it fits in an int64.
func Sub(a, b int64) (d int64, ok bool) {
	d = a - b
	return d, (a^b)&(a^d) >= 0
}

// Mul returns a*b and whether it fits in an int64 (ok false: the product
// overflowed and p is the wrapped value). For diffs as well as values: a
// join's output diff is Mul of its inputs' diffs.
func Mul(a, b int64) (p int64, ok bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	// The signed high word: the unsigned one minus the corrections for
	// negative operands (two's complement).
	shi := int64(hi)
	if a < 0 {
		shi -= b
	}
	if b < 0 {
		shi -= a
	}
	p = int64(lo)
	return p, shi == p>>63
}

// Neg returns -a and whether it fits in an int64 (only MinInt64 does not).
func Neg(a int64) (int64, bool) { return -a, a != math.MinInt64 }

// Div returns a/b truncated toward zero, or the error: DivisionByZero when
// b is 0, Overflow for MinInt64 / -1.
func Div(a, b int64) (int64, Code) {
	switch {
	case b == 0:
		return 0, DivisionByZero
	case b == -1:
		if a == math.MinInt64 {
			return 0, Overflow
		}
		return -a, OK
	}
	return a / b, OK
}

// Rem returns a%b with the sign of a (Go's %), or DivisionByZero when b is 0.
// a % -1 is 0 for every a.
func Rem(a, b int64) (int64, Code) {
	switch b {
	case 0:
		return 0, DivisionByZero
	case -1:
		return 0, OK
	}
	return a % b, OK
}
