package benchcmp

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadResults feeds arbitrary bytes to benchcmp as a result file, both
// as the base and as the head of a comparison, and to Merge. Whatever the
// bytes, benchcmp must not panic, must refuse bad input with an error
// wrapping ErrInput (exit code 2) that names the file, and must write a
// report it built in every format.
func FuzzReadResults(f *testing.F) {
	for _, name := range []string{"batch-a.txt", "bad-line.txt", "empty.txt", "noise-old.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 4096 {
			data = data[:4096]
		}
		f.Add(data)
	}
	f.Add([]byte("BenchmarkX-2\t10\t100 ns/op\n"))
	f.Add([]byte("unit ns/op better=higher\nBenchmarkX 1 5 ns/op\n"))
	f.Add([]byte("BenchmarkX 1 NaN ns/op\nBenchmarkX 1 +Inf ns/op\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "in.txt")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultCompareConfig()
		cfg.Files = []string{"base=" + file, "head=" + file}
		rep, err := BuildReport(io.Discard, cfg)
		if err != nil {
			if !errors.Is(err, ErrInput) || ExitCode(err) != 2 {
				t.Fatalf("bad input: err %v (exit %d), want one wrapping ErrInput, exit 2", err, ExitCode(err))
			}
			if !strings.Contains(err.Error(), file) && !strings.Contains(err.Error(), "in.txt") {
				t.Fatalf("bad input: %v does not name the file", err)
			}
		} else {
			for _, format := range Formats {
				var out bytes.Buffer
				if err := writeReport(&out, rep, format); err != nil {
					t.Fatalf("format %s of a report it built: %v", format, err)
				}
			}
		}
		var merged bytes.Buffer
		if err := Merge(&merged, io.Discard, []string{file}); err != nil && !errors.Is(err, ErrInput) {
			t.Fatalf("merge: %v, want nil or an error wrapping ErrInput", err)
		}
	})
}

// TestNonFiniteValuesAreBadInput: a result with a NaN or infinite value is
// refused with ErrInput naming the file and line (FuzzReadResults found
// that benchcmp never finished on one).
func TestNonFiniteValuesAreBadInput(t *testing.T) {
	for _, v := range []string{"NaN", "+Inf", "-Inf"} {
		file := filepath.Join(t.TempDir(), "in.txt")
		if err := os.WriteFile(file, []byte("BenchmarkX 1 5 ns/op\nBenchmarkX 1 "+v+" ns/op\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultCompareConfig()
		cfg.Files = []string{"base=" + file, "head=" + file}
		_, err := BuildReport(io.Discard, cfg)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), file+":2:") {
			t.Fatalf("value %s: err %v, want ErrInput naming %s:2", v, err, file)
		}
	}
}
