package docs

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

var (
	// linkRE finds an inline link's target: the parenthesized part after
	// a link text's closing bracket (the text may run over lines; the
	// target never holds a space).
	linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	// atxHeadingRE is an ATX heading and its text.
	atxHeadingRE = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$`)
	// inlineLinkRE is a link inside a heading, kept as its text in the
	// heading's anchor.
	inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// mdLine is one line of a Markdown file outside its fenced code blocks,
// with its inline code spans blanked.
type mdLine struct {
	n    int
	text string
}

// prose returns md's lines outside fenced code blocks (``` or ~~~), inline
// code spans replaced by spaces: what a renderer reads as links and
// headings.
func prose(md string) []mdLine {
	var out []mdLine
	fence := ""
	for i, l := range strings.Split(md, "\n") {
		t := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		out = append(out, mdLine{i + 1, blankCode(l)})
	}
	return out
}

// blankCode replaces each inline code span of l (backquotes included) by
// spaces.
func blankCode(l string) string {
	b := []byte(l)
	for i := 0; i < len(b); i++ {
		if b[i] != '`' {
			continue
		}
		j := strings.IndexByte(l[i+1:], '`')
		if j < 0 {
			break
		}
		for k := i; k <= i+1+j; k++ {
			b[k] = ' '
		}
		i += 1 + j
	}
	return string(b)
}

// anchor is GitHub's anchor of a heading's text: inline code and links
// read as their text, lower case, every character but letters, digits,
// spaces, hyphens and underscores dropped, spaces as hyphens.
func anchor(heading string) string {
	h := inlineLinkRE.ReplaceAllString(heading, "$1")
	h = strings.NewReplacer("`", "", "**", "", "__", "").Replace(h)
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of md's headings; a heading whose anchor
// came before gets -1, -2, … as GitHub numbers them.
func anchors(md string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose(md) {
		m := atxHeadingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		// Code spans were blanked in l.text; the anchor reads the
		// original heading.
		orig := strings.Split(md, "\n")[l.n-1]
		a := anchor(atxHeadingRE.FindStringSubmatch(orig)[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// brokenLinks returns a line for each relative link in the Markdown files
// of fsys (testdata and dot directories skipped) whose file does not
// exist or whose fragment names no heading of its Markdown file.
func brokenLinks(fsys fs.FS) ([]string, int, error) {
	docs := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return fs.SkipDir
			}
			return nil
		}
		if path.Ext(p) == ".md" {
			src, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			docs[p] = string(src)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	anchorsOf := map[string]map[string]bool{}
	var problems []string
	n := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range docs {
			if !yield(p) {
				return
			}
		}
	}) {
		for _, l := range prose(docs[p]) {
			for _, m := range linkRE.FindAllStringSubmatch(l.text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				file, frag, _ := strings.Cut(target, "#")
				dest := p
				if file != "" {
					dest = path.Join(path.Dir(p), file)
					if _, err := fs.Stat(fsys, dest); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d: link to %s: no such file", p, l.n, target))
						continue
					}
				}
				if frag == "" || path.Ext(dest) != ".md" {
					continue
				}
				if f, err := url.PathUnescape(frag); err == nil {
					frag = f
				}
				if anchorsOf[dest] == nil {
					anchorsOf[dest] = anchors(docs[dest])
				}
				if !anchorsOf[dest][frag] {
					problems = append(problems, fmt.Sprintf("%s:%d: link to %s: %s has no heading #%s", p, l.n, target, dest, frag))
				}
			}
		}
	}
	return problems, n, nil
}

// TestDocLinksResolve checks every relative link of the repository's
// Markdown files: its file exists, and its fragment is a heading of that
// file as GitHub anchors it. The README and the histories link to each
// other's sections by hundreds; a heading reworded, or a slug mistyped,
// leaves a link that goes to the top of the page.
func TestDocLinksResolve(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	problems, n, err := brokenLinks(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("found %d relative links; is the test run inside the module?", n)
	}
	t.Logf("%d relative links", n)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestDocLinksFound pins what TestDocLinksResolve finds and how it anchors
// headings, in a small repository of its own.
func TestDocLinksFound(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\n" +
			"See [a](docs/a.md#two-words), [b](docs/a.md#x-and-y--z), [c](docs/a.md#repeat-1),\n" +
			"[d](docs/a.md#repeat-2), [e](docs/a.md#nope), [f](docs/gone.md), [g](#top),\n" +
			"[h](#bottom), [i](https://example.com/#x), `[j](#in-code)`, [k](docs/a.md#café-12),\n" +
			"[l](docs/a.md#a-link-in-it), [m](scripts/run.sh), [n](docs/a.md#caf%C3%A9-12).\n" +
			"```\n[o](#in-a-fence)\n```\n")},
		"docs/a.md": {Data: []byte("# Two words\n\n## `X` and Y — z\n\n## Repeat\n## Repeat\n\n" +
			"## Café 1×2\n\n### A [link](../README.md) in it\n\n```\n# Not a heading\n```\n")},
		"scripts/run.sh":          {Data: []byte("#!/bin/sh\n")},
		"x/testdata/skipped.md":   {Data: []byte("[z](#nowhere)\n")},
		".hidden/also-skipped.md": {Data: []byte("[z](#nowhere)\n")},
		"docs/sub/refers-up.md":   {Data: []byte("[up](../a.md#repeat) and [bad](../a.md#not-a-heading)\n")},
	}
	got, n, err := brokenLinks(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:4: link to docs/a.md#repeat-2: docs/a.md has no heading #repeat-2",
		"README.md:4: link to docs/a.md#nope: docs/a.md has no heading #nope",
		"README.md:4: link to docs/gone.md: no such file",
		"README.md:5: link to #bottom: README.md has no heading #bottom",
		"docs/sub/refers-up.md:1: link to ../a.md#not-a-heading: docs/a.md has no heading #not-a-heading",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Twelve in the README's prose, the link in a heading of docs/a.md,
	// two in docs/sub.
	if n != 15 {
		t.Errorf("%d relative links checked, want 15", n)
	}
}
