package spec

import "math"

// Table holds the updates of one input column-wise: update i is
// (Times[i], Diffs[i], Vals[i*arity : (i+1)*arity]) with arity =
// len(Columns). Appending copies the row; nothing else allocates per
// update.
type Table struct {
	Columns []string
	Times   []uint64
	Diffs   []int64
	Vals    []int64
	// Input is the name of the input the table was loaded for:
	// workloads.Load sets it, and workloads.CheckTables refuses a table
	// named for another input than the one at its position (two inputs
	// of the same columns swapped). Empty for a table made otherwise,
	// which CheckTables can only tell by its columns.
	Input string
}

// NewTable returns an empty table with room for capacity updates (none
// for a capacity below 0).
func NewTable(columns []string, capacity int) *Table {
	capacity = max(capacity, 0)
	vals := 0
	if w := len(columns); w > 0 && capacity <= math.MaxInt/w {
		vals = capacity * w
	}
	return &Table{
		Columns: columns,
		Times:   make([]uint64, 0, capacity),
		Diffs:   make([]int64, 0, capacity),
		Vals:    make([]int64, 0, vals),
	}
}

// Len returns the number of updates.
func (t *Table) Len() int { return len(t.Times) }

// Row returns update i's column values. The slice aliases the table.
func (t *Table) Row(i int) []int64 {
	a := len(t.Columns)
	return t.Vals[i*a : (i+1)*a : (i+1)*a]
}

// Append adds one update. REQUIRES: len(row) == len(t.Columns).
func (t *Table) Append(time uint64, diff int64, row []int64) {
	t.Times = append(t.Times, time)
	t.Diffs = append(t.Diffs, diff)
	t.Vals = append(t.Vals, row...)
}
