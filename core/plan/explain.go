package plan

import (
	"fmt"
	"strings"
)

// Explain describes the plan as `benchrun explain` prints it: every
// index's maintaining dataflow, every query view's join, and the top-level
// query's join under strategy k (the views keep their own strategy), with
// the index that serves each arrangement; each query view and the query
// then with its reduce, distinct or threshold and its output names (a
// view's columns). A plan Resolve did not make, or a k other than Linear
// and Delta, is an error wrapping ErrUsage (Check).
func (r *Resolved) Explain(k JoinKind) (string, error) {
	if err := r.checkJoin(k); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, ix := range r.Indexes {
		m := r.Maintain(ix)
		fmt.Fprintf(&b, "index %s: %s\n", ix.Name, Arrangement{Collection: ix.On, Key: ix.Key})
		if len(m.Raw) > 0 {
			fmt.Fprintf(&b, "  reads inputs: %s\n", collNames(m.Raw))
		}
		if len(m.Imports) > 0 {
			names := make([]string, len(m.Imports))
			for i, x := range m.Imports {
				names[i] = x.Name
			}
			fmt.Fprintf(&b, "  imports: %s\n", strings.Join(names, ", "))
		}
		if len(m.Build) > 0 {
			fmt.Fprintf(&b, "  builds views: %s\n", collNames(m.Build))
		}
	}
	for _, c := range r.Views {
		if c.Query != nil {
			fmt.Fprintf(&b, "view %s:\n", c.Name)
			explainJoin(&b, c.Query, c.Query.Query.Join)
			explainResult(&b, c.Query, "columns", c.Columns)
		}
	}
	b.WriteString("query:\n")
	explainJoin(&b, r.Query, k)
	explainResult(&b, r.Query, "output", r.Query.Output)
	return b.String(), nil
}

// explainResult describes what q does after its join: its reduce, its
// distinct or threshold, and its output names (a view's: its columns).
func explainResult(b *strings.Builder, q *ResolvedQuery, what string, names []string) {
	if red := q.Query.Reduce; red != nil {
		aggs := make([]string, len(red.Aggregates))
		for i, a := range red.Aggregates {
			if a.Expr == "" {
				aggs[i] = a.Name + "=" + a.Fn.String()
			} else {
				aggs[i] = fmt.Sprintf("%s=%s(%s)", a.Name, a.Fn, a.Expr)
			}
		}
		fmt.Fprintf(b, "  reduce by (%s): %s\n", strings.Join(red.GroupBy, ", "), strings.Join(aggs, ", "))
	}
	switch {
	case q.Distinct:
		b.WriteString("  distinct\n")
	case q.Threshold:
		b.WriteString("  threshold\n")
	}
	fmt.Fprintf(b, "  %s: %s\n", what, strings.Join(names, ", "))
}

func collNames(cs []*Collection) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func explainJoin(b *strings.Builder, q *ResolvedQuery, k JoinKind) {
	line := func(indent, what string, l Lookup) {
		fmt.Fprintf(b, "%s%s %s: %s", indent, what, q.Entries[l.Entry].As, l.Arrangement)
		if len(l.StreamKey) > 0 {
			keys := make([]string, len(l.StreamKey))
			for i, pos := range l.StreamKey {
				keys[i] = q.Joined[pos].String()
			}
			fmt.Fprintf(b, " by (%s)", strings.Join(keys, ", "))
		}
		if l.Index != nil {
			fmt.Fprintf(b, ", index %s\n", l.Index.Name)
		} else {
			b.WriteString(", no index\n")
		}
	}
	if len(q.Entries) == 1 {
		line("  ", "reads", q.Linear.Source)
		return
	}
	fmt.Fprintf(b, "  %s join\n", k)
	if k == Linear {
		line("  ", "source", q.Linear.Source)
		for i, s := range q.Linear.Stages {
			line("  ", fmt.Sprintf("stage %d", i+1), s)
		}
		return
	}
	for i, p := range q.Delta {
		line("  ", fmt.Sprintf("path %d", i), p.Source)
		for _, s := range p.Stages {
			line("    ", "lookup", s)
		}
	}
}
