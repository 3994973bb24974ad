package benchcmp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// Sentinel errors. ExitCode maps them to the command's exit status.
var (
	// ErrUsage is wrapped by errors in the command line: flags, their
	// values, the number of files.
	ErrUsage = errors.New("benchcmp: bad usage")
	// ErrInput is wrapped by errors in an input file; the message names the
	// file and, where there is one, the line.
	ErrInput = errors.New("benchcmp: bad input")
	// ErrRegression is returned by Compare with FailOn set when some change
	// is a regression (invariant C2).
	ErrRegression = errors.New("benchcmp: regression")
)

// ExitCode returns the exit status for an error returned by this package:
// 0 for nil, 1 for ErrRegression, 2 for anything else (bad usage or input, or
// an output that could not be written).
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRegression):
		return 1
	default:
		return 2
	}
}

// Formats are the values CompareConfig.Format accepts.
var Formats = []string{"text", "markdown", "csv", "json", "html"}

// ignoredConfig are the configuration keys that do not split tables unless
// CompareConfig.Strict is set (invariant C4).
const ignoredConfig = "commit,cpu,go"

// CompareConfig configures Compare. DefaultCompareConfig returns the
// defaults the command uses.
type CompareConfig struct {
	// Files are the result files, in column order when Col is ".file". A
	// path may be given as LABEL=PATH to name its column LABEL.
	Files []string
	// Col is the benchproc projection whose values are the columns; the
	// first value is the baseline every other column is compared with.
	Col string
	// Row is the projection whose values are the rows.
	Row string
	// Filter is a benchproc filter; results it rejects are not read.
	Filter string
	// Ignore lists keys (a benchproc projection) whose values may differ
	// within a cell, on top of commit, cpu and go.
	Ignore string
	// Strict makes commit, cpu and go split tables like any other
	// configuration key.
	Strict bool
	// Alpha is the significance level, in (0, 1).
	Alpha float64
	// Confidence is the level of the intervals around each center, in (0, 1).
	Confidence float64
	// Thresholds are UNIT=PCT pairs: a significant change in UNIT is a
	// regression only past PCT percent. UNIT is as written in the files
	// (ns/op) or as benchfmt tidies it (sec/op); "*" sets the default for
	// every unit without its own, which is otherwise 0.
	Thresholds []string
	// FailOn is "" or "regression": with "regression", Compare returns
	// ErrRegression when some change is a regression.
	FailOn string
	// Format is one of Formats.
	Format string
	// ScaleBy is the name parameter (as /PARAM) the HTML report's scaling
	// charts use; "" picks the numeric parameter with the most values.
	ScaleBy string
}

// DefaultCompareConfig returns the configuration of `benchcmp FILE...`
// without flags.
func DefaultCompareConfig() CompareConfig {
	return CompareConfig{
		Col:        ".file",
		Row:        ".fullname",
		Filter:     "*",
		Alpha:      0.05,
		Confidence: 0.95,
		Format:     "text",
	}
}

// Compare reads cfg.Files, compares every column with the first and writes
// the report to out in cfg.Format. Warnings that are not part of the report
// (results a filter rejected with a reason) go to errOut. It returns an error
// wrapping ErrUsage or ErrInput for bad usage or input, and ErrRegression
// when cfg.FailOn is "regression" and some change is a regression; the
// report is written in that case too.
func Compare(out, errOut io.Writer, cfg CompareConfig) error {
	rep, err := BuildReport(errOut, cfg)
	if err != nil {
		return err
	}
	if err := writeReport(out, rep, cfg.Format); err != nil {
		return err
	}
	if cfg.FailOn == "regression" {
		if n := rep.Regressions(); n > 0 {
			return fmt.Errorf("%w: %d significant change(s) past their threshold in the bad direction", ErrRegression, n)
		}
	}
	return nil
}

// BuildReport reads cfg.Files and computes the report Compare writes.
// Warnings go to errOut; nil discards them.
func BuildReport(errOut io.Writer, cfg CompareConfig) (*Report, error) {
	if errOut == nil {
		errOut = io.Discard
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	thresholds, err := parseThresholds(cfg.Thresholds)
	if err != nil {
		return nil, err
	}
	filter, err := benchproc.NewFilter(cfg.Filter)
	if err != nil {
		return nil, fmt.Errorf("%w: --filter: %v", ErrUsage, err)
	}
	var parser benchproc.ProjectionParser
	tableBy, _, err := parser.ParseWithUnit(".config", filter)
	if err != nil {
		return nil, fmt.Errorf("%w: table projection: %v", ErrUsage, err)
	}
	rowBy, err := parser.Parse(cfg.Row, filter)
	if err != nil {
		return nil, fmt.Errorf("%w: --row: %v", ErrUsage, err)
	}
	colBy, err := parser.Parse(cfg.Col, filter)
	if err != nil {
		return nil, fmt.Errorf("%w: --col: %v", ErrUsage, err)
	}
	ignore := cfg.Ignore
	if !cfg.Strict {
		ignore = strings.TrimLeft(ignore+","+ignoredConfig, ",")
	}
	if _, err := parser.Parse(ignore, filter); err != nil {
		return nil, fmt.Errorf("%w: --ignore: %v", ErrUsage, err)
	}
	residue := parser.Residue()

	b := newBuilder(tableBy, rowBy, colBy, residue)
	units, err := readResults(cfg.Files, filter, errOut, b.add)
	if err != nil {
		return nil, err
	}
	dirs, err := directions(units)
	if err != nil {
		return nil, err
	}
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = cfg.Alpha
	rep := b.report(reportOpts{
		alpha:      cfg.Alpha,
		confidence: cfg.Confidence,
		thresholds: &thr,
		units:      units,
		directions: dirs,
		threshold:  thresholds,
	})
	rep.ScaleBy = cfg.ScaleBy
	return rep, nil
}

func (cfg *CompareConfig) validate() error {
	if len(cfg.Files) == 0 {
		return fmt.Errorf("%w: no result files given", ErrUsage)
	}
	if cfg.Col == ".file" && len(cfg.Files) < 2 {
		return fmt.Errorf("%w: comparing files needs at least two (OLD NEW); to compare columns of one file, use --col", ErrUsage)
	}
	if !(cfg.Alpha > 0 && cfg.Alpha < 1) {
		return fmt.Errorf("%w: --alpha %v: must be in (0, 1)", ErrUsage, cfg.Alpha)
	}
	if !(cfg.Confidence > 0 && cfg.Confidence < 1) {
		return fmt.Errorf("%w: --confidence %v: must be in (0, 1)", ErrUsage, cfg.Confidence)
	}
	if cfg.ScaleBy != "" && (!strings.HasPrefix(cfg.ScaleBy, "/") || len(cfg.ScaleBy) < 2) {
		return fmt.Errorf("%w: --scale-by %q: want a name parameter as /PARAM", ErrUsage, cfg.ScaleBy)
	}
	switch cfg.FailOn {
	case "", "regression":
	default:
		return fmt.Errorf("%w: --fail-on %q: the only value is regression", ErrUsage, cfg.FailOn)
	}
	if !slices.Contains(Formats, cfg.Format) {
		return fmt.Errorf("%w: --format %q: must be one of %s", ErrUsage, cfg.Format, strings.Join(Formats, ", "))
	}
	return nil
}

// thresholdSet maps tidied units to thresholds in percent.
type thresholdSet struct {
	byUnit map[string]float64
	def    float64
}

func (t thresholdSet) of(unit string) float64 {
	if p, ok := t.byUnit[unit]; ok {
		return p
	}
	return t.def
}

// parseThresholds parses UNIT=PCT pairs. Units are stored tidied, so
// "ns/op=5" and "sec/op=5" name the same unit.
func parseThresholds(specs []string) (thresholdSet, error) {
	t := thresholdSet{byUnit: map[string]float64{}}
	for _, s := range specs {
		unit, pct, ok := strings.Cut(s, "=")
		unit = strings.TrimSpace(unit)
		if !ok || unit == "" {
			return t, fmt.Errorf("%w: --threshold %q: want UNIT=PCT, as in ns/op=5", ErrUsage, s)
		}
		p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
		if err != nil || p < 0 || p != p {
			return t, fmt.Errorf("%w: --threshold %q: PCT must be a number >= 0", ErrUsage, s)
		}
		if unit == "*" {
			t.def = p
			continue
		}
		_, tidy := benchunit.Tidy(1, unit)
		t.byUnit[tidy] = p
	}
	return t, nil
}

// readResults reads every file in order and hands each result the filter
// keeps to add. It returns the unit metadata of all files. A syntax error,
// a missing file or a file without results is an error wrapping ErrInput
// (invariant C3).
func readResults(paths []string, filter *benchproc.Filter, errOut io.Writer, add func(*benchfmt.Result)) (benchfmt.UnitMetadataMap, error) {
	counts := make(map[string]int, len(paths))
	var files []string
	for _, p := range paths {
		path := p
		if _, after, ok := strings.Cut(p, "="); ok {
			path = after
		}
		if path == "" {
			return nil, fmt.Errorf("%w: empty file name in %q", ErrUsage, p)
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInput, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%w: %s: is a directory, not a result file", ErrInput, path)
		}
		files = append(files, path)
		counts[path] = 0
	}
	fs := benchfmt.Files{Paths: paths, AllowLabels: true}
	for fs.Scan() {
		switch rec := fs.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("%w: %s", ErrInput, rec.Error())
		case *benchfmt.Result:
			name, line := rec.Pos()
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					// The statistics of a sample with NaN or ±Inf never
					// finish: refuse the value, as a syntax error.
					return nil, fmt.Errorf("%w: %s:%d: %s value %v is not a finite number", ErrInput, name, line, v.Unit, v.Value)
				}
			}
			counts[name]++
			ok, err := filter.Apply(rec)
			if !ok {
				if err != nil {
					fmt.Fprintln(errOut, err)
				}
				continue
			}
			add(rec)
		}
	}
	if err := fs.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	for _, f := range files {
		if counts[f] == 0 {
			return nil, fmt.Errorf("%w: %s: no benchmark results (lines starting with Benchmark)", ErrInput, f)
		}
	}
	return fs.Units(), nil
}

// Direction says which way a unit improves.
type Direction int

// Directions.
const (
	// Unknown: no better= metadata and not a known Go unit.
	Unknown Direction = iota
	// Lower values are better.
	Lower
	// Higher values are better.
	Higher
)

// String returns "lower", "higher" or "unknown".
func (d Direction) String() string {
	switch d {
	case Lower:
		return "lower"
	case Higher:
		return "higher"
	default:
		return "unknown"
	}
}

// MarshalText returns String.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// directions reads better= metadata (invariant C1). A value other than
// lower or higher is an error naming the file and line.
func directions(units benchfmt.UnitMetadataMap) (map[string]Direction, error) {
	dirs := map[string]Direction{}
	for k, m := range units {
		if k.Key != "better" {
			continue
		}
		switch m.Value {
		case "lower":
			dirs[k.Unit] = Lower
		case "higher":
			dirs[k.Unit] = Higher
		default:
			f, line := m.Pos()
			return nil, fmt.Errorf("%w: %s:%d: Unit %s better=%s: better must be lower or higher", ErrInput, f, line, m.OrigUnit, m.Value)
		}
	}
	return dirs, nil
}

// defaultDirection is the direction of the units `go test -bench` writes,
// which carry no metadata.
func defaultDirection(unit string) Direction {
	switch unit {
	case "sec/op", "B/op", "allocs/op":
		return Lower
	case "B/s":
		return Higher
	}
	return Unknown
}
