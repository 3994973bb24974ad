package dataflow

import (
	"slices"
	"testing"
)

// A port's Take returns what was sent since the last, in order; the slice
// stays as returned through the sends after it, until the next Take; that
// Take clears it (the port keeps no message alive) and its array takes the
// sends after; and a port that receives every step allocates nothing once
// its two arrays are grown.
func TestPortTakesTurnsWithTwoArrays(t *testing.T) {
	s := newStream[*int](&Dataflow{}, &node{})
	p := s.subscribe()
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
	p := s.subscribe()
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
