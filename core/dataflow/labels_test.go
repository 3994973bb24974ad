package dataflow

import (
	"context"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// labelOp records, at each step, the goroutine profile's line of the
// stepping goroutine's labels, found by a label unique to the test.
type labelOp struct{ seen []string }

func (o *labelOp) Step(in frontier.Frontier) frontier.Frontier {
	o.seen = append(o.seen, goroutineLabels())
	return frontier.Empty()
}

func (o *labelOp) Shutdown() {}

// goroutineLabels returns the labels line of the goroutine profile that
// holds the test's own label (test=labels), "" if none does.
func goroutineLabels() string {
	var sb strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&sb, 1); err != nil {
		panic(err)
	}
	for line := range strings.Lines(sb.String()) {
		if strings.Contains(line, `"test":"labels"`) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestStepRunsUnderOperatorLabels: with Env.LabelSteps, each operator's
// step runs under them with dataflow= and operator= added, and a step of
// the dataflow leaves the goroutine under Env.Labels again, so work after
// it is not counted as the last operator's.
func TestStepRunsUnderOperatorLabels(t *testing.T) {
	env := labelledTestEnv(t)
	a, b := &labelOp{}, &labelOp{}
	df, err := Build(env, Desc{ID: "d", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		if err := c.NewOperator("first").Build(a); err != nil {
			return err
		}
		return c.NewOperator("second").Build(b)
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	df.Step()
	// Without LabelSteps the steps run under the goroutine's labels.
	plain := &labelOp{}
	env.LabelSteps = false
	df2, err := Build(env, Desc{ID: "d2", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		return c.NewOperator("plain").Build(plain)
	}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer df2.Drop()
	df2.Step()
	for _, c := range []struct {
		op   *labelOp
		want string
	}{
		{a, `# labels: {"dataflow":"d", "operator":"first", "test":"labels", "worker":"0"}`},
		{b, `# labels: {"dataflow":"d", "operator":"second", "test":"labels", "worker":"0"}`},
		{plain, `# labels: {"test":"labels", "worker":"0"}`},
	} {
		if len(c.op.seen) == 0 || c.op.seen[0] != c.want {
			t.Errorf("a step's labels %q, want %q", c.op.seen, c.want)
		}
	}
	if got, want := goroutineLabels(), `# labels: {"test":"labels", "worker":"0"}`; got != want {
		t.Errorf("after the step: %q, want %q", got, want)
	}
}

// TestStepLabelsAreTheStepsLabels: an operator's StepLabels are exactly the
// labels its steps run under when the dataflow labels every step (an
// operator that runs part of its step under labels of its own sets them
// back after it), and nil when it does not.
func TestStepLabelsAreTheStepsLabels(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	env.Labels = pprof.WithLabels(context.Background(), pprof.Labels("test", "labels", "worker", "0"))
	defer pprof.SetGoroutineLabels(context.Background())
	for _, steps := range []bool{true, false} {
		env.LabelSteps = steps
		op := &labelOp{}
		var given context.Context
		df, err := Build(env, Desc{ID: "d", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
			b := c.NewOperator("op")
			given = b.StepLabels()
			return b.Build(op)
		}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		pprof.SetGoroutineLabels(env.Labels)
		df.Step()
		df.Drop()
		if !steps {
			if given != nil {
				t.Errorf("without LabelSteps, StepLabels gave %v", given)
			}
			continue
		}
		if given == nil || len(op.seen) == 0 {
			t.Fatalf("StepLabels %v; the op saw %q", given, op.seen)
		}
		pprof.SetGoroutineLabels(given)
		if got := goroutineLabels(); got != op.seen[0] {
			t.Errorf("StepLabels %q, the step ran under %q", got, op.seen[0])
		}
	}
}

// TestLabelAsLabelsTheSteps: an operator given LabelAs steps under the
// operator= and pairs given in place of its name, which still names it
// (Operators), and its StepLabels are those.
func TestLabelAsLabelsTheSteps(t *testing.T) {
	env := labelledTestEnv(t)
	op := &labelOp{}
	var given context.Context
	df, err := Build(env, Desc{ID: "d", AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		b := c.NewOperator("join path 1 feed")
		b.LabelAs("join", "path", "1")
		given = b.StepLabels()
		return b.Build(op)
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	df.Step()
	want := `# labels: {"dataflow":"d", "operator":"join", "path":"1", "test":"labels", "worker":"0"}`
	if len(op.seen) == 0 || op.seen[0] != want {
		t.Errorf("the step's labels %q, want %q", op.seen, want)
	}
	if p, _ := pprof.Label(given, "path"); p != "1" {
		t.Errorf("StepLabels carry path=%q, want 1", p)
	}
	if ops := df.Operators(); len(ops) != 1 || ops[0] != "join path 1 feed" {
		t.Errorf("Operators %q, want the operator's name", ops)
	}
}

// TestArrangeNamedNamesItsExchanges: on several workers the exchanges an
// arrangement puts before its halves are named after what it arranges, as
// its own operators are, so a profile tells one arrangement's sends and
// receives from another's; Arrange's keep the plain names.
func TestArrangeNamedNamesItsExchanges(t *testing.T) {
	env := testEnv(t, 0, 2, NewHub(2))
	if err := env.Inputs.Declare("a", 2); err != nil {
		t.Fatal(err)
	}
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("a", 2)
		if err != nil {
			return err
		}
		if _, err := c.ArrangeNamed(in, []int{1}, "a(g)"); err != nil {
			return err
		}
		_, err = c.Arrange(in, []int{1})
		return err
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	var got []string
	for _, op := range df.Operators() {
		if strings.HasPrefix(op, "exchange ") || strings.HasPrefix(op, "arrange ") {
			got = append(got, op)
		}
	}
	want := []string{
		"exchange send oks a(g)", "exchange recv oks a(g)", "arrange oks a(g)", "arrange overflows a(g)",
		"exchange send errs a(g)", "exchange recv errs a(g)", "arrange errs a(g)",
		"exchange send", "exchange recv", "arrange oks", "arrange overflows",
		"exchange send", "exchange recv", "arrange errs",
	}
	if !slices.Equal(got, want) {
		t.Errorf("operators\n%q\nwant\n%q", got, want)
	}
}

// labelledTestEnv is testEnv's one worker labelling every step, under
// test=labels worker=0, which the test's goroutine carries until it ends.
func labelledTestEnv(t *testing.T) *Env {
	env := testEnv(t, 0, 1, NewHub(1))
	env.Labels = pprof.WithLabels(context.Background(), pprof.Labels("test", "labels", "worker", "0"))
	env.LabelSteps = true
	pprof.SetGoroutineLabels(env.Labels)
	t.Cleanup(func() { pprof.SetGoroutineLabels(context.Background()) })
	return env
}
