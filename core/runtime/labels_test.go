package runtime

import (
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/spine"
)

// TestWorkersCarryProfileLabels checks that every worker goroutine carries
// the pprof labels runtime=<role> and worker=<i>, which split a CPU profile
// by runtime (README, Benchmarks).
func TestWorkersCarryProfileLabels(t *testing.T) {
	m, i, ctl, err := Pair(2, spine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctl.Sync(ctx); err != nil { // every worker is running its loop
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&sb, 1); err != nil {
		t.Fatal(err)
	}
	prof := sb.String()
	for _, r := range []*Runtime{m, i} {
		for w := range r.Workers() {
			want := `labels: {"runtime":"` + r.Role().String() + `", "worker":"` + strconv.Itoa(w) + `"}`
			if !strings.Contains(prof, want) {
				t.Errorf("no goroutine with %s in the goroutine profile", want)
			}
		}
	}
}
