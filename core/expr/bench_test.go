package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// benchRows returns n rows of (x, y) with y in [1, 100] (no error).
func benchRows(n int) []int64 {
	rng := rand.New(rand.NewPCG(7, 7))
	rows := make([]int64, 2*n)
	for i := range n {
		rows[2*i], rows[2*i+1] = rng.Int64N(1<<20), 1+rng.Int64N(100)
	}
	return rows
}

// benchOut is an Output with room for n rows of arity 2.
func benchOut(n int) *Output {
	return &Output{Rows: make([]int64, 0, 2*n), Kept: make([]int, 0, n), Erred: make([]int, 0, n), Codes: make([]Code, 0, n)}
}

// limitDiv is the limit of the "div" case: map d = x / y + x * 3, filter
// d % 2 == 0, project (d, x), written by hand with the same checks.
func limitDiv(rows []int64, out *Output) {
	for i := range len(rows) / 2 {
		x, y := rows[2*i], rows[2*i+1]
		q, c := Div(x, y)
		p, ok1 := Mul(x, 3)
		d, ok2 := Add(q, p)
		if c != OK || !ok1 || !ok2 {
			out.Erred = append(out.Erred, i)
			out.Codes = append(out.Codes, Overflow)
			continue
		}
		if r, _ := Rem(d, 2); r == 0 {
			out.Rows = append(out.Rows, d, x)
			out.Kept = append(out.Kept, i)
		}
	}
}

// limitArith is the limit of the "arith" case: filter x + y * 3 > 1 << 19,
// project (y, x).
func limitArith(rows []int64, out *Output) {
	for i := range len(rows) / 2 {
		x, y := rows[2*i], rows[2*i+1]
		p, ok1 := Mul(y, 3)
		s, ok2 := Add(x, p)
		if !ok1 || !ok2 {
			out.Erred = append(out.Erred, i)
			out.Codes = append(out.Codes, Overflow)
			continue
		}
		if s > 1<<19 {
			out.Rows = append(out.Rows, y, x)
			out.Kept = append(out.Kept, i)
		}
	}
}

// BenchmarkMFP evaluates a map-filter-project over 64Ki rows per op and
// reports ns/row and x-limit: the ratio to the same work written by hand
// (limitDiv, limitArith), run as many times right after the timed loop on
// the same rows.
func BenchmarkMFP(b *testing.B) {
	for _, bc := range []struct {
		name  string
		spec  MFPSpec
		limit func([]int64, *Output)
	}{
		{"expr=div", MFPSpec{
			Input:   refs("x", "y"),
			Maps:    []Map{{Name: "d", Expr: MustParse("x / y + x * 3")}},
			Filters: []*Expr{MustParse("d % 2 == 0")},
			Project: refs("d", "x"),
		}, limitDiv},
		{"expr=arith", MFPSpec{
			Input:   refs("x", "y"),
			Filters: []*Expr{MustParse("x + y * 3 > 524288")},
			Project: refs("y", "x"),
		}, limitArith},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 1 << 16
			rows := benchRows(n)
			m, err := NewMFP(bc.spec)
			if err != nil {
				b.Fatal(err)
			}
			ev := m.NewEvaluator()
			out, want := benchOut(n), benchOut(n)
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				ev.Eval(rows, out)
			}
			perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N*n)
			// The limit: as many passes as the timed loop made, right after
			// it, so both see the same machine.
			start := time.Now()
			for range b.N {
				want.Reset()
				bc.limit(rows, want)
			}
			limit := float64(time.Since(start).Nanoseconds()) / float64(b.N*n)
			b.ReportMetric(perRow, "ns/row")
			b.ReportMetric(perRow/limit, "x-limit")
			if len(out.Kept) != len(want.Kept) || len(out.Erred) != len(want.Erred) {
				b.Fatalf("kept %d erred %d, limit kept %d erred %d", len(out.Kept), len(out.Erred), len(want.Kept), len(want.Erred))
			}
		})
	}
}

// BenchmarkParseManyColumns parses an expression summing n distinct
// columns: linear in n (each ref is looked up among those seen), where a
// scan of the earlier refs made it quadratic (99,000 columns took 17 s).
func BenchmarkParseManyColumns(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		var src strings.Builder
		for i := range n {
			if i > 0 {
				src.WriteString(" + ")
			}
			fmt.Fprintf(&src, "p.c%d", i)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse(src.String()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/column")
		})
	}
}
