package dataflow

import (
	"context"
	"testing"

	"github.com/tracebench/tracebench/core/frontier"
)

// A wait whose probe passed its time before the workers stopped returns
// nil: the stop only ends a wait that nothing can end any more. Before,
// a wait that read the frontier just before the last worker moved it past
// the time, and saw the stop just after, returned the stop's error for a
// time the probe had passed before the stop.
func TestAWaitForATimePassedBeforeTheStopReturnsNil(t *testing.T) {
	p := NewProbe(1)
	p.attach(0)
	stop := make(chan struct{})
	p.watch(nil, stop, nil)
	p.set(0, frontier.At(3))
	first := true
	probeReadHook = func() {
		// The wait has read {3}: the worker moves the probe past 5, and
		// only then is the runtime stopped.
		if first {
			first = false
			p.set(0, frontier.At(6))
			close(stop)
		}
	}
	defer func() { probeReadHook = nil }()
	if err := p.WaitPassed(context.Background(), 5); err != nil {
		t.Fatalf("WaitPassed(5) = %v after the probe passed 5 and then stopped; want nil", err)
	}
	// A time not passed at the stop is still its error.
	if err := p.WaitPassed(context.Background(), 6); err == nil {
		t.Fatalf("WaitPassed(6) on a stopped probe at {6} = nil; want ErrStopped")
	}
}
