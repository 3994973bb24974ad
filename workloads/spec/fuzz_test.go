package spec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the spec decoder. It must not panic;
// it refuses bad input with an *Error naming the file (and a line within
// the input when it names one); a spec it accepts decodes again to the same
// name and inputs.
func FuzzDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "examples", "*.json"))
	seeds = append(seeds, filepath.Join("testdata", "orders_lineitem.json"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"name": "x", "inputs": {}}`))
	f.Add([]byte(`{"name": 1e400}`))
	f.Add([]byte("{\"name\": \"x\",\n\"name\": \"y\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode("fuzz.json", "testdata", data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "fuzz.json" {
				t.Fatalf("err %v (%T), want an *Error naming fuzz.json", err, err)
			}
			if lines := bytes.Count(data, []byte{'\n'}) + 1; se.Line < 0 || se.Line > lines {
				t.Fatalf("err %v names line %d of an input of %d lines", err, se.Line, lines)
			}
			return
		}
		again, err := Decode("fuzz.json", "testdata", data)
		if err != nil {
			t.Fatalf("accepted once, refused the second time: %v", err)
		}
		if s.Name != again.Name || len(s.Inputs) != len(again.Inputs) {
			t.Fatalf("decoding twice differs: %q with %d inputs, then %q with %d", s.Name, len(s.Inputs), again.Name, len(again.Inputs))
		}
	})
}

// FuzzReadCSV feeds arbitrary bytes to the CSV loader for an input of two
// columns. It must not panic; it refuses bad input with an *Error naming
// the file and a line of the input; a table it accepts writes back to CSV
// that reads to the same table.
func FuzzReadCSV(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "orders.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("time,diff,a,b\r\n0,1,2,3\r\n\r\n1,-1,2,3\n"))
	f.Add([]byte("time,diff,a,b\n0,0,1,2\n"))
	f.Add([]byte("time,diff,a,b\n18446744073709551615,-9223372036854775808,9223372036854775807,-1\n"))
	f.Add([]byte("time,diff,a\n0,1,2\n"))
	f.Add([]byte("time,diff,a,b\n0,1,2,3,4\n"))
	cols := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ReadCSV("fuzz.csv", bytes.NewReader(data), cols)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "fuzz.csv" {
				t.Fatalf("err %v (%T), want an *Error naming fuzz.csv", err, err)
			}
			if lines := bytes.Count(data, []byte{'\n'}) + 1; se.Line < 0 || se.Line > lines {
				t.Fatalf("err %v names line %d of an input of %d lines", err, se.Line, lines)
			}
			if tab != nil {
				t.Fatal("an error with a table")
			}
			return
		}
		for i, d := range tab.Diffs {
			if d == 0 {
				t.Fatalf("update %d has diff 0", i)
			}
		}
		var out bytes.Buffer
		if err := WriteCSV(&out, tab); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV("back.csv", &out, cols)
		if err != nil {
			t.Fatalf("the CSV it wrote does not read back: %v\n%s", err, out.Bytes())
		}
		if !slices.Equal(tab.Times, back.Times) || !slices.Equal(tab.Diffs, back.Diffs) || !slices.Equal(tab.Vals, back.Vals) {
			t.Fatalf("write then read changed the table:\n%+v\n%+v", tab, back)
		}
	})
}
