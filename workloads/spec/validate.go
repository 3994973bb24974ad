package spec

import (
	"fmt"
	"strings"
)

// validate checks what decoding one field at a time cannot: the shared
// namespace of inputs and views, that every named collection exists, that
// views form no cycle, that output names are unique and that index keys
// are columns of their collection. References inside expressions and
// refs of queries are the plan's to check (core/plan).
func (s *Spec) validate() error {
	kinds := map[string]string{}
	for i := range s.Inputs {
		kinds[s.Inputs[i].Name] = "input"
	}
	for i := range s.Views {
		v := &s.Views[i]
		if kinds[v.Name] == "input" {
			return s.Errorf(v.Field(), "view %q has the name of an input (inputs and views share one namespace)", v.Name)
		}
		kinds[v.Name] = "view"
	}
	exists := func(field, name string) error {
		if kinds[name] == "" {
			return s.Errorf(field, "no input or view is named %q", name)
		}
		return nil
	}
	for i := range s.Views {
		v := &s.Views[i]
		if v.Query == nil {
			if err := exists(v.Field()+".input", v.Input); err != nil {
				return err
			}
			continue
		}
		for j, f := range v.Query.From {
			if err := exists(fmt.Sprintf("%s.query.from[%d].collection", v.Field(), j), f.Collection); err != nil {
				return err
			}
		}
	}
	for j, f := range s.Query.From {
		if err := exists(fmt.Sprintf("query.from[%d].collection", j), f.Collection); err != nil {
			return err
		}
	}
	for i := range s.Indexes {
		if err := exists(s.Indexes[i].Field()+".on", s.Indexes[i].On); err != nil {
			return err
		}
	}
	cols, err := s.columnsAll()
	if err != nil {
		return err
	}
	if _, err := s.queryOutputs(&s.Query, "query", cols); err != nil {
		return err
	}
	for i := range s.Indexes {
		ix := &s.Indexes[i]
		have := cols[ix.On]
		for j, k := range ix.Key {
			if !contains(have, k) {
				return s.Errorf(fmt.Sprintf("%s.key[%d]", ix.Field(), j), "%q is not a column of %s (columns: %s)", k, ix.On, strings.Join(have, ", "))
			}
		}
	}
	return nil
}

// Columns returns the columns of every input and view by name.
func (s *Spec) Columns() map[string][]string {
	cols, err := s.columnsAll()
	if err != nil {
		// INVARIANT: a decoded Spec passed validate, which computed the
		// same map without error.
		panic("spec: Columns on an unvalidated spec: " + err.Error())
	}
	return cols
}

// columnsAll derives every collection's columns, visiting views in
// dependency order and reporting a cycle by the path of views.
func (s *Spec) columnsAll() (map[string][]string, error) {
	cols := map[string][]string{}
	for i := range s.Inputs {
		cols[s.Inputs[i].Name] = s.Inputs[i].Columns
	}
	views := map[string]*View{}
	for i := range s.Views {
		views[s.Views[i].Name] = &s.Views[i]
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(v *View) error
	visit = func(v *View) error {
		switch state[v.Name] {
		case done:
			return nil
		case active:
			i := 0
			for stack[i] != v.Name {
				i++
			}
			cycle := append(append([]string(nil), stack[i:]...), v.Name)
			return s.Errorf(views[stack[len(stack)-1]].Field(), "views form a cycle: %s", strings.Join(cycle, " -> "))
		}
		state[v.Name] = active
		stack = append(stack, v.Name)
		var deps []string
		if v.Query == nil {
			deps = []string{v.Input}
		} else {
			for _, f := range v.Query.From {
				deps = append(deps, f.Collection)
			}
		}
		for _, dn := range deps {
			if w := views[dn]; w != nil {
				if err := visit(w); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[v.Name] = done
		if v.Query == nil {
			c := append([]string(nil), cols[v.Input]...)
			for j, m := range v.Map {
				if contains(c, m.Name) {
					return s.Errorf(fmt.Sprintf("%s.map[%d].name", v.Field(), j), "column %q already exists in view %s", m.Name, v.Name)
				}
				c = append(c, m.Name)
			}
			cols[v.Name] = c
			return nil
		}
		out, err := s.queryOutputs(v.Query, v.Field()+".query", cols)
		if err != nil {
			return err
		}
		c := make([]string, len(out))
		for j, o := range out {
			c[j] = strings.ReplaceAll(o, ".", "_")
			for k := 0; k < j; k++ {
				if c[k] == c[j] {
					return s.Errorf(v.Field()+".query", "output names %q and %q both become column %q of view %s", out[k], out[j], c[j], v.Name)
				}
			}
		}
		cols[v.Name] = c
		return nil
	}
	for i := range s.Views {
		if err := visit(&s.Views[i]); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// queryOutputs returns a query's output names (SPEC.md §1 The query):
// with reduce the group_by entries then the aggregate names; else the
// project entries, by default every from column as alias.column then the
// map names. It reports repeated output names.
func (s *Spec) queryOutputs(q *Query, field string, cols map[string][]string) ([]string, error) {
	var out []string
	var outField func(i int) string
	switch {
	case q.Reduce != nil:
		out = append(out, q.Reduce.GroupBy...)
		for _, a := range q.Reduce.Aggregates {
			out = append(out, a.Name)
		}
		ng := len(q.Reduce.GroupBy)
		outField = func(i int) string {
			if i < ng {
				return fmt.Sprintf("%s.reduce.group_by[%d]", field, i)
			}
			return fmt.Sprintf("%s.reduce.aggregates[%d].name", field, i-ng)
		}
	case q.HasProject:
		out = q.Project
		outField = func(i int) string { return fmt.Sprintf("%s.project[%d]", field, i) }
	default:
		for _, f := range q.From {
			for _, c := range cols[f.Collection] {
				out = append(out, f.As+"."+c)
			}
		}
		for _, m := range q.Map {
			out = append(out, m.Name)
		}
		nf := len(out) - len(q.Map)
		outField = func(i int) string {
			if i >= nf {
				return fmt.Sprintf("%s.map[%d].name", field, i-nf)
			}
			return field + ".from"
		}
	}
	for i, o := range out {
		for j := 0; j < i; j++ {
			if out[j] == o {
				return nil, s.Errorf(outField(i), "output name %q repeats an earlier output name", o)
			}
		}
	}
	return out, nil
}

// Outputs returns the output names of the top-level query.
func (s *Spec) Outputs() []string {
	out, err := s.queryOutputs(&s.Query, "query", s.Columns())
	if err != nil {
		panic("spec: Outputs on an unvalidated spec: " + err.Error())
	}
	return out
}
