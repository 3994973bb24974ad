package workloads

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/workloads/spec"
)

// TestExamplesValidate checks W1 and W3: every example validates; the
// defaults give back the file's spec; every file belongs to a benchmark.
func TestExamplesValidate(t *testing.T) {
	used := map[string]bool{}
	names := map[string]bool{}
	for _, w := range Registry() {
		if msg := spec.CheckName(w.Name); msg != "" || names[w.Name] {
			t.Errorf("workload name %q: %s (or repeated)", w.Name, msg)
		}
		names[w.Name] = true
		if len(w.Benches) == 0 {
			t.Errorf("%s has no benchmarks", w.Name)
		}
		for _, b := range w.Benches {
			used[b.File] = true
			if b.Base == "" || strings.ContainsAny(b.Base, "/ =") || b.Base[0] < 'A' || b.Base[0] > 'Z' {
				t.Errorf("%s: bad Base %q", w.Name, b.Base)
			}
			plain, err := b.Spec(nil)
			if err != nil {
				t.Errorf("%s: %v", b.File, err)
				continue
			}
			defaults := map[string]int64{}
			for _, p := range w.Params {
				defaults[p.Name] = p.Defaults[0]
				targets := len(b.Targets[p.Name])
				if p.Runner != (targets == 0) {
					t.Errorf("%s: parameter %s: Runner %v but %d targets", b.File, p.Name, p.Runner, targets)
				}
			}
			for n := range b.Targets {
				if _, err := w.Param(n); err != nil {
					t.Errorf("%s: target for %v", b.File, err)
				}
			}
			withDefaults, err := b.Spec(defaults)
			if err != nil {
				t.Errorf("%s with defaults: %v", b.File, err)
				continue
			}
			if !reflect.DeepEqual(plain, withDefaults) {
				t.Errorf("%s: the parameter defaults %v do not reproduce the file", b.File, defaults)
			}
		}
	}
	files, _ := fs.Glob(ExampleFS(), "examples/*.json")
	for _, f := range files {
		if !used[f] {
			t.Errorf("%s belongs to no built-in workload", f)
		}
	}
	// The embedded files are the ones in the repository users copy.
	for _, f := range files {
		disk, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.ReadFile(f); err != nil {
			t.Errorf("%s from disk: %v", f, err)
		}
		emb, _ := fs.ReadFile(ExampleFS(), f)
		if string(disk) != string(emb) {
			t.Errorf("%s: embedded copy differs", f)
		}
	}
}

func TestParams(t *testing.T) {
	w, err := Lookup("lookup")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Benches[0].Spec(map[string]int64{"rows": 1000000, "keys": 50})
	if err != nil {
		t.Fatal(err)
	}
	facts, dims := s.Inputs[0].Generate, s.Inputs[1].Generate
	if facts.Rows != 1000000 || dims.Rows != 50 || facts.Columns[1].Max != 49 {
		t.Errorf("facts rows %d, dims rows %d, key max %d", facts.Rows, dims.Rows, facts.Columns[1].Max)
	}
	_, err = w.Benches[0].Spec(map[string]int64{"keys": 0})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "workload lookup: keys must be in 1..100000000 (dimension rows (distinct keys)), not 0") {
		t.Errorf("keys=0: %v", err)
	}
	dd, _ := Lookup("dd")
	rounds := dd.Benches[3]
	s, err = rounds.Spec(map[string]int64{"rows": 1000000})
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Inputs[0].Generate; g.Rows != 1100000 || g.Batches != 1100 || s.AsOf != 1000 {
		t.Errorf("dd rounds at 1e6: rows %d batches %d as_of %d", g.Rows, g.Batches, s.AsOf)
	}
	if _, err := rounds.Spec(map[string]int64{"rows": 1500}); err == nil || !strings.Contains(err.Error(), "multiple of 1000") {
		t.Errorf("rows=1500: %v", err)
	}
	// A name that is no parameter, or a value out of its range, is
	// refused as benchrun's --param refuses it (Param.Check), naming the
	// parameter and its range: Spec once ran the defaults instead.
	for _, tc := range []struct {
		params map[string]int64
		want   string
	}{
		{map[string]int64{"nope": 1}, `workload lookup has no parameter "nope" (parameters: rows 1..100000000; keys 1..100000000)`},
		{map[string]int64{"": 1}, `workload lookup has no parameter "" (parameters: rows 1..100000000; keys 1..100000000)`},
		{map[string]int64{"rows": 0}, "workload lookup: rows must be in 1..100000000 (fact updates), not 0"},
		{map[string]int64{"rows": 100, "keys": 100000001}, "workload lookup: keys must be in 1..100000000 (dimension rows (distinct keys)), not 100000001"},
	} {
		s, err := w.Benches[0].Spec(tc.params)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) || s != nil {
			t.Errorf("Spec(%v): %v, want ErrUsage saying %s", tc.params, err, tc.want)
		}
	}
	fanout, _ := Lookup("fanout")
	if _, err := fanout.Benches[0].Spec(map[string]int64{"k": 0}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "k must be in 1..1024") {
		t.Errorf("fanout k=0 (a runner's parameter): %v", err)
	}
	if _, err := fanout.Benches[0].Spec(map[string]int64{"k": 4}); err != nil {
		t.Errorf("fanout k=4: %v", err)
	}
	// A Bench built by hand knows no ranges: the names it targets pass.
	own := Bench{Base: "Own", File: "examples/lookup.json", Targets: map[string][]Target{"rows": {{Field: "inputs.facts.generate.rows", Mul: 1, Div: 1}}}}
	if _, err := own.Spec(map[string]int64{"rows": 5}); err != nil {
		t.Errorf("a hand-built Bench, rows=5: %v", err)
	}
	if _, err := own.Spec(map[string]int64{"keys": 5}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `benchmark Own has no parameter "keys" (parameters: rows)`) {
		t.Errorf("a hand-built Bench, keys=5: %v", err)
	}
	if _, err := w.Param("nope"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "parameters: rows, keys") {
		t.Errorf("Param(nope) = %v", err)
	}
	if _, err := Lookup("nope"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "lookup, star") {
		t.Errorf("Lookup(nope) = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	src := `{"version": 1, "name": "w",
  "inputs": {"a": {"columns": ["x"], "csv": "a.csv"},
             "b": {"columns": ["x"], "rows": [[1, 2, 3]]},
             "c": {"columns": ["x"], "generate": {"rows": 3, "columns": {"x": {"dist": "seq"}}}},
             "d": {"columns": ["x"], "csv": "sub/d.csv"}},
  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("w.json", src)
	write("a.csv", "time,diff,x\n0,1,5\n")
	write("sub/d.csv", "time,diff,x\n0,1,6\n")
	s, err := spec.ReadFile(filepath.Join(dir, "w.json"))
	if err != nil {
		t.Fatal(err)
	}
	tabs, err := Load(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := [][]int64{}
	for _, tb := range tabs {
		got = append(got, slices.Clone(tb.Vals))
	}
	if !reflect.DeepEqual(got, [][]int64{{5}, {3}, {0, 1, 2}, {6}}) {
		t.Errorf("loaded %v", got)
	}
	write("sub/d.csv", "time,diff,x\n0,1,6\n0,1,x\n")
	tabs, err = Load(s, 0)
	if tabs != nil || err == nil || err.Error() != filepath.Join(dir, "sub/d.csv")+`:3: field 3 (x) is "x", not a decimal integer in the int64 range` {
		t.Errorf("bad CSV: tables %v, err %v", tabs, err)
	}
	os.Remove(filepath.Join(dir, "a.csv"))
	if tabs, err = Load(s, 0); tabs != nil || err == nil || !strings.Contains(err.Error(), "a.csv: cannot read CSV") {
		t.Errorf("missing CSV: tables %v, err %v", tabs, err)
	}
}

// TestConcurrentSpecAndLoad decodes and loads one workload from two
// goroutines at once; both must get the same updates (run with -race).
func TestConcurrentSpecAndLoad(t *testing.T) {
	w, err := Lookup("star")
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]*spec.Table
	var errs [2]error
	done := make(chan int)
	for g := range 2 {
		go func() {
			defer func() { done <- g }()
			s, err := w.Benches[0].Spec(map[string]int64{"orders": 2000})
			if err != nil {
				errs[g] = err
				return
			}
			got[g], errs[g] = Load(s, 3)
		}()
	}
	<-done
	<-done
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Error("two concurrent loads of one spec differ")
	}
}
