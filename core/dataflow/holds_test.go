package dataflow

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/core/trace"
)

// TestAPaddedPeerBundleBelowItsInnerSinceBuildsAndReads imports a padded
// peer bundle whose inner since is {5} into a dataflow at as_of {2} (§4.5):
// the build is admitted (the padding reports {0}), and the import presents
// nothing in [2, 5) and the publisher's contents, compacted to 5, from 5 on.
// Allowing compaction exactly to the inner since removes the padding and
// moves the peer hold.
func TestAPaddedPeerBundleBelowItsInnerSinceBuildsAndReads(t *testing.T) {
	type row struct{ key, val, time, diff int64 }
	var rows []row
	var ups [][4]int64
	for tm := range int64(10) {
		rows = append(rows, row{tm % 3, tm, tm, 1})
		if tm >= 2 {
			rows = append(rows, row{(tm - 2) % 3, tm - 2, tm, -1})
		}
	}
	for _, r := range rows {
		ups = append(ups, [4]int64{r.key, r.val, r.time, r.diff})
	}
	x := publishIndex(t, ups, 10, 5)
	g := x.g
	env := testEnv(t, 0, 1, NewHub(1))
	peer := g.PeerBundle("idx", frontier.At(5))
	if err := env.Manager.SetPeer("idx", "maintain idx", peer.IntoPadded()); err != nil {
		t.Fatal(err)
	}
	peer.Release() // its padded clone holds on its own
	cp := NewCapture(1)
	df, err := Build(env, Desc{
		ID: "q", AsOf: frontier.At(2), Until: frontier.Empty(),
		Build: func(c *Context) error {
			a, err := c.ImportIndex("idx")
			if err != nil {
				return err
			}
			c.Capture(cp, a.Oks)
			return nil
		},
	}, 1)
	if err != nil {
		t.Fatalf("building at as_of {2} over a padded bundle at {5}: %v", err)
	}
	df.run(16)
	if !cp.Passed(9) {
		t.Fatalf("the import's frontier is %v, want beyond 9", cp.Frontier())
	}
	// An import operator clears the events it sent: its reused buffer keeps
	// no batch alive.
	for _, n := range df.nodes {
		if op, ok := n.op.(*importOp); ok {
			for i, e := range op.evs[:cap(op.evs)] {
				if e != (share.Event{}) {
					t.Fatalf("%s: event buffer slot %d holds %+v after its step", n.name, i, e)
				}
			}
		}
	}
	want := func(t int64) string {
		acc := map[[2]int64]int64{}
		for _, r := range rows {
			if r.time <= max(t, 5) {
				acc[[2]int64{r.key, r.val}] += r.diff
			}
		}
		var keys [][2]int64
		for k, d := range acc {
			if d != 0 {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b [2]int64) int { return slices.Compare(a[:], b[:]) })
		var out []string
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%v%+d", k[:], acc[k]))
		}
		return fmt.Sprint(out)
	}
	got := func(t int64) string {
		var out []string
		for _, rd := range cp.At(frontier.Time(t)) {
			out = append(out, fmt.Sprintf("%v%+d", rd.Row, rd.Diff))
		}
		return fmt.Sprint(out)
	}
	for tm := int64(2); tm < 5; tm++ {
		if g := got(tm); g != "[]" {
			t.Fatalf("at %d, inside the padding: %s, want nothing", tm, g)
		}
	}
	for tm := int64(5); tm < 10; tm++ {
		if g, w := got(tm), want(tm); g != w {
			t.Fatalf("at %d: %s, want %s", tm, g, w)
		}
	}
	// Compaction allowed exactly to the inner since: the padding goes.
	if err := env.Manager.AllowCompaction("idx", frontier.At(5)); err != nil {
		t.Fatal(err)
	}
	bundle, _ := env.Manager.Get("idx")
	if p := bundle.Oks.(*share.Padded); p.IsPadded() || bundle.CompactionFrontier() != frontier.At(5) {
		t.Fatalf("at the inner since: padded %v, compaction %v, want unpadded at {5}", p.IsPadded(), bundle.CompactionFrontier())
	}
	x.drop(t, df, env)
}

// sharedIndex is an index "idx" published in a registry of its own: its
// oks half holds the given updates, its errs half none, both sealed to an
// upper, for tests that import it into a dataflow.
type sharedIndex struct {
	g           *share.Registry
	tok         *share.Token
	oksH, errsH *trace.Handle
	oksS, errsS *share.Spine
}

// publishIndex publishes the updates (key, val, time, diff; times before
// upper) as idx at as_of {since}, both halves' handles compacted to it.
func publishIndex(t *testing.T, ups [][4]int64, upper, since uint64) *sharedIndex {
	t.Helper()
	kv := batch.Arity{Key: 1, Val: 1}
	x := &sharedIndex{g: share.NewRegistry()}
	var oksW, errsW *trace.Writer
	x.oksH, oksW, x.oksS = share.NewTrace(kv, spine.Options{})
	x.errsH, errsW, x.errsS = share.NewTrace(batch.Arity{Key: 1}, spine.Options{})
	bld := batch.NewBuilder(kv, len(ups))
	for _, u := range ups {
		bld.Push1(u[0], u[1], uint64(u[2]), u[3])
	}
	b, err := bld.Build(frontier.At(0), frontier.At(upper))
	if err != nil {
		t.Fatal(err)
	}
	if err := oksW.Insert(b); err != nil {
		t.Fatal(err)
	}
	if err := errsW.Seal(frontier.At(upper)); err != nil {
		t.Fatal(err)
	}
	x.oksH.SetLogicalCompaction(frontier.At(since))
	x.errsH.SetLogicalCompaction(frontier.At(since))
	if x.tok, err = x.g.Publish("idx", frontier.At(since), x.oksS, x.errsS); err != nil {
		t.Fatal(err)
	}
	return x
}

// drop drops df and idx from env, ends the publication and checks that
// the registry holds nothing after.
func (x *sharedIndex) drop(t *testing.T, df *Dataflow, env *Env) {
	t.Helper()
	df.Drop()
	env.Manager.Drop("idx")
	x.tok.Release()
	x.oksH.Release()
	x.errsH.Release()
	if st := x.g.Stats(); st != (share.RegistryStats{}) {
		t.Fatalf("registry after the drops: %+v", st)
	}
}

// TestAnUntrackedTraceAppliesItsHolds: a trace stops being maintained in
// the middle of a wake (its dataflow dropped) while handles elsewhere keep
// it (a re-export): what the wake deferred is applied when it is
// untracked, and later changes apply as they come, though no Maintain
// flushes it again.
func TestAnUntrackedTraceAppliesItsHolds(t *testing.T) {
	m := NewIndexManager()
	h, _, s := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	m.track(s, "t", func() {}, nil)
	m.Defer()
	h.SetLogicalCompaction(frontier.At(3))
	m.untrack(s)
	if got := s.LogicalCompaction(); got != frontier.At(3) {
		t.Fatalf("untracked mid-wake: applied %v, want {3}", got)
	}
	m.Defer()
	h.SetLogicalCompaction(frontier.At(5))
	m.Maintain(1)
	if got := s.LogicalCompaction(); got != frontier.At(5) {
		t.Fatalf("after untrack: applied %v, want {5}", got)
	}
	h.Release()
}

// TestMaintainedImportKeepsTheTraceWritten: a Maintained importer keeps the
// traces it reads written while it lives, so it goes on when the index is
// freed under it (its writer alive), without holding their compaction
// back; once it is dropped too, nothing keeps them and they are let go
// (nor does a build that failed after importing them).
func TestMaintainedImportKeepsTheTraceWritten(t *testing.T) {
	env := testEnv(t, 0, 1, NewHub(1))
	w := buildIndexWriter(t, env)
	// A Maintained build that fails after its import lets its keep-alive
	// go with what it made.
	if _, err := Build(env, Desc{ID: "bad", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		if _, err := c.ImportIndex("idx"); err != nil {
			return err
		}
		return errors.New("boom")
	}}, 0); err == nil {
		t.Fatal("the failing build succeeded")
	}
	p := NewProbe(1)
	m, err := Build(env, Desc{ID: "m", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
		a, err := c.ImportIndex("idx")
		if err != nil {
			return err
		}
		c.Probe(p, a.Oks.Stream)
		return nil
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, sp := indexOks(env)
	b.AllowCompaction(frontier.At(100)) // only the import holds the trace now
	round := func(t0, upper uint64) {
		t.Helper()
		if err := env.Inputs.Send("in", chunk([]int64{int64(t0), 1, int64(t0)})); err != nil {
			t.Fatal(err)
		}
		if err := env.Inputs.Advance("in", frontier.At(upper)); err != nil {
			t.Fatal(err)
		}
		w.Step()
		m.Step()
		env.Manager.Maintain(1 << 10)
	}
	round(0, 5)
	if got := sp.LogicalCompaction(); !frontier.At(0).Less(got) {
		t.Fatalf("the trace is held at %v: the importer's keep-alive holds it back", got)
	}
	if err := env.Manager.AllowCompaction("idx", frontier.Empty()); err != nil {
		t.Fatal(err)
	}
	round(5, 10)
	if !p.Passed(9) {
		t.Fatalf("the importer stopped at %v once the index was freed, its writer alive", p.Frontier())
	}
	if sp.Points() == 0 {
		t.Fatal("the trace was let go while its importer lives")
	}
	m.Drop()
	if sp.Points() != 0 {
		t.Fatal("the trace is kept after its last importer was dropped")
	}
	w.Drop()
}

// TestUnreadMaintainedImportKeepsNothingWritten: a Maintained import that
// nothing reads is closed at build, and its keep-alive goes with it: once
// the index is freed, the writer lets its traces go, though the importer
// lives; an import read through one half keeps them, as one read whole.
func TestUnreadMaintainedImportKeepsNothingWritten(t *testing.T) {
	for _, read := range []string{"nothing", "oks", "errs"} {
		t.Run("read="+read, func(t *testing.T) {
			env := testEnv(t, 0, 1, NewHub(1))
			w := buildIndexWriter(t, env)
			p := NewProbe(1)
			u, err := Build(env, Desc{ID: "u", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Build: func(c *Context) error {
				a, err := c.ImportIndex("idx")
				if err != nil {
					return err
				}
				switch read {
				case "oks":
					c.Probe(p, a.Oks.Stream)
				case "errs":
					c.Probe(p, a.Errs.Stream)
				}
				return nil
			}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, sp := indexOks(env)
			if err := env.Manager.AllowCompaction("idx", frontier.Empty()); err != nil {
				t.Fatal(err)
			}
			if err := env.Inputs.Send("in", chunk([]int64{0, 1, 7})); err != nil {
				t.Fatal(err)
			}
			if err := env.Inputs.Advance("in", frontier.At(5)); err != nil {
				t.Fatal(err)
			}
			w.Step()
			u.Step()
			env.Manager.Maintain(1 << 10)
			if kept := sp.Points() != 0; kept != (read != "nothing") {
				t.Fatalf("the trace is kept: %v, with its importer reading %s", kept, read)
			}
			if read != "nothing" && !p.Passed(4) {
				t.Fatalf("the importer reading %s stopped at %v once the index was freed", read, p.Frontier())
			}
			u.Drop()
			if sp.Points() != 0 {
				t.Fatal("the trace is kept after its importer was dropped")
			}
			w.Drop()
		})
	}
}

// buildIndexWriter builds the Maintained dataflow "w" arranging input "in"
// (one column) by its column and exporting it as index "idx".
func buildIndexWriter(t *testing.T, env *Env) *Dataflow {
	t.Helper()
	w, err := Build(env, Desc{ID: "w", Maintained: true, AsOf: frontier.Min(), Until: frontier.Empty(), Exports: []string{"idx"}, Build: func(c *Context) error {
		in, err := c.Input("in", 1)
		if err != nil {
			return err
		}
		a, err := c.Arrange(in, []int{0})
		if err != nil {
			return err
		}
		return c.Export("idx", a)
	}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// indexOks returns index "idx"'s bundle and the publishing spine of its
// oks half.
func indexOks(env *Env) (*share.Bundle, *share.Spine) {
	b, _ := env.Manager.Get("idx")
	return b, b.Oks.(interface{ State() trace.State }).State().Storage().(*share.Spine)
}
