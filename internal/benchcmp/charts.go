package benchcmp

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// colColor colors column j of a table; the baseline is gray.
func colColor(j int) color.RGBA {
	palette := [...]color.RGBA{
		{R: 110, G: 110, B: 110, A: 255},
		{R: 31, G: 119, B: 180, A: 255},
		{R: 255, G: 127, B: 14, A: 255},
		{R: 44, G: 160, B: 44, A: 255},
		{R: 148, G: 103, B: 189, A: 255},
		{R: 140, G: 86, B: 75, A: 255},
	}
	return palette[j%len(palette)]
}

func verdictColor(v Verdict) color.RGBA {
	switch v {
	case Regression:
		return color.RGBA{R: 214, G: 39, B: 40, A: 255}
	case Worse:
		return color.RGBA{R: 230, G: 145, B: 56, A: 255}
	case Better:
		return color.RGBA{R: 44, G: 160, B: 44, A: 255}
	case Changed:
		return color.RGBA{R: 31, G: 119, B: 180, A: 255}
	default:
		return color.RGBA{R: 150, G: 150, B: 150, A: 255}
	}
}

// svgOf renders p as an inline <svg> element (no XML prolog).
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s, nil
}

func chartHeight(rows int) vg.Length {
	return vg.Length(math.Max(2.5, 0.28*float64(rows)+1.2)) * vg.Inch
}

// reversed returns the row names bottom-up, so the chart reads top-down in
// table order.
func rowNames(t *Table) []string {
	names := make([]string, len(t.Rows))
	for i, r := range t.Rows {
		names[len(t.Rows)-1-i] = show(r.Name)
	}
	return names
}

// distributionChart draws every sample of every column, relative to the
// row's baseline median, one row per benchmark.
func distributionChart(t *Table) (string, error) {
	p := plot.New()
	p.Title.Text = "samples / baseline median (" + t.Unit + ")"
	p.X.Label.Text = "ratio to the median of " + show(t.Columns[0])
	p.NominalY(rowNames(t)...)
	p.Add(plotter.NewGrid())
	n := len(t.Rows)
	k := len(t.Columns)
	for j, col := range t.Columns {
		var xys plotter.XYs
		for i, r := range t.Rows {
			ref := refCenter(r)
			c := r.Cells[j]
			if c == nil || ref == 0 {
				continue
			}
			y := float64(n-1-i) + (float64(j)-float64(k-1)/2)*0.22
			for _, v := range c.Values {
				// A ratio that overflows is not drawn: gonum refuses
				// an infinite point.
				if x := v / ref; x > 0 && !math.IsInf(x, 0) {
					xys = append(xys, plotter.XY{X: x, Y: y})
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", err
		}
		s.GlyphStyle.Color = colColor(j)
		s.GlyphStyle.Radius = vg.Points(2.2)
		p.Add(s)
		p.Legend.Add(show(col), s)
	}
	addUnityLine(p, n)
	logIfWide(p)
	p.Legend.Top = true
	return svgOf(p, 9*vg.Inch, chartHeight(n))
}

// logIfWide puts the X axis of a ratio chart on a log scale when the
// ratios span more than a factor of four, so that a 100x change and the
// spread of a sample are both visible, and widens it for the legend.
//
// The axis stays finite: a range that spans hundreds of decades (a median
// of 1e250 against 1) is widened in log space and clamped to the largest
// float, and labelled with at most maxTicks ticks. A range that does not
// hold only positive finite numbers stays linear.
func logIfWide(p *plot.Plot) {
	p.X.Min = math.Min(p.X.Min, 1)
	p.X.Max = math.Max(p.X.Max, 1)
	// Leave the right quarter to the legend, which gonum draws inside the
	// plot area.
	if p.X.Min > 0 && p.X.Max/p.X.Min > 4 && !math.IsInf(p.X.Max, 0) {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = boundedLogTicks{}
		p.X.Label.Text += " (log scale)"
		lo, hi := math.Log(p.X.Min), math.Log(p.X.Max)
		p.X.Max = math.Min(math.Exp(hi+(hi-lo)/3), math.MaxFloat64)
	} else {
		p.X.Max += (p.X.Max - p.X.Min) / 3
	}
}

// maxTicks is the most labelled ticks boundedLogTicks gives an axis.
const maxTicks = 10

// boundedLogTicks is gonum's LogTicks, one tick per decade, thinned to at
// most maxTicks labelled ticks (and then no minor ones) over a range of
// many decades, so that a wide axis does not draw hundreds of ticks.
type boundedLogTicks struct{}

// Ticks returns the ticks of [min, max].
func (boundedLogTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(min, max)
	var major []plot.Tick
	for _, t := range ticks {
		if t.Label != "" {
			major = append(major, t)
		}
	}
	if len(major) <= maxTicks {
		return ticks
	}
	step := (len(major) + maxTicks - 1) / maxTicks
	var out []plot.Tick
	for i, t := range major {
		if i%step == 0 {
			out = append(out, t)
		}
	}
	return out
}

// refCenter is the center a row's samples are drawn relative to: the
// baseline's, else the first column's that has one.
func refCenter(r *Row) float64 {
	for _, c := range r.Cells {
		if c != nil && c.Center != 0 {
			return c.Center
		}
	}
	return 0
}

func addUnityLine(p *plot.Plot, n int) {
	l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(n) - 0.5}})
	if err == nil {
		l.LineStyle.Color = color.Black
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
	}
}

// ratioChart draws each compared column's ratio of medians to the
// baseline, colored by verdict, with the threshold band. A ratio that is not
// a finite positive number is left out: a baseline median of 0 with another
// median that is not (a count of errors that went from none to some), or
// medians of opposite signs. left names the rows with such a ratio, each
// followed by why, for the caption; the table shows their delta.
func ratioChart(t *Table) (svg string, left []string, err error) {
	p := plot.New()
	p.Title.Text = "median / baseline median (" + t.Unit + "), colored by verdict"
	p.X.Label.Text = "ratio to " + show(t.Columns[0])
	p.NominalY(rowNames(t)...)
	p.Add(plotter.NewGrid())
	n := len(t.Rows)
	k := len(t.Columns)
	var xs struct{ max float64 } // the largest ratio drawn
	for j := 1; j < k; j++ {
		var xys plotter.XYs
		var verdicts []Verdict
		for i, r := range t.Rows {
			c, b := r.Cells[j], r.Cells[0]
			if c == nil || b == nil || c.Center == 0 && b.Center == 0 {
				// No ratio, or 0/0: equal medians, drawn as nothing.
				continue
			}
			x := c.Center / b.Center
			if !(x > 0) || math.IsInf(x, 0) {
				why := "a ratio beyond float64"
				switch {
				case b.Center == 0 || c.Center == 0:
					why = "a median of 0 against one that is not, as a count going from none to some"
				case x < 0:
					why = "medians of opposite signs"
				}
				if l := show(r.Name) + " (" + why + ")"; !slices.Contains(left, l) {
					left = append(left, l)
				}
				continue
			}
			y := float64(n-1-i) + (float64(j)-float64(k)/2)*0.22
			xys = append(xys, plotter.XY{X: x, Y: y})
			xs.max = math.Max(xs.max, x)
			verdicts = append(verdicts, c.Verdict)
		}
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", nil, err
		}
		s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
			return draw.GlyphStyle{Color: verdictColor(verdicts[i]), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		}
		p.Add(s)
		if k > 2 {
			p.Legend.Add(show(t.Columns[j]), s)
		}
	}
	addUnityLine(p, n)
	if t.Threshold > 0 && t.Better != Unknown {
		bad := 1 + t.Threshold/100
		if t.Better == Higher {
			bad = 1 - t.Threshold/100
		}
		// A threshold of 100% or more for a higher-is-better unit has
		// no line on a ratio axis (a ratio of 0 or less), and one so far
		// beyond the data would only squeeze it: neither is drawn.
		far := xs.max > 0 && bad > 1 && bad > 100*xs.max
		l, err := plotter.NewLine(plotter.XYs{{X: bad, Y: -0.5}, {X: bad, Y: float64(n) - 0.5}})
		if bad > 0 && !far && !math.IsInf(bad, 0) && err == nil {
			l.LineStyle.Color = verdictColor(Regression)
			l.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("threshold %g%%", t.Threshold), l)
		}
	}
	logIfWide(p)
	for _, v := range []Verdict{Regression, Worse, Better, Changed, Noise} {
		s, _ := plotter.NewScatter(plotter.XYs{})
		s.GlyphStyle = draw.GlyphStyle{Color: verdictColor(v), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Legend.Add(string(v), s)
	}
	p.Legend.Top = true
	svg, err = svgOf(p, 9*vg.Inch, chartHeight(n))
	return svg, left, err
}

// nameParams splits a benchmark name into its base and key=value parts,
// dropping a -N GOMAXPROCS suffix.
func nameParams(name string) (parts []string) {
	parts = strings.Split(name, "/")
	last := parts[len(parts)-1]
	if i := strings.LastIndexByte(last, '-'); i > 0 {
		if _, err := strconv.Atoi(last[i+1:]); err == nil {
			parts[len(parts)-1] = last[:i]
		}
	}
	return parts
}

// scalingKey picks the name parameter to draw scaling against: by (as
// "/key") if given, else the key with the most distinct numeric values (at
// least two). It returns "" if there is none.
func scalingKey(t *Table, by string) string {
	if by != "" {
		return strings.TrimPrefix(by, "/")
	}
	vals := map[string]map[float64]bool{}
	numeric := map[string]bool{}
	for _, r := range t.Rows {
		for _, part := range nameParams(r.Name)[1:] {
			key, v, ok := strings.Cut(part, "=")
			if !ok {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if _, seen := numeric[key]; !seen {
				numeric[key] = true
				vals[key] = map[float64]bool{}
			}
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				numeric[key] = false
				continue
			}
			vals[key][x] = true
		}
	}
	best, bestN := "", 1
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if numeric[k] && len(vals[k]) > bestN {
			best, bestN = k, len(vals[k])
		}
	}
	return best
}

// scalingSeries is one line of the scaling chart.
type scalingSeries struct {
	label  string
	col    int
	xs, ys []float64 // parameter and center, for the line
	lx, ly []float64 // logs of every sample, for the fit
	fit    Fit
}

// scalingSeriesOf returns the series of the scaling chart of t against
// the name parameter key, by label, and their labels in order: none when
// key is "" or a row's value of key is not a positive number. A median of
// 0 or less, which log axes cannot draw, is left out, unless anyCenter:
// then every median is in (for warnScaleBy, which tells the two apart).
func scalingSeriesOf(t *Table, key string, anyCenter bool) (map[string]*scalingSeries, []string) {
	if key == "" {
		return nil, nil
	}
	byLabel := map[string]*scalingSeries{}
	var order []string
	for _, r := range t.Rows {
		parts := nameParams(r.Name)
		var x float64
		var rest []string
		found := false
		for _, part := range parts {
			if k, v, ok := strings.Cut(part, "="); ok && k == key {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || !(f > 0) || math.IsInf(f, 0) {
					return nil, nil
				}
				x, found = f, true
				continue
			}
			rest = append(rest, part)
		}
		if !found {
			continue
		}
		for j, c := range r.Cells {
			if c == nil || c.Center <= 0 && !anyCenter {
				continue
			}
			label := strings.Join(rest, "/")
			if len(t.Columns) > 1 {
				label += " [" + t.Columns[j] + "]"
			}
			s := byLabel[label]
			if s == nil {
				s = &scalingSeries{label: label, col: j}
				byLabel[label] = s
				order = append(order, label)
			}
			s.xs = append(s.xs, x)
			s.ys = append(s.ys, c.Center)
			for _, v := range c.Values {
				if v > 0 {
					s.lx = append(s.lx, math.Log(x))
					s.ly = append(s.ly, math.Log(v))
				}
			}
		}
	}
	return byLabel, order
}

// drawable reports whether the series has two values of the parameter,
// which a line and a fit need.
func (s *scalingSeries) drawable() bool {
	return slices.ContainsFunc(s.xs, func(x float64) bool { return x != s.xs[0] })
}

// scalingChart draws the centers against the parameter key on log-log
// axes, one line per benchmark and column, with the fitted exponent in the
// legend. It returns "" when no benchmark has two values of key.
func scalingChart(t *Table, key string, confidence float64) (string, []Fit, error) {
	byLabel, order := scalingSeriesOf(t, key, false)
	if !slices.ContainsFunc(order, func(l string) bool { return byLabel[l].drawable() }) {
		return "", nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s against %s (log-log), fitted exponent k", t.Unit, show(key))
	p.X.Label.Text = show(key)
	p.Y.Label.Text = t.Unit
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = boundedLogTicks{}, boundedLogTicks{}
	p.Add(plotter.NewGrid())
	var fits []Fit
	drawn := 0
	for i, label := range order {
		s := byLabel[label]
		distinct := map[float64]bool{}
		for _, x := range s.xs {
			distinct[x] = true
		}
		if len(distinct) < 2 {
			continue
		}
		s.fit = Fit{Name: label, Unit: t.Unit, Config: t.Config, Points: len(distinct), Samples: len(s.lx)}
		fitLogLog(&s.fit, s.lx, s.ly, confidence)
		fits = append(fits, s.fit)
		xys := make(plotter.XYs, len(s.xs))
		for i := range s.xs {
			xys[i] = plotter.XY{X: s.xs[i], Y: s.ys[i]}
		}
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return "", nil, err
		}
		c := colColor(i + 1)
		l.LineStyle.Color, sc.GlyphStyle.Color = c, c
		if s.col == 0 && len(t.Columns) > 1 {
			l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l, sc)
		p.Legend.Add(fmt.Sprintf("%d: k=%.2f", len(fits), s.fit.Exponent), l, sc)
		drawn++
	}
	if drawn == 0 {
		return "", nil, nil
	}
	// Every series flat at one value: gonum widens a one-point range by
	// ±1, which is below 0 for a value under 1 (a time of 1000 ns is 1e-6
	// s) and fails the log scale; widen it by a factor instead. At the
	// ends of the float64 range the factor would give 0 (5e-324 / 2) or
	// +Inf (1e308 * 2), which the log scale refuses too: that side then
	// stays at the value, and the other is still widened.
	if p.Y.Min == p.Y.Max {
		lo, hi := p.Y.Min/2, p.Y.Max*2
		if !(lo > 0) {
			lo = p.Y.Min
		}
		if math.IsInf(hi, 0) {
			hi = p.Y.Max
		}
		p.Y.Min, p.Y.Max = lo, hi
	}
	p.Legend.Top = true
	p.Legend.Left = true
	svg, err := svgOf(p, 9*vg.Inch, vg.Length(4+0.15*float64(drawn))*vg.Inch)
	return svg, fits, err
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
