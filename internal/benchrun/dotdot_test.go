package benchrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dotDotTree makes, in a new directory, work/ (the working directory the
// test changes to) holding dirlink, a link to real/sub, so that
// dirlink/.. is real, where filepath.Clean makes it work itself; and lk,
// a link to real2/d, in which prof.out is a link to ../x (real2/x, read
// from the directory the link is in). It returns the tree's root.
func dotDotTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"real/sub", "real2/d", "work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := [][2]string{
		{filepath.Join(root, "real", "sub"), filepath.Join(root, "work", "dirlink")},
		{filepath.Join(root, "real2", "d"), filepath.Join(root, "work", "lk")},
		{filepath.Join("..", "x"), filepath.Join(root, "real2", "d", "prof.out")},
		{".", filepath.Join(root, "work", "here")},
	}
	for _, l := range links {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(root, "work"))
	return root
}

// TestOutputsThroughALinkAndDotDot: two output flags are one file when the
// kernel would open one file for both: --out dirlink/../r.txt and
// --memprofile real/r.txt are one file, which a profile's rename would
// replace, with the results in it (exit 0); --out dirlink/../r.txt and
// --cpuprofile r.txt are two files, which were refused as one; and a
// relative link in a directory reached through a link writes where the
// link's own directory says (lk/prof.out is real2/x).
func TestOutputsThroughALinkAndDotDot(t *testing.T) {
	root := dotDotTree(t)
	realR := filepath.Join(root, "real", "r.txt")
	for _, tc := range []struct {
		cfg  RunConfig
		want string // "" for a run that passes
	}{
		{RunConfig{OutFile: "dirlink/../r.txt", MemProfile: realR}, "--out and --memprofile: both name " + realR},
		{RunConfig{OutFile: "lk/prof.out", CPUProfile: filepath.Join(root, "real2", "x")}, "--out and --cpuprofile: both name " + filepath.Join(root, "real2", "x")},
		{RunConfig{OutFile: "dirlink/../r.txt", CPUProfile: "r.txt"}, ""},
	} {
		var stdout, stderr bytes.Buffer
		cfg := tc.cfg
		cfg.Out, cfg.ErrOut, cfg.Engine, cfg.Env = &stdout, &stderr, &fakeEngine{}, testEnv
		cfg.Selection, cfg.Count, cfg.Progress = Selection{Targets: []string{"groupby"}, Workers: 1}, 1, ProgressOff
		err := Run(context.Background(), cfg)
		if tc.want == "" {
			if err != nil {
				t.Errorf("--out %s --cpuprofile %s: %v, want the run to pass", tc.cfg.OutFile, tc.cfg.CPUProfile, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage {
			t.Errorf("err = %v (exit %d), want %q and exit 2", err, ExitCode(err), tc.want)
		}
	}
	// The passing run wrote its results where the kernel opens
	// dirlink/../r.txt, and its profile in the working directory.
	if data, err := os.ReadFile(realR); err != nil || !strings.Contains(string(data), "Benchmark") {
		t.Errorf("%s: %q, %v; want the results", realR, data, err)
	}
	if st, err := os.Stat("r.txt"); err != nil || st.Size() == 0 {
		t.Errorf("./r.txt: %v, want the CPU profile", err)
	}
	// A profile through lk/prof.out goes to real2/x, the link's target
	// read from real2/d, and the link stays a link.
	var stdout, stderr bytes.Buffer
	cfg := RunConfig{CPUProfile: "lk/prof.out", Out: &stdout, ErrOut: &stderr, Engine: &fakeEngine{}, Env: testEnv,
		Selection: Selection{Targets: []string{"groupby"}, Workers: 1}, Count: 1, Progress: ProgressOff}
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(root, "real2", "x")); err != nil || st.Size() == 0 {
		t.Errorf("real2/x: %v, want the CPU profile", err)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Errorf("the profile went to %s", filepath.Join(root, "x"))
	}
	if st, err := os.Lstat(filepath.Join(root, "real2", "d", "prof.out")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("real2/d/prof.out is no longer a link: %v", err)
	}
}

// TestGenIntoALinkAndDotDot: gen --out dirlink/.. writes into real, where
// the kernel takes it, not into the working directory, whose a.csv it
// replaced.
func TestGenIntoALinkAndDotDot(t *testing.T) {
	root := dotDotTree(t)
	specFile := writeSpec(t, ".", "w.json", "w", "[[0, 1, 1]]")
	if err := os.WriteFile("a.csv", []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Gen(context.Background(), GenConfig{Out: &out, Spec: specFile, Dir: "dirlink/.."}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile("a.csv"); string(data) != "precious\n" {
		t.Errorf("./a.csv replaced with %.40q", data)
	}
	want := filepath.Join(root, "real", "a.csv")
	if data, err := os.ReadFile(want); err != nil || !strings.HasPrefix(string(data), "time,diff,x\n") {
		t.Errorf("%s: %.40q, %v; want gen's rows", want, data, err)
	}
	if got := out.String(); got != want+": 1 update\n" {
		t.Errorf("gen listed %q, want %s", got, want)
	}
}

// TestSpecsThroughALinkAndDotDot: dirlink/../w.json is real/w.json, another
// file than work/w.json, and is validated and named as such (it was taken
// for work/w.json and passed over); here/w.json (here a link to .) and a
// link to w.json are w.json, validated once (they were refused as another
// spec declaring the same workload name); and a spec's CSV input is read
// beside the spec as the kernel reaches it.
func TestSpecsThroughALinkAndDotDot(t *testing.T) {
	root := dotDotTree(t)
	writeSpec(t, ".", "w.json", "w", "[[0, 1, 1]]")
	if err := os.WriteFile(filepath.Join(root, "real", "w.json"), []byte(`{"version": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("w.json", "wl.json"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{"w.json", "dirlink/../w.json"}})
	if want := "dirlink/../w.json:1: name: required field is missing"; err == nil || !strings.HasPrefix(err.Error(), want) || ExitCode(err) != ExitUsage {
		t.Errorf("validate w.json dirlink/../w.json: %v (exit %d), want exit 2 and %q", err, ExitCode(err), want)
	}
	for _, again := range []string{"here/w.json", "wl.json", "./here/./w.json"} {
		out.Reset()
		if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{"w.json", again}}); err != nil {
			t.Errorf("validate w.json %s: %v, want it validated once", again, err)
		}
		if want := "w.json: ok: workload w, 1 input, 0 views, 1 index\n"; out.String() != want {
			t.Errorf("validate w.json %s printed %q, want %q", again, out.String(), want)
		}
		bs, err := Benchmarks(Selection{Targets: []string{"w.json", again}, Workers: 1})
		if err != nil || len(bs) != 1 {
			t.Errorf("run w.json %s: %v, benchmarks %q; want one", again, err, names(bs))
		}
	}
	// A CSV input beside the spec, through the link and ..
	csvSpec := `{"version": 1, "name": "s", "inputs": {"a": {"columns": ["k"], "csv": "a.csv"}}, "query": {"from": [{"as": "x", "collection": "a"}]}}`
	if err := os.WriteFile(filepath.Join(root, "real", "s.json"), []byte(csvSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "real", "a.csv"), []byte("time,diff,k\n0,1,111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("a.csv", []byte("time,diff,k\n0,1,999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Eval(context.Background(), EvalConfig{Out: &out, Spec: "dirlink/../s.json", At: "0", Index: IndexDirect, Format: "csv", Workers: 1}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !slices.Contains(lines, "111,1") || slices.Contains(lines, "999,1") {
		t.Errorf("eval dirlink/../s.json read\n%s\nwant the row 111 of real/a.csv", out.String())
	}
}
