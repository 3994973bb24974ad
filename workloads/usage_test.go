package workloads

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads/spec"
)

// joinSrc joins two inline inputs whose columns differ by one name; a
// and b alike have arity 2, so only their names tell their tables apart.
const joinSrc = `{"version": 1, "name": "w", "as_of": 1,
  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,10],[0,1,2,20],[1,1,3,30],[2,1,1,11],[3,-1,2,20]]},
             "b": {"columns": ["k", "y"], "rows": [[0,1,1,5],[1,1,2,6],[2,1,3,7]]}},
  "indexes": {"a_k": {"on": "a", "key": ["k"]}, "b_k": {"on": "b", "key": ["k"]}},
  "query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}], "on": [["p.k", "q.k"]]}}`

// noPanic runs f, failing the test on a panic or when f has not returned
// within 20 seconds.
func noPanic(t *testing.T, name string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- errors.New("panic")
				t.Errorf("%s: panic: %v", name, r)
			}
		}()
		done <- f()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no return after 20s", name)
		return nil
	}
}

// A spec and tables that do not belong together are refused by
// `NewSession`, Evaluate and Check with an error naming what is wrong:
// never a panic, and never an answer computed from the wrong inputs (a
// missing table read as an empty input, two tables of one arity swapped).
func TestNewSessionRefusesTablesNotOfItsSpec(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	w, err := Lookup("lookup")
	if err != nil {
		t.Fatal(err)
	}
	other, err := w.Benches[0].Spec(map[string]int64{"rows": 100, "keys": 10})
	if err != nil {
		t.Fatal(err)
	}
	otherTabs, err := Load(other, 0)
	if err != nil {
		t.Fatal(err)
	}
	short := *tabs[0]
	short.Diffs = short.Diffs[:2]
	late := *tabs[1]
	late.Times = append([]uint64{spec.MaxTime + 1}, late.Times[1:]...)
	// A diff of 0, which no decoder loads: the engine ran it, and Check
	// failed with the reference's ErrInput (no ErrUsage) as its error.
	zero := *tabs[1]
	zero.Diffs = append([]int64{1, 0}, zero.Diffs[2:]...)
	for _, c := range []struct {
		name   string
		s      *spec.Spec
		tables []*spec.Table
		want   string
	}{
		{"nil spec", nil, tabs, "nil spec"},
		{"spec not decoded", &spec.Spec{Name: "w", Inputs: s.Inputs}, tabs, `spec "w" has no resolved plan`},
		{"nil tables", s, nil, "0 tables for the 2 inputs"},
		{"one table", s, tabs[:1], "1 tables for the 2 inputs"},
		{"three tables", s, append(tabs[:2:2], tabs[0]), "3 tables for the 2 inputs"},
		{"nil table", s, []*spec.Table{tabs[0], nil}, `table 1, for input "b" of spec "w", is nil`},
		{"swapped", s, []*spec.Table{tabs[1], tabs[0]}, `table 0 has columns [k y], but input 0 of spec "w", "a", has columns [k x]`},
		{"another spec's", s, otherTabs, "table 0 has columns [id key amount]"},
		{"for another spec", other, tabs, `input 0 of spec "lookup", "facts"`},
		{"ragged", s, []*spec.Table{&short, tabs[1]}, "has 5 times, 2 diffs and 10 values"},
		{"time past MaxTime", s, []*spec.Table{tabs[0], &late}, "time 18446744073709551615 is above the largest time"},
		{"diff 0", s, []*spec.Table{tabs[0], &zero}, `table 1 (input "b"), update 1: diff 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want ErrUsage saying %q", what, err, c.want)
				}
			}
			check("NewSession", noPanic(t, "NewSession", func() error {
				se, err := NewSession(c.s, c.tables, SessionOptions{Workers: 1})
				if err == nil {
					se.Close(ctx)
				}
				return err
			}))
			check("Evaluate", noPanic(t, "Evaluate", func() error {
				_, _, _, err := Evaluate(ctx, c.s, c.tables, SessionOptions{Workers: 1}, []uint64{1})
				return err
			}))
			check("Check", noPanic(t, "Check", func() error {
				diffs, err := Check(ctx, c.s, c.tables, []CheckCase{{Workers: 1}})
				if err == nil && len(diffs) > 0 {
					return errors.New(diffs[0])
				}
				return err
			}))
		})
	}
}

// Options out of range are refused before any runtime starts: workers 0
// or negative (once quietly run on one worker), more than MaxWorkers, and
// an index mode or join strategy the renderer does not have (once run as
// direct, or as a linear join, under the name asked for).
func TestNewSessionRefusesOptionsOutOfRange(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx := context.Background()
	for _, c := range []struct {
		opts SessionOptions
		want string
	}{
		{SessionOptions{}, "0 workers: want 1 to 1024"},
		{SessionOptions{Workers: -1}, "-1 workers: want 1 to 1024"},
		{SessionOptions{Workers: MaxWorkers + 1}, "1025 workers: want 1 to 1024"},
		{SessionOptions{Mode: 7, Workers: 1}, "index mode 7"},
		{SessionOptions{Join: 7, Workers: 1}, "join JoinKind(7)"},
	} {
		err := noPanic(t, "NewSession", func() error {
			se, err := NewSession(s, tabs, c.opts)
			if err == nil {
				se.Close(ctx)
			}
			return err
		})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSession with %+v: %v, want ErrUsage saying %q", c.opts, err, c.want)
		}
		_, _, _, err = Evaluate(ctx, s, tabs, c.opts, []uint64{1})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Evaluate with %+v: %v, want ErrUsage saying %q", c.opts, err, c.want)
		}
	}
}

// Every call that feeds or runs a closed `Session` returns ErrClosed, in
// both modes, at once: WaitIndexes once waited forever on the shut-down
// runtimes of an imported one (a context without deadline never ended
// it). Close itself may be called again, and the results read after it.
func TestCallsAfterCloseAreRefused(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx := context.Background()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Workers: 2, Capture: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := se.FeedThrough(1); err != nil {
				t.Fatal(err)
			}
			if err := se.WaitIndexes(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := se.InstallQuery(ctx); err != nil {
				t.Fatal(err)
			}
			if err := se.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := se.Close(ctx); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			calls := contextCalls(se, ctx)
			calls["FeedThrough"] = func() error { return se.FeedThrough(2) }
			for name, call := range calls {
				if err := noPanic(t, name, call); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close: %v, want ErrClosed", name, err)
				}
			}
			if got := se.Output().Rows(); got != 2 {
				t.Errorf("output rows after Close: %d, want the 2 at as_of", got)
			}
		})
	}
}

// The zero `Session` (a `var se Session`, never made by NewSession)
// refuses every call that returns an error, with ErrUsage saying how to
// make one, where each panicked with a nil dereference; the others read
// nothing.
func TestZeroSessionIsRefused(t *testing.T) {
	ctx := context.Background()
	var se Session
	calls := contextCalls(&se, ctx)
	calls["FeedThrough"] = func() error { return se.FeedThrough(2) }
	calls["Result"] = func() error {
		_, err := se.Result(0)
		return err
	}
	calls["Close"] = func() error { return se.Close(ctx) }
	for name, call := range calls {
		if err := noPanic(t, name, call); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "NewSession") {
			t.Errorf("%s of the zero Session: %v, want ErrUsage naming NewSession", name, err)
		}
	}
	if err := noPanic(t, "Close", func() error { return se.Close(ctx) }); !errors.Is(err, ErrUsage) {
		t.Errorf("second Close of the zero Session: %v, want ErrUsage", err)
	}
	if got := se.LastTime(); got != 0 {
		t.Errorf("LastTime of the zero Session: %d, want 0", got)
	}
	if se.Output() != nil || se.Metrics() != nil || se.Updates(0) != 0 || se.Leaks() != nil {
		t.Error("the zero Session read an output, metrics, updates or leaks")
	}
}

// The query is installed once, as one copy or more: a second
// InstallQuery is refused and leaves the first one's Output, so Finish
// still ends (it once waited forever for the refused copy's output,
// which no dataflow writes); k below 1 and negative reads are refused
// where they once panicked.
func TestInstallQueryOnce(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Workers: 1, Capture: true})
			if err != nil {
				t.Fatal(err)
			}
			defer se.Close(ctx)
			for _, k := range []int{0, -1} {
				if err := noPanic(t, "InstallQueries", func() error { _, err := se.InstallQueries(ctx, k); return err }); !errors.Is(err, ErrUsage) {
					t.Errorf("InstallQueries(%d): %v, want ErrUsage", k, err)
				}
			}
			if err := noPanic(t, "Peeks", func() error { _, err := se.Peeks(ctx, -1); return err }); !errors.Is(err, ErrUsage) {
				t.Errorf("Peeks(-1): %v, want ErrUsage", err)
			}
			if err := se.FeedThrough(1); err != nil {
				t.Fatal(err)
			}
			if _, err := se.InstallQuery(ctx); err != nil {
				t.Fatal(err)
			}
			out := se.Output()
			if _, err := se.InstallQuery(ctx); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "installed already") {
				t.Errorf("second InstallQuery: %v, want ErrUsage", err)
			}
			if se.Output() != out {
				t.Error("a refused InstallQuery replaced the Output")
			}
			if _, _, err := se.Finish(ctx); err != nil {
				t.Fatalf("Finish after a refused InstallQuery: %v", err)
			}
			if got := out.Rows(); got != 3 {
				t.Errorf("rows at the end: %d, want 3", got)
			}
			if err := se.Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// untilSrc is a spec whose output answers at times 1 and 2 only.
const untilSrc = `{"version": 1, "name": "u", "as_of": 1, "until": 3,
  "inputs": {"a": {"columns": ["k"], "rows": [[0,1,1],[1,1,2],[2,1,3],[3,1,4]]}},
  "indexes": {"a_k": {"on": "a", "key": ["k"]}},
  "query": {"from": [{"as": "p", "collection": "a"}]}}`

// Evaluate answers at times from as_of to before until, in the order
// asked, and refuses one outside before it runs anything: before as_of
// the output once read as empty and at until as holding an update of
// until, neither of which the query's output is.
func TestEvaluateTimes(t *testing.T) {
	s, tabs := decodeAndLoad(t, "u.json", untilSrc)
	ctx := context.Background()
	in := ReferenceInputs(s, tabs)
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		opts := SessionOptions{Mode: mode, Workers: 2}
		times := []uint64{2, 1, 2}
		got, _, leak, err := Evaluate(ctx, s, tabs, opts, times)
		if err != nil || leak != nil {
			t.Fatalf("%v: %v, held %v", mode, err, leak)
		}
		for i, tm := range times {
			want, err := reference.Eval(s.Plan, in, tm)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range reference.Compare(want, got[i]) {
				t.Errorf("%v: time %d (asked %d.): %s", mode, tm, i+1, d)
			}
		}
		for _, c := range []struct {
			times []uint64
			want  string
		}{
			{[]uint64{0}, "time 0 is before as_of 1"},
			{[]uint64{1, 3}, "time 3 is not before until 3"},
			{[]uint64{5}, "time 5 is not before until 3"},
		} {
			_, _, _, err := Evaluate(ctx, s, tabs, opts, c.times)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: Evaluate at %v: %v, want ErrUsage saying %q", mode, c.times, err, c.want)
			}
		}
	}
}

// Result reads a captured output where it is complete, and says why it
// cannot otherwise: no query yet (once a nil dereference), no capture
// (likewise), a time the query does not answer, or an output not
// complete at the time asked (once a partial answer read as whole).
func TestResultRefusesWhatItCannotAnswer(t *testing.T) {
	s, tabs := decodeAndLoad(t, "u.json", untilSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, capture := range []bool{true, false} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: render.Direct, Workers: 1, Capture: capture})
		if err != nil {
			t.Fatal(err)
		}
		defer se.Close(ctx)
		result := func(tm uint64, want string) {
			t.Helper()
			var res *reference.Result
			err := noPanic(t, "Result", func() error {
				var err error
				res, err = se.Result(tm)
				return err
			})
			if want == "" {
				if err != nil {
					t.Errorf("capture %v: Result(%d): %v", capture, tm, err)
				} else if len(res.Rows) != int(tm)+1 {
					t.Errorf("capture %v: Result(%d): %d rows, want %d", capture, tm, len(res.Rows), tm+1)
				}
			} else if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
				t.Errorf("capture %v: Result(%d): %v, want ErrUsage saying %q", capture, tm, err, want)
			}
		}
		result(1, "the query is not installed")
		if err := se.FeedThrough(1); err != nil {
			t.Fatal(err)
		}
		if _, err := se.InstallQuery(ctx); err != nil {
			t.Fatal(err)
		}
		if !capture {
			result(1, "the output is only counted")
			continue
		}
		result(1, "")
		result(2, "the output is not complete there yet")
		if _, _, err := se.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		result(2, "")
		result(0, "before as_of")
		result(3, "not before until")
	}
}

// The usual call, Check(ctx, s, tables, CheckCases(s)), with a nil or
// hand-built spec is Check's error, not a panic in CheckCases or
// CheckTimes on the way; CheckTimes skips a nil table.
func TestCheckArgumentsOfANilSpec(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	for _, bad := range []*spec.Spec{nil, {Name: "w", Inputs: s.Inputs}} {
		err := noPanic(t, "Check", func() error {
			_, err := Check(context.Background(), bad, tabs, CheckCases(bad))
			if CheckTimes(bad, tabs) != nil {
				t.Error("CheckTimes of a spec with no plan: some times")
			}
			return err
		})
		if !errors.Is(err, ErrUsage) {
			t.Errorf("Check of spec %p: %v, want ErrUsage", bad, err)
		}
	}
	if got := noPanic(t, "CheckTimes", func() error {
		if ts := CheckTimes(s, []*spec.Table{tabs[0], nil}); len(ts) == 0 {
			return errors.New("no times")
		}
		return nil
	}); got != nil {
		t.Error(got)
	}
}

// Check refuses, wrapping ErrUsage, cases it cannot run and no cases at
// all, before anything runs: a case of 0 workers was run and reported as
// a difference, and no cases returned no differences and no error, a
// check of nothing that passed.
func TestCheckRefusesBadOrNoCases(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx := context.Background()
	for _, tc := range []struct {
		cases []CheckCase
		want  string
	}{
		{nil, `no check cases for spec "w"`},
		{[]CheckCase{}, `no check cases for spec "w"`},
		{[]CheckCase{{}}, "0 workers: want 1 to 1024 (check case 0 of 1)"},
		{[]CheckCase{{Mode: render.Direct, Join: plan.Delta, Workers: 1}, {Mode: render.Direct, Join: plan.Delta, Workers: MaxWorkers + 1}}, "1025 workers: want 1 to 1024 (check case 1 of 2)"},
		{[]CheckCase{{Mode: 7, Join: plan.Delta, Workers: 1}}, "index mode 7"},
		{[]CheckCase{{Mode: render.Imported, Join: 9, Workers: 1}}, "join"},
	} {
		diffs, err := Check(ctx, s, tabs, tc.cases)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) || diffs != nil {
			t.Errorf("Check(%v): %q, %v; want no differences and ErrUsage saying %q", tc.cases, diffs, err, tc.want)
		}
	}
}

// Runs at once over the same loaded tables (a built-in's and
// a spec's decoded from bytes, whose inline rows Load returns in the
// spec's own table's slices) each get the reference's answer in every mode and
// join, and leave the tables as they were (run with -race: the tables are
// only read).
func TestRunsShareTables(t *testing.T) {
	w, err := Lookup("lookup")
	if err != nil {
		t.Fatal(err)
	}
	built, err := w.Benches[0].Spec(map[string]int64{"rows": 300, "keys": 30})
	if err != nil {
		t.Fatal(err)
	}
	builtTabs, err := Load(built, 0)
	if err != nil {
		t.Fatal(err)
	}
	inline, inlineTabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range []struct {
		s      *spec.Spec
		tables []*spec.Table
	}{{built, builtTabs}, {inline, inlineTabs}} {
		before := make([]spec.Table, len(c.tables))
		for i, tb := range c.tables {
			before[i] = spec.Table{Columns: slices.Clone(tb.Columns), Times: slices.Clone(tb.Times), Diffs: slices.Clone(tb.Diffs), Vals: slices.Clone(tb.Vals), Input: tb.Input}
		}
		t.Cleanup(func() {
			for i, tb := range c.tables {
				if !reflect.DeepEqual(*tb, before[i]) {
					t.Errorf("%s: table %d changed under the runs reading it", c.s.Name, i)
				}
			}
		})
		times := CheckTimes(c.s, c.tables)
		in := ReferenceInputs(c.s, c.tables)
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			for _, join := range []plan.JoinKind{plan.Linear, plan.Delta} {
				wg.Go(func() {
					got, _, leak, err := Evaluate(ctx, c.s, c.tables, SessionOptions{Mode: mode, Join: join, Workers: 2}, times)
					if err != nil || leak != nil {
						t.Errorf("%s %v %v: %v, held %v", c.s.Name, mode, join, err, leak)
						return
					}
					for i, tm := range times {
						want, err := reference.Eval(c.s.Plan, in, tm)
						if err != nil {
							t.Error(err)
							return
						}
						for _, d := range reference.Compare(want, got[i]) {
							t.Errorf("%s %v %v: time %d: %s", c.s.Name, mode, join, tm, d)
						}
					}
				})
			}
		}
	}
	wg.Wait()
}

// Load of a nil spec, or of one built by hand (its inputs never checked),
// is an error, not a panic on the missing generator.
func TestLoadRefusesASpecNotDecoded(t *testing.T) {
	for _, s := range []*spec.Spec{nil, {Name: "w", Inputs: []spec.Input{{Name: "a", Columns: []string{"x"}, Source: spec.SourceGenerate}}}} {
		var tabs []*spec.Table
		err := noPanic(t, "Load", func() error {
			var err error
			tabs, err = Load(s, 0)
			return err
		})
		if !errors.Is(err, ErrUsage) || tabs != nil {
			t.Errorf("Load(%p): %v, %d tables; want ErrUsage and none", s, err, len(tabs))
		}
	}
}

// Feeding through a time the inputs are past already does nothing: once,
// the runtime's refusal of a frontier going back ("Frontier {2} is before
// the input frontier {3}") came back instead. The run then goes on to the
// reference's answer.
func TestFeedThroughAnEarlierTime(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want, err := reference.Eval(s.Plan, ReferenceInputs(s, tabs), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Workers: 2, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		defer se.Close(ctx)
		for _, tm := range []uint64{2, 1, 2, 0} {
			if err := se.FeedThrough(tm); err != nil {
				t.Fatalf("%v: FeedThrough(%d): %v", mode, tm, err)
			}
		}
		if err := se.WaitIndexes(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := se.InstallQuery(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, _, err := se.Finish(ctx); err != nil {
				t.Fatalf("%v: Finish: %v", mode, err)
			}
			if err := se.FeedThrough(1); err != nil {
				t.Fatalf("%v: FeedThrough(1) after Finish: %v", mode, err)
			}
		}
		got, err := se.Result(3)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range reference.Compare(want, got) {
			t.Errorf("%v: %s", mode, d)
		}
		if err := se.Close(ctx); err != nil {
			t.Fatalf("%v: Close: %v", mode, err)
		}
	}
}

// TestCheckedReferenceInputsRefusesWhatCheckTablesRefuses:
// ReferenceInputs panicked on a nil spec, a nil table or more tables than
// inputs, and read too few tables, or tables of the wrong columns, as
// inputs with no updates or with another input's: an answer from the
// wrong data. CheckedReferenceInputs returns CheckTables' error for each,
// and for Load's tables exactly what ReferenceInputs gives.
func TestCheckedReferenceInputsRefusesWhatCheckTablesRefuses(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	other := spec.NewTable([]string{"k", "z"}, 0)
	for _, c := range []struct {
		what   string
		s      *spec.Spec
		tables []*spec.Table
		want   string
	}{
		{"nil spec", nil, tabs, "nil spec"},
		{"spec built by hand", &spec.Spec{Name: "w", Inputs: s.Inputs}, tabs, "no resolved plan"},
		{"too few tables", s, tabs[:1], "1 tables for the 2 inputs"},
		{"too many tables", s, append(slices.Clone(tabs), tabs[0]), "3 tables for the 2 inputs"},
		{"a nil table", s, []*spec.Table{tabs[0], nil}, "is nil"},
		{"swapped", s, []*spec.Table{tabs[1], tabs[0]}, "has columns [k y]"},
		{"another spec's table", s, []*spec.Table{tabs[0], other}, "has columns [k z]"},
	} {
		var in reference.Inputs
		err := noPanic(t, c.what, func() error {
			var err error
			in, err = CheckedReferenceInputs(c.s, c.tables)
			return err
		})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) || in != nil {
			t.Errorf("%s: %v, %d inputs; want ErrUsage saying %q and none", c.what, err, len(in), c.want)
		}
	}
	in, err := CheckedReferenceInputs(s, tabs)
	if err != nil {
		t.Fatal(err)
	}
	if want := ReferenceInputs(s, tabs); !reflect.DeepEqual(in, want) || len(in) != 2 {
		t.Errorf("Load's tables: %v, want %v", in, want)
	}
}

// sameColsSrc has two inputs of the same columns, told apart by name only.
const sameColsSrc = `{"version": 1, "name": "w",
  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,1,10],[1,1,2,20]]},
             "b": {"columns": ["k", "x"], "rows": [[0,1,1,5],[1,1,2,6],[1,1,3,7]]}},
  "query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}], "on": [["p.k", "q.k"]],
            "filter": ["p.x > q.x"]}}`

// TestSwappedTablesOfEqualColumns: two inputs of the same columns
// swapped passed CheckTables, and the engine ran the workload with its
// inputs exchanged (the reference read them the same way, so Check found
// nothing). Load's tables now name their input and are refused swapped,
// by every entry point; tables made otherwise carry no name and pass, and
// the engine and the reference then agree on the exchanged workload.
func TestSwappedTablesOfEqualColumns(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", sameColsSrc)
	if tabs[0].Input != "a" || tabs[1].Input != "b" || s.Inputs[0].Rows.Input != "" {
		t.Fatalf("Load's tables name %q and %q; the spec's own rows %q", tabs[0].Input, tabs[1].Input, s.Inputs[0].Rows.Input)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	swapped := []*spec.Table{tabs[1], tabs[0]}
	opts := SessionOptions{Mode: render.Direct, Join: plan.Linear, Workers: 1}
	for name, call := range map[string]func() error{
		"CheckTables": func() error { return CheckTables(s, swapped) },
		"CheckedReferenceInputs": func() error {
			_, err := CheckedReferenceInputs(s, swapped)
			return err
		},
		"NewSession": func() error {
			se, err := NewSession(s, swapped, opts)
			if err == nil {
				se.Close(ctx)
			}
			return err
		},
		"Evaluate": func() error {
			_, _, _, err := Evaluate(ctx, s, swapped, opts, []uint64{1})
			return err
		},
		"Check": func() error {
			_, err := Check(ctx, s, swapped, []CheckCase{{Mode: render.Direct, Join: plan.Linear, Workers: 1}})
			return err
		},
	} {
		if err := noPanic(t, name, call); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `loaded for input "b"`) {
			t.Errorf("%s of swapped tables: %v, want ErrUsage naming the input", name, err)
		}
	}
	// Tables made by hand carry no name: swapped, they are a workload of
	// exchanged inputs, which engine and reference read alike.
	a, b := *tabs[0], *tabs[1]
	a.Input, b.Input = "", ""
	byHand := []*spec.Table{&b, &a}
	diffs, err := Check(ctx, s, byHand, []CheckCase{{Mode: render.Direct, Join: plan.Linear, Workers: 1}})
	if err != nil || len(diffs) != 0 {
		t.Fatalf("Check of hand-made tables swapped: %v, %v", diffs, err)
	}
	got, _, _, err := Evaluate(ctx, s, byHand, opts, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, err := Evaluate(ctx, s, tabs, opts, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	if len(reference.Compare(want[0], got[0])) == 0 {
		t.Errorf("the exchanged workload answers as the spec's own: %s", got[0])
	}
}

// TestFinishBeforeInstallQueryIsRefused: Finish before InstallQuery fed
// every update, closed the inputs and returned a duration and a count as
// if a query had run, with no output to wait for; the query could not be
// installed afterwards at as_of with its inputs closed. It is an ErrUsage
// error now and feeds nothing: the query still installs and runs after it.
func TestFinishBeforeInstallQueryIsRefused(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Linear, Workers: 1, Capture: true})
			if err != nil {
				t.Fatal(err)
			}
			defer se.Close(ctx)
			for _, finish := range []func(context.Context) (time.Duration, int, error){se.Finish, se.FinishRounds} {
				if _, n, err := finish(ctx); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "not installed") || n != 0 {
					t.Errorf("Finish before InstallQuery: %d updates, %v; want ErrUsage", n, err)
				}
			}
			if err := se.FeedThrough(s.Plan.Plan.AsOf); err != nil {
				t.Fatal(err)
			}
			if err := se.WaitIndexes(ctx, s.Plan.Plan.AsOf); err != nil {
				t.Fatal(err)
			}
			if _, err := se.InstallQuery(ctx); err != nil {
				t.Fatal(err)
			}
			if _, n, err := se.Finish(ctx); err != nil || n == 0 {
				t.Fatalf("Finish after InstallQuery: %d updates, %v", n, err)
			}
			want, err := reference.Eval(s.Plan, ReferenceInputs(s, tabs), 3)
			if err != nil {
				t.Fatal(err)
			}
			got, err := se.Result(3)
			if err != nil {
				t.Fatal(err)
			}
			if d := reference.Compare(want, got); len(d) > 0 {
				t.Errorf("after a refused Finish: %v", d)
			}
		})
	}
}

// TestReadsAtAsOfAfterPeeksOrFinish: Peeks and Finish let every index
// compact past as_of (imported), so a call that reads at as_of after them
// (InstallQuery, ImportOnly, Stall, a second Peeks) cannot be created
// there. Imported, InstallQuery after Peeks failed with the controller's
// compaction-backward error and Stall returned nil with its reader's
// create failed (the failure came at Close), where direct installed the
// query and answered. Each is now an ErrUsage error, the same in both
// modes, and nothing of the session fails: Close returns nil.
func TestReadsAtAsOfAfterPeeksOrFinish(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const afterPeeks = "reads at as_of 1, but Peeks let the indexes compact to 2 (imported): call "
	msgs := map[render.Mode][]string{}
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		var got []string
		note := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrUsage) {
				t.Errorf("%s: %s: %v, want ErrUsage", mode, what, err)
				return
			}
			got = append(got, err.Error())
		}
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Linear, Workers: 1, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := se.Peeks(ctx, 2); err != nil {
			t.Fatalf("%s: Peeks: %v", mode, err)
		}
		_, err = se.InstallQuery(ctx)
		note("InstallQuery after Peeks", err)
		if err != nil && !strings.Contains(err.Error(), "InstallQuery "+afterPeeks+"InstallQuery before Peeks") {
			t.Errorf("%s: InstallQuery after Peeks: %v", mode, err)
		}
		_, err = se.ImportOnly(ctx)
		note("ImportOnly after Peeks", err)
		note("Stall after Peeks", se.Stall(ctx))
		_, err = se.Peeks(ctx, 1)
		note("a second Peeks", err)
		if err := se.Close(ctx); err != nil {
			t.Errorf("%s: Close after the refused calls: %v", mode, err)
		}

		// After Finish, which compacts each round.
		se, err = NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Linear, Workers: 1, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := se.FeedThrough(s.Plan.Plan.AsOf); err != nil {
			t.Fatal(err)
		}
		if _, err := se.InstallQuery(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := se.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		note("Stall after Finish", se.Stall(ctx))
		_, err = se.ImportOnly(ctx)
		note("ImportOnly after Finish", err)
		_, err = se.Peeks(ctx, 1)
		note("Peeks after Finish", err)
		if err := se.Close(ctx); err != nil {
			t.Errorf("%s: Close after Finish and the refused calls: %v", mode, err)
		}
		msgs[mode] = got
	}
	if !slices.Equal(msgs[render.Imported], msgs[render.Direct]) {
		t.Errorf("the modes refuse alike, imported:\n%s\ndirect:\n%s", strings.Join(msgs[render.Imported], "\n"), strings.Join(msgs[render.Direct], "\n"))
	}
}

// A wait the inputs are not fed far enough for would never end: the
// `Session` feeds nothing while its one goroutine waits. InstallQuery
// (output at as_of) and WaitIndexes(t) before the inputs are fed through
// that time are refused, wrapping ErrUsage and naming how far they are
// fed, in both modes alike, and the refused install creates nothing.
// Both once blocked until their context ended (InstallQuery in both
// modes, WaitIndexes imported), forever without a deadline. Fed far
// enough, the same calls answer.
func TestWaitsTheInputsCannotReachAreRefused(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc) // as_of 1, times 0..3
	bg := context.Background()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Delta, Workers: 2, Capture: true})
			if err != nil {
				t.Fatal(err)
			}
			defer se.Close(bg)
			refused := func(name, want string, call func() error) {
				t.Helper()
				if err := noPanic(t, name, call); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want ErrUsage saying %q", name, err, want)
				}
			}
			install := func() error { _, err := se.InstallQuery(bg); return err }
			refused("InstallQuery before any feed", "InstallQuery waits for time 1, but no input is fed yet: FeedThrough(1) first", install)
			refused("WaitIndexes(1) before any feed", "WaitIndexes waits for time 1, but no input is fed yet", func() error { return se.WaitIndexes(bg, 1) })
			if err := se.FeedThrough(0); err != nil {
				t.Fatal(err)
			}
			refused("InstallQuery after FeedThrough(0)", "inputs are fed only through 0: FeedThrough(1) first", install)
			if _, _, err := se.Finish(bg); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "not installed") {
				t.Errorf("Finish after a refused InstallQuery: %v, want ErrUsage (nothing installed)", err)
			}
			if err := se.FeedThrough(1); err != nil {
				t.Fatal(err)
			}
			refused("WaitIndexes(5) after FeedThrough(1)", "WaitIndexes waits for time 5, but the inputs are fed only through 1: FeedThrough(5) first", func() error { return se.WaitIndexes(bg, 5) })
			if err := noPanic(t, "WaitIndexes(1)", func() error { return se.WaitIndexes(bg, 1) }); err != nil {
				t.Fatalf("WaitIndexes(1) after FeedThrough(1): %v", err)
			}
			if err := noPanic(t, "InstallQuery", install); err != nil {
				t.Fatalf("InstallQuery after FeedThrough(1): %v", err)
			}
			if _, _, err := se.Finish(bg); err != nil {
				t.Fatal(err)
			}
			// Every input is closed: every time is fed.
			if err := noPanic(t, "WaitIndexes(5) at the end", func() error { return se.WaitIndexes(bg, 5) }); err != nil {
				t.Errorf("WaitIndexes(5) after Finish: %v", err)
			}
			checkLast(t, se, s, tabs)
			if err := se.Close(bg); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// checkLast compares the session's Result at its last time with the
// reference's.
func checkLast(t *testing.T, se *Session, s *spec.Spec, tabs []*spec.Table) {
	t.Helper()
	last := se.LastTime()
	got, err := se.Result(last)
	if err != nil {
		t.Fatalf("Result(%d): %v", last, err)
	}
	want, err := reference.Eval(s.Plan, ReferenceInputs(s, tabs), last)
	if err != nil {
		t.Fatal(err)
	}
	if d := reference.Compare(want, got); len(d) > 0 {
		t.Errorf("Result(%d): %v", last, d)
	}
}

// An InstallQuery whose wait its context ends leaves the query
// installed: Finish then feeds every round and the output answers, in
// both modes alike.
func TestFinishAfterACancelledInstall(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Delta, Workers: 2, Capture: true})
			if err != nil {
				t.Fatal(err)
			}
			defer se.Close(ctx)
			if err := se.FeedThrough(s.Plan.Plan.AsOf); err != nil {
				t.Fatal(err)
			}
			ictx, icancel := context.WithCancel(ctx)
			icancel()
			// The output may be complete before the wait looks.
			if _, err := se.InstallQuery(ictx); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("InstallQuery with its context cancelled: %v, want context.Canceled", err)
			}
			if _, _, err := se.Finish(ctx); err != nil {
				t.Fatalf("Finish after the cancelled install: %v", err)
			}
			checkLast(t, se, s, tabs)
			if err := se.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// The indexes are never allowed to compact back (imported): a round
// before the time allowed already moves nothing. Finish after an install
// whose wait was cancelled before the inputs reached as_of (which
// InstallQuery now refuses) allowed the rounds before as_of after the
// install had allowed as_of, and failed with the runtime's "compaction
// never moves back" where direct answered.
func TestAllowCompactionNeverMovesBack(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	se, err := NewSession(s, tabs, SessionOptions{Mode: render.Imported, Join: plan.Delta, Workers: 2, Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close(ctx)
	for _, tm := range []uint64{1, 0, 1} {
		if err := se.allowCompaction(tm); err != nil {
			t.Fatalf("allowCompaction(%d) after 1: %v", tm, err)
		}
	}
	if err := se.FeedThrough(1); err != nil {
		t.Fatal(err)
	}
	if _, err := se.InstallQuery(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := se.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	checkLast(t, se, s, tabs)
	if err := se.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Stall creates its reader once: a second call is an ErrUsage error
// naming Stall, in both modes, where imported sent a second create of the
// same id and failed with the runtime's "a dataflow with this id exists"
// (no ErrUsage) and direct returned nil. The run then goes on and closes
// clean.
func TestStallTwiceIsRefused(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Delta, Workers: 2, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := se.Stall(ctx); err != nil {
			t.Fatalf("%v: Stall: %v", mode, err)
		}
		err = se.Stall(ctx)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "Stall") {
			t.Errorf("%v: a second Stall: %v, want ErrUsage naming Stall", mode, err)
		}
		installFinishAndClose(ctx, t, se, s, tabs, mode)
	}
}

// A `Session` is used by one goroutine at a time: a call made while
// another runs is an ErrUsage error naming both, and changes nothing;
// once the running call returns, the same calls go through. Several
// goroutines feeding one session at once raced on its state (a race
// report) and sent times after the inputs were closed (the runtime's
// "the input is closed" error); now each call is served whole or
// refused, and the run answers as the reference does.
func TestOneCallAtATime(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Delta, Workers: 2, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		// A call running (as if on another goroutine): every other is
		// refused.
		if err := se.enter("Finish"); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func() error{
			"FeedThrough":    func() error { return se.FeedThrough(9) },
			"WaitIndexes":    func() error { return se.WaitIndexes(ctx, 0) },
			"InstallQuery":   func() error { _, err := se.InstallQuery(ctx); return err },
			"InstallQueries": func() error { _, err := se.InstallQueries(ctx, 2); return err },
			"ImportOnly":     func() error { _, err := se.ImportOnly(ctx); return err },
			"Stall":          func() error { return se.Stall(ctx) },
			"Peeks":          func() error { _, err := se.Peeks(ctx, 1); return err },
			"Finish":         func() error { _, _, err := se.Finish(ctx); return err },
			"FinishRounds":   func() error { _, _, err := se.FinishRounds(ctx); return err },
			"Stats":          func() error { _, err := se.Stats(ctx); return err },
			"Result":         func() error { _, err := se.Result(1); return err },
			"Close":          func() error { return se.Close(ctx) },
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), name+" called while Finish runs") {
				t.Errorf("%v: %s while Finish runs: %v, want ErrUsage naming both", mode, name, err)
			}
		}
		if se.next != 0 || se.advanced != 0 || se.query || se.closed {
			t.Fatalf("%v: refused calls changed the session: next %d, advanced %d, query %v, closed %v", mode, se.next, se.advanced, se.query, se.closed)
		}
		se.leave()

		// Goroutines feeding at once: each call whole, or refused.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for tm := range uint64(5) {
					if err := se.FeedThrough(tm); err != nil && !errors.Is(err, ErrUsage) {
						t.Errorf("%v: FeedThrough(%d) beside others: %v", mode, tm, err)
					}
				}
			})
		}
		wg.Wait()
		installFinishAndClose(ctx, t, se, s, tabs, mode)
	}
}

// Peeks takes any count of reads: one too large to make room for at once
// (math.MaxInt) reads until ctx ends and returns its error, where it
// panicked (makeslice: cap out of range) before reading anything.
func TestPeeksOfAHugeCount(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Join: plan.Delta, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = noPanic(t, "Peeks", func() error {
			_, err := se.Peeks(ctx, math.MaxInt)
			return err
		})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v: Peeks(math.MaxInt): %v, want the context's deadline", mode, err)
		}
		if err := se.Close(context.Background()); err != nil {
			t.Errorf("%v: Close: %v", mode, err)
		}
	}
}

// InstallQueries takes 1 to MaxQueries copies: more is an ErrUsage error
// naming the bound that creates nothing, where the copies were all made
// before the first create, and a count of millions ran out of memory
// (math.MaxInt never returned). Refused, the query can still be
// installed.
func TestInstallQueriesBounded(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	se, err := NewSession(s, tabs, SessionOptions{Mode: render.Imported, Join: plan.Delta, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close(ctx)
	if err := se.FeedThrough(s.AsOf); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{MaxQueries + 1, math.MaxInt} {
		_, err := se.InstallQueries(ctx, k)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "want 1 to 1024") {
			t.Errorf("InstallQueries(%d): %v, want ErrUsage naming 1 to 1024", k, err)
		}
	}
	if se.Output() != nil {
		t.Fatal("a refused InstallQueries installed the query")
	}
	if _, err := se.InstallQueries(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := se.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := se.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// installFinishAndClose feeds se through as_of, installs its query, runs
// it to the end, checks its last answer against the reference (checkLast)
// and closes it.
func installFinishAndClose(ctx context.Context, t *testing.T, se *Session, s *spec.Spec, tabs []*spec.Table, mode render.Mode) {
	t.Helper()
	installAndFinish(ctx, t, se, s, tabs, mode)
	if err := se.Close(ctx); err != nil {
		t.Errorf("%v: Close: %v", mode, err)
	}
}

// installAndFinish feeds se through as_of, installs its query, finishes
// the run and checks the output at the last time against the reference.
func installAndFinish(ctx context.Context, t *testing.T, se *Session, s *spec.Spec, tabs []*spec.Table, mode render.Mode) {
	t.Helper()
	if err := se.FeedThrough(s.AsOf); err != nil {
		t.Fatal(err)
	}
	if _, err := se.InstallQuery(ctx); err != nil {
		t.Fatalf("%v: InstallQuery: %v", mode, err)
	}
	if _, _, err := se.Finish(ctx); err != nil {
		t.Fatalf("%v: Finish: %v", mode, err)
	}
	checkLast(t, se, s, tabs)
}

// A nil context, given to any call of a Session that takes one but Close,
// is an error wrapping ErrUsage and dataflow.ErrNilContext, refused before
// the call does anything (it panicked in the first wait or context derived
// from it, or, for a call that waited for nothing, passed): the Session
// then goes on as if the call had not been made. Close, whose waits ctx
// does not bound, takes it as context.Background() and closes.
func TestANilContextIsRefusedByEverySessionCall(t *testing.T) {
	s, tabs := decodeAndLoad(t, "w.json", joinSrc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, mode := range []render.Mode{render.Imported, render.Direct} {
		se, err := NewSession(s, tabs, SessionOptions{Mode: mode, Workers: 1, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		var nilCtx context.Context
		for name, call := range contextCalls(se, nilCtx) {
			if err := noPanic(t, name, call); !errors.Is(err, ErrUsage) || !errors.Is(err, dataflow.ErrNilContext) || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: %s(nil): %v, want ErrUsage and dataflow.ErrNilContext naming %s", mode, name, err, name)
			}
		}
		installAndFinish(ctx, t, se, s, tabs, mode)
		// Close's waits are its own: a nil context closes (a defer
		// se.Close(nil) refused would leave the runtimes running).
		if err := noPanic(t, "Close", func() error { return se.Close(nilCtx) }); err != nil {
			t.Errorf("%v: Close(nil): %v", mode, err)
		}
		if _, err := se.Stats(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Stats after Close(nil): %v, want ErrClosed", mode, err)
		}
	}
}

// contextCalls are se's calls that take a context, each given ctx, but
// Close, by name.
func contextCalls(se *Session, ctx context.Context) map[string]func() error {
	return map[string]func() error{
		"WaitIndexes": func() error { return se.WaitIndexes(ctx, 0) },
		"InstallQuery": func() error {
			_, err := se.InstallQuery(ctx)
			return err
		},
		"InstallQueries": func() error {
			_, err := se.InstallQueries(ctx, 2)
			return err
		},
		"ImportOnly": func() error {
			_, err := se.ImportOnly(ctx)
			return err
		},
		"Stall": func() error { return se.Stall(ctx) },
		"Peeks": func() error {
			_, err := se.Peeks(ctx, 1)
			return err
		},
		"Finish": func() error {
			_, _, err := se.Finish(ctx)
			return err
		},
		"FinishRounds": func() error {
			_, _, err := se.FinishRounds(ctx)
			return err
		},
		"Stats": func() error {
			_, err := se.Stats(ctx)
			return err
		},
	}
}
