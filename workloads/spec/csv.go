package spec

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CSVPath returns the file an input's csv field names: relative paths
// resolve against the spec's directory.
func (s *Spec) CSVPath(in *Input) string {
	if filepath.IsAbs(in.CSV) {
		return in.CSV
	}
	if innerDotDot(in.CSV) {
		// sub/link/../a.csv: taken as the kernel takes it (Physical),
		// not as Join would clean it.
		if s.Dir == "" {
			return Physical(in.CSV)
		}
		return Physical(s.Dir + string(filepath.Separator) + in.CSV)
	}
	return filepath.Join(s.Dir, in.CSV)
}

// ReadInputCSV reads the CSV file of in, an input of s (CSVPath): a file
// that cannot be read as a whole (missing, a directory, a pipe, no
// permission) is an error at the spec's field inputs.NAME.csv naming the
// file, so that the user learns which spec and field named it; an error
// inside the file names the file and its line (ReadCSVFile).
func (s *Spec) ReadInputCSV(in *Input) (*Table, error) {
	path := s.CSVPath(in)
	t, err := ReadCSVFile(path, in.Columns)
	if e, ok := err.(*Error); ok && e.Line == 0 && e.File == path {
		// Not through Errorf: its bound would cut a path longer than
		// 80 bytes, which showFile names whole (e.Msg is bounded).
		pe := s.Pos(in.Field() + ".csv")
		pe.Msg = showFile(path) + ": " + e.Msg
		return nil, pe
	}
	return t, err
}

// ReadCSVFile reads the CSV file at path for an input with the given
// columns (docs/spec.md, "Inputs"). On any error it returns no table. The file
// must be a regular file: a command reads an input more than once (the
// spec's check, then each run), which a named pipe or a device gives only
// once — the second open would wait for a writer that is gone — so such a
// path is refused before it is opened.
func ReadCSVFile(path string, columns []string) (*Table, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read CSV: " + unwrapPathErr(err)}
	}
	if msg := notRegular(st, "an input is read more than once (the spec's check, then each run)"); msg != "" {
		return nil, &Error{File: path, Msg: "cannot read CSV: " + msg}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read CSV: " + unwrapPathErr(err)}
	}
	defer f.Close()
	return ReadCSV(path, f, columns)
}

// notRegular returns why st, a file a command reads more than once (why
// says so), cannot be read as one: a directory, or a named pipe, socket
// or device, which gives its content once. "" for a regular file.
func notRegular(st os.FileInfo, why string) string {
	switch {
	case st.IsDir():
		return "is a directory"
	case !st.Mode().IsRegular():
		what := "not a regular file"
		switch t := st.Mode().Type(); {
		case t&os.ModeNamedPipe != 0:
			what = "a named pipe"
		case t&os.ModeSocket != 0:
			what = "a socket"
		case t&os.ModeDevice != 0:
			what = "a device"
		}
		return what + ", which gives its content once: " + why + ", so write it to a file first"
	}
	return ""
}

// ReadCSV reads updates from r. The first non-empty line is the header,
// exactly time,diff,<columns in order>; every other non-empty line holds
// that many comma-separated decimal integers: time a uint64, diff a
// non-zero int64, then the columns as int64. CRLF line ends and a leading
// byte order mark are accepted.
// Errors name file and line; on any error no table is returned.
func ReadCSV(file string, r io.Reader, columns []string) (*Table, error) {
	want := "time,diff," + strings.Join(columns, ",")
	lineNo := 0
	fail := func(format string, args ...any) (*Table, error) {
		return nil, &Error{File: file, Line: lineNo, Msg: bound(fmt.Sprintf(format, args...))}
	}
	// The header is looked at before the file is read whole: a file that
	// is no CSV input (a binary named by mistake, of gigabytes) is refused
	// having read its first headerPeek bytes, not all of it.
	br := bufio.NewReaderSize(r, headerPeek)
	head, err := br.Peek(headerPeek)
	if err != nil && err != io.EOF {
		// Peek reports a read error once: ReadAll would not see it.
		return fail("read error: %v", err)
	}
	head = bytes.TrimPrefix(head, []byte(bom))
	if line, n, ok := firstLine(head, err == io.EOF); ok && string(line) != want {
		switch {
		case len(line) < len(head) || err == io.EOF:
			lineNo = n
			return fail("header is %s, want %q", quoteCSV(line), want)
		case !strings.HasPrefix(want, string(line)):
			// The line goes on past what was read, and what was
			// read is no header already.
			lineNo = n
			return fail("header is %s... (at least %d bytes), want %q", strconv.Quote(cut(string(line[:maxQuote+1]))), len(line), want)
		}
		// A header longer than the peek that starts as it should (some
		// thousands of long column names) is judged whole below.
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return fail("read error: %v", err)
	}
	data = bytes.TrimPrefix(data, []byte(bom))
	// Counting lines first sizes the table once: no growth while loading.
	t := NewTable(columns, bytes.Count(data, []byte{'\n'})+1)
	row := make([]int64, len(columns))
	arity := 2 + len(columns)
	header := false
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			continue
		}
		if !header {
			if string(line) != want {
				return fail("header is %s, want %q", quoteCSV(line), want)
			}
			header = true
			continue
		}
		var tm uint64
		var diff int64
		field := 0
		for start := 0; ; field++ {
			end := bytes.IndexByte(line[start:], ',')
			last := end < 0
			if last {
				end = len(line)
			} else {
				end += start
			}
			if field >= arity {
				return fail("%d fields, want %d (time,diff,%s)", strings.Count(string(line), ",")+1, arity, strings.Join(columns, ","))
			}
			if field == 0 {
				u, ok := parseUint64(line[start:end])
				if !ok {
					return fail("field 1 (time) is %s, not a decimal integer in 0..%d", quoteCSV(line[start:end]), MaxTime)
				}
				if u > MaxTime {
					return fail("field 1 (time) is %d, outside 0..%d (%s)", u, MaxTime, maxTimeWhy)
				}
				tm = u
				if last {
					break
				}
				start = end + 1
				continue
			}
			v, ok := parseInt64(line[start:end])
			switch {
			case !ok:
				return fail("field %d (%s) is %s, not a decimal integer in the int64 range", field+1, csvName(field, columns), quoteCSV(line[start:end]))
			case field == 1:
				if v == 0 {
					return fail("diff is 0")
				}
				diff = v
			default:
				row[field-2] = v
			}
			if last {
				break
			}
			start = end + 1
		}
		if field+1 != arity {
			return fail("%d fields, want %d (time,diff,%s)", field+1, arity, strings.Join(columns, ","))
		}
		t.Append(tm, diff, row)
	}
	if !header {
		lineNo = 0
		return fail("empty file: the header %q is missing", want)
	}
	return t, nil
}

// headerPeek is how much of a CSV file ReadCSV reads to judge its header
// before it reads the rest.
const headerPeek = 1 << 16

// firstLine returns the first non-empty line of head (its line end and a
// CR before it cut off) and its 1-based line number, and whether head
// holds the whole of it: a line feed ends it, or the file (eof), or it
// fills head (a line too long for any header). Blank lines that fill head
// leave it undecided (ok false).
func firstLine(head []byte, eof bool) (line []byte, n int, ok bool) {
	for off := 0; off < len(head); {
		n++
		i := bytes.IndexByte(head[off:], '\n')
		if i < 0 {
			l := head[off:]
			if !eof && off > 0 {
				return nil, 0, false // a line cut by the peek, after blank ones: read on
			}
			if len(l) > 0 && l[len(l)-1] == '\r' && eof {
				l = l[:len(l)-1]
			}
			return l, n, len(l) > 0
		}
		l := head[off : off+i]
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		if len(l) > 0 {
			return l, n, true
		}
		off += i + 1
	}
	return nil, 0, false
}

// quoteCSV quotes b for an error as quote does.
func quoteCSV(b []byte) string {
	if len(b) > maxQuote {
		// Only the bytes quoted are copied into a string.
		return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(cut(string(b[:maxQuote+1]))), len(b))
	}
	return strconv.Quote(string(b))
}

// csvName names CSV field i for messages.
func csvName(i int, columns []string) string {
	switch i {
	case 0:
		return "time"
	case 1:
		return "diff"
	}
	return columns[i-2]
}

// parseUint64 parses decimal digits, nothing else, in the uint64 range.
// Leading zeros are digits like any other (docs/spec.md, "CSV files"):
// 007 is 7, however many zeros pad it.
func parseUint64(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	b = trimZeros(b)
	if len(b) > 20 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		hi, lo := bits.Mul64(u, 10)
		lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
		u = lo
	}
	return u, true
}

// parseInt64 parses an optional '-' and decimal digits, nothing else, in
// the int64 range. As in parseUint64, leading zeros are digits (-007 is
// -7), and -0 is 0.
func parseInt64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	b = trimZeros(b)
	if len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// trimZeros drops the leading zeros of the non-empty digits b but the
// last digit, so that the length checks count significant digits only.
func trimZeros(b []byte) []byte {
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	return b
}

// WriteCSV writes t in the format ReadCSV reads, with LF line ends.
func WriteCSV(w io.Writer, t *Table) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("time,diff," + strings.Join(t.Columns, ",") + "\n")
	buf := make([]byte, 0, 32*(2+len(t.Columns)))
	for i := range t.Times {
		buf = strconv.AppendUint(buf[:0], t.Times[i], 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, t.Diffs[i], 10)
		for _, v := range t.Row(i) {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, v, 10)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}
