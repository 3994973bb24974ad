//go:build invariants

package invariants_test

import (
	"strings"
	"testing"

	"github.com/tracebench/tracebench/internal/invariants"
)

// recovered runs f and returns the value it panicked with, or nil.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestEnabled(t *testing.T) {
	if !invariants.Enabled {
		t.Fatal("Enabled = false in a build with the invariants tag")
	}
}

func TestAssertPanics(t *testing.T) {
	v := recovered(func() { invariants.Assert(false, "spine: level 3 out of order") })
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "spine: level 3 out of order") {
		t.Fatalf("Assert(false) panicked with %#v, want a string with the message", v)
	}
}

func TestAssertfPanics(t *testing.T) {
	v := recovered(func() { invariants.Assertf(false, "batch: lower %d > upper %d", 7, 3) })
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "batch: lower 7 > upper 3") {
		t.Fatalf("Assertf(false) panicked with %#v, want a string with the formatted message", v)
	}
}

func TestAssertHolds(t *testing.T) {
	if v := recovered(func() {
		invariants.Assert(true, "unused")
		invariants.Assertf(true, "unused %d", 1)
	}); v != nil {
		t.Fatalf("a true assertion panicked with %#v", v)
	}
}

// TestExclusivePanicsOnOverlappingUse has one goroutine inside an
// operation (between Enter and Exit) while another enters: the second
// panics, naming its operation and the misuse; once the first exits, the
// value is free for any goroutine.
func TestExclusivePanicsOnOverlappingUse(t *testing.T) {
	var e invariants.Exclusive
	inside, leave, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		e.Enter("first op")
		close(inside)
		<-leave
		e.Exit()
	}()
	<-inside
	v := recovered(func() { e.Enter("pkg: T.Second") })
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "pkg: T.Second") || !strings.Contains(s, "two goroutines") {
		t.Fatalf("an overlapping Enter panicked with %#v, want a string naming the operation and the misuse", v)
	}
	close(leave)
	<-done
	if v := recovered(func() { e.Enter("after"); e.Exit() }); v != nil {
		t.Fatalf("Enter after the first goroutine exited panicked with %#v", v)
	}
}

// Every check's panic is a violation (IsViolation), which a dataflow that
// recovers an operator's panic raises again.
func TestChecksPanicWithViolations(t *testing.T) {
	var e invariants.Exclusive
	e.Enter("first")
	for name, check := range map[string]func(){
		"Assert":    func() { invariants.Assert(false, "a") },
		"Assertf":   func() { invariants.Assertf(false, "%s", "a") },
		"Exclusive": func() { e.Enter("second") },
	} {
		func() {
			defer func() {
				if p := recover(); !invariants.IsViolation(p) {
					t.Errorf("%s panicked with %#v: not a violation", name, p)
				}
			}()
			check()
		}()
	}
}
