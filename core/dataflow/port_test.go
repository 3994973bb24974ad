package dataflow

import (
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/tracebench/tracebench/core/frontier"
)

// A port's Take returns what was sent since the last, in order; the slice
// stays as returned through the sends after it, until the next Take; that
// Take clears it (the port keeps no message alive) and its array takes the
// sends after; and a port that receives every step allocates nothing once
// its two arrays are grown.
func TestPortTakesTurnsWithTwoArrays(t *testing.T) {
	s := newStream[*int](&Dataflow{}, &node{})
	p := s.subscribe(s.df)
	msgs := func(vs ...int) []*int {
		out := make([]*int, len(vs))
		for i, v := range vs {
			out[i] = &v
		}
		return out
	}
	vals := func(ms []*int) []int {
		out := make([]int, len(ms))
		for i, m := range ms {
			if m == nil {
				out[i] = -1
				continue
			}
			out[i] = *m
		}
		return out
	}
	if got := p.Take(); len(got) != 0 {
		t.Fatalf("Take of an empty port: %v", vals(got))
	}
	var prev []*int
	for round := range 4 {
		for _, m := range msgs(round*10, round*10+1, round*10+2) {
			s.Send(m)
		}
		got := p.Take()
		if want := []int{round * 10, round*10 + 1, round*10 + 2}; !slices.Equal(vals(got), want) {
			t.Fatalf("round %d: Take %v, want %v", round, vals(got), want)
		}
		// prev (the last round's second Take) is no longer valid: its
		// array is the port's again, cleared.
		for i, m := range prev {
			if m != nil {
				t.Fatalf("round %d: the last Take's slice still holds message %d (%d)", round, i, *m)
			}
		}
		// Sends before the next Take leave what this one returned as it was.
		for _, m := range msgs(-5, -6) {
			s.Send(m)
		}
		if want := []int{round * 10, round*10 + 1, round*10 + 2}; !slices.Equal(vals(got), want) {
			t.Fatalf("round %d: a send overwrote the returned slice: %v, want %v", round, vals(got), want)
		}
		second := p.Take()
		if !slices.Equal(vals(second), []int{-5, -6}) {
			t.Fatalf("round %d: second Take %v, want [-5 -6]", round, vals(second))
		}
		prev = second
	}
	m := msgs(1)[0]
	if n := testing.AllocsPerRun(100, func() {
		s.Send(m)
		s.Send(m)
		p.Take()
	}); n != 0 {
		t.Fatalf("a send and a Take a step: %v allocations, want 0", n)
	}
}

// A burst of messages grows a port's arrays far beyond what its steps
// after need: the port lets that array go instead of keeping it (and its
// twin) for the dataflow's life, while a port that takes as many every
// step keeps both arrays and allocates nothing.
func TestPortLetsABurstsArrayGo(t *testing.T) {
	s := newStream[*int](&Dataflow{}, &node{})
	p := s.subscribe(s.df)
	x := 1
	for range 2 {
		for range 64 * portKeep {
			s.Send(&x)
		}
		if got := p.Take(); len(got) != 64*portKeep {
			t.Fatalf("burst: Take %d messages, want %d", len(got), 64*portKeep)
		}
	}
	for step := range 4 {
		s.Send(&x)
		if got := p.Take(); len(got) != 1 || got[0] != &x {
			t.Fatalf("step %d: Take %v, want one message", step, got)
		}
	}
	if c1, c2 := cap(p.msgs), cap(p.spare); c1 > portKeep || c2 > portKeep {
		t.Fatalf("after a burst and steps of one message: arrays of room %d and %d, want at most %d", c1, c2, portKeep)
	}
	// Steps of more than portKeep messages each keep their arrays.
	n := 2 * portKeep
	for range 2 {
		for range n {
			s.Send(&x)
		}
		p.Take()
	}
	if a := testing.AllocsPerRun(20, func() {
		for range n {
			s.Send(&x)
		}
		p.Take()
	}); a != 0 {
		t.Fatalf("steps of %d messages: %v allocations a step, want 0", n, a)
	}
}

// A Take leaves the port holding none of the messages the last one
// returned, an empty Take too: a port whose stream goes quiet after a step
// (a burst of an input's history, then nothing) keeps neither them nor a
// burst's array until a message comes again, which may be never.
func TestPortKeepsNothingTakenOnceQuiet(t *testing.T) {
	for _, n := range []int{3, 8 * portKeep} {
		s := newStream[*[16]int64](&Dataflow{}, &node{})
		p := s.subscribe(s.df)
		sent := make([]weak.Pointer[[16]int64], n)
		for i := range n {
			m := new([16]int64)
			m[0] = int64(i)
			sent[i] = weak.Make(m)
			s.Send(m)
		}
		if got := p.Take(); len(got) != n || got[n-1][0] != int64(n-1) {
			t.Fatalf("%d messages: Take %d", n, len(got))
		}
		if got := p.Take(); len(got) != 0 {
			t.Fatalf("%d messages: a Take with nothing sent returned %d", n, len(got))
		}
		runtime.GC()
		for i, w := range sent {
			if w.Value() != nil {
				t.Fatalf("%d messages taken, then an empty Take: message %d is still reachable", n, i)
			}
		}
		if c1, c2 := cap(p.msgs), cap(p.spare); c1 > portKeep || c2 > portKeep {
			t.Fatalf("%d messages taken, then an empty Take: arrays of room %d and %d, want at most %d", n, c1, c2, portKeep)
		}
	}
}

// An input's chunks, once arranged and sealed, are the dataflow's no more:
// when the input then goes quiet (loaded, its frontier advanced, nothing
// sent after), nothing on the way keeps them, and their rows can be freed.
// (The input keeps no history, which would keep them.)
func TestSealedChunksAreNotKeptOnceQuiet(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	if err := env.Inputs.DeclareWith("in", 2, InputOptions{NoHistory: true}); err != nil {
		t.Fatal(err)
	}
	var arr *Arrangement
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 2)
		if err != nil {
			return err
		}
		arr, err = c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		c.Keep(arr.Oks.Reader)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Drop()
	var sent []weak.Pointer[Chunk]
	for i := range int64(20) {
		c := chunk([]int64{0, 1, i, 10 * i}, []int64{0, 1, i + 100, 1})
		sent = append(sent, weak.Make(c))
		if err := env.Inputs.Send("in", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Inputs.Advance("in", frontier.At(1)); err != nil {
		t.Fatal(err)
	}
	df.Step()
	if st := env.Manager.TraceStats(); st.Updates != 40 {
		t.Fatalf("arranged %d updates, want 40", st.Updates)
	}
	runtime.GC()
	for i, w := range sent {
		if w.Value() != nil {
			t.Fatalf("chunk %d is still reachable after its updates were sealed and the input went quiet", i)
		}
	}
}

// An input's source operator starts with the input's whole history pending
// (a dataflow created on an input of many rounds) and takes a driver's
// sends between two steps: an array a burst grew goes after a step that
// sends far fewer chunks, every chunk still sent once and in order, and
// steps of one chunk each keep theirs.
func TestInputLetsABurstsArrayGo(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	if err := env.Inputs.Declare("in", 1); err != nil {
		t.Fatal(err)
	}
	const rounds = 8 * portKeep
	for i := range rounds {
		if err := env.Inputs.Send("in", chunk([]int64{int64(i), 1, int64(i)})); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.At(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	var src *inputOp
	var got []*Chunk
	df, err := Build(env, Desc{ID: "d", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		in, err := c.Input("in", 1)
		if err != nil {
			return err
		}
		src = c.df.nodes[len(c.df.nodes)-1].op.(*inputOp)
		c.df.addNode("tap", &chunkTap{in: in.Oks.subscribe(c.df), got: &got}, in.Oks.from)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	df.Step()
	if len(got) != rounds {
		t.Fatalf("hydration sent %d chunks, want %d", len(got), rounds)
	}
	for step := range 3 {
		i := rounds + step
		if err := env.Inputs.Send("in", chunk([]int64{int64(i), 1, int64(i)})); err != nil {
			t.Fatal(err)
		}
		df.Step()
	}
	if len(got) != rounds+3 {
		t.Fatalf("%d chunks sent in all, want %d", len(got), rounds+3)
	}
	for i, c := range got {
		if c.Times[0] != uint64(i) {
			t.Fatalf("chunk %d sent is of time %d", i, c.Times[0])
		}
	}
	if c := cap(src.pending); c > portKeep {
		t.Fatalf("after the hydration and steps of one chunk: pending has room for %d chunks, want at most %d", c, portKeep)
	}
	// What was sent is not kept alive by the array (an input without
	// history holds its chunks nowhere else).
	for i, c := range src.pending[:cap(src.pending)] {
		if c != nil {
			t.Fatalf("after its step the array still holds chunk %d", i)
		}
	}
	c := chunk([]int64{int64(rounds + 3), 1, 0})
	if a := testing.AllocsPerRun(50, func() {
		src.pending = append(src.pending, c)
		src.Step(frontier.Min())
	}); a != 0 {
		t.Fatalf("steps of one chunk: %v allocations a step, want 0", a)
	}
}

// chunkTap records the chunks on a stream.
type chunkTap struct {
	in  *Port[*Chunk]
	got *[]*Chunk
}

func (o *chunkTap) Step(frontier.Frontier) frontier.Frontier {
	*o.got = append(*o.got, o.in.Take()...)
	return frontier.Empty()
}
func (o *chunkTap) Shutdown() {}
