package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/expr"
)

// specExample is a plan with every part a spec may have: two inputs, a
// simple view with a map and a filter, a query view joining two
// collections, three indexes (one on a view), and a reduced query.
func specExample() *Plan {
	return &Plan{
		Inputs: []Input{
			{Name: "lineitem", Columns: []string{"okey", "qty"}},
			{Name: "orders", Columns: []string{"okey", "cust", "price"}},
		},
		Views: []View{
			{Name: "priced", Input: "orders", Maps: []Map{{Name: "unit", Expr: "price / cust"}}, Filters: []string{"price >= 0"}},
			{Name: "sold", Query: &Query{
				From:    []From{{As: "p", Collection: "priced"}, {As: "l", Collection: "lineitem"}},
				On:      [][]string{{"p.okey", "l.okey"}},
				Maps:    []Map{{Name: "ratio", Expr: "p.unit / l.qty"}},
				Project: []string{"p.cust", "ratio"},
			}},
		},
		Indexes: []Index{
			{Name: "lineitem_by_okey", On: "lineitem", Key: []string{"okey"}},
			{Name: "priced_by_okey", On: "priced", Key: []string{"okey"}},
			{Name: "sold_by_cust", On: "sold", Key: []string{"p_cust"}},
		},
		Query: Query{
			From:    []From{{As: "s", Collection: "sold"}},
			Project: []string{"s.p_cust", "s.ratio"},
			Reduce: &Reduce{GroupBy: []string{"s.p_cust"}, Aggregates: []Aggregate{
				{Name: "total", Fn: Sum, Expr: "s.ratio"}, {Name: "n", Fn: Count}, {Name: "lo", Fn: Min, Expr: "s.ratio"}}},
		},
	}
}

func names(cs []*Collection) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func TestSpecExample(t *testing.T) {
	r, err := Resolve(specExample())
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("priced columns", r.Collection("priced").Columns, []string{"okey", "cust", "price", "unit"})
	check("sold columns", r.Collection("sold").Columns, []string{"p_cust", "ratio"})
	check("views order", names(r.Views), []string{"priced", "sold"})
	q := r.Query
	check("output", q.Output, []string{"s.p_cust", "total", "n", "lo"})
	check("group_by", q.Reduce.GroupBy, []int{0})
	check("value of", q.Reduce.ValueOf, []int{0, -1, 1})
	check("query reads", q.Linear.Source.Arrangement, "sold(any)")
	check("served by", q.Linear.Source.Index.Name, "sold_by_cust")
	check("missing", len(mustMissing(t, r, Linear))+len(mustMissing(t, r, Delta)), 0)
	sold := r.Collection("sold").Query
	check("sold classes", sold.Classes, [][]int{{0, 4}})
	check("sold source", sold.Linear.Source.Arrangement, "priced(okey)")
	check("sold stage", sold.Linear.Stages[0].Arrangement, "lineitem(okey)")
	check("sold stream key", sold.Linear.Stages[0].StreamKey, []int{0})
	check("sold project", sold.ProjectColumns, []int{1, 6})
	m := r.Maintain(r.Indexes[2])
	check("sold_by_cust builds", names(m.Build), []string{"sold"})
	check("sold_by_cust imports", []string{m.Imports[0].Name, m.Imports[1].Name}, []string{"priced_by_okey", "lineitem_by_okey"})
	m = r.Maintain(r.Indexes[1])
	check("priced_by_okey builds", names(m.Build), []string{"priced"})
	check("priced_by_okey raw", names(m.Raw), []string{"orders"})
	// Without the view indexes, imported mode misses sold, and sold's
	// index dataflow builds priced itself.
	p := specExample()
	p.Indexes = p.Indexes[:1]
	r, err = Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	check("missing without indexes", mustMissing(t, r, Linear), []Arrangement{{Collection: "sold", Any: true}})
	if err := r.MissingError(Delta); err == nil || !strings.Contains(err.Error(), "missing: sold(any)") {
		t.Errorf("MissingError = %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(p *Plan)
		field string
		msg   string
	}{
		{"until", func(p *Plan) { p.AsOf, p.Until, p.HasUntil = 5, 5, true }, "until", "greater than as_of"},
		{"input name", func(p *Plan) { p.Inputs[0].Name = "Line" }, "inputs.Line", "not a name"},
		{"keyword", func(p *Plan) { p.Inputs[0].Name = "func" }, "inputs.func", "Go keyword"},
		{"reserved column", func(p *Plan) { p.Inputs[0].Columns[1] = "time" }, "inputs.lineitem.columns[1]", "reserved"},
		{"no columns", func(p *Plan) { p.Inputs[0].Columns = nil }, "inputs.lineitem.columns", "at least one"},
		{"input twice", func(p *Plan) { p.Inputs = append(p.Inputs, p.Inputs[0]) }, "inputs.lineitem", "defined twice"},
		{"duplicate column", func(p *Plan) { p.Inputs[0].Columns[1] = "okey" }, "inputs.lineitem.columns[1]", "named twice"},
		{"namespace", func(p *Plan) { p.Views[0].Name = "orders" }, "views.orders", "already an input"},
		{"unknown view input", func(p *Plan) { p.Views[0].Input = "nope" }, "views.priced.input", "no input or view is called nope"},
		{"unknown from", func(p *Plan) { p.Views[1].Query.From[1].Collection = "nope" }, "views.sold.query.from[1].collection", "nope"},
		{"map expr", func(p *Plan) { p.Views[1].Query.Maps[0].Expr = "p.unit / l.qtx" }, "views.sold.query.map[0].expr", "unknown column l.qtx"},
		{"map syntax", func(p *Plan) { p.Views[1].Query.Maps[0].Expr = "p.unit / 1.5" }, "views.sold.query.map[0].expr", "float literal"},
		{"simple map uses later", func(p *Plan) {
			p.Views[0].Maps = append([]Map{{Name: "twice", Expr: "unit * 2"}}, p.Views[0].Maps...)
		}, "views.priced.map[0].expr", "unknown column unit"},
		{"simple map shadows", func(p *Plan) { p.Views[0].Maps[0].Name = "cust" }, "views.priced.map[0].name", "already a column"},
		{"simple filter", func(p *Plan) { p.Views[0].Filters[0] = "prize >= 0" }, "views.priced.filter[0]", "unknown column prize"},
		{"alias twice", func(p *Plan) { p.Views[1].Query.From[1].As = "p" }, "views.sold.query.from[1].as", "used twice"},
		{"on unknown", func(p *Plan) { p.Views[1].Query.On[0][1] = "l.nope" }, "views.sold.query.on[0][1]", "not a column"},
		{"on bare", func(p *Plan) { p.Views[1].Query.On[0][1] = "okey" }, "views.sold.query.on[0][1]", "alias.column"},
		{"on empty", func(p *Plan) { p.Views[1].Query.On[0] = nil }, "views.sold.query.on[0]", "at least one ref"},
		{"group_by twice", func(p *Plan) { p.Query.Reduce.GroupBy = append(p.Query.Reduce.GroupBy, "s.p_cust") }, "query.reduce.group_by[1]", "grouped by twice"},
		{"index key twice", func(p *Plan) { p.Indexes[0].Key = []string{"okey", "okey"} }, "indexes.lineitem_by_okey.key[1]", "named twice"},
		{"project bare column", func(p *Plan) { p.Views[1].Query.Project[0] = "cust" }, "views.sold.query.project[0]", "not a map name"},
		{"project twice", func(p *Plan) { p.Views[1].Query.Project[1] = "p.cust" }, "views.sold.query.project[1]", "used twice"},
		{"view column clash", func(p *Plan) {
			p.Views[1].Query.Maps[0].Name = "p_cust"
			p.Views[1].Query.Project[1] = "p_cust"
		}, "views.sold.query.project[1]", "both become column p_cust"},
		{"view column clash without a project", func(p *Plan) {
			p.Views[1].Query.Maps[0].Name = "p_cust"
			p.Views[1].Query.Project = nil
		}, "views.sold.query.map[0].name", "both become column p_cust"},
		{"view reduce column clash", func(p *Plan) {
			p.Views[1].Query.Reduce = &Reduce{GroupBy: []string{"p.cust"}, Aggregates: []Aggregate{{Name: "n", Fn: Count}, {Name: "p_cust", Fn: Count}}}
		}, "views.sold.query.reduce.aggregates[1].name", "both become column p_cust"},
		{"cycle", func(p *Plan) { p.Views[0].Input = "sold" }, "views.priced", "cycle: priced -> sold -> priced"},
		{"self cycle", func(p *Plan) { p.Views[0].Input = "priced" }, "views.priced", "cycle: priced -> priced"},
		{"cycle below a view", func(p *Plan) {
			// The cycle is met from top, which is not on it: it is named
			// from its first view on, without top (L2).
			p.Views[0].Input = "sold"
			p.Views = append([]View{{Name: "top", Input: "priced"}}, p.Views...)
		}, "views.priced", "views form a cycle: priced -> sold -> priced"},
		{"view both kinds", func(p *Plan) { p.Views[1].Input = "orders" }, "views.sold", "a query view has only a query"},
		{"query view with a map", func(p *Plan) { p.Views[1].Maps = []Map{{Name: "one", Expr: "1"}} }, "views.sold", "a query view has only a query"},
		{"query view with a filter", func(p *Plan) { p.Views[1].Filters = []string{"1"} }, "views.sold", "a query view has only a query"},
		{"view twice", func(p *Plan) { p.Views = append(p.Views, p.Views[0]) }, "views.priced", "view priced defined twice"},
		{"empty view", func(p *Plan) { p.Views[0].Input = "" }, "views.priced", "either a simple view"},
		{"index on", func(p *Plan) { p.Indexes[0].On = "nope" }, "indexes.lineitem_by_okey.on", "nope"},
		{"index key", func(p *Plan) { p.Indexes[2].Key = []string{"cust"} }, "indexes.sold_by_cust.key[0]", "not a column of sold"},
		{"index name twice", func(p *Plan) { p.Indexes[1].Name = "lineitem_by_okey" }, "indexes.lineitem_by_okey", "defined twice"},
		{"no from", func(p *Plan) { p.Query.From = nil }, "query.from", "at least one"},
		{"group_by not projected", func(p *Plan) { p.Query.Reduce.GroupBy = []string{"s.ratio2"} }, "query.reduce.group_by[0]", "not a project output"},
		{"no aggregates", func(p *Plan) { p.Query.Reduce.Aggregates = nil }, "query.reduce.aggregates", "at least one"},
		{"count expr", func(p *Plan) { p.Query.Reduce.Aggregates[1].Expr = "1" }, "query.reduce.aggregates[1].expr", "count takes no expr"},
		{"sum without expr", func(p *Plan) { p.Query.Reduce.Aggregates[0].Expr = "" }, "query.reduce.aggregates[0].expr", "sum requires"},
		{"aggregate name clash", func(p *Plan) { p.Query.Reduce.Aggregates[2].Name = "n" }, "query.reduce.aggregates[2].name", "used twice"},
		{"aggregate expr scope", func(p *Plan) { p.Query.Reduce.Aggregates[0].Expr = "s.p_cost" }, "query.reduce.aggregates[0].expr", "unknown column s.p_cost"},
		{"distinct and threshold", func(p *Plan) { p.Query.Distinct, p.Query.Threshold = true, true }, "query.threshold", "at most one"},
		{"join kind", func(p *Plan) { p.Query.Join = 7 }, "query.join", "linear"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := specExample()
			tc.edit(p)
			_, err := Resolve(p)
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Resolve = %v, want a *plan.Error", err)
			}
			if pe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Resolve = %q (field %q), want field %q and %q", err, pe.Field, tc.field, tc.msg)
			}
		})
	}
}

func TestExpressionErrorsKeepTheirKind(t *testing.T) {
	p := specExample()
	p.Views[1].Query.Maps[0].Expr = "p.unit / l.qtx"
	_, err := Resolve(p)
	if !errors.Is(err, expr.ErrUnknownColumn) {
		t.Fatalf("%v does not wrap expr.ErrUnknownColumn", err)
	}
}

// An Error made by hand prints whatever it holds: the zero one, or one
// with a Field alone, reads as ErrInvalid after the field, where its
// Error dereferenced the nil cause.
func TestAnErrorOfNoMessageOrCausePrints(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{}, ": plan: invalid"},
		{Error{Field: "query.on"}, "query.on: plan: invalid"},
		{Error{Field: "f", Msg: "m"}, "f: m"},
		{Error{Field: "f", Err: ErrInvalid}, "f: plan: invalid"},
		{Error{Field: "f", Msg: "m", Err: expr.ErrUnknownColumn}, "f: m: " + expr.ErrUnknownColumn.Error()},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.e, got, tc.want)
		}
		if !errors.Is(&tc.e, ErrInvalid) {
			t.Errorf("%#v does not match ErrInvalid", tc.e)
		}
	}
}

// threeWay is a join of a(x, y), b(x, z), c(z, w) with on a.x = b.x and
// b.z = c.z, plus d(v) unrelated (a cross product).
func threeWay(from []From, indexes []Index) *Plan {
	return &Plan{
		Inputs: []Input{
			{Name: "a", Columns: []string{"x", "y"}},
			{Name: "b", Columns: []string{"x", "z"}},
			{Name: "c", Columns: []string{"z", "w"}},
			{Name: "d", Columns: []string{"v"}},
		},
		Indexes: indexes,
		Query: Query{
			From: from,
			On:   [][]string{{"a.x", "b.x"}, {"b.z", "c.z"}},
		},
	}
}

func lookups(ls []Lookup) string {
	var s []string
	for _, l := range ls {
		x := fmt.Sprintf("%d:%s%v", l.Entry, l.Arrangement, l.StreamKey)
		if l.Index != nil {
			x += "@" + l.Index.Name
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

func TestArrangements(t *testing.T) {
	abc := []From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}, {As: "c", Collection: "c"}}
	cab := []From{{As: "c", Collection: "c"}, {As: "a", Collection: "a"}, {As: "b", Collection: "b"}}
	for _, tc := range []struct {
		name    string
		from    []From
		on      [][]string
		indexes []Index
		linear  string
		delta   []string
		missing string
	}{
		{
			name: "chain", from: abc,
			// Linear: a by x (shares with b); b by {x, z}? no: b's columns
			// sharing a class with a are x only; c by z.
			linear: "0:a(x)[] 1:b(x)[0] 2:c(z)[3]",
			delta: []string{
				"0:a(any)[] 1:b(x)[0] 2:c(z)[3]",
				"1:b(any)[] 0:a(x)[2] 2:c(z)[3]",
				"2:c(any)[] 1:b(z)[4] 0:a(x)[2]",
			},
			missing: "[a(any) a(x) b(any) b(x) b(z) c(any) c(z)]",
		},
		{
			name: "no class with bound: first remaining", from: cab,
			// Linear stage 1 joins a with c: no shared class: cross product.
			linear: "0:c()[] 1:a()[] 2:b(x, z)[2 0]",
			delta: []string{
				"0:c(any)[] 2:b(z)[0] 1:a(x)[4]",
				"1:a(any)[] 2:b(x)[2] 0:c(z)[5]",
				"2:b(any)[] 0:c(z)[5] 1:a(x)[4]",
			},
		},
		{
			name: "index order fixes the key order and the stream key follows", from: cab,
			indexes: []Index{{Name: "b_zx", On: "b", Key: []string{"z", "x"}}, {Name: "b_any", On: "b", Key: []string{"x"}}},
			linear:  "0:c()[] 1:a()[] 2:b(z, x)[0 2]@b_zx",
			delta: []string{
				"0:c(any)[] 2:b(z)[0] 1:a(x)[4]",
				"1:a(any)[] 2:b(x)[2]@b_any 0:c(z)[5]",
				"2:b(any)[]@b_zx 0:c(z)[5] 1:a(x)[4]",
			},
		},
		{
			// An index on a subset of the key set does not serve it (L5):
			// b_x, first in plan order, serves b(x) only.
			name: "an index on part of the key set does not serve it", from: cab,
			indexes: []Index{{Name: "b_x", On: "b", Key: []string{"x"}}, {Name: "b_zx", On: "b", Key: []string{"z", "x"}}},
			linear:  "0:c()[] 1:a()[] 2:b(z, x)[0 2]@b_zx",
			delta: []string{
				"0:c(any)[] 2:b(z)[0] 1:a(x)[4]",
				"1:a(any)[] 2:b(x)[2]@b_x 0:c(z)[5]",
				"2:b(any)[]@b_x 0:c(z)[5] 1:a(x)[4]",
			},
		},
		{
			name: "single entry", from: []From{{As: "d", Collection: "d"}},
			on:     [][]string{},
			linear: "0:d(any)[]", delta: []string{"0:d(any)[]"}, missing: "[d(any)]",
		},
		{
			name: "two columns of one entry in a class", from: []From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}},
			on:     [][]string{{"a.x", "b.x", "b.z"}},
			linear: "0:a(x)[] 1:b(x, z)[0 0]",
			delta:  []string{"0:a(any)[] 1:b(x, z)[0 0]", "1:b(any)[] 0:a(x)[2]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := threeWay(tc.from, tc.indexes)
			if tc.on != nil {
				p.Query.On = tc.on
			}
			r, err := Resolve(p)
			if err != nil {
				t.Fatal(err)
			}
			q := r.Query
			if got := lookups(append([]Lookup{q.Linear.Source}, q.Linear.Stages...)); got != tc.linear {
				t.Errorf("linear:\n got %s\nwant %s", got, tc.linear)
			}
			for i, want := range tc.delta {
				if got := lookups(append([]Lookup{q.Delta[i].Source}, q.Delta[i].Stages...)); got != want {
					t.Errorf("delta path %d:\n got %s\nwant %s", i, got, want)
				}
			}
			if tc.missing != "" {
				var all []Arrangement
				for _, a := range append(mustMissing(t, r, Linear), mustMissing(t, r, Delta)...) {
					if !slices.ContainsFunc(all, func(b Arrangement) bool { return b.String() == a.String() }) {
						all = append(all, a)
					}
				}
				slices.SortFunc(all, func(a, b Arrangement) int { return strings.Compare(a.String(), b.String()) })
				if got := fmt.Sprint(all); got != tc.missing {
					t.Errorf("missing = %s, want %s", got, tc.missing)
				}
			}
		})
	}
}

func TestClassesMergeOnSharedRef(t *testing.T) {
	p := threeWay([]From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}, {As: "c", Collection: "c"}}, nil)
	p.Query.On = [][]string{{"a.x", "b.x"}, {"c.w", "a.y"}, {"b.x", "c.w"}}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Query.Classes); got != "[[0 1 2 5]]" {
		t.Fatalf("classes = %s", got)
	}
	// Default project: every column, then maps.
	if got := fmt.Sprint(r.Query.Output); got != "[a.x a.y b.x b.z c.z c.w]" {
		t.Fatalf("output = %s", got)
	}
}

// TestClassesMergeThroughAJoinedRef: a class meeting a ref that an earlier
// class already holds merges with all of that class, not with the ref alone
// (L3): the union links the ref's root, not the ref.
func TestClassesMergeThroughAJoinedRef(t *testing.T) {
	p := threeWay([]From{{As: "a", Collection: "a"}, {As: "b", Collection: "b"}, {As: "c", Collection: "c"}}, nil)
	p.Query.On = [][]string{{"a.x", "b.x"}, {"c.z", "b.x"}}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Query.Classes); got != "[[0 2 4]]" {
		t.Fatalf("classes = %s, want [[0 2 4]]", got)
	}
}

func TestDefaultProjectIncludesMaps(t *testing.T) {
	p := threeWay([]From{{As: "d", Collection: "d"}}, nil)
	p.Query.On = nil
	p.Query.Maps = []Map{{Name: "v2", Expr: "d.v * 2"}}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Query.Output, r.Query.ProjectColumns); got != "[d.v v2] [0 1]" {
		t.Fatalf("output = %s", got)
	}
}

// TestExplainShowsAViewsReduce: a query view's reduce, distinct or
// threshold changes what every reader of the view sees; explain printed
// only its join, so a view that reduces looked like one that does not.
func TestExplainShowsAViewsReduce(t *testing.T) {
	p := &Plan{
		Inputs: []Input{{Name: "a", Columns: []string{"g", "v"}}},
		Views: []View{{Name: "r", Query: &Query{
			From:     []From{{As: "a", Collection: "a"}},
			Reduce:   &Reduce{GroupBy: []string{"a.g"}, Aggregates: []Aggregate{{Name: "n", Fn: Count}, {Name: "hi", Fn: Max, Expr: "a.v"}}},
			Distinct: true,
		}}},
		Query: Query{From: []From{{As: "x", Collection: "r"}}, Threshold: true},
	}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `view r:
  reads a: a(any), no index
  reduce by (a.g): n=count, hi=max(a.v)
  distinct
  columns: a_g, n, hi
query:
  reads x: r(any), no index
  threshold
  output: x.a_g, x.n, x.hi
`
	if got := mustExplain(t, r, Linear); got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
}

func TestExplainSpecExample(t *testing.T) {
	r, err := Resolve(specExample())
	if err != nil {
		t.Fatal(err)
	}
	want := `index lineitem_by_okey: lineitem(okey)
  reads inputs: lineitem
index priced_by_okey: priced(okey)
  reads inputs: orders
  builds views: priced
index sold_by_cust: sold(p_cust)
  imports: priced_by_okey, lineitem_by_okey
  builds views: sold
view sold:
  linear join
  source p: priced(okey), index priced_by_okey
  stage 1 l: lineitem(okey) by (p.okey), index lineitem_by_okey
  columns: p_cust, ratio
query:
  reads s: sold(any), index sold_by_cust
  reduce by (s.p_cust): total=sum(s.ratio), n=count, lo=min(s.ratio)
  output: s.p_cust, total, n, lo
`
	if got := mustExplain(t, r, Delta); got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
	p := specExample()
	p.Views[1].Query.Join = Delta
	p.Indexes = p.Indexes[2:]
	r, err = Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustExplain(t, r, Linear); !strings.Contains(got, `index sold_by_cust: sold(p_cust)
  reads inputs: orders, lineitem
  builds views: priced, sold
view sold:
  delta join
  path 0 p: priced(any), no index
    lookup l: lineitem(okey) by (p.okey), no index
  path 1 l: lineitem(any), no index
    lookup p: priced(okey) by (l.okey), no index
`) {
		t.Errorf("Explain without input indexes:\n%s", got)
	}
}

// TestMaintainBuildsUnindexedViewsInOrder: a view read through another
// unindexed view is built in the same dataflow, dependencies first; an
// indexed one is imported; an input without an index is read raw.
func TestMaintainBuildsUnindexedViewsInOrder(t *testing.T) {
	p := &Plan{
		Inputs: []Input{{Name: "a", Columns: []string{"k"}}, {Name: "b", Columns: []string{"k"}}},
		Views: []View{
			{Name: "top", Query: &Query{From: []From{{As: "m", Collection: "mid"}, {As: "b", Collection: "b"}}, On: [][]string{{"m.k", "b.k"}}}},
			{Name: "mid", Input: "low"},
			{Name: "low", Input: "a", Filters: []string{"k > 0"}},
		},
		Indexes: []Index{{Name: "top_by", On: "top", Key: []string{"m_k"}}, {Name: "b_any", On: "b", Key: []string{}}},
		Query:   Query{From: []From{{As: "t", Collection: "top"}}},
	}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Views); fmt.Sprint(got) != "[low mid top]" {
		t.Fatalf("views order %v", got)
	}
	m := r.Maintain(r.Indexes[0])
	imports := []string{}
	for _, x := range m.Imports {
		imports = append(imports, x.Name)
	}
	if got := fmt.Sprint(names(m.Build), names(m.Raw), imports); got != "[low mid top] [a] [b_any]" {
		t.Fatalf("Maintain = %s", got)
	}
}

// TestResolveTwiceLeavesThePlanAlone: resolving is repeatable and does
// not modify the plan.
func TestResolveTwiceLeavesThePlanAlone(t *testing.T) {
	p := specExample()
	before := fmt.Sprintf("%+v %+v", *p, *p.Views[1].Query)
	r1, err1 := Resolve(p)
	r2, err2 := Resolve(p)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if mustExplain(t, r1, Linear) != mustExplain(t, r2, Linear) || fmt.Sprint(mustMissing(t, r1, Delta)) != fmt.Sprint(mustMissing(t, r2, Delta)) {
		t.Fatal("two resolutions differ")
	}
	if after := fmt.Sprintf("%+v %+v", *p, *p.Views[1].Query); after != before {
		t.Fatalf("Resolve modified the plan:\n%s\n%s", before, after)
	}
}

func TestEmptyProjectIsNotTheDefault(t *testing.T) {
	p := threeWay([]From{{As: "d", Collection: "d"}}, nil)
	p.Query.On = nil
	p.Query.Project = []string{}
	p.Query.Reduce = &Reduce{Aggregates: []Aggregate{{Name: "n", Fn: Count}}}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Query.Output, len(r.Query.MFP.Project)); got != "[n] 0" {
		t.Fatalf("output %s", got)
	}
}

// A caller that edits its plan after Resolve (every slice, string and
// pointer of it: to resolve a variant, say) changes nothing resolved:
// Resolve keeps its own deep copy. Before, the Resolved's Plan was the
// caller's, so an as_of changed afterwards moved the resolved query's,
// and renamed columns renamed the resolved collections'.
func TestEditsAfterResolveChangeNothingResolved(t *testing.T) {
	p := specExample()
	p.HasUntil, p.Until = true, 9
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	explain := mustExplain(t, r, Linear)
	cols := fmt.Sprint(r.Collection("orders").Columns, r.Collection("sold").Columns)
	want := fmt.Sprintf("%+v %+v %+v", *r.Plan, *r.Plan.Views[1].Query, *r.Plan.Query.Reduce)

	p.AsOf, p.Until = 5, 7
	p.Inputs[1].Columns[0] = "x"
	p.Inputs[0].Name = "y"
	p.Views[0].Maps[0].Expr = "0"
	p.Views[0].Filters[0] = "0"
	p.Views[1].Query.From[0].As = "z"
	p.Views[1].Query.On[0][0] = "z.okey"
	p.Views[1].Query.Maps[0].Name = "w"
	p.Views[1].Query.Project[1] = "w"
	p.Indexes[0].Key[0] = "qty"
	p.Query.From[0].Collection = "priced"
	p.Query.Project[0] = "s.ratio"
	p.Query.Reduce.GroupBy[0] = "s.ratio"
	p.Query.Reduce.Aggregates[0].Fn = Max

	if got := fmt.Sprintf("%+v %+v %+v", *r.Plan, *r.Plan.Views[1].Query, *r.Plan.Query.Reduce); got != want {
		t.Fatalf("the resolved plan changed with the caller's:\n%s\n%s", want, got)
	}
	if got := mustExplain(t, r, Linear); got != explain {
		t.Fatalf("Explain changed with the caller's plan:\n%s\n%s", explain, got)
	}
	if got := fmt.Sprint(r.Collection("orders").Columns, r.Collection("sold").Columns); got != cols {
		t.Fatalf("resolved columns changed with the caller's plan: %s, then %s", cols, got)
	}
}

// Clone keeps nil slices nil and empty ones empty (an explicit [] project
// is records of no columns, nil every column).
func TestCloneKeepsNilAndEmptyApart(t *testing.T) {
	p := threeWay([]From{{As: "d", Collection: "d"}}, nil)
	p.Query.Project = []string{}
	c := p.Clone()
	if c.Query.Project == nil || len(c.Query.Project) != 0 {
		t.Fatalf("an empty project cloned as %#v", c.Query.Project)
	}
	p.Query.Project = nil
	if c := p.Clone(); c.Query.Project != nil {
		t.Fatalf("a nil project cloned as %#v", c.Query.Project)
	}
	if (*Plan)(nil).Clone() != nil {
		t.Fatal("a nil plan cloned as a plan")
	}
}

// mustMissing is r.Missing(k), which fails the test on an error.
func mustMissing(t *testing.T, r *Resolved, k JoinKind) []Arrangement {
	t.Helper()
	m, err := r.Missing(k)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustExplain is r.Explain(k), which fails the test on an error.
func mustExplain(t *testing.T, r *Resolved, k JoinKind) string {
	t.Helper()
	s, err := r.Explain(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExplainAndMissingRefuseWhatResolveDidNotMake: Explain and Missing
// of a nil plan or a Resolved filled in by hand panicked, and Explain of
// a JoinKind of no such value explained a delta join under the heading
// "JoinKind(7) join". Each is an error wrapping ErrUsage now, as
// render.QueryDesc and reference.Eval refuse them, and MissingError
// returns it.
func TestExplainAndMissingRefuseWhatResolveDidNotMake(t *testing.T) {
	r, err := Resolve(specExample())
	if err != nil {
		t.Fatal(err)
	}
	byHand := &Resolved{Plan: r.Plan, Inputs: r.Inputs, Views: r.Views, Indexes: r.Indexes, Query: r.Query}
	for _, tc := range []struct {
		name string
		r    *Resolved
		k    JoinKind
		want string
	}{
		{"nil plan", nil, Linear, "no resolved plan"},
		{"zero plan", &Resolved{}, Delta, "no resolved plan"},
		{"filled in by hand", byHand, Linear, "not made by plan.Resolve"},
		{"no such join", r, JoinKind(7), "join strategy JoinKind(7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v", p)
				}
			}()
			if s, err := tc.r.Explain(tc.k); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) || s != "" {
				t.Errorf("Explain: %q, %v; want ErrUsage naming %q", s, err, tc.want)
			}
			if m, err := tc.r.Missing(tc.k); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) || m != nil {
				t.Errorf("Missing: %v, %v; want ErrUsage naming %q", m, err, tc.want)
			}
			if err := tc.r.MissingError(tc.k); !errors.Is(err, ErrUsage) {
				t.Errorf("MissingError: %v; want ErrUsage", err)
			}
			if tc.k == Linear || tc.k == Delta {
				if err := tc.r.Check(); !errors.Is(err, ErrUsage) {
					t.Errorf("Check: %v; want ErrUsage", err)
				}
			}
		})
	}
	if err := r.Check(); err != nil {
		t.Errorf("Check of a resolved plan: %v", err)
	}
}
