package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
)

// A pointer to a command is a Command too (its methods are the value's),
// and so is a type embedding one; no worker applies either. The controller
// refuses them at Send, naming the type, and records nothing of them: the
// same CreateInput sent by value afterwards is accepted.
func TestACommandNotSentByValueIsRefused(t *testing.T) {
	type wrapped struct{ CreateInput }
	var nilInput *Input
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			for _, cmd := range []Command{&CreateInput{Name: "in", Arity: 1}, nilInput, wrapped{CreateInput{Name: "in", Arity: 1}}, &DropDataflow{ID: "x"}} {
				err := s.ctl.Send(cmd)
				if err == nil || !strings.Contains(err.Error(), "command of type") {
					t.Fatalf("Send(%T) = %v, want a refusal naming the type", cmd, err)
				}
				if err := s.ctl.SendAll(cmd); err == nil {
					t.Fatalf("SendAll(%T) accepted it", cmd)
				}
			}
			if err := s.ctl.Send(CreateInput{Name: "in", Arity: 1}); err != nil {
				t.Fatalf("CreateInput by value after the refusals: %v", err)
			}
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if errs := s.ctl.Errors(); len(errs) != 0 {
				t.Fatalf("errors %v", errs)
			}
		})
	}
}

// A Build that exports an id twice, or an id Desc.Exports does not list
// that a query's index already has, fails alike in Solo and in the pair:
// the export makes nothing, and the create's error names both lists. Made,
// the second export of an id was the registry's error in the pair (an
// incarnation published twice) and the manager's in Solo, and a query's
// index, which the Maintenance runtime does not hold, collided in Solo
// only.
func TestAnExportBuildRepeatsOrTakesIsOneErrorEverywhere(t *testing.T) {
	for _, lag := range []Role{Solo, Maintenance, Interactive} {
		outs := agree(t, lag, func(s *setup, _ *[]string) string {
			s.send("in", 2, []int64{0, 1, 1, 10})
			s.advance("in", 2, frontier.At(1))
			s.must(CreateDataflow{Desc: indexDesc("idx", "in", 2, []int{0}, 0, nil)})
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: "copy", AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{"idx copy"},
				Build: func(c *dataflow.Context) error {
					a, err := c.ImportIndex("idx")
					if err != nil {
						return err
					}
					return c.Export("idx copy", a)
				},
			}})
			s.must(CreateDataflow{Desc: exportsDesc("twice", []string{"a"}, []string{"a", "a"})})
			s.must(CreateDataflow{Desc: exportsDesc("takes", []string{"b"}, []string{"b", "idx copy"})})
			return ""
		})
		want := []string{
			`dataflow takes: Desc.Exports ["b"], Build exported ["b" "idx copy"]: dataflow: exports differ from Desc.Exports`,
			`dataflow twice: Desc.Exports ["a"], Build exported ["a" "a"]: dataflow: exports differ from Desc.Exports`,
		}
		for w, o := range outs {
			if !slices.Equal(o.errs, want) {
				t.Fatalf("lag %v, workers=%d: errors\n%s\nwant\n%s", lag, w, strings.Join(o.errs, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// The zero Controller has no runtimes: Send and SendAll panicked on its
// nil maps, and Sync returned nil, as if everything sent had been applied.
// They return ErrNoRuntimes; the calls that read or end nothing return
// nothing.
func TestTheZeroControllerRefusesCommands(t *testing.T) {
	var c Controller
	if err := c.Send(CreateInput{Name: "in", Arity: 1}); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("Send: %v, want ErrNoRuntimes", err)
	}
	if err := c.SendAll(CreateInput{Name: "in", Arity: 1}, AdvanceInput{Name: "in", Frontier: frontier.At(1)}); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("SendAll: %v, want ErrNoRuntimes", err)
	}
	if err := c.Sync(testCtx(t)); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("Sync: %v, want ErrNoRuntimes", err)
	}
	if err := c.SyncRole(testCtx(t), Solo); err == nil {
		t.Error("SyncRole: nil, want an error")
	}
	if errs, err := c.Errors(), c.Err(); len(errs) != 0 || err != nil {
		t.Errorf("Errors %v, Err %v: want none", errs, err)
	}
	c.Shutdown()
	c.Shutdown()
}

// SendAll of no commands is a batch a driver's empty round makes: it
// returned nil on the zero Controller and after Shutdown, where every
// Send returns ErrNoRuntimes and ErrShutdown, so a driver sending its
// rounds whole learnt of neither until a round held a command. It says
// what a Send would, in Solo as in the pair, and nil on live runtimes.
func TestAnEmptySendAllRefusesAsASendWould(t *testing.T) {
	var zero Controller
	if err := zero.SendAll(); !errors.Is(err, ErrNoRuntimes) {
		t.Errorf("the zero Controller's SendAll(): %v, want ErrNoRuntimes", err)
	}
	for _, mode := range []string{"solo", "pair"} {
		s := newSetup(t, mode, 1)
		if err := s.ctl.SendAll(); err != nil {
			t.Errorf("%s: SendAll() on live runtimes: %v, want nil", mode, err)
		}
		s.ctl.Shutdown()
		if err := s.ctl.SendAll(); !errors.Is(err, ErrShutdown) {
			t.Errorf("%s: SendAll() after Shutdown: %v, want ErrShutdown", mode, err)
		}
	}
}

// The zero Runtime has no workers: NewController took it as a Solo
// runtime, and the controller then accepted every command and applied
// none, its Sync and the runtime's Stats waiting for no worker until
// their context ended; Shutdown and Resume closed a nil channel. A
// controller over it is refused (ErrZeroRuntime), Stats returns that
// error, and Shutdown and Resume do nothing.
func TestTheZeroRuntimeIsRefused(t *testing.T) {
	var r Runtime
	if c, err := NewController(&r); !errors.Is(err, ErrZeroRuntime) || c != nil {
		t.Errorf("NewController(zero Runtime): %v, %v, want ErrZeroRuntime", c, err)
	}
	regs := []*share.Registry{share.NewRegistry()}
	m, err := New(Options{Role: Maintenance, Workers: 1, Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	if _, err := NewController(m, &r); !errors.Is(err, ErrZeroRuntime) {
		t.Errorf("NewController(Maintenance, zero Runtime): %v, want ErrZeroRuntime", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := r.Stats(ctx); !errors.Is(err, ErrZeroRuntime) {
		t.Errorf("Stats: %v, want ErrZeroRuntime", err)
	}
	r.Resume()
	r.Shutdown()
	r.Shutdown()
	// The Maintenance runtime is still free for a controller.
	i, err := New(Options{Role: Interactive, Workers: 1, Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewController(m, i)
	if err != nil {
		t.Fatal(err)
	}
	c.Shutdown()
}

// stallOp is an operator of no input that, on worker 1, holds its first
// step until worker 0 has sent its bad chunk and parked, its pass (and the
// exchange's send of the chunk) done: worker 1 is then still in the first
// passes of its create when the chunk reaches it.
type stallOp struct {
	worker int
	sent   <-chan struct{}
	// sender is worker 0 of the runtime that renders the dataflow.
	sender *worker
	done   bool
}

func (o *stallOp) Step(frontier.Frontier) frontier.Frontier {
	if o.worker == 1 && !o.done {
		o.done = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		select {
		case <-o.sent:
			o.sender.awaitPark(ctx.Done())
		case <-ctx.Done():
		}
	}
	return frontier.Empty()
}

func (o *stallOp) Shutdown() {}

// wideFeed forwards its input and, once the input's frontier reaches
// {3}, sends one chunk of 1 column into a collection of 2 (eight rows, so
// that some are exchanged to each worker) and closes sent.
type wideFeed struct {
	in   *dataflow.Port[*dataflow.Chunk]
	out  *dataflow.Stream[*dataflow.Chunk]
	sent func()
	done bool
}

func (o *wideFeed) Step(in frontier.Frontier) frontier.Frontier {
	for _, c := range o.in.Take() {
		o.out.Send(c)
	}
	if !o.done && frontier.At(3).LessEqual(in) {
		o.done = true
		c := dataflow.NewChunk(1, 8)
		for k := range int64(8) {
			c.Push([]int64{k}, 3, 1)
		}
		o.out.Send(c)
		o.sent()
	}
	return frontier.Empty()
}

func (o *wideFeed) Shutdown() {}

// An error a dataflow meets while it steps is no command's (Seq 0), in a
// new dataflow's first passes too, which its create runs: those read what
// the other workers sent, which they may have sent after applying later
// commands. Here worker 0 applies the create and the advance after it and
// sends a bad chunk while worker 1 is still in the create's first passes:
// that worker's error was the create's (Seq 2), the other worker's the
// step's (Seq 0) — two errors of one fault, and in the pair, whose
// runtimes run the same steps at other times, or in another run, not the
// same two. Found by TestMisuseDiff.
func TestAnErrorInACreatesFirstPassesIsAStepsError(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 2)
			s.declare("in", 2) // command 1
			sent := make(chan struct{})
			var once gosync.Once
			s.must(CreateDataflow{Desc: dataflow.Desc{ // command 2
				ID: "d", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					st := c.NewOperator("stall")
					dataflow.AddOutput[*dataflow.Chunk](st)
					if err := st.Build(&stallOp{worker: c.Worker(), sent: sent, sender: s.rts[0].workers[0]}); err != nil {
						return err
					}
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("feed")
					f := &wideFeed{in: dataflow.AddInput(b, "rows", in.Oks), out: dataflow.AddOutput[*dataflow.Chunk](b), sent: func() { once.Do(func() { close(sent) }) }}
					if err := b.Build(f); err != nil {
						return err
					}
					_, err = c.Arrange(dataflow.Collection{Arity: 2, Oks: f.out, Errs: in.Errs}, []int{0})
					return err
				},
			}})
			s.advance("in", 2, frontier.At(3)) // command 3
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if !awaitIdle(testCtx(t).Done(), s.rts...) {
				t.Fatal("never idle")
			}
			var got []string
			for _, e := range s.ctl.TakeErrors() {
				got = append(got, fmt.Sprintf("%d: %v", e.Seq, e))
				if e.Seq == 0 && e.Command != nil {
					t.Errorf("%v: Seq 0 with command %#v", e, e.Command)
				}
			}
			want := []string{`0: dataflow d: arrange oks: chunk breaks the operator contract: operator "feed" sent one of 1 columns to a collection of 2`}
			if !slices.Equal(got, want) {
				t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// failAtOp is an operator that fails once its input's frontier reaches
// at.
type failAtOp struct {
	in   *dataflow.Port[*dataflow.Chunk]
	at   uint64
	fail func(error)
	done bool
}

func (o *failAtOp) Step(in frontier.Frontier) frontier.Frontier {
	o.in.Take()
	if !o.done && frontier.At(o.at).LessEqual(in) {
		o.done = true
		o.fail(errors.New("fault"))
	}
	return in
}

func (o *failAtOp) Shutdown() {}

// A barrier (Sync, Stats) steps the dataflows before it answers: an error
// a step met there named the barrier, an unexported command no controller
// sent, where a step's error names none (Seq 0, nil Command). Whether a
// step runs in a wake or at a barrier is timing, so the command it named
// differed between Solo and the pair too. Here the maintaining runtime is
// held while the advance and Sync's barrier queue, so the step that fails
// runs at the barrier.
func TestAStepsErrorAtABarrierNamesNoCommand(t *testing.T) {
	for _, mode := range []string{"solo", "pair"} {
		t.Run(mode, func(t *testing.T) {
			s := newSetup(t, mode, 1)
			s.declare("in", 2)                         // command 1
			s.must(CreateDataflow{Desc: dataflow.Desc{ // command 2
				ID: "d", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("fails")
					op := &failAtOp{in: dataflow.AddInput(b, "rows", in.Oks), at: 1, fail: c.Failer()}
					dataflow.AddOutput[*dataflow.Chunk](b)
					return b.Build(op)
				},
			}})
			if err := s.ctl.Sync(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			r := s.role(Solo)
			if r == nil {
				r = s.role(Maintenance)
			}
			// The worker holds in a barrier of the test's before the
			// advance is sent: the advance and Sync's barrier then queue
			// behind it (had the worker woken late, it could take the
			// advance with the gate, and the queue would never hold two).
			entered, hold := make(chan struct{}), make(chan struct{})
			var once gosync.Once
			release := func() { once.Do(func() { close(hold) }) }
			t.Cleanup(release) // a failed test leaves no worker held
			r.workers[0].enqueue(queued{cmd: barrier{done: func(*worker) { close(entered); <-hold }}})
			select {
			case <-entered:
			case <-testCtx(t).Done():
				t.Fatal("the worker never took the gate")
			}
			s.advance("in", 2, frontier.At(1)) // command 3
			synced := make(chan error, 1)
			go func() { synced <- s.ctl.Sync(testCtx(t)) }()
			w := r.workers[0]
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				w.qmu.Lock()
				n := len(w.queue)
				w.qmu.Unlock()
				if n >= 2 { // the advance and the barrier
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("Sync's barrier never queued")
				}
			}
			release()
			if err := <-synced; err != nil {
				t.Fatal(err)
			}
			errs := s.ctl.TakeErrors()
			if len(errs) != 1 || errs[0].Seq != 0 || errs[0].Command != nil || errs[0].Error() != "dataflow d: fault" {
				var got []string
				for _, e := range errs {
					got = append(got, fmt.Sprintf("%d %#v: %v", e.Seq, e.Command, e))
				}
				t.Fatalf("errors %q, want one of no command: dataflow d: fault", got)
			}
		})
	}
}

// A CommandError made by hand with no Err (the zero one, say in a test's
// table of wanted errors) prints that it has none, where its Error
// dereferenced the nil Err; one with an Err prints the Err's text.
func TestACommandErrorOfNoErrPrints(t *testing.T) {
	if got, want := (&CommandError{}).Error(), "runtime: CommandError of command 0 with no Err"; got != want {
		t.Errorf("zero CommandError: %q, want %q", got, want)
	}
	if got, want := (&CommandError{Seq: 3}).Error(), "runtime: CommandError of command 3 with no Err"; got != want {
		t.Errorf("CommandError of Seq 3 alone: %q, want %q", got, want)
	}
	if got := (&CommandError{Seq: 3, Err: ErrShutdown}).Error(); got != ErrShutdown.Error() {
		t.Errorf("CommandError of ErrShutdown: %q, want its text", got)
	}
}
