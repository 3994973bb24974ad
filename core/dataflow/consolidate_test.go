package dataflow

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// burst sends, a step at a time, rounds chunks of the same few rows at
// time 0 (each row n times over the rounds), holding its capability at 0
// until the last: an operator upstream of an arrangement that sends a
// great many updates that sum before its frontier moves.
type burst struct {
	rounds, n int
	// distinct sends rows that never repeat: (i, round) instead.
	distinct bool
	again    func()
	out      *Stream[*Chunk]
}

func (o *burst) Step(frontier.Frontier) frontier.Frontier {
	if o.rounds == 0 {
		return frontier.Empty()
	}
	o.rounds--
	c := NewChunk(2, o.n)
	for i := range o.n {
		if o.distinct {
			c.Push([]int64{int64(i), int64(o.rounds)}, 0, 1)
		} else {
			c.Push([]int64{int64(i % 3), int64(i % 2)}, 0, 1)
		}
	}
	o.out.Send(c)
	if o.rounds == 0 {
		return frontier.Empty()
	}
	o.again()
	return frontier.At(0)
}

func (o *burst) Shutdown() {}

// TestArrangeConsolidatesWhatItBuffersBeforeItsFrontierMoves: an
// arrangement fed 200 steps of 50 updates at time 0 before its input's
// frontier moves buffers their sums once it holds consolidateMin updates
// (here 64), not all 10,000, and seals the same batch: six rows with the
// counts the updates add up to.
func TestArrangeConsolidatesWhatItBuffersBeforeItsFrontierMoves(t *testing.T) {
	old := consolidateMin
	consolidateMin = 64
	defer func() { consolidateMin = old }()
	src := &burst{rounds: 200, n: 50}
	op, cp, most := runBurst(t, src)
	if most > 2*consolidateMin+src.n {
		t.Errorf("the arrangement buffered %d updates at once, want at most %d", most, 2*consolidateMin+src.n)
	}
	want := map[[2]int64]int64{}
	for i := range 50 {
		want[[2]int64{int64(i % 3), int64(i % 2)}] += 200
	}
	checkBurst(t, cp, want)
	if op.consolidations < 10 {
		t.Errorf("%d consolidations of a buffer that sums to six rows, want one at each %d updates", op.consolidations, consolidateMin)
	}
}

// TestArrangeConsolidatesRowsThatDoNotSumRarely: 10,000 distinct updates
// at time 0 buffered before the frontier moves are consolidated at 100,
// 850 and 6,800 updates (each consolidation keeps them all, so the next
// waits for eightfold), not at each doubling from consolidateMin (64) on,
// and seal into the same 10,000 rows.
func TestArrangeConsolidatesRowsThatDoNotSumRarely(t *testing.T) {
	old := consolidateMin
	consolidateMin = 64
	defer func() { consolidateMin = old }()
	src := &burst{rounds: 200, n: 50, distinct: true}
	op, cp, _ := runBurst(t, src)
	if op.consolidations != 3 {
		t.Errorf("%d consolidations of 10,000 distinct updates, want 3", op.consolidations)
	}
	want := map[[2]int64]int64{}
	for r := range 200 {
		for i := range 50 {
			want[[2]int64{int64(i), int64(r)}] = 1
		}
	}
	checkBurst(t, cp, want)
}

// runBurst arranges src's updates by their first column and steps the
// dataflow until it stops, returning the oks half's operator, a capture of
// its stream and the most updates its batcher held after a step.
func runBurst(t *testing.T, src *burst) (*arrangeOp, *Capture, int) {
	t.Helper()
	env := testEnv(t, 0, 1, NewHub(1))
	var arr *Arrangement
	cp := NewCapture(1)
	df, err := Build(env, Desc{ID: "q", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(),
		Build: func(c *Context) error {
			b := c.NewOperator("burst")
			src.again = b.StepAgain()
			src.out = AddOutput[*Chunk](b)
			errs := AddOutput[*Chunk](b)
			if err := b.Build(src); err != nil {
				return err
			}
			var err error
			arr, err = c.Arrange(Collection{Arity: 2, Oks: src.out, Errs: errs}, []int{0})
			if err != nil {
				return err
			}
			c.Capture(cp, arr.Oks)
			return nil
		}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(df.Drop)
	var op *arrangeOp
	for _, n := range df.nodes {
		if a, ok := n.op.(*arrangeOp); ok && a.out == arr.Oks.Stream {
			op = a
		}
	}
	if op == nil {
		t.Fatal("no arrange operator for the oks half")
	}
	most := 0
	for df.Step() {
		most = max(most, op.batcher.Len())
	}
	if src.rounds != 0 {
		t.Fatalf("the source stopped with %d rounds left", src.rounds)
	}
	return op, cp, most
}

// checkBurst checks that cp has passed 0 with exactly want's counts at 0.
func checkBurst(t *testing.T, cp *Capture, want map[[2]int64]int64) {
	t.Helper()
	if !cp.Passed(0) {
		t.Fatalf("the arrangement has not passed 0 (frontier %v)", cp.Frontier())
	}
	got := cp.At(0)
	if len(got) != len(want) {
		t.Fatalf("%d rows at 0, want %d: %v", len(got), len(want), got)
	}
	for _, u := range got {
		if d := want[[2]int64{u.Row[0], u.Row[1]}]; d != u.Diff {
			t.Errorf("row %v: count %d, want %d", u.Row, u.Diff, d)
		}
	}
}
