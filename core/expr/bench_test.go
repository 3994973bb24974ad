package expr

import (
	"math/rand/v2"
	"testing"
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

// BenchmarkMFP evaluates map d = x / y + x * 3, filter d % 2 == 0,
// project (d, x) per row; BenchmarkMFPLimit does the same work in a
// hand-written loop with the same checks (the limit).
func BenchmarkMFP(b *testing.B) {
	const n = 1 << 16
	rows := benchRows(n)
	m, err := NewMFP(MFPSpec{
		Input:   refs("x", "y"),
		Maps:    []Map{{Name: "d", Expr: MustParse("x / y + x * 3")}},
		Filters: []*Expr{MustParse("d % 2 == 0")},
		Project: refs("d", "x"),
	})
	if err != nil {
		b.Fatal(err)
	}
	ev := m.NewEvaluator()
	out := Output{Rows: make([]int64, 0, 2*n), Kept: make([]int, 0, n), Erred: make([]int, 0, n), Codes: make([]Code, 0, n)}
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		ev.Eval(rows, &out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

func BenchmarkMFPLimit(b *testing.B) {
	const n = 1 << 16
	rows := benchRows(n)
	outRows := make([]int64, 0, 2*n)
	kept := make([]int, 0, n)
	erred := make([]int, 0, n)
	b.ReportAllocs()
	for b.Loop() {
		outRows, kept, erred = outRows[:0], kept[:0], erred[:0]
		for i := range n {
			x, y := rows[2*i], rows[2*i+1]
			q, c := Div(x, y)
			p, ok1 := Mul(x, 3)
			d, ok2 := Add(q, p)
			if c != OK || !ok1 || !ok2 {
				erred = append(erred, i)
				continue
			}
			r, _ := Rem(d, 2)
			if r == 0 {
				outRows = append(outRows, d, x)
				kept = append(kept, i)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
