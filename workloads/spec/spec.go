package spec

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tracebench/tracebench/core/plan"
)

// ErrInvalid is wrapped by every error that reports a bad spec, CSV file or
// inline row. Match it with errors.Is; read the position with errors.As
// into *Error.
var ErrInvalid = errors.New("spec: invalid workload")

// Error is a problem with user input at a position: a spec field
// (File, Line, Field) or a CSV line (File, Line, no Field).
type Error struct {
	File  string // the file as the user named it
	Line  int    // 1-based; 0 when unknown
	Field string // the spec field path, e.g. "inputs.orders.columns[1]"; "" for CSV lines
	Msg   string
}

// Error formats the position the way compilers do: file:line: field: msg.
// A member name of the field longer than 80 bytes is cut to its first 80,
// with its length, and a field holding a control character is quoted; a
// message made by this package quotes at most 80 bytes of a string of the
// spec the same way.
func (e *Error) Error() string {
	s := showFile(e.File)
	if s == "" {
		s = "<spec>"
	}
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += ": " + showField(e.Field)
	}
	return s + ": " + e.Msg
}

// Unwrap makes every Error match ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Version is the only spec version this package reads.
const Version = 1

// MaxTime is the largest time an update may have, in inline rows and CSV
// files: once every update of a time is fed, each input advances to the
// next time, and no time follows 2^64−1.
const MaxTime uint64 = math.MaxUint64 - 1

// maxTimeWhy explains MaxTime in messages.
const maxTimeWhy = "the engine advances each input past every time it holds"

// Spec is a decoded and structurally validated workload (docs/spec.md).
// Maps of the file (inputs, views, indexes) are kept in file order.
type Spec struct {
	File        string // path the spec was read from, as given; "" when decoded from bytes without a name
	Dir         string // directory relative paths resolve against
	Version     int
	Name        string
	Description string
	AsOf        uint64
	HasUntil    bool
	Until       uint64 // meaningful when HasUntil
	Inputs      []Input
	Views       []View
	Indexes     []Index
	Query       Query

	// Plan is the resolved logical plan: columns, layouts and the
	// arrangements each join strategy reads.
	Plan *plan.Resolved

	lines map[string]int // field path -> line, for messages about fields found later
}

// Pos returns "file:line: field" for a field path of the spec, for
// messages produced after decoding (by the plan, for instance).
func (s *Spec) Pos(field string) *Error {
	return &Error{File: s.File, Line: s.lineOf(field), Field: field}
}

// Errorf returns an Error at a field of the spec.
func (s *Spec) Errorf(field, format string, args ...any) error {
	e := s.Pos(field)
	e.Msg = bound(fmt.Sprintf(format, args...))
	return e
}

// Source says where an input's updates come from.
type Source uint8

const (
	SourceCSV Source = iota + 1
	SourceGenerate
	SourceRows
)

// String returns the spec field name of the source.
func (s Source) String() string {
	switch s {
	case SourceCSV:
		return "csv"
	case SourceGenerate:
		return "generate"
	case SourceRows:
		return "rows"
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// Input is one entry of "inputs".
type Input struct {
	Name     string
	Columns  []string
	Source   Source
	CSV      string    // as written in the spec (SourceCSV)
	Generate *Generate // SourceGenerate
	Rows     *Table    // SourceRows: the inline rows, validated
}

// Field returns the spec path of the input.
func (in *Input) Field() string { return "inputs." + in.Name }

// Dist is a generator column distribution.
type Dist uint8

const (
	DistSeq Dist = iota + 1
	DistUniform
	DistZipf
)

// String returns the spec spelling of the distribution.
func (d Dist) String() string {
	switch d {
	case DistSeq:
		return "seq"
	case DistUniform:
		return "uniform"
	case DistZipf:
		return "zipf"
	}
	return "dist(" + strconv.Itoa(int(d)) + ")"
}

// Generate is a generated input (docs/spec.md, "Inputs").
type Generate struct {
	Rows    uint64      // updates in total, retractions included
	Seed    uint64      // combined with the run's --seed
	Batches uint64      // consecutive times 0..Batches-1; default 1
	Retract float64     // fraction of updates from time 1 on that retract; 0 <= Retract < 1
	Columns []ColumnGen // one per input column, in the input's column order
}

// ColumnGen is the distribution of one generated column.
type ColumnGen struct {
	Column string
	Dist   Dist
	Min    int64   // uniform
	Max    int64   // uniform, inclusive
	N      uint64  // zipf: values 0..N-1
	S      float64 // zipf exponent, > 0
}

// View is one entry of "views": a simple view (Input set) or a query view
// (Query set).
type View struct {
	Name   string
	Input  string // simple view: the collection it reads
	Map    []Map
	Filter []string
	Query  *Query // query view
}

// Field returns the spec path of the view.
func (v *View) Field() string { return "views." + v.Name }

// Map is one computed column.
type Map struct {
	Name string
	Expr string
}

// Index is one entry of "indexes".
type Index struct {
	Name string
	On   string
	Key  []string
}

// Field returns the spec path of the index.
func (ix *Index) Field() string { return "indexes." + ix.Name }

// Join strategies.
const (
	JoinLinear = "linear"
	JoinDelta  = "delta"
)

// Query is the top-level query or a query view's query.
type Query struct {
	From       []From
	Join       string // JoinLinear or JoinDelta; defaulted to JoinLinear
	On         [][]string
	Map        []Map
	Filter     []string
	Project    []string
	HasProject bool // false: project every from column, then the map names
	Reduce     *Reduce
	Distinct   bool
	Threshold  bool
}

// From is one entry of a query's "from".
type From struct {
	As         string
	Collection string
}

// Reduce is a query's "reduce".
type Reduce struct {
	GroupBy    []string
	Aggregates []Aggregate
}

// Aggregate functions.
const (
	FnCount = "count"
	FnSum   = "sum"
	FnMin   = "min"
	FnMax   = "max"
)

// Aggregate is one aggregate of a reduce.
type Aggregate struct {
	Name string
	Fn   string
	Expr string // "" for count
}
