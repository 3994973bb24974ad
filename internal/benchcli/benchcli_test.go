package benchcli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestIntegerFlagsReadDecimal checks that integer flags read plain decimal
// and refuse Go's other literal syntax, which pflag alone reads (`010` as
// 8, `0x10` as 16, `1_0` as 10).
func TestIntegerFlagsReadDecimal(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		count int
		seed  uint64
		err   string
	}{
		{args: []string{"--count", "10", "--seed", "10"}, count: 10, seed: 10},
		{args: []string{"--count", "010"}, err: `invalid argument "010" for "--count" flag: must be a plain decimal integer`},
		{args: []string{"--seed", "00"}, err: `"--seed" flag: must be a plain decimal integer`},
		{args: []string{"--count", "-0"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "-3", "--seed", "18446744073709551615"}, count: -3, seed: 18446744073709551615},
		{args: []string{"--count=0"}, count: 0},
		{args: []string{"--count", "0x10"}, err: `invalid argument "0x10" for "--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "0b1"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "0o7"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "1_000"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "+1"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "-"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", " 1"}, err: `"--count" flag: must be a plain decimal integer`},
		{args: []string{"--count", "99999999999999999999"}, err: `"--count" flag: out of range`},
		{args: []string{"--seed", "-1"}, err: `invalid argument "-1" for "--seed" flag: must be a plain decimal integer`},
		{args: []string{"--seed", "0x1"}, err: `"--seed" flag: must be a plain decimal integer`},
		{args: []string{"--seed", "18446744073709551616"}, err: `"--seed" flag: out of range`},
		{args: []string{"--count", "1", "--count", "1"}, err: `"--count" flag: the flag is given more than once`},
	} {
		var count int
		var seed uint64
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }, SilenceUsage: true, SilenceErrors: true}
		c.Flags().IntVar(&count, "count", 1, "")
		c.Flags().Uint64Var(&seed, "seed", 0, "")
		Once(c)
		c.SetArgs(tc.args)
		err := c.Execute()
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err == "" && (count != tc.count || seed != tc.seed):
			t.Errorf("%q: count %d seed %d, want %d %d", tc.args, count, seed, tc.count, tc.seed)
		}
	}
}
