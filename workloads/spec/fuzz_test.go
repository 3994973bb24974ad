package spec

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
)

// FuzzReadCSV checks that any input either loads or fails with an *Error
// naming the file (never a panic, never a table with the error), and that
// what loads survives a WriteCSV / ReadCSV round trip.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("time,diff,x,y\n0,1,2,3\n"))
	f.Add([]byte("time,diff,x,y\r\n\r\n18446744073709551615,-9223372036854775808,-1,9223372036854775807\r\n"))
	f.Add([]byte("time,diff,x,y\n0,0,1,2\n"))
	f.Add([]byte("time,diff,x,y\n0,1,,\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols := []string{"x", "y"}
		tab, err := ReadCSV("f.csv", bytes.NewReader(data), cols)
		if err != nil {
			var e *Error
			if tab != nil || !errors.As(err, &e) || e.File != "f.csv" || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ReadCSV = %v, %v", tab, err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteCSV(&b, tab); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV("g.csv", &b, cols)
		if err != nil || !reflect.DeepEqual(back, tab) {
			t.Fatalf("round trip: %v, %v", back, err)
		}
	})
}

// FuzzDecode checks that any document either decodes into a resolved spec
// or fails with an *Error wrapping ErrInvalid; decoding never panics.
func FuzzDecode(f *testing.F) {
	for _, p := range []string{"testdata/orders_lineitem.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(`{"version": 1, "name": "w", "inputs": {"a": {"columns": ["x"], "rows": [[0, 1, 1e2]]}}, "query": {"from": [{"as": "a", "collection": "a"}], "reduce": {"group_by": [], "aggregates": [{"name": "n", "fn": "count"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode("f.json", ".", data)
		if err != nil {
			var e *Error
			if s != nil || !errors.As(err, &e) || e.File != "f.json" || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode = %v, %v", s, err)
			}
			return
		}
		if s.Plan == nil || len(s.Columns()) != len(s.Inputs)+len(s.Views) {
			t.Fatalf("decoded spec without a full plan: %+v", s)
		}
	})
}
