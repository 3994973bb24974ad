// Package scripttest runs text-form tests, so that a package writes its
// tests as scripts of commands with their expected output instead of Go.
//
// A script file is a sequence of cases separated by blank lines. A case is
// a command line (a name and key=value arguments), optional input lines, a
// line "----" and the expected output. Lines starting with "#" before a
// case are comments and are kept when the file is rewritten:
//
//	# Holds: the trace compacts to the meet of the holds.
//	insert
//	[{0}, {2}) since {0}
//	1 | 1 @0 +1
//	----
//	ok
//
// The package under test interprets the commands; Run feeds it each case
// in order and compares what it returns with the expected output. With
// rewrite set (a test flag such as -rewrite, which the test package
// defines), Run writes the file back with the actual outputs instead, for
// review in the diff.
package scripttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Case is one case of a script.
type Case struct {
	File  string
	Line  int               // the command's line, from 1
	Cmd   string            // the command line as written
	Name  string            // its first field
	Args  map[string]string // its key=value fields (a bare field maps to "")
	Input []string          // the lines between the command and "----"

	pre       []string // comment lines before the case
	want, got string
}

// Arg returns argument k, or def if the case has none.
func (c *Case) Arg(k, def string) string {
	if v, ok := c.Args[k]; ok {
		return v
	}
	return def
}

// Parse reads the cases of file.
func Parse(file string) ([]*Case, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cases []*Case
	var cur *Case
	inOut := false
	var out, pre []string
	finish := func() {
		cur.want = strings.Join(out, "\n")
		cases = append(cases, cur)
		cur = nil
	}
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "":
		case cur == nil && strings.HasPrefix(line, "#"):
			pre = append(pre, line)
		case cur == nil:
			cur = newCase(file, i+1, line, pre)
			pre = nil
			inOut, out = false, nil
		case !inOut && line == "----":
			inOut = true
		case !inOut:
			cur.Input = append(cur.Input, line)
		case line == "":
			finish()
		default:
			out = append(out, line)
		}
	}
	if cur != nil {
		finish()
	}
	return cases, nil
}

func newCase(file string, line int, cmd string, pre []string) *Case {
	fields := strings.Fields(cmd)
	c := &Case{File: file, Line: line, Cmd: cmd, Args: map[string]string{}, pre: pre}
	if len(fields) > 0 {
		c.Name = fields[0]
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		c.Args[k] = v
	}
	return c
}

// Run runs every case of file through do, in order, and reports each
// output that differs from the expected one as a test error naming the
// file and line; with rewrite, it writes the file back with the outputs.
func Run(t testing.TB, file string, rewrite bool, do func(c *Case) string) {
	t.Helper()
	cases, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	for _, c := range cases {
		c.got = do(c)
		if !rewrite && c.got != c.want {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", c.File, c.Line, c.Cmd, c.got, c.want)
		}
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(Format(cases)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Format writes cases back in script form, with their actual outputs once
// Run has run them (their expected outputs otherwise).
func Format(cases []*Case) string {
	var sb strings.Builder
	for _, c := range cases {
		for _, l := range c.pre {
			sb.WriteString(l + "\n")
		}
		sb.WriteString(c.Cmd + "\n")
		for _, l := range c.Input {
			sb.WriteString(l + "\n")
		}
		out := c.want
		if c.got != "" || c.want == "" {
			out = c.got
		}
		sb.WriteString("----\n" + out + "\n\n")
	}
	return sb.String()
}

// RunDir runs every file matching pattern (such as "testdata/*.txt") as a
// subtest named after the file; start returns the interpreter of one file,
// so each file starts from a fresh state.
func RunDir(t *testing.T, pattern string, rewrite bool, start func(t *testing.T) func(c *Case) string) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no script matches %s", pattern)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { Run(t, file, rewrite, start(t)) })
	}
}
