package benchrun

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// Index modes (docs/spec.md, Modes).
const (
	IndexImported = "imported"
	IndexDirect   = "direct"
)

// Param is one name=value of a benchmark name.
type Param struct {
	Name  string
	Value int64
	// Text, when set, is the value as the name shows it instead of
	// Value: a spec file's parameter, which may be a uint64 field's
	// value beyond int64 (a seed).
	Text string
}

// Benchmark is one entry of a run: a spec at fixed parameters in one
// index mode, join strategy and worker count.
type Benchmark struct {
	Name     string // without the "Benchmark" prefix, which benchfmt adds
	Base     string
	Workload string
	Index    string
	Join     string
	Workers  int
	Params   []Param // in name order; runner parameters included
	Spec     *spec.Spec

	joins  []string // the workload's default join strategies, if any
	target int      // the position of its target among the selection's distinct targets
	file   bool     // Spec was read from a spec file, not a built-in workload
}

// Param returns the value of a parameter of the benchmark, and whether it
// has it.
func (b *Benchmark) Param(name string) (int64, bool) {
	for _, p := range b.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return 0, false
}

// builtinWorkload returns the name of the built-in workload b runs, and
// builtinBase its Base; both are "" when b runs a spec file. The
// built-ins' own measurements are chosen by these names (peek's reads,
// fanout's k queries, stall's stalled reader, the dd shapes' Go limits),
// and a spec file may declare any name: one named peek or d_d_join is
// measured as any other query, not as the built-in of that name (whose
// inputs it does not have).
func (b *Benchmark) builtinWorkload() string {
	if b.file {
		return ""
	}
	return b.Workload
}

func (b *Benchmark) builtinBase() string {
	if b.file {
		return ""
	}
	return b.Base
}

// name builds the result name (B2).
func (b *Benchmark) name() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s/workload=%s/index=%s/join=%s", b.Base, b.Workload, b.Index, b.Join)
	for _, p := range b.Params {
		if p.Text != "" {
			fmt.Fprintf(&sb, "/%s=%s", p.Name, p.Text)
			continue
		}
		fmt.Fprintf(&sb, "/%s=%d", p.Name, p.Value)
	}
	fmt.Fprintf(&sb, "/workers=%d", b.Workers)
	return sb.String()
}

// Selection is what Benchmarks expands: targets and the axes of the
// matrix, already parsed.
type Selection struct {
	Targets []string // built-in names or spec files; empty: every built-in
	Index   []string // empty: imported
	Join    []string // empty: each spec's own join
	Workers int
	Params  []string // key=value, as given to --param
	Shard   string   // "i/n" or ""
}

// targetKey identifies a target: a spec file by its absolute path with its
// links resolved (or, for a file that does not exist, taken as the kernel
// takes it: spec.Physical), so one file named two ways (./w.json, a link to
// it, here/w.json through a link to its directory) is one target, and
// dirlink/../w.json, above dirlink's target, is another file than a w.json
// beside dirlink; a built-in by its name.
func targetKey(target string) string {
	if !isSpecFile(target) {
		return target
	}
	p := spec.Physical(target)
	if real, err := filepath.EvalSymlinks(target); err == nil {
		p = real
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// nameClash is the error for a spec, second, that declares the workload
// name of an earlier one, first, given to the same command: their results
// would carry the same names.
func nameClash(first, second *spec.Spec) error {
	// first's path is named whole, as second's is: Errorf would cut it
	// as a value of the spec past 80 bytes. The name is quoted as
	// Errorf quotes it.
	e := second.Pos("name")
	e.Msg = fmt.Sprintf("workload %s is also the name of %s: their results would have the same names (rename one)", spec.Quote(second.Name), spec.Path(first.File))
	return e
}

// MaxWorkers bounds --workers: workloads.MaxWorkers, what
// `workloads.NewSession` accepts.
const MaxWorkers = workloads.MaxWorkers

// checkWorkers checks a --workers value.
func checkWorkers(w int) error {
	if w < 1 {
		return usagef("--workers", "must be at least 1, not %d", w)
	}
	if w > MaxWorkers {
		return usagef("--workers", "must be at most %d, not %d", MaxWorkers, w)
	}
	return nil
}

// isSpecFile says whether a target names a spec file rather than a
// built-in workload.
func isSpecFile(target string) bool {
	return strings.HasSuffix(target, ".json") || strings.ContainsRune(target, os.PathSeparator) || strings.ContainsRune(target, '/')
}

// notBuiltin is the message for a target that is neither a spec file nor
// a built-in workload (err, from workloads.Lookup). "-" names no
// standard input here: a spec there is read through /dev/stdin
// (docs/spec.md "Decoding is strict"), which the message says.
func notBuiltin(target string, err error) string {
	if target == "-" {
		return fmt.Sprintf("%v (standard input is not \"-\": name it /dev/stdin, with < w.json)", err)
	}
	if st, serr := os.Stat(target); serr == nil && !st.IsDir() {
		// A file of another ending, W.JSON or w.spec, is a spec file
		// named by a path: "must end in .json" told the user to rename
		// a file that ./W.JSON names as it is.
		return fmt.Sprintf("%v (%s is a file here, but a spec file is named by a path that ends in .json or holds a /: ./%s)", err, spec.Path(target), spec.Path(target))
	}
	return fmt.Sprintf("%v (a spec file must end in .json)", err)
}

// parsedParam is one --param: a value, or a comma-separated list of
// values, each of which runs (k=1,4,16), as a built-in parameter's
// defaults do. Values are plain decimal integers in the range of int64
// and uint64 fields together: a spec file's uint64 field (a seed) takes
// values beyond int64, a built-in's parameter does not.
type parsedParam struct {
	key, raw string
	values   []string
	used     bool
}

// parseParams parses --param values (key=value, or key=v1,v2,...), as
// run and gen read them: each value a number that denotes an integer
// (1e6), kept as a plain decimal integer; a value or key given twice is
// refused.
func parseParams(raw []string) ([]*parsedParam, error) {
	var params []*parsedParam
	for _, kv := range raw {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--param", "%s is not key=value", spec.Quote(kv))
		}
		var xs []string
		for _, v := range strings.Split(v, ",") {
			x, err := spec.ParseIntegerText(v)
			if err != nil && fractionalField(k) {
				// The field takes a fraction, but a result name holds
				// every parameter's value as a plain decimal integer
				// (docs/spec.md, "benchrun run"): the file sets it.
				return nil, usagef("--param", "%s: %s is a fractional field, and a result name holds a parameter's value as a plain decimal integer: set it in the spec file (%v)", spec.Clip(kv), spec.Clip(k), err)
			}
			if err != nil {
				return nil, usagef("--param", "%s: %v", spec.Clip(kv), err)
			}
			if slices.Contains(xs, x) {
				// Two benchmarks of one name.
				return nil, usagef("--param", "%s: the value %s is given twice", spec.Clip(kv), x)
			}
			xs = append(xs, x)
		}
		for _, p := range params {
			if p.key == k {
				return nil, usagef("--param", "%s is given twice", spec.Clip(k))
			}
		}
		params = append(params, &parsedParam{key: k, raw: kv, values: xs})
	}
	return params, nil
}

// product calls f with every combination of one value of each list, the
// last list varying fastest, and stops at f's first error.
func product[T any](values [][]T, f func([]T) error) error {
	combo := make([]T, len(values))
	var walk func(i int) error
	walk = func(i int) error {
		if i == len(values) {
			return f(slices.Clone(combo))
		}
		for _, v := range values[i] {
			combo[i] = v
			if err := walk(i + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(0)
}

// ParseList splits a comma-separated flag value and checks each entry
// against allowed. A value given twice is refused, as in a --param list
// and --at: a list names each value it runs once, and a repeat is a typo
// (--index imported,imported meant imported,direct), not a second run.
func ParseList(flag, value string, allowed ...string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(value, ",") {
		if !slices.Contains(allowed, v) {
			return nil, usagef(flag, "unknown value %s (one or more of %s, comma-separated)", spec.Quote(v), strings.Join(allowed, ", "))
		}
		if slices.Contains(out, v) {
			return nil, usagef(flag, "%s: the value %s is given twice", spec.Clip(value), v)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseShard parses "i/n" with 0 <= i < n.
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if ok && (outOfRange(a, err1) || outOfRange(b, err2)) {
		// Well formed, but too large to count benchmarks by: saying it
		// is not i/n would name a fault it does not have.
		return 0, 0, usagef("--shard", "%s is out of range: i and n are at most %d", spec.Quote(s), math.MaxInt)
	}
	// Plain decimal only: 01/2 or +0/2 would name shard 0 in a spelling
	// scripts comparing shard names do not expect.
	canonical := strconv.Itoa(i) == a && strconv.Itoa(n) == b
	if !ok || err1 != nil || err2 != nil || !canonical || n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("--shard", "%s is not i/n with 0 <= i < n (0-based, e.g. 0/4)", spec.Quote(s))
	}
	return i, n, nil
}

// outOfRange reports whether f, which strconv.Atoi read with err, is a
// plain decimal (digits, no sign, no leading zero) too large for an int.
func outOfRange(f string, err error) bool {
	return errors.Is(err, strconv.ErrRange) && f[0] != '0' && strings.Trim(f, "0123456789") == ""
}

// Benchmarks expands a selection into the sorted list of benchmarks of
// this shard (B4). Every spec is decoded and validated with its
// parameters, and the CSV inputs of spec files are read, so a bad input
// fails here, before anything is written.
func Benchmarks(sel Selection) ([]*Benchmark, error) {
	_, mine, err := selectBenchmarks(sel)
	return mine, err
}

// selectBenchmarks is Benchmarks that also returns every shard's
// benchmarks, sorted.
func selectBenchmarks(sel Selection) (all, mine []*Benchmark, err error) {
	if err := checkWorkers(sel.Workers); err != nil {
		return nil, nil, err
	}
	shardI, shardN, err := parseShard(sel.Shard)
	if err != nil {
		return nil, nil, err
	}
	index := sel.Index
	if len(index) == 0 {
		index = []string{IndexImported}
	}
	params, err := parseParams(sel.Params)
	if err != nil {
		return nil, nil, err
	}
	targets := sel.Targets
	if len(targets) == 0 {
		for _, w := range workloads.Registry() {
			targets = append(targets, w.Name)
		}
	}
	var out []*Benchmark
	seen := map[string]bool{}
	for ti, target := range targets {
		k := targetKey(target)
		if seen[k] {
			continue
		}
		seen[k] = true
		var specs []*Benchmark // one per bench × parameter combination, mode unset
		if isSpecFile(target) {
			bs, err := specFileBenches(target, params)
			if err != nil {
				return nil, nil, err
			}
			specs = append(specs, bs...)
		} else {
			bs, err := builtinBenches(target, params)
			if err != nil {
				return nil, nil, err
			}
			specs = append(specs, bs...)
		}
		for _, b := range specs {
			joins := sel.Join
			if len(joins) == 0 {
				joins = b.joins
			}
			if len(joins) == 0 {
				joins = []string{b.Spec.Query.Join}
			}
			for _, ix := range index {
				for _, j := range joins {
					if ix == IndexImported {
						if err := missing(b.Spec, j); err != nil {
							return nil, nil, err
						}
					}
					c := *b
					c.Index, c.Join, c.Workers, c.target = ix, j, sel.Workers, ti
					c.Name = c.name()
					if err := checkLine(&c); err != nil {
						return nil, nil, err
					}
					out = append(out, &c)
				}
			}
		}
	}
	for _, p := range params {
		if !p.used {
			var names []string
			for _, t := range targets {
				if !isSpecFile(t) && !slices.Contains(names, t) {
					names = append(names, t)
				}
			}
			return nil, nil, unknownParam(p, "no selected workload has a parameter "+spec.Clip(p.key), names)
		}
	}
	// A spec file and a built-in workload of one name: their results
	// would both say workload=<name>.
	builtin := map[string]bool{}
	for _, b := range out {
		if !b.file {
			builtin[b.Workload] = true
		}
	}
	for _, b := range out {
		if b.file && builtin[b.Workload] {
			return nil, nil, builtinClash(b.Spec)
		}
	}
	slices.SortFunc(out, func(a, b *Benchmark) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		// Two targets whose results would share a name: spec files that
		// declare the same workload name. Neither is dropped.
		if a, b := out[i-1], out[i]; a.Name == b.Name {
			if a.target > b.target {
				a, b = b, a
			}
			return nil, nil, nameClash(a.Spec, b.Spec)
		}
	}
	for i := shardI; i < len(out); i += shardN {
		mine = append(mine, out[i])
	}
	return out, mine, nil
}

// specField returns the top-level spec field (docs/spec.md "Fields")
// that a --param key names or lies under, or "" if none: such a key is
// a field of the spec, which a built-in workload sets through its own
// parameters.
func specField(key string) string {
	top, _, _ := strings.Cut(key, ".")
	if slices.Contains(spec.Fields, top) {
		return top
	}
	return ""
}

// unknownParam refuses a --param that no built-in workload named by
// names (each a workload's name) has, listing the parameters they have.
// A key that is a spec's field (version=1, inputs.a.generate.rows=5) is
// said to be one, not a parameter; any other is refused with missing,
// the message that says no workload has it.
func unknownParam(p *parsedParam, missing string, names []string) error {
	var lists []string
	for _, name := range names {
		w, err := workloads.Lookup(name)
		if err != nil {
			continue
		}
		var ps []string
		for _, wp := range w.Params {
			ps = append(ps, wp.Name)
		}
		lists = append(lists, name+": "+strings.Join(ps, ", "))
	}
	have := "parameters: " + strings.Join(lists, "; ")
	which := "the selected workloads"
	if len(lists) == 1 {
		have = "parameters of " + lists[0]
		which = names[0]
	}
	if specField(p.key) != "" {
		return usagef("--param", "%s: %s is a field of the spec, not a parameter of %s (%s)", spec.Clip(p.raw), spec.Clip(p.key), which, have)
	}
	return usagef("--param", "%s: %s (%s)", spec.Clip(p.raw), missing, have)
}

// fractionalField says whether a --param key is the path of a spec's
// fractional field: a generator's retract or a zipf column's s.
func fractionalField(key string) bool {
	parts := strings.Split(key, ".")
	n := len(parts)
	switch {
	case n == 4 && parts[0] == "inputs" && parts[2] == "generate" && parts[3] == "retract":
		return true
	case n == 6 && parts[0] == "inputs" && parts[2] == "generate" && parts[3] == "columns" && parts[5] == "s":
		return true
	}
	return false
}

// builtinBenches expands a built-in workload over its benchmarks and the
// values of its parameters: a --param value, else every default.
func builtinBenches(name string, params []*parsedParam) ([]*Benchmark, error) {
	w, err := workloads.Lookup(name)
	if err != nil {
		return nil, usagef("run", "%s", notBuiltin(name, err))
	}
	values := make([][]int64, len(w.Params))
	for i, p := range w.Params {
		values[i] = p.Defaults
		for _, pp := range params {
			if pp.key == p.Name {
				var xs []int64
				for _, text := range pp.values {
					v, err := strconv.ParseInt(text, 10, 64)
					if err == nil {
						err = p.Check(v)
					} else {
						err = fmt.Errorf("%s must be in %s (%s), not %s", p.Name, p.Range(), p.Doc, text)
					}
					if err != nil {
						return nil, usagef("--param", "%s: workload %s: %v", spec.Clip(pp.raw), w.Name, err)
					}
					xs = append(xs, v)
				}
				values[i] = xs
				pp.used = true
			}
		}
	}
	var out []*Benchmark
	// A runner parameter (fanout's k) sets no spec field: benchmarks that
	// differ only in runner parameters share one spec, so a run loads
	// their inputs once (loadAll).
	decoded := map[string]*spec.Spec{}
	err = product(values, func(combo []int64) error {
		ps := make([]Param, len(w.Params))
		m := map[string]int64{}
		key := ""
		for i, p := range w.Params {
			ps[i] = Param{Name: p.Name, Value: combo[i]}
			m[p.Name] = combo[i]
			if !p.Runner {
				key += strconv.FormatInt(combo[i], 10) + ","
			}
		}
		for bi := range w.Benches {
			b := &w.Benches[bi]
			k := key + strconv.Itoa(bi)
			s, ok := decoded[k]
			if !ok {
				var err error
				if s, err = b.Spec(m); err != nil {
					return err
				}
				decoded[k] = s
			}
			out = append(out, &Benchmark{Base: b.Base, Workload: w.Name, Params: ps, Spec: s, joins: w.Joins})
		}
		return nil
	})
	return out, err
}

// specFileBenches reads a user's spec file, once for each combination of
// its parameters' values. Its parameters are spec field paths holding
// numbers (inputs.NAME.generate.rows, as_of, ...).
func specFileBenches(path string, params []*parsedParam) ([]*Benchmark, error) {
	values := make([][]string, len(params))
	for i, p := range params {
		if !strings.Contains(p.key, ".") && p.key != "as_of" && p.key != "until" {
			if specField(p.key) != "" {
				// version=1, name=...: a field, but not an integer
				// one a run could vary.
				return nil, usagef("--param", "%s: %s is a field of the spec, not a parameter: a spec file's parameters are paths of its integer fields other than version, such as as_of, until and inputs.NAME.generate.rows", spec.Clip(p.raw), spec.Clip(p.key))
			}
			// A built-in workload's parameter: every selected spec file
			// must have each --param, and a spec file has field paths.
			return nil, usagef("--param", "%s: spec file %s has no parameter %s (a spec file's parameters are paths of its integer fields, such as inputs.NAME.generate.rows)", spec.Clip(p.raw), spec.Path(path), spec.Clip(p.key))
		}
		values[i] = p.values
		p.used = true
	}
	var out []*Benchmark
	csvRead := false
	err := product(values, func(combo []string) error {
		var ov []spec.Override
		var ps []Param
		for i, p := range params {
			ov = append(ov, spec.Override{Field: p.key, Text: combo[i], By: "--param " + spec.Clip(p.raw)})
			v, _ := strconv.ParseInt(combo[i], 10, 64) // 0 beyond int64: the name shows Text
			ps = append(ps, Param{Name: p.key, Value: v, Text: combo[i]})
		}
		s, err := spec.ReadFileWith(path, ov)
		var se *spec.Error
		if errors.As(err, &se) {
			// A value --param set is not the file's: the message says
			// so, or it reads as the file's line holding it.
			named := false
			for _, o := range ov {
				if se.Field == o.Field {
					if !strings.HasPrefix(se.Msg, o.By) {
						se.Msg = o.By + ": " + se.Msg
					}
					named = true
					break
				}
			}
			if !named && len(ov) > 0 {
				// A rule between fields that a value --param set broke
				// at another field (as_of past the file's until, a
				// min past its max): the file's line alone holds no
				// fault, so the message names the parameters, as a
				// built-in workload's does.
				by := make([]string, len(ov))
				for i, o := range ov {
					by[i] = o.By
				}
				se.Msg += " (with " + strings.Join(by, ", ") + ")"
			}
		}
		if err != nil {
			return err
		}
		if !csvRead {
			// A parameter sets no CSV path: one reading checks them.
			csvRead = true
			for i := range s.Inputs {
				in := &s.Inputs[i]
				if in.Source == spec.SourceCSV {
					if _, err := s.ReadInputCSV(in); err != nil {
						return err
					}
				}
			}
		}
		// The name holds the parameters in the order of their paths, not
		// of the command line: one run with its --params swapped is the
		// same benchmark, which benchcmp and benchstat pair by name.
		slices.SortFunc(ps, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, &Benchmark{Base: camel(s.Name), Workload: s.Name, Params: ps, Spec: s, file: true})
		return nil
	})
	return out, err
}

// camel turns a spec name into a benchmark base: orders_lineitem ->
// OrdersLineitem.
func camel(name string) string {
	var sb strings.Builder
	up := true
	for _, c := range name {
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			sb.WriteRune(c - 'a' + 'A')
			up = false
		default:
			sb.WriteRune(c)
			up = false
		}
	}
	if sb.Len() == 0 || sb.String()[0] >= '0' && sb.String()[0] <= '9' {
		return "W" + sb.String()
	}
	return sb.String()
}

// missing returns the error of --index imported for a spec whose query,
// under join strategy j, reads an arrangement no index serves; it names
// every missing (collection, key set).
func missing(s *spec.Spec, j string) error {
	kind, err := plan.ParseJoinKind(j)
	if err != nil {
		return usagef("--join", "unknown value %s (linear or delta)", spec.Quote(j))
	}
	m, err := s.Plan.Missing(kind)
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
	reader := fmt.Sprintf("the %s join reads them", kind)
	if len(s.Plan.Query.Entries) == 1 {
		reader = "the query reads them" // one from entry: no join
	}
	return s.Errorf("indexes", "--index imported: no index serves %s (%s; add indexes or use --index direct)", strings.Join(names, ", "), reader)
}

// builtinClash is the error of spec file s run (or validated) with the
// built-in workload of its name: their results would both say
// workload=<name>.
func builtinClash(s *spec.Spec) error {
	return s.Errorf("name", "workload %q is also the name of the built-in workload %s: their results would have the same workload name (rename the spec)", s.Name, s.Name)
}
