// Package benchcli holds what benchrun's and benchcmp's command lines share:
// single-valued flags that refuse being given twice or, for text, empty,
// integer flags that read plain decimal, and help and completion commands
// that refuse a word naming no command or shell.
package benchcli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

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

// StrictHelp gives root a help command and a completion command that
// refuse, as bad usage, what cobra's own accept with exit 0: a help topic
// that names no command (`help chek`) or words after one (`help run
// lookup`), for which cobra prints the top-level help, and a completion
// shell it does not know (`completion bsh`), for which it prints the
// completion help. usage turns such an error into the command's bad-usage
// error (exit 2). Call it once root's commands are added.
func StrictHelp(root *cobra.Command, usage func(error) error) {
	name := root.Name()
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of a command, or of " + name + " with no command.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usage(fmt.Errorf("unknown help topic %q: not a command (see %s help)", strings.Join(args, " "), name))
			}
			return cmd.Help()
		},
	})
	// cobra's completion command prints its help, with exit 0, for a
	// shell it does not know: runnable, it refuses an argument that names
	// no shell as bad usage (cobra's argument check, before RunE).
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
		}
	}
}

// StderrNamedInArgs reports whether errOut, standard error, is a regular
// file that an argument of args names: the argument itself, or what
// follows the = of a --flag=value or a LABEL=FILE. An error message
// written there would change a file of the command (benchrun validate
// --bogus s.json 2>> s.json, benchcmp --bogus old.txt new.txt 2>>
// old.txt), which a flag that does not parse leaves unchecked.
func StderrNamedInArgs(errOut io.Writer, args []string) bool {
	f, ok := errOut.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	for _, a := range args {
		p := a
		if _, v, ok := strings.Cut(a, "="); ok {
			p = v
		} else if strings.HasPrefix(a, "-") {
			continue
		}
		if p == "" {
			continue
		}
		if ps, err := os.Stat(p); err == nil && os.SameFile(ps, st) {
			return true
		}
	}
	return false
}
