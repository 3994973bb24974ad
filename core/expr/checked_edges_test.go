package expr

import (
	"math"
	"math/big"
	"testing"
)

// TestCheckedArithmeticOnEdges: Add, Sub, Mul, Neg, Div and Rem over
// every pair of a grid of values at and around 0, ±1, ±2^31, ±2^32 and
// the int64 bounds give the exact result, or report that it leaves
// int64 (or that the divisor is 0), as math/big computes it.
func TestCheckedArithmeticOnEdges(t *testing.T) {
	const mn, mx = math.MinInt64, math.MaxInt64
	grid := []int64{mn, mn + 1, mn + 2, mn / 2, -(1 << 32), -(1 << 31) - 1, -(1 << 31), -3037000500, -3037000499,
		-2, -1, 0, 1, 2, 3037000499, 3037000500, 1 << 31, 1<<31 + 1, 1 << 32, mx / 2, mx - 1, mx}
	fits := func(x *big.Int) bool { return x.IsInt64() }
	for _, a := range grid {
		A := big.NewInt(a)
		if v, ok := Neg(a); ok != fits(new(big.Int).Neg(A)) || ok && v != -a {
			t.Errorf("Neg(%d) = %d, %v", a, v, ok)
		}
		for _, b := range grid {
			B := big.NewInt(b)
			for _, c := range []struct {
				name  string
				f     func(a, b int64) (int64, bool)
				exact *big.Int
			}{
				{"Add", Add, new(big.Int).Add(A, B)},
				{"Sub", Sub, new(big.Int).Sub(A, B)},
				{"Mul", Mul, new(big.Int).Mul(A, B)},
			} {
				v, ok := c.f(a, b)
				if ok != fits(c.exact) || ok && v != c.exact.Int64() {
					t.Errorf("%s(%d, %d) = %d, %v; exact %v", c.name, a, b, v, ok, c.exact)
				}
			}
			for _, c := range []struct {
				name string
				f    func(a, b int64) (int64, Code)
				op   func(z, x, y *big.Int) *big.Int
			}{
				{"Div", Div, (*big.Int).Quo},
				{"Rem", Rem, (*big.Int).Rem},
			} {
				v, code := c.f(a, b)
				switch {
				case b == 0:
					if code != DivisionByZero {
						t.Errorf("%s(%d, 0) = %d, %v; want division by zero", c.name, a, v, code)
					}
				default:
					exact := c.op(new(big.Int), A, B)
					if want := map[bool]Code{true: OK, false: Overflow}[fits(exact)]; code != want || code == OK && v != exact.Int64() {
						t.Errorf("%s(%d, %d) = %d, %v; exact %v", c.name, a, b, v, code, exact)
					}
				}
			}
		}
	}
}
