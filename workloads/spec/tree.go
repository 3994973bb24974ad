package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
}

// get returns the member named key of an object node, or nil.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// treeDecoder reads one JSON document into a node tree. It refuses
// duplicate member names and trailing data.
type treeDecoder struct {
	dec   *json.Decoder
	lines lineIndex
	file  string
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int // offsets of the first byte of each line after the first

func newLineIndex(data []byte) lineIndex {
	var li lineIndex
	for i, c := range data {
		if c == '\n' {
			li = append(li, i+1)
		}
	}
	return li
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

// parseTree decodes data into a tree. Syntax errors name file and line.
func parseTree(file string, data []byte) (*node, error) {
	d := &treeDecoder{dec: json.NewDecoder(bytes.NewReader(data)), lines: newLineIndex(data), file: file}
	d.dec.UseNumber()
	root, err := d.value("")
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, d.errAt(d.dec.InputOffset(), "", "unexpected data after the top-level object")
	}
	return root, nil
}

func (d *treeDecoder) errAt(off int64, field, msg string) error {
	return &Error{File: d.file, Line: d.lines.line(off), Field: field, Msg: msg}
}

// syntaxErr converts a decoder error into an Error with a line.
func (d *treeDecoder) syntaxErr(err error, field string) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return d.errAt(se.Offset, field, "invalid JSON: "+se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errAt(d.dec.InputOffset(), field, "invalid JSON: unexpected end of file")
	}
	return d.errAt(d.dec.InputOffset(), field, "invalid JSON: "+err.Error())
}

// value reads the next value; field is its path, for messages.
func (d *treeDecoder) value(field string) (*node, error) {
	// The token starts after any whitespace at InputOffset; skip it so
	// the line is the value's own.
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntaxErr(err, field)
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
		return &node{kind: kindString, line: line, text: t}, nil
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kindObject, line: line}
			for d.dec.More() {
				ktok, err := d.dec.Token()
				if err != nil {
					return nil, d.syntaxErr(err, field)
				}
				key, _ := ktok.(string)
				child := join(field, key)
				if n.get(key) != nil {
					return nil, d.errAt(d.dec.InputOffset()-1, child, "duplicate field")
				}
				v, err := d.value(child)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntaxErr(err, field)
			}
			return n, nil
		case '[':
			n := &node{kind: kindArray, line: line}
			for i := 0; d.dec.More(); i++ {
				v, err := d.value(fmt.Sprintf("%s[%d]", field, i))
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntaxErr(err, field)
			}
			return n, nil
		}
	}
	return nil, d.errAt(d.dec.InputOffset(), field, fmt.Sprintf("unexpected token %v", tok))
}

// join appends a member name to a field path.
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
