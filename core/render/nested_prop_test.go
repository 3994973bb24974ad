package render_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
)

// TestNestedJoinsEqualReference draws plans whose query joins views that
// are themselves joins of views, two or three levels deep, each level with
// maps that divide by zero or overflow and its own strategy (a delta join
// of three or four entries among them), over inputs with retractions, and
// compares every output and error count at every time with the reference,
// in both modes and both top-level joins on one and two workers. An
// input's errors must reach each level once per entry that reads it
// (docs/semantics.md §5.5); a level that re-emitted them per path or per
// stage would compound them through the levels above (§5.6), which the
// exact counts show.
func TestNestedJoinsEqualReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { matchDrawn(t, drawNestedPlan) })
}

// drawNestedPlan draws inputs a, b, c and views v1..vN (N = 2 or 3), each
// a join of 2–4 entries of earlier collections (v1 of inputs only, every
// later view reading the one before it), and a query joining the last
// view with an earlier collection. Entries are mostly joined on their
// first columns so that the joins stay small.
func drawNestedPlan(t *rapid.T) (*plan.Plan, reference.Inputs, int) {
	// Values or counts at int64's edges, not both: through a level's
	// arrangement, expressions' numeric overflow errors of huge counts can
	// cancel the overflow of counts' marker, the known gap
	// TestRandomPlansEqualReference describes, which a level below the
	// query hides from reference.Compare's test of it.
	edges := rapid.SampledFrom([]string{"none", "values", "counts"}).Draw(t, "edges")
	lits := []string{"0", "1", "2", "3"}
	if edges == "values" || edges == "both" {
		lits = append(lits, "9223372036854775807", "4611686018427387904")
	}
	p := &plan.Plan{}
	cols := map[string][]string{}
	var inputs []string
	for _, name := range propInputs {
		c := propColumns[:rapid.IntRange(1, 3).Draw(t, "columns "+name)]
		p.Inputs = append(p.Inputs, plan.Input{Name: name, Columns: c})
		cols[name] = c
		inputs = append(inputs, name)
	}
	aliases := []string{"p", "q", "r", "s"}
	// query draws a join of n entries, the first of which is first (if
	// not empty), the others from colls.
	query := func(label, first string, colls []string, n int) (*plan.Query, []string) {
		q := &plan.Query{}
		for i := range n {
			c := first
			if i > 0 || c == "" {
				c = rapid.SampledFrom(colls).Draw(t, label+" entry")
			}
			q.From = append(q.From, plan.From{As: aliases[i], Collection: c})
		}
		var scope []string
		for i, f := range q.From {
			for _, c := range cols[f.Collection] {
				scope = append(scope, f.As+"."+c)
			}
			if i > 0 && rapid.IntRange(0, 4).Draw(t, label+" joined") > 0 {
				q.On = append(q.On, []string{q.From[0].As + "." + cols[q.From[0].Collection][0], f.As + "." + cols[f.Collection][0]})
			}
		}
		for i := range rapid.IntRange(0, 2).Draw(t, label+" maps") {
			name := fmt.Sprintf("m%d", i)
			q.Maps = append(q.Maps, plan.Map{Name: name, Expr: drawExpr(t, lits, scope, 2)})
			scope = append(scope, name)
		}
		if rapid.IntRange(0, 4).Draw(t, label+" filter") == 0 {
			q.Filters = append(q.Filters, drawExpr(t, lits, scope, 2))
		}
		q.Join = rapid.SampledFrom([]plan.JoinKind{plan.Linear, plan.Delta}).Draw(t, label+" join")
		return q, scope
	}
	levels := rapid.IntRange(2, 3).Draw(t, "levels")
	colls := slices.Clone(inputs)
	prev := ""
	for l := 1; l <= levels; l++ {
		name := fmt.Sprintf("v%d", l)
		q, scope := query(name, prev, colls, rapid.IntRange(2, 4).Draw(t, name+" entries"))
		// A view's columns are a few of its joined columns and maps, its
		// maps first so that their errors, or their values, reach the
		// level above.
		var maps []string
		for _, m := range q.Maps {
			maps = append(maps, m.Name)
		}
		q.Project = append(maps, drawSubset(t, scope[:len(scope)-len(maps)], name+" project")...)
		if len(q.Project) == 0 {
			q.Project = scope[:1]
		}
		if len(q.Project) > 3 {
			q.Project = q.Project[:3]
		}
		var vcols []string
		for _, o := range q.Project {
			vcols = append(vcols, strings.ReplaceAll(o, ".", "_"))
		}
		p.Views = append(p.Views, plan.View{Name: name, Query: q})
		cols[name] = vcols
		prev = name
		colls = append(colls, name)
	}
	q, scope := query("query", prev, colls, rapid.IntRange(1, 2).Draw(t, "query entries"))
	q.Project = drawSubset(t, scope, "project")
	p.Query = *q

	addIndexes(t, p, cols)

	// Two to four times, each input's updates drawn twice over, so that
	// the levels' joins, keyed on values 0–3, often match.
	times := rapid.IntRange(2, 4).Draw(t, "times")
	p.AsOf = uint64(rapid.IntRange(0, times-1).Draw(t, "as_of"))
	in := reference.Inputs{}
	for _, inp := range p.Inputs {
		in[inp.Name] = append(drawUpdates(t, inp.Name, len(inp.Columns), times, edges), drawUpdates(t, inp.Name, len(inp.Columns), times, edges)...)
	}
	return p, in, times
}
