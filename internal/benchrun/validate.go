package benchrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ValidateConfig configures Validate.
type ValidateConfig struct {
	Out   io.Writer
	Specs []string // spec files or built-in workloads
}

// Validate decodes and checks each spec file and reads its CSV inputs
// (generated inputs are not generated: their parameters are checked by
// decoding). It prints one line per valid spec and returns the first
// problem, naming the file and the line or field.
func Validate(cfg ValidateConfig) error {
	if len(cfg.Specs) == 0 {
		return usagef("validate", "needs at least one SPEC.json")
	}
	for _, target := range cfg.Specs {
		specs, err := resolve(target)
		if err != nil {
			return err
		}
		for _, s := range specs {
			fmt.Fprintf(cfg.Out, "%s: ok: workload %s, %d inputs, %d views, %d indexes\n", s.File, s.Name, len(s.Inputs), len(s.Views), len(s.Indexes))
		}
	}
	return nil
}

// resolve returns the specs a command argument names: a spec file (its CSV
// inputs read), or a built-in workload's specs at their defaults.
func resolve(target string) ([]*spec.Spec, error) {
	if isSpecFile(target) {
		s, err := check(target)
		if err != nil {
			return nil, err
		}
		return []*spec.Spec{s}, nil
	}
	w, err := workloads.Lookup(target)
	if err != nil {
		return nil, usagef(target, "%v (a spec file must end in .json)", err)
	}
	var out []*spec.Spec
	for i := range w.Benches {
		s, err := w.Benches[i].Spec(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// check reads a spec and its CSV inputs.
func check(path string) (*spec.Spec, error) {
	s, err := spec.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for i := range s.Inputs {
		in := &s.Inputs[i]
		if in.Source == spec.SourceCSV {
			if _, err := spec.ReadCSVFile(s.CSVPath(in), in.Columns); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// GenConfig configures Gen.
type GenConfig struct {
	Out  io.Writer // one line per file written
	Spec string    // a spec file or a built-in workload
	Dir  string
	Seed uint64 // the run seed combined with each generator's seed
}

// Gen writes every input of a spec, generated, inline or CSV, as
// DIR/<input>.csv in the format the spec's csv field reads. Every input is
// loaded before the first file is written, and each file is written to a
// temporary name and renamed, so a failure leaves no partial file.
func Gen(cfg GenConfig) error {
	if cfg.Dir == "" {
		return usagef("--out", "gen needs --out DIR")
	}
	specs, err := resolve(cfg.Spec)
	if err != nil {
		return err
	}
	tables := make([][]*spec.Table, len(specs))
	for i, s := range specs {
		if tables[i], err = workloads.Load(s, cfg.Seed); err != nil {
			return err
		}
	}
	for i, s := range specs {
		dir := cfg.Dir
		if len(specs) > 1 {
			dir = filepath.Join(dir, s.Name) // a workload of several specs
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("benchrun: --out %s: %w", dir, err)
		}
		for j, t := range tables[i] {
			path := filepath.Join(dir, s.Inputs[j].Name+".csv")
			if err := writeFileAtomic(path, func(w io.Writer) error { return spec.WriteCSV(w, t) }); err != nil {
				return fmt.Errorf("benchrun: %s: %w", path, err)
			}
			fmt.Fprintf(cfg.Out, "%s: %d updates\n", path, t.Len())
		}
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in the same
// directory and renames it into place.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644) // CreateTemp makes 0600; outputs are ordinary files
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
