package reference

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
)

// ErrInput: an update does not fit its input (unknown input, wrong number
// of columns, diff 0).
var ErrInput = errors.New("reference: bad input")

// errNoPlan is Eval's and EvalCollection's error for a nil plan, or one
// plan.Resolve did not make (a plan.Resolved{} has no query).
var errNoPlan = errors.New("reference: no resolved plan (nil *plan.Resolved, or one not made by plan.Resolve)")

// ErrTime: Eval was asked for a time where the query's output holds no
// answer, before the plan's as_of or at or after its until (docs/spec.md
// "Fields", as_of and until; `benchrun eval` refuses the same times).
var ErrTime = errors.New("reference: no answer at this time")

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
// "Expressions" then only requires the output to contain a numeric overflow
// error, and leaves the rest unspecified. Errors then contain
// "numeric overflow" and rows and other counts are those that fit.
//
// MayOverflow reports that an engine evaluating incrementally may leave
// int64 at this time or before, though no accumulated count does: an
// update's diff times another's, or a partial sum of diffs consolidated
// in some order (O4). The output may then be the exact one, or hold a
// numeric overflow error with the rest unspecified, from the time it
// happened on. Overflow implies MayOverflow.
//
// ExprOverflow is the count of the numeric overflow errors that the
// query's own expressions produced (each with its row's count, which may
// be negative), apart from those a reduce, distinct or threshold produces
// (count 1 each) and those its from entries' collections carry (a view's
// expressions' count is not the query's, docs/spec.md "Expressions").
// When it is negative, the numeric overflow an overflow of counts adds
// can cancel it (docs/semantics.md §1.1, a known gap).
type Result struct {
	Time         uint64
	Columns      []string
	Rows         []Row
	Errors       []Error
	Overflow     bool
	MayOverflow  bool
	ExprOverflow int64
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
	switch {
	case r.Overflow:
		b.WriteString("# overflow: the rest of this time's output is unspecified\n")
	case r.MayOverflow:
		b.WriteString("# may overflow: an incremental sum or product of diffs can leave int64; this output, or one with a numeric overflow error\n")
	}
	return b.String()
}

// Compare returns the differences of got from want (nil when they agree).
// When want.Overflow is set, got need only contain a numeric overflow
// error; when want.MayOverflow is, got is either want or holds a numeric
// overflow error. Either way, when want's expressions' numeric overflow
// errors have a negative count (ExprOverflow), got may hold no numeric
// overflow error at all: the one an overflow of counts adds cancelled
// them, and the rest is unspecified (docs/semantics.md §1.1). A nil
// Result is no result: it agrees only with another.
func Compare(want, got *Result) []string {
	switch {
	case want == nil && got == nil:
		return nil
	case want == nil:
		return []string{"want no result (nil), got one"}
	case got == nil:
		return []string{"got no result (nil)"}
	}
	var diffs []string
	if !slices.Equal(want.Columns, got.Columns) {
		diffs = append(diffs, fmt.Sprintf("columns: want %v, got %v", want.Columns, got.Columns))
	}
	overflowed := slices.ContainsFunc(got.Errors, func(e Error) bool { return e.Message == MsgOverflow })
	cancelled := want.MayOverflow && !overflowed && want.ExprOverflow < 0
	switch {
	case want.Overflow && overflowed, want.MayOverflow && !want.Overflow && overflowed, cancelled:
		return diffs
	case want.Overflow:
		return append(diffs, "want a numeric overflow error (an exact count left int64); got none")
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
// counts (zero counts removed), and the mass of every row and error any
// update up to the time reached (O4), zero counts included.
type coll struct {
	rows    map[string]*rec
	errs    map[string]*big.Int
	mass    map[string]*rec
	errMass map[string]*big.Int
	// single holds the rows whose count is one update's diff (an input's
	// row updated once up to the time, or a simple view's row of one):
	// every engine multiplies that diff itself into a joined row.
	single map[string]bool
	// exprOverflow is the part of errs[MsgOverflow] that this
	// collection's own expressions produced (addExprErr), whatever
	// reduces and distincts add; the errors of what it reads (addErrs)
	// leave it as it is.
	exprOverflow *big.Int
}

type rec struct {
	vals []int64
	n    *big.Int
}

func newColl() *coll {
	return &coll{rows: map[string]*rec{}, errs: map[string]*big.Int{}, mass: map[string]*rec{}, errMass: map[string]*big.Int{}, single: map[string]bool{}, exprOverflow: new(big.Int)}
}

// RowText writes a row's values as Compare's differences name a row:
// decimal, separated by commas.
func RowText(v []int64) string { return rowKey(v) }

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

// addExprErr adds n to the count of the error msg that an expression
// produced.
func (c *coll) addExprErr(msg string, n *big.Int) {
	c.addErr(msg, n)
	if msg == MsgOverflow {
		c.exprOverflow.Add(c.exprOverflow, n)
	}
}

// addMass adds m to the mass of the row vals.
func (c *coll) addMass(vals []int64, m *big.Int) {
	k := rowKey(vals)
	r, ok := c.mass[k]
	if !ok {
		r = &rec{vals: slices.Clone(vals), n: new(big.Int)}
		c.mass[k] = r
	}
	r.n.Add(r.n, m)
}

// addErrMass adds m to the mass of the error msg.
func (c *coll) addErrMass(msg string, m *big.Int) {
	e, ok := c.errMass[msg]
	if !ok {
		e = new(big.Int)
		c.errMass[msg] = e
	}
	e.Add(e, m)
}

// addErrs adds the errors from carries, as a from entry's or a simple
// view's input's. Its expressions' numeric overflow count is not carried:
// ExprOverflow is the query's own expressions' (docs/spec.md
// "Expressions": where the negative count is a view's, check reports
// the missing error).
func (c *coll) addErrs(from *coll) {
	for m, n := range from.errs {
		c.addErr(m, n)
	}
	for msg, m := range from.errMass {
		c.addErrMass(msg, m)
	}
}

// count returns the exact count of the row with key k (zero when absent).
func (c *coll) count(k string) *big.Int {
	if r, ok := c.rows[k]; ok {
		return r.n
	}
	return new(big.Int)
}

// sortedMass returns the rows with a mass, with their masses, in numeric
// column order.
func (c *coll) sortedMass() []*rec {
	out := make([]*rec, 0, len(c.mass))
	for _, r := range c.mass {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *rec) int { return slices.Compare(a.vals, b.vals) })
	return out
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
	// mayOverflow: a mass left int64 (O4).
	mayOverflow bool
	// changes bounds the mass of an output row of reduce or distinct,
	// whose count is 1 and changes at most once each way per input time:
	// twice the number of distinct input times up to t.
	changes *big.Int
	// past holds, per reduce view, the rows it held at earlier times;
	// view is the view being evaluated ("" for the query).
	past map[string]map[string][]int64
	view string
	// bound counts the rows the joins form (EvalWithin); nil: no bound.
	bound *bound
}

// bound is EvalWithin's count of the rows joins formed, shared by the
// evaluations of one call.
type bound struct{ max, formed int64 }

// newBound returns the bound of maxRows rows, nil for none (maxRows <= 0).
func newBound(maxRows int64) *bound {
	if maxRows <= 0 {
		return nil
	}
	return &bound{max: maxRows}
}

// form counts one row a join formed, and reports an error wrapping
// ErrTooLarge once there are more than the bound allows.
func (ev *evaluator) form() error {
	b := ev.bound
	if b == nil {
		return nil
	}
	if b.formed++; b.formed > b.max {
		return fmt.Errorf("%w: more than %d", ErrTooLarge, b.max)
	}
	return nil
}

// Eval evaluates the plan's query over the inputs accumulated at t (every
// update with time <= t), naively: inputs accumulated exactly, views in
// order, joins by nested loops over a hash of each entry's rows, every
// expression on math/big, the rules of docs/spec.md "The query" and
// "Expressions" applied literally. The query answers from the plan's as_of to
// before its until, as the engine's output does: a t outside is an error
// wrapping ErrTime that names t and the bound.
func Eval(r *plan.Resolved, in Inputs, t uint64) (*Result, error) {
	return EvalWithin(r, in, t, 0)
}

// ErrTooLarge: EvalWithin gave up, its joins having formed more rows than
// its bound.
var ErrTooLarge = errors.New("reference: the joins form more rows than the bound")

// EvalWithin is Eval with a bound on its work: once its joins have formed
// more than maxRows rows — the partial rows of every join's nested loops
// and of every delta path's, in the views and the query, at t and at the
// earlier times a reduce view is evaluated at — it gives up with an error
// wrapping ErrTooLarge. A join of n entries forms as many rows as the
// products of their matches, which the reference visits one by one (and
// the engine, dropping the columns nothing downstream reads, often does
// not): a few rows per input can ask it for millions. A generator of
// random plans skips those rather than wait. maxRows <= 0 bounds nothing
// (Eval).
func EvalWithin(r *plan.Resolved, in Inputs, t uint64, maxRows int64) (*Result, error) {
	if r == nil || r.Query == nil || r.Plan == nil {
		return nil, errNoPlan
	}
	if t < r.Plan.AsOf {
		return nil, fmt.Errorf("%w: time %d is before as_of %d: the query's output starts at as_of", ErrTime, t, r.Plan.AsOf)
	}
	if r.Plan.HasUntil && t >= r.Plan.Until {
		return nil, fmt.Errorf("%w: time %d is not before until %d: the query's output ends before until", ErrTime, t, r.Plan.Until)
	}
	ev, err := evalViews(r, in, t, newBound(maxRows))
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
// on it holds them. An index is maintained from time 0 with no until
// (docs/spec.md "Indexes and arrangements"), so any t has an answer here: the
// plan's as_of and until bound the query alone.
func EvalCollection(r *plan.Resolved, in Inputs, t uint64, name string) (*Result, error) {
	if r == nil || r.Query == nil || r.Plan == nil {
		return nil, errNoPlan
	}
	c := r.Collection(name)
	if c == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCollection, name)
	}
	ev, err := evalViews(r, in, t, nil)
	if err != nil {
		return nil, err
	}
	return ev.result(ev.colls[name], c.Columns), nil
}

// evalViews checks the inputs and evaluates every input and view at t,
// its joins within b (nil: no bound).
func evalViews(r *plan.Resolved, in Inputs, t uint64, b *bound) (*evaluator, error) {
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
	times := map[uint64]bool{}
	for _, ups := range in {
		for _, u := range ups {
			if u.Time <= t {
				times[u.Time] = true
			}
		}
	}
	// A reduce view's output rows change with its aggregates: the rows it
	// held at any earlier time passed through what reads it, and keep
	// their mass (O4). They are found by evaluating the views at each
	// earlier input time; a plan without a reduce view skips this.
	var past map[string]map[string][]int64
	if slices.ContainsFunc(r.Views, func(c *plan.Collection) bool { return c.Query != nil && c.Query.Reduce != nil }) {
		past = map[string]map[string][]int64{}
		for _, t1 := range slices.Sorted(maps.Keys(times)) {
			if t1 == t {
				continue
			}
			ev1, err := evalViewsAt(r, in, t1, nil, len(times), b)
			if err != nil {
				return nil, err
			}
			for _, c := range r.Views {
				if c.Query == nil || c.Query.Reduce == nil {
					continue
				}
				if past[c.Name] == nil {
					past[c.Name] = map[string][]int64{}
				}
				for k, row := range ev1.colls[c.Name].rows {
					past[c.Name][k] = row.vals
				}
			}
		}
	}
	return evalViewsAt(r, in, t, past, len(times), b)
}

// evalViewsAt evaluates every input and view at t, with past, the output
// rows each reduce view held at earlier times (nil: none given), and
// times, the number of distinct input times up to t, its joins within b.
func evalViewsAt(r *plan.Resolved, in Inputs, t uint64, past map[string]map[string][]int64, times int, b *bound) (*evaluator, error) {
	ev := &evaluator{r: r, in: in, t: t, colls: map[string]*coll{}, exprs: map[string]*bigExpr{}, past: past, bound: b}
	ev.changes = big.NewInt(2 * int64(max(times, 1)))
	for _, c := range r.Inputs {
		ev.colls[c.Name] = ev.input(c)
	}
	for _, c := range r.Views {
		var out *coll
		var err error
		if c.Query != nil {
			ev.view = c.Name
			out, err = ev.query(c.Query)
			ev.view = ""
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
	res := &Result{Time: ev.t, Columns: slices.Clone(cols), Overflow: ev.overflow, MayOverflow: ev.mayOverflow}
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
	res.MayOverflow = res.MayOverflow || res.Overflow
	if c.exprOverflow.IsInt64() {
		res.ExprOverflow = c.exprOverflow.Int64()
	} else if c.exprOverflow.Sign() < 0 {
		res.ExprOverflow = math.MinInt64
	} else {
		res.ExprOverflow = math.MaxInt64
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

// maxMass is the largest mass no sum or product of counts it bounds can
// leave int64 with.
var maxMass = big.NewInt(math.MaxInt64)

// noteMass records that a mass left int64 (O4).
func (ev *evaluator) noteMass(m *big.Int) {
	if m.Cmp(maxMass) > 0 {
		ev.mayOverflow = true
	}
}

func (ev *evaluator) input(c *plan.Collection) *coll {
	out := newColl()
	updates := map[string]int{}
	for _, u := range ev.in[c.Name] {
		if u.Time <= ev.t {
			d := big.NewInt(u.Diff)
			out.addRow(u.Row, d)
			out.addMass(u.Row, new(big.Int).Abs(d))
			updates[rowKey(u.Row)]++
		}
	}
	for k, n := range updates {
		if n == 1 {
			out.single[k] = true
		}
	}
	ev.noteColl(out, false)
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
	// Every row an update reached, at its count (zero included) and mass.
	for _, r := range src.sortedMass() {
		n := src.count(rowKey(r.vals))
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
			out.addExprErr(msg, n)
			out.addErrMass(msg, r.n)
			continue
		}
		if ok {
			out.addRow(row, n)
			out.addMass(row, r.n)
			if src.single[rowKey(r.vals)] {
				out.single[rowKey(row)] = true // the row holds the input's columns: one source row
			}
		}
	}
	ev.noteColl(out, false)
	return out, nil
}

// noteColl records the masses of c's rows and errors (O4) and, when
// strict, that a count of c left int64 (Overflow). Only the query's own
// counts are strict: an input's or a view's count that leaves int64 is
// one the engine meets only where it accumulates that row — an
// arrangement's merge reports it at its frontier (docs/semantics.md §1.1),
// and a row a filter drops, or a collection nothing reads, it never
// accumulates — so there it is an overflow the engine may report, as its
// mass, at least as large, already says. A count that reaches the query
// is strict there, through the joined row's product and the records.
func (ev *evaluator) noteColl(c *coll, strict bool) {
	if strict {
		for _, r := range c.rows {
			ev.note(r.n)
		}
		for _, n := range c.errs {
			ev.note(n)
		}
	}
	for _, r := range c.mass {
		ev.noteMass(r.n)
	}
	for _, m := range c.errMass {
		ev.noteMass(m)
	}
}
