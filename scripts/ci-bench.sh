#!/usr/bin/env bash
# ci-bench.sh compares the benchmarks of HEAD with those of BASE_REF and fails
# on a confirmed regression.
#
# Usage:
#
#   scripts/ci-bench.sh [flags] BASE_REF [-- BENCHRUN_RUN_ARGS...]
#
# BENCHRUN_RUN_ARGS are what `benchrun run` takes besides --count, --seed,
# --out and --progress (which this script sets) and --cpuprofile,
# --memprofile and --flamegraph (refused): workloads or spec files
# (both sides read the same file) and flags such as --param,
# --index, --join and --workers. Without them both sides run the default
# suite, `benchrun run --index imported,direct`.
#
# Steps:
#
#   1. builds cmd/benchcmp and cmd/benchrun from the working tree (HEAD),
#      and cmd/benchrun at BASE_REF, checked out in a temporary git worktree
#      that is removed at exit; a BASE_REF without cmd/benchrun, or whose
#      benchrun has no `run` command, stops with exit 2 and says so;
#   2. runs them interleaved, A B A B ... (--rounds rounds of
#      `benchrun run --count N --seed S`), with a fixed seed, count and
#      GOMAXPROCS, so that drift of a shared machine hits both sides alike;
#   3. compares with `benchcmp --fail-on regression` (every round of a side is
#      one column: base=FILE head=FILE ...);
#   4. when rows are flagged, re-runs the workloads of those rows once more,
#      A then B (the same flags; every workload when the arguments name spec
#      files), and compares that round on its own: only a row flagged in both
#      comparisons is a confirmed regression;
#   5. writes the markdown summary to OUT/summary.md (the settings, the
#      verdict, the comparison, and the confirmation when there was one),
#      and appends it to $GITHUB_STEP_SUMMARY when that is set;
#   6. fails (exit 1) on a confirmed regression, on a benchmark of BASE_REF
#      with no result at HEAD (a workload dropped or renamed: "lost", named
#      in the output and the summary; --allow-lost lets it pass as "not
#      compared"), and on a result file where go test says a run failed.
#
# HEAD is the working tree: the commit is written "-dirty" when a tracked
# file is changed or an untracked one (not ignored) is there, since a new
# .go file changes what builds.
#
# Flags:
#
#   --count N        samples per benchmark and round (default 5; at least
#                    4, what benchcmp's gate needs a side to show a
#                    change, which the confirming round's N must give)
#   --rounds R       interleaved rounds per side (default 2)
#   --seed S         seed passed to benchrun (default 1)
#   --gomaxprocs P   GOMAXPROCS of the runs (default 2)
#   --threshold U=P  passed to benchcmp (repeatable; '*=5', the
#                    threshold of every unit without its own, unless
#                    a '*' one is given); one
#                    of a form benchcmp refuses is bad usage before
#                    anything is built; one whose unit no result has
#                    stops the script after round 1
#   --out DIR        where result files and the summary go: a new or empty
#                    directory, relative to where this script runs
#                    (default a new temporary directory, printed; - is
#                    no standard output: ./- names a directory -)
#   --allow-lost     a benchmark of BASE_REF with no result at HEAD does
#                    not fail the script (a workload removed on purpose)
#   -h, --help       this text
#
# A flag but --threshold given twice is bad usage (exit 2), as benchrun
# and benchcmp take it.
#
# Exit status: 0 no confirmed regression and nothing lost; 1 a confirmed
# regression, a lost benchmark (unless --allow-lost) or a run go test says
# failed; 2 bad usage, a tree that is no git clone (a source archive), an
# unknown BASE_REF, a BASE_REF without
# cmd/benchrun, or a failed build, run or comparison; 130 and 143 SIGINT
# (Ctrl-C) and SIGTERM, which stop the benchrun running and remove the
# worktree.
set -uo pipefail
# The module is built alone: a go.work in a parent directory, or GOWORK
# naming another workspace, would make go refuse its packages.
export GOWORK=off

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() {
	echo "ci-bench: $*" >&2
	exit 2
}

count=5 rounds=2 seed=1 procs=2 out="" base="" allow_lost=0
thresholds=()
declare -A given=() # the single-valued flags given, with their values
benchrun_args=()
while (($# > 0)); do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--allow-lost)
		((!allow_lost)) || die "--allow-lost is given more than once; give it once"
		allow_lost=1
		shift
		;;
	--count=* | --rounds=* | --seed=* | --gomaxprocs=* | --threshold=* | --out=*)
		# --flag=value, as benchrun and benchcmp take it.
		set -- "${1%%=*}" "${1#*=}" "${@:2}"
		continue
		;;
	--count | --rounds | --seed | --gomaxprocs | --threshold | --out)
		(($# >= 2)) || die "$1 needs a value"
		[[ -n $2 ]] || die "$1 needs a value, not an empty one"
		# Given twice, the second value won without a word; benchrun
		# and benchcmp refuse it, and so does this script, but for
		# --threshold, one a unit.
		[[ $1 == --threshold || -z ${given[$1]+set} ]] ||
			die "$1 is given more than once (${given[$1]}, then $2); give it once"
		given[$1]=$2
		case $1 in
		--count) count=$2 ;;
		--rounds) rounds=$2 ;;
		--seed) seed=$2 ;;
		--gomaxprocs) procs=$2 ;;
		--threshold) thresholds+=("$2") ;;
		--out) out=$2 ;;
		esac
		shift 2
		;;
	--)
		shift
		benchrun_args=("$@")
		break
		;;
	-*) die "unknown flag $1 (see --help)" ;;
	*)
		[[ -z $base ]] || die "one BASE_REF only, got $base and $1"
		base=$1
		shift
		;;
	esac
done
# The flags' values are checked before BASE_REF is looked for: a flag
# without its value takes BASE_REF as one (--count HEAD~1), which was
# reported as a missing BASE_REF rather than as --count's bad value.
for v in count rounds procs; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v/procs/gomaxprocs} ${!v}: want a positive integer"
done
[[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: want a non-negative integer"
# Each --threshold's form too (threshold_form, scripts/lib.sh, beside
# this script): benchcmp judged it only after the first round. A unit no
# result has is still judged then, with the results.
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null || echo "${BASH_SOURCE[0]}")")/lib.sh" # shown, threshold_form
for t in "${thresholds[@]}"; do
	why=$(threshold_form "$t") || die "--threshold $(shown "$t"): $why"
done
[[ -n $base ]] || die "missing BASE_REF (see --help)"
# benchcmp's gate shows a change only with 4 samples a side or more (at
# its alpha, 0.05), and the confirming round has --count of them: with
# fewer, no regression could be flagged, or none confirmed, and the run
# said "No regression" of a gate that could not fail.
((count >= 4)) || die "--count $count: the gate needs at least 4 samples a side to show a change, and the confirming round has --count of them; give --count 4 or more"
# '*=5' holds for every unit without a threshold of its own, unless a
# '*' threshold is given: --threshold install-ns=10 alone left every other
# unit at benchcmp's default, 0, where any significant change is a
# regression, a gate stricter than the one without it.
star=0
for t in "${thresholds[@]}"; do [[ ${t%=*} != '*' ]] || star=1; done
((star)) || thresholds+=('*=5')
# - names no standard output here, as for benchrun's --out: taken as a
# directory, every round was written into ./-.
[[ $out != - ]] || die "--out -: - names no standard output here; give it a directory, ./- for one named -"
# Paths the caller gives are relative to where it runs, not to the
# repository root this script moves to.
[[ -z $out || $out == /* ]] || out="$PWD/$out"
if [[ -n ${GITHUB_STEP_SUMMARY:-} && $GITHUB_STEP_SUMMARY != /* ]]; then
	GITHUB_STEP_SUMMARY="$PWD/$GITHUB_STEP_SUMMARY"
fi
# --out must be new or empty: an earlier run's files (a base-3.txt of more
# rounds, a confirming round's) would mix with this one's, and a directory
# of other files would get these written among them.
if [[ -n $out ]]; then
	[[ ! -e $out || -d $out ]] || die "--out $out: exists and is not a directory"
	[[ ! -d $out || -z $(ls -A "$out" 2>/dev/null) ]] ||
		die "--out $out: directory is not empty; give a new or empty one"
fi

# Split the benchrun arguments into flags (kept for the confirming round)
# and workloads (narrowed to the flagged ones there).
flags=() workloads_given=() spec_given=0
for ((i = 0; i < ${#benchrun_args[@]}; i++)); do
	a=${benchrun_args[i]}
	case $a in
	--count | --count=* | --seed | --seed=* | --out | --out=* | --progress | --progress=*)
		die "benchrun argument ${a%%=*} is set by this script; use its own flags (see --help)"
		;;
	--rounds | --rounds=* | --gomaxprocs | --gomaxprocs=* | --threshold | --threshold=* | --allow-lost | --allow-lost=*)
		# This script's own flag, given after --: benchrun refused it
		# as unknown, after both builds, as a failed round.
		die "benchrun argument ${a%%=*} is a flag of this script, not of benchrun run; give it before -- (see --help)"
		;;
	--cpuprofile | --cpuprofile=* | --flamegraph | --flamegraph=* | --memprofile | --memprofile=*)
		die "benchrun argument ${a%%=*}: every round of both sides would write its one file, the base's in a worktree removed at exit, and profiling skews the timings; profile with benchrun run itself"
		;;
	--*=*) flags+=("$a") ;;
	--index | --join | --param | --shard | --workers)
		((i + 1 < ${#benchrun_args[@]})) || die "benchrun argument $a needs a value"
		flags+=("$a" "${benchrun_args[i + 1]}")
		((i++))
		;;
	-*) flags+=("$a") ;;
	*)
		if [[ $a == *.json || $a == */* ]]; then
			# A spec file: both sides read this one file.
			spec_given=1
			[[ $a == /* ]] || a="$PWD/$a"
		fi
		workloads_given+=("$a")
		;;
	esac
done
((${#benchrun_args[@]} > 0)) || flags=(--index imported,direct)

# The repository is the script's, also when it is run through a symbolic
# link (~/bin/ci-bench).
self=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null) || self=${BASH_SOURCE[0]}
cd "$(dirname "$self")/.." || die "cannot find the repository"
# The base is built from the repository's history: a source archive (no
# .git), or one unpacked inside another repository's work tree, has none
# of its own.
here=$(pwd -P)
nohistory="$here is not the top of a git work tree (a source archive?): ci-bench builds BASE_REF from this repository's git history, so run it in a git clone"
root=$(git rev-parse --show-toplevel 2>/dev/null) || die "$nohistory"
[[ $(cd "$root" 2>/dev/null && pwd -P) == "$here" ]] || die "$nohistory; it lies inside the git work tree of $root"
cd "$root" || die "cannot enter $root"
base_commit=$(git rev-parse --verify --quiet "$base^{commit}") || die "BASE_REF $base: no such commit"
[[ -d cmd/benchrun ]] || die "needs cmd/benchrun at HEAD, and this tree has none"
git cat-file -e "$base_commit:cmd/benchrun" 2>/dev/null ||
	die "BASE_REF $base ($(git log -1 --format='%h %cs' "$base_commit")) predates cmd/benchrun: there is nothing to run at that commit; pick a later base"
head_commit=$(git rev-parse HEAD)
# Untracked files count (a new .go file is built into HEAD's benchrun);
# ignored ones do not.
[[ -z $(git status --porcelain --untracked-files=normal) ]] || head_commit+="-dirty"

if [[ -z $out ]]; then
	out=$(mktemp -d) || die "mktemp failed"
fi
mkdir -p "$out" 2>/dev/null || die "--out $out: cannot create the directory"
[[ -w $out && -x $out ]] || die "--out $out: cannot write there"
out=$(cd "$out" && pwd) || die "--out $out: cannot enter the directory"
short_head=${head_commit:0:12}${head_commit:40}
echo "ci-bench: base $base (${base_commit:0:12}) against HEAD ($short_head); results in $out"
wt=$(mktemp -d) || die "mktemp failed"
cleanup() {
	git worktree remove --force "$wt/base" >/dev/null 2>&1
	rm -rf "$wt"
	git worktree prune >/dev/null 2>&1
}
trap cleanup EXIT
# SIGINT or SIGTERM stops the script with the benchrun it runs. Ctrl-C
# reached benchrun, whose exit was then reported as a failed round (exit
# 2); a signal sent to the script alone (kill, a CI runner cancelling the
# job) was held by bash until that benchrun had ended, and SIGINT then
# lost: the rounds went on. benchrun runs in the background and the
# script waits for it, which a trapped signal interrupts; the trap passes
# SIGTERM on to it (benchrun ends at once, exit 130) and the EXIT trap
# removes the worktree.
child=""
interrupted() {
	trap - INT TERM
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	echo "ci-bench: interrupted by $1; results so far in $out" >&2
	exit "$2"
}
trap 'interrupted SIGINT 130' INT
trap 'interrupted SIGTERM 143' TERM

git worktree add --detach "$wt/base" "$base_commit" >/dev/null 2>&1 || die "git worktree add $base failed"
# Each benchrun is built stamped with its commit (-buildvcs=true, over a
# GOFLAGS=-buildvcs=false), and HEAD's first, while --out is still empty.
# An --out inside the checkout (ci-out, uploaded as a CI artifact) is
# untracked: a binary without a stamp asks git at every run, and one
# built after benchcmp was written there was stamped so, and HEAD's
# result files said -dirty where this script and the summary did not.
# Where go cannot stamp (no usable git for it), it builds without.
build() { go build -buildvcs=true "$@" 2>/dev/null || go build "$@"; }
build -o "$out/benchrun-head" ./cmd/benchrun || die "building benchrun at HEAD failed"
build -o "$out/benchcmp" ./cmd/benchcmp || die "building benchcmp at HEAD failed"
(cd "$wt/base" && build -o "$out/benchrun-base" ./cmd/benchrun) || die "building benchrun at $base failed"
"$out/benchrun-base" run --help >/dev/null 2>&1 ||
	die "benchrun at BASE_REF $base has no run command: it predates benchrun run; pick a later base"

# side NAME ROUND ARGS... runs one side once; its stderr goes to a log. It
# runs in that side's tree, where benchrun asks git for the commit it writes
# as a configuration line (benchcmp ignores it when matching rows).
side() {
	local name=$1 round=$2 dir=$root
	shift 2
	[[ $name == base ]] && dir=$wt/base
	local rc=0
	(cd "$dir" && GOMAXPROCS=$procs exec "$out/benchrun-$name" run --count "$count" --seed "$seed" --progress off \
		--out "$out/$name-$round.txt" "$@" >/dev/null 2>"$out/$name-$round.log") &
	child=$!
	wait "$child" || rc=$?
	child=""
	((rc == 0)) || {
		tail -n 20 "$out/$name-$round.log" >&2
		die "benchrun-$name round $round failed (log: $out/$name-$round.log)"
	}
}

th_args=()
for t in "${thresholds[@]}"; do th_args+=(--threshold "$t"); done

files=()
for ((r = 1; r <= rounds; r++)); do
	echo "ci-bench: round $r of $rounds"
	side base "$r" "${workloads_given[@]}" "${flags[@]}"
	side head "$r" "${workloads_given[@]}" "${flags[@]}"
	files+=("base=$out/base-$r.txt" "head=$out/head-$r.txt")
	if ((r == 1)); then
		# benchcmp judges the thresholds (their form, their units) only
		# with result files: ask it after the first round, not after
		# the last, so that a typo costs one round.
		"$out/benchcmp" "${th_args[@]}" --format csv "${files[@]}" >/dev/null 2>"$out/thresholds.err" || {
			rc=$?
			cat "$out/thresholds.err" >&2
			# Exit 1 without --fail-on: a run that left no result.
			((rc == 1)) && die "round 1: a run failed (above); nothing to compare"
			die "--threshold ${thresholds[*]}: benchcmp refuses it (above)"
		}
		rm -f "$out/thresholds.err"
	fi
done

# compare FORMAT OUTFILE FILES... runs the gate; it dies unless benchcmp
# exits 0 or 1 with its report written (a run that left no result at all
# exits 1 with none), and leaves that status in $rc.
compare() {
	local format=$1 dst=$2
	shift 2
	"$out/benchcmp" --fail-on regression "${th_args[@]}" --format "$format" "$@" >"$dst" 2>"$dst.err"
	rc=$?
	((rc <= 1)) && [[ -s $dst ]] || {
		cat "$dst.err" >&2
		die "benchcmp failed (exit $rc)"
	}
}

# flagged CSV prints "unit<TAB>config<TAB>name" of each regression row. It
# reads the CSV as CSV: a field holding a comma or a quote (a benchmark
# name may) is quoted, with its quotes doubled.
flagged() {
	awk '
	function split_csv(line, f,    n, i, c, q, v) {
		n = 1; q = 0; v = ""
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) {
				if (c == "\"" && substr(line, i + 1, 1) == "\"") { v = v c; i++ }
				else if (c == "\"") q = 0
				else v = v c
			} else if (c == "\"") q = 1
			else if (c == ",") { f[n++] = v; v = "" }
			else v = v c
		}
		f[n] = v
		return n
	}
	{ sub(/\r$/, ""); split_csv($0, f) }
	NR == 1 { for (i in f) col[f[i]] = i; next }
	f[col["verdict"]] == "regression" { print f[col["unit"]] "\t" f[col["config"]] "\t" f[col["name"]] }' "$1" | sort -u
}

# code TEXT prints TEXT as a markdown code span: fenced by one backquote
# more than its longest run of them, and padded when it starts or ends
# with one, so that a name holding backquotes stays one span.
code() {
	local t=$1 fence='`' pad=''
	while [[ $t == *"$fence"* ]]; do fence+='`'; done
	[[ $t == '`'* || $t == *'`' ]] && pad=' '
	printf '%s%s%s%s%s' "$fence" "$pad" "$t" "$pad" "$fence"
}

compare csv "$out/first.csv" "${files[@]}"
# benchcmp's warnings (rows it could not gate, benchmarks only one side
# has) are the reader's too, not only first.csv.err's.
sed -n 's/^benchcmp: warning: /ci-bench: benchcmp: warning: /p' "$out/first.csv.err" >&2
# benchcmp's gate also fails when a benchmark of the base has no result at
# HEAD (a workload dropped or renamed) or a run failed: no row flags that,
# so it is read from its message, whose reasons are joined by "; " in this
# order: significant changes, lost benchmarks, the failed run.
reasons=$(sed -n 's/^benchcmp: regression: //p' "$out/first.csv.err")
re='^[0-9]+ significant change\(s\) past their threshold in the bad direction(; )?(.*)$'
[[ $reasons =~ $re ]] && reasons=${BASH_REMATCH[2]}
lost=$reasons failed_run=""
if [[ $reasons == *'go test says a run failed ('* ]]; then
	failed_run="go test says a run failed (${reasons##*go test says a run failed (}"
	lost=${reasons%go test says a run failed (*}
	lost=${lost%; }
fi
not_compared="" fails=()
if [[ -n $lost ]] && ((allow_lost)); then
	not_compared=$lost
	echo "ci-bench: not compared (--allow-lost): $lost"
elif [[ -n $lost ]]; then
	fails+=("lost: $lost")
	echo "ci-bench: lost: $lost (--allow-lost lets this pass)"
fi
if [[ -n $failed_run ]]; then
	fails+=("$failed_run")
	echo "ci-bench: $failed_run"
fi
compare markdown "$out/first.md" "${files[@]}"
flagged "$out/first.csv" >"$out/first.flagged"
confirmed=0
if [[ -s $out/first.flagged ]]; then
	# Re-run the workloads of the flagged rows once, A then B.
	mapfile -t again < <(cut -f3 "$out/first.flagged" | sed -n 's|.*/workload=\([^/]*\).*|\1|p' | sort -u)
	if ((spec_given)); then
		again=("${workloads_given[@]}")
	fi
	echo "ci-bench: $(wc -l <"$out/first.flagged") row(s) flagged (workloads: ${again[*]:-all}); confirming with one more round"
	side base confirm "${again[@]}" "${flags[@]}"
	side head confirm "${again[@]}" "${flags[@]}"
	# benchcmp refuses a threshold for a unit neither file has (a typo):
	# the confirming round re-runs some workloads only, so it keeps the
	# thresholds of the units its results have, as written (install-ns)
	# or as benchcmp tidies them (install-sec), which benchcmp itself
	# tells, and '*'.
	all_th=("${th_args[@]}")
	th_args=()
	for t in "${thresholds[@]}"; do
		err=""
		[[ ${t%=*} == '*' ]] ||
			err=$("$out/benchcmp" --threshold "$t" --format csv "base=$out/base-confirm.txt" "head=$out/head-confirm.txt" 2>&1 >/dev/null)
		[[ $err == *'no result file has unit'* ]] || th_args+=(--threshold "$t")
	done
	compare csv "$out/confirm.csv" "base=$out/base-confirm.txt" "head=$out/head-confirm.txt"
	compare markdown "$out/confirm.md" "base=$out/base-confirm.txt" "head=$out/head-confirm.txt"
	flagged "$out/confirm.csv" >"$out/confirm.flagged"
	th_args=("${all_th[@]}")
	comm -12 "$out/first.flagged" "$out/confirm.flagged" >"$out/confirmed.flagged"
	confirmed=$(wc -l <"$out/confirmed.flagged")
fi

{
	echo "# ci-bench: ${base_commit:0:12} ($base) → $short_head (HEAD)"
	echo
	run_line=(benchrun run "${workloads_given[@]}" "${flags[@]}")
	echo "${run_line[*]} --count $count --seed $seed, GOMAXPROCS=$procs, $rounds interleaved round(s) per side, thresholds ${thresholds[*]}."
	echo
	if ((${#fails[@]} > 0)); then
		printf '**Failed:** '
		for ((i = 0; i < ${#fails[@]}; i++)); do
			((i == 0)) || printf '; '
			printf '%s' "${fails[i]}"
		done
		echo "."
		echo
	fi
	if [[ ! -s $out/first.flagged && -n $not_compared ]]; then
		echo "**No regression** in what was compared; not compared: ${not_compared//$'\n'/; }."
	elif [[ ! -s $out/first.flagged && ${#fails[@]} -gt 0 ]]; then
		echo "**No regression** in what was compared."
	elif [[ ! -s $out/first.flagged ]]; then
		echo "**No regression.**"
	elif ((confirmed == 0)); then
		echo "**No confirmed regression:** $(wc -l <"$out/first.flagged") row(s) flagged, none flagged again by the confirming round."
	else
		echo "**Confirmed regression** in $confirmed row(s), flagged by both comparisons:"
		echo
		while IFS=$'\t' read -r unit _ name; do
			echo "- $(code "$name") ($unit)"
		done <"$out/confirmed.flagged"
	fi
	if [[ -s $out/first.flagged && -n $not_compared ]]; then
		echo
		echo "Not compared: ${not_compared//$'\n'/; }."
	fi
	echo
	sed 's/^## /## Comparison: /' "$out/first.md"
	if [[ -s $out/first.flagged ]]; then
		echo
		sed 's/^## /## Confirming round: /' "$out/confirm.md"
	fi
} >"$out/summary.md"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
	cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
if ((confirmed > 0)); then
	echo "ci-bench: confirmed regression in $confirmed row(s); see $out/summary.md"
	exit 1
fi
if ((${#fails[@]} > 0)); then
	echo "ci-bench: failed: no confirmed regression, but a benchmark lost or a run failed (above); see $out/summary.md"
	exit 1
fi
echo "ci-bench: no confirmed regression; see $out/summary.md"
exit 0
