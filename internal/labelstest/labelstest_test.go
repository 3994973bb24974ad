package labelstest

import (
	"context"
	"runtime/pprof"
	"testing"
)

// Own reads the calling goroutine's labels, not another's: a second
// goroutine with other labels is running beside it.
func TestOwnReadsTheCallersLabels(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	stop, ready := make(chan struct{}), make(chan struct{})
	go func() {
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("who", "other")))
		close(ready)
		<-stop
	}()
	<-ready
	defer close(stop)
	if got := Own(t); got != "" {
		t.Errorf("no labels set: Own = %s", got)
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("who", "me", "a", "1")))
	if got, want := Own(t), `{"a":"1", "who":"me"}`; got != want {
		t.Errorf("Own = %s, want %s", got, want)
	}
}
