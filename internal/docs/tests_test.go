package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

var (
	// citedTestRE finds a test, fuzz target or example named in prose: a
	// Go identifier starting Test, Fuzz or Example and a capital letter,
	// an underscore or nothing more.
	citedTestRE = regexp.MustCompile(`\b((?:Test|Fuzz|Example)(?:[A-Z_]\w*)?)\b`)
	// citedBenchRE finds a benchmark named in backquotes in a document.
	citedBenchRE = regexp.MustCompile("`(Benchmark[A-Z_]\\w*)")
)

// resultNames are benchmark names the documents show that are no Go
// function: result lines of benchrun's workloads (BenchmarkLookup is
// the lookup workload's) and of small example result files.
var resultNames = []string{"BenchmarkLookup", "BenchmarkGroupby", "BenchmarkD", "BenchmarkF", "BenchmarkS"}

// historyDocs are histories: they may name a benchmark by the name it had
// when it was measured (docs/engine-history.md says which were renamed).
var historyDocs = []string{"docs/engine-history.md", "docs/figures-history.md"}

// testFuncs returns the names of every top-level function of fsys's Go
// files (testdata and directories starting with a dot skipped): the tests
// of the _test.go files, and functions such as workloads.ExampleFS whose
// names only look like an example's.
func testFuncs(fsys fs.FS) (map[string]bool, error) {
	defs := map[string]bool{}
	fset := token.NewFileSet()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				defs[fn.Name.Name] = true
			}
		}
		return nil
	})
	return defs, err
}

// citedTests returns one problem per test, fuzz target or example that
// files name and no _test.go file defines, and per benchmark a document
// (not a history) names in backquotes that none defines (C6).
func citedTests(files []repoFile, defs map[string]bool) []string {
	var problems []string
	for _, f := range files {
		idx := newLineIndex(f.text)
		report := func(off int, name string) {
			problems = append(problems, fmt.Sprintf("%s:%d: names %s, which no Go file defines", f.path, idx.at(off), name))
		}
		for _, m := range citedTestRE.FindAllStringSubmatchIndex(f.text, -1) {
			name := f.text[m[2]:m[3]]
			if name == "Test" || name == "Fuzz" || name == "Example" || defs[name] {
				continue
			}
			report(m[2], name)
		}
		if path.Ext(f.path) != ".md" || slices.Contains(historyDocs, f.path) {
			continue
		}
		for _, m := range citedBenchRE.FindAllStringSubmatchIndex(f.text, -1) {
			name := f.text[m[2]:m[3]]
			if !defs[name] && !slices.Contains(resultNames, name) {
				report(m[2], name)
			}
		}
	}
	return problems
}

// TestCitedTestsExist checks that every test, fuzz target and example the
// documents and comments name, and every benchmark the documents name,
// is defined (C6): a renamed or removed test leaves no claim behind it.
func TestCitedTestsExist(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	defs, err := testFuncs(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) < 100 {
		t.Fatalf("found %d test functions; is the test run inside the module?", len(defs))
	}
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n += len(citedTestRE.FindAllString(f.text, -1))
	}
	t.Logf("%d test functions, %d names of tests in documents and comments", len(defs), n)
	for _, p := range citedTests(files, defs) {
		t.Error(p)
	}
}

// TestCitedTestsFound pins what C6 finds, in a small repository of its
// own.
func TestCitedTestsFound(t *testing.T) {
	fsys := fstest.MapFS{
		"a/a_test.go":            {Data: []byte("package a\n\nfunc TestKept(t *testing.T) {}\nfunc BenchmarkKept(b *testing.B) {}\nfunc FuzzKept(f *testing.F) {}\nfunc ExampleKept() {}\nfunc (x) TestMethod() {}\n")},
		"a/a.go":                 {Data: []byte("package a\n\n// TestKept and FuzzKept show it; TestGone did.\n// TestMethod is no test; ExampleFS is a function.\nvar s = \"TestInAString\"\n\nfunc ExampleFS() {}\n")},
		"README.md":              {Data: []byte("`TestKept`, `BenchmarkKept`, `ExampleKept`, `BenchmarkLookup`,\n`BenchmarkGone` and TestGone_two; a Test of it.\n")},
		"docs/engine-history.md": {Data: []byte("`BenchmarkOld` then; `TestOld` too.\n")},
		"a/testdata/x_test.go":   {Data: []byte("package x\n\nfunc TestInTestdata(t *testing.T) {}\n")},
	}
	defs, err := testFuncs(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if defs["TestMethod"] || defs["TestInTestdata"] || !defs["TestKept"] || !defs["ExampleKept"] {
		t.Fatalf("defs %v", defs)
	}
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := citedTests(files, defs)
	want := []string{
		"README.md:2: names TestGone_two, which no Go file defines",
		"README.md:2: names BenchmarkGone, which no Go file defines",
		"a/a.go:3: names TestGone, which no Go file defines",
		"a/a.go:4: names TestMethod, which no Go file defines",
		"docs/engine-history.md:1: names TestOld, which no Go file defines",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
