package runtime

import (
	"errors"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/trace"
)

// Every Context method given a nil stream (a nil *Stream or Source, the
// zero Arranged, a Collection or an Arrangement missing a half's stream),
// and AddInput, fails the create with an error naming the dataflow, the
// method and the field, wrapping dataflow.ErrNilStream; Keep, Hold and
// Export given a nil trace reader say so. Each Build here drops what the
// call returned and returns nil: the create fails all the same, on every
// worker (no dataflow is left), in Solo as in the pair, on one worker and
// on two. Each panicked in the Build before (dataflow.ErrBuildPanicked,
// "invalid memory address or nil pointer dereference"), naming nothing.
func TestANilStreamIsRefusedNamingTheMethod(t *testing.T) {
	type Chunks = *dataflow.Stream[*dataflow.Chunk]
	cases := []struct {
		name    string
		exports []string
		call    func(c *dataflow.Context, in dataflow.Collection, a *dataflow.Arrangement)
		want    string // after "dataflow <name>: "
		reader  bool   // a nil trace reader, not a nil stream
	}{
		{name: "Exchange", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Exchange(nil, []int{0})
		}, want: "Context.Exchange: nil stream"},
		{name: "ExchangeNamed", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.ExchangeNamed(nil, []int{0}, "mine")
		}, want: "Context.ExchangeNamed: nil stream"},
		{name: "Arrange oks", call: func(c *dataflow.Context, in dataflow.Collection, _ *dataflow.Arrangement) {
			_, _ = c.Arrange(dataflow.Collection{Arity: 2, Errs: in.Errs}, []int{0})
		}, want: "Context.Arrange: nil stream (Collection.Oks)"},
		{name: "Arrange errs", call: func(c *dataflow.Context, in dataflow.Collection, _ *dataflow.Arrangement) {
			_, _ = c.Arrange(dataflow.Collection{Arity: 2, Oks: in.Oks}, []int{0})
		}, want: "Context.Arrange: nil stream (Collection.Errs)"},
		{name: "ArrangeNamed", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			_, _ = c.ArrangeNamed(dataflow.Collection{Arity: 2}, []int{0}, "mine")
		}, want: "Context.ArrangeNamed: nil stream (Collection.Oks)"},
		{name: "CaptureChunks", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.CaptureChunks(dataflow.NewCapture(c.Peers()), nil, 2)
		}, want: "Context.CaptureChunks: nil stream"},
		{name: "Capture", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Capture(dataflow.NewCapture(c.Peers()), dataflow.Arranged{})
		}, want: "Context.Capture: nil stream (Arranged.Stream)"},
		{name: "Tally", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Tally(dataflow.NewTally(c.Peers()), dataflow.Arranged{})
		}, want: "Context.Tally: nil stream (Arranged.Stream)"},
		{name: "Probe", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Probe(dataflow.NewProbe(c.Peers()), nil)
		}, want: "Context.Probe: nil stream"},
		{name: "Probe typed nil", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Probe(dataflow.NewProbe(c.Peers()), Chunks(nil))
		}, want: "Context.Probe: nil stream"},
		{name: "Hold", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Hold(dataflow.Arranged{})
		}, want: "Context.Hold: nil stream (Arranged.Stream)"},
		{name: "Hold reader", call: func(c *dataflow.Context, _ dataflow.Collection, a *dataflow.Arrangement) {
			c.Hold(dataflow.Arranged{Stream: a.Oks.Stream})
		}, want: "Context.Hold: nil trace reader (Arranged.Reader)", reader: true},
		{name: "Keep", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Keep(nil)
		}, want: "Context.Keep: nil trace reader", reader: true},
		{name: "Keep typed nil", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			c.Keep((*trace.Handle)(nil))
		}, want: "Context.Keep: nil trace reader", reader: true},
		{name: "Export", exports: []string{"x"}, call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			_ = c.Export("x", &dataflow.Arrangement{})
		}, want: `Context.Export "x": nil stream (Arrangement.Oks.Stream)`},
		{name: "Export reader", exports: []string{"y"}, call: func(c *dataflow.Context, _ dataflow.Collection, a *dataflow.Arrangement) {
			_ = c.Export("y", &dataflow.Arrangement{Key: a.Key, Arity: a.Arity, Oks: a.Oks, Errs: dataflow.Arranged{Stream: a.Errs.Stream}})
		}, want: `Context.Export "y": nil trace reader (Arrangement.Errs.Reader)`, reader: true},
		{name: "AddInput", call: func(c *dataflow.Context, _ dataflow.Collection, _ *dataflow.Arrangement) {
			b := c.NewOperator("mine")
			op := &pass{in: dataflow.AddInput(b, "rows", Chunks(nil)), out: dataflow.AddOutput[*dataflow.Chunk](b)}
			_ = b.Build(op)
		}, want: `operator "mine": AddInput "rows": nil stream`},
	}
	forEachSetup(t, func(t *testing.T, s *setup) {
		s.send("in", 2, []int64{0, 1, 1, 1})
		s.advance("in", 2, frontier.At(1))
		for _, tc := range cases {
			s.must(CreateDataflow{Desc: dataflow.Desc{ID: tc.name, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: tc.exports,
				Build: func(c *dataflow.Context) error {
					in, err := c.Input("in", 2)
					if err != nil {
						return err
					}
					a, err := c.Arrange(in, []int{0})
					if err != nil {
						return err
					}
					tc.call(c, in, a)
					return nil // the call's error dropped: the create fails all the same
				}}})
		}
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		errs := s.ctl.TakeErrors()
		if len(errs) != len(cases) {
			t.Errorf("%d errors, want one per case (%d):", len(errs), len(cases))
			for _, e := range errs {
				t.Errorf("  %v", e)
			}
			return
		}
		for i, tc := range cases {
			e := errs[i]
			want := "dataflow " + tc.name + ": " + tc.want
			if e.Err.Error() != want {
				t.Errorf("%s: %v\nwant %s", tc.name, e.Err, want)
			}
			if errors.Is(e, dataflow.ErrNilStream) == tc.reader {
				t.Errorf("%s: errors.Is(%v, dataflow.ErrNilStream) is %v", tc.name, e, !tc.reader)
			}
			if errors.Is(e, dataflow.ErrBuildPanicked) {
				t.Errorf("%s: the Build panicked: %v", tc.name, e)
			}
		}
		for _, r := range s.rts {
			st, err := r.Stats(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if st.Dataflows != 0 || st.Indexes != 0 || st.Traces != 0 || st.Exchanges != 0 {
				t.Errorf("%v runtime: the failed creates left %+v", r.Role(), st)
			}
		}
	})
}
