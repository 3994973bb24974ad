package benchcmp

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Report is everything Compare computes, before it is formatted. Its JSON
// form is the json format.
type Report struct {
	// Alpha is the significance level of every comparison.
	Alpha float64 `json:"alpha"`
	// Confidence is the requested level of the intervals.
	Confidence float64 `json:"confidence"`
	// Tables holds one table per unit and configuration, in benchproc's
	// key order.
	Tables []*Table `json:"tables"`
	// ScaleBy is the parameter of the HTML report's scaling charts.
	ScaleBy string `json:"-"`
	// Columns are the columns of every table, in order; Columns[0] is the
	// baseline.
	Columns []string `json:"-"`
	// Unpaired lists the rows of one column that have no result in
	// another: the benchmark sets of the columns differ.
	Unpaired []Unpaired `json:"unpaired,omitempty"`
	// Failures are go test's FAIL lines in the files, as "FILE:LINE: TEXT":
	// a run that failed, whose results are missing or partial.
	Failures []string `json:"failures,omitempty"`
	// ran holds, per configuration and column (ranKey), the benchmarks
	// with a result in any unit: a row unpaired in one unit only (a run
	// without -benchmem) lost no benchmark.
	ran map[string]map[string]bool
}

// ranKey keys Report.ran.
func ranKey(config []string, column string) string {
	return strings.Join(config, "\n") + "\x00" + column
}

// unitOnly reports whether u's benchmark has a result in its missing
// column in some other unit.
func (r *Report) unitOnly(u Unpaired) bool {
	return r.ran[ranKey(u.Config, u.Missing)][u.Name]
}

// unpairedName is u's name, followed, in parentheses, by those of its
// configuration lines that some table of r does not have: the lines that
// tell it from a benchmark of the same name under another configuration.
func (r *Report) unpairedName(u Unpaired) string {
	var differ []string
	for _, line := range u.Config {
		for _, t := range r.Tables {
			if !slices.Contains(t.Config, line) {
				differ = append(differ, line)
				break
			}
		}
	}
	if len(differ) == 0 {
		return messageName(u.Name)
	}
	return messageName(u.Name) + " (" + strings.Join(differ, ", ") + ")"
}

// messageName is a benchmark's name as a message lists it. The empty name
// is a benchmark too: go test writes "Benchmark 1 5 ns/op" for a function
// named Benchmark (with GOMAXPROCS 1), and benchfmt reads it, as benchstat
// does, with the name "" (README, "Comparing results: benchcmp"). A list
// shows it as "" rather than as nothing.
func messageName(name string) string {
	if name == "" {
		return `""`
	}
	return name
}

// Unpaired is a row with a result in column In but none in column Missing,
// one of them the baseline.
type Unpaired struct {
	Name    string   `json:"name"`
	Unit    string   `json:"unit"`
	Config  []string `json:"config,omitempty"`
	In      string   `json:"in"`
	Missing string   `json:"missing"`
}

// Lost returns the names of the benchmarks of the baseline that some other
// column has no result for in any unit, each once, in report order; a
// name is followed by its configuration lines that not every table shares
// (`F (pkg: example.com/b)`), so that a benchmark lost under one
// configuration is not taken for its namesake under another.
func (r *Report) Lost() []string {
	var names []string
	for _, u := range r.Unpaired {
		if len(r.Columns) > 0 && u.In == r.Columns[0] && !r.unitOnly(u) {
			names = appendNew(names, r.unpairedName(u))
		}
	}
	return names
}

// Table is the comparison of one unit under one configuration.
type Table struct {
	// Unit is the tidied unit (sec/op for ns/op).
	Unit string `json:"unit"`
	// Config lists the configuration lines that define this table, as
	// "key: value", in file order.
	Config []string `json:"config"`
	// Better is the unit's direction (invariant C1).
	Better Direction `json:"better"`
	// Threshold is the unit's regression threshold in percent.
	Threshold float64 `json:"threshold_pct"`
	// Summary names the center: "median" (Mann–Whitney U comparisons) or
	// "exact" (a unit declared assume=exact).
	Summary string `json:"summary"`
	// Columns are the values of the column projection; Columns[0] is the
	// baseline.
	Columns []string `json:"columns"`
	// Rows hold one row per benchmark.
	Rows []*Row `json:"rows"`
	// Geomean holds, per column, the geometric mean of the centers and of
	// the ratios to the baseline; nil where it is not defined.
	Geomean []*Geomean `json:"geomean"`
	// Notes are the warnings cells refer to by index.
	Notes []string `json:"notes,omitempty"`
}

// Row is one benchmark's cells.
type Row struct {
	// Name is the value of the row projection (the full benchmark name).
	Name string `json:"name"`
	// Cells has one entry per column; nil where the column has no result.
	Cells []*Cell `json:"cells"`
}

// Cell is one sample and, outside the baseline column, its comparison with
// the baseline.
type Cell struct {
	// Values are the measurements, ascending, in the table's unit.
	Values []float64 `json:"values"`
	// Center, Lo and Hi are the summary and its confidence interval.
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Confidence is the actual level of [Lo, Hi] (at least the requested).
	Confidence float64 `json:"confidence"`
	// Compared is set when the cell was compared with a baseline cell.
	Compared bool `json:"compared"`
	// DeltaPct is (center - baseline center) / baseline center * 100.
	DeltaPct float64 `json:"delta_pct"`
	// P is the comparison's p-value; NaN in a unit declared assume=exact,
	// whose comparisons have none (null in JSON, empty in CSV).
	P float64 `json:"p"`
	// Verdict judges the comparison; empty in the baseline column.
	Verdict Verdict `json:"verdict,omitempty"`
	// Notes index Table.Notes.
	Notes []int `json:"notes,omitempty"`
}

// Geomean is a column's summary row.
type Geomean struct {
	Center    float64 `json:"center"`
	HasCenter bool    `json:"has_center"`
	Ratio     float64 `json:"ratio"`
	HasRatio  bool    `json:"has_ratio"`
	// Notes say why the center or the ratio is not defined, in
	// benchstat's words.
	Notes []string `json:"notes,omitempty"`
}

// Verdict judges one comparison.
type Verdict string

// Verdicts, from what a reader should act on to what they may ignore.
const (
	// Regression: significant, the bad way, past the threshold (C2).
	Regression Verdict = "regression"
	// Worse: significant and the bad way, within the threshold.
	Worse Verdict = "worse"
	// Better: significant and the good way.
	Better Verdict = "better"
	// Changed: significant in a unit without a known direction, or
	// significant with equal medians (a delta of 0.00%).
	Changed Verdict = "changed"
	// Noise: not significant at alpha.
	Noise Verdict = "~"
	// TooFew: the samples are too small to ever be significant (C5).
	TooFew Verdict = "too few samples"
	// Missing: the baseline has no result for this row, or none in the
	// table's unit at all: the cell is not compared, and never a
	// regression.
	Missing Verdict = "no baseline"
)

// Regressions counts the cells whose verdict is Regression.
func (r *Report) Regressions() int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c != nil && c.Verdict == Regression {
					n++
				}
			}
		}
	}
	return n
}

// Compared counts the cells compared with a baseline cell. A report in
// which it is 0 has no verdict at all, and the gate refuses it.
func (r *Report) Compared() int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c != nil && c.Compared {
					n++
				}
			}
		}
	}
	return n
}

// Testable counts the cells that could be a regression: compared with a
// baseline cell, of a unit with a known direction (a unit without one is
// only ever "changed", benchrun's exact counts among them), and with
// samples that could show a change at all (verdict other than TooFew). A
// gate over a report with none can never fail.
func (r *Report) Testable() int {
	n := 0
	for _, t := range r.Tables {
		if t.Better != Lower && t.Better != Higher {
			continue
		}
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c != nil && c.Compared && c.Verdict != TooFew {
					n++
				}
			}
		}
	}
	return n
}

// Undirected lists the units, as the tables show them, whose compared
// cells have no known direction (neither a Unit line's better= nor one of
// go test's units), and counts the compared cells of units that have one:
// with none of those, a gate can never fail, however many samples a side
// has.
func (r *Report) Undirected() (units []string, directed int) {
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c == nil || !c.Compared {
					continue
				}
				if t.Better == Lower || t.Better == Higher {
					directed++
				} else {
					units = appendNew(units, show(t.Unit))
				}
			}
		}
	}
	return units, directed
}

// Untestable lists, as "name (unit)", the compared rows of a unit with a
// known direction whose samples are too small to show any change
// (verdict TooFew) in some column: rows a gate passes whatever changed.
func (r *Report) Untestable() []string {
	var names []string
	for _, t := range r.Tables {
		if t.Better != Lower && t.Better != Higher {
			continue
		}
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c != nil && c.Compared && c.Verdict == TooFew {
					names = appendNew(names, messageName(row.Name)+" ("+t.Unit+")")
					break
				}
			}
		}
	}
	return names
}

// builder groups results into tables, rows, columns and cells, as
// benchstat's table builder does.
type builder struct {
	tableBy, rowBy, colBy, residue *benchproc.Projection
	unitField                      *benchproc.Field
	tables                         map[benchproc.Key]*builderTable
}

type builderTable struct {
	rows, cols map[benchproc.Key]struct{}
	cells      map[cellKey]*builderCell
}

type cellKey struct{ row, col benchproc.Key }

type builderCell struct {
	values  []float64
	residue map[benchproc.Key]struct{}
}

func newBuilder(tableBy, rowBy, colBy, residue *benchproc.Projection) *builder {
	fields := tableBy.Fields()
	return &builder{
		tableBy: tableBy, rowBy: rowBy, colBy: colBy, residue: residue,
		unitField: fields[len(fields)-1],
		tables:    map[benchproc.Key]*builderTable{},
	}
}

func (b *builder) add(r *benchfmt.Result) {
	tableKeys := b.tableBy.ProjectValues(r)
	ck := cellKey{b.rowBy.Project(r), b.colBy.Project(r)}
	res := b.residue.Project(r)
	for i, tk := range tableKeys {
		t := b.tables[tk]
		if t == nil {
			t = &builderTable{rows: map[benchproc.Key]struct{}{}, cols: map[benchproc.Key]struct{}{}, cells: map[cellKey]*builderCell{}}
			b.tables[tk] = t
		}
		c := t.cells[ck]
		if c == nil {
			c = &builderCell{residue: map[benchproc.Key]struct{}{}}
			t.cells[ck] = c
			t.rows[ck.row] = struct{}{}
			t.cols[ck.col] = struct{}{}
		}
		c.values = append(c.values, r.Values[i].Value)
		c.residue[res] = struct{}{}
	}
}

type reportOpts struct {
	alpha, confidence float64
	thresholds        *benchmath.Thresholds
	units             benchfmt.UnitMetadataMap
	directions        map[string]Direction
	threshold         thresholdSet
}

func sortedKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

func (b *builder) report(o reportOpts) *Report {
	rep := &Report{Alpha: o.alpha, Confidence: o.confidence, Tables: []*Table{}}
	allCols := map[benchproc.Key]struct{}{}
	for _, bt := range b.tables {
		for c := range bt.cols {
			allCols[c] = struct{}{}
		}
	}
	colKeys := sortedKeys(allCols)
	for _, c := range colKeys {
		rep.Columns = append(rep.Columns, c.StringValues())
	}
	for _, tk := range sortedKeys(b.tables) {
		bt := b.tables[tk]
		unit := tk.Get(b.unitField)
		assumption := o.units.GetAssumption(unit)
		dir, ok := o.directions[unit]
		if !ok {
			dir = defaultDirection(unit)
		}
		t := &Table{
			Unit:      unit,
			Config:    configOf(tk),
			Better:    dir,
			Threshold: o.threshold.of(unit),
			Summary:   assumption.SummaryLabel(),
		}
		if assumption == benchmath.AssumeExact {
			t.Summary = "exact"
		}
		rows, cols := sortedKeys(bt.rows), sortedKeys(bt.cols)
		if len(cols) > 0 && cols[0] != colKeys[0] {
			// A unit or a configuration the baseline does not have
			// (only the newer files ran with -benchmem, or with
			// another gomaxprocs): benchstat compares its table's
			// columns with the first that has it, so that a change of
			// new2 against new1 could fail a gate against old, and a
			// table of one column named the newer file its baseline
			// (CSV's and JSON's baseline) with no verdict. The baseline
			// stays the table's first column, every cell empty, and no
			// cell is compared: each is "no baseline", as a row the
			// baseline lacks is in any table, and the warning on the
			// unit the baseline lacks says why (whyNothingCompared
			// passes the empty column over).
			cols = append([]benchproc.Key{colKeys[0]}, cols...)
		}
		for _, c := range cols {
			t.Columns = append(t.Columns, c.StringValues())
		}
		if rep.ran == nil {
			rep.ran = map[string]map[string]bool{}
		}
		for _, ck := range colKeys {
			k := ranKey(t.Config, ck.StringValues())
			for _, rk := range rows {
				if bt.cells[cellKey{rk, ck}] != nil {
					if rep.ran[k] == nil {
						rep.ran[k] = map[string]bool{}
					}
					rep.ran[k][rk.StringValues()] = true
				}
			}
		}
		if len(colKeys) > 1 {
			base := colKeys[0]
			for _, rk := range rows {
				inBase := bt.cells[cellKey{rk, base}] != nil
				for _, ck := range colKeys[1:] {
					in := bt.cells[cellKey{rk, ck}] != nil
					u := Unpaired{Name: rk.StringValues(), Unit: unit, Config: t.Config}
					switch {
					case inBase && !in:
						u.In, u.Missing = rep.Columns[0], ck.StringValues()
					case !inBase && in:
						u.In, u.Missing = ck.StringValues(), rep.Columns[0]
					default:
						continue
					}
					rep.Unpaired = append(rep.Unpaired, u)
				}
			}
		}
		notes := map[string]int{}
		note := func(c *Cell, err error) {
			s := err.Error()
			i, ok := notes[s]
			if !ok {
				i = len(t.Notes)
				notes[s] = i
				t.Notes = append(t.Notes, s)
			}
			if !slices.Contains(c.Notes, i) {
				c.Notes = append(c.Notes, i)
			}
		}
		for _, rk := range rows {
			row := &Row{Name: rk.StringValues(), Cells: make([]*Cell, len(cols))}
			var base *benchmath.Sample
			var baseCenter float64
			for j, ck := range cols {
				bc := bt.cells[cellKey{rk, ck}]
				if bc == nil {
					continue
				}
				s := benchmath.NewSample(bc.values, o.thresholds)
				sum := assumption.Summary(s, o.confidence)
				c := &Cell{Values: s.Values, Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence}
				for _, w := range s.Warnings {
					note(c, w)
				}
				for _, w := range sum.Warnings {
					note(c, w)
				}
				if nsk := benchproc.NonSingularFields(sortedKeys(bc.residue)); len(nsk) > 0 {
					var names []string
					for _, f := range nsk {
						names = append(names, f.Name)
					}
					note(c, fmt.Errorf("benchmarks vary in %v", names))
				}
				if j == 0 {
					base, baseCenter = s, sum.Center
				} else if base == nil {
					c.Verdict = Missing
				} else {
					cmp := assumption.Compare(base, s)
					if assumption == benchmath.AssumeNothing {
						// benchmath's exact U test is wrong for some
						// samples with ties; see tiedExactP.
						if p, ok := tiedExactP(base.Values, s.Values); ok {
							cmp.P = p
						}
					}
					c.Compared = true
					c.P = cmp.P
					if assumption == benchmath.AssumeExact {
						// benchmath's exact comparison has no test: its P
						// is 0 whatever the values, which the csv and json
						// reports would give as a p-value far below alpha
						// beside a "~". The cell has none (README, "Read
						// the report").
						c.P = math.NaN()
					}
					c.DeltaPct = deltaPct(baseCenter, sum.Center)
					c.Verdict = judge(t, assumption, cmp, o.alpha, c.DeltaPct, cmpFloat(sum.Center, baseCenter))
					if c.Verdict == TooFew {
						// Says what benchmath's own warning says, with both sizes.
						note(c, fmt.Errorf("too few samples to detect a change at alpha %g: %d and %d samples; need at least %d each",
							o.alpha, cmp.N1, cmp.N2, samplesNeeded(o.alpha)))
					} else {
						for _, w := range cmp.Warnings {
							note(c, w)
						}
					}
				}
				row.Cells[j] = c
			}
			t.Rows = append(t.Rows, row)
		}
		t.Geomean = geomeans(t)
		rep.Tables = append(rep.Tables, t)
	}
	return rep
}

// configOf renders the configuration part of a table key.
func configOf(k benchproc.Key) []string {
	out := []string{}
	for _, f := range k.Projection().FlattenedFields() {
		if f.Name == ".unit" {
			continue
		}
		if v := k.Get(f); v != "" {
			out = append(out, f.Name+": "+v)
		}
	}
	return out
}

func deltaPct(old, new float64) float64 {
	if old == new {
		return 0
	}
	if old == 0 {
		return math.Inf(int(math.Copysign(1, new)))
	}
	// new/old - 1, computed as benchstat computes it, so that the two
	// round alike: 160 to 161 is 0.6250000000000089%, +0.63% (as the
	// geomean's ratio is), where (new-old)/old is 0.625, +0.62%. From -2
	// to -6 is +200%.
	return (new/old - 1) * 100
}

// judge gives a comparison its verdict (invariants C1, C2, C5).
//
// A comparison is significant when p <= alpha, as benchstat reads it (its
// "~" is p > alpha): p-values of small samples are few and exact, and one
// may equal alpha (7 against 9 samples with ties give p = 0.05).
//
// NB: benchmath's exact comparison reports P = 0 whatever the values; under
// assume=exact a change is significant when the centers differ.
//
// delta is the change in percent (its sign is not the way the values went
// when they are negative); way is the sign of new - old.
func judge(t *Table, a benchmath.Assumption, cmp benchmath.Comparison, alpha, delta float64, way int) Verdict {
	significant := cmp.P <= alpha
	switch a {
	case benchmath.AssumeNothing:
		if minMannWhitneyP(cmp.N1, cmp.N2) > alpha {
			return TooFew
		}
	case benchmath.AssumeExact:
		significant = true
	}
	if !significant {
		return Noise
	}
	if delta == 0 {
		if a == benchmath.AssumeExact {
			return Noise // equal values
		}
		// The samples differ significantly but their medians are equal:
		// a change whose way the medians do not say (benchstat's
		// "0.00% (p=...)").
		return Changed
	}
	var bad bool
	switch t.Better {
	case Lower:
		bad = way > 0
	case Higher:
		bad = way < 0
	default:
		return Changed
	}
	switch {
	case !bad:
		return Better
	case pastThreshold(delta, t.Threshold):
		return Regression
	default:
		return Worse
	}
}

// pastThreshold reports whether a change of delta percent is larger than
// a threshold of pct percent. A change of exactly the threshold is not,
// however the arithmetic rounds it: tidying (10 ns/op reads as 1e-08
// sec/op), the median and the division each round, so that 10 to 11
// ns/op computes to 10.000000000000005%, and 1e9 to 1e9+1 ns/op, exactly
// 1e-7%, to 1.000000082740371e-07%. The rounding is of the ratio of the
// two values, new/old = 1 + delta/100: a few units in its last place,
// which in percent is about 1e-14 times (100 + |delta|), however small
// the threshold. A delta past the threshold by no more than that margin
// (8 units in the last place of the ratio, and of the threshold's own
// reading) is taken as equal to it, and so is one past it by no more than
// the threshold itself when the threshold is smaller still, where the
// margin would let a threshold of 0 pass a real change. Each term of the
// margin is finite, so it does not overflow for the largest finite
// thresholds, and an infinite change (from a baseline of 0) is past every
// finite one.
func pastThreshold(delta, pct float64) bool {
	d := math.Abs(delta)
	if !(d > pct) {
		return false
	}
	const ulps = 0x1p-49 // 8 units in the last place of a float64 near 1
	margin := ulps*100 + ulps*d + ulps*pct
	return d-pct > min(margin, pct)
}

// minMannWhitneyP is the smallest two-sided p-value an exact Mann–Whitney U
// test can give for samples of sizes n1 and n2: both ends of the 1/C(n1+n2,
// n1) distribution of U. It is 2/C(n1+n2, n1) rounded once, so that where
// it equals alpha (2/40 = 0.05 for 1 and 39 samples) it compares equal to
// it, as the test's own p-value does.
func minMannWhitneyP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// C(n, k) by C(n-k+i, i) = C(n-k+i-1, i-1) * (n-k+i) / i: every step
	// is an integer, exact while it stays below 2^53; past that the
	// p-value is far below any alpha.
	n, k := n1+n2, min(n1, n2)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return 2 / c
}

// samplesNeeded is the smallest n such that two samples of n can be
// significant at alpha.
func samplesNeeded(alpha float64) int {
	n := 1
	for minMannWhitneyP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

// geomeans computes, per column, the geometric mean of the centers and of
// the ratios to the baseline, as benchstat does: the center over every
// cell of the column, defined only when every center is positive; the
// ratio over every row with a baseline cell, a 0 -> 0 row counting as a
// ratio of 1, undefined when a baseline center is 0 while the other is
// not, or when a ratio is not positive. A column without cells gets nil.
func geomeans(t *Table) []*Geomean {
	out := make([]*Geomean, len(t.Columns))
	for j := range t.Columns {
		var logSum, ratioLog float64
		var n, nr int
		centerOK, ratioOK, zeroBase := true, true, false
		for _, row := range t.Rows {
			c := row.Cells[j]
			if c == nil {
				continue
			}
			n++
			if c.Center <= 0 {
				centerOK = false
			} else {
				logSum += math.Log(c.Center)
			}
			b := row.Cells[0]
			if j == 0 || b == nil {
				continue
			}
			nr++
			switch r := c.Center / b.Center; {
			case c.Center == b.Center:
				// 0/0 counts as 1.
			case b.Center == 0:
				zeroBase = true
			case r > 0 && !math.IsInf(r, 0):
				ratioLog += math.Log(r)
			default:
				ratioOK = false
			}
		}
		if n == 0 {
			continue
		}
		g := &Geomean{}
		if centerOK {
			g.Center, g.HasCenter = math.Exp(logSum/float64(n)), true
		} else {
			g.Notes = append(g.Notes, "summaries must be >0 to compute geomean")
		}
		switch {
		case nr == 0:
		case zeroBase:
			g.Notes = append(g.Notes, "a baseline median of 0 with another median that is not: no ratio to compute a geomean of")
		case !ratioOK:
			g.Notes = append(g.Notes, "ratios must be >0 to compute geomean")
		default:
			g.Ratio, g.HasRatio = math.Exp(ratioLog/float64(nr)), true
		}
		out[j] = g
	}
	return out
}
