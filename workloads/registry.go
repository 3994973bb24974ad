package workloads

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/workloads/spec"
)

// ErrUnknown is returned for a workload or parameter name the registry
// does not hold.
var ErrUnknown = errors.New("workloads: unknown name")

//go:embed examples/*.json
var examples embed.FS

// ExampleFS returns the embedded example spec files (examples/NAME.json).
func ExampleFS() fs.FS { return examples }

// Workload is a built-in workload.
type Workload struct {
	Name    string
	Doc     string
	Params  []Param
	Benches []Bench
	// Joins are the join strategies a run uses when --join is not given;
	// empty means each spec's own.
	Joins []string
}

// Param is an integer parameter of a built-in workload.
type Param struct {
	Name     string
	Defaults []int64 // the default suite runs each; the first is the files' value
	Doc      string
	Runner   bool  // read by the benchmark runner; sets no spec field
	Min, Max int64 // the values it accepts, both included
	// Step, when above 1, is what every accepted value is a multiple of.
	Step int64
}

// Range describes the values p accepts, as benchrun list shows them and
// Check's errors name them: "1..100", "1000..99900000, a multiple of 1000".
func (p *Param) Range() string {
	r := fmt.Sprintf("%d..%d", p.Min, p.Max)
	if p.Step > 1 {
		r += fmt.Sprintf(", a multiple of %d", p.Step)
	}
	return r
}

// Check returns an error naming the parameter and its range when v is
// outside it; the caller names where v came from.
func (p *Param) Check(v int64) error {
	if v < p.Min || v > p.Max || p.Step > 1 && v%p.Step != 0 {
		return fmt.Errorf("%s must be in %s (%s), not %d", p.Name, p.Range(), p.Doc, v)
	}
	return nil
}

// Parameter ranges: sizes go up to what a generated input may hold, the
// runner's counts up to what one process can run.
const (
	maxSize  = spec.MaxRows
	maxZipf  = spec.MaxZipfN
	maxReads = 1_000_000  // one-shot reads per peek sample, about a millisecond each
	maxK     = MaxQueries // concurrent queries per fanout sample, about 1 MB each at 10,000 rows
)

// Bench is one benchmark of a workload: a spec file and where each
// parameter lands in it.
type Bench struct {
	Base    string              // Benchmark<Base>
	File    string              // examples/NAME.json
	Targets map[string][]Target // parameter name -> spec fields it sets
	// workload is the workload whose Benches hold b (Registry): its
	// parameters are the names and ranges b accepts.
	workload *Workload
}

// Target maps a parameter value v to a spec field as v × Mul / Div + Add.
// Div must divide v × Mul exactly.
type Target struct {
	Field         string
	Mul, Div, Add int64
}

func t(field string) Target               { return Target{Field: field, Mul: 1, Div: 1} }
func tAdd(field string, add int64) Target { return Target{Field: field, Mul: 1, Div: 1, Add: add} }
func tDiv(field string, div, add int64) Target {
	return Target{Field: field, Mul: 1, Div: div, Add: add}
}

// Registry returns the built-in workloads in the order `benchrun list`
// prints them. Each call builds a fresh value.
func Registry() []Workload {
	gen := func(in, f string) string { return "inputs." + in + ".generate." + f }
	col := func(in, c, f string) string { return "inputs." + in + ".generate.columns." + c + "." + f }
	reg := []Workload{
		{
			Name: "lookup", Doc: "a fact table joined to a dimension table by key",
			Params: []Param{
				{Name: "rows", Defaults: []int64{10000}, Doc: "fact updates", Min: 1, Max: maxSize},
				{Name: "keys", Defaults: []int64{1000}, Doc: "dimension rows (distinct keys)", Min: 1, Max: maxSize},
			},
			Benches: []Bench{{Base: "Lookup", File: "examples/lookup.json", Targets: map[string][]Target{
				"rows": {t(gen("facts", "rows"))},
				"keys": {t(gen("dims", "rows")), tAdd(col("facts", "key", "max"), -1)},
			}}},
		},
		{
			Name: "star", Doc: "orders ⋈ lineitem ⋈ customer shaped like TPC-H, linear and delta joins",
			Params: []Param{
				{Name: "orders", Defaults: []int64{10000}, Doc: "order updates", Min: 1, Max: maxSize},
				{Name: "lineitems", Defaults: []int64{40000}, Doc: "lineitem updates", Min: 1, Max: maxSize},
				{Name: "customers", Defaults: []int64{1000}, Doc: "customers", Min: 1, Max: maxSize},
			},
			Joins: []string{spec.JoinLinear, spec.JoinDelta},
			Benches: []Bench{{Base: "Star", File: "examples/star.json", Targets: map[string][]Target{
				"orders":    {t(gen("orders", "rows")), tAdd(col("lineitem", "okey", "max"), -1)},
				"lineitems": {t(gen("lineitem", "rows"))},
				"customers": {t(gen("customer", "rows")), tAdd(col("orders", "ckey", "max"), -1)},
			}}},
		},
		{
			Name: "triangles", Doc: "directed triangles of a zipf graph: a three-way delta self-join",
			Params: []Param{
				{Name: "edges", Defaults: []int64{5000}, Doc: "edge updates", Min: 1, Max: maxSize},
				{Name: "nodes", Defaults: []int64{1000}, Doc: "nodes", Min: 1, Max: maxZipf},
			},
			Benches: []Bench{{Base: "Triangles", File: "examples/triangles.json", Targets: map[string][]Target{
				"edges": {t(gen("edges", "rows"))},
				"nodes": {t(col("edges", "src", "n")), t(col("edges", "dst", "n"))},
			}}},
		},
		{
			Name: "groupby", Doc: "count, sum, min and max per key with retractions",
			Params: []Param{
				{Name: "rows", Defaults: []int64{10000}, Doc: "updates", Min: 1, Max: maxSize},
				{Name: "keys", Defaults: []int64{100}, Doc: "groups", Min: 1, Max: maxSize},
			},
			Benches: []Bench{{Base: "Groupby", File: "examples/groupby.json", Targets: map[string][]Target{
				"rows": {t(gen("sales", "rows"))},
				"keys": {tAdd(col("sales", "key", "max"), -1)},
			}}},
		},
		{
			Name: "distinct", Doc: "distinct keys of a zipf collection with retractions",
			Params: []Param{
				{Name: "rows", Defaults: []int64{10000}, Doc: "updates", Min: 1, Max: maxSize},
				{Name: "keys", Defaults: []int64{1000}, Doc: "possible keys", Min: 1, Max: maxZipf},
			},
			Benches: []Bench{{Base: "Distinct", File: "examples/distinct.json", Targets: map[string][]Target{
				"rows": {t(gen("items", "rows"))},
				"keys": {t(col("items", "key", "n"))},
			}}},
		},
		{
			Name: "errors", Doc: "division by zero in views, a three-way delta join, a nested view and a reduce",
			Params: []Param{
				{Name: "rows", Defaults: []int64{2000}, Doc: "updates per input", Min: 1, Max: maxSize},
			},
			Benches: []Bench{{Base: "Errors", File: "examples/errors.json", Targets: map[string][]Target{
				"rows": {t(gen("a", "rows")), t(gen("b", "rows")), t(gen("c", "rows"))},
			}}},
		},
		{
			Name: "peek", Doc: "one-shot reads (until = as_of + 1) while the index ingests: p50 and p99 read latency",
			Params: []Param{
				{Name: "rows", Defaults: []int64{10000}, Doc: "updates", Min: 1, Max: maxSize},
				{Name: "reads", Defaults: []int64{100}, Doc: "one-shot reads per sample", Runner: true, Min: 1, Max: maxReads},
			},
			Benches: []Bench{{Base: "Peek", File: "examples/peek.json", Targets: map[string][]Target{
				"rows": {t(gen("events", "rows"))},
			}}},
		},
		{
			Name: "stall", Doc: "a reader that stops advancing: hold gap and trace growth over time",
			Params: []Param{
				{Name: "rows", Defaults: []int64{20000}, Doc: "updates", Min: 1, Max: maxSize},
				{Name: "rounds", Defaults: []int64{200}, Doc: "times (rounds) the index ingests", Min: 1, Max: maxSize},
			},
			Benches: []Bench{{Base: "Stall", File: "examples/stall.json", Targets: map[string][]Target{
				"rows":   {t(gen("events", "rows"))},
				"rounds": {t(gen("events", "batches"))},
			}}},
		},
		{
			Name: "fanout", Doc: "k concurrent queries over one index: trace bytes and install time",
			Params: []Param{
				{Name: "rows", Defaults: []int64{10000}, Doc: "updates", Min: 1, Max: maxSize},
				{Name: "k", Defaults: []int64{1, 4, 16}, Doc: "concurrent queries", Runner: true, Min: 1, Max: maxK},
			},
			Benches: []Bench{{Base: "Fanout", File: "examples/fanout.json", Targets: map[string][]Target{
				"rows": {t(gen("events", "rows"))},
			}}},
		},
		{
			// dd_rounds adds 100 rounds of 1,000 to rows; rows must be a
			// multiple of 1,000 (Step, which list shows and --param
			// checks; Overrides checks it again).
			Name: "dd", Doc: "differential-dataflow's five shapes: arrange, count per key, 1:1 join, rounds of 1000 into a trace, import",
			Params: []Param{
				{Name: "rows", Defaults: []int64{100000}, Doc: "updates (per input; the trace size for rounds)", Min: 1000, Max: maxSize - 100*1000, Step: 1000},
			},
			Benches: []Bench{
				{Base: "DDArrange", File: "examples/dd_arrange.json", Targets: map[string][]Target{
					"rows": {t(gen("updates", "rows")), tAdd(col("updates", "key", "max"), -1)},
				}},
				{Base: "DDCount", File: "examples/dd_count.json", Targets: map[string][]Target{
					"rows": {t(gen("updates", "rows")), tAdd(col("updates", "key", "max"), -1)},
				}},
				{Base: "DDJoin", File: "examples/dd_join.json", Targets: map[string][]Target{
					"rows": {t(gen("left", "rows")), t(gen("right", "rows"))},
				}},
				{Base: "DDRounds", File: "examples/dd_rounds.json", Targets: map[string][]Target{
					"rows": {tAdd(gen("updates", "rows"), 100*1000), tDiv(gen("updates", "batches"), 1000, 100), tDiv("as_of", 1000, 0)},
				}},
				{Base: "DDImport", File: "examples/dd_import.json", Targets: map[string][]Target{
					"rows": {t(gen("updates", "rows")), tAdd(col("updates", "key", "max"), -1)},
				}},
			},
		},
	}
	for i := range reg {
		for j := range reg[i].Benches {
			reg[i].Benches[j].workload = &reg[i]
		}
	}
	return reg
}

// Lookup returns the built-in workload with the given name.
func Lookup(name string) (*Workload, error) {
	reg := Registry()
	for i := range reg {
		if reg[i].Name == name {
			return &reg[i], nil
		}
	}
	names := make([]string, len(reg))
	for i := range reg {
		names[i] = reg[i].Name
	}
	return nil, fmt.Errorf("%w: no built-in workload %s (built-in: %s)", ErrUnknown, spec.Quote(name), strings.Join(names, ", "))
}

// Param returns the workload's parameter with the given name.
func (w *Workload) Param(name string) (*Param, error) {
	for i := range w.Params {
		if w.Params[i].Name == name {
			return &w.Params[i], nil
		}
	}
	names := make([]string, len(w.Params))
	for i := range w.Params {
		names[i] = w.Params[i].Name
	}
	return nil, fmt.Errorf("%w: workload %s has no parameter %s (parameters: %s)", ErrUnknown, w.Name, spec.Quote(name), strings.Join(names, ", "))
}

// Overrides returns the spec overrides that set params (name -> value) in
// b's spec. Parameters without targets in b (a runner's) set nothing
// here. A name that is not one of the workload's parameters, or a value
// outside its parameter's range (Param.Check, which benchrun's --param
// checks too), is an error wrapping ErrUsage that names it: run, it
// would set nothing and the defaults would run. A Bench not from the
// Registry knows no ranges and accepts the names of its Targets.
func (b *Bench) Overrides(params map[string]int64) ([]spec.Override, error) {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []spec.Override
	for _, n := range names {
		v := params[n]
		if err := b.checkParam(n, v); err != nil {
			return nil, err
		}
		for _, tg := range b.Targets[n] {
			x := v * tg.Mul
			if tg.Mul != 0 && x/tg.Mul != v {
				return nil, fmt.Errorf("%w: parameter %s=%d is too large", spec.ErrInvalid, n, v)
			}
			if x%tg.Div != 0 {
				return nil, fmt.Errorf("%w: parameter %s=%d must be a multiple of %d", spec.ErrInvalid, n, v, tg.Div)
			}
			out = append(out, spec.Override{Field: tg.Field, Value: x/tg.Div + tg.Add, By: "parameter " + n + "=" + strconv.FormatInt(v, 10)})
		}
	}
	return out, nil
}

// checkParam returns an error wrapping ErrUsage unless name is a
// parameter of b's workload (Workload.Param) and v is in its range
// (Param.Check).
func (b *Bench) checkParam(name string, v int64) error {
	if b.workload == nil {
		if _, ok := b.Targets[name]; !ok {
			names := slices.Sorted(maps.Keys(b.Targets))
			return usagef("benchmark %s has no parameter %s (parameters: %s)", b.Base, spec.Quote(name), strings.Join(names, ", "))
		}
		return nil
	}
	p, err := b.workload.Param(name)
	if err != nil {
		ps := make([]string, len(b.workload.Params))
		for i := range b.workload.Params {
			ps[i] = b.workload.Params[i].Name + " " + b.workload.Params[i].Range()
		}
		return usagef("workload %s has no parameter %s (parameters: %s)", b.workload.Name, spec.Quote(name), strings.Join(ps, "; "))
	}
	if err := p.Check(v); err != nil {
		return usagef("workload %s: %v", b.workload.Name, err)
	}
	return nil
}

// Spec decodes b's example file with the given parameter values: a name
// or a value Overrides refuses is its error (wrapping ErrUsage), before
// anything is decoded.
func (b *Bench) Spec(params map[string]int64) (*spec.Spec, error) {
	data, err := examples.ReadFile(b.File)
	if err != nil {
		return nil, fmt.Errorf("workloads: %s: %v", b.File, err)
	}
	ov, err := b.Overrides(params)
	if err != nil {
		return nil, err
	}
	s, err := spec.DecodeWith(path.Join("workloads", b.File), "workloads/examples", data, ov)
	var se *spec.Error
	if err != nil && len(params) > 0 && errors.As(err, &se) {
		names := make([]string, 0, len(params))
		for n, v := range params {
			names = append(names, n+"="+strconv.FormatInt(v, 10))
		}
		slices.Sort(names)
		se.Msg += " (with parameters " + strings.Join(names, ", ") + ")"
	}
	return s, err
}
