package trace

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/spine"
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
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScript(t, file) })
	}
}

type scriptCase struct {
	pre       []string // comment lines before the case
	line      int
	cmd       string
	input     []string
	want, got string
}

func parseScript(t *testing.T, file string) []*scriptCase {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []*scriptCase
	var cur *scriptCase
	inOut := false
	var out, pre []string
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "":
		case cur == nil && strings.HasPrefix(line, "#"):
			pre = append(pre, line)
		case cur == nil:
			cur = &scriptCase{pre: pre, line: i + 1, cmd: line}
			pre = nil
			inOut, out = false, nil
		case !inOut && line == "----":
			inOut = true
		case !inOut:
			cur.input = append(cur.input, line)
		case line == "":
			cur.want = strings.Join(out, "\n")
			cases = append(cases, cur)
			cur = nil
		default:
			out = append(out, line)
		}
	}
	if cur != nil {
		cur.want = strings.Join(out, "\n")
		cases = append(cases, cur)
	}
	return cases
}

func runScript(t *testing.T, file string) {
	cases := parseScript(t, file)
	var ar batch.Arity
	var w *Writer
	handles := map[string]*Handle{}
	anyHandle := func() *Handle {
		for _, k := range slices.Sorted(maps.Keys(handles)) {
			if !handles[k].Released() {
				return handles[k]
			}
		}
		return nil
	}
	for _, c := range cases {
		fields := strings.Fields(c.cmd)
		args := map[string]string{}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			args[k] = v
		}
		fr := func() frontier.Frontier { return frontier.MustParse(args["f"]) }
		h := handles[args["h"]]
		var out string
		switch fields[0] {
		case "new":
			ka, _ := strconv.Atoi(args["key"])
			va, _ := strconv.Atoi(args["val"])
			ar = batch.Arity{Key: ka, Val: va}
			handles = map[string]*Handle{}
			handles["h0"], w = NewSpine(ar, spine.Options{})
			out = "ok"
		case "insert":
			b, err := batch.Parse(ar, strings.Join(c.input, "\n"))
			if err == nil {
				err = w.Insert(b)
			}
			out = errOr(err, "ok")
		case "clone":
			handles[args["as"]] = h.Clone()
			out = "ok"
		case "release":
			h.Release()
			out = "ok"
		case "logical":
			h.SetLogicalCompaction(fr())
			out = fmt.Sprintf("%s logical %v", args["h"], h.LogicalCompaction())
		case "physical":
			h.SetPhysicalCompaction(fr())
			out = fmt.Sprintf("%s physical %v", args["h"], h.PhysicalCompaction())
		case "exert":
			if e, ok := args["effort"]; ok {
				n, _ := strconv.ParseInt(e, 10, 64)
				w.Exert(n)
			} else {
				for w.Exert(1 << 20) {
				}
			}
			if st := anyHandle(); st != nil && st.Trace().Storage() != nil {
				out = strings.TrimSpace(st.Trace().Storage().(*spine.Spine).String())
			} else {
				out = "dropped"
			}
		case "cut":
			bs, err := h.BatchesThrough(fr())
			if err != nil {
				out = "error: " + err.Error()
				break
			}
			var lines []string
			for _, b := range bs {
				lines = append(lines, b.String())
			}
			out = strings.Join(lines, "\n")
			if out == "" {
				out = "(nothing)"
			}
		case "acc":
			tm, _ := strconv.ParseUint(args["t"], 10, 64)
			out = accumulateString(t, h, tm)
		case "holds":
			st := h.Trace()
			if st.Storage() == nil {
				out = fmt.Sprintf("dropped; live %d", st.Live())
				break
			}
			lh, ph := st.LogicalHolds(), st.PhysicalHolds()
			out = fmt.Sprintf("storage logical %v physical %v; holds logical %s physical %s; live %d",
				st.Storage().LogicalCompaction(), st.Storage().PhysicalCompaction(), lh.String(), ph.String(), st.Live())
		default:
			t.Fatalf("%s:%d: unknown command %q", file, c.line, fields[0])
		}
		c.got = out
		if !*rewrite && out != c.want {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, c.line, c.cmd, out, c.want)
		}
	}
	if *rewrite {
		var sb strings.Builder
		for _, c := range cases {
			for _, l := range c.pre {
				sb.WriteString(l + "\n")
			}
			sb.WriteString(c.cmd + "\n")
			for _, l := range c.input {
				sb.WriteString(l + "\n")
			}
			sb.WriteString("----\n" + c.got + "\n\n")
		}
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
