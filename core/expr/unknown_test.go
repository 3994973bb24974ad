package expr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestAnUnknownColumnsErrorListsWhatIsAvailable: the error names the
// columns in scope, the first 12 of a longer scope then "...", and
// "none" for an empty one; Check and NewMFP word it alike.
func TestAnUnknownColumnsErrorListsWhatIsAvailable(t *testing.T) {
	e, err := Parse("x + 1")
	if err != nil {
		t.Fatal(err)
	}
	var scope []Ref
	var names []string
	for i := range 13 {
		scope = append(scope, Ref{Column: fmt.Sprintf("c%d", i)})
		names = append(names, fmt.Sprintf("c%d", i))
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "unknown column x (available: none)"},
		{2, "unknown column x (available: c0, c1)"},
		{12, "unknown column x (available: " + strings.Join(names[:12], ", ") + ")"},
		{13, "unknown column x (available: " + strings.Join(names[:12], ", ") + ", ...)"},
	} {
		err := Check(e, scope[:tc.n])
		var xe *Error
		if !errors.As(err, &xe) || xe.Msg != tc.want || !errors.Is(err, ErrUnknownColumn) {
			t.Errorf("Check in a scope of %d: %v, want %q", tc.n, err, tc.want)
		}
		_, err = NewMFP(MFPSpec{Input: scope[:tc.n], Maps: []Map{{Name: "m", Expr: e}}})
		if !errors.As(err, &xe) || xe.Msg != tc.want {
			t.Errorf("NewMFP over %d columns: %v, want %q", tc.n, err, tc.want)
		}
	}
}

// TestAProjectionOfSomeInputColumnsIsNoIdentity: an MFP that keeps the
// first columns of its input, in order, is no identity: its rows have
// the projection's arity; one that keeps every column in another order
// is none either, nor one as wide that repeats a column; one that keeps
// them all in order is.
func TestAProjectionOfSomeInputColumnsIsNoIdentity(t *testing.T) {
	in := []Ref{{Column: "a"}, {Column: "b"}, {Column: "c"}}
	rows := []int64{1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		project  []Ref
		identity bool
		want     []int64
	}{
		{in[:1], false, []int64{1, 4}},
		{in[:2], false, []int64{1, 2, 4, 5}},
		{[]Ref{in[0], in[2], in[1]}, false, []int64{1, 3, 2, 4, 6, 5}},
		{[]Ref{in[1], in[1], in[2]}, false, []int64{2, 2, 3, 5, 5, 6}},
		{in, true, rows},
	} {
		m, err := NewMFP(MFPSpec{Input: in, Project: tc.project})
		if err != nil {
			t.Fatal(err)
		}
		var out Output
		m.NewEvaluator().Eval(rows, &out)
		if m.IsIdentity() != tc.identity || m.OutputArity() != len(tc.project) || !slices.Equal(out.Rows, tc.want) {
			t.Errorf("project %v: identity %v, arity %d, rows %v; want %v, %d, %v", tc.project, m.IsIdentity(), m.OutputArity(), out.Rows, tc.identity, len(tc.project), tc.want)
		}
	}
}

// TestEvalRefusesRowsItCannotCountByName: Eval counts its rows by the
// input arity, so it refuses an MFP of input arity 0 (EvalN takes the
// count) and values that are not a whole number of rows, each with a
// panic naming what is wrong.
func TestEvalRefusesRowsItCannotCountByName(t *testing.T) {
	for _, c := range []struct {
		input []Ref
		rows  []int64
		want  string
	}{
		{nil, nil, "use EvalN"},
		{[]Ref{{Column: "a"}, {Column: "b"}}, []int64{1, 2, 3}, "3 values is not a whole number of rows of arity 2"},
	} {
		m, err := NewMFP(MFPSpec{Input: c.input})
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("Eval over %d columns of %d values recovered %v, want a panic holding %q", len(c.input), len(c.rows), r, c.want)
				}
			}()
			var out Output
			m.NewEvaluator().Eval(c.rows, &out)
		}()
	}
}
