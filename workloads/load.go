package workloads

import (
	"github.com/tracebench/tracebench/workloads/gen"
	"github.com/tracebench/tracebench/workloads/spec"
)

// Load materialises every input of s, in s.Inputs order: CSV files
// (relative to the spec), inline rows, and generators seeded with their
// own seed combined with runSeed. On any error it returns no tables (W2).
// s must come from the spec package's decoders: a nil or unresolved spec
// is an error wrapping ErrUsage.
func Load(s *spec.Spec, runSeed uint64) ([]*spec.Table, error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	out := make([]*spec.Table, len(s.Inputs))
	for i := range s.Inputs {
		in := &s.Inputs[i]
		switch in.Source {
		case spec.SourceCSV:
			t, err := s.ReadInputCSV(in)
			if err != nil {
				return nil, err
			}
			out[i] = t
		case spec.SourceGenerate:
			out[i] = gen.Table(in.Generate, in.Columns, runSeed)
		case spec.SourceRows:
			t := *in.Rows // the spec's own table is not written: its slices are shared, read only
			out[i] = &t
		}
		out[i].Input = in.Name
	}
	return out, nil
}
