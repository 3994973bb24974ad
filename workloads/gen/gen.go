package gen

import (
	"math"
	"math/bits"

	"github.com/tracebench/tracebench/workloads/spec"
)

// Combine mixes a generator's own seed with the run's --seed. It is the
// identity of neither, so two specs that differ only in seed differ under
// every run seed.
func Combine(seed, runSeed uint64) uint64 {
	return mix(mix(seed) ^ (runSeed*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019))
}

// mix is SplitMix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// stream is a SplitMix64 generator.
type stream struct{ s uint64 }

func (r *stream) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s)
}

// below returns a uniform integer in [0, n), n > 0, without bias.
func (r *stream) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// unit returns a uniform float64 in [0, 1) with 53 random bits.
func (r *stream) unit() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}

// column samples one column.
type column struct {
	dist spec.Dist
	r    stream
	seq  int64
	min  int64
	span uint64 // max-min+1; 0 means the whole uint64 range
	cdf  []float64
}

func (c *column) sample() int64 {
	switch c.dist {
	case spec.DistSeq:
		v := c.seq
		c.seq++
		return v
	case spec.DistUniform:
		if c.span == 0 {
			return int64(c.r.next())
		}
		return c.min + int64(c.r.below(c.span))
	default: // zipf
		u := c.r.unit() * c.cdf[len(c.cdf)-1]
		lo, hi := 0, len(c.cdf)-1
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if c.cdf[m] > u {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return int64(lo)
	}
}

// zipfCDF returns the cumulative weights (k+1)^-s for k in 0..n-1.
func zipfCDF(n uint64, s float64) []float64 {
	cdf := make([]float64, n)
	sum := 0.0
	for k := range n {
		sum = float64(sum + Pow(float64(k+1), -s))
		cdf[k] = sum
	}
	return cdf
}

// Table generates the updates of g for an input with the given columns.
// REQUIRES: g passed spec validation for these columns.
func Table(g *spec.Generate, columns []string, runSeed uint64) *spec.Table {
	base := Combine(g.Seed, runSeed)
	cols := make([]column, len(g.Columns))
	for i, cg := range g.Columns {
		c := &cols[i]
		c.dist = cg.Dist
		c.r = stream{s: mix(base + uint64(i) + 1)}
		switch cg.Dist {
		case spec.DistUniform:
			c.min = cg.Min
			c.span = uint64(cg.Max) - uint64(cg.Min) + 1
		case spec.DistZipf:
			c.cdf = zipfCDF(cg.N, cg.S)
		}
	}
	retracts := stream{s: mix(base)}
	t := spec.NewTable(columns, int(min(g.Rows, 1<<26)))
	row := make([]int64, len(columns))
	// live holds indexes into t of insertions from earlier times that are
	// not yet retracted; rows inserted at the current time join after it.
	var live []int
	if g.Retract > 0 {
		live = make([]int, 0, min(g.Rows, 1<<26))
	}
	batches := max(g.Batches, 1) // the decoder defaults 0 (absent) to 1
	per, extra := g.Rows/batches, g.Rows%batches
	if per == 0 {
		// More batches than rows: only the first extra times get one, so
		// the loop need not visit the empty ones (there may be 2^64−1).
		batches = extra
	}
	for b := range batches {
		m := per
		if b < extra {
			m++
		}
		if m == 0 {
			continue
		}
		var r uint64
		if b > 0 && g.Retract > 0 {
			r = uint64(float64(float64(m) * g.Retract))
			r = min(r, uint64(len(live)))
		}
		for range r {
			j := int(retracts.below(uint64(len(live))))
			src := live[j]
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			copy(row, t.Row(src))
			t.Append(b, -1, row)
		}
		first := t.Len()
		for range m - r {
			for i := range cols {
				row[i] = cols[i].sample()
			}
			t.Append(b, 1, row)
		}
		if g.Retract > 0 {
			for i := first; i < t.Len(); i++ {
				live = append(live, i)
			}
		}
	}
	return t
}

// Pow returns x**y for x ≥ 1 and finite y, computed as 2**(y·log2 x) with
// this package's own log2 and exp2, so the result is the same on every
// platform (G1). Relative error is below 1e-13 for the exponents zipf uses.
func Pow(x, y float64) float64 {
	return exp2(float64(y * log2(x)))
}

// log2 returns log2(x) for x > 0 finite.
func log2(x float64) float64 {
	frac, e := math.Frexp(x) // x = frac × 2^e, frac in [0.5, 1)
	// Bring frac into [sqrt(1/2), sqrt(2)) for a fast-converging series.
	if frac < math.Sqrt2/2 {
		frac = float64(frac * 2)
		e--
	}
	// ln(frac) = 2 atanh(z), z = (frac-1)/(frac+1), |z| < 0.1716.
	z := float64((frac - 1) / (frac + 1))
	z2 := float64(z * z)
	sum, term := 0.0, z
	for k := 1; k <= 41; k += 2 {
		sum = float64(sum + float64(term/float64(k)))
		term = float64(term * z2)
	}
	ln := float64(2 * sum)
	return float64(float64(e) + float64(ln*math.Log2E))
}

// exp2 returns 2**x for finite x.
func exp2(x float64) float64 {
	if x < -1074 {
		return 0
	}
	if x > 1023 {
		return math.Inf(1)
	}
	n := math.Floor(x)
	f := float64(x - n) // in [0, 1)
	// 2^f = e^(f ln 2), Taylor series; f ln 2 < 0.7, 30 terms converge.
	a := float64(f * math.Ln2)
	sum, term := 1.0, 1.0
	for k := 1; k <= 30; k++ {
		term = float64(float64(term*a) / float64(k))
		sum = float64(sum + term)
	}
	return math.Ldexp(sum, int(n))
}
