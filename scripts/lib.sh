# Shell functions scripts/test.sh and scripts/mutants.sh share, read with
# `source scripts/lib.sh` once they are in the repository root. Not run on
# its own.

# go_duration reports whether $1 is a duration Go's flag parsing takes
# (time.ParseDuration, unsigned): numbers with an optional fraction (5m,
# 1.5h, .5m), each with its unit, summing to at most 2^63-1 ns (about
# 2,562,047h; a larger one passed the form and every go test refused it).
go_duration() {
	[[ $1 == 0 ]] && return 0
	[[ $1 =~ ^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$ ]] || return 1
	local s=${1//µs/u} ns
	s=${s//μs/u}
	s=${s//us/u}
	ns=$(awk -v d="$s" 'BEGIN {
		split("ns 1 u 1e3 ms 1e6 s 1e9 m 6e10 h 3.6e12", a, " ")
		for (i = 1; i < 12; i += 2) unit[a[i]] = a[i + 1]
		t = 0
		while (match(d, /^[0-9.]+(ns|u|ms|s|m|h)/)) {
			part = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
			match(part, /[a-z]+$/)
			t += substr(part, 1, RSTART - 1) * unit[substr(part, RSTART)]
		}
		print (t <= 9223372036854775807 ? "ok" : "over")
	}')
	[[ $ns == ok ]]
}
