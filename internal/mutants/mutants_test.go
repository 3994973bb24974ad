package mutants_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/internal/mutants"
)

// moduleRoot returns the module's root directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestCatalogue checks the catalogue's entries: unique names, issue numbers
// 1–19 once each, a description and a package of the module.
func TestCatalogue(t *testing.T) {
	root := moduleRoot(t)
	names, issues := map[mutants.Name]bool{}, map[int]bool{}
	for _, m := range mutants.Catalogue() {
		if names[m.Name] || m.Name == "" {
			t.Errorf("mutant name %q empty or repeated", m.Name)
		}
		names[m.Name] = true
		if issues[m.Issue] || m.Issue < 1 || m.Issue > 19 {
			t.Errorf("%s: issue number %d out of 1–19 or repeated", m.Name, m.Issue)
		}
		issues[m.Issue] = true
		if m.Does == "" {
			t.Errorf("%s: no description", m.Name)
		}
		if fi, err := os.Stat(filepath.Join(root, m.Package)); err != nil || !fi.IsDir() {
			t.Errorf("%s: package %q is not a directory of the module", m.Name, m.Package)
		}
		if !mutants.Known(m.Name) {
			t.Errorf("%s: Known = false", m.Name)
		}
	}
	if len(issues) != 19 {
		t.Errorf("%d mutants catalogued, want 19", len(issues))
	}
	if mutants.Known("no-such-mutant") {
		t.Error(`Known("no-such-mutant") = true`)
	}
}

// TestEachMutantHasOneSite checks M2 and M4: across the module's non-test
// Go files, every On call names a catalogued mutant by its constant, behind
// Enabled, and every catalogued mutant is switched at exactly one place, in
// the package the catalogue names.
func TestEachMutantHasOneSite(t *testing.T) {
	root := moduleRoot(t)
	byConst := map[string]mutants.Mutant{}
	for _, m := range mutants.Catalogue() {
		byConst[constName(t, root, m.Name)] = m
	}
	sites := map[mutants.Name][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if filepath.Dir(rel) == filepath.Join("internal", "mutants") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("mutants.On(")) {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			be, ok := n.(*ast.BinaryExpr)
			if ok && (be.Op == token.LAND || be.Op == token.LOR) {
				if call, c := onCall(be.Y); call != nil {
					if !guarded(be.X) {
						t.Errorf("%s: mutants.On(%s) not behind mutants.Enabled", rel, c)
					}
					m, ok := byConst[c]
					if !ok {
						t.Errorf("%s: mutants.On(%s) names no catalogued mutant", rel, c)
						return true
					}
					sites[m.Name] = append(sites[m.Name], filepath.Dir(rel))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range sites {
		total += len(s)
	}
	if n := bytes.Count(grepOn(t, root), []byte("mutants.On(")); n != total {
		t.Errorf("%d calls of mutants.On in the module, %d of them in the form `mutants.Enabled && mutants.On(mutants.X)`", n, total)
	}
	for _, m := range mutants.Catalogue() {
		switch s := sites[m.Name]; {
		case len(s) != 1:
			t.Errorf("%s is switched at %d places, want 1: %v", m.Name, len(s), s)
		case filepath.ToSlash(s[0]) != m.Package:
			t.Errorf("%s is switched in %s, catalogued in %s", m.Name, s[0], m.Package)
		}
	}
}

// guarded reports whether x is mutants.Enabled or !mutants.Enabled.
func guarded(x ast.Expr) bool {
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		x = u.X
	}
	if p, ok := x.(*ast.ParenExpr); ok {
		x = p.X
	}
	sel, ok := x.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Enabled" && isIdent(sel.X, "mutants")
}

// onCall returns the call if x is mutants.On(mutants.C) or its negation,
// with the constant's name.
func onCall(x ast.Expr) (*ast.CallExpr, string) {
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		x = u.X
	}
	call, ok := x.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, ""
	}
	fn, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || fn.Sel.Name != "On" || !isIdent(fn.X, "mutants") {
		return nil, ""
	}
	arg, ok := call.Args[0].(*ast.SelectorExpr)
	if !ok || !isIdent(arg.X, "mutants") {
		return call, ""
	}
	return call, arg.Sel.Name
}

func isIdent(x ast.Expr, name string) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == name
}

// constName returns the name of the catalogue constant whose value is n.
func constName(t *testing.T, root string, n mutants.Name) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "internal", "mutants", "catalogue.go"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(src)) {
		if f := strings.Fields(line); len(f) >= 4 && f[1] == "Name" && f[2] == "=" && f[3] == `"`+string(n)+`"` {
			return f[0]
		}
	}
	t.Fatalf("no constant for %q in catalogue.go", n)
	return ""
}

// grepOn returns the concatenated non-test sources outside this package.
func grepOn(t *testing.T, root string) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || path == filepath.Join(root, "internal", "mutants")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		all = append(all, src...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestNormalBuildHasNoMutantSwitch checks M1 on a real binary: the probe
// (testdata/probe), which reaches every function with a mutant site, built
// without the tag has no symbol of this package and no TRACEBENCH_MUTANT
// string; built with it, it has both (so the check can see a switch when
// there is one).
func TestNormalBuildHasNoMutantSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the probe twice")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		tags string
		want bool
	}{{"", false}, {"mutants", true}} {
		bin := filepath.Join(dir, "probe"+tc.tags)
		args := []string{"build", "-o", bin}
		if tc.tags != "" {
			args = append(args, "-tags", tc.tags)
		}
		cmd := exec.Command("go", append(args, "./internal/mutants/testdata/probe")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		nm := exec.Command("go", "tool", "nm", bin)
		syms, err := nm.Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		const pkgSym = "tracebench/internal/mutants.On"
		hasSym := bytes.Contains(syms, []byte(pkgSym))
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		hasEnv := bytes.Contains(data, []byte("TRACEBENCH_MUTANT"))
		if hasSym != tc.want || hasEnv != tc.want {
			t.Errorf("tags %q: symbols of internal/mutants %v, string TRACEBENCH_MUTANT %v; want both %v", tc.tags, hasSym, hasEnv, tc.want)
		}
	}
}
