package plan

import (
	"errors"
	"fmt"
	"go/token"
	"regexp"
	"slices"
	"strings"

	"github.com/tracebench/tracebench/core/expr"
)

// ErrInvalid is wrapped by every error Resolve returns.
var ErrInvalid = errors.New("plan: invalid")

// Error is a violation of a rule of docs/spec.md ("Fields" to "Expressions"),
// naming the spec field by its path, e.g.
//
//	views.sold.query.map[0].expr: expression "p.unit / l.qtx": column 10: unknown column l.qtx (available: ...)
//
// A decoder prefixes the file name. Err, when set, is the cause (an
// *expr.Error for expressions). One with neither Msg nor Err (the zero
// Error) reads as ErrInvalid's text after its Field.
type Error struct {
	Field string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	switch {
	case e.Msg == "" && e.Err == nil:
		return e.Field + ": " + ErrInvalid.Error()
	case e.Msg == "":
		return e.Field + ": " + e.Err.Error()
	case e.Err == nil:
		return e.Field + ": " + e.Msg
	}
	return e.Field + ": " + e.Msg + ": " + e.Err.Error()
}

// Unwrap returns ErrInvalid and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

var nameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// CheckName reports whether s is a valid name: [a-z_][a-z0-9_]*, not a Go
// keyword, not "time" or "diff" (docs/spec.md "Fields").
func CheckName(s string) error {
	switch {
	case !nameRE.MatchString(s):
		return fmt.Errorf("%q is not a name ([a-z_][a-z0-9_]*)", s)
	case token.IsKeyword(s):
		return fmt.Errorf("%q is a Go keyword", s)
	case s == "time" || s == "diff":
		return fmt.Errorf("%q is reserved", s)
	}
	return nil
}

func checkName(field, s string) error {
	if err := CheckName(s); err != nil {
		return &Error{Field: field, Msg: err.Error()}
	}
	return nil
}

// Resolved is a checked plan with everything derived from it. It is
// immutable once Resolve returns: Plan is Resolve's own deep copy of the
// caller's plan (Plan.Clone), so a caller that edits its plan afterwards
// (to resolve a variant, say) changes nothing resolved.
type Resolved struct {
	Plan *Plan
	// Inputs in plan order.
	Inputs []*Collection
	// Views in topological order: every view after the views it reads
	// (ties in plan order).
	Views []*Collection
	// Indexes in plan order.
	Indexes []*ResolvedIndex
	// Query is the top-level query.
	Query  *ResolvedQuery
	byName map[string]*Collection
}

// ErrUsage is wrapped by the errors of Check, Explain, Missing and
// MissingError for arguments no spec makes: a plan Resolve did not make
// (nil, or a Resolved filled in by hand), or a JoinKind that is neither
// Linear nor Delta.
var ErrUsage = errors.New("plan: bad arguments")

// Check returns nil for a plan Resolve made, else an error wrapping
// ErrUsage: a nil plan, or a Resolved filled in by hand, which has none
// of the lookups Resolve builds.
func (r *Resolved) Check() error {
	if r == nil || r.Plan == nil || r.Query == nil || r.byName == nil {
		return fmt.Errorf("%w: no resolved plan (nil, or not made by plan.Resolve)", ErrUsage)
	}
	return nil
}

// checkJoin is Check, and k one of Linear and Delta.
func (r *Resolved) checkJoin(k JoinKind) error {
	if err := r.Check(); err != nil {
		return err
	}
	if k != Linear && k != Delta {
		return fmt.Errorf("%w: join strategy %v: neither linear nor delta", ErrUsage, k)
	}
	return nil
}

// Collection returns the input or view called name, or nil.
func (r *Resolved) Collection(name string) *Collection { return r.byName[name] }

// Collection is an input or a view with its columns.
type Collection struct {
	Name    string
	Columns []string
	// Input is set for an input.
	Input *Input
	// View is set for a view; then exactly one of Simple and Query is set.
	View *View
	// Simple is a simple view's map-filter-project over the rows of the
	// collection it reads (Input refs are that collection's bare column
	// names; Project is every column of the view).
	Simple *expr.MFPSpec
	// Query is a query view's resolved query.
	Query *ResolvedQuery
	// Reads are the collections the view reads directly, each once, in
	// order of first use.
	Reads []*Collection
	// Indexes on this collection, in plan order.
	Indexes []*ResolvedIndex
}

// Column returns the position of column name, or -1.
func (c *Collection) Column(name string) int { return slices.Index(c.Columns, name) }

// ResolvedIndex is an index with its collection and key positions.
type ResolvedIndex struct {
	*Index
	Collection *Collection
	// KeyColumns are the positions of Key in the collection's columns.
	KeyColumns []int
}

// Entry is one from entry of a resolved query.
type Entry struct {
	As         string
	Collection *Collection
	// Offset is the position of the entry's first column in the joined row.
	Offset int
}

// ResolvedQuery is a checked query with its row layouts.
//
// The joined row is the columns of every from entry in from order (Joined,
// as refs alias.column); the MFP appends the maps, filters and projects to
// the record; Reduce, Distinct and Threshold apply to records.
type ResolvedQuery struct {
	Query *Query
	// Field is the query's spec path: "query" or "views.N.query".
	Field   string
	Entries []Entry
	Joined  []expr.Ref
	// Classes are the merged equivalence classes of on, as joined-row
	// positions, each ascending, ordered by their first position.
	Classes [][]int
	// MFP is the per-joined-row closure: Input Joined, Equivalences the
	// classes, then the maps, filters and projection (docs/spec.md "The
	// query").
	MFP expr.MFPSpec
	// ProjectColumns are the positions of the project entries in the joined
	// row followed by the maps (len(Joined)+i is map i).
	ProjectColumns []int
	// Output are the output names as written: the project entries, or with
	// a reduce the group_by entries then the aggregate names.
	Output []string
	// Columns are Output with "." replaced by "_" (a query view's columns).
	Columns   []string
	Reduce    *ResolvedReduce
	Distinct  bool
	Threshold bool
	// Linear and Delta are the arrangements each strategy reads.
	Linear LinearPlan
	Delta  []DeltaPath
}

// ResolvedReduce is a checked reduce over the records (the project output).
type ResolvedReduce struct {
	// GroupBy are positions in the record.
	GroupBy    []int
	Aggregates []Aggregate
	// Values computes the aggregated values of a record: Input is the
	// record's refs (the project entries), one map per non-count aggregate
	// in order, projected in that order. An erring record leaves its group
	// (docs/spec.md "The query", reduce step 1).
	Values expr.MFPSpec
	// ValueOf gives, per aggregate, its column in Values' output, or -1 for
	// count.
	ValueOf []int
}

// Resolve checks p against every rule of docs/spec.md ("Fields" to
// "Expressions") and derives the columns of every collection, the views'
// order, the queries' layouts and the arrangements each join strategy reads.
// The first violation found is returned as an *Error naming its field; the
// order of checks is inputs, views (in plan order), indexes, the query.
func Resolve(p *Plan) (*Resolved, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: no plan (nil *Plan)", ErrInvalid)
	}
	p = p.Clone()
	r := &Resolved{Plan: p, byName: map[string]*Collection{}}
	if p.HasUntil && p.AsOf >= p.Until {
		return nil, fail("until", "until %d must be greater than as_of %d", p.Until, p.AsOf)
	}
	for i := range p.Inputs {
		in := &p.Inputs[i]
		f := "inputs." + in.Name
		if err := checkName(f, in.Name); err != nil {
			return nil, err
		}
		if _, dup := r.byName[in.Name]; dup {
			return nil, fail(f, "input %s defined twice", in.Name)
		}
		if len(in.Columns) == 0 {
			return nil, fail(f+".columns", "an input needs at least one column")
		}
		for j, c := range in.Columns {
			cf := fmt.Sprintf("%s.columns[%d]", f, j)
			if err := checkName(cf, c); err != nil {
				return nil, err
			}
			if slices.Index(in.Columns, c) != j {
				return nil, fail(cf, "column %s named twice", c)
			}
		}
		c := &Collection{Name: in.Name, Columns: in.Columns, Input: in}
		r.byName[in.Name] = c
		r.Inputs = append(r.Inputs, c)
	}
	views := map[string]*View{}
	for i := range p.Views {
		v := &p.Views[i]
		f := "views." + v.Name
		if err := checkName(f, v.Name); err != nil {
			return nil, err
		}
		if _, dup := r.byName[v.Name]; dup {
			return nil, fail(f, "%s is already an input (inputs and views share one namespace)", v.Name)
		}
		if _, dup := views[v.Name]; dup {
			return nil, fail(f, "view %s defined twice", v.Name)
		}
		views[v.Name] = v
	}
	// Check references and find cycles before resolving in order.
	for i := range p.Views {
		v := &p.Views[i]
		if err := r.checkReads(v, views); err != nil {
			return nil, err
		}
	}
	state := map[string]int{} // 0 new, 1 on the stack, 2 done
	var visit func(v *View, path []string) error
	visit = func(v *View, path []string) error {
		switch state[v.Name] {
		case 1:
			i := slices.Index(path, v.Name)
			return fail("views."+path[i], "views form a cycle: %s", strings.Join(append(path[i:], v.Name), " -> "))
		case 2:
			return nil
		}
		state[v.Name] = 1
		path = append(path, v.Name)
		for _, d := range reads(v) {
			if w, ok := views[d]; ok {
				if err := visit(w, path); err != nil {
					return err
				}
			}
		}
		state[v.Name] = 2
		c, err := r.resolveView(v)
		if err != nil {
			return err
		}
		r.byName[v.Name] = c
		r.Views = append(r.Views, c)
		return nil
	}
	for i := range p.Views {
		if err := visit(&p.Views[i], nil); err != nil {
			return nil, err
		}
	}
	if err := r.resolveIndexes(); err != nil {
		return nil, err
	}
	// Arrangements of the views' queries, now that indexes are known.
	for _, c := range r.Views {
		if c.Query != nil {
			r.arrange(c.Query)
		}
	}
	q, err := r.resolveQuery(&p.Query, "query")
	if err != nil {
		return nil, err
	}
	r.arrange(q)
	r.Query = q
	return r, nil
}

// reads returns the names a view reads, in order, with repeats.
func reads(v *View) []string {
	if v.Query == nil {
		return []string{v.Input}
	}
	out := make([]string, len(v.Query.From))
	for i, f := range v.Query.From {
		out[i] = f.Collection
	}
	return out
}

func (r *Resolved) checkReads(v *View, views map[string]*View) error {
	f := "views." + v.Name
	known := func(n string) bool { _, in := r.byName[n]; _, vw := views[n]; return in || vw }
	if v.Query == nil {
		if v.Input == "" {
			return fail(f, "a view is either a simple view (input) or a query view (query)")
		}
		if !known(v.Input) {
			return fail(f+".input", "no input or view is called %s", v.Input)
		}
		return nil
	}
	if v.Input != "" || len(v.Maps) > 0 || len(v.Filters) > 0 {
		return fail(f, "a query view has only a query (input, map and filter belong to simple views)")
	}
	for i, e := range v.Query.From {
		if !known(e.Collection) {
			return fail(fmt.Sprintf("%s.query.from[%d].collection", f, i), "no input or view is called %s", e.Collection)
		}
	}
	return nil
}

func (r *Resolved) resolveView(v *View) (*Collection, error) {
	f := "views." + v.Name
	if v.Query != nil {
		q, err := r.resolveQuery(v.Query, f+".query")
		if err != nil {
			return nil, err
		}
		c := &Collection{Name: v.Name, Columns: q.Columns, View: v, Query: q}
		for _, e := range q.Entries {
			if !slices.Contains(c.Reads, e.Collection) {
				c.Reads = append(c.Reads, e.Collection)
			}
		}
		return c, nil
	}
	in := r.byName[v.Input]
	spec := &expr.MFPSpec{}
	cols := slices.Clone(in.Columns)
	for _, col := range in.Columns {
		spec.Input = append(spec.Input, expr.Ref{Column: col})
	}
	scope := slices.Clone(spec.Input)
	for i, m := range v.Maps {
		mf := fmt.Sprintf("%s.map[%d]", f, i)
		if err := checkName(mf+".name", m.Name); err != nil {
			return nil, err
		}
		if slices.Contains(cols, m.Name) {
			return nil, fail(mf+".name", "%s is already a column of the view", m.Name)
		}
		e, err := parseCheck(mf+".expr", m.Expr, scope)
		if err != nil {
			return nil, err
		}
		spec.Maps = append(spec.Maps, expr.Map{Name: m.Name, Expr: e})
		cols = append(cols, m.Name)
		scope = append(scope, expr.Ref{Column: m.Name})
	}
	for i, s := range v.Filters {
		e, err := parseCheck(fmt.Sprintf("%s.filter[%d]", f, i), s, scope)
		if err != nil {
			return nil, err
		}
		spec.Filters = append(spec.Filters, e)
	}
	spec.Project = scope
	return &Collection{Name: v.Name, Columns: cols, View: v, Simple: spec, Reads: []*Collection{in}}, nil
}

func parseCheck(field, src string, scope []expr.Ref) (*expr.Expr, error) {
	e, err := expr.Parse(src)
	if err == nil {
		err = expr.Check(e, scope)
	}
	if err != nil {
		return nil, &Error{Field: field, Err: err}
	}
	return e, nil
}

// parseRef parses "alias.column" or "name".
func parseRef(s string) (expr.Ref, error) {
	a, c, dotted := strings.Cut(s, ".")
	if !dotted {
		if err := CheckName(s); err != nil {
			return expr.Ref{}, err
		}
		return expr.Ref{Column: s}, nil
	}
	if err := CheckName(a); err != nil {
		return expr.Ref{}, fmt.Errorf("ref %q: alias: %v", s, err)
	}
	if err := CheckName(c); err != nil {
		return expr.Ref{}, fmt.Errorf("ref %q: column: %v", s, err)
	}
	return expr.Ref{Alias: a, Column: c}, nil
}

func (r *Resolved) resolveQuery(q *Query, f string) (*ResolvedQuery, error) {
	rq := &ResolvedQuery{Query: q, Field: f, Distinct: q.Distinct, Threshold: q.Threshold}
	if len(q.From) == 0 {
		return nil, fail(f+".from", "a query needs at least one from entry")
	}
	if q.Join != Linear && q.Join != Delta {
		return nil, fail(f+".join", "join is %q or %q", Linear, Delta)
	}
	for i, e := range q.From {
		ef := fmt.Sprintf("%s.from[%d]", f, i)
		if err := checkName(ef+".as", e.As); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(q.From[:i], func(o From) bool { return o.As == e.As }) {
			return nil, fail(ef+".as", "alias %s used twice in one query", e.As)
		}
		c := r.byName[e.Collection]
		if c == nil {
			return nil, fail(ef+".collection", "no input or view is called %s", e.Collection)
		}
		rq.Entries = append(rq.Entries, Entry{As: e.As, Collection: c, Offset: len(rq.Joined)})
		for _, col := range c.Columns {
			rq.Joined = append(rq.Joined, expr.Ref{Alias: e.As, Column: col})
		}
	}
	// Equivalence classes, merged where they share a ref (union-find).
	parent := make([]int, len(rq.Joined))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	inClass := make([]bool, len(rq.Joined))
	for i, class := range q.On {
		if len(class) == 0 {
			return nil, fail(fmt.Sprintf("%s.on[%d]", f, i), "an equivalence class needs at least one ref")
		}
		first := -1
		for j, s := range class {
			rf := fmt.Sprintf("%s.on[%d][%d]", f, i, j)
			ref, err := parseRef(s)
			if err != nil {
				return nil, fail(rf, "%v", err)
			}
			if ref.Alias == "" {
				return nil, fail(rf, "%s: an equivalence joins columns of from entries, written alias.column", s)
			}
			pos := slices.Index(rq.Joined, ref)
			if pos < 0 {
				return nil, fail(rf, "%s is not a column of a from entry", s)
			}
			inClass[pos] = true
			if first < 0 {
				first = pos
			} else {
				parent[find(pos)] = find(first)
			}
		}
	}
	byRoot := map[int]int{}
	for pos := range rq.Joined {
		if !inClass[pos] {
			continue
		}
		root := find(pos)
		k, ok := byRoot[root]
		if !ok {
			k = len(rq.Classes)
			byRoot[root] = k
			rq.Classes = append(rq.Classes, nil)
		}
		rq.Classes[k] = append(rq.Classes[k], pos)
	}
	rq.MFP.Input = rq.Joined
	for _, class := range rq.Classes {
		refs := make([]expr.Ref, len(class))
		for i, pos := range class {
			refs[i] = rq.Joined[pos]
		}
		rq.MFP.Equivalences = append(rq.MFP.Equivalences, refs)
	}
	scope := slices.Clone(rq.Joined)
	var mapNames []string
	for i, m := range q.Maps {
		mf := fmt.Sprintf("%s.map[%d]", f, i)
		if err := checkName(mf+".name", m.Name); err != nil {
			return nil, err
		}
		if slices.Contains(mapNames, m.Name) {
			return nil, fail(mf+".name", "map %s defined twice", m.Name)
		}
		e, err := parseCheck(mf+".expr", m.Expr, scope)
		if err != nil {
			return nil, err
		}
		rq.MFP.Maps = append(rq.MFP.Maps, expr.Map{Name: m.Name, Expr: e})
		mapNames = append(mapNames, m.Name)
		scope = append(scope, expr.Ref{Column: m.Name})
	}
	for i, s := range q.Filters {
		e, err := parseCheck(fmt.Sprintf("%s.filter[%d]", f, i), s, scope)
		if err != nil {
			return nil, err
		}
		rq.MFP.Filters = append(rq.MFP.Filters, e)
	}
	project := q.Project
	if project == nil {
		for _, ref := range scope {
			project = append(project, ref.String())
		}
	}
	for i, s := range project {
		pf := fmt.Sprintf("%s.project[%d]", f, i)
		ref, err := parseRef(s)
		if err != nil {
			return nil, fail(pf, "%v", err)
		}
		pos := slices.Index(scope, ref)
		if pos < 0 {
			if ref.Alias == "" {
				return nil, fail(pf, "%s is not a map name (a from column is written alias.column)", s)
			}
			return nil, fail(pf, "%s is not a column of a from entry", s)
		}
		if slices.Contains(project[:i], s) {
			return nil, fail(pf, "output name %s used twice", s)
		}
		rq.MFP.Project = append(rq.MFP.Project, ref)
		rq.ProjectColumns = append(rq.ProjectColumns, pos)
	}
	rq.Output = slices.Clone(project)
	if q.Reduce != nil {
		red, out, err := resolveReduce(q.Reduce, f+".reduce", project, rq.MFP.Project)
		if err != nil {
			return nil, err
		}
		rq.Reduce, rq.Output = red, out
	}
	if q.Distinct && q.Threshold {
		return nil, fail(f+".threshold", "at most one of distinct and threshold")
	}
	for i, o := range rq.Output {
		col := strings.ReplaceAll(o, ".", "_")
		if j := slices.Index(rq.Columns, col); j >= 0 && strings.HasPrefix(f, "views.") {
			// The field that names o: a reduce's outputs are its group_by
			// entries, then its aggregates' names; a query without a
			// project outputs its from entries' columns, then its maps.
			of := fmt.Sprintf("%s.project[%d]", f, i)
			switch {
			case q.Reduce != nil:
				if g := len(q.Reduce.GroupBy); i < g {
					of = fmt.Sprintf("%s.reduce.group_by[%d]", f, i)
				} else {
					of = fmt.Sprintf("%s.reduce.aggregates[%d].name", f, i-g)
				}
			case q.Project == nil:
				of = f + ".from"
				if k := slices.Index(mapNames, o); k >= 0 {
					of = fmt.Sprintf("%s.map[%d].name", f, k)
				}
			}
			return nil, fail(of, "output names %s and %s both become column %s of the view", rq.Output[j], o, col)
		}
		rq.Columns = append(rq.Columns, col)
	}
	return rq, nil
}

func resolveReduce(red *Reduce, f string, project []string, record []expr.Ref) (*ResolvedReduce, []string, error) {
	rr := &ResolvedReduce{Aggregates: red.Aggregates, Values: expr.MFPSpec{Input: record}}
	var out []string
	for i, g := range red.GroupBy {
		gf := fmt.Sprintf("%s.group_by[%d]", f, i)
		pos := slices.Index(project, g)
		if pos < 0 {
			return nil, nil, fail(gf, "%s is not a project output name (group_by refers to project outputs)", g)
		}
		if slices.Contains(out, g) {
			return nil, nil, fail(gf, "%s grouped by twice", g)
		}
		rr.GroupBy = append(rr.GroupBy, pos)
		out = append(out, g)
	}
	if len(red.Aggregates) == 0 {
		return nil, nil, fail(f+".aggregates", "a reduce needs at least one aggregate")
	}
	for i, a := range red.Aggregates {
		af := fmt.Sprintf("%s.aggregates[%d]", f, i)
		if err := checkName(af+".name", a.Name); err != nil {
			return nil, nil, err
		}
		if slices.Contains(out, a.Name) {
			return nil, nil, fail(af+".name", "output name %s used twice", a.Name)
		}
		out = append(out, a.Name)
		switch {
		case a.Fn > Max:
			return nil, nil, fail(af+".fn", "%v", ErrAggFn)
		case a.Fn == Count && a.Expr != "":
			return nil, nil, fail(af+".expr", "count takes no expr")
		case a.Fn == Count:
			rr.ValueOf = append(rr.ValueOf, -1)
			continue
		case a.Expr == "":
			return nil, nil, fail(af+".expr", "%s requires an expr", a.Fn)
		}
		e, err := parseCheck(af+".expr", a.Expr, record)
		if err != nil {
			return nil, nil, err
		}
		name := fmt.Sprintf("#%d", i) // not a valid name, so never a record column
		rr.ValueOf = append(rr.ValueOf, len(rr.Values.Maps))
		rr.Values.Maps = append(rr.Values.Maps, expr.Map{Name: name, Expr: e})
		rr.Values.Project = append(rr.Values.Project, expr.Ref{Column: name})
	}
	return rr, out, nil
}

func (r *Resolved) resolveIndexes() error {
	seen := map[string]bool{}
	for i := range r.Plan.Indexes {
		ix := &r.Plan.Indexes[i]
		f := "indexes." + ix.Name
		if err := checkName(f, ix.Name); err != nil {
			return err
		}
		if seen[ix.Name] {
			return fail(f, "index %s defined twice", ix.Name)
		}
		seen[ix.Name] = true
		c := r.byName[ix.On]
		if c == nil {
			return fail(f+".on", "no input or view is called %s", ix.On)
		}
		ri := &ResolvedIndex{Index: ix, Collection: c, KeyColumns: []int{}}
		for j, k := range ix.Key {
			pos := c.Column(k)
			if pos < 0 {
				return fail(fmt.Sprintf("%s.key[%d]", f, j), "%s is not a column of %s (columns: %s)", k, c.Name, strings.Join(c.Columns, ", "))
			}
			if slices.Contains(ri.KeyColumns, pos) {
				return fail(fmt.Sprintf("%s.key[%d]", f, j), "column %s named twice", k)
			}
			ri.KeyColumns = append(ri.KeyColumns, pos)
		}
		c.Indexes = append(c.Indexes, ri)
		r.Indexes = append(r.Indexes, ri)
	}
	return nil
}
