//go:build mutants

package mutants

import (
	"fmt"
	"os"
)

// Enabled reports whether this is a mutant build (build tag mutants).
const Enabled = true

// selected is TRACEBENCH_MUTANT, read once at program start and never
// written again.
var selected = Name(os.Getenv("TRACEBENCH_MUTANT"))

// On reports whether mutant n is on: TRACEBENCH_MUTANT names it. It panics
// if n is not catalogued (M2) or TRACEBENCH_MUTANT names no catalogued
// mutant (M3).
func On(n Name) bool {
	if !Known(n) {
		panic(fmt.Sprintf("mutants: site names %q, which is not in the catalogue", n))
	}
	if selected != "" && !Known(selected) {
		panic(fmt.Sprintf("mutants: TRACEBENCH_MUTANT=%q names no catalogued mutant", selected))
	}
	return selected == n
}
