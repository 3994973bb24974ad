package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openTerminal opens a new pseudo-terminal and returns its terminal end,
// and a function that closes it and returns what reached the terminal
// once every process has closed it.
func openTerminal(t *testing.T) (pts *os.File, shown func() string) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var text bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&text, ptmx) // until the last terminal end is closed
		close(done)
	}()
	return pts, func() string {
		pts.Close()
		<-done
		return text.String()
	}
}

// TestOutputIsNotTheTerminalByAnyName: --out /dev/tty names the
// controlling terminal, which is refused as its /dev/pts name is when
// standard output or error writes to it (the results twice, or mixed into
// the progress lines), and written when neither does.
func TestOutputIsNotTheTerminalByAnyName(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, tc := range []struct {
		name           string
		stdout, stderr bool // on the terminal
		want           string
	}{
		{"stdout", true, false, "benchrun: --out: /dev/tty is also standard output, where the results go; give --out its own file"},
		{"stderr", false, true, "benchrun: --out: /dev/tty is also standard error, where the progress goes; give --out its own file"},
		{"neither", false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pts, shown := openTerminal(t)
			args, _ := json.Marshal([]string{"run", "groupby", "--param", "rows=10", "--out", "/dev/tty", "--progress", "off"})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args))
			var stdout, stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, &stdout, &stderr
			if tc.stdout {
				cmd.Stdout = pts
			}
			if tc.stderr {
				cmd.Stderr = pts
			}
			// pts, the child's fd 0, becomes its controlling terminal:
			// the one /dev/tty names.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			terminal := shown()
			if tc.want == "" {
				if err != nil || !strings.Contains(stdout.String(), "BenchmarkGroupby/") {
					t.Errorf("exit %d (%v), stdout %q, stderr %q: want the results", code, err, stdout.String(), stderr.String())
				}
				return
			}
			if code != 2 || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q: want exit 2 and nothing written", code, stdout.String())
			}
			if tc.stderr {
				stderr.WriteString(terminal)
			}
			if !strings.Contains(stderr.String(), tc.want) || strings.Contains(terminal, "Benchmark") {
				t.Errorf("stderr %q, terminal %q: want %q and no result", stderr.String(), terminal, tc.want)
			}
		})
	}
}

// TestProgressOnDumbTerminal: on a terminal of TERM=dumb, which cannot
// move its cursor, --progress auto writes a line per sample. It drew the
// bar, whose cursor-movement escapes such a terminal shows as text. So it
// does on a terminal that reports no size (0 rows and columns: a
// pseudo-terminal no one sized, as script(1) makes in a CI job), where
// the bar, fitted into no rows, drew nothing.
func TestProgressOnDumbTerminal(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, tc := range []struct {
		name, term string
		rows, cols uint16
		bar        bool
	}{{"dumb", "dumb", 24, 80, false}, {"xterm", "xterm", 24, 80, true}, {"xterm of no size", "xterm", 0, 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			pts, shown := openTerminal(t)
			if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: tc.rows, Col: tc.cols}); err != nil {
				t.Skipf("cannot size the pseudo-terminal: %v", err)
			}
			args, _ := json.Marshal([]string{"run", "groupby", "--param", "rows=10", "--count", "2"})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args), "TERM="+tc.term)
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, &stdout, pts
			err := cmd.Run()
			terminal := shown()
			if err != nil || !strings.Contains(stdout.String(), "BenchmarkGroupby/") {
				t.Fatalf("%v: want the results on standard output; terminal %q", err, terminal)
			}
			lines := strings.Contains(terminal, "benchrun: 1/")
			escapes := strings.Contains(terminal, "\x1b[")
			if tc.bar && (lines || !strings.Contains(terminal, "samples [")) {
				t.Errorf("%s: want the bar, not lines; terminal %q", tc.name, terminal)
			}
			if !tc.bar && (!lines || escapes) {
				t.Errorf("%s: want a line per sample and no escape sequence; terminal %q", tc.name, terminal)
			}
		})
	}
}
