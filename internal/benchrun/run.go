package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// Units and their direction (docs/spec.md, Results). rows and errors are
// exact counts.
var units = []struct{ unit, key, value string }{
	{"install-ns", "better", "lower"},
	{"ns/update", "better", "lower"},
	{"updates/s", "better", "higher"},
	{"peak-heap-B", "better", "lower"},
	{"trace-B", "better", "lower"},
	{"rows", "assume", "exact"},
	{"errors", "assume", "exact"},
	{"hold-gap", "better", "lower"},
	// Written before the first result that carries them: merge work, the
	// dd shapes' per-row figures and Go limits, peek's read latencies.
	{"merge-work", "better", "lower"},
	{"install-ns/row", "better", "lower"},
	{"limit-ns/row", "better", "lower"},
	{"limit-sort-ns/row", "better", "lower"},
	{"limit-ns/update", "better", "lower"},
	{"read-p50-ns", "better", "lower"},
	{"read-p99-ns", "better", "lower"},
	{"import-ns", "better", "lower"},
}

// MaxResultLine is the longest result line, in bytes without its newline,
// that a result file's reader takes: benchfmt reads lines with a
// bufio.Scanner of the default buffer, and benchcmp refuses a longer line.
// A line that would be longer is not written.
const MaxResultLine = bufio.MaxScanTokenSize - 1

// specUnits is how many of units docs/spec.md fixes: their Unit lines
// head every results file.
const specUnits = 8

// unitMeta returns the Unit line of u, and whether u is one of the units
// results may carry: a unit above, or one operator's error count
// (stage-errors:…, exact).
func unitMeta(u string) (*benchfmt.UnitMetadata, bool) {
	if strings.HasPrefix(u, stageUnitPrefix) && len(u) > len(stageUnitPrefix) && !strings.ContainsAny(u, " \t\n") {
		return &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u, Key: "assume"}, OrigUnit: u, Value: "exact"}, true
	}
	for _, x := range units {
		if x.unit == u {
			return &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u, Key: x.key}, OrigUnit: u, Value: x.value}, true
		}
	}
	return nil, false
}

// Engine runs benchmarks. Sample runs b once over its loaded inputs and
// returns the measured values in the units above. It must return promptly
// with ctx.Err() when ctx is cancelled.
type Engine interface {
	Sample(ctx context.Context, b *Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error)
}

// Env describes the machine and build: the only config lines results
// carry (B2).
type Env struct {
	GOOS, GOARCH, CPU, GoVersion, Commit string
	GOMAXPROCS                           int
}

// DetectEnv returns the Env of this process.
func DetectEnv() Env {
	e := Env{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPU: cpuName(), Commit: "unknown"}
	module := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		module = bi.Main.Path
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			e.Commit = rev
			if dirty {
				e.Commit += "-dirty"
			}
			return e
		}
	}
	// go run and -buildvcs=false builds carry no revision: ask git about
	// the working directory, as a user running from a checkout expects,
	// if that checkout is this module's (run from another repository,
	// its HEAD would name the wrong code).
	if !checkoutOf(module) {
		return e
	}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(out))
		if gitDirty("") {
			e.Commit += "-dirty"
		}
	}
	return e
}

// gitDirty reports whether the git checkout at dir ("" for the working
// directory) differs from its HEAD as go build's vcs.modified stamp
// counts it: a tracked file changed, or an untracked file that
// .gitignore does not ignore (a new .go file is built as much as a
// changed one). So a result file's commit line says the same of one
// checkout whether the binary was built (stamped) or run with go run.
func gitDirty(dir string) bool {
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=normal")
	cmd.Dir = dir
	st, err := cmd.Output()
	return err == nil && len(bytes.TrimSpace(st)) > 0
}

// ErrWriter writes to W and keeps the first error of its writes in Err,
// failing every later write with it: for output whose writer drops its
// errors (the CPU profiler) or writes in many places (a command's stdout).
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	if err != nil {
		e.Err = err
	}
	return n, err
}

// checkoutOf reports whether the working directory is in a git checkout
// whose top-level go.mod declares module (the binary's main module).
func checkoutOf(module string) bool {
	if module == "" {
		return false
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	return moduleOf(strings.TrimSpace(string(top))) == module
}

// moduleOf returns the module path the go.mod in dir declares, or "".
func moduleOf(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// thisModule is the path of the module the built-in workloads are of:
// the root of a checkout of it declares it in its go.mod.
var thisModule = strings.TrimSuffix(reflect.TypeFor[Benchmark]().PkgPath(), "/internal/benchrun")

// cpuName reads the CPU model the way the testing package reports it.
func cpuName() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// Progress modes.
const (
	ProgressAuto = "auto"
	ProgressOn   = "on"
	ProgressOff  = "off"
)

// RunConfig configures Run; fields mirror the flags of `benchrun run`.
type RunConfig struct {
	Out, ErrOut io.Writer // results; progress and summary
	Selection
	Count      int
	OutFile    string
	CPUProfile string
	MemProfile string
	Flamegraph string
	Seed       uint64
	Progress   string
	// ErrOutIsTerminal says ErrOut is a terminal: --progress auto then
	// draws a bar instead of one line per sample.
	ErrOutIsTerminal bool
	Engine           Engine
	Env              Env // the config lines; the zero Env means DetectEnv
}

// validate checks the flags that need no spec.
func (cfg *RunConfig) validate() error {
	if cfg.Count < 1 {
		return usagef("--count", "must be at least 1, not %d", cfg.Count)
	}
	switch cfg.Progress {
	case ProgressAuto, ProgressOn, ProgressOff:
	default:
		return usagef("--progress", "unknown value %s (auto, on or off)", spec.Quote(cfg.Progress))
	}
	for _, f := range []struct{ flag, path, instead string }{
		{"--out", cfg.OutFile, "give it a file, ./- for one named -"},
		{"--cpuprofile", cfg.CPUProfile, "give it a file, ./- for one named -"},
		{"--memprofile", cfg.MemProfile, "give it a file, ./- for one named -"},
		{"--flamegraph", cfg.Flamegraph, "give it an .html file"},
	} {
		if f.path == "-" {
			return usagef(f.flag, "%s", dashOut("the results go there already", f.instead))
		}
	}
	if cfg.Flamegraph != "" && !benchflame.HTMLName(cfg.Flamegraph) {
		return usagef("--flamegraph", "%s must name an .html file", spec.Quote(cfg.Flamegraph))
	}
	outputs := []struct{ flag, path string }{{"--out", cfg.OutFile}, {"--cpuprofile", cfg.CPUProfile}, {"--memprofile", cfg.MemProfile}, {"--flamegraph", cfg.Flamegraph}}
	stdout, stderr := keepingFile(cfg.Out), keepingFile(cfg.ErrOut)
	for i, f := range outputs {
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(f.path); err == nil && st.IsDir() {
			return usagef(f.flag, "%s is a directory", spec.Path(f.path))
		}
		dir := filepath.Dir(f.path)
		if st, err := os.Stat(dir); err != nil {
			return usagef(f.flag, "%s: directory %s does not exist", spec.Path(f.path), spec.Path(dir))
		} else if !st.IsDir() {
			// r.txt/x with r.txt a file: it exists, and is no
			// directory to write in.
			return usagef(f.flag, "%s: %s is not a directory", spec.Path(f.path), spec.Path(dir))
		}
		// Two outputs in one file would overwrite each other.
		for _, g := range outputs[:i] {
			if g.path != "" && samePath(f.path, g.path) {
				return usagef(g.flag+" and "+f.flag, "both name %s; give each its own file", spec.Path(f.path))
			}
		}
		// So would an output and standard output or error redirected to
		// the same file (benchrun run --out r.txt > r.txt): the results
		// or the progress lines reach it through another offset, each
		// overwriting the other, or a profile's rename drops them. A
		// pipe or a terminal (--out /dev/stdout | cat) would get the
		// results twice, or mixed into the progress lines.
		if st, err := os.Stat(f.path); err == nil {
			if stdout != nil && sameFile(st, stdout) {
				err := usagef(f.flag, "%s is also standard output, where the results go; give %s its own file", spec.Path(f.path), f.flag)
				if stderr != nil && sameFile(st, stderr) {
					return stderrRefusal{err} // standard error is the file too (>> f 2>&1)
				}
				return err
			}
			if stderr != nil && sameFile(st, stderr) {
				return stderrRefusal{usagef(f.flag, "%s is also standard error, where the progress goes; give %s its own file", spec.Path(f.path), f.flag)}
			}
		}
	}
	return nil
}

// sameFile reports whether a and b are one file: os.SameFile, or two
// files of one character device. /dev/tty is the terminal standard output
// or error may reach as /dev/pts/3, and a terminal written through two
// names gets the results twice, mixed into the progress lines.
func sameFile(a, b os.FileInfo) bool {
	if os.SameFile(a, b) {
		return true
	}
	da, okA := deviceOf(a)
	db, okB := deviceOf(b)
	return okA && okB && da == db
}

// keepingFile returns the FileInfo of the file w writes to (an *os.File,
// or one under an ErrWriter): a regular file, a pipe, a terminal; or nil
// for the null device, which keeps nothing, so two writers lose nothing
// there, and for a writer that is not a file.
func keepingFile(w io.Writer) os.FileInfo {
	if e, ok := w.(*ErrWriter); ok {
		w = e.W
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return nil
	}
	return st
}

// CheckStreams refuses standard output or error (out, errOut) that is a
// spec file among a command's targets: benchrun run w.json >> w.json
// appended the results to the spec it had read, and eval w.json --at 0 >
// w.json found the spec the shell had emptied, a file of invalid JSON.
// Only a file compares equal: a pipe, a terminal or the null device never
// does.
//
// Nor may either be a CSV input of such a spec: benchrun eval w.json >
// data/a.csv found the input the shell had emptied, and said only that
// the CSV was empty. A spec that does not decode is left to the command,
// which names its fault. The specs are decoded through interruptible, so
// that a cancelled ctx (Ctrl-C) stops the command with ErrInterrupted:
// decoding one of millions of inline rows takes seconds, which every
// command spent here deaf to Ctrl-C before its own work began.
func CheckStreams(ctx context.Context, out, errOut io.Writer, targets []string) error {
	if len(targets) == 0 {
		// The default suite: every built-in workload.
		for _, w := range workloads.Registry() {
			targets = append(targets, w.Name)
		}
	}
	for _, t := range targets {
		if !isSpecFile(t) {
			// A built-in workload's name stands for its spec file in a
			// checkout that holds the working directory, which an output
			// flag may not replace either (checkOutputsAreNotInputs):
			// benchrun explain lookup > workloads/examples/lookup.json
			// emptied it.
			w, err := workloads.Lookup(t)
			if err != nil {
				continue
			}
			for _, b := range w.Benches {
				for _, src := range checkoutFiles(path.Join("workloads", b.File), nil) {
					if err := streamIsNot(out, errOut, src, "the spec file of the built-in workload "+w.Name+", which this command stands for"); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := streamIsNot(out, errOut, t, "a spec file this command reads"); err != nil {
			return err
		}
		s, err := interruptible(ctx, func() (*spec.Spec, error) { return spec.ReadFile(t) })
		if errors.Is(err, ErrInterrupted) {
			return err
		}
		if err != nil {
			continue
		}
		if err := csvInputsAreNot(out, errOut, s); err != nil {
			return err
		}
	}
	return nil
}

// csvInputsAreNot is streamIsNot for every CSV input of s.
func csvInputsAreNot(out, errOut io.Writer, s *spec.Spec) error {
	for i := range s.Inputs {
		if in := &s.Inputs[i]; in.Source == spec.SourceCSV {
			if err := streamIsNot(out, errOut, s.CSVPath(in), "the CSV input "+in.Name+" of "+spec.Path(s.File)+", which this command reads"); err != nil {
				return err
			}
		}
	}
	return nil
}

// streamIsNot returns the error for standard output or error that is the
// file path, which the command reads (what says what it is), or nil.
func streamIsNot(out, errOut io.Writer, path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	errInfo := keepingFile(errOut)
	for _, s := range []struct {
		name string
		info os.FileInfo
	}{{"standard output", keepingFile(out)}, {"standard error", errInfo}} {
		if s.info != nil && sameFile(st, s.info) {
			err := fmt.Errorf("%w: %s is %s, %s: what the command writes would be appended to it, or, redirected with >, the shell has emptied it already; redirect %s elsewhere", ErrUsage, s.name, spec.Path(path), what, s.name)
			if errInfo != nil && sameFile(st, errInfo) {
				return stderrRefusal{err} // standard error is the file too (>> f 2>&1)
			}
			return err
		}
	}
	return nil
}

// checkOutputsAreNotInputs refuses an output flag that names a file the
// selection reads, a spec file or one of its CSV inputs (of any shard),
// which writing the output would destroy, or the spec file under
// workloads/examples/ of a selected built-in workload in a checkout that
// holds the working directory (its root or any directory below) or the
// output, compared as resolved absolute paths (checkoutFiles, samePath).
func (cfg *RunConfig) checkOutputsAreNotInputs(benches []*Benchmark) error {
	outputs := []struct{ flag, path string }{{"--out", cfg.OutFile}, {"--cpuprofile", cfg.CPUProfile}, {"--memprofile", cfg.MemProfile}, {"--flamegraph", cfg.Flamegraph}}
	var paths []string
	for _, o := range outputs {
		if o.path != "" {
			paths = append(paths, o.path)
		}
	}
	seen := map[*spec.Spec]bool{}
	for _, b := range benches {
		s := b.Spec
		if seen[s] {
			continue
		}
		seen[s] = true
		if !b.file {
			// A built-in workload runs its embedded spec, but its name
			// stands for its source in a checkout
			// (workloads/examples/NAME.json): an output there would
			// replace the file a user reads as the workload.
			for _, src := range checkoutFiles(s.File, paths) {
				for _, o := range outputs {
					if o.path != "" && samePath(o.path, src) {
						return usagef(o.flag, "%s is the spec file of the built-in workload %s, which this run stands for; give the output its own file", spec.Path(o.path), b.Workload)
					}
				}
			}
			continue
		}
		for _, o := range outputs {
			if o.path == "" {
				continue
			}
			if samePath(o.path, s.File) {
				return usagef(o.flag, "%s is the spec file of workload %s, which this run reads; give the output its own file", spec.Path(o.path), s.Name)
			}
			for i := range s.Inputs {
				in := &s.Inputs[i]
				if in.Source == spec.SourceCSV && samePath(o.path, s.CSVPath(in)) {
					return usagef(o.flag, "%s is the CSV input %s of %s, which this run reads; give the output its own file", spec.Path(o.path), in.Name, spec.Path(s.File))
				}
			}
		}
		// Nor may the results or the progress go to a CSV input.
		if err := csvInputsAreNot(cfg.Out, cfg.ErrOut, s); err != nil {
			return err
		}
	}
	return nil
}

// checkoutFiles returns the absolute paths, links resolved, of the file
// rel (a path relative to a checkout's root, such as a built-in workload's
// workloads/examples/NAME.json) in each checkout that holds the working
// directory or the file of one of paths: under the nearest directory, the
// working directory's or the file's own or one above it, that has rel and
// is the root of a checkout of this module (its go.mod declares it). A
// run from a checkout's subdirectory, or naming an output in a checkout
// from elsewhere, finds the checkout's file as a run from its root does;
// a user's own tree that holds a file of that name is no checkout, and
// its file is not the built-in's.
func checkoutFiles(rel string, paths []string) []string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, p := range paths {
		if t := target(p); t != "" {
			starts = append(starts, filepath.Dir(t))
		}
	}
	var out []string
	for _, d := range starts {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		for {
			f := filepath.Join(d, rel)
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && moduleOf(d) == thisModule {
				if real, err := filepath.EvalSymlinks(f); err == nil {
					f = real
				}
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
				break
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return out
}

// samePath says whether two paths name one file: one existing file
// reached two ways (os.SameFile: a hard or symbolic link), or the same
// file to be, once links are followed (target: a link to a file that does
// not exist yet, or a directory reached through a link).
func samePath(a, b string) bool {
	if ta, tb := target(a), target(b); ta != "" && ta == tb {
		return true
	}
	stA, errA := os.Stat(a)
	stB, errB := os.Stat(b)
	return errA == nil && errB == nil && sameFile(stA, stB)
}

// target returns the absolute path the file p names will be written at:
// p's symbolic links followed (a link to a file that does not exist yet
// writes that file), then its directory's, cleaned. Each ".." is taken as
// the kernel takes it (spec.Physical): dirlink/../r.txt is beside
// dirlink's target, and a link's relative target is read from
// the directory the link is in, not from the path that reached it. "" if
// p has no absolute form.
func target(p string) string {
	p, err := filepath.Abs(spec.Physical(p))
	if err != nil {
		return ""
	}
	for range 40 { // as many links as Linux follows in one path
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			break
		}
		to, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(to) {
			dir := filepath.Dir(p)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			to = dir + string(filepath.Separator) + to
		}
		p = spec.Physical(to)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// Run runs the selected benchmarks Count times each and writes one result
// line per sample to Out and to OutFile (B3). It returns ErrInterrupted
// when ctx is cancelled, after the finished lines are written.
func Run(ctx context.Context, cfg RunConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	all, benches, err := selectBenchmarks(cfg.Selection)
	if err != nil {
		return err
	}
	if err := cfg.checkOutputsAreNotInputs(all); err != nil {
		return err
	}
	if len(benches) > 0 && cfg.Count > math.MaxInt/len(benches) {
		// The number of samples, which the progress and the summary
		// count, would wrap around to a negative one.
		return usagef("--count", "%d samples of each of %s is more than a run can count (at most %d in all)", cfg.Count, count(len(benches), "benchmark", "benchmarks"), math.MaxInt)
	}
	if cfg.Engine == nil {
		return ErrNoEngine
	}
	if cfg.Env == (Env{}) {
		cfg.Env = DetectEnv()
	}
	// Every input is loaded before --out is touched.
	specs := make([]*spec.Spec, len(benches))
	for i, b := range benches {
		specs[i] = b.Spec
	}
	inputs, err := loadAll(ctx, specs, cfg.Seed)
	if errors.Is(err, ErrInterrupted) {
		return fmt.Errorf("%w while loading the inputs: no sample ran and --out was not touched", ErrInterrupted)
	}
	if err != nil {
		return err
	}
	// Every other output is opened, under a temporary name, before --out
	// is touched: one that cannot be written is refused with --out as it
	// was, and none replaces its destination before the run has ended.
	var cpuOut, memOut, flameOut *pendingFile
	defer func() {
		for _, p := range []*pendingFile{cpuOut, memOut, flameOut} {
			if p != nil {
				p.discard() // nothing once committed
			}
		}
	}()
	if cfg.MemProfile != "" {
		if memOut, err = createPending(cfg.MemProfile); err != nil {
			return usagef("--memprofile", "%s: cannot write: %s", spec.Path(cfg.MemProfile), pathErrMsg(err))
		}
	}
	if cfg.Flamegraph != "" {
		if flameOut, err = createPending(cfg.Flamegraph); err != nil {
			return usagef("--flamegraph", "%s: cannot write: %s", spec.Path(cfg.Flamegraph), pathErrMsg(err))
		}
		if err := checkTempDir(); err != nil {
			return err
		}
	}
	cpuPath := cfg.CPUProfile
	if cpuPath != "" {
		if cpuOut, err = createPending(cpuPath); err != nil {
			return usagef("--cpuprofile", "%s: cannot write: %s", spec.Path(cpuPath), pathErrMsg(err))
		}
	}
	// The flame graph reads its profile back from a file: a temporary one
	// when no --cpuprofile keeps it, or when --cpuprofile is not a regular
	// file (/dev/null, a named pipe), which cannot be read back.
	var flameCopy *os.File
	if cfg.Flamegraph != "" && (cpuOut == nil || cpuOut.tmp == "") {
		f, err := os.CreateTemp("", "benchrun-cpu-*.pprof")
		if err != nil {
			return fmt.Errorf("benchrun: --flamegraph: %w", err)
		}
		defer os.Remove(f.Name())
		if cpuOut == nil {
			cpuOut = &pendingFile{f: f, path: f.Name()}
		} else {
			flameCopy = f
			defer f.Close()
		}
		cpuPath = f.Name()
	}
	w := cfg.Out
	var outFile *os.File
	if cfg.OutFile != "" {
		// Truncated when the run starts, every flag and spec checked
		// before; each finished line appended (B3).
		f, err := openOut(cfg.OutFile)
		if err != nil {
			return err
		}
		defer f.Close()
		outFile = f
		w = io.MultiWriter(cfg.Out, newWholeRecords(f))
	}
	var stopCPU func() error
	if cpuOut != nil {
		// The profiler drops its write errors: they are kept here, so a
		// profile that could not be written (a full disk) fails the run.
		pw := &ErrWriter{W: cpuOut}
		if flameCopy != nil {
			pw.W = io.MultiWriter(cpuOut, flameCopy)
		}
		if err := pprof.StartCPUProfile(pw); err != nil {
			return fmt.Errorf("benchrun: --cpuprofile: %w", err)
		}
		stopped := false
		stopCPU = func() error {
			if stopped {
				return nil
			}
			stopped = true
			pprof.StopCPUProfile()
			if flameCopy != nil {
				if err := flameCopy.Close(); err != nil && pw.Err == nil {
					pw.Err = err
				}
			}
			if pw.Err != nil {
				cpuOut.discard()
				return pw.Err
			}
			return cpuOut.commit()
		}
		defer stopCPU()
	}
	ran := 0
	done, runErr := cfg.samples(ctx, benches, inputs, w, &ran)
	if outFile != nil && runErr == nil {
		runErr = outStillThere(cfg.OutFile, outFile, done)
	}
	if stopCPU != nil {
		if err := stopCPU(); err != nil && runErr == nil {
			runErr = fmt.Errorf("benchrun: --cpuprofile: %w", err)
			var pe *os.PathError
			if cfg.CPUProfile == "" || flameCopy != nil && errors.As(err, &pe) && pe.Path == flameCopy.Name() {
				// The profile the flame graph is drawn from, kept
				// in TMPDIR: no --cpuprofile was given, or its
				// copy, --cpuprofile being no file to read back.
				runErr = fmt.Errorf("benchrun: --flamegraph: the CPU profile it is drawn from, in the temporary directory %s (TMPDIR): %s", spec.Path(os.TempDir()), pathErrMsg(err))
			}
		}
	}
	if memOut != nil {
		runtime.GC()
		err := pprof.Lookup("allocs").WriteTo(memOut, 0)
		if err == nil {
			err = memOut.commit()
		}
		if err != nil && runErr == nil {
			runErr = fmt.Errorf("benchrun: --memprofile: %w", err)
		}
	}
	if flameOut != nil && (runErr == nil || errors.Is(runErr, ErrInterrupted)) {
		// A run stopped by Ctrl-C still gets the flame graph of its
		// finished samples; Ctrl-C during the export stops it.
		ectx := ctx
		if runErr != nil {
			ectx = context.WithoutCancel(ctx)
		}
		// Titled by the benchmarks that ran, those before an
		// interruption: the profile holds no other. A shard may draw
		// none (more shards than benchmarks), and its run passes as
		// the empty part of the suite it is: its page says so.
		none := "stopped before the first sample"
		if len(benches) == 0 {
			none = fmt.Sprintf("shard %s drew none of %s", cfg.Selection.Shard, count(len(all), "benchmark", "benchmarks"))
		}
		err := writeFlamegraph(ectx, cpuPath, flameTitle(benches[:ran], none), flameOut)
		switch {
		case errors.Is(err, benchflame.ErrInterrupted) || err != nil && ctx.Err() != nil:
			err = fmt.Errorf("%w while drawing the flame graph: %s was not written", ErrInterrupted, spec.Path(cfg.Flamegraph))
		case err == nil:
			if err = flameOut.commit(); err != nil {
				err = fmt.Errorf("benchrun: --flamegraph: %w", err)
			}
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}

// checkTempDir refuses a temporary directory (os.TempDir: TMPDIR, else
// /tmp) in which nothing can be made, before the run: the flame graph is
// drawn through files there (the CPU profile read back when no
// --cpuprofile keeps it, and the drawing's own configuration), and found
// after the run it failed the run (exit 1) once every sample had been
// measured, --out rewritten and the page not drawn.
func checkTempDir() error {
	d, err := os.MkdirTemp("", "benchrun-flame-*")
	if err != nil {
		return usagef("--flamegraph", "the temporary directory %s (TMPDIR) cannot be written: %s: the flame graph is drawn through files there; set TMPDIR to a directory that can be written", spec.Path(os.TempDir()), pathErrMsg(err))
	}
	os.Remove(d)
	return nil
}

// errOutBusy is lockOut's answer for a --out file another process holds.
var errOutBusy = errors.New("locked by another process")

// openOut opens the --out file for a run: created if missing (mode 0666
// less the umask, as a shell's > makes it; an existing file keeps its
// mode), locked against another benchrun run writing it at the same
// time, then truncated. Two runs into one file would each truncate what
// the other had written and mix their lines under one header, both
// exiting 0; the second is refused instead (exit 2) with the first one's
// file intact. A file that is not regular (/dev/null, a pipe) is neither
// locked nor truncated: it keeps nothing two runs could spoil.
func openOut(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, usagef("--out", "%s: cannot write: %s", spec.Path(path), pathErrMsg(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, usagef("--out", "%s: cannot write: %s", spec.Path(path), pathErrMsg(err))
	}
	if !st.Mode().IsRegular() {
		return f, nil
	}
	if err := lockOut(f); err != nil {
		f.Close()
		return nil, usagef("--out", "%s is being written by another benchrun run; wait for it to end or give --out another file", spec.Path(path))
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, usagef("--out", "%s: cannot write: %s", spec.Path(path), pathErrMsg(err))
	}
	return f, nil
}

// wholeRecords writes the records of a run (a result line with the
// configuration lines before it, a Unit line: one Write each) to its
// --out file whole or not at all. A write that fails partway (a full
// disk, a file size limit) is cut back off the file, which then ends with
// the last record written whole: a result file benchcmp and benchstat
// read, where a half line made them refuse the whole file as truncated.
// Only a regular file, which openOut truncated and locked, is cut back.
type wholeRecords struct {
	f       *os.File
	size    int64 // the bytes of the records written whole
	regular bool
}

func newWholeRecords(f *os.File) *wholeRecords {
	st, err := f.Stat()
	return &wholeRecords{f: f, regular: err == nil && st.Mode().IsRegular()}
}

func (o *wholeRecords) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err == nil {
		o.size += int64(n)
		return n, nil
	}
	if o.regular && n > 0 {
		// The write's error is the one reported; the run stops at it.
		o.f.Truncate(o.size)
	}
	return n, err
}

// outStillThere returns an error (exit 1) when path no longer names f, the
// regular --out file the run wrote: removed during the run (its directory
// too) or replaced by another file. Its lines went to a file no name
// reaches, and exit 0 would say they are in --out.
func outStillThere(path string, f *os.File, lines int) error {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	now, err := os.Stat(path)
	if err == nil && os.SameFile(st, now) {
		return nil
	}
	what := "removed"
	if err == nil {
		what = "replaced by another file"
	}
	return fmt.Errorf("benchrun: --out: %s was %s during the run: its %s are only on standard output", spec.Path(path), what, count(lines, "result line", "result lines"))
}

// samples runs every sample and writes its result line to w. It returns
// how many samples finished, their lines written, and sets *ran to how
// many of benches, from the first, had a sample started (all of them
// unless the run stopped early).
func (cfg *RunConfig) samples(ctx context.Context, benches []*Benchmark, inputs [][]*spec.Table, w io.Writer, ran *int) (int, error) {
	bw := benchfmt.NewWriter(w)
	var line bytes.Buffer
	lw := benchfmt.NewWriter(&line) // measures a result line before it is written
	declared := map[string]bool{}
	for _, u := range units[:specUnits] {
		declared[u.unit] = true
		if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.unit, Key: u.key}, OrigUnit: u.unit, Value: u.value}); err != nil {
			return 0, fmt.Errorf("benchrun: writing results: %w", err)
		}
	}
	config := []benchfmt.Config{
		{Key: "goos", Value: []byte(cfg.Env.GOOS), File: true},
		{Key: "goarch", Value: []byte(cfg.Env.GOARCH), File: true},
		{Key: "cpu", Value: []byte(cfg.Env.CPU), File: true},
		{Key: "go", Value: []byte(cfg.Env.GoVersion), File: true},
		{Key: "gomaxprocs", Value: []byte(strconv.Itoa(cfg.Env.GOMAXPROCS)), File: true},
		{Key: "commit", Value: []byte(cfg.Env.Commit), File: true},
	}
	total := len(benches) * cfg.Count
	pr := newProgress(cfg.ErrOut, cfg.Progress, cfg.ErrOutIsTerminal, total)
	defer pr.stop()
	done := 0
	start := time.Now()
	for i, b := range benches {
		for range cfg.Count {
			if ctx.Err() != nil {
				pr.stop()
				return done, interrupted(cfg.ErrOut, done, total)
			}
			var vals []benchfmt.Value
			var err error
			// The benchmark label lets a profile split by benchmark, named
			// as its result lines name it (BenchmarkLookup/…); the
			// engine adds runtime, worker, dataflow and operator labels
			// when the run profiles its CPU (profiling), and only then:
			// the operators' label switches cost time.
			sctx := ctx
			if cfg.CPUProfile != "" || cfg.Flamegraph != "" {
				sctx = context.WithValue(ctx, profilingKey{}, true)
			}
			*ran = i + 1
			pprof.Do(sctx, pprof.Labels("benchmark", "Benchmark"+b.Name), func(ctx context.Context) {
				vals, err = cfg.Engine.Sample(ctx, b, inputs[i])
			})
			if err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					pr.stop()
					return done, interrupted(cfg.ErrOut, done, total)
				}
				return done, fmt.Errorf("benchrun: %s: %w", b.Name, err)
			}
			res := &benchfmt.Result{Config: config, Name: benchfmt.Name(b.Name), Iters: 1, Values: vals}
			line.Reset()
			lw.Write(&benchfmt.Result{Name: res.Name, Iters: res.Iters, Values: res.Values})
			if n := line.Len() - 1; n > MaxResultLine {
				// Written, it would make the whole file unreadable to
				// benchcmp and benchstat; the lines before it stay.
				return done, fmt.Errorf("benchrun: workload %s: a result line of %d bytes, more than the %d a result file's reader takes: not written", b.Workload, n, MaxResultLine)
			}
			for _, v := range vals {
				meta, ok := unitMeta(v.Unit)
				if !ok {
					return done, fmt.Errorf("benchrun: %s: the engine reported unknown unit %q", b.Name, v.Unit)
				}
				if !declared[v.Unit] {
					// Its Unit line comes before the first result that
					// carries it (B2).
					declared[v.Unit] = true
					if err := bw.Write(meta); err != nil {
						return done, fmt.Errorf("benchrun: writing results: %w", err)
					}
				}
			}
			if err := bw.Write(res); err != nil {
				return done, fmt.Errorf("benchrun: writing results: %w", err)
			}
			done++
			pr.done(done, b.Name)
		}
	}
	pr.stop()
	fmt.Fprintf(cfg.ErrOut, "benchrun: %s, %s in %v\n", count(len(benches), "benchmark", "benchmarks"), count(done, "sample", "samples"), time.Since(start).Round(time.Millisecond))
	return done, nil
}

// pathErrMsg drops the path from an *os.PathError message, which the
// caller names as the user gave it (the error may name a temporary file).
func pathErrMsg(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return spec.PathErr(err)
}

// interrupted reports an interruption and returns ErrInterrupted.
func interrupted(errOut io.Writer, done, total int) error {
	fmt.Fprintf(errOut, "benchrun: interrupted after %d of %s; every finished result line is written\n", done, count(total, "sample", "samples"))
	return ErrInterrupted
}
