package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestAggregateAndJoinNamesRoundTrip: every aggregate function and join
// strategy parses from its name, and nothing else parses.
func TestAggregateAndJoinNamesRoundTrip(t *testing.T) {
	for _, f := range []AggFn{Count, Sum, Min, Max} {
		if got, err := ParseAggFn(f.String()); err != nil || got != f {
			t.Errorf("ParseAggFn(%q) = %v, %v", f.String(), got, err)
		}
	}
	for _, s := range []string{"", "avg", "Max", "AggFn(4)"} {
		if _, err := ParseAggFn(s); !errors.Is(err, ErrAggFn) {
			t.Errorf("ParseAggFn(%q): %v, want ErrAggFn", s, err)
		}
	}
	for _, k := range []JoinKind{Linear, Delta} {
		if got, err := ParseJoinKind(k.String()); err != nil || got != k {
			t.Errorf("ParseJoinKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	for _, s := range []string{"", "nested", "Delta"} {
		if _, err := ParseJoinKind(s); !errors.Is(err, ErrJoinKind) {
			t.Errorf("ParseJoinKind(%q): %v, want ErrJoinKind", s, err)
		}
	}
}

// TestMaintainImportsTheIndexEachLookupReads: a view that looks x up
// twice by v imports x's index by v, the one its lookups read rather
// than x's first, and once; Explain lists that one import.
func TestMaintainImportsTheIndexEachLookupReads(t *testing.T) {
	p := &Plan{
		Inputs: []Input{{Name: "x", Columns: []string{"k", "v"}}, {Name: "y", Columns: []string{"v"}}},
		Views: []View{{Name: "w", Query: &Query{
			From: []From{{As: "a", Collection: "y"}, {As: "b", Collection: "x"}, {As: "c", Collection: "x"}},
			On:   [][]string{{"a.v", "b.v", "c.v"}}, Project: []string{"a.v", "b.k", "c.k"}}}},
		Indexes: []Index{
			{Name: "x_by_k", On: "x", Key: []string{"k"}},
			{Name: "x_by_v", On: "x", Key: []string{"v"}},
			{Name: "w_by_v", On: "w", Key: []string{"a_v"}},
		},
		Query: Query{From: []From{{As: "w", Collection: "w"}}},
	}
	r, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Maintain(r.Indexes[2])
	var imports, raw, build []string
	for _, x := range m.Imports {
		imports = append(imports, x.Name)
	}
	for _, c := range m.Raw {
		raw = append(raw, c.Name)
	}
	for _, c := range m.Build {
		build = append(build, c.Name)
	}
	if got := fmt.Sprint(imports, raw, build); got != "[x_by_v] [y] [w]" {
		t.Fatalf("Maintain(w_by_v): imports, raw, build %s; want [x_by_v] [y] [w]", got)
	}
	ex, err := r.Explain(Linear)
	if err != nil {
		t.Fatal(err)
	}
	if want := "index w_by_v: w(a_v)\n  reads inputs: y\n  imports: x_by_v\n  builds views: w\n"; !strings.Contains(ex, want) {
		t.Fatalf("Explain:\n%s\nwant it to hold\n%s", ex, want)
	}
}
