package runtime

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// source is an operator of no inputs: at its first step it sends its
// rows (of arity columns, 2 if 0) at time 0 and holds a capability at 1,
// which it drops at its second.
type source struct {
	out   *dataflow.Stream[*dataflow.Chunk]
	arity int
	rows  [][]int64
	steps int
}

func (o *source) Step(frontier.Frontier) frontier.Frontier {
	o.steps++
	if o.steps == 1 {
		ar := o.arity
		if ar == 0 {
			ar = 2
		}
		c := dataflow.NewChunk(ar, len(o.rows))
		for _, r := range o.rows {
			c.Push(r, 0, 1)
		}
		o.out.Send(c)
		return frontier.At(1)
	}
	return frontier.Empty()
}

func (o *source) Shutdown() {}

// split sends its input's rows of an even first column on even, the
// others on odd.
type split struct {
	in        *dataflow.Port[*dataflow.Chunk]
	even, odd *dataflow.Stream[*dataflow.Chunk]
}

func (o *split) Step(frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		e, d := dataflow.NewChunk(c.Arity, c.Len()), dataflow.NewChunk(c.Arity, c.Len())
		for i := range c.Len() {
			if c.Row(i)[0]%2 == 0 {
				e.Push(c.Row(i), c.Times[i], c.Diffs[i])
			} else {
				d.Push(c.Row(i), c.Times[i], c.Diffs[i])
			}
		}
		o.even.Send(e)
		o.odd.Send(d)
	}
	return frontier.Empty()
}

func (o *split) Shutdown() {}

// merge forwards what every one of its ports holds.
type merge struct {
	ins []*dataflow.Port[*dataflow.Chunk]
	out *dataflow.Stream[*dataflow.Chunk]
}

func (o *merge) Step(frontier.Frontier) frontier.Frontier {
	for _, p := range o.ins {
		for _, c := range p.Take() {
			o.out.Send(c)
		}
	}
	return frontier.Empty()
}

func (o *merge) Shutdown() {}

// Operators written from the package's documentation alone, in Solo and
// the pair, one and two workers: a source of no inputs, whose capability
// alone sets its output frontier; an operator of two outputs, both read by
// one consumer, which reads one of them twice (each port receives every
// message: its rows count twice); and an arrangement of the result, read
// by a query. Every worker's source sends its rows, and the exchange
// before the arrangement moves each to its key's worker.
func TestUserOperatorsRunEverywhere(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		q := dataflow.NewCapture(s.workers)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "user", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx"},
			Build: func(c *dataflow.Context) error {
				w := int64(c.Worker())
				b := c.NewOperator("source")
				src := &source{out: dataflow.AddOutput[*dataflow.Chunk](b), rows: [][]int64{{10 * w, 1}, {10*w + 1, 2}}}
				if err := b.Build(src); err != nil {
					return err
				}
				b = c.NewOperator("split")
				sp := &split{in: dataflow.AddInput(b, "rows", src.out), even: dataflow.AddOutput[*dataflow.Chunk](b), odd: dataflow.AddOutput[*dataflow.Chunk](b)}
				if err := b.Build(sp); err != nil {
					return err
				}
				b = c.NewOperator("merge")
				m := &merge{out: dataflow.AddOutput[*dataflow.Chunk](b)}
				m.ins = []*dataflow.Port[*dataflow.Chunk]{dataflow.AddInput(b, "even", sp.even), dataflow.AddInput(b, "odd", sp.odd), dataflow.AddInput(b, "odd again", sp.odd)}
				if err := b.Build(m); err != nil {
					return err
				}
				b = c.NewOperator("no errors")
				errs := dataflow.AddOutput[*dataflow.Chunk](b)
				if err := b.Build(&source{out: errs, arity: 1}); err != nil {
					return err
				}
				a, err := c.Arrange(dataflow.Collection{Arity: 2, Oks: m.out, Errs: errs}, []int{1})
				if err != nil {
					return err
				}
				return c.Export("idx", a)
			},
		}})
		s.must(CreateDataflow{Desc: readDesc("q", "idx", 0, frontier.Empty(), q)})
		if err := q.WaitPassed(testCtx(t), 0); err != nil {
			t.Fatal(err)
		}
		if got := s.syncedErrors(t); len(got) > 0 {
			t.Fatal(got)
		}
		var want []string
		for w := range int64(s.workers) {
			want = append(want, fmt.Sprint([]int64{10 * w, 1, 1}), fmt.Sprint([]int64{10*w + 1, 2, 2}))
		}
		var got []string
		for _, r := range q.At(0) {
			got = append(got, fmt.Sprint(append(slices.Clone(r.Row), r.Diff)))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("the query reads %v, want %v", got, want)
		}
	})
}

// A stream of one worker's build read by another worker's (shared through
// a variable) fails the create with an error naming the dataflow and the
// operator, in Solo and the pair alike.
func TestAStreamOfAnotherWorkersBuildIsRefused(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			shared := make(chan *dataflow.Stream[*dataflow.Chunk], 1)
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "shared", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					b := c.NewOperator("source")
					src := &source{out: dataflow.AddOutput[*dataflow.Chunk](b)}
					if err := b.Build(src); err != nil {
						return err
					}
					if c.Worker() == 0 {
						shared <- src.out
						return nil
					}
					select {
					case theirs := <-shared:
						b := c.NewOperator("reader")
						dataflow.AddInput(b, "theirs", theirs)
						return b.Build(&merge{})
					case <-time.After(10 * time.Second):
						return fmt.Errorf("worker 0's build shared no stream")
					case <-c.Done():
						return fmt.Errorf("shut down")
					}
				},
			}})
			got := s.syncedErrors(t)
			want := []string{`dataflow shared: operator "reader" reads a stream of operator "source" of another dataflow, or of another worker's build: an operator reads only streams its own build made`}
			if !slices.Equal(got, want) {
				t.Fatalf("errors\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// A chunk of another arity sent to an arrangement's errors is refused
// naming the operator that sent it, not the arrangement's own operators
// it went through (its errors joined with its overflow rows, the errs
// exchange with two workers).
func TestABadErrsChunkNamesItsSender(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		s.must(CreateDataflow{Desc: dataflow.Desc{
			ID: "errs", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				in, err := c.Input("in", 2)
				if err != nil {
					return err
				}
				b := c.NewOperator("errs feed")
				errs := dataflow.AddOutput[*dataflow.Chunk](b)
				if err := b.Build(&source{out: errs, rows: [][]int64{{1, 2}}}); err != nil {
					return err
				}
				_, err = c.Arrange(dataflow.Collection{Arity: 2, Oks: in.Oks, Errs: errs}, []int{1})
				return err
			},
		}})
		// With two workers the refusal is the receiving worker's, which
		// the sender's exchange wakes: it may come after the Sync.
		var got []string
		for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
			got = s.syncedErrors(t)
		}
		want := []string{`dataflow errs: arrange errs: chunk breaks the operator contract: operator "errs feed" sent one of 2 columns to a collection of 1`}
		if !slices.Equal(slices.Compact(got), want) {
			t.Fatalf("errors\n%q\nwant\n%q", got, want)
		}
	})
}
