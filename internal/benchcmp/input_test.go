package benchcmp

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"
)

// writeTemp writes content to a file name in a new temporary directory and
// returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// goTestLines is `go test -bench` output of one benchmark, 6 samples: 9
// lines.
const goTestLines = `goos: linux
goarch: amd64
pkg: example.com/p
BenchmarkPut-2   	 1000	  694.6 ns/op	  48 B/op	 2 allocs/op
BenchmarkPut-2   	 1000	  701.2 ns/op	  48 B/op	 2 allocs/op
BenchmarkPut-2   	 1000	  690.0 ns/op	  48 B/op	 2 allocs/op
BenchmarkPut-2   	 1000	  699.9 ns/op	  48 B/op	 2 allocs/op
BenchmarkPut-2   	 1000	  705.3 ns/op	  48 B/op	 2 allocs/op
BenchmarkPut-2   	 1000	  688.1 ns/op	  48 B/op	 2 allocs/op
`

// benchrunLines is benchrun's output of one benchmark, with custom units:
// 7 lines.
const benchrunLines = `Unit install-ns better=lower
Unit ns/update better=lower
gomaxprocs: 2
BenchmarkQ/workload=w/rows=10 1 1.5e+06 install-ns 12.5 ns/update 3 x-radix
BenchmarkQ/workload=w/rows=10 1 1.6e+06 install-ns 12.9 ns/update 3 x-radix
BenchmarkQ/workload=w/rows=10 1 1.4e+06 install-ns 12.1 ns/update 3 x-radix
BenchmarkQ/workload=w/rows=10 1 1.5e+06 install-ns 12.4 ns/update 3 x-radix
`

// inputErr runs a comparison of file with itself and a merge of file, and
// returns both errors.
func inputErr(t *testing.T, file string) (cmpErr, mergeErr error) {
	t.Helper()
	cfg := DefaultCompareConfig()
	cfg.Files = []string{"old=" + file, "new=" + file}
	var out bytes.Buffer
	cmpErr = Compare(&out, io.Discard, cfg)
	if cmpErr != nil && out.Len() > 0 {
		t.Errorf("bad input %s: wrote a report:\n%s", file, out.String())
	}
	var merged bytes.Buffer
	mergeErr = Merge(&merged, io.Discard, []string{file})
	if mergeErr != nil && merged.Len() > 0 {
		t.Errorf("bad input %s: merge wrote %d bytes", file, merged.Len())
	}
	return cmpErr, mergeErr
}

// TestTruncatedFileIsBadInput: a file cut short — in a benchmark's name, in
// a unit, at a unit boundary that drops measurements — is refused, by the
// comparison and by merge, naming the file and its last line, where
// benchfmt alone reads the rest and exits 0.
func TestTruncatedFileIsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"cut in the name", goTestLines + "Benchm", ":10: \"Benchm\": the file ends in the middle of a benchmark line"},
		{"cut after the name", goTestLines + "BenchmarkPut-2", ":10: \"BenchmarkPut-2\": the file ends in the middle"},
		{"cut in B", goTestLines + "B", ":10: \"B\": the file ends in the middle"},
		{"cut in a unit", benchrunLines + "BenchmarkQ/workload=w/rows=10 1 1.5e+06 install-ns 694.6 ns/u",
			`:8: the last line has no newline and its units (install-ns ns/u) are not those of the same benchmark at line 7`},
		{"cut in a unit, first line of its benchmark", benchrunLines + "BenchmarkR 1 694.6 ns/u",
			`:8: the last line has no newline and ends in unit "ns/u", which no other line uses`},
		{"cut at a unit boundary", goTestLines + "BenchmarkPut-2   	 1000	  694.6 ns/op	  48 B/op",
			`:10: the last line has no newline and its units (ns/op B/op) are not those of the same benchmark at line 9 (ns/op B/op allocs/op)`},
		{"cut into a unit's prefix", benchrunLines + "BenchmarkR 1 1.5e+06 install-ns 3 install-ns",
			`:8: the last line has no newline and ends in unit "install-ns" a second time`},
		{"cut in a value", goTestLines + "BenchmarkPut-2   	 1000	  69",
			":10: missing units (the last line, which has no newline: the file looks truncated)"},
		{"padded with NULs after its last line", goTestLines + strings.Repeat("\x00", 4096),
			":10: a NUL byte: the file is not text (cut short and padded with zeros?)"},
		{"padded with NULs after a newline", goTestLines + "\n" + strings.Repeat("\x00", 16) + "\n",
			":11: a NUL byte"},
		{"a NUL inside a line", strings.Replace(goTestLines, "ns/op", "ns\x00op", 1),
			":4: a NUL byte"},
		// A file pasted after another that an editor saved with a byte
		// order mark: benchfmt skips the line the mark starts, a result
		// lost without a word.
		{"a byte order mark past the start", goTestLines + "\ufeff" + goTestLines,
			":10: a byte order mark (U+FEFF) past the file's start"},
		{"a byte order mark inside a line", strings.Replace(goTestLines, " ns/op", " \ufeffns/op", 1),
			":4: a byte order mark (U+FEFF) past the file's start"},
		{"a byte order mark starting a configuration line", strings.Replace(goTestLines, "goarch:", "\ufeffgoarch:", 1),
			":2: a byte order mark (U+FEFF) past the file's start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "cut.txt", tc.content)
			cmpErr, mergeErr := inputErr(t, file)
			for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr} {
				if !errors.Is(err, ErrInput) || ExitCode(err) != 2 || !strings.Contains(err.Error(), file+tc.want) {
					t.Errorf("%s: err %v (exit %d), want ErrInput (exit 2) with %q", what, err, ExitCode(err), file+tc.want)
				}
			}
		})
	}
}

// TestUTF16FileSaysSo: a result file saved as UTF-16 with its byte order
// mark (go test -bench . > old.txt in Windows PowerShell) is refused
// naming the encoding, where the NUL check took it for a file cut short
// and padded with zeros.
func TestUTF16FileSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order binary.AppendByteOrder
		mark  string
	}{{"little-endian", binary.LittleEndian, "\xff\xfe"}, {"big-endian", binary.BigEndian, "\xfe\xff"}} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.mark)
			for _, u := range utf16.Encode([]rune(goTestLines)) {
				b = tc.order.AppendUint16(b, u)
			}
			file := writeTemp(t, "utf16.txt", string(b))
			cmpErr, mergeErr := inputErr(t, file)
			want := file + ":1: a UTF-16 byte order mark: the file is UTF-16 text"
			for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr} {
				if !errors.Is(err, ErrInput) || ExitCode(err) != 2 || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: err %v (exit %d), want ErrInput (exit 2) with %q", what, err, ExitCode(err), want)
				}
			}
		})
	}
}

// TestGzipFileSaysSo: a gzipped file given as a result file — a CPU
// profile, benchcmp old.pprof new.pprof where benchcmp profile was meant,
// or a result file kept compressed — is refused naming what it is and
// what reads it, by the comparison, merge and scaling, where the NUL of
// its header read as a file cut short and padded with zeros.
func TestGzipFileSaysSo(t *testing.T) {
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		t.Fatal(err)
	}
	pprof.StopCPUProfile()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(benchrunLines))
	zw.Close()
	for name, content := range map[string][]byte{"cpu.pprof": prof.Bytes(), "old.txt.gz": gz.Bytes()} {
		t.Run(name, func(t *testing.T) {
			file := writeTemp(t, name, string(content))
			cmpErr, mergeErr := inputErr(t, file)
			cfg := DefaultScalingConfig()
			cfg.Files, cfg.By = []string{file}, "/rows"
			var out bytes.Buffer
			scalingErr := Scaling(&out, io.Discard, cfg)
			want := file + ":1: gzip-compressed data (0x1f 0x8b), not a result file: a pprof profile is compared with benchcmp profile"
			for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr, "scaling": scalingErr} {
				if !errors.Is(err, ErrInput) || ExitCode(err) != 2 || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: err %v (exit %d), want ErrInput (exit 2) with %q", what, err, ExitCode(err), want)
				}
			}
			if out.Len() > 0 {
				t.Errorf("scaling wrote a report of bad input:\n%s", out.String())
			}
		})
	}
}

// TestCompleteLastLineWithoutNewline: valid Go benchmark format is not
// refused: a complete last line without a newline, custom units (ns/update,
// x-radix), `go test -v`'s name-only lines, and text after the results.
func TestCompleteLastLineWithoutNewline(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"go test", strings.TrimSuffix(goTestLines, "\n")},
		{"benchrun", strings.TrimSuffix(benchrunLines, "\n")},
		{"a new benchmark in a Go unit", goTestLines + "BenchmarkGet-2 100 5 ns/op"},
		{"a new benchmark in a declared unit", benchrunLines + "BenchmarkR 1 5 ns/update"},
		{"a new benchmark at 0 in a declared unit", benchrunLines + "BenchmarkR 1 0 ns/update"},
		{"a new benchmark in a unit used before", benchrunLines + "BenchmarkR 1 5 x-radix"},
		{"go test -v", "BenchmarkPut-2\n" + goTestLines + "PASS\nok  \texample.com/p\t1.2s"},
		{"config line", goTestLines + "commit: abc"},
		{"trailing spaces", goTestLines + "   "},
		{"CRLF", strings.ReplaceAll(goTestLines, "\n", "\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "ok.txt", tc.content)
			cmpErr, mergeErr := inputErr(t, file)
			if cmpErr != nil || mergeErr != nil {
				t.Errorf("valid file refused: compare: %v; merge: %v", cmpErr, mergeErr)
			}
		})
	}
}

// TestIterationCountAndUnitAreChecked: an iteration count below 1, and a
// unit that is a number or holds control characters, are refused naming
// the file and line; benchfmt takes them.
func TestIterationCountAndUnitAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"negative iterations", "BenchmarkPut-2 -5 694.6 ns/op\n", ":10: iteration count -5: must be positive"},
		{"zero iterations", "BenchmarkPut-2 0 694.6 ns/op\n", ":10: iteration count 0: must be positive"},
		{"numeric unit", "BenchmarkPut-2 1000 694.6 ns/op 48 2\n", `:10: unit "2": a number, not a unit`},
		{"control character", "BenchmarkPut-2 1000 694.6 ns/\x01op\n", `:10: unit "ns/\x01op": holds a control character`},
		{"invalid UTF-8", "BenchmarkPut-2 1000 694.6 ns/\xffop\n", `:10: unit "ns/\xffop": not valid UTF-8 text`},
		// Not a C0 or C1 control, but as much a control character to
		// a terminal: the reports' headlines show a unit as read.
		{"bidirectional override", "BenchmarkPut-2 1000 694.6 ns/\u202eop\n", `:10: unit "ns/\u202eop": holds a control character`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "bad.txt", goTestLines+tc.line)
			cmpErr, mergeErr := inputErr(t, file)
			for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr} {
				if !errors.Is(err, ErrInput) || ExitCode(err) != 2 || !strings.Contains(err.Error(), file+tc.want) {
					t.Errorf("%s: err %v (exit %d), want ErrInput (exit 2) with %q", what, err, ExitCode(err), file+tc.want)
				}
			}
		})
	}
	// Units that look odd but are units: kept.
	file := writeTemp(t, "odd.txt", goTestLines+"BenchmarkPut-2 1000 694.6 ns/op 1 inf 2 x-2 3 1st\n")
	if cmpErr, mergeErr := inputErr(t, file); cmpErr != nil || mergeErr != nil {
		t.Errorf("units inf, x-2, 1st refused: compare: %v; merge: %v", cmpErr, mergeErr)
	}
}

// TestRepeatedUnitIsBadInput: a unit twice on one result line, in any
// spelling benchfmt tidies alike, would double the line's samples: refused
// naming the file and line.
func TestRepeatedUnitIsBadInput(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"same spelling", "BenchmarkD 1 10 ns/op 50 ns/op\n", `:10: unit "ns/op" a second time on the line: a line holds one value of each unit`},
		{"tidied alike", "BenchmarkD 1 10 ns/op 5e-8 sec/op\n", `:10: unit "sec/op" a second time on the line (as "ns/op" before)`},
		{"tidied alike, at 0", "BenchmarkD 1 0 ns/op 5e-8 sec/op\n", `:10: unit "sec/op" a second time on the line (as "ns/op" before)`},
		{"not last", "BenchmarkD 1 10 B/op 50 B/op 3 allocs/op\n", `:10: unit "B/op" a second time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "dup.txt", goTestLines+tc.line)
			cmpErr, mergeErr := inputErr(t, file)
			for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr} {
				if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), file+tc.want) {
					t.Errorf("%s: err %v, want ErrInput with %q", what, err, file+tc.want)
				}
			}
		})
	}
}

// TestByteOrderMarkIsSkipped: a file saved with a UTF-8 byte order mark
// reads as without it: no first result line lost, no first configuration
// key garbled.
func TestByteOrderMarkIsSkipped(t *testing.T) {
	plain := writeTemp(t, "plain.txt", goTestLines)
	for _, content := range []string{"\ufeff" + goTestLines, "\ufeff" + strings.TrimPrefix(goTestLines, "goos: linux\ngoarch: amd64\npkg: example.com/p\n")} {
		bom := writeTemp(t, "bom.txt", content)
		rep, err := BuildReport(io.Discard, func() CompareConfig {
			c := DefaultCompareConfig()
			c.Files = []string{"old=" + plain, "new=" + bom}
			c.Ignore = "goos,goarch,pkg"
			return c
		}())
		if err != nil {
			t.Fatal(err)
		}
		for _, tab := range rep.Tables {
			for _, c := range tab.Config {
				if strings.Contains(c, "\ufeff") {
					t.Errorf("configuration %q holds the byte order mark", c)
				}
			}
			for _, r := range tab.Rows {
				if r.Cells[1] == nil || len(r.Cells[1].Values) != 6 {
					t.Errorf("%s %s: the file with a byte order mark lost a sample: %+v", tab.Unit, r.Name, r.Cells[1])
				}
			}
		}
		var merged bytes.Buffer
		if err := Merge(&merged, io.Discard, []string{bom}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(merged.String(), "BenchmarkPut"); n != 6 {
			t.Errorf("merge wrote %d results of 6:\n%s", n, merged.String())
		}
	}
	// With the mark, goos is still the first configuration key.
	rep, err := BuildReport(io.Discard, func() CompareConfig {
		c := DefaultCompareConfig()
		c.Files = []string{"old=" + plain, "new=" + writeTemp(t, "bom.txt", "\ufeff"+goTestLines)}
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Compared() != 3 {
		t.Errorf("compared %d cells, want 3 (the mark split the goos key?)", rep.Compared())
	}
}

// TestLongLineNamesItsLine: a line longer than benchfmt's reader takes is
// refused naming its own line, not the last one read.
func TestLongLineNamesItsLine(t *testing.T) {
	lines := strings.SplitAfter(goTestLines, "\n")
	long := strings.Join(lines[:5], "") + "# " + strings.Repeat("x", 70000) + "\n" + strings.Join(lines[5:], "")
	file := writeTemp(t, "long.txt", long)
	cmpErr, mergeErr := inputErr(t, file)
	for what, err := range map[string]error{"compare": cmpErr, "merge": mergeErr} {
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), file+":6: a line longer than") {
			t.Errorf("%s: err %v, want ErrInput naming line 6", what, err)
		}
	}
	// The longest line the reader takes is fine.
	ok := strings.Join(lines[:5], "") + strings.Repeat("x", maxLine) + "\n" + strings.Join(lines[5:], "")
	if cmpErr, mergeErr := inputErr(t, writeTemp(t, "ok.txt", ok)); cmpErr != nil || mergeErr != nil {
		t.Errorf("a line of %d bytes refused: %v; %v", maxLine, cmpErr, mergeErr)
	}
}

// fifo makes a named pipe at dir/name and writes content into it from a
// goroutine, as a shell's process substitution (<(git show ...)) hands a
// command a pipe: it can be read once, and then only to its end.
func fifo(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		io.WriteString(f, content)
	}()
	return p
}

// TestResultsFromAPipe: a result file that is a pipe (benchcmp <(git show
// HEAD~1:results.txt) new.txt) is read once: comparing, merging and
// fitting it works as for a regular file. Every file was read twice, once
// to see how it ends and once for its results, and the second read of a
// pipe found it empty ("no benchmark results"), or, a named pipe, waited
// for a writer forever.
func TestResultsFromAPipe(t *testing.T) {
	done := make(chan struct{}, 1)
	go func() {
		resultsFromAPipe(t)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("reading a pipe hangs: a second open of a named pipe waits for a writer that is gone")
	}
}

func resultsFromAPipe(t *testing.T) {
	old := "BenchmarkA/n=1 1 5 ns/op\nBenchmarkA/n=2 1 10 ns/op\n"
	new := writeTemp(t, "new.txt", "BenchmarkA/n=1 1 6 ns/op\nBenchmarkA/n=2 1 12 ns/op\n")
	out, errOut, err := compare(t, nil, "old="+fifo(t, "old", old), "new="+new)
	if err != nil || !strings.Contains(out, "A/n=2") {
		t.Errorf("compare with a pipe: %v\n%s\n%s", err, errOut, out)
	}
	var mout, merr bytes.Buffer
	if err := Merge(&mout, &merr, []string{fifo(t, "s0", old), new}); err != nil || strings.Count(mout.String(), "BenchmarkA/n=") != 4 {
		t.Errorf("merge with a pipe: %v\n%s\n%s", err, merr.String(), mout.String())
	}
	cfg := DefaultScalingConfig()
	cfg.By, cfg.Files = "/n", []string{fifo(t, "sc", old)}
	var sout, serr bytes.Buffer
	if err := Scaling(&sout, &serr, cfg); err != nil || !strings.Contains(sout.String(), "1.000") {
		t.Errorf("scaling of a pipe: %v\n%s\n%s", err, serr.String(), sout.String())
	}
}

// TestOnePipeTwoNames: one pipe named two ways (/dev/stdin and /dev/fd/0,
// or a named pipe and a link to it) is the same file read twice, as one
// regular file named twice is: the warning said so, but the second name
// read the emptied pipe and was refused as holding no results.
func TestOnePipeTwoNames(t *testing.T) {
	done := make(chan struct{}, 1)
	go func() {
		onePipeTwoNames(t)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("reading one pipe under two names hangs")
	}
}

func onePipeTwoNames(t *testing.T) {
	content := "BenchmarkA/n=1 1 5 ns/op\nBenchmarkA/n=2 1 10 ns/op\n"
	for _, name := range []string{"cmp", "merge", "scaling"} {
		p := fifo(t, name, content)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		var err error
		switch name {
		case "cmp":
			cfg := DefaultCompareConfig()
			cfg.Files = []string{"old=" + p, "new=" + link}
			err = Compare(&out, &errOut, cfg)
		case "merge":
			err = Merge(&out, &errOut, []string{p, link})
		case "scaling":
			cfg := DefaultScalingConfig()
			cfg.By, cfg.Files = "/n", []string{p, link}
			err = Scaling(&out, &errOut, cfg)
		}
		if err != nil || !strings.Contains(out.String(), "A") || !strings.Contains(errOut.String(), "same file") {
			t.Errorf("%s of one pipe under two names: %v\n%s\n%s", name, err, errOut.String(), out.String())
		}
	}
}

// TestByteOrderMarkInsideAConfigurationValue: a mark inside a configuration
// value (or a log line) is one more character, as benchfmt reads it; only a
// mark starting a line or inside a result line is refused.
func TestByteOrderMarkInsideAConfigurationValue(t *testing.T) {
	plain := writeTemp(t, "plain.txt", goTestLines)
	for _, content := range []string{
		strings.Replace(goTestLines, "pkg: example.com/p", "pkg: example.com/p\ufeffq", 1),
		strings.Replace(goTestLines, "pkg: example.com/p", "pkg: example.com/p\nPASS\ufeff", 1),
	} {
		odd := writeTemp(t, "odd.txt", content)
		if _, err := BuildReport(io.Discard, func() CompareConfig {
			c := DefaultCompareConfig()
			c.Files = []string{"old=" + plain, "new=" + odd}
			c.Ignore = "pkg"
			return c
		}()); err != nil {
			t.Errorf("%q: %v", content, err)
		}
		if err := Merge(io.Discard, io.Discard, []string{odd}); err != nil {
			t.Errorf("merge %q: %v", content, err)
		}
	}
}

// TestValueOverflowedByTidyingIsNamedAsWritten: a value finite as written
// whose tidied unit overflows float64 (1e308 MB/s is 1e314 B/s) is refused
// with the value and unit the line writes, not with a +Inf it does not
// hold.
func TestValueOverflowedByTidyingIsNamedAsWritten(t *testing.T) {
	file := writeTemp(t, "huge.txt", strings.Repeat("BenchmarkA 1 1e308 MB/s\n", 6))
	cmpErr, mergeErr := inputErr(t, file)
	for _, err := range []error{cmpErr, mergeErr} {
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "huge.txt:1: value 1e+308 MB/s is +Inf B/s, beyond the float64 range") {
			t.Errorf("err = %v, want the value as written, beyond the float64 range", err)
		}
	}
}

// TestEmptyBenchmarkName: benchfmt skips a line that is "Benchmark" alone,
// as it skips go test -v's announcement of a benchmark, refuses one with
// only blanks after the prefix (no iteration count), and reads
// "Benchmark 1 5 ns/op", which go test writes for a function named
// Benchmark, as a result with the empty name. benchcmp reads them the
// same way; its messages named that benchmark as nothing at all ("of
// old.txt: "), and now name it "".
func TestEmptyBenchmarkName(t *testing.T) {
	six := strings.Repeat("BenchmarkX 1 10 ns/op\n", 6)
	old := writeTemp(t, "empty-old.txt", six+"Benchmark\nBenchmark 1 5 ns/op\n")
	new := writeTemp(t, "empty-new.txt", six+"Benchmark\n")
	out, errOut, err := compare(t, func(c *CompareConfig) { c.FailOn = "regression"; c.Format = "csv" }, old, new)
	if !errors.Is(err, ErrRegression) || !strings.Contains(err.Error(), `have no result to compare with ("")`) {
		t.Errorf("gate: %v, want ErrRegression naming the lost benchmark \"\"", err)
	}
	if !strings.Contains(errOut, new+" has no result for 1 benchmark(s) of "+old+": \"\"\n") {
		t.Errorf("stderr %q: want the warning naming the benchmark \"\"", errOut)
	}
	if n := strings.Count(out, "\nsec/op,,,"); n != 1 {
		t.Errorf("csv has %d rows of the empty name, want 1 (the bare Benchmark line skipped):\n%s", n, out)
	}
	bad := writeTemp(t, "empty-bad.txt", six+"Benchmark   \n")
	if _, _, err := compare(t, nil, old, bad); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "empty-bad.txt:7: missing iteration count") {
		t.Errorf("Benchmark with blanks: %v, want ErrInput naming empty-bad.txt:7", err)
	}
}

// TestUnitConflictNamesBothLines: two Unit lines giving one unit's
// metadata key different values, in one file or in two, are refused
// naming both places. benchfmt's message ("metadata better of unit ns/op
// already set to lower") named the second line only, so that the first
// had to be searched for, in the same file or in another.
func TestUnitConflictNamesBothLines(t *testing.T) {
	one := writeTemp(t, "one.txt", "Unit ns/op better=lower\nBenchmarkA 1 5 ns/op\nUnit ns/op assume=nothing better=higher\nBenchmarkA 1 6 ns/op\n")
	lower := writeTemp(t, "lower.txt", "goos: linux\nUnit x better=lower\nBenchmarkA 1 5 x\n")
	higher := writeTemp(t, "higher.txt", "BenchmarkA 1 5 x\nUnit x better=higher\nBenchmarkA 1 6 x\n")
	sideways := writeTemp(t, "sideways.txt", "Unit x better=sideways\nBenchmarkA 1 6 x\n")
	exact := writeTemp(t, "exact.txt", "Unit x assume=exact\nBenchmarkA 1 5 x\n")
	maybe := writeTemp(t, "maybe.txt", "Unit x assume=maybe\nBenchmarkA 1 6 x\n")
	nsSideways := writeTemp(t, "ns.txt", "Unit ns/op better=sideways\nBenchmarkA 1 5 ns/op\n")
	secLower := writeTemp(t, "sec.txt", "Unit sec/op better=lower\nBenchmarkA 1 6 ns/op\n")
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{one, one}, one + ":3: Unit ns/op better=higher conflicts with better=lower at " + one + ":1"},
		{[]string{lower, higher}, higher + ":2: Unit x better=higher conflicts with better=lower at " + lower + ":2"},
		// A value no Unit line may give is named as such, whichever
		// line gives it, not as a conflict.
		{[]string{lower, sideways}, sideways + ":1: Unit x better=sideways: better must be lower or higher"},
		{[]string{sideways, lower}, sideways + ":1: Unit x better=sideways: better must be lower or higher"},
		{[]string{exact, maybe}, maybe + ":1: Unit x assume=maybe: assume must be nothing or exact"},
		// The earlier line is named by its own spelling of the unit.
		{[]string{nsSideways, secLower}, nsSideways + ":1: Unit ns/op better=sideways: better must be lower or higher"},
	} {
		cfg := DefaultCompareConfig()
		cfg.Files = []string{"old=" + tc.files[0], "new=" + tc.files[1]}
		var out bytes.Buffer
		err := Compare(&out, io.Discard, cfg)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compare %v: %v, want ErrInput saying %q", tc.files, err, tc.want)
		}
		if out.Len() > 0 {
			t.Errorf("compare %v wrote a report", tc.files)
		}
	}
	// merge refuses such a value too, in either order.
	for _, files := range [][]string{{lower, sideways}, {sideways, lower}} {
		if err := Merge(&bytes.Buffer{}, io.Discard, files); !errors.Is(err, ErrInput) ||
			!strings.Contains(err.Error(), sideways+":1: Unit x better=sideways: better must be lower or higher") {
			t.Errorf("merge %v: %v, want ErrInput naming better=sideways", files, err)
		}
	}
	// merge reads each file with a reader of its own: a conflict within
	// one file is benchfmt's to find.
	if err := Merge(&bytes.Buffer{}, io.Discard, []string{one}); !errors.Is(err, ErrInput) ||
		!strings.Contains(err.Error(), one+":3: Unit ns/op better=higher conflicts with better=lower at "+one+":1") {
		t.Errorf("merge %s: %v, want ErrInput naming lines 3 and 1", one, err)
	}
}

// TestBenchmarkOutputInAResultLine: what a benchmark prints while it runs
// lands between its name, which go test writes first, and its counts.
// benchstat skips such a line, and the sample on it, with a warning;
// benchcmp refuses it, as every malformed line (README, "Gate CI"), and
// now says what it most likely is, showing the line, where it gave
// benchfmt's "parsing iteration count: invalid syntax" alone.
func TestBenchmarkOutputInAResultLine(t *testing.T) {
	const res = "BenchmarkX-2   \t     100\t  5 ns/op\n"
	for _, tc := range []struct{ name, content, want string }{
		{"text", res + "BenchmarkX-2   \thello\n     100\t  5 ns/op\n" + res,
			`:2: parsing iteration count: invalid syntax, in "BenchmarkX-2   \thello": output the benchmark printed while it ran`},
		{"text without a newline", res + "BenchmarkX-2   \tworking...     100\t  5 ns/op\n" + res,
			`:2: parsing iteration count: invalid syntax, in "BenchmarkX-2   \tworking...     100\t  5 ns/op": output the benchmark printed`},
		{"a number", res + "BenchmarkX-2   \t42\n     100\t  5 ns/op\n" + res,
			`:2: missing measurements, in "BenchmarkX-2   \t42": output the benchmark printed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "out.txt", tc.content)
			cmpErr, mergeErr := inputErr(t, file)
			for _, err := range []error{cmpErr, mergeErr} {
				if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), file+tc.want) ||
					!strings.Contains(err.Error(), "benchstat skips such a line") {
					t.Errorf("%v, want ErrInput with %q and the word on benchstat", err, tc.want)
				}
			}
		})
	}
	// A count of digits only, too large for an int, is no printed
	// output: it is named as the count it is.
	huge := writeTemp(t, "huge.txt", res+"BenchmarkX-2   \t99999999999999999999\t  5 ns/op\n")
	cmpErr, mergeErr := inputErr(t, huge)
	for _, err := range []error{cmpErr, mergeErr} {
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), huge+":2: parsing iteration count: value out of range: an iteration count is from 1 to "+strconv.Itoa(math.MaxInt)) ||
			strings.Contains(err.Error(), "printed") {
			t.Errorf("%v, want ErrInput naming the count's range and no printed output", err)
		}
	}
	// On a last line without its newline it is a file cut short.
	file := writeTemp(t, "cut.txt", res+"BenchmarkX-2   \thello")
	if cmpErr, _ := inputErr(t, file); !errors.Is(cmpErr, ErrInput) || !strings.Contains(cmpErr.Error(), "the file looks truncated") {
		t.Errorf("%v, want ErrInput saying the file looks truncated", cmpErr)
	}
}

// TestFileBeingWrittenIsBadInput: a result file a benchrun run is still
// writing (it holds an exclusive flock on its --out until the run ends)
// holds only the samples finished so far, in complete lines; read as a
// whole file, a gate judged fewer samples than the run takes, or passed
// saying it could not fail. The comparison and merge refuse it, naming
// the file, and read it once the lock is gone.
func TestFileBeingWrittenIsBadInput(t *testing.T) {
	if !lockingSystem {
		t.Skip("no flock on this system: benchrun locks nothing either")
	}
	p := writeTemp(t, "cur.txt", benchrunLines)
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := lockExclusive(w); err != nil {
		t.Fatal(err)
	}
	cmpErr, mergeErr := inputErr(t, p)
	for _, err := range []error{cmpErr, mergeErr} {
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), p+": is being written by a benchrun run") {
			t.Errorf("a file being written: got %v, want bad input naming %s as being written", err, p)
		}
	}
	if err := w.Close(); err != nil { // releases the lock
		t.Fatal(err)
	}
	if cmpErr, mergeErr := inputErr(t, p); cmpErr != nil || mergeErr != nil {
		t.Errorf("once written: compare %v, merge %v; want both to read it", cmpErr, mergeErr)
	}
}
