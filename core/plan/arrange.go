package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Arrangement is a collection arranged by a set of its columns
// (docs/spec.md "Indexes and arrangements"). Key is in the serving index's
// order when one serves, else in the collection's column order. Any means
// that any arrangement of the collection will do (the only entry of a
// query, a delta path's source); Key is then nil.
type Arrangement struct {
	Collection string
	Key        []string
	Any        bool
}

// String returns "coll(k1, k2)", "coll()" for the empty key, or
// "coll(any)".
func (a Arrangement) String() string {
	if a.Any {
		return a.Collection + "(any)"
	}
	return a.Collection + "(" + strings.Join(a.Key, ", ") + ")"
}

// Lookup is one arrangement a join reads: from entry Entry by Arrangement,
// matched against the stream's columns StreamKey.
type Lookup struct {
	// Entry is the position in the query's from.
	Entry       int
	Arrangement Arrangement
	// KeyColumns are the positions of Arrangement.Key in the entry's
	// collection.
	KeyColumns []int
	// StreamKey are joined-row positions of columns of already bound
	// entries, aligned with Arrangement.Key: StreamKey[i] is the first bound
	// column (in joined-row order) of the class of Key[i]. Nil for a source.
	StreamKey []int
	// Index is the declared index that serves the arrangement (the first in
	// plan order with the same key set, or for Any the first on the
	// collection), or nil.
	Index *ResolvedIndex
}

// LinearPlan is a linear join: Source is from[0], read by its columns that
// share a class with from[1] (Any when the query has one entry); Stages[k-1]
// joins the result of from[0..k-1] with from[k], read by its columns that
// share a class with an earlier entry (an empty key is a cross product).
// The intermediate results are arranged inside the query, by StreamKey.
//
// NB: Source's key set and Stages[0].StreamKey name the same classes but
// need not be the same columns (two columns of from[0] in one class), and
// the two sides' serving indexes may order a key differently; a renderer
// that wants to read Source as stage 1's stream arrangement checks that
// Source.KeyColumns, shifted by from[0]'s offset, equal Stages[0].StreamKey.
type LinearPlan struct {
	Source Lookup
	Stages []Lookup
}

// DeltaPath is delta path i: the updates of from[i] (Source, any
// arrangement), then Stages in lookup order: repeatedly the first
// remaining entry that shares a class with a bound one, or else the first
// remaining entry, read by its columns that share a class with bound
// entries.
type DeltaPath struct {
	Source Lookup
	Stages []Lookup
}

// arrange fills q.Linear and q.Delta.
func (r *Resolved) arrange(q *ResolvedQuery) {
	n := len(q.Entries)
	class := make([]int, len(q.Joined)) // class id per joined column, -1 none
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
	// lookup reads entry e by its columns sharing a class with an entry in
	// bound.
	lookup := func(e int, bound []bool, withStream bool) Lookup {
		ent := q.Entries[e]
		var cols, stream []int
		for j := range ent.Collection.Columns {
			k := class[ent.Offset+j]
			if k < 0 {
				continue
			}
			for _, pos := range q.Classes[k] {
				if bound[entryOf(pos)] {
					cols = append(cols, j)
					stream = append(stream, pos)
					break
				}
			}
		}
		l := r.serve(ent.Collection, cols)
		l.Entry = e
		if withStream {
			// Align the stream key with the key's (possibly index) order.
			l.StreamKey = make([]int, len(l.KeyColumns))
			for i, c := range l.KeyColumns {
				l.StreamKey[i] = stream[slices.Index(cols, c)]
			}
		}
		return l
	}
	anyOf := func(e int) Lookup {
		c := q.Entries[e].Collection
		l := Lookup{Entry: e, Arrangement: Arrangement{Collection: c.Name, Any: true}}
		if len(c.Indexes) > 0 {
			l.Index = c.Indexes[0]
		}
		return l
	}
	if n == 1 {
		q.Linear = LinearPlan{Source: anyOf(0)}
		q.Delta = []DeltaPath{{Source: anyOf(0)}}
		return
	}
	bound := make([]bool, n)
	bound[1] = true
	q.Linear.Source = lookup(0, bound, false)
	bound[1] = false
	bound[0] = true
	for k := 1; k < n; k++ {
		q.Linear.Stages = append(q.Linear.Stages, lookup(k, bound, true))
		bound[k] = true
	}
	q.Delta = make([]DeltaPath, n)
	for i := range n {
		clear(bound)
		bound[i] = true
		path := DeltaPath{Source: anyOf(i)}
		for range n - 1 {
			next := -1
			for e := range n {
				if bound[e] {
					continue
				}
				if next < 0 {
					next = e // the first remaining, if none shares a class
				}
				if r.sharesClass(q, class, entryOf, e, bound) {
					next = e
					break
				}
			}
			path.Stages = append(path.Stages, lookup(next, bound, true))
			bound[next] = true
		}
		q.Delta[i] = path
	}
}

func (r *Resolved) sharesClass(q *ResolvedQuery, class []int, entryOf func(int) int, e int, bound []bool) bool {
	ent := q.Entries[e]
	for j := range ent.Collection.Columns {
		if k := class[ent.Offset+j]; k >= 0 {
			for _, pos := range q.Classes[k] {
				if bound[entryOf(pos)] {
					return true
				}
			}
		}
	}
	return false
}

// serve returns the arrangement of c by the column positions cols (a set,
// ascending), keyed in the order of the first index with that set, if
// any.
func (r *Resolved) serve(c *Collection, cols []int) Lookup {
	for _, ix := range c.Indexes {
		if sameSet(ix.KeyColumns, cols) {
			return Lookup{Arrangement: Arrangement{Collection: c.Name, Key: slices.Clone(ix.Key)}, KeyColumns: slices.Clone(ix.KeyColumns), Index: ix}
		}
	}
	key := make([]string, len(cols))
	for i, j := range cols {
		key[i] = c.Columns[j]
	}
	return Lookup{Arrangement: Arrangement{Collection: c.Name, Key: key}, KeyColumns: slices.Clone(cols)}
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// Lookups returns every arrangement q reads under strategy k: the linear
// source and stages, or every delta path's source and stages.
func (q *ResolvedQuery) Lookups(k JoinKind) []Lookup {
	if k == Linear {
		return append([]Lookup{q.Linear.Source}, q.Linear.Stages...)
	}
	var out []Lookup
	for _, p := range q.Delta {
		out = append(out, p.Source)
		out = append(out, p.Stages...)
	}
	return out
}

// Missing returns every arrangement the top-level query reads under
// strategy k that no declared index serves, each (collection, key set)
// once, sorted by collection then key. With --index imported the query
// reads only published indexes, so a non-empty result is an error naming
// all of them (docs/spec.md "Indexes and arrangements"). A plan Resolve
// did not make, or a k other than Linear and Delta, is an error wrapping
// ErrUsage (Check).
func (r *Resolved) Missing(k JoinKind) ([]Arrangement, error) {
	if err := r.checkJoin(k); err != nil {
		return nil, err
	}
	var out []Arrangement
	for _, l := range r.Query.Lookups(k) {
		if l.Index != nil {
			continue
		}
		a := l.Arrangement
		if !a.Any {
			a.Key = slices.Clone(a.Key)
			c := r.byName[a.Collection]
			slices.SortFunc(a.Key, func(x, y string) int { return cmp.Compare(c.Column(x), c.Column(y)) })
		}
		if !slices.ContainsFunc(out, func(b Arrangement) bool {
			return b.Collection == a.Collection && b.Any == a.Any && slices.Equal(b.Key, a.Key)
		}) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Arrangement) int {
		if c := cmp.Compare(a.Collection, b.Collection); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
	return out, nil
}

// MissingError returns nil when nothing is missing under strategy k, else
// an error naming every missing (collection, key set), for exit 2, or
// Missing's error.
func (r *Resolved) MissingError(k JoinKind) error {
	m, err := r.Missing(k)
	if err != nil {
		return err
	}
	if len(m) == 0 {
		return nil
	}
	names := make([]string, len(m))
	for i, a := range m {
		names[i] = a.String()
	}
	return &Error{Field: "indexes", Msg: fmt.Sprintf("--index imported needs an index for every arrangement the %s join reads; missing: %s", k, strings.Join(names, ", "))}
}

// Maintenance is what the dataflow that maintains one index needs in the
// Maintenance runtime: the index's collection is built from the raw
// inputs and the other indexes (docs/spec.md "Indexes and arrangements",
// `--index imported`).
type Maintenance struct {
	Index *ResolvedIndex
	// Build are the views built inside the dataflow, every view after the
	// views it reads; the last is the index's collection if it is a view.
	Build []*Collection
	// Imports are the other indexes the dataflow reads, each once, in
	// order of first use: for a collection read by a view in Build, the
	// index serving the arrangement it reads if one does, else its first
	// index. A collection with no index is built (a view) or read raw (an
	// input).
	Imports []*ResolvedIndex
	// Raw are the inputs read as raw updates, each once.
	Raw []*Collection
}

// Maintain returns what the dataflow maintaining ix needs.
func (r *Resolved) Maintain(ix *ResolvedIndex) Maintenance {
	m := Maintenance{Index: ix}
	built := map[*Collection]bool{}
	var need func(c *Collection)
	// use handles collection c read by a view being built, with the
	// lookups that read it (nil: read as a collection).
	use := func(c *Collection, l *Lookup) {
		if len(c.Indexes) > 0 {
			pick := c.Indexes[0]
			if l != nil && l.Index != nil {
				pick = l.Index
			}
			if !slices.Contains(m.Imports, pick) {
				m.Imports = append(m.Imports, pick)
			}
			return
		}
		if c.Input != nil {
			if !slices.Contains(m.Raw, c) {
				m.Raw = append(m.Raw, c)
			}
			return
		}
		need(c)
	}
	need = func(c *Collection) {
		if built[c] {
			return
		}
		built[c] = true
		if c.Query != nil {
			for _, l := range c.Query.Lookups(c.Query.Query.Join) {
				use(c.Query.Entries[l.Entry].Collection, &l)
			}
		} else {
			use(c.Reads[0], nil)
		}
		m.Build = append(m.Build, c)
	}
	if ix.Collection.Input != nil {
		m.Raw = []*Collection{ix.Collection}
	} else {
		need(ix.Collection)
	}
	return m
}
