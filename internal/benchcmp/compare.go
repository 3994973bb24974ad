package benchcmp

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"

	"github.com/tracebench/tracebench/workloads/spec"
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
	// ErrOutput is wrapped by errors in producing the output from good
	// input: a write that failed (a full disk) or a chart that could not be
	// drawn. It is not bad input.
	ErrOutput = errors.New("benchcmp: writing the output")
	// ErrRunFailed is returned by Merge when a file holds go test's FAIL
	// line: the merged results are written, but a run they come from
	// failed, so they are missing or partial.
	ErrRunFailed = errors.New("benchcmp: a run failed")
	// ErrInterrupted is wrapped when a signal (SIGINT, SIGTERM) stopped
	// the command before it wrote its output.
	ErrInterrupted = errors.New("benchcmp: interrupted")
)

// ExitCode returns the exit status for an error returned by this package:
// 0 for nil; 1 for ErrRegression (the gate triggered), ErrRunFailed (a
// merged run failed) and ErrOutput (the output could not be written); 2 for bad usage or input (ErrUsage,
// ErrInput) and for any other error, which comes from the command line's
// parser; 130 for ErrInterrupted, as a shell reports a process Ctrl-C
// ended.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrInterrupted):
		return 130
	case errors.Is(err, ErrUsage), errors.Is(err, ErrInput):
		return 2
	case errors.Is(err, ErrRegression), errors.Is(err, ErrRunFailed), errors.Is(err, ErrOutput):
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
// (results a filter rejected with a reason, a comparison that compared
// nothing) go to errOut. It returns an error wrapping ErrUsage or ErrInput
// for bad usage or input, ErrOutput when the report cannot be drawn or
// written, and ErrRegression when cfg.FailOn is "regression" and some change
// is a regression; the report is written in that case too.
//
// With cfg.FailOn set, a comparison in which no result was compared with a
// baseline (the files share no benchmark, differ in a configuration line,
// or --col found a single column) is an error wrapping ErrInput, and no
// report is written: a gate that compared nothing must not pass.
func Compare(out, errOut io.Writer, cfg CompareConfig) error {
	if errOut == nil {
		errOut = io.Discard
	}
	rep, err := BuildReport(errOut, cfg)
	if err != nil {
		return err
	}
	if rep.Compared() == 0 {
		why := whyNothingCompared(rep, cfg)
		if cfg.FailOn == "regression" {
			return fmt.Errorf("%w: --fail-on regression compared nothing, so it cannot pass: %s", ErrInput, why)
		}
		fmt.Fprintf(errOut, "benchcmp: warning: nothing was compared: %s\n", why)
	} else {
		warnUnpaired(errOut, rep)
	}
	if undirected, directed := rep.Undirected(); rep.Compared() > 0 && cfg.FailOn == "regression" && directed == 0 {
		// No compared unit has a direction (files without their Unit
		// lines, as grep '^Benchmark' leaves them): every change is
		// "changed", never a regression, however many samples a side
		// has, so the samples are not what to blame.
		fmt.Fprintf(errOut, "benchcmp: warning: --fail-on regression cannot fail: no compared unit has a known direction (%s), so a change in it is \"changed\", never a regression: a Unit line such as \"Unit %s better=lower\" gives one (benchrun writes them before its results)\n",
			listSome(undirected, 3), undirected[0])
	} else if rep.Compared() > 0 && cfg.FailOn == "regression" && rep.Testable() == 0 {
		// Every row's samples are too small to ever be significant: the
		// gate passes whatever changed, which its caller must hear.
		fmt.Fprintf(errOut, "benchcmp: warning: --fail-on regression cannot fail: no compared row of a unit with a direction has samples enough to show a change at alpha %g (need at least %d a side)\n", cfg.Alpha, samplesNeeded(cfg.Alpha))
	} else if cfg.FailOn == "regression" {
		// Some rows can fail and some cannot (a run cut short, a -count
		// lower on one side): the gate passes those whatever changed.
		if few := rep.Untestable(); len(few) > 0 {
			fmt.Fprintf(errOut, "benchcmp: warning: --fail-on regression cannot fail on %d row(s) whose samples are too few to show a change at alpha %g (need at least %d a side): %s\n",
				len(few), cfg.Alpha, samplesNeeded(cfg.Alpha), listSome(showAll(few), 3))
		}
	}
	warnScaleBy(errOut, rep, cfg)
	if err := writeReport(out, rep, cfg.Format); err != nil {
		if errors.Is(err, ErrOutput) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrOutput, err)
	}
	if cfg.FailOn == "regression" {
		// A benchmark of the baseline that the other side lost, or a run
		// that failed, may hide a regression: the gate fails on it.
		var why []string
		if n := rep.Regressions(); n > 0 {
			why = append(why, fmt.Sprintf("%d significant change(s) past their threshold in the bad direction", n))
		}
		if lost := rep.Lost(); len(lost) > 0 {
			why = append(why, fmt.Sprintf("%d benchmark(s) of the baseline %s have no result to compare with (%s)",
				len(lost), spec.Path(rep.Columns[0]), listSome(showAll(lost), 3)))
		}
		if f := rep.Failures; len(f) > 0 {
			why = append(why, fmt.Sprintf("go test says a run failed (%s)", listSome(f, 1)))
		}
		if len(why) > 0 {
			return fmt.Errorf("%w: %s", ErrRegression, strings.Join(why, "; "))
		}
	}
	return nil
}

// warnScaleBy warns of a --scale-by that draws nothing: given with a
// format other than html, or naming a parameter no benchmark has.
func warnScaleBy(errOut io.Writer, rep *Report, cfg CompareConfig) {
	if cfg.ScaleBy == "" {
		return
	}
	if cfg.Format != "html" {
		fmt.Fprintf(errOut, "benchcmp: warning: --scale-by %s: only the html report draws scaling charts\n", spec.Clip(cfg.ScaleBy))
		return
	}
	key := strings.TrimPrefix(cfg.ScaleBy, "/")
	has, notPositive := false, false
	for _, t := range rep.Tables {
		byLabel, order := scalingSeriesOf(t, key, false)
		for _, l := range order {
			if byLabel[l].drawable() {
				return
			}
		}
		byLabel, order = scalingSeriesOf(t, key, true)
		for _, l := range order {
			notPositive = notPositive || byLabel[l].drawable()
		}
		for _, r := range t.Rows {
			for _, part := range nameParams(r.Name)[1:] {
				if k, _, ok := strings.Cut(part, "="); ok && k == key {
					has = true
				}
			}
		}
	}
	if notPositive {
		// The parameter has the values a line needs, but the medians
		// at them are 0 or less, which log axes cannot draw.
		fmt.Fprintf(errOut, "benchcmp: warning: --scale-by %s: benchmarks have two positive values of %s in one column, but none has a median above 0 at two of them (log axes cannot draw a median of 0 or less), so the report draws no scaling chart\n", spec.Clip(cfg.ScaleBy), spec.Clip(key))
		return
	}
	if has {
		// A line needs two values: one value of the parameter, or one
		// that is not a positive number, draws nothing either.
		fmt.Fprintf(errOut, "benchcmp: warning: --scale-by %s: no benchmark has two positive numeric values of %s in one column, so the report draws no scaling chart\n", spec.Clip(cfg.ScaleBy), spec.Clip(key))
		return
	}
	fmt.Fprintf(errOut, "benchcmp: warning: --scale-by %s: no benchmark name has the parameter %s, so the report draws no scaling chart\n", spec.Clip(cfg.ScaleBy), spec.Clip(key))
}

// listSome joins the first most items of list, saying how many it leaves.
func listSome(list []string, most int) string {
	s := strings.Join(list[:min(len(list), most)], ", ")
	if len(list) > most {
		s += fmt.Sprintf(" and %d more", len(list)-most)
	}
	return s
}

// warnUnpaired warns on errOut, once per pair of columns, of the
// benchmarks one column has and the other has not: their geomeans are
// then over different sets, and a lost benchmark may be a failed one.
//
// A benchmark that both columns ran, but in no unit they share (its only
// unit renamed, ns/update in one file and ns/upd in the other), is
// compared in no unit, which the warning says, naming each side's units,
// once for the pair of columns: it is no lost benchmark, and the gate
// does not fail on it.
func warnUnpaired(errOut io.Writer, rep *Report) {
	// units holds, per configuration and column (ranKey) and benchmark,
	// the units it has a result in.
	units := map[string]map[string][]string{}
	for _, t := range rep.Tables {
		for j, c := range t.Columns {
			k := ranKey(t.Config, c)
			if units[k] == nil {
				units[k] = map[string][]string{}
			}
			for _, r := range t.Rows {
				if r.Cells[j] != nil {
					units[k][r.Name] = appendNew(units[k][r.Name], t.Unit)
				}
			}
		}
	}
	type pair struct{ in, missing, unit string }
	var order []pair
	names := map[pair][]string{}
	for _, u := range rep.Unpaired {
		p := pair{u.In, u.Missing, ""}
		if rep.unitOnly(u) {
			p.unit = u.Unit // the benchmark ran there, without this unit
			in := units[ranKey(u.Config, u.In)][u.Name]
			missing := units[ranKey(u.Config, u.Missing)][u.Name]
			if !slices.ContainsFunc(in, func(unit string) bool { return slices.Contains(missing, unit) }) {
				// Compared in no unit: said once, baseline first.
				base, other := u.In, u.Missing
				if other == rep.Columns[0] {
					base, other, in, missing = other, base, missing, in
				}
				p = pair{base, other, "\x00" + strings.Join(in, ", ") + " in " + spec.Path(base) + "; " + strings.Join(missing, ", ") + " in " + spec.Path(other)}
			}
		}
		if _, ok := names[p]; !ok {
			order = append(order, p)
		}
		names[p] = appendNew(names[p], show(rep.unpairedName(u)))
	}
	for _, p := range order {
		n := names[p]
		if units, ok := strings.CutPrefix(p.unit, "\x00"); ok {
			fmt.Fprintf(errOut, "benchcmp: warning: %d benchmark(s) that %s and %s both ran are compared in no unit, their units differing (a unit renamed?): %s: %s\n",
				len(n), spec.Path(p.in), spec.Path(p.missing), units, listSome(n, 5))
			continue
		}
		if p.unit != "" {
			why := ""
			if p.missing == rep.Columns[0] {
				// Nothing to compare them with: "no baseline", never a
				// regression (builder.report), whatever the later columns
				// say of each other.
				why = " (no baseline: not compared, nor gated, in " + p.unit + ")"
			}
			fmt.Fprintf(errOut, "benchcmp: warning: %s has no %s result for %d benchmark(s) of %s that it has other results for%s: %s\n",
				spec.Path(p.missing), p.unit, len(n), spec.Path(p.in), why, listSome(n, 5))
			continue
		}
		fmt.Fprintf(errOut, "benchcmp: warning: benchmark set differs from the baseline, geomeans may not be comparable: %s has no result for %d benchmark(s) of %s: %s\n",
			spec.Path(p.missing), len(n), spec.Path(p.in), listSome(n, 5))
	}
}

// whyNothingCompared says why rep compared no cell with a baseline cell,
// for the gate's error and Compare's warning: no result passed the filter;
// every result fell in one column; no table holds two columns, because the
// columns differ in a configuration line or share no unit; or no benchmark
// has results in the baseline column and another.
func whyNothingCompared(rep *Report, cfg CompareConfig) string {
	left := ""
	if cfg.Filter != DefaultCompareConfig().Filter {
		left = " left after --filter " + spec.Quote(cfg.Filter)
	}
	if len(rep.Tables) == 0 {
		var after []string
		if left != "" {
			after = append(after, "--filter "+spec.Quote(cfg.Filter))
		}
		if strings.Contains(cfg.Col, "@") {
			after = append(after, "the values --col "+spec.Clip(cfg.Col)+" lists")
		}
		if strings.Contains(cfg.Row, "@") {
			after = append(after, "the values --row "+spec.Clip(cfg.Row)+" lists")
		}
		if len(after) == 0 {
			return "there is no result to compare"
		}
		return "no result is left after " + strings.Join(after, " and ") + ": there is nothing to compare"
	}
	// What each column holds.
	type column struct {
		name   string
		config map[string][]string // configuration key -> its values
		units  []string
		rows   []string
	}
	var cols []*column
	byName := map[string]*column{}
	var keys []string // configuration keys, in the order they first appear
	shared := false
	for _, t := range rep.Tables {
		has := make([]bool, len(t.Columns)) // the column has a result in t
		n := 0
		for j := range t.Columns {
			has[j] = slices.ContainsFunc(t.Rows, func(r *Row) bool { return r.Cells[j] != nil })
			if has[j] {
				n++
			}
		}
		shared = shared || has[0] && n > 1
		for j, name := range t.Columns {
			if !has[j] {
				// The baseline's empty column in a table of a unit it
				// lacks: it has none of the table's unit or
				// configuration.
				continue
			}
			c := byName[name]
			if c == nil {
				c = &column{name: name, config: map[string][]string{}}
				byName[name] = c
				cols = append(cols, c)
			}
			c.units = appendNew(c.units, t.Unit)
			for _, kv := range t.Config {
				k, v, _ := strings.Cut(kv, ": ")
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				c.config[k] = appendNew(c.config[k], showValue(v))
			}
			for _, r := range t.Rows {
				if r.Cells[j] != nil {
					c.rows = appendNew(c.rows, show(r.Name))
				}
			}
		}
	}
	// The tables come in the order of their configuration values, not of
	// the columns: the lists go baseline first, as the columns do.
	slices.SortStableFunc(cols, func(a, b *column) int {
		return slices.Index(rep.Columns, a.name) - slices.Index(rep.Columns, b.name)
	})
	if len(cols) == 1 {
		return fmt.Sprintf("every result%s is in one column of --col %s, %s: there is nothing to compare it with", left, spec.Clip(cfg.Col), spec.Quote(cols[0].name))
	}
	// each describes one list per column: "a, b in old.txt; c in new.txt".
	each := func(list func(*column) []string) string {
		var parts []string
		for _, c := range cols {
			l := list(c)
			s := "none"
			if len(l) > 0 {
				s = strings.Join(l[:min(len(l), 3)], ", ")
				if len(l) > 3 {
					s += fmt.Sprintf(" and %d more", len(l)-3)
				}
			}
			name := spec.Path(c.name)
			if c.name == "" {
				name = `""` // the column of results without the --col key
			}
			parts = append(parts, s+" in "+name)
		}
		return strings.Join(parts, "; ")
	}
	if shared {
		why := "no benchmark has results both in the baseline column and in another (rows pair by --row " + spec.Clip(cfg.Row) + "): " +
			each(func(c *column) []string {
				// The empty name is listed as "", as every message
				// lists it (README, "Comparing results: benchcmp").
				names := make([]string, len(c.rows))
				for i, r := range c.rows {
					names[i] = messageName(r)
				}
				return names
			})
		var others []string
		for _, c := range cols[1:] {
			others = append(others, c.rows...)
		}
		if differInProcs(cols[0].rows, others) {
			why += " (the names differ in their -N GOMAXPROCS suffix alone: --ignore /gomaxprocs pairs them)"
		}
		return why
	}
	var diffs []string
	for _, k := range keys {
		first := strings.Join(cols[0].config[k], ",")
		for _, c := range cols[1:] {
			if strings.Join(c.config[k], ",") != first {
				diffs = append(diffs, show(k)+" ["+each(func(c *column) []string { return c.config[k] })+"]")
				break
			}
		}
	}
	if len(diffs) > 0 {
		pairing := "every configuration line but commit, cpu and go is equal"
		if cfg.Strict {
			pairing = "every configuration line is equal under --strict"
		}
		return fmt.Sprintf("the columns differ in configuration: %s; rows pair only when %s (--ignore KEY pairs them anyway)",
			strings.Join(diffs, ", "), pairing)
	}
	return "the columns share no unit: " + each(func(c *column) []string { return c.units })
}

// showValue is a configuration value as whyNothingCompared lists it:
// quoted when white space starts or ends it, which would otherwise not
// show ("a " and "a" differ, and would read alike), and else as show
// shows it.
func showValue(v string) string {
	if strings.TrimSpace(v) != v {
		return spec.Quote(v)
	}
	return show(v)
}

// differInProcs reports whether some row of the other columns pairs with
// a row of the baseline's once both lose their -N GOMAXPROCS suffix (the
// same benchmarks run under other GOMAXPROCS).
func differInProcs(base, others []string) bool {
	bare := map[string]bool{}
	for _, r := range base {
		bare[trimProcs(r)] = true
	}
	for _, r := range others {
		if bare[trimProcs(r)] {
			return true
		}
	}
	return false
}

// trimProcs returns name without a trailing -N (N digits).
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

// appendNew appends s to list unless list holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
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
		return nil, queryError("--filter", cfg.Filter, err)
	}
	var parser benchproc.ProjectionParser
	tableBy, _, err := parser.ParseWithUnit(".config", filter)
	if err != nil {
		return nil, fmt.Errorf("%w: table projection: %v", ErrUsage, err)
	}
	rowBy, err := parser.Parse(cfg.Row, filter)
	if err != nil {
		return nil, queryError("--row", cfg.Row, err)
	}
	colBy, err := parser.Parse(cfg.Col, filter)
	if err != nil {
		return nil, queryError("--col", cfg.Col, err)
	}
	ignore := cfg.Ignore
	if !cfg.Strict {
		ignore = strings.TrimLeft(ignore+","+ignoredConfig, ",")
	}
	if _, err := parser.Parse(ignore, filter); err != nil {
		return nil, queryError("--ignore", cfg.Ignore, err)
	}
	residue := parser.Residue()

	b := newBuilder(tableBy, rowBy, colBy, residue)
	info, err := readResults(cfg.Files, filter, errOut, false, b.add)
	if err != nil {
		return nil, err
	}
	if err := thresholds.check(info.seen); err != nil {
		return nil, err
	}
	dirs, err := directions(info.units)
	if err != nil {
		return nil, err
	}
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = cfg.Alpha
	rep := b.report(reportOpts{
		alpha:      cfg.Alpha,
		confidence: cfg.Confidence,
		thresholds: &thr,
		units:      info.units,
		directions: dirs,
		threshold:  thresholds,
	})
	rep.ScaleBy = cfg.ScaleBy
	rep.Failures = info.failures
	if !cfg.Strict {
		warnMachines(errOut, info.machine)
	}
	return rep, nil
}

// queryError is the error for a benchproc query of flag that does not
// parse. benchproc's message shows the query whole, on a line of its own
// with a caret under the fault: kept for a query that is short printable
// text, it gives way, for a longer query or one holding a control
// character, to the query quoted as every echoed value is (its first 80
// bytes and its length, control characters escaped) and the parser's
// reason, so the message stays one short line that reaches the terminal
// escaped.
func queryError(flag, query string, err error) error {
	msg := err.Error()
	if spec.Clip(query) == query {
		return fmt.Errorf("%w: %s: %s", ErrUsage, flag, msg)
	}
	// The reason ends where the query's line starts. That query is the
	// one parsed, which need not be the flag's value (--ignore is
	// parsed with the configuration keys ignored by default after it):
	// cut at the line, not at the value, or the caret's line of as many
	// spaces as the query is long stays in the message.
	why, _, _ := strings.Cut(msg, "\n\t")
	return fmt.Errorf("%w: %s %s: %s", ErrUsage, flag, spec.Quote(query), spec.Bound(why))
}

// validate checks the flags' values before the count of files: a flag
// given without its value takes the file after it (--fail-on old.txt
// new.txt), and its value named is the error that says so.
func (cfg *CompareConfig) validate() error {
	if !(cfg.Alpha > 0 && cfg.Alpha < 1) {
		return fmt.Errorf("%w: --alpha %v: must be in (0, 1)", ErrUsage, cfg.Alpha)
	}
	if !(cfg.Confidence > 0 && cfg.Confidence < 1) {
		return fmt.Errorf("%w: --confidence %v: must be in (0, 1)", ErrUsage, cfg.Confidence)
	}
	if cfg.ScaleBy != "" && (!strings.HasPrefix(cfg.ScaleBy, "/") || len(cfg.ScaleBy) < 2) {
		return fmt.Errorf("%w: --scale-by %s: want a name parameter as /PARAM", ErrUsage, spec.Quote(cfg.ScaleBy))
	}
	switch cfg.FailOn {
	case "", "regression":
	default:
		return fmt.Errorf("%w: --fail-on %s: the only value is regression", ErrUsage, spec.Quote(cfg.FailOn))
	}
	if !slices.Contains(Formats, cfg.Format) {
		return fmt.Errorf("%w: --format %s: must be one of %s", ErrUsage, spec.Quote(cfg.Format), strings.Join(Formats, ", "))
	}
	if len(cfg.Files) == 0 {
		return fmt.Errorf("%w: no result files given", ErrUsage)
	}
	if cfg.Col == ".file" && len(cfg.Files) < 2 {
		return fmt.Errorf("%w: comparing files needs at least two (OLD NEW); to compare columns of one file, use --col", ErrUsage)
	}
	return nil
}

// ParseDecimal parses a number a flag takes, written in decimal: an
// optional -, digits with an optional point, an optional exponent (5,
// 0.05, .5, 1e-3). strconv.ParseFloat alone also reads Go literal syntax,
// in which --alpha 0_05 is 5 and --threshold '*=0x1p4' is 16, and inf or
// nan; each is refused, as benchrun and benchcmp refuse 010 or 0x10 for an
// integer. A number beyond the float64 range is an error.
func ParseDecimal(s string) (float64, error) {
	t := strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	if hasExp {
		exp = strings.TrimPrefix(strings.TrimPrefix(exp, "-"), "+")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || !allDigits(intPart) || !allDigits(frac) || hasExp && (exp == "" || !allDigits(exp)) {
		return 0, errors.New("not a decimal number")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("out of the float64 range")
	}
	return v, nil
}

// allDigits reports whether s holds only the digits 0-9.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// thresholdSet maps tidied units to thresholds in percent.
type thresholdSet struct {
	byUnit map[string]float64
	def    float64
	// specs maps each tidied unit, and "*", to the flag value that set it.
	specs map[string]string
}

func (t thresholdSet) of(unit string) float64 {
	if p, ok := t.byUnit[unit]; ok {
		return p
	}
	return t.def
}

// parseThresholds parses UNIT=PCT pairs, cut at the last "="
// (cutThreshold). Units are stored tidied, so
// "ns/op=5" and "sec/op=5" name the same unit. One unit (or "*") given two
// different thresholds is an error naming both flag values; given the same
// one twice, it is not.
func parseThresholds(specs []string) (thresholdSet, error) {
	t := thresholdSet{byUnit: map[string]float64{}, specs: map[string]string{}}
	for _, s := range specs {
		unit, pct, ok := cutThreshold(s)
		if !ok || unit == "" {
			return t, fmt.Errorf("%w: --threshold %s: want UNIT=PCT, as in ns/op=5", ErrUsage, spec.Quote(s))
		}
		// No unit holds white space (a result line's fields are split
		// at it), and PCT is a number as --alpha's, which takes none:
		// 'ns/op= 5' is refused as benchrun refuses --count ' 5'.
		if strings.ContainsFunc(s, unicode.IsSpace) {
			return t, fmt.Errorf("%w: --threshold %s: white space in UNIT=PCT; write it without, as in ns/op=5", ErrUsage, spec.Quote(s))
		}
		p, err := ParseDecimal(strings.TrimSuffix(pct, "%"))
		if err != nil || p < 0 {
			return t, fmt.Errorf("%w: --threshold %s: PCT must be a finite number >= 0 in decimal", ErrUsage, spec.Quote(s))
		}
		p += 0 // -0 is 0, and is shown as 0%
		key := unit
		if unit != "*" {
			_, key = benchunit.Tidy(1, unit)
		}
		if prev, ok := t.specs[key]; ok {
			old := t.def
			if key != "*" {
				old = t.byUnit[key]
			}
			if old != p {
				return t, fmt.Errorf("%w: --threshold %s conflicts with --threshold %s: give each unit one threshold", ErrUsage, spec.Quote(s), spec.Quote(prev))
			}
			continue
		}
		t.specs[key] = s
		if key == "*" {
			t.def = p
			continue
		}
		t.byUnit[key] = p
	}
	return t, nil
}

// cutThreshold splits a --threshold UNIT=PCT at its last "=": PCT, a
// number, holds none, while a unit may (a result line's unit is any word,
// and "BenchmarkA 1 5 ratio=x/op" has the unit ratio=x/op, given a
// threshold as ratio=x/op=5).
func cutThreshold(s string) (unit, pct string, ok bool) {
	i := strings.LastIndexByte(s, '=')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// check refuses a threshold for a unit that no file has (a result's unit
// or a Unit line's; seen maps them tidied to a spelling from the files):
// most likely a misspelt unit, whose threshold would silently apply to
// nothing.
func (t thresholdSet) check(seen map[string]string) error {
	var missing []string
	for unit := range t.byUnit {
		if _, ok := seen[unit]; !ok {
			missing = append(missing, t.specs[unit])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	flag := missing[0]
	unit, _, _ := cutThreshold(flag)
	unit = strings.TrimSpace(unit)
	have := make([]string, 0, len(seen))
	for _, u := range seen {
		have = append(have, u)
	}
	slices.Sort(have)
	hint := ""
	if near := nearest(unit, have); near != "" {
		hint = fmt.Sprintf("; did you mean %s?", spec.Clip(near))
	}
	const most = 12
	// A unit a Unit line declares is not checked as a result's is: one
	// holding an escape sequence is listed quoted, as show quotes a name.
	list := strings.Join(showAll(have[:min(len(have), most)]), ", ")
	if len(have) > most {
		list += fmt.Sprintf(", and %d more", len(have)-most)
	}
	return fmt.Errorf("%w: --threshold %s: no result file has unit %s%s (their units: %s)", ErrUsage, spec.Quote(flag), spec.Clip(unit), hint, list)
}

// nearest returns the word of words closest to w in edit distance, if it is
// within a third of w's length (a typo), else "".
func nearest(w string, words []string) string {
	best, bestD := "", len(w)/3+1
	for _, c := range words {
		if d := editDistance(w, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// resultFile is one file argument: its path and the column label of its
// results (the .file key).
type resultFile struct{ path, label string }

// resultFiles splits LABEL=PATH arguments and labels the others as
// benchfmt.Files does: by the path itself, with "#0", "#1", ... appended
// when one path is given several times, so that each is a column of its
// own.
func resultFiles(args []string) ([]resultFile, error) {
	files := make([]resultFile, len(args))
	count := map[string]int{}
	for i, a := range args {
		path, label := a, a
		if before, after, ok := strings.Cut(a, "="); ok {
			path, label = after, before
		} else {
			count[path]++
		}
		if path == "" {
			return nil, fmt.Errorf("%w: empty file name in %s", ErrUsage, spec.Quote(a))
		}
		if label == "" {
			return nil, fmt.Errorf("%w: empty label in %s (LABEL=FILE names a column)", ErrUsage, spec.Quote(a))
		}
		files[i] = resultFile{path, label}
	}
	seen := map[string]int{}
	for i, a := range args {
		if p := files[i].path; !strings.Contains(a, "=") && count[p] > 1 {
			files[i].label = fmt.Sprintf("%s#%d", p, seen[p])
			seen[p]++
		}
	}
	return files, nil
}

// readInfo is what readResults gathers besides the results.
type readInfo struct {
	// units is the unit metadata of every file.
	units benchfmt.UnitMetadataMap
	// seen maps the units of every result, kept or not, and of every Unit
	// line, tidied, to their first spelling in the files.
	seen map[string]string
	// failures are go test's FAIL lines, as "FILE:LINE: TEXT".
	failures []string
	// machine holds, for each file in order, the values its results
	// kept by the filter give the keys of ignoredMachine.
	machine []fileMachine
}

// ignoredMachine are the configuration keys of ignoredConfig that say on
// what a file's results were measured: the machine and the Go release.
var ignoredMachine = []string{"cpu", "go"}

// fileMachine is one file's values of the keys of ignoredMachine.
type fileMachine struct {
	path   string
	values map[string][]string
}

// warnMachines warns when the files' results were measured on different
// machines or Go releases: rows pair ignoring cpu and go (unless
// --strict), so such files are compared, and gated, like any others,
// and the report, whose tables are split by the configuration lines not
// ignored, never shows the difference.
func warnMachines(errOut io.Writer, files []fileMachine) {
	if len(files) < 2 {
		return
	}
	var diffs []string
	for _, k := range ignoredMachine {
		first := strings.Join(files[0].values[k], ",")
		differ := false
		for _, f := range files[1:] {
			differ = differ || strings.Join(f.values[k], ",") != first
		}
		if !differ {
			continue
		}
		var parts []string
		for _, f := range files {
			l := f.values[k]
			v := "none"
			if len(l) > 0 {
				shown := make([]string, len(l))
				for i, x := range l {
					shown[i] = showValue(x)
				}
				v = strings.Join(shown, ", ")
			}
			parts = append(parts, v+" in "+spec.Path(f.path))
		}
		diffs = append(diffs, k+" ["+strings.Join(parts, "; ")+"]")
	}
	if len(diffs) > 0 {
		fmt.Fprintf(errOut, "benchcmp: warning: the files were measured on different machines or Go releases: %s; their rows are compared all the same (rows pair ignoring commit, cpu and go; --strict keeps them apart)\n", strings.Join(diffs, ", "))
	}
}

// readResults reads every file in order and hands each result the filter
// keeps to add. A syntax error, a missing file, a file without results,
// or a line inputCheck refuses (a cut last line, a garbled unit, a unit
// twice on a line, an iteration count below 1, a line too long to read)
// is an error wrapping ErrInput (invariant C3). A leading byte order mark
// is skipped. go test's FAIL lines and a file read twice are warnings on
// errOut. pooled says that the caller pools every file's results (scaling
// fits them all as one), so a file read twice is never two columns: its
// samples count twice.
func readResults(args []string, filter *benchproc.Filter, errOut io.Writer, pooled bool, add func(*benchfmt.Result)) (*readInfo, error) {
	files, err := resultFiles(args)
	if err != nil {
		return nil, err
	}
	counts := make(map[string]int, len(files))
	paths := make([]string, 0, len(files))
	infos := make([]os.FileInfo, len(files))
	for i, f := range files {
		st, err := os.Stat(f.path)
		if err != nil {
			if whole := args[i]; whole != f.path {
				if _, werr := os.Stat(whole); werr == nil {
					// A file whose name holds "=" read as LABEL=FILE.
					return nil, fmt.Errorf("%w: %s: %s is read as LABEL=FILE, label %s; to read the file %s, give it a label: LABEL=%s",
						ErrInput, fileErr(err), spec.Path(whole), spec.Quote(f.label), spec.Path(whole), spec.Path(whole))
				}
			}
			return nil, openErr(f.path, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%w: %s: is a directory, not a result file", ErrInput, spec.Path(f.path))
		}
		infos[i] = st
		for j := range i {
			if !os.SameFile(infos[j], st) {
				continue
			}
			q := files[j]
			if pooled {
				fmt.Fprintf(errOut, "benchcmp: warning: %s and %s are the same file: its samples count twice\n", spec.Path(q.path), spec.Path(f.path))
			} else if q.label == f.label {
				// Pooled twice into one column (old=o.txt
				// old=./o.txt): each sample counts twice.
				fmt.Fprintf(errOut, "benchcmp: warning: %s and %s are the same file in column %s: its samples count twice\n", spec.Path(q.path), spec.Path(f.path), spec.Quote(f.label))
			} else {
				fmt.Fprintf(errOut, "benchcmp: warning: %s and %s are the same file, read as two columns, %s and %s: it is compared with itself\n", spec.Path(q.path), spec.Path(f.path), spec.Quote(q.label), spec.Quote(f.label))
			}
			break
		}
		paths = append(paths, f.path)
		counts[f.path] = 0
	}
	check, err := newInputCheck(paths)
	if err != nil {
		return nil, err
	}
	info := &readInfo{seen: map[string]string{}, failures: check.failures()}
	warnFailures(errOut, "benchcmp", info.failures)
	see := func(tidy, orig string) {
		if _, ok := info.seen[tidy]; !ok {
			info.seen[tidy] = cmp.Or(orig, tidy)
		}
	}
	var r benchfmt.Reader
	machine := map[string]*fileMachine{}
	for _, f := range files {
		fm := machine[f.path]
		if fm == nil {
			fm = &fileMachine{path: f.path, values: map[string][]string{}}
			machine[f.path] = fm
		}
		file, err := check.open(f.path)
		if err != nil {
			return nil, openErr(f.path, err)
		}
		// ".file" is not a key a file can set, so the label stays.
		r.Reset(skipBOM(file), f.path, ".file", f.label)
		err = func() error {
			defer file.Close()
			for r.Scan() {
				switch rec := r.Result().(type) {
				case *benchfmt.SyntaxError:
					return check.syntax(rec, r.Units())
				case *benchfmt.UnitMetadata:
					check.meta(rec)
					see(rec.Unit, rec.OrigUnit)
				case *benchfmt.Result:
					tidyZeros(rec)
					positiveZeros(rec)
					if err := check.result(rec); err != nil {
						return err
					}
					counts[f.path]++
					for _, v := range rec.Values {
						see(v.Unit, v.OrigUnit)
					}
					ok, err := filter.Apply(rec)
					if !ok {
						if err != nil {
							fmt.Fprintln(errOut, err)
						}
						continue
					}
					for _, c := range rec.Config {
						if c.File && slices.Contains(ignoredMachine, c.Key) {
							fm.values[c.Key] = appendNew(fm.values[c.Key], string(c.Value))
						}
					}
					add(rec)
				}
			}
			if err := r.Err(); err != nil {
				return fmt.Errorf("%w: %s: %s", ErrInput, spec.Path(f.path), spec.PathErr(err))
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	if err := check.finish(); err != nil {
		return nil, err
	}
	for _, f := range paths {
		if counts[f] == 0 {
			if fails := check.ends[f].fails; len(fails) > 0 {
				// A run that failed before its first result (a build
				// that failed, a panic): the run's failure, exit 1, as
				// merge reports it, not a malformed file. (Its FAIL
				// lines were each warned of above.)
				return nil, fmt.Errorf("%w: %s: no benchmark results, FAIL lines only (%d): the run failed before its first result", ErrRunFailed, spec.Path(f), len(fails))
			}
			return nil, fmt.Errorf("%w: %s: no benchmark results (lines starting with Benchmark)", ErrInput, spec.Path(f))
		}
	}
	info.units = r.Units()
	for _, p := range paths {
		info.machine = append(info.machine, *machine[p])
	}
	return info, nil
}

// tidyZeros gives a value of 0 the tidied unit that benchfmt gives every
// other value of its unit. benchfmt keeps a value's unit as written when
// tidying leaves the value as it was, which it always does to 0: "5
// wait-ns/op" reads as wait-sec/op but "0 wait-ns/op" as wait-ns/op, so a
// unit's zero samples would form a table of their own, without the unit's
// direction or threshold, and a change from 0 to more would be compared
// with nothing; and the input checks would take an unterminated last line
// ending in a 0 for a cut one, in a unit no other line uses. The value
// and unit as written stay in OrigValue and OrigUnit, which benchfmt's
// writer writes, so merge writes the line as it was read.
func tidyZeros(r *benchfmt.Result) {
	for i, v := range r.Values {
		if v.OrigUnit != "" {
			continue
		}
		if val, unit := benchunit.Tidy(v.Value, v.Unit); unit != v.Unit {
			r.Values[i] = benchfmt.Value{Value: val, Unit: unit, OrigValue: v.Value, OrigUnit: v.Unit}
		}
	}
}

// positiveZeros makes a value of -0 (a line writing "-0 ns/op") 0. It is
// the same number, but the reports would show its sign: "-0.000" in the
// text, markdown and html tables, -0 in csv and json, where a median,
// an interval bound or a sample of 0 is written 0 (README, "Read the
// report"). The value as written, which merge writes, is left alone.
func positiveZeros(r *benchfmt.Result) {
	for i := range r.Values {
		r.Values[i].Value += 0 // -0 + 0 is 0; any other value is itself
	}
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
// lower or higher is an error naming the file and line. So is an assume=
// value other than the two benchfmt defines, nothing and exact: benchfmt
// reads any other (a typo, assume=Exact) as nothing, so that the unit's
// values would be compared by their medians, where the file asks for
// exact values.
func directions(units benchfmt.UnitMetadataMap) (map[string]Direction, error) {
	dirs := map[string]Direction{}
	for k, m := range units {
		if k.Key == "assume" && m.Value != "nothing" && m.Value != "exact" {
			f, line := m.Pos()
			return nil, fmt.Errorf("%w: %s:%d: Unit %s assume=%s: assume must be nothing or exact", ErrInput, spec.Path(f), line, show(m.OrigUnit), show(m.Value))
		}
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
			return nil, fmt.Errorf("%w: %s:%d: Unit %s better=%s: better must be lower or higher", ErrInput, spec.Path(f), line, show(m.OrigUnit), show(m.Value))
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
