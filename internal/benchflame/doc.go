// Package benchflame turns a pprof profile into one self-contained HTML
// flame graph: pprof's own flame graph view (github.com/google/pprof's
// driver), with its script and style inline, no network and no graphviz. It
// takes a profile file (Write, WriteFile) or its bytes (WriteProfile). It
// serves `benchcmp profile` (a differential graph, Options.Base) and
// `benchrun --flamegraph` (one profile).
//
// # Use
//
//	func main() {
//		benchflame.RunChildIfRequested() // first thing: see below
//		...
//		err := benchflame.WriteFile(ctx, "flame.html", benchflame.Options{
//			Profile: "cpu.pprof",
//			Labels:  []string{"runtime", "operator"},
//		})
//	}
//
// With Labels, the CPU samples' pprof labels become the root frames
// (pprof's -tagroot): the graph splits first by runtime (maintenance,
// interactive, solo) and operator, then by call stack. With Base, the graph
// is Profile minus Base (pprof's -diff_base): frames are sized by the
// absolute difference and colored by its sign, and the page's title and
// details say "PROFILE minus base BASE", each named as the caller gave it.
// With Title, the page's title and the first line of its details are
// Title (benchrun names its runs' benchmarks there).
//
// # Invariants
//
//   - F1 (one export per process): pprof's driver keeps its settings in a
//     process-wide variable and starts every run from the last one's, so
//     Export runs at most once per process. Write and WriteFile run Export in
//     a fresh subprocess (the running executable, told by an environment
//     variable to act as the exporter), so they may be called any number of
//     times, from several goroutines at once.
//   - F2 (self-contained): the page loads nothing: no script, style, font or
//     image from a file or the network. A browser test opens it from a file
//     and fails on any request that is not the page itself.
//   - F3 (no partial file): WriteFile writes the file only after the export
//     succeeded, under a temporary name renamed into place, so the file
//     holds its old content or the whole page.
//   - F4 (interruption): an export stopped by its context or by SIGINT or
//     SIGTERM to the subprocess (Ctrl-C reaches the whole foreground process
//     group) returns ErrInterrupted and writes nothing.
//   - F5 (no dead control): the page keeps only what its script does by
//     itself (a click on a frame draws the graph from it, the search box,
//     the details); pprof's menus, Download and the right-click menu,
//     links to its server's other views, are taken out.
//
// REQUIRES: every executable (and test binary, from TestMain) that calls
// Write or WriteFile calls RunChildIfRequested before anything else.
package benchflame
