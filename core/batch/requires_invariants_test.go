//go:build invariants

package batch

import (
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// WithDesc under a description that an update of the batch lies outside
// (B3) returned the batch unchecked. Checking takes a pass over the
// updates, so invariant builds make it, and panic naming the time.
func TestWithDescThatItsUpdatesBreakPanics(t *testing.T) {
	ar := Arity{Key: 1, Val: 1}
	bld := NewBuilder(ar, 1)
	bld.Push1(1, 1, 5, 1)
	b, err := bld.Build(frontier.At(0), frontier.At(10))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []frontier.Description{
		{Lower: frontier.At(6), Upper: frontier.At(10), Since: frontier.Min()},
		{Lower: frontier.At(0), Upper: frontier.At(5), Since: frontier.Min()},
	} {
		panicsWith(t, "WithDesc("+d.String()+")", "batch: WithDesc", func() { b.WithDesc(d) })
	}
	// An honest description: a since the time is advanced to, beyond the
	// upper (B3), and a wider range.
	b.WithDesc(frontier.Description{Lower: frontier.At(0), Upper: frontier.At(5), Since: frontier.At(5)})
	b.WithDesc(frontier.Description{Lower: frontier.At(0), Upper: frontier.At(20), Since: frontier.Min()})
}
