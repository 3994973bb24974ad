package runtime

import (
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/internal/labelstest"
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

// blockOp is an operator whose first step signals entered and waits for
// release: a goroutine profile taken meanwhile shows the labels its step
// runs under.
type blockOp struct {
	entered, release chan struct{}
	once             bool
}

func (o *blockOp) Step(in frontier.Frontier) frontier.Frontier {
	if !o.once {
		o.once = true
		close(o.entered)
		<-o.release
	}
	return frontier.Empty()
}

func (o *blockOp) Shutdown() {}

// TestOperatorStepsCarryProfileLabels checks that an operator's step runs
// under the labels dataflow=<id> and operator=<its name> on top of the
// worker's runtime= and worker=, and that a runtime's workers carry the
// labels of Options.Labels (a caller's benchmark=) beside their own, while
// stepping and while parked: a CPU profile then splits by benchmark,
// runtime, dataflow and operator (README, Benchmarks).
func TestOperatorStepsCarryProfileLabels(t *testing.T) {
	r, ctl, ctx := labelledSolo(t)
	op := &blockOp{entered: make(chan struct{}), release: make(chan struct{})}
	desc := dataflow.Desc{ID: "df", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
		return c.NewOperator("blocker").Build(op)
	}}
	if err := ctl.Send(CreateDataflow{Desc: desc}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-op.entered:
	case <-ctx.Done():
		t.Fatal("the operator never stepped")
	}
	profile := func() string {
		var sb strings.Builder
		if err := pprof.Lookup("goroutine").WriteTo(&sb, 1); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	stepping := profile()
	close(op.release)
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Sync returns from inside its barrier command: wait for the worker
	// to park.
	if !awaitIdle(ctx.Done(), r) {
		t.Fatal("the worker did not park")
	}
	parked := profile()
	for _, c := range []struct{ when, prof, want string }{
		{"stepping", stepping, `labels: {"benchmark":"b1", "dataflow":"df", "operator":"blocker", "runtime":"solo", "worker":"0"}`},
		{"parked", parked, `labels: {"benchmark":"b1", "runtime":"solo", "worker":"0"}`},
	} {
		if !strings.Contains(c.prof, c.want) {
			t.Errorf("%s: no goroutine with %s in the goroutine profile:\n%s", c.when, c.want, c.prof)
		}
	}
}

// passOp is an operator whose steps do nothing.
type passOp struct{}

func (passOp) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (passOp) Shutdown()                                {}

// TestBarrierWorkCarriesCommandLabels checks that what a barrier runs on
// a worker after stepping its dataflows (Stats' reading of the traces, the
// hold changes it applies) is counted as the worker's applying of
// commands, operator=(commands): a step sets the worker's own labels back
// when it returns, and the barrier, a command, must set its own again.
func TestBarrierWorkCarriesCommandLabels(t *testing.T) {
	r, ctl, ctx := labelledSolo(t)
	// Hold the worker in a barrier, so that the create and the barrier
	// after it are applied in one wake: the create activates its
	// dataflow, and the barrier steps it before it runs its function.
	entered, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- r.barrier(ctx, func(*worker) { close(entered); <-release })
	}()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the worker never ran the first barrier")
	}
	desc := dataflow.Desc{ID: "df", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
		return c.NewOperator("pass").Build(passOp{})
	}}
	if err := ctl.Send(CreateDataflow{Desc: desc}); err != nil {
		t.Fatal(err)
	}
	var got string
	done := make(chan error, 1)
	go func() {
		done <- r.barrier(ctx, func(*worker) { got = labelstest.Own(t) })
	}()
	for w := r.workers[0]; ; time.Sleep(time.Millisecond) {
		w.qmu.Lock()
		n := len(w.queue)
		w.qmu.Unlock()
		if n == 2 || ctx.Err() != nil {
			break
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := `{"benchmark":"b1", "operator":"(commands)", "runtime":"solo", "worker":"0"}`
	if got != want {
		t.Errorf("a barrier's work after the steps runs under %s, want %s", got, want)
	}
}

// labelledSolo starts a Solo runtime of one worker whose Options.Labels
// carry benchmark=b1, with its controller (shut down at the test's end)
// and a context of 30 s.
func labelledSolo(t *testing.T) (*Runtime, *Controller, context.Context) {
	t.Helper()
	base := pprof.WithLabels(context.Background(), pprof.Labels("benchmark", "b1"))
	r, err := New(Options{Role: Solo, Workers: 1, Labels: base})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := NewController(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return r, ctl, ctx
}

// shutdownLabelsOp records the labels its Shutdown runs under.
type shutdownLabelsOp struct {
	t    *testing.T
	got  *string
	done chan struct{}
}

func (shutdownLabelsOp) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (o shutdownLabelsOp) Shutdown() {
	*o.got = labelstest.Own(o.t)
	close(o.done)
}

// TestCreateAndDropCarryTheirDataflowLabel checks that a create's Build
// and a drop's work, applied as commands, run under dataflow=<id> beside
// operator=(commands): the worker knows the dataflow those commands are
// for, and a profile's (commands) samples of building or dropping a
// dataflow split by it (README, Benchmarks).
func TestCreateAndDropCarryTheirDataflowLabel(t *testing.T) {
	_, ctl, ctx := labelledSolo(t)
	var built, dropped string
	shut := make(chan struct{})
	desc := dataflow.Desc{ID: "df", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *dataflow.Context) error {
		built = labelstest.Own(t)
		return c.NewOperator("rec").Build(shutdownLabelsOp{t: t, got: &dropped, done: shut})
	}}
	if err := ctl.Send(CreateDataflow{Desc: desc}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Send(DropDataflow{ID: "df"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-shut:
	case <-ctx.Done():
		t.Fatal("the operator was never shut down")
	}
	const want = `{"benchmark":"b1", "dataflow":"df", "operator":"(commands)", "runtime":"solo", "worker":"0"}`
	if built != want {
		t.Errorf("a create's Build runs under %s, want %s", built, want)
	}
	if dropped != want {
		t.Errorf("a drop's work runs under %s, want %s", dropped, want)
	}
}
