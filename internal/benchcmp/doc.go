// Package benchcmp is the logic of the benchcmp command: statistics over Go
// benchmark result files (the format `go test -bench` and benchrun write),
// comparisons that say whether a change is real, and a gate for CI.
//
// It is built on golang.org/x/perf, benchstat's own engine: benchfmt reads the
// files, benchproc filters and groups results (its filter and projection
// syntax is the user's), benchmath computes medians, confidence intervals and
// Mann–Whitney U p-values, benchunit tidies and scales units. benchstat's
// table builder is internal to its command, so the table is built here
// (table.go) the same way, and a test checks that centers and p-values agree
// with `go tool benchstat` on the same files.
//
// # The parts
//
//   - Compare (compare.go, table.go): read files, build one table per unit
//     and configuration, one row per benchmark, one column per value of the
//     column projection (the file by default), compare every column with the
//     first, and judge each change (verdict.go). Formats: text, markdown,
//     csv, json (format.go) and a self-contained HTML report with SVG charts
//     (html.go, charts.go).
//   - Merge (merge.go): join the files of sharded runs into one, warning
//     of a benchmark in two files or of one file given twice, and failing
//     (ErrRunFailed, exit 1, the merged file written with them) on go
//     test's FAIL lines.
//   - Input checks (input.go): what benchfmt leaves to its callers, shared
//     by Compare, Scaling and Merge.
//   - Scaling (scaling.go): fit each benchmark's growth exponent in one name
//     parameter by least squares on log-log data, with an interval.
//   - Profile (profile.go): a differential flame graph of two CPU profiles,
//     drawn by internal/benchflame.
//
// # Invariants
//
//   - C1 (direction): a change is a regression only in a unit whose direction
//     is known: from `Unit U better=lower|higher` metadata in the files, else
//     the Go units sec/op, B/op and allocs/op (lower) and B/s (higher). A unit
//     without a known direction gets the verdict "changed", never
//     "regression".
//   - C2 (gate): Compare returns ErrRegression (exit 1) exactly when, with
//     FailOn set, some cell's verdict is "regression": p <= alpha, the change
//     goes the bad way, and its magnitude is past the unit's threshold
//     (larger, beyond rounding: a change of exactly the threshold is not);
//     or when a benchmark of the baseline has no result in another column,
//     or a file holds go test's FAIL line (a run that failed). A
//     gate that compared no cell with a baseline cannot pass: it returns an
//     error wrapping ErrInput (exit 2) that says why nothing paired, and
//     writes no report.
//   - C3 (input): every problem with the input is an error wrapping ErrInput
//     (exit 2) that names the file and, when there is one, the line; nothing
//     in a bad file is silently skipped, and nothing is written. benchfmt's
//     syntax is checked further (input.go): a last line without a newline
//     that is not a complete result (a file cut short), a unit that is a
//     number or not text, a unit twice on one line, a line longer than
//     benchfmt's reader takes, and an iteration count below 1 are
//     refused; a leading byte order mark is skipped, one starting a later
//     line or inside a result line refused. A
//     --threshold for a unit no file has, or two thresholds for one unit,
//     is bad usage (ErrUsage, exit 2).
//   - C4 (matching): rows of different files are matched by benchmark name and
//     by every configuration line except commit, cpu and go (unless Strict),
//     as benchstat matches them with -ignore.
//   - C5 (too small): when even the most extreme samples of the given sizes
//     could not reach p <= alpha, the verdict is "too few samples" and a
//     warning says how many samples are needed, instead of a silent "~".
//   - C6 (output): a failure to draw or write the output from good input is
//     an error wrapping ErrOutput (exit 1), never exit 2; the HTML report
//     leaves out of its ratio chart, and names in the caption, the rows
//     whose ratio to the baseline is not finite (a median of 0 before).
//
// # Concurrency
//
// The package has no package-level mutable state; every function may be
// called from several goroutines at once, except Profile, which exports
// through benchflame's subprocess (see that package).
package benchcmp
