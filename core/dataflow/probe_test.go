package dataflow

import (
	"context"
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
