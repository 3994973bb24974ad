package benchrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tracebench/tracebench/workloads"
	"github.com/tracebench/tracebench/workloads/spec"
)

// dirFiles lists the entries under dir, recursively, as slash paths.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestGenChecksEveryDestinationFirst checks that a destination gen cannot
// write is bad usage (exit 2) found before any file is written.
func TestGenChecksEveryDestinationFirst(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	// dims.csv is a directory: facts.csv, written first, must not appear.
	g2 := filepath.Join(dir, "g2")
	if err := os.MkdirAll(filepath.Join(g2, "dims.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symbolic link to nothing is refused, and stays.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere", dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, out, want string
	}{
		{"lookup", g2, "benchrun: --out: " + filepath.Join(g2, "dims.csv") + " is a directory"},
		{"lookup", file, "benchrun: --out: " + file + " is not a directory"},
		{"lookup", filepath.Join(file, "sub"), "benchrun: --out: " + file + " is not a directory"},
		{"dd", file, "benchrun: --out: " + file + " is not a directory"},
		{"lookup", dangling, "benchrun: --out: " + dangling + " is a symbolic link to nothing, not a directory"},
		{"lookup", filepath.Join(dangling, "sub"), "benchrun: --out: " + dangling + " is a symbolic link to nothing, not a directory"},
	} {
		var out bytes.Buffer
		err := Gen(context.Background(), GenConfig{Out: &out, Spec: tc.target, Dir: tc.out})
		if err == nil || Message(err) != tc.want || ExitCode(err) != ExitUsage {
			t.Errorf("gen %s --out %s: %v (exit %d), want exit 2 and %q", tc.target, tc.out, err, ExitCode(err), tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("gen %s --out %s printed %q", tc.target, tc.out, out.String())
		}
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"dangling", "file", "g2", "g2/dims.csv"}) {
		t.Errorf("gen wrote files: %q", got)
	}
}

// TestGenRollsBack checks that gen is all or nothing when renaming a
// written file into place fails: files it replaced get their old
// content back, files and directories it created are removed, and no
// temporary file is left (exit 1).
func TestGenRollsBack(t *testing.T) {
	chdirRoot(t)
	failOn := func(n int) func(string, string) error {
		calls := 0
		return func(oldpath, newpath string) error {
			if calls++; calls == n {
				return errors.New("injected rename failure")
			}
			return os.Rename(oldpath, newpath)
		}
	}
	// lookup writes facts.csv then dims.csv: the second rename fails.
	dir := t.TempDir()
	facts := filepath.Join(dir, "facts.csv")
	if err := os.WriteFile(facts, []byte("old facts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Gen(context.Background(), GenConfig{Out: &out, Spec: "lookup", Dir: dir, rename: failOn(2)})
	// The message names the file that was not written, as the user knows
	// it, not the temporary file the rollback removed.
	want := "benchrun: gen: " + filepath.Join(dir, "dims.csv") + ": injected rename failure (no file was changed)"
	if err == nil || Message(err) != want || ExitCode(err) != ExitFailed {
		t.Errorf("err = %v (exit %d), want exit 1 and %q", err, ExitCode(err), want)
	}
	if data, _ := os.ReadFile(facts); string(data) != "old facts\n" {
		t.Errorf("facts.csv holds %.40q after the rollback, want its old content", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"facts.csv"}) || out.Len() != 0 {
		t.Errorf("after the rollback: files %q, stdout %q", got, out.String())
	}
	// A failure as os.Rename reports it, naming the temporary file and
	// the destination: the message names the destination alone.
	var tmp string
	linkErr := func(oldpath, newpath string) error {
		tmp = oldpath
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EACCES}
	}
	err = Gen(context.Background(), GenConfig{Out: &out, Spec: "lookup", Dir: dir, rename: linkErr})
	want = "benchrun: gen: rename " + filepath.Join(dir, "facts.csv") + ": permission denied (no file was changed)"
	if err == nil || Message(err) != want || ExitCode(err) != ExitFailed || tmp == "" || strings.Contains(Message(err), tmp) {
		t.Errorf("err = %v (exit %d), want exit 1 and %q", err, ExitCode(err), want)
	}
	if data, _ := os.ReadFile(facts); string(data) != "old facts\n" {
		t.Errorf("facts.csv holds %.40q after the second rollback, want its old content", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"facts.csv"}) || out.Len() != 0 {
		t.Errorf("after the second rollback: files %q, stdout %q", got, out.String())
	}
	// A workload of several specs into a directory gen creates: the
	// fourth of six renames fails, and every directory goes again.
	parent := t.TempDir()
	dd := filepath.Join(parent, "a", "dd")
	err = Gen(context.Background(), GenConfig{Out: &out, Spec: "dd", Dir: dd, rename: failOn(4)})
	if err == nil || ExitCode(err) != ExitFailed {
		t.Errorf("dd: err = %v (exit %d), want exit 1", err, ExitCode(err))
	}
	if got := dirFiles(t, parent); len(got) != 0 {
		t.Errorf("dd: after the rollback: %q", got)
	}
	// Without a failure the old content is replaced and no backup is left.
	if err := Gen(context.Background(), GenConfig{Out: &out, Spec: "lookup", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(facts); !strings.HasPrefix(string(data), "time,diff,") {
		t.Errorf("facts.csv not replaced: %.40q", data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"dims.csv", "facts.csv"}) {
		t.Errorf("files after gen: %q", got)
	}
}

// countdownCtx is a context whose Err turns to context.Canceled on its
// n-th call: it interrupts a command at each of the points it checks.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n--; c.n <= 0 {
		return context.Canceled
	}
	return nil
}

// TestGenInterrupted checks that gen stops when its context is cancelled,
// wherever it is, with ErrInterrupted (exit 130) and no file or directory
// written; or, cancelled too late, writes every file.
func TestGenInterrupted(t *testing.T) {
	chdirRoot(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "lookup")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Gen(ctx, GenConfig{Out: &out, Spec: "dd", Dir: dir})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted || Message(err) != "benchrun: interrupted: gen wrote no file" {
		t.Fatalf("gen with a cancelled context: %v (exit %d), want interrupted (130)", err, ExitCode(err))
	}
	interrupted := 0
	for n := 1; ; n++ {
		out.Reset()
		err := Gen(&countdownCtx{context.Background(), n}, GenConfig{Out: &out, Spec: "lookup", Dir: dir})
		if err == nil {
			break
		}
		interrupted++
		if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted {
			t.Fatalf("gen cancelled at check %d: %v (exit %d), want interrupted (130)", n, err, ExitCode(err))
		}
		if got := dirFiles(t, parent); len(got) != 0 || out.Len() != 0 {
			t.Fatalf("gen cancelled at check %d left %q, printed %q", n, got, out.String())
		}
	}
	if interrupted < 4 {
		t.Errorf("gen was interrupted at %d points, want before and after loading and before each of lookup's 2 files at least", interrupted)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"dims.csv", "facts.csv"}) {
		t.Errorf("gen without interruption wrote %q", got)
	}
}

// TestValidateInterrupted checks that validate stops when its context is
// cancelled (exit 130), keeping the problems it found before.
func TestValidateInterrupted(t *testing.T) {
	chdirRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Validate(ctx, ValidateConfig{Out: &out, Specs: []string{"lookup", "dd"}})
	if !errors.Is(err, ErrInterrupted) || ExitCode(err) != ExitInterrupted || out.Len() != 0 {
		t.Fatalf("validate with a cancelled context: %v (exit %d), stdout %q; want interrupted (130)", err, ExitCode(err), out.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Validate(&countdownCtx{context.Background(), 2}, ValidateConfig{Out: &out, Specs: []string{bad, "lookup", "dd"}})
	if ExitCode(err) != ExitInterrupted || !strings.Contains(Message(err), bad+":1:") || !strings.Contains(Message(err), "interrupted after 1 of 3 targets") {
		t.Errorf("validate interrupted after a bad spec: %v (exit %d), want exit 130 naming %s", err, ExitCode(err), bad)
	}
}

// TestGenRefusesItsOwnInputs checks that gen refuses to write over a file
// its spec reads: input a reads b.csv, and input b's rows written to
// DIR/b.csv would replace a's data (exit 2, nothing written, the input
// intact).
func TestGenRefusesItsOwnInputs(t *testing.T) {
	dir := t.TempDir()
	data := "time,diff,k\n0,1,7\n"
	if err := os.WriteFile(filepath.Join(dir, "b.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `{"version": 1, "name": "own",
	  "inputs": {"a": {"columns": ["k"], "csv": "b.csv"}, "b": {"columns": ["k"], "rows": [[0,1,1]]}},
	  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	file := filepath.Join(dir, "own.json")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Gen(context.Background(), GenConfig{Out: &out, Spec: file, Dir: dir})
	want := "benchrun: --out: " + filepath.Join(dir, "b.csv") + " is the CSV input a of " + file + ", which gen reads; give --out a directory of its own"
	if err == nil || Message(err) != want || ExitCode(err) != ExitUsage {
		t.Errorf("gen --out the spec's directory: %v (exit %d), want exit 2 and %q", err, ExitCode(err), want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b.csv")); string(got) != data {
		t.Errorf("b.csv now holds %q, want %q", got, data)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"b.csv", "own.json"}) {
		t.Errorf("gen wrote files: %q", got)
	}
}

// TestGenRefusesTwoDestinationsOfOneFile checks that gen refuses
// destinations that are one file through a symbolic link, found in
// --out before anything is written (exit 2): DIR/b.csv linked to a.csv
// would take a's rows and then b's, and list both as written; and, for a
// workload of several specs, DIR/dd_count linked to DIR/dd_arrange would
// hold only one updates.csv. Every file stays as it was. A hard link is
// no conflict: each rename replaces its own name.
func TestGenRefusesTwoDestinationsOfOneFile(t *testing.T) {
	dir := t.TempDir()
	src := `{"version": 1, "name": "two",
	  "inputs": {"a": {"columns": ["x"], "rows": [[0,1,1]]}, "b": {"columns": ["y", "z"], "rows": [[0,1,2,3]]}},
	  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	file := filepath.Join(dir, "two.json")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "a.csv"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.csv", filepath.Join(out, "b.csv")); err != nil {
		t.Fatal(err)
	}
	dd := filepath.Join(dir, "dd")
	if err := os.MkdirAll(filepath.Join(dd, "dd_arrange"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dd_arrange", filepath.Join(dd, "dd_count")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, out, want string
	}{
		{file, out, "benchrun: --out: " + filepath.Join(out, "a.csv") + " and " + filepath.Join(out, "b.csv") + " are one file (through a symbolic link), which gen would write twice, once for each input; remove the link or give --out a directory of its own"},
		{"dd", dd, "benchrun: --out: " + filepath.Join(dd, "dd_arrange", "updates.csv") + " and " + filepath.Join(dd, "dd_count", "updates.csv") + " are one file (through a symbolic link), which gen would write twice, once for each input; remove the link or give --out a directory of its own"},
	} {
		var stdout bytes.Buffer
		err := Gen(context.Background(), GenConfig{Out: &stdout, Spec: tc.target, Dir: tc.out})
		if err == nil || Message(err) != tc.want || ExitCode(err) != ExitUsage {
			t.Errorf("gen %s --out %s: %v (exit %d), want exit 2 and %q", tc.target, tc.out, err, ExitCode(err), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("gen %s --out %s printed %q", tc.target, tc.out, stdout.String())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(out, "a.csv")); string(got) != "old\n" {
		t.Errorf("a.csv now holds %q, want it as it was", got)
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"dd", "dd/dd_arrange", "dd/dd_count", "out", "out/a.csv", "out/b.csv", "two.json"}) {
		t.Errorf("gen wrote files: %q", got)
	}

	// Hard links: both files written, each with its own input's rows.
	hard := filepath.Join(dir, "hard")
	if err := os.Mkdir(hard, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hard, "a.csv"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(hard, "a.csv"), filepath.Join(hard, "b.csv")); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := Gen(context.Background(), GenConfig{Out: &stdout, Spec: file, Dir: hard}); err != nil {
		t.Fatalf("gen --out a directory of hard links: %v", err)
	}
	for name, want := range map[string]string{"a.csv": "time,diff,x\n0,1,1\n", "b.csv": "time,diff,y,z\n0,1,2,3\n"} {
		if got, _ := os.ReadFile(filepath.Join(hard, name)); string(got) != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
}

// TestGenRefusesStandardStreamsInOut: a destination that is the file
// standard output or error is redirected to (gen --out d > d/facts.csv)
// is bad usage, with every file as it was: the rename would leave the
// listing, or an error, in a file no longer there.
func TestGenRefusesStandardStreamsInOut(t *testing.T) {
	dir := t.TempDir()
	for _, stream := range []string{"output", "error"} {
		redirected := filepath.Join(dir, "facts.csv")
		f, err := os.Create(redirected)
		if err != nil {
			t.Fatal(err)
		}
		cfg := GenConfig{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Spec: "lookup", Dir: dir}
		if stream == "output" {
			cfg.Out = &ErrWriter{W: f}
		} else {
			cfg.ErrOut = f
		}
		err = Gen(context.Background(), cfg)
		f.Close()
		want := "benchrun: --out: " + redirected + " is also standard " + stream
		if err == nil || !strings.HasPrefix(Message(err), want) || ExitCode(err) != ExitUsage {
			t.Errorf("standard %s in --out: %v (exit %d), want exit 2 and %q", stream, err, ExitCode(err), want)
		}
		if got := dirFiles(t, dir); !slices.Equal(got, []string{"facts.csv"}) {
			t.Errorf("standard %s in --out: files %v, want facts.csv alone", stream, got)
		}
		if st, err := os.Stat(redirected); err != nil || st.Size() != 0 {
			t.Errorf("standard %s in --out: facts.csv changed: %v", stream, err)
		}
	}
	// A file in --out that gen does not write is no conflict.
	other, err := os.Create(filepath.Join(dir, "list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	os.Remove(filepath.Join(dir, "facts.csv"))
	if err := Gen(context.Background(), GenConfig{Out: other, ErrOut: other, Spec: "lookup", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "list.txt")); !strings.Contains(string(data), "facts.csv: 10000 updates") {
		t.Errorf("the listing: %q", data)
	}
}

// TestCountsOfOneAreSingular: a count of one in a command's output takes
// the singular noun: gen's "1 update", validate's "1 input, 1 view, 1
// index", not "1 updates".
func TestCountsOfOneAreSingular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "one.json")
	doc := `{"version": 1, "name": "one",
"inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 7]]}},
"views": {"v": {"input": "a"}},
"indexes": {"a_by_x": {"on": "a", "key": ["x"]}},
"query": {"from": [{"as": "p", "collection": "v"}]}}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Gen(context.Background(), GenConfig{Out: &out, Spec: file, Dir: filepath.Join(dir, "out")}); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "out", "a.csv") + ": 1 update\n"; out.String() != want {
		t.Errorf("gen: %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := Validate(context.Background(), ValidateConfig{Out: &out, Specs: []string{file}}); err != nil {
		t.Fatal(err)
	}
	if want := file + ": ok: workload one, 1 input, 1 view, 1 index\n"; out.String() != want {
		t.Errorf("validate: %q, want %q", out.String(), want)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 samples"}, {1, "1 sample"}, {2, "2 samples"}} {
		if got := count(tc.n, "sample", "samples"); got != tc.want {
			t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestGenRoundTrips: for every built-in example and a spec of extreme
// values, a copy of the spec whose inputs read the CSV files gen wrote
// loads the same updates in the same order (so it evaluates the same at
// every time) and evaluates to the same bytes as the spec itself at the
// times check compares (as_of and up to four later input times). (The
// modes' agreement is eval's own test.)
func TestGenRoundTrips(t *testing.T) {
	chdirRoot(t)
	files, err := filepath.Glob("workloads/examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	files = append(files, "internal/benchrun/testdata/gen/extreme.json")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			dir := t.TempDir()
			if err := Gen(context.Background(), GenConfig{Out: io.Discard, Spec: file, Dir: filepath.Join(dir, "csv")}); err != nil {
				t.Fatal(err)
			}
			rewritten := rewriteInputsAsCSV(t, file, dir)
			load := func(path string) (*spec.Spec, []*spec.Table) {
				s, err := spec.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				tables, err := workloads.Load(s, 0)
				if err != nil {
					t.Fatal(err)
				}
				return s, tables
			}
			s, want := load(file)
			rs, got := load(rewritten) // its inputs in name order
			for i := range want {
				w := want[i]
				j := slices.IndexFunc(rs.Inputs, func(in spec.Input) bool { return in.Name == s.Inputs[i].Name })
				if j < 0 {
					t.Fatalf("input %s: not in the rewritten spec", s.Inputs[i].Name)
				}
				g := got[j]
				if !slices.Equal(w.Columns, g.Columns) || !slices.Equal(w.Times, g.Times) || !slices.Equal(w.Diffs, g.Diffs) {
					t.Fatalf("input %s: the CSV file holds other updates (columns %v, %d updates) than the spec (columns %v, %d updates)", s.Inputs[i].Name, g.Columns, g.Len(), w.Columns, w.Len())
				}
				for j := range w.Len() {
					if !slices.Equal(w.Row(j), g.Row(j)) {
						t.Fatalf("input %s: update %d: row %v from the CSV file, %v from the spec", s.Inputs[i].Name, j, g.Row(j), w.Row(j))
					}
				}
			}
			var at []string
			for _, tm := range workloads.CheckTimes(s, want) {
				at = append(at, strconv.FormatUint(tm, 10))
			}
			eval := func(path string) string {
				var out bytes.Buffer
				err := Eval(context.Background(), EvalConfig{Out: &out, Spec: path, At: strings.Join(at, ","), Index: IndexImported, Format: FormatCSV, Workers: 1})
				if err != nil {
					t.Fatalf("eval %s: %v", path, err)
				}
				return out.String()
			}
			if want, got := eval(file), eval(rewritten); got != want {
				t.Errorf("eval --at %s: the spec reading gen's CSV files prints\n%.2000s\nthe spec itself\n%.2000s", strings.Join(at, ","), got, want)
			}
		})
	}
}

// rewriteInputsAsCSV writes dir/rt.json: the spec file with every input
// reading csv/<input>.csv, as gen --out dir/csv writes it. Numbers are
// copied as written.
func rewriteInputsAsCSV(t *testing.T, file, dir string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	inputs, ok := doc["inputs"].(map[string]any)
	if !ok || len(inputs) == 0 {
		t.Fatalf("%s: no inputs", file)
	}
	for name, in := range inputs {
		inputs[name] = map[string]any{"columns": in.(map[string]any)["columns"], "csv": "csv/" + name + ".csv"}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rt.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGenRefusesAFileNameTooLong: an input's name may be 1,024 bytes, a
// file name 255; gen refuses an input whose NAME.csv would be longer
// before anything is made (exit 2, naming the file and the input), where
// it wrote every file, failed to rename that one into place, exited 1
// naming its temporary file and put everything back.
func TestGenRefusesAFileNameTooLong(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("a", 255-len(".csv")+1)
	specFile := filepath.Join(dir, "long.json")
	doc := `{"version": 1, "name": "long", "inputs": {"b": {"columns": ["k"], "rows": [[0, 1, 7]]}, "` + name + `": {"columns": ["k"], "rows": [[0, 1, 7]]}},
		"query": {"from": [{"as": "x", "collection": "b"}]}}`
	if err := os.WriteFile(specFile, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "csv")
	var stdout bytes.Buffer
	err := Gen(context.Background(), GenConfig{Out: &stdout, Spec: specFile, Dir: out})
	want := "benchrun: --out: " + filepath.Join(out, name+".csv") + ": a file name of 256 bytes, more than the 255 a file name may have (gen writes each input as NAME.csv): give input " + strings.Repeat("a", 80) + "... (252 bytes) a name of at most 251 bytes"
	if err == nil || Message(err) != want || ExitCode(err) != ExitUsage {
		t.Errorf("err = %v (exit %d), want exit 2 and %q", err, ExitCode(err), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("gen printed %q", stdout.String())
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"long.json"}) {
		t.Errorf("gen left %q", got)
	}
}

// unwritableFile makes name in dir, a writable directory, a regular file
// this process may not open for writing: mode 0444, or, where mode bits do
// not stop this process (root), a copy of /bin/sleep kept running, which
// Linux refuses to open for writing ("text file busy"). It returns the
// file's content; the test is skipped when neither is to be had.
func unwritableFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	path := filepath.Join(dir, name)
	data := []byte("kept read-only\n")
	if err := os.WriteFile(path, data, 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return data
	}
	f.Close()
	bin, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skipf("mode 0444 does not stop uid %d, and there is no /bin/sleep to run: %v", os.Geteuid(), err)
	}
	os.Remove(path)
	if err := os.WriteFile(path, bin, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("mode 0444 does not stop uid %d, and a copy of /bin/sleep does not run: %v", os.Geteuid(), err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Skipf("mode 0444 does not stop uid %d, nor does running a file", os.Geteuid())
	}
	return bin
}

// TestOutputsNotWritableAreNotReplaced: an output flag or a gen
// destination naming a regular file this process may not write is
// refused (exit 2) with the file as it was, as --out and a shell's >
// refuse it; gen, --cpuprofile, --memprofile and --flamegraph, which
// write through a temporary file renamed into place, replaced it
// wherever the directory could be written.
func TestOutputsNotWritableAreNotReplaced(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	for _, name := range []string{"facts.csv", "cpu.pprof", "mem.pprof", "flame.html"} {
		sub := filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name)))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(sub, name)
		before := unwritableFile(t, sub, name)
		var err error
		var stdout bytes.Buffer
		eng := &fakeEngine{}
		switch name {
		case "facts.csv":
			err = Gen(context.Background(), GenConfig{Out: &stdout, Spec: "lookup", Dir: sub})
		default:
			cfg := RunConfig{Out: &stdout, ErrOut: io.Discard, Selection: Selection{Targets: []string{"groupby"}, Workers: 1},
				Count: 1, Progress: ProgressOff, Engine: eng, Env: testEnv}
			switch name {
			case "cpu.pprof":
				cfg.CPUProfile = path
			case "mem.pprof":
				cfg.MemProfile = path
			default:
				cfg.Flamegraph = path
			}
			err = Run(context.Background(), cfg)
		}
		if err == nil || !strings.HasPrefix(Message(err), "benchrun: ") || !strings.Contains(Message(err), path+": cannot write: ") || ExitCode(err) != ExitUsage {
			t.Errorf("%s: err = %v (exit %d), want exit 2 naming %s: cannot write", name, err, ExitCode(err), path)
		}
		if eng.calls != 0 || stdout.Len() != 0 {
			t.Errorf("%s: %d samples ran, stdout %q", name, eng.calls, stdout.String())
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
			t.Errorf("%s was replaced (%d bytes, had %d)", name, len(got), len(before))
		}
		if got := dirFiles(t, sub); !slices.Equal(got, []string{name}) {
			t.Errorf("%s: files left: %q", name, got)
		}
	}
}

// TestOutputsWithLongNames checks that a destination whose name is as
// long as a file name may be (255 bytes) is written, by gen twice into
// one directory (the second keeps a backup of each file it replaces) and
// by run's profiles and flame graph: the temporary names beside them
// must fit too.
func TestOutputsWithLongNames(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("a", 255-len(".csv"))
	specFile := filepath.Join(dir, "long.json")
	doc := `{"version": 1, "name": "long", "inputs": {"` + name + `": {"columns": ["k"], "rows": [[0, 1, 7]]}},
		"query": {"from": [{"as": "x", "collection": "` + name + `"}]}}`
	if err := os.WriteFile(specFile, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "csv")
	for i := range 2 {
		if err := Gen(context.Background(), GenConfig{Out: io.Discard, Spec: specFile, Dir: out}); err != nil {
			t.Fatalf("gen #%d: %v", i+1, err)
		}
	}
	if got := dirFiles(t, out); !slices.Equal(got, []string{name + ".csv"}) {
		t.Errorf("gen left %q, want only %s.csv", got, name)
	}
	base := filepath.Join(dir, strings.Repeat("p", 250))
	cpu, mem, flame := base+".cpu", base+".mem", base+".html"
	err := Run(context.Background(), RunConfig{Out: io.Discard, ErrOut: io.Discard, Selection: Selection{Targets: []string{specFile}, Index: []string{IndexDirect}, Workers: 1},
		Count: 1, Progress: ProgressOff, CPUProfile: cpu, MemProfile: mem, Flamegraph: flame, Engine: &fakeEngine{}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, mem, flame} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}
