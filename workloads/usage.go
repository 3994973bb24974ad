package workloads

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/core/render"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ErrUsage is wrapped by every error that reports a call the package
// cannot serve as asked: a nil or unresolved spec, tables that are not
// the spec's loaded inputs, options out of range, times outside as_of to
// until. Match it with errors.Is.
var ErrUsage = errors.New("workloads: invalid use")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
}

// checkSpec returns an error unless s is a decoded and resolved spec.
func checkSpec(s *spec.Spec) error {
	if s == nil {
		return usagef("nil spec")
	}
	if s.Plan == nil {
		return usagef("spec %s has no resolved plan: decode it with spec.Decode, spec.DecodeWith or spec.ReadFile, which validate it", spec.Quote(s.Name))
	}
	return nil
}

// CheckTables returns an error (wrapping ErrUsage) unless s is a decoded
// spec and tables are inputs for it as Load returns them: one table per
// input, in s.Inputs order, each with the input's columns, as many diffs
// and rows as times, no time above spec.MaxTime and no diff 0 (which
// the spec's decoders refuse, and the reference evaluator too). `NewSession`,
// Evaluate, Check and CheckedReferenceInputs call it; call it before
// ReferenceInputs or CheckTimes on tables not from Load. A table Load
// returned names its input (Table.Input), so two inputs of the same
// columns swapped are refused; tables made otherwise (Input empty) are
// told apart by their columns alone, and swapped ones of equal columns
// pass: the engine and the reference then both read each as the input
// at its position, a workload whose inputs are exchanged.
func CheckTables(s *spec.Spec, tables []*spec.Table) error {
	if err := checkSpec(s); err != nil {
		return err
	}
	if len(tables) != len(s.Inputs) {
		return usagef("%d tables for the %d inputs of spec %s (Load returns one per input, in the spec's order)", len(tables), len(s.Inputs), spec.Quote(s.Name))
	}
	for i, t := range tables {
		in := &s.Inputs[i]
		if t == nil {
			return usagef("table %d, for input %s of spec %s, is nil", i, spec.Quote(in.Name), spec.Quote(s.Name))
		}
		if !slices.Equal(t.Columns, in.Columns) {
			return usagef("table %d has columns %v, but input %d of spec %s, %s, has columns %v: tables of another spec, or not in the spec's input order", i, t.Columns, i, spec.Quote(s.Name), spec.Quote(in.Name), in.Columns)
		}
		if t.Input != "" && t.Input != in.Name {
			return usagef("table %d was loaded for input %s, but input %d of spec %s is %s: tables not in the spec's input order (two inputs of the same columns swapped?)", i, spec.Quote(t.Input), i, spec.Quote(s.Name), spec.Quote(in.Name))
		}
		if len(t.Diffs) != len(t.Times) || len(t.Vals) != len(t.Times)*len(t.Columns) {
			return usagef("table %d (input %s) has %d times, %d diffs and %d values: want as many diffs as times and %d values a time", i, spec.Quote(in.Name), len(t.Times), len(t.Diffs), len(t.Vals), len(t.Columns))
		}
		for j, tm := range t.Times {
			if tm > spec.MaxTime {
				return usagef("table %d (input %s), update %d: time %d is above the largest time %d", i, spec.Quote(in.Name), j, tm, spec.MaxTime)
			}
			if t.Diffs[j] == 0 {
				return usagef("table %d (input %s), update %d: diff 0 (an update inserts or retracts: its diff is never 0)", i, spec.Quote(in.Name), j)
			}
		}
	}
	return nil
}

// MaxWorkers bounds `SessionOptions.Workers`. Each runtime starts that many
// workers and their exchanges grow with its square (1,024 workers take
// 1.5 GB on the star workload, 5,000 exhaust memory); no machine has
// cores for more.
const MaxWorkers = 1024

// MaxQueries bounds InstallQueries' copies of the query, as benchrun's
// fanout k: each is a dataflow on every worker, about a megabyte at
// 10,000 rows, all made before the first is created, so a count of
// millions ran out of memory (math.MaxInt never returned) where it is
// now refused.
const MaxQueries = 1024

// checkOptions returns an error unless every option is in its range.
func checkOptions(opts SessionOptions) error {
	if opts.Mode != render.Imported && opts.Mode != render.Direct {
		return usagef("index mode %d: want render.Imported or render.Direct", opts.Mode)
	}
	if opts.Join != plan.Linear && opts.Join != plan.Delta {
		return usagef("join %v: want plan.Linear or plan.Delta", opts.Join)
	}
	if opts.Workers < 1 || opts.Workers > MaxWorkers {
		return usagef("%d workers: want 1 to %d", opts.Workers, MaxWorkers)
	}
	return nil
}
