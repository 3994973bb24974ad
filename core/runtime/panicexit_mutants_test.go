//go:build mutants

package runtime

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestAPanicUnderARegistryLockEndsTheProcess: a panic on a worker that no
// dataflow recovers ends the process with that panic, also when it comes
// while the worker holds a lock its exit would take. A mutant build whose
// TRACEBENCH_MUTANT names no mutant panics at the first mutant site it
// reaches (internal/mutants, M3), and the first a pair reaches sit in the
// registry's critical sections; the worker's exit then waited for the
// registry's lock its own goroutine held, and the process hung where it
// was to end (a benchrun check with a mistyped mutant ran forever; a child
// with no other goroutine alive dies of Go's deadlock detector instead of
// the panic). The test runs a pair in a child process of this binary and
// wants it to end with the panic, raised in a registry's method.
func TestAPanicUnderARegistryLockEndsTheProcess(t *testing.T) {
	if os.Getenv("PANICEXIT_CHILD") != "" {
		s := newSetup(t, "pair", 1)
		s.send("in", 2, []int64{0, 1, 1, 10})
		s.advance("in", 2, frontier.At(1))
		s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), dataflow.NewCapture(1))})
		s.ctl.Sync(context.Background())
		t.Fatal("the pair synced with every mutant site panicking")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAPanicUnderARegistryLockEndsTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PANICEXIT_CHILD=1", "TRACEBENCH_MUTANT=no-such-mutant")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the child still ran after two minutes (a worker's exit waiting on a lock its panic left held):\n%s", out)
	}
	const want = `TRACEBENCH_MUTANT="no-such-mutant" names no catalogued mutant`
	if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "core/share.(*Registry)") {
		t.Fatalf("child: err %v, output\n%s\nwant a panic with %q in a registry's method", err, out, want)
	}
}
