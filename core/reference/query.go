package reference

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/tracebench/tracebench/core/plan"
)

// query evaluates a query: the entries' errors once per entry, the join,
// the closure per joined row, then reduce, then distinct or threshold.
func (ev *evaluator) query(q *plan.ResolvedQuery) (*coll, error) {
	n := len(q.Entries)
	out := newColl()
	ents := make([]*coll, n)
	for i, e := range q.Entries {
		c := ev.colls[e.Collection.Name]
		out.addErrs(c) // once per entry, however often a collection appears
		ents[i] = c
	}
	// The class of each joined position, and per entry the columns that
	// share a class with an earlier entry, looked up by a hash of their
	// values taken from the first earlier column of the class.
	class := make([]int, len(q.Joined))
	for i := range class {
		class[i] = -1
	}
	for k, c := range q.Classes {
		for _, pos := range c {
			class[pos] = k
		}
	}
	entryOf := func(pos int) int {
		e := 0
		for e+1 < n && q.Entries[e+1].Offset <= pos {
			e++
		}
		return e
	}
	keyCols := make([][]int, n) // positions within the entry
	repPos := make([][]int, n)  // joined positions in earlier entries
	// Each entry's rows are every row an update reached: its exact count
	// (zero included) beside its mass (O4).
	type entryRow struct {
		vals    []int64
		n, mass *big.Int
		single  bool
	}
	index := make([]map[string][]entryRow, n)
	for k, e := range q.Entries {
		for j := range e.Collection.Columns {
			c := class[e.Offset+j]
			if c < 0 {
				continue
			}
			for _, pos := range q.Classes[c] {
				if entryOf(pos) < k {
					keyCols[k] = append(keyCols[k], j)
					repPos[k] = append(repPos[k], pos)
					break
				}
			}
		}
		index[k] = map[string][]entryRow{}
		for _, r := range ents[k].sortedMass() {
			key := make([]int64, len(keyCols[k]))
			for i, j := range keyCols[k] {
				key[i] = r.vals[j]
			}
			kk := rowKey(key)
			index[k][kk] = append(index[k][kk], entryRow{vals: r.vals, n: ents[k].count(rowKey(r.vals)), mass: r.n, single: ents[k].single[rowKey(r.vals)]})
		}
	}
	cl := &closure{maps: q.Query.Maps, filters: q.Query.Filters}
	for _, p := range q.MFP.Project {
		cl.project = append(cl.project, p.String())
	}
	records := newColl()
	joined := make([]int64, len(q.Joined))
	counts := make([]*big.Int, n+1)
	counts[0] = big.NewInt(1)
	masses := make([]*big.Int, n+1)
	masses[0] = big.NewInt(1)
	singles := make([]bool, n+1) // every row so far is one update's
	singles[0] = true
	var walk func(k int) error
	walk = func(k int) error {
		if k == n {
			return ev.joinedRow(q, cl, joined, counts[n], masses[n], singles[n], records, out)
		}
		key := make([]int64, len(repPos[k]))
		for i, pos := range repPos[k] {
			key[i] = joined[pos]
		}
		for _, r := range index[k][rowKey(key)] {
			if err := ev.form(); err != nil {
				return err
			}
			copy(joined[q.Entries[k].Offset:], r.vals)
			counts[k+1] = new(big.Int).Mul(counts[k], r.n)
			// A linear join arranges each stage's result by its rows;
			// every product and sum it forms for one is within this
			// product of masses, the delta join's too.
			masses[k+1] = new(big.Int).Mul(masses[k], r.mass)
			singles[k+1] = singles[k] && r.single
			ev.noteMass(masses[k+1])
			if err := walk(k + 1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(0); err != nil {
		return nil, fmt.Errorf("%s: %w", q.Field, err)
	}
	// A delta path joins its entries in its own lookup order (q.Delta), so
	// its partial rows are not those of the prefixes of from walked above:
	// a path can multiply diffs into a partial row that no later entry
	// matches. Their masses too (O4). A path matches a lookup by its key
	// only and leaves every other equivalence to its final closure, so
	// its rows, partial and full, are the key matches: a source row whose
	// own columns break a class (p.x = p.y), or whose lookup's do, is
	// multiplied all the same, by the last lookup too.
	for _, path := range q.Delta {
		if ev.mayOverflow || len(path.Stages) == 0 {
			break
		}
		order := []int{path.Source.Entry}
		for _, st := range path.Stages {
			order = append(order, st.Entry)
		}
		lookups := make([]map[string][]entryRow, len(order))
		for s := 1; s < len(order); s++ {
			st := path.Stages[s-1]
			lookups[s] = map[string][]entryRow{}
			for _, r := range ents[st.Entry].sortedMass() {
				key := make([]int64, len(st.KeyColumns))
				for i, j := range st.KeyColumns {
					key[i] = r.vals[j]
				}
				kk := rowKey(key)
				lookups[s][kk] = append(lookups[s][kk], entryRow{vals: r.vals, mass: r.n})
			}
		}
		var walkPath func(s int, mass *big.Int) error
		walkPath = func(s int, mass *big.Int) error {
			if s == len(order) || ev.mayOverflow {
				return nil
			}
			e := order[s]
			var rows []entryRow
			if s == 0 {
				for _, r := range ents[e].sortedMass() {
					rows = append(rows, entryRow{vals: r.vals, mass: r.n})
				}
			} else {
				st := path.Stages[s-1]
				key := make([]int64, len(st.StreamKey))
				for i, pos := range st.StreamKey {
					key[i] = joined[pos]
				}
				rows = lookups[s][rowKey(key)]
			}
			for _, r := range rows {
				if err := ev.form(); err != nil {
					return err
				}
				copy(joined[q.Entries[e].Offset:], r.vals)
				m := new(big.Int).Mul(mass, r.mass)
				ev.noteMass(m)
				if err := walkPath(s+1, m); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walkPath(0, big.NewInt(1)); err != nil {
			return nil, fmt.Errorf("%s: %w", q.Field, err)
		}
	}
	ev.noteColl(records, ev.view == "")
	rows := records
	if q.Reduce != nil {
		var err error
		if rows, err = ev.reduce(q, records, out); err != nil {
			return nil, fmt.Errorf("%s.reduce: %w", q.Field, err)
		}
	}
	switch {
	case q.Distinct:
		for _, r := range rows.sortedRows() {
			switch {
			case !r.n.IsInt64(): // on either side (docs/semantics.md §6.4)
				out.addErr(MsgOverflow, big.NewInt(1))
			case r.n.Sign() > 0:
				out.addRow(r.vals, big.NewInt(1))
			default:
				out.addErr(MsgNegativeMultiplicity, big.NewInt(1))
			}
		}
		// A record's output row, or its error, is 1 and changes at most
		// once each way an input time.
		for _, r := range rows.sortedMass() {
			out.addMass(r.vals, ev.changes)
		}
		perRecords := new(big.Int).Mul(ev.changes, big.NewInt(int64(len(rows.mass))))
		out.addErrMass(MsgNegativeMultiplicity, perRecords)
		out.addErrMass(MsgOverflow, perRecords)
	case q.Threshold:
		for _, r := range rows.sortedRows() {
			switch {
			case !r.n.IsInt64(): // on either side (docs/semantics.md §6.4)
				out.addErr(MsgOverflow, big.NewInt(1))
			case r.n.Sign() > 0:
				out.addRow(r.vals, r.n)
			}
		}
		// The positive part of a count changes by no more than it; a
		// record's overflow error is 1 and changes at most once each way
		// an input time.
		for _, r := range rows.mass {
			out.addMass(r.vals, r.n)
		}
		out.addErrMass(MsgOverflow, new(big.Int).Mul(ev.changes, big.NewInt(int64(len(rows.mass)))))
	default:
		for _, r := range rows.rows {
			out.addRow(r.vals, r.n)
		}
		for _, r := range rows.mass {
			out.addMass(r.vals, r.n)
		}
	}
	ev.noteColl(out, ev.view == "")
	return out, nil
}

// joinedRow applies the closure to one joined row with count n: a row
// whose equivalences fail is no joined row; an erring row becomes its
// error with count n. single reports that each of the row's rows is one
// update's.
func (ev *evaluator) joinedRow(q *plan.ResolvedQuery, cl *closure, joined []int64, n, mass *big.Int, single bool, records, out *coll) error {
	for _, c := range q.Classes {
		for _, pos := range c[1:] {
			if joined[pos] != joined[c[0]] {
				return nil
			}
		}
	}
	sc := scope{}
	for i, ref := range q.Joined {
		sc[ref.String()] = joined[i]
	}
	// A joined row's count is the exact product of its rows' counts, but
	// the engine accumulates it only as part of what the row becomes:
	// its record, summed with every joined row the projection makes the
	// same record, or its error, counted by message. Those counts are
	// strict (noteColl); a row the closure drops is held by nothing. The
	// engine multiplies the row's own product only when each of its rows
	// is one update (of several, it multiplies their diffs, partial sums
	// at most): a kept row's product is then strict. Otherwise the row's
	// mass, at least as large as its product, says it may overflow.
	row, ok, err := ev.apply(cl, sc)
	if ev.view == "" && ok && single {
		ev.note(n)
	}
	if err != nil {
		msg, err := evalErr(err)
		if err != nil {
			return err
		}
		out.addExprErr(msg, n)
		out.addErrMass(msg, mass)
		return nil
	}
	if ok {
		records.addRow(row, n)
		records.addMass(row, mass)
	}
	return nil
}

type member struct {
	n    *big.Int
	vals []int64 // per aggregate; unused for count
}

type group struct {
	key     []int64
	members []member
}

// reduce applies docs/spec.md's reduce to the consolidated records, in
// its order: (1) a record whose aggregate exprs err goes to the errors
// with its count and leaves its group; (2) a group holding a record whose
// count lies outside int64 yields one numeric overflow error and no row,
// also when another of its records is negative; (3) else a group holding
// a record with a negative count yields one negative multiplicity error
// and no row; (4) a group whose exact sum or count lies outside int64
// yields one numeric overflow error and no row; (5) a group with no
// records yields nothing (docs/semantics.md §6.3).
func (ev *evaluator) reduce(q *plan.ResolvedQuery, records, out *coll) (*coll, error) {
	red := q.Reduce
	groups := map[string]*group{}
	var order []*group
	for _, r := range records.sortedRows() {
		sc := scope{}
		for i, p := range q.MFP.Project {
			sc[p.String()] = r.vals[i]
		}
		m := member{n: r.n, vals: make([]int64, len(red.Aggregates))}
		erred := false
		for i, a := range red.Aggregates {
			if a.Fn == plan.Count {
				continue
			}
			b, err := ev.parse(a.Expr)
			if err != nil {
				return nil, err
			}
			v, err := b.eval(sc)
			if err != nil {
				msg, err := evalErr(err)
				if err != nil {
					return nil, err
				}
				out.addExprErr(msg, r.n)
				erred = true
				break
			}
			m.vals[i] = v
		}
		if erred {
			continue
		}
		key := make([]int64, len(red.GroupBy))
		for i, pos := range red.GroupBy {
			key[i] = r.vals[pos]
		}
		kk := rowKey(key)
		g, ok := groups[kk]
		if !ok {
			g = &group{key: key}
			groups[kk] = g
			order = append(order, g)
		}
		g.members = append(g.members, m)
	}
	res := newColl()
	one := big.NewInt(1)
	for _, g := range order {
		if slices.ContainsFunc(g.members, func(m member) bool { return !m.n.IsInt64() }) {
			out.addErr(MsgOverflow, one)
			continue
		}
		if slices.ContainsFunc(g.members, func(m member) bool { return m.n.Sign() < 0 }) {
			out.addErr(MsgNegativeMultiplicity, one)
			continue
		}
		row := slices.Clone(g.key)
		overflow := false
		for i, a := range red.Aggregates {
			acc := new(big.Int)
			switch a.Fn {
			case plan.Count:
				for _, m := range g.members {
					acc.Add(acc, m.n)
				}
			case plan.Sum:
				for _, m := range g.members {
					acc.Add(acc, new(big.Int).Mul(big.NewInt(m.vals[i]), m.n))
				}
			case plan.Min, plan.Max:
				acc.SetInt64(g.members[0].vals[i])
				for _, m := range g.members[1:] {
					v := big.NewInt(m.vals[i])
					if (a.Fn == plan.Min) == (v.Cmp(acc) < 0) {
						acc = v
					}
				}
			}
			if !acc.IsInt64() {
				overflow = true
				break
			}
			row = append(row, acc.Int64())
		}
		if overflow {
			out.addErr(MsgOverflow, one)
			continue
		}
		res.addRow(row, one)
	}
	// Masses (O4): a record whose aggregate exprs err moves its mass to
	// the error; a group's output row, and its error, is 1 and changes at
	// most once each way an input time.
	groupsSeen := map[string]bool{}
	for _, r := range records.sortedMass() {
		sc := scope{}
		for i, p := range q.MFP.Project {
			sc[p.String()] = r.vals[i]
		}
		erred := false
		for _, a := range red.Aggregates {
			if a.Fn == plan.Count {
				continue
			}
			b, err := ev.parse(a.Expr)
			if err != nil {
				return nil, err
			}
			if _, err := b.eval(sc); err != nil {
				msg, err := evalErr(err)
				if err != nil {
					return nil, err
				}
				out.addErrMass(msg, r.n)
				erred = true
				break
			}
		}
		if erred {
			continue
		}
		key := make([]int64, len(red.GroupBy))
		for i, pos := range red.GroupBy {
			key[i] = r.vals[pos]
		}
		groupsSeen[rowKey(key)] = true
	}
	for _, r := range res.rows {
		res.addMass(r.vals, ev.changes)
	}
	for k, vals := range ev.past[ev.view] {
		if _, ok := res.rows[k]; !ok {
			res.addMass(vals, ev.changes)
		}
	}
	perGroups := new(big.Int).Mul(ev.changes, big.NewInt(int64(len(groupsSeen))))
	out.addErrMass(MsgNegativeMultiplicity, perGroups)
	out.addErrMass(MsgOverflow, perGroups)
	return res, nil
}
