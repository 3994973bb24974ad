package benchcmp

import (
	"math"
	"slices"
)

// tiesExactLimit is the largest sample size for which benchmath (through
// go-moremath's MannWhitneyUTest) takes the exact distribution of U when
// the samples hold ties; past it, it takes the normal approximation, which
// is right, and so is left as it is.
const tiesExactLimit = 25

// tiedExactP returns the two-sided p-value of the exact Mann–Whitney U test
// of x1 against x2 when the pooled values hold ties and both samples are
// small enough for benchmath to take the exact distribution, and ok false
// otherwise (no ties: benchmath's exact p-value is right; every value
// equal: there is no test).
//
// benchmath's exact distribution of U under ties (go-moremath's UDist) is
// wrong for some tie patterns: it gives p = 0 for [0 0 0 1 1 1 1 1 1]
// against [0 0], whose p is 0.36 (a "significant" change that is noise),
// 0 for [3 4 4 4 4] against [1 2 2 3 3 3] (p 0.017), and values above 1.
// This counts the distribution itself: the pooled values sorted into tie
// groups, each assignment of the n1 labels of x1 to the groups weighted by
// the ways to pick them, U1 summed over the groups. The p-value is twice
// the smaller tail at the observed U1, capped at 1; without ties it is
// the value benchmath gives.
func tiedExactP(x1, x2 []float64) (p float64, ok bool) {
	n1, n2 := len(x1), len(x2)
	if n1 == 0 || n2 == 0 || n1 > tiesExactLimit || n2 > tiesExactLimit {
		return 0, false
	}
	pooled := append(append([]float64(nil), x1...), x2...)
	slices.Sort(pooled)
	var groups []int // sizes of the tie groups, in ascending value
	for i := 0; i < len(pooled); {
		j := i
		for j < len(pooled) && pooled[j] == pooled[i] {
			j++
		}
		groups = append(groups, j-i)
		i = j
	}
	if len(groups) == len(pooled) || len(groups) == 1 {
		return 0, false
	}
	// Observed 2·U1: each pair (a of x1, b of x2) counts 2 when a > b, 1
	// when they tie.
	obs := 0
	for _, a := range x1 {
		for _, b := range x2 {
			switch {
			case a > b:
				obs += 2
			case a == b:
				obs++
			}
		}
	}
	// count[c][u] is the number of ways to place c labels of x1 in the
	// groups seen so far giving 2·U1 = u.
	maxU := 2 * n1 * n2
	count := make([][]float64, n1+1)
	for c := range count {
		count[c] = make([]float64, maxU+1)
	}
	count[0][0] = 1
	seen := 0
	for _, t := range groups {
		next := make([][]float64, n1+1)
		for c := range next {
			next[c] = make([]float64, maxU+1)
		}
		for c := 0; c <= n1 && c <= seen; c++ {
			below2 := seen - c // values of x2 below this group
			for r := 0; r <= t && c+r <= n1; r++ {
				if t-r > n2-below2 {
					continue
				}
				// r values of x1 in this group: each beats every x2 below,
				// and ties the group's t-r values of x2.
				du := r*2*below2 + r*(t-r)
				w := binomial(t, r)
				for u, v := range count[c] {
					if v != 0 && u+du <= maxU {
						next[c+r][u+du] += v * w
					}
				}
			}
		}
		count = next
		seen += t
	}
	var le, ge, total float64
	for u, v := range count[n1] {
		total += v
		if u <= obs {
			le += v
		}
		if u >= obs {
			ge += v
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total), true
}

// binomial is C(n, k) as a float64, exact for the sizes tiedExactP takes.
func binomial(n, k int) float64 {
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}
