package benchrun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
)

// maxValueText is the longest text of a result's value: a float64 as the
// result writer's %v writes it, sign and exponent included
// ("-2.2250738585072014e-308").
const maxValueText = 24

// stageUnits returns, for each top-level field of b's spec whose
// operators count their own errors ("views" or "query"), the units of
// those counts that a sample of b may report (stageValues): one per
// operator, and per path of a delta join, in every dataflow the sample
// builds, as core/render names them (a delta join's forwarding of its
// entries' errors too, with no path, and the flatten of an imported
// index, named after it). Imported, that is the dataflow of
// each index ("maintain NAME"), which builds the index's collection from
// the inputs and the indexes it imports, and the query's, which builds
// what no index serves; direct, the query's alone, which builds every
// view it reads. An operator that may turn out to do nothing (a map that
// keeps its rows as they are) is counted: the units are those the sample
// may report, at most.
func stageUnits(b *Benchmark) map[string][]string {
	r := b.Spec.Plan
	out := map[string][]string{}
	seen := map[string]bool{}
	join, err := plan.ParseJoinKind(b.Join)
	if err != nil {
		join = plan.Linear
	}
	type flow struct {
		id         string
		importable map[*plan.ResolvedIndex]bool
		built      map[*plan.Collection]bool
	}
	add := func(f *flow, field, op, path string) {
		name := f.id + "/" + op
		if path != "" {
			name += "/path" + path
		}
		u := stageUnitPrefix + strings.ReplaceAll(name, " ", "_")
		if !seen[u] {
			seen[u] = true
			out[field] = append(out[field], u)
		}
	}
	var collection func(f *flow, c *plan.Collection, field string)
	query := func(f *flow, q *plan.ResolvedQuery, k plan.JoinKind) {
		field := "query"
		if q.Field != "query" {
			field = "views"
		}
		switch {
		case len(q.Entries) == 1:
			add(f, field, "map "+q.Field, "")
		case k == plan.Linear:
			for i := range q.Linear.Stages {
				add(f, field, "linear "+q.Field+" stage "+strconv.Itoa(i+1), "")
			}
		default:
			// The forwarding of the entries' errors, the operator's and
			// no path's, then each path.
			add(f, field, "delta "+q.Field, "")
			for _, p := range q.Delta {
				add(f, field, "delta "+q.Field, strconv.Itoa(p.Source.Entry))
			}
		}
		for _, e := range q.Entries {
			collection(f, e.Collection, field)
		}
		switch {
		case q.Reduce != nil:
			add(f, field, "reduce args "+q.Field, "")
			add(f, field, "reduce "+q.Field, "")
		case q.Distinct:
			add(f, field, "distinct "+q.Field, "")
		case q.Threshold:
			add(f, field, "threshold "+q.Field, "")
		}
	}
	collection = func(f *flow, c *plan.Collection, field string) {
		if f.built[c] {
			return
		}
		f.built[c] = true
		for _, ix := range c.Indexes {
			if f.importable[ix] {
				// Imported, not built: read whole, the first index
				// imported is flattened (core/render's servedBy), its
				// count named after the index; read by a join's key,
				// it is not, and the unit is one the sample may lack.
				add(f, field, "flatten "+render.IndexID(ix), "")
				return
			}
		}
		switch {
		case c.Input != nil:
		case c.Simple != nil:
			add(f, "views", "view "+c.Name, "")
			collection(f, c.Reads[0], "views")
		default:
			query(f, c.Query, c.Query.Query.Join)
		}
	}
	q := &flow{id: render.QueryID, importable: map[*plan.ResolvedIndex]bool{}, built: map[*plan.Collection]bool{}}
	if b.Index == IndexImported {
		for _, ix := range r.Indexes {
			m := r.Maintain(ix)
			f := &flow{id: "maintain " + ix.Name, importable: map[*plan.ResolvedIndex]bool{}, built: map[*plan.Collection]bool{}}
			for _, im := range m.Imports {
				f.importable[im] = true
			}
			collection(f, ix.Collection, "views")
			q.importable[ix] = true
		}
	}
	query(q, r.Query, join)
	return out
}

// checkLine refuses a benchmark whose result line could be longer than a
// result file's reader takes (MaxResultLine), before anything is written:
// the longest line a sample of it may write is its name, the iteration
// count, and a value of the longest text in every unit a sample may report
// (units), its operators' error counts (stageUnits) among them. The error
// names the spec field whose operators' units make most of the line
// ("views" or "query"), or --param when the name does.
func checkLine(b *Benchmark) error {
	n := len("Benchmark") + len(b.Name) + len(" 1")
	for _, u := range units {
		n += 1 + maxValueText + 1 + len(u.unit)
	}
	stages := stageUnits(b)
	count, field, most := 0, "", 0
	for _, f := range []string{"views", "query"} {
		bytes := 0
		for _, u := range stages[f] {
			bytes += 1 + maxValueText + 1 + len(u)
		}
		count += len(stages[f])
		n += bytes
		if bytes > most {
			field, most = f, bytes
		}
	}
	if n <= MaxResultLine {
		return nil
	}
	why := fmt.Sprintf("a result line of up to %d bytes (%d operators' stage-errors units), more than the %d a result file's reader takes",
		n, count, MaxResultLine)
	if len(b.Name) > most {
		return usagef("--param", "%s: the benchmark's name alone is %d bytes", why, len(b.Name))
	}
	return b.Spec.Errorf(field, "%s: fewer views or joins, or shorter names", why)
}
