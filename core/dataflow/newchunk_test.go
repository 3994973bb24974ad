package dataflow

import (
	"math"
	"testing"
)

// A chunk's room is a hint: NewChunk of a count below 0 makes room for
// none, and one of an arity below 0 makes room for no rows, which Check
// then refuses, where each panicked in make (cap out of range). The chunk
// of a negative count is a chunk as any other.
func TestNewChunkOfANegativeCountOrArity(t *testing.T) {
	for _, n := range []int{-1, math.MinInt} {
		c := NewChunk(2, n)
		c.Push([]int64{1, 2}, 0, 1)
		if err := c.Check(); err != nil || c.Len() != 1 {
			t.Errorf("NewChunk(2, %d) with one row pushed: Len %d, Check %v", n, c.Len(), err)
		}
	}
	for _, ar := range []int{-1, math.MinInt} {
		if err := NewChunk(ar, 2).Check(); err == nil {
			t.Errorf("NewChunk(%d, 2).Check() = nil, want the arity refused", ar)
		}
	}
	if c := NewChunk(math.MaxInt/2, 4); cap(c.Rows) != 0 || cap(c.Times) != 4 {
		t.Errorf("NewChunk(MaxInt/2, 4): room for %d row values and %d times, want 0 (the product wraps) and 4", cap(c.Rows), cap(c.Times))
	}
}
