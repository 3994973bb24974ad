//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputModes runs run with every output flag and gen under umasks
// 022, 002 and 000: every file made gets 0666 less the umask and every
// directory 0777 less it, as a shell's > and mkdir -p make them, whether
// opened directly (--out) or written through a temporary file renamed
// into place (the profiles, the flame graph, gen's CSV files). Those
// made through a temporary file got 0644 less the umask, and so did
// --out: under umask 002 or 000 a result file was not group-writable
// where `benchrun run lookup > r.txt` made it so. A file written over
// keeps its mode, as under >. The test changes the process's umask, so
// it is not parallel.
func TestOutputModes(t *testing.T) {
	t.Chdir("../..")
	files := []string{"results.txt", "cpu.pprof", "mem.pprof", "flame.html"}
	runArgs := func(dir string) []string {
		return []string{"run", "lookup", "--index", "direct", "--count", "1", "--progress", "off",
			"--out", filepath.Join(dir, "results.txt"),
			"--cpuprofile", filepath.Join(dir, "cpu.pprof"),
			"--memprofile", filepath.Join(dir, "mem.pprof"),
			"--flamegraph", filepath.Join(dir, "flame.html")}
	}
	genArgs := func(dir string) []string {
		return []string{"gen", "lookup", "--out", filepath.Join(dir, "gen", "lookup")}
	}
	// modes returns the permissions of every file and directory under
	// dir, by path relative to it.
	modes := func(t *testing.T, dir string) map[string]fs.FileMode {
		t.Helper()
		got := map[string]fs.FileMode{}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == dir {
				return err
			}
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			got[rel] = st.Mode().Perm()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	execUnder := func(t *testing.T, mask int, args []string) {
		t.Helper()
		old := syscall.Umask(mask)
		code, _, errOut := execute(t, args...)
		syscall.Umask(old)
		if code != 0 {
			t.Fatalf("umask %03o: benchrun %s: exit %d: %s", mask, strings.Join(args, " "), code, errOut)
		}
	}
	for _, mask := range []int{0o022, 0o002, 0o000} {
		dir := t.TempDir()
		execUnder(t, mask, runArgs(dir))
		execUnder(t, mask, genArgs(dir))
		got := modes(t, dir)
		csvs := 0
		for rel, perm := range got {
			want := fs.FileMode(0o666 &^ mask)
			if rel == "gen" || rel == filepath.Join("gen", "lookup") {
				want = fs.FileMode(0o777 &^ mask)
			} else if strings.HasSuffix(rel, ".csv") {
				csvs++
			}
			if perm != want {
				t.Errorf("umask %03o: %s has mode %v, want %v", mask, rel, perm, want)
			}
		}
		for _, f := range files {
			if _, ok := got[f]; !ok {
				t.Errorf("umask %03o: run wrote no %s", mask, f)
			}
		}
		if csvs == 0 || len(got) != len(files)+2+csvs {
			t.Errorf("umask %03o: the run and gen left %v; want %v, gen/, gen/lookup/ and its CSV files", mask, got, files)
		}

		// Run again over the files, each made private to its owner
		// and group first: they keep that mode, as under >, whatever
		// the umask.
		for rel := range got {
			if !strings.HasPrefix(rel, "gen") || strings.HasSuffix(rel, ".csv") {
				if err := os.Chmod(filepath.Join(dir, rel), 0o640); err != nil {
					t.Fatal(err)
				}
			}
		}
		execUnder(t, mask, runArgs(dir))
		execUnder(t, mask, genArgs(dir))
		for rel, perm := range modes(t, dir) {
			if rel == "gen" || rel == filepath.Join("gen", "lookup") {
				continue
			}
			if perm != 0o640 {
				t.Errorf("umask %03o: %s, written over a file of mode 0640, has mode %v", mask, rel, perm)
			}
		}
	}
}
