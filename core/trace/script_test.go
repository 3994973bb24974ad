package trace

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
	"github.com/tracebench/tracebench/internal/scripttest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata expectations with actual output")

// TestScripts runs the text-form tests in testdata/*.txt. Each case is a
// command line, optional input lines, a "----" line and the expected output,
// separated from the next case by a blank line. Commands:
//
//	new key=K val=V           a fresh trace; its first handle is h0
//	insert                    input: a batch in batch.Parse form
//	clone h=A as=B            B := A.Clone()
//	release h=A
//	logical h=A f={t}         A.SetLogicalCompaction
//	physical h=A f={t}        A.SetPhysicalCompaction
//	exert [effort=N]          exert until quiescent (or once with effort)
//	cut h=A f={t}             A.BatchesThrough, printed as updates or the error
//	acc h=A t=T               accumulation at T of the whole trace through A
//	holds                     the storage's compaction frontiers and the holds
//
// Run with -rewrite to regenerate expectations.
func TestScripts(t *testing.T) {
	scripttest.RunDir(t, "testdata/*.txt", *rewrite, func(t *testing.T) func(*scripttest.Case) string {
		return (&script{t: t, handles: map[string]*Handle{}}).do
	})
}

// script is the state of one script file: the trace, its writer, and its
// handles by name.
type script struct {
	t       *testing.T
	ar      batch.Arity
	w       *Writer
	handles map[string]*Handle
}

func (s *script) anyHandle() *Handle {
	for _, k := range slices.Sorted(maps.Keys(s.handles)) {
		if !s.handles[k].Released() {
			return s.handles[k]
		}
	}
	return nil
}

func (s *script) do(c *scripttest.Case) string {
	args := c.Args
	fr := func() frontier.Frontier { return frontier.MustParse(args["f"]) }
	h := s.handles[args["h"]]
	switch c.Name {
	case "new":
		ka, _ := strconv.Atoi(args["key"])
		va, _ := strconv.Atoi(args["val"])
		s.ar = batch.Arity{Key: ka, Val: va}
		s.handles = map[string]*Handle{}
		s.handles["h0"], s.w = NewSpine(s.ar, spine.Options{})
		return "ok"
	case "insert":
		b, err := batch.Parse(s.ar, strings.Join(c.Input, "\n"))
		if err == nil {
			err = s.w.Insert(b)
		}
		return errOr(err, "ok")
	case "clone":
		s.handles[args["as"]] = h.Clone()
		return "ok"
	case "release":
		h.Release()
		return "ok"
	case "logical":
		h.SetLogicalCompaction(fr())
		return fmt.Sprintf("%s logical %v", args["h"], h.LogicalCompaction())
	case "physical":
		h.SetPhysicalCompaction(fr())
		return fmt.Sprintf("%s physical %v", args["h"], h.PhysicalCompaction())
	case "exert":
		if e, ok := args["effort"]; ok {
			n, _ := strconv.ParseInt(e, 10, 64)
			s.w.Exert(n)
		} else {
			for s.w.Exert(1 << 20) {
			}
		}
		if st := s.anyHandle(); st != nil && st.State().Storage() != nil {
			return strings.TrimSpace(st.State().Storage().(*spine.Spine).String())
		}
		return "dropped"
	case "cut":
		bs, err := h.BatchesThrough(fr())
		if err != nil {
			return "error: " + err.Error()
		}
		var lines []string
		for _, b := range bs {
			lines = append(lines, b.String())
		}
		if len(lines) == 0 {
			return "(nothing)"
		}
		return strings.Join(lines, "\n")
	case "acc":
		tm, _ := strconv.ParseUint(args["t"], 10, 64)
		return accumulateString(s.t, h, tm)
	case "holds":
		st := h.State()
		if st.Storage() == nil {
			return fmt.Sprintf("dropped; live %d", st.Live())
		}
		lh, ph := st.LogicalHolds(), st.PhysicalHolds()
		return fmt.Sprintf("storage logical %v physical %v; holds logical %s physical %s; live %d",
			st.Storage().LogicalCompaction(), st.Storage().PhysicalCompaction(), lh.String(), ph.String(), st.Live())
	}
	s.t.Fatalf("%s:%d: unknown command %q", c.File, c.Line, c.Name)
	return ""
}

func errOr(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

// accumulateString prints the trace's collection at time tm, read through h.
func accumulateString(t *testing.T, h *Handle, tm uint64) string {
	bs, err := h.BatchesThrough(frontier.Empty())
	if err != nil {
		return "error: " + err.Error()
	}
	acc := map[string]int64{}
	for _, b := range bs {
		for _, u := range b.Updates() {
			if u.Time <= tm {
				k := batch.Update{Key: u.Key, Val: u.Val}.String()
				k = strings.TrimSuffix(k, " @0 0")
				acc[k] += u.Diff
			}
		}
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(acc)) {
		if acc[k] != 0 {
			lines = append(lines, fmt.Sprintf("%s: %+d", k, acc[k]))
		}
	}
	if len(lines) == 0 {
		return "(empty)"
	}
	return strings.Join(lines, "\n")
}
