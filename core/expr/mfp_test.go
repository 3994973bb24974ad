package expr

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func refs(names ...string) []Ref {
	out := make([]Ref, len(names))
	for i, n := range names {
		out[i] = Ref{Column: n}
	}
	return out
}

// rowOutcome is what an MFP did with one row, for comparison with a model.
type rowOutcome struct {
	kept bool
	row  []int64
	code Code
}

func outcomes(n, arity int, out *Output) map[int]rowOutcome {
	got := map[int]rowOutcome{}
	for k, i := range out.Kept {
		got[i] = rowOutcome{kept: true, row: out.Rows[k*arity : (k+1)*arity]}
	}
	for k, i := range out.Erred {
		if _, dup := got[i]; dup {
			panic(fmt.Sprintf("row %d both kept and erred", i))
		}
		got[i] = rowOutcome{code: out.Codes[k]}
	}
	return got
}

// TestMFPOrder checks E1 and E2 row by row: maps err before filters drop;
// a filter that drops makes later errors moot; an earlier filter's error
// wins over a later drop; equivalences drop before any map can err.
func TestMFPOrder(t *testing.T) {
	spec := MFPSpec{
		Input:        refs("x", "y", "z"),
		Equivalences: [][]Ref{refs("x", "z")},
		Maps: []Map{
			{Name: "q", Expr: MustParse("100 / y")},
			{Name: "r", Expr: MustParse("q + x")},
		},
		Filters: []*Expr{
			MustParse("x"),           // no instructions of its own: drops x == 0
			MustParse("r > 0"),       // drops r <= 0
			MustParse("1 / (x - 5)"), // errs at x == 5; 1/(x-5) is 0 for |x-5| > 1
			MustParse("q"),           // a map ref: no instructions
		},
		Project: refs("r", "y"),
	}
	m, err := NewMFP(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !m.CanErr() || m.OutputArity() != 2 || m.InputArity() != 3 {
		t.Fatalf("CanErr %v arity %d/%d", m.CanErr(), m.InputArity(), m.OutputArity())
	}
	for _, tc := range []struct {
		row  [3]int64
		want rowOutcome
	}{
		{[3]int64{1, 0, 2}, rowOutcome{}},                        // equivalence drops before 100/0
		{[3]int64{1, 0, 1}, rowOutcome{code: DivisionByZero}},    // map error
		{[3]int64{0, 0, 0}, rowOutcome{code: DivisionByZero}},    // map error beats filter x
		{[3]int64{0, 1, 0}, rowOutcome{}},                        // filter x drops
		{[3]int64{5, 1000, 5}, rowOutcome{code: DivisionByZero}}, // filter 3 errs
		{[3]int64{-200, 1, -200}, rowOutcome{}},                  // r = -100: filter 2 drops; 1/(x-5) = 0
		{[3]int64{6, 10, 6}, rowOutcome{kept: true, row: []int64{16, 10}}},
		{[3]int64{4, 10, 4}, rowOutcome{kept: true, row: []int64{14, 10}}}, // 1/(4-5) = -1
		{[3]int64{7, 1000, 7}, rowOutcome{}},                               // 1/2 = 0 drops
		{[3]int64{math.MaxInt64, 1, math.MaxInt64}, rowOutcome{code: Overflow}},
	} {
		var out Output
		m.NewEvaluator().Eval(tc.row[:], &out)
		got := outcomes(1, 2, &out)[0]
		if got.kept != tc.want.kept || got.code != tc.want.code || !slices.Equal(got.row, tc.want.row) {
			t.Errorf("row %v: got %+v, want %+v", tc.row, got, tc.want)
		}
	}
}

// TestMFPChunks evaluates many rows across chunk boundaries against the
// single-row evaluation, with indexes counted from the input's start.
func TestMFPChunks(t *testing.T) {
	spec := MFPSpec{
		Input:   refs("x", "y"),
		Maps:    []Map{{Name: "d", Expr: MustParse("x / y")}, {Name: "s", Expr: MustParse("d * d")}},
		Filters: []*Expr{MustParse("x % 3 != 0")},
		Project: refs("s", "x"),
	}
	m, err := NewMFP(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3*Chunk + 17
	rows := make([]int64, 0, 2*n)
	for range n {
		rows = append(rows, rng.Int64N(2000)-1000, rng.Int64N(7)-3)
	}
	rows[2*5+0], rows[2*5+1] = math.MinInt64, -1 // Overflow in d
	rows[2*Chunk+0], rows[2*Chunk+1] = 1<<40, 1  // Overflow in s
	ev := m.NewEvaluator()
	var out Output
	out.Kept = append(out.Kept, -1) // Eval appends
	ev.Eval(rows, &out)
	if out.Kept[0] != -1 {
		t.Fatal("Eval did not append")
	}
	out.Kept = out.Kept[1:]
	got := outcomes(n, 2, &out)
	nErr := 0
	for i := range n {
		x, y := rows[2*i], rows[2*i+1]
		var want rowOutcome
		d, c := Div(x, y)
		s, ok := Mul(d, d)
		switch {
		case c != OK:
			want.code = c
		case !ok:
			want.code = Overflow
		case x%3 != 0:
			want = rowOutcome{kept: true, row: []int64{s, x}}
		}
		if want.code != OK {
			nErr++
		}
		g := got[i]
		if g.kept != want.kept || g.code != want.code || !slices.Equal(g.row, want.row) {
			t.Fatalf("row %d %v: got %+v, want %+v", i, rows[2*i:2*i+2], g, want)
		}
	}
	if nErr < 3 || len(out.Erred) != nErr {
		t.Fatalf("%d errors, want %d (>= 3)", len(out.Erred), nErr)
	}
	if !slices.IsSorted(out.Kept) || !slices.IsSorted(out.Erred) {
		t.Fatal("indexes out of input order")
	}
}

func TestMFPIdentityAndProjection(t *testing.T) {
	m, err := NewMFP(MFPSpec{Input: refs("a", "b"), Project: refs("a", "b")})
	if err != nil || !m.IsIdentity() || m.CanErr() {
		t.Fatalf("identity: %v %v", m, err)
	}
	var out Output
	m.NewEvaluator().Eval([]int64{1, 2, 3, 4}, &out)
	if !slices.Equal(out.Rows, []int64{1, 2, 3, 4}) || !slices.Equal(out.Kept, []int{0, 1}) {
		t.Fatalf("identity out %+v", out)
	}
	m, err = NewMFP(MFPSpec{Input: refs("a", "b"), Project: refs("b", "a", "b")})
	if err != nil || m.IsIdentity() {
		t.Fatal(err)
	}
	out.Reset()
	m.NewEvaluator().Eval([]int64{1, 2, 3, 4}, &out)
	if !slices.Equal(out.Rows, []int64{2, 1, 2, 4, 3, 4}) {
		t.Fatalf("projection out %v", out.Rows)
	}
	// Input arity 0 (a cross product's empty key, a count's empty record).
	m, err = NewMFP(MFPSpec{Maps: []Map{{Name: "one", Expr: MustParse("1")}}, Project: refs("one")})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	m.NewEvaluator().EvalN(nil, 2, &out)
	if !slices.Equal(out.Rows, []int64{1, 1}) {
		t.Fatalf("arity 0 out %v", out.Rows)
	}
}

func TestNewMFPRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec MFPSpec
		kind error
	}{
		{MFPSpec{Input: refs("a", "a")}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Maps: []Map{{Name: "a", Expr: MustParse("1")}}}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Maps: []Map{{Name: "m", Expr: MustParse("1")}, {Name: "m", Expr: MustParse("1")}}}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Project: refs("b")}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Equivalences: [][]Ref{refs("a", "b")}}, ErrBadMFP},
		// A map may not use a later map.
		{MFPSpec{Input: refs("a"), Maps: []Map{{Name: "m", Expr: MustParse("n")}, {Name: "n", Expr: MustParse("1")}}}, ErrUnknownColumn},
		{MFPSpec{Input: refs("a"), Filters: []*Expr{MustParse("b")}}, ErrUnknownColumn},
		// A nil expression (a map or filter left unset) is a layout error,
		// not a nil dereference.
		{MFPSpec{Input: refs("a"), Maps: []Map{{Name: "m"}}}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Filters: []*Expr{MustParse("a"), nil}}, ErrBadMFP},
		// So is an Expr not made by Parse: it has no syntax tree.
		{MFPSpec{Input: refs("a"), Maps: []Map{{Name: "m", Expr: &Expr{}}}}, ErrBadMFP},
		{MFPSpec{Input: refs("a"), Filters: []*Expr{{}}}, ErrBadMFP},
	} {
		if _, err := catchNewMFP(tc.spec); !errors.Is(err, tc.kind) {
			t.Errorf("NewMFP(%+v) = %v, want %v", tc.spec, err, tc.kind)
		}
	}
}

// TestCheckAndEvalOfNoExpression: Check and Eval of an expression not
// made by Parse (nil, or a zero Expr) return an *Error wrapping ErrSyntax
// rather than dereference a syntax tree it does not have.
func TestCheckAndEvalOfNoExpression(t *testing.T) {
	for _, e := range []*Expr{nil, {}} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%#v: panic: %v", e, r)
				}
			}()
			var xe *Error
			if err := Check(e, refs("a")); !errors.Is(err, ErrSyntax) || !errors.As(err, &xe) {
				t.Errorf("Check(%#v) = %v, want an *Error wrapping ErrSyntax", e, err)
			}
			if _, err := Eval(e, refs("a"), []int64{1}); !errors.Is(err, ErrSyntax) {
				t.Errorf("Eval(%#v) = %v, want ErrSyntax", e, err)
			}
		}()
	}
}

// catchNewMFP is NewMFP with a panic returned as an error.
func catchNewMFP(s MFPSpec) (m *MFP, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return NewMFP(s)
}

// TestEvalAllocatesNothing checks E4's allocation half: with output
// capacity in place, evaluating a chunk allocates nothing.
func TestEvalAllocatesNothing(t *testing.T) {
	m, err := NewMFP(MFPSpec{
		Input:   refs("x", "y"),
		Maps:    []Map{{Name: "d", Expr: MustParse("x / y + x * 3 - -y")}},
		Filters: []*Expr{MustParse("d > 0 && x != 7")},
		Project: refs("d"),
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int64, 2*1000)
	for i := range 1000 {
		rows[2*i], rows[2*i+1] = int64(i), int64(i%5)
	}
	ev := m.NewEvaluator()
	out := Output{Rows: make([]int64, 0, 1000), Kept: make([]int, 0, 1000), Erred: make([]int, 0, 1000), Codes: make([]Code, 0, 1000)}
	if a := testing.AllocsPerRun(20, func() { out.Reset(); ev.Eval(rows, &out) }); a != 0 {
		t.Fatalf("%v allocations per Eval", a)
	}
	if len(out.Erred) != 200 {
		t.Fatalf("%d errors, want 200", len(out.Erred))
	}
}

// TestMFPLaterFilterErrorIsMoot: a row dropped by an earlier filter has no
// error from a later one, and a map's value of 0 drops only through a
// filter that reads it.
func TestMFPLaterFilterErrorIsMoot(t *testing.T) {
	m, err := NewMFP(MFPSpec{Input: refs("x"), Filters: []*Expr{MustParse("x"), MustParse("1 / x")}, Project: refs("x")})
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	m.NewEvaluator().Eval([]int64{0, 1, 2}, &out)
	if len(out.Erred) != 0 || !slices.Equal(out.Kept, []int{1}) {
		t.Fatalf("out %+v", out)
	}
}

// TestRegistersAreReused: a long left-deep expression needs a handful of
// registers, not one per node (an evaluator's memory is registers × Chunk).
func TestRegistersAreReused(t *testing.T) {
	src := "x"
	for range 500 {
		src += " + x * 2"
	}
	m, err := NewMFP(MFPSpec{Input: refs("x"), Maps: []Map{{Name: "v", Expr: MustParse(src)}}, Project: refs("v")})
	if err != nil {
		t.Fatal(err)
	}
	if m.nregs > 5 {
		t.Fatalf("%d registers for a left-deep chain", m.nregs)
	}
	var out Output
	m.NewEvaluator().Eval([]int64{3}, &out)
	if out.Rows[0] != 3+500*6 {
		t.Fatalf("value %d", out.Rows[0])
	}
}

// TestManyConstantsKeepRegistersBounded: an expression with thousands of
// distinct literals needs a bounded number of registers too; each used to
// hold its own register of Chunk values for the evaluator's life, so a
// spec line of a few hundred kilobytes cost hundreds of megabytes per
// evaluator. Constants as map and filter roots, and reused ones, still
// give their values across chunks.
func TestManyConstantsKeepRegistersBounded(t *testing.T) {
	const n = 5000
	src := "x"
	want := int64(0)
	for i := range n {
		src += fmt.Sprintf(" + %d", i+1)
		want += int64(i + 1)
	}
	src += " + 3 - 3" // a literal again, after the distinct ones
	maps := []Map{{Name: "v", Expr: MustParse(src)}, {Name: "k", Expr: MustParse("4999")}, {Name: "w", Expr: MustParse("k * 2 + 77777")}}
	m, err := NewMFP(MFPSpec{Input: refs("x"), Maps: maps, Filters: []*Expr{MustParse("123456"), MustParse("x != 1000001")},
		Project: refs("v", "k", "w")})
	if err != nil {
		t.Fatal(err)
	}
	if m.nregs > maxPreloaded+16 {
		t.Fatalf("%d registers for %d distinct literals", m.nregs, n)
	}
	rows := make([]int64, 2*Chunk+7)
	for i := range rows {
		rows[i] = int64(i)
	}
	var out Output
	m.NewEvaluator().Eval(rows, &out)
	if len(out.Erred) != 0 || len(out.Kept) != len(rows) {
		t.Fatalf("%d kept, %d erred", len(out.Kept), len(out.Erred))
	}
	for k, i := range out.Kept {
		if got := out.Rows[3*k : 3*k+3]; got[0] != rows[i]+want || got[1] != 4999 || got[2] != 4999*2+77777 {
			t.Fatalf("row %d: %v", i, got)
		}
	}
}

// TestDeepRightNestingKeepsRegistersBounded: a right-nested expression
// needs a register per level (each left operand waits for its right one);
// the evaluator then takes fewer rows per chunk, so its registers stay
// within regBudget values, and still gives every row its value or error,
// at the row's index, across chunks.
func TestDeepRightNestingKeepsRegistersBounded(t *testing.T) {
	const depth = 20000
	src := strings.Repeat("x * 2 + (", depth) + "x / (x - 5)" + strings.Repeat(")", depth)
	m, err := NewMFP(MFPSpec{Input: refs("x"), Maps: []Map{{Name: "v", Expr: MustParse(src)}}, Project: refs("v")})
	if err != nil {
		t.Fatal(err)
	}
	if m.nregs*Chunk <= regBudget {
		t.Fatalf("%d registers: the test needs more than %d", m.nregs, regBudget/Chunk)
	}
	ev := m.NewEvaluator()
	if held := len(ev.regs) * cap(ev.regs[0]); held > regBudget {
		t.Fatalf("%d registers hold %d values, more than %d", m.nregs, held, regBudget)
	}
	rows := make([]int64, 3*Chunk+1)
	for i := range rows {
		rows[i] = int64(i)
	}
	var out Output
	ev.Eval(rows, &out)
	if !slices.Equal(out.Erred, []int{5}) || out.Codes[0] != DivisionByZero || len(out.Kept) != len(rows)-1 {
		t.Fatalf("erred %v %v, %d kept", out.Erred, out.Codes, len(out.Kept))
	}
	for k, i := range out.Kept {
		x := rows[i]
		if want := x*2*depth + x/(x-5); out.Rows[k] != want {
			t.Fatalf("row %d: %d, want %d", i, out.Rows[k], want)
		}
	}
}

// TestMFPSharedByGoroutines: one MFP, an Evaluator per goroutine (E5);
// run with -race.
func TestMFPSharedByGoroutines(t *testing.T) {
	m, err := NewMFP(MFPSpec{Input: refs("x", "y"), Maps: []Map{{Name: "d", Expr: MustParse("x / y")}}, Project: refs("d")})
	if err != nil {
		t.Fatal(err)
	}
	rows := benchRows(3 * Chunk)
	var want Output
	m.NewEvaluator().Eval(rows, &want)
	done := make(chan Output)
	for range 4 {
		go func() {
			var out Output
			ev := m.NewEvaluator()
			for range 20 {
				out.Reset()
				ev.Eval(rows, &out)
			}
			done <- out
		}()
	}
	for range 4 {
		if out := <-done; !slices.Equal(out.Rows, want.Rows) || !slices.Equal(out.Kept, want.Kept) {
			t.Fatal("a goroutine's output differs")
		}
	}
}

// TestMFPSharedByGoroutinesWithFilters: one MFP with an equivalence and a
// filter, an Evaluator per goroutine, each over rows of its own (E5). The
// drops are per-evaluator state as much as the registers are: evaluators
// that shared them would keep and drop one another's rows. Without a
// filter nothing is ever dropped, so TestMFPSharedByGoroutines cannot
// tell; here each goroutine's outcome is checked against its own rows,
// with or without -race.
func TestMFPSharedByGoroutinesWithFilters(t *testing.T) {
	m, err := NewMFP(MFPSpec{
		Input:        refs("x", "y", "z"),
		Equivalences: [][]Ref{refs("y", "z")},
		Filters:      []*Expr{MustParse("x % 2 == 0")},
		Project:      refs("x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	done := make(chan error, workers)
	for g := range workers {
		go func() {
			// Goroutine g keeps the rows whose x is even and whose y and z
			// agree, a pattern that differs between goroutines.
			rows := make([]int64, 0, 3*3*Chunk)
			var want []int64
			for i := range 3 * Chunk {
				x, y, z := int64(i+g), int64(i%3), int64((i+g)%3)
				rows = append(rows, x, y, z)
				if x%2 == 0 && y == z {
					want = append(want, x)
				}
			}
			var out Output
			ev := m.NewEvaluator()
			for range 50 {
				out.Reset()
				ev.Eval(rows, &out)
				if !slices.Equal(out.Rows, want) {
					done <- fmt.Errorf("goroutine %d kept %d rows, want %d", g, len(out.Rows), len(want))
					return
				}
			}
			done <- nil
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
