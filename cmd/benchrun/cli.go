package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracebench/tracebench/internal/benchcli"
	"github.com/tracebench/tracebench/internal/benchrun"
)

// cmdError marks an error returned by a command's RunE, as opposed to one
// cobra or pflag produced while parsing (always bad usage, exit 2).
type cmdError struct{ err error }

func (e cmdError) Error() string { return e.err.Error() }
func (e cmdError) Unwrap() error { return e.err }

// wrap adapts a command body so its errors are told apart from parse errors.
func wrap(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			return cmdError{err}
		}
		return nil
	}
}

// run executes benchrun with args and returns the exit code; out gets
// results and command output, errOut messages and progress.
func run(ctx context.Context, out, errOut io.Writer, args []string) int {
	return runWith(ctx, out, errOut, args, benchrun.RuntimeEngine{})
}

// runWith is run with the engine that measures samples.
func runWith(ctx context.Context, out, errOut io.Writer, args []string, eng benchrun.Engine) int {
	// The command output keeps its first write error, which fails the
	// command however the command wrote.
	cw := &benchrun.ErrWriter{W: out}
	root := newRoot(cw, errOut, eng)
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var ce cmdError
	if cw.Err != nil && (err == nil || !errors.As(err, &ce)) {
		// Output that did not reach stdout (a full disk, /dev/full) is
		// a failure, not a silent success; nor is it bad usage when
		// cobra's own command (completion) returns the write's error.
		fmt.Fprintf(errOut, "benchrun: writing output: %v\n", cw.Err)
		return benchrun.ExitFailed
	}
	if err == nil {
		return benchrun.ExitOK
	}
	// A refusal because standard error is one of the command's files is
	// not written there (benchrun.RefusalOut).
	errOut = benchrun.RefusalOut(err, benchcli.StderrNamedInArgs(errOut, args), out, errOut)
	if errors.As(err, &ce) {
		fmt.Fprintln(errOut, benchrun.Message(ce.err))
		return benchrun.ExitCode(ce.err)
	}
	msg := benchrun.ParseMessage(err.Error())
	if !strings.HasPrefix(msg, "benchrun") {
		msg = "benchrun: " + msg
	}
	// Point at the help of the command whose flags or arguments were
	// wrong (benchrun run --help lists run's flags; benchrun --help only
	// the commands).
	path := "benchrun"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	fmt.Fprintf(errOut, "%s\nRun '%s --help' for usage.\n", msg, path)
	if hint := suiteFlagHint(cmd, err); hint != "" {
		fmt.Fprintln(errOut, hint)
	}
	return benchrun.ExitUsage
}

// suiteFlagHint says where a flag of run given to the default suite goes
// (benchrun --count 5): the suite takes none, and `run --index
// imported,direct` runs the same benchmarks with run's flags. "" for any
// other error.
func suiteFlagHint(cmd *cobra.Command, err error) string {
	if cmd == nil || cmd.HasParent() {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), cmd.CommandPath()+": unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	for _, c := range cmd.Commands() {
		if c.Name() == "run" && c.Flags().Lookup(name) != nil {
			return "The default suite takes no flags; --" + name + " is run's: 'benchrun run --index imported,direct' runs the same benchmarks and takes run's flags."
		}
	}
	return ""
}

// newRoot builds the command tree.
func newRoot(out, errOut io.Writer, eng benchrun.Engine) *cobra.Command {
	root := &cobra.Command{
		Use:   "benchrun",
		Short: "Benchmark joins and reduces over shared traces: imported vs direct indexes",
		Long: `benchrun runs workload specs (docs/spec.md) on the tracebench engine and
writes Go benchmark format.

With no arguments it runs the default suite: every built-in workload at its
small default size in both index modes.`,
		Example: `  benchrun list
  benchrun validate workloads/examples/lookup.json`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			return benchrun.Run(cmd.Context(), benchrun.RunConfig{
				Out: out, ErrOut: errOut,
				Selection: benchrun.Selection{Index: []string{benchrun.IndexImported, benchrun.IndexDirect}, Workers: 1},
				Count:     1, Progress: benchrun.ProgressAuto, ErrOutIsTerminal: isTerminal(errOut), Engine: eng,
			})
		}),
	}
	// No command may write to a spec file it reads.
	root.PersistentPreRunE = wrap(func(cmd *cobra.Command, args []string) error {
		return benchrun.CheckStreams(cmd.Context(), out, errOut, args)
	})
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s: %w", c.CommandPath(), err)
	})
	root.AddCommand(newList(out), newValidate(out), newExplain(out), newGen(out, errOut), newRun(out, errOut, eng), newEval(out), newCheck(out))
	benchcli.StrictHelp(root, func(err error) error { return err })
	benchcli.Once(append(root.Commands(), root)...) // repeatable: --param
	return root
}

// isTerminal reports whether w is a terminal that a progress bar can be
// drawn on. The bar redraws itself with cursor-movement escapes, which a
// terminal of TERM=dumb (an editor's shell buffer) prints as text, and
// fits itself into the terminal's rows, of which a terminal that reports
// no size has none (a pseudo-terminal no one sized, as `script` makes in a
// CI job): there, as off a terminal, the progress is a line per sample,
// where the bar drew nothing at all.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	width, height, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0 && height > 0
}

// minArgs is cobra.MinimumNArgs with a message naming the command's usage.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return fmt.Errorf("%s needs at least %d argument(s): %s", cmd.CommandPath(), n, cmd.UseLine())
		}
		return nil
	}
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d argument(s), got %d: %s", cmd.CommandPath(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}

func newList(out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the built-in workloads with their parameters and defaults",
		Example: "  benchrun list",
		Args:    exactArgs(0),
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			return benchrun.List(benchrun.ListConfig{Out: out})
		}),
	}
}

func newValidate(out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC.json|WORKLOAD...",
		Short: "Check spec files and their CSV inputs",
		Long: `validate decodes each spec strictly, checks every field and reads its CSV
inputs; a built-in workload name validates its spec files. A problem exits
with status 2 and names the file and the line or field.`,
		Example: "  benchrun validate workloads/examples/lookup.json workloads/examples/star.json\n  benchrun validate dd",
		Args:    minArgs(1),
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			return benchrun.Validate(cmd.Context(), benchrun.ValidateConfig{Out: out, Specs: args})
		}),
	}
}

func newGen(out, errOut io.Writer) *cobra.Command {
	var dir string
	var seed uint64
	var params []string
	c := &cobra.Command{
		Use:   "gen SPEC.json|WORKLOAD --out DIR [--param key=value]...",
		Short: "Write every input of a spec as CSV",
		Long: `gen writes each input of the spec, generated, inline or CSV, as DIR/NAME.csv
with the header time,diff,<columns>: the exact updates a run feeds the engine.
A built-in workload of several specs writes DIR/SPEC/NAME.csv for each.
--param and --seed take the values run takes, one value per parameter,
and gen writes what run feeds with them.
It writes every file or none: each destination is checked first, a
failure puts back what was replaced, and Ctrl-C (exit 130) leaves nothing.`,
		Example: "  benchrun gen workloads/examples/lookup.json --out /tmp/lookup\n  benchrun gen lookup --param rows=1e5 --out /tmp/lookup",
		Args:    exactArgs(1),
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			return benchrun.Gen(cmd.Context(), benchrun.GenConfig{Out: out, ErrOut: errOut, Spec: args[0], Dir: dir, Seed: seed, Params: params})
		}),
	}
	c.Flags().StringVar(&dir, "out", "", "directory to write NAME.csv files into (created if missing)")
	c.Flags().Uint64Var(&seed, "seed", 0, "run seed, combined with each generator's own seed")
	c.Flags().StringArrayVar(&params, "param", nil, "key=value parameter, as run takes it, one value (repeatable; numbers accept 1e6)")
	return c
}

func newRun(out, errOut io.Writer, eng benchrun.Engine) *cobra.Command {
	cfg := benchrun.RunConfig{Out: out, ErrOut: errOut, ErrOutIsTerminal: isTerminal(errOut), Engine: eng}
	var index, join string
	c := &cobra.Command{
		Use:   "run [WORKLOAD|SPEC.json ...]",
		Short: "Run benchmarks and write Go benchmark format",
		Long: `run runs built-in workloads (see benchrun list) or spec files, each sample
once, and writes one result line per sample on stdout (and --out), named
Benchmark<Base>/workload=<name>/index=<mode>/join=<j>/<param>=<v>.../workers=<W>.
With no workload it runs every built-in workload.`,
		Example: `  benchrun run lookup --count 5 --index imported,direct --out lookup.txt
  benchrun run star --join linear,delta --param orders=1e5
  benchrun run workloads/examples/star.json --param inputs.orders.generate.rows=1e5 --shard 0/2`,
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			var err error
			cfg.Targets = args
			if cfg.Index, err = benchrun.ParseList("--index", index, benchrun.IndexImported, benchrun.IndexDirect); err != nil {
				return err
			}
			cfg.Join = nil
			if join != "" {
				if cfg.Join, err = benchrun.ParseList("--join", join, "linear", "delta"); err != nil {
					return err
				}
			}
			return benchrun.Run(cmd.Context(), cfg)
		}),
	}
	f := c.Flags()
	f.IntVar(&cfg.Count, "count", 1, "samples per benchmark; each sample runs the workload once")
	f.StringVar(&index, "index", benchrun.IndexImported, "index modes, comma-separated: imported,direct")
	f.StringVar(&join, "join", "", "join strategies, comma-separated: linear,delta (default: the workload's, see list; else the spec's)")
	f.IntVar(&cfg.Workers, "workers", 1, fmt.Sprintf("workers per runtime, at most %d", benchrun.MaxWorkers))
	f.StringArrayVar(&cfg.Params, "param", nil, "key=value parameter, or key=v1,v2,... to run each value (repeatable; numbers accept 1e6)")
	f.StringVar(&cfg.OutFile, "out", "", "also write results to FILE (truncated at start, each line flushed)")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile to FILE")
	f.StringVar(&cfg.MemProfile, "memprofile", "", "write an allocation profile to FILE")
	f.StringVar(&cfg.Flamegraph, "flamegraph", "", "write a CPU flame graph to FILE.html")
	f.StringVar(&cfg.Shard, "shard", "0/1", "run shard i/n (0-based) of the sorted benchmark list")
	f.Uint64Var(&cfg.Seed, "seed", 0, "run seed, combined with each generator's own seed")
	f.StringVar(&cfg.Progress, "progress", benchrun.ProgressAuto, "progress on stderr: auto (a bar on a terminal of known size, else a line per sample), on (a line per sample) or off")
	return c
}

func newEval(out io.Writer) *cobra.Command {
	cfg := benchrun.EvalConfig{Out: out}
	c := &cobra.Command{
		Use:   "eval SPEC.json|WORKLOAD --at T[,T...]",
		Short: "Print the query's output accumulated at given times",
		Long: `eval runs the spec's query once and prints its output accumulated at each
--at time, in --at order; a built-in workload of one spec runs at its
defaults. Each time must be at or after the spec's as_of and before its
until. CSV (default): "# time=T", the output names and diff, the rows; then
"# errors time=T", "error,diff", the errors. JSON: one object per time and
line. Rows sort numerically column by column, errors by message; the bytes
are the same in both index modes and both join strategies.`,
		Example: `  benchrun eval workloads/examples/lookup.json --at 0,9
  benchrun eval workloads/examples/errors.json --at 9 --index direct --join linear --format json
  benchrun eval groupby --at 9`,
		Args: exactArgs(1),
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			cfg.Spec = args[0]
			return benchrun.Eval(cmd.Context(), cfg)
		}),
	}
	f := c.Flags()
	f.StringVar(&cfg.At, "at", "", "times to print, comma-separated (required)")
	f.StringVar(&cfg.Index, "index", benchrun.IndexImported, "index mode: imported or direct")
	f.StringVar(&cfg.Join, "join", "", "join strategy: linear or delta (default: the spec's)")
	f.StringVar(&cfg.Format, "format", benchrun.FormatCSV, "output format: csv or json")
	f.IntVar(&cfg.Workers, "workers", 1, fmt.Sprintf("workers per runtime, at most %d", benchrun.MaxWorkers))
	f.Uint64Var(&cfg.Seed, "seed", 0, "run seed, combined with each generator's own seed")
	return c
}

func newCheck(out io.Writer) *cobra.Command {
	cfg := benchrun.CheckConfig{Out: out}
	c := &cobra.Command{
		Use:   "check [WORKLOAD|SPEC.json ...]",
		Short: "Compare every mode and join strategy with the reference evaluator",
		Long: `check runs each workload (every built-in at its check size when none is
given) with --index imported and direct, --join linear and delta, and one and
two workers, and compares the output and errors with the reference evaluator
at every input time (up to 256 of them), every configuration's with the
first's at every input time (up to where a count may overflow), the
per-operator error counts with the output's errors and each index's
maintaining dataflow's with its index's, and that every read hold and
registry slot is gone at the end. It prints what differs and exits 1 on
any difference.`,
		Example: `  benchrun check lookup errors
  benchrun check workloads/examples/star.json`,
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			cfg.Targets = args
			return benchrun.Check(cmd.Context(), cfg)
		}),
	}
	c.Flags().Uint64Var(&cfg.Seed, "seed", 0, "run seed, combined with each generator's own seed")
	return c
}

// helpExamples returns the example command lines of a command, without
// the leading program name, for tests.
func helpExamples(c *cobra.Command) [][]string {
	var out [][]string
	for _, line := range strings.Split(c.Example, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == "benchrun" {
			out = append(out, f[1:])
		}
	}
	return out
}

func newExplain(out io.Writer) *cobra.Command {
	var cfg benchrun.ExplainConfig
	c := &cobra.Command{
		Use:   "explain SPEC.json|WORKLOAD",
		Short: "Print the plan: join stages or paths and the index serving each arrangement",
		Long: `explain prints what each maintained index's dataflow builds, imports and
reads raw, and the query's linear stages or delta paths with the arrangement
each reads and the index that serves it. With --index imported, an
arrangement no index serves exits with status 2, naming every missing
(collection, key set).`,
		Example: `  benchrun explain workloads/examples/star.json --join delta
  benchrun explain workloads/examples/errors.json --index direct
  benchrun explain triangles`,
		Args: exactArgs(1),
		RunE: wrap(func(cmd *cobra.Command, args []string) error {
			cfg.Out, cfg.Spec = out, args[0]
			return benchrun.Explain(cmd.Context(), cfg)
		}),
	}
	c.Flags().StringVar(&cfg.Index, "index", benchrun.IndexImported, "index mode: imported or direct")
	c.Flags().StringVar(&cfg.Join, "join", "", "join strategy: linear or delta (default: the spec's)")
	return c
}
