package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/workloads/spec"
)

// block is a fenced code block of a Markdown file.
type block struct {
	lang, text string
	line       int
}

// fences returns the fenced code blocks of a Markdown document in order.
func fences(doc string) []block {
	var out []block
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		b := block{lang: strings.TrimPrefix(lines[i], "```"), line: i + 1}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// TestDocsSpec validates every ```json block of docs/spec.md as a spec and
// runs every benchrun command of its ```sh blocks; a ```text block right
// after a one-command ```sh block is that command's exact output.
func TestDocsSpec(t *testing.T) {
	t.Chdir("../..")
	data, err := os.ReadFile("docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	blocks := fences(string(data))
	var jsons, cmds, outputs int
	for i, b := range blocks {
		switch b.lang {
		case "json":
			jsons++
			if _, err := spec.Decode("docs/spec.md block at line "+itoa(b.line), tmp, []byte(b.text)); err != nil {
				t.Errorf("docs/spec.md:%d: the example does not validate: %v", b.line, err)
			}
		case "sh":
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
				if strings.HasPrefix(l, "benchrun ") {
					lines = append(lines, l)
				}
			}
			for _, l := range lines {
				cmds++
				args := strings.Fields(l)[1:]
				for j, a := range args {
					args[j] = strings.ReplaceAll(a, "/tmp/", tmp+"/")
					if strings.HasSuffix(a, ".txt") {
						args[j] = filepath.Join(tmp, a)
					}
				}
				code, out, errOut := execute(t, args...)
				if code != 0 && !(code == 1 && strings.Contains(errOut, "no engine to run benchmarks with")) {
					t.Errorf("docs/spec.md:%d: `%s`: exit %d: %s", b.line, l, code, errOut)
				}
				if len(lines) == 1 && i+1 < len(blocks) && blocks[i+1].lang == "text" && blocks[i+1].line <= b.line+len(strings.Split(b.text, "\n"))+3 {
					outputs++
					if out != blocks[i+1].text {
						t.Errorf("docs/spec.md:%d: `%s` prints\n%s\nthe page shows\n%s", blocks[i+1].line, l, out, blocks[i+1].text)
					}
				}
			}
		}
	}
	if jsons < 3 || cmds < 6 || outputs < 1 {
		t.Errorf("docs/spec.md: %d json examples, %d commands, %d outputs checked; the page lost its examples", jsons, cmds, outputs)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestRunHelpShowsTheSpecDefaults: every default of docs/spec.md's table
// of run's flags that is a value (a number or a word in backquotes) is the
// default run --help shows. --shard showed none, where the table says 0/1.
func TestRunHelpShowsTheSpecDefaults(t *testing.T) {
	doc, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	if code := run(context.Background(), &help, io.Discard, []string{"run", "--help"}); code != 0 {
		t.Fatalf("run --help: exit %d", code)
	}
	value := regexp.MustCompile("^(?:`([^`]+)`|([0-9]+))$")
	n := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		cells := strings.Split(line, " | ")
		flag := strings.Fields(strings.Trim(cells[0], "| `"))[0]
		m := value.FindStringSubmatch(strings.TrimSpace(cells[1]))
		if m == nil || m[0] == "0" { // cobra shows no zero default
			continue
		}
		def := m[1] + m[2]
		var shown string
		for _, h := range strings.Split(help.String(), "\n") {
			if f := strings.Fields(h); len(f) > 0 && f[0] == flag {
				shown = h
			}
		}
		if !strings.Contains(shown, `(default "`+def+`")`) && !strings.Contains(shown, "(default "+def+")") {
			t.Errorf("docs/spec.md gives %s the default %s; run --help: %q", flag, def, shown)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("found %d defaults in docs/spec.md's table of run's flags, want at least 4", n)
	}
}
