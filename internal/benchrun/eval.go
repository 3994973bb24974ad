package benchrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/reference"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// Eval output formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// EvalConfig configures Eval; fields mirror the flags of `benchrun eval`.
type EvalConfig struct {
	Out     io.Writer
	Spec    string // a spec file, or a built-in workload of one spec (at its defaults)
	At      string // T[,T...]
	Index   string // imported or direct
	Join    string // linear, delta, or "" for the spec's
	Format  string // csv or json
	Workers int
	Seed    uint64
}

// ErrLeak is returned when a run left a read hold or a registry slot
// behind (exit 1).
var ErrLeak = errors.New("benchrun: holds or registry slots left after the run")

// Eval runs the spec's query once with its output captured and prints the
// output accumulated at each --at time, in --at order (docs/spec.md,
// benchrun eval): the same bytes in every mode, join strategy and worker
// count.
func Eval(ctx context.Context, cfg EvalConfig) error {
	switch cfg.Format {
	case FormatCSV, FormatJSON:
	default:
		return usagef("--format", "unknown value %s (csv or json)", spec.Quote(cfg.Format))
	}
	if err := checkWorkers(cfg.Workers); err != nil {
		return err
	}
	mode := render.Imported
	switch cfg.Index {
	case IndexImported:
	case IndexDirect:
		mode = render.Direct
	default:
		return usagef("--index", "unknown value %s (imported or direct)", spec.Quote(cfg.Index))
	}
	specs, err := resolve(cfg.Spec)
	if err != nil {
		return err
	}
	if len(specs) > 1 {
		return usagef(cfg.Spec, "a workload of %d specs; eval runs one: name one of %s", len(specs), specFiles(specs))
	}
	s := specs[0]
	join := cfg.Join
	if join == "" {
		join = s.Query.Join
	}
	kind, err := plan.ParseJoinKind(join)
	if err != nil {
		return usagef("--join", "unknown value %s (linear or delta)", spec.Quote(join))
	}
	times, err := parseAt(cfg.At, s)
	if err != nil {
		return err
	}
	if mode == render.Imported {
		if err := missing(s, join); err != nil {
			return err
		}
	}
	// Both through interruptible, as check runs them: loading a large
	// generated input takes no context, nor does reading the captured
	// output at each time once the query has finished, which took
	// seconds at 3M rows; a Ctrl-C then went unheeded and eval printed
	// everything and exited 0.
	tables, err := interruptible(ctx, func() ([]*spec.Table, error) { return workloads.Load(s, cfg.Seed) })
	if err != nil {
		return err
	}
	type evaluated struct {
		res  []*reference.Result
		leak error
	}
	ev, err := interruptible(ctx, func() (evaluated, error) {
		res, _, leak, err := evaluateWorkload(ctx, s, tables, workloads.SessionOptions{Mode: mode, Join: kind, Workers: cfg.Workers}, times)
		return evaluated{res, leak}, err
	})
	if err != nil || ctx.Err() != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	res, leak := ev.res, ev.leak
	w := bufio.NewWriter(cfg.Out)
	for _, r := range res {
		if ctx.Err() != nil {
			// The times printed stay, each section whole, as run
			// keeps its finished lines.
			if err := w.Flush(); err != nil {
				return fmt.Errorf("benchrun: writing output: %w", err)
			}
			return ErrInterrupted
		}
		if cfg.Format == FormatJSON {
			writeJSON(w, r)
		} else {
			writeCSV(w, r)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("benchrun: writing output: %w", err)
	}
	if leak != nil {
		return fmt.Errorf("%w: %v", ErrLeak, leak)
	}
	return nil
}

// parseAt parses --at: times at or after as_of and before until.
func parseAt(at string, s *spec.Spec) ([]uint64, error) {
	if at == "" {
		return nil, usagef("--at", "is required: one or more times, comma-separated")
	}
	var out []uint64
	for _, f := range strings.Split(at, ",") {
		t, err := strconv.ParseUint(f, 10, 64)
		if errors.Is(err, strconv.ErrRange) && f[0] != '0' {
			return nil, usagef("--at", "%s is out of range: a time is at most %d", spec.Quote(f), uint64(math.MaxUint64))
		}
		if err != nil || strconv.FormatUint(t, 10) != f { // canonical: no sign, space or leading zero
			return nil, usagef("--at", "%s is not a time (a non-negative integer in plain decimal)", spec.Quote(f))
		}
		p := s.Plan.Plan
		if t < p.AsOf {
			return nil, usagef("--at", "time %d is before the spec's as_of %d (%s)", t, p.AsOf, spec.Path(s.File))
		}
		if p.HasUntil && t >= p.Until {
			return nil, usagef("--at", "time %d is not before the spec's until %d (%s)", t, p.Until, spec.Path(s.File))
		}
		if slices.Contains(out, t) {
			// The same section printed twice, as a --param or --index
			// value given twice is refused.
			return nil, usagef("--at", "time %d is given twice", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// writeCSV writes one time's output: "# time=T", the header, the rows,
// then "# errors time=T", "error,diff" and the errors.
func writeCSV(w *bufio.Writer, r *reference.Result) {
	fmt.Fprintf(w, "# time=%d\n", r.Time)
	for _, c := range r.Columns {
		w.WriteString(c)
		w.WriteByte(',')
	}
	w.WriteString("diff\n")
	var buf []byte
	for _, row := range r.Rows {
		buf = buf[:0]
		for _, v := range row.Values {
			buf = strconv.AppendInt(buf, v, 10)
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, row.Diff, 10)
		buf = append(buf, '\n')
		w.Write(buf)
	}
	fmt.Fprintf(w, "# errors time=%d\nerror,diff\n", r.Time)
	for _, e := range r.Errors {
		fmt.Fprintf(w, "%s,%d\n", e.Message, e.Diff)
	}
}

// evalJSON is one line of --format json.
type evalJSON struct {
	Time    uint64      `json:"time"`
	Columns []string    `json:"columns"`
	Rows    [][]int64   `json:"rows"`
	Errors  []errorJSON `json:"errors"`
}

type errorJSON struct {
	Error string `json:"error"`
	Diff  int64  `json:"diff"`
}

func writeJSON(w *bufio.Writer, r *reference.Result) {
	line := evalJSON{Time: r.Time, Columns: r.Columns, Rows: [][]int64{}, Errors: []errorJSON{}}
	if line.Columns == nil {
		line.Columns = []string{}
	}
	for _, row := range r.Rows {
		line.Rows = append(line.Rows, append(append([]int64(nil), row.Values...), row.Diff))
	}
	for _, e := range r.Errors {
		line.Errors = append(line.Errors, errorJSON{Error: e.Message, Diff: e.Diff})
	}
	data, _ := json.Marshal(line) // ints and strings only: cannot fail
	w.Write(data)
	w.WriteByte('\n')
}

// CheckConfig configures Check; fields mirror `benchrun check`.
type CheckConfig struct {
	Out     io.Writer
	Targets []string // built-in names or spec files; empty: every built-in
	Seed    uint64
}

// evaluateWorkload runs a query for eval (workloads.Evaluate); tests
// make it deaf to a Ctrl-C, as reading a large output is.
var evaluateWorkload = workloads.Evaluate

// checkWorkload compares one workload with the reference
// (workloads.Check); tests make it find differences the engine does not
// produce.
var checkWorkload = workloads.CheckReported

// ErrCheckFailed is returned when a check found a difference (exit 1).
var ErrCheckFailed = errors.New("benchrun: check failed")

// Check runs each workload (built-ins at their check size: size
// parameters at a tenth of their defaults; each target once, and, as
// run, refusing two spec files of one workload name or a spec file of
// a built-in's name named with it) in both modes, both join
// strategies and one and two workers, compares every output and error
// collection with the reference evaluator at every input time (up to 256:
// workloads.CheckTimes), every configuration's output with the first's at
// every input time (up to where a count may overflow: workloads.Check),
// the per-operator error counts with the output's
// errors and each index's maintaining dataflow's with its index's, and
// that every hold and registry slot is gone at the end. It prints one line per workload and
// every difference, and returns ErrCheckFailed if there was one.
func Check(ctx context.Context, cfg CheckConfig) error {
	type target struct {
		name string
		spec *spec.Spec
	}
	var targets []target
	names := cfg.Targets
	if len(names) == 0 {
		for _, w := range workloads.Registry() {
			names = append(names, w.Name)
		}
	}
	seen := map[string]bool{}
	files := map[string]*spec.Spec{} // spec files by workload name
	var fileSpecs []*spec.Spec       // in the order named
	builtins := map[string]bool{}    // built-in workloads named
	for _, n := range names {
		// A target named twice, under any spelling of its path, is
		// checked once, as run runs it once.
		k := targetKey(n)
		if seen[k] {
			continue
		}
		seen[k] = true
		if isSpecFile(n) {
			bs, err := specFileBenches(n, nil) // one: no parameter
			if err != nil {
				return err
			}
			s := bs[0].Spec
			// Two spec files of one workload name are refused, as run
			// and validate refuse them (docs/spec.md, "Commands"): a
			// spec checked here is one run would measure.
			if prev := files[s.Name]; prev != nil {
				return nameClash(prev, s)
			}
			files[s.Name] = s
			fileSpecs = append(fileSpecs, s)
			targets = append(targets, target{spec.Path(n), s})
			continue
		}
		builtins[n] = true
		w, err := workloads.Lookup(n)
		if err != nil {
			return usagef("check", "%s", notBuiltin(n, err))
		}
		for bi := range w.Benches {
			s, err := w.Benches[bi].Spec(workloads.CheckParams(*w))
			if err != nil {
				return err
			}
			targets = append(targets, target{w.Name + "/" + w.Benches[bi].Base, s})
		}
	}
	for _, s := range fileSpecs {
		// And so is a spec file that declares the name of a built-in
		// workload named with it, whatever the order.
		if builtins[s.Name] {
			return builtinClash(s)
		}
	}
	failed := 0
	for _, t := range targets {
		// Both through interruptible: loading a large generated input,
		// and the reference evaluator, which takes no context, ran for
		// seconds after a Ctrl-C (13.7 s at 10M rows).
		tables, err := interruptible(ctx, func() ([]*spec.Table, error) { return workloads.Load(t.spec, cfg.Seed) })
		if err != nil {
			return err
		}
		cases := workloads.CheckCases(t.spec)
		rep, err := interruptible(ctx, func() (workloads.CheckReport, error) { return checkWorkload(ctx, t.spec, tables, cases) })
		if err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return err
		}
		diffs := rep.Diffs
		if len(diffs) == 0 {
			// Where the reference was evaluated at some of the times,
			// the configurations were compared with each other at more.
			each := ""
			if rep.CrossTimes > rep.ReferenceTimes {
				each = fmt.Sprintf(" and with each other at %d", rep.CrossTimes)
			}
			fmt.Fprintf(cfg.Out, "ok   %s: %s agree with the reference at %s%s%s\n", t.name, count(len(cases), "configuration", "configurations"), count(rep.ReferenceTimes, "time", "times"), each, skippedImported(t.spec, cases))
			continue
		}
		failed++
		fmt.Fprintf(cfg.Out, "FAIL %s\n", t.name)
		for _, d := range diffs {
			fmt.Fprintf(cfg.Out, "     %s\n", d)
		}
	}
	if failed > 0 {
		// Not "from the reference": a FAIL line may be a configuration
		// differing from the first at a time the reference was not
		// evaluated at, an error count or a hold left at the end.
		return fmt.Errorf("%w: %d of %s failed (the FAIL lines above say how)", ErrCheckFailed, failed, count(len(targets), "workload", "workloads"))
	}
	return nil
}

// skippedImported says which joins a check ran in direct mode only, because
// no index serves some arrangement they read (workloads.CheckCases): so an
// "ok" line does not read as covering the imported mode it did not run.
func skippedImported(s *spec.Spec, cases []workloads.CheckCase) string {
	var skipped []string
	seen := map[plan.JoinKind]bool{}
	for _, c := range cases {
		if seen[c.Join] {
			continue
		}
		seen[c.Join] = true
		if slices.ContainsFunc(cases, func(o workloads.CheckCase) bool { return o.Join == c.Join && o.Mode == render.Imported }) {
			continue
		}
		var names []string
		m, _ := s.Plan.Missing(c.Join) // a decoded spec's plan, a join of CheckCases
		for _, a := range m {
			names = append(names, a.String())
		}
		skipped = append(skipped, fmt.Sprintf("join=%v: no index serves %s", c.Join, strings.Join(names, ", ")))
	}
	if len(skipped) == 0 {
		return ""
	}
	return " (direct only, imported not run: " + strings.Join(skipped, "; ") + ")"
}

// specFiles lists the files of a built-in workload's specs as a command
// run here can name them: from the checkout that holds the working
// directory, relative to it (../../workloads/examples/dd_join.json from
// cmd/benchrun); outside a checkout, as paths of one, said so.
func specFiles(specs []*spec.Spec) string {
	files := make([]string, len(specs))
	found := true
	wd, _ := os.Getwd()
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real // as checkoutFiles resolves the files
	}
	for i, s := range specs {
		files[i] = s.File
		srcs := checkoutFiles(s.File, nil)
		if len(srcs) == 0 || wd == "" {
			found = false
			continue
		}
		if rel, err := filepath.Rel(wd, srcs[0]); err == nil {
			files[i] = rel
		}
	}
	list := strings.Join(files, ", ")
	if !found {
		list += " (paths in a checkout of " + thisModule + ", from its root)"
	}
	return list
}
