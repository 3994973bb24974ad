package docs

import (
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// semanticsPath is the document every citation points into, relative to the
// module root.
const semanticsPath = "docs/semantics.md"

// oldPaths are the ways the semantics were cited before the document moved
// into the repository (C4). Each is spelled in two pieces so that rewriting
// the old citations across the repository leaves these strings alone.
var oldPaths = []string{".." + "/shared", "reference" + "/semantics.md"}

// semantics is what the document defines, each with the line defining it.
type semantics struct {
	sections   map[string]int // "4", "4.7", "9.A"
	invariants map[int]int    // the numbered invariants of §8
	protocol   map[string]int // "I1", "I1b", ...
}

var (
	sectionRE   = regexp.MustCompile(`^## (\d+)\. \S`)
	subRE       = regexp.MustCompile(`^### (\d+)\.([0-9A-Z]+) \S`)
	anyHeadRE   = regexp.MustCompile(`^#{1,6} `)
	invariantRE = regexp.MustCompile(`^(\d+)\. \S`)
	protocolDef = regexp.MustCompile(`\*\*(I\d+[a-z]?)\*\*`)
)

// parseSemantics reads the numbering of the document and reports where it is
// not well formed (C1).
func parseSemantics(text string) (semantics, []string) {
	s := semantics{sections: map[string]int{}, invariants: map[int]int{}, protocol: map[string]int{}}
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", semanticsPath, line, fmt.Sprintf(format, args...)))
	}
	section, lastSub, lastInv := -1, "", 0
	fenced := false
	for i, l := range strings.Split(text, "\n") {
		line := i + 1
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range protocolDef.FindAllStringSubmatch(l, -1) {
			if _, dup := s.protocol[m[1]]; !dup {
				s.protocol[m[1]] = line
			}
		}
		if m := sectionRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n != section+1 {
				bad(line, "section %d follows section %d; sections are numbered 0, 1, 2, … in order", n, section)
			}
			section, lastSub = n, ""
			s.sections[m[1]] = line
			continue
		}
		if m := subRE.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != section {
				bad(line, "subsection %s.%s is under section %d", m[1], m[2], section)
			}
			if section == 8 {
				bad(line, "subsection 8.%s: §8 has no numbered subsections (§8.K names invariant K)", m[2])
			}
			if want := nextSub(lastSub, m[2]); m[2] != want {
				bad(line, "subsection %s.%s follows %s.%s; want %s.%s", m[1], m[2], m[1], lastSub, m[1], want)
			}
			id := m[1] + "." + m[2]
			if _, dup := s.sections[id]; dup {
				bad(line, "subsection %s defined twice", id)
			}
			s.sections[id], lastSub = line, m[2]
			continue
		}
		if strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "### ") {
			bad(line, "heading %q is not numbered as \"## N. Title\" or \"### N.M Title\"", l)
			continue
		}
		if anyHeadRE.MatchString(l) {
			continue // unnumbered group headings such as those inside §8
		}
		if section == 8 {
			if m := invariantRE.FindStringSubmatch(l); m != nil {
				k, _ := strconv.Atoi(m[1])
				if k != lastInv+1 {
					bad(line, "invariant %d follows invariant %d; invariants are numbered 1, 2, … in order", k, lastInv)
				}
				s.invariants[k], lastInv = line, k
			}
		}
	}
	return s, problems
}

// nextSub returns the subsection number that should follow prev: 1 or A
// first, then the next number or letter in the same series as got.
func nextSub(prev, got string) string {
	if prev == "" {
		if _, err := strconv.Atoi(got); err == nil {
			return "1"
		}
		return "A"
	}
	if n, err := strconv.Atoi(prev); err == nil {
		return strconv.Itoa(n + 1)
	}
	if len(prev) == 1 && prev[0] >= 'A' && prev[0] < 'Z' {
		return string(prev[0] + 1)
	}
	return "?"
}

// citation is one reference to the semantics found in a file.
type citation struct {
	off  int // byte offset in the scanned text, for a stable order
	line int
	text string // as written, for messages
	// Exactly one of the following is set.
	section   string // "4.7", "9.A" (never "8.K": that is invariant K)
	invariant int
	protocol  string
}

var (
	// sectionCite matches "§4", "§4.7", "§9.A" and ranges "§4.2–§4.9",
	// "§4.7–4.9".
	sectionCite = regexp.MustCompile(`§(\d+)(?:\.([0-9A-Za-z]+))?(?:\s*[–-]\s*§?(\d+)(?:\.([0-9A-Za-z]+))?)?`)
	// specBefore marks a "§" that cites the spec documentation.
	specBefore = regexp.MustCompile(`(?i)\bspec(?:\.md)?\s*$`)
	// invariantCite matches "invariant 14", "invariants 1, 3, 4, and 5",
	// "invariants 15 and 16", "invariants 25–29".
	invariantCite = regexp.MustCompile(`(?i)\binvariants?\s+(\d+(?:\s*(?:,\s*and|,|and|–|-)\s*\d+)*)\b`)
	number        = regexp.MustCompile(`\d+`)
	protocolCite  = regexp.MustCompile(`\bI\d+[a-z]?\b`)
	// bracketNote announces that bracketed numbers in the text are
	// invariants of §8, as in "Invariants (numbers from §8 in brackets)".
	bracketNote = regexp.MustCompile(`numbers from §8 in brackets`)
	bracketCite = regexp.MustCompile(`\[(\d+)\]`)
)

// citations returns the citations in text, with line numbers.
func citations(text string) []citation {
	lines := newLineIndex(text)
	var out []citation
	for _, m := range sectionCite.FindAllStringSubmatchIndex(text, -1) {
		if specBefore.MatchString(text[max(0, m[0]-16):m[0]]) {
			continue
		}
		line, written := lines.at(m[0]), text[m[0]:m[1]]
		out = append(out, sectionRef(m[0], line, written, text[m[2]:m[3]], group(text, m, 2)))
		if m[6] >= 0 {
			out = append(out, sectionRef(m[0], line, written, text[m[6]:m[7]], group(text, m, 4)))
		}
	}
	for _, m := range invariantCite.FindAllStringSubmatchIndex(text, -1) {
		line, written := lines.at(m[0]), text[m[0]:m[1]]
		for _, n := range number.FindAllString(text[m[2]:m[3]], -1) {
			k, _ := strconv.Atoi(n)
			out = append(out, citation{off: m[0], line: line, text: written, invariant: k})
		}
	}
	if bracketNote.MatchString(text) {
		for _, m := range bracketCite.FindAllStringSubmatchIndex(text, -1) {
			k, _ := strconv.Atoi(text[m[2]:m[3]])
			out = append(out, citation{off: m[0], line: lines.at(m[0]), text: text[m[0]:m[1]], invariant: k})
		}
	}
	for _, m := range protocolCite.FindAllStringIndex(text, -1) {
		out = append(out, citation{off: m[0], line: lines.at(m[0]), text: text[m[0]:m[1]], protocol: text[m[0]:m[1]]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].off < out[j].off })
	return out
}

// group returns submatch i of m in text, or "".
func group(text string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return text[m[2*i]:m[2*i+1]]
}

// sectionRef builds the citation of section top.sub; section 8.K is
// invariant K of §8.
func sectionRef(off, line int, written, top, sub string) citation {
	c := citation{off: off, line: line, text: written, section: top}
	if sub == "" {
		return c
	}
	if k, err := strconv.Atoi(sub); err == nil && top == "8" {
		return citation{off: off, line: line, text: written, invariant: k}
	}
	c.section = top + "." + sub
	return c
}

// lineIndex holds the offsets at which lines start.
type lineIndex []int

func newLineIndex(text string) lineIndex {
	idx := lineIndex{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

// at returns the 1-based line holding offset off.
func (idx lineIndex) at(off int) int {
	n, _ := slices.BinarySearch(idx, off+1)
	return n
}

// commentText returns src with everything but the text of its comments
// replaced by spaces (line breaks kept, so offsets and lines stay those of
// src). Comment markers are blanked too.
func commentText(name string, src []byte) string {
	out := make([]byte, len(src))
	for i, b := range src {
		if b == '\n' {
			out[i] = '\n'
		} else {
			out[i] = ' '
		}
	}
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.COMMENT {
			continue
		}
		start := file.Offset(pos)
		end := len(src)
		if src[start+1] == '/' {
			if i := strings.IndexByte(string(src[start:]), '\n'); i >= 0 {
				end = start + i
			}
		} else if i := strings.Index(string(src[start+2:]), "*/"); i >= 0 {
			end = start + 2 + i + 2
		}
		copy(out[start:end], src[start:end])
		out[start], out[start+1] = ' ', ' '
		if src[start+1] == '*' && end-start >= 4 {
			out[end-2], out[end-1] = ' ', ' '
		}
	}
	return string(out)
}

// repoFile is a file the checks read: its path and the text to scan (for Go,
// only its comments).
type repoFile struct {
	path string
	text string
}

// repoFiles reads every .md file and the comments of every .go file of fsys,
// skipping directories whose names start with a dot.
func repoFiles(fsys fs.FS) ([]repoFile, error) {
	var files []repoFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		ext := path.Ext(p)
		if ext != ".go" && ext != ".md" {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		text := string(src)
		if ext == ".go" {
			text = commentText(p, src)
		}
		files = append(files, repoFile{path: p, text: text})
		return nil
	})
	return files, err
}

// missing returns one problem per citation in files that names something the
// document does not define (C3).
func missing(files []repoFile, s semantics) []string {
	var problems []string
	for _, f := range files {
		for _, c := range citations(f.text) {
			var what string
			switch {
			case c.section != "":
				if _, ok := s.sections[c.section]; !ok {
					what = "section §" + c.section
				}
			case c.protocol != "":
				if _, ok := s.protocol[c.protocol]; !ok {
					what = "protocol invariant " + c.protocol + " (§4.6)"
				}
			default:
				if _, ok := s.invariants[c.invariant]; !ok {
					what = "invariant " + strconv.Itoa(c.invariant) + " of §8"
				}
			}
			if what != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %q cites %s, which %s does not define",
					f.path, c.line, c.text, what, semanticsPath))
			}
		}
	}
	return problems
}

// stale returns one problem per line of files that cites the semantics at
// their old location (C4).
func stale(files []repoFile) []string {
	var problems []string
	for _, f := range files {
		for i, l := range strings.Split(f.text, "\n") {
			for _, old := range oldPaths {
				if strings.Contains(l, old) {
					problems = append(problems, fmt.Sprintf("%s:%d: cites %q; cite %s instead",
						f.path, i+1, old, semanticsPath))
				}
			}
		}
	}
	return problems
}

// moduleRoot returns the directory holding go.mod, searching upwards from the
// test's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// loadRepo reads the document and the repository's files.
func loadRepo(t *testing.T) (semantics, []string, []repoFile) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	doc, err := fs.ReadFile(fsys, semanticsPath)
	if err != nil {
		t.Fatal(err)
	}
	s, problems := parseSemantics(string(doc))
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return s, problems, files
}

// TestSemanticsCitations checks every citation of the repository against
// docs/semantics.md (C3) and that none cites the old location (C4).
func TestSemanticsCitations(t *testing.T) {
	s, _, files := loadRepo(t)
	if len(files) < 2 {
		t.Fatalf("found %d files to scan; is the test run inside the module?", len(files))
	}
	t.Run("sections", func(t *testing.T) {
		n := 0
		for _, f := range files {
			n += len(citations(f.text))
		}
		t.Logf("%d files, %d citations", len(files), n)
		for _, p := range missing(files, s) {
			t.Error(p)
		}
	})
	t.Run("old-path", func(t *testing.T) {
		for _, p := range stale(files) {
			t.Error(p)
		}
	})
}

// TestSemanticsStructure checks that docs/semantics.md is well formed (C1)
// and keeps every number citations rely on (C2): the sections and
// subsections, the invariants 1–33 of §8 and the protocol invariants of §4.6.
func TestSemanticsStructure(t *testing.T) {
	s, problems, _ := loadRepo(t)
	for _, p := range problems {
		t.Error(p)
	}
	subs := map[string]int{"1": 9, "2": 6, "3": 5, "4": 9, "5": 6, "6": 4, "7": 3}
	for top := 0; top <= 9; top++ {
		id := strconv.Itoa(top)
		if _, ok := s.sections[id]; !ok {
			t.Errorf("%s: no section %s (\"## %s. Title\")", semanticsPath, id, id)
		}
		for m := 1; m <= subs[id]; m++ {
			if sub := id + "." + strconv.Itoa(m); s.sections[sub] == 0 {
				t.Errorf("%s: no subsection %s (\"### %s Title\")", semanticsPath, sub, sub)
			}
		}
	}
	for _, ex := range []string{"9.A", "9.B", "9.C", "9.D", "9.E"} {
		if s.sections[ex] == 0 {
			t.Errorf("%s: no worked example %s", semanticsPath, ex)
		}
	}
	for k := 1; k <= 33; k++ {
		if s.invariants[k] == 0 {
			t.Errorf("%s: no invariant %d in §8", semanticsPath, k)
		}
	}
	for _, p := range []string{"I1", "I1a", "I1b", "I1c", "I2"} {
		if line, ok := s.protocol[p]; !ok {
			t.Errorf("%s: protocol invariant %s is not defined (in bold) in §4.6", semanticsPath, p)
		} else if line < s.sections["4.6"] || line >= s.sections["4.7"] {
			t.Errorf("%s:%d: protocol invariant %s is defined outside §4.6", semanticsPath, line, p)
		}
	}
}

// refs formats citations as "line:ref" for comparisons.
func refs(cs []citation) []string {
	var out []string
	for _, c := range cs {
		switch {
		case c.section != "":
			out = append(out, fmt.Sprintf("%d:§%s", c.line, c.section))
		case c.protocol != "":
			out = append(out, fmt.Sprintf("%d:%s", c.line, c.protocol))
		default:
			out = append(out, fmt.Sprintf("%d:inv%d", c.line, c.invariant))
		}
	}
	return out
}

func TestCitationsFound(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"see §4.7 and §9.A.", []string{"1:§4.7", "1:§9.A"}},
		{"(§4)", []string{"1:§4"}},
		{"semantics §1.3–§1.6 and §1.7", []string{"1:§1.3", "1:§1.6", "1:§1.7"}},
		{"§4.7–4.9", []string{"1:§4.7", "1:§4.9"}},
		{"§1.7-§1.8", []string{"1:§1.7", "1:§1.8"}},
		{"no frozen floor (§8.12)", []string{"1:inv12"}},
		{"§9.E(i): the controller", []string{"1:§9.E"}},
		{"first line\nthe cut (§2.6, the case)", []string{"2:§2.6"}},
		{"the query (SPEC §1 Time)", nil},
		{"SPEC.md §1–§3 fixes it; spec.md §2 and docs/spec.md §3 too", nil},
		{"cited as §N; §8 invariant K", []string{"1:§8"}},
		{"§8 invariant 14: admission", []string{"1:§8", "1:inv14"}},
		{"invariant 3 of §8 at batch level", []string{"1:inv3", "1:§8"}},
		{"§8 invariants 1, 3, 4,\n   5, 7 and 8", []string{"1:§8", "1:inv1", "1:inv3", "1:inv4", "1:inv5", "1:inv7", "1:inv8"}},
		{"invariants 15 and 16; invariant 9 and 10", []string{"1:inv15", "1:inv16", "1:inv9", "1:inv10"}},
		{"invariants 1, 3, 4, and 5", []string{"1:inv1", "1:inv3", "1:inv4", "1:inv5"}},
		{"invariants 25–29", []string{"1:inv25", "1:inv29"}},
		{"the invariants build tag; invariants.Enabled; invariant H2", nil},
		{"(invariant I1b of §4.6) and (I1c)", []string{"1:I1b", "1:§4.6", "1:I1c"}},
		{"an I2C bus, I1x9", nil},
		{"a[0] and [14] without the note", nil},
		{"Invariants (numbers from §8 in brackets):\n P1 atomic [14].\n P6 slots [23] [32]", []string{"1:§8", "2:inv14", "3:inv23", "3:inv32"}},
	} {
		if got := refs(citations(tc.text)); !slices.Equal(got, tc.want) {
			t.Errorf("citations(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestCommentText(t *testing.T) {
	src := "package p\n\n" +
		"// F does X (§1.4).\n" +
		"func F() string {\n" +
		"\treturn \"§2.2 in a string is code\" // and §2.3 after it\n" +
		"}\n" +
		"/* a block\n   citing §4.7 */ var x = `§9.Z`\n" +
		"// last line without a newline §8.14"
	text := commentText("p.go", []byte(src))
	if len(text) != len(src) || strings.Count(text, "\n") != strings.Count(src, "\n") {
		t.Fatalf("commentText changed offsets or lines:\n%q\n%q", src, text)
	}
	if got, want := refs(citations(text)), []string{"3:§1.4", "5:§2.3", "8:§4.7", "9:inv14"}; !slices.Equal(got, want) {
		t.Errorf("citations in comments = %q, want %q\ntext: %q", got, want, text)
	}
	for _, code := range []string{"return", "string", "var x", "package"} {
		if strings.Contains(text, code) {
			t.Errorf("commentText kept code %q: %q", code, text)
		}
	}
	if strings.Contains(text, "//") || strings.Contains(text, "/*") || strings.Contains(text, "*/") {
		t.Errorf("commentText kept comment markers: %q", text)
	}
}

// miniDoc is a small well-formed document.
const miniDoc = `# t

## 0. How to read

## 1. One

### 1.1 A

### 1.2 B

` + "```" + `
## 7. inside a code block: not a heading
` + "```" + `

## 2. Two

- **I1** — a protocol invariant.

## 3. Three

## 4. Four

## 5. Five

## 6. Six

## 7. Seven

## 8. Invariants

#### A group

1. **One.** Text.
2. **Two.** Text
   over two lines.

## 9. Examples

### 9.A First

### 9.B Second
`

func TestParseSemantics(t *testing.T) {
	s, problems := parseSemantics(miniDoc)
	if len(problems) != 0 {
		t.Fatalf("problems in a well-formed document: %q", problems)
	}
	var secs []string
	for id := range s.sections {
		secs = append(secs, id)
	}
	slices.Sort(secs)
	if want := []string{"0", "1", "1.1", "1.2", "2", "3", "4", "5", "6", "7", "8", "9", "9.A", "9.B"}; !slices.Equal(secs, want) {
		t.Errorf("sections %q, want %q", secs, want)
	}
	if len(s.invariants) != 2 || s.invariants[1] == 0 || s.invariants[2] == 0 {
		t.Errorf("invariants %v, want 1 and 2", s.invariants)
	}
	if s.protocol["I1"] == 0 || len(s.protocol) != 1 {
		t.Errorf("protocol invariants %v, want I1", s.protocol)
	}
	if s.sections["9.B"] != strings.Count(miniDoc[:strings.Index(miniDoc, "### 9.B")], "\n")+1 {
		t.Errorf("9.B at line %d", s.sections["9.B"])
	}

	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"section out of order", "## 3. Three", "## 4. Three", "section 4 follows section 2"},
		{"subsection out of order", "### 1.2 B", "### 1.3 B", "subsection 1.3 follows 1.1; want 1.2"},
		{"subsection under another section", "### 1.2 B", "### 2.2 B", "subsection 2.2 is under section 1"},
		{"letters out of order", "### 9.B Second", "### 9.C Second", "subsection 9.C follows 9.A; want 9.B"},
		{"subsection in §8", "#### A group", "### 8.1 A group", "§8 has no numbered subsections"},
		{"invariant gap", "2. **Two.**", "3. **Two.**", "invariant 3 follows invariant 1"},
		{"unnumbered heading", "## 5. Five", "## Five", `heading "## Five" is not numbered`},
		{"duplicate subsection", "### 9.B Second", "### 9.B Second\n\n### 9.B Again", "subsection 9.B defined twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(miniDoc, tc.old, tc.new, 1)
			if doc == miniDoc {
				t.Fatalf("fixture edit %q did not apply", tc.old)
			}
			_, problems := parseSemantics(doc)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
}

func TestMissingAndStale(t *testing.T) {
	fsys := fstest.MapFS{
		"docs/semantics.md": {Data: []byte(miniDoc)},
		"README.md": {Data: []byte("# r\n\nRules: §1.2, §9.B and §8 invariant 2.\n" +
			"Old: [semantics](" + oldPaths[0] + "/" + oldPaths[1] + ") §1.5\n")},
		"core/x/doc.go": {Data: []byte("// Package x (§2, I1).\n//\n// Invariant 3 of §8; see\n// §9.C.\npackage x\n\nvar s = \"§6.6 invariant 99\"\n")},
		"core/x/x.txt":  {Data: []byte("§7.7 in a file that is neither .go nor .md\n")},
		".git/HEAD.md":  {Data: []byte("§7.7 under a dot directory\n")},
		"core/y/y.go":   {Data: []byte("package y // I2 and §8.5\n")},
	}
	files, err := repoFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.path)
	}
	if want := []string{"README.md", "core/x/doc.go", "core/y/y.go", "docs/semantics.md"}; !slices.Equal(paths, want) {
		t.Errorf("scanned %q, want %q", paths, want)
	}
	s, problems := parseSemantics(miniDoc)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	got := missing(files, s)
	want := []string{
		`README.md:4: "§1.5" cites section §1.5, which docs/semantics.md does not define`,
		`core/x/doc.go:3: "Invariant 3" cites invariant 3 of §8, which docs/semantics.md does not define`,
		`core/x/doc.go:4: "§9.C" cites section §9.C, which docs/semantics.md does not define`,
		`core/y/y.go:1: "I2" cites protocol invariant I2 (§4.6), which docs/semantics.md does not define`,
		`core/y/y.go:1: "§8.5" cites invariant 5 of §8, which docs/semantics.md does not define`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	gotStale := stale(files)
	wantStale := []string{
		`README.md:4: cites "` + oldPaths[0] + `"; cite docs/semantics.md instead`,
		`README.md:4: cites "` + oldPaths[1] + `"; cite docs/semantics.md instead`,
	}
	if !slices.Equal(gotStale, wantStale) {
		t.Errorf("stale:\n%s\nwant:\n%s", strings.Join(gotStale, "\n"), strings.Join(wantStale, "\n"))
	}
}
