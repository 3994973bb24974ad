//go:build !mutants

package mutants_test

import (
	"testing"

	"github.com/tracebench/tracebench/internal/mutants"
)

// TestDisabled: without the tag no mutant is ever on, whatever the
// environment says.
func TestDisabled(t *testing.T) {
	t.Setenv("TRACEBENCH_MUTANT", string(mutants.ImportKeepsNoHold))
	if mutants.Enabled {
		t.Fatal("Enabled = true in a build without the mutants tag")
	}
	for _, m := range mutants.Catalogue() {
		if mutants.On(m.Name) {
			t.Errorf("On(%s) = true without the mutants tag", m.Name)
		}
	}
}
