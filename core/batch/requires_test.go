package batch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// panicsWith runs f and fails unless it panics with a message holding want.
func panicsWith(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, want) {
			t.Fatalf("%s panicked with %q, want a panic holding %q", what, msg, want)
		}
	}()
	f()
}

// ProjectVals of columns outside the val row read a neighbouring row's
// columns (or, for a batch without updates, returned a batch of another
// arity) and panicked with an index out of range only if it ran off the
// end. The range is checked first, once a call, and a bad one panics
// naming it.
func TestProjectValsOfColumnsOutOfRangePanicsNamingThem(t *testing.T) {
	ar := Arity{Key: 1, Val: 2}
	bld := NewBuilder(ar, 2)
	bld.Push([]int64{1}, []int64{10, 11}, 0, 1)
	bld.Push([]int64{2}, []int64{20, 21}, 0, 1)
	b, err := bld.Build(frontier.At(0), frontier.At(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Batch{b, Empty(ar, frontier.At(0), frontier.At(1))} {
		for _, r := range [][2]int{{-1, 1}, {1, 0}, {0, 3}, {2, 3}} {
			panicsWith(t, fmt.Sprintf("ProjectVals(%d, %d) of %d updates", r[0], r[1], x.Len()), "batch: ProjectVals of val columns", func() { x.ProjectVals(r[0], r[1]) })
		}
	}
	if got, ok := b.ProjectVals(1, 2); !ok || got.Arity() != (Arity{Key: 1, Val: 1}) {
		t.Fatalf("ProjectVals(1, 2) = %v, %v", got, ok)
	}
}

// PushRow of a key or val column outside the row panicked with an index
// out of range (a negative column, or one past the row's end). It is now
// refused as a chunk of such columns is: the update is dropped, the next
// Seal returns ErrChunkShape and keeps the buffered updates, and the seal
// after returns them.
func TestPushRowOfAColumnOutsideTheRowIsRefused(t *testing.T) {
	for _, ar := range []Arity{{Key: 1, Val: 1}, {Key: 2, Val: 1}, {Key: 1, Val: 0}} {
		row := []int64{7, 8, 9}
		good := func(n int) []int {
			cols := make([]int, n)
			for i := range cols {
				cols[i] = i
			}
			return cols
		}
		for _, bad := range []int{3, -1} {
			for _, side := range []string{"key", "val"} {
				if side == "val" && ar.Val == 0 {
					continue
				}
				name := fmt.Sprintf("%v: %s column %d", ar, side, bad)
				bt := NewBatcher(ar, 4)
				bt.PushRow(row, good(ar.Key), good(ar.Val), 0, 1)
				kc, vc := good(ar.Key), good(ar.Val)
				if side == "key" {
					kc[len(kc)-1] = bad
				} else {
					vc[len(vc)-1] = bad
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("%s: PushRow panicked: %v", name, p)
						}
					}()
					bt.PushRow(row, kc, vc, 0, 1)
				}()
				// A good row after the refused one lands whole: the refused
				// row left no column of it behind.
				bt.PushRow([]int64{1, 2, 3}, good(ar.Key), good(ar.Val), 0, 1)
				if got, err := bt.Seal(frontier.At(0), frontier.At(1)); !errors.Is(err, ErrChunkShape) || got != nil {
					t.Fatalf("%s: Seal = %v, %v, want ErrChunkShape", name, got, err)
				}
				got, err := bt.Seal(frontier.At(0), frontier.At(1))
				if err != nil || got.Len() != 2 {
					t.Fatalf("%s: the seal after = %v, %v, want the two good updates", name, got, err)
				}
				rows, _, _ := got.Rows()
				flat := func(r []int64) []int64 { return append(slices.Clone(r[:ar.Key]), r[:ar.Val]...) }
				want := append(flat([]int64{1, 2, 3}), flat(row)...)
				if !slices.Equal(rows, want) {
					t.Fatalf("%s: the seal after holds rows %v, want %v", name, rows, want)
				}
			}
		}
	}
}
