package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind as error messages do.
func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	default:
		return "an object"
	}
}

// node is one JSON value with the line it starts on. Objects keep their
// members in file order; numbers keep their text, so nothing is rounded.
type node struct {
	kind  kind
	line  int
	text  string // string value or number text
	b     bool
	keys  []string // object member names, in file order
	vals  []*node  // object member values, parallel to keys
	elems []*node  // array elements
	// index maps a member name to its position in keys, once an object
	// has more than indexAt members: the parser looks every name up to
	// refuse a repeated one, and a scan of the names before it made a
	// spec of many views (or inputs, or indexes) quadratic to read.
	index map[string]int
}

// indexAt is the number of members up to which get scans an object's
// names rather than keeping them in a map.
const indexAt = 16

// get returns the member named key of an object node, or nil.
func (n *node) get(key string) *node {
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return n.vals[i]
		}
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// repeated says whether the object n already has a member named key,
// counting the names it compares in d.compared.
func (d *treeDecoder) repeated(n *node, key string) bool {
	if n.index != nil {
		d.compared++
		_, ok := n.index[key]
		return ok
	}
	for _, k := range n.keys {
		d.compared++
		if k == key {
			return true
		}
	}
	return false
}

// add appends the member key, v to an object node.
func (n *node) add(key string, v *node) {
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
	switch {
	case n.index != nil:
		n.index[key] = len(n.keys) - 1
	case len(n.keys) > indexAt:
		n.index = make(map[string]int, 2*len(n.keys))
		for i, k := range n.keys {
			n.index[k] = i
		}
	}
}

// MaxNesting bounds how deep arrays and objects nest in a spec file (the
// top-level object is depth 1). No spec needs more than a handful of
// levels; the bound keeps a malicious file from costing memory or time in
// proportion to its depth.
const MaxNesting = 64

// treeDecoder reads one JSON document into a node tree. It refuses
// duplicate member names, nesting deeper than MaxNesting and trailing data.
type treeDecoder struct {
	dec   *json.Decoder
	data  []byte // what dec reads, for what a syntax error's offset points at
	lines lineIndex
	file  string
	// path is the field path of the value being read, one step per
	// enclosing member or element; it becomes a string only for a message.
	path []pathStep
	// badUTF8 is the offset of the first byte of data that is not UTF-8,
	// or of the first escape of a lone surrogate in a string (\ud800 not
	// followed by a low surrogate's escape, or \udc00 alone), or -1.
	// Outside a string such a byte is a syntax error; inside one
	// encoding/json reads either as U+FFFD, which would change a csv path
	// or an expression silently, so the string holding it is refused
	// (checkUTF8). surrogate says which of the two it is.
	badUTF8   int64
	surrogate bool
	// compared counts the member names the check for a repeated one has
	// compared (or looked up in an object's index): about one per member,
	// however many an object has.
	compared int
}

// firstLoneSurrogate returns the offset of the first \u escape in a JSON
// string of data that encodes half of a surrogate pair without the other
// half, or -1. It reads strings as JSON delimits them (a quote outside a
// string starts one; a backslash escapes the byte after it); data that is
// not JSON is refused by the decoder at or before what this finds.
func firstLoneSurrogate(data []byte) int64 {
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				switch {
				case !ok || r < 0xd800 || r > 0xdfff:
				case r >= 0xdc00:
					return int64(i) // a low half with no high half before it
				default:
					lo, ok := rune(0), i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u'
					if ok {
						lo, ok = hex4(data, i+8)
					}
					if !ok || lo < 0xdc00 || lo > 0xdfff {
						return int64(i)
					}
					i += 6 // the pair's low half, read here
				}
			}
			i++ // the escaped byte
		}
	}
	return -1
}

// hex4 reads four hexadecimal digits at data[i:], as a \u escape holds them.
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// firstBadUTF8 returns the offset of the first byte of data that does not
// belong to a valid UTF-8 encoding, or -1.
func firstBadUTF8(data []byte) int64 {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return int64(i)
		}
		i += n
	}
	return -1
}

// checkUTF8 refuses the string token just read (what names it: "a string
// value", "a member name") when it holds a byte that is not UTF-8, at the
// field path being read (docs/spec.md, "Decoding is strict"): a token
// ends at InputOffset, and the first such byte lies before it only in
// the first token that holds it.
func (d *treeDecoder) checkUTF8(what string) error {
	if d.badUTF8 < 0 || d.dec.InputOffset() <= d.badUTF8 {
		return nil
	}
	off := d.badUTF8
	start := lineStart(d.data, off)
	if d.surrogate {
		return d.errAt(off, fmt.Sprintf("%s holds %s (column %d), half of a surrogate pair without the other half: it encodes no character", what, d.data[off:off+6], off-start+1))
	}
	return d.errAt(off, fmt.Sprintf("%s holds a byte that is not UTF-8 (0x%02x, column %d): a spec file is UTF-8 text", what, d.data[off], off-start+1))
}

// pathStep is one step of a field path: a member name, or an array index
// when key is "" and index >= 0.
type pathStep struct {
	key   string
	index int
}

// field returns the field path of the value being read ("inputs.a.rows[3]").
func (d *treeDecoder) field() string {
	var sb strings.Builder
	for _, st := range d.path {
		if st.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(st.index))
			sb.WriteByte(']')
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(st.key)
	}
	return sb.String()
}

// lineIndex maps byte offsets to 1-based line numbers. A line ends at a
// line feed, or at a carriage return that no line feed follows (a file
// saved with the classic Mac OS's line ends, which JSON reads as white
// space: its lines were all counted as line 1).
type lineIndex []int // offsets of the first byte of each line after the first

func newLineIndex(data []byte) lineIndex {
	var li lineIndex
	for i, c := range data {
		if c == '\n' || c == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			li = append(li, i+1)
		}
	}
	return li
}

// lineStart returns the offset of the first byte of the line holding byte
// offset off (lineIndex's line ends).
func lineStart(data []byte, off int64) int64 {
	return int64(max(bytes.LastIndexByte(data[:off], '\n'), bytes.LastIndexByte(data[:off], '\r')) + 1)
}

// line returns the line holding byte offset off.
func (li lineIndex) line(off int64) int {
	lo, hi := 0, len(li)
	for lo < hi {
		m := (lo + hi) / 2
		if int64(li[m]) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo + 1
}

// bom is the UTF-8 byte order mark some editors put at the start of a
// file. Spec and CSV files are read without it, as benchcmp reads result
// files: it says nothing in UTF-8, and RFC 8259 lets a JSON reader skip
// it. Only a file's first bytes are one; anywhere else it is an error.
const bom = "\ufeff"

// parseTree decodes data, a leading byte order mark skipped, into a tree.
// Syntax errors name file and line.
func parseTree(file string, data []byte) (*node, error) {
	root, _, err := parseTreeWith(file, data)
	return root, err
}

// parseTreeWith is parseTree that also returns its decoder, whose
// counts a test reads.
func parseTreeWith(file string, data []byte) (*node, *treeDecoder, error) {
	data = bytes.TrimPrefix(data, []byte(bom))
	d := &treeDecoder{dec: json.NewDecoder(bytes.NewReader(data)), data: data, lines: newLineIndex(data), file: file, badUTF8: firstBadUTF8(data)}
	if off := firstLoneSurrogate(data); off >= 0 && (d.badUTF8 < 0 || off < d.badUTF8) {
		d.badUTF8, d.surrogate = off, true
	}
	d.dec.UseNumber()
	root, err := d.value(1)
	if err != nil {
		return nil, d, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		off := d.dec.InputOffset()
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		if bytes.HasPrefix(data[off:], []byte(bom)) {
			// A second file's start, as cat joins files an editor
			// saved with the mark.
			return nil, d, d.errAt(off, "invalid JSON: a byte order mark (U+FEFF), which only the start of the file may hold")
		}
		return nil, d, d.errAt(d.dec.InputOffset(), "unexpected data after the top-level object")
	}
	return root, d, nil
}

// errAt returns an Error at byte offset off naming the field path of
// the value being read.
func (d *treeDecoder) errAt(off int64, msg string) error {
	return &Error{File: d.file, Line: d.lines.line(off), Field: d.field(), Msg: bound(msg)}
}

// syntaxErr converts a decoder error into an Error with a line.
func (d *treeDecoder) syntaxErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// The decoder names a bad byte as a rune: a byte order mark's
		// first byte reads "invalid character 'ï'", which no editor
		// shows. Where a value should start, the error's offset is the
		// previous token's (lines above the fault, with a list's
		// elements between), and the decoder's input offset is on the
		// fault, or inside a number or a literal (true, false, null) on
		// its start; elsewhere the error's offset is on the fault.
		if strings.Contains(se.Error(), "'ï'") {
			for _, off := range []int64{d.dec.InputOffset(), se.Offset} {
				for off >= 0 && off < int64(len(d.data)) && strings.IndexByte("-+.eE0123456789truefalsn", d.data[off]) >= 0 {
					off++
				}
				if off >= 0 && off < int64(len(d.data)) && bytes.HasPrefix(d.data[off:], []byte(bom)) {
					return d.errAt(off, "invalid JSON: a byte order mark (U+FEFF), which only the start of the file may hold")
				}
			}
		}
		if err := d.nonASCIIErr(se); err != nil {
			return err
		}
		// The line is the fault's: where a value should start, or
		// inside a number, the error's offset is the previous token's,
		// and the input offset, on the fault or the number, lies past it.
		return d.errAt(max(se.Offset, d.dec.InputOffset()), "invalid JSON: "+se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errAt(d.dec.InputOffset(), "invalid JSON: unexpected end of file")
	}
	return d.errAt(d.dec.InputOffset(), "invalid JSON: "+err.Error())
}

// nonASCIIErr rewrites a syntax error at a byte outside ASCII, or
// returns nil. The decoder names the byte as the rune of its value: the
// first byte of a typographic quote (“, U+201C) reads "invalid character
// 'â'", of é "'Ã'", a file saved as UTF-16 starts with "'ÿ'", and a byte
// whose rune it does not print (0x80-0xa0, 0xad) is an escape, '\u0093'
// for a Windows-1252 quote: none of which the file holds. The error names
// instead the character at the fault and its column, or the byte that is
// not UTF-8 there (docs/spec.md, "Decoding is strict"). The fault is
// found as for a byte order mark (syntaxErr): at the decoder's input
// offset or the error's, past a number or a literal begun there.
func (d *treeDecoder) nonASCIIErr(se *json.SyntaxError) error {
	const prefix = "invalid character '"
	msg := se.Error()
	if !strings.HasPrefix(msg, prefix) {
		return nil
	}
	named, n := utf8.DecodeRuneInString(msg[len(prefix):])
	if q := msg[len(prefix):]; strings.HasPrefix(q, `\u`) && len(q) >= 6 {
		// A byte the decoder's quoting does not print (0x80-0xa0,
		// 0xad: controls, a no-break space, a soft hyphen) is named
		// as an escape, '\u0093'.
		if v, err := strconv.ParseUint(q[2:6], 16, 16); err == nil {
			named, n = rune(v), 6
		}
	}
	rest, ok := strings.CutPrefix(msg[len(prefix)+n:], "'")
	if !ok || named < utf8.RuneSelf || named > 0xff {
		return nil
	}
	for _, off := range []int64{d.dec.InputOffset(), se.Offset} {
		for off >= 0 && off < int64(len(d.data)) && strings.IndexByte("-+.eE0123456789truefalsn", d.data[off]) >= 0 {
			off++
		}
		if off < 0 || off >= int64(len(d.data)) || d.data[off] != byte(named) {
			continue
		}
		col := off - lineStart(d.data, off) + 1
		if off == 0 && (bytes.HasPrefix(d.data, []byte{0xff, 0xfe}) || bytes.HasPrefix(d.data, []byte{0xfe, 0xff})) {
			return d.errAt(off, fmt.Sprintf("invalid JSON: the file starts with a UTF-16 byte order mark (0x%02x 0x%02x): a spec file is UTF-8 text", d.data[0], d.data[1]))
		}
		r, size := utf8.DecodeRune(d.data[off:])
		if r == utf8.RuneError && size <= 1 {
			return d.errAt(off, fmt.Sprintf("invalid JSON: a byte that is not UTF-8 (0x%02x, column %d): a spec file is UTF-8 text", d.data[off], col))
		}
		hint := ""
		switch r {
		case '\u2018', '\u2019', '\u201c', '\u201d':
			hint = ` (a typographic quote: JSON strings take plain double quotes, ")`
		}
		return d.errAt(off, fmt.Sprintf("invalid JSON: invalid character %q (U+%04X, column %d)%s%s", string(r), r, col, rest, hint))
	}
	return nil
}

// value reads the next value, at nesting depth depth (1 for the
// top-level value); d.path is its field path.
func (d *treeDecoder) value(depth int) (*node, error) {
	// The token starts after any whitespace at InputOffset; skip it so
	// the line is the value's own.
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntaxErr(err)
	}
	// InputOffset is now just past the token; for scalars that is on the
	// token's line, for delimiters too.
	line := d.lines.line(d.dec.InputOffset() - 1)
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull, line: line}, nil
	case bool:
		return &node{kind: kindBool, line: line, b: t}, nil
	case json.Number:
		return &node{kind: kindNumber, line: line, text: string(t)}, nil
	case string:
		if err := d.checkUTF8("the string"); err != nil {
			return nil, err
		}
		return &node{kind: kindString, line: line, text: t}, nil
	case json.Delim:
		if depth > MaxNesting {
			return nil, d.errAt(d.dec.InputOffset()-1, fmt.Sprintf("nesting deeper than %d arrays and objects", MaxNesting))
		}
		switch t {
		case '{':
			n := &node{kind: kindObject, line: line}
			for d.dec.More() {
				ktok, err := d.dec.Token()
				if err != nil {
					return nil, d.syntaxErr(err)
				}
				key, _ := ktok.(string)
				if err := d.checkUTF8("a member name"); err != nil {
					return nil, err
				}
				d.path = append(d.path, pathStep{key: key, index: -1})
				if d.repeated(n, key) {
					return nil, d.errAt(d.dec.InputOffset()-1, "duplicate field")
				}
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				d.path = d.path[:len(d.path)-1]
				n.add(key, v)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntaxErr(err)
			}
			return n, nil
		case '[':
			n := &node{kind: kindArray, line: line}
			for i := 0; d.dec.More(); i++ {
				d.path = append(d.path, pathStep{index: i})
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				d.path = d.path[:len(d.path)-1]
				n.elems = append(n.elems, v)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntaxErr(err)
			}
			return n, nil
		}
	}
	return nil, d.errAt(d.dec.InputOffset(), fmt.Sprintf("unexpected token %v", tok))
}

// join appends a member name to a field path.
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
