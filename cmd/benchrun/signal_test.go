package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/internal/benchrun"
	"github.com/tracebench/tracebench/workloads/spec"
)

// slowEngine takes a while per sample and stops when cancelled.
type slowEngine struct{}

func (slowEngine) Sample(ctx context.Context, b *benchrun.Benchmark, inputs []*spec.Table) ([]benchfmt.Value, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(150 * time.Millisecond):
	}
	return []benchfmt.Value{{Value: 150e6, Unit: "install-ns"}, {Value: float64(inputs[0].Len()), Unit: "rows"}}, nil
}

// childSetup, when set (by a platform's test file), prepares the process
// TestMain runs as benchrun before it runs: a resource limit, say.
var childSetup func()

// TestMain lets the test binary act as benchrun with a slow engine when
// TestSIGINT starts it as a subprocess.
func TestMain(m *testing.M) {
	benchflame.RunChildIfRequested()
	if args := os.Getenv("BENCHRUN_CHILD_ARGS"); args != "" {
		var a []string
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			panic(err)
		}
		if childSetup != nil {
			childSetup()
		}
		os.Exit(mainExit(a, slowEngine{}))
	}
	os.Exit(m.Run())
}

// TestSIGINT interrupts a real benchrun process after its first result
// line, with SIGINT (Ctrl-C) and with SIGTERM (a CI job cancelled, a
// container stopped): it must exit 130, every line in --out must be a
// complete result, the first one included, and the CPU profile must be
// complete with no temporary file left beside it.
func TestSIGINT(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { interruptRun(t, sig) })
	}
}

func interruptRun(t *testing.T, sig os.Signal) {
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	out := filepath.Join(dir, "results.txt")
	args, _ := json.Marshal([]string{"run", "groupby", "--count", "50", "--out", out, "--progress", "off", "--cpuprofile", filepath.Join(dir, "cpu.pprof")})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, _ := os.ReadFile(out)
		if strings.Contains(string(data), "\nBenchmarkGroupby") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no result line within 60s; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	data, _ := os.ReadFile(out)
	if !strings.HasSuffix(string(data), "\n") || data == nil {
		t.Fatalf("--out ends mid-line:\n%s", data)
	}
	if !strings.Contains(string(data), "goos: "+runtime.GOOS+"\n") || !strings.Contains(string(data), "\ncommit: ") {
		t.Errorf("--out lacks the detected config lines:\n%s", data)
	}
	if !bytes.Equal(data, stdout.Bytes()) {
		t.Errorf("--out and stdout differ")
	}
	r := benchfmt.NewReader(bytes.NewReader(data), out)
	results := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results++
			if v, ok := rec.Value("rows"); !ok || v != 10000 {
				t.Errorf("result %d: rows %v", results, v)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("--out holds a broken line: %v", rec)
		}
	}
	if results < 1 || results >= 50 {
		t.Errorf("%d results after the interrupt, want at least 1 and fewer than 50", results)
	}
	if !strings.Contains(stderr.String(), "interrupted after") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	names := dirNames(t, dir)
	if !slices.Equal(names, []string{"cpu.pprof", "results.txt"}) {
		t.Errorf("files after the interrupt: %q, want the profile and the results alone", names)
	}
	if p, err := profile.Parse(mustOpen(t, filepath.Join(dir, "cpu.pprof"))); err != nil || len(p.SampleType) == 0 {
		t.Errorf("the CPU profile is not complete: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestInterruptedCommandsExit130 checks that gen, validate, explain and
// eval take the command's context, which SIGINT cancels: interrupted,
// they exit 130, print nothing, and gen leaves nothing written (explain
// printed its plan and exited 0).
func TestInterruptedCommandsExit130(t *testing.T) {
	t.Chdir("../..")
	dir := filepath.Join(t.TempDir(), "gen")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"gen", "lookup", "--out", dir},
		{"validate", "workloads/examples/lookup.json", "dd"},
		{"explain", "workloads/examples/lookup.json"},
		{"explain", "lookup"},
		{"eval", "workloads/examples/lookup.json", "--at", "0"},
	} {
		var out, errOut bytes.Buffer
		code := run(ctx, &out, &errOut, args)
		if code != 130 || !strings.Contains(errOut.String(), "benchrun: interrupted") || out.Len() != 0 {
			t.Errorf("benchrun %s interrupted: exit %d, stdout %q, stderr %q; want exit 130", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("gen interrupted created %s", dir)
	}
}

// TestSecondSignalEndsABlockedRun: a run blocked where its cancelled
// context cannot reach it (opening a --cpuprofile named pipe that no one
// reads) ignores the first SIGTERM's cancellation, so the second signal
// must end the process at once.
func TestSecondSignalEndsABlockedRun(t *testing.T) {
	root, _ := filepath.Abs("../..")
	fifo := filepath.Join(t.TempDir(), "cpu.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	args, _ := json.Marshal([]string{"run", "groupby", "--count", "1", "--progress", "off", "--cpuprofile", fifo})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Signalled before it blocks, the run would end at the first signal,
	// as it should, and test nothing here: on a loaded machine starting
	// the child can take longer than any fixed wait. Where /proc tells,
	// wait until a thread of it waits in the pipe's open.
	if !awaitFifoOpen(t, cmd.Process.Pid, done) {
		time.Sleep(500 * time.Millisecond) // blocked in the pipe's open by now, most likely
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Skip("the first signal ended it: the run was not blocked")
	case <-time.After(500 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("a second SIGTERM did not end the blocked run")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("ended with %v, want killed by the second SIGTERM", cmd.ProcessState)
	}
}

// awaitFifoOpen waits until a thread of process pid waits in the open of a
// named pipe for its other end (Linux's wait_for_partner, read from
// /proc/pid/task/*/wchan) and returns true, or returns false at once where
// /proc does not tell: no /proc, or a kernel that names no thread's wait
// (this process's own sleeping threads show none). It fails the test if
// the process ends first or never blocks within a minute.
func awaitFifoOpen(t *testing.T, pid int, done <-chan error) bool {
	t.Helper()
	waits := func(pid string) []string {
		tasks, _ := filepath.Glob("/proc/" + pid + "/task/*/wchan")
		var ws []string
		for _, p := range tasks {
			if b, err := os.ReadFile(p); err == nil {
				if w := strings.TrimSpace(string(b)); w != "" && w != "0" {
					ws = append(ws, w)
				}
			}
		}
		return ws
	}
	if len(waits("self")) == 0 {
		return false
	}
	deadline := time.After(time.Minute)
	for {
		for _, w := range waits(strconv.Itoa(pid)) {
			if strings.Contains(w, "partner") || strings.Contains(w, "fifo") {
				return true
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before it blocked in the pipe's open: %v", err)
		case <-deadline:
			t.Fatal("the run did not block in the pipe's open within a minute")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// dirNames lists the names in dir, sorted (os.ReadDir's order).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
