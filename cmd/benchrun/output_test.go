package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	cmd.Env = append(os.Environ(), "BENCHRUN_HELPER_ARGS="+string(args))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "benchrun: writing output: ") {
		t.Errorf("benchrun explain lookup > /dev/full: exit %d, stderr %q; want exit 1 and the write error", code, stderr.String())
	}
}
