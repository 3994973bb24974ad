package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tracebench/tracebench/internal/benchcli"
	"github.com/tracebench/tracebench/internal/benchcmp"
	"github.com/tracebench/tracebench/workloads/spec"
)

// run executes the command line args and returns the exit status
// (benchcmp.ExitCode): 0 success; 1 --fail-on triggered, or the output could
// not be written or drawn; 2 bad usage or input, a --fail-on gate that
// compared nothing included.
func run(args []string, out, errOut io.Writer) int {
	return runContext(context.Background(), args, out, errOut)
}

// runContext is run stopped by ctx (a signal): once ctx is done it returns
// 130 with nothing written, or, if the command's output was already
// written whole (each command writes its output in one Write), the
// command's own status. A flame graph is written whole or not at all, its
// export subprocess ended and no temporary file left (profile stops on
// ctx itself, and is waited for). A command reading its input (a pipe no
// one writes) is not waited for: its output, if it ever comes, is not
// written.
func runContext(ctx context.Context, args []string, out, errOut io.Writer) int {
	in := &interruption{}
	ow := &outWriter{w: out}
	root := newRoot(in.writer(ow), errOut, in)
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		switch {
		case in.stop():
			// The output is written whole: the command is returning.
			err = <-done
		default:
			select {
			case err = <-done: // stopped itself (profile)
			default:
				err = fmt.Errorf("%w: nothing written", benchcmp.ErrInterrupted)
			}
		}
	}
	if ow.err != nil && !errors.Is(err, benchcmp.ErrOutput) && !errors.Is(err, benchcmp.ErrInterrupted) {
		// A write that failed where no command says so (the help, or
		// cobra's completion, which returns the bare error) is output
		// that could not be written, not a success or bad usage.
		err = fmt.Errorf("%w: %v", benchcmp.ErrOutput, ow.err)
	}
	if err != nil {
		w := errOut
		if regularFile(errOut) != nil && (errors.Is(err, errStderrIsInput) || benchcli.StderrNamedInArgs(errOut, args)) {
			// Not into a file of the command standard error is (a
			// flag that does not parse is found before the files are
			// looked at: benchcmp --bogus old.txt new.txt 2>> old.txt).
			w = out
			if regularFile(out) != nil {
				w = io.Discard
			}
		}
		// An operating system error names its file raw: shown as
		// every path of a message is.
		fmt.Fprintf(w, "benchcmp: %s\n", strings.TrimPrefix(spec.PathErr(err), "benchcmp: "))
	}
	return benchcmp.ExitCode(err)
}

const rootExample = `  # Compare two runs (old first); ~ marks differences that are noise.
  benchcmp old.txt new.txt

  # Gate CI: exit 1 if a significant change past 5% (10% for install
  # time) goes the bad way.
  benchcmp --fail-on regression --threshold '*=5' --threshold install-ns=10 old.txt new.txt

  # A pull request comment.
  benchcmp --format markdown old.txt new.txt

  # Imported against direct indexes in one file, as columns of /index.
  benchcmp --col '/index@(direct imported)' run.txt

  # Only install times of imported indexes, as a self-contained HTML report.
  benchcmp --filter '/index:imported .unit:install-ns' --format html old.txt new.txt > report.html`

// interruption stops a command on a signal with nothing half-written: a
// write of the command's output, and the whole of a command that stops on
// its context and cleans up itself (profile), run holding mu; stop takes
// mu, so it waits for them, and once it has nothing more is written or
// started.
type interruption struct {
	mu      sync.Mutex
	stopped bool
	wrote   bool // a held write or command succeeded
}

// stop waits for the write or command in progress, if any, stops every
// later one, and says whether one succeeded: the output is then written
// whole (a command writes its output in one write), and the command is
// returning.
func (i *interruption) stop() (wrote bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.stopped = true
	return i.wrote
}

// hold runs f unless stopped, stop waiting for it to return.
func (i *interruption) hold(f func() error) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return fmt.Errorf("%w: nothing written", benchcmp.ErrInterrupted)
	}
	err := f()
	if err == nil {
		i.wrote = true
	}
	return err
}

// writer returns w with each write held: an interruption lets one in
// progress finish and lets no later one start.
func (i *interruption) writer(w io.Writer) io.Writer { return heldWriter{i, w} }

// streamsAreNoInput refuses a command whose standard output, out (through
// the writers runContext wraps it in), or standard error, errOut, is a
// regular file that is one of the result files paths it reads: benchcmp
// old.txt new.txt >> old.txt would append the report to the results, a
// merge's warnings 2>> shard0.txt to a shard, and > old.txt has the shell
// empty the file before benchcmp reads it, which then looked like a file
// of no results. The refusal for standard error is marked
// errStderrIsInput, so that runContext does not write it there.
func streamsAreNoInput(out, errOut io.Writer, paths []string) error {
	if h, ok := out.(heldWriter); ok {
		out = h.w
	}
	if o, ok := out.(*outWriter); ok {
		out = o.w
	}
	for _, s := range []struct {
		name string
		st   os.FileInfo
		what string
	}{{"standard output", regularFile(out), "the output"}, {"standard error", regularFile(errOut), "its messages"}} {
		if s.st == nil {
			continue
		}
		for _, p := range paths {
			if in, err := os.Stat(p); err == nil && os.SameFile(in, s.st) {
				err := fmt.Errorf("%w: %s is %s, a result file this command reads: %s would be appended to it, or, redirected with >, the shell has emptied it already; redirect %s elsewhere", benchcmp.ErrUsage, s.name, spec.Path(p), s.what, s.name)
				if es := regularFile(errOut); es != nil && os.SameFile(in, es) {
					return stderrRefusal{err} // standard error is the file too (>> f 2>&1)
				}
				return err
			}
		}
	}
	return nil
}

// regularFile returns the FileInfo of the regular file w writes to, nil if
// it writes to anything else (a terminal, a pipe, a buffer).
func regularFile(w io.Writer) os.FileInfo {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return st
}

// errStderrIsInput marks a refusal because standard error is a result file
// the command reads: its message written there would change the file the
// refusal keeps as it was, so runContext writes it to standard output, or,
// when that is a regular file too, nowhere (the exit status, 2, says it).
var errStderrIsInput = errors.New("benchcmp: standard error is a result file the command reads")

// stderrRefusal marks err as errStderrIsInput without changing its text.
type stderrRefusal struct{ error }

func (e stderrRefusal) Unwrap() error      { return e.error }
func (stderrRefusal) Is(target error) bool { return target == errStderrIsInput }

// outWriter writes to w and keeps the first error of its writes.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

type heldWriter struct {
	i *interruption
	w io.Writer
}

func (h heldWriter) Write(p []byte) (n int, err error) {
	err = h.i.hold(func() error {
		n, err = h.w.Write(p)
		return err
	})
	return n, err
}

func newRoot(out, errOut io.Writer, in *interruption) *cobra.Command {
	cfg := benchcmp.DefaultCompareConfig()
	root := &cobra.Command{
		Use:   "benchcmp [flags] OLD NEW | benchcmp --col PROJECTION FILE...",
		Short: "Compare Go benchmark results with benchstat statistics and gate CI on regressions",
		Long: `benchcmp compares Go benchmark result files (written by go test -bench or by
benchrun): medians with confidence intervals, Mann–Whitney U p-values, "~" for
differences that are noise, and a verdict per row from the unit's direction
("Unit U better=lower|higher" lines; sec/op, B/op and allocs/op are lower,
B/s higher) and its threshold.

Rows are matched by benchmark name and configuration lines, ignoring commit,
cpu and go unless --strict. --col, --row, --filter and --ignore take
benchproc syntax (go doc golang.org/x/perf/benchproc/syntax); the first
column is the baseline.

With --fail-on regression, a comparison that compared nothing (the files
share no benchmark, differ in a configuration line such as gomaxprocs, or
--col found one column) is an error that says why; without it, a warning.

Under --fail-on regression, a benchmark of the baseline missing from
another column, or go test's FAIL line in a file (a run that failed),
fails the gate too; without it, both are warnings.

A --threshold unit must be in a file (as written, ns/op, or tidied,
sec/op); one unit given two different thresholds is an error. UNIT=PCT
is cut at its last =, so a unit holding = takes one too (k=v/op=5).

Exit status: 0 success; 1 --fail-on regression triggered, or the output
could not be written (a full disk); 2 bad usage or input, a gate that
compared nothing included (the message names the file and line, or the
flag); 130 stopped by Ctrl-C or SIGTERM, with nothing written.`,
		Example:       rootExample,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Files = args
			paths := make([]string, len(args))
			for i, a := range args {
				paths[i] = a
				if _, p, ok := strings.Cut(a, "="); ok {
					paths[i] = p // LABEL=FILE
				}
			}
			if err := streamsAreNoInput(cmd.OutOrStdout(), cmd.ErrOrStderr(), paths); err != nil {
				return err
			}
			return benchcmp.Compare(cmd.OutOrStdout(), cmd.ErrOrStderr(), cfg)
		},
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		// The parser's message quotes the value whole (pflag's
		// `invalid argument "..."`) or not at all (`unknown flag:
		// --...`): bounded, every value in it is cut to 80 bytes and
		// its length, and one holding a control character is quoted.
		return fmt.Errorf("%w: %s", benchcmp.ErrUsage, spec.Bound(err.Error()))
	})
	f := root.Flags()
	f.StringVar(&cfg.Col, "col", cfg.Col, "benchproc projection whose values are the columns (first = baseline)")
	f.StringVar(&cfg.Row, "row", cfg.Row, "benchproc projection whose values are the rows")
	f.StringVar(&cfg.Filter, "filter", cfg.Filter, "benchproc filter: use only matching results")
	f.StringVar(&cfg.Ignore, "ignore", cfg.Ignore, "keys whose differences do not split rows (commit, cpu and go always, unless --strict)")
	f.BoolVar(&cfg.Strict, "strict", false, "match commit, cpu and go configuration lines too")
	f.Var(floatFlag{p: &cfg.Alpha, open01: true}, "alpha", "significance level: a change is significant if p <= alpha")
	f.Var(floatFlag{p: &cfg.Confidence, open01: true}, "confidence", "confidence level of the intervals")
	f.StringArrayVar(&cfg.Thresholds, "threshold", nil, "UNIT=PCT: a change in UNIT is a regression only past PCT percent (repeatable; UNIT * for all)")
	f.StringVar(&cfg.FailOn, "fail-on", "", "regression: exit 1 when a significant change past its threshold goes the bad way")
	f.StringVar(&cfg.Format, "format", cfg.Format, "output format: "+strings.Join(benchcmp.Formats, "|"))
	f.StringVar(&cfg.ScaleBy, "scale-by", "", "html: the name parameter (/PARAM) of the log-log scaling charts (default: the numeric one with most values)")

	root.AddCommand(newMerge(), newProfile(in), newScaling())
	benchcli.StrictHelp(root, func(err error) error { return fmt.Errorf("%w: %v", benchcmp.ErrUsage, err) })
	benchcli.Once(append(root.Commands(), root)...) // repeatable: --threshold, --labels
	return root
}

func newMerge() *cobra.Command {
	return &cobra.Command{
		Use:   "merge FILE...",
		Short: "Join the result files of sharded runs (benchrun --shard i/n) into one",
		Long: `merge writes the results of every FILE, in order, as one result file on
standard output, keeping configuration and unit metadata lines. Conflicting
unit metadata is an error, and then nothing is written; a benchmark present
in more than one file is reported on standard error (overlapping shards),
whatever the files' commit, cpu and go lines (a comparison ignores them and
would pool the samples), as is a file given twice (s0.txt s0.txt, or s0.txt
./s0.txt).

A file holding go test's FAIL lines (a shard whose run failed) fails the
merge: every result is still written, with the FAIL lines where they were,
so that a gate on the merged file fails too, and the exit status is 1; so
too for a shard of FAIL lines and no result (a run that failed before its
first).

Exit status: 0 success; 1 a run failed (FAIL lines), or the output could not
be written; 2 bad usage or input (the message names the file and line).`,
		Example: `  benchcmp merge shard0.txt shard1.txt > all.txt`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := streamsAreNoInput(cmd.OutOrStdout(), cmd.ErrOrStderr(), args); err != nil {
				return err
			}
			return benchcmp.Merge(cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
}

func newProfile(in *interruption) *cobra.Command {
	var cfg benchcmp.ProfileConfig
	cmd := &cobra.Command{
		Use:   "profile --base BASE.pprof OTHER.pprof --flamegraph OUT.html",
		Short: "Write a differential flame graph: where OTHER spends more or less than BASE",
		Long: `profile draws OTHER minus BASE (pprof's diff_base) as one self-contained
HTML flame graph, with the runtime and operator labels of the CPU samples as
the root frames, so a frame's width shows where OTHER spends more or less
time than BASE, split by runtime and operator. BASE and OTHER naming one
file (under any spelling, or through a link) draw a diff of zeros, with a
warning that the profile is compared with itself.`,
		Example: `  benchcmp profile --base direct.pprof imported.pprof --flamegraph diff.html`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: profile takes one profile (OTHER) besides --base, got %d", benchcmp.ErrUsage, len(args))
			}
			cfg.Other, cfg.ErrOut = args[0], cmd.ErrOrStderr()
			cfg.LabelsGiven = cmd.Flags().Changed("labels")
			// Profile stops on the context, its export subprocess
			// ended and its files removed: an interruption waits for it.
			return in.hold(func() error { return benchcmp.Profile(cmd.Context(), cfg) })
		},
	}
	cmd.Flags().StringVar(&cfg.Base, "base", "", "the base profile (required)")
	cmd.Flags().StringVar(&cfg.Out, "flamegraph", "", "the HTML file to write (required)")
	cmd.Flags().StringSliceVar(&cfg.Labels, "labels", []string{"runtime", "operator"}, "CPU sample labels shown as root frames")
	return cmd
}

func newScaling() *cobra.Command {
	cfg := benchcmp.DefaultScalingConfig()
	cmd := &cobra.Command{
		Use:   "scaling --by /PARAM FILE...",
		Short: "Fit each benchmark's growth exponent in a name parameter, with an interval",
		Long: `scaling fits value = c·PARAM^k by least squares on log-log data (all
samples), per benchmark and unit, and prints k with its confidence interval.
A row whose interval lies above --flag-above is flagged: for an imported
index with --by /rows, a cost that grows with the index size.`,
		Example: `  benchcmp scaling --by /n batch.txt

  # Flag costs that grow faster than n^0.2.
  benchcmp scaling --by /n --flag-above 0.2 --filter '.unit:ns/op' batch.txt`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Files = args
			if err := streamsAreNoInput(cmd.OutOrStdout(), cmd.ErrOrStderr(), args); err != nil {
				return err
			}
			return benchcmp.Scaling(cmd.OutOrStdout(), cmd.ErrOrStderr(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.By, "by", "", "the name parameter to fit against, as /PARAM (required)")
	f.StringVar(&cfg.Filter, "filter", cfg.Filter, "benchproc filter: use only matching results")
	f.Var(floatFlag{p: &cfg.Confidence, open01: true}, "confidence", "confidence level of the exponent's interval")
	f.Var(floatFlag{p: &cfg.FlagAbove}, "flag-above", "flag rows whose exponent interval lies above this")
	f.StringVar(&cfg.Format, "format", cfg.Format, "output format: text|csv|json")
	return cmd
}

// floatFlag is a float64 flag that refuses a number float64 cannot hold.
// pflag's own reads 1e-400 as 0, and a range check then names 0, not what
// was typed; beyond the largest float64 it already refuses. open01 marks a
// flag whose values lie in (0, 1) (--alpha, --confidence): a number below 1
// that a float64 reads as 1 is refused here, naming it, where the range
// check would name 1.
type floatFlag struct {
	p      *float64
	open01 bool
}

func (f floatFlag) String() string { return strconv.FormatFloat(*f.p, 'g', -1, 64) }

func (f floatFlag) Set(s string) error {
	v, err := benchcmp.ParseDecimal(s)
	if err != nil {
		return err
	}
	if v == 0 {
		if b, ok := new(big.Float).SetString(s); ok && b.Sign() != 0 {
			return fmt.Errorf("%s is too small for a float64 (it would read as 0)", s)
		}
	}
	if f.open01 && v == 1 {
		if r, ok := new(big.Rat).SetString(s); ok && r.Cmp(big.NewRat(1, 1)) < 0 {
			return fmt.Errorf("%s is below 1, but a float64 reads it as 1: must be in (0, 1)", s)
		}
	}
	*f.p = v
	return nil
}

func (floatFlag) Type() string { return "float" }
