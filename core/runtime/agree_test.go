package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// A typed nil Operator (a nil *pass, which implements Operator) given to
// OperatorBuilder.Build is refused there, naming the dataflow, the
// operator and the type, and the create fails with that error even when
// the Build drops it: stepped, it panicked in a worker. Solo and the pair,
// on one worker and two, report the same.
func TestATypedNilOperatorFailsTheCreate(t *testing.T) {
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.declare("in", 2)
		for _, id := range []string{"returned", "dropped"} {
			s.must(CreateDataflow{Desc: dataflow.Desc{
				ID: id, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(),
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					b := c.NewOperator("nothing")
					dataflow.AddInput(b, "rows", in.Oks)
					err = b.Build((*pass)(nil))
					if id == "returned" {
						return err
					}
					return nil
				},
			}})
		}
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(1))
		got := s.syncedErrors(t)
		var want []string
		for _, id := range []string{"returned", "dropped"} {
			want = append(want, "dataflow "+id+`: operator "nothing": nil Operator (a nil *runtime.pass)`)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
