//go:build mutants

package mutants_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/internal/mutants"
)

// TestEnabled: with the tag exactly the mutant TRACEBENCH_MUTANT names is
// on. The variable is read once at start, so each case runs this test
// binary again with it set.
func TestEnabled(t *testing.T) {
	if !mutants.Enabled {
		t.Fatal("Enabled = false in a build with the mutants tag")
	}
	if os.Getenv("MUTANTS_TEST_CHILD") != "" {
		for _, m := range mutants.Catalogue() {
			if mutants.On(m.Name) != (string(m.Name) == os.Getenv("TRACEBENCH_MUTANT")) {
				t.Fatalf("On(%s) = %v with TRACEBENCH_MUTANT=%q", m.Name, mutants.On(m.Name), os.Getenv("TRACEBENCH_MUTANT"))
			}
		}
		return
	}
	for _, env := range []string{"", string(mutants.MergeSinceMeet), string(mutants.StaleDropReleasesNewHold)} {
		out, err := child(t, "TestEnabled", env)
		if err != nil {
			t.Errorf("TRACEBENCH_MUTANT=%q: %v\n%s", env, err, out)
		}
	}
}

// TestUnknownNamesPanic checks M2 and M3: a site naming an uncatalogued
// mutant, and a TRACEBENCH_MUTANT naming one, panic at On.
func TestUnknownNamesPanic(t *testing.T) {
	if os.Getenv("MUTANTS_TEST_CHILD") != "" {
		mutants.On(mutants.Name(os.Getenv("MUTANTS_TEST_SITE")))
		return
	}
	for _, tc := range []struct{ env, site, want string }{
		{"", "no-such-site", `site names "no-such-site"`},
		{"merge-since-mee", string(mutants.MergeSinceMeet), `TRACEBENCH_MUTANT="merge-since-mee" names no catalogued mutant`},
	} {
		t.Setenv("MUTANTS_TEST_SITE", tc.site)
		out, err := child(t, "TestUnknownNamesPanic", tc.env)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("TRACEBENCH_MUTANT=%q, site %q: err %v, output\n%s\nwant a panic with %q", tc.env, tc.site, err, out, tc.want)
		}
	}
}

// child runs test name of this binary again with TRACEBENCH_MUTANT=env.
func child(t *testing.T, name, env string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MUTANTS_TEST_CHILD=1", "TRACEBENCH_MUTANT="+env)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
