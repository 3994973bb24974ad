package benchcmp

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// results reads a result file back as sorted "config|name|values" lines.
func results(t *testing.T, r *benchfmt.Reader) []string {
	t.Helper()
	var out []string
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		case *benchfmt.Result:
			var b strings.Builder
			for _, c := range rec.Config {
				b.WriteString(c.Key + "=" + string(c.Value) + " ")
			}
			b.WriteString("|" + string(rec.Name.Full()) + "|")
			for _, v := range rec.Values {
				b.WriteString(fmtFloat(v.Value) + " " + v.Unit + " ")
			}
			out = append(out, b.String())
		}
	}
	slices.Sort(out)
	return out
}

func readFile(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return results(t, benchfmt.NewReader(f, path))
}

// TestMergeShardsGivesTheWholeRun: the shards of suite.txt merge back into
// exactly its results, configuration and unit metadata included.
func TestMergeShardsGivesTheWholeRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Merge(&out, &errOut, []string{td("shard0.txt"), td("shard1.txt")}); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() != 0 {
		t.Errorf("disjoint shards reported: %s", errOut.String())
	}
	r := benchfmt.NewReader(bytes.NewReader(out.Bytes()), "merged")
	got := results(t, r)
	want := readFile(t, td("suite.txt"))
	if !slices.Equal(got, want) {
		t.Errorf("merged shards differ from the whole run: %d results, want %d", len(got), len(want))
	}
	if got := r.Units(); len(got) != 5 {
		t.Errorf("merged output has %d unit metadata entries, want 5", len(got))
	}
	// benchcmp reads the merged file like the original.
	dir := t.TempDir()
	merged := filepath.Join(dir, "merged.txt")
	os.WriteFile(merged, out.Bytes(), 0o644)
	// Row order follows the input; compare the CSV lines as sets.
	csvLines := func(path string) []string {
		out, _, err := compare(t, func(c *CompareConfig) { c.Format = "csv" }, "run="+path, "run="+path)
		if err != nil {
			t.Fatal(err)
		}
		l := strings.Split(out, "\n")
		slices.Sort(l)
		return l
	}
	if !slices.Equal(csvLines(td("suite.txt")), csvLines(merged)) {
		t.Errorf("comparing the merged file differs from comparing the whole run")
	}
}

func TestMergeOverlapAndConflicts(t *testing.T) {
	dir := t.TempDir()
	copy0 := filepath.Join(dir, "copy0.txt")
	b, err := os.ReadFile(td("shard0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(copy0, b, 0o644)
	var out, errOut bytes.Buffer
	if err := Merge(&out, &errOut, []string{td("shard0.txt"), copy0}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(errOut.String(), "overlapping shards"); n != 4 {
		t.Errorf("merging a shard with itself reported %d overlaps, want 4 (one per benchmark):\n%s", n, errOut.String())
	}
	conflict := filepath.Join(dir, "conflict.txt")
	os.WriteFile(conflict, []byte("Unit install-ns better=higher\nBenchmarkX 1 5 install-ns\n"), 0o644)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{td("shard0.txt"), conflict}, "conflict.txt:1: Unit install-ns better=higher conflicts with better=lower at testdata/shard0.txt:7"},
		{[]string{td("shard0.txt"), td("bad-line.txt")}, "bad-line.txt:5"},
		{[]string{td("shard0.txt"), td("empty.txt")}, "empty.txt: no benchmark results"},
		{[]string{td("shard0.txt"), td("missing.txt")}, "missing.txt"},
	} {
		err := Merge(&bytes.Buffer{}, &bytes.Buffer{}, tc.files)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Merge(%v) = %v, want ErrInput naming %q", tc.files, err, tc.want)
		}
	}
	if err := Merge(&bytes.Buffer{}, &bytes.Buffer{}, nil); !errors.Is(err, ErrUsage) {
		t.Errorf("Merge() = %v, want ErrUsage", err)
	}
}

// TestMergeOverlapAcrossHostsAndCommits: two shards holding one benchmark
// overlap whatever their commit, cpu and go lines say (shards of a CI run
// on different hosts differ in cpu), since a comparison of the merged file
// ignores those keys and pools the two shards' samples; a difference in
// another configuration line (gomaxprocs) makes two rows, no overlap.
func TestMergeOverlapAcrossHostsAndCommits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, config string) string {
		path := filepath.Join(dir, name)
		text := config + "BenchmarkA 1 10 ns/op\nBenchmarkA 1 11 ns/op\nBenchmarkA 1 12 ns/op\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	base := write("base.txt", "goos: linux\ncpu: Intel A\ncommit: aaa\ngo: go1.26.0\ngomaxprocs: 2\n")
	for _, tc := range []struct {
		name, config string
		overlap      bool
	}{
		{"cpu.txt", "goos: linux\ncpu: AMD B\ncommit: aaa\ngo: go1.26.0\ngomaxprocs: 2\n", true},
		{"commit.txt", "goos: linux\ncpu: Intel A\ncommit: bbb\ngo: go1.26.0\ngomaxprocs: 2\n", true},
		{"go.txt", "goos: linux\ncpu: Intel A\ncommit: aaa\ngo: go1.26.1\ngomaxprocs: 2\n", true},
		{"all.txt", "goos: linux\ncpu: AMD B\ncommit: bbb\ngo: go1.26.1\ngomaxprocs: 2\n", true},
		{"procs.txt", "goos: linux\ncpu: Intel A\ncommit: aaa\ngo: go1.26.0\ngomaxprocs: 4\n", false},
	} {
		other := write(tc.name, tc.config)
		var out, errOut bytes.Buffer
		if err := Merge(&out, &errOut, []string{base, other}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := ""
		if tc.overlap {
			want = "benchcmp merge: A is in both " + base + " and " + other + " (overlapping shards?)\n"
		}
		if errOut.String() != want {
			t.Errorf("%s: stderr %q, want %q", tc.name, errOut.String(), want)
		}
	}
}

// TestMergeSameFileTwice: one file given twice, under any spelling, is
// reported once as the same file, where `merge s0.txt s0.txt` doubled its
// samples without a word (only ./s0.txt, another string, warned).
func TestMergeSameFileTwice(t *testing.T) {
	abs, err := filepath.Abs(td("shard0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.txt")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	for _, second := range []string{td("shard0.txt"), "./" + td("shard0.txt"), abs, link} {
		var out, errOut bytes.Buffer
		if err := Merge(&out, &errOut, []string{td("shard0.txt"), second}); err != nil {
			t.Fatal(err)
		}
		want := "benchcmp merge: " + td("shard0.txt") + " and " + second + " are the same file: its samples are written twice\n"
		if errOut.String() != want {
			t.Errorf("merge shard0.txt %s: stderr %q, want %q", second, errOut.String(), want)
		}
	}
	// Another file with the same results is an overlap, benchmark by
	// benchmark, and not the same file.
	copy0 := filepath.Join(t.TempDir(), "copy0.txt")
	os.WriteFile(copy0, must(os.ReadFile(td("shard0.txt"))), 0o644)
	var errOut bytes.Buffer
	if err := Merge(&bytes.Buffer{}, &errOut, []string{td("shard0.txt"), copy0}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), "same file") || strings.Count(errOut.String(), "overlapping shards") != 4 {
		t.Errorf("a copy: stderr %q, want 4 overlaps and no same file", errOut.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func scaling(t *testing.T, mod func(*ScalingConfig), files ...string) ([]Fit, error) {
	t.Helper()
	cfg := DefaultScalingConfig()
	cfg.Files = files
	cfg.Format = "json"
	if mod != nil {
		mod(&cfg)
	}
	var out bytes.Buffer
	if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
		return nil, err
	}
	var fits []Fit
	if err := json.Unmarshal(out.Bytes(), &fits); err != nil {
		t.Fatal(err)
	}
	return fits, nil
}

// TestScalingRecoversExponents: suite.txt was made with direct install
// linear in rows and imported install growing as rows^0.3; the fit finds
// both within its interval and flags the import.
func TestScalingRecoversExponents(t *testing.T) {
	fits, err := scaling(t, func(c *ScalingConfig) { c.By = "/rows" }, td("suite.txt"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Fit{}
	for _, f := range fits {
		byName[f.Unit+" "+f.Name] = f
	}
	for _, tc := range []struct {
		key   string
		k     float64
		grows bool
	}{
		{"install-sec Query/workload=star/index=direct/join=delta", 1, true},
		{"install-sec Query/workload=star/index=imported/join=delta", 0.3, true},
		{"sec/update Query/workload=star/index=imported/join=delta", 0, false},
		{"rows Query/workload=star/index=imported/join=delta", 1, false}, // not a cost
	} {
		f, ok := byName[tc.key]
		if !ok {
			t.Errorf("no fit for %s", tc.key)
			continue
		}
		if !f.HasInterval || f.Lo > tc.k+1e-9 || f.Hi < tc.k-1e-9 || f.Hi-f.Lo > 0.05 {
			t.Errorf("%s: k %.3f [%.3f, %.3f], want a tight interval around %g", tc.key, f.Exponent, f.Lo, f.Hi, tc.k)
		}
		if math.Abs(f.Exponent-tc.k) > 0.02 {
			t.Errorf("%s: k %.3f, want %g", tc.key, f.Exponent, tc.k)
		}
		if f.Grows != tc.grows {
			t.Errorf("%s: grows = %v, want %v", tc.key, f.Grows, tc.grows)
		}
		if f.Points != 4 || f.Samples != 24 {
			t.Errorf("%s: %d points, %d samples, want 4 and 24", tc.key, f.Points, f.Samples)
		}
	}
	if f := byName["install-sec Query/workload=star/index=imported/join=delta"]; !strings.Contains(f.Note, "imported index") {
		t.Errorf("imported install note %q does not say it is an import that grows", f.Note)
	}
}

func TestScalingBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("BenchmarkA/rows=10\t1\t5 ns/op\nBenchmarkA/rows=ten\t1\t5 ns/op\n"), 0o644)
	_, err := scaling(t, func(c *ScalingConfig) { c.By = "/rows" }, bad)
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "bad.txt:2") || !strings.Contains(err.Error(), `"ten"`) {
		t.Errorf("non-numeric parameter: %v, want ErrInput naming bad.txt:2 and the value", err)
	}
	_, err = scaling(t, func(c *ScalingConfig) { c.By = "/size" }, td("suite.txt"))
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "suite.txt:13") {
		t.Errorf("missing parameter: %v, want ErrInput naming suite.txt:13", err)
	}
	for _, mod := range []func(*ScalingConfig){
		func(c *ScalingConfig) { c.By = "rows" },
		func(c *ScalingConfig) { c.By = "/rows"; c.Format = "html" },
		func(c *ScalingConfig) { c.By = "/rows"; c.Confidence = 2 },
		func(c *ScalingConfig) { c.By = "/rows"; c.Files = nil },
	} {
		if _, err := scaling(t, mod, td("suite.txt")); !errors.Is(err, ErrUsage) {
			t.Errorf("bad usage: %v, want ErrUsage", err)
		}
	}
}

func TestScalingGolden(t *testing.T) {
	for _, format := range []string{"text", "csv"} {
		cfg := DefaultScalingConfig()
		cfg.Files = []string{td("suite.txt")}
		cfg.By = "/rows"
		cfg.Format = format
		var out bytes.Buffer
		if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
			t.Fatal(err)
		}
		golden(t, "scaling."+format, out.Bytes())
	}
}

// TestMergeTakesAnEmptyShard: a shard that drew no benchmark writes only
// its Unit lines (benchrun run --shard i/n with n above the number of
// benchmarks); merge takes it as the empty part it is, with a note, and
// gives the other shards' results. Files with no result at all, together,
// are still an error.
func TestMergeTakesAnEmptyShard(t *testing.T) {
	empty := writeTemp(t, "empty-shard.txt", "Unit install-ns better=lower\nUnit rows assume=exact\n")
	var out, errOut bytes.Buffer
	if err := Merge(&out, &errOut, []string{td("shard0.txt"), empty}); err != nil {
		t.Fatalf("Merge with an empty shard: %v", err)
	}
	whole, err := os.ReadFile(td("shard0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(out.String(), "\nBenchmark"), strings.Count(string(whole), "\nBenchmark"); got != want || want == 0 {
		t.Errorf("merged %d results, want shard0's %d", got, want)
	}
	if !strings.Contains(errOut.String(), "empty-shard.txt: no benchmark results, Unit lines only (an empty shard)") {
		t.Errorf("stderr %q: want the note of the empty shard", errOut.String())
	}
	if err := Merge(&bytes.Buffer{}, &bytes.Buffer{}, []string{empty, empty}); !errors.Is(err, ErrInput) {
		t.Errorf("Merge of empty shards alone = %v, want ErrInput", err)
	}
}

// TestScalingChartOfAFlatSeries: a comparison whose rows form a series
// with one value under 1 in the chart's unit (1,000 ns, a microsecond)
// renders its HTML report: the log axis's one-point range is widened by a
// factor, where gonum's ±1 went below 0 and panicked (found by fuzzing).
func TestScalingChartOfAFlatSeries(t *testing.T) {
	file := writeTemp(t, "flat.txt", "BenchmarkQuery/workload=w/rows=1\t1\t1000 install-ns\nBenchmarkQuery/workload=w/rows=1000\t1\t1000 install-ns\n")
	cfg := DefaultCompareConfig()
	cfg.Files = []string{"base=" + file, "head=" + file}
	rep, err := BuildReport(io.Discard, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeReport(&out, rep, "html"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(log-log), fitted exponent k") {
		t.Error("the report has no scaling chart")
	}
}

// TestScalingChartOfAFlatSeriesAtTheFloatRange: a flat series at the
// smallest positive float64 (5e-324) or near the largest (1e308) renders:
// widening its one-point range by a factor of 2 gave 0 or +Inf, which
// gonum's log scale refuses with a panic (found by fuzzing benchcmp
// --format html).
func TestScalingChartOfAFlatSeriesAtTheFloatRange(t *testing.T) {
	for _, v := range []string{"5e-324", "1e308", "1.7976931348623157e308"} {
		file := writeTemp(t, "flat.txt", "BenchmarkQ/rows=1 1 "+v+" B/op\nBenchmarkQ/rows=2 1 "+v+" B/op\n")
		cfg := DefaultCompareConfig()
		cfg.Files = []string{"base=" + file, "head=" + file}
		rep, err := BuildReport(io.Discard, cfg)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		var out bytes.Buffer
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s B/op: the HTML report panicked: %v", v, r)
				}
			}()
			if err := writeReport(&out, rep, "html"); err != nil {
				t.Errorf("%s: %v", v, err)
			}
		}()
		if !strings.Contains(out.String(), "(log-log), fitted exponent k") {
			t.Errorf("%s B/op: the report has no scaling chart", v)
		}
	}
}

// TestScalingJSONOfAConstantUnit: a unit whose values do not vary with the
// parameter has an R² of 0/0; the JSON holds null for it rather than
// failing, and --flag-above takes finite numbers only.
func TestScalingJSONOfAConstantUnit(t *testing.T) {
	var b strings.Builder
	for _, n := range []int{10, 100, 1000} {
		for i := range 3 {
			fmt.Fprintf(&b, "BenchmarkJoin/n=%d 1 %d ns/op 7 rows\n", n, n*10+i)
		}
	}
	file := writeTemp(t, "const.txt", b.String())
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By, cfg.Format = []string{file}, "/n", "json"
	var out bytes.Buffer
	if err := Scaling(&out, io.Discard, cfg); err != nil {
		t.Fatalf("scaling --format json: %v", err)
	}
	if !strings.Contains(out.String(), `"r2": null`) {
		t.Errorf("no null R² for the constant unit:\n%s", out.String())
	}
	var fits []Fit
	if err := json.Unmarshal(out.Bytes(), &fits); err != nil || len(fits) != 2 {
		t.Fatalf("%d fits, %v:\n%s", len(fits), err, out.String())
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		cfg.FlagAbove = v
		if err := Scaling(io.Discard, io.Discard, cfg); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--flag-above") {
			t.Errorf("--flag-above %v: err %v, want ErrUsage naming the flag", v, err)
		}
	}
}

// TestJSONOfAnOverflowingGeomean: a geomean ratio that overflows float64
// is null in JSON, not an error.
func TestJSONOfAnOverflowingGeomean(t *testing.T) {
	old := writeTemp(t, "tiny.txt", strings.Repeat("BenchmarkX 1 1e-200 B/s\n", 6))
	huge := writeTemp(t, "huge.txt", strings.Repeat("BenchmarkX 1 1e200 B/s\n", 6))
	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "json"; c.FailOn = "regression" }, old, huge)
	if err != nil {
		t.Fatalf("--format json: %v", err)
	}
	var rep struct {
		Tables []struct {
			Geomean []*struct{ Ratio *float64 } `json:"geomean"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if g := rep.Tables[0].Geomean[1]; g == nil || g.Ratio != nil {
		t.Errorf("geomean ratio: want null:\n%s", out)
	}
}

// TestMergeAndScalingShowNamesEscaped: a benchmark name holding a control
// character reaches merge's overlap warning, scaling's table and its
// error quoted and escaped, never raw.
func TestMergeAndScalingShowNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "s.txt")
	os.WriteFile(shard, []byte("BenchmarkA\x1b[2J/rows=10 1 5 ns/op\nBenchmarkA\x1b[2J/rows=100 1 50 ns/op\n"), 0o644)
	copy := filepath.Join(dir, "copy.txt")
	os.WriteFile(copy, must(os.ReadFile(shard)), 0o644)
	var errOut bytes.Buffer
	if err := Merge(&bytes.Buffer{}, &errOut, []string{shard, copy}); err != nil {
		t.Fatal(err)
	}
	if msg := errOut.String(); strings.Contains(msg, "\x1b") || !strings.Contains(msg, `"A\x1b[2J/rows=10" is in both`) {
		t.Errorf("merge: want the name escaped:\n%q", msg)
	}

	var out bytes.Buffer
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By = []string{shard}, "/rows"
	if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "\x1b") || !strings.Contains(s, `"A\x1b[2J"`) {
		t.Errorf("scaling: want the name escaped:\n%q", s)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("BenchmarkA\x1b[2J/rows=ten 1 5 ns/op\n"), 0o644)
	_, err := scaling(t, func(c *ScalingConfig) { c.By = "/rows" }, bad)
	if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), `"A\x1b[2J/rows=ten"`) {
		t.Errorf("scaling: err = %q, want the name escaped", err)
	}
}

// TestMessagesShowUnitLinesEscaped: a Unit line's unit or value, and a
// result's unit, holding a control character reach the messages of
// compare, merge and scaling (a conflict, a bad direction, a value that
// is not finite, benchfmt's own syntax error) escaped, never raw.
func TestMessagesShowUnitLinesEscaped(t *testing.T) {
	low := writeTemp(t, "low.txt", "Unit ns/op better=\x1b[31mlower\nBenchmarkA 1 5 ns/op\n")
	high := writeTemp(t, "high.txt", "Unit ns/op better=higher\nBenchmarkA 1 5 ns/op\n")
	odd := writeTemp(t, "odd.txt", "Unit ns/op\x1b[2J better=sideways\nBenchmarkA 1 5 ns/op\n")
	nan := writeTemp(t, "nan.txt", "BenchmarkA 1 NaN ns/op\x1b[2J\n")
	for _, tc := range []struct {
		what string
		run  func() error
		want string
	}{
		{"merge conflict", func() error { return Merge(&bytes.Buffer{}, &bytes.Buffer{}, []string{low, high}) }, `"\x1b[31mlower"`},
		{"compare conflict", func() error { _, _, err := compare(t, nil, low, high); return err }, `"\x1b[31mlower"`},
		{"compare direction", func() error { _, _, err := compare(t, nil, odd, high); return err }, `"ns/op\x1b[2J"`},
		{"compare value", func() error { _, _, err := compare(t, nil, nan, high); return err }, `"ns/op\x1b[2J"`},
		{"merge value", func() error { return Merge(&bytes.Buffer{}, &bytes.Buffer{}, []string{nan}) }, `"ns/op\x1b[2J"`},
		{"scaling value", func() error { _, err := scaling(t, func(c *ScalingConfig) { c.By = "/rows" }, nan); return err }, `"ns/op\x1b[2J"`},
	} {
		err := tc.run()
		if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %q, want %s in it, escaped", tc.what, err, tc.want)
		}
	}
}

// TestScalingNotesShowTheParameterEscaped: a name parameter holding a
// control character, given to --by as the results spell it, reaches the
// text table's notes escaped, as its heading shows it.
func TestScalingNotesShowTheParameterEscaped(t *testing.T) {
	const by = "/r\x1b[2J"
	f := writeTemp(t, "s.txt", "BenchmarkA/r\x1b[2J=10 1 5 ns/op\nBenchmarkA/r\x1b[2J=100 1 500 ns/op\nBenchmarkB/r\x1b[2J=10 1 5 ns/op\n")
	var out bytes.Buffer
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By = []string{f}, by
	if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "\x1b") || !strings.Contains(s, `one value of "/r\x1b[2J"`) {
		t.Errorf("want the parameter escaped in every note:\n%q", s)
	}
}

// TestScalingWarnsOfAFileGivenTwice: scaling pools every file into one
// fit, so a file given twice (under any spelling) has no second column to
// be compared with: the warning says its samples count twice, as they do.
func TestScalingWarnsOfAFileGivenTwice(t *testing.T) {
	file := writeTemp(t, "twice.txt", "BenchmarkS/n=1 1 5 ns/op\nBenchmarkS/n=10 1 6 ns/op\nBenchmarkS/n=100 1 7 ns/op\n")
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By = []string{file, file}, "/n"
	var errOut bytes.Buffer
	if err := Scaling(io.Discard, &errOut, cfg); err != nil {
		t.Fatal(err)
	}
	if got := errOut.String(); !strings.Contains(got, "are the same file: its samples count twice\n") || strings.Contains(got, "column") {
		t.Errorf("stderr %q: want a warning that the samples count twice, naming no column", got)
	}
}

// TestJSONOfAnInfiniteDelta: a compared cell whose delta is infinite (a
// baseline median of 0) holds delta_pct as null, as the README says, not
// no delta_pct at all; a baseline cell has none.
func TestJSONOfAnInfiniteDelta(t *testing.T) {
	old := writeTemp(t, "zero.txt", strings.Repeat("BenchmarkX 1 0 ns/op\n", 6))
	now := writeTemp(t, "some.txt", strings.Repeat("BenchmarkX 1 5 ns/op\n", 6))
	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, old, now)
	if err != nil {
		t.Fatalf("--format json: %v", err)
	}
	var rep struct {
		Tables []struct {
			Rows []struct {
				Cells []map[string]json.RawMessage `json:"cells"`
			} `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	cells := rep.Tables[0].Rows[0].Cells
	if d, ok := cells[1]["delta_pct"]; !ok || string(d) != "null" {
		t.Errorf("compared cell: delta_pct %q (present %v), want null:\n%s", d, ok, out)
	}
	if _, ok := cells[1]["p"]; !ok {
		t.Errorf("compared cell: no p:\n%s", out)
	}
	if _, ok := cells[0]["delta_pct"]; ok {
		t.Errorf("baseline cell: has delta_pct:\n%s", out)
	}
}

// TestExactUnitsHaveNoPInJSONOrCSV: a unit declared assume=exact has no
// test and no p-value (README, "Read the report"); the json and csv
// reports gave benchmath's placeholder, p 0, which a reader of either
// takes for a change far past alpha, beside a "~" of equal counts too.
// Its p is null in JSON and empty in CSV, a compared cell still having
// the key and the field, and the verdicts are as before.
func TestExactUnitsHaveNoPInJSONOrCSV(t *testing.T) {
	head := "Unit rows assume=exact\n"
	old := writeTemp(t, "exact-old.txt", head+strings.Repeat("BenchmarkSame 1 7 rows\nBenchmarkMoved 1 7 rows\n", 6))
	now := writeTemp(t, "exact-new.txt", head+strings.Repeat("BenchmarkSame 1 7 rows\nBenchmarkMoved 1 9 rows\n", 6))
	want := map[string]Verdict{"Same": Noise, "Moved": Changed}

	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, old, now)
	if err != nil {
		t.Fatalf("--format json: %v", err)
	}
	var rep struct {
		Tables []struct {
			Rows []struct {
				Name  string                       `json:"name"`
				Cells []map[string]json.RawMessage `json:"cells"`
			} `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, r := range rep.Tables[0].Rows {
		c := r.Cells[1]
		if p, ok := c["p"]; !ok || string(p) != "null" {
			t.Errorf("json %s: p %s (present %v), want null", r.Name, p, ok)
		}
		if v := string(c["verdict"]); v != `"`+string(want[r.Name])+`"` {
			t.Errorf("json %s: verdict %s, want %q", r.Name, v, want[r.Name])
		}
	}

	out, _, err = compare(t, func(c *CompareConfig) { c.Format = "csv" }, old, now)
	if err != nil {
		t.Fatalf("--format csv: %v", err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	compared := 0
	for _, rec := range recs[1:] {
		if rec[col["column"]] == rec[col["baseline"]] {
			continue
		}
		compared++
		name := rec[col["name"]]
		if p := rec[col["p"]]; p != "" {
			t.Errorf("csv %s: p %q, want none", name, p)
		}
		if rec[col["delta_pct"]] == "" || rec[col["verdict"]] != string(want[name]) {
			t.Errorf("csv %s: delta %q, verdict %q; want a delta and %q", name, rec[col["delta_pct"]], rec[col["verdict"]], want[name])
		}
	}
	if compared != 2 {
		t.Errorf("csv: %d compared rows, want 2:\n%s", compared, out)
	}

	// The html report's list of regressions gives no p either, for an
	// exact count with a direction (it gave p=0.000).
	head = "Unit x-count assume=exact better=lower\n"
	old = writeTemp(t, "count-old.txt", head+strings.Repeat("BenchmarkMoved 1 7 x-count\n", 6))
	now = writeTemp(t, "count-new.txt", head+strings.Repeat("BenchmarkMoved 1 9 x-count\n", 6))
	out, _, err = compare(t, func(c *CompareConfig) { c.Format = "html" }, old, now)
	if err != nil {
		t.Fatalf("--format html: %v", err)
	}
	if !strings.Contains(out, "x-count Moved: ") || !strings.Contains(out, "28.57% (threshold 0%)") {
		t.Errorf("html: no regression listed as +28.57%% (threshold 0%%) without a p-value:\n%s", out)
	}
}
