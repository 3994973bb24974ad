//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/perf/benchfmt"
)

// TestBrokenPipeFailsTheRun: a run whose standard output is a pipe the
// reader closes (benchrun run ... --out r.txt | head) fails as on a full
// disk, exit 1 naming the broken pipe, with its profiles complete and
// nothing temporary left beside them, and --out holding whole lines. It
// was killed by SIGPIPE at its next result line, silently, leaving the
// temporary files of --cpuprofile, --memprofile and --flamegraph in
// their directory.
func TestBrokenPipeFailsTheRun(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	out := filepath.Join(dir, "results.txt")
	args, _ := json.Marshal([]string{"run", "groupby", "--count", "50", "--out", out, "--progress", "off",
		"--cpuprofile", filepath.Join(dir, "cpu.pprof"), "--memprofile", filepath.Join(dir, "mem.pprof"), "--flamegraph", filepath.Join(dir, "flame.html")})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read up to the first result line, as head would, then go away.
	read := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "BenchmarkGroupby") {
				read <- true
				return
			}
		}
		read <- false
	}()
	select {
	case ok := <-read:
		if !ok {
			cmd.Wait()
			t.Fatalf("standard output ended without a result line; stderr:\n%s", stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no result line within 60s; stderr:\n%s", stderr.String())
	}
	stdout.Close()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (%v), want 1; stderr:\n%s", code, cmd.ProcessState, stderr.String())
	}
	if !strings.Contains(stderr.String(), "benchrun: writing results: ") || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr does not name the broken pipe:\n%s", stderr.String())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// No flame graph: the run failed, as on a full disk.
	if want := []string{"cpu.pprof", "mem.pprof", "results.txt"}; !slices.Equal(names, want) {
		t.Errorf("files after the broken pipe: %q, want %q", names, want)
	}
	for _, p := range []string{"cpu.pprof", "mem.pprof"} {
		if _, err := profile.Parse(mustOpen(t, filepath.Join(dir, p))); err != nil {
			t.Errorf("%s is not a complete profile: %v", p, err)
		}
	}
	data, _ := os.ReadFile(out)
	if !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("--out ends mid-line:\n%s", data)
	}
	r := benchfmt.NewReader(bytes.NewReader(data), out)
	for r.Scan() {
		if e, ok := r.Result().(*benchfmt.SyntaxError); ok {
			t.Errorf("--out holds a broken line: %v", e)
		}
	}
}

// fsizeEnv, set for a child started by a test, is the file size limit
// (RLIMIT_FSIZE, in bytes) the child runs under: a write past it fails
// with EFBIG after writing what fits, as on a disk that fills up.
const fsizeEnv = "BENCHRUN_CHILD_FSIZE"

func init() {
	childSetup = func() {
		if v := os.Getenv(fsizeEnv); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				panic(err)
			}
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
	}
}

// TestFullDiskLeavesWholeLines: a run whose --out cannot take a result
// line whole (a disk that fills up, here a file size limit that cuts the
// write short) fails (exit 1) with --out ending at the last line written
// whole, every line of it a result file's, so that benchcmp and benchstat
// still read what was measured. The half line it left made benchcmp
// refuse the whole file as truncated.
func TestFullDiskLeavesWholeLines(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	out := filepath.Join(dir, "results.txt")
	args, _ := json.Marshal([]string{"run", "groupby", "--count", "50", "--out", out, "--progress", "off"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = root
	// The Unit lines, the configuration lines and a few result lines
	// fit; the limit falls inside a later line.
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args), fsizeEnv+"=1000")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the run did not end within 60s; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "benchrun: writing results: ") {
		t.Errorf("stderr does not name the failed write:\n%s", stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 1000 || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("--out (%d bytes) ends mid-line:\n%s", len(data), data)
	}
	if !bytes.HasPrefix(stdout.Bytes(), data) {
		t.Errorf("--out is not the start of what standard output got:\n%s", data)
	}
	r := benchfmt.NewReader(bytes.NewReader(data), out)
	results := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results++
		case *benchfmt.SyntaxError:
			t.Errorf("--out holds a broken line: %v", rec)
		}
	}
	if results == 0 {
		t.Errorf("--out holds no result line:\n%s", data)
	}
}
