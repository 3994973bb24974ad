package spec

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Override replaces the number at a spec field before the spec is
// validated, so a parameter set on the command line is checked like a
// value written in the file.
type Override struct {
	Field string // a path of object members, e.g. "inputs.facts.generate.rows"
	Value int64
	// Text, when set, is the value as a decimal integer instead of Value:
	// one beyond int64 for a uint64 field (a seed, as_of, until).
	Text string
	By   string // what set it, for messages: "--param rows=1e6"; shown as given, so bound a long value first; "" shows nothing
}

// DecodeWith decodes a spec like Decode after applying overrides in
// order. An override naming a field that is absent or not a number is an
// error naming the override and the field.
func DecodeWith(file, dir string, data []byte, overrides []Override) (*Spec, error) {
	root, err := parseTree(file, data)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		n := root
		for _, k := range strings.Split(o.Field, ".") {
			if n.kind != kindObject {
				n = nil
				break
			}
			if n = n.get(k); n == nil {
				break
			}
		}
		if n == nil || n.kind != kindNumber {
			msg := "the spec has no number at this field"
			if o.By != "" {
				msg = o.By + ": " + msg
			}
			return nil, &Error{File: file, Field: o.Field, Msg: msg}
		}
		n.text = big.NewInt(o.Value).String()
		if o.Text != "" {
			n.text = o.Text
		}
	}
	d := &decoder{file: file, s: &Spec{File: file, Dir: dir, lines: map[string]int{}}}
	if err := d.spec(root); err != nil {
		return nil, err
	}
	if err := d.s.resolve(); err != nil {
		return nil, err
	}
	return d.s, nil
}

// ParseIntegerText is ParseInteger for a value of any integer field, int64
// or uint64: it returns the value as a plain decimal integer, in
// -9223372036854775808..18446744073709551615.
func ParseIntegerText(text string) (string, error) {
	v, err := exactInteger(text, func(msg string) error { return fmt.Errorf("%s", bound(msg)) })
	if err != nil {
		return "", err
	}
	if !v.IsInt64() && !v.IsUint64() {
		return "", errors.New(outsideIntegers(clip(text)))
	}
	return v.String(), nil
}

// ParseInteger parses a decimal integer, also in exponent form when it
// denotes an integer exactly ("1e6", "2.5e3"), as the command line and the
// spec accept them.
func ParseInteger(text string) (int64, error) {
	v, err := exactInteger(text, func(msg string) error { return fmt.Errorf("%s", bound(msg)) })
	if err != nil {
		return 0, err
	}
	if !v.IsInt64() {
		return 0, fmt.Errorf("%s is outside the int64 range", clip(text))
	}
	return v.Int64(), nil
}
