package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestOutputsInAStickyDirectory runs benchrun as another user (nobody,
// uid 65534) against files of root's in a directory with the sticky bit,
// as /tmp has: each file may be written (mode 0666) but, the bit set,
// only its owner may replace it, and gen, --cpuprofile, --memprofile and
// --flamegraph write through a temporary file renamed into place. Each is
// refused before anything is written (exit 2, naming the file and why),
// where gen failed its rename (exit 1) leaving its backup of the file
// beside it, and run failed the rename after the run (exit 1). It needs
// root, to run the process as another user and own the files.
func TestOutputsInAStickyDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the files are root's, and benchrun runs as nobody")
	}
	const nobody = 65534
	dir := t.TempDir()
	// The test binary and the spec must be reachable by nobody.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "benchrun.test")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, self)
	self.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../internal/benchrun/testdata/eval/small.json")
	if err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "small.json")
	if err := os.WriteFile(specPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	sticky := filepath.Join(dir, "sticky")
	if err := os.Mkdir(sticky, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	const old = "root's\n"
	files := []string{"cpu.pprof", "flame.html", "lineitem.csv", "mem.pprof", "orders.csv"}
	for _, f := range files {
		p := filepath.Join(sticky, f)
		if err := os.WriteFile(p, []byte(old), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o666); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	why := ": cannot write: another user's file in a directory with the sticky bit (as /tmp), which only its owner may replace"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", specPath, "--out", sticky}, "benchrun: --out: " + filepath.Join(sticky, "orders.csv") + why},
		{[]string{"run", specPath, "--index", "direct", "--progress", "off", "--cpuprofile", filepath.Join(sticky, "cpu.pprof")}, "benchrun: --cpuprofile: " + filepath.Join(sticky, "cpu.pprof") + why},
		{[]string{"run", specPath, "--index", "direct", "--progress", "off", "--memprofile", filepath.Join(sticky, "mem.pprof")}, "benchrun: --memprofile: " + filepath.Join(sticky, "mem.pprof") + why},
		{[]string{"run", specPath, "--index", "direct", "--progress", "off", "--flamegraph", filepath.Join(sticky, "flame.html")}, "benchrun: --flamegraph: " + filepath.Join(sticky, "flame.html") + why},
	} {
		args, _ := json.Marshal(tc.args)
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BENCHRUN_CHILD_ARGS="+string(args), "TMPDIR="+sticky)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		name := strings.Join(tc.args[:1], " ")
		if code := cmd.ProcessState.ExitCode(); code != 2 || strings.TrimSpace(stderr.String()) != tc.want {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", name, code, stderr.String(), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout %q", name, stdout.String())
		}
		if got := dirNames(t, sticky); !slices.Equal(got, files) {
			t.Errorf("%s: %s holds %q, want %q", name, sticky, got, files)
		}
		for _, f := range files {
			if data, _ := os.ReadFile(filepath.Join(sticky, f)); string(data) != old {
				t.Errorf("%s: %s now holds %d bytes", name, f, len(data))
			}
		}
	}
}
