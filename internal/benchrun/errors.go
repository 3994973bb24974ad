package benchrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

var (
	// ErrUsage marks bad flags and arguments (exit 2).
	ErrUsage = errors.New("benchrun: bad usage")
	// ErrInterrupted marks a run stopped by its context, e.g. SIGINT (exit 130).
	ErrInterrupted = errors.New("benchrun: interrupted")
	// ErrNoEngine is returned by Run when no Engine is configured.
	ErrNoEngine = errors.New("benchrun: no engine to run benchmarks with")
)

// usagef returns an ErrUsage error naming the flag or argument.
func usagef(flag, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUsage, flag, fmt.Sprintf(format, args...))
}

// ErrStderrIsTheFile marks a refusal (an ErrUsage error) whose reason is
// that standard error is a file the command reads or writes: its message
// written there would change the very file the refusal keeps as it was
// (benchrun validate s.json 2>> s.json appended it to the spec).
// RefusalOut says where such a message goes instead.
var ErrStderrIsTheFile = errors.New("benchrun: standard error is a file of the command")

// stderrRefusal marks err (ErrUsage) as ErrStderrIsTheFile without
// changing its text.
type stderrRefusal struct{ error }

func (e stderrRefusal) Unwrap() error      { return e.error }
func (stderrRefusal) Is(target error) bool { return target == ErrStderrIsTheFile }

// RefusalOut returns the writer for the message of err: errOut, unless
// standard error keeps what it is written (a regular file) and is a file
// of the command, which the message would change: err is
// ErrStderrIsTheFile, or named says an argument names that file (a spec
// file, or an --out=FILE's: benchcli.StderrNamedInArgs), as when a flag
// that does not parse comes before the checks (benchrun validate --bogus
// s.json 2>> s.json). Then it is out, standard output, where a user at a
// terminal or a reader of a pipe sees it, or io.Discard when out is a
// regular file too, whose content the message would change as well (the
// exit status, 2, still says it).
func RefusalOut(err error, named bool, out, errOut io.Writer) io.Writer {
	if !keepsWrites(errOut) || !errors.Is(err, ErrStderrIsTheFile) && !named {
		return errOut
	}
	if keepsWrites(out) {
		return io.Discard
	}
	return out
}

// keepsWrites reports whether w writes to a regular file.
func keepsWrites(w io.Writer) bool {
	st := keepingFile(w)
	return st != nil && st.Mode().IsRegular()
}

// Exit codes (B1).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// ExitCode returns the process exit code for an error of this package.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.Is(err, ErrUsage), errors.Is(err, spec.ErrInvalid), errors.Is(err, workloads.ErrUnknown):
		return ExitUsage
	}
	return ExitFailed
}

// ParseMessage returns the text to print for an error of parsing the
// command line (an unknown flag or command, a flag's bad value): msg with
// every value it quotes cut to its first 80 bytes and its length, so that
// a value of megabytes still gets a message of one short line.
func ParseMessage(msg string) string { return spec.Bound(msg) }

// Message returns the text to print for err: usage errors without the
// sentinel's prefix, which would only repeat "bad usage", and the path of
// an operating system error it wraps shown as spec.Path shows it.
func Message(err error) string {
	// Several errors joined (validate of several files) are a line each.
	lines := strings.Split(spec.PathErr(err), "\n")
	const p = "benchrun: bad usage: "
	for i, l := range lines {
		if len(l) > len(p) && l[:len(p)] == p {
			lines[i] = "benchrun: " + l[len(p):]
		}
	}
	return strings.Join(lines, "\n")
}

// interruptible returns f's result, or ErrInterrupted as soon as ctx is
// cancelled, for work that takes no context (reading a large CSV file,
// generating an input): f then finishes in the background and its result
// is dropped.
func interruptible[T any](ctx context.Context, f func() (T, error)) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, ErrInterrupted
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ErrInterrupted
	}
}

// loadAll loads the inputs of each spec, stopping with ErrInterrupted
// when ctx is cancelled. A spec listed more than once (the benchmarks of
// one spec in each index mode and join strategy) is loaded once and its
// tables shared: the engine only reads them, and a second copy of a
// large generated input would double the run's memory and loading time.
func loadAll(ctx context.Context, specs []*spec.Spec, seed uint64) ([][]*spec.Table, error) {
	tables := make([][]*spec.Table, len(specs))
	loaded := make(map[*spec.Spec][]*spec.Table, len(specs))
	for i, s := range specs {
		if t, ok := loaded[s]; ok {
			tables[i] = t
			continue
		}
		t, err := interruptible(ctx, func() ([]*spec.Table, error) { return workloads.Load(s, seed) })
		if err != nil {
			return nil, err
		}
		tables[i] = t
		loaded[s] = t
	}
	return tables, nil
}

// ctxWriter fails every write once ctx is cancelled, so a long write
// stops at its next buffer.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// count is n with its noun, singular for one: "1 input", "0 inputs",
// "2 indexes".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
