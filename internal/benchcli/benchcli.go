// Package benchcli holds what benchrun's and benchcmp's command lines share:
// single-valued flags that refuse being given twice or, for text, empty.
package benchcli

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Once makes every single-valued flag of the commands refuse being given
// twice, which would otherwise silently keep the last value (`--fail-on
// regression ... --fail-on=` was a gate that cannot fail), and, for a text
// flag, an empty value, which would otherwise silently mean the default.
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
	v.set = true
	return v.Value.Set(s)
}
