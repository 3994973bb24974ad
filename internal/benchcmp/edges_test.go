package benchcmp

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestHTMLRatioCaptionSaysWhy: the ratio chart's caption gives each row
// it leaves out with its reason. A ratio below 0 (medians of opposite
// signs) was explained as a median of 0 against one that is not, which
// neither median was.
func TestHTMLRatioCaptionSaysWhy(t *testing.T) {
	var o, n strings.Builder
	for i := range 6 {
		fmt.Fprintf(&o, "BenchmarkA/k=1 1 -%d x-score\nBenchmarkZ/k=1 1 0 x-score\n", 10+i)
		fmt.Fprintf(&n, "BenchmarkA/k=1 1 %d x-score\nBenchmarkZ/k=1 1 %d x-score\n", 10+i, 3+i)
	}
	old, new := writeTemp(t, "old.txt", o.String()), writeTemp(t, "new.txt", n.String())
	out, _, err := compare(t, func(c *CompareConfig) { c.Format = "html" }, old, new)
	if err != nil {
		t.Fatal(err)
	}
	const want = "Not drawn, 2 row(s) whose ratio is not a finite positive number (the table gives their delta): " +
		"A/k=1 (medians of opposite signs), Z/k=1 (a median of 0 against one that is not, as a count going from none to some)."
	if !strings.Contains(out, want) {
		i := strings.Index(out, "Not drawn")
		t.Errorf("caption:\n%s\nwant:\n%s", out[max(i, 0):min(max(i, 0)+400, len(out))], want)
	}
}

// TestScaleByOverNonPositiveMediansSaysSo: a --scale-by whose parameter
// has the values a line needs, at medians of 0 or less, draws nothing; the
// warning said the parameter had no two positive values, which it had.
func TestScaleByOverNonPositiveMediansSaysSo(t *testing.T) {
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, "BenchmarkA/n=10 1 -%d x-score\nBenchmarkA/n=20 1 -%d x-score\n", 10+i, 20+i)
	}
	a, c := writeTemp(t, "a.txt", b.String()), writeTemp(t, "b.txt", b.String())
	out, errOut, err := compare(t, func(c *CompareConfig) { c.Format, c.ScaleBy = "html", "/n" }, a, c)
	if err != nil || strings.Contains(out, `data-chart="scaling"`) {
		t.Fatalf("%v, or a scaling chart drawn", err)
	}
	const want = "benchcmp: warning: --scale-by /n: benchmarks have two positive values of n in one column, but none has a median above 0 at two of them (log axes cannot draw a median of 0 or less), so the report draws no scaling chart\n"
	if got := grepLines(errOut, "--scale-by"); got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

// TestScalingNegativeParameterIsNotPositive: benchfmt reads "n=-5" at the
// end of a name as "n=" with a GOMAXPROCS suffix -5, and scaling said the
// name had no /n; it says the value -5 is not positive.
func TestScalingNegativeParameterIsNotPositive(t *testing.T) {
	file := writeTemp(t, "neg.txt", "BenchmarkS/n=10 1 6 ns/op\nBenchmarkS/n=-5 1 5 ns/op\n")
	_, err := scaling(t, func(c *ScalingConfig) { c.By = "/n" }, file)
	if !errors.Is(err, ErrInput) || !strings.HasSuffix(err.Error(), `neg.txt:2: S/n=-5 /n="-5" is not a positive number`) {
		t.Errorf("err %v, want the value -5 named as not positive at neg.txt:2", err)
	}
	// A name without the parameter still says so.
	file = writeTemp(t, "none.txt", "BenchmarkS/m=-5 1 5 ns/op\n")
	if _, err := scaling(t, func(c *ScalingConfig) { c.By = "/n" }, file); err == nil || !strings.HasSuffix(err.Error(), "S/m=-5 has no /n in its name") {
		t.Errorf("err %v, want the name without /n", err)
	}
}

// TestScalingJSONWithoutIntervalIsNull: a fit of two samples has no
// interval; JSON gave its lo and hi as 0, an interval [0, 0] a reader
// could take for one, and gives null, as a baseline cell's delta_pct.
func TestScalingJSONWithoutIntervalIsNull(t *testing.T) {
	file := writeTemp(t, "two.txt", "BenchmarkS/n=5 1 5 ns/op\nBenchmarkS/n=10 1 6 ns/op\n")
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By, cfg.Format = []string{file}, "/n", "json"
	var out bytes.Buffer
	if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"has_interval": false`, `"lo": null`, `"hi": null`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in:\n%s", want, out.String())
		}
	}
}

// TestRenamedOnlyUnitIsNamed: a benchmark whose only unit was renamed
// between the files ran on both sides and is compared in no unit: no lost
// benchmark (the gate passes), but the warning says so and names each
// side's unit, once, where it said each file had "other results" for it.
func TestRenamedOnlyUnitIsNamed(t *testing.T) {
	var o, n strings.Builder
	o.WriteString("Unit ns/update better=lower\n")
	n.WriteString("Unit ns/upd better=lower\n")
	for i := range 6 {
		fmt.Fprintf(&o, "BenchmarkB/size=1 1 %d ns/update\nBenchmarkC 1 %d ns/op\n", 10+i, 10+i)
		fmt.Fprintf(&n, "BenchmarkB/size=1 1 %d ns/upd\nBenchmarkC 1 %d ns/op\n", 10+i, 10+i)
	}
	old, new := writeTemp(t, "old.txt", o.String()), writeTemp(t, "new.txt", n.String())
	for _, failOn := range []string{"", "regression"} {
		_, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = failOn }, old, new)
		if err != nil {
			t.Errorf("--fail-on %q: %v (exit %d), want exit 0", failOn, err, ExitCode(err))
		}
		const want = "benchcmp: warning: 1 benchmark(s) that old.txt and new.txt both ran are compared in no unit, their units differing (a unit renamed?): sec/update in old.txt; sec/upd in new.txt: B/size=1\n"
		got := strings.ReplaceAll(strings.ReplaceAll(grepLines(errOut, "warning"), old, "old.txt"), new, "new.txt")
		if got != want {
			t.Errorf("--fail-on %q: stderr %q, want %q", failOn, got, want)
		}
	}
}

// TestScalingRowNotFittedCountsItsPoints: a row holding a value of 0 or
// less cannot be fitted on log-log axes; it said so, but its points and
// samples counted only its positive values, so a unit always 0 showed 0
// points and one 0 now and then showed 2 of its 3, with samples "fitted"
// where nothing was. Points are the row's parameter values, and samples
// the measurements fitted: none.
func TestScalingRowNotFittedCountsItsPoints(t *testing.T) {
	var b strings.Builder
	for i, n := range []int{1, 2, 4} {
		fmt.Fprintf(&b, "BenchmarkS/n=%d 1 0 errors %d hold-gap %d ns/op\n", n, i*5, 10*n)
	}
	file := writeTemp(t, "s.txt", b.String())
	cfg := DefaultScalingConfig()
	cfg.Files, cfg.By, cfg.Format = []string{file}, "/n", "json"
	var out bytes.Buffer
	if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
		t.Fatal(err)
	}
	var fits []Fit
	if err := json.Unmarshal(out.Bytes(), &fits); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	seen := 0
	for _, f := range fits {
		switch f.Unit {
		case "errors", "hold-gap":
			seen++
			if f.Points != 3 || f.Samples != 0 || !strings.Contains(f.Note, "cannot be fitted on a log scale") {
				t.Errorf("%s: points %d, samples %d, note %q; want 3 points, 0 samples fitted and the note", f.Unit, f.Points, f.Samples, f.Note)
			}
		case "sec/op":
			if f.Points != 3 || f.Samples != 3 {
				t.Errorf("sec/op: points %d, samples %d, want 3 and 3", f.Points, f.Samples)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d rows of errors and hold-gap, want 2:\n%s", seen, out.String())
	}
}

// TestScalingRowNotFittedHasNoExponent: a row not fitted (a value of 0 or
// less, or one value of the parameter) was written to CSV and JSON with an
// exponent of 0 and an R² of 0, which read as a flat fit, where text
// leaves both blank. It has neither: null in JSON, empty in CSV. A row
// fitted keeps its numbers.
func TestScalingRowNotFittedHasNoExponent(t *testing.T) {
	var b strings.Builder
	for _, n := range []int{1, 2, 4} {
		fmt.Fprintf(&b, "BenchmarkS/n=%d 1 0 errors %d ns/op\n", n, 10*n)
	}
	b.WriteString("BenchmarkOne/n=8 1 5 ns/op\n")
	file := writeTemp(t, "s.txt", b.String())
	notFitted := map[string]bool{"errors S": true, "sec/op One": true}
	for _, format := range []string{"json", "csv"} {
		cfg := DefaultScalingConfig()
		cfg.Files, cfg.By, cfg.Format = []string{file}, "/n", format
		var out bytes.Buffer
		if err := Scaling(&out, &bytes.Buffer{}, cfg); err != nil {
			t.Fatal(err)
		}
		seen := 0
		switch format {
		case "json":
			var fits []map[string]any
			if err := json.Unmarshal(out.Bytes(), &fits); err != nil {
				t.Fatalf("%v:\n%s", err, out.String())
			}
			for _, f := range fits {
				key := fmt.Sprintf("%v %v", f["unit"], f["name"])
				if !notFitted[key] {
					if f["exponent"] == nil || f["r2"] == nil {
						t.Errorf("json: %s: a fitted row without exponent or r2: %v", key, f)
					}
					continue
				}
				seen++
				if f["exponent"] != nil || f["r2"] != nil {
					t.Errorf("json: %s (%v): exponent %v, r2 %v; want null, null", key, f["note"], f["exponent"], f["r2"])
				}
			}
		case "csv":
			recs, err := csv.NewReader(&out).ReadAll()
			if err != nil || len(recs) < 2 {
				t.Fatalf("%v:\n%s", err, out.String())
			}
			for _, r := range recs[1:] { // unit,config,name,points,samples,exponent,lo,hi,r2,grows,note
				key := r[0] + " " + r[2]
				if !notFitted[key] {
					if r[5] == "" || r[8] == "" {
						t.Errorf("csv: %s: a fitted row without exponent or r2: %q", key, r)
					}
					continue
				}
				seen++
				if r[5] != "" || r[8] != "" {
					t.Errorf("csv: %s (%s): exponent %q, r2 %q; want both empty", key, r[10], r[5], r[8])
				}
			}
		}
		if seen != len(notFitted) {
			t.Errorf("%s: %d rows not fitted, want %d:\n%s", format, seen, len(notFitted), out.String())
		}
	}
}

// TestScalingWarnsWhenTheFilterLeavesNothing: a --filter that leaves no
// result (a unit mistyped) draws an empty table, as a comparison's does,
// and says so on standard error, as a comparison does, where it said
// nothing and a script reading the table for flagged rows passed. A filter
// that leaves a result warns of nothing.
func TestScalingWarnsWhenTheFilterLeavesNothing(t *testing.T) {
	file := writeTemp(t, "g.txt", "BenchmarkX/n=10 1 100 ns/op\nBenchmarkX/n=100 1 1000 ns/op\n")
	for _, tc := range []struct{ filter, want string }{
		{".unit:ns/opp", `benchcmp: warning: nothing was fitted: no result is left after --filter ".unit:ns/opp": there is nothing to fit` + "\n"},
		{".unit:ns/op", ""},
		{"*", ""},
	} {
		cfg := DefaultScalingConfig()
		cfg.Files, cfg.By, cfg.Filter, cfg.Format = []string{file}, "/n", tc.filter, "json"
		var out, errOut bytes.Buffer
		if err := Scaling(&out, &errOut, cfg); err != nil {
			t.Fatalf("--filter %s: %v", tc.filter, err)
		}
		if errOut.String() != tc.want {
			t.Errorf("--filter %s: stderr %q, want %q", tc.filter, errOut.String(), tc.want)
		}
		var fits []Fit
		if err := json.Unmarshal(out.Bytes(), &fits); err != nil || (len(fits) == 0) != (tc.want != "") {
			t.Errorf("--filter %s: %d fits (%v), stdout %q", tc.filter, len(fits), err, out.String())
		}
	}
}

// TestHugeAndTinyValuesInOneTable: a unit whose rows hold values as large
// as ±1e300 and as small as 1e-300 was scaled to fit the smallest, so the
// largest read "+Infn" and "-Infn" though every value was finite. Such a
// table is written in powers of ten of its largest value.
func TestHugeAndTinyValuesInOneTable(t *testing.T) {
	old := writeTemp(t, "old.txt", "BenchmarkA 1 1e300 x\nBenchmarkA 1 1e300 x\nBenchmarkB 1 1e-300 x\nBenchmarkB 1 1e-300 x\n")
	new := writeTemp(t, "new.txt", "BenchmarkA 1 -1e300 x\nBenchmarkA 1 -1e300 x\nBenchmarkB 1 2e-300 x\nBenchmarkB 1 2e-300 x\n")
	out, _, err := compare(t, nil, old, new)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Inf") || !strings.Contains(out, "1.000e300") || !strings.Contains(out, "-1.000e300") {
		t.Errorf("want the rows in powers of ten, no Inf:\n%s", out)
	}
	// So is one whose values span 1e20 to 1e-20: thirty digits before.
	wide := writeTemp(t, "wide.txt", "BenchmarkA 1 1e20 x\nBenchmarkA 1 1e20 x\nBenchmarkB 1 1e-20 x\nBenchmarkB 1 1e-20 x\n")
	if out, _, err := compare(t, nil, wide, wide); err != nil || !strings.Contains(out, "1.000e20") || strings.Contains(out, "99999") {
		t.Errorf("1e20 beside 1e-20: %v\n%s", err, out)
	}
	// Values a prefix can hold keep it.
	small := writeTemp(t, "small.txt", "BenchmarkA 1 2000 x\nBenchmarkA 1 2000 x\n")
	if out, _, err := compare(t, nil, small, small); err != nil || !strings.Contains(out, "2.000k") {
		t.Errorf("2000 x: %v\n%s", err, out)
	}
}
