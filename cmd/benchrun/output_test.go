package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestWriteErrorsFail checks that a command whose output cannot be
// written exits 1 with a message instead of 0 with the output lost.
func TestWriteErrorsFail(t *testing.T) {
	t.Chdir("../..")
	tmp := t.TempDir()
	for _, args := range [][]string{
		{"explain", "lookup"},
		{"list"},
		{"validate", "lookup"},
		{"gen", "lookup", "--out", filepath.Join(tmp, "gen")},
		{"eval", "internal/benchrun/testdata/eval/small.json", "--at", "1"},
		{"check", "internal/benchrun/testdata/eval/small.json"},
		{"explain", "--help"},
		{"completion", "bash"},
		{"run", "groupby", "--progress", "off"},
	} {
		var errOut bytes.Buffer
		code := runWith(context.Background(), fullWriter{}, &errOut, args, slowEngine{})
		if code != 1 || !strings.Contains(errOut.String(), "benchrun: writing ") && strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("benchrun %s with stdout full: exit %d, stderr %q; want exit 1 naming the write error", strings.Join(args, " "), code, errOut.String())
		}
	}
}

// TestDevFull runs a real benchrun process with stdout on /dev/full.
func TestDevFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	root, _ := filepath.Abs("../..")
	args, _ := json.Marshal([]string{"explain", "lookup"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "benchrun: writing output: ") {
		t.Errorf("benchrun explain lookup > /dev/full: exit %d, stderr %q; want exit 1 and the write error", code, stderr.String())
	}
}

// TestStdoutIsAnInput: a command whose standard output or error is a
// file it reads (benchrun run w.json >> w.json, or the results into a CSV
// input) appended its output to it, and one the shell had emptied (eval
// w.json --at 1 > w.json) failed as a spec of invalid JSON. Each is bad
// usage naming the file, with nothing written to it: a refusal because
// standard error is the file goes to standard output instead (it had been
// appended to the file it refused to change).
func TestStdoutIsAnInput(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../internal/benchrun/testdata/eval/small.json")
	if err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "w.json")
	csvSpec := filepath.Join(dir, "c.json")
	csvPath := filepath.Join(dir, "in.csv")
	for p, content := range map[string]string{
		specPath: string(src),
		csvSpec:  `{"version": 1, "name": "c", "inputs": {"a": {"columns": ["x"], "csv": "in.csv"}}, "query": {"from": [{"as": "a", "collection": "a"}]}}`,
		csvPath:  "time,diff,x\n0,1,7\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args   []string
		file   string
		stderr bool
		want   string
	}{
		{[]string{"run", specPath, "--index", "direct", "--progress", "off"}, specPath, false, "standard output is " + specPath + ", a spec file this command reads"},
		{[]string{"run", specPath, "--index", "direct", "--progress", "on"}, specPath, true, "standard error is " + specPath + ", a spec file this command reads"},
		{[]string{"eval", specPath, "--at", "1"}, specPath, false, "standard output is " + specPath},
		{[]string{"validate", specPath}, specPath, false, "standard output is " + specPath},
		{[]string{"explain", specPath, "--index", "direct"}, specPath, false, "standard output is " + specPath},
		{[]string{"check", specPath}, specPath, false, "standard output is " + specPath},
		{[]string{"gen", specPath, "--out", filepath.Join(dir, "gen")}, specPath, false, "standard output is " + specPath},
		{[]string{"run", csvSpec, "--index", "direct", "--progress", "off"}, csvPath, false, "standard output is " + csvPath + ", the CSV input a of " + csvSpec + ", which this command reads"},
		{[]string{"eval", csvSpec, "--at", "0"}, csvPath, false, "standard output is " + csvPath + ", the CSV input a of " + csvSpec},
		{[]string{"validate", csvSpec}, csvPath, false, "standard output is " + csvPath + ", the CSV input a of " + csvSpec},
		{[]string{"check", csvSpec}, csvPath, false, "standard output is " + csvPath + ", the CSV input a of " + csvSpec},
		{[]string{"gen", csvSpec, "--out", filepath.Join(dir, "gen")}, csvPath, false, "standard output is " + csvPath + ", the CSV input a of " + csvSpec},
		{[]string{"run", csvSpec, "--index", "direct", "--progress", "on"}, csvPath, true, "standard error is " + csvPath + ", the CSV input a of " + csvSpec},
	} {
		var buf bytes.Buffer
		code, added := appendRun(t, tc.file, func(f *os.File) int {
			out, errOut := io.Writer(f), io.Writer(&buf)
			if tc.stderr {
				out, errOut = &buf, f
			}
			return runWith(context.Background(), out, errOut, tc.args, slowEngine{})
		})
		msg := buf.String()
		if added != "" {
			t.Errorf("benchrun %s: %s changed: %q added", strings.Join(tc.args, " "), tc.file, added)
		}
		if code != 2 || !strings.Contains(msg, tc.want) {
			t.Errorf("benchrun %s: exit %d, message %q; want exit 2 and %q", strings.Join(tc.args, " "), code, msg, tc.want)
		}
		if tc.stderr && strings.Contains(msg, "Benchmark") {
			t.Errorf("benchrun %s: results or progress reached %s", strings.Join(tc.args, " "), tc.file)
		}
	}
	// Redirected with >, the shell empties the CSV before benchrun starts:
	// the refusal names the stream, not only an empty file.
	f, err := os.OpenFile(csvPath, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if code := runWith(context.Background(), f, &buf, []string{"eval", csvSpec, "--at", "0"}, slowEngine{}); code != 2 || !strings.Contains(buf.String(), "standard output is "+csvPath+", the CSV input a of "+csvSpec) {
		t.Errorf("benchrun eval %s > %s: exit %d, message %q; want exit 2 naming standard output", csvSpec, csvPath, code, buf.String())
	}
}

// TestARefusalOfStandardErrorLeavesItsFile: a refusal because standard
// error is a file the command reads or writes (benchrun validate s.json
// 2>> s.json; run --out r.txt 2>> r.txt; gen --out d 2>> d/facts.csv)
// was written to standard error, that very file, which the refusal was
// there to keep as it was. It goes to standard output instead, and
// nowhere when standard output is a regular file too; the file is left
// as it was and the exit status is 2 either way.
func TestARefusalOfStandardErrorLeavesItsFile(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	src, err := os.ReadFile("workloads/examples/lookup.json")
	if err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "s.json")
	results := filepath.Join(dir, "r.txt")
	gen := filepath.Join(dir, "gen")
	if err := os.WriteFile(specPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(results, []byte("KEEP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var genOut bytes.Buffer
	if code := runWith(context.Background(), &genOut, &genOut, []string{"gen", "lookup", "--out", gen}, slowEngine{}); code != 0 {
		t.Fatalf("benchrun gen lookup: exit %d: %s", code, genOut.String())
	}
	for _, tc := range []struct {
		args []string
		file string
		want string
	}{
		{[]string{"validate", specPath}, specPath, "standard error is " + specPath + ", a spec file this command reads"},
		{[]string{"explain", specPath, "--index", "direct"}, specPath, "standard error is " + specPath},
		{[]string{"run", specPath, "--index", "direct", "--progress", "off", "--out", results}, results, "--out: " + results + " is also standard error"},
		{[]string{"gen", "lookup", "--out", gen}, filepath.Join(gen, "facts.csv"), "--out: " + filepath.Join(gen, "facts.csv") + " is also standard error"},
		// A flag that does not parse is found before the files are looked at.
		{[]string{"validate", "--bogus", specPath}, specPath, "unknown flag: --bogus"},
		{[]string{"run", specPath, "--index", "direct", "--progress", "off", "--out=" + results, "--bogus"}, results, "unknown flag: --bogus"},
	} {
		for _, stdoutIsFile := range []bool{false, true} {
			var buf bytes.Buffer
			out := io.Writer(&buf)
			other := filepath.Join(dir, "stdout.txt")
			if stdoutIsFile {
				o, err := os.Create(other)
				if err != nil {
					t.Fatal(err)
				}
				out = o
				defer o.Close()
			}
			code, added := appendRun(t, tc.file, func(f *os.File) int {
				return runWith(context.Background(), out, f, tc.args, slowEngine{})
			})
			name := strings.Join(tc.args, " ") + " 2>> " + tc.file
			if added != "" {
				t.Errorf("benchrun %s: %s changed: %q added", name, tc.file, added)
			}
			if code != 2 {
				t.Errorf("benchrun %s: exit %d, want 2", name, code)
			}
			if !stdoutIsFile && !strings.Contains(buf.String(), tc.want) {
				t.Errorf("benchrun %s: standard output %q; want the refusal, %q", name, buf.String(), tc.want)
			}
			if stdoutIsFile {
				if b, err := os.ReadFile(other); err != nil || len(b) != 0 {
					t.Errorf("benchrun %s > %s: %q written there (%v); want nothing in a regular file", name, other, b, err)
				}
			}
		}
		// Both streams into the file (>> FILE 2>&1): the refusal of
		// standard output, or of standard error, is written nowhere.
		code, added := appendRun(t, tc.file, func(f *os.File) int {
			return runWith(context.Background(), f, f, tc.args, slowEngine{})
		})
		if code != 2 || added != "" {
			t.Errorf("benchrun %s >> %s 2>&1: exit %d, %q added; want exit 2 and nothing added", strings.Join(tc.args, " "), tc.file, code, added)
		}
	}
	// So for a CSV input: eval w.json --at 0 >> data/a.csv 2>&1.
	csvSpec := filepath.Join(dir, "c.json")
	csvPath := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvSpec, []byte(`{"version": 1, "name": "c", "inputs": {"a": {"columns": ["x"], "csv": "in.csv"}}, "query": {"from": [{"as": "a", "collection": "a"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, []byte("time,diff,x\n0,1,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, added := appendRun(t, csvPath, func(f *os.File) int {
		return runWith(context.Background(), f, f, []string{"eval", csvSpec, "--at", "0"}, slowEngine{})
	})
	if code != 2 || added != "" {
		t.Errorf("benchrun eval %s --at 0 >> %s 2>&1: exit %d, %q added; want exit 2 and the file as it was", csvSpec, csvPath, code, added)
	}
}

// appendRun opens file for appending, as a shell's >> or 2>> does, runs
// run with it, and returns run's exit status and what the file gained
// (its whole content when what it held before is no longer its start),
// putting the file back as it was, so that one failure does not make the
// next case fail too.
func appendRun(t *testing.T, file string, run func(f *os.File) int) (int, string) {
	t.Helper()
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	code := run(f)
	f.Close()
	after, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(after, before) {
		return code, ""
	}
	if err := os.WriteFile(file, before, 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) {
		return code, string(after)
	}
	return code, string(after[len(before):])
}
