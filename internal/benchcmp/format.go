package benchcmp

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/tracebench/tracebench/workloads/spec"
)

// show returns s, text a result file or the command line gives (a
// benchmark name, a column label, a configuration line), as a report or a
// message shows it: whole, unless it holds a control character or bytes
// that are not UTF-8 (an escape sequence, a newline, a bidirectional
// override), and then quoted as a file path is (spec.Path: escaped, its
// first 80 bytes and its length), so that it never reaches a terminal
// raw. The csv and json reports keep such text as read: escaping there
// would change the data.
func show(s string) string { return spec.Path(s) }

// showAll is show of each of list.
func showAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = show(s)
	}
	return out
}

// writeReport writes rep to w in format (one of Formats), in one Write:
// an interruption leaves w with the whole report or none of it.
func writeReport(w io.Writer, rep *Report, format string) error {
	var bw bytes.Buffer
	var err error
	switch format {
	case "text":
		err = writeText(&bw, rep)
	case "markdown":
		err = writeMarkdown(&bw, rep)
	case "csv":
		err = writeCSV(&bw, rep)
	case "json":
		err = writeJSON(&bw, rep)
	case "html":
		err = writeHTML(&bw, rep)
	default:
		err = fmt.Errorf("%w: unknown format %s", ErrUsage, spec.Quote(format))
	}
	if err != nil {
		return err
	}
	_, err = w.Write(bw.Bytes())
	return err
}

// scaler returns the common scale of a table's centers.
func scaler(t *Table) benchunit.Scaler {
	var vals []float64
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c != nil {
				vals = append(vals, c.Center)
			}
		}
	}
	cls := benchunit.ClassOf(t.Unit)
	sc := benchunit.CommonScale(vals, cls)
	// The scale fits the smallest values; one as large as 1e300 beside
	// one as small as 1e-300 would then read as +Inf, and 1e20 beside
	// 1e-20 as thirty digits, past what a float64 holds. Such a table,
	// whose largest value is 1e15 or more of the scale, is written in
	// powers of ten of its largest value ("1.000e20"), where the smallest
	// read as 0.
	largest := 0.0
	for _, v := range vals {
		largest = max(largest, math.Abs(v))
	}
	if largest/sc.Factor >= 1e15 {
		k := math.Floor(math.Log10(largest))
		sc = benchunit.Scaler{Prec: 3, Factor: math.Pow(10, k), Prefix: "e" + strconv.Itoa(int(k))}
	}
	return sc
}

// centerText formats a cell's center and interval, as "2.91m ±5%". An
// exact unit's center is the most frequent value, and Lo and Hi the
// smallest and largest: values that vary show their spread as benchstat
// does ("10.000 ±20%" for 10 to 12), beside the note that says so, and
// values that do not show none (README, "Read the report").
func centerText(s benchunit.Scaler, t *Table, c *Cell) string {
	v := s.Format(c.Center)
	if t.Summary == "exact" && c.Lo == c.Hi {
		return v
	}
	sum := benchmath.Summary{Center: c.Center, Lo: c.Lo, Hi: c.Hi}
	return v + " ±" + sum.PctRangeString()
}

// deltaText formats a compared cell's delta: "~" for noise, the percentage
// otherwise.
func deltaText(c *Cell) string {
	switch c.Verdict {
	case Noise, TooFew:
		return "~"
	case Missing:
		return ""
	}
	if c.DeltaPct == 0 {
		// Significant with equal medians, as benchstat writes it.
		return "0.00%"
	}
	return pct(c.DeltaPct)
}

func pct(v float64) string {
	if math.IsInf(v, 0) {
		if v > 0 {
			return "+∞%"
		}
		return "-∞%"
	}
	return fmt.Sprintf("%+.2f%%", v)
}

// hasP reports whether a cell has a p-value to show: a compared cell of a
// unit that is not exact, with samples large enough to show a change (a
// "too few samples" verdict has no p worth printing).
func hasP(t *Table, c *Cell) bool {
	return c.Compared && t.Summary != "exact" && c.Verdict != TooFew
}

// pText formats a compared cell's p-value; exact units have none.
func pText(t *Table, c *Cell) string {
	if !hasP(t, c) {
		return ""
	}
	return strconv.FormatFloat(c.P, 'f', 3, 64)
}

func noteMarks(c *Cell) string {
	if c == nil || len(c.Notes) == 0 {
		return ""
	}
	var b strings.Builder
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "(%d)", n+1)
	}
	return " " + b.String()
}

// headline says how to read a table: unit, direction, threshold, statistic.
func headline(rep *Report, t *Table) string {
	dir := "direction unknown"
	switch t.Better {
	case Lower:
		dir = "lower is better"
	case Higher:
		dir = "higher is better"
	}
	stat := fmt.Sprintf("median ±%.0f%% CI, Mann–Whitney U at alpha %g", rep.Confidence*100, rep.Alpha)
	if t.Summary == "exact" {
		stat = "exact values"
	}
	return fmt.Sprintf("%s: %s; threshold %g%%; %s", t.Unit, dir, t.Threshold, stat)
}

func writeText(w io.Writer, rep *Report) error {
	if len(rep.Tables) == 0 {
		_, err := fmt.Fprintln(w, "no results left after filtering")
		return err
	}
	for i, t := range rep.Tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, headline(rep, t))
		if len(t.Config) > 0 {
			fmt.Fprintln(w, strings.Join(showAll(t.Config), "  "))
		}
		s := scaler(t)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		hdr := []string{"name", show(t.Columns[0])}
		for _, c := range t.Columns[1:] {
			hdr = append(hdr, show(c), "delta", "p", "verdict")
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t"))
		for _, r := range t.Rows {
			f := []string{show(r.Name)}
			for j, c := range r.Cells {
				if c == nil {
					f = append(f, "-")
					if j > 0 {
						f = append(f, "", "", "")
					}
					continue
				}
				f = append(f, centerText(s, t, c)+noteMarks(c))
				if j > 0 {
					f = append(f, deltaText(c), pText(t, c), string(c.Verdict))
				}
			}
			fmt.Fprintln(tw, strings.Join(f, "\t"))
		}
		f := []string{"geomean"}
		var gnotes []string
		for j, g := range t.Geomean {
			switch {
			case g == nil:
				f = append(f, "-")
			case !g.HasCenter:
				f = append(f, "?")
			default:
				f = append(f, s.Format(g.Center))
			}
			if g != nil {
				for _, n := range g.Notes {
					gnotes = appendNew(gnotes, n)
				}
			}
			if j > 0 {
				d := ""
				switch {
				case g != nil && g.HasRatio:
					d = pct((g.Ratio - 1) * 100)
				case g != nil && len(g.Notes) > 0:
					d = "?"
				}
				f = append(f, d, "", "")
			}
		}
		fmt.Fprintln(tw, strings.Join(f, "\t"))
		if err := tw.Flush(); err != nil {
			return err
		}
		for n, note := range t.Notes {
			fmt.Fprintf(w, "(%d) %s\n", n+1, note)
		}
		for _, note := range gnotes {
			fmt.Fprintf(w, "geomean: %s\n", note)
		}
	}
	return nil
}

// markdownLegend explains the markdown table to a pull request's reader.
func markdownLegend(rep *Report) string {
	return fmt.Sprintf("Each cell is the median of the samples with its %.0f%% confidence interval. "+
		"**delta** is the change of the median against the first column, with the Mann–Whitney U p-value; "+
		"`~` means no significant difference at α = %g. "+
		"**verdict**: `regression` = significant, the bad way and past the unit's **threshold**; "+
		"`worse` = significant, the bad way, within the threshold; `better`; `changed` = significant in a unit "+
		"without a known direction, or with equal medians (0.00%%); `too few samples` = samples too small to show any difference; `no baseline` = no result of the first column to compare with (not compared).",
		rep.Confidence*100, rep.Alpha)
}

// mdEscape escapes s for a markdown table cell: markdown's own marks (the
// backslash too, or a name's `\|` would show as `|`, and brackets, or a
// name such as `B/[x](u)` would show as a link), and HTML, which a pull
// request comment would otherwise render.
func mdEscape(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`",
	"[", `\[`, "]", `\]`, "~", `\~`, "&", "&amp;", "<", "&lt;", ">", "&gt;")

func writeMarkdown(w io.Writer, rep *Report) error {
	var parts []string
	if rep.Compared() == 0 {
		parts = append(parts, "nothing compared")
	}
	if regs := rep.Regressions(); regs > 0 {
		parts = append(parts, fmt.Sprintf("**%d regression(s)**", regs))
	}
	if lost := rep.Lost(); len(lost) > 0 && rep.Compared() > 0 {
		parts = append(parts, fmt.Sprintf("**%d benchmark(s) of the baseline missing**", len(lost)))
	}
	if len(rep.Failures) > 0 {
		parts = append(parts, "**a run failed**")
	}
	verdict := strings.Join(parts, ", ")
	if verdict == "" {
		verdict = "no regression"
	}
	fmt.Fprintf(w, "## benchcmp: %s\n\n%s\n", verdict, markdownLegend(rep))
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "\n### %s\n\n", mdEscape(headline(rep, t)))
		if len(t.Config) > 0 {
			fmt.Fprintf(w, "%s\n\n", mdEscape(strings.Join(showAll(t.Config), " · ")))
		}
		s := scaler(t)
		hdr := []string{"benchmark", mdEscape(show(t.Columns[0]))}
		align := []string{"---", "--:"}
		for _, c := range t.Columns[1:] {
			hdr = append(hdr, mdEscape(show(c)), "delta", "threshold", "verdict")
			align = append(align, "--:", "--:", "--:", "---")
		}
		fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(hdr, " | "), strings.Join(align, "|"))
		for _, r := range t.Rows {
			f := []string{mdEscape(show(r.Name))}
			for j, c := range r.Cells {
				if c == nil {
					f = append(f, "–")
					if j > 0 {
						f = append(f, "", "", "")
					}
					continue
				}
				f = append(f, centerText(s, t, c)+noteMarks(c))
				if j > 0 {
					d := deltaText(c)
					if hasP(t, c) {
						d += fmt.Sprintf(" (p=%.3f)", c.P)
					}
					v := string(c.Verdict)
					if c.Verdict == Regression {
						v = "**regression**"
					}
					f = append(f, d, fmt.Sprintf("%g%%", t.Threshold), v)
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(f, " | "))
		}
		for n, note := range t.Notes {
			fmt.Fprintf(w, "\n(%d) %s", n+1, mdEscape(note))
		}
		if len(t.Notes) > 0 {
			fmt.Fprintln(w)
		}
	}
	return nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"unit", "config", "name", "column", "n", "center", "lo", "hi", "confidence",
		"baseline", "delta_pct", "p", "alpha", "threshold_pct", "better", "verdict", "notes"})
	for _, t := range rep.Tables {
		for _, r := range t.Rows {
			for j, c := range r.Cells {
				if c == nil {
					continue
				}
				var delta, p, verdict string
				if c.Compared {
					delta = fmtFloat(c.DeltaPct)
					if !math.IsNaN(c.P) { // an exact unit has no p-value
						p = fmtFloat(c.P)
					}
				}
				verdict = string(c.Verdict)
				var notes []string
				for _, n := range c.Notes {
					notes = append(notes, t.Notes[n])
				}
				cw.Write([]string{t.Unit, strings.Join(t.Config, "; "), r.Name, t.Columns[j],
					strconv.Itoa(len(c.Values)), fmtFloat(c.Center), fmtFloat(c.Lo), fmtFloat(c.Hi),
					fmtFloat(c.Confidence), t.Columns[0], delta, p, fmtFloat(rep.Alpha),
					fmtFloat(t.Threshold), t.Better.String(), verdict, strings.Join(notes, "; ")})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonNum is v for JSON: nil (null) for ±Inf and NaN, which JSON cannot
// hold.
func jsonNum(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes the geomean with null for a center or ratio that is
// not finite (a ratio that overflows).
func (g Geomean) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center    *float64 `json:"center"`
		HasCenter bool     `json:"has_center"`
		Ratio     *float64 `json:"ratio"`
		HasRatio  bool     `json:"has_ratio"`
		Notes     []string `json:"notes,omitempty"`
	}{cond(g.HasCenter, jsonNum(g.Center)), g.HasCenter, cond(g.HasRatio, jsonNum(g.Ratio)), g.HasRatio, g.Notes})
}

// MarshalJSON writes the cell with null for an infinite or undefined
// interval bound or delta, which JSON cannot hold. A compared cell always
// has delta_pct and p, null when not finite (a delta from a baseline of
// 0); a cell of the baseline column has neither.
func (c *Cell) MarshalJSON() ([]byte, error) {
	num := jsonNum
	// An interface holding a nil *float64 is not empty, so omitempty
	// keeps it and it is written as null.
	var delta, p any
	if c.Compared {
		delta, p = num(c.DeltaPct), num(c.P)
	}
	return json.Marshal(struct {
		Values     []float64 `json:"values"`
		Center     *float64  `json:"center"`
		Lo         *float64  `json:"lo"`
		Hi         *float64  `json:"hi"`
		Confidence *float64  `json:"confidence"`
		Compared   bool      `json:"compared"`
		DeltaPct   any       `json:"delta_pct,omitempty"`
		P          any       `json:"p,omitempty"`
		Verdict    Verdict   `json:"verdict,omitempty"`
		Notes      []int     `json:"notes,omitempty"`
	}{c.Values, num(c.Center), num(c.Lo), num(c.Hi), num(c.Confidence), c.Compared,
		delta, p, c.Verdict, c.Notes})
}

func cond(ok bool, v *float64) *float64 {
	if !ok {
		return nil
	}
	return v
}

func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
