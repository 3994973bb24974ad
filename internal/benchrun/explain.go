package benchrun

import (
	"context"
	"fmt"
	"io"

	"github.com/tracebench/tracebench/core/plan"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ExplainConfig configures Explain.
type ExplainConfig struct {
	Out   io.Writer
	Spec  string // a spec file or a built-in workload
	Index string // IndexImported (default) or IndexDirect
	Join  string // "linear" or "delta"; "": the spec's
}

// Explain prints the plan of a spec (plan.Resolved.Explain): per index
// what its maintaining dataflow reads, imports and builds; each query
// view's and the query's join stages or delta paths with the arrangement
// each reads, the stream columns it is looked up by, and the index that
// serves it; then the query's reduce and output. In imported mode an
// arrangement no index serves is an error naming every missing
// (collection, key set), returned after the plan is printed. A cancelled
// ctx (Ctrl-C) stops it with ErrInterrupted before it prints: decoding a
// spec of millions of inline rows takes seconds, after which explain
// printed the plan and exited 0.
func Explain(ctx context.Context, cfg ExplainConfig) error {
	if cfg.Index == "" {
		cfg.Index = IndexImported
	}
	if cfg.Index != IndexImported && cfg.Index != IndexDirect {
		return usagef("--index", "unknown value %s (imported or direct)", spec.Quote(cfg.Index))
	}
	specs, err := interruptible(ctx, func() ([]*spec.Spec, error) { return resolve(cfg.Spec) })
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	for i, s := range specs {
		if i > 0 {
			fmt.Fprintln(cfg.Out)
		}
		if err := explain(cfg, s); err != nil {
			return err
		}
	}
	return nil
}

// explain prints the plan of one spec.
func explain(cfg ExplainConfig, s *spec.Spec) error {
	var err error
	kind := plan.Linear
	if s.Query.Join == spec.JoinDelta {
		kind = plan.Delta
	}
	if cfg.Join != "" {
		if kind, err = plan.ParseJoinKind(cfg.Join); err != nil {
			return usagef("--join", "unknown value %s (linear or delta)", spec.Quote(cfg.Join))
		}
	}
	r := s.Plan
	w := cfg.Out
	until := "none"
	if s.HasUntil {
		until = fmt.Sprint(s.Until)
	}
	fmt.Fprintf(w, "workload %s: index=%s join=%s as_of=%d until=%s\n", s.Name, cfg.Index, kind, s.AsOf, until)
	if cfg.Index == IndexDirect {
		fmt.Fprintf(w, "direct: one Solo dataflow builds every view and arrangement below from the raw inputs; no index is maintained or read\n")
	}
	text, err := r.Explain(kind)
	if err != nil {
		return err
	}
	io.WriteString(w, text)
	if cfg.Index == IndexImported {
		return missing(s, kind.String())
	}
	return nil
}
