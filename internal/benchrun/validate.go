package benchrun

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ValidateConfig configures Validate.
type ValidateConfig struct {
	Out   io.Writer
	Specs []string // spec files or built-in workloads
}

// Validate decodes and checks each spec file (each once, however often
// and under whichever spelling of its path it is named) and reads its CSV inputs
// (generated inputs are not generated: their parameters are checked by
// decoding), that no two spec files declare the same workload name and
// no spec file the name of a built-in workload named with it, which would
// give their results the same names in one run, and that no
// result line of a run of the spec could be longer than a result file's
// reader takes (checkLine). It prints
// one line per valid spec and returns the first problem, naming the file
// and the line or field. When ctx is cancelled it stops, with
// ErrInterrupted after the problems found so far.
func Validate(ctx context.Context, cfg ValidateConfig) error {
	if len(cfg.Specs) == 0 {
		return usagef("validate", "needs at least one SPEC.json")
	}
	files := map[string]*spec.Spec{} // spec files by workload name
	builtins := map[string]bool{}    // built-in workloads named
	// Every target is checked: a bad one is reported and the rest still
	// are, so one run names every file at fault.
	var errs []error
	seen := map[string]bool{}
	for i, target := range cfg.Specs {
		// A target named twice, a spec file under any spelling of its
		// path, is validated and listed once, as run runs it and check
		// checks it once.
		k := targetKey(target)
		if seen[k] {
			continue
		}
		seen[k] = true
		specs, err := interruptible(ctx, func() ([]*spec.Spec, error) { return resolve(target) })
		if errors.Is(err, ErrInterrupted) {
			errs = append(errs, fmt.Errorf("%w after %d of %s", ErrInterrupted, i, count(len(cfg.Specs), "target", "targets")))
			break
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isSpecFile(target) {
			// Spec files run together must differ in name (docs/spec.md,
			// benchrun run), from each other and from the built-in
			// workloads named with them; one file named twice is the
			// same spec.
			s := specs[0]
			if prev := files[s.Name]; prev != nil && targetKey(prev.File) != targetKey(s.File) {
				errs = append(errs, nameClash(prev, s))
				continue
			}
			if builtins[s.Name] {
				errs = append(errs, builtinClash(s))
				continue
			}
			files[s.Name] = s
		} else {
			builtins[target] = true
			if s := files[target]; s != nil {
				// Named before the built-in: reported now, as run
				// reports it whatever the order.
				errs = append(errs, builtinClash(s))
				delete(files, target)
			}
		}
		if err := checkLines(specs); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range specs {
			fmt.Fprintf(cfg.Out, "%s: ok: workload %s, %s, %s, %s\n", spec.Path(s.File), s.Name,
				count(len(s.Inputs), "input", "inputs"), count(len(s.Views), "view", "views"), count(len(s.Indexes), "index", "indexes"))
		}
	}
	return errors.Join(errs...)
}

// checkLines refuses a spec whose result line could be longer than a
// result file's reader takes (checkLine), in either index mode and with
// either join strategy that run would run (imported mode only where
// every arrangement the join reads has an index: run refuses it
// otherwise, and the dataflows it would build are never built), as run
// would name its benchmark without parameters.
func checkLines(specs []*spec.Spec) error {
	for _, s := range specs {
		for _, ix := range []string{IndexImported, IndexDirect} {
			for _, j := range []string{spec.JoinLinear, spec.JoinDelta} {
				if ix == IndexImported && missing(s, j) != nil {
					continue
				}
				b := &Benchmark{Base: camel(s.Name), Workload: s.Name, Index: ix, Join: j, Workers: 1, Spec: s}
				b.Name = b.name()
				if err := checkLine(b); err != nil {
					return err
				}
			}
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
		name := spec.Clip(target)
		if name == "" {
			name = `""` // an empty argument ('' in the shell), not an empty prefix
		}
		return nil, usagef(name, "%s", notBuiltin(target, err))
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
			if _, err := s.ReadInputCSV(in); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}
