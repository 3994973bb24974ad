package benchcmp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/tracebench/tracebench/workloads/spec"
)

// The checks of this file are the ones benchfmt leaves to its callers
// (invariant C3). benchfmt reads a file line by line and cannot tell a last
// line cut short from a complete one: a file cut to end in "Benchm" loses
// that line without a word (a name alone is how `go test -v` announces a
// benchmark), and one cut to end in "694.6 ns/u" has a result in a unit
// nothing else uses. It also takes any integer as the iteration count and
// any word as a unit. A result file is written line by line, each ending in
// a newline, so a last line without one is where a cut shows.

// goUnits are the units `go test -bench` writes, as written and as benchfmt
// tidies them: a last line may end in one of them even when no other line
// uses it.
var goUnits = []string{"ns/op", "sec/op", "B/op", "allocs/op", "MB/s", "B/s"}

// fileEnd describes how a file ends.
type fileEnd struct {
	// line is the number of the last line, as benchfmt counts lines.
	line int
	// terminated is set when the file is empty or its last line ends in a
	// newline (or holds only spaces).
	terminated bool
	// head is the start of an unterminated last line, for messages.
	head string
	// benchmark is set when an unterminated last line starts like a
	// benchmark line: with "Benchmark", or with a part of it ("Benchm").
	benchmark bool
	// fails are the lines where go test says that a run failed.
	fails []failLine
}

// failLine is a line of go test's saying a test or benchmark failed: a
// "--- FAIL: Name" line, or a "FAIL" line (alone, or with the package).
type failLine struct {
	line int
	text string // for messages: white space runs as one space, at most headMax bytes
	raw  string // the line as written, for Merge to write again
}

// isFailLine reports whether line (its start is enough) is one go test
// writes when a benchmark or its package failed.
func isFailLine(line []byte) bool {
	line = bytes.TrimRight(line, "\r")
	if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("--- FAIL:")) {
		return true
	}
	rest, ok := bytes.CutPrefix(line, []byte("FAIL"))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t')
}

// bom is the UTF-8 byte order mark some editors put at the start of a
// file; result files are read without it.
const bom = "\ufeff"

// utf16LE and utf16BE are the byte order marks that start UTF-16 text,
// little- and big-endian.
const (
	utf16LE = "\xff\xfe"
	utf16BE = "\xfe\xff"
)

// gzipMagic starts gzip-compressed data: a pprof profile, or a result
// file kept compressed.
const gzipMagic = "\x1f\x8b"

// skipBOM returns a reader of r without a leading byte order mark.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom))
	}
	return br
}

// maxLine is the longest line benchfmt's reader takes: the size of its
// bufio.Scanner's buffer, newline included.
const maxLine = bufio.MaxScanTokenSize - 1

// headMax is how much of an unterminated last line fileEnd keeps.
const headMax = 64

// readEnd reads the file at path to find how it ends.
func readEnd(path string) (fileEnd, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileEnd{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && beingWritten(f) {
		// A benchrun run still writing its --out file locks it: the
		// file holds the samples finished so far, complete lines that
		// read as a whole file of fewer samples (a gate that judged
		// them, or could not fail on too few, and passed).
		return fileEnd{}, fmt.Errorf("%s: is being written by a benchrun run (it holds the file's lock): its results are not complete; wait for the run to end", spec.Path(path))
	}
	return readEndOf(f, path)
}

// readEndOf is readEnd of the content f holds.
func readEndOf(f io.Reader, path string) (fileEnd, error) {
	var (
		lines   int    // newlines so far
		head    []byte // the start of the current line
		rest    []byte // the rest of the current line past head, kept for a FAIL line
		inLine  int    // bytes of the current line so far
		visible bool   // the current line holds something other than spaces
		fails   []failLine
		br      = bufio.NewReader(f)
		buf     = make([]byte, 32<<10)
		last2   [2]byte // the two bytes before c, across reads
	)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom))
	}
	if b, err := br.Peek(2); err == nil && (string(b) == utf16LE || string(b) == utf16BE) {
		// Windows PowerShell's > and Out-File write UTF-16 with a
		// byte order mark: every other byte of its text is a NUL,
		// which the check below would take for a file cut short and
		// padded with zeros. These two bytes never start UTF-8 text.
		return fileEnd{}, fmt.Errorf("%s:1: a UTF-16 byte order mark: the file is UTF-16 text (as Windows PowerShell's > writes it), not UTF-8; convert it (iconv -f UTF-16 -t UTF-8)", spec.Path(path))
	}
	if b, err := br.Peek(len(gzipMagic)); err == nil && string(b) == gzipMagic {
		// A CPU or memory profile (benchrun --cpuprofile, go test
		// -cpuprofile) is gzipped, as is a result file kept
		// compressed: its header's NUL would read as a file cut
		// short and padded with zeros. These bytes never start text.
		return fileEnd{}, fmt.Errorf("%s:1: gzip-compressed data (0x1f 0x8b), not a result file: a pprof profile is compared with benchcmp profile --base BASE.pprof OTHER.pprof --flamegraph OUT.html, and a compressed result file is read once uncompressed (gunzip -k)", spec.Path(path))
	}
	for {
		n, err := br.Read(buf)
		for _, c := range buf[:n] {
			if c == bom[2] && last2 == [2]byte{bom[0], bom[1]} && (inLine == 2 || bytes.HasPrefix(head, []byte("Benchmark"))) {
				// The start's mark is skipped; one starting a later line,
				// as in a file pasted after one an editor saved with it,
				// makes benchfmt skip that line, and one inside a result
				// line makes a unit no other line has. Elsewhere (inside
				// a configuration value or a log line) benchfmt reads it
				// as any other character, and so does benchcmp.
				return fileEnd{}, fmt.Errorf("%s:%d: a byte order mark (U+FEFF) past the file's start: files joined with cat? (benchcmp merge joins result files)", spec.Path(path), lines+1)
			}
			last2 = [2]byte{last2[1], c}
			if c == '\n' {
				lines++
				if isFailLine(head) {
					fails = append(fails, newFailLine(lines, head, rest, inLine))
				}
				head, rest, inLine, visible = head[:0], rest[:0], 0, false
				continue
			}
			if c == 0 {
				// No result file holds a NUL; a file cut short by a
				// crash is often padded with them, which a reader
				// would otherwise take for blank lines.
				return fileEnd{}, fmt.Errorf("%s:%d: a NUL byte: the file is not text (cut short and padded with zeros?)", spec.Path(path), lines+1)
			}
			if inLine < headMax {
				head = append(head, c)
			} else if isFailLine(head) {
				rest = append(rest, c)
			}
			inLine++
			if inLine == maxLine+1 {
				return fileEnd{}, fmt.Errorf("%s:%d: a line longer than %d bytes, more than a result file's reader takes", spec.Path(path), lines+1, maxLine)
			}
			if c != ' ' && c != '\t' && c != '\r' {
				visible = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			// A read's *fs.PathError names its call and the file again
			// ("read x.txt: input/output error"): the file once.
			if pe, ok := err.(*fs.PathError); ok {
				return fileEnd{}, fmt.Errorf("%s: %v", spec.Path(path), pe.Err)
			}
			return fileEnd{}, fmt.Errorf("%s: %s", spec.Path(path), spec.PathErr(err))
		}
	}
	if !visible {
		return fileEnd{line: lines, terminated: true, fails: fails}, nil
	}
	if isFailLine(head) {
		fails = append(fails, newFailLine(lines+1, head, rest, inLine))
	}
	h := string(head)
	if inLine > headMax {
		h += "…"
	}
	return fileEnd{
		line: lines + 1,
		head: h,
		benchmark: bytes.HasPrefix(head, []byte("Benchmark")) ||
			strings.HasPrefix("Benchmark", string(head)),
		fails: fails,
	}, nil
}

// newFailLine is the FAIL line number line whose first bytes are head and
// whose others are rest, n bytes in all.
func newFailLine(line int, head, rest []byte, n int) failLine {
	text := strings.Join(strings.Fields(string(head)), " ")
	if n > len(head) {
		text += "…"
	}
	raw := bytes.TrimRight(append(slices.Clip(head), rest...), "\r")
	return failLine{line: line, text: text, raw: string(raw)}
}

// inputCheck holds what the checks of result files need across lines and
// files: how each file ends, the units used on complete lines, and the
// results read on unterminated last lines, which are judged once every file
// has been read. Use newInputCheck, then result and meta for every record
// read (in order), then finish.
type inputCheck struct {
	paths []string
	ends  map[string]fileEnd
	// data holds the content of each file that is not a regular file (a
	// pipe: benchcmp <(git show HEAD~1:results.txt) new.txt), which can
	// be read only once, for open to give it again.
	data map[string][]byte
	// pipes are the FileInfo of each file of data, so that one pipe
	// named two ways is read once.
	pipes map[string]os.FileInfo
	// units are the tidied units of complete lines, of Unit metadata lines
	// and of goUnits.
	units map[string]bool
	// lastRead is set for a file whose unterminated last line benchfmt
	// read as a result.
	lastRead map[string]bool
	// prev maps a file and a benchmark name to its latest line so far.
	prev map[prevKey]prevLine
	// pending are the results of unterminated last lines.
	pending []lastLine
}

type prevKey struct{ path, name string }

type prevLine struct {
	line  int
	units []string
}

// lastLine is a result read on an unterminated last line, with the units of
// the latest earlier line of the same benchmark in the same file.
type lastLine struct {
	path  string
	line  int
	units []string // as written
	tidy  []string
	prev  prevLine
}

// newInputCheck reads how each file of paths ends. An unreadable file is an
// error wrapping ErrInput.
func newInputCheck(paths []string) (*inputCheck, error) {
	c := &inputCheck{
		ends:     map[string]fileEnd{},
		data:     map[string][]byte{},
		pipes:    map[string]os.FileInfo{},
		units:    map[string]bool{},
		lastRead: map[string]bool{},
		prev:     map[prevKey]prevLine{},
	}
	for _, u := range goUnits {
		c.units[u] = true
	}
	for _, p := range paths {
		if _, ok := c.ends[p]; ok {
			continue
		}
		end, err := c.readEnd(p)
		if err != nil {
			return nil, openErr(p, err)
		}
		c.paths = append(c.paths, p)
		c.ends[p] = end
	}
	return c, nil
}

// readEnd is readEnd(path), but for a file that is not a regular file (a
// pipe), which gives its content only once: its content is kept in c.data
// for open.
func (c *inputCheck) readEnd(path string) (fileEnd, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return readEnd(path)
	}
	for p, pst := range c.pipes {
		if os.SameFile(pst, st) {
			// One pipe under another name (/dev/stdin and /dev/fd/0):
			// read already, it has nothing more to give.
			c.data[path] = c.data[p]
			return c.ends[p], nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fileEnd{}, err
	}
	defer f.Close()
	// Read as it is checked, so that a stream that is not a result file
	// (/dev/zero) is refused at its first bad byte, not read whole first.
	var b bytes.Buffer
	end, err := readEndOf(io.TeeReader(f, &b), path)
	if err == nil {
		c.data[path] = b.Bytes()
		c.pipes[path] = st
	}
	return end, err
}

// open opens the file at path for its results: a pipe's content as
// newInputCheck read it, any other file afresh.
func (c *inputCheck) open(path string) (io.ReadCloser, error) {
	if b, ok := c.data[path]; ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return os.Open(path)
}

// failures returns go test's FAIL lines of every file, as "FILE:LINE: TEXT",
// files in order.
func (c *inputCheck) failures() []string {
	var out []string
	for _, p := range c.paths {
		for _, f := range c.ends[p].fails {
			out = append(out, fmt.Sprintf("%s:%d: %s", spec.Path(p), f.line, show(f.text)))
		}
	}
	return out
}

// warnFailures writes one warning per FAIL line of failures to errOut, at
// most a few, with prefix (the command's name).
func warnFailures(errOut io.Writer, prefix string, failures []string) {
	const most = 5
	for _, f := range failures[:min(len(failures), most)] {
		fmt.Fprintf(errOut, "%s: warning: %s: go test says a run failed: its results are missing or partial\n", prefix, f)
	}
	if len(failures) > most {
		fmt.Fprintf(errOut, "%s: warning: and %d more FAIL line(s)\n", prefix, len(failures)-most)
	}
}

// syntax turns benchfmt's syntax error into an error wrapping ErrInput, and
// says so when it is on an unterminated last line. units is the unit
// metadata the reader has read so far, where a Unit line that conflicts
// with an earlier one finds that one's place.
func (c *inputCheck) syntax(e *benchfmt.SyntaxError, units benchfmt.UnitMetadataMap) error {
	if err := c.unitConflict(e, units); err != nil {
		return err
	}
	// benchfmt's own message names the file raw, and the text of the
	// line as read (a Unit line's value): each word holding a control
	// character is quoted.
	msg := fmt.Sprintf("%s:%d: %s", spec.Path(e.FileName), e.Line, spec.Bound(e.Msg))
	if end := c.ends[e.FileName]; !end.terminated && e.Line == end.line {
		return fmt.Errorf("%w: %s (the last line, which has no newline: the file looks truncated)", ErrInput, msg)
	}
	if strings.HasPrefix(e.Msg, "parsing iteration count") && strings.HasSuffix(e.Msg, "value out of range") {
		// Digits only, too many of them: no printed output to blame.
		return fmt.Errorf("%w: %s: an iteration count is from 1 to %d", ErrInput, msg, math.MaxInt)
	}
	if strings.HasPrefix(e.Msg, "parsing iteration count") || e.Msg == "missing measurements" {
		// go test writes a benchmark's name, runs it, then writes its
		// counts: what the benchmark prints while it runs (to standard
		// output or error, which go test writes to one stream) lands
		// between the two, where the count should be. benchstat skips
		// the line with a warning, and the sample on it; benchcmp
		// refuses it, as it refuses every malformed line (README,
		// "Gate CI"): a gate would otherwise compare fewer samples than
		// ran.
		line, _ := c.lineAt(e.FileName, e.Line)
		return fmt.Errorf("%w: %s, in %s: output the benchmark printed while it ran, between its name and its counts? "+
			"benchstat skips such a line, and the sample on it, with a warning; benchcmp refuses it: print nothing while a benchmark runs (b.Log writes after the result line)",
			ErrInput, msg, spec.Quote(line))
	}
	return fmt.Errorf("%w: %s", ErrInput, msg)
}

// unitConflict is the error for benchfmt's syntax error e when e is a Unit
// line giving a unit's metadata key another value than an earlier Unit
// line gave it, or nil when e is another error. benchfmt's message names
// the second line only ("metadata better of unit ns/op already set to
// lower"); this one names both, as Merge does for Unit lines of two files:
// "new.txt:9: Unit ns/op better=higher conflicts with better=lower at
// old.txt:1".
func (c *inputCheck) unitConflict(e *benchfmt.SyntaxError, units benchfmt.UnitMetadataMap) error {
	// benchfmt splits a Unit line at white space: neither the key, the
	// unit nor the value holds any.
	f := strings.Fields(e.Msg)
	if len(f) != 9 || f[0] != "metadata" || f[2] != "of" || f[3] != "unit" || strings.Join(f[5:8], " ") != "already set to" {
		return nil
	}
	key, unit, old := f[1], f[4], f[8]
	_, tidy := benchunit.Tidy(1, unit)
	prev := units[benchfmt.UnitMetadataKey{Unit: tidy, Key: key}]
	if prev == nil || prev.Value != old {
		return nil
	}
	// The value the line gives is not in benchfmt's message: the line is
	// read again for it.
	value, known := c.unitValue(e.FileName, e.Line, key, old)
	pf, pl := prev.Pos()
	// A value no Unit line may give is named as such, not as a
	// conflict: better=sideways against an earlier better=lower, or
	// either way round; the earlier line by its own spelling of the
	// unit (ns/op where the later one says sec/op).
	if err := badUnitValue(pf, pl, prev.OrigUnit, key, old); err != nil {
		return err
	}
	if !known {
		value = "…"
	} else if err := badUnitValue(e.FileName, e.Line, unit, key, value); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s:%d: Unit %s %s=%s conflicts with %s=%s at %s:%d",
		ErrInput, spec.Path(e.FileName), e.Line, show(unit), show(key), show(value), show(key), show(old), spec.Path(pf), pl)
}

// badUnitValue is the error for a Unit line (file, line) giving key a
// value benchcmp refuses (as directions does): better other than lower or
// higher, assume other than nothing or exact; nil otherwise.
func badUnitValue(file string, line int, unit, key, value string) error {
	switch {
	case key == "better" && value != "lower" && value != "higher":
		return fmt.Errorf("%w: %s:%d: Unit %s better=%s: better must be lower or higher", ErrInput, spec.Path(file), line, show(unit), show(value))
	case key == "assume" && value != "nothing" && value != "exact":
		return fmt.Errorf("%w: %s:%d: Unit %s assume=%s: assume must be nothing or exact", ErrInput, spec.Path(file), line, show(unit), show(value))
	}
	return nil
}

// unitValue returns the first value other than old that the Unit line
// number line of the file at path gives key.
func (c *inputCheck) unitValue(path string, line int, key, old string) (string, bool) {
	text, ok := c.lineAt(path, line)
	if !ok {
		return "", false
	}
	fields := strings.Fields(text)
	for _, kv := range fields[min(2, len(fields)):] {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key && v != old {
			return v, true
		}
	}
	return "", false
}

// lineAt returns line number line of the file at path, read again, for a
// message that shows it.
func (c *inputCheck) lineAt(path string, line int) (string, bool) {
	f, err := c.open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	s := bufio.NewScanner(skipBOM(f))
	s.Buffer(make([]byte, 0, 4096), maxLine+1)
	for n := 1; s.Scan(); n++ {
		if n == line {
			return s.Text(), true
		}
	}
	return "", false
}

// meta records a Unit metadata line's unit as known.
func (c *inputCheck) meta(m *benchfmt.UnitMetadata) {
	c.units[m.Unit] = true
}

// result checks one result line: a positive iteration count, finite
// values, and units that are words rather than numbers or garbage. It
// records the line for finish.
func (c *inputCheck) result(r *benchfmt.Result) error {
	file, line := r.Pos()
	at := spec.Path(file) // the file as messages name it
	if r.Iters <= 0 {
		return fmt.Errorf("%w: %s:%d: iteration count %d: must be positive", ErrInput, at, line, r.Iters)
	}
	units := make([]string, len(r.Values))
	tidy := make([]string, len(r.Values))
	for i, v := range r.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			// The statistics of a sample with NaN or ±Inf never
			// finish: refuse the value, as a syntax error, named as
			// the line writes it.
			if v.OrigUnit != "" && !math.IsNaN(v.OrigValue) && !math.IsInf(v.OrigValue, 0) {
				// Finite as written, tidying overflowed it: 1e308
				// MB/s is 1e314 B/s.
				return fmt.Errorf("%w: %s:%d: value %v %s is %v %s, beyond the float64 range", ErrInput, at, line, v.OrigValue, show(v.OrigUnit), v.Value, show(v.Unit))
			}
			value, unit := v.Value, v.Unit
			if v.OrigUnit != "" {
				value, unit = v.OrigValue, v.OrigUnit
			}
			return fmt.Errorf("%w: %s:%d: %s value %v is not a finite number", ErrInput, at, line, show(unit), value)
		}
		u := v.Unit
		if v.OrigUnit != "" {
			u = v.OrigUnit
		}
		if why := garbledUnit(u); why != "" {
			return fmt.Errorf("%w: %s:%d: unit %q: %s", ErrInput, at, line, u, why)
		}
		units[i], tidy[i] = u, v.Unit
	}
	end := c.ends[file]
	last := !end.terminated && line == end.line
	for i := range tidy {
		// A unit twice on one line would count as two samples of one
		// run. On an unterminated last line, a last unit repeated is
		// most likely a cut line, which finish says.
		if j := slices.Index(tidy[:i], tidy[i]); j >= 0 && !(last && i == len(tidy)-1) {
			as := ""
			if units[j] != units[i] {
				as = fmt.Sprintf(" (as %q before)", units[j])
			}
			return fmt.Errorf("%w: %s:%d: unit %q a second time on the line%s: a line holds one value of each unit",
				ErrInput, at, line, units[i], as)
		}
	}
	key := prevKey{file, string(r.Name.Full())}
	if last {
		c.lastRead[file] = true
		c.pending = append(c.pending, lastLine{path: file, line: line, units: units, tidy: tidy, prev: c.prev[key]})
		return nil
	}
	for _, u := range tidy {
		c.units[u] = true
	}
	c.prev[key] = prevLine{line, units}
	return nil
}

// garbledUnit says why unit cannot be a unit, or "" if it can: a number
// (a value whose unit is missing, or values out of step with their units),
// or a control character or invalid UTF-8 (bytes that are not text). A
// control character is one as spec.Printable counts them: a C0 or C1
// control, and also a bidirectional control (U+202E reverses the rest of
// the line as a terminal shows it) or a line or paragraph separator, which
// the reports, whose headlines show the unit as read, would otherwise pass
// to the terminal raw. Any other word is a unit: benchfmt and `go test`
// allow custom ones (ns/update, x-radix).
func garbledUnit(unit string) string {
	if unit == "" {
		return "empty"
	}
	if c := unit[0]; c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' {
		if _, err := strconv.ParseFloat(unit, 64); err == nil {
			return "a number, not a unit (a value without its unit?)"
		}
	}
	if !utf8.ValidString(unit) {
		return "not valid UTF-8 text"
	}
	if !spec.Printable(unit) {
		return "holds a control character"
	}
	return ""
}

// finish judges the unterminated last lines, once every file has been
// read. Such a line is complete when benchfmt read it as a result, with the
// units of the benchmark's latest earlier line in its file if it has one,
// and else with a last unit that is a Go unit, declared by a Unit line or
// used on a complete line, and not already earlier on the line. Otherwise
// the file was most likely cut short, and the error names the file and
// line.
func (c *inputCheck) finish() error {
	for _, p := range c.paths {
		end := c.ends[p]
		if end.terminated || !end.benchmark || c.lastRead[p] {
			continue
		}
		return fmt.Errorf("%w: %s:%d: %q: the file ends in the middle of a benchmark line (no newline, no measurements): it looks truncated",
			ErrInput, spec.Path(p), end.line, end.head)
	}
	const cut = "the file looks truncated (end it with a newline if the line is complete)"
	for _, l := range c.pending {
		last, lastTidy := l.units[len(l.units)-1], l.tidy[len(l.tidy)-1]
		switch {
		case l.prev.line > 0 && !slices.Equal(l.prev.units, l.units):
			return fmt.Errorf("%w: %s:%d: the last line has no newline and its units (%s) are not those of the same benchmark at line %d (%s): %s",
				ErrInput, spec.Path(l.path), l.line, strings.Join(l.units, " "), l.prev.line, strings.Join(l.prev.units, " "), cut)
		case slices.Contains(l.tidy[:len(l.tidy)-1], lastTidy):
			return fmt.Errorf("%w: %s:%d: the last line has no newline and ends in unit %q a second time: %s",
				ErrInput, spec.Path(l.path), l.line, last, cut)
		case l.prev.line == 0 && !c.units[lastTidy]:
			return fmt.Errorf("%w: %s:%d: the last line has no newline and ends in unit %q, which no other line uses and no Unit line declares: %s",
				ErrInput, spec.Path(l.path), l.line, last, cut)
		}
	}
	return nil
}

// openErr is the error for a result file or profile that cannot be
// read: bad input naming it. "-" names no standard input here, as a pipe
// is read through /dev/stdin (README "Compare two commits"); a missing
// "-" says so.
func openErr(path string, err error) error {
	if path == "-" && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s (standard input is not \"-\": name it /dev/stdin)", ErrInput, fileErr(err))
	}
	return fmt.Errorf("%w: %s", ErrInput, fileErr(err))
}

// fileErr is the message of an error opening or examining a file: the
// file, then what is wrong with it ("old.txt: no such file or
// directory"), alike in every subcommand, whichever call found it (an
// *fs.PathError names its call: "stat old.txt", "open old.txt"). Any
// other error is shown as spec.PathErr shows it.
func fileErr(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return spec.Path(pe.Path) + ": " + pe.Err.Error()
	}
	return spec.PathErr(err)
}
