//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
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
	fail := "#!/bin/sh\nexit 97\n"
	stubs := stubCommands(t, map[string]string{"go": goCatchingInterrupt, "gofmt": fail, "apt-get": fail, "sudo": fail})
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
	var out bytes.Buffer
	werr := interruptWhenStarted(t, cmd, &out, filepath.Join(stubs, "started"))
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

// interruptWhenStarted runs cmd in a process group of its own, as a
// terminal's foreground job, with its output to out; once the file started
// exists it sends SIGINT to every process of the group, as Ctrl-C does,
// and returns what cmd.Wait returns.
func interruptWhenStarted(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, started string) error {
	t.Helper()
	return signalWhenStarted(t, cmd, out, started, syscall.SIGINT, true)
}

// signalWhenStarted is interruptWhenStarted with signal sig, sent to
// every process of the group when group is set, and else to cmd's
// process alone, as kill PID or a CI runner sends it.
func signalWhenStarted(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, started string, sig syscall.Signal, group bool) error {
	t.Helper()
	// A shell started with SIGINT ignored cannot trap it, and a child
	// inherits an ignored signal: this test binary, started so (a
	// shell's background job without job control, which
	// scripts/mutants.sh then runs directly), would start the script
	// deaf to the SIGINT the test sends. Taken here while the script
	// starts, SIGINT reaches it at its default action, as from a terminal.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("%s never appeared:\n%s", started, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	target := cmd.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("still running a minute after %v:\n%s", sig, out.String())
		return nil
	}
}

// goCatchingSignals is goCatchingInterrupt that also says which signal it
// got, in the file got-SIG, and writes its process id to pid; it waits up
// to 10 s for one, and writes done when it ran to its end without.
const goCatchingSignals = `#!/bin/sh
case "$1" in version) echo "go version stub"; exit 0 ;; esac
if [ -e "$STUB_DIR/started" ]; then echo "go stub: $*"; exit 1; fi
echo "go stub: $*"
trap 'echo "go stub: SIGINT"; : >"$STUB_DIR/got-INT"; exit 1' INT
trap 'echo "go stub: SIGTERM"; : >"$STUB_DIR/got-TERM"; exit 1' TERM
echo $$ >"$STUB_DIR/pid"
: >"$STUB_DIR/started"
i=0
while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
: >"$STUB_DIR/done"
exit 1
`

// stepSignals are the ways a script's running step is stopped: Ctrl-C
// (SIGINT to the process group), and SIGINT or SIGTERM to the script
// alone, with the exit status each gives and the signal the step gets.
var stepSignals = []struct {
	name  string
	sig   syscall.Signal
	group bool
	code  int
	got   string
}{
	{"Ctrl-C", syscall.SIGINT, true, 130, "INT"},
	{"SIGINT", syscall.SIGINT, false, 130, "INT"},
	{"SIGTERM", syscall.SIGTERM, false, 143, "TERM"},
}

// endStepAtCleanup kills, at the test's end, the step whose pid the
// goCatchingSignals stand-in wrote in stubs: a script that does not pass
// the signal on leaves it running.
func endStepAtCleanup(t *testing.T, stubs string) {
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(stubs, "pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// checkStepStopped checks that the goCatchingSignals stand-in in stubs got
// SIG<sig>, did not run to its end and no longer runs; out is the
// script's output, for the messages.
func checkStepStopped(t *testing.T, stubs, sig, out string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(stubs, "got-"+sig)); err != nil {
		t.Errorf("the step did not get SIG%s:\n%s", sig, out)
	}
	if _, err := os.Stat(filepath.Join(stubs, "done")); err == nil {
		t.Errorf("the step ran to its end:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(stubs, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == nil {
			t.Errorf("the step's go (pid %d) still runs after the script ended:\n%s", pid, out)
		}
	}
}

// A signal sent to scripts/test.sh's process alone (kill PID, a CI
// runner cancelling the job), not to its process group as Ctrl-C sends
// it, did not reach the running step: SIGTERM killed bash at once and
// left the step's go running, orphaned, and SIGINT was held until the
// step had ended. Either is now passed on to the step's process group,
// the script waits for the step and exits 143 (SIGTERM) or 130 (SIGINT),
// as it does on Ctrl-C.
func TestTestScriptStopsOnSignal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range stepSignals {
		t.Run(tc.name, func(t *testing.T) {
			fail := "#!/bin/sh\nexit 97\n"
			stubs := stubCommands(t, map[string]string{"go": goCatchingSignals, "gofmt": fail, "apt-get": fail, "sudo": fail})
			endStepAtCleanup(t, stubs)
			tmp := t.TempDir()
			cmd := exec.Command("bash", script)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(),
				"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
				"STUB_DIR="+stubs, "TMPDIR="+tmp, "MUTANTS_SUBSET=1")
			var out bytes.Buffer
			werr := signalWhenStarted(t, cmd, &out, filepath.Join(stubs, "started"), tc.sig, tc.group)
			got := out.String()
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() != tc.code {
				t.Errorf("%v, want exit %d after %v:\n%s", werr, tc.code, tc.sig, got)
			}
			checkStepStopped(t, stubs, tc.got, got)
			if want := "test.sh: interrupted during step download by SIG" + tc.got; !strings.Contains(got, want) {
				t.Errorf("no message %q:\n%s", want, got)
			}
			if strings.Contains(got, "== step: tidy") {
				t.Errorf("the next step ran after the signal:\n%s", got)
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("left in $TMPDIR (%v): %v", err, left)
			}
		})
	}
}

// goForMutants is a stand-in for go for scripts/mutants.sh: a module with
// one mutant and no tests, whose benchrun (STUB_DIR/benchrun, copied where
// go build -o puts it) is the only binary run.
const goForMutants = `#!/bin/sh
case "$1" in
list) [ "$2" = -m ] && echo example.com/m; exit 0 ;;
run) printf 'm1\t1\tcore/x\tserial\n'; exit 0 ;;
build)
	while [ $# -gt 0 ]; do
		[ "$1" = -o ] && cp "$STUB_DIR/benchrun" "$2"
		shift
	done
	exit 0 ;;
esac
exit 97
`

// benchrunCatchingInterrupt is a stand-in for benchrun check that behaves
// as benchrun does on Ctrl-C: it catches SIGINT and exits 130. Its first
// check waits for the signal, up to 10 s, and then passes; later ones pass
// at once.
const benchrunCatchingInterrupt = `#!/bin/sh
[ "$1" = help ] && exit 0
[ -e "$STUB_DIR/started" ] && exit 0
trap ': >"$STUB_DIR/interrupted"; exit 130' INT
: >"$STUB_DIR/started"
i=0
while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exit 0
`

// Ctrl-C during scripts/mutants.sh's benchrun check did not stop it:
// timeout ran check in a process group of its own, which the terminal's
// SIGINT does not reach, so check ran on to its end and the script to the
// next mutant; and a command that caught SIGINT and exited (go, benchrun)
// let the script go on too, the interrupted run counted as a kill. It now
// stops at once, with exit 130, check having seen the signal.
func TestMutantsScriptStopsOnInterrupt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout command, which mutants.sh runs check with")
	}
	stubs := stubCommands(t, map[string]string{"go": goForMutants, "benchrun": benchrunCatchingInterrupt})
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "mutants.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("bash", script, "-n", "1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
		"STUB_DIR="+stubs, "TMPDIR="+tmp)
	var out bytes.Buffer
	werr := interruptWhenStarted(t, cmd, &out, filepath.Join(stubs, "started"))
	got := out.String()
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.ExitCode() != 130 {
		t.Errorf("%v, want exit 130 after SIGINT:\n%s", werr, got)
	}
	if _, err := os.Stat(filepath.Join(stubs, "interrupted")); err != nil {
		t.Errorf("benchrun check did not get SIGINT:\n%s", got)
	}
	if strings.Contains(got, "| # | mutant") || !strings.Contains(got, "mutants.sh: interrupted") {
		t.Errorf("want the script stopped, saying so, before any mutant ran:\n%s", got)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		t.Errorf("left in $TMPDIR (%v): %v", err, left)
	}
}

// slowBenchrun is a cmd/benchrun for the stand-in repository of
// ci-bench.sh's tests whose run waits, up to 15 s, for SIGINT or SIGTERM
// and then exits 130, as benchrun does; it marks $STARTED when it starts,
// $STARTED.sig when it gets a signal and $STARTED.done when it ends
// without one.
const slowBenchrun = `package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 2 && os.Args[2] == "--help" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := os.Getenv("STARTED")
	os.WriteFile(started, nil, 0o644)
	select {
	case <-ctx.Done():
		os.WriteFile(started+".sig", nil, 0o644)
		os.Exit(130)
	case <-time.After(15 * time.Second):
		os.WriteFile(started+".done", nil, 0o644)
	}
}
`

// SIGINT or SIGTERM stops scripts/ci-bench.sh with the benchrun it runs,
// naming the signal, and leaves no worktree. Ctrl-C (SIGINT to the process
// group) was reported as "benchrun-base round 1 failed" (exit 2); SIGINT
// to the script alone, as kill or a CI runner sends it, was held until
// benchrun ended and then lost, the rounds going on; SIGTERM to the script
// alone waited for benchrun to end.
func TestCIBenchStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a stand-in repository three times")
	}
	for _, tc := range []struct {
		name  string
		group bool
		sig   syscall.Signal
		code  int
		want  string
	}{
		{"Ctrl-C", true, syscall.SIGINT, 130, "ci-bench: interrupted by SIGINT"},
		{"SIGINT", false, syscall.SIGINT, 130, "ci-bench: interrupted by SIGINT"},
		{"SIGTERM", false, syscall.SIGTERM, 143, "ci-bench: interrupted by SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := standIn(t)
			if err := os.WriteFile(filepath.Join(root, "cmd", "benchrun", "main.go"), []byte(slowBenchrun), 0o644); err != nil {
				t.Fatal(err)
			}
			gitc := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "slow")
			gitc.Dir = root
			if out, err := gitc.CombinedOutput(); err != nil {
				t.Fatalf("git commit: %v\n%s", err, out)
			}
			bin, err := binaries()
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			started := filepath.Join(t.TempDir(), "started")
			cmd := exec.Command("bash", filepath.Join(root, "scripts", "ci-bench.sh"), "--out", filepath.Join(t.TempDir(), "out"), "HEAD")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CIBENCH_BENCHCMP="+filepath.Join(bin, "benchcmp"), "GITHUB_STEP_SUMMARY=",
				"TMPDIR="+tmp, "STARTED="+started)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			// SIGINT taken while the script starts, so that it starts at
			// SIGINT's default action even when this binary was started
			// with it ignored (see signalWhenStarted).
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt)
			defer signal.Stop(sigs)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(60 * time.Second)
			for {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
					t.Fatalf("benchrun never started:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			target := cmd.Process.Pid
			if tc.group {
				target = -target
			}
			if err := syscall.Kill(target, tc.sig); err != nil {
				t.Fatal(err)
			}
			var werr error
			select {
			case werr = <-done:
			case <-time.After(90 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				t.Fatalf("still running 90 s after the signal:\n%s", out.String())
			}
			got := out.String()
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("%v, want exit %d with %q:\n%s", werr, tc.code, tc.want, got)
			}
			if _, err := os.Stat(started + ".sig"); err != nil {
				t.Errorf("benchrun did not get a signal:\n%s", got)
			}
			if _, err := os.Stat(started + ".done"); err == nil {
				t.Errorf("benchrun ran to its end:\n%s", got)
			}
			if wl, err := exec.Command("git", "-C", root, "worktree", "list", "--porcelain").Output(); err != nil || strings.Count(string(wl), "worktree ") != 1 {
				t.Errorf("the base's worktree is left (%v):\n%s", err, wl)
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("left in $TMPDIR (%v): %v", err, left)
			}
		})
	}
}

// benchrunCatchingSignals is a stand-in for benchrun in --bin DIR of
// scripts/bench-baseline.sh: its probe run (--param rows=100) prints the
// configuration lines of the baseline the test writes; its benchmark run
// writes its process id to pid, says which signal it got in the file
// got-SIG and exits 130, as benchrun does, waiting up to 10 s for one,
// and writes done when it ran to its end without.
const benchrunCatchingSignals = `#!/bin/sh
case " $* " in *" --param rows=100 "*) printf 'cpu: stub\ngomaxprocs: 2\n'; exit 0 ;; esac
trap ': >"$STUB_DIR/got-INT"; exit 130' INT
trap ': >"$STUB_DIR/got-TERM"; exit 130' TERM
echo $$ >"$STUB_DIR/pid"
: >"$STUB_DIR/started"
i=0
while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
: >"$STUB_DIR/done"
exit 0
`

// A signal sent to scripts/bench-baseline.sh's process alone did not stop
// it: SIGTERM killed bash at once, leaving the benchmark run going, and
// SIGINT was held until the run had ended, the script then going on to
// compare (exit 0). Ctrl-C, which reached the run too, was reported as a
// failed run (exit 2). Each is now passed on to the running command's
// process group, and the script waits for it and exits 130 (SIGINT) or
// 143 (SIGTERM), leaving nothing in $TMPDIR.
func TestBenchBaselineStopsOnSignal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "bench-baseline.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range stepSignals {
		t.Run(tc.name, func(t *testing.T) {
			stubs := stubCommands(t, map[string]string{
				"benchrun": benchrunCatchingSignals,
				"benchcmp": "#!/bin/sh\n: >\"$STUB_DIR/compared\"\nexit 0\n",
			})
			t.Cleanup(func() {
				// Unfixed, the run outlives the script: end it.
				if b, err := os.ReadFile(filepath.Join(stubs, "pid")); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			baseline := filepath.Join(t.TempDir(), "baseline.txt")
			if err := os.WriteFile(baseline, []byte("cpu: stub\ngomaxprocs: 2\nBenchmarkX 1 5 ns/op\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			cmd := exec.Command("bash", script, "--bin", stubs, "--baseline", baseline)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "STUB_DIR="+stubs, "TMPDIR="+tmp)
			var out bytes.Buffer
			werr := signalWhenStarted(t, cmd, &out, filepath.Join(stubs, "started"), tc.sig, tc.group)
			got := out.String()
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() != tc.code {
				t.Errorf("%v, want exit %d after %v:\n%s", werr, tc.code, tc.sig, got)
			}
			if _, err := os.Stat(filepath.Join(stubs, "got-"+tc.got)); err != nil {
				t.Errorf("benchrun did not get SIG%s:\n%s", tc.got, got)
			}
			for _, f := range []string{"done", "compared"} {
				if _, err := os.Stat(filepath.Join(stubs, f)); err == nil {
					t.Errorf("the script went on after the signal (%s):\n%s", f, got)
				}
			}
			if b, err := os.ReadFile(filepath.Join(stubs, "pid")); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == nil {
					t.Errorf("benchrun (pid %d) still runs after the script ended:\n%s", pid, got)
				}
			}
			if want := "bench-baseline: interrupted by SIG" + tc.got; !strings.Contains(got, want) {
				t.Errorf("no message %q:\n%s", want, got)
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("left in $TMPDIR (%v): %v", err, left)
			}
		})
	}
}

// scripts/figures.sh had no signal handling. Ctrl-C left OUTDIR
// half-written (a partial step file, and a rerun with the same OUTDIR was
// refused as not empty) and said nothing; SIGINT to the script alone was
// held until the step had ended; SIGTERM to the script alone killed bash
// at once and left the step's command running, orphaned, writing into
// OUTDIR. Each is now passed on to the running step's process group, the
// script waits for it, removes what the run wrote (the OUTDIR it made,
// with the parents it made, or the files of an OUTDIR that was there,
// empty) and its temporary directory, says so, and exits 130 (SIGINT) or
// 143 (SIGTERM). The step is the build, whose go is a stand-in that
// waits for the signal.
func TestFiguresStopsOnSignal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the scripts with")
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "figures.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range stepSignals {
		for _, existing := range []bool{false, true} {
			name := tc.name + "/new OUTDIR"
			if existing {
				name = tc.name + "/empty OUTDIR"
			}
			t.Run(name, func(t *testing.T) {
				stubs := stubCommands(t, map[string]string{"go": goCatchingSignals})
				endStepAtCleanup(t, stubs)
				cwd := t.TempDir()
				// A new OUTDIR under a parent that mkdir -p makes too:
				// both go. One that was there, empty, is left empty.
				outdir, want := filepath.Join("ü dir", "out 1"), []string{}
				if existing {
					outdir, want = "empty ü", []string{"empty ü"}
					if err := os.Mkdir(filepath.Join(cwd, outdir), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				tmp := t.TempDir()
				cmd := exec.Command("bash", script, outdir)
				cmd.Dir = cwd
				cmd.Env = append(os.Environ(),
					"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
					"STUB_DIR="+stubs, "TMPDIR="+tmp)
				var out bytes.Buffer
				werr := signalWhenStarted(t, cmd, &out, filepath.Join(stubs, "started"), tc.sig, tc.group)
				got := out.String()
				var exit *exec.ExitError
				if !errors.As(werr, &exit) || exit.ExitCode() != tc.code {
					t.Errorf("%v, want exit %d after %v:\n%s", werr, tc.code, tc.sig, got)
				}
				checkStepStopped(t, stubs, tc.got, got)
				if want := "figures.sh: interrupted by SIG" + tc.got + " during step build; "; !strings.Contains(got, want) {
					t.Errorf("no message %q:\n%s", want, got)
				}
				if strings.Contains(got, "step build failed") {
					t.Errorf("the interrupted step was reported as failed:\n%s", got)
				}
				var left []string
				filepath.WalkDir(cwd, func(path string, _ os.DirEntry, err error) error {
					if rel, _ := filepath.Rel(cwd, path); err == nil && rel != "." {
						left = append(left, rel)
					}
					return err
				})
				if strings.Join(left, "\n") != strings.Join(want, "\n") {
					t.Errorf("left where the script ran: %q, want %q:\n%s", left, want, got)
				}
				if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
					t.Errorf("left in $TMPDIR (%v): %v", err, left)
				}
			})
		}
	}
}
