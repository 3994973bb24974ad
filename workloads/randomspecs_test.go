package workloads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// TestRandomSpecsPassCheck draws spec files as a user would write them
// and puts each through what `benchrun check` does (workloads.Check),
// on one to four workers: every configuration's output and errors at
// as_of and later times against core/reference, the operators' error
// counts against the output's errors, and every hold released. The
// shapes are those the plan-level random tests of core/render draw
// least: views that are joins of one to four entries (delta or linear,
// self-joins of an input or a view among them), reduces, distincts and
// thresholds read by further joins, maps that divide by zero at every
// level, so that an error's count compounds through the entries that
// read it (docs/semantics.md §5.5, §5.6); inputs whose rows are retracted
// to zero and inserted again, negative counts, sparse times, as_of and
// until windows; indexes on every arrangement either join reads, their
// keys in any order, and on views the query does not read. Each spec's
// seed is in its failure with the spec's text (RANDOMSPECS_SEED checks
// that one; RANDOMSPECS_N sets how many). -short checks fewer, on one and
// three workers, and a -race build 8 on one, two and four.
func TestRandomSpecsPassCheck(t *testing.T) {
	n, workers := 20, []int{1, 2, 3, 4}
	switch {
	case testing.Short():
		n, workers = 10, []int{1, 3}
	case raceBuild:
		// Under the race detector each spec costs about six times as
		// much: fewer specs, on the worker counts that differ most.
		n, workers = 8, []int{1, 2, 4}
	}
	if v := os.Getenv("RANDOMSPECS_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	one, seedSet := uint64(0), false
	if v := os.Getenv("RANDOMSPECS_SEED"); v != "" {
		one, _ = strconv.ParseUint(v, 10, 64)
		n, seedSet = 1, true
	}
	for i := range n {
		seed := uint64(i)*7919 + 1
		if seedSet {
			seed = one
		}
		text := drawSpec(t, seed)
		s, err := spec.Decode("random.json", ".", text)
		if err != nil {
			t.Fatalf("seed %d: drawn spec refused: %v\n%s", seed, err, text)
		}
		tables, err := workloads.Load(s, 0)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		var cases []workloads.CheckCase
		for _, c := range workloads.CheckCases(s) {
			if c.Workers == 1 {
				for _, w := range workers {
					cases = append(cases, workloads.CheckCase{Mode: c.Mode, Join: c.Join, Workers: w})
				}
			}
		}
		if len(cases) == 0 {
			t.Fatalf("seed %d: no configuration to check\n%s", seed, text)
		}
		diffs, err := workloads.Check(context.Background(), s, tables, cases)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		if len(diffs) > 0 {
			t.Fatalf("seed %d: %d differences:\n%s\n%s", seed, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"), text)
		}
	}
}

// specDraw draws one spec: its random source and each collection's
// columns, in the order the collections are defined.
type specDraw struct {
	r      *rand.Rand
	cols   map[string][]string
	colls  []string
	sparse bool // input times 0, 3, 6, … rather than 0, 1, 2, …
	calm   bool // fewer divisions, so that more rows come through
}

func (d *specDraw) n(k int) int            { return d.r.IntN(k) }
func (d *specDraw) pick(s []string) string { return s[d.r.IntN(len(s))] }

func (d *specDraw) at(i int) int64 {
	if d.sparse {
		return int64(3 * i)
	}
	return int64(i)
}

// subset returns up to max distinct elements of s in a drawn order.
func (d *specDraw) subset(s []string, max int) []string {
	out := []string{}
	for _, i := range d.r.Perm(len(s)) {
		if len(out) < max && d.n(2) == 0 {
			out = append(out, s[i])
		}
	}
	return out
}

// expr draws an expression over scope at most depth operators deep, with
// divisions by differences that are often 0.
func (d *specDraw) expr(scope []string, depth int) string {
	leaf := func() string {
		if len(scope) > 0 && d.n(3) > 0 {
			return d.pick(scope)
		}
		return strconv.Itoa(d.n(4))
	}
	if depth == 0 || d.n(4) == 0 {
		return leaf()
	}
	switch d.n(6) {
	case 0:
		return d.pick([]string{"-", "!"}) + "(" + d.expr(scope, depth-1) + ")"
	case 1:
		if !d.calm {
			return "(" + d.expr(scope, depth-1) + " " + d.pick([]string{"/", "%"}) + " (" + leaf() + " - " + leaf() + "))"
		}
	}
	op := d.pick([]string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"})
	return "(" + d.expr(scope, depth-1) + " " + op + " " + d.expr(scope, depth-1) + ")"
}

// usable returns the collections an entry may read, each view listed
// weight times; a collection of no columns only now and then.
func (d *specDraw) usable(weight int) []string {
	var out []string
	for _, c := range d.colls {
		if len(d.cols[c]) == 0 && d.n(3) > 0 {
			continue
		}
		out = append(out, c)
		if strings.HasPrefix(c, "v") {
			for range weight - 1 {
				out = append(out, c)
			}
		}
	}
	return out
}

// query draws a query of n entries over colls, a view's when view, and
// returns it with its output names.
func (d *specDraw) query(colls []string, n int, view bool) (map[string]any, []string) {
	aliases := []string{"p", "q", "r", "s"}
	var names []string
	var from []map[string]string
	for i := range n {
		c := d.pick(colls)
		if i > 0 && d.n(3) == 0 {
			c = names[d.n(i)] // a self-join
		}
		names = append(names, c)
		from = append(from, map[string]string{"as": aliases[i], "collection": c})
	}
	q := map[string]any{"from": from}
	ref := func(i int, first bool) string {
		c := d.cols[names[i]]
		if first && d.n(4) > 0 {
			return aliases[i] + "." + c[0]
		}
		return aliases[i] + "." + d.pick(c)
	}
	var scope []string
	on := [][]string{}
	for i := range n {
		for _, c := range d.cols[names[i]] {
			scope = append(scope, aliases[i]+"."+c)
		}
		if i == 0 || len(d.cols[names[i]]) == 0 || d.n(6) == 0 {
			continue
		}
		j := d.n(i)
		if len(d.cols[names[j]]) == 0 {
			continue
		}
		class := []string{ref(j, true), ref(i, true)}
		if k := d.n(i); i > 1 && d.n(5) == 0 && len(d.cols[names[k]]) > 0 {
			class = append(class, ref(k, false)) // a class of three
		}
		on = append(on, class)
		if d.n(4) == 0 {
			on = append(on, []string{ref(j, false), ref(i, false)}) // a second equality
		}
	}
	if len(scope) > 1 && d.n(10) == 0 {
		on = append(on, []string{d.pick(scope), d.pick(scope)}) // perhaps within one entry
	}
	if len(on) > 0 {
		q["on"] = on
	}
	if n > 1 || d.n(2) == 0 {
		q["join"] = []string{"linear", "delta"}[d.n(2)]
	}
	var maps []string
	var mapList []map[string]string
	for i := range d.n(3) {
		m := fmt.Sprintf("m%d", i)
		mapList = append(mapList, map[string]string{"name": m, "expr": d.expr(scope, 2)})
		maps = append(maps, m)
		scope = append(scope, m)
	}
	if len(maps) > 0 {
		q["map"] = mapList
	}
	if d.n(4) == 0 {
		q["filter"] = []string{d.expr(scope, 2)}
	}
	output := slices.Clone(scope)
	switch d.n(6) {
	case 0:
		if view && len(output) > 4 {
			output = output[:4]
			q["project"] = output
		}
	case 1:
		output = []string{}
		q["project"] = output
	default:
		// Maps first, so that their values and errors reach the readers.
		output = []string{}
		for _, m := range maps {
			if d.n(3) > 0 {
				output = append(output, m)
			}
		}
		output = append(output, d.subset(scope[:len(scope)-len(maps)], 3)...)
		q["project"] = output
	}
	switch d.n(5) {
	case 0, 1:
		groupBy := d.subset(output, 2)
		var aggs []map[string]string
		out := slices.Clone(groupBy)
		for i := range 1 + d.n(2) {
			a := map[string]string{"name": fmt.Sprintf("n%d", i), "fn": d.pick([]string{"count", "sum", "min", "max"})}
			if a["fn"] != "count" {
				if len(output) > 0 && d.n(2) == 0 {
					a["expr"] = d.pick(output)
				} else {
					a["expr"] = d.expr(output, 1)
				}
			}
			aggs = append(aggs, a)
			out = append(out, a["name"])
		}
		q["reduce"] = map[string]any{"group_by": groupBy, "aggregates": aggs}
		output = out
	case 2:
		q["distinct"] = true
	case 3:
		q["threshold"] = true
	}
	return q, output
}

// drawSpec draws the text of a spec file from seed.
func drawSpec(t *testing.T, seed uint64) []byte {
	d := &specDraw{r: rand.New(rand.NewPCG(seed, 11)), cols: map[string][]string{}}
	d.sparse, d.calm = d.n(3) == 0, d.n(2) == 0
	s := map[string]any{"version": 1, "name": "random"}
	times := 2 + d.n(5)
	inputs := map[string]any{}
	for _, name := range []string{"a", "b", "c"}[:1+d.n(3)] {
		cols := []string{"k", "x", "y"}[:1+d.n(3)]
		d.cols[name] = cols
		d.colls = append(d.colls, name)
		type row struct {
			vals []int64
			diff int64
		}
		var present, gone []row
		rows := [][]int64{}
		for tm := range times {
			for range d.n(5) {
				switch {
				case len(present) > 0 && d.n(4) == 0: // retracted to zero
					i := d.n(len(present))
					u := present[i]
					present, gone = slices.Delete(present, i, i+1), append(gone, u)
					rows = append(rows, append([]int64{d.at(tm), -u.diff}, u.vals...))
				case len(gone) > 0 && d.n(4) == 0: // and back
					i := d.n(len(gone))
					u := gone[i]
					gone, present = slices.Delete(gone, i, i+1), append(present, u)
					rows = append(rows, append([]int64{d.at(tm), u.diff}, u.vals...))
				default:
					u := row{vals: make([]int64, len(cols)), diff: []int64{1, 1, 1, 1, 1, -1, 2, -2}[d.n(8)]}
					for j := range u.vals {
						u.vals[j] = int64(d.n(4))
					}
					present = append(present, u)
					rows = append(rows, append([]int64{d.at(tm), u.diff}, u.vals...))
				}
			}
		}
		inputs[name] = map[string]any{"columns": cols, "rows": rows}
	}
	s["inputs"] = inputs
	views := map[string]any{}
	for i := range d.n(4) {
		name := fmt.Sprintf("v%d", i+1)
		if d.n(5) == 0 {
			src := d.pick(d.colls)
			scope := slices.Clone(d.cols[src])
			v := map[string]any{"input": src, "map": []map[string]string{{"name": "m" + name, "expr": d.expr(scope, 2)}}}
			scope = append(scope, "m"+name)
			if d.n(2) == 0 {
				v["filter"] = []string{d.expr(scope, 1)}
			}
			views[name], d.cols[name] = v, scope
		} else {
			q, out := d.query(d.usable(1+d.n(3)), 1+d.n(4), true)
			var cols []string
			for _, o := range out {
				cols = append(cols, strings.ReplaceAll(o, ".", "_"))
			}
			views[name], d.cols[name] = map[string]any{"query": q}, cols
		}
		d.colls = append(d.colls, name)
	}
	if len(views) > 0 {
		s["views"] = views
	}
	q, _ := d.query(d.usable(3), 1+d.n(4), false)
	s["query"] = q
	asOf := d.at(d.n(times)) + int64(d.n(2))
	s["as_of"] = asOf
	if d.n(3) == 0 {
		s["until"] = asOf + 1 + d.at(d.n(times))
	}
	// An index for every arrangement either join reads, its key in a
	// drawn order, and up to two on drawn collections.
	text, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Decode("random.json", ".", text)
	if err != nil {
		t.Fatalf("seed %d: drawn spec refused: %v\n%s", seed, err, text)
	}
	indexes := map[string]any{}
	add := func(on string, key []string) {
		key = slices.Clone(key)
		d.r.Shuffle(len(key), func(i, j int) { key[i], key[j] = key[j], key[i] })
		indexes[fmt.Sprintf("i%d", len(indexes))] = map[string]any{"on": on, "key": key}
	}
	for _, k := range []plan.JoinKind{plan.Linear, plan.Delta} {
		missing, err := sp.Plan.Missing(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range missing {
			if a.Any {
				a.Key = d.subset(d.cols[a.Collection], 2)
			}
			add(a.Collection, append([]string{}, a.Key...))
		}
	}
	for range d.n(3) {
		c := d.pick(d.colls)
		add(c, d.subset(d.cols[c], 2))
	}
	if len(indexes) > 0 {
		s["indexes"] = indexes
	}
	if text, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	return text
}
