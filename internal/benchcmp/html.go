package benchcmp

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// htmlTable is one table of the HTML report with its charts.
type htmlTable struct {
	Headline string
	Config   string
	Header   []string
	Rows     [][]htmlCell
	Notes    []string
	Charts   []htmlChart
}

type htmlCell struct {
	Text  string
	Class string
}

type htmlChart struct {
	Kind    string
	Caption string
	SVG     template.HTML // generated here by gonum/plot's SVG canvas
	Fits    []htmlFit     // the scaling chart's legend, numbered
}

type htmlFit struct {
	N                 int
	Name, K, Interval string
}

// writeHTML writes the report as one self-contained HTML page: tables and
// inline SVG charts drawn with gonum.org/v1/plot, inline style, and no
// script or resource from anywhere else. Text from the result files and
// the command line (names, column labels, configuration) is shown as the
// text report shows it (show): a control character, which html/template
// and the SVG canvas pass through raw and which no HTML page may hold
// (an escape sequence, a NUL), is written escaped, visibly.
func writeHTML(w io.Writer, rep *Report) error {
	var tables []htmlTable
	for _, t := range rep.Tables {
		ht := htmlTable{Headline: headline(rep, t), Notes: t.Notes}
		for i, c := range t.Config {
			if i > 0 {
				ht.Config += " · "
			}
			ht.Config += show(c)
		}
		s := scaler(t)
		ht.Header = []string{"benchmark", show(t.Columns[0])}
		for _, c := range t.Columns[1:] {
			ht.Header = append(ht.Header, show(c), "delta", "p", "verdict")
		}
		for _, r := range t.Rows {
			row := []htmlCell{{Text: show(r.Name), Class: "name"}}
			for j, c := range r.Cells {
				if c == nil {
					row = append(row, htmlCell{Text: "–"})
					if j > 0 {
						row = append(row, htmlCell{}, htmlCell{}, htmlCell{})
					}
					continue
				}
				row = append(row, htmlCell{Text: centerText(s, t, c) + noteMarks(c), Class: "num"})
				if j > 0 {
					row = append(row, htmlCell{Text: deltaText(c), Class: "num"}, htmlCell{Text: pText(t, c), Class: "num"},
						htmlCell{Text: string(c.Verdict), Class: "verdict v-" + verdictClass(c.Verdict)})
				}
			}
			ht.Rows = append(ht.Rows, row)
		}
		dist, err := distributionChart(t)
		if err != nil {
			return fmt.Errorf("%w: drawing the %s distributions: %v", ErrOutput, t.Unit, err)
		}
		ht.Charts = append(ht.Charts, htmlChart{Kind: "distribution", SVG: template.HTML(dist),
			Caption: "Every sample of each benchmark, divided by the median of the first column: the spread of each side, and how far apart they are."})
		if len(t.Columns) > 1 {
			ratio, left, err := ratioChart(t)
			if err != nil {
				return fmt.Errorf("%w: drawing the %s ratios: %v", ErrOutput, t.Unit, err)
			}
			caption := fmt.Sprintf("The median of each column divided by the median of %s (imported/direct with --col /index), colored by verdict; the dashed red line is the regression threshold.", show(t.Columns[0]))
			if len(left) > 0 {
				names := strings.Join(left[:min(len(left), 5)], ", ")
				if len(left) > 5 {
					names += fmt.Sprintf(" and %d more", len(left)-5)
				}
				caption += fmt.Sprintf(" Not drawn, %d row(s) whose ratio is not a finite positive number (the table gives their delta): %s.",
					len(left), names)
			}
			ht.Charts = append(ht.Charts, htmlChart{Kind: "ratio", SVG: template.HTML(ratio), Caption: caption})
		}
		key := scalingKey(t, rep.ScaleBy)
		sc, fits, err := scalingChart(t, key, rep.Confidence)
		if err != nil {
			return fmt.Errorf("%w: drawing the %s scaling: %v", ErrOutput, t.Unit, err)
		}
		if sc != "" {
			var hf []htmlFit
			for i, f := range fits {
				iv := ""
				if f.HasInterval {
					iv = fmt.Sprintf("[%.3f, %.3f]", f.Lo, f.Hi)
				}
				hf = append(hf, htmlFit{N: i + 1, Name: show(f.Name), K: fmt.Sprintf("%.3f", f.Exponent), Interval: iv})
			}
			ht.Charts = append(ht.Charts, htmlChart{Kind: "scaling", SVG: template.HTML(sc), Fits: hf,
				Caption: fmt.Sprintf("Medians against %s on log-log axes; k is the least-squares slope of all samples (value ≈ c·%s^k) with its %.0f%% interval: k≈0 is flat, k≈1 linear.", show(key), show(key), rep.Confidence*100)})
		}
		tables = append(tables, ht)
	}
	var flagged []string
	for _, t := range rep.Tables {
		for _, r := range t.Rows {
			for j, c := range r.Cells {
				if c != nil && c.Verdict == Regression {
					p := ""
					if hasP(t, c) { // an exact unit's has none
						p = fmt.Sprintf("p=%.3f, ", c.P)
					}
					flagged = append(flagged, fmt.Sprintf("%s %s: %s vs %s, %s (%sthreshold %g%%)",
						t.Unit, show(r.Name), show(t.Columns[j]), show(t.Columns[0]), pct(c.DeltaPct), p, t.Threshold))
				}
			}
		}
	}
	return htmlPage().Execute(w, struct {
		Regressions []string
		Legend      string
		Tables      []htmlTable
	}{flagged, markdownLegendPlain(rep), tables})
}

func verdictClass(v Verdict) string {
	switch v {
	case Regression, Worse, Better, Changed:
		return string(v)
	case Noise:
		return "noise"
	default:
		return "other"
	}
}

func markdownLegendPlain(rep *Report) string {
	return fmt.Sprintf("Each cell is the median of the samples with its %.0f%% confidence interval. "+
		"delta is the change of the median against the first column, p the Mann–Whitney U p-value; "+
		"~ means no significant difference at alpha = %g. Verdicts: regression = significant, the bad way and past "+
		"the unit's threshold; worse = significant, the bad way, within the threshold; better; changed = significant in "+
		"a unit without a known direction, or with equal medians (0.00%%); too few samples = samples too small to show any difference.",
		rep.Confidence*100, rep.Alpha)
}

func htmlPage() *template.Template {
	return template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>benchcmp report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-family: ui-monospace, monospace; }
.v-regression { color: #b00; font-weight: bold; } .v-worse { color: #c60; }
.v-better { color: #080; } .v-changed { color: #06c; } .v-noise, .v-other { color: #888; }
.regressions { color: #b00; } .config { color: #666; } .notes { color: #666; font-size: .9em; }
figure.chart { margin: 1em 0; } figure.chart svg { max-width: 100%; height: auto; }
figcaption { color: #444; max-width: 60em; }
</style>
</head>
<body>
<h1>benchcmp: {{with .Regressions}}{{len .}} regression(s){{else}}no regression{{end}}</h1>
{{with .Regressions}}<ul class="regressions">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>{{.Legend}}</p>
{{range .Tables}}<section class="table">
<h2>{{.Headline}}</h2>
{{if .Config}}<p class="config">{{.Config}}</p>{{end}}
<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td class="{{.Class}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{if .Notes}}<ol class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ol>{{end}}
{{range .Charts}}<figure class="chart" data-chart="{{.Kind}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
{{if .Fits}}<table class="fits"><tr><th>#</th><th>benchmark</th><th>k</th><th>interval</th></tr>
{{range .Fits}}<tr><td class="num">{{.N}}</td><td class="name">{{.Name}}</td><td class="num">{{.K}}</td><td class="num">{{.Interval}}</td></tr>
{{end}}</table>{{end}}
</figure>
{{end}}</section>
{{end}}</body>
</html>
`))
}
