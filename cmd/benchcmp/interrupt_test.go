//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goCatchingInterrupt is a stand-in for go that behaves as go does on
// Ctrl-C: it catches SIGINT and exits 1 instead of dying of the signal. Its
// first call (the download step) waits for the signal, up to 30 s; every
// later call fails at once, so that a script that goes on after the
// interrupt ends soon.
const goCatchingInterrupt = `#!/bin/sh
case "$1" in version) echo "go version stub"; exit 0 ;; esac
if [ -e "$STUB_DIR/started" ]; then echo "go stub: $*"; exit 1; fi
echo "go stub: $*"
trap 'echo "go stub: interrupted"; exit 1' INT
: >"$STUB_DIR/started"
i=0
while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
exit 1
`

// Ctrl-C during a step of scripts/test.sh cut that step short and the
// script went on with the next one: go catches SIGINT and exits 1, so bash
// took the step for a failed one. It now stops at once, with exit 130, and
// leaves nothing in $TMPDIR.
func TestTestScriptStopsOnInterrupt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	stubs := t.TempDir()
	if err := os.WriteFile(filepath.Join(stubs, "go"), []byte(goCatchingInterrupt), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gofmt", "apt-get", "sudo"} {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\nexit 97\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("bash", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
		"STUB_DIR="+stubs, "TMPDIR="+tmp, "MUTANTS_SUBSET=1")
	// Its own process group, as a terminal's foreground job: Ctrl-C
	// sends SIGINT to every process of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(stubs, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("the download step did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("still running a minute after SIGINT:\n%s", out.String())
	}
	got := out.String()
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.ExitCode() != 130 {
		t.Errorf("%v, want exit 130 after SIGINT:\n%s", werr, got)
	}
	if strings.Contains(got, "== step: tidy") {
		t.Errorf("the next step ran after SIGINT:\n%s", got)
	}
	if !strings.Contains(got, "test.sh: interrupted during step download") {
		t.Errorf("no message naming the interrupted step:\n%s", got)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		t.Errorf("left in $TMPDIR (%v): %v", err, left)
	}
}
