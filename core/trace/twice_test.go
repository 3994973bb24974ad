package trace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// A storage backs one trace. A second New over it made a second set of
// holds the first knew nothing of: the second trace's handle moving its
// hold compacted the storage past the first's (whose cuts then read
// coalesced times), and releasing it dropped the storage under the first's
// live handles. New refuses it, naming the misuse; further handles come
// from Clone.
func TestNewOfAStorageThatBacksATraceAlreadyPanics(t *testing.T) {
	ar := batch.Arity{Key: 1, Val: 1}
	sp := spine.New(ar, spine.Options{})
	first, _ := trace.New(sp)
	defer first.Release()
	var second *trace.Handle
	func() {
		defer func() {
			p := recover()
			if msg := fmt.Sprint(p); !strings.Contains(msg, "trace: New of a storage that backs a trace already") {
				t.Errorf("the second New of one storage panicked with %q, want a refusal naming the misuse", msg)
			}
		}()
		second, _ = trace.New(sp)
	}()
	if second != nil {
		// What the second trace did to the first's: its hold moved, the
		// storage compacted past the first handle's {0}.
		second.SetLogicalCompaction(frontier.At(5))
		t.Errorf("the second New of one storage returned a handle; its hold at {5} set the storage's since to %v under the first handle's %v",
			sp.LogicalCompaction(), first.LogicalCompaction())
		second.Release()
	}

	// The freed trace's storage is refused too: it is not a fresh one.
	h, _ := trace.NewSpine(ar, spine.Options{})
	st := h.State().Storage()
	h.Release()
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("New of a freed trace's storage returned a handle; want a refusal")
			}
		}()
		trace.New(st)
	}()
}
