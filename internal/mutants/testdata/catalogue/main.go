// Command catalogue prints the mutant catalogue for scripts/mutants.sh, one
// mutant a line: name, issue number, package, and "concurrent" or "serial",
// separated by tabs.
package main

import (
	"fmt"

	"github.com/tracebench/tracebench/internal/mutants"
)

func main() {
	for _, m := range mutants.Catalogue() {
		kind := "serial"
		if m.Concurrent {
			kind = "concurrent"
		}
		fmt.Printf("%s\t%d\t%s\t%s\n", m.Name, m.Issue, m.Package, kind)
	}
}
