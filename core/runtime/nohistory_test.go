package runtime

import (
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// TestANoHistoryInputRefusesALateReaderOnEveryWorker: once a NoHistory
// input has been sent an update, every worker refuses a dataflow created
// reading it (dataflow.ErrInputHistory), also a worker the update's rows
// did not reach; so the create's error is the same on one worker and on
// two, even when its as_of is also before the input's since (each worker
// looks at the history first). The update's key falls to the last worker.
// With two workers the first, which got none of its rows, took the input
// as never sent to and refused the reader for its since alone
// (dataflow.ErrInputCompacted), and as the lowest worker failing its
// error was the create's.
func TestANoHistoryInputRefusesALateReaderOnEveryWorker(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		var key int64
		for dataflow.Worker(dataflow.HashCols([]int64{key}, []int{0}), s.workers) != s.workers-1 {
			key++
		}
		s.must(CreateInput{Name: "nh", Arity: 2, NoHistory: true})
		c := dataflow.NewChunk(2, 1)
		c.Push([]int64{key, 1}, 0, 1)
		s.must(Input{Name: "nh", Chunk: c})
		s.must(AdvanceInput{Name: "nh", Frontier: frontier.At(2)})
		s.must(AllowInputCompaction{Name: "nh", Frontier: frontier.At(1)})
		s.must(CreateDataflow{Desc: dataflow.Desc{ID: "late", Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
			Build: func(c *dataflow.Context) error {
				_, err := c.Input("nh", 2)
				return err
			}}})
		want := []string{`dataflow late: input "nh": ` + dataflow.ErrInputHistory.Error()}
		if got := s.syncedErrors(t); !slices.Equal(got, want) {
			t.Fatalf("errors %q, want %q", got, want)
		}
	})
}
