package reference

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
)

// TestEvalWithinBoundsTheJoinsRows evaluates a cross product of three
// entries of one ten-row input within bounds: the nested loops form 10 +
// 100 + 1,000 rows, and each of the three delta paths' walks as many, so
// the least bound it keeps within is 4,440 (and 10 more where the cross
// product is a view the query reads). That bound, a larger one and none
// give Eval's answer; one row less, and a bound of 10, give up with
// ErrTooLarge, naming the bound.
func TestEvalWithinBoundsTheJoinsRows(t *testing.T) {
	cross := plan.Query{
		From:    []plan.From{{As: "p", Collection: "a"}, {As: "q", Collection: "a"}, {As: "r", Collection: "a"}},
		Project: []string{"p.k"},
	}
	in := Inputs{}
	for k := range int64(10) {
		in["a"] = append(in["a"], up(0, 1, k))
	}
	for _, tc := range []struct {
		name string
		rows int64
		p    *plan.Plan
	}{
		{"query", 4440, &plan.Plan{Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}}, Query: cross}},
		{"view", 4450, &plan.Plan{
			Inputs: []plan.Input{{Name: "a", Columns: []string{"k"}}},
			Views:  []plan.View{{Name: "v", Query: &cross}},
			Query:  plan.Query{From: []plan.From{{As: "s", Collection: "v"}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resolve(t, tc.p)
			want := eval(t, r, in, 0)
			for _, bound := range []int64{0, -1, 1 << 40} {
				got, err := EvalWithin(r, in, 0, bound)
				if err != nil {
					t.Fatalf("bound %d: %v", bound, err)
				}
				if d := Compare(want, got); d != nil {
					t.Fatalf("bound %d: %v", bound, d)
				}
			}
			if _, err := EvalWithin(r, in, 0, 10); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("bound 10: got %v, want ErrTooLarge", err)
			}
			// The least bound the evaluation keeps within.
			lo, hi := int64(1), int64(1<<20)
			for lo < hi {
				mid := (lo + hi) / 2
				if _, err := EvalWithin(r, in, 0, mid); err == nil {
					hi = mid
				} else if errors.Is(err, ErrTooLarge) {
					lo = mid + 1
				} else {
					t.Fatal(err)
				}
			}
			if lo != tc.rows {
				t.Fatalf("evaluated within %d rows, want %d", lo, tc.rows)
			}
			got, err := EvalWithin(r, in, 0, lo)
			if err != nil || Compare(want, got) != nil {
				t.Fatalf("bound %d: %v %v", lo, err, Compare(want, got))
			}
			_, err = EvalWithin(r, in, 0, lo-1)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(lo-1)) {
				t.Fatalf("bound %d: got %v, want ErrTooLarge naming the bound", lo-1, err)
			}
		})
	}
}
