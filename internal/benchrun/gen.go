package benchrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// GenConfig configures Gen.
type GenConfig struct {
	Out io.Writer // one line per file written
	// ErrOut is where the command's messages go (nil: none are
	// written here); a destination may not be its file, nor Out's.
	ErrOut io.Writer
	Spec   string // a spec file or a built-in workload
	Dir    string
	Seed   uint64 // the run seed combined with each generator's seed
	// Params are --param values (key=value), read as run reads them, one
	// value each: gen writes the inputs run would feed with them.
	Params []string

	// rename moves a written file into place (os.Rename when nil); tests
	// make it fail.
	rename func(oldpath, newpath string) error
}

// Gen writes every input of a spec, generated, inline or CSV, as
// DIR/<input>.csv in the format the spec's csv field reads (for a
// built-in workload of several specs, DIR/<spec>/<input>.csv). It is all
// or nothing: every input is loaded and every destination checked before
// the first file is written; each file is written under a temporary name
// and the files are renamed into place together, a failure putting back
// what was renamed. A destination that cannot be written (--out is a
// file, an input's file is a directory, a directory cannot be created or
// written), that is a file the specs read (a spec or a CSV input) or
// that is the file Out or ErrOut writes to is bad usage. When ctx is cancelled it returns ErrInterrupted
// with nothing written: every file and directory it made is removed.
func Gen(ctx context.Context, cfg GenConfig) error {
	if cfg.Dir == "" {
		return usagef("--out", "gen needs --out DIR")
	}
	if cfg.Dir == "-" {
		return usagef("--out", "%s", dashOut("gen writes a directory of CSV files, and lists them there", "give it a directory, ./- for one named -"))
	}
	specs, err := interruptible(ctx, func() ([]*spec.Spec, error) { return genSpecs(cfg.Spec, cfg.Params) })
	if err != nil {
		return genErr(err)
	}
	tables, err := loadAll(ctx, specs, cfg.Seed)
	if err != nil {
		return genErr(err)
	}
	type output struct {
		path  string
		table *spec.Table
		input string // the input's name, which names the file
	}
	var dirs []string
	var outs []output
	for i, s := range specs {
		// As the kernel takes it: dirlink/.., which Join would clean to
		// ., is the directory above dirlink's target (spec.Physical).
		dir := spec.Physical(cfg.Dir)
		if len(specs) > 1 {
			dir = filepath.Join(dir, s.Name) // a workload of several specs
		}
		dirs = append(dirs, dir)
		for j, t := range tables[i] {
			outs = append(outs, output{filepath.Join(dir, s.Inputs[j].Name+".csv"), t, s.Inputs[j].Name})
		}
	}
	// Every destination is checked before anything is created: none may
	// be a file the specs read (gen would replace an input's CSV file with
	// the rows of another, or with its own rewritten).
	for _, o := range outs {
		for _, s := range specs {
			if s.File != "" && samePath(o.path, s.File) {
				return usagef("--out", "%s is the spec file of workload %s, which gen reads; give --out a directory of its own", spec.Path(o.path), s.Name)
			}
			for i := range s.Inputs {
				in := &s.Inputs[i]
				if in.Source == spec.SourceCSV && samePath(o.path, s.CSVPath(in)) {
					return usagef("--out", "%s is the CSV input %s of %s, which gen reads; give --out a directory of its own", spec.Path(o.path), in.Name, spec.Path(s.File))
				}
			}
		}
	}
	// An input's name may be 1,024 bytes long, a file name at most
	// maxFileName: a longer NAME.csv cannot be made, which the rename
	// found only after every file was written (exit 1, naming the
	// temporary file).
	for _, o := range outs {
		if n := len(filepath.Base(o.path)); n > maxFileName {
			return usagef("--out", "%s: a file name of %d bytes, more than the %d a file name may have (gen writes each input as NAME.csv): give input %s a name of at most %d bytes", spec.Path(o.path), n, maxFileName, spec.Clip(o.input), maxFileName-len(".csv"))
		}
	}
	// Nor may two be one file: a symbolic link from one to the other
	// (DIR/b.csv -> a.csv, or DIR/dd_count -> dd_arrange for a workload
	// of several specs) would take both inputs' rows in turn and keep the
	// last, under both names. Hard links are no conflict: each rename
	// replaces its own name.
	for i, o := range outs {
		for _, p := range outs[:i] {
			if t := target(o.path); t != "" && t == target(p.path) {
				return usagef("--out", "%s and %s are one file (through a symbolic link), which gen would write twice, once for each input; remove the link or give --out a directory of its own", spec.Path(p.path), spec.Path(o.path))
			}
		}
	}
	// Nor may one be the file standard output or error is redirected to
	// (gen --out d > d/a.csv): the rename would leave the listing, or the
	// error, in a file no longer there.
	stdout, stderr := keepingFile(cfg.Out), keepingFile(cfg.ErrOut)
	for _, o := range outs {
		if st, err := os.Stat(o.path); err == nil {
			if stdout != nil && os.SameFile(st, stdout) {
				err := usagef("--out", "%s is also standard output, where gen lists the files it writes; redirect standard output out of --out", spec.Path(o.path))
				if stderr != nil && os.SameFile(st, stderr) {
					return stderrRefusal{err} // standard error is the file too (>> f 2>&1)
				}
				return err
			}
			if stderr != nil && os.SameFile(st, stderr) {
				return stderrRefusal{usagef("--out", "%s is also standard error, where gen's messages go; redirect standard error out of --out", spec.Path(o.path))}
			}
		}
	}
	for _, d := range dirs {
		if err := checkDir(d); err != nil {
			return err
		}
	}
	for _, o := range outs {
		if st, err := os.Stat(o.path); err == nil && !st.Mode().IsRegular() {
			what := "not a regular file"
			if st.IsDir() {
				what = "a directory"
			}
			return usagef("--out", "%s is %s", spec.Path(o.path), what)
		}
	}
	var created []string // directories made here, outermost first
	files := make([]*pendingFile, 0, len(outs))
	rollback := func() {
		for _, f := range files {
			f.discard()
		}
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i]) // only if still empty
		}
	}
	for _, d := range dirs {
		made, err := mkdirAll(d)
		created = append(created, made...)
		if err != nil {
			rollback()
			return usagef("--out", "%s: cannot create the directory: %s", spec.Path(d), pathErrMsg(err))
		}
	}
	for _, o := range outs {
		if ctx.Err() != nil {
			rollback()
			return genErr(ErrInterrupted)
		}
		f, err := createPending(o.path)
		if err != nil {
			rollback()
			return usagef("--out", "%s: cannot write: %s", spec.Path(o.path), pathErrMsg(err))
		}
		files = append(files, f)
		// A cancelled ctx fails the next buffer's write.
		if err := spec.WriteCSV(ctxWriter{ctx, f}, o.table); err != nil {
			rollback()
			if ctx.Err() != nil {
				return genErr(ErrInterrupted)
			}
			return fmt.Errorf("benchrun: %s: %s", spec.Path(o.path), pathErrMsg(err))
		}
	}
	if ctx.Err() != nil {
		rollback()
		return genErr(ErrInterrupted)
	}
	rename := cfg.rename
	if rename == nil {
		rename = os.Rename
	}
	if err := commitAll(files, rename); err != nil {
		rollback()
		return fmt.Errorf("benchrun: gen: %w (no file was changed)", err)
	}
	for _, o := range outs {
		fmt.Fprintf(cfg.Out, "%s: %s\n", spec.Path(o.path), count(o.table.Len(), "update", "updates"))
	}
	return nil
}

// maxFileName is the longest file name, in bytes, that the file systems
// gen writes to take (NAME_MAX on Linux and macOS).
const maxFileName = 255

// genSpecs returns the specs whose inputs gen writes: target's (resolve),
// decoded with the --param values raw as run decodes them (parseParams,
// then specFileBenches or builtinBenches), so that gen writes what run
// feeds at those values. A parameter takes one value: gen writes one
// set of files, where run would run each value of a list.
func genSpecs(target string, raw []string) ([]*spec.Spec, error) {
	if len(raw) == 0 {
		return resolve(target)
	}
	params, err := parseParams(raw)
	if err != nil {
		return nil, err
	}
	for _, p := range params {
		if len(p.values) > 1 {
			return nil, usagef("--param", "%s: gen writes one set of inputs: give one value (run runs each value of a list)", spec.Clip(p.raw))
		}
	}
	var bs []*Benchmark
	if isSpecFile(target) {
		bs, err = specFileBenches(target, params)
	} else {
		if _, lerr := workloads.Lookup(target); lerr != nil {
			return resolve(target) // its error names the target
		}
		bs, err = builtinBenches(target, params)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range params {
		if !p.used {
			return nil, unknownParam(p, spec.Clip(target)+" has no parameter "+spec.Clip(p.key), []string{target})
		}
	}
	// The benchmarks of a runner parameter's values (fanout's k) share
	// their spec: each spec once, in order.
	var specs []*spec.Spec
	for _, b := range bs {
		if !slices.Contains(specs, b.Spec) {
			specs = append(specs, b.Spec)
		}
	}
	return specs, nil
}

// genErr says, of an interruption, that gen wrote nothing.
func genErr(err error) error {
	if errors.Is(err, ErrInterrupted) {
		return fmt.Errorf("%w: gen wrote no file", ErrInterrupted)
	}
	return err
}

// checkDir checks that dir is a directory or can be made one: it, or
// else its nearest existing ancestor, is a directory. (What cannot be
// read is left to the directory's creation to report.)
func checkDir(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil {
			if !st.IsDir() {
				return usagef("--out", "%s is not a directory", spec.Path(d))
			}
			return nil
		}
		if _, err := os.Lstat(d); err == nil {
			// A symbolic link to nothing: no directory can be made there.
			return usagef("--out", "%s is a symbolic link to nothing, not a directory", spec.Path(d))
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// mkdirAll is os.MkdirAll that returns the directories it created,
// outermost first, so a rollback can remove them. Each is made with mode
// 0777 less the umask, as mkdir -p makes one.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o777); err != nil {
			if st, serr := os.Stat(missing[i]); errors.Is(err, os.ErrExist) && serr == nil && st.IsDir() {
				continue // made meanwhile, not by gen: a rollback leaves it
			}
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}
