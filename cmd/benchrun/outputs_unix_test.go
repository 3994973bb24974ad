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
	names := dirNames(t, dir)
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

// outsideCheckout returns a directory outside this repository for a child
// run under a file size limit to work in: run in a checkout, benchrun asks
// git whether it is modified (the commit configuration line), and git,
// under the limit too, was killed writing the index's lock file, leaving
// it behind in the checkout.
func outsideCheckout(t *testing.T) string {
	t.Helper()
	return t.TempDir()
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
	dir := t.TempDir()
	out := filepath.Join(dir, "results.txt")
	args, _ := json.Marshal([]string{"run", "groupby", "--count", "50", "--out", out, "--progress", "off"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = outsideCheckout(t)
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

// TestProfileWriteErrorNamesTheFile: a profile or flame graph that cannot
// be written (a full disk; here a file size limit) fails the run naming
// the file as the flag gave it, and leaves no file, temporary or
// half-written. The message named the temporary file the output was
// written through (write .cpu.pprof.tmp3253468176: ...), removed with
// the failure, a file the user never named. With no --cpuprofile, the
// flame graph's own profile, kept in TMPDIR, is named as the flame
// graph's, not as a --cpuprofile the user did not give.
func TestProfileWriteErrorNamesTheFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string // each a flag and a file of dir
		limit string
		want  string // the message after "benchrun: ", {dir} and {tmp} the directories
		keep  []string
	}{
		{"cpuprofile", []string{"--cpuprofile", "cpu.pprof"}, "100", "--cpuprofile: write {dir}/cpu.pprof: file too large", nil},
		{"memprofile", []string{"--memprofile", "mem.pprof"}, "100", "--memprofile: write {dir}/mem.pprof: file too large", nil},
		// The CPU profile fits; the page, tens of kilobytes, does not.
		{"flamegraph", []string{"--cpuprofile", "cpu.pprof", "--flamegraph", "flame.html"}, "20000", "flame graph: write {dir}/flame.html: file too large", []string{"cpu.pprof"}},
		{"flamegraph's profile", []string{"--flamegraph", "flame.html"}, "100", "--flamegraph: the CPU profile it is drawn from, in the temporary directory {tmp} (TMPDIR): file too large", nil},
		// --cpuprofile no file to read back: the flame graph's copy.
		{"flamegraph's copy", []string{"--cpuprofile", os.DevNull, "--flamegraph", "flame.html"}, "100", "--flamegraph: the CPU profile it is drawn from, in the temporary directory {tmp} (TMPDIR): file too large", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			a := []string{"run", "groupby", "--count", "2", "--progress", "off"}
			for i := 0; i < len(tc.flags); i += 2 {
				f := tc.flags[i+1]
				if !filepath.IsAbs(f) {
					f = filepath.Join(dir, f)
				}
				a = append(a, tc.flags[i], f)
			}
			args, _ := json.Marshal(a)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = outsideCheckout(t)
			cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args), fsizeEnv+"="+tc.limit, "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
			}
			want := "benchrun: " + strings.NewReplacer("{dir}", dir, "{tmp}", tmp).Replace(tc.want) + "\n"
			if !strings.HasSuffix(stderr.String(), want) {
				t.Errorf("stderr:\n%s\nwant it to end with\n%s", stderr.String(), want)
			}
			if names := dirNames(t, dir); !slices.Equal(names, tc.keep) {
				t.Errorf("files after the failed write: %q, want %q", names, tc.keep)
			}
		})
	}
}

// TestGenWriteErrorNamesTheFile: gen's input that cannot be written (a
// full disk; here a file size limit) fails naming the file once, with no
// file or directory left; the message named the temporary file the CSV
// was written through.
func TestGenWriteErrorNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "g")
	args, _ := json.Marshal([]string{"gen", "groupby", "--out", out})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = outsideCheckout(t)
	cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args), fsizeEnv+"=100")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	if want := "benchrun: " + filepath.Join(out, "sales.csv") + ": file too large\n"; stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant\n%s", stderr.String(), want)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 || stdout.Len() != 0 {
		t.Errorf("after the failed write: %v (%v), standard output %q", entries, err, stdout.String())
	}
}
