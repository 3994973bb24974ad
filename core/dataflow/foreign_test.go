package dataflow_test

import (
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// quiet is an operator of no inputs that holds no capability and sends
// nothing.
type quiet struct{}

func (quiet) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (quiet) Shutdown()                                {}

func newEnv(t *testing.T) *dataflow.Env {
	env := &dataflow.Env{
		Worker: 0, Peers: 1, Manager: dataflow.NewIndexManager(), Hub: dataflow.NewHub(1),
		Activate: func(*dataflow.Dataflow) {}, Wake: func() {},
		Fail: func(_ string, err error) { t.Error(err) },
	}
	env.Inputs = dataflow.NewInputs(0, 1, env.Activate)
	return env
}

// A stream, or an arrangement, made by one dataflow's build and read by
// another's (kept in a variable past its Build, or shared between the
// workers' builds) fails the reader's create with an error naming the
// dataflow and the operator, and leaves the stream's own dataflow with no
// port of the failed reader: it would otherwise keep sending to it,
// nobody taking, for its life (and, from another worker's goroutine, race
// with the reader).
func TestAStreamOfAnotherDataflowIsRefused(t *testing.T) {
	env := newEnv(t)
	var src *dataflow.Stream[*dataflow.Chunk]
	var arr *dataflow.Arrangement
	a, err := dataflow.Build(env, dataflow.Desc{
		ID: "a", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			b := c.NewOperator("source")
			src = dataflow.AddOutput[*dataflow.Chunk](b)
			if err := b.Build(quiet{}); err != nil {
				return err
			}
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			arr, err = c.Arrange(in, []int{0})
			c.Hold(arr.Oks)
			c.Hold(arr.Errs)
			return err
		},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Drop()
	cases := map[string]struct {
		exports []string
		build   func(c *dataflow.Context) error
		want    string
	}{
		"AddInput": {build: func(c *dataflow.Context) error {
			b := c.NewOperator("mine")
			dataflow.AddInput(b, "theirs", src)
			return b.Build(quiet{})
		}, want: `dataflow b: operator "mine" reads a stream of operator "source" of another dataflow`},
		"Arrange": {build: func(c *dataflow.Context) error {
			_, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: src, Errs: src}, []int{0})
			return err
		}, want: `dataflow b: operator "arrange oks" reads a stream of operator "source" of another dataflow`},
		"CaptureChunks": {build: func(c *dataflow.Context) error {
			c.CaptureChunks(dataflow.NewCapture(1), src, 2)
			return nil
		}, want: `dataflow b: operator "capture" reads a stream of operator "source" of another dataflow`},
		"Probe": {build: func(c *dataflow.Context) error {
			c.Probe(dataflow.NewProbe(1), src)
			return nil
		}, want: `dataflow b: operator "probe" reads a stream of operator "source" of another dataflow`},
		"Export": {exports: []string{"idx"}, build: func(c *dataflow.Context) error {
			return c.Export("idx", arr)
		}, want: `dataflow b: export "idx" of an arrangement of another dataflow`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := dataflow.Build(env, dataflow.Desc{ID: "b", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Exports: tc.exports, Build: tc.build}, 2)
			if err == nil {
				b.Drop()
				t.Fatal("the create reading another dataflow's stream succeeded")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("create: %v, want %q...", err, tc.want)
			}
			if src.Consumed() {
				t.Fatal("the other dataflow's stream keeps a port of the failed create")
			}
			if _, ok := env.Manager.Get("idx"); ok {
				t.Fatal("the failed create left an index")
			}
		})
	}
}

// shutdowns counts its Shutdown calls.
type shutdowns struct{ n int }

func (*shutdowns) Step(frontier.Frontier) frontier.Frontier { return frontier.Empty() }
func (o *shutdowns) Shutdown()                              { o.n++ }

// One Operator built by two builders would be stepped twice a pass and
// shut down twice: the second Build is refused, naming both operators,
// and the failed create shuts it down once.
func TestAnOperatorBuiltTwiceIsRefused(t *testing.T) {
	env := newEnv(t)
	op := &shutdowns{}
	_, err := dataflow.Build(env, dataflow.Desc{
		ID: "twice", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			if err := c.NewOperator("first").Build(op); err != nil {
				return err
			}
			return c.NewOperator("second").Build(op)
		},
	}, 1)
	if want := `dataflow twice: operator "second": its Operator is operator "first"'s already: each Build takes an Operator of its own`; err == nil || err.Error() != want {
		t.Fatalf("create: %v, want %q", err, want)
	}
	if op.n != 1 {
		t.Fatalf("Shutdown called %d times, want once", op.n)
	}
	// Values that are not pointers may equal one another apart: two of
	// an empty struct are two operators.
	df, err := dataflow.Build(env, dataflow.Desc{
		ID: "values", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			if err := c.NewOperator("first").Build(quiet{}); err != nil {
				return err
			}
			return c.NewOperator("second").Build(quiet{})
		},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	df.Drop()
}

// An input added to an operator after its Build would never receive a
// message: the create fails, naming the operator and the input.
func TestAnInputAddedAfterItsOperatorsBuildIsRefused(t *testing.T) {
	env := newEnv(t)
	_, err := dataflow.Build(env, dataflow.Desc{
		ID: "after", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			b := c.NewOperator("reader")
			if err := b.Build(quiet{}); err != nil {
				return err
			}
			dataflow.AddInput(b, "rows", in.Oks)
			return nil
		},
	}, 1)
	if want := `dataflow after: operator "reader": input "rows" added after the operator's Build`; err == nil || err.Error() != want {
		t.Fatalf("create: %v, want %q", err, want)
	}
}
