#!/usr/bin/env bash
# ci-bench.sh compares the benchmarks of HEAD with those of BASE_REF and fails
# on a confirmed regression. It needs cmd/benchrun at both commits; until
# cmd/benchrun exists it stops with exit 2 and says so.
#
# Usage:
#
#   scripts/ci-bench.sh [flags] BASE_REF [-- BENCHRUN_RUN_ARGS...]
#
# Steps:
#
#   1. builds cmd/benchcmp at HEAD, and cmd/benchrun at HEAD and at BASE_REF
#      (checked out in a temporary git worktree, removed at exit);
#   2. runs them interleaved, A B A B ... (--rounds rounds of
#      `benchrun run --count N --seed S`), with a fixed seed, count and
#      GOMAXPROCS, so that drift of a shared machine hits both sides alike;
#   3. compares with `benchcmp --fail-on regression` (every round of a side is
#      one column: base=FILE head=FILE ...);
#   4. when rows are flagged, re-runs the workloads of those rows once more,
#      A then B, and compares again: only a regression that is still there
#      fails;
#   5. writes the markdown summary to OUT/summary.md, and appends it to
#      $GITHUB_STEP_SUMMARY when that is set.
#
# Flags:
#
#   --count N        samples per benchmark and round (default 5)
#   --rounds R       interleaved rounds per side (default 2)
#   --seed S         seed passed to benchrun (default 1)
#   --gomaxprocs P   GOMAXPROCS of the runs (default 2)
#   --threshold U=P  passed to benchcmp (repeatable; default '*=5')
#   --out DIR        where result files and the summary go (default a new
#                    temporary directory, printed)
#   -h, --help       this text
#
# Exit status: 0 no confirmed regression; 1 a confirmed regression; 2 bad
# usage, an unknown BASE_REF, no cmd/benchrun, or a failed build or run.
set -uo pipefail

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() {
	echo "ci-bench: $*" >&2
	exit 2
}

count=5 rounds=2 seed=1 procs=2 out="" base=""
thresholds=()
benchrun_args=()
while (($# > 0)); do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--count | --rounds | --seed | --gomaxprocs | --threshold | --out)
		(($# >= 2)) || die "$1 needs a value"
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
[[ -n $base ]] || die "missing BASE_REF (see --help)"
for v in count rounds procs; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v/procs/gomaxprocs} ${!v}: want a positive integer"
done
[[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: want a non-negative integer"
((${#thresholds[@]} > 0)) || thresholds=('*=5')

root=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside a git work tree"
cd "$root" || die "cannot enter $root"
base_commit=$(git rev-parse --verify --quiet "$base^{commit}") || die "BASE_REF $base: no such commit"
[[ -d cmd/benchrun ]] || die "needs cmd/benchrun at HEAD, and this tree has none yet"
git cat-file -e "$base_commit:cmd/benchrun" 2>/dev/null || die "needs cmd/benchrun at BASE_REF $base, and that commit has none"

if [[ -z $out ]]; then
	out=$(mktemp -d) || die "mktemp failed"
fi
mkdir -p "$out" || die "cannot create $out"
echo "ci-bench: results in $out"
wt=$(mktemp -d) || die "mktemp failed"
cleanup() { git worktree remove --force "$wt/base" >/dev/null 2>&1; rm -rf "$wt"; }
trap cleanup EXIT

git worktree add --detach "$wt/base" "$base_commit" >/dev/null 2>&1 || die "git worktree add $base failed"
go build -o "$out/benchcmp" ./cmd/benchcmp || die "building benchcmp at HEAD failed"
go build -o "$out/benchrun-head" ./cmd/benchrun || die "building benchrun at HEAD failed"
(cd "$wt/base" && go build -o "$out/benchrun-base" ./cmd/benchrun) || die "building benchrun at $base failed"

# side NAME ROUND ARGS... runs one side once.
side() {
	local name=$1 round=$2
	shift 2
	GOMAXPROCS=$procs "$out/benchrun-$name" run --count "$count" --seed "$seed" \
		--out "$out/$name-$round.txt" "$@" >/dev/null || die "benchrun-$name round $round failed"
}

files=()
for ((r = 1; r <= rounds; r++)); do
	side base "$r" "${benchrun_args[@]}"
	side head "$r" "${benchrun_args[@]}"
	files+=("base=$out/base-$r.txt" "head=$out/head-$r.txt")
done

th_args=()
for t in "${thresholds[@]}"; do th_args+=(--threshold "$t"); done

compare() {
	"$out/benchcmp" --fail-on regression "${th_args[@]}" "$@" "${files[@]}"
}

compare --format csv >"$out/first.csv"
rc=$?
if ((rc == 1)); then
	# Re-run the workloads of the flagged rows once, A then B.
	mapfile -t workloads < <(awk -F, '$16 == "regression" { if (match($3, /workload=[^/]*/)) print substr($3, RSTART + 9, RLENGTH - 9) }' "$out/first.csv" | sort -u)
	echo "ci-bench: regression flagged in ${workloads[*]:-?}; confirming with one more round"
	side base confirm "${workloads[@]}"
	side head confirm "${workloads[@]}"
	files+=("base=$out/base-confirm.txt" "head=$out/head-confirm.txt")
	compare --format csv >"$out/confirm.csv"
	rc=$?
fi
((rc <= 1)) || die "benchcmp failed (exit $rc)"
compare --format markdown >"$out/summary.md"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
	cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
if ((rc == 1)); then
	echo "ci-bench: confirmed regression; see $out/summary.md"
else
	echo "ci-bench: no confirmed regression; see $out/summary.md"
fi
exit "$rc"
