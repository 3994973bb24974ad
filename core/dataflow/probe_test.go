package dataflow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/frontier"
)

// A WaitPassed blocked before a change returns once the frontier passes its
// time, through every change before it that does not.
func TestProbeWakesWaiter(t *testing.T) {
	p := NewProbe(2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.WaitPassed(ctx, 3) }()
	waiting := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.waiting
	}
	for deadline := time.Now().Add(2 * time.Second); !waiting(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			break // the set below must still wake it: the test fails if not
		}
	}
	p.set(0, frontier.At(5))
	p.set(1, frontier.At(2)) // meet {2}: not passed
	select {
	case err := <-done:
		t.Fatalf("WaitPassed returned %v at frontier %v", err, p.Frontier())
	case <-time.After(20 * time.Millisecond):
	}
	p.set(1, frontier.At(4))
	if err := <-done; err != nil {
		t.Fatalf("WaitPassed: %v (frontier %v)", err, p.Frontier())
	}
}

// With no waiter a change costs no allocation: it runs on every worker every
// round.
func TestProbeSetNoWaiterAllocs(t *testing.T) {
	p := NewProbe(1)
	i := uint64(0)
	if n := testing.AllocsPerRun(100, func() { i++; p.set(0, frontier.At(i)) }); n != 0 {
		t.Fatalf("set allocates %v times per change with no waiter", n)
	}
}

// A probe or capture made for no worker — NewProbe(0), a negative count,
// the zero Probe, Capture or Tally — has no worker whose frontier it could
// meet: it never passes a time (the meet over none would be {}, and a
// caller waiting on it would read an empty answer as complete), and a
// negative count is no panic in the constructor. No runtime can attach
// it, so a wait on it is ErrNoWorker at once, before its context's end
// (here ended already), where it lasted until then: forever, for a
// context with no end.
func TestProbeForNoWorkerNeverPasses(t *testing.T) {
	for name, p := range map[string]*Probe{
		"NewProbe(0)":    NewProbe(0),
		"NewProbe(-1)":   NewProbe(-1),
		"zero Probe":     {},
		"NewCapture(0)":  &NewCapture(0).Probe,
		"NewCapture(-1)": &NewCapture(-1).Probe,
		"zero Capture":   &new(Capture).Probe,
		"NewTally(0)":    &NewTally(0).Probe,
		"zero Tally":     &new(Tally).Probe,
	} {
		if p.Passed(0) || p.Frontier() != frontier.Min() {
			t.Errorf("%s: Passed(0) = %v, frontier %v: want never passed, {0}", name, p.Passed(0), p.Frontier())
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.WaitPassed(ctx, 0); !errors.Is(err, ErrNoWorker) {
			t.Errorf("%s: WaitPassed(0) = %v, want ErrNoWorker", name, err)
		}
	}
}
