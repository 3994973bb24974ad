package benchrun

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tracebench/tracebench/workloads"
)

// ListConfig configures List.
type ListConfig struct {
	Out io.Writer
}

// List prints the built-in workloads, their spec files and their
// parameters with defaults and ranges.
func List(cfg ListConfig) error {
	tw := tabwriter.NewWriter(cfg.Out, 0, 0, 2, ' ', 0)
	for i, w := range workloads.Registry() {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\t%s\n", w.Name, w.Doc)
		files := make([]string, len(w.Benches))
		for j, b := range w.Benches {
			files[j] = "workloads/" + b.File
		}
		fmt.Fprintf(tw, "  spec\t%s\n", strings.Join(files, ", "))
		if len(w.Joins) > 0 {
			fmt.Fprintf(tw, "  join\t%s\n", strings.Join(w.Joins, ","))
		}
		for _, p := range w.Params {
			defs := make([]string, len(p.Defaults))
			for j, d := range p.Defaults {
				defs[j] = strconv.FormatInt(d, 10)
			}
			fmt.Fprintf(tw, "  %s=%s\t%s; %s\n", p.Name, strings.Join(defs, ","), p.Doc, p.Range())
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("benchrun: writing output: %w", err)
	}
	return nil
}
