package benchcmp

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tracebench/tracebench/workloads/spec"
)

// ScalingConfig configures Scaling. DefaultScalingConfig returns the
// defaults the command uses.
type ScalingConfig struct {
	// Files are the result files.
	Files []string
	// By is the name parameter to fit against, as "/PARAM"; its values must
	// be positive numbers.
	By string
	// Filter is a benchproc filter.
	Filter string
	// Confidence is the level of the exponent's interval, in (0, 1).
	Confidence float64
	// FlagAbove flags a fit whose whole interval lies above it.
	FlagAbove float64
	// Format is text, csv or json.
	Format string
}

// DefaultScalingConfig returns the configuration of `benchcmp scaling`.
func DefaultScalingConfig() ScalingConfig {
	return ScalingConfig{Filter: "*", Confidence: 0.95, FlagAbove: 0.1, Format: "text"}
}

// Fit is one benchmark's growth in the parameter: value ≈ c·x^Exponent.
type Fit struct {
	// Name is the benchmark's full name without the parameter.
	Name string `json:"name"`
	// Unit is the tidied unit.
	Unit string `json:"unit"`
	// Config lists the table's configuration lines.
	Config []string `json:"config"`
	// Points is the number of distinct parameter values the row's
	// measurements have; Samples the number of measurements fitted (none
	// in a row not fitted, as one holding a value of 0 or less).
	Points  int `json:"points"`
	Samples int `json:"samples"`
	// Exponent is the least-squares slope of log(value) on log(x); Lo and
	// Hi bound it at the configured confidence (Student's t on the slope's
	// standard error). HasInterval is false with fewer than three samples
	// or two points, and then JSON gives lo and hi as null. A row not
	// fitted (Note says why) has no exponent and no R²: both NaN, null in
	// JSON and empty in CSV, as text leaves them blank.
	Exponent    float64 `json:"exponent"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
	HasInterval bool    `json:"has_interval"`
	// R2 is the fit's coefficient of determination on log-log data.
	R2 float64 `json:"r2"`
	// Grows is set when the unit is a cost (lower is better) and the whole
	// interval lies above FlagAbove.
	Grows bool `json:"grows"`
	// Note says why a row was not fitted, or what a flag means.
	Note string `json:"note,omitempty"`
}

// MarshalJSON writes the fit with null for a number that is not finite
// (the R² of a unit whose values do not vary, 0/0, say) and for lo and
// hi when the fit has no interval, as a baseline cell has no delta_pct.
func (f Fit) MarshalJSON() ([]byte, error) {
	type plain Fit
	lo, hi := jsonNum(f.Lo), jsonNum(f.Hi)
	if !f.HasInterval {
		lo, hi = nil, nil
	}
	return json.Marshal(struct {
		plain
		Exponent *float64 `json:"exponent"`
		Lo       *float64 `json:"lo"`
		Hi       *float64 `json:"hi"`
		R2       *float64 `json:"r2"`
	}{plain(f), jsonNum(f.Exponent), lo, hi, jsonNum(f.R2)})
}

// Scaling fits, per benchmark, unit and configuration, the exponent k of
// value = c·x^k where x is the By parameter, by least squares on the log-log
// data of all samples (gonum's stat.LinearRegression), with an interval. It
// flags fits whose interval lies above FlagAbove; for a benchmark of an
// imported index fitted against the index size, that is a cost that grows
// with the index, which an import should not have. Bad usage or input is an
// error wrapping ErrUsage or ErrInput; a failed write, one wrapping
// ErrOutput.
func Scaling(out, errOut io.Writer, cfg ScalingConfig) error {
	if len(cfg.Files) == 0 {
		return fmt.Errorf("%w: scaling needs a result file", ErrUsage)
	}
	if !strings.HasPrefix(cfg.By, "/") || len(cfg.By) < 2 {
		return fmt.Errorf("%w: --by %s: want a name parameter as /PARAM, as in /rows", ErrUsage, spec.Quote(cfg.By))
	}
	if !(cfg.Confidence > 0 && cfg.Confidence < 1) {
		return fmt.Errorf("%w: --confidence %v: must be in (0, 1)", ErrUsage, cfg.Confidence)
	}
	if math.IsNaN(cfg.FlagAbove) || math.IsInf(cfg.FlagAbove, 0) {
		return fmt.Errorf("%w: --flag-above %v: must be a finite number", ErrUsage, cfg.FlagAbove)
	}
	switch cfg.Format {
	case "text", "csv", "json":
	default:
		return fmt.Errorf("%w: --format %s: scaling writes text, csv or json", ErrUsage, spec.Quote(cfg.Format))
	}
	filter, err := benchproc.NewFilter(cfg.Filter)
	if err != nil {
		return queryError("--filter", cfg.Filter, err)
	}
	var parser benchproc.ProjectionParser
	tableBy, unitField, err := parser.ParseWithUnit(".config", filter)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	byProj, err := parser.Parse(cfg.By, filter)
	if err != nil {
		return queryError("--by", cfg.By, err)
	}
	rowBy, err := parser.Parse(".fullname", filter)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if _, err := parser.Parse(ignoredConfig, filter); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}

	type series struct {
		xs, ys []float64
		points map[float64]bool
		bad    string
	}
	type sk struct{ table, row benchproc.Key }
	data := map[sk]*series{}
	var keys []sk
	var perr error
	info, err := readResults(cfg.Files, filter, errOut, true, func(r *benchfmt.Result) {
		if perr != nil {
			return
		}
		xs := byProj.Project(r).StringValues()
		if xs == "" {
			// benchfmt reads a last part "n=-5" as "n=" with a
			// GOMAXPROCS suffix -5: the value the name gives is -5.
			xs = gomaxprocsValue(string(r.Name.Full()), cfg.By)
		}
		x, err := strconv.ParseFloat(xs, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			file, line := r.Pos()
			what := fmt.Sprintf("%s=%s is not a positive number", spec.Clip(cfg.By), spec.Quote(xs))
			if xs == "" {
				what = "has no " + spec.Clip(cfg.By) + " in its name"
			}
			perr = fmt.Errorf("%w: %s:%d: %s %s", ErrInput, spec.Path(file), line, show(string(r.Name.Full())), what)
			return
		}
		row := rowBy.Project(r)
		for i, tk := range tableBy.ProjectValues(r) {
			k := sk{tk, row}
			s := data[k]
			if s == nil {
				s = &series{points: map[float64]bool{}}
				data[k] = s
				keys = append(keys, k)
			}
			y := r.Values[i].Value
			s.points[x] = true
			if !(y > 0) {
				s.bad = fmt.Sprintf("value %g <= 0 cannot be fitted on a log scale", y)
				continue
			}
			s.xs = append(s.xs, math.Log(x))
			s.ys = append(s.ys, math.Log(y))
		}
	})
	if err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	dirs, err := directions(info.units)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		// As a comparison warns (whyNothingCompared): an empty table and
		// exit 0 would pass a script reading it for flagged rows.
		why := "there is no result to fit"
		if cfg.Filter != DefaultScalingConfig().Filter {
			why = "no result is left after --filter " + spec.Quote(cfg.Filter) + ": there is nothing to fit"
		}
		fmt.Fprintf(errOut, "benchcmp: warning: nothing was fitted: %s\n", why)
	}
	var fits []Fit
	// Order: tables then rows, in benchproc's order.
	var tks, rks []benchproc.Key
	seenT, seenR := map[benchproc.Key]bool{}, map[benchproc.Key]bool{}
	for _, k := range keys {
		if !seenT[k.table] {
			seenT[k.table] = true
			tks = append(tks, k.table)
		}
		if !seenR[k.row] {
			seenR[k.row] = true
			rks = append(rks, k.row)
		}
	}
	benchproc.SortKeys(tks)
	benchproc.SortKeys(rks)
	for _, tk := range tks {
		for _, rk := range rks {
			s := data[sk{tk, rk}]
			if s == nil {
				continue
			}
			f := Fit{Name: rk.StringValues(), Unit: tk.Get(unitField), Config: configOf(tk), Points: len(s.points), Samples: len(s.xs)}
			switch {
			case s.bad != "":
				f.Note, f.Samples = s.bad, 0
				f.Exponent, f.R2 = math.NaN(), math.NaN()
			case f.Points < 2:
				f.Note = fmt.Sprintf("one value of %s: nothing to fit", spec.Clip(cfg.By))
				f.Exponent, f.R2 = math.NaN(), math.NaN()
			default:
				fitLogLog(&f, s.xs, s.ys, cfg.Confidence)
				dir, ok := dirs[f.Unit]
				if !ok {
					dir = defaultDirection(f.Unit)
				}
				// Only a cost (lower is better) can grow too fast.
				if dir == Lower && f.HasInterval && f.Lo > cfg.FlagAbove {
					f.Grows = true
					f.Note = fmt.Sprintf("grows faster than %s^%g", spec.Clip(strings.TrimPrefix(cfg.By, "/")), cfg.FlagAbove)
					if strings.Contains(f.Name, "index=imported") {
						f.Note = fmt.Sprintf("an imported index whose cost grows with %s", spec.Clip(strings.TrimPrefix(cfg.By, "/")))
					}
				}
			}
			fits = append(fits, f)
		}
	}
	if err := writeScaling(out, fits, cfg); err != nil {
		return fmt.Errorf("%w: %v", ErrOutput, err)
	}
	return nil
}

// gomaxprocsValue returns the value a name gives the parameter by ("/n")
// when benchfmt took it for the name's GOMAXPROCS suffix: "-5" for
// "S/n=-5", whose last part benchfmt reads as "/n=" and "-5". It returns
// "" when the name has no such part.
func gomaxprocsValue(name, by string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	param, v, ok := strings.Cut(name[i+1:], "=")
	if !ok || "/"+param != by || !strings.HasPrefix(v, "-") {
		return ""
	}
	if _, err := strconv.Atoi(v[1:]); err != nil || strings.HasPrefix(v[1:], "+") {
		return ""
	}
	return v
}

// fitLogLog fits ys = a + k·xs (logs already taken) and sets the exponent,
// its interval and R².
func fitLogLog(f *Fit, xs, ys []float64, confidence float64) {
	a, k := stat.LinearRegression(xs, ys, nil, false)
	f.Exponent = k
	f.R2 = stat.RSquared(xs, ys, nil, a, k)
	n := len(xs)
	if n < 3 {
		return
	}
	mx := stat.Mean(xs, nil)
	var ssr, sxx float64
	for i := range xs {
		r := ys[i] - (a + k*xs[i])
		ssr += r * r
		d := xs[i] - mx
		sxx += d * d
	}
	se := math.Sqrt(ssr / float64(n-2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(1 - (1-confidence)/2)
	f.Lo, f.Hi, f.HasInterval = k-t*se, k+t*se, true
}

// writeScaling writes fits to out in one Write: an interruption leaves
// out with the whole table or none of it.
func writeScaling(out io.Writer, fits []Fit, cfg ScalingConfig) error {
	var whole bytes.Buffer
	bw := bufio.NewWriter(&whole)
	switch cfg.Format {
	case "json":
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if fits == nil {
			fits = []Fit{}
		}
		if err := enc.Encode(fits); err != nil {
			return err
		}
	case "csv":
		cw := csv.NewWriter(bw)
		cw.Write([]string{"unit", "config", "name", "points", "samples", "exponent", "lo", "hi", "r2", "grows", "note"})
		for _, f := range fits {
			k, lo, hi, r2 := "", "", "", ""
			if !math.IsNaN(f.Exponent) { // fitted: a fit's slope is finite
				k, r2 = fmtFloat(f.Exponent), fmtFloat(f.R2)
			}
			if f.HasInterval {
				lo, hi = fmtFloat(f.Lo), fmtFloat(f.Hi)
			}
			cw.Write([]string{f.Unit, strings.Join(f.Config, "; "), f.Name, strconv.Itoa(f.Points), strconv.Itoa(f.Samples),
				k, lo, hi, r2, strconv.FormatBool(f.Grows), f.Note})
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	default:
		fmt.Fprintf(bw, "growth exponent k in value = c·%s^k, %.0f%% interval, least squares on log-log data\n",
			spec.Clip(strings.TrimPrefix(cfg.By, "/")), cfg.Confidence*100)
		tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tunit\tpoints\tk\tinterval\tR²\tflag")
		for _, f := range fits {
			k, iv, r2 := "", "", ""
			if f.Points >= 2 && f.Note == "" || f.Grows {
				k, r2 = fixed3(f.Exponent), fixed3(f.R2)
				if f.HasInterval {
					iv = "[" + fixed3(f.Lo) + ", " + fixed3(f.Hi) + "]"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", show(f.Name), f.Unit, f.Points, k, iv, r2, f.Note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := out.Write(whole.Bytes())
	return err
}

// fixed3 formats v with three decimals, without a "-0.000".
func fixed3(v float64) string {
	if math.Abs(v) < 0.0005 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
