package workloads

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/workloads/spec"
)

// TestCheckBuiltins runs built-in workloads at their check size in every
// check configuration against the reference: errors (views that err, a
// nested view, a three-way delta join and a reduce), star (a three-way
// join, linear and delta) and triangles (a delta self-join), delta joins on
// two workers included. `benchrun
// check`, a step of scripts/test.sh, runs every built-in workload.
func TestCheckBuiltins(t *testing.T) {
	for _, w := range Registry() {
		if w.Name != "errors" && w.Name != "star" && w.Name != "triangles" {
			continue
		}
		for bi := range w.Benches {
			b := &w.Benches[bi]
			t.Run(b.Base, func(t *testing.T) {
				s, err := b.Spec(CheckParams(w))
				if err != nil {
					t.Fatal(err)
				}
				tables, err := Load(s, 0)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cases := CheckCases(s)
				if !slices.Contains(cases, CheckCase{Mode: render.Direct, Join: plan.Delta, Workers: 2}) {
					t.Fatalf("check cases %v: no delta join on two workers", cases)
				}
				diffs, err := Check(ctx, s, tables, cases)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffs {
					t.Error(d)
				}
			})
		}
	}
}

// TestStageDiff: the per-operator check weighs each collection by the
// ways it is read and reports a mismatch with the output's errors.
func TestStageDiff(t *testing.T) {
	w, err := Lookup("errors")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Benches[0].Spec(CheckParams(*w))
	if err != nil {
		t.Fatal(err)
	}
	weights := Weights(s.Plan)
	// The query reads va, vb and vd once each; vd reads vc.
	for coll, want := range map[string]int64{"": 1, "va": 1, "vb": 1, "vc": 1, "vd": 1} {
		if weights[coll] != want {
			t.Errorf("weight of %q: %d, want %d", coll, weights[coll], want)
		}
	}
	stages := []render.StageErrors{{Operator: "view va", Collection: "va", Errors: 3}, {Operator: "reduce query", Errors: 2}}
	got := &reference.Result{Errors: []reference.Error{{Message: "division by zero", Diff: 5}}}
	if d := stageDiff(s.Plan, stages, got); d != "" {
		t.Errorf("matching counts reported: %s", d)
	}
	got.Errors[0].Diff = 4
	if d := stageDiff(s.Plan, stages, got); !strings.Contains(d, "sum to 5; the output has 4 errors") {
		t.Errorf("mismatch not reported: %q", d)
	}
}

// TestWeightsCountEveryRead: a view read by two from entries, and through
// another view, reaches the output once per read.
func TestWeightsCountEveryRead(t *testing.T) {
	src := `{"version": 1, "name": "w",
	  "inputs": {"a": {"columns": ["k"], "rows": []}},
	  "views": {"v": {"input": "a", "map": [{"name": "x", "expr": "1 / k"}]},
	            "u": {"query": {"from": [{"as": "p", "collection": "v"}, {"as": "q", "collection": "v"}], "on": [["p.k", "q.k"]]}}},
	  "query": {"from": [{"as": "s", "collection": "u"}, {"as": "t", "collection": "v"}], "on": [["s.p_k", "t.k"]]}}`
	s, err := spec.DecodeWith("w.json", ".", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := Weights(s.Plan)
	if w["u"] != 1 || w["v"] != 3 {
		t.Errorf("weights %v, want u 1 and v 3 (twice through u, once directly)", w)
	}
}

// TestCheckQueryErrorsBothModes: a query whose own map divides by zero,
// over a view whose map does too, agrees with the reference in both modes,
// and the per-operator checks of both modes hold; a query's error count
// reported twice is a difference.
func TestCheckQueryErrorsBothModes(t *testing.T) {
	src := `{"version": 1, "name": "qerr", "as_of": 1,
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,0],[0,1,2,1],[1,1,3,2],[2,1,1,5],[2,-1,2,1],[3,1,4,0]]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,1,2],[0,1,2,0],[1,1,3,0],[2,1,4,7],[3,1,1,1]]}},
	  "views": {"v": {"input": "a", "map": [{"name": "q", "expr": "10 / x"}]}},
	  "indexes": {"v_k": {"on": "v", "key": ["k"]}, "b_k": {"on": "b", "key": ["k"]}},
	  "query": {"from": [{"as": "p", "collection": "v"}, {"as": "r", "collection": "b"}], "on": [["p.k", "r.k"]],
	            "map": [{"name": "m", "expr": "p.q / r.y"}], "project": ["p.k", "m"]}}`
	s, tables := decodeAndLoad(t, "qerr.json", src)
	cases := CheckCases(s)
	diffs, err := Check(context.Background(), s, tables, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	in := ReferenceInputs(s, tables)
	last, err := reference.Eval(s.Plan, in, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, stages, _, err := Evaluate(context.Background(), s, tables, SessionOptions{Mode: render.Imported, Workers: 1}, []uint64{3})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := stageDiffImported(s.Plan, in, 3, stages, res[0]); err != nil || d != "" {
		t.Fatalf("imported: %q %v", d, err)
	}
	var own int64
	for i := range stages {
		if stages[i].Dataflow == render.QueryID {
			own += stages[i].Errors
			stages[i].Errors *= 2
		}
	}
	if own == 0 {
		t.Fatalf("the query's own operators counted no errors: %v (output errors %v)", stages, last.Errors)
	}
	if d, _ := stageDiffImported(s.Plan, in, 3, stages, res[0]); d == "" {
		t.Errorf("doubled query error counts not reported")
	}
}

// TestCheckIncrementalOverflow: a join whose accumulated counts stay in
// int64 while the engine's incremental product leaves it (a retraction
// times a count of -2^63) agrees with the reference in every
// configuration: the output may hold the numeric overflow error from that
// time on (docs/spec.md "Expressions").
func TestCheckIncrementalOverflow(t *testing.T) {
	src := `{"version": 1, "name": "m1",
	  "inputs": {"a": {"columns": ["k"], "rows": [[0,-9223372036854775808,1]]},
	             "b": {"columns": ["k"], "rows": [[0,1,1],[1,-1,1],[2,1,1]]}},
	  "indexes": {"ia": {"on": "a", "key": ["k"]}, "ib": {"on": "b", "key": ["k"]}},
	  "query": {"from": [{"as": "a", "collection": "a"}, {"as": "b", "collection": "b"}], "on": [["a.k","b.k"]]}}`
	s, tables := decodeAndLoad(t, "m1.json", src)
	in := ReferenceInputs(s, tables)
	if want, err := reference.Eval(s.Plan, in, 1); err != nil || want.Overflow || !want.MayOverflow {
		t.Fatalf("reference at t=1: %v, %+v: want MayOverflow without Overflow", err, want)
	}
	diffs, err := Check(context.Background(), s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	// The engine does overflow at t=1 (what the relaxed comparison is for).
	res, _, _, err := Evaluate(context.Background(), s, tables, SessionOptions{Mode: render.Direct, Workers: 1}, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res[0].Errors, func(e reference.Error) bool { return e.Message == reference.MsgOverflow }) {
		t.Errorf("engine at t=1: %s: want a numeric overflow error", res[0])
	}
}

// TestIndexMergeOverflowIsNoRuntimeFailure: an input row at count
// MaxInt64 at time 1 and +1 at time 2 is valid input whose accumulated
// count leaves int64. The Maintenance runtime meets it when it merges the
// index's compacted batches (the runtime reports the merge, and the
// arrangement adds `numeric overflow` to its errors); a Solo query's
// arrangement, never compacted that far, does not. Imported runs failed
// with a runtime error (eval exit 1, check "not released", at random
// mid-run) where direct ones succeeded; both now give the same output.
func TestIndexMergeOverflowIsNoRuntimeFailure(t *testing.T) {
	rows := `[0,1,5,5],[1,9223372036854775807,-1,0],[2,1,-1,0]`
	for i := 3; i < 40; i++ {
		rows += fmt.Sprintf(",[%d,1,%d,%d]", i, i, i)
	}
	src := `{"version": 1, "name": "mov",
	  "inputs": {"c": {"columns": ["k", "x"], "rows": [` + rows + `]},
	             "d": {"columns": ["k"], "rows": [[0,1,5],[0,1,-1]]}},
	  "indexes": {"c_k": {"on": "c", "key": ["k"]}, "d_k": {"on": "d", "key": ["k"]}},
	  "query": {"from": [{"as": "e", "collection": "c"}, {"as": "f", "collection": "d"}], "on": [["e.k","f.k"]]}}`
	s, tables := decodeAndLoad(t, "mov.json", src)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for _, j := range []plan.JoinKind{plan.Linear, plan.Delta} {
			for w := 1; w <= 4; w++ {
				res, _, leak, err := Evaluate(ctx, s, tables, SessionOptions{Mode: mode, Join: j, Workers: w}, []uint64{1, 2, 39})
				if err != nil || leak != nil {
					t.Fatalf("%v %v workers=%d: %v (left: %v)", mode, j, w, err, leak)
				}
				if !slices.ContainsFunc(res[1].Errors, func(e reference.Error) bool { return e.Message == reference.MsgOverflow }) {
					t.Errorf("%v %v workers=%d at 2: %s: want a numeric overflow error", mode, j, w, res[1])
				}
			}
		}
	}
	diffs, err := Check(ctx, s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestSteppingOverflowFailureIsARuntimeError: the runtime records an
// operator's failure while it steps (no command applied) under Seq 0 and
// no command, as it does an arrangement's overflowing merge. Only the
// merge is no failure of the run; matched by Seq 0 and batch.ErrOverflow
// alone, a stepping failure was dropped, and eval printed a partial output
// and exited 0.
func TestSteppingOverflowFailureIsARuntimeError(t *testing.T) {
	merge := &runtime.CommandError{Err: &dataflow.MergeOverflowError{Trace: "dataflow maintain a_k: arrange oks"}}
	step := &runtime.CommandError{Err: fmt.Errorf("dataflow query: reduce: layer 0 input [{0}, {3}): %w", &batch.OverflowError{Times: []frontier.Time{2}})}
	if got := appendFailures(nil, errors.Join(merge, step)); len(got) != 1 || got[0] != step {
		t.Fatalf("appendFailures kept %v, want only the stepping failure", got)
	}
}

// TestReduceCountOutOfInt64IsAnError: a record whose count at as_of leaves
// int64 (MaxInt64 at time 0, +1 at time 1) is a numeric overflow in the
// output at as_of (docs/spec.md "Expressions"), in every plan, mode and
// worker count. A min or max (the hierarchical plan, alone or collated
// with a count) failed its dataflow on it: its layer's build overflowed;
// count and sum, distinct and threshold, which report it through their
// records' arrangement, are checked beside them.
func TestReduceCountOutOfInt64IsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, q := range []string{
		`"reduce": {"group_by": ["a.k"], "aggregates": [{"name": "m", "fn": "min", "expr": "a.x"}]}`,
		`"reduce": {"group_by": ["a.k"], "aggregates": [{"name": "n", "fn": "count"}, {"name": "s", "fn": "sum", "expr": "a.x"}]}`,
		`"reduce": {"group_by": ["a.k"], "aggregates": [{"name": "m", "fn": "max", "expr": "a.x"}, {"name": "n", "fn": "count"}]}`,
		`"distinct": true`,
		`"threshold": true`,
	} {
		src := `{"version": 1, "name": "rov", "as_of": 2,
		  "inputs": {"a": {"columns": ["x", "k"], "rows": [[0,9223372036854775807,4,1],[1,1,4,1],[0,1,0,2],[3,1,3,3]]}},
		  "indexes": {"a_k": {"on": "a", "key": ["k"]}},
		  "query": {"from": [{"as": "a", "collection": "a"}], ` + q + `}}`
		s, tables := decodeAndLoad(t, "rov.json", src)
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for w := 1; w <= 4; w++ {
				res, _, leak, err := Evaluate(ctx, s, tables, SessionOptions{Mode: mode, Join: plan.Linear, Workers: w}, []uint64{2, 3})
				if err != nil || leak != nil {
					t.Fatalf("%s %v workers=%d: %v (left: %v)", q, mode, w, err, leak)
				}
				for i, r := range res {
					if !slices.ContainsFunc(r.Errors, func(e reference.Error) bool { return e.Message == reference.MsgOverflow }) {
						t.Errorf("%s %v workers=%d at %d: %s: want a numeric overflow error", q, mode, w, 2+i, r)
					}
				}
			}
		}
		diffs, err := Check(ctx, s, tables, CheckCases(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", q, d)
		}
	}
}

// TestCheckAcceptsAnOverflowCancelledByAnExpressionError: at as_of a
// group holds a record whose count leaves int64 and a record at count -1
// whose aggregate expression overflows. The reduce's numeric overflow
// (count 1) and the expression's (count -1) cancel, so the engine's
// output holds none (docs/semantics.md §1.1, a known gap); check reported
// that as a difference from the reference in every configuration.
func TestCheckAcceptsAnOverflowCancelledByAnExpressionError(t *testing.T) {
	src := `{"version": 1, "name": "gap", "as_of": 2,
	  "inputs": {"a": {"columns": ["x", "k"], "rows": [[0,9223372036854775807,4,1],[1,1,4,1],[0,-1,9223372036854775807,1],[3,1,3,3]]}},
	  "indexes": {"a_k": {"on": "a", "key": ["k"]}},
	  "query": {"from": [{"as": "a", "collection": "a"}],
	            "reduce": {"group_by": ["a.k"], "aggregates": [{"name": "m", "fn": "min", "expr": "a.x + 1"}]}}}`
	s, tables := decodeAndLoad(t, "gap.json", src)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want, err := reference.Eval(s.Plan, ReferenceInputs(s, tables), 2)
	if err != nil || !want.Overflow || want.ExprOverflow != -1 {
		t.Fatalf("reference at 2: %v, %+v: want Overflow with ExprOverflow -1", err, want)
	}
	diffs, err := Check(ctx, s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestLinearRunningCountOutOfInt64IsAnError: a linear join's running
// result whose count at a time leaves int64 though every product fits
// (a: -1 at time 0, MaxInt64 at time 1; b: 1 at each; the joined row's
// updates at time 1 sum to 2·MaxInt64 - 1) overflows where the next stage
// arranges it; that arrangement's numeric overflow reached no output, so
// the output at time 1 held no error, with 2 workers every time and at
// random with 1.
func TestLinearRunningCountOutOfInt64IsAnError(t *testing.T) {
	src := `{"version": 1, "name": "lin5",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,-1,1,0],[1,9223372036854775807,1,0]]},
	             "b": {"columns": ["k"], "rows": [[0,1,1],[1,1,1]]},
	             "c": {"columns": ["k"], "rows": [[0,1,1]]}},
	  "indexes": {"a_k": {"on": "a", "key": ["k"]}, "b_k": {"on": "b", "key": ["k"]}, "c_k": {"on": "c", "key": ["k"]}},
	  "query": {"from": [{"as": "a", "collection": "a"}, {"as": "b", "collection": "b"}, {"as": "c", "collection": "c"}],
	            "on": [["a.k", "b.k", "c.k"]]}}`
	s, tables := decodeAndLoad(t, "lin5.json", src)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		for w := 1; w <= 4; w++ {
			res, _, leak, err := Evaluate(ctx, s, tables, SessionOptions{Mode: mode, Join: plan.Linear, Workers: w}, []uint64{1})
			if err != nil || leak != nil {
				t.Fatalf("%v workers=%d: %v (left: %v)", mode, w, err, leak)
			}
			if !slices.ContainsFunc(res[0].Errors, func(e reference.Error) bool { return e.Message == reference.MsgOverflow }) {
				t.Errorf("%v workers=%d at 1: %s: want a numeric overflow error", mode, w, res[0])
			}
		}
	}
	diffs, err := Check(ctx, s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// decodeAndLoad decodes spec source src, named name, and loads its inputs
// with seed 0.
func decodeAndLoad(t *testing.T, name, src string) (*spec.Spec, []*spec.Table) {
	t.Helper()
	s, err := spec.DecodeWith(name, ".", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Load(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s, tables
}

// TestCheckZeroColumnViewJoined: a query view with "project": [] is a
// collection of no columns; indexed by the empty key and joined with an
// input, it agrees with the reference on the Solo runtime (direct) and
// on the Maintenance and Interactive pair (imported), both strategies.
func TestCheckZeroColumnViewJoined(t *testing.T) {
	src := `{"version": 1, "name": "zero", "as_of": 1,
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,0],[0,1,2,1],[1,1,3,0],[2,1,1,5],[2,-1,2,1],[3,1,4,0]]}},
	  "views": {"z": {"query": {"from": [{"as": "p", "collection": "a"}], "filter": ["p.x == 0"], "project": []}}},
	  "indexes": {"z_all": {"on": "z", "key": []}, "a_all": {"on": "a", "key": []}},
	  "query": {"from": [{"as": "z", "collection": "z"}, {"as": "p", "collection": "a"}],
	            "reduce": {"group_by": ["p.k"], "aggregates": [{"name": "n", "fn": "count"}]}}}`
	s, tables := decodeAndLoad(t, "zero.json", src)
	diffs, err := Check(context.Background(), s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestCheckTimes: a check compares at as_of and at every input time
// after it while the reference's work allows (1,000,000 input updates
// over all its times, at least 10 and at most 256 times); past that, at
// exactly that many, the quartiles and the last among them. The
// times are ascending, distinct and within [as_of, until).
func TestCheckTimes(t *testing.T) {
	gen := func(rows, batches int) string {
		return fmt.Sprintf(`{"version": 1, "name": "g", "as_of": 3, "until": %d,
		  "inputs": {"a": {"columns": ["k"], "generate": {"rows": %d, "seed": 7, "batches": %d,
		    "columns": {"k": {"dist": "uniform", "min": 0, "max": 99}}}}},
		  "query": {"from": [{"as": "a", "collection": "a"}], "project": ["a.k"]}}`, batches-1, rows, batches)
	}
	for _, tc := range []struct {
		name          string
		rows, batches int
		want          int // times returned, or -1: k spread evenly and CheckTimes
		k             int
	}{
		{"every time", 1000, 12, 8, 0},                // as_of 3 and 4..10 (until 11)
		{"at most 256", 2000, 1000, -1, 256},          // 1e6/2000 = 500 allowed
		{"the work bounds them", 100000, 200, -1, 10}, // 1e6/1e5 = 10
		{"the work allows them", 20000, 40, 36, 50},   // 1e6/2e4 = 50 > 36
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tables := decodeAndLoad(t, "g.json", gen(tc.rows, tc.batches))
			got := CheckTimes(s, tables)
			if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("times not ascending and distinct: %v", got)
			}
			if got[0] != 3 || got[len(got)-1] >= uint64(tc.batches-1) {
				t.Fatalf("times %v outside [3, %d)", got, tc.batches-1)
			}
			if tc.want < 0 {
				// The quartiles and the last of every input time after
				// as_of are among them.
				var later []uint64
				for tm := uint64(4); tm < uint64(tc.batches-1); tm++ {
					later = append(later, tm)
				}
				n := len(later)
				for _, q := range []int{n / 4, n / 2, 3 * n / 4, n - 1} {
					if !slices.Contains(got, later[q]) {
						t.Errorf("time %d (a quartile or the last) missing from %v", later[q], got)
					}
				}
			}
			if tc.want >= 0 {
				if len(got) != tc.want {
					t.Errorf("%d times, want every one of %d: %v", len(got), tc.want, got)
				}
				return
			}
			if len(got) != tc.k {
				t.Errorf("%d times, want %d (as_of, the quartiles, the last and the others spread evenly)", len(got), tc.k)
			}
		})
	}
}

// TestCheckMaintainingDataflowsCounts: imported, each index's maintaining
// dataflow's own error counts, weighted by the reads of their collections
// inside it, plus the errors of the collections it imports through other
// indexes, sum to the errors its index carries; a count reported twice is
// a difference naming the index.
func TestCheckMaintainingDataflowsCounts(t *testing.T) {
	src := `{"version": 1, "name": "merr",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,0],[0,1,2,1],[1,1,3,0],[2,-1,1,0],[2,1,1,2]]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,1,0],[0,1,2,5],[1,1,3,1],[2,1,2,0]]}},
	  "views": {"va": {"input": "a", "map": [{"name": "q", "expr": "10 / x"}]},
	            "vb": {"input": "b", "map": [{"name": "r", "expr": "10 / y"}]},
	            "vj": {"query": {"from": [{"as": "p", "collection": "va"}, {"as": "s", "collection": "vb"}, {"as": "u", "collection": "vb"}],
	                             "on": [["p.k", "s.k", "u.k"]], "map": [{"name": "m", "expr": "p.q / (s.r - 2)"}], "project": ["p.k", "m"]}}},
	  "indexes": {"va_k": {"on": "va", "key": ["k"]}, "vj_k": {"on": "vj", "key": ["p_k"]}},
	  "query": {"from": [{"as": "j", "collection": "vj"}], "project": ["j.p_k", "j.m"]}}`
	s, tables := decodeAndLoad(t, "merr.json", src)
	var vj *plan.ResolvedIndex
	for _, ix := range s.Plan.Indexes {
		if ix.Name == "vj_k" {
			vj = ix
		}
	}
	own, imported := maintainWeights(vj)
	if !maps.Equal(own, map[string]int64{"vj": 1, "vb": 2}) || !maps.Equal(imported, map[string]int64{"va": 1}) {
		t.Fatalf("weights of vj_k's dataflow: own %v, imported %v; want vj 1 and vb 2 built, va 1 imported", own, imported)
	}
	diffs, err := Check(context.Background(), s, tables, CheckCases(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	in := ReferenceInputs(s, tables)
	res, stages, _, err := Evaluate(context.Background(), s, tables, SessionOptions{Mode: render.Imported, Workers: 2}, []uint64{2})
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := countDiffs(s.Plan, in, render.Imported, 2, stages, res[0]); err != nil || ds != nil {
		t.Fatalf("countDiffs: %q %v", ds, err)
	}
	doubled := false
	for i := range stages {
		if stages[i].Dataflow == render.MaintainID("vj_k") && stages[i].Collection == "vb" && stages[i].Errors != 0 {
			stages[i].Errors *= 2
			doubled = true
		}
	}
	if !doubled {
		t.Fatalf("vj_k's dataflow counted no errors of vb: %v", stages)
	}
	if ds, _ := countDiffs(s.Plan, in, render.Imported, 2, stages, res[0]); len(ds) != 1 || !strings.Contains(ds[0], "index vj_k:") || !strings.Contains(ds[0], "[va: 1 errors read 1 times]") {
		t.Errorf("doubled counts of vj_k's dataflow: %q, want one difference naming vj_k", ds)
	}
}

// TestEvaluateWaitsForEveryIndex: an index the query does not read (a
// chain of views over a join, whose dataflow finishes after the query's
// output) has finished when Evaluate returns: its dataflow's error counts
// are those of its whole input, as check compares them.
func TestEvaluateWaitsForEveryIndex(t *testing.T) {
	s, err := spec.ReadFile("spec/testdata/unread_index.json")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Load(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := ReferenceInputs(s, tables)
	n := 10
	if testing.Short() {
		n = 3
	}
	for range n {
		_, stages, _, err := Evaluate(context.Background(), s, tables, SessionOptions{Mode: render.Imported, Workers: 2}, []uint64{5})
		if err != nil {
			t.Fatal(err)
		}
		if ds, err := maintainDiffs(s.Plan, in, 5, stages); err != nil || ds != nil {
			t.Fatalf("after Evaluate: %q %v", ds, err)
		}
	}
}

// TestAgreeUpTo: the configurations are compared with each other up to
// the last compared time before the reference first says a count may
// overflow, and not at all when it says so at as_of.
func TestAgreeUpTo(t *testing.T) {
	times := []uint64{0, 2, 5, 7}
	for _, c := range []struct {
		from   int // the first result that may overflow; len(times) for none
		hi     uint64
		agrees bool
	}{{4, 7, true}, {2, 2, true}, {3, 5, true}, {0, 0, false}} {
		want := make([]*reference.Result, len(times))
		for i := range want {
			want[i] = &reference.Result{Time: times[i], MayOverflow: i >= c.from}
		}
		if hi, ok := agreeUpTo(times, want); hi != c.hi || ok != c.agrees {
			t.Errorf("may overflow from result %d: agreeUpTo = %d, %v; want %d, %v", c.from, hi, ok, c.hi, c.agrees)
		}
	}
}

// TestCheckReportsTheTimesItCompared: a check of one configuration
// compares it with no other (CrossTimes 0); of two, at as_of and every
// input time after it.
func TestCheckReportsTheTimesItCompared(t *testing.T) {
	src := `{"version": 1, "name": "times",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,1],[2,1,2,2],[5,1,3,3]]}},
	  "query": {"from": [{"as": "p", "collection": "a"}], "project": ["p.k", "p.x"]}}`
	s, tables := decodeAndLoad(t, "times.json", src)
	one := []CheckCase{{Mode: render.Direct, Join: plan.Linear, Workers: 1}}
	for _, c := range []struct {
		cases []CheckCase
		cross int
	}{{one, 0}, {append(one, CheckCase{Mode: render.Direct, Join: plan.Linear, Workers: 2}), 3}} {
		rep, err := CheckReported(context.Background(), s, tables, c.cases)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Diffs) != 0 || rep.ReferenceTimes != 3 || rep.CrossTimes != c.cross {
			t.Errorf("%d configurations: %+v, want no differences, 3 reference times, %d compared between them", len(c.cases), rep, c.cross)
		}
	}
}
