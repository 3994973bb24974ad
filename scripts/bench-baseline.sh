#!/usr/bin/env bash
# bench-baseline.sh runs a short default-suite benchmark and compares it with
# the committed baseline (results/baseline.txt) using benchcmp. It is
# informational: a regression verdict is printed, never failed on, because
# the machines that run it are shared and noisy. It fails only when the
# comparison itself is broken: a run that fails, a missing or unreadable
# baseline, or benchcmp exiting 2 (bad input).
#
# Usage:
#
#   scripts/bench-baseline.sh [flags] [-- BENCHRUN_RUN_ARGS...]
#
# Steps:
#
#   1. builds cmd/benchrun and cmd/benchcmp (unless --bin names a directory
#      that holds both);
#   2. reads the machine's cpu and gomaxprocs with a tiny probe run and
#      compares them with the baseline's config lines; when either differs
#      it prints that it skipped the comparison, and why, and exits 0 (a
#      baseline from another machine says nothing about this one);
#   3. runs `benchrun run --index imported,direct --count N --seed S`
#      (the default suite) or `benchrun run BENCHRUN_RUN_ARGS... --count N
#      --seed S` when arguments follow -- (--count, --seed, --out and
#      --progress, which the script sets, are refused there: exit 2);
#   4. prints `benchcmp --fail-on regression --threshold T baseline=BASELINE
#      now=RUN`, and says how many rows it flagged.
#
# Flags:
#
#   --baseline FILE  the baseline (default results/baseline.txt)
#   --count N        samples per benchmark (default 6: fewer gives no
#                    confidence interval)
#   --seed S         seed passed to benchrun (default 1, the baseline's)
#   --threshold U=P  passed to benchcmp (repeatable; '*=5', the
#                    threshold of every unit without its own, unless
#                    a '*' one is given); its
#                    form, UNIT=PCT as benchcmp takes it, is checked
#                    before anything is built (exit 2), but a unit the
#                    results do not have, or one unit given two
#                    thresholds, can only be judged by benchcmp after
#                    the run
#   --out FILE       keep the short run's results in FILE (default a
#                    temporary file, removed at exit; - is no standard
#                    output: ./- names a file -); it, and the spec
#                    files and profiles BENCHRUN_RUN_ARGS name, are
#                    relative to where this script runs
#   --bin DIR        use DIR/benchrun and DIR/benchcmp, built from this tree,
#                    instead of building them
#   -h, --help       this text
#
# A flag but --threshold given twice is bad usage (exit 2), as benchrun
# and benchcmp take it.
#
# Exit status: 0 compared (whatever the verdicts) or skipped; 2 bad usage or
# a broken comparison; 130 or 143 stopped by SIGINT (Ctrl-C) or SIGTERM,
# to the script or its process group, with the command it was running.
set -uo pipefail
# The module is built alone: a go.work in a parent directory, or GOWORK
# naming another workspace, would make go refuse its packages.
export GOWORK=off

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() {
	echo "bench-baseline: $*" >&2
	exit 2
}

# The repository is the script's, also when it is run through a symbolic
# link.
self=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null) || self=${BASH_SOURCE[0]}
root=$(cd "$(dirname "$self")/.." && pwd) || die "cannot find the repository root"
baseline="$root/results/baseline.txt" count=6 seed=1 out="" bin=""
thresholds=()
declare -A given=() # the single-valued flags given, with their values
run_args=()
while (($# > 0)); do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--baseline=* | --count=* | --seed=* | --threshold=* | --out=* | --bin=*)
		# --flag=value, as benchrun and benchcmp take it.
		set -- "${1%%=*}" "${1#*=}" "${@:2}"
		continue
		;;
	--baseline | --count | --seed | --threshold | --out | --bin)
		(($# >= 2)) || die "$1 needs a value"
		[[ -n $2 ]] || die "$1 needs a value, not an empty one"
		# Given twice, the second value won without a word; benchrun
		# and benchcmp refuse it, and so does this script, but for
		# --threshold, one a unit.
		[[ $1 == --threshold || -z ${given[$1]+set} ]] ||
			die "$1 is given more than once (${given[$1]}, then $2); give it once"
		given[$1]=$2
		case $1 in
		--baseline) baseline=$2 ;;
		--count) count=$2 ;;
		--seed) seed=$2 ;;
		--threshold) thresholds+=("$2") ;;
		--out) out=$2 ;;
		--bin) bin=$2 ;;
		esac
		shift 2
		;;
	--)
		shift
		run_args=("$@")
		break
		;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
[[ $count =~ ^[1-9][0-9]*$ ]] || die "--count $count: want a positive integer"
[[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: want a non-negative integer"
# - names no standard output here, as for benchrun's --out: taken as a
# file, it wrote the results into a file named - after the whole run.
[[ $out != - ]] || die "--out -: - names no standard output here; give it a file, ./- for one named -"
# '*=5' holds for every unit without a threshold of its own, unless a
# '*' threshold is given: --threshold install-ns=10 alone left every other
# unit at benchcmp's default, 0, where any significant change is a
# regression, a gate stricter than the one without it.
star=0
for t in "${thresholds[@]}"; do [[ ${t%=*} != '*' ]] || star=1; done
((star)) || thresholds+=('*=5')
# Each --threshold's form is checked before the build and the run
# (threshold_form, scripts/lib.sh), where benchcmp judged it only after
# the whole run; a unit no result has, and two thresholds for one unit,
# benchcmp still judges after the run, with the results.
source "$root/scripts/lib.sh" # shown, threshold_form
for t in "${thresholds[@]}"; do
	why=$(threshold_form "$t") || die "--threshold $(shown "$t"): $why"
done
((${#run_args[@]} > 0)) || run_args=(--index imported,direct)
# benchrun runs in the repository root: paths the caller gives (--out, spec
# files, the profiles' files) are made absolute here, where they were meant.
abs() { if [[ $1 == /* ]]; then printf '%s' "$1"; else printf '%s' "$PWD/$1"; fi; }
[[ -z $out ]] || out=$(abs "$out")
for ((i = 0; i < ${#run_args[@]}; i++)); do
	a=${run_args[i]}
	case $a in
	--count | --count=* | --seed | --seed=* | --out | --out=* | --progress | --progress=*)
		# benchrun refuses a flag given twice, and this script gives
		# these: it failed after the build and the probe run.
		die "benchrun argument ${a%%=*} is set by this script; use its own flags (see --help)"
		;;
	--baseline | --baseline=* | --bin | --bin=* | --threshold | --threshold=*)
		# This script's own flag, given after --: benchrun refused it
		# as unknown, after the build, as a failed run.
		die "benchrun argument ${a%%=*} is a flag of this script, not of benchrun run; give it before -- (see --help)"
		;;
	--cpuprofile=?* | --flamegraph=?* | --memprofile=?*) run_args[i]=${a%%=*}=$(abs "${a#*=}") ;;
	--cpuprofile | --flamegraph | --memprofile)
		((i + 1 < ${#run_args[@]})) && run_args[i + 1]=$(abs "${run_args[i + 1]}")
		((i++))
		;;
	--index | --join | --param | --shard | --workers) ((i++)) ;;
	-*) ;;
	*.json | */*) run_args[i]=$(abs "$a") ;;
	esac
done
[[ -r $baseline ]] || die "baseline $baseline: cannot read it (regenerate it with the command in results/README.md)"
[[ ! -d $baseline ]] || die "baseline $baseline: is a directory, not a result file"
baseline=$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")
shown=$baseline # the baseline as messages name it
if [[ -n $bin ]]; then
	given=$bin
	bin=$(cd "$bin" 2>/dev/null && pwd) || die "--bin $given: no such directory"
fi

tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
# SIGINT (Ctrl-C) or SIGTERM, to the script or its process group, stops
# the script with the command it runs. Sent to the script alone (kill
# PID, a CI runner cancelling the job), SIGTERM killed bash at once,
# leaving that command (the benchmark run) going with no one waiting for
# it, and SIGINT was held until the command had ended, the script then
# going on to compare; Ctrl-C, which the benchmark run got too, was
# reported as a failed run (exit 2).
# Each command runs in a process group of its own (run_in_group,
# scripts/lib.sh), which the
# script waits for: a trapped signal ends that wait, and the trap passes
# the signal on to the command's group, waits for it, and exits 130
# (SIGINT) or 143 (SIGTERM); the EXIT trap removes $tmp.
child="" # the process group of the running command
interrupted() {
	trap - INT TERM
	if [[ -n $child ]]; then
		kill -"$1" -- -"$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	echo "bench-baseline: interrupted by SIG$1" >&2
	exit "$2"
}
trap 'interrupted INT 130' INT
trap 'interrupted TERM 143' TERM
if [[ ! -f $baseline ]]; then
	# A pipe (--baseline <(git show ...)) reads once, and the baseline is
	# read three times: keep a copy, named after it.
	mkdir "$tmp/baseline" && cp "$baseline" "$tmp/baseline/$(basename "$baseline")" ||
		die "baseline $baseline: cannot read it"
	baseline=$tmp/baseline/$(basename "$baseline")
fi
[[ -n $out ]] || out="$tmp/now.txt"

# config FILE KEY prints the value of the first "KEY: value" line of FILE.
config() { sed -n "s/^$2: //p" "$1" | head -n 1; }

declare -A want
for key in cpu gomaxprocs; do
	want[$key]=$(config "$baseline" "$key")
	[[ -n ${want[$key]} ]] || die "$shown: no '$key:' configuration line; is it a benchrun result file?"
done

cd "$root" || die "cannot enter $root"
if [[ -n $bin ]]; then
	[[ -x $bin/benchrun && -x $bin/benchcmp ]] || die "--bin $bin: want executables benchrun and benchcmp there"
	cp "$bin/benchrun" "$bin/benchcmp" "$tmp/" || die "cannot copy the binaries of $bin"
else
	run_in_group go build -o "$tmp/benchrun" ./cmd/benchrun || die "building benchrun failed"
	run_in_group go build -o "$tmp/benchcmp" ./cmd/benchcmp || die "building benchcmp failed"
fi

run_in_group "$tmp/benchrun" run lookup --param rows=100 --param keys=10 --progress off >"$tmp/probe.txt" 2>"$tmp/probe.err" ||
	die "the probe run failed: $(cat "$tmp/probe.err")"
for key in cpu gomaxprocs; do
	got=$(config "$tmp/probe.txt" "$key")
	if [[ $got != "${want[$key]}" ]]; then
		echo "bench-baseline: skipped: this machine's $key is '$got', the baseline's is '${want[$key]}' ($shown)"
		exit 0
	fi
done

echo "bench-baseline: benchrun run ${run_args[*]} --count $count --seed $seed"
run_in_group "$tmp/benchrun" run "${run_args[@]}" --count "$count" --seed "$seed" --progress off --out "$out" >/dev/null ||
	die "benchrun run failed"

th_args=()
for t in "${thresholds[@]}"; do th_args+=(--threshold "$t"); done
run_in_group "$tmp/benchcmp" --fail-on regression "${th_args[@]}" "baseline=$baseline" "now=$out"
rc=$?
case $rc in
0) echo "bench-baseline: no regression against $shown" ;;
1) echo "bench-baseline: rows marked regression, or benchmarks missing from this run, above (informational only: shared machines are noisy)" ;;
*) die "benchcmp failed (exit $rc): the comparison is broken" ;;
esac
exit 0
