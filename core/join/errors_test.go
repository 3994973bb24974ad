package join

import (
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/expr"
	"github.com/tracebench/tracebench/core/frontier"
)

const codeDivisionByZero = int64(expr.DivisionByZero)

// divClosure is a closure with an expression that can err: it emits
// 100 / row[col] appended to the row, and `division by zero` (with the
// row's multiplicity) where row[col] is 0.
type divClosure struct {
	arity, col int
}

func (c *divClosure) Arity() int { return c.arity + 1 }

func (c *divClosure) Apply(in *dataflow.Chunk, out *Sink) {
	for i := range in.Len() {
		row := in.Row(i)
		if row[c.col] == 0 {
			out.Error(codeDivisionByZero, in.Times[i], in.Diffs[i])
			continue
		}
		out.Push(append(append([]int64(nil), row...), 100/row[c.col]), in.Times[i], in.Diffs[i])
	}
}

// errBatch is an error arrangement's batch: key = the code, no val.
func errBatch(t *testing.T, code int64, tm uint64, d int64, lower, upper uint64) *batch.Batch {
	t.Helper()
	b := batch.NewBuilder(batch.Arity{Key: 1}, 1)
	b.Push([]int64{code}, nil, tm, d)
	out, err := b.Build(frontier.At(lower), frontier.At(upper))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDeltaInputErrorsOncePerFromEntry is §9.D: R0 carries error e with
// count 1 and is read by path 0 as the source and by paths 1 and 2 as a
// lookup; the join's output carries e once, and the paths count no error
// as theirs. A self-join (R0 as entries 0 and 2) carries e twice, once per
// entry (docs/spec.md, "Expressions").
func TestDeltaInputErrorsOncePerFromEntry(t *testing.T) {
	const e = 7
	for _, c := range []struct {
		name     string
		errs     func(b *batch.Batch) [][]*batch.Batch
		want     int64
		selfJoin bool
	}{
		{"three relations", func(b *batch.Batch) [][]*batch.Batch { return [][]*batch.Batch{{b}, nil, nil} }, 1, false},
		{"self-join", func(b *batch.Batch) [][]*batch.Batch { return [][]*batch.Batch{{b}, nil, {b}} }, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			metrics := &Metrics{}
			pres := []batch.Presentation{batch.Identity(), batch.Identity(), batch.Identity()}
			q := newDeltaQuery(t, 3, 0, pres, metrics)
			for _, r := range q.rels {
				r.seal(t, []upd{{1, 10, 0, 1}, {2, 20, 0, 1}}, 1)
			}
			q.step(t, func(int) int { return 9 }, c.errs(errBatch(t, e, 0, 1, 0, 1)))
			for _, r := range q.rels {
				r.seal(t, []upd{{1, 11, 1, 1}}, 2)
			}
			q.step(t, func(int) int { return 9 }, nil)
			q.step(t, func(int) int { return 9 }, nil)
			for tm := range uint64(2) {
				if got := errDiffs(q.out, tm); len(got) != 1 || got[e] != c.want {
					t.Fatalf("errors at %d = %v, want {%d: %d}", tm, got, e, c.want)
				}
			}
			q.check(t, c.name, 0, 2)
			for _, ec := range metrics.ErrorCounts() {
				if ec.Errors != 0 {
					t.Fatalf("operator %s/%s counts %d errors as its own, want 0", ec.Dataflow, ec.Operator, ec.Errors)
				}
			}
		})
	}
}

// TestClosureErrorKeepsRowMultiplicity: a closure that errs turns the row
// into the error with the row's multiplicity, in the binary join and in
// a delta path alike, and the operator counts it as its own.
func TestClosureErrorKeepsRowMultiplicity(t *testing.T) {
	t.Run("binary", func(t *testing.T) {
		l, r := newRel(ar11), newRel(ar11)
		metrics := &Metrics{}
		// k, l.v, r.v -> k, l.v, r.v, 100 / r.v (core/expr's MFP)
		q, err := expr.Parse("100 / r.v")
		if err != nil {
			t.Fatal(err)
		}
		cols := []expr.Ref{{Alias: "l", Column: "k"}, {Alias: "l", Column: "v"}, {Alias: "r", Column: "v"}}
		m, err := expr.NewMFP(expr.MFPSpec{Input: cols, Maps: []expr.Map{{Name: "q", Expr: q}}, Project: append(cols, expr.Ref{Column: "q"})})
		if err != nil {
			t.Fatal(err)
		}
		j, err := NewBinary(Side{Reader: l.h, Pres: batch.Identity(), Arity: ar11}, Side{Reader: r.h, Pres: batch.Identity(), Arity: ar11},
			BinaryOptions{AsOf: frontier.At(0), Closure: NewMFP(m), Stats: metrics.Stage("q", "join 1", "")})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Release()
		out := NewSink(j.Arity())
		l.seal(t, []upd{{1, 5, 0, 3}}, 1)
		r.seal(t, []upd{{1, 0, 0, -2}, {1, 4, 0, 1}}, 1)
		if err := j.Step(l.deliver(9), r.deliver(9), out); err != nil {
			t.Fatal(err)
		}
		if got := errDiffs(out, 0); len(got) != 1 || got[codeDivisionByZero] != -6 {
			t.Fatalf("errors = %v, want {division by zero: -6}", got)
		}
		if got := rowDiffs(out, 0); len(got) != 1 || got["[1 5 4 25]"] != 3 {
			t.Fatalf("rows = %v, want [1 5 4 25] x3", got)
		}
		if got := metrics.ErrorCounts(); len(got) != 1 || got[0] != (ErrorCount{"q", "join 1", -6}) {
			t.Fatalf("error counts = %v, want q/join 1: -6", got)
		}
	})
	t.Run("linear", func(t *testing.T) {
		r0, r1, r2 := newRel(ar11), newRel(ar11), newRel(ar11)
		metrics := &Metrics{}
		id := batch.Identity()
		// Stage 0 divides by R1's val; stage 1 joins its result with R2.
		l, err := NewLinear(LinearOptions{Source: Side{r0.h, id, ar11}, AsOf: frontier.At(0), Stages: []LinearStage{
			{Lookup: Side{r1.h, id, ar11}, Closure: &divClosure{arity: 3, col: 2}, Stats: metrics.Stage("q", "join 1", "")},
			{Lookup: Side{r2.h, id, ar11}, StreamKey: []int{0}, Stats: metrics.Stage("q", "join 2", "")},
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		out := NewSink(l.Arity())
		r0.seal(t, []upd{{1, 5, 0, 3}}, 1)
		r1.seal(t, []upd{{1, 0, 0, -2}, {1, 4, 0, 1}}, 1)
		r2.seal(t, []upd{{1, 9, 0, 2}}, 1)
		f := frontier.At(1)
		if err := l.Step(r0.deliver(9), f, [][]*batch.Batch{r1.deliver(9), r2.deliver(9)}, []frontier.Frontier{f, f}, out); err != nil {
			t.Fatal(err)
		}
		if got := errDiffs(out, 0); len(got) != 1 || got[codeDivisionByZero] != -6 {
			t.Fatalf("errors = %v, want {division by zero: -6}", got)
		}
		if got := rowDiffs(out, 0); len(got) != 1 || got["[1 5 4 25 9]"] != 6 {
			t.Fatalf("rows = %v, want [1 5 4 25 9] x6", got)
		}
		want := []ErrorCount{{"q", "join 1", -6}, {"q", "join 2", 0}}
		if got := metrics.ErrorCounts(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("error counts = %v, want %v", got, want)
		}
	})
	t.Run("delta", func(t *testing.T) {
		pres := []batch.Presentation{batch.Identity(), batch.Identity()}
		q := newDeltaQuery(t, 2, 0, pres, nil)
		for i, p := range q.delta.Paths() {
			p.final = &divClosure{arity: 3, col: 2 - i} // R1's val: column 2 on path 0, 1 on path 1
			p.arity = 3
		}
		q.rels[0].seal(t, []upd{{1, 5, 0, 3}}, 1)
		q.rels[1].seal(t, []upd{{1, 0, 1, -2}}, 2)
		q.rels[0].seal(t, nil, 2)
		q.step(t, func(int) int { return 9 }, nil)
		q.step(t, func(int) int { return 9 }, nil)
		if got := errDiffs(q.out, 1); len(got) != 1 || got[codeDivisionByZero] != -6 {
			t.Fatalf("errors = %v, want {division by zero: -6}", got)
		}
		if got := q.delta.Paths()[1].Stats().Errors(); got != -6 {
			t.Fatalf("path 1 error count = %d, want -6", got)
		}
	})
}

// TestDeltaInputErrorsAtAsOf: an entry's errors from before as_of are
// presented at as_of, like every output of the join (K1).
func TestDeltaInputErrorsAtAsOf(t *testing.T) {
	pres := []batch.Presentation{batch.Identity(), batch.Identity()}
	q := newDeltaQuery(t, 2, 4, pres, nil)
	for _, r := range q.rels {
		r.seal(t, nil, 5)
	}
	q.step(t, func(int) int { return 9 }, [][]*batch.Batch{nil, {errBatch(t, 7, 1, 3, 0, 5)}})
	if m := minTime(q.out); m != 4 {
		t.Fatalf("first error at %d, want at as_of 4", m)
	}
	if got := errDiffs(q.out, 4); got[7] != 3 {
		t.Fatalf("errors at 4 = %v, want {7: 3}", got)
	}
}
