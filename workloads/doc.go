// Package workloads holds the built-in workloads and loads a workload's
// inputs.
//
// A built-in workload (Registry) is one or more benchmarks, each a spec
// file under examples/ (embedded, and shipped so users start their own
// from them), with integer parameters whose defaults are the values
// written in the files. A parameter sets spec fields through an affine
// map (value × Mul / Div + Add), applied to the JSON before validation,
// so a parameter value is checked exactly like a value in the file.
// Before that, Bench.Spec checks each name and value as benchrun's
// --param does (Workload.Param, Param.Check): a name that is not one of
// the workload's parameters, or a value outside the range benchrun list
// shows, is an error wrapping ErrUsage naming the parameter and its
// range, never a run of the defaults.
// Parameters with no target are read by the benchmark runner (how many
// reads, how many concurrent queries).
//
// Load materialises every input of a spec: CSV files, inline rows and
// generators (package gen), all or nothing, each table naming the input
// it is for (spec.Table.Input), which CheckTables checks.
//
// Invariants:
//
//   - W1: every example validates, and applying every parameter's default
//     gives back the file's own spec.
//   - W2: Load returns either every input's table or an error naming the
//     file and line (or field); never some of the tables.
//   - W3: names in the registry are spec names, and a benchmark's Base is
//     a Go identifier suffix (Benchmark<Base>).
package workloads
