package dataflow

import (
	"math/rand/v2"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// TestExchangeActivatesOnlyTheReceiversItConcerns: an exchange activates a
// receiving worker when its mailbox gets chunks or when the meet of the
// senders' frontiers moves, not at every sender's step. Every sender's step
// activated every other worker, and every receiver's step took the meet
// of a copy of all W frontiers of its own: O(W²) activations a time and
// O(W²) memory an exchange, which made a delta join of 16 inputs on 256
// workers take 11 s and on 1,024 more than 5 minutes and 11 GB.
func TestExchangeActivatesOnlyTheReceiversItConcerns(t *testing.T) {
	const W = 6
	hub := NewHub(W)
	acts := make([]int, W) // activations of worker w's dataflow
	cp := NewCapture(W)
	envs := make([]*Env, W)
	dfs := make([]*Dataflow, W)
	for w := range W {
		env := testEnv(t, w, W, hub)
		env.Activate = func(*Dataflow) { acts[w]++ }
		env.Inputs = NewInputs(w, W, func(*Dataflow) {}) // inputs' own activations are not counted
		df, err := Build(env, Desc{ID: "x", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
			in, err := c.Input("in", 2)
			if err != nil {
				return err
			}
			c.CaptureChunks(cp, c.Exchange(in.Oks, []int{1}), 2)
			return nil
		}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		envs[w], dfs[w] = env, df
		t.Cleanup(df.Drop)
	}
	stepAll := func() {
		for range 3 {
			for _, df := range dfs {
				df.Step()
			}
		}
	}
	stepAll()
	clear(acts)
	total := func() (n int) {
		for _, a := range acts {
			n += a
		}
		return n
	}

	// The senders advance to 1 one by one: no receiver's frontier moves
	// until the last one does, which activates every other worker once.
	for w := range W {
		if err := envs[w].Inputs.Advance("in", frontier.At(1)); err != nil {
			t.Fatal(err)
		}
		dfs[w].Step()
		if w < W-1 && total() != 0 {
			t.Fatalf("after %d of %d senders advanced, activations %v; want none: the meet has not moved", w+1, W, acts)
		}
	}
	for w, a := range acts {
		if want := 1; w == W-1 {
			if a != 0 {
				t.Errorf("worker %d, the last sender, activated %d times by the others; want 0", w, a)
			}
		} else if a != want {
			t.Errorf("worker %d activated %d times when the meet moved; want %d", w, a, want)
		}
	}
	stepAll()
	for w := range W {
		if f := cp.fronts[w]; f != frontier.At(1) {
			t.Fatalf("worker %d's receiver at %v after every sender advanced to 1, want {1}", w, f)
		}
	}

	// Updates that all go to worker k activate worker k alone.
	const k = 3
	var row []int64
	for a := int64(0); row == nil; a++ {
		for b := int64(0); b < 1000; b++ {
			if Worker(HashCols([]int64{a, b}, []int{0}), W) == 0 && Worker(HashCols([]int64{a, b}, []int{1}), W) == k {
				row = []int64{a, b}
				break
			}
		}
	}
	clear(acts)
	if err := envs[0].Inputs.Send("in", chunk([]int64{1, 1, row[0], row[1]})); err != nil {
		t.Fatal(err)
	}
	dfs[0].Step()
	for w, a := range acts {
		if want := 0; w == k {
			if a != 1 {
				t.Errorf("worker %d, sent the updates, activated %d times; want 1", w, a)
			}
		} else if a != want {
			t.Errorf("worker %d activated %d times by a send to worker %d alone; want 0", w, a, k)
		}
	}
	stepAll()
	if got := cp.At(1); len(got) != 1 {
		t.Fatalf("captured %v at time 1, want the one row", got)
	}
}

// TestExchangeMeetFollowsItsSenders checks the meet an exchange keeps (and
// the count of senders at it) against the meet of every sender's frontier
// after each of many random advances, some to {} (a sender shut down), and
// that advance reports exactly the advances that move it.
func TestExchangeMeetFollowsItsSenders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		w := 1 + rng.IntN(9)
		ch := NewHub(w).join(exchangeKey{df: "x"}, 0, nil)
		fronts := make([]frontier.Frontier, w)
		for step := range 60 {
			s := rng.IntN(w)
			f := fronts[s]
			switch r := rng.IntN(10); {
			case f.IsEmpty():
			case r == 0:
				f = frontier.Empty()
			case r < 4:
				// stays
			default:
				t, _ := f.Time()
				f = frontier.At(t + uint64(rng.IntN(3)))
			}
			before := frontier.Empty()
			for _, g := range fronts {
				before = before.Meet(g)
			}
			fronts[s] = f
			want := frontier.Empty()
			for _, g := range fronts {
				want = want.Meet(g)
			}
			moved := ch.advance(s, f)
			if ch.meet != want || moved != (want != before) {
				t.Fatalf("trial %d step %d: sender %d to %v: meet %v moved %v, want %v moved %v (fronts %v)", trial, step, s, f, ch.meet, moved, want, want != before, fronts)
			}
		}
	}
}
