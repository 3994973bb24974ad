package dataflow

import "testing"

// TestInputShutdownKeepsNoSubscriber: an input's subscribers shut down in
// turn leave no pointer to any of them in the subscriber array, spare
// capacity included. The array's element removal by append left a copy of
// the last subscriber there, which kept that operator, its dataflow and
// its pending chunks reachable after its drop for the input's life.
func TestInputShutdownKeepsNoSubscriber(t *testing.T) {
	l := &inputLog{arity: 1}
	ops := []*inputOp{{log: l}, {log: l}, {log: l}}
	l.subs = append(l.subs, ops...)
	for k, o := range ops {
		o.Shutdown()
		all := l.subs[:cap(l.subs)]
		for i, s := range all {
			if i >= len(l.subs) && s != nil {
				t.Errorf("after %d shutdowns: spare slot %d of the subscribers holds an operator", k+1, i)
			}
			for _, gone := range ops[:k+1] {
				if s == gone {
					t.Errorf("after %d shutdowns: slot %d holds a shut-down operator", k+1, i)
				}
			}
		}
		if want := len(ops) - k - 1; len(l.subs) != want {
			t.Fatalf("after %d shutdowns: %d subscribers, want %d", k+1, len(l.subs), want)
		}
	}
}
