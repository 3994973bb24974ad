package benchrun

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ExplainConfig configures Explain.
type ExplainConfig struct {
	Out   io.Writer
	Spec  string
	Index string // IndexImported (default) or IndexDirect
	Join  string // "linear" or "delta"; "": the spec's
}

// Explain prints the plan of a spec: per index what its maintaining
// dataflow builds, imports and reads raw; the query's join stages or delta
// paths with the arrangement each reads and the index that serves it. In
// imported mode an arrangement no index serves is an error naming every
// missing (collection, key set), returned after the plan is printed.
func Explain(cfg ExplainConfig) error {
	if cfg.Index == "" {
		cfg.Index = IndexImported
	}
	if cfg.Index != IndexImported && cfg.Index != IndexDirect {
		return usagef("--index", "unknown value %q (imported or direct)", cfg.Index)
	}
	s, err := check(cfg.Spec)
	if err != nil {
		return err
	}
	kind := plan.Linear
	if s.Query.Join == spec.JoinDelta {
		kind = plan.Delta
	}
	if cfg.Join != "" {
		if kind, err = plan.ParseJoinKind(cfg.Join); err != nil {
			return usagef("--join", "unknown value %q (linear or delta)", cfg.Join)
		}
	}
	r := s.Plan
	w := cfg.Out
	until := "none"
	if s.HasUntil {
		until = fmt.Sprint(s.Until)
	}
	fmt.Fprintf(w, "workload %s: index=%s join=%s as_of=%d until=%s\n", s.Name, cfg.Index, kind, s.AsOf, until)
	if cfg.Index == IndexImported {
		fmt.Fprintf(w, "maintained indexes (Maintenance runtime, from time 0):\n")
		if len(r.Indexes) == 0 {
			fmt.Fprintf(w, "  none\n")
		}
		for _, ix := range r.Indexes {
			m := r.Maintain(ix)
			fmt.Fprintf(w, "  %s on %s(%s):", ix.Name, ix.On, strings.Join(ix.Key, ", "))
			var parts []string
			if len(m.Build) > 0 {
				parts = append(parts, "builds "+collNames(m.Build))
			}
			if len(m.Imports) > 0 {
				var n []string
				for _, x := range m.Imports {
					n = append(n, x.Name)
				}
				parts = append(parts, "imports "+strings.Join(n, ", "))
			}
			if len(m.Raw) > 0 {
				parts = append(parts, "reads raw "+collNames(m.Raw))
			}
			fmt.Fprintf(w, " %s\n", strings.Join(parts, "; "))
		}
	}
	q := r.Query
	var from []string
	for _, e := range q.Entries {
		from = append(from, e.As+"="+e.Collection.Name)
	}
	fmt.Fprintf(w, "query (%s runtime, from as_of): from %s\n", map[string]string{IndexImported: "Interactive", IndexDirect: "Solo"}[cfg.Index], strings.Join(from, ", "))
	serve := func(l plan.Lookup) string {
		if cfg.Index == IndexDirect {
			return "built in the query"
		}
		if l.Index == nil {
			return "MISSING"
		}
		return "index " + l.Index.Name
	}
	line := func(label string, l plan.Lookup) {
		fmt.Fprintf(w, "    %-9s %-3s %-28s %s\n", label, q.Entries[l.Entry].As, l.Arrangement.String(), serve(l))
	}
	if kind == plan.Linear {
		fmt.Fprintf(w, "  linear join\n")
		line("source", q.Linear.Source)
		for i, st := range q.Linear.Stages {
			line(fmt.Sprintf("stage %d", i+1), st)
		}
	} else {
		for i, p := range q.Delta {
			fmt.Fprintf(w, "  delta path %d\n", i)
			line("source", p.Source)
			for j, st := range p.Stages {
				line(fmt.Sprintf("lookup %d", j+1), st)
			}
		}
	}
	if red := q.Query.Reduce; red != nil {
		var aggs []string
		for _, a := range red.Aggregates {
			if a.Expr == "" {
				aggs = append(aggs, a.Name+"="+a.Fn.String())
			} else {
				aggs = append(aggs, fmt.Sprintf("%s=%s(%s)", a.Name, a.Fn, a.Expr))
			}
		}
		fmt.Fprintf(w, "  reduce by [%s]: %s\n", strings.Join(red.GroupBy, ", "), strings.Join(aggs, ", "))
	}
	switch {
	case q.Distinct:
		fmt.Fprintf(w, "  distinct\n")
	case q.Threshold:
		fmt.Fprintf(w, "  threshold\n")
	}
	fmt.Fprintf(w, "  output: %s\n", strings.Join(q.Output, ", "))
	if cfg.Index == IndexImported {
		return missing(s, kind.String())
	}
	return nil
}

func collNames(cs []*plan.Collection) string {
	n := make([]string, len(cs))
	for i, c := range cs {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}
