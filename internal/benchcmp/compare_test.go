package benchcmp

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/tracebench/tracebench/internal/benchflame"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/golden")

func TestMain(m *testing.M) {
	benchflame.RunChildIfRequested()
	flag.Parse()
	os.Exit(m.Run())
}

func td(name string) string { return filepath.Join("testdata", name) }

// golden compares got with testdata/golden/name, or rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) && !sameButLastDigits(got, want) {
		t.Errorf("output differs from %s (go test -rewrite updates it after review):\n--- got\n%s\n--- want\n%s", path, clip(got), clip(want))
	}
}

// number is a decimal number as the outputs write one.
var number = regexp.MustCompile(`[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// sameButLastDigits reports whether got and want differ only in numbers
// written at full float64 precision (15 or more significant digits in one
// of them) that agree to 1e-9 relative: the last digits of a fit or an
// interval move between platforms (math.Log and math.Exp are assembly on
// amd64 and Go elsewhere; arm64 fuses multiply-adds), so the golden files
// written on amd64 hold elsewhere too. Every other byte, and every number
// written shorter (a rounded cell, a count, a name's), must be equal.
func sameButLastDigits(got, want []byte) bool {
	gi, wi := number.FindAllIndex(got, -1), number.FindAllIndex(want, -1)
	if len(gi) != len(wi) {
		return false
	}
	gp, wp := 0, 0
	for k := range gi {
		if !bytes.Equal(got[gp:gi[k][0]], want[wp:wi[k][0]]) {
			return false
		}
		g, w := got[gi[k][0]:gi[k][1]], want[wi[k][0]:wi[k][1]]
		gp, wp = gi[k][1], wi[k][1]
		if bytes.Equal(g, w) {
			continue
		}
		if max(significant(g), significant(w)) < 15 {
			return false
		}
		x, err1 := strconv.ParseFloat(string(g), 64)
		y, err2 := strconv.ParseFloat(string(w), 64)
		if err1 != nil || err2 != nil || math.Abs(x-y) > 1e-9*max(math.Abs(x), math.Abs(y)) {
			return false
		}
	}
	return bytes.Equal(got[gp:], want[wp:])
}

// significant counts the significant digits of a number as written.
func significant(b []byte) int {
	if i := bytes.IndexAny(b, "eE"); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimLeft(b, "+-0.")
	return len(b) - bytes.Count(b, []byte("."))
}

func clip(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "\n[...]"
	}
	return string(b)
}

func compare(t *testing.T, mod func(*CompareConfig), files ...string) (string, string, error) {
	t.Helper()
	cfg := DefaultCompareConfig()
	cfg.Files = files
	if mod != nil {
		mod(&cfg)
	}
	var out, errOut bytes.Buffer
	err := Compare(&out, &errOut, cfg)
	return out.String(), errOut.String(), err
}

// TestGolden covers every format on the crafted regression pair, go test
// output of core/batch, and the benchrun-style suite as columns of /index.
func TestGolden(t *testing.T) {
	regress := []string{"old=" + td("regress-old.txt"), "new=" + td("regress-new.txt")}
	for _, tc := range []struct {
		name  string
		files []string
		mod   func(*CompareConfig)
	}{
		{"regress.txt", regress, func(c *CompareConfig) { c.Thresholds = []string{"install-ns=5"} }},
		{"regress.md", regress, func(c *CompareConfig) { c.Format = "markdown"; c.Thresholds = []string{"install-ns=5"} }},
		{"regress.csv", regress, func(c *CompareConfig) { c.Format = "csv"; c.Thresholds = []string{"install-ns=5"} }},
		{"regress.json", regress, func(c *CompareConfig) { c.Format = "json"; c.Thresholds = []string{"install-ns=5"} }},
		{"regress.html", regress, func(c *CompareConfig) { c.Format = "html"; c.Thresholds = []string{"install-ns=5"} }},
		{"gotest.txt", []string{"a=" + td("batch-a.txt"), "b=" + td("batch-b.txt")}, nil},
		{"three.txt", []string{"old=" + td("regress-old.txt"), "new=" + td("regress-new.txt"), "again=" + td("noise-new.txt")},
			func(c *CompareConfig) {
				c.Filter = ".unit:(install-ns OR rows)"
				c.Thresholds = []string{"install-ns=5"}
			}},
		{"suite-index.txt", []string{td("suite.txt")}, func(c *CompareConfig) { c.Col = "/index@(direct imported)" }},
		{"suite-index.md", []string{td("suite.txt")}, func(c *CompareConfig) {
			c.Col = "/index@(direct imported)"
			c.Format = "markdown"
			c.Filter = ".unit:install-ns"
		}},
		{"suite-index.html", []string{td("suite.txt")}, func(c *CompareConfig) {
			c.Col = "/index@(direct imported)"
			c.Format = "html"
			c.Filter = ".unit:(install-ns OR ns/update)"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := compare(t, tc.mod, tc.files...)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, []byte(out))
		})
	}
}

// TestFailOnKnownRegression: a 20% slower install with a 5% threshold is a
// regression in both benchmarks, and only there.
func TestFailOnKnownRegression(t *testing.T) {
	rep, err := BuildReport(nil, func() CompareConfig {
		c := DefaultCompareConfig()
		c.Files = []string{td("regress-old.txt"), td("regress-new.txt")}
		c.Thresholds = []string{"install-ns=5"}
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	var regs []string
	for _, tb := range rep.Tables {
		for _, r := range tb.Rows {
			if c := r.Cells[1]; c.Verdict == Regression {
				regs = append(regs, tb.Unit+" "+r.Name)
				if c.DeltaPct < 15 || c.DeltaPct > 25 {
					t.Errorf("%s %s: delta %.2f%%, want about +20%%", tb.Unit, r.Name, c.DeltaPct)
				}
			}
		}
	}
	want := []string{
		"install-sec Query/workload=star/index=imported/join=delta/rows=100000",
		"install-sec Query/workload=star/index=direct/join=delta/rows=100000",
	}
	if strings.Join(regs, "\n") != strings.Join(want, "\n") {
		t.Errorf("regressions:\n%s\nwant:\n%s", strings.Join(regs, "\n"), strings.Join(want, "\n"))
	}

	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Thresholds = []string{"install-ns=5"} },
		td("regress-old.txt"), td("regress-new.txt"))
	if !errors.Is(err, ErrRegression) || ExitCode(err) != 1 {
		t.Fatalf("--fail-on regression on a 20%% regression: err %v (exit %d), want ErrRegression (exit 1)", err, ExitCode(err))
	}
	// Without --fail-on the same comparison succeeds.
	if _, _, err := compare(t, nil, td("regress-old.txt"), td("regress-new.txt")); err != nil {
		t.Fatalf("without --fail-on: %v", err)
	}
	// Past the change's size, the threshold absorbs it.
	for _, unit := range []string{"install-ns", "install-sec"} {
		_, _, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Thresholds = []string{unit + "=25"} },
			td("regress-old.txt"), td("regress-new.txt"))
		if err != nil {
			t.Errorf("threshold %s=25 on a 20%% change: %v, want no regression", unit, err)
		}
	}
	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Thresholds = []string{"*=25"} },
		td("regress-old.txt"), td("regress-new.txt"))
	if err != nil {
		t.Errorf("threshold *=25 on a 20%% change: %v, want no regression", err)
	}
}

// TestZeroOfATidiedUnit: benchfmt keeps "0 wait-ns/op" in wait-ns/op
// while "5 wait-ns/op" reads as wait-sec/op. A unit's zero samples are
// compared with its others all the same, under its direction: a change
// from 0 to about 100 ns fails the gate, as it does in a unit that
// nothing tidies.
func TestZeroOfATidiedUnit(t *testing.T) {
	for _, unit := range []string{"wait-ns/op", "wait-us/op"} {
		var o, n strings.Builder
		for _, b := range []*strings.Builder{&o, &n} {
			fmt.Fprintf(b, "Unit %s better=lower\n", unit)
		}
		for i := range 6 {
			fmt.Fprintf(&o, "BenchmarkW 1 100 ns/op 0 %s\n", unit)
			fmt.Fprintf(&n, "BenchmarkW 1 100 ns/op %d %s\n", 100+i, unit)
		}
		oldPath, newPath := writeTemp(t, "old.txt", o.String()), writeTemp(t, "new.txt", n.String())
		rep, err := BuildReport(nil, func() CompareConfig {
			c := DefaultCompareConfig()
			c.Files = []string{oldPath, newPath}
			return c
		}())
		if err != nil {
			t.Fatalf("%s: %v", unit, err)
		}
		var units []string
		for _, tb := range rep.Tables {
			units = append(units, tb.Unit)
		}
		if len(units) != 2 {
			t.Errorf("%s: tables of units %v, want sec/op and one table of %s", unit, units, unit)
		}
		_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, oldPath, newPath)
		if !errors.Is(err, ErrRegression) {
			t.Errorf("%s: 0 -> 100 with better=lower: err %v, want ErrRegression", unit, err)
		}
	}
}

func TestNoiseOnlyExitsZero(t *testing.T) {
	out, _, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, td("noise-old.txt"), td("noise-new.txt"))
	if err != nil {
		t.Fatalf("noise-only pair: %v\n%s", err, out)
	}
	if strings.Contains(out, string(Regression)) {
		t.Errorf("noise-only pair reports a regression:\n%s", out)
	}
}

// TestDirectionFromMetadata is C1: the same +20% is better when the unit
// says better=higher, and changed (never a regression) without direction.
func TestDirectionFromMetadata(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		better string
		want   Verdict
	}{{"higher", Better}, {"lower", Regression}, {"", Changed}} {
		var files []string
		for _, name := range []string{"regress-old.txt", "regress-new.txt"} {
			b, err := os.ReadFile(td(name))
			if err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(string(b), "Unit install-ns better=lower\n", "", 1)
			if tc.better != "" {
				s = strings.Replace(s, "Unit ns/update", "Unit install-ns better="+tc.better+"\nUnit ns/update", 1)
			}
			p := filepath.Join(dir, tc.better+name)
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
		cfg := DefaultCompareConfig()
		cfg.Files = files
		rep, err := BuildReport(nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range rep.Tables {
			if tb.Unit != "install-sec" {
				continue
			}
			for _, r := range tb.Rows {
				if v := r.Cells[1].Verdict; v != tc.want {
					t.Errorf("better=%q: %s verdict %q, want %q", tc.better, r.Name, v, tc.want)
				}
			}
		}
	}
}

func TestBadInputNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	conflict := filepath.Join(dir, "conflict.txt")
	os.WriteFile(conflict, []byte("Unit x better=lower\nBenchmarkA 1 5 x\nUnit x better=higher\nBenchmarkA 1 6 x\n"), 0o644)
	// benchfmt reads an assume= it does not know as nothing: the
	// file's exact counts would be compared as medians.
	badAssume := filepath.Join(dir, "bad-assume.txt")
	os.WriteFile(badAssume, []byte("goos: linux\nUnit rows assume=Exact\nBenchmarkA 1 5 rows\n"), 0o644)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{td("regress-old.txt"), td("bad-line.txt")}, "bad-line.txt:5: "},
		{[]string{td("bad-better.txt"), td("batch-a.txt")}, "bad-better.txt:2: Unit install-ns better=sideways"},
		{[]string{td("regress-old.txt"), td("empty.txt")}, "empty.txt: no benchmark results"},
		{[]string{td("regress-old.txt"), td("missing.txt")}, "missing.txt"},
		{[]string{td("regress-old.txt"), "testdata"}, "testdata: is a directory"},
		{[]string{td("regress-old.txt"), conflict}, "conflict.txt:3"},
		{[]string{badAssume, badAssume}, "bad-assume.txt:2: Unit rows assume=Exact: assume must be nothing or exact"},
	} {
		out, _, err := compare(t, nil, tc.files...)
		if !errors.Is(err, ErrInput) || ExitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want ErrInput (exit 2)", tc.files, err, ExitCode(err))
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %q does not name %q", tc.files, err, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote a report for bad input:\n%s", tc.files, out)
		}
	}
}

func TestBadUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*CompareConfig)
		n    int
	}{
		{"one file", nil, 1},
		{"no files", nil, 0},
		{"alpha 0", func(c *CompareConfig) { c.Alpha = 0 }, 2},
		{"alpha 1", func(c *CompareConfig) { c.Alpha = 1 }, 2},
		{"confidence", func(c *CompareConfig) { c.Confidence = 95 }, 2},
		{"format", func(c *CompareConfig) { c.Format = "xml" }, 2},
		{"fail-on", func(c *CompareConfig) { c.FailOn = "improvement" }, 2},
		{"threshold no =", func(c *CompareConfig) { c.Thresholds = []string{"ns/op"} }, 2},
		{"threshold negative", func(c *CompareConfig) { c.Thresholds = []string{"ns/op=-1"} }, 2},
		{"threshold NaN", func(c *CompareConfig) { c.Thresholds = []string{"ns/op=NaN"} }, 2},
		{"threshold Inf", func(c *CompareConfig) { c.Thresholds = []string{"install-ns=inf"} }, 2},
		{"threshold +Inf%", func(c *CompareConfig) { c.Thresholds = []string{"*=+Inf%"} }, 2},
		{"filter", func(c *CompareConfig) { c.Filter = "(" }, 2},
		{"col", func(c *CompareConfig) { c.Col = ".unit" }, 2},
		{"scale-by", func(c *CompareConfig) { c.ScaleBy = "rows" }, 2},
	} {
		files := []string{td("regress-old.txt"), td("regress-new.txt")}[:tc.n]
		_, _, err := compare(t, tc.mod, files...)
		if !errors.Is(err, ErrUsage) || ExitCode(err) != 2 {
			t.Errorf("%s: err %v, want ErrUsage (exit 2)", tc.name, err)
		}
	}
}

// TestTooFewSamples is C5: three samples a side can never be significant
// at 0.05, and the report says so instead of a silent ~.
func TestTooFewSamples(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, vals := range [][]string{{"100", "101", "102"}, {"200", "201", "202"}} {
		var b strings.Builder
		b.WriteString("Unit x better=lower\n")
		for _, v := range vals {
			b.WriteString("BenchmarkA\t1\t" + v + " x\n")
		}
		p := filepath.Join(dir, string(rune('a'+i))+".txt")
		os.WriteFile(p, []byte(b.String()), 0o644)
		files = append(files, p)
	}
	out, _, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, files...)
	if err != nil {
		t.Fatalf("too few samples must not fail the gate: %v", err)
	}
	if !strings.Contains(out, "too few samples") || !strings.Contains(out, "need at least 4 each") {
		t.Errorf("report does not warn about the sample size:\n%s", out)
	}
}

func TestMinMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 10, 2.0 / 11}, {0, 5, 1}} {
		if got := minMannWhitneyP(tc.n1, tc.n2); got < tc.want*(1-1e-9) || got > tc.want*(1+1e-9) {
			t.Errorf("minMannWhitneyP(%d, %d) = %g, want %g", tc.n1, tc.n2, got, tc.want)
		}
	}
	if n := samplesNeeded(0.05); n != 4 {
		t.Errorf("samplesNeeded(0.05) = %d, want 4", n)
	}
	if n := samplesNeeded(0.01); n != 5 {
		t.Errorf("samplesNeeded(0.01) = %d, want 5", n)
	}
}

// TestPAtAlphaIsSignificant: a p-value equal to alpha is significant, as
// benchstat reads it (its "~" is p > alpha). alpha-old.txt and
// alpha-new.txt, 7 and 9 samples with ties, give p = 0.05 exactly:
// benchstat reports +0.20%, so the gate fails. At alpha 0.1, 3 samples a
// side can reach p = 0.1 (three equal values against three larger ones
// do), so they are not too few: a change, as benchstat reports it.
func TestPAtAlphaIsSignificant(t *testing.T) {
	rep, err := BuildReport(nil, func() CompareConfig {
		c := DefaultCompareConfig()
		c.Files = []string{td("alpha-old.txt"), td("alpha-new.txt")}
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Tables[0].Rows[0].Cells[1]; c.P != 0.05 || c.Verdict != Regression {
		t.Errorf("p %v, verdict %q; want p 0.05 and regression", c.P, c.Verdict)
	}
	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, td("alpha-old.txt"), td("alpha-new.txt"))
	if !errors.Is(err, ErrRegression) {
		t.Errorf("--fail-on regression at p = alpha: err %v, want ErrRegression", err)
	}

	old := writeTemp(t, "old.txt", "Unit x better=lower\nBenchmarkA 1 10 x\nBenchmarkA 1 10 x\nBenchmarkA 1 10 x\n")
	new := writeTemp(t, "new.txt", "Unit x better=lower\nBenchmarkA 1 20 x\nBenchmarkA 1 21 x\nBenchmarkA 1 22 x\n")
	rep, err = BuildReport(nil, func() CompareConfig {
		c := DefaultCompareConfig()
		c.Files = []string{old, new}
		c.Alpha = 0.1
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Tables[0].Rows[0].Cells[1]; c.Verdict != Regression {
		t.Errorf("3 a side at alpha 0.1: p %v, verdict %q; want regression", c.P, c.Verdict)
	}
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{{1, 39, 0.05}, {3, 3, 0.1}} {
		if p := minMannWhitneyP(tc.n1, tc.n2); p != tc.want {
			t.Errorf("minMannWhitneyP(%d, %d) = %v, want %v exactly", tc.n1, tc.n2, p, tc.want)
		}
	}
	// The samples a side that warnings ask for follow the same rule: at
	// alpha 0.1, 3 a side can reach it (benchmath asks for ">= 3" too).
	if n := samplesNeeded(0.1); n != 3 {
		t.Errorf("samplesNeeded(0.1) = %d, want 3", n)
	}
}

// TestChangeAtThresholdIsNotPast: a gate fails on a change larger than
// its threshold, so a change of exactly the threshold is "worse", not
// "regression", however the arithmetic rounds it: 10 ns/op to 11 ns/op
// reads as 1e-08 to 1.1e-08 sec/op, whose delta computes to
// 10.000000000000005%. A hair more than the threshold is past it.
func TestChangeAtThresholdIsNotPast(t *testing.T) {
	for _, tc := range []struct {
		old, new, threshold string
		want                Verdict
	}{
		{"10 ns/op", "11 ns/op", "10", Worse},
		{"100 ns/op", "105 ns/op", "5", Worse},
		{"100 B/op", "105 B/op", "5", Worse},
		{"1000 MB/s", "900 MB/s", "10", Worse},
		{"7 ns/op", "7.35 ns/op", "5", Worse},
		{"10 ns/op", "11 ns/op", "9.999", Regression},
		// Tiny thresholds: exactly 1e-7% computes to
		// 1.000000082740371e-07%, past the threshold by more than a
		// relative 1e-9 of it.
		{"1000000000 ns/op", "1000000001 ns/op", "1e-7", Worse},
		{"1000000000 ns/op", "1000000002 ns/op", "1e-7", Regression},
		{"1000000000000000 B/op", "1000000000000001 B/op", "0", Regression},
		{"100 B/op", "105 B/op", "4.9999", Regression},
		// From 0 the change is infinite: past the largest finite
		// threshold, whose margin must not overflow to +Inf.
		{"0 B/op", "16 B/op", "1.7976931348623157e308", Regression},
	} {
		var o, n strings.Builder
		for range 8 {
			fmt.Fprintf(&o, "BenchmarkT 1 %s\n", tc.old)
			fmt.Fprintf(&n, "BenchmarkT 1 %s\n", tc.new)
		}
		old, new := writeTemp(t, "old.txt", o.String()), writeTemp(t, "new.txt", n.String())
		rep, err := BuildReport(nil, func() CompareConfig {
			c := DefaultCompareConfig()
			c.Files = []string{old, new}
			c.Thresholds = []string{"*=" + tc.threshold}
			return c
		}())
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Tables[0].Rows[0].Cells[1]
		if c.Verdict != tc.want {
			t.Errorf("%s -> %s at threshold %s%%: delta %v%%, verdict %q; want %q", tc.old, tc.new, tc.threshold, c.DeltaPct, c.Verdict, tc.want)
		}
		_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Thresholds = []string{"*=" + tc.threshold} }, old, new)
		if failed := errors.Is(err, ErrRegression); failed != (tc.want == Regression) {
			t.Errorf("%s -> %s at threshold %s%%: --fail-on regression: err %v", tc.old, tc.new, tc.threshold, err)
		}
	}
}

// TestStrictMatchesCommit is C4: the two files differ in their commit line,
// which splits them into separate tables (nothing compared) only under
// Strict.
func TestStrictMatchesCommit(t *testing.T) {
	for _, strict := range []bool{false, true} {
		cfg := DefaultCompareConfig()
		cfg.Files = []string{td("regress-old.txt"), td("regress-new.txt")}
		cfg.Strict = strict
		rep, err := BuildReport(nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, tb := range rep.Tables {
			for _, r := range tb.Rows {
				for _, c := range r.Cells {
					if c != nil && c.Compared {
						compared++
					}
				}
			}
		}
		if want := map[bool]int{false: 10, true: 0}[strict]; compared != want {
			t.Errorf("strict=%v: %d cells compared, want %d", strict, compared, want)
		}
	}
}

// TestDifferentMachinesWarn: rows pair ignoring the cpu and go lines, so
// files measured on two machines or Go releases are compared, and gated,
// like any others, and no table shows the difference: a warning names each
// file's values, where the report said nothing. The same machine, or
// --strict (which keeps such files apart, nothing compared), has none.
func TestDifferentMachinesWarn(t *testing.T) {
	old, err := os.ReadFile(td("regress-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(strings.Replace(string(old), "cpu: AMD EPYC 7B13", "cpu: Intel Xeon", 1), "go: go1.26.8", "go: go1.25.1", 1)
	oldPath := writeTemp(t, "old.txt", string(old))
	newPath := writeTemp(t, "new.txt", other)
	sameCPU := writeTemp(t, "same.txt", strings.Replace(string(old), "commit: 1111111", "commit: 3333333", 1))
	for _, tc := range []struct {
		name   string
		strict bool
		files  []string
		want   string // "" for no warning
	}{
		{"two machines", false, []string{oldPath, newPath}, "benchcmp: warning: the files were measured on different machines or Go releases: cpu [AMD EPYC 7B13 in " + oldPath + "; Intel Xeon in " + newPath + "], go [go1.26.8 in " + oldPath + "; go1.25.1 in " + newPath + "]"},
		{"one machine", false, []string{oldPath, sameCPU}, ""},
		{"two machines under --strict", true, []string{oldPath, newPath}, ""},
	} {
		cfg := DefaultCompareConfig()
		cfg.Files = tc.files
		cfg.Strict = tc.strict
		var out, errOut bytes.Buffer
		if err := Compare(&out, &errOut, cfg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := errOut.String()
		if tc.want == "" && strings.Contains(got, "different machines") {
			t.Errorf("%s: warned %q", tc.name, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: stderr %q, want it to hold %q", tc.name, got, tc.want)
		}
	}
}

// TestConcurrentAndRepeated: Compare holds no state between calls.
func TestConcurrentAndRepeated(t *testing.T) {
	first, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, td("regress-old.txt"), td("regress-new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _, _ = compare(t, func(c *CompareConfig) { c.Format = "json" }, td("regress-old.txt"), td("regress-new.txt"))
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o != first {
			t.Errorf("run %d differs from the first", i)
		}
	}
}

func TestFilterRejectsEverything(t *testing.T) {
	out, _, err := compare(t, func(c *CompareConfig) { c.Filter = ".name:Nothing" }, td("regress-old.txt"), td("regress-new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "no results left after filtering") {
		t.Errorf("empty comparison says %q", out)
	}
}

// zeroBaseline writes two result files of one benchmark, 6 samples each,
// whose hold-gap and errors are 0 in the old file and not in the new one,
// as benchrun writes when a change starts to hold or to fail, and returns
// their paths.
func zeroBaseline(t *testing.T) (old, new string) {
	t.Helper()
	var o, n strings.Builder
	for _, b := range []*strings.Builder{&o, &n} {
		b.WriteString("Unit install-ns better=lower\nUnit hold-gap better=lower\nUnit errors assume=exact\ngomaxprocs: 2\n")
	}
	for i := range 6 {
		fmt.Fprintf(&o, "BenchmarkQ/workload=w/index=direct 1 %d install-ns 0 hold-gap 0 errors\n", 1000+i)
		fmt.Fprintf(&o, "BenchmarkQ/workload=w/index=imported 1 %d install-ns 2 hold-gap 0 errors\n", 500+i)
		fmt.Fprintf(&n, "BenchmarkQ/workload=w/index=direct 1 %d install-ns %d hold-gap 4 errors\n", 1000+i, 3+i)
		fmt.Fprintf(&n, "BenchmarkQ/workload=w/index=imported 1 %d install-ns 2 hold-gap 0 errors\n", 500+i)
	}
	return writeTemp(t, "old.txt", o.String()), writeTemp(t, "new.txt", n.String())
}

// TestHTMLWithZeroBaseline: a unit whose baseline median is 0 while the new
// one is not (hold-gap, errors) has no finite ratio; the HTML report leaves
// those rows out of its ratio chart and says so, where gonum refused the
// infinite point and the report failed with exit 2.
func TestHTMLWithZeroBaseline(t *testing.T) {
	old, new := zeroBaseline(t)
	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "html" }, old, new)
	if err != nil {
		t.Fatalf("html report: %v (exit %d)", err, ExitCode(err))
	}
	for _, unit := range []string{"hold-gap", "errors"} {
		i := strings.Index(out, "<h2>"+unit+":")
		if i < 0 {
			t.Fatalf("no %s table in the report", unit)
		}
		section := out[i:]
		section = section[:strings.Index(section, "</section>")]
		if !strings.Contains(section, `data-chart="ratio"`) || !strings.Contains(section, "<svg") {
			t.Errorf("%s: no ratio chart", unit)
		}
		if !strings.Contains(section, "Not drawn, 1 row(s) whose ratio is not a finite positive number") ||
			!strings.Contains(section, "Q/workload=w/index=direct (a median of 0 against one that is not, as a count going from none to some).") {
			t.Errorf("%s: the caption does not name the row left out:\n%s", unit, clip([]byte(section)))
		}
	}
	// The imported row's hold-gap, 2 against 2, is drawn; nothing is left
	// out of install-ns.
	i := strings.Index(out, "<h2>install-sec:")
	if section := out[i : strings.Index(out[i:], "</section>")+i]; strings.Contains(section, "Not drawn") {
		t.Errorf("install-ns: rows left out of the ratio chart:\n%s", clip([]byte(section)))
	}
}

// TestGateThatComparedNothingFails: --fail-on regression refuses a
// comparison in which nothing was compared, saying why, with exit 2 and no
// report, where it passed with exit 0; without --fail-on it warns.
func TestGateThatComparedNothingFails(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(td(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	otherProcs := writeTemp(t, "procs4.txt", strings.Replace(read("regress-new.txt"), "gomaxprocs: 2", "gomaxprocs: 4", 1))
	// A trailing blank in a configuration value shows quoted: unquoted,
	// "a" and "a " read alike.
	blank := writeTemp(t, "blank.txt", strings.Replace(read("regress-new.txt"), "gomaxprocs: 2", "gomaxprocs: 2 ", 1))
	otherNames := writeTemp(t, "renamed.txt", strings.ReplaceAll(read("regress-new.txt"), "BenchmarkQuery", "BenchmarkOther"))
	var imported []string
	for _, l := range strings.SplitAfter(read("suite.txt"), "\n") {
		if !strings.Contains(l, "index=direct") {
			imported = append(imported, l)
		}
	}
	onlyImported := writeTemp(t, "imported.txt", strings.Join(imported, ""))
	byIndex := func(c *CompareConfig) { c.Col = "/index@(direct imported)" }
	for _, tc := range []struct {
		name  string
		mod   func(*CompareConfig)
		files []string
		want  string
	}{
		{"gomaxprocs differs", nil, []string{td("regress-old.txt"), otherProcs},
			"the columns differ in configuration: gomaxprocs [2 in testdata/regress-old.txt; 4 in " + otherProcs + "]"},
		// The tables sort by value (2 before 4), the columns stay in
		// their order: the baseline first.
		{"gomaxprocs differs, the baseline's the larger", nil, []string{otherProcs, td("regress-old.txt")},
			"the columns differ in configuration: gomaxprocs [4 in " + otherProcs + "; 2 in testdata/regress-old.txt]"},
		{"a trailing blank", nil, []string{td("regress-old.txt"), blank},
			`the columns differ in configuration: gomaxprocs [2 in testdata/regress-old.txt; "2 " in ` + blank + "]"},
		{"commit differs under --strict", func(c *CompareConfig) { c.Strict = true }, []string{td("regress-old.txt"), td("regress-new.txt")},
			"commit [1111111 in testdata/regress-old.txt; 2222222 in testdata/regress-new.txt]; rows pair only when every configuration line is equal under --strict"},
		{"no benchmark in common", nil, []string{td("regress-old.txt"), otherNames},
			"no benchmark has results both in the baseline column and in another (rows pair by --row .fullname): Query/workload=star/index=imported/join=delta/rows=1000"},
		{"no direct results", byIndex, []string{onlyImported},
			`every result is in one column of --col /index@(direct imported), "imported": there is nothing to compare it with`},
		{"filter leaves one column", func(c *CompareConfig) { byIndex(c); c.Filter = "/index:imported" }, []string{td("suite.txt")},
			`every result left after --filter "/index:imported" is in one column`},
		{"filter leaves nothing", func(c *CompareConfig) { c.Filter = ".name:Nothing" }, []string{td("regress-old.txt"), td("regress-new.txt")},
			`no result is left after --filter ".name:Nothing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := func(c *CompareConfig) {
				if tc.mod != nil {
					tc.mod(c)
				}
				c.FailOn = "regression"
			}
			out, _, err := compare(t, gate, tc.files...)
			if !errors.Is(err, ErrInput) || ExitCode(err) != 2 {
				t.Fatalf("gate: err %v (exit %d), want ErrInput (exit 2)", err, ExitCode(err))
			}
			if !strings.Contains(err.Error(), "--fail-on regression compared nothing") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("gate: error %q does not say %q", err, tc.want)
			}
			if out != "" {
				t.Errorf("gate: wrote a report although it refused the comparison:\n%s", out)
			}
			// Without the gate the report is written, with a warning.
			out, errOut, err := compare(t, tc.mod, tc.files...)
			if err != nil || out == "" {
				t.Fatalf("without --fail-on: err %v, report %q", err, out)
			}
			if !strings.Contains(errOut, "benchcmp: warning: nothing was compared: ") || !strings.Contains(errOut, tc.want) {
				t.Errorf("without --fail-on: stderr %q lacks the warning %q", errOut, tc.want)
			}
		})
	}
	// A comparison that pairs rows says nothing of the kind.
	_, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Thresholds = []string{"*=50"} },
		td("regress-old.txt"), td("regress-new.txt"))
	if err != nil || errOut != "" {
		t.Errorf("a comparison that pairs: err %v, stderr %q", err, errOut)
	}
}

// TestThresholdsNameUnitsOnce: a --threshold for a unit no file has (a
// typo) and two different thresholds for one unit are usage errors naming
// the flag values, where the first was ignored and the last of the second
// won.
func TestThresholdsNameUnitsOnce(t *testing.T) {
	regress := []string{td("regress-old.txt"), td("regress-new.txt")}
	gotest := []string{td("batch-a.txt"), td("batch-b.txt")}
	// A Unit line's unit is the files' text too: listed, it is escaped.
	escaped := []string{
		writeTemp(t, "esc-old.txt", "Unit x\x1b[2Jy better=lower\nBenchmarkA 1 5 ns/op\n"),
		writeTemp(t, "esc-new.txt", "BenchmarkA 1 5 ns/op\n"),
	}
	for _, tc := range []struct {
		name       string
		files      []string
		thresholds []string
		want       string // "" for no error
	}{
		{"unknown unit beside an escape", escaped, []string{"bogus=1"}, `(their units: ns/op, "x\x1b[2Jy")`},
		{"typo", regress, []string{"instal-ns=50"}, `--threshold "instal-ns=50": no result file has unit instal-ns; did you mean install-ns?`},
		{"unknown unit", regress, []string{"*=5", "bogus=1"}, `--threshold "bogus=1": no result file has unit bogus (their units: install-ns, ns/update, peak-heap-B, rows, updates/s)`},
		{"conflict", regress, []string{"install-ns=50", "install-ns=10"}, `--threshold "install-ns=10" conflicts with --threshold "install-ns=50"`},
		{"conflict, tidied", gotest, []string{"ns/op=5", "sec/op=10"}, `--threshold "sec/op=10" conflicts with --threshold "ns/op=5"`},
		{"conflict in the default", regress, []string{"*=5", "*=10"}, `--threshold "*=10" conflicts with --threshold "*=5"`},
		{"the same twice", regress, []string{"install-ns=10", "install-ns=10%", "*=5", "*=5"}, ""},
		{"tidied spelling", gotest, []string{"sec/op=5", "B/op=1"}, ""},
		{"a unit only declared", regress, []string{"install-ns=5"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := compare(t, func(c *CompareConfig) { c.Thresholds = tc.thresholds }, tc.files...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%v: %v", tc.thresholds, err)
				}
				return
			}
			if !errors.Is(err, ErrUsage) || ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: err %v (exit %d), want ErrUsage (exit 2) with %q", tc.thresholds, err, ExitCode(err), tc.want)
			}
		})
	}
	// A unit the filter leaves out is still a unit of the files.
	_, _, err := compare(t, func(c *CompareConfig) {
		c.Filter = ".unit:install-ns"
		c.Thresholds = []string{"ns/update=5"}
	}, regress...)
	if err != nil {
		t.Errorf("threshold for a filtered-out unit: %v", err)
	}
	// A unit of a Unit line alone is a unit of the files.
	declared := writeTemp(t, "declared.txt", "Unit hold-gap better=lower\n"+func() string {
		b, _ := os.ReadFile(td("regress-new.txt"))
		return string(b)
	}())
	if _, _, err := compare(t, func(c *CompareConfig) { c.Thresholds = []string{"hold-gap=5"} }, td("regress-old.txt"), declared); err != nil {
		t.Errorf("threshold for a declared unit: %v", err)
	}
}

// failWriter fails every write, as stdout does on a full disk.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) {
	return 0, errors.New("write /dev/stdout: no space left on device")
}

// TestWriteErrorIsNotBadInput: an output that cannot be written is an
// error wrapping ErrOutput, exit 1, in every format and command, where it
// exited 2 as if the input were bad.
func TestWriteErrorIsNotBadInput(t *testing.T) {
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrOutput) || ExitCode(err) != 1 || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("%s: err %v (exit %d), want ErrOutput (exit 1) with the cause", what, err, ExitCode(err))
		}
	}
	for _, format := range Formats {
		cfg := DefaultCompareConfig()
		cfg.Files = []string{td("regress-old.txt"), td("regress-new.txt")}
		cfg.Format = format
		check("compare --format "+format, Compare(failWriter{}, io.Discard, cfg))
	}
	check("merge", Merge(failWriter{}, io.Discard, []string{td("shard0.txt")}))
	sc := DefaultScalingConfig()
	sc.Files, sc.By = []string{td("batch-a.txt")}, "/n"
	check("scaling", Scaling(failWriter{}, io.Discard, sc))

	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("%w: x", ErrRegression), 1},
		{fmt.Errorf("%w: x", ErrOutput), 1},
		{fmt.Errorf("%w: x", ErrUsage), 2},
		{fmt.Errorf("%w: x", ErrInput), 2},
		{errors.New("unknown flag: --x"), 2},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestGateThatCannotFailWarns checks that a gate whose every compared row
// has too few samples to show any change (one sample a side) says it cannot
// fail, while still passing as benchstat would, and that a gate over
// samples large enough says nothing of the kind.
func TestGateThatCannotFailWarns(t *testing.T) {
	old := writeTemp(t, "one-old.txt", "goos: linux\nBenchmarkX 1 100 ns/op\n")
	new := writeTemp(t, "one-new.txt", "goos: linux\nBenchmarkX 1 900 ns/op\n")
	gate := func(c *CompareConfig) { c.FailOn = "regression" }
	_, errOut, err := compare(t, gate, old, new)
	if err != nil {
		t.Fatalf("gate over one sample a side: %v, want it to pass", err)
	}
	if !strings.Contains(errOut, "--fail-on regression cannot fail: no compared row of a unit with a direction has samples enough") {
		t.Errorf("stderr %q: want the warning that the gate cannot fail", errOut)
	}
	if _, errOut, _ := compare(t, gate, td("regress-old.txt"), td("regress-new.txt")); strings.Contains(errOut, "cannot fail") {
		t.Errorf("a gate with enough samples warns: %q", errOut)
	}
}

// TestGateNamesTheRowsItCannotFail: when some rows can fail and others
// have too few samples to show any change (a run cut short, a -count
// lower on one side), the gate passed those rows whatever changed and said
// nothing; it names them now, and still judges the others.
func TestGateNamesTheRowsItCannotFail(t *testing.T) {
	var old, new strings.Builder
	old.WriteString("goos: linux\n")
	new.WriteString("goos: linux\n")
	for i := range 10 {
		fmt.Fprintf(&old, "BenchmarkA 1 %d ns/op\nBenchmarkB 1 %d ns/op\n", 100+i, 100+i)
		fmt.Fprintf(&new, "BenchmarkA 1 %d ns/op\n", 100+i)
	}
	new.WriteString("BenchmarkB 1 900 ns/op\n") // one sample, nine times slower
	gate := func(c *CompareConfig) { c.FailOn = "regression" }
	_, errOut, err := compare(t, gate, writeTemp(t, "few-old.txt", old.String()), writeTemp(t, "few-new.txt", new.String()))
	if err != nil {
		t.Fatalf("gate: %v, want it to pass (B cannot be judged, A did not change)", err)
	}
	if !strings.Contains(errOut, "cannot fail on 1 row(s) whose samples are too few") || !strings.Contains(errOut, "B (sec/op)") {
		t.Errorf("stderr %q: want a warning naming row B", errOut)
	}
	if strings.Contains(errOut, "A (sec/op)") {
		t.Errorf("stderr %q: row A has samples enough", errOut)
	}
	if _, errOut, _ := compare(t, gate, td("regress-old.txt"), td("regress-new.txt")); strings.Contains(errOut, "cannot fail") {
		t.Errorf("a gate with enough samples in every row warns: %q", errOut)
	}
}

// TestRowsApartByTheirProcsSuffixAreExplained: two runs under other
// GOMAXPROCS name every benchmark with another -N suffix, so no row pairs;
// the gate's refusal says so and names the projection that pairs them,
// which does.
func TestRowsApartByTheirProcsSuffixAreExplained(t *testing.T) {
	var a, b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&a, "BenchmarkX/n=1-2 1 %d ns/op\n", 100+i)
		fmt.Fprintf(&b, "BenchmarkX/n=1-4 1 %d ns/op\n", 200+i)
	}
	old, new := writeTemp(t, "procs-old.txt", a.String()), writeTemp(t, "procs-new.txt", b.String())
	gate := func(c *CompareConfig) { c.FailOn = "regression" }
	_, _, err := compare(t, gate, old, new)
	if err == nil || !strings.Contains(err.Error(), "differ in their -N GOMAXPROCS suffix alone: --ignore /gomaxprocs pairs them") {
		t.Fatalf("gate over two GOMAXPROCS: %v; want the suffix named, with its --ignore", err)
	}
	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Ignore = "/gomaxprocs" }, old, new)
	if ExitCode(err) != 1 {
		t.Fatalf("with --ignore /gomaxprocs: %v; want the regression found (exit 1)", err)
	}
	// Names that differ otherwise get no such hint.
	other := writeTemp(t, "procs-other.txt", strings.ReplaceAll(b.String(), "BenchmarkX", "BenchmarkY"))
	if _, _, err := compare(t, gate, old, other); err == nil || strings.Contains(err.Error(), "GOMAXPROCS") {
		t.Fatalf("gate over other names: %v; want no GOMAXPROCS hint", err)
	}
}

// TestAFileOfFAILLinesOnlyIsARunThatFailed: a new run whose build failed
// leaves only go test's FAIL lines; compare refused it as a malformed file
// (exit 2, "no benchmark results") where merge reports the same file as a
// run that failed (exit 1). Compare and its gate report the run's failure
// now, exit 1, and a file of nothing at all is still bad input.
func TestAFileOfFAILLinesOnlyIsARunThatFailed(t *testing.T) {
	failed := writeTemp(t, "build-failed.txt", "# example.com/x\n./a.go:3:1: syntax error\nFAIL\texample.com/x [build failed]\nFAIL\n")
	for _, gate := range []bool{false, true} {
		_, errOut, err := compare(t, func(c *CompareConfig) {
			if gate {
				c.FailOn = "regression"
			}
		}, td("regress-old.txt"), failed)
		if !errors.Is(err, ErrRunFailed) || ExitCode(err) != 1 || !strings.Contains(err.Error(), "build-failed.txt: no benchmark results, FAIL lines only (2)") {
			t.Errorf("gate=%v: %v (exit %d); want a run that failed, exit 1", gate, err, ExitCode(err))
		}
		if !strings.Contains(errOut, "build-failed.txt:3: FAIL example.com/x [build failed]") {
			t.Errorf("gate=%v: stderr %q; want the FAIL line named", gate, errOut)
		}
	}
	if _, _, err := compare(t, nil, td("regress-old.txt"), td("empty.txt")); ExitCode(err) != 2 {
		t.Errorf("an empty file: %v; want bad input, exit 2", err)
	}
}

// TestGateThatCannotFailWarnsBesideUnitsWithoutDirection checks the warning
// when the only rows with samples enough are of a unit with no direction
// (a benchrun count), which is never a regression: the gate still cannot
// fail.
func TestGateThatCannotFailWarnsBesideUnitsWithoutDirection(t *testing.T) {
	head := "goos: linux\nUnit rows assume=exact\n"
	old := writeTemp(t, "dir-old.txt", head+"BenchmarkX 1 100 ns/op 5 rows\n")
	new := writeTemp(t, "dir-new.txt", head+"BenchmarkX 1 900 ns/op 6 rows\n")
	_, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, old, new)
	if err != nil {
		t.Fatalf("gate: %v, want it to pass", err)
	}
	if !strings.Contains(errOut, "cannot fail") {
		t.Errorf("stderr %q: want the warning that the gate cannot fail", errOut)
	}
}

// TestGateWithoutDirectionsSaysSo: files whose units have no direction (a
// harness's own units without their Unit lines, or benchrun's results
// with them cut off by grep '^Benchmark') can never fail a gate, whatever
// the samples: every change is "changed". The warning blamed the samples
// ("no compared row ... has samples enough ... need at least 4 a side")
// of files with ten a side, so that more samples were the cure it named.
// It names the units without a direction and the Unit line that gives one.
func TestGateWithoutDirectionsSaysSo(t *testing.T) {
	var old, new strings.Builder
	for i := range 10 {
		fmt.Fprintf(&old, "BenchmarkX 1 %d ns/update\n", 100+i)
		fmt.Fprintf(&new, "BenchmarkX 1 %d ns/update\n", 900+i)
	}
	gate := func(c *CompareConfig) { c.FailOn = "regression" }
	_, errOut, err := compare(t, gate, writeTemp(t, "nodir-old.txt", old.String()), writeTemp(t, "nodir-new.txt", new.String()))
	if err != nil {
		t.Fatalf("gate: %v, want it to pass (no direction)", err)
	}
	if want := `--fail-on regression cannot fail: no compared unit has a known direction (sec/update)`; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q: want %q", errOut, want)
	}
	if want := `"Unit sec/update better=lower"`; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q: want the Unit line that gives a direction, %s", errOut, want)
	}
	if strings.Contains(errOut, "samples enough") {
		t.Errorf("stderr %q: blames the samples of files with ten a side", errOut)
	}
}

// TestExactSpread: the values of an assume=exact unit that vary within a
// file showed the most frequent one alone, beside a delta of "~", where
// benchstat shows their spread ("10.00 ± 20%"): the cell now shows it
// too, in every format that shows intervals, and constant values none.
func TestExactSpread(t *testing.T) {
	head := "Unit x-count assume=exact better=lower\n"
	old := writeTemp(t, "exact-old.txt", head+strings.Repeat("BenchmarkA 1 10 x-count\n", 5)+"BenchmarkA 1 12 x-count\n"+
		"BenchmarkB 1 5 x-count\nBenchmarkB 1 5 x-count\n")
	new := writeTemp(t, "exact-new.txt", head+strings.Repeat("BenchmarkA 1 10 x-count\n", 6)+
		"BenchmarkB 1 5 x-count\nBenchmarkB 1 5 x-count\n")
	for _, format := range []string{"text", "markdown", "html"} {
		out, _, err := compare(t, func(c *CompareConfig) { c.Format = format }, old, new)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "10.000 ±20% (1)") {
			t.Errorf("%s: A's cell lacks its spread, 10.000 ±20%% (1):\n%s", format, out)
		}
		if strings.Contains(out, "5.000 ±") || !strings.Contains(out, "5.000") {
			t.Errorf("%s: B's constant values show a spread:\n%s", format, out)
		}
	}
}

// TestPoolingOneFileTwiceWarns: one file given twice under one label (any
// spelling) pools each of its samples twice into that column, which can
// make noise significant; compare warns, as merge does. Two labels over one
// file, or two files under one label, say nothing.
func TestPoolingOneFileTwiceWarns(t *testing.T) {
	old := writeTemp(t, "pool-old.txt", "BenchmarkA 1 100 ns/op\nBenchmarkA 1 101 ns/op\nBenchmarkA 1 102 ns/op\n")
	other := writeTemp(t, "pool-other.txt", "BenchmarkA 1 100 ns/op\nBenchmarkA 1 101 ns/op\nBenchmarkA 1 102 ns/op\n")
	dup := filepath.Join(filepath.Dir(old), ".", filepath.Base(old))
	for _, tc := range []struct {
		files []string
		warn  bool
	}{
		{[]string{"old=" + old, "old=" + dup, "new=" + other}, true},
		{[]string{"old=" + old, "new=" + dup}, false},
		{[]string{"old=" + old, "old=" + other, "new=" + other}, false},
	} {
		_, errOut, err := compare(t, nil, tc.files...)
		if err != nil {
			t.Fatalf("%v: %v", tc.files, err)
		}
		if got := strings.Contains(errOut, "are the same file in column"); got != tc.warn {
			t.Errorf("%v: stderr %q, want the warning: %v", tc.files, errOut, tc.warn)
		}
	}
}

// TestOneFileAsTwoColumnsWarns: `benchcmp old.txt old.txt` reads the file
// as two columns, old.txt#0 and old.txt#1, as benchstat does: the warning
// says it is compared with itself, not that its samples count twice.
func TestOneFileAsTwoColumnsWarns(t *testing.T) {
	old := writeTemp(t, "self.txt", goTestLines)
	out, errOut, err := compare(t, nil, old, old)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut, "count twice") || !strings.Contains(errOut, fmt.Sprintf("%s and %s are the same file, read as two columns, %q and %q: it is compared with itself", old, old, old+"#0", old+"#1")) {
		t.Errorf("stderr %q: want the file compared with itself, as columns #0 and #1", errOut)
	}
	if !strings.Contains(out, old+"#1") {
		t.Errorf("no column %s#1 in the report:\n%s", old, out)
	}
}

// TestSignificantWithEqualMedians: samples that differ significantly but
// share their median show a delta of 0.00% with the p-value, as benchstat
// shows them, and the verdict "changed" (the medians do not say which way),
// in every format; never "~".
func TestSignificantWithEqualMedians(t *testing.T) {
	var o, n strings.Builder
	for _, v := range []int{1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5} {
		fmt.Fprintf(&o, "BenchmarkM 1 %d ns/op\n", v)
	}
	for _, v := range []int{5, 5, 5, 5, 5, 5, 5, 6, 7, 8, 9} {
		fmt.Fprintf(&n, "BenchmarkM 1 %d ns/op\n", v)
	}
	old, new := writeTemp(t, "eq-old.txt", o.String()), writeTemp(t, "eq-new.txt", n.String())
	for format, want := range map[string][]string{
		"text":     {"5.000n ±40%  0.00%   0.010  changed\n"},
		"markdown": {"| 0.00% (p=0.010) | 0% | changed |"},
		"csv":      {",0,0.00973", ",changed,"},
		"json":     {`"delta_pct": 0,`, `"verdict": "changed"`},
		"html":     {`<td class="num">0.00%</td>`, ">changed<"},
	} {
		out, _, err := compare(t, func(c *CompareConfig) { c.Format = format; c.FailOn = "regression" }, "old="+old, "new="+new)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q:\n%s", format, w, clip([]byte(out)))
			}
		}
	}
}

// TestHTMLOfExtremeRatios: finite input draws, whatever its range: a median
// of 1e250 against 1..6, a threshold of 1e300% (or 150% for a
// higher-is-better unit, a ratio below 0) beside the data; and an axis of
// many decades keeps a bounded number of ticks, so the report does not
// swell.
func TestHTMLOfExtremeRatios(t *testing.T) {
	var o, n strings.Builder
	for v := 1; v <= 6; v++ {
		fmt.Fprintf(&o, "BenchmarkH 1 %d ns/op %d B/s\n", v, v)
		fmt.Fprintf(&n, "BenchmarkH 1 1e250 ns/op 1e250 B/s\n")
	}
	old, huge := writeTemp(t, "h-old.txt", o.String()), writeTemp(t, "h-new.txt", n.String())
	regress := []string{"old=" + td("regress-old.txt"), "new=" + td("regress-new.txt")}
	html := func(th string, files ...string) string {
		t.Helper()
		out, _, err := compare(t, func(c *CompareConfig) {
			c.Format = "html"
			if th != "" {
				c.Thresholds = []string{"*=" + th}
			}
		}, files...)
		if err != nil {
			t.Fatalf("--threshold %q %v: %v", th, files, err)
		}
		return out
	}
	html("", old, huge)
	html("150", old, huge)
	plain := len(html("", regress...))
	for _, th := range []string{"1e300", "1e20", "150"} {
		if got := len(html(th, regress...)); got > plain*11/10 {
			t.Errorf("--threshold '*=%s': %d bytes of HTML against %d without", th, got, plain)
		}
	}
}

// TestGeomeanAndDeltaAsBenchstat: a geomean over a zero center is "?"
// (benchstat: summaries must be >0); a 0 -> 8.5 row leaves the ratio "?"
// rather than being dropped from it; a 0 -> 0 row counts as a ratio of 1;
// and a delta is new/old - 1 (-2 -> -6 is +200%), computed as benchstat
// computes it, so that it rounds the same, while the verdict
// follows the way the values went (down: better for a lower-is-better
// unit).
func TestGeomeanAndDeltaAsBenchstat(t *testing.T) {
	file := func(name string, rows map[string]float64) string {
		var b strings.Builder
		b.WriteString("Unit x better=lower\n")
		for _, n := range slices.Sorted(maps.Keys(rows)) {
			for range 6 {
				fmt.Fprintf(&b, "Benchmark%s 1 %g x\n", n, rows[n])
			}
		}
		return writeTemp(t, name, b.String())
	}
	for _, tc := range []struct {
		name     string
		old, new map[string]float64
		want     []string
	}{
		{"zero to some", map[string]float64{"A": 0, "B": 4}, map[string]float64{"A": 8.5, "B": 4},
			[]string{"geomean  ?          5.831          ?  ", "geomean: summaries must be >0 to compute geomean\n", "geomean: a baseline median of 0 with another median that is not"}},
		{"zero to zero", map[string]float64{"A": 0, "B": 4}, map[string]float64{"A": 0, "B": 16},
			[]string{"geomean  ?          ?              +100.00%", "geomean: summaries must be >0"}},
		{"negative", map[string]float64{"N": -2}, map[string]float64{"N": -6},
			[]string{"+200.00%  0.002  better\n"}},
		// 161/160 - 1 is 0.0062500000000000888 where (161-160)/160 is
		// 0.00625: benchstat prints +0.63%.
		{"rounded as benchstat", map[string]float64{"R": 160}, map[string]float64{"R": 161},
			[]string{"+0.63%  0.002  regression\n"}},
	} {
		out, _, err := compare(t, nil, "old="+file("old.txt", tc.old), "new="+file("new.txt", tc.new))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q:\n%s", tc.name, w, out)
			}
		}
	}
}

// TestTooFewSamplesHasNoPAndMarkdownEscapesHTML: a "too few samples"
// verdict is printed without a p-value (which could only mislead), and
// markdown escapes HTML in names and configuration values, which a pull
// request comment would render.
func TestTooFewSamplesHasNoPAndMarkdownEscapesHTML(t *testing.T) {
	old := writeTemp(t, "few-old.txt", "note: <b>x</b>\nBenchmark<img/src=x> 1 10 ns/op\nBenchmark<img/src=x> 1 11 ns/op\n")
	new := writeTemp(t, "few-new.txt", "note: <b>x</b>\nBenchmark<img/src=x> 1 20 ns/op\nBenchmark<img/src=x> 1 21 ns/op\n")
	text, _, err := compare(t, nil, "old="+old, "new="+new)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "~           too few samples") {
		t.Errorf("text: want a blank p beside too few samples:\n%s", text)
	}
	md, _, err := compare(t, func(c *CompareConfig) { c.Format = "markdown" }, "old="+old, "new="+new)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "(p=") || strings.Contains(md, "<img") || strings.Contains(md, "<b>") ||
		!strings.Contains(md, "&lt;img/src=x&gt;") || !strings.Contains(md, "note: &lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("markdown: want no p and HTML escaped:\n%s", md)
	}
}

// TestNothingComparedSaysSo: markdown's headline does not claim "no
// regression" when no row paired, and JSON of a report without tables, or
// of a table without configuration, holds arrays, not null.
func TestNothingComparedSaysSo(t *testing.T) {
	a := writeTemp(t, "a.txt", "BenchmarkA 1 10 ns/op\n")
	b := writeTemp(t, "b.txt", "BenchmarkB 1 10 ns/op\n")
	md, _, err := compare(t, func(c *CompareConfig) { c.Format = "markdown" }, a, b)
	if err != nil || !strings.HasPrefix(md, "## benchcmp: nothing compared\n") {
		t.Errorf("markdown (%v): want the headline nothing compared:\n%s", err, md)
	}
	js, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, a, b)
	if err != nil || strings.Contains(js, `"config": null`) || !strings.Contains(js, `"config": []`) {
		t.Errorf("json (%v): want arrays, not null:\n%s", err, js)
	}
	js, _, err = compare(t, func(c *CompareConfig) { c.Format = "json"; c.Filter = ".name:Nothing" }, a, b)
	if err != nil || !strings.Contains(js, `"tables": []`) {
		t.Errorf("json (%v): want tables []:\n%s", err, js)
	}
}

// TestScaleByThatDrawsNothingWarns: --scale-by naming a parameter no
// benchmark has, or given with a format that draws no chart, is said on
// stderr; a parameter the names have is not.
func TestScaleByThatDrawsNothingWarns(t *testing.T) {
	files := []string{td("batch-a.txt"), td("batch-b.txt")}
	for _, tc := range []struct {
		format, by, want string
	}{
		{"html", "/nokey", "benchcmp: warning: --scale-by /nokey: no benchmark name has the parameter nokey, so the report draws no scaling chart\n"},
		{"text", "/n", "benchcmp: warning: --scale-by /n: only the html report draws scaling charts\n"},
		{"html", "/n", ""},
	} {
		_, errOut, err := compare(t, func(c *CompareConfig) { c.Format, c.ScaleBy = tc.format, tc.by }, files...)
		if err != nil {
			t.Fatalf("--format %s --scale-by %s: %v", tc.format, tc.by, err)
		}
		if got := grepLines(errOut, "--scale-by"); got != tc.want {
			t.Errorf("--format %s --scale-by %s: stderr %q, want %q", tc.format, tc.by, got, tc.want)
		}
	}
	// A parameter the names have, but with one value in each column, or
	// with a value that is not a positive number, draws no line either:
	// the report had no scaling chart, and nothing said so.
	for _, content := range []string{
		"BenchmarkA/n=10 1 5 ns/op\nBenchmarkA/n=10 1 6 ns/op\n",
		"BenchmarkA/n=10 1 5 ns/op\nBenchmarkA/n=big 1 6 ns/op\n",
	} {
		a, b := writeTemp(t, "a.txt", content), writeTemp(t, "b.txt", content)
		out, errOut, err := compare(t, func(c *CompareConfig) { c.Format, c.ScaleBy = "html", "/n" }, a, b)
		if err != nil || strings.Contains(out, `data-chart="scaling"`) {
			t.Fatalf("%q: %v, or a scaling chart drawn", content, err)
		}
		const want = "benchcmp: warning: --scale-by /n: no benchmark has two positive numeric values of n in one column, so the report draws no scaling chart\n"
		if got := grepLines(errOut, "--scale-by"); got != want {
			t.Errorf("%q: stderr %q, want %q", content, got, want)
		}
	}
}

// grepLines returns the lines of s containing sub, each with its newline.
func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestReportShowsFileTextEscaped: a benchmark name, a column label and a
// configuration value holding a control character (an escape sequence, a
// bidirectional override) reach the text and markdown reports and the
// warnings quoted and escaped, as a file path does, never raw; the json
// report keeps them as read.
func TestReportShowsFileTextEscaped(t *testing.T) {
	const name, value, label = "BenchmarkA\x1b[31m", "x\u202ey", "o\x1b[2Jld"
	lines := func(cfg string, base int) string {
		var b strings.Builder
		b.WriteString("env: " + cfg + "\n")
		for i := range 6 {
			fmt.Fprintf(&b, "%s 1 %d ns/op\nBenchmarkGone\u202e 1 %d ns/op\n", name, base+i, base+i)
		}
		return b.String()
	}
	old := writeTemp(t, "old.txt", lines(value, 10))
	new := writeTemp(t, "new.txt", strings.ReplaceAll(lines(value, 20), "BenchmarkGone\u202e 1", "BenchmarkOther 1"))
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\u202e") }
	for _, format := range []string{"text", "markdown"} {
		out, errOut, err := compare(t, func(c *CompareConfig) { c.Format = format }, label+"="+old, "new="+new)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if raw(out) || raw(errOut) {
			t.Errorf("%s: control characters reach the terminal raw:\n%q\n%q", format, out, errOut)
		}
		for _, want := range []string{`A\x1b[31m"`, `"o\x1b[2Jld"`, `"env: x\u202ey"`} {
			if format == "markdown" {
				want = mdEscape(want) // renders as the quoted text
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: want %s in the report:\n%s", format, want, out)
			}
		}
		if want := `"Gone\u202e"`; !strings.Contains(errOut, want) {
			t.Errorf("%s: want %s in the warning:\n%s", format, want, errOut)
		}
	}
	js, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, label+"="+old, "new="+new)
	if err != nil || !strings.Contains(js, `"env: x`+"\u202e"+`y"`) {
		t.Errorf("json (%v): want the configuration value as read:\n%s", err, js)
	}

	// The configuration values that keep two columns apart, in the
	// error of a gate that compared nothing.
	other := writeTemp(t, "other.txt", lines("z\x1b[0m", 20))
	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, old, other)
	if err == nil || raw(err.Error()) || !strings.Contains(err.Error(), `"z\x1b[0m" in`) {
		t.Errorf("err = %q, want the configuration value escaped", err)
	}
}

// TestHTMLShowsFileTextEscaped: the html report shows a benchmark name,
// a column label and a configuration value holding a control character
// or a bidirectional override as the text report does, quoted and
// escaped, in its tables, its list of regressions and its charts' labels:
// html/template and the SVG canvas escape markup, not control
// characters, and a page holding them raw is not valid HTML.
func TestHTMLShowsFileTextEscaped(t *testing.T) {
	const name, value, label = "BenchmarkA\x1b[31m\x01/n=1", "x\u202ey\x7f", "o\x1b[2Jld"
	lines := func(cfg string, base int) string {
		var b strings.Builder
		b.WriteString("env: " + cfg + "\n")
		for i := range 6 {
			fmt.Fprintf(&b, "%s 1 %d ns/op\n", name, base+i)
			fmt.Fprintf(&b, "%s 1 %d ns/op\n", strings.Replace(name, "n=1", "n=10", 1), 10*(base+i))
		}
		return b.String()
	}
	old := writeTemp(t, "old.txt", lines(value, 10))
	new := writeTemp(t, "new.txt", lines(value, 20))
	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "html" }, label+"="+old, "new="+new, "newer="+new)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) || r == '\u202e' {
			t.Fatalf("html: %U raw at byte %d: %q", r, i, out[max(0, i-60):min(len(out), i+60)])
		}
	}
	text := html.UnescapeString(out)
	for _, want := range []string{
		`<td class="name">"A\x1b[31m\x01/n=1"</td>`,
		`<th>"o\x1b[2Jld"</th>`,
		`"env: x\u202ey\x7f"`,
		`sec/op "A\x1b[31m\x01/n=1": new vs "o\x1b[2Jld"`, // the regressions
		`>"A\x1b[31m\x01/n=10"</text>`,                    // a chart's row label
		`>"o\x1b[2Jld"</text>`,                            // a chart's legend
	} {
		if !strings.Contains(text, want) {
			t.Errorf("html: want %s in the report", want)
		}
	}
}

// TestTiedPValue: the exact Mann–Whitney p-value of samples with ties is
// the one the distribution of U gives. benchmath's is 0 for nine samples
// 0 0 0 1 1 1 1 1 1 against 0 0, which makes noise a significant change
// (and, for a higher-is-better unit, a regression that fails the gate);
// counting the C(11, 2) = 55 ways to pick the two new samples, 20 give a
// U at least as far from the middle on the smaller tail's side: p =
// 2·10/55 = 0.364. It is 0 too for 3 4 4 4 4 against 1 2 2 3 3 3, whose
// p is 2·4/462 = 0.017 (the four 4s and one of the four 3s are the only
// picks as far up as the observed one); and without ties, benchmath's value is kept.
func TestTiedPValue(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, vals ...string) string {
		var b strings.Builder
		b.WriteString("goos: linux\nUnit hits better=higher\n")
		for _, v := range vals {
			b.WriteString("BenchmarkH 1 " + v + " hits\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := write("old.txt", "0", "0", "0", "1", "1", "1", "1", "1", "1")
	new := write("new.txt", "0", "0")
	rep, err := BuildReport(nil, func() CompareConfig {
		c := DefaultCompareConfig()
		c.Files = []string{old, new}
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Tables[0].Rows[0].Cells[1]; math.Abs(c.P-20.0/55) > 1e-12 || c.Verdict != Noise {
		t.Errorf("p %v, verdict %q; want p %v and ~", c.P, c.Verdict, 20.0/55)
	}
	if _, _, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, old, new); err != nil {
		t.Errorf("--fail-on regression on noise: %v", err)
	}
	for _, tc := range []struct {
		x1, x2 []float64
		want   float64
	}{
		{[]float64{3, 4, 4, 4, 4}, []float64{1, 2, 2, 3, 3, 3}, 2 * 4.0 / 462},
		{[]float64{1, 1, 1, 1}, []float64{2, 2, 2, 2}, 2.0 / 70},
		{[]float64{1, 2, 3, 4, 5, 6}, []float64{7, 7, 7, 7, 7, 7}, 2.0 / 924},
	} {
		if p, ok := tiedExactP(tc.x1, tc.x2); !ok || math.Abs(p-tc.want) > 1e-15 {
			t.Errorf("tiedExactP(%v, %v) = %v, %v; want %v", tc.x1, tc.x2, p, ok, tc.want)
		}
	}
	if _, ok := tiedExactP([]float64{1, 2, 3}, []float64{4, 5, 6}); ok {
		t.Error("tiedExactP without ties: ok, want benchmath's p-value kept")
	}
}

// TestMarkdownShowsNamesAsWritten: a name holding markdown's backslash or
// brackets reads in the markdown report as written, not as a shorter name
// or a link: `B/a\|b` keeps its backslash (escaped as `\\\|`, not `\\|`,
// which GitHub renders as `B/a|b`), and `B/[x](u)` is no link.
func TestMarkdownShowsNamesAsWritten(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`B/a\|b`, `B/a\\\|b`},
		{`B/[x](https://example.com)`, `B/\[x\](https://example.com)`},
		{`B/~~gone~~`, `B/\~\~gone\~\~`},
		{`B/a\`, `B/a\\`},
		{`B/<i>_*`, `B/&lt;i&gt;\_\*`},
	} {
		if got := mdEscape(tc.in); got != tc.want {
			t.Errorf("mdEscape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	old := writeTemp(t, "md-old.txt", "Benchmark[x](u)/a\\|b 1 10 ns/op\n")
	new := writeTemp(t, "md-new.txt", "Benchmark[x](u)/a\\|b 1 20 ns/op\n")
	md, _, err := compare(t, func(c *CompareConfig) { c.Format = "markdown" }, old, new)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| \\[x\\](u)/a\\\\\\|b |") {
		t.Errorf("markdown: want the name escaped whole:\n%s", md)
	}
}

// TestFileNamedWithEqualsSaysHowToReadIt: an argument holding "=" is
// LABEL=FILE, so a file named index=direct.txt is read as the file
// direct.txt under the label index; when that file does not exist but the
// whole name does, the error says how the argument was read and how to
// give such a file (LABEL=index=direct.txt), which then reads it.
func TestFileNamedWithEqualsSaysHowToReadIt(t *testing.T) {
	old := writeTemp(t, "old.txt", "BenchmarkA 1 10 ns/op\n")
	named := writeTemp(t, "index=direct.txt", "BenchmarkA 1 20 ns/op\n")
	_, _, err := compare(t, nil, old, named)
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "is read as LABEL=FILE") || !strings.Contains(err.Error(), "LABEL="+named) {
		t.Errorf("err %v: want bad input saying the argument is read as LABEL=FILE", err)
	}
	if _, _, err := compare(t, nil, old, "new="+named); err != nil {
		t.Errorf("new=%s: %v", named, err)
	}
}

// TestLostBenchmarkNamesItsConfiguration: a benchmark the baseline has
// under two configurations (two packages of one go test ./... run) and the
// new file under one only is lost under the other, and the warning and the
// gate's error say under which: "new.txt has no result for F" alone names a
// benchmark new.txt has. Under one configuration, the name stands alone.
func TestLostBenchmarkNamesItsConfiguration(t *testing.T) {
	var b strings.Builder
	for _, pkg := range []string{"a", "b"} {
		fmt.Fprintf(&b, "pkg: example.com/%s\n", pkg)
		for i := range 6 {
			fmt.Fprintf(&b, "BenchmarkF 1 %d ns/op\n", 10+i)
		}
	}
	old := writeTemp(t, "old.txt", b.String())
	new := writeTemp(t, "new.txt", strings.SplitAfter(b.String(), "pkg: example.com/b\n")[0])
	_, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, old, new)
	if !errors.Is(err, ErrRegression) || !strings.Contains(err.Error(), "have no result to compare with (F (pkg: example.com/b))") {
		t.Errorf("err %v: want the gate to name F with its pkg", err)
	}
	if !strings.Contains(errOut, "has no result for 1 benchmark(s) of "+old+": F (pkg: example.com/b)\n") {
		t.Errorf("stderr %q: want the warning to name F with its pkg", errOut)
	}
	one := writeTemp(t, "one.txt", "BenchmarkG 1 1 ns/op\n"+strings.SplitAfter(b.String(), "pkg: example.com/b\n")[0])
	if _, errOut, _ := compare(t, nil, one, new); !strings.Contains(errOut, "of "+one+": G\n") {
		t.Errorf("stderr %q: want G named alone", errOut)
	}
}

// TestNothingComparedNamesAnEmptyColumn: with --col /n, results whose names
// have no /n fall in a column with an empty label, which the warning shows
// as "", not as nothing after "in".
func TestNothingComparedNamesAnEmptyColumn(t *testing.T) {
	a := writeTemp(t, "a.txt", "BenchmarkA/n=10 1 10 ns/op\nBenchmarkB 1 10 ns/op\n")
	_, errOut, err := compare(t, func(c *CompareConfig) { c.Col = "/n" }, a)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, `: A in 10; B in ""`+"\n") {
		t.Errorf("stderr %q: want the empty column shown as \"\"", errOut)
	}
}

// TestSameButLastDigits: the golden comparison lets numbers at full
// precision differ in their last digits, and nothing else.
func TestSameButLastDigits(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"fit 0.3000604961134501 r2 1", "fit 0.30006049611345004 r2 1", true},
		{"exponent,1,0.9999999999999996", "exponent,1.0000000000000004,1.0000000000000002", true},
		{"-8.294693526841666e-05,x", "-8.294693526841653e-05,x", true},
		{"fit 0.3000604961134501", "fit 0.3000604991134501", false},   // 1e-8 relative
		{"fit 0.30006", "fit 0.30007", false},                         // a rounded cell
		{"n=5 0.3000604961134501", "n=6 0.3000604961134501", false},   // a count
		{"fit 0.3000604961134501", "fits 0.3000604961134501", false},  // the text
		{"fit 0.3000604961134501 1", "fit 0.3000604961134501", false}, // a number more
		{"0.3000604961134501", "0.3000614961134501", false},           // 3e-6 relative
		{"1.0000000000000004", "1.5", false},
	} {
		if got := sameButLastDigits([]byte(tc.got), []byte(tc.want)); got != tc.same {
			t.Errorf("sameButLastDigits(%q, %q) = %v, want %v", tc.got, tc.want, got, tc.same)
		}
	}
}

// TestThresholdOfAUnitHoldingEquals: --threshold UNIT=PCT is cut at its
// last "=", since PCT, a number, holds none while a unit may (a result
// line's unit is any word). Cut at the first, `k=v/op=20` read as the unit
// k with PCT "v/op=20" and was refused: such a unit could not be given a
// threshold of its own.
func TestThresholdOfAUnitHoldingEquals(t *testing.T) {
	var old, new strings.Builder
	for _, f := range []*strings.Builder{&old, &new} {
		f.WriteString("Unit k=v/op better=lower\nUnit n=1 better=lower\n")
	}
	for i := range 8 {
		fmt.Fprintf(&old, "BenchmarkA 1 %d k=v/op %d n=1\n", 100+i, 100+i)
		fmt.Fprintf(&new, "BenchmarkA 1 %d k=v/op %d n=1\n", 110+i, 110+i)
	}
	files := []string{writeTemp(t, "old.txt", old.String()), writeTemp(t, "new.txt", new.String())}
	for _, tc := range []struct {
		thresholds []string
		err        error
		want       string
	}{
		{[]string{"k=v/op=20", "n=1=20"}, nil, ""},
		{[]string{"k=v/op=20%", "n=1=5"}, ErrRegression, "1 significant change(s) past their threshold"},
		{[]string{"k=v/op=5", "*=20"}, ErrRegression, "1 significant change(s) past their threshold"},
		{[]string{"k=v=20"}, ErrUsage, `--threshold "k=v=20": no result file has unit k=v`},
		{[]string{"k=v/op="}, ErrUsage, `--threshold "k=v/op=": PCT must be a finite number`},
	} {
		_, _, err := compare(t, func(c *CompareConfig) {
			c.Thresholds = tc.thresholds
			c.FailOn = "regression"
		}, files...)
		if tc.err == nil && err != nil || !errors.Is(err, tc.err) || tc.want != "" && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %v with %q", tc.thresholds, err, tc.err, tc.want)
		}
	}
}

// TestNegativeZeroIsShownAsZero: a value written -0 ("BenchmarkA 1 -0
// errors") is 0 in every format. The reports showed its sign: -0.000 as
// the center of an exact unit in the text, markdown and html tables, and
// -0 as a sample, an interval bound or a center in csv and json.
func TestNegativeZeroIsShownAsZero(t *testing.T) {
	var old, new strings.Builder
	for _, f := range []*strings.Builder{&old, &new} {
		f.WriteString("Unit errs assume=exact\nUnit x better=lower\n")
	}
	for i := range 6 {
		fmt.Fprintf(&old, "BenchmarkA 1 -0 errs -0 x\n")
		fmt.Fprintf(&new, "BenchmarkA 1 -0 errs %d x\n", i%2)
	}
	files := []string{writeTemp(t, "old.txt", old.String()), writeTemp(t, "new.txt", new.String())}
	// A -0 on its own or before zeros ("-0.000"), not the 0 of an
	// exponent ("1e-09") or a negative number ("-0.5").
	negZero := regexp.MustCompile(`(^|[^0-9eE])-0(\.0*)?([^0-9.]|$)`)
	for _, format := range Formats {
		out, _, err := compare(t, func(c *CompareConfig) { c.Format = format }, files...)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for i, line := range strings.Split(out, "\n") {
			if negZero.MatchString(line) {
				t.Errorf("%s: line %d shows a negative zero: %s", format, i+1, line)
			}
		}
	}
	// Scaling reads the same way: a row of -0 is one of zeros.
	var sc bytes.Buffer
	scale := writeTemp(t, "scale.txt", "BenchmarkS/n=1 1 -0 x\nBenchmarkS/n=2 1 -0 x\nBenchmarkS/n=4 1 -0 x\n")
	for _, format := range []string{"text", "csv", "json"} {
		sc.Reset()
		cfg := DefaultScalingConfig()
		cfg.Files, cfg.By, cfg.Format = []string{scale}, "/n", format
		if err := Scaling(&sc, io.Discard, cfg); err != nil {
			t.Fatalf("scaling %s: %v", format, err)
		}
		if negZero.MatchString(sc.String()) {
			t.Errorf("scaling %s shows a negative zero:\n%s", format, sc.String())
		}
	}
}

// TestUnitTheBaselineLacksIsNotGated: with three columns or more, a unit
// the baseline has no result in (only the newer files ran with
// -benchmem) is not compared at all. Its table was built of the columns
// that have it, the first of them taken for the baseline, as benchstat
// builds it: new2's B/op was compared with new1's, and a change between
// the two newer runs failed a gate against old with exit 1. The table
// now keeps the baseline as its first column, empty, every cell "no
// baseline", and the warning on the missing unit says it is not compared.
func TestUnitTheBaselineLacksIsNotGated(t *testing.T) {
	var old, new1, new2 strings.Builder
	for i := range 8 {
		fmt.Fprintf(&old, "BenchmarkA 1 %d ns/op\n", 100+i)
		fmt.Fprintf(&new1, "BenchmarkA 1 %d ns/op 100 B/op\n", 100+i)
		fmt.Fprintf(&new2, "BenchmarkA 1 %d ns/op %d B/op\n", 100+i, 200+i)
	}
	files := []string{
		"old=" + writeTemp(t, "old.txt", old.String()),
		"new1=" + writeTemp(t, "new1.txt", new1.String()),
		"new2=" + writeTemp(t, "new2.txt", new2.String()),
	}
	_, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, files...)
	if err != nil {
		t.Errorf("gate: %v, want it passed: B/op is in no baseline\n%s", err, errOut)
	}
	if want := "old has no B/op result for 1 benchmark(s) of new2 that it has other results for (no baseline: not compared, nor gated, in B/op): A"; !strings.Contains(errOut, want) {
		t.Errorf("warnings %q lack %q", errOut, want)
	}
	cfg := DefaultCompareConfig()
	cfg.Files = files
	rep, err := BuildReport(io.Discard, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tb := range rep.Tables {
		if tb.Unit != "B/op" {
			continue
		}
		found = true
		if !slices.Equal(tb.Columns, []string{"old", "new1", "new2"}) {
			t.Errorf("B/op columns %q, want old, new1, new2", tb.Columns)
		}
		for _, r := range tb.Rows {
			if len(r.Cells) != 3 || r.Cells[0] != nil {
				t.Fatalf("row %s: cells %v, want 3, the baseline's empty", r.Name, r.Cells)
			}
			for j, c := range r.Cells[1:] {
				if c == nil || c.Compared || c.Verdict != Missing {
					t.Errorf("row %s, %s: %+v, want a cell not compared, verdict %q", r.Name, tb.Columns[j+1], c, Missing)
				}
			}
		}
	}
	if !found {
		t.Fatal("no B/op table")
	}
	// For text, every format: the baseline's column stands there empty.
	out, _, err := compare(t, nil, files...)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^B/op: .*\nname +old +new1 +delta +p +verdict +new2 .*\nA +- +100\.0 ±0% +no baseline +203\.5 ±2% +no baseline`).MatchString(out) {
		t.Errorf("text report: the B/op table lacks its empty baseline column or a cell's verdict no baseline:\n%s", out)
	}
	// Two files alike: the table of the unit only the new file has keeps
	// the baseline's empty column, its cell "no baseline", and CSV names
	// old its baseline, where the table was the new file's alone, named
	// its own baseline with no verdict.
	two := files[:2]
	out, _, err = compare(t, nil, two...)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^B/op: .*\nname +old +new1 +delta +p +verdict *\nA +- +100\.0 ±0% +no baseline`).MatchString(out) {
		t.Errorf("text report of two files: the B/op table lacks its empty baseline column or its verdict no baseline:\n%s", out)
	}
	csvOut, _, err := compare(t, func(c *CompareConfig) { c.Format = "csv" }, two...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "B/op,,A,new1,8,100,100,100,0.9609375,old,,,0.05,0,lower,no baseline,\n"; !strings.Contains(csvOut, want) {
		t.Errorf("CSV of two files lacks %q:\n%s", want, csvOut)
	}
	// Newer files of another configuration share no table with the
	// baseline: nothing is compared, and the gate says why, where new2
	// was compared with new1 and the gate passed.
	procs := func(name, s string) string { return writeTemp(t, name, "gomaxprocs: 4\n"+s) }
	other := []string{files[0], "new1=" + procs("new1.txt", new1.String()), "new2=" + procs("new2.txt", new2.String())}
	_, _, err = compare(t, func(c *CompareConfig) { c.FailOn = "regression" }, other...)
	if want := "compared nothing, so it cannot pass: the columns differ in configuration: gomaxprocs [none in old; 4 in new1; 4 in new2]"; !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), want) {
		t.Errorf("gate on newer files of another gomaxprocs: %v, want ErrInput with %q", err, want)
	}
}

// TestJSONOfBytesNotUTF8: the README says the csv and json reports keep a
// name and a label as read, but JSON text is UTF-8: a byte that is not
// UTF-8 (a Latin-1 é, 0xe9) is U+FFFD in the json report (escaped,
// \ufffd), which stays
// valid JSON, and raw in the csv one.
func TestJSONOfBytesNotUTF8(t *testing.T) {
	var old, new strings.Builder
	for i := range 6 {
		fmt.Fprintf(&old, "BenchmarkL\xe9/n=1 1 %d ns/op\n", 100+i)
		fmt.Fprintf(&new, "BenchmarkL\xe9/n=1 1 %d ns/op\n", 100+i)
	}
	o, n := writeTemp(t, "o.txt", old.String()), writeTemp(t, "n.txt", new.String())
	js, _, err := compare(t, func(c *CompareConfig) { c.Format = "json" }, o, "l\xe9="+n)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(js)) || !strings.Contains(js, `"L\ufffd/n=1"`) || !strings.Contains(js, `"l\ufffd"`) || strings.Contains(js, "\xe9") {
		t.Errorf("json report: want valid JSON with U+FFFD for the byte 0xe9 in the name and the label:\n%s", js)
	}
	csv, _, err := compare(t, func(c *CompareConfig) { c.Format = "csv" }, o, "l\xe9="+n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv, "L\xe9/n=1") {
		t.Errorf("csv report: want the name as read:\n%s", csv)
	}
}
