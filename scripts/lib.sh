# Shell functions the scripts share: scripts/test.sh and scripts/mutants.sh
# read it with `source scripts/lib.sh` once they are in the repository
# root, scripts/bench-baseline.sh and scripts/ci-bench.sh beside
# themselves. Not run on its own.

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

# shown VALUE prints VALUE quoted for a message: in '', or escaped as
# bash's %q does when it holds a control character.
shown() {
	if [[ $1 == *[[:cntrl:]]* ]]; then printf '%q' "$1"; else printf "'%s'" "$1"; fi
}

# threshold_form VALUE prints why VALUE is not a --threshold benchcmp
# takes, with benchcmp's own reason, and fails; it succeeds, printing
# nothing, for one it takes. The form is benchcmp's (internal/benchcmp's
# parseThresholds), checked before a build and a run, where benchcmp
# judged it only after them: UNIT=PCT, cut at the last =, UNIT not empty
# (* for every unit without its own), no white space anywhere (Go's
# unicode.IsSpace: these and the Unicode spaces below), PCT a finite
# decimal number >= 0 with an optional % after it. A unit no result has,
# and two thresholds for one unit, benchcmp still judges with the results.
threshold_spaces=(' ' $'\t' $'\n' $'\v' $'\f' $'\r' $'\xc2\x85' $'\xc2\xa0' $'\xe1\x9a\x80'
	$'\xe2\x80\x80' $'\xe2\x80\x81' $'\xe2\x80\x82' $'\xe2\x80\x83' $'\xe2\x80\x84' $'\xe2\x80\x85'
	$'\xe2\x80\x86' $'\xe2\x80\x87' $'\xe2\x80\x88' $'\xe2\x80\x89' $'\xe2\x80\x8a' $'\xe2\x80\xa8'
	$'\xe2\x80\xa9' $'\xe2\x80\xaf' $'\xe2\x81\x9f' $'\xe3\x80\x80')
threshold_form() {
	local t=$1 c p
	if [[ $t != *=* || -z ${t%=*} ]]; then
		echo "want UNIT=PCT, as in ns/op=5"
		return 1
	fi
	for c in "${threshold_spaces[@]}"; do
		if [[ $t == *"$c"* ]]; then
			echo "white space in UNIT=PCT; write it without, as in ns/op=5"
			return 1
		fi
	done
	p=${t##*=}
	p=${p%\%}
	# A decimal number (no Go literal forms such as 1_0 or 0x1p4, no
	# inf), not below 0 (-0 is 0), and within float64's range.
	[[ $p =~ ^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] &&
		[[ $p != -* || ${p%%[eE]*} =~ ^-[0.]*$ ]] &&
		LC_ALL=C awk 'BEGIN { exit sprintf("%g", ARGV[1] + 0) ~ /inf|nan/ }' "$p" && return 0
	echo "PCT must be a finite number >= 0 in decimal"
	return 1
}

# run_in_group [-o LOG] COMMAND... runs COMMAND in a process group of its
# own (job control on while it starts), its output to LOG if given, and
# waits for it: a wait a trapped signal interrupts, where bash runs a trap
# only once a foreground command has ended, so that the caller's trap can
# pass the signal on to the group ($child, set while it runs) and wait for
# it. The group is the command's subshell and everything it starts. The
# subshell ends on SIGINT or SIGTERM once its command has (a function of
# several commands goes no further), and tests the command's status, so
# that errexit stays off inside a function, as in the foreground. LOG is
# opened in the subshell: redirected around the call, the trap's own
# message went into LOG too. scripts/test.sh, scripts/bench-baseline.sh
# and scripts/figures.sh run their steps so.
child=""
run_in_group() {
	local log=""
	if [[ $1 == -o ]]; then
		log=$2
		shift 2
	fi
	set -m
	(
		trap 'exit 130' INT
		trap 'exit 143' TERM
		if [[ -n $log ]]; then exec >"$log" 2>&1; fi
		"$@" || exit $?
	) &
	child=$!
	set +m
	local rc=0
	wait "$child" || rc=$?
	child=""
	return "$rc"
}
