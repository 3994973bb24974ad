//go:build mutants

package workloads

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/internal/mutants"
	"github.com/tracebench/tracebench/workloads/spec"
)

// TestCheckSeesAnErrorThatComesAndGoes: an error that comes at time 1 and
// goes at time 2 is compared where it stood. Under mutant 1 (a delta join
// emits each input error once per path) its count at time 1 is 3, not 1,
// and at every later time it is 0 as it should be: Check must report time
// 1, which a check at as_of, the quartiles of the later times and the
// last (0, 3, 5, 7 and 8) passed over. The mutant is switched on in
// a child run of this test (underMutant).
func TestCheckSeesAnErrorThatComesAndGoes(t *testing.T) {
	if !underMutant(t, mutants.DeltaJoinErrorsPerPath) {
		return
	}
	src := `{"version": 1, "name": "transient",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,5,1],[1,1,1,0],[2,-1,1,0],[3,1,2,5],[4,1,3,5]]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,5,1],[0,1,1,1],[5,1,2,1],[6,1,3,1]]},
	             "c": {"columns": ["k", "z"], "rows": [[0,1,5,1],[0,1,1,1],[7,1,2,1],[8,1,3,1]]}},
	  "views": {"va": {"input": "a", "map": [{"name": "q", "expr": "100 / x"}]}},
	  "query": {"from": [{"as": "p", "collection": "va"}, {"as": "q", "collection": "b"}, {"as": "d", "collection": "c"}],
	            "join": "delta", "on": [["p.k", "q.k", "d.k"]], "project": ["p.k", "p.q"]}}`
	differsAtTime1Only(t, src, "division by zero: want diff 1, got 3")
}

// TestCheckSeesARowThatComesAndGoes: a row that stands at time 1 only is
// compared where it stood, as an error is. Under mutant 4 (every delta
// path compares times with <=) the two inputs' updates of time 1 are
// joined twice, so the row's count there is 2, not 1; at time 2 the
// second update of b and the retraction of a, joined twice too, take the
// extra count away again, and every later time agrees with the reference.
// No error is involved: Check must report the row at time 1, which a
// check at as_of, the quartiles of the later times and the last (0, 3, 5,
// 7 and 8) passed over.
func TestCheckSeesARowThatComesAndGoes(t *testing.T) {
	if !underMutant(t, mutants.DeltaJoinLessEqualAllPaths) {
		return
	}
	src := `{"version": 1, "name": "transient_row",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[1,1,1,10],[2,-1,1,10],[3,1,5,1],[4,1,6,1],[5,1,7,1],[6,1,8,1],[7,1,9,1],[8,1,10,1]]},
	             "b": {"columns": ["k", "y"], "rows": [[1,1,1,20],[2,1,1,20],[3,1,15,1],[4,1,16,1]]}},
	  "query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}],
	            "join": "delta", "on": [["p.k", "q.k"]], "project": ["p.k", "p.x", "q.y"]}}`
	differsAtTime1Only(t, src, "1,10,20: want diff 1, got 2")
}

// differsAtTime1Only checks the spec src (direct, delta, one worker) and
// wants differences at time 1 only, one of them containing want.
func differsAtTime1Only(t *testing.T, src, want string) {
	t.Helper()
	s, tables := decodeAndLoad(t, "w.json", src)
	diffs, err := Check(context.Background(), s, tables, []CheckCase{{Mode: render.Direct, Join: plan.Delta, Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range diffs {
		if !strings.Contains(d, "time=1: ") {
			t.Errorf("a difference at a time other than 1: %s", d)
		}
		found = found || strings.Contains(d, want)
	}
	if !found {
		t.Errorf("no difference at time 1 says %q: %q", want, diffs)
	}
}

// TestCheckShowsThreeTimesAndCountsTheRest: under mutant 1 a division by
// zero that stands from time 1 to the last (9) differs at nine times;
// check prints the first three, each with its differences, and one line
// for the six after them.
func TestCheckShowsThreeTimesAndCountsTheRest(t *testing.T) {
	if !underMutant(t, mutants.DeltaJoinErrorsPerPath) {
		return
	}
	src := `{"version": 1, "name": "standing",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,5,1],[1,1,1,0],[2,1,6,1],[3,1,7,1],[4,1,8,1],[5,1,9,1],[6,1,10,1],[7,1,11,1],[8,1,12,1],[9,1,13,1]]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,5,1],[0,1,1,1]]},
	             "c": {"columns": ["k", "z"], "rows": [[0,1,5,1],[0,1,1,1]]}},
	  "views": {"va": {"input": "a", "map": [{"name": "q", "expr": "100 / x"}]}},
	  "query": {"from": [{"as": "p", "collection": "va"}, {"as": "q", "collection": "b"}, {"as": "d", "collection": "c"}],
	            "join": "delta", "on": [["p.k", "q.k", "d.k"]], "project": ["p.k", "p.q"]}}`
	s, tables := decodeAndLoad(t, "standing.json", src)
	diffs, err := Check(context.Background(), s, tables, []CheckCase{{Mode: render.Direct, Join: plan.Delta, Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var times []string
	for _, d := range diffs {
		if _, rest, ok := strings.Cut(d, "time="); ok {
			tm, _, _ := strings.Cut(rest, ":")
			if !slices.Contains(times, tm) {
				times = append(times, tm)
			}
		}
	}
	if !slices.Equal(times, []string{"1", "2", "3"}) {
		t.Errorf("times shown %q, want 1, 2 and 3:\n%s", times, strings.Join(diffs, "\n"))
	}
	if !slices.ContainsFunc(diffs, func(d string) bool { return strings.HasSuffix(d, ": and at 6 later times (4 to 9)") }) {
		t.Errorf("no line counts the six later times:\n%s", strings.Join(diffs, "\n"))
	}
}

// underMutant runs the calling test again in a child process with mutant
// m on (TRACEBENCH_MUTANT is read once at start) and reports whether this
// is that child: the test then runs its body, in every build with the
// mutants tag, whatever mutant the parent runs under.
func underMutant(t *testing.T, m mutants.Name) bool {
	t.Helper()
	if os.Getenv("WORKLOADS_CHECK_CHILD") != "" {
		if !mutants.On(m) {
			t.Fatalf("child run without %s on", m)
		}
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "WORKLOADS_CHECK_CHILD=1", "TRACEBENCH_MUTANT="+string(m))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child run under %s: %v\n%s", m, err, out)
	}
	return false
}

// TestCheckComparesConfigurationsAtEveryTime: where the reference is
// evaluated at some of the input times only (a spec of many times and
// large inputs: here checkTimesWork is made small), every configuration is
// still compared with the first at every time. Under mutant 1 the delta
// join counts a division by zero that stands at one time only 3 times;
// the time is none the reference is evaluated at, so only the comparison
// with the linear join's run, which counts it once, can see it.
func TestCheckComparesConfigurationsAtEveryTime(t *testing.T) {
	if !underMutant(t, mutants.DeltaJoinErrorsPerPath) {
		return
	}
	defer func(w int) { checkTimesWork = w }(checkTimesWork)
	checkTimesWork = 1
	// Rows of a at times 3 to 40 on keys b and c do not have, and at time
	// tx a zero x on key 0, taken back at tx+1.
	build := func(tx int) string {
		var rows []string
		for tm := 3; tm <= 40; tm++ {
			rows = append(rows, fmt.Sprintf("[%d,1,%d,1]", tm, 100+tm))
		}
		rows = append(rows, fmt.Sprintf("[%d,1,0,0]", tx), fmt.Sprintf("[%d,-1,0,0]", tx+1))
		return `{"version": 1, "name": "between",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,5,1],` + strings.Join(rows, ",") + `]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,5,1],[0,1,0,1]]},
	             "c": {"columns": ["k", "z"], "rows": [[0,1,5,1],[0,1,0,1]]}},
	  "views": {"va": {"input": "a", "map": [{"name": "q", "expr": "100 / x"}]}},
	  "query": {"from": [{"as": "p", "collection": "va"}, {"as": "q", "collection": "b"}, {"as": "d", "collection": "c"}],
	            "join": "delta", "on": [["p.k", "q.k", "d.k"]], "project": ["p.k", "p.q"]}}`
	}
	s, tables, times, tx := betweenReferenceTimes(t, "between.json", build)
	cases := []CheckCase{{Mode: render.Direct, Join: plan.Linear, Workers: 1}, {Mode: render.Direct, Join: plan.Delta, Workers: 1}}
	diffs, err := Check(context.Background(), s, tables, cases)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("between: index=direct join=delta workers=1: time=%d (not compared with the reference): error division by zero: diff 3, index=direct join=linear workers=1 has diff 1", tx)
	if !slices.Equal(diffs, []string{want}) {
		t.Errorf("differences:\n%s\nwant only:\n%s", strings.Join(diffs, "\n"), want)
	}
	// At a time the reference is evaluated at, the reference's difference
	// says it, and the configurations' comparison says nothing more.
	tx = times[2]
	s, tables = decodeAndLoad(t, "between.json", build(int(tx)))
	diffs, err = Check(context.Background(), s, tables, cases)
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("between: index=direct join=delta workers=1: time=%d: error division by zero: want diff 1, got 3", tx)
	if !slices.Equal(diffs, []string{want}) {
		t.Errorf("differences:\n%s\nwant only:\n%s", strings.Join(diffs, "\n"), want)
	}
}

// betweenReferenceTimes loads the spec build(tx) makes, whose input
// times are 0 and 3 to 40 whatever tx among them, and returns it with
// the times the reference is evaluated at (checkTimesWork made small:
// minCheckTimes of them) and the first tx after 3 that is none of them.
func betweenReferenceTimes(t *testing.T, file string, build func(tx int) string) (*spec.Spec, []*spec.Table, []uint64, uint64) {
	t.Helper()
	s, tables := decodeAndLoad(t, file, build(3))
	times := CheckTimes(s, tables)
	if len(times) != minCheckTimes {
		t.Fatalf("compared at %d times, want %d", len(times), minCheckTimes)
	}
	tx := uint64(4)
	for slices.Contains(times, tx) {
		tx++
	}
	s, tables = decodeAndLoad(t, file, build(int(tx)))
	if got := CheckTimes(s, tables); !slices.Equal(got, times) {
		t.Fatalf("compared times moved: %v, then %v", times, got)
	}
	return s, tables, times, tx
}

// TestCheckComparesRowsAtEveryTime: as
// TestCheckComparesConfigurationsAtEveryTime, for a row rather than an
// error. Under mutant 4 the delta join joins the two inputs' updates of
// time tx twice, so a row that stands at tx only has count 2 there, not
// 1; tx is no time the reference is evaluated at, so only the comparison
// of the rows with the linear join's run can see it.
func TestCheckComparesRowsAtEveryTime(t *testing.T) {
	if !underMutant(t, mutants.DeltaJoinLessEqualAllPaths) {
		return
	}
	defer func(w int) { checkTimesWork = w }(checkTimesWork)
	checkTimesWork = 1
	// Rows of a at times 3 to 40 on keys b does not have, and at time tx
	// a row of a and one of b on key 1; at tx+1 the row of a is taken back
	// and b's row gains a second count (joined twice too, that takes the extra
	// count away: every later time agrees with the reference).
	build := func(tx int) string {
		var rows []string
		for tm := 3; tm <= 40; tm++ {
			rows = append(rows, fmt.Sprintf("[%d,1,%d,1]", tm, 100+tm))
		}
		rows = append(rows, fmt.Sprintf("[%d,1,1,10]", tx), fmt.Sprintf("[%d,-1,1,10]", tx+1))
		return `{"version": 1, "name": "between_rows",
	  "inputs": {"a": {"columns": ["k", "x"], "rows": [` + strings.Join(rows, ",") + `]},
	             "b": {"columns": ["k", "y"], "rows": [[0,1,5,1],` + fmt.Sprintf("[%d,1,1,20],[%d,1,1,20]", tx, tx+1) + `]}},
	  "query": {"from": [{"as": "p", "collection": "a"}, {"as": "q", "collection": "b"}],
	            "join": "delta", "on": [["p.k", "q.k"]], "project": ["p.k", "p.x", "q.y"]}}`
	}
	s, tables, _, tx := betweenReferenceTimes(t, "between_rows.json", build)
	cases := []CheckCase{{Mode: render.Direct, Join: plan.Linear, Workers: 1}, {Mode: render.Direct, Join: plan.Delta, Workers: 1}}
	diffs, err := Check(context.Background(), s, tables, cases)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("between_rows: index=direct join=delta workers=1: time=%d (not compared with the reference): row 1,10,20: diff 2, index=direct join=linear workers=1 has diff 1", tx)
	if !slices.Equal(diffs, []string{want}) {
		t.Errorf("differences:\n%s\nwant only:\n%s", strings.Join(diffs, "\n"), want)
	}
}
