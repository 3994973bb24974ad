package reference

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
)

// ErrInput: an update does not fit its input (unknown input, wrong number
// of columns, diff 0).
var ErrInput = errors.New("reference: bad input")

// Update is one input update: a row, at a time, with a diff.
type Update struct {
	Time uint64
	Diff int64
	Row  []int64
}

// Inputs holds every input's updates by input name. An input with no entry
// is empty.
type Inputs map[string][]Update

// Row is an output row with its count at the time evaluated.
type Row struct {
	Values []int64
	Diff   int64
}

// Error is an error message with its count.
type Error struct {
	Message string
	Diff    int64
}

// Result is a collection accumulated at one time: its rows, sorted
// numerically column by column, and its errors, sorted by message, with
// non-zero counts.
//
// Overflow reports that an exact count left int64 at this time (a join's
// product of counts, an accumulation, an error total): docs/spec.md
// "Errors" then only requires the output to contain a numeric overflow
// error, and leaves the rest unspecified. Errors then contain
// "numeric overflow" and rows and other counts are those that fit.
type Result struct {
	Time     uint64
	Columns  []string
	Rows     []Row
	Errors   []Error
	Overflow bool
}

// String renders r like `benchrun eval`'s CSV (without the time lines).
func (r *Result) String() string {
	var b strings.Builder
	b.WriteString(strings.Join(r.Columns, ",") + ",diff\n")
	for _, row := range r.Rows {
		for _, v := range row.Values {
			b.WriteString(strconv.FormatInt(v, 10) + ",")
		}
		b.WriteString(strconv.FormatInt(row.Diff, 10) + "\n")
	}
	b.WriteString("error,diff\n")
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "%s,%d\n", e.Message, e.Diff)
	}
	if r.Overflow {
		b.WriteString("# overflow: the rest of this time's output is unspecified\n")
	}
	return b.String()
}

// Compare returns the differences of got from want (nil when they agree).
// When want.Overflow is set, got need only contain a numeric overflow
// error.
func Compare(want, got *Result) []string {
	if want.Overflow {
		for _, e := range got.Errors {
			if e.Message == MsgOverflow {
				return nil
			}
		}
		return []string{"want a numeric overflow error (an exact count left int64); got none"}
	}
	var diffs []string
	if !slices.Equal(want.Columns, got.Columns) {
		diffs = append(diffs, fmt.Sprintf("columns: want %v, got %v", want.Columns, got.Columns))
	}
	w, g := map[string]int64{}, map[string]int64{}
	for _, r := range want.Rows {
		w[rowKey(r.Values)] += r.Diff
	}
	for _, r := range got.Rows {
		g[rowKey(r.Values)] += r.Diff
	}
	for _, e := range want.Errors {
		w["error "+e.Message] += e.Diff
	}
	for _, e := range got.Errors {
		g["error "+e.Message] += e.Diff
	}
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if w[k] != g[k] {
			sorted = append(sorted, k)
		}
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		diffs = append(diffs, fmt.Sprintf("%s: want diff %d, got %d", k, w[k], g[k]))
	}
	return diffs
}

// coll is a collection accumulated at a time: rows and errors with exact
// counts (zero counts removed).
type coll struct {
	rows map[string]*rec
	errs map[string]*big.Int
}

type rec struct {
	vals []int64
	n    *big.Int
}

func newColl() *coll { return &coll{rows: map[string]*rec{}, errs: map[string]*big.Int{}} }

func rowKey(v []int64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	return b.String()
}

func (c *coll) addRow(vals []int64, n *big.Int) {
	k := rowKey(vals)
	r, ok := c.rows[k]
	if !ok {
		r = &rec{vals: slices.Clone(vals), n: new(big.Int)}
		c.rows[k] = r
	}
	r.n.Add(r.n, n)
	if r.n.Sign() == 0 {
		delete(c.rows, k)
	}
}

func (c *coll) addErr(msg string, n *big.Int) {
	e, ok := c.errs[msg]
	if !ok {
		e = new(big.Int)
		c.errs[msg] = e
	}
	e.Add(e, n)
	if e.Sign() == 0 {
		delete(c.errs, msg)
	}
}

func (c *coll) addErrs(from *coll) {
	for m, n := range from.errs {
		c.addErr(m, n)
	}
}

// sortedRows returns the records in numeric column order.
func (c *coll) sortedRows() []*rec {
	out := make([]*rec, 0, len(c.rows))
	for _, r := range c.rows {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *rec) int { return slices.Compare(a.vals, b.vals) })
	return out
}

// evaluator evaluates one plan at one time.
type evaluator struct {
	r        *plan.Resolved
	in       Inputs
	t        uint64
	colls    map[string]*coll
	exprs    map[string]*bigExpr
	overflow bool
}

// Eval evaluates the plan's query over the inputs accumulated at t (every
// update with time <= t), naively: inputs accumulated exactly, views in
// order, joins by nested loops over a hash of each entry's rows, every
// expression on math/big, the rules of docs/spec.md "The query" and
// "Errors" applied literally.
func Eval(r *plan.Resolved, in Inputs, t uint64) (*Result, error) {
	ev, err := evalViews(r, in, t)
	if err != nil {
		return nil, err
	}
	out, err := ev.query(r.Query)
	if err != nil {
		return nil, err
	}
	return ev.result(out, r.Query.Output), nil
}

// ErrUnknownCollection: EvalCollection was asked for a name that is no
// input or view.
var ErrUnknownCollection = errors.New("reference: unknown collection")

// EvalCollection is Eval for one input or view instead of the query: its
// rows (columns named as the collection's) and errors at t, as every index
// on it holds them.
func EvalCollection(r *plan.Resolved, in Inputs, t uint64, name string) (*Result, error) {
	c := r.Collection(name)
	if c == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCollection, name)
	}
	ev, err := evalViews(r, in, t)
	if err != nil {
		return nil, err
	}
	return ev.result(ev.colls[name], c.Columns), nil
}

// evalViews checks the inputs and evaluates every input and view at t.
func evalViews(r *plan.Resolved, in Inputs, t uint64) (*evaluator, error) {
	for name, ups := range in {
		c := r.Collection(name)
		if c == nil || c.Input == nil {
			return nil, fmt.Errorf("%w: no input is called %s", ErrInput, name)
		}
		for i, u := range ups {
			if len(u.Row) != len(c.Columns) {
				return nil, fmt.Errorf("%w: input %s: update %d has %d columns, want %d", ErrInput, name, i, len(u.Row), len(c.Columns))
			}
			if u.Diff == 0 {
				return nil, fmt.Errorf("%w: input %s: update %d has diff 0", ErrInput, name, i)
			}
		}
	}
	ev := &evaluator{r: r, in: in, t: t, colls: map[string]*coll{}, exprs: map[string]*bigExpr{}}
	for _, c := range r.Inputs {
		ev.colls[c.Name] = ev.input(c)
	}
	for _, c := range r.Views {
		var out *coll
		var err error
		if c.Query != nil {
			out, err = ev.query(c.Query)
		} else {
			out, err = ev.simple(c)
		}
		if err != nil {
			return nil, err
		}
		ev.colls[c.Name] = out
	}
	return ev, nil
}

func (ev *evaluator) result(c *coll, cols []string) *Result {
	res := &Result{Time: ev.t, Columns: slices.Clone(cols), Overflow: ev.overflow}
	for _, r := range c.sortedRows() {
		if !r.n.IsInt64() {
			res.Overflow = true
			continue
		}
		res.Rows = append(res.Rows, Row{Values: r.vals, Diff: r.n.Int64()})
	}
	msgs := make([]string, 0, len(c.errs))
	for m := range c.errs {
		msgs = append(msgs, m)
	}
	slices.Sort(msgs)
	for _, m := range msgs {
		n := c.errs[m]
		if !n.IsInt64() {
			res.Overflow = true
			continue
		}
		res.Errors = append(res.Errors, Error{Message: m, Diff: n.Int64()})
	}
	if res.Overflow && !slices.ContainsFunc(res.Errors, func(e Error) bool { return e.Message == MsgOverflow }) {
		res.Errors = append(res.Errors, Error{Message: MsgOverflow, Diff: 1})
		slices.SortFunc(res.Errors, func(a, b Error) int { return cmp.Compare(a.Message, b.Message) })
	}
	return res
}

// note records that an exact count left int64 at this time.
func (ev *evaluator) note(n *big.Int) {
	if !n.IsInt64() {
		ev.overflow = true
	}
}

func (ev *evaluator) input(c *plan.Collection) *coll {
	out := newColl()
	for _, u := range ev.in[c.Name] {
		if u.Time <= ev.t {
			out.addRow(u.Row, big.NewInt(u.Diff))
		}
	}
	for _, r := range out.rows {
		ev.note(r.n)
	}
	return out
}

func (ev *evaluator) parse(src string) (*bigExpr, error) {
	if b, ok := ev.exprs[src]; ok {
		return b, nil
	}
	b, err := parseBig(src)
	if err != nil {
		return nil, err
	}
	ev.exprs[src] = b
	return b, nil
}

// closure is maps, filters and a projection over a scope (docs/spec.md
// "The query"): every map in order, then the filters in order, then the
// projection.
type closure struct {
	maps    []plan.Map
	filters []string
	project []string // refs as written, into the scope after the maps
}

// apply evaluates the closure on one row whose columns the scope sc holds
// (it adds the maps to sc). It returns the projected row, or ok false when
// a filter dropped it, or the first error.
func (ev *evaluator) apply(cl *closure, sc scope) (row []int64, ok bool, err error) {
	for _, m := range cl.maps {
		b, err := ev.parse(m.Expr)
		if err != nil {
			return nil, false, err
		}
		v, err := b.eval(sc)
		if err != nil {
			return nil, false, err
		}
		sc[m.Name] = v
	}
	for _, f := range cl.filters {
		b, err := ev.parse(f)
		if err != nil {
			return nil, false, err
		}
		v, err := b.eval(sc)
		if err != nil {
			return nil, false, err
		}
		if v == 0 {
			return nil, false, nil
		}
	}
	row = make([]int64, len(cl.project))
	for i, p := range cl.project {
		v, ok := sc[p]
		if !ok {
			return nil, false, fmt.Errorf("%w: project: unknown column %s", ErrNotAccepted, p)
		}
		row[i] = v
	}
	return row, true, nil
}

// evalErr sorts an evaluation error into a message of the error
// collection, or passes any other error through.
func evalErr(err error) (string, error) {
	switch {
	case errors.Is(err, ErrDivisionByZero):
		return MsgDivisionByZero, nil
	case errors.Is(err, ErrOverflow):
		return MsgOverflow, nil
	}
	return "", err
}

func (ev *evaluator) simple(c *plan.Collection) (*coll, error) {
	src := ev.colls[c.View.Input]
	out := newColl()
	out.addErrs(src)
	in := ev.r.Collection(c.View.Input)
	cl := &closure{maps: c.View.Maps, filters: c.View.Filters, project: c.Columns}
	for _, r := range src.sortedRows() {
		sc := scope{}
		for i, col := range in.Columns {
			sc[col] = r.vals[i]
		}
		row, ok, err := ev.apply(cl, sc)
		if err != nil {
			msg, err := evalErr(err)
			if err != nil {
				return nil, fmt.Errorf("views.%s: %w", c.Name, err)
			}
			out.addErr(msg, r.n)
			continue
		}
		if ok {
			out.addRow(row, r.n)
		}
	}
	ev.noteColl(out)
	return out, nil
}

func (ev *evaluator) noteColl(c *coll) {
	for _, r := range c.rows {
		ev.note(r.n)
	}
	for _, n := range c.errs {
		ev.note(n)
	}
}
