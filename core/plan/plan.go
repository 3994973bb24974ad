package plan

import (
	"errors"
	"fmt"
	"slices"
)

// Plan is the logical plan a workload spec decodes into (docs/spec.md
// "Fields" to "Expressions"). A decoder fills it; Resolve checks it and
// derives everything else. Slices keep the spec's order where the spec has
// one; inputs, views and indexes, which the spec keeps in JSON objects, come
// in the decoder's order (sorted by name is the natural choice), which fixes
// the order of errors and of ties in Resolved.Order.
type Plan struct {
	// AsOf is the time the query is created at.
	AsOf uint64
	// Until bounds the query's times when HasUntil; AsOf < Until.
	Until    uint64
	HasUntil bool
	Inputs   []Input
	Views    []View
	Indexes  []Index
	Query    Query
}

// Clone returns a deep copy of p: no slice or pointer of the copy is p's.
// Resolve resolves a clone, so that the caller's edits after it reach
// nothing resolved. Nil and empty slices keep their nil-ness (an explicit
// [] project is records of no columns).
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	c := *p
	c.Inputs = slices.Clone(p.Inputs)
	for i := range c.Inputs {
		c.Inputs[i].Columns = slices.Clone(c.Inputs[i].Columns)
	}
	c.Views = slices.Clone(p.Views)
	for i := range c.Views {
		v := &c.Views[i]
		v.Maps = slices.Clone(v.Maps)
		v.Filters = slices.Clone(v.Filters)
		v.Query = v.Query.clone()
	}
	c.Indexes = slices.Clone(p.Indexes)
	for i := range c.Indexes {
		c.Indexes[i].Key = slices.Clone(c.Indexes[i].Key)
	}
	c.Query = *p.Query.clone()
	return &c
}

// clone returns a deep copy of q (nil for nil).
func (q *Query) clone() *Query {
	if q == nil {
		return nil
	}
	c := *q
	c.From = slices.Clone(q.From)
	c.On = slices.Clone(q.On)
	for i := range c.On {
		c.On[i] = slices.Clone(c.On[i])
	}
	c.Maps = slices.Clone(q.Maps)
	c.Filters = slices.Clone(q.Filters)
	c.Project = slices.Clone(q.Project)
	if q.Reduce != nil {
		r := *q.Reduce
		r.GroupBy = slices.Clone(r.GroupBy)
		r.Aggregates = slices.Clone(r.Aggregates)
		c.Reduce = &r
	}
	return &c
}

// Input is a collection fed from outside: its name and int64 columns.
type Input struct {
	Name    string
	Columns []string
}

// View is a named collection defined over others: a simple view (Input,
// Maps, Filters) when Query is nil, else a query view.
type View struct {
	Name string
	// Input is the collection a simple view reads (an input or a view).
	Input   string
	Maps    []Map
	Filters []string
	// Query defines a query view; its columns are its output names with "."
	// replaced by "_".
	Query *Query
}

// Map is a named expression appended to a row.
type Map struct {
	Name string
	Expr string
}

// Index arranges collection On by the columns Key (possibly none). Indexes
// are what the Maintenance runtime maintains and publishes.
type Index struct {
	Name string
	On   string
	Key  []string
}

// JoinKind is a join strategy.
type JoinKind uint8

// The join strategies. Linear is the default.
const (
	Linear JoinKind = iota
	Delta
)

func (k JoinKind) String() string {
	switch k {
	case Linear:
		return "linear"
	case Delta:
		return "delta"
	}
	return fmt.Sprintf("JoinKind(%d)", k)
}

// ErrJoinKind: ParseJoinKind was given something other than linear or delta.
var ErrJoinKind = errors.New("plan: join strategy is linear or delta")

// ParseJoinKind parses "linear" or "delta".
func ParseJoinKind(s string) (JoinKind, error) {
	switch s {
	case "linear":
		return Linear, nil
	case "delta":
		return Delta, nil
	}
	return 0, fmt.Errorf("%w, not %q", ErrJoinKind, s)
}

// From is one entry of a query's from: a collection under an alias.
type From struct {
	As         string
	Collection string
}

// Query is a query: the top-level one or a query view's.
//
// Per joined row, in order: Maps, Filters, Project; then Reduce, then
// Distinct or Threshold (docs/spec.md "The query").
type Query struct {
	From []From
	Join JoinKind
	// On lists equivalence classes of refs "alias.column".
	On      [][]string
	Maps    []Map
	Filters []string
	// Project lists refs; nil means every column of every from entry in
	// order, then the map names. A decoder keeps an explicit [] as an
	// empty non-nil slice: records with no columns.
	Project   []string
	Reduce    *Reduce
	Distinct  bool
	Threshold bool
}

// Reduce groups the projected records by GroupBy (refs to project output
// names, possibly none) and computes Aggregates.
type Reduce struct {
	GroupBy    []string
	Aggregates []Aggregate
}

// AggFn is an aggregate function.
type AggFn uint8

// The aggregate functions.
const (
	Count AggFn = iota
	Sum
	Min
	Max
)

func (f AggFn) String() string {
	switch f {
	case Count:
		return "count"
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return fmt.Sprintf("AggFn(%d)", f)
}

// ErrAggFn: ParseAggFn was given an unknown function.
var ErrAggFn = errors.New("plan: aggregate function is count, sum, min or max")

// ParseAggFn parses "count", "sum", "min" or "max".
func ParseAggFn(s string) (AggFn, error) {
	for f := Count; f <= Max; f++ {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w, not %q", ErrAggFn, s)
}

// Aggregate is one aggregate of a reduce. Expr is empty for Count and
// required for the others; it refers to project output names.
type Aggregate struct {
	Name string
	Fn   AggFn
	Expr string
}
