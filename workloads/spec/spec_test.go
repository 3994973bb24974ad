package spec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/plan"
)

// TestDecodeSpecExample decodes the example of docs/spec.md field by field.
func TestDecodeSpecExample(t *testing.T) {
	s, err := ReadFile("testdata/orders_lineitem.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "orders_lineitem" || s.Version != 1 || s.AsOf != 0 || s.HasUntil || s.Description != "free text" {
		t.Errorf("header fields: %+v", s)
	}
	if len(s.Inputs) != 2 || s.Inputs[0].Name != "orders" || s.Inputs[1].Name != "lineitem" {
		t.Fatalf("inputs not in file order: %+v", s.Inputs)
	}
	if s.Inputs[0].Source != SourceCSV || s.CSVPath(&s.Inputs[0]) != filepath.Join("testdata", "orders.csv") {
		t.Errorf("orders source %v path %q", s.Inputs[0].Source, s.CSVPath(&s.Inputs[0]))
	}
	g := s.Inputs[1].Generate
	wantGen := &Generate{Rows: 100000, Seed: 7, Batches: 100, Retract: 0.1, Columns: []ColumnGen{
		{Column: "okey", Dist: DistUniform, Min: 0, Max: 9999},
		{Column: "qty", Dist: DistZipf, N: 50, S: 0.99},
	}}
	if !reflect.DeepEqual(g, wantGen) {
		t.Errorf("generate = %+v, want %+v", g, wantGen)
	}
	if len(s.Views) != 2 || s.Views[0].Name != "priced" || s.Views[0].Input != "orders" || s.Views[1].Query == nil {
		t.Fatalf("views: %+v", s.Views)
	}
	cols := s.Columns()
	for name, want := range map[string][]string{
		"priced": {"okey", "cust", "price", "unit"},
		"sold":   {"p_cust", "ratio"},
	} {
		if !reflect.DeepEqual(cols[name], want) {
			t.Errorf("columns of %s = %v, want %v", name, cols[name], want)
		}
	}
	if got := s.Outputs(); !reflect.DeepEqual(got, []string{"s.p_cust", "total", "n", "lo"}) {
		t.Errorf("outputs = %v", got)
	}
	if s.Query.Join != JoinLinear || s.Query.Reduce == nil || len(s.Query.Reduce.Aggregates) != 3 {
		t.Errorf("query: %+v", s.Query)
	}
	if s.Plan == nil || s.Plan.Query.Query.Join != plan.Linear || s.Plan.Collection("sold").Query.Query.Join != plan.Linear {
		t.Errorf("plan joins: %+v", s.Plan)
	}
	d, err := Decode("d.json", ".", []byte(strings.Replace(base, `"query": {`, `"query": {"join": "delta", `, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Query.Join != JoinDelta || d.Plan.Query.Query.Join != plan.Delta {
		t.Errorf("a delta join did not reach the plan: spec %q, plan %v", d.Query.Join, d.Plan.Query.Query.Join)
	}
	if e := s.Pos("indexes.sold_by_cust.key"); e.Line != 26 {
		t.Errorf("line of indexes.sold_by_cust.key = %d, want 37", e.Line)
	}
}

// TestExactNumbers checks that large integers are not rounded through
// float64 and that integer-valued exponent forms are accepted.
func TestExactNumbers(t *testing.T) {
	src := `{"version": 1, "name": "n", "as_of": 9007199254740993, "until": 1.8446744073709551615e19,
	  "inputs": {"a": {"columns": ["x"], "rows": [[9007199254740993, -9223372036854775808, 9223372036854775807]]},
	             "g": {"columns": ["x"], "generate": {"rows": 1e6, "columns": {"x": {"dist": "seq"}}}}},
	  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	s, err := Decode("n.json", ".", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.AsOf != 9007199254740993 || s.Until != 18446744073709551615 {
		t.Errorf("as_of %d until %d", s.AsOf, s.Until)
	}
	r := s.Inputs[0].Rows
	if r.Times[0] != 9007199254740993 || r.Diffs[0] != -9223372036854775808 || r.Row(0)[0] != 9223372036854775807 {
		t.Errorf("row = %d %d %v", r.Times[0], r.Diffs[0], r.Row(0))
	}
	if s.Inputs[1].Generate.Rows != 1000000 || s.Inputs[1].Generate.Batches != 1 {
		t.Errorf("generate = %+v", s.Inputs[1].Generate)
	}
}

const base = `{"version": 1, "name": "w",
  "inputs": {"a": {"columns": ["x", "y"], "rows": [[0, 1, 1, 2]]}},
  "query": {"from": [{"as": "a", "collection": "a"}]}}`

// TestVersionIsAnIntegerField checks that version reads like every other
// integer field (docs/spec.md, "Decoding is strict"): a form that denotes
// 1 exactly (1.0, 1e0, 0.1e1) is version 1, as 2.0 is 2 in as_of, while a
// number that is not 1, however close, is refused.
func TestVersionIsAnIntegerField(t *testing.T) {
	for _, v := range []string{"1.0", "1e0", "0.1e1", "10e-1", "1.000"} {
		src := strings.Replace(base, `"version": 1, "name": "w",`, `"version": `+v+`, "name": "w", "as_of": 2.0, "until": 3e0,`, 1)
		s, err := Decode("v.json", ".", []byte(src))
		if err != nil || s.Version != 1 || s.AsOf != 2 || s.Until != 3 {
			t.Errorf("version %s: %+v, %v", v, s, err)
		}
	}
	for v, want := range map[string]string{
		"1.0000000000000000001": "v.json:1: version: 1.0000000000000000001 is not an integer",
		"0.9999999999999999999": "v.json:1: version: 0.9999999999999999999 is not an integer",
		"2.0":                   "v.json:1: version: unsupported version 2 (this benchrun reads version 1)",
		"1e-400":                "v.json:1: version: 1e-400 is not an integer",
	} {
		_, err := Decode("v.json", ".", []byte(strings.Replace(base, `"version": 1`, `"version": `+v, 1)))
		if err == nil || err.Error() != want {
			t.Errorf("version %s: err = %v, want %s", v, err, want)
		}
	}
}

// TestInvalidUTF8 checks that a string of a spec holding a byte that is
// not UTF-8 is refused at decode, naming the field, its line and the
// byte's column (docs/spec.md, "Decoding is strict"), instead of read as
// U+FFFD: a csv path would name another file, an expression report a
// character the file does not hold, a description change silently.
func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"description", `"name": "w",`, "\"name\": \"w\", \"description\": \"caf\xe9\",",
			"u.json:1: description: the string holds a byte that is not UTF-8 (0xe9, column 48): a spec file is UTF-8 text"},
		{"csv path", `"rows": [[0, 1, 1, 2]]`, "\"csv\": \"d\xff.csv\"",
			"u.json:2: inputs.a.csv: the string holds a byte that is not UTF-8 (0xff, column 52): a spec file is UTF-8 text"},
		{"filter", `"collection": "a"}]`, "\"collection\": \"a\"}],\n\"filter\": [\"a.x \xc3 1\"]",
			"u.json:4: query.filter[0]: the string holds a byte that is not UTF-8 (0xc3, column 17): a spec file is UTF-8 text"},
		{"member name", `"inputs": {"a":`, "\"inputs\": {\"\xfe\": 1, \"a\":",
			"u.json:2: inputs: a member name holds a byte that is not UTF-8 (0xfe, column 15): a spec file is UTF-8 text"},
		{"cut sequence", `"name": "w",`, "\"name\": \"w\", \"description\": \"\xe2\x82\",",
			"u.json:1: description: the string holds a byte that is not UTF-8 (0xe2, column 45): a spec file is UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, tc.old, tc.new, 1)
			s, err := Decode("u.json", ".", []byte(src))
			if s != nil || err == nil || err.Error() != tc.want || !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v,\nwant %s", err, tc.want)
			}
		})
	}
	// UTF-8 itself is text like any other.
	s, err := Decode("u.json", ".", []byte(strings.Replace(base, `"name": "w",`, `"name": "w", "description": "caf\u00e9 é €",`, 1)))
	if err != nil || s.Description != "café é €" {
		t.Errorf("UTF-8 description: %q, %v", s.Description, err)
	}
}

// TestLineEndsOfEveryKind: a spec file saved with carriage returns alone
// as its line ends (the classic Mac OS's), which JSON reads as white
// space, named every fault on line 1, with a column counted from the
// file's start. Its faults are named on their lines and columns, as with
// line feeds or Windows' CRLF.
func TestLineEndsOfEveryKind(t *testing.T) {
	src := strings.Replace(base, `"name": "w",`, "\"name\": \"w\", \"description\": \"caf\xe9\",", 1)
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		// The bad byte on line 3, after two lines of their own.
		text := strings.ReplaceAll("{\n\n"+src[1:], "\n", eol)
		_, err := Decode("u.json", ".", []byte(text))
		want := "u.json:3: description: the string holds a byte that is not UTF-8 (0xe9, column 47): a spec file is UTF-8 text"
		if err == nil || err.Error() != want {
			t.Errorf("line ends %q: err = %v,\nwant %s", eol, err, want)
		}
		bad := strings.ReplaceAll(strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"rows": [[0, 1, 1, 2]], "batches": -4`, 1), "\n", eol)
		if _, err := Decode("b.json", ".", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "b.json:2: inputs.a.batches") {
			t.Errorf("line ends %q: err = %v, want it on line 2 at inputs.a.batches", eol, err)
		}
	}
}

// TestSyntaxErrorNamesTheCharacterAtTheFault: a character outside
// ASCII where JSON allows none is named as the file holds it, with its
// column, where the decoder named the rune of its first byte: a
// typographic quote (copied from a word processor) read "invalid
// character 'â'", é read "'Ã'", and a file saved as UTF-16 "'ÿ'". A
// byte that is not UTF-8 there is named as a byte, as one inside a
// string is: also one the decoder names as an escape (a Windows-1252
// quote, 0x93, read "invalid character '\u0093'", with no column).
func TestSyntaxErrorNamesTheCharacterAtTheFault(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"typographic quotes", strings.Replace(base, `"name": "w"`, "\"name\": \u201cw\u201d", 1),
			`u.json:1: name: invalid JSON: invalid character "“" (U+201C, column 24) looking for beginning of value (a typographic quote: JSON strings take plain double quotes, ")`},
		{"typographic key", strings.Replace(base, `"name": "w"`, "\u2018name\u2019: \"w\"", 1),
			`u.json:1: invalid JSON: invalid character "‘" (U+2018, column 16) looking for beginning of object key string (a typographic quote: JSON strings take plain double quotes, ")`},
		{"after a value", strings.Replace(base, `"name": "w",`, "\"name\": \"w\" \u00e9,", 1),
			`u.json:1: invalid JSON: invalid character "é" (U+00E9, column 28) after object key:value pair`},
		{"no-break space", strings.Replace(base, `"inputs"`, "\u00a0\"inputs\"", 1),
			`u.json:2: invalid JSON: invalid character "\u00a0" (U+00A0, column 3) looking for beginning of object key string`},
		{"in an array", strings.Replace(base, `[[0, 1, 1, 2]]`, "[[0, 1, 1, \u20ac]]", 1),
			`u.json:2: inputs.a.rows[0][3]: invalid JSON: invalid character "€" (U+20AC, column 62) looking for beginning of value`},
		{"latin-1 byte", strings.Replace(base, `"name": "w"`, "\"name\": \xe9", 1),
			"u.json:1: name: invalid JSON: a byte that is not UTF-8 (0xe9, column 24): a spec file is UTF-8 text"},
		{"windows-1252 quotes", strings.Replace(base, `"name": "w"`, "\"name\": \x93w\x94", 1),
			"u.json:1: name: invalid JSON: a byte that is not UTF-8 (0x93, column 24): a spec file is UTF-8 text"},
		{"latin-1 no-break space", strings.Replace(base, `"inputs"`, "\xa0\"inputs\"", 1),
			"u.json:2: invalid JSON: a byte that is not UTF-8 (0xa0, column 3): a spec file is UTF-8 text"},
		{"latin-1 soft hyphen", strings.Replace(base, `"name": "w"`, "\"name\": \xad", 1),
			"u.json:1: name: invalid JSON: a byte that is not UTF-8 (0xad, column 24): a spec file is UTF-8 text"},
		{"in a literal", strings.Replace(base, `"name": "w"`, "\"name\": tru\xe9", 1),
			"u.json:1: name: invalid JSON: a byte that is not UTF-8 (0xe9, column 27): a spec file is UTF-8 text"},
		{"utf-16", "\xff\xfe{\x00}\x00",
			"u.json:1: invalid JSON: the file starts with a UTF-16 byte order mark (0xff 0xfe): a spec file is UTF-8 text"},
		{"utf-16 big-endian", "\xfe\xff\x00{\x00}",
			"u.json:1: invalid JSON: the file starts with a UTF-16 byte order mark (0xfe 0xff): a spec file is UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Decode("u.json", ".", []byte(tc.src))
			if s != nil || err == nil || err.Error() != tc.want || !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v,\nwant %s", err, tc.want)
			}
		})
	}
}

// TestLoneSurrogateEscape: a \u escape of half a surrogate pair without
// the other half is valid JSON syntax that encodes no character;
// encoding/json reads it as U+FFFD, so a csv path named another file and
// a description changed silently, where a byte that is not UTF-8 was
// refused. It is refused the same way, naming the escape and its column;
// a whole pair, and an escaped backslash before "u", are text.
func TestLoneSurrogateEscape(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"high alone", `caf\ud800`, "u.json:1: description: the string holds \\ud800 (column 48), half of a surrogate pair without the other half: it encodes no character"},
		{"low alone", `\uDC01x`, "u.json:1: description: the string holds \\uDC01 (column 45), half of a surrogate pair without the other half: it encodes no character"},
		{"high then no low", `\ud83d\u0041`, "u.json:1: description: the string holds \\ud83d (column 45), half of a surrogate pair without the other half: it encodes no character"},
		{"two highs", `\ud83d\ud83d\ude00`, "u.json:1: description: the string holds \\ud83d (column 45), half of a surrogate pair without the other half: it encodes no character"},
		{"after a pair", `\ud83d\ude00\udfff`, "u.json:1: description: the string holds \\udfff (column 57), half of a surrogate pair without the other half: it encodes no character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, `"name": "w",`, `"name": "w", "description": "`+tc.text+`",`, 1)
			s, err := Decode("u.json", ".", []byte(src))
			if s != nil || err == nil || err.Error() != tc.want || !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v,\nwant %s", err, tc.want)
			}
		})
	}
	csv := strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"csv": "d\udfff.csv"`, 1)
	if _, err := Decode("u.json", ".", []byte(csv)); err == nil || !strings.HasPrefix(err.Error(), "u.json:2: inputs.a.csv: the string holds \\udfff") {
		t.Errorf("csv path: %v", err)
	}
	for text, want := range map[string]string{
		`\ud83d\ude00`:    "\U0001F600",
		`\\ud800`:         `\ud800`,
		`a\\\ud83d\ude00`: "a\\\U0001F600",
	} {
		src := strings.Replace(base, `"name": "w",`, `"name": "w", "description": "`+text+`",`, 1)
		s, err := Decode("u.json", ".", []byte(src))
		if err != nil || s.Description != want {
			t.Errorf("description %s: %v, %v; want %q", text, s, err, want)
		}
	}
}

// TestBadSpecs runs every way a spec can be wrong and checks the message
// names the file, the line and the field.
func TestBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want string // file:line: field: message prefix
	}{
		{"syntax", `{"version": 1,` + "\n" + `"name": }`, "bad.json:2: name: invalid JSON"},
		{"truncated", `{"version": 1`, "bad.json:1: invalid JSON: unexpected end of file"},
		// A fault inside a literal or a number is on its own line, however
		// many lines of delimiters come before it.
		{"bad literal", strings.Replace(base, `"collection": "a"`, "\n\n\"collection\": tru", 1), "bad.json:5: query.from[0].collection: invalid JSON: invalid character '}' in literal true"},
		{"bad number", strings.Replace(base, `[[0, 1, 1, 2]]`, "[[0, 1,\n\n 1, -]]", 1), "bad.json:4: inputs.a.rows[0][3]: invalid JSON: invalid character ']' in numeric literal"},
		// Where a value should start, or inside a number, the decoder's
		// error offset is the previous token's, lines above the fault.
		{"syntax in a list", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"rows": [`+"\n"+`[0, 1, 1, 2],`+"\n"+`x[0, 1, 1, 2]]`, 1), "bad.json:4: inputs.a.rows[1]: invalid JSON: invalid character 'x'"},
		{"syntax in a number", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"rows": [`+"\n"+`[0, 1, 1, 2],`+"\n"+`[0, 1, 1, -x]]`, 1), "bad.json:4: inputs.a.rows[1][3]: invalid JSON: invalid character 'x' in numeric literal"},
		{"trailing", base + ` {}`, "bad.json:3: unexpected data after the top-level object"},
		{"not object", `[1]`, "bad.json:1: must be an object, not an array"},
		{"unknown top field", strings.Replace(base, `"name": "w"`, `"name": "w", "nmae": "v"`, 1), "bad.json:1: nmae: unknown field"},
		{"duplicate field", strings.Replace(base, `"name": "w"`, `"name": "w", "name": "v"`, 1), "bad.json:1: name: duplicate field"},
		{"missing version", strings.Replace(base, `"version": 1, `, ``, 1), "bad.json:1: version: required field is missing"},
		{"version 2", strings.Replace(base, `"version": 1`, `"version": 2`, 1), "bad.json:1: version: unsupported version 2"},
		{"version float", strings.Replace(base, `"version": 1`, `"version": 1.5`, 1), "bad.json:1: version: 1.5 is not an integer"},
		{"version string", strings.Replace(base, `"version": 1`, `"version": "1"`, 1), "bad.json:1: version: must be an integer, not a string"},
		{"bad name", strings.Replace(base, `"name": "w"`, `"name": "W-1"`, 1), `bad.json:1: name: bad name "W-1"`},
		{"bad input name", strings.Replace(base, `"a": {"columns"`, `"A": {"columns"`, 1), `bad.json:2: inputs.A: bad name "A": names match [a-z_][a-z0-9_]*`},
		{"bad index name", strings.Replace(base, `"query":`, `"indexes": {"by-x": {"on": "a", "key": ["x"]}}, "query":`, 1), `bad.json:3: indexes.by-x: bad name "by-x"`},
		{"keyword name", strings.Replace(base, `"name": "w"`, `"name": "func"`, 1), `bad.json:1: name: bad name "func": a Go keyword`},
		{"column time", strings.Replace(base, `["x", "y"]`, `["x", "time"]`, 1), `bad.json:2: inputs.a.columns[1]: bad name "time"`},
		{"column repeated", strings.Replace(base, `["x", "y"]`, `["x", "x"]`, 1), `bad.json:2: inputs.a.columns[1]: column "x" repeats`},
		{"no columns", strings.Replace(base, `["x", "y"], "rows": [[0, 1, 1, 2]]`, `[], "rows": []`, 1), "bad.json:2: inputs.a.columns: at least one column"},
		{"negative as_of", strings.Replace(base, `"name": "w"`, `"name": "w", "as_of": -1`, 1), "bad.json:1: as_of: -1 is outside 0.."},
		{"until not after as_of", strings.Replace(base, `"name": "w"`, `"name": "w", "as_of": 5, "until": 5`, 1), "bad.json:1: until: until 5 must be greater than as_of 5"},
		{"two sources", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"rows": [], "csv": "a.csv"`, 1), "bad.json:2: inputs.a: needs exactly one of csv, generate, rows (has csv, rows)"},
		{"no source", strings.Replace(base, `, "rows": [[0, 1, 1, 2]]`, ``, 1), "bad.json:2: inputs.a: needs a source: one of csv, generate or rows"},
		{"row arity", strings.Replace(base, `[[0, 1, 1, 2]]`, `[[0, 1, 1]]`, 1), "bad.json:2: inputs.a.rows[0]: must be an array of 4 integers: time, diff, x, y"},
		{"row diff 0", strings.Replace(base, `[[0, 1, 1, 2]]`, `[[0, 0, 1, 2]]`, 1), "bad.json:2: inputs.a.rows[0][1]: diff must not be 0"},
		{"row value overflow", strings.Replace(base, `[[0, 1, 1, 2]]`, `[[0, 1, 9223372036854775808, 2]]`, 1), "bad.json:2: inputs.a.rows[0][2]: 9223372036854775808 is outside the int64 range"},
		{"row negative time", strings.Replace(base, `[[0, 1, 1, 2]]`, `[[-1, 1, 1, 2]]`, 1), "bad.json:2: inputs.a.rows[0][0]: time -1 is outside 0..18446744073709551614"},
		{"generate unknown dist", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "normal"}, "y": {"dist": "seq"}}}`, 1), `bad.json:2: inputs.a.generate.columns.x.dist: unknown distribution "normal"`},
		{"generate missing column", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.y: column has no distribution"},
		{"generate extra column", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}, "z": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.z: not a column of the input"},
		{"zipf s 0", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": 0}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.s: s 0 must be > 0"},
		{"zipf n 0", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 0, "s": 1}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.n: n must be in 1.."},
		{"uniform min above max", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "uniform", "min": 5, "max": 4}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.max: max 4 is below min 5"},
		{"seq with param", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "seq", "min": 1}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.min: unknown field"},
		{"retract 1", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "retract": 1, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.retract: 1 is outside [0, 1)"},
		// A value just outside a bound that a float64 rounds onto the bound
		// is judged by its digits, and the message says what happened:
		// 0.99999999999999999 is below 1, so "outside [0, 1)" alone would
		// be false.
		{"retract rounds to 1", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "retract": 0.99999999999999999, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.retract: 0.99999999999999999 is below 1, but a float64 reads it as 1, outside [0, 1)"},
		{"retract 1.0", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "retract": 10e-1, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.retract: 10e-1 is outside [0, 1)"},
		{"zipf s rounds to 100", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": 100.000000000000001}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.s: s 100.000000000000001 is above 100 (a float64 reads it as 100): s must be > 0 (and at most 100)"},
		// A float64 holds neither 1e400 nor 1e-400: each is refused saying so.
		{"retract 1e400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "retract": 1e400, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.retract: 1e400 is beyond the range of a float64 (about ±1.8e308): retract must be in [0, 1)"},
		{"retract 1e-400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "retract": 1e-400, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.retract: 1e-400 is not 0 but too close to 0 for a float64 (the smallest is 5e-324), which would read it as 0: retract must be in [0, 1)"},
		{"zipf s -1e400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": -1e400}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.s: -1e400 is beyond the range of a float64 (about ±1.8e308): s must be > 0"},
		{"zipf s 1e-400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": 1e-400}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.s: 1e-400 is not 0 but too close to 0 for a float64 (the smallest is 5e-324), which would read it as 0: s must be > 0"},
		{"zipf s 0e-400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": 0e-400}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.columns.x.s: s 0e-400 must be > 0"},
		{"seed 1e400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "seed": 1e400, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.seed: 1e400 is outside -9223372036854775808..18446744073709551615, the range of every integer field"},
		{"seed 1e-400", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "seed": 1e-400, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.seed: 1e-400 is not an integer"},
		{"seed 1e-99999999999999999999", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "seed": 1e-99999999999999999999, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.seed: 1e-99999999999999999999 is not an integer"},
		{"batches 0", strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "batches": 0, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1), "bad.json:2: inputs.a.generate.batches: must be at least 1"},
		{"view named like input", strings.Replace(base, `"query":`, `"views": {"a": {"input": "a"}}, "query":`, 1), "bad.json:3: views.a: a is already an input (inputs and views share one namespace)"},
		{"view of missing input", strings.Replace(base, `"query":`, `"views": {"v": {"input": "b"}}, "query":`, 1), "bad.json:3: views.v.input: no input or view is called b"},
		{"view cycle", strings.Replace(base, `"query":`, `"views": {"v": {"input": "w"},`+"\n"+`"w": {"query": {"from": [{"as": "v", "collection": "v"}]}}}, "query":`, 1), "bad.json:3: views.v: views form a cycle: v -> w -> v"},
		{"query view extra field", strings.Replace(base, `"query":`, `"views": {"v": {"query": {"from": [{"as": "a", "collection": "a"}]}, "input": "a"}}, "query":`, 1), "bad.json:3: views.v.input: unknown field in a query view"},
		{"view map repeats column", strings.Replace(base, `"query":`, `"views": {"v": {"input": "a", "map": [{"name": "x", "expr": "1"}]}}, "query":`, 1), "bad.json:3: views.v.map[0].name: x is already a column of the view"},
		{"index on missing", strings.Replace(base, `"query":`, `"indexes": {"i": {"on": "b", "key": ["x"]}}, "query":`, 1), "bad.json:3: indexes.i.on: no input or view is called b"},
		{"index key not a column", strings.Replace(base, `"query":`, `"indexes": {"i": {"on": "a", "key": ["z"]}}, "query":`, 1), "bad.json:3: indexes.i.key[0]: z is not a column of a (columns: x, y)"},
		{"missing query", strings.Replace(base, `,`+"\n"+`  "query": {"from": [{"as": "a", "collection": "a"}]}`, ``, 1), "bad.json:1: query: required field is missing"},
		{"empty from", strings.Replace(base, `[{"as": "a", "collection": "a"}]`, `[]`, 1), "bad.json:3: query.from: at least one entry"},
		{"alias repeated", strings.Replace(base, `[{"as": "a", "collection": "a"}]`, `[{"as": "a", "collection": "a"}, {"as": "a", "collection": "a"}]`, 1), `bad.json:3: query.from[1].as: alias "a" repeats query.from[0].as`},
		{"from missing", strings.Replace(base, `"collection": "a"}]`, `"collection": "b"}]`, 1), "bad.json:3: query.from[0].collection: no input or view is called b"},
		{"bad join", strings.Replace(base, `"query": {`, `"query": {"join": "hash", `, 1), `bad.json:3: query.join: unknown join "hash"`},
		{"count with expr", strings.Replace(base, `"query": {`, `"query": {"reduce": {"group_by": [], "aggregates": [{"name": "n", "fn": "count", "expr": "a.x"}]}, `, 1), "bad.json:3: query.reduce.aggregates[0].expr: count takes no expr"},
		{"sum without expr", strings.Replace(base, `"query": {`, `"query": {"reduce": {"group_by": [], "aggregates": [{"name": "n", "fn": "sum"}]}, `, 1), "bad.json:3: query.reduce.aggregates[0].expr: sum requires an expr"},
		{"no aggregates", strings.Replace(base, `"query": {`, `"query": {"reduce": {"group_by": [], "aggregates": []}, `, 1), "bad.json:3: query.reduce.aggregates: at least one aggregate"},
		{"distinct and threshold", strings.Replace(base, `"query": {`, `"query": {"distinct": true, "threshold": true, `, 1), "bad.json:3: query.threshold: at most one of distinct and threshold"},
		{"repeated output", strings.Replace(base, `"query": {`, `"query": {"project": ["a.x", "a.x"], `, 1), "bad.json:3: query.project[1]: output name a.x used twice"},
		{"on unknown ref", strings.Replace(base, `"query": {`, `"query": {"on": [["a.x", "a.z"]], `, 1), "bad.json:3: query.on[0][1]: a.z is not a column of a from entry"},
		{"bad expression", strings.Replace(base, `"query": {`, `"query": {"map": [{"name": "m",`+"\n"+`"expr": "a.x +* 2"}], `, 1), "bad.json:4: query.map[0].expr: "},
		{"float in expression", strings.Replace(base, `"query": {`, `"query": {"filter": ["a.x > 1.5"], `, 1), "bad.json:3: query.filter[0]: "},
		{"unknown column in expression", strings.Replace(base, `"query":`, `"views": {"v": {"input": "a",`+"\n"+`  "map": [{"name": "m", "expr": "x / qq"}]}}, "query":`, 1), "bad.json:4: views.v.map[0].expr: "},
		{"group_by not an output", strings.Replace(base, `"query": {`, `"query": {"project": ["a.x"], "reduce": {"group_by": ["a.y"], "aggregates": [{"name": "n", "fn": "count"}]}, `, 1), "bad.json:3: query.reduce.group_by[0]: a.y is not a project output name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("bad.json", ".", []byte(tc.src))
			if err == nil {
				t.Fatalf("Decode succeeded, want %q", tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n  %s\nwant prefix\n  %s", err, tc.want)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile("testdata/nope.json")
	if err == nil || err.Error() != "testdata/nope.json: cannot read spec: no such file or directory" {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "_", "a_1", "okey", "x9", strings.Repeat("a", MaxName)} {
		if msg := CheckName(ok); msg != "" {
			t.Errorf("CheckName(%q) = %q, want valid", ok, msg)
		}
	}
	for _, bad := range []string{"", "1a", "A", "a-b", "a.b", "time", "diff", "range", "type", "é", strings.Repeat("a", MaxName+1)} {
		if CheckName(bad) == "" {
			t.Errorf("CheckName(%q) accepted a bad name", bad)
		}
	}
}

func TestReadCSV(t *testing.T) {
	tab, err := ReadCSVFile("testdata/orders.csv", []string{"okey", "cust", "price"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Columns: []string{"okey", "cust", "price"},
		Times:   []uint64{0, 0, 3, 1},
		Diffs:   []int64{1, 1, -1, 2},
		Vals:    []int64{1, 10, 100, 2, 0, 50, 1, 10, 100, 3, -7, 9223372036854775807},
	}
	if !reflect.DeepEqual(tab, want) {
		t.Errorf("table = %+v, want %+v", tab, want)
	}
	var b strings.Builder
	if err := WriteCSV(&b, tab); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV("round", strings.NewReader(b.String()), tab.Columns)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if b.String() != "time,diff,okey,cust,price\n0,1,1,10,100\n0,1,2,0,50\n3,-1,1,10,100\n1,2,3,-7,9223372036854775807\n" {
		t.Errorf("WriteCSV:\n%s", b.String())
	}
	big, err := ReadCSV("t", strings.NewReader("time,diff,x\n18446744073709551614,-9223372036854775808,-9223372036854775808\n"), []string{"x"})
	if err != nil || big.Times[0] != MaxTime || big.Diffs[0] != -9223372036854775808 || big.Vals[0] != -9223372036854775808 {
		t.Errorf("extremes: %+v %v", big, err)
	}
}

// TestReadCSVLeadingZeros checks that a CSV value is digits after an
// optional '-', read as decimal (docs/spec.md, "CSV files"): 007 is 7,
// -0 is 0, and zeros padding a value do not count against the range, so
// a value padded past 19 or 20 characters is read as the value it is,
// not refused as outside the int64 range.
func TestReadCSVLeadingZeros(t *testing.T) {
	pad := strings.Repeat("0", 30)
	src := "time,diff,x,y\n" +
		"0009,01,007,-0\n" +
		pad + "1,-" + pad + "2," + pad + "9223372036854775807,-" + pad + "9223372036854775808\n" +
		pad + "18446744073709551614,1," + pad + ",-" + pad + "\n"
	tab, err := ReadCSV("z.csv", strings.NewReader(src), []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Columns: []string{"x", "y"},
		Times:   []uint64{9, 1, MaxTime},
		Diffs:   []int64{1, -2, 1},
		Vals:    []int64{7, 0, math.MaxInt64, math.MinInt64, 0, 0},
	}
	if !reflect.DeepEqual(tab, want) {
		t.Errorf("table = %+v, want %+v", tab, want)
	}
	// Padding changes no range: one past the bound is still refused.
	for _, tc := range []struct{ line, want string }{
		{"0,1," + pad + "9223372036854775808,0", `z.csv:2: field 3 (x) is "`},
		{"0,1,0,-" + pad + "9223372036854775809", `z.csv:2: field 4 (y) is "`},
		{pad + "18446744073709551615,1,0,0", "z.csv:2: field 1 (time) is 18446744073709551615, outside"},
		{"-" + pad + "0,1,0,0", `z.csv:2: field 1 (time) is "-`},
		{"0,-" + pad + ",0,0", "z.csv:2: diff is 0"},
	} {
		_, err := ReadCSV("z.csv", strings.NewReader("time,diff,x,y\n"+tc.line+"\n"), []string{"x", "y"})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix %q", tc.line, err, tc.want)
		}
	}
}

func TestReadCSVBad(t *testing.T) {
	cols := []string{"x", "y"}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", `f.csv: empty file: the header "time,diff,x,y" is missing`},
		{"only blank", "\n\r\n", `f.csv: empty file`},
		{"header order", "time,diff,y,x\n", `f.csv:1: header is "time,diff,y,x", want "time,diff,x,y"`},
		{"header spaces", "time, diff,x,y\n", `f.csv:1: header is`},
		{"short", "time,diff,x,y\n0,1,2\n", "f.csv:2: 3 fields, want 4 (time,diff,x,y)"},
		{"long", "time,diff,x,y\n0,1,2,3,4\n", "f.csv:2: 5 fields, want 4"},
		{"space", "time,diff,x,y\n\n0,1, 2,3\n", `f.csv:3: field 3 (x) is " 2", not a decimal integer`},
		{"quoted", "time,diff,x,y\n0,1,\"2\",3\n", `f.csv:2: field 3 (x) is "\"2\""`},
		{"float", "time,diff,x,y\n0,1,2,3.0\n", `f.csv:2: field 4 (y) is "3.0"`},
		{"empty field", "time,diff,x,y\n0,1,,3\n", `f.csv:2: field 3 (x) is ""`},
		{"plus", "time,diff,x,y\n0,1,+2,3\n", `f.csv:2: field 3 (x) is "+2"`},
		{"overflow", "time,diff,x,y\n0,1,9223372036854775808,3\n", `f.csv:2: field 3 (x) is "9223372036854775808", not a decimal integer in the int64 range`},
		{"negative time", "time,diff,x,y\n-1,1,2,3\n", `f.csv:2: field 1 (time) is "-1"`},
		{"time overflow", "time,diff,x,y\n18446744073709551616,1,2,3\n", `f.csv:2: field 1 (time) is "18446744073709551616"`},
		{"zero diff", "time,diff,x,y\n0,1,2,3\n1,0,2,3\n", "f.csv:3: diff is 0"},
		{"trailing comma", "time,diff,x,y\n0,1,2,3,\n", "f.csv:2: 5 fields, want 4"},
		{"too many digits", "time,diff,x,y\n0,1," + strings.Repeat("1", 5000) + ",3\n", `f.csv:2: field 3 (x) is "111`},
		{"lone CR kept", "time,diff,x,y\n0,1,2,3\r\r\n", `f.csv:2: field 4 (y) is "3\r"`},
		{"no final newline bad", "time,diff,x,y\n0,1,2", "f.csv:2: 3 fields"},
		// A file that is not CSV, or a field of megabytes, is quoted in
		// part: the error stays a short line.
		{"long field", "time,diff,x,y\n0,1," + strings.Repeat("7", 1<<20) + ",3\n", `f.csv:2: field 3 (x) is "` + strings.Repeat("7", 80) + `"... (1048576 bytes), not a decimal integer in the int64 range`},
		// A header line longer than the first 64 KiB is judged on them,
		// without reading the rest of the file.
		{"binary", strings.Repeat("\x00\xff", 1<<19), `f.csv:1: header is "` + strings.Repeat(`\x00\xff`, 40) + `"... (at least 65536 bytes), want "time,diff,x,y"`},
		{"binary line within the peek", strings.Repeat("\x00\xff", 1000) + "\n0,1,2,3\n", `f.csv:1: header is "` + strings.Repeat(`\x00\xff`, 40) + `"... (2000 bytes), want "time,diff,x,y"`},
		{"bad header after blank lines", "\n\r\n\ntime,diff,x,z\r\n0,1,2,3\n", `f.csv:4: header is "time,diff,x,z", want "time,diff,x,y"`},
		{"bad header at the end", "\xef\xbb\xbftime,diff,x\r", `f.csv:1: header is "time,diff,x", want "time,diff,x,y"`},
		{"cut before a character", "time,diff,x,y\n" + strings.Repeat("a", 79) + "é,1,2,3\n", `f.csv:2: field 1 (time) is "` + strings.Repeat("a", 79) + `"... (81 bytes), not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := ReadCSV("f.csv", strings.NewReader(tc.src), cols)
			if tab != nil {
				t.Errorf("a half-loaded table came back with the error: %d rows", tab.Len())
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want prefix %q", err, tc.want)
			}
		})
	}
	if _, err := ReadCSVFile(filepath.Join(t.TempDir(), "none.csv"), cols); err == nil || !strings.HasSuffix(err.Error(), "none.csv: cannot read CSV: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

// TestCSVPathAbsolute checks that an absolute csv path is used as given.
func TestCSVPathAbsolute(t *testing.T) {
	abs, _ := filepath.Abs("testdata/orders.csv")
	s := &Spec{Dir: "elsewhere"}
	in := &Input{CSV: abs}
	if got := s.CSVPath(in); got != abs {
		t.Errorf("CSVPath = %q", got)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
}

// TestReadCSVFileRefusesWhatIsReadOnce: a CSV input that is a named pipe
// (fed once, as by `zcat big.csv.gz > big.csv &`) or a directory is
// refused at once, naming the file, where the second read of a pipe (a
// command reads its inputs more than once) waited forever for a writer.
func TestReadCSVFileRefusesWhatIsReadOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	for path, want := range map[string]string{p: "a named pipe, which gives its content once", dir: "is a directory", "/dev/null": "a device"} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadCSVFile(path, []string{"x"})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path+": cannot read CSV: "+want) {
				t.Errorf("%s: error %v, want one naming the file and %q", path, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the read waits (for a writer?)", path)
		}
	}
}

// TestReadInputCSVNamesTheSpecsField: a CSV file an input names that
// cannot be read as a whole (missing, a directory) is an error at the
// spec's line and field inputs.NAME.csv, naming the file too, where the
// message named the file alone and the user had to find which spec and
// input named it; an error inside the file still names the file's line.
func TestReadInputCSVNamesTheSpecsField(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "w.json")
	src := `{
  "version": 1,
  "name": "w",
  "inputs": {
    "a": {"columns": ["k"], "csv": "missing.csv"},
    "b": {"columns": ["k"], "csv": "."},
    "c": {"columns": ["k"], "csv": "bad.csv"}
  },
  "query": {"from": [{"as": "p", "collection": "a"}]}
}
`
	if err := os.WriteFile(specPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("time,diff,k\n0,1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		specPath + ":5: inputs.a.csv: " + filepath.Join(dir, "missing.csv") + ": cannot read CSV: no such file or directory",
		specPath + ":6: inputs.b.csv: " + dir + ": cannot read CSV: is a directory",
		filepath.Join(dir, "bad.csv") + ":2: ",
	} {
		in := &s.Inputs[i]
		_, err := s.ReadInputCSV(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("input %s: %v; want an error starting %q", in.Name, err, want)
		}
	}
}

// TestReadInputCSVNamesALongPathWhole: the CSV path in that error was
// cut to its first 80 bytes ("/home/…/dat... (97 bytes)") as a value from
// the file is, so a project a few directories deep got errors that did not
// say which file; a path is named whole up to the longest a system opens.
func TestReadInputCSVNamesALongPathWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("a-directory-of-the-project/", 4))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "w.json")
	src := `{"version": 1, "name": "w",
  "inputs": {"a": {"columns": ["k"], "csv": "a-csv-file-with-a-long-name-that-is-missing.csv"}},
  "query": {"from": [{"as": "p", "collection": "a"}]}}
`
	if err := os.WriteFile(specPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "a-csv-file-with-a-long-name-that-is-missing.csv")
	_, err = s.ReadInputCSV(&s.Inputs[0])
	want := specPath + ":2: inputs.a.csv: " + csv + ": cannot read CSV: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestReadFileRefusesWhatIsReadOnce: a spec file that is a named pipe, a
// directory or a device is refused at once, naming the file, as a CSV
// input is: a command reads its spec more than once, and the open of a
// named pipe no one writes waited where a signal could not stop it.
func TestReadFileRefusesWhatIsReadOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	for path, want := range map[string]string{p: "a named pipe, which gives its content once", dir: "is a directory", "/dev/null": "a device"} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path+": cannot read spec: "+want) {
				t.Errorf("%s: error %v, want one naming the file and %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
				f.Close() // lets the blocked read end
			}
			t.Fatalf("%s: the read waits (for a writer?)", path)
		}
	}
}

// TestByteOrderMark: a UTF-8 byte order mark at the start of a spec or a
// CSV file, which some editors write, is skipped, as benchcmp skips it in
// result files; line numbers are unchanged, and a mark anywhere else is
// still an error.
func TestByteOrderMark(t *testing.T) {
	s, err := Decode("bom.json", ".", []byte("\ufeff"+base))
	if err != nil || s.Name != "w" {
		t.Fatalf("a spec with a byte order mark: %v", err)
	}
	bad := strings.Replace(base, `"version": 1`, `"version": 1, "x": 1`, 1)
	if _, err := Decode("bom.json", ".", []byte("\ufeff"+bad)); err == nil || !strings.HasPrefix(err.Error(), "bom.json:1: x: unknown field") {
		t.Errorf("line numbers after a byte order mark: %v", err)
	}
	if _, err := Decode("bom.json", ".", []byte(" \ufeff"+base)); err == nil {
		t.Errorf("a byte order mark after a space was accepted")
	}
	// The error names the mark, not the first of its bytes read as
	// Latin-1 ("invalid character 'ï'"), which no editor shows.
	for _, doc := range []string{"\ufeff\ufeff" + base, strings.Replace(base, `"version": 1,`, `"version": 1,`+"\n\ufeff", 1)} {
		_, err := Decode("bom.json", ".", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), "byte order mark") || strings.Contains(err.Error(), "ï") {
			t.Errorf("a byte order mark past the start: %v", err)
		}
	}
	if _, err := Decode("bom.json", ".", []byte(strings.Replace(base, `"version": 1,`, `"version": 1,`+"\n\ufeff", 1))); err == nil || !strings.HasPrefix(err.Error(), "bom.json:2: ") {
		t.Errorf("a byte order mark on line 2: %v", err)
	}
	// Where a value goes too — after a key's colon, inside a literal or a
	// number, after the top-level object — the mark is named, on its own
	// line, however far into the file it is: the decoder's offset for a
	// fault in a value counts only the bytes of the values read before it.
	lines := "{\"version\": 1,\n\"name\": \"w\",\n\"inputs\": {\"a\": {\"columns\": [\"x\"],\n  \"rows\": [[0, 1, 1]]}},\n\"query\": {\"from\": [{\"as\": \"a\",\n  \"collection\": \"a\"}]}}"
	for _, tc := range []struct{ old, new, want string }{
		{`"collection": "a"`, "\"collection\":\ufeff \"a\"", "bom.json:6: query.from[0].collection: "},
		{`"collection": "a"`, "\"collection\": \ufeff\"a\"", "bom.json:6: query.from[0].collection: "},
		{`"collection": "a"`, "\"collection\": nul\ufeff", "bom.json:6: query.from[0].collection: "},
		{`[[0, 1, 1]]`, "[[0, 1, 12345\ufeff]]", "bom.json:4: inputs.a.rows[0]"},
		{`"a"}]}}`, "\"a\"}]}}\n\ufeff", "bom.json:7: "},
	} {
		doc := strings.Replace(lines, tc.old, tc.new, 1)
		_, err := Decode("bom.json", ".", []byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "byte order mark") {
			t.Errorf("a byte order mark in %q: %v, want %q naming the mark", tc.new, err, tc.want)
		}
	}
	// A mark inside a string is the string's, and a fault next to one is
	// not the mark.
	doc := strings.Replace(lines, `"name": "w",`, "\"name\": \"w\",\"description\": \"\ufeff\"\uff0c", 1)
	if _, err := Decode("bom.json", ".", []byte(doc)); err == nil || strings.Contains(err.Error(), "byte order mark") {
		t.Errorf("a fullwidth comma after a string holding a byte order mark: %v, want an error that is not the mark's", err)
	}
	doc = strings.Replace(lines, `"name": "w",`, "\"name\": \"w\" x\ufeff,", 1)
	if _, err := Decode("bom.json", ".", []byte(doc)); err == nil || !strings.Contains(err.Error(), "invalid character 'x'") {
		t.Errorf("a stray x before a byte order mark: %v, want the x named", err)
	}
	// Before a value or inside a number, where the decoder's offset is
	// the previous token's (lines above, or bytes before on the line),
	// and past the top-level object (a second file joined by cat), the
	// mark is still named, on its own line; so too after one inside a
	// string, which is text like any other.
	rows := `{"version": 1, "name": "w",
  "inputs": {"a": {"columns": ["x"], "rows": [
    [0, 1, 1],
    ` + "\ufeff" + `[0, 1, 2]]}},
  "query": {"from": [{"as": "a", "collection": "a"}]}}`
	for _, tc := range []struct{ doc, want string }{
		{rows, "bom.json:4: inputs.a.rows[1]: invalid JSON: a byte order mark"},
		{strings.Replace(rows, `[0, 1, 2]`, `[0,     1, `+"\ufeff"+`2]`, 1), "bom.json:4: inputs.a.rows[1]: invalid JSON: a byte order mark"},
		{strings.Replace(rows, `"name": "w",`, `"name": "w", "description": "a`+"\ufeff"+`b",`, 1), "bom.json:4: inputs.a.rows[1]: invalid JSON: a byte order mark"},
		{strings.Replace(rows, `[0, 1, 2]`, `[0, 1, -`+"\ufeff"+`2]`, 1), "bom.json:4: inputs.a.rows[1]: invalid JSON: a byte order mark"},
		// Two files joined, the second saved with the mark.
		{base + "\n\ufeff" + base, "bom.json:4: invalid JSON: a byte order mark"},
	} {
		if _, err := Decode("bom.json", ".", []byte(tc.doc)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("a byte order mark before a value: %v, want %q", err, tc.want)
		}
	}
	tab, err := ReadCSV("bom.csv", strings.NewReader("\ufefftime,diff,x\n0,1,7\n"), []string{"x"})
	if err != nil || tab.Len() != 1 || tab.Row(0)[0] != 7 {
		t.Fatalf("a CSV file with a byte order mark: %v", err)
	}
	if _, err := ReadCSV("bom.csv", strings.NewReader("\ufefftime,diff,x\n0,1,7\n\ufeff1,1,8\n"), []string{"x"}); err == nil || !strings.HasPrefix(err.Error(), "bom.csv:3: ") {
		t.Errorf("a byte order mark on line 3: %v", err)
	}
}

// TestFloatBoundsJudgedByDigits checks that a fractional field at its
// bound is judged by the number as written: 1e2 and 99.99999999999999999
// (which a float64 reads as 100) are an allowed s, 100.000000000000001 is
// not (TestBadSpecs), whatever a float64 reads.
func TestFloatBoundsJudgedByDigits(t *testing.T) {
	for _, text := range []string{"100", "1e2", "100.000", "1000e-1", "0.1e3", "99.99999999999999999"} {
		src := strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": 10, "columns": {"x": {"dist": "zipf", "n": 5, "s": `+text+`}, "y": {"dist": "seq"}}}`, 1)
		s, err := Decode("ok.json", ".", []byte(src))
		if err != nil {
			t.Errorf("s %s: %v", text, err)
			continue
		}
		if got := s.Inputs[0].Generate.Columns[0].S; got != 100 {
			t.Errorf("s %s read as %v", text, got)
		}
	}
	for _, tc := range []struct {
		text string
		b    uint64
		want int
	}{
		{"0", 0, 0}, {"-0.0e5", 0, 0}, {"0.5", 0, 1}, {"-0.5", 0, -1}, {"-2", 1, -1},
		{"1", 1, 0}, {"1.000", 1, 0}, {"10e-1", 1, 0}, {"0.99999999999999999", 1, -1}, {"1.00000000000000001", 1, 1},
		{"100", 100, 0}, {"1e2", 100, 0}, {"99.9", 100, -1}, {"100.000000000000001", 100, 1}, {"1e3", 100, 1}, {"0.001e5", 100, 0},
	} {
		if got := cmpUnsigned(tc.text, tc.b); got != tc.want {
			t.Errorf("cmpUnsigned(%s, %d) = %d, want %d", tc.text, tc.b, got, tc.want)
		}
	}
}

// An override set from Go need not say what set it: without By, the
// message names the field alone, not an empty cause (`nope: : the spec
// …`).
func TestOverrideOfNoNumberWithoutBy(t *testing.T) {
	src := []byte(`{"version": 1, "name": "w", "inputs": {"a": {"columns": ["x"], "rows": []}}, "query": {"from": [{"as": "a", "collection": "a"}]}}`)
	for _, c := range []struct {
		by, want string
	}{
		{"", "w.json: inputs.a.rows: the spec has no number at this field"},
		{"parameter n=1", "w.json: inputs.a.rows: parameter n=1: the spec has no number at this field"},
	} {
		_, err := DecodeWith("w.json", ".", src, []Override{{Field: "inputs.a.rows", Value: 1, By: c.by}})
		if err == nil || err.Error() != c.want {
			t.Errorf("By %q: %v, want %s", c.by, err, c.want)
		}
	}
}

// TestSpecThroughADescriptorReadsItsCSVBesideTheFile: a spec given by a
// descriptor's name (`benchrun validate /dev/stdin < specs/w.json`,
// /dev/fd/N) is read as the regular file it is (docs/spec.md "Decoding is
// strict"), and its relative csv paths are relative to that file's
// directory; they resolved against /dev or /dev/fd, the directory of the
// name, so `data/a.csv` beside the spec was looked for as /dev/data/a.csv.
func TestSpecThroughADescriptorReadsItsCSVBesideTheFile(t *testing.T) {
	if _, err := os.Stat("/dev/fd/0"); err != nil {
		t.Skipf("no /dev/fd here: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "a.csv"), []byte("time,diff,k\n0,1,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "w.json")
	src := `{"version": 1, "name": "w", "inputs": {"a": {"columns": ["k"], "csv": "data/a.csv"}},
"query": {"from": [{"as": "p", "collection": "a"}]}}`
	if err := os.WriteFile(specPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(specPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := "/dev/fd/" + strconv.Itoa(int(f.Fd()))
	s, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "data", "a.csv")
	if real, err := filepath.EvalSymlinks(want); err == nil {
		want = real
	}
	if got := s.CSVPath(&s.Inputs[0]); got != want {
		t.Errorf("%s: csv data/a.csv is %s, want %s, beside the file the descriptor names", name, got, want)
	}
	tab, err := s.ReadInputCSV(&s.Inputs[0])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(tab.Times) != 1 {
		t.Errorf("%s: read %d updates, want 1", name, len(tab.Times))
	}
	// A spec file named through a link of its own keeps the link's
	// directory: only a descriptor's name is resolved.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(specPath, filepath.Join(sub, "l.json")); err != nil {
		t.Fatal(err)
	}
	s, err = ReadFile(filepath.Join(sub, "l.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.CSVPath(&s.Inputs[0]), filepath.Join(sub, "data", "a.csv"); got != want {
		t.Errorf("through a link: csv is %s, want %s", got, want)
	}
}

// zeroReader reads n zero bytes and counts what it was asked for.
type zeroReader struct{ n, read int }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), z.n)
	clear(p[:k])
	z.n -= k
	z.read += k
	return k, nil
}

// TestReadCSVJudgesTheHeaderFirst: a file that is no CSV input (a binary
// named by mistake) was read whole before its header was refused, 435 MB
// of memory for a file of 200 MB. The header is judged on the file's
// first 64 KiB.
func TestReadCSVJudgesTheHeaderFirst(t *testing.T) {
	z := &zeroReader{n: 256 << 20}
	_, err := ReadCSV("big.csv", z, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "big.csv:1: header is ") || !strings.Contains(err.Error(), "(at least 65536 bytes)") {
		t.Errorf("err = %v, want the header refused", err)
	}
	if z.read > 1<<20 {
		t.Errorf("read %d bytes of a file whose header is wrong; want at most its first 64 KiB", z.read)
	}
	// A good header reads on.
	tb, err := ReadCSV("ok.csv", strings.NewReader("time,diff,x\n1,1,7\n"), []string{"x"})
	if err != nil || tb.Len() != 1 {
		t.Errorf("good file: %v", err)
	}
	// So does a good header longer than the bytes judged first.
	cols := make([]string, 100)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%03d_%s", i, strings.Repeat("n", 1000))
	}
	row := "1,1" + strings.Repeat(",7", len(cols)) + "\n"
	tb, err = ReadCSV("wide.csv", strings.NewReader("time,diff,"+strings.Join(cols, ",")+"\n"+row), cols)
	if err != nil || tb.Len() != 1 {
		t.Errorf("a header of %d bytes: %v", len("time,diff,")+len(strings.Join(cols, ",")), err)
	}
	// A read error met while the header is judged fails the load, as one
	// met later does: Peek reports it once, and the table had loaded cut
	// short with no error.
	once := &errOnce{parts: []string{"time,diff,x\n1,1,7\n", "", "2,1,8\n"}, err: errors.New("disk gone")}
	if tb, err := ReadCSV("err.csv", once, []string{"x"}); err == nil || !strings.Contains(err.Error(), "err.csv: read error: disk gone") {
		t.Errorf("a read error: table %v, err %v; want the read error", tb, err)
	}
}

// errOnce reads its parts in turn, and an empty part as err, once.
type errOnce struct {
	parts []string
	err   error
}

func (e *errOnce) Read(p []byte) (int, error) {
	if len(e.parts) == 0 {
		return 0, io.EOF
	}
	part := e.parts[0]
	e.parts = e.parts[1:]
	if part == "" {
		return 0, e.err
	}
	return copy(p, part), nil
}

// TestNullAsOfIsItsDefault: as_of and until share one type, an integer or
// null; null is each field's default (as_of 0, until no bound), so a spec
// writing both as null decodes as one writing neither.
func TestNullAsOfIsItsDefault(t *testing.T) {
	s, err := Decode("n.json", ".", []byte(strings.Replace(base, `"name": "w"`, `"name": "w", "as_of": null, "until": null`, 1)))
	if err != nil {
		t.Fatalf("as_of and until null: %v", err)
	}
	if s.AsOf != 0 || s.HasUntil {
		t.Fatalf("as_of null decoded as %d, until null as %d (HasUntil %v)", s.AsOf, s.Until, s.HasUntil)
	}
}

// A table's capacity is a hint: NewTable of a capacity below 0 makes
// room for none, where it panicked in make (cap out of range), and the
// table takes updates as any other.
func TestNewTableOfANegativeCapacity(t *testing.T) {
	for _, n := range []int{-1, math.MinInt} {
		tab := NewTable([]string{"a", "b"}, n)
		tab.Append(1, 1, []int64{2, 3})
		if tab.Len() != 1 || !slices.Equal(tab.Vals, []int64{2, 3}) {
			t.Errorf("NewTable(_, %d) with one update appended: %+v", n, tab)
		}
	}
}

// TestLongNumbersJudgedByTheirDigits: a number of millions of digits in
// an integer field is judged from its digits and exponent, never converted
// whole (math/big's conversion takes time quadratic in the digits: 18 s
// for 2,000,000 of them): more than 40 digits is outside the field's
// range, named as written, and a long number of fewer before its decimal
// point or exponent is still read exactly, an integer or a fraction as
// its digits say (big.Rat refused one of over a million digits).
func TestLongNumbersJudgedByTheirDigits(t *testing.T) {
	const n = 2_000_000
	nines := strings.Repeat("9", n)
	zeros := strings.Repeat("0", n)
	for _, tc := range []struct {
		name, asOf, want string // want: "" for as_of 1
	}{
		{"many digits", nines, "bad.json:1: as_of: " + nines[:80] + "... (2000000 bytes) is outside 0..18446744073709551615"},
		{"negative, many digits", "-" + nines, "bad.json:1: as_of: -" + nines[:79] + "... (2000001 bytes) is outside 0..18446744073709551615"},
		{"many digits and a fraction", nines + ".5", "bad.json:1: as_of: " + nines[:80] + "... (2000002 bytes) is outside -9223372036854775808..18446744073709551615, the range of every integer field"},
		{"many digits, an exponent bringing them back", "1" + zeros + "e-" + strconv.Itoa(n), ""},
		{"many fraction digits that are 0", "1." + zeros, ""},
		{"many zeros, then a fraction", "1." + zeros + "1", "bad.json:1: as_of: 1." + zeros[:78] + "... (2000003 bytes) is not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, `"name": "w"`, `"name": "w", "as_of": `+tc.asOf, 1)
			s, err := Decode("bad.json", ".", []byte(src))
			switch {
			case tc.want == "" && (err != nil || s.AsOf != 1):
				t.Fatalf("got %v, as_of %v; want as_of 1", err, s)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
