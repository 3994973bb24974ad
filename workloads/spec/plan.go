package spec

import (
	"errors"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
)

// resolve converts the decoded spec into a logical plan and checks it
// with plan.Resolve: refs, expressions, the namespace, cycles, output
// names, index keys (docs/spec.md "Fields" to "Expressions"). A violation
// becomes an Error at the field the plan names, with the line that field is
// on.
func (s *Spec) resolve() error {
	p := &plan.Plan{AsOf: s.AsOf, Until: s.Until, HasUntil: s.HasUntil}
	for _, in := range s.Inputs {
		p.Inputs = append(p.Inputs, plan.Input{Name: in.Name, Columns: in.Columns})
	}
	for _, v := range s.Views {
		pv := plan.View{Name: v.Name, Input: v.Input, Filters: v.Filter}
		for _, m := range v.Map {
			pv.Maps = append(pv.Maps, plan.Map{Name: m.Name, Expr: m.Expr})
		}
		if v.Query != nil {
			pv.Query = planQuery(v.Query)
		}
		p.Views = append(p.Views, pv)
	}
	for _, ix := range s.Indexes {
		p.Indexes = append(p.Indexes, plan.Index{Name: ix.Name, On: ix.On, Key: ix.Key})
	}
	p.Query = *planQuery(&s.Query)
	r, err := plan.Resolve(p)
	if err != nil {
		var pe *plan.Error
		if errors.As(err, &pe) {
			// The plan's message may name a string of the spec
			// whole; an expression's error (pe.Err) quotes at most
			// a part of its expression already.
			e := s.Pos(pe.Field)
			e.Msg = bound(pe.Msg)
			switch {
			case pe.Msg == "":
				e.Msg = pe.Err.Error()
			case pe.Err != nil:
				e.Msg += ": " + pe.Err.Error()
			}
			return e
		}
		return &Error{File: s.File, Msg: err.Error()}
	}
	s.Plan = r
	return nil
}

// lineOf returns the line of a field path, or of its closest recorded
// parent.
func (s *Spec) lineOf(field string) int {
	for field != "" {
		if l, ok := s.lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 0
}

func planQuery(q *Query) *plan.Query {
	pq := &plan.Query{From: make([]plan.From, len(q.From)), On: q.On, Filters: q.Filter, Distinct: q.Distinct, Threshold: q.Threshold}
	if q.Join == JoinDelta {
		pq.Join = plan.Delta
	}
	for i, f := range q.From {
		pq.From[i] = plan.From{As: f.As, Collection: f.Collection}
	}
	for _, m := range q.Map {
		pq.Maps = append(pq.Maps, plan.Map{Name: m.Name, Expr: m.Expr})
	}
	if q.HasProject {
		pq.Project = q.Project
		if pq.Project == nil {
			pq.Project = []string{}
		}
	}
	if q.Reduce != nil {
		pr := &plan.Reduce{GroupBy: q.Reduce.GroupBy}
		if pr.GroupBy == nil {
			pr.GroupBy = []string{}
		}
		for _, a := range q.Reduce.Aggregates {
			fn, err := plan.ParseAggFn(a.Fn)
			if err != nil {
				// INVARIANT: the decoder accepted only these four names.
				panic("spec: " + err.Error())
			}
			pr.Aggregates = append(pr.Aggregates, plan.Aggregate{Name: a.Name, Fn: fn, Expr: a.Expr})
		}
		pq.Reduce = pr
	}
	return pq
}

// Columns returns the columns of every input and view by name.
func (s *Spec) Columns() map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Plan.Inputs {
		out[c.Name] = c.Columns
	}
	for _, c := range s.Plan.Views {
		out[c.Name] = c.Columns
	}
	return out
}

// Outputs returns the output names of the top-level query.
func (s *Spec) Outputs() []string { return s.Plan.Query.Output }
