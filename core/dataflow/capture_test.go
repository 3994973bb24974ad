package dataflow

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// captureInput builds, on each of envs, a dataflow capturing input "in"
// (arity columns) as chunks into cp, without arranging it.
func captureInput(t *testing.T, envs []*Env, cp *Capture, arity int) []*Dataflow {
	t.Helper()
	var dfs []*Dataflow
	for _, env := range envs {
		df, err := Build(env, Desc{ID: "c", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
			in, err := c.Input("in", arity)
			if err != nil {
				return err
			}
			c.CaptureChunks(cp, in.Oks, arity)
			return nil
		}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		dfs = append(dfs, df)
	}
	return dfs
}

func formatRows(rs []RowDiff) string {
	var sb strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&sb, "%v:%d ", r.Row, r.Diff)
	}
	return strings.TrimSpace(sb.String())
}

// TestCaptureConsolidatesOnRead: a capture keeps the chunks as they come
// (the same row several times at one time, +1 and -1 that cancel, updates
// on two workers, cancelling across them) and At consolidates them: rows sorted column by column,
// counts summed over times at or before t and over workers, zeros left
// out; Times lists the times where a consolidated count is not zero.
func TestCaptureConsolidatesOnRead(t *testing.T) {
	hub := NewHub(2)
	envs := []*Env{testEnv(t, 0, 2, hub), testEnv(t, 1, 2, hub)}
	// Each worker keeps all it is sent: the test decides which updates
	// each worker captures.
	for w, env := range envs {
		env.Inputs = NewInputs(w, 1, env.Activate)
	}
	cp := NewCapture(2)
	dfs := captureInput(t, envs, cp, 2)
	// {time, diff, row...}; worker 0's, then worker 1's.
	ups := [2]*Chunk{chunk(
		[]int64{0, 1, 2, 1},                         // with worker 1's: 2 at time 0
		[]int64{0, 1, 10, 1}, []int64{0, -1, 10, 1}, // cancels within time 0 on one worker
		[]int64{0, 1, 11, 1}, // cancels with worker 1's at time 0
		[]int64{0, 1, 1, 9},
		[]int64{1, -1, 2, 1}, // across times: 2 at 0, 1 from 1
		[]int64{1, 1, 5, 5}, []int64{1, -1, 5, 5},
		[]int64{2, -1, 1, 9}, // gone at 2
		[]int64{3, 1, 7, 7},
	), chunk(
		[]int64{0, 1, 2, 1},
		[]int64{0, -1, 11, 1},
		[]int64{0, 1, -1, 3},
		[]int64{1, 1, 5, 5}, // net +1 at 1 over both workers
		[]int64{2, -1, 2, 1},
		[]int64{3, -1, 7, 7}, // nothing changes at 3
	)}
	for w, env := range envs {
		if err := env.Inputs.Send("in", ups[w]); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.Empty()); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		for _, df := range dfs {
			df.Step()
		}
	}
	if !cp.Passed(math.MaxUint64) {
		t.Fatalf("capture at %v after the input closed", cp.Frontier())
	}
	for _, c := range []struct {
		t    uint64
		want string
	}{
		{0, "[-1 3]:1 [1 9]:1 [2 1]:2"},
		{1, "[-1 3]:1 [1 9]:1 [2 1]:1 [5 5]:1"},
		{2, "[-1 3]:1 [5 5]:1"},
		{3, "[-1 3]:1 [5 5]:1"},
	} {
		if got := formatRows(cp.At(c.t)); got != c.want {
			t.Errorf("At(%d) = %s, want %s", c.t, got, c.want)
		}
	}
	if got, want := cp.Times(), []frontier.Time{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("Times() = %v, want %v", got, want)
	}
	for _, df := range dfs {
		df.Drop()
	}
}

// TestCaptureSumsExactly: counts are summed exactly whatever the order of
// the terms (MaxInt64 + MaxInt64 - MaxInt64 fits), and a count that leaves
// int64 is reported by Accumulate, never wrapped (docs/semantics.md §1.1).
func TestCaptureSumsExactly(t *testing.T) {
	envs := []*Env{testEnv(t, 0, 1, NewHub(1))}
	cp := NewCapture(1)
	dfs := captureInput(t, envs, cp, 1)
	const m = math.MaxInt64
	ups := chunk(
		[]int64{0, m, 1}, []int64{0, m, 1}, []int64{1, -m, 1},
		[]int64{0, m, 2}, []int64{1, 1, 2},
		[]int64{0, math.MinInt64, 3}, []int64{1, -1, 3},
	)
	if err := envs[0].Inputs.Send("in", ups); err != nil {
		t.Fatal(err)
	}
	if err := envs[0].Inputs.Advance("in", frontier.Empty()); err != nil {
		t.Fatal(err)
	}
	dfs[0].Step()
	rows, over := cp.Accumulate(0)
	if got, want := formatRows(rows), fmt.Sprintf("[2]:%d [3]:%d", int64(m), int64(math.MinInt64)); got != want || over != 1 {
		t.Errorf("Accumulate(0) = %s, %d overflows; want %s, 1 ([1] at 2×MaxInt64)", got, over, want)
	}
	rows, over = cp.Accumulate(1)
	if got, want := formatRows(rows), fmt.Sprintf("[1]:%d", int64(m)); got != want || over != 2 {
		t.Errorf("Accumulate(1) = %s, %d overflows; want %s, 2 ([2] and [3] one past the bounds)", got, over, want)
	}
	dfs[0].Drop()
}

// TestAProbeReadsOneStreamOfOneDataflow: a capture (or probe, or tally)
// attached to a second stream on one worker fails the build, in the same
// dataflow or in a later one (a query dropped and created again with the
// same capture): its frontier would be set from either stream, passing a
// time one of them has not, and a capture's rows would mix.
func TestAProbeReadsOneStreamOfOneDataflow(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	cp := NewCapture(1)
	_, err := Build(env, Desc{ID: "c", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		a, err := c.Input("a", 2)
		if err != nil {
			return err
		}
		b, err := c.Input("b", 3)
		if err != nil {
			return err
		}
		c.CaptureChunks(cp, a.Oks, 2)
		c.CaptureChunks(cp, b.Oks, 3)
		return nil
	}}, 0)
	if err == nil || !strings.Contains(err.Error(), "dataflow c: capture already attached on worker 0") {
		t.Fatalf("a second stream in one dataflow: got %v, want the build refused", err)
	}
	for _, kind := range []string{"capture", "probe", "tally"} {
		cp, p, tl := NewCapture(1), NewProbe(1), NewTally(1)
		build := func(id string) error {
			df, err := Build(env, Desc{ID: id, Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
				a, err := c.Input("a", 2)
				if err != nil {
					return err
				}
				switch kind {
				case "capture":
					c.CaptureChunks(cp, a.Oks, 2)
				case "probe":
					c.Probe(p, a.Oks)
				case "tally":
					arr, err := c.Arrange(a, []int{0})
					if err != nil {
						return err
					}
					c.Tally(tl, arr.Oks)
				}
				return nil
			}}, 0)
			if err == nil {
				df.Drop()
			}
			return err
		}
		if err := build("first"); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := build("again"); err == nil || !strings.Contains(err.Error(), "dataflow again: "+kind+" already attached on worker 0") {
			t.Errorf("%s in a dataflow after the first's drop: got %v, want the build refused", kind, err)
		}
		// A nil one fails the build naming it (it had been a nil
		// pointer's panic, naming nothing).
		cp, p, tl = nil, nil, nil
		if err := build("nil"); err == nil || !strings.Contains(err.Error(), "dataflow nil: "+kind+" is nil: make one with New") || strings.Contains(err.Error(), "panic") {
			t.Errorf("a nil %s: got %v, want the build refused naming it", kind, err)
		}
	}
}

// TestCaptureFirstDifference: two captures compared time by time find
// the first time their accumulations differ, a row that differs there
// and each count, though they agree before and after (a row that comes
// and goes in one of them only); updates at or before lo count at lo,
// those after hi not at all, and counts that pass through and past
// int64 compare exactly (the change is subtracted in 128 bits).
func TestCaptureFirstDifference(t *testing.T) {
	const m = math.MaxInt64
	mk := func(ups *Chunk) *Capture {
		envs := []*Env{testEnv(t, 0, 1, NewHub(1))}
		cp := NewCapture(1)
		dfs := captureInput(t, envs, cp, 1)
		if err := envs[0].Inputs.Send("in", ups); err != nil {
			t.Fatal(err)
		}
		if err := envs[0].Inputs.Advance("in", frontier.Empty()); err != nil {
			t.Fatal(err)
		}
		dfs[0].Step()
		dfs[0].Drop()
		return cp
	}
	// {time, diff, row}
	c := mk(chunk(
		[]int64{0, 1, 1},
		[]int64{2, 1, 2}, []int64{3, -1, 2}, // [2] at times 2 only
		[]int64{0, m, 6}, []int64{0, m, 6}, // 2×MaxInt64 in both
		[]int64{1, math.MinInt64, 7},
		[]int64{3, 1, 3},
		[]int64{5, 1, 9}, // after hi
	))
	o := mk(chunk(
		[]int64{1, 1, 1},                   // at 1 here, at 0 in c
		[]int64{0, m, 6}, []int64{1, m, 6}, // 2×MaxInt64 from 1
		[]int64{1, math.MinInt64, 7},
		[]int64{3, 1, 3},
	))
	p := mk(chunk(
		[]int64{0, 1, 1},
		[]int64{0, m, 6}, []int64{1, m, 6},
		[]int64{1, math.MinInt64, 7},
		[]int64{3, 1, 3},
	))
	type want struct {
		t            uint64
		row          []int64
		cn, on       int64
		cOver, oOver bool
		differs      bool
	}
	for _, tc := range []struct {
		o      *Capture
		lo, hi uint64
		w      want
	}{
		{o, 0, 4, want{t: 0, row: []int64{1}, cn: 1, on: 0, differs: true}},
		{p, 0, 4, want{t: 0, row: []int64{6}, cOver: true, on: m, differs: true}},
		{o, 1, 4, want{t: 2, row: []int64{2}, cn: 1, on: 0, differs: true}},
		{o, 3, 4, want{}},
		{o, 3, 5, want{t: 5, row: []int64{9}, cn: 1, on: 0, differs: true}},
	} {
		ct, row, cn, on, cOver, oOver, differs := c.FirstDifference(tc.o, tc.lo, tc.hi)
		got := want{ct, row, cn, on, cOver, oOver, differs}
		if cOver {
			got.cn = 0
		}
		if !slices.Equal(got.row, tc.w.row) || got.t != tc.w.t || got.cn != tc.w.cn || got.on != tc.w.on || got.cOver != tc.w.cOver || got.oOver != tc.w.oOver || got.differs != tc.w.differs {
			t.Errorf("FirstDifference(lo %d, hi %d) = %+v, want %+v", tc.lo, tc.hi, got, tc.w)
		}
	}
	if _, _, _, _, _, _, differs := c.FirstDifference(c, 0, 10); differs {
		t.Error("a capture differs from itself")
	}
}
