// Package benchcli holds what benchrun's and benchcmp's command lines share:
// single-valued flags that refuse being given twice or, for text, empty, and
// integer flags that read plain decimal.
package benchcli

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Once makes every single-valued flag of the commands refuse being given
// twice, which would otherwise silently keep the last value (`--fail-on
// regression ... --fail-on=` was a gate that cannot fail), and, for a text
// flag, an empty value, which would otherwise silently mean the default.
// An integer flag reads plain decimal digits (an optional leading - where
// it is signed, no leading zero), as the spec file and --shard do: pflag
// alone reads Go literal syntax, in which `--count 010` is 8 and `--seed
// 0x10` is 16.
// Repeatable flags (string arrays and slices) stay repeatable. Call it once
// the commands' flags are defined.
func Once(cmds ...*cobra.Command) {
	for _, c := range cmds {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "stringArray", "stringSlice":
			default:
				f.Value = &onceValue{Value: f.Value}
			}
		})
	}
}

type onceValue struct {
	pflag.Value
	set bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errors.New("the flag is given more than once")
	}
	if s == "" && v.Type() == "string" {
		return errors.New("the value must not be empty")
	}
	switch v.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if err := decimal(s, v.Type()[0] == 'i'); err != nil {
			return err
		}
	}
	v.set = true
	return v.Value.Set(s)
}

// decimal reports whether s is a plain decimal integer: digits, no leading
// zero (which pflag's base-0 parsing would read as octal), a leading -
// only if signed and not on 0; any other syntax (0x, 0b, 0o, _, +,
// spaces) is refused.
func decimal(s string, signed bool) error {
	digits := s
	if signed && len(digits) > 1 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return errors.New("must be a plain decimal integer")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return errors.New("must be a plain decimal integer")
		}
	}
	var err error
	if signed {
		_, err = strconv.ParseInt(s, 10, 64)
	} else {
		_, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return errors.New("out of range")
	}
	return nil
}
