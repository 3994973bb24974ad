package spec

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/expr"
)

// withDescription returns the base spec with a description of raw JSON.
func withDescription(raw string) string {
	return strings.Replace(base, `"name": "w"`, `"name": "w", "description": `+raw, 1)
}

// TestDecodeNestingLimit checks that arrays and objects nest at most
// MaxNesting deep, that the error names the file, the line of the first
// bracket too deep and the field, and that a malicious depth costs memory
// in proportion to the file, not to the square of its depth.
func TestDecodeNestingLimit(t *testing.T) {
	// MaxNesting levels in all (the top-level object is one) decode; the
	// error is the description's, which must be a string.
	ok := withDescription(strings.Repeat("[", MaxNesting-1) + strings.Repeat("]", MaxNesting-1))
	if _, err := Decode("deep.json", ".", []byte(ok)); err == nil || !strings.Contains(err.Error(), "description: must be a string, not an array") {
		t.Errorf("%d levels: err = %v, want the description's type error", MaxNesting, err)
	}
	// One more level, its bracket on line 2.
	deep := withDescription(strings.Repeat("[", MaxNesting-1) + "\n[" + strings.Repeat("]", MaxNesting))
	_, err := Decode("deep.json", ".", []byte(deep))
	want := "deep.json:2: description" + strings.Repeat("[0]", MaxNesting-1) + ": nesting deeper than 64 arrays and objects"
	if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v,\nwant %s", err, want)
	}
	// 20,000 levels of objects and arrays: refused at once, in little memory.
	for _, open := range []string{"[", `{"a":`} {
		n := 20000
		src := withDescription(strings.Repeat(open, n) + "1" + strings.Repeat(map[string]string{"[": "]", `{"a":`: "}"}[open], n))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode("deep.json", ".", []byte(src))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "nesting deeper than 64") {
			t.Errorf("%d levels of %s: err = %v", n, open, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%d levels of %s: decoding allocated %d MB", n, open, alloc>>20)
		}
	}
}

// TestMaxTime checks that an update at 2^64−1, which the engine cannot
// advance an input past, is refused in inline rows and CSV files with
// the position, and that 2^64−2 is accepted.
func TestMaxTime(t *testing.T) {
	rows := func(tm string) string {
		return strings.Replace(base, `[[0, 1, 1, 2]]`, `[[10, 1, 1, 2],`+"\n"+`[`+tm+`, 1, 1, 2]]`, 1)
	}
	s, err := Decode("t.json", ".", []byte(rows("18446744073709551614")))
	if err != nil || s.Inputs[0].Rows.Times[1] != MaxTime {
		t.Errorf("time 2^64-2 in rows: %v", err)
	}
	for _, tc := range []struct{ tm, says string }{
		{"18446744073709551615", "18446744073709551615"},
		{"100000000000000000000", "100000000000000000000"}, // past uint64 too: the same range
		{"-1", "-1"},
	} {
		_, err := Decode("t.json", ".", []byte(rows(tc.tm)))
		want := "t.json:3: inputs.a.rows[1][0]: time " + tc.says + " is outside 0..18446744073709551614 (the engine advances each input past every time it holds)"
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
			t.Errorf("time %s in rows: err = %v,\nwant %s", tc.tm, err, want)
		}
	}
	tab, err := ReadCSV("t.csv", strings.NewReader("time,diff,x\n10,1,1\n18446744073709551615,1,2\n"), []string{"x"})
	want := "t.csv:3: field 1 (time) is 18446744073709551615, outside 0..18446744073709551614 (the engine advances each input past every time it holds)"
	if tab != nil || err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
		t.Errorf("time 2^64-1 in a CSV file: err = %v,\nwant %s", err, want)
	}
}

// TestInlineRowsArePlainIntegers checks that inline rows follow the CSV
// rules: an exponent or a fraction, which a CSV line may not hold, is
// refused naming the row and value, even where it denotes an integer;
// other integer fields still take 1e6.
func TestInlineRowsArePlainIntegers(t *testing.T) {
	rows := func(row string) string {
		return strings.Replace(base, `[[0, 1, 1, 2]]`, `[[10, 1, 1, 2],`+"\n"+row+`]`, 1)
	}
	for _, tc := range []struct{ row, field, value string }{
		{"[1e3, 1, 1, 2]", "[1][0]", "1e3"},
		{"[1.8446744073709551614e19, 1, 1, 2]", "[1][0]", "1.8446744073709551614e19"},
		{"[0, 1.0, 1, 2]", "[1][1]", "1.0"},
		{"[0, 1, 1E3, 2]", "[1][2]", "1E3"},
		{"[0, 1, 1, -2e0]", "[1][3]", "-2e0"},
	} {
		_, err := Decode("t.json", ".", []byte(rows(tc.row)))
		want := "t.json:3: inputs.a.rows" + tc.field + ": " + tc.value + " is not a plain decimal integer (inline rows follow the CSV rules: no exponent or fraction)"
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
			t.Errorf("row %s: err = %v,\nwant %s", tc.row, err, want)
		}
	}
	// A time takes no sign, as in a CSV line, even -0.
	_, err := Decode("t.json", ".", []byte(rows("[-0, 1, 1, 2]")))
	if want := "t.json:3: inputs.a.rows[1][0]: time -0 is not a decimal integer in 0..18446744073709551614 (a time takes no sign)"; err == nil || err.Error() != want {
		t.Errorf("time -0: err = %v,\nwant %s", err, want)
	}
	if _, err := ReadCSV("t.csv", strings.NewReader("time,diff,x,y\n-0,1,1,2\n"), []string{"x", "y"}); err == nil {
		t.Error("time -0 in a CSV line: accepted")
	}
	if s, err := Decode("t.json", ".", []byte(rows("[1000, -1, -0, 5]"))); err != nil || s.Inputs[0].Rows.Times[1] != 1000 {
		t.Errorf("a plain row: %v", err)
	}
}

// TestMaxRows checks that a generated input may have up to MaxRows rows,
// and that more is refused with the position instead of decoding into a
// generator that would exhaust memory.
func TestMaxRows(t *testing.T) {
	gen := func(rows string) string {
		return strings.Replace(base, `"rows": [[0, 1, 1, 2]]`, `"generate": {"rows": `+rows+`, "columns": {"x": {"dist": "seq"}, "y": {"dist": "seq"}}}`, 1)
	}
	if s, err := Decode("r.json", ".", []byte(gen("1e8"))); err != nil || s.Inputs[0].Generate.Rows != MaxRows {
		t.Errorf("rows 1e8: %v", err)
	}
	for _, rows := range []string{"100000001", "9223372036854775807", "18446744073709551615"} {
		_, err := Decode("r.json", ".", []byte(gen(rows)))
		want := "r.json:2: inputs.a.generate.rows: " + rows + " rows is more than the 100000000 a generated input may have"
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
			t.Errorf("rows %s: err = %v,\nwant %s", rows, err, want)
		}
	}
}

// TestCSVPathWithAControlCharacter: a csv path holding a control character
// (a NUL, a newline) names no file and would reach the terminal raw in the
// file's errors: it is refused at the field, quoted.
func TestCSVPathWithAControlCharacter(t *testing.T) {
	for _, path := range []string{`a\u0000b.csv`, `a\nb.csv`, `a\u001b[31mb.csv`} {
		src := `{"version": 1, "name": "c", "inputs": {"a": {"columns": ["x"], "csv": "` + path + `"}},
  "indexes": {"ia": {"on": "a", "key": ["x"]}}, "query": {"from": [{"as": "a", "collection": "a"}], "project": ["a.x"]}}`
		_, err := Decode("t.json", ".", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "t.json:1: inputs.a.csv: path \"a\\") || !strings.Contains(err.Error(), "has a control character") || !errors.Is(err, ErrInvalid) {
			t.Errorf("csv %s: err = %v", path, err)
		}
	}
}

// TestShownWholeUnlessControl: a path or value is shown as written
// unless it holds a control character (docs/spec.md): text in any
// script is, and a C0 or C1 control, DEL, a bidirectional control or a
// line separator makes it quoted.
func TestShownWholeUnlessControl(t *testing.T) {
	for _, s := range []string{"日本\u3000語.json", "a\u00a0b", "👨\u200d👩\u200d👧", "cafe\u0301", "soft\u00adhyphen", "Ελλάδα/x.csv"} {
		if got := Path(s); got != s {
			t.Errorf("Path(%q) = %q, want it whole", s, got)
		}
		if got := Clip(s); got != s {
			t.Errorf("Clip(%q) = %q, want it whole", s, got)
		}
		if got := Bound("at " + s + " here"); got != "at "+s+" here" {
			t.Errorf("Bound of %q = %q, want it whole", s, got)
		}
	}
	for _, s := range []string{"a\nb", "a\x1b[2Jb", "a\x7fb", "a\u0085b", "a\u202eb", "a\u2066b", "a\u2028b", "a\xffb"} {
		if got, want := Path(s), strconv.Quote(s); got != want {
			t.Errorf("Path(%q) = %q, want %s", s, got, want)
		}
		if got, want := Clip(s), strconv.Quote(s); got != want {
			t.Errorf("Clip(%q) = %q, want %s", s, got, want)
		}
	}
}

// manyViews returns a spec of n views, each a filter of the input a,
// with extra appended to the views object as raw JSON.
func manyViews(n int, extra string) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "name": "many", "inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1]]}}, "views": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"v` + strconv.Itoa(i) + `": {"input": "a", "filter": ["x > 0"]}`)
	}
	b.WriteString(extra + `}, "query": {"from": [{"as": "q", "collection": "v` + strconv.Itoa(n-1) + `"}]}}`)
	return []byte(b.String())
}

// TestManyMembersComparedOnce checks that the check for a repeated
// member name compares about one name per member, however many members
// an object has: a scan of the names before each made a spec of 100,000
// views take over a minute to read. A repeated name is still refused
// among them, and every member is still found.
func TestManyMembersComparedOnce(t *testing.T) {
	const n = 20000
	data := manyViews(n, "")
	_, d, err := parseTreeWith("many.json", data)
	if err != nil {
		t.Fatal(err)
	}
	// Each member's name once, the first indexAt of each object scanned.
	if limit := 2*n + indexAt*indexAt; d.compared > limit {
		t.Errorf("%d views: %d member names compared, want at most %d", n, d.compared, limit)
	}
	s, err := Decode("many.json", ".", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Views) != n || s.Query.From[0].Collection != "v"+strconv.Itoa(n-1) {
		t.Errorf("%d views: decoded %d views, the query reading %s", n, len(s.Views), s.Query.From[0].Collection)
	}
	for _, dup := range []int{0, indexAt, n - 1} {
		_, err := Decode("many.json", ".", manyViews(n, `, "v`+strconv.Itoa(dup)+`": {"input": "a"}`))
		want := "many.json:1: views.v" + strconv.Itoa(dup) + ": duplicate field"
		if err == nil || err.Error() != want {
			t.Errorf("v%d repeated after %d views: err = %v, want %s", dup, n, err, want)
		}
	}
}

// TestLongExpressionChains checks that an expression of 100,000 terms
// at one level is a spec's expression like any other, while parentheses
// nested more than expr.MaxNesting deep are refused naming the file,
// line, field and column (docs/spec.md "Expressions").
func TestLongExpressionChains(t *testing.T) {
	const n = 100000
	sum := "a.x" + strings.Repeat(" + a.x", n-1)
	filter := func(e string) []byte {
		return []byte(strings.Replace(base, `"collection": "a"}]`, `"collection": "a"}], "filter": ["`+e+`"]`, 1))
	}
	s, err := Decode("w.json", ".", filter(sum))
	if err != nil || len(s.Query.Filter) != 1 {
		t.Fatalf("a filter of %d terms: %v", n, err)
	}
	deep := strings.Repeat("(", expr.MaxNesting+1) + "a.x" + strings.Repeat(")", expr.MaxNesting+1)
	_, err = Decode("w.json", ".", filter(deep))
	want := `w.json:3: query.filter[0]: expression ..."(((((((((((((((((((((((((((((((((((((((((a.x))))))))))))))))))))))))))))))))))))"... (200005 bytes): column 100001: parentheses and unary operators nest more than 100000 deep`
	if err == nil || err.Error() != want {
		t.Errorf("parentheses %d deep:\n got %v\nwant %s", expr.MaxNesting+1, err, want)
	}
}
