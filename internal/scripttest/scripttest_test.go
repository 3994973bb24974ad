package scripttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const script = `# a comment
echo a=1 b
in line
----
echo a=1 b: [in line]

fail
----
right
`

// TestRunParsesAndRewrites: commands, arguments, input lines and comments
// are parsed; a differing output is an error naming file and line; rewrite
// writes the actual outputs back, comments kept.
func TestRunParsesAndRewrites(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	do := func(c *Case) string {
		if c.Name == "echo" {
			return c.Cmd + ": [" + strings.Join(c.Input, " ") + "]"
		}
		return "wrong at line " + c.Arg("x", "?")
	}
	rec := &recorder{TB: t}
	Run(rec, file, false, do)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "s.txt:7: fail") {
		t.Fatalf("errors %q, want one for line 7", rec.errs)
	}
	cases, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if c := cases[0]; c.Name != "echo" || c.Args["a"] != "1" || c.Arg("b", "none") != "" || c.Line != 2 {
		t.Fatalf("first case parsed as %+v", c)
	}
	Run(t, file, true, do)
	got, _ := os.ReadFile(file)
	if want := strings.Replace(script, "right", "wrong at line ?", 1) + "\n"; string(got) != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", got, want)
	}
}

// recorder collects Errorf calls instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.SplitN(strings.TrimSpace(fmt.Sprintf(format, args...)), "\n", 2)[0])
}

func (r *recorder) Helper() {}
