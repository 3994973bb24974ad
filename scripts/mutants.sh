#!/usr/bin/env bash
# mutants.sh runs the test suite under each mutant of the catalogue
# (internal/mutants) and prints the kill matrix: for each mutant, how many of
# its runs failed (killed) and which tests failed, with how often.
#
# Usage:
#
#   scripts/mutants.sh [-n N] [-s K] [-t TIMEOUT] [-short] [-r REGEX] [-list] [NAME...]
#
#   -n N        runs of each concurrent mutant (default 20); a serial one
#               runs once
#   -s K        a subset of K mutants, chosen by the current commit (the
#               same commit always picks the same subset; successive commits
#               walk the catalogue); default: every mutant
#   -t TIMEOUT  -test.timeout of each test binary run (default 3m)
#   -short      run the test binaries with -test.short
#   -skip RE    run the test binaries with -test.skip RE (tests known to be
#               broken without any mutant; say why where you pass it)
#   -all        run every test binary in every run (default: a run stops
#               at the first binary that kills, the mutant's own package's
#               first, so "caught by" names the nearest tests)
#   -r REGEX    only the mutants whose names match REGEX (an extended
#               regular expression, unanchored as go test -run's: -r join
#               selects every mutant with join in its name; repeatable, and
#               with NAME... the union)
#   -list       print the selected mutants' names, one a line, and exit
#               without building or running anything
#   NAME...     only these mutants, each name matched exactly (a name is
#               never a pattern: delta-join selects no delta-join-errors-*)
#
# For each mutant it runs, once per run, `benchrun check` (every built-in
# workload against the reference evaluator) and the test binary of every
# package whose tests link the mutant's package, all built once with -tags
# mutants, with TRACEBENCH_MUTANT set to the mutant. A run kills the mutant if any binary
# fails (a failed test, a panic or a timeout). First it runs the same
# binaries with no mutant: that baseline must pass, or the matrix means
# nothing.
#
# It exits 1 if the baseline failed or a mutant survived any of its runs:
# every mutant must be killed every time. Ctrl-C stops it (exit 130).
set -euo pipefail
# The module is built alone: a go.work in a parent directory, or GOWORK
# naming another workspace, would make go refuse its packages.
export GOWORK=off

# The repository is the script's, also when it is run through a symbolic
# link.
self=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null) || self=${BASH_SOURCE[0]}
cd "$(dirname "$self")/.."
export GOFLAGS="-mod=readonly -buildvcs=false${GOFLAGS:+ $GOFLAGS}"

runs=20
subset=0
timeout=3m
short=()
user_skip=""
all_bins=0
patterns=()
list_only=0
source scripts/lib.sh # go_duration
# bad MESSAGE reports bad usage (exit 2).
bad() { echo "mutants.sh: $* (see -h)" >&2; exit 2; }
while (($# > 0)); do
	case $1 in
	-n | -s | -t | -skip | -r)
		(($# >= 2)) && [[ -n $2 ]] || bad "$1 needs a value"
		case $1 in
		-n) [[ $2 =~ ^[1-9][0-9]*$ ]] || bad "-n $2: want a positive integer" ;;
		-s) [[ $2 =~ ^(0|[1-9][0-9]*)$ ]] || bad "-s $2: want a non-negative integer (0: every mutant)" ;;
		-t) go_duration "$2" || bad "-t $2: want a Go duration of at most 2562047h, such as 3m or 90s" ;;
		esac
		;;&
	-n) runs=$2; shift 2 ;;
	-s) subset=$2; shift 2 ;;
	-t) timeout=$2; shift 2 ;;
	-short) short+=(-test.short); shift ;;
	-all) all_bins=1; shift ;;
	-skip) user_skip=$2; shift 2 ;;
	-r)
		# grep's status 2 is a pattern it cannot read.
		rc=0
		grep -Eq -- "$2" </dev/null 2>/dev/null || rc=$?
		((rc != 2)) || bad "-r $2: not an extended regular expression"
		patterns+=("$2")
		shift 2
		;;
	-list) list_only=1; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) bad "unknown flag $1" ;;
	*) break ;;
	esac
done

# Ctrl-C stops the script. The terminal sends SIGINT to the command
# running too, but go and benchrun catch it and exit (1, 130) rather than
# die of it: bash then goes on, and the interrupted run counted as a
# mutant killed. The trap runs when that command has ended; the EXIT trap
# removes the work directory.
trap 'echo "mutants.sh: interrupted; no further mutant runs" >&2; exit 130' INT

module=$(go list -m)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The catalogue: name, issue, package, serial|concurrent.
go run ./internal/mutants/testdata/catalogue >"$work/catalogue"
mapfile -t all < <(cut -f1 "$work/catalogue")

selected=()
if (($# > 0 || ${#patterns[@]} > 0)); then
	# A NAME is a name, compared whole: as a pattern, delta.join (or .*)
	# matched other mutants, and the pattern itself was then run as the
	# mutant's name. -r selects by pattern.
	# Compared in bash: printf piped into grep -q failed under pipefail
	# whenever grep had found the name and gone before printf had written
	# the rest (SIGPIPE), and the name read as not in the catalogue.
	for n in "$@"; do
		found=0
		for a in "${all[@]}"; do
			if [[ $a == "$n" ]]; then
				found=1
				break
			fi
		done
		if ((!found)); then
			# Quoted: an empty name ('') printed as nothing at all.
			echo "mutants.sh: '$n' is not in the catalogue (a NAME matches one name exactly; -r REGEX selects by pattern):" >&2
			cut -f1 "$work/catalogue" >&2
			exit 2
		fi
		selected+=("$n")
	done
	for re in "${patterns[@]}"; do
		mapfile -t m < <(printf '%s\n' "${all[@]}" | grep -E -- "$re")
		if ((${#m[@]} == 0)); then
			echo "mutants.sh: -r $re matches no mutant of the catalogue:" >&2
			cut -f1 "$work/catalogue" >&2
			exit 2
		fi
		selected+=("${m[@]}")
	done
	# Once each, in the order given.
	mapfile -t selected < <(printf '%s\n' "${selected[@]}" | awk '!seen[$0]++')
elif ((subset > 0 && subset < ${#all[@]})); then
	# The commit picks where the subset starts; with none (a source
	# archive, or one unpacked in a repository without a commit, where
	# rev-parse prints HEAD before it fails) the first mutants. A
	# failed arithmetic here once left the subset empty and passed.
	head=$(git rev-parse --verify -q HEAD 2>/dev/null) || head=0
	[[ $head =~ ^[0-9a-f]{8} ]] || head=0
	start=$((16#${head:0:8} % ${#all[@]}))
	for ((i = 0; i < subset; i++)); do
		selected+=("${all[$(((start + i) % ${#all[@]}))]}")
	done
else
	selected=("${all[@]}")
fi

if ((list_only)); then
	printf '%s\n' "${selected[@]}"
	exit 0
fi

# Test binaries: go list -test prints each package with tests again as
# "p [p.test]" (and its external tests as "p_test [p.test]"), whose Deps
# include the test files' imports; a package's tests link a mutant's package
# if it is among them.
go list -tags mutants -test -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... |
	sed -n 's/^[^ ]* \[\([^ ]*\)\.test\]/\1/p' >"$work/deps"

# packages_of PKG prints the module's packages whose tests link PKG.
packages_of() {
	awk -v p="$module/$1" '{ for (i = 2; i <= NF; i++) if ($i == p || $1 == p) { print $1; next } }' "$work/deps" | sort -u
}

declare -A need
for n in "${selected[@]}"; do
	pkg=$(awk -F'\t' -v n="$n" '$1 == n { print $3 }' "$work/catalogue")
	while read -r p; do
		[[ -n $p ]] && need[$p]=1
	done < <(packages_of "$pkg")
done

mkdir -p "$work/bin"
if go build -tags mutants -o "$work/bin/benchrun" ./cmd/benchrun 2>/dev/null && "$work/bin/benchrun" help check >/dev/null 2>&1; then
	need[check]=1 # benchrun check, run as if it were a package's tests
fi
echo "building $((${#need[@]})) test binaries with -tags mutants" >&2
for p in "${!need[@]}"; do
	[[ $p == check ]] && continue
	rel=${p#"$module"/}
	go test -tags mutants -c -o "$work/bin/${rel//\//_}.test" "$p" >&2
done

# run_binaries NAME OUT runs every needed test binary with
# TRACEBENCH_MUTANT=NAME in its package's directory, appending the failed
# tests to OUT (one per line, "package TestName", or "package (exit N)" when
# a binary failed without a failing test). It returns 1 if any failed.
run_binaries() {
	local name=$1 out=$2 own=${3:-} rc=0 p rel bin log
	for p in $(order "$own"); do
		log="$work/log"
		local brc=0
		if [[ $p == check ]]; then
			# check runs every workload in four configurations: it gets
			# ten minutes whatever -t says. --foreground keeps it in the
			# terminal's process group, so that Ctrl-C reaches it: timeout
			# otherwise moves it to a group of its own, and check ran on
			# to its end, and the script to the next mutant.
			TRACEBENCH_MUTANT=$name timeout --foreground 10m "$work/bin/benchrun" check >"$log" 2>&1 || brc=$?
			if ((brc != 0)); then
				rc=1
				# The workloads that disagreed, or the exit status.
				grep -E '^(FAIL|fail|error)' "$log" | awk '{ print "benchrun-check " $2 }' | sort -u >>"$out"
				grep -q . "$out" || echo "benchrun-check (exit $brc)" >>"$out"
				if [[ -n $own ]] && ((all_bins == 0)); then
					return 1
				fi
			fi
			continue
		fi
		rel=${p#"$module"/}
		bin="$work/bin/${rel//\//_}.test"
		[[ -x $bin ]] || continue # no test files
		# One -test.skip: the user's and the baseline's failures together.
		local skip=() re=$user_skip
		[[ -n ${broken[$rel]:-} ]] && re="${re:+$re|}^(${broken[$rel]})\$"
		[[ -n $re ]] && skip=(-test.skip "$re")
		(cd "$rel" && TRACEBENCH_MUTANT=$name "$bin" -test.count=1 -test.timeout="$timeout" "${short[@]}" "${skip[@]}" >"$log" 2>&1) || brc=$?
		if ((brc != 0)); then
			rc=1
			if grep -q -- '^ *--- FAIL: ' "$log"; then
				# The deepest failing test of each chain: subtests fail their parents.
				grep -- '^ *--- FAIL: ' "$log" | sed 's/^ *--- FAIL: \([^ ]*\).*/\1/' |
					awk -v p="$rel" '{ n[NR] = $1 } END { for (i = 1; i <= NR; i++) { leaf = 1; for (j = 1; j <= NR; j++) if (index(n[j], n[i] "/") == 1) leaf = 0; if (leaf) print p " " n[i] } }' >>"$out"
			elif grep -q '^panic: test timed out' "$log"; then
				# The tests still running when the binary timed out.
				sed -n '/running tests:/,/^$/p' "$log" | sed -n 's/^[[:space:]]*\(Test[^ ]*\) .*/\1/p' |
					awk -v p="$rel" '{ print p " " $1 " (timeout)" }' >>"$out"
				grep -q . "$out" || echo "$rel (timeout)" >>"$out"
			else
				echo "$rel (exit $brc)" >>"$out"
			fi
			if [[ -n $own ]] && ((all_bins == 0)); then
				return 1
			fi
		fi
	done
	return $rc
}

# order OWN prints the needed packages: OWN's first, then core/, then
# benchrun check, then the rest.
order() {
	local own=$module/$1
	printf '%s\n' "${!need[@]}" | awk -v own="$own" -v m="$module/" '
		{ r = ($0 == own) ? 0 : (index($0, m "core/") == 1 ? 1 : ($0 == "check" ? 2 : 3)); print r " " $0 }' | sort | cut -d' ' -f2
}

echo "baseline: no mutant" >&2
declare -A broken
baseline_ok=1
if ! run_binaries "" "$work/baseline"; then
	# Tests that fail with no mutant prove nothing: skip them in every
	# mutant run, list them, and fail at the end.
	baseline_ok=0
	echo "the baseline failed (no mutant on); these tests are skipped below:" >&2
	cat "$work/baseline" >&2
	while read -r rel test _; do
		if [[ $rel == benchrun-check ]]; then
			unset 'need[check]' # benchrun check fails with no mutant: leave it out
			continue
		fi
		test=${test%%/*}
		if [[ $test != Test* && $test != Fuzz* && $test != Example* ]]; then
			echo "mutants.sh: $rel fails without a failing test; cannot run the matrix" >&2
			exit 1
		fi
		case "|${broken[$rel]:-}|" in
		*"|$test|"*) ;;
		*) broken[$rel]="${broken[$rel]:+${broken[$rel]}|}$test" ;;
		esac
	done <"$work/baseline"
fi

survivors=()
{
	echo "| # | mutant | package | kills/runs | caught by (failing runs) |"
	echo "|---|--------|---------|------------|--------------------------|"
} >"$work/matrix"
for n in "${selected[@]}"; do
	IFS=$'\t' read -r _ issue pkg kind < <(awk -F'\t' -v n="$n" '$1 == n' "$work/catalogue")
	k=1
	[[ $kind == concurrent ]] && k=$runs
	kills=0
	: >"$work/caught"
	for ((r = 1; r <= k; r++)); do
		: >"$work/run"
		if ! run_binaries "$n" "$work/run" "$pkg"; then
			kills=$((kills + 1))
		fi
		sort -u "$work/run" >>"$work/caught"
	done
	# The three tests that caught it most often, and how many more did.
	caught=$(sort "$work/caught" | uniq -c | sort -k1,1rn -k2 | awk '
		{ c = $1; $1 = ""; sub(/^ /, ""); if (NR <= 3) printf "%s%s (%d)", (NR > 1 ? ", " : ""), $0, c }
		END { if (NR > 3) printf ", +%d more", NR - 3 }')
	echo "mutant $issue $n: $kills/$k killed" >&2
	printf '| %s | %s | %s | %d/%d | %s |\n' "$issue" "$n" "$pkg" "$kills" "$k" "${caught:-—}" >>"$work/matrix"
	if ((kills < k)); then
		survivors+=("$n")
	fi
done

cat "$work/matrix"
if ((baseline_ok == 0)); then
	echo "the baseline failed; skipped in every run:"
	for rel in "${!broken[@]}"; do echo "  $rel: ${broken[$rel]}"; done
fi
if ((${#survivors[@]} > 0)); then
	echo "NOT killed every time: ${survivors[*]}"
	exit 1
fi
if ((baseline_ok == 0)); then
	exit 1
fi
echo "every mutant run (${#selected[@]} of ${#all[@]}) killed every time"
