// Package benchrun is the logic of the benchrun command (docs/spec.md):
// listing the built-in workloads, validating and explaining spec files,
// writing generated inputs as CSV, and running benchmarks into Go
// benchmark format through golang.org/x/perf/benchfmt.
//
// Each command is a config struct and a function over it (List, Validate,
// Gen, Run); cmd/benchrun only wires flags to them. Nothing here is
// package-level mutable state, and nothing writes to os.Stdout or
// os.Stderr directly: every config carries its writers.
//
// Invariants:
//
//   - B1 (exit codes): ExitCode maps every error these functions return:
//     bad usage or input (ErrUsage, spec.ErrInvalid, workloads.ErrUnknown)
//     is 2, an interrupted run (ErrInterrupted) 130, anything else 1.
//     Every bad-input message names the flag, or the file and the line or
//     field.
//   - B2 (results): a result name is
//     <Base>/workload=<name>/index=<mode>/join=<j>/<param>=<v>.../workers=<W>
//     with plain decimal values; config lines are only goos, goarch, cpu,
//     go, gomaxprocs and commit; every unit gets a Unit metadata line
//     before the first result that uses it.
//   - B3 (--out): the file is truncated only after every flag and spec has
//     been validated, and each result line is appended with one write as
//     soon as its sample finishes, so an interrupted run leaves every
//     finished line intact and a run refused for bad input writes nothing.
//     No two output flags may name one file, and no two runs write one
//     --out at once (a regular file is locked while a run writes it).
//   - B4 (--shard i/n): the benchmarks are sorted by name and shard i runs
//     those at positions i, i+n, i+2n, …; the shards of one n partition
//     the list.
package benchrun
