package docs

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// specPath is the spec format's and command lines' document, relative to
// the module root.
const specPath = "docs/spec.md"

var (
	// specCiteRE finds a citation of the spec document by its headings:
	// "docs/spec.md" (or "spec.md") followed by one or more quoted
	// headings, in parentheses or not, joined by commas, "to" or "and"
	// (`docs/spec.md "Fields"`, `(docs/spec.md, "Fields" to
	// "Expressions")`). A quoted heading may run over a line break.
	specCiteRE = regexp.MustCompile(`spec\.md[\s,(]+((?:\s*"[^"]+"\s*(?:,|to\b|and\b)?)+)`)
	quotedRE   = regexp.MustCompile(`"([^"]+)"`)
	// specNumberRE finds a citation of the spec document by a section
	// number, which it does not have.
	specNumberRE = regexp.MustCompile(`spec\.md\s*§\s*\d`)
	headingRE    = regexp.MustCompile(`^#{1,6} (.+)$`)
)

// specHeadings returns the headings of the spec document, outside fenced
// code, without their marks and code quotes.
func specHeadings(text string) []string {
	var hs []string
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil && !fenced {
			hs = append(hs, strings.TrimSpace(strings.ReplaceAll(m[1], "`", "")))
		}
	}
	return hs
}

// specCitations returns one problem per citation of the spec document in
// files that names a heading it does not have, or cites it by a section
// number (C5). A citation names a heading when it is the heading or its
// beginning up to a space (`"benchrun eval"` for the heading of `benchrun
// eval SPEC.json --at T[,T...]`).
func specCitations(files []repoFile, headings []string) []string {
	names := func(cited string) bool {
		for _, h := range headings {
			if h == cited || strings.HasPrefix(h, cited+" ") {
				return true
			}
		}
		return false
	}
	var problems []string
	for _, f := range files {
		idx := newLineIndex(f.text)
		for _, m := range specCiteRE.FindAllStringSubmatchIndex(f.text, -1) {
			group := f.text[m[2]:m[3]]
			for _, q := range quotedRE.FindAllStringSubmatchIndex(group, -1) {
				cited := strings.Join(strings.Fields(group[q[2]:q[3]]), " ")
				if !names(cited) {
					problems = append(problems, fmt.Sprintf("%s:%d: cites %s %q, which is no heading of it",
						f.path, idx.at(m[2]+q[0]), specPath, cited))
				}
			}
		}
		for _, m := range specNumberRE.FindAllStringIndex(f.text, -1) {
			problems = append(problems, fmt.Sprintf("%s:%d: cites %s by a section number (%q); it has none: cite its heading in quotes",
				f.path, idx.at(m[0]), specPath, f.text[m[0]:m[1]]))
		}
	}
	return problems
}

// TestSpecCitations checks every citation of docs/spec.md in the
// repository names one of its headings (C5).
func TestSpecCitations(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	doc, err := fs.ReadFile(fsys, specPath)
	if err != nil {
		t.Fatal(err)
	}
	headings := specHeadings(string(doc))
	if len(headings) < 5 {
		t.Fatalf("%s: found %d headings", specPath, len(headings))
	}
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n += len(specCiteRE.FindAllString(f.text, -1))
	}
	if n == 0 {
		t.Fatal("found no citation of docs/spec.md; is the pattern right?")
	}
	t.Logf("%d citations of %s", n, specPath)
	for _, p := range specCitations(files, headings) {
		t.Error(p)
	}
}

// TestSpecCitationsFound checks the citations C5 finds and judges, in a
// small repository of its own.
func TestSpecCitationsFound(t *testing.T) {
	spec := "# Spec\n\n## Fields\n\n```\n## Not a heading\n```\n\n### `benchrun eval SPEC.json --at T`\n\n## The query\n"
	fsys := fstest.MapFS{
		"docs/spec.md": {Data: []byte(spec)},
		"README.md": {Data: []byte("See docs/spec.md \"Fields\" and docs/spec.md \"Errors\".\n" +
			"(docs/spec.md, \"Fields\" to \"Not a heading\"); spec.md §2.\n")},
		"core/x/x.go": {Data: []byte("// Package x reads docs/spec.md \"The\n// query\" and docs/spec.md \"benchrun eval\"\n// and docs/spec.md \"benchrun run\".\npackage x\n\nvar s = `docs/spec.md \"Nowhere\"`\n")},
	}
	headings := specHeadings(spec)
	if want := []string{"Spec", "Fields", "benchrun eval SPEC.json --at T", "The query"}; !slices.Equal(headings, want) {
		t.Fatalf("headings %q, want %q", headings, want)
	}
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := specCitations(files, headings)
	want := []string{
		`README.md:1: cites docs/spec.md "Errors", which is no heading of it`,
		`README.md:2: cites docs/spec.md "Not a heading", which is no heading of it`,
		`README.md:2: cites docs/spec.md by a section number ("spec.md §2"); it has none: cite its heading in quotes`,
		`core/x/x.go:3: cites docs/spec.md "benchrun run", which is no heading of it`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
